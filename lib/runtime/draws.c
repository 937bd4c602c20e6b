// draws.c: see draws.h.
#include "draws.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "init.h"
#include "keep.h"
#include "noise.h"
#include "normal.h"
#include "print.h"
#include "torch_generator.h"
#include "weights.h"

static void need_seed(const Run *run, const char *name) {
    if (!run->draws.seeded) die_internal("%s is drawn before torch.manual_seed", name);
}

// The seed of a site: --seed SITE=N, else --seed N, else the fixture's
// attribute (`seed` or `<site>.seed`), which must be an integer as
// torch.manual_seed takes it.
// pinned: a plain --seed N leaves this site alone (a chapter whose plain
// --seed is the process's initial seed: its torch.manual_seed(123) stays).
static void site_seed_of(const Run *run, const char *site, int pinned, uint64_t *value, char *text, size_t len) {
    const Options *opt = &run->opt;
    for (int pass = 0; pass < (pinned ? 1 : 2); pass++)
        for (int i = 0; i < opt->n_seeds; i++) {
            const char *s = opt->seeds[i].site;
            if (pass == 0 ? (site && !strcmp(s, site)) : !*s) {
                *value = opt->seeds[i].value;
                snprintf(text, len, "%s", opt->seeds[i].text);
                return;
            }
        }
    char attr[128], err[FIXTURE_ERR_LEN];
    snprintf(attr, sizeof attr, "%s%sseed", site ? site : "", site ? "." : "");
    if (!fixture_attr_string(run->fixture, attr, text, len, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (!torch_parse_seed(text, value))
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected an integer in [-2^63, 2^64 - 1] as torch.manual_seed "
            "takes, written in decimal, found '%s'", error_input(), attr, text);
}

// The draws of the cells before the first seeding, discarded once per run:
// --skip K, or the fixture's `skip` (read only when the run reads its draws).
static void discard_skip(Run *run) {
    if (run->draws.skipped) return;
    run->draws.skipped = true;
    long long skip = run->opt.skip;
    if (!run->drawing && fixture_has_attr(run->fixture, "skip")) {
        char err[FIXTURE_ERR_LEN];
        if (!fixture_attr_int(run->fixture, "skip", &skip, err)) die(EXIT_BAD_INPUT, "%s", err);
        if (skip < 0 || skip > CLI_MAX_SKIP)
            die(EXIT_BAD_INPUT, "%s: attribute 'skip': expected a count of draws in [0, 10^9], found %lld",
                error_input(), skip);
    }
    for (long long k = 0; k < skip; k++) (void)torch_random(&run->draws.gen);
    if (skip) print_note("#", skip, "draws by earlier cells, discarded");
}

static void seed_site_as(Run *run, const char *site, int pinned, long long book_seed) {
    uint64_t value;
    char text[64], book[32];
    site_seed_of(run, site, pinned, &value, text, sizeof text);
    torch_manual_seed(&run->draws.gen, value);
    run->draws.seeded = true;
    snprintf(book, sizeof book, "%lld", book_seed);
    if (strcmp(text, book) != 0) {
        char note[160];
        snprintf(note, sizeof note, "torch.manual_seed(%s)", text);
        print_note("#", note, "here; the book has", book_seed);
    }
    discard_skip(run);
}

void manual_seed(Run *run, long long book_seed) { seed_site_as(run, NULL, 0, book_seed); }
void manual_seed_at(Run *run, const char *site, long long book_seed) { seed_site_as(run, site, 0, book_seed); }
void manual_seed_in_process(Run *run, const char *site, long long book_seed) {
    seed_site_as(run, site, 1, book_seed);
}

void initial_seed(Run *run) {
    uint64_t value;
    char text[64], note[256];
    site_seed_of(run, NULL, 0, &value, text, sizeof text);
    torch_manual_seed(&run->draws.gen, value);  // a generator made with seed s is one manual_seed(s) gives
    run->draws.seeded = true;
    snprintf(note, sizeof note, "torch.initial_seed() = %s here: the seed this process's default generator "
             "started from (the notebook's process picks its own)", text);
    print_note("#", note);
    discard_skip(run);
}

TorchGenerator *default_generator(Run *run, const char *what) {
    need_seed(run, what);
    return &run->draws.gen;
}


// A draw is kept for --dump as the run uses it: a parameter that --weights
// loads, as the file has it (weights.h).
static void keep_drawn(Run *run, const char *name, const char *role, Tensor t) {
    if (!strcmp(role, "weight")) weights_fill(run, name, t);
    keep_as(run, name, role, t);
}

// Fixture mode: the dataset PyTorch drew, if the fixture holds it whole (a
// tensor too large to commit is there only as a digest: then NULL).
static int read_drawn(Run *run, const char *name, Tensor t, const char *role) {
    if (run->drawing) return 0;
    Fixture *fx = run->fixture;
    if (!fixture_has(fx, name)) {
        char digest[160];
        snprintf(digest, sizeof digest, "%s.sha256", name);
        if (fixture_has_attr(fx, digest)) return 0;
    }
    char err[FIXTURE_ERR_LEN];
    Tensor got;
    if (!fixture_read(fx, name, shape(t), &got, err)) die(EXIT_BAD_INPUT, "%s", err);
    memcpy(t.data, got.data, (size_t)numel(t) * sizeof(float));
    keep_drawn(run, name, role, t);
    return 1;
}

// The generator moved past n draws read from the fixture.
static void pass_draws(Run *run, long long n) {
    for (long long k = 0; k < n; k++) (void)torch_random(&run->draws.gen);
}

// t = torch.rand(*t.shape), drawn or read.
static void fill_rand(Run *run, const char *name, Tensor t, const char *role) {
    need_seed(run, name);
    if (read_drawn(run, name, t, role)) pass_draws(run, numel(t));
    else rand_fill(t.data, numel(t), &run->draws.rng), keep_drawn(run, name, role, t);
}

Tensor draw_rand(Run *run, const char *name, Size s, const char *role) {
    need_seed(run, name);
    Tensor t = tensor_empty(s);
    fill_rand(run, name, t, role);
    return t;
}

static void source_normal_(void *ctx, const char *name, Tensor t, double mean, double std) {
    Run *run = ctx;
    need_seed(run, name);
    // Drawn here even when read: normal_'s words (n, and 16 more when n % 16
    // != 0; below 16 elements the scalar path and its cached normal) move the
    // generator as torch's did. A table too large to commit is not in the
    // fixture: then the drawn values stand.
    normal_fill(t.data, numel(t), mean, std, &run->draws.gen);
    if (!read_drawn(run, name, t, "weight")) keep_drawn(run, name, "weight", t);
}

Tensor draw_randn(Run *run, const char *name, Size s, const char *role) {
    need_seed(run, name);
    Tensor t = tensor_empty(s);
    // Drawn here even when read (a tensor too large to commit is not in the fixture).
    normal_fill(t.data, numel(t), 0.0, 1.0, &run->draws.gen);
    if (!read_drawn(run, name, t, role)) keep_drawn(run, name, role, t);
    return t;
}

// --- the modules' ParamSource --------------------------------------------------

static void source_rand(void *ctx, const char *name, Tensor t) { fill_rand(ctx, name, t, "weight"); }

static void source_uniform_(void *ctx, const char *name, Tensor t, double from, double to) {
    Run *run = ctx;
    need_seed(run, name);
    if (read_drawn(run, name, t, "weight")) pass_draws(run, numel(t));
    else uniform_fill(t.data, numel(t), from, to, &run->draws.rng), keep_drawn(run, name, "weight", t);
}

static void source_dropout_noise(void *ctx, const char *name, Tensor noise, double p) {
    Run *run = ctx;
    need_seed(run, name);
    // noise.bernoulli_(1 - p): 1 where a 53-bit uniform is below 1 - p;
    // noise.div_(1 - p): a float division by (float)(1 - p).
    const double keep_p = 1.0 - p;
    // Drawn here even when read: that moves the generator past the draws.
    noise_fast_dropout(noise.data, numel(noise), keep_p, &run->draws.gen);
    if (!read_drawn(run, name, noise, "random")) keep_drawn(run, name, "random", noise);
}

void draws_begin(Run *run) {
    run->draws.rng = torch_generator_source(&run->draws.gen);
    run->source = (ParamSource){source_uniform_, source_rand, source_dropout_noise, source_normal_, run};
}

const ParamSource *draws_source(const Run *run) { return &run->source; }
