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
    snprintf(buf, len, "usage: %s [--fixture NAME|PATH [--group NAME]]%s [--dump PATH]%s%s%s [--threads N] [--help]",
             name, allow_seed & CLI_TEXT ? " [--text FILE] [--vocab FILE]" : "",
             allow_seed & CLI_SEEDS ? " [--seed [SITE=]N]... [--skip K]" : "",
             allow_seed & CLI_WEIGHTS ? " [--weights [NAME=]FILE[:KEY]]..." : "",
             allow_seed & CLI_SIZES ? " [--context-len N] [--batch-size B]" : "");
}

// Appends to buf[*n] the words, ", "-separated, in lines of at most 100
// columns indented by 18 (the help's layout), and a newline.
static void wrapped(char *buf, size_t len, int *n, const char *const *words) {
    int col = 18;
    for (int i = 0; words && words[i] && *n > 0 && (size_t)*n < len; i++) {
        const int w = (int)strlen(words[i]) + (words[i + 1] ? 1 : 0);
        if (i && col + 1 + w > 100) *n += snprintf(buf + *n, len - (size_t)*n, "\n%18s", ""), col = 18;
        else if (i) *n += snprintf(buf + *n, len - (size_t)*n, " "), col++;
        if (*n > 0 && (size_t)*n < len) *n += snprintf(buf + *n, len - (size_t)*n, "%s%s", words[i], words[i + 1] ? "," : "");
        col += w;
    }
    if (*n > 0 && (size_t)*n < len) *n += snprintf(buf + *n, len - (size_t)*n, "\n");
}

