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

static struct {
    const Options *opt;    // the command line's seeds and --skip
    Fixture *fixture;      // the fixture's draws and seeds
    int drawing;           // --seed given: draw here; else read the fixture's draws
    int seeded;            // manual_seed has run (the generator is in use)
    int skipped;           // --skip / `skip` has been applied
    TorchGenerator gen;
    RandomSource rng;
} dr;

static void need_seed(const char *name) {
    if (!dr.seeded) die_internal("%s is drawn before torch.manual_seed", name);
}

void draws_begin(const Options *opt, Fixture *fx) {
    dr.opt = opt;
    dr.fixture = fx;
    dr.drawing = opt->n_seeds > 0 || opt->context_len > 0 || opt->batch_size > 0;
    dr.rng = torch_generator_source(&dr.gen);
}

// The seed of a site: --seed SITE=N, else --seed N, else the fixture's
// attribute (`seed` or `<site>.seed`), which must be an integer as
// torch.manual_seed takes it.
// pinned: a plain --seed N leaves this site alone (a chapter whose plain
// --seed is the process's initial seed: its torch.manual_seed(123) stays).
static void site_seed_of(const char *site, int pinned, uint64_t *value, char *text, size_t len) {
    const Options *opt = dr.opt;
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
    if (!fixture_attr_string(dr.fixture, attr, text, len, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (!torch_parse_seed(text, value))
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected an integer in [-2^63, 2^64 - 1] as torch.manual_seed "
            "takes, written in decimal, found '%s'", error_input(), attr, text);
}

static void site_seed(const char *site, uint64_t *value, char *text, size_t len) {
    site_seed_of(site, 0, value, text, len);
}

static long long skip_count(void) {
    if (dr.drawing || !fixture_has_attr(dr.fixture, "skip")) return dr.opt->skip;
    char err[FIXTURE_ERR_LEN];
    long long k;
    if (!fixture_attr_int(dr.fixture, "skip", &k, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (k < 0 || k > CLI_MAX_SKIP)
        die(EXIT_BAD_INPUT, "%s: attribute 'skip': expected a count of draws in [0, 10^9], found %lld",
            error_input(), k);
    return k;
}

static void seed_site_as(const char *site, int pinned, long long book_seed) {
    uint64_t value;
    char text[64], book[32];
    site_seed_of(site, pinned, &value, text, sizeof text);
    torch_manual_seed(&dr.gen, value);
    dr.seeded = 1;
    snprintf(book, sizeof book, "%lld", book_seed);
    if (strcmp(text, book) != 0) {
        char note[160];
        snprintf(note, sizeof note, "torch.manual_seed(%s)", text);
        print_note("#", note, "here; the book has", book_seed);
    }
    if (!dr.skipped) {
        long long skip = skip_count();
        for (long long k = 0; k < skip; k++) (void)torch_random(&dr.gen);
        if (skip) print_note("#", skip, "draws by earlier cells, discarded");
        dr.skipped = 1;
    }
}

static void seed_site(const char *site, long long book_seed) { seed_site_as(site, 0, book_seed); }

void manual_seed(long long book_seed) { seed_site(NULL, book_seed); }
void manual_seed_at(const char *site, long long book_seed) { seed_site(site, book_seed); }
void manual_seed_in_process(const char *site, long long book_seed) { seed_site_as(site, 1, book_seed); }

void initial_seed(void) {
    uint64_t value;
    char text[64], note[256];
    site_seed(NULL, &value, text, sizeof text);
    torch_manual_seed(&dr.gen, value);  // a generator made with seed s is one manual_seed(s) gives
    dr.seeded = 1;
    snprintf(note, sizeof note, "torch.initial_seed() = %s here: the seed this process's default generator "
             "started from (the notebook's process picks its own)", text);
    print_note("#", note);
    long long skip = skip_count();
    for (long long k = 0; k < skip; k++) (void)torch_random(&dr.gen);
    if (skip) print_note("#", skip, "draws by earlier cells, discarded");
    dr.skipped = 1;
}

TorchGenerator *default_generator(const char *what) {
    need_seed(what);
    return &dr.gen;
}


// A draw is kept for --dump as the run uses it: a parameter that --weights
// loads, as the file has it (weights.h).
static void keep_drawn(const char *name, const char *role, Tensor t) {
    if (!strcmp(role, "weight")) weights_fill(name, t);
    keep_as(name, role, t);
}

// Fixture mode: the dataset PyTorch drew, if the fixture holds it whole (a
// tensor too large to commit is there only as a digest: then NULL).
static int read_drawn(const char *name, Tensor t, const char *role) {
    if (dr.drawing) return 0;
    Fixture *fx = dr.fixture;
    if (!fixture_has(fx, name)) {
        char digest[160];
        snprintf(digest, sizeof digest, "%s.sha256", name);
        if (fixture_has_attr(fx, digest)) return 0;
    }
    char err[FIXTURE_ERR_LEN];
    Tensor got;
    if (!fixture_read(fx, name, shape(t), &got, err)) die(EXIT_BAD_INPUT, "%s", err);
    memcpy(t.data, got.data, (size_t)numel(t) * sizeof(float));
    keep_drawn(name, role, t);
    return 1;
}

static void skip_draws(long long n) {
    for (long long k = 0; k < n; k++) (void)torch_random(&dr.gen);
}

// t = torch.rand(*t.shape), drawn or read.
static void fill_rand(const char *name, Tensor t, const char *role) {
    need_seed(name);
    if (read_drawn(name, t, role)) skip_draws(numel(t));
    else rand_fill(t.data, numel(t), &dr.rng), keep_drawn(name, role, t);
}

Tensor draw_rand(const char *name, Size s, const char *role) {
    need_seed(name);
    Tensor t = tensor_empty(s);
    fill_rand(name, t, role);
    return t;
}

static void source_normal_(void *ctx, const char *name, Tensor t, double mean, double std) {
    (void)ctx;
    need_seed(name);
    // Drawn here even when read: normal_'s words (n, and 16 more when n % 16
    // != 0; below 16 elements the scalar path and its cached normal) move the
    // generator as torch's did. A table too large to commit is not in the
    // fixture: then the drawn values stand.
    normal_fill(t.data, numel(t), mean, std, &dr.gen);
    if (!read_drawn(name, t, "weight")) keep_drawn(name, "weight", t);
}

Tensor draw_randn(const char *name, Size s, const char *role) {
    need_seed(name);
    Tensor t = tensor_empty(s);
    // Drawn here even when read (a tensor too large to commit is not in the fixture).
    normal_fill(t.data, numel(t), 0.0, 1.0, &dr.gen);
    if (!read_drawn(name, t, role)) keep_drawn(name, role, t);
    return t;
}

// --- the modules' ParamSource --------------------------------------------------

static void source_rand(void *ctx, const char *name, Tensor t) {
    (void)ctx;
    fill_rand(name, t, "weight");
}

static void source_uniform_(void *ctx, const char *name, Tensor t, double from, double to) {
    (void)ctx;
    need_seed(name);
    if (read_drawn(name, t, "weight")) skip_draws(numel(t));
    else uniform_fill(t.data, numel(t), from, to, &dr.rng), keep_drawn(name, "weight", t);
}

static void source_dropout_noise(void *ctx, const char *name, Tensor noise, double p) {
    (void)ctx;
    need_seed(name);
    // noise.bernoulli_(1 - p): 1 where a 53-bit uniform is below 1 - p;
    // noise.div_(1 - p): a float division by (float)(1 - p).
    const double keep_p = 1.0 - p;
    // Drawn here even when read: that moves the generator past the draws.
    noise_fast_dropout(noise.data, numel(noise), keep_p, &dr.gen);
    if (!read_drawn(name, noise, "random")) keep_drawn(name, "random", noise);
}

const ParamSource *draws_source(void) {
    static const ParamSource source = {source_uniform_, source_rand, source_dropout_noise, source_normal_, NULL};
    return &source;
}
