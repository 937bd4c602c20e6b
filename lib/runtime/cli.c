// cli.c: parsing the chapters' options. Accepts `--opt VALUE` and `--opt=VALUE`,
// each option at most once (--seed once per SITE; --help may repeat).
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "torch_generator.h"

void cli_usage(char *buf, size_t len, const char *name, int allow_seed) {
    snprintf(buf, len, "usage: %s [--fixture NAME|PATH [--group NAME]]%s [--dump PATH]%s%s [--threads N] [--help]",
             name, allow_seed & CLI_TEXT ? " [--text FILE] [--vocab FILE]" : "", allow_seed & CLI_SEEDS ? " [--seed [SITE=]N]... [--skip K] [--weights [NAME=]FILE.pth]..." : "",
             allow_seed & CLI_SIZES ? " [--context-len N] [--batch-size B]" : "");
}

void cli_help(char *buf, size_t len, const char *name, const char *about, const char *book_variant,
              const char *variants, const char *places, int allow_seed) {
    char usage[384];
    cli_usage(usage, sizeof usage, name, allow_seed);
    int n = snprintf(buf, len,
                     "%s\n\n%s\n\n"
                     "  --fixture NAME  read inputs%s from the variant NAME (%s; default: %s),\n"
                     "                  the file %s.NAME.h5, or from another fixture by\n"
                     "                  its file name (sweep.h5), looked up in these directories, then among\n"
                     "                  the variants built into this program:\n"
                     "%s"
                     "  --fixture PATH  read them from the file PATH (a value with a '/', or a file in the\n"
                     "                  working directory)\n"
                     "  --group NAME    the configuration NAME inside a multi-group fixture (sweep.h5)\n"
                     "  --dump PATH     also write every tensor computed to the HDF5 file PATH (never a file\n"
                     "                  the run reads)\n"
                     "  --threads N     run the large kernels on N threads (default 1; the same bits)\n",
                     usage, about, allow_seed & CLI_SEEDS ? " and parameters" : "", variants, book_variant, name,
                     places);
    if (allow_seed & CLI_TEXT && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                      "  --text FILE     read this UTF-8 text instead of the book's (small-text-sample.txt,\n"
                      "                  built in); at most 64 MiB\n"
                      "  --vocab FILE    read GPT-2's vocabulary from FILE (tiktoken's gpt2.tiktoken) instead\n"
                      "                  of the copy built in\n");
    if (allow_seed & CLI_SIZES && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                      "  --context-len N tokens per input (the notebook's context_len, 1024), drawn in C\n"
                      "  --batch-size B  inputs per batch (the notebook's batch_size, 8), drawn in C; past the\n"
                      "                  materialising implementations' limit only the fused one runs\n");
    if (allow_seed & CLI_TEXT && allow_seed & CLI_SEEDS && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                 "  --seed N        draw everything in C as a process whose default generator started at N\n"
                 "                  (torch.initial_seed() = N): the embedding tables and the shuffle;\n"
                 "                  the notebook's torch.manual_seed(123) calls keep 123\n"
                 "  --seed SITE=N   the seed of one torch.manual_seed call (variant_a, variant_b)\n"
                 "  --skip K        with --seed: discard K draws after the process starts\n"
                 "                  (at most 10^9)\n");
    else if (allow_seed & CLI_SEEDS && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                 "  --seed N        draw parameters, dropout masks and random inputs in C, with every\n"
                 "                  torch.manual_seed(...) of the chapter taking N, instead of reading them\n"
                 "  --seed SITE=N   the seed of one torch.manual_seed call (SITE as in the fixture's\n"
                 "                  SITE.seed attribute, e.g. exercise_3_1)\n"
                 "  --skip K        with --seed: discard K draws after the first seeding, as earlier\n"
                 "                  notebook cells did (at most 10^9)\n");
    // The modules --weights takes: the bonus notebook's (the chapter that runs
    // at other sizes), the data-loading notebook's (the one that reads a
    // text), else chapter 3's own.
    const char *first = allow_seed & CLI_SIZES ? "mha_ch03_wrapper"
                        : allow_seed & CLI_TEXT ? "variant_a.mha"
                                                : "the first one it makes";
    const char *named = allow_seed & CLI_SIZES
                            ? "mha_ch03_wrapper, mha_ch03,\n                  mha_combined_qkv, mha_einsum, mha_pytorch_scaled, "
                              "mha_pytorch_sdpa_no_flash,\n                  mha_pytorch_class_default, "
                              "mha_pytorch_class_noweights"
                        : allow_seed & CLI_TEXT ? "variant_a.mha, variant_b.mha"
                                                : "e.g. sa_v2, ca, mha, exercise_3_1.sa_v1,\n                  ca_with_buffer";
    if (allow_seed & CLI_SEEDS && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n,
                 "  --weights FILE.pth       the chapter's first module (%s) takes its\n"
                 "                  parameters and buffers from the state_dict torch.save wrote to FILE.pth,\n"
                 "                  checked as load_state_dict(strict=True) checks it\n"
                 "  --weights NAME=FILE.pth  the same for the module named NAME (as its tensors are named\n"
                 "                  in --dump: %s); repeatable\n", first, named);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n,
                 "\nExit status: 0 done; 1 bad input (a file or a value: the line names it); 2 usage;\n"
                 "3 out of memory (the line names what the memory was for); 4 internal error (a bug in\n"
                 "this program: the line names its source file and line).\n");
}

