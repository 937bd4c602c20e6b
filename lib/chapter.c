// chapter.c: the runtime behind chapter.h: options, the fixture, --dump,
// and the source of parameters.
#include "chapter.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump.h"
#include "error.h"
#include "fixture.h"
#include "print.h"
#include "torch_generator.h"

#ifndef LITATTN_FIXTURES_DIR
#error "LITATTN_FIXTURES_DIR must name the source tree's fixtures/ directory"
#endif

static struct {
    const ChapterSpec *spec;
    Options opt;
    Fixture *fixture;
    Dump *dump;
    char fixture_path[4096];
    char seed[64];          // for seed_text()
    TorchGenerator gen;
    RandomSource rng;
    ParamSource params;
} ch;

static void usage_error(const char *why) {
    char usage[256];
    cli_usage(usage, sizeof usage, ch.spec->name, ch.spec->draws_weights);
    die(EXIT_USAGE, "%s (%s)", why, usage);
}

static void check_chapter_attribute(void) {
    char err[FIXTURE_ERR_LEN], found[128];
    if (!fixture_attr_string(ch.fixture, "chapter", found, sizeof found, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (strcmp(found, ch.spec->name) != 0)
        die(EXIT_BAD_INPUT, "%s: attribute 'chapter': expected '%s', found '%s' (a fixture of another chapter)",
            fixture_path(ch.fixture), ch.spec->name, found);
}

void chapter_begin(int argc, char **argv, const ChapterSpec *spec) {
    ch.spec = spec;
    error_set_program(spec->name);
    char err[FIXTURE_ERR_LEN];
    if (cli_parse(argc, argv, spec->draws_weights, &ch.opt, err, sizeof err) != CLI_OK) usage_error(err);
    if (ch.opt.help) {
        char usage[256];
        cli_usage(usage, sizeof usage, spec->name, spec->draws_weights);
        printf("%s\n\n%s\n\n"
               "  --fixture PATH  read inputs%s from PATH (default: %s/%s.%s.h5)\n"
               "  --group NAME    the configuration NAME inside a multi-group fixture (fixtures/sweep.h5)\n"
               "  --dump PATH     also write every tensor computed to the HDF5 file PATH\n",
               usage, spec->about, spec->draws_weights ? " and weights" : "", LITATTN_FIXTURES_DIR, spec->name,
               spec->variant);
        if (spec->draws_weights)
            printf("  --seed N        draw the weights in C as torch.manual_seed(N) would, instead of reading them\n"
                   "  --skip K        after seeding, discard K draws first (the notebook's earlier torch.rand calls)\n");
        exit(0);
    }
    // --fixture's path is used as given (fixture_open refuses one too long), never cut to a buffer.
    snprintf(ch.fixture_path, sizeof ch.fixture_path, "%s/%s.%s.h5", LITATTN_FIXTURES_DIR, spec->name, spec->variant);
    ch.fixture = fixture_open(ch.opt.fixture ? ch.opt.fixture : ch.fixture_path, ch.opt.group, err);
    if (!ch.fixture) die(EXIT_BAD_INPUT, "%s", err);
    check_chapter_attribute();
    if (ch.opt.dump) {
        // The fixture is read into memory, not held open: the dump refuses
        // the file it came from by device and inode, however it is named.
        DumpInput fixture = {0, 0, "the fixture"};
        fixture_file_id(ch.fixture, &fixture.dev, &fixture.ino);
        ch.dump = dump_create(ch.opt.dump, &fixture, 1);
    }
}

int chapter_end(void) {
    fflush(stdout);
    dump_close(ch.dump);
    fixture_close(ch.fixture);
    tensor_release_all();
    if (ferror(stdout)) die(EXIT_BAD_INPUT, "cannot write the output");
    return 0;
}

void cell(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(">>> ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

// Python's repr(float): the shortest digits that read back as the same
// double, with ".0" on integral values (as in 4.692901219967951 or 98.0).
static void print_float_repr(double x) {
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    printf("%s%s", buf, strpbrk(buf, ".eni") ? "" : ".0");
}

void show(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            putchar(*p);
            continue;
        }
        // Collect one conversion: '%', an optional ".N", then the letter.
        char spec[16] = "%";
        size_t n = 1;
        while (p[1] && strchr(".0123456789", p[1]) && n < sizeof spec - 2) spec[n++] = *++p;
        char conv = *++p;
        spec[n++] = conv;
        spec[n] = '\0';
        switch (conv) {
        case 'T': print_tensor(stdout, va_arg(ap, Tensor)); break;
        case 'P': print_parameter(stdout, va_arg(ap, Tensor)); break;
        case 'S': print_size(stdout, va_arg(ap, Tensor)); break;
        case 'd': printf(spec, va_arg(ap, int)); break;
        case 's': printf(spec, va_arg(ap, const char *)); break;
        case 'f': printf(spec, va_arg(ap, double)); break;
        case 'r': print_float_repr(va_arg(ap, double)); break;
        case '%': putchar('%'); break;
        default: die(EXIT_BAD_INPUT, "show(): unknown conversion '%s'", spec);
        }
    }
    va_end(ap);
}

static void keep_as(const char *name, const char *role, Tensor t) {
    if (ch.dump) dump_write(ch.dump, name, role, t);
}

void keep(const char *name, Tensor t) { keep_as(name, "output", t); }

void show_kept(const char *name, Tensor t) {
    show("%T\n", t);
    keep(name, t);
}

Tensor fixture_input(const char *name, Shape want) {
    char err[FIXTURE_ERR_LEN];
    Tensor t;
    if (!fixture_read_finite(ch.fixture, name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    keep_as(name, "input", t);
    return t;
}

Tensor fixture_inputs(int min_tokens) {
    Tensor inputs = fixture_input("inputs", (Shape){2, {SHAPE_ANY, SHAPE_ANY}});
    if (inputs.rows < min_tokens)
        die(EXIT_BAD_INPUT, "%s: dataset 'inputs': expected at least %d tokens (rows), found %d",
            fixture_path(ch.fixture), min_tokens, inputs.rows);
    if (inputs.rows > CHAPTER_MAX_DIM || inputs.cols > CHAPTER_MAX_DIM)
        die(EXIT_BAD_INPUT, "%s: dataset 'inputs': expected at most %d tokens (rows) of at most %d features, "
            "found (%d, %d)", fixture_path(ch.fixture), CHAPTER_MAX_DIM, CHAPTER_MAX_DIM, inputs.rows, inputs.cols);
    return inputs;
}

long long fixture_int(const char *name, long long min, long long max) {
    char err[FIXTURE_ERR_LEN];
    long long v;
    if (!fixture_attr_int_in(ch.fixture, name, min, max, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    return v;
}

// --- parameters read from the fixture ------------------------------------

static void made_weight(const char *name, Tensor t) { keep_as(name, "weight", t); }

static Tensor read_weight(const char *name, Shape want) {
    char err[FIXTURE_ERR_LEN];
    Tensor t;
    if (!fixture_read_finite(ch.fixture, name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    made_weight(name, t);
    return t;
}

static Tensor loaded_rand(ParamSource *ps, const char *name, int rows, int cols) {
    (void)ps;
    return read_weight(name, (Shape){2, {rows, cols}});
}

static Linear loaded_linear(ParamSource *ps, const char *name, int in, int out, int bias) {
    (void)ps;
    char key[128];
    snprintf(key, sizeof key, "%s.weight", name);
    Tensor weight = read_weight(key, (Shape){2, {out, in}});
    Tensor none = {0};
    if (!bias) return linear_from(weight, none);
    snprintf(key, sizeof key, "%s.bias", name);
    return linear_from(weight, read_weight(key, (Shape){1, {out}}));
}

ParamSource *manual_seed(void) {
    if (!ch.opt.seed) {
        ch.params = (ParamSource){loaded_rand, loaded_linear, made_weight, NULL};
        return &ch.params;
    }
    torch_manual_seed(&ch.gen, ch.opt.seed_value);
    for (long long k = 0; k < ch.opt.skip; k++) (void)torch_random(&ch.gen);
    ch.rng = torch_generator_source(&ch.gen);
    ch.params = params_drawn(&ch.rng, made_weight);
    return &ch.params;
}

long long skip_count(void) {
    if (ch.opt.seed || !fixture_has_attr(ch.fixture, "skip")) return ch.opt.skip;
    return fixture_int("skip", 0, 1000000000LL);
}

void keep_trace(AttentionTrace tr) {
    keep("keys", tr.keys);
    keep("queries", tr.queries);
    keep("values", tr.values);
    keep("attn_scores", tr.attn_scores);
    keep("attn_weights", tr.attn_weights);
    keep("context_vec", tr.context_vec);
}

const char *seed_text(void) {
    if (ch.opt.seed) return ch.opt.seed;
    char err[FIXTURE_ERR_LEN];
    if (!fixture_attr_string(ch.fixture, "seed", ch.seed, sizeof ch.seed, err)) die(EXIT_BAD_INPUT, "%s", err);
    return ch.seed;
}
