// cli.c: parsing the chapters' options. Accepts `--opt VALUE` and `--opt=VALUE`.
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch_generator.h"

void cli_usage(char *buf, size_t len, const char *name, int allow_seed) {
    snprintf(buf, len, "usage: %s [--fixture PATH [--group NAME]] [--dump PATH]%s [--help]", name,
             allow_seed ? " [--seed N [--skip K]]" : "");
}

// The value of option `opt` at argv[*i]: after '=' or the next argument.
static const char *value_of(int argc, char **argv, int *i, const char *eq, const char *opt,
                            char *err, size_t len) {
    if (eq) return eq + 1;
    if (*i + 1 >= argc) {
        snprintf(err, len, "%s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

static int parse_args(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len);

int cli_parse(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len) {
    int rc = parse_args(argc, argv, allow_seed, opt, err, len);
    // Errors quote what was typed, and an argument may hold a newline or an
    // escape sequence: shown as '?', the message stays one plain line.
    if (rc == CLI_USAGE)
        for (char *p = err; len && *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return rc;
}

static int parse_args(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len) {
    memset(opt, 0, sizeof *opt);
    const char *skip_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, len, "unexpected argument '%s'", arg);
            return CLI_USAGE;
        }
        const char *eq = strchr(arg, '=');
        size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
        const char **slot = NULL;
        const char *name = NULL;
        if (n == 6 && !strncmp(arg, "--help", n) && !eq) {
            opt->help = 1;
            continue;
        }
        if (n == 9 && !strncmp(arg, "--fixture", n)) slot = &opt->fixture, name = "--fixture";
        else if (n == 7 && !strncmp(arg, "--group", n)) slot = &opt->group, name = "--group";
        else if (n == 6 && !strncmp(arg, "--dump", n)) slot = &opt->dump, name = "--dump";
        else if (n == 6 && !strncmp(arg, "--seed", n) && allow_seed) slot = &opt->seed, name = "--seed";
        else if (n == 6 && !strncmp(arg, "--skip", n) && allow_seed) slot = &skip_text, name = "--skip";
        else if (n == 6 && (!strncmp(arg, "--seed", n) || !strncmp(arg, "--skip", n))) {
            snprintf(err, len, "%.*s: this chapter draws no weights", (int)n, arg);
            return CLI_USAGE;
        } else {
            snprintf(err, len, "unknown option '%.*s'", (int)(n > 40 ? 40 : n), arg);
            return CLI_USAGE;
        }
        const char *value = value_of(argc, argv, &i, eq, name, err, len);
        if (!value) return CLI_USAGE;
        if (!*value) {
            snprintf(err, len, "%s needs a non-empty value", name);
            return CLI_USAGE;
        }
        *slot = value;
    }
    if (opt->seed && !torch_parse_seed(opt->seed, &opt->seed_value)) {
        snprintf(err, len, "--seed: expected an integer in [-2^63, 2^64 - 1] as torch.manual_seed takes, found '%.40s'",
                 opt->seed);
        return CLI_USAGE;
    }
    if (skip_text) {
        char *end;
        errno = 0;
        long long k = strtoll(skip_text, &end, 10);
        if (errno || *end || k < 0 || k > 1000000000LL) {
            snprintf(err, len, "--skip: expected a count of draws in [0, 10^9], found '%.40s'", skip_text);
            return CLI_USAGE;
        }
        if (!opt->seed) {
            snprintf(err, len, "--skip only means something with --seed");
            return CLI_USAGE;
        }
        opt->skip = k;
    }
    if (opt->group && !opt->fixture) {
        snprintf(err, len, "--group needs --fixture");
        return CLI_USAGE;
    }
    return CLI_OK;
}
