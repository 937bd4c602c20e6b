// fuzz_cli.c: libFuzzer over the chapters' command line (lib/runtime/cli.c) and the
// seed parser behind --seed (torch_parse_seed in lib/random/torch_generator.c).
//
// The input is an argument vector: its pieces separated by NUL bytes, after
// a fixed argv[0]. Each vector is parsed as a chapter that draws no
// weights (allow_seed 0), as one that does (CLI_SEEDS), and as one that
// also reads a text and makes modules (CLI_SEEDS | CLI_TEXT | CLI_WEIGHTS).
// Checked besides the sanitizers:
//   - a usage error is one non-empty line, cut to fit the buffer;
//   - a success holds only option values that are non-empty arguments of
//     argv, a seed that round-trips (the uint64 strtoull or strtoll gives for
//     the text, as torch.manual_seed maps it), a skip in [0, 10^9] that only
//     comes with a seed, a group only with a fixture, and at most one seed
//     per site (an option given twice is a usage error);
//   - a vector that parses without --seed/--skip parses identically when
//     --seed is allowed, and one that parses without --text identically
//     when --text is allowed; --text is accepted only where allowed, with a
//     non-empty argument of argv; argv is left untouched;
//   - a --weights value's NAME, FILE and KEY spell it again, and
//     cli_weights_modules gives it a module of the list or a usage error;
//   - torch_parse_seed agrees with strtoull/strtoll on every piece.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "torch_generator.h"

// Far more arguments than any chapter takes; a bound keeps each run cheap.
#define MAX_ARGS 64

static void broken(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_cli: invariant broken: %s: %s\n", what, detail ? detail : "");
    abort();
}

// What torch.manual_seed(int(text)) accepts, by the C library's parsers:
// [+-]digits, a negative one as strtoll reads it (then 2^64 + s), any other
// as strtoull reads it; out of range (ERANGE) is refused.
static int reference_seed(const char *text, uint64_t *out) {
    const char *p = text + (text[0] == '+' || text[0] == '-');
    if (!*p) return 0;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return 0;
    char *end;
    errno = 0;
    if (text[0] == '-') {
        long long v = strtoll(text, &end, 10);
        if (errno || *end) return 0;
        *out = (uint64_t)v;
    } else {
        unsigned long long v = strtoull(text, &end, 10);
        if (errno || *end) return 0;
        *out = (uint64_t)v;
    }
    return 1;
}

static void check_seed_parser(const char *text) {
    uint64_t got = 0x5eed5eed5eed5eedULL, want = 0;
    uint64_t before = got;
    int ok = torch_parse_seed(text, &got);
    int ref = reference_seed(text, &want);
    if (ok != ref) broken("torch_parse_seed", ok ? "accepted what strtoull/strtoll refuse" : "refused a valid seed");
    if (ok && got != want) broken("torch_parse_seed", "value differs from strtoull/strtoll");
    if (!ok && got != before) broken("torch_parse_seed", "wrote *out on failure");
}

// Is p the start of, or inside, one of argv[1..argc-1]?
static int points_into_argv(const char *p, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (p >= argv[i] && p < argv[i] + n) return 1;
    }
    return 0;
}

static void check_value(const char *what, const char *p, int argc, char **argv) {
    if (!p) return;
    if (!*p) broken(what, "empty value accepted");
    if (!points_into_argv(p, argc, argv)) broken(what, "value does not point into argv");
}

// A --weights value as read (cli.h's rule): its NAME=, FILE and :KEY spell
// the value again (less the one ':' a value ending in ':' loses), FILE is
// never empty, and cli_weights_modules gives it a module of the list or a
// usage error.
static void check_weights(Options *opt, int i, int argc, char **argv) {
    const struct CliWeights *w = &opt->weights[i];
    check_value("--weights", w->text, argc, argv);
    if (!w->path[0]) broken("cli_parse", "--weights with an empty FILE");
    static char again[sizeof w->name + sizeof w->path + sizeof w->key + 3];
    snprintf(again, sizeof again, "%s%s%s%s%s", w->name, w->name[0] ? "=" : "", w->path, w->key[0] ? ":" : "", w->key);
    const size_t n = strlen(w->text), m = strlen(again);
    if (strcmp(again, w->text) != 0 && !(!w->key[0] && n == m + 1 && w->text[m] == ':' && !strncmp(again, w->text, m)))
        broken("cli_parse: --weights NAME, FILE and KEY do not spell the value", w->text);
    static const char *const modules[] = {"mha", "exercise_3_2.mha", NULL};
    char err[256];
    if (cli_weights_modules(opt, modules, err, sizeof err) == CLI_OK && (w->module < 0 || w->module > 1))
        broken("cli_weights_modules", "a module outside the list");
}