void cli_help(char *buf, size_t len, const char *name, const char *about, const char *book_variant,
              const char *variants, const char *places, int allow_seed, const char *const *modules) {
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
    // The modules, from the chapter itself (the names it makes them under).
    if (allow_seed & CLI_WEIGHTS && n > 0 && (size_t)n < len) {
        n += snprintf(buf + n, len - (size_t)n,
                 "  --weights [NAME=]FILE[:KEY]\n"
                 "                  the module NAME takes its parameters and buffers from the state_dict\n"
                 "                  that torch.save wrote to FILE, or from FILE's entry KEY (a checkpoint's\n"
                 "                  model_state_dict), checked as load_state_dict(strict=True) checks it;\n"
                 "                  repeatable, one file per module. Without NAME=: the first module that\n"
                 "                  no NAME=FILE names. NAME is one of this chapter's modules, in the order\n"
                 "                  it makes them (as their tensors are named in --dump):\n%18s", "");
        wrapped(buf, len, &n, modules);
        if (n > 0 && (size_t)n < len)
            n += snprintf(buf + n, len - (size_t)n,
                 "                  NAME= is read when the text before the first '=' is a module's name,\n"
                 "                  :KEY when the text after the last ':' is letters, digits and '_'; so a\n"
                 "                  file whose name holds '=' is given with its directory (./w=1.pth), and\n"
                 "                  one whose name ends in ':' and such a text with one ':' more (run:best:)\n");
    }
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

// A module's name: dotted parts, each a letter or '_' then letters, digits
// and '_' ("exercise_3_1.sa_v1").
static int is_module_name(const char *s, size_t n) {
    if (!n || s[n - 1] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        const int start = i == 0 || s[i - 1] == '.';
        if (!(isalpha((unsigned char)s[i]) || s[i] == '_' || (!start && (isdigit((unsigned char)s[i]) || s[i] == '.'))))
            return 0;
    }
    return 1;
}

// An entry's key in a checkpoint: a letter or '_' then letters, digits and
// '_' ("model_state_dict").
static int is_entry_key(const char *s, size_t n) {
    if (!n || isdigit((unsigned char)s[0])) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
    return 1;
}

// --weights [NAME=]FILE[:KEY], read as cli.h states.
static int parse_weights(Options *opt, const char *value, char *err, size_t len) {
    if (opt->n_weights == CLI_MAX_WEIGHTS) {
        snprintf(err, len, "--weights: at most %d files", CLI_MAX_WEIGHTS);
        return 0;
    }
    const char *file = value, *end = value + strlen(value);
    const char *eq = strchr(value, '=');
    size_t name_len = 0;
    if (eq && is_module_name(value, (size_t)(eq - value))) name_len = (size_t)(eq - value), file = eq + 1;
    if (name_len >= sizeof opt->weights[0].name) {
        snprintf(err, len, "--weights %s...: expected a module's name of at most %zu bytes", shown(value, name_len).text,
                 sizeof opt->weights[0].name - 1);
        return 0;
    }
    const char *key = NULL;
    if (end > file && end[-1] == ':') {
        end--;  // "run:best:" is the file run:best, without a key
    } else {
        const char *colon = NULL;
        for (const char *c = file; c < end; c++)
            if (*c == ':') colon = c;
        if (colon && colon > file && is_entry_key(colon + 1, (size_t)(end - colon - 1))) key = colon + 1, end = colon;
    }
    const size_t path_len = (size_t)(end - file), key_len = key ? strlen(key) : 0;
    if (!path_len) {
        snprintf(err, len, "--weights %s: expected a FILE, found none", shown(value, strlen(value)).text);
        return 0;
    }
    if (path_len >= sizeof opt->weights[0].path || key_len >= sizeof opt->weights[0].key) {
        snprintf(err, len, "--weights %s: expected a FILE of fewer than %zu bytes and a KEY of fewer than %zu, "
                 "found %zu and %zu", shown(value, strlen(value)).text, sizeof opt->weights[0].path,
                 sizeof opt->weights[0].key, path_len, key_len);
        return 0;
    }
    for (int i = 0; i < opt->n_weights; i++)
        if (strlen(opt->weights[i].name) == name_len && !strncmp(opt->weights[i].name, value, name_len)) {
            if (name_len) snprintf(err, len, "--weights %.*s= given twice", (int)name_len, value);
            else snprintf(err, len, "--weights FILE given twice (name the module: --weights NAME=FILE)");
            return 0;
        }
    struct CliWeights *w = &opt->weights[opt->n_weights++];
    w->text = value;
    memcpy(w->name, value, name_len);
    w->name[name_len] = '\0';
    memcpy(w->path, file, path_len);
    w->path[path_len] = '\0';
    memcpy(w->key, key ? key : "", key_len + 1);
    w->module = -1;
    return 1;
}

// The chapter's modules as one text, "ca" or "sa_v2, exercise_3_1.sa_v1, ...".
static void list_modules(char *buf, size_t len, const char *const *modules) {
    buf[0] = '\0';
    for (size_t i = 0, at = 0; modules && modules[i] && at + 1 < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", modules[i]);
}

// Whether a --weights NAME=FILE is for module m.
static int named(const Options *opt, int m) {
    for (int j = 0; j < opt->n_weights; j++)
        if (opt->weights[j].name[0] && opt->weights[j].module == m) return 1;
    return 0;
}

int cli_weights_modules(Options *opt, const char *const *modules, char *err, size_t len) {
    int n = 0;
    while (modules && modules[n]) n++;
    char names[1024];
    list_modules(names, sizeof names, modules);
    if (opt->n_weights && !n) {
        snprintf(err, len, "--weights %s: this chapter makes no module that --weights loads",
                 shown(opt->weights[0].text, strlen(opt->weights[0].text)).text);
        return CLI_USAGE;
    }
    // Each NAME=FILE first: it takes its module whatever the order given.
    for (int i = 0; i < opt->n_weights; i++) {
        const struct CliWeights *w = &opt->weights[i];
        if (!w->name[0]) continue;
        int m = 0;
        while (m < n && strcmp(modules[m], w->name) != 0) m++;
        if (m == n) {
            const Shown value = shown(w->text, strlen(w->text));
            snprintf(err, len, "--weights %s: this chapter makes no module %s (it makes %s); a file whose name "
                     "holds '=' is given with its directory, ./%s", value.text, w->name, names, value.text);
            return CLI_USAGE;
        }
        opt->weights[i].module = m;
    }
    // Then the plain FILE: the first module that no NAME=FILE names.
    for (int i = 0; i < opt->n_weights; i++) {
        if (opt->weights[i].name[0]) continue;
        int m = 0;
        while (m < n && named(opt, m)) m++;
        if (m == n) {
            snprintf(err, len, "--weights %s: every module this chapter makes (%s) has its own --weights NAME=FILE",
                     shown(opt->weights[i].text, strlen(opt->weights[i].text)).text, names);
            return CLI_USAGE;
        }
        opt->weights[i].module = m;
    }
    return CLI_OK;
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
        else if (n == 9 && !strncmp(arg, "--weights", n) && (allow_seed & CLI_WEIGHTS))
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