// At most 40 bytes of an argument as an error message shows it: control
// characters escaped (text_escape), so that the message stays one line.
typedef struct {
    char text[4 * 40 + 1];
} Shown;

static Shown shown(const char *arg, size_t n) {
    char cut[41];
    snprintf(cut, sizeof cut, "%.*s", (int)(n > 40 ? 40 : n), arg);
    Shown out;
    text_escape(out.text, sizeof out.text, cut);
    return out;
}

// The value of option `opt` at argv[*i]: after '=' or the next argument.
static const char *value_of(int argc, char **argv, int *i, const char *eq, const char *opt, char *err,
                            size_t len) {
    if (eq) return eq + 1;
    if (*i + 1 >= argc) {
        snprintf(err, len, "%s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

static int parse_count(const char *text, long long max, long long *out) {
    char *end;
    errno = 0;
    long long k = strtoll(text, &end, 10);
    if (errno || *end || end == text || k < 0 || k > max || text[0] == '+' || text[0] == ' ') return 0;
    *out = k;
    return 1;
}

// --seed N or --seed SITE=N: SITE is a plain identifier, as in an attribute name.
static int parse_seed(Options *opt, const char *value, char *err, size_t len) {
    if (opt->n_seeds == CLI_MAX_SEEDS) {
        snprintf(err, len, "--seed: at most %d seeds", CLI_MAX_SEEDS);
        return 0;
    }
    const char *eq = strchr(value, '=');
    const char *text = value;
    size_t site_len = 0;
    if (eq) {
        size_t n = (size_t)(eq - value);
        int ok = n > 0 && n <= 40;
        for (size_t i = 0; ok && i < n; i++)
            ok = (value[i] >= 'a' && value[i] <= 'z') || (value[i] >= '0' && value[i] <= '9') || value[i] == '_';
        if (!ok) {
            snprintf(err, len, "--seed: expected N or SITE=N with SITE a name such as exercise_3_1, found '%s'",
                     shown(value, strlen(value)).text);
            return 0;
        }
        site_len = n, text = eq + 1;
    }
    // One seed per site: a second would be ignored, silently.
    for (int i = 0; i < opt->n_seeds; i++)
        if (strlen(opt->seeds[i].site) == site_len && !strncmp(opt->seeds[i].site, value, site_len)) {
            if (site_len) snprintf(err, len, "--seed %.*s=N given twice", (int)site_len, value);
            else snprintf(err, len, "--seed given twice");
            return 0;
        }
    uint64_t v;
    if (!torch_parse_seed(text, &v)) {
        snprintf(err, len, "--seed: expected an integer in [-2^63, 2^64 - 1] as torch.manual_seed takes, found '%s'",
                 shown(text, strlen(text)).text);
        return 0;
    }
    memcpy(opt->seeds[opt->n_seeds].site, value, site_len);
    opt->seeds[opt->n_seeds].site[site_len] = '\0';
    opt->seeds[opt->n_seeds].text = text;
    opt->seeds[opt->n_seeds].value = v;
    opt->n_seeds++;
    return 1;
}

// --weights FILE or --weights NAME=FILE: NAME is a module's name, dotted
// identifiers ("exercise_3_1.sa_v1"); a value whose part before '=' is not
// one is a FILE (a path may hold '=').
static int parse_weights(Options *opt, const char *value, char *err, size_t len) {
    if (opt->n_weights == CLI_MAX_WEIGHTS) {
        snprintf(err, len, "--weights: at most %d files", CLI_MAX_WEIGHTS);
        return 0;
    }
    const char *eq = strchr(value, '=');
    size_t name_len = 0;
    if (eq && eq > value && (size_t)(eq - value) < sizeof opt->weights[0].name) {
        int ident = 1;
        for (const char *c = value; c < eq && ident; c++)
            ident = isalpha((unsigned char)*c) || *c == '_' ||
                    (c > value && c[-1] != '.' && (isdigit((unsigned char)*c) || *c == '.'));
        if (ident && eq[-1] != '.') name_len = (size_t)(eq - value);
    }
    const char *path = name_len ? eq + 1 : value;
    if (!*path) {
        snprintf(err, len, "--weights %.*s= needs a file", (int)name_len, value);
        return 0;
    }
    for (int i = 0; i < opt->n_weights; i++)
        if (strlen(opt->weights[i].name) == name_len && !strncmp(opt->weights[i].name, value, name_len)) {
            if (name_len) snprintf(err, len, "--weights %.*s= given twice", (int)name_len, value);
            else snprintf(err, len, "--weights FILE given twice (name the module: --weights NAME=FILE)");
            return 0;
        }
    memcpy(opt->weights[opt->n_weights].name, value, name_len);
    opt->weights[opt->n_weights].name[name_len] = '\0';
    opt->weights[opt->n_weights].path = path;
    opt->n_weights++;
    return 1;
}

static int parse_args(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len) {
    memset(opt, 0, sizeof *opt);
    opt->threads = 1;
    const char *skip_text = NULL, *threads_text = NULL, *context_len_text = NULL, *batch_size_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, len, "unexpected argument '%s'", shown(arg, strlen(arg)).text);
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
        const char *seed_text = NULL, *weights_text = NULL;
        if (n == 9 && !strncmp(arg, "--fixture", n)) slot = &opt->fixture, name = "--fixture";
        else if (n == 7 && !strncmp(arg, "--group", n)) slot = &opt->group, name = "--group";
        else if (n == 6 && !strncmp(arg, "--dump", n)) slot = &opt->dump, name = "--dump";
        else if (n == 9 && !strncmp(arg, "--threads", n)) slot = &threads_text, name = "--threads";
        else if (n == 6 && !strncmp(arg, "--text", n) && (allow_seed & CLI_TEXT)) slot = &opt->text, name = "--text";
        else if (n == 7 && !strncmp(arg, "--vocab", n) && (allow_seed & CLI_TEXT)) slot = &opt->vocab, name = "--vocab";
        else if (n == 13 && !strncmp(arg, "--context-len", n) && (allow_seed & CLI_SIZES))
            slot = &context_len_text, name = "--context-len";
        else if (n == 12 && !strncmp(arg, "--batch-size", n) && (allow_seed & CLI_SIZES))
            slot = &batch_size_text, name = "--batch-size";
        else if ((n == 13 && !strncmp(arg, "--context-len", n)) || (n == 12 && !strncmp(arg, "--batch-size", n))) {
            snprintf(err, len, "%.*s: this chapter runs at the book's sizes only", (int)n, arg);
            return CLI_USAGE;
        }
        else if ((n == 6 && !strncmp(arg, "--text", n)) || (n == 7 && !strncmp(arg, "--vocab", n))) {
            snprintf(err, len, "%.*s: this chapter reads no text", (int)n, arg);
            return CLI_USAGE;
        } else if (n == 6 && !strncmp(arg, "--seed", n) && (allow_seed & CLI_SEEDS)) slot = &seed_text, name = "--seed";
        else if (n == 6 && !strncmp(arg, "--skip", n) && (allow_seed & CLI_SEEDS)) slot = &skip_text, name = "--skip";
        else if (n == 9 && !strncmp(arg, "--weights", n) && (allow_seed & CLI_SEEDS))
            slot = &weights_text, name = "--weights";
        else if (n == 9 && !strncmp(arg, "--weights", n)) {
            snprintf(err, len, "--weights: this chapter makes no module");
            return CLI_USAGE;
        }
        else if (n == 6 && (!strncmp(arg, "--seed", n) || !strncmp(arg, "--skip", n))) {
            snprintf(err, len, "%.*s: this chapter draws nothing at random", (int)n, arg);
            return CLI_USAGE;
        } else {
            snprintf(err, len, "unknown option '%s'", shown(arg, n).text);
            return CLI_USAGE;
        }
        // Each option with a value once (--seed once per SITE): a repeated
        // one is a usage error, never silently its first or its last value.
        if (*slot) {
            snprintf(err, len, "%s given twice", name);
            return CLI_USAGE;
        }
        const char *value = value_of(argc, argv, &i, eq, name, err, len);
        if (!value) return CLI_USAGE;
        if (!*value) {
            snprintf(err, len, "%s needs a non-empty value", name);
            return CLI_USAGE;
        }
        *slot = value;
        if (slot == &seed_text && !parse_seed(opt, value, err, len)) return CLI_USAGE;
        if (slot == &weights_text && !parse_weights(opt, value, err, len)) return CLI_USAGE;
    }
    if (skip_text) {
        if (!parse_count(skip_text, CLI_MAX_SKIP, &opt->skip)) {
            snprintf(err, len, "--skip: expected a count of draws in [0, 10^9], found '%s'",
                     shown(skip_text, strlen(skip_text)).text);
            return CLI_USAGE;
        }
        if (!opt->n_seeds) {
            snprintf(err, len, "--skip only means something with --seed");
            return CLI_USAGE;
        }
    }
    if (threads_text) {
        long long t;
        if (!parse_count(threads_text, CLI_MAX_THREADS, &t) || t < 1) {
            snprintf(err, len, "--threads: expected a count in [1, %d], found '%s'", CLI_MAX_THREADS,
                     shown(threads_text, strlen(threads_text)).text);
            return CLI_USAGE;
        }
        opt->threads = (int)t;
    }
    const char *size_text[2] = {context_len_text, batch_size_text};
    const char *size_name[2] = {"--context-len", "--batch-size"};
    const char *size_what[2] = {"a count of tokens", "a count of inputs"};
    int *size_slot[2] = {&opt->context_len, &opt->batch_size};
    for (int k = 0; k < 2; k++) {
        long long v;
        if (!size_text[k]) continue;
        if (!parse_count(size_text[k], CLI_MAX_SIZE, &v) || v < 1) {
            snprintf(err, len, "%s: expected %s in [1, 2^31 - 1], found '%s'", size_name[k], size_what[k],
                     shown(size_text[k], strlen(size_text[k])).text);
            return CLI_USAGE;
        }
        *size_slot[k] = (int)v;
    }
    if ((opt->context_len || opt->batch_size) && opt->fixture) {
        snprintf(err, len, "--context-len and --batch-size draw everything in C: they take no --fixture");
        return CLI_USAGE;
    }
    if (opt->group && !opt->fixture) {
        snprintf(err, len, "--group needs --fixture");
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_parse(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len) {
    return parse_args(argc, argv, allow_seed, opt, err, len);
}