// One parse with an error buffer of exactly `len` bytes (heap: ASan sees overruns).
static int parse(int argc, char **argv, int allow_seed, Options *opt, size_t len) {
    char *err = malloc(len);
    if (!err) abort();
    memset(err, 0, len);
    int rc = cli_parse(argc, argv, allow_seed, opt, err, len);
    if (rc != CLI_OK && rc != CLI_USAGE) broken("cli_parse", "neither CLI_OK nor CLI_USAGE");
    if (rc == CLI_USAGE) {
        size_t n = strnlen(err, len);
        if (n == len) broken("cli_parse", "error message not NUL-terminated");
        if (n == 0 && len > 1) broken("cli_parse", "usage error with an empty message");
        if (strchr(err, '\n') || strchr(err, '\r')) broken("cli_parse: error message spans lines", err);
    } else {
        if (opt->help != 0 && opt->help != 1) broken("cli_parse", "help is neither 0 nor 1");
        check_value("--fixture", opt->fixture, argc, argv);
        check_value("--group", opt->group, argc, argv);
        check_value("--dump", opt->dump, argc, argv);
        if (opt->n_seeds < 0 || opt->n_seeds > CLI_MAX_SEEDS) broken("cli_parse", "n_seeds out of range");
        if (opt->group && !opt->fixture) broken("cli_parse", "--group accepted without --fixture");
        if (opt->skip < 0 || opt->skip > 1000000000LL) broken("cli_parse", "skip out of [0, 10^9]");
        if (opt->skip && !opt->n_seeds) broken("cli_parse", "skip without a seed");
        if (!allow_seed && (opt->n_seeds || opt->skip)) broken("cli_parse", "seed accepted by a chapter without weights");
        if (!(allow_seed & CLI_TEXT) && opt->text) broken("cli_parse", "--text accepted by a chapter without a text");
        if (opt->text) check_value("--text", opt->text, argc, argv);
        if (opt->threads < 1 || opt->threads > CLI_MAX_THREADS) broken("cli_parse", "threads out of range");
        for (int i = 0; i < opt->n_seeds; i++) {
            check_value("--seed", opt->seeds[i].text, argc, argv);
            if (strnlen(opt->seeds[i].site, sizeof opt->seeds[i].site) == sizeof opt->seeds[i].site)
                broken("cli_parse", "seed site not NUL-terminated");
            uint64_t want;
            if (!reference_seed(opt->seeds[i].text, &want)) broken("cli_parse", "accepted a seed strtoull/strtoll refuse");
            if (want != opt->seeds[i].value) broken("cli_parse", "seed value differs from strtoull/strtoll");
            for (int j = 0; j < i; j++)
                if (!strcmp(opt->seeds[i].site, opt->seeds[j].site)) broken("cli_parse", "two seeds for one site");
        }
        if (!(allow_seed & CLI_WEIGHTS) && opt->n_weights) broken("cli_parse", "--weights accepted by a chapter without modules");
        for (int i = 0; i < opt->n_weights; i++) check_weights(opt, i, argc, argv);
    }
    free(err);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // The pieces, NUL-terminated, in one heap block sized to the input.
    char *buf = malloc(size + 1);
    char *orig = malloc(size + 1);
    if (!buf || !orig) abort();
    memcpy(buf, data, size);
    buf[size] = '\0';
    memcpy(orig, buf, size + 1);
    char prog[] = "chapter";
    char *argv[MAX_ARGS + 2] = {prog};
    int argc = 1;
    // Each piece ends at a NUL or at the end of the input, so "a\0b" and
    // "a\0b\0" are both {"a", "b"}, and an empty input is no arguments.
    for (size_t start = 0; start < size && argc <= MAX_ARGS; start += strlen(buf + start) + 1)
        argv[argc++] = buf + start;
    argv[argc] = NULL;

    for (int i = 1; i < argc; i++) {
        check_seed_parser(argv[i]);
        // "--seed=TEXT": what cli_parse hands to torch_parse_seed.
        const char *eq = strchr(argv[i], '=');
        if (eq) check_seed_parser(eq + 1);
    }

    Options without, with;
    // A cramped buffer first: messages must be cut, not overrun.
    (void)parse(argc, argv, 1, &with, 8);
    (void)parse(argc, argv, 0, &without, 1);
    int rc0 = parse(argc, argv, 0, &without, 512);
    int rc1 = parse(argc, argv, 1, &with, 512);
    if (rc0 == CLI_OK) {
        if (rc1 != CLI_OK) broken("cli_parse", "allowing --seed rejected a command line without it");
        if (with.fixture != without.fixture || with.group != without.group || with.dump != without.dump ||
            with.help != without.help || with.threads != without.threads || with.n_seeds || with.skip)
            broken("cli_parse", "allowing --seed changed the result of a command line without it");
    }
    Options texts;
    int rc2 = parse(argc, argv, CLI_SEEDS | CLI_TEXT | CLI_WEIGHTS, &texts, 512);
    if (rc1 == CLI_OK) {
        if (rc2 != CLI_OK) broken("cli_parse", "allowing --text rejected a command line without it");
        if (texts.fixture != with.fixture || texts.group != with.group || texts.dump != with.dump ||
            texts.help != with.help || texts.threads != with.threads || texts.n_seeds != with.n_seeds ||
            texts.skip != with.skip || texts.text)
            broken("cli_parse", "allowing --text changed the result of a command line without it");
    }
    if (memcmp(buf, orig, size + 1) != 0) broken("cli_parse", "modified argv");

    // cli_usage into any size of buffer (0 included) and either form.
    char usage[256];
    size_t len = size ? (size_t)data[0] % sizeof usage : 0;
    memset(usage, 'x', sizeof usage);
    cli_usage(usage, len, argv[argc - 1], (int)(size & 3));
    if (len && strnlen(usage, len) == len) broken("cli_usage", "not NUL-terminated");
    if (len < sizeof usage && usage[len] != 'x') broken("cli_usage", "wrote past its length");

    free(buf);
    free(orig);
    return 0;
}
