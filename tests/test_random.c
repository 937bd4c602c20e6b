// test_random.c: lib/random/'s normal, permutation and init units against
// what PyTorch 1.13 draws.
//
// usage: test_random fixtures/random_cases.h5
//
// The fixture (tools/export/random_cases.py, from real torch 1.13) holds one group
// per case: a seed and a list of ops run one after the other on torch's
// default generator, and what each op made ("o0", "o1", ...; the op language
// is in random_cases.py's docstring). Each case replays its ops on one
// TorchGenerator and compares every output bit for bit: float tensors value
// by value (anything but identical bits fails; the worst ulp of a failing
// tensor is printed with where it is), indices and int64 values exactly,
// the large tensors by SHA-256. Every case runs once on each path of
// normal_fill this CPU runs (the portable blocks, and the AVX2 blocks where
// the CPU has AVX2 and FMA); the library's own callers of normal_fill
// (embedding_fill, xavier_normal_fill) take the automatic path.
// Before them, torch_random_words on each path against torch_random.
// One line per case and path:
//   ok|FAIL <case> [<path>]: N outputs identical | the failing outputs
// and the exit status is 1 if any output differs.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "dataset.h"
#include "error.h"
#include "fixture.h"
#include "init.h"
#include "normal.h"
#include "permutation.h"
#include "tensor.h"
#include "torch_generator.h"
#include "ulp.h"

enum { MAX_TOKENS = 8, MAX_DIMS = 4 };

typedef struct {
    Fixture *fx;
    const char *name;
    NormalPath path;
    TorchGenerator g;
    int outputs, bad;  // outputs compared, outputs that differ
} Case;

static int failures;

// --- comparing ----------------------------------------------------------------

// got (n,) against the float32 dataset key of shape want, bit for bit.
static void compare(Case *c, const char *key, const float *got, Size want) {
    char err[FIXTURE_ERR_LEN];
    Tensor t;
    c->outputs++;
    if (!fixture_read(c->fx, key, want, &t, err)) {
        printf("  %s: %s\n", key, err);
        c->bad++;
        return;
    }
    const long n = size_numel(want);
    uint32_t worst = 0;
    long at = -1;
    for (long i = 0; i < n; i++) {
        if (same_bits(got[i], t.data[i])) continue;
        const uint32_t d = ulp_distance(got[i], t.data[i]);
        if (at < 0 || d > worst) worst = d, at = i;
    }
    if (at >= 0) {
        c->bad++;
        printf("  %s: worst %u ulp at [%ld] of %ld: C %a, torch %a\n", key, worst, at, n, got[at], t.data[at]);
    }
    tensor_free(t);
}

// An index array (randperm, a loader's batches) against a float32 dataset
// holding the same integers.
static void compare_int(Case *c, const char *key, int64_t got);
static void compare_indices(Case *c, const char *key, const int64_t *got, long n) {
    char numel[80];
    snprintf(numel, sizeof numel, "%s.numel", key);
    if (n == 0 || fixture_has_attr(c->fx, numel)) {  // torch's empty output: "KEY.numel" = 0
        compare_int(c, numel, n);
        return;
    }
    float *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    if (!f) die(EXIT_FAILURE, "out of memory");
    for (long i = 0; i < n; i++) f[i] = (float)got[i];  // exact: n < 2^24
    compare(c, key, f, SIZE((int)n));
    free(f);
}

static long long need_int_attr(Case *c, const char *key) {
    char err[FIXTURE_ERR_LEN];
    long long v;
    if (!fixture_attr_int(c->fx, key, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    return v;
}

static void compare_int(Case *c, const char *key, int64_t got) {
    const long long want = need_int_attr(c, key);
    c->outputs++;
    if (got == want) return;
    c->bad++;
    printf("  %s: C %lld, torch %lld\n", key, (long long)got, want);
}

static void compare_sha256(Case *c, const char *key, const float *got, long n) {
    char err[FIXTURE_ERR_LEN], want[80], hex[2 * EVP_MAX_MD_SIZE + 1];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (!fixture_attr_string(c->fx, key, want, sizeof want, err)) die(EXIT_BAD_INPUT, "%s", err);
    EVP_Digest(got, (size_t)n * sizeof(float), md, &len, EVP_sha256(), NULL);  // little-endian floats
    for (unsigned i = 0; i < len; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    c->outputs++;
    if (strcmp(hex, want) == 0) return;
    c->bad++;
    printf("  %s: SHA-256 %s, torch %s\n", key, hex, want);
}

// --- running the ops ------------------------------------------------------------

static float *alloc_floats(long n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!p) die(EXIT_FAILURE, "out of memory");
    return p;
}

static long to_long(Case *c, const char *tok) {
    char *end;
    const long v = strtol(tok, &end, 10);
    if (*tok == '\0' || *end != '\0') die(EXIT_BAD_INPUT, "%s: bad number '%s' in ops", c->name, tok);
    return v;
}

static double to_double(Case *c, const char *tok) {
    char *end;
    const double v = strtod(tok, &end);  // Python's repr of a float reads back exactly
    if (*tok == '\0' || *end != '\0') die(EXIT_BAD_INPUT, "%s: bad number '%s' in ops", c->name, tok);
    return v;
}

static void seed(Case *c, const char *text) {
    uint64_t s;
    if (!torch_parse_seed(text, &s)) die(EXIT_BAD_INPUT, "%s: bad seed '%s'", c->name, text);
    torch_manual_seed(&c->g, s);
}

// An op's output: its float values and shape. `digest` set: only its SHA-256 is stored.
typedef struct {
    float *v;
    Size size;
} Out;

static void emit(Case *c, const char *key, Out o, int digest) {
    if (digest) compare_sha256(c, key, o.v, size_numel(o.size));
    else compare(c, key, o.v, o.size);
    free(o.v);
}

// nn.MultiheadAttention(E, H, bias, add_bias_kv) at construction, in its order
// (torch/nn/modules/activation.py, 1.13): out_proj (a Linear(E, E, bias))
// draws first, its weight by kaiming_uniform_(a=sqrt(5)), then its bias;
// then _reset_parameters: xavier_uniform_(in_proj_weight (3E, E)), the
// biases set to 0 (out_proj's drawn bias is thrown away), then
// xavier_normal_ on bias_k and bias_v (1, 1, E).
static void run_mha(Case *c, int k, long E, int bias, int kv) {
    RandomSource rs = torch_generator_source(&c->g);
    float *in_w = alloc_floats(3 * E * E), *out_w = alloc_floats(E * E);
    float *in_b = alloc_floats(3 * E), *out_b = alloc_floats(E);
    float *bk = alloc_floats(E), *bv = alloc_floats(E);
    uniform_fill(out_w, E * E, -kaiming_uniform_bound((int)E), kaiming_uniform_bound((int)E), &rs);
    if (bias) uniform_fill(out_b, E, -linear_bias_bound((int)E), linear_bias_bound((int)E), &rs);
    xavier_uniform_fill(in_w, 3 * E, E, 1.0, &rs);
    if (bias) {
        for (long i = 0; i < 3 * E; i++) in_b[i] = 0.0f;
        for (long i = 0; i < E; i++) out_b[i] = 0.0f;
    }
    if (kv) {
        xavier_normal_fill(bk, E, E, E, 1.0, &c->g);  // (1, 1, E): both fans E
        xavier_normal_fill(bv, E, E, E, 1.0, &c->g);
    }
    char key[64];
    snprintf(key, sizeof key, "o%d.in_proj_weight", k), compare(c, key, in_w, SIZE((int)(3 * E), (int)E));
    snprintf(key, sizeof key, "o%d.out_proj.weight", k), compare(c, key, out_w, SIZE((int)E, (int)E));
    if (bias) {
        snprintf(key, sizeof key, "o%d.in_proj_bias", k), compare(c, key, in_b, SIZE((int)(3 * E)));
        snprintf(key, sizeof key, "o%d.out_proj.bias", k), compare(c, key, out_b, SIZE((int)E));
    }
    if (kv) {
        snprintf(key, sizeof key, "o%d.bias_k", k), compare(c, key, bk, SIZE(1, 1, (int)E));
        snprintf(key, sizeof key, "o%d.bias_v", k), compare(c, key, bv, SIZE(1, 1, (int)E));
    }
    free(in_w), free(out_w), free(in_b), free(out_b), free(bk), free(bv);
}

// The bonus notebook's MHAEinsum(d_in, d_out, ..., qkv_bias) at construction
// (mha-implementations.ipynb): W_query, W_key, W_value = randn(d_in, d_out)
// in turn (normal_ draws, on c's path); the biases zeros (no draw);
// out_proj = nn.Linear(d_out, d_out): weight by kaiming_uniform_(a=sqrt(5))
// with fan_in d_out, then bias by uniform_(+-1/sqrt(d_out)); then
// reset_parameters REDRAWS W_query, W_key, W_value by kaiming_uniform_ with
// fan_in = W.size(1) = d_out (not d_in), and, with qkv_bias, bias_q, bias_k,
// bias_v by uniform_(+-1/sqrt(d_out)). The randn values are discarded; their
// words still count.
static void run_mha_einsum(Case *c, int k, long d_in, long d_out, int bias) {
    RandomSource rs = torch_generator_source(&c->g);
    float *W[3], *b[3];
    for (int i = 0; i < 3; i++) {
        W[i] = alloc_floats(d_in * d_out), b[i] = alloc_floats(d_out);
        normal_fill_with_path(W[i], d_in * d_out, 0.0, 1.0, &c->g, c->path);
        for (long j = 0; j < d_out; j++) b[i][j] = 0.0f;
    }
    float *ow = alloc_floats(d_out * d_out), *ob = alloc_floats(d_out);
    const double kb = kaiming_uniform_bound((int)d_out), bb = linear_bias_bound((int)d_out);
    uniform_fill(ow, d_out * d_out, -kb, kb, &rs);
    uniform_fill(ob, d_out, -bb, bb, &rs);
    for (int i = 0; i < 3; i++) uniform_fill(W[i], d_in * d_out, -kb, kb, &rs);
    if (bias)
        for (int i = 0; i < 3; i++) uniform_fill(b[i], d_out, -1.0 / sqrt((double)d_out), 1.0 / sqrt((double)d_out), &rs);
    static const char *const wn[3] = {"W_query", "W_key", "W_value"}, *const bn[3] = {"bias_q", "bias_k", "bias_v"};
    char key[64];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "o%d.%s", k, wn[i]), compare(c, key, W[i], SIZE((int)d_in, (int)d_out));
        if (bias) snprintf(key, sizeof key, "o%d.%s", k, bn[i]), compare(c, key, b[i], SIZE((int)d_out));
        free(W[i]), free(b[i]);
    }
    snprintf(key, sizeof key, "o%d.out_proj.weight", k), compare(c, key, ow, SIZE((int)d_out, (int)d_out));
    snprintf(key, sizeof key, "o%d.out_proj.bias", k), compare(c, key, ob, SIZE((int)d_out));
    free(ow), free(ob);
}

// One epoch of DataLoader(range(n), batch_size=bs, shuffle=True,
// drop_last=drop, num_workers=0, generator=None), torch 1.13, run by the
// library's DataLoader (lib/text/dataset.h) over a dataset whose item i is
// i: GPTDatasetV1 over the ids 0..n with max_length 1 and stride 1. Its
// draws (torch/utils/data/dataloader.py, sampler.py): iter() draws
// _base_seed (random_ int64, 2 words); the first next() draws the sampler's
// seed (2 words), seeds a private generator with it and takes randperm(n)
// from that (n - 1 words, none from g). `between` (4,) = torch.rand(2) made
// between iter() and the first next(), and right after it, if not NULL.
// out (n,) = every index of every batch; returns how many (drop_last cuts
// the short last batch).
static long loader_epoch(TorchGenerator *g, long n, long bs, int drop, int64_t *base_seed, int64_t *out,
                         float *between) {
    RandomSource rs = torch_generator_source(g);
    int64_t *ids = malloc((size_t)(n + 1) * sizeof *ids);
    if (!ids) die(EXIT_FAILURE, "out of memory");
    for (long i = 0; i <= n; i++) ids[i] = i;
    GPTDatasetV1 ds = gpt_dataset_v1(ids, n + 1, 1, 1);
    DataLoader dl = data_loader(&ds, (int)bs, true, drop);
    data_loader_iter(&dl, g);
    *base_seed = dl.base_seed;
    if (between) rand_fill(between, 2, &rs);
    long got = 0;
    LongTensor x, y;
    for (int first = 1; data_loader_next(&dl, g, &x, &y); first = 0) {
        if (first && between) rand_fill(between + 2, 2, &rs);
        for (long i = 0; i < long_numel(x); i++) out[got++] = x.data[i];
    }
    if (got == 0 && between) rand_fill(between + 2, 2, &rs);  // no batch: the sampler drew all the same
    free(ids);
    return got;
}

// One epoch of the same DataLoader given generator=lg (torch 1.13): iter()
// draws _base_seed from lg (2 words); the sampler takes randperm(n) from lg
// itself (no seed of its own); once the permutation is used up, asking for
// one more index runs randperm(n, generator=lg)[:0]: n - 1 more words from lg
// (a full iteration always asks: the short last batch, or StopIteration).
static long loader_gen_epoch(TorchGenerator *lg, long n, long bs, int drop, int64_t *base_seed, int64_t *out) {
    *base_seed = torch_random_int64(lg);
    torch_randperm(out, n, lg);
    for (long i = 0; i < n - 1; i++) (void)torch_random(lg);
    return drop ? n - n % bs : n;
}

// Runs op number k (tokens) on c's generator and compares what it made.
static void run_op(Case *c, int k, char **tok, int ntok) {
    char key[64];
    snprintf(key, sizeof key, "o%d", k);
    int digest = 0;
    if (strcmp(tok[0], "sha256") == 0) digest = 1, tok++, ntok--;
    if (ntok < 1) die(EXIT_BAD_INPUT, "%s: empty op %d", c->name, k);
    const char *op = tok[0];
    RandomSource rs = torch_generator_source(&c->g);
    if (strcmp(op, "seed") == 0 && ntok == 2) {
        seed(c, tok[1]);
    } else if ((strcmp(op, "randn") == 0 && ntok == 2) || (strcmp(op, "randn_shape") == 0 && ntok >= 2 &&
                                                          ntok <= 1 + MAX_DIMS)) {
        Size s = {ntok - 1, {0}};
        for (int d = 0; d < s.ndim; d++) s.dims[d] = (int)to_long(c, tok[1 + d]);
        Out o = {alloc_floats(size_numel(s)), s};
        normal_fill_with_path(o.v, size_numel(s), 0.0, 1.0, &c->g, c->path);
        emit(c, key, o, digest);
    } else if (strcmp(op, "normal") == 0 && ntok == 4) {
        const long n = to_long(c, tok[1]);
        Out o = {alloc_floats(n), SIZE((int)n)};
        normal_fill_with_path(o.v, n, to_double(c, tok[2]), to_double(c, tok[3]), &c->g, c->path);
        emit(c, key, o, digest);
    } else if (strcmp(op, "rand") == 0 && ntok == 2) {
        const long n = to_long(c, tok[1]);
        Out o = {alloc_floats(n), SIZE((int)n)};
        rand_fill(o.v, n, &rs);
        emit(c, key, o, digest);
    } else if (strcmp(op, "random_int64") == 0 && ntok == 1) {
        compare_int(c, key, torch_random_int64(&c->g));
    } else if ((strcmp(op, "randperm") == 0 && ntok == 2) || (strcmp(op, "randperm_gen") == 0 && ntok == 3)) {
        const long n = to_long(c, tok[1]);
        int64_t *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
        if (!perm) die(EXIT_FAILURE, "out of memory");
        if (ntok == 3) {
            TorchGenerator fresh;  // torch.Generator().manual_seed(S)
            uint64_t s;
            if (!torch_parse_seed(tok[2], &s)) die(EXIT_BAD_INPUT, "%s: bad seed '%s'", c->name, tok[2]);
            torch_manual_seed(&fresh, s);
            torch_randperm(perm, n, &fresh);
        } else {
            torch_randperm(perm, n, &c->g);
        }
        compare_indices(c, key, perm, n);
        free(perm);
    } else if (strcmp(op, "embedding") == 0 && ntok == 4) {
        const long num = to_long(c, tok[1]), dim = to_long(c, tok[2]);
        Out o = {alloc_floats(num * dim), SIZE((int)num, (int)dim)};
        embedding_fill(o.v, num, dim, to_long(c, tok[3]), &c->g);
        emit(c, key, o, digest);
    } else if ((strcmp(op, "xavier_uniform") == 0 || strcmp(op, "xavier_normal") == 0) && ntok == 4) {
        const long fan_out = to_long(c, tok[1]), fan_in = to_long(c, tok[2]);
        const double gain = to_double(c, tok[3]);
        Out o = {alloc_floats(fan_out * fan_in), SIZE((int)fan_out, (int)fan_in)};
        if (op[7] == 'u') xavier_uniform_fill(o.v, fan_out, fan_in, gain, &rs);
        else xavier_normal_fill(o.v, fan_out * fan_in, fan_in, fan_out, gain, &c->g);
        emit(c, key, o, digest);
    } else if (strcmp(op, "mha") == 0 && ntok == 5 && !digest) {
        run_mha(c, k, to_long(c, tok[1]), (int)to_long(c, tok[3]), (int)to_long(c, tok[4]));
    } else if (strcmp(op, "mha_einsum") == 0 && ntok == 4 && !digest) {
        run_mha_einsum(c, k, to_long(c, tok[1]), to_long(c, tok[2]), (int)to_long(c, tok[3]));
    } else if (strcmp(op, "loader_gen") == 0 && ntok == 6) {
        const long n = to_long(c, tok[1]), bs = to_long(c, tok[2]), epochs = to_long(c, tok[4]);
        const int drop = (int)to_long(c, tok[3]);
        TorchGenerator lg;
        uint64_t s;
        if (!torch_parse_seed(tok[5], &s)) die(EXIT_BAD_INPUT, "%s: bad seed '%s'", c->name, tok[5]);
        torch_manual_seed(&lg, s);
        int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
        if (!idx) die(EXIT_FAILURE, "out of memory");
        char sub[96];
        for (long e = 0; e < epochs; e++) {
            int64_t base;
            const long got = loader_gen_epoch(&lg, n, bs, drop, &base, idx);
            snprintf(sub, sizeof sub, "%s.e%ld.base_seed", key, e), compare_int(c, sub, base);
            snprintf(sub, sizeof sub, "%s.e%ld", key, e), compare_indices(c, sub, idx, got);
        }
        float after[2];
        RandomSource lrs = torch_generator_source(&lg);
        rand_fill(after, 2, &lrs);
        snprintf(sub, sizeof sub, "%s.gen_rand", key), compare(c, sub, after, SIZE(2));
        free(idx);
    } else if ((strcmp(op, "loader") == 0 && ntok == 5) || (strcmp(op, "loader_mixed") == 0 && ntok == 4)) {
        const int mixed = ntok == 4;
        const long n = to_long(c, tok[1]), bs = to_long(c, tok[2]);
        const int drop = (int)to_long(c, tok[3]);
        const long epochs = mixed ? 1 : to_long(c, tok[4]);
        int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
        if (!idx) die(EXIT_FAILURE, "out of memory");
        for (long e = 0; e < epochs; e++) {
            int64_t base;
            float between[4];
            const long got = loader_epoch(&c->g, n, bs, drop, &base, idx, mixed ? between : NULL);
            char sub[96];
            if (mixed) {
                snprintf(sub, sizeof sub, "%s.base_seed", key), compare_int(c, sub, base);
                snprintf(sub, sizeof sub, "%s.r1", key), compare(c, sub, between, SIZE(2));
                snprintf(sub, sizeof sub, "%s.r2", key), compare(c, sub, between + 2, SIZE(2));
                compare_indices(c, key, idx, got);
            } else {
                snprintf(sub, sizeof sub, "%s.e%ld.base_seed", key, e), compare_int(c, sub, base);
                snprintf(sub, sizeof sub, "%s.e%ld", key, e), compare_indices(c, sub, idx, got);
            }
        }
        free(idx);
    } else {
        die(EXIT_BAD_INPUT, "%s: op %d: unknown op or wrong arguments '%s'", c->name, k, op);
    }
}

static void run_case(Fixture *all, const char *name, NormalPath path, const char *path_name) {
    char err[FIXTURE_ERR_LEN], seed_text[64];
    static char ops[1 << 16];
    Case c = {0};
    c.name = name;
    c.path = path;
    c.fx = fixture_group(all, name, err);
    if (!c.fx || !fixture_attr_string(c.fx, "seed", seed_text, sizeof seed_text, err) ||
        !fixture_attr_string(c.fx, "ops", ops, sizeof ops, err))
        die(EXIT_BAD_INPUT, "%s", err);
    seed(&c, seed_text);
    int k = 0;
    for (char *save = NULL, *line = strtok_r(ops, "\n", &save); line; line = strtok_r(NULL, "\n", &save), k++) {
        char *tok[MAX_TOKENS], *ts = NULL;
        int ntok = 0;
        for (char *t = strtok_r(line, " ", &ts); t && ntok < MAX_TOKENS; t = strtok_r(NULL, " ", &ts)) tok[ntok++] = t;
        if (ntok == 0) die(EXIT_BAD_INPUT, "%s: empty op %d", name, k);
        run_op(&c, k, tok, ntok);
    }
    fixture_close(c.fx);
    if (c.bad) {
        failures++;
        printf("FAIL %s [%s]: %d of %d outputs differ\n", name, path_name, c.bad, c.outputs);
    } else {
        printf("ok %s [%s]: %d outputs identical\n", name, path_name, c.outputs);
    }
    fflush(stdout);
}

// torch_random_words on each path against as many torch_random calls (the
// generator test_torch_generator checks against published answers): the
// words and the state left behind, from offsets and for lengths that start,
// end and cross twists.
static void test_words(void) {
    static const long ns[] = {0, 1, 7, 8, 9, 227, 228, 396, 397, 623, 624, 625, 1248, 1249, 5000};
    static const long skips[] = {0, 1, 5, 226, 227, 623, 624, 700};
    static const struct {
        TorchWordsPath path;
        const char *name;
    } paths[] = {{TORCH_WORDS_PORTABLE, "portable"}, {TORCH_WORDS_AVX2, "avx2"}, {TORCH_WORDS_AUTO, "auto"}};
    uint32_t got[5000];
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (!torch_words_path_available(paths[p].path)) {
            printf("skip words path %s: this CPU does not run it\n", paths[p].name);
            continue;
        }
        int bad = 0, runs = 0;
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (size_t k = 0; k < sizeof skips / sizeof skips[0]; k++) {
                TorchGenerator want, have;
                torch_manual_seed(&want, 123 + k);
                for (long j = 0; j < skips[k]; j++) (void)torch_random(&want);
                have = want;
                torch_random_words_with_path(&have, got, ns[i], paths[p].path);
                int ok = 1;
                for (long j = 0; j < ns[i]; j++) ok &= got[j] == torch_random(&want);
                ok &= have.next == want.next && memcmp(have.state, want.state, sizeof want.state) == 0;
                if (!ok) printf("  words [%s]: n=%ld after %ld draws differ\n", paths[p].name, ns[i], skips[k]);
                bad += !ok, runs++;
            }
        if (bad) failures++;
        printf("%s torch_random_words [%s]: %d of %d runs identical to torch_random\n", bad ? "FAIL" : "ok",
               paths[p].name, runs - bad, runs);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_random fixtures/random_cases.h5\n");
        return 2;
    }
    test_words();
    char err[FIXTURE_ERR_LEN];
    static char names[1 << 16];
    Fixture *all = fixture_open_all(argv[1], err);
    if (!all || !fixture_attr_string(all, "cases", names, sizeof names, err)) die(EXIT_BAD_INPUT, "%s", err);
    const struct {
        NormalPath path;
        const char *name;
    } paths[] = {{NORMAL_PORTABLE, "portable"}, {NORMAL_AVX2, "avx2"}};
    int ran = 0;
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (!normal_path_available(paths[p].path)) {
            printf("skip path %s: this CPU does not run it\n", paths[p].name);
            continue;
        }
        char list[sizeof names];
        memcpy(list, names, sizeof list);
        for (char *save = NULL, *name = strtok_r(list, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
            run_case(all, name, paths[p].path, paths[p].name);
            ran++;
        }
    }
    fixture_close(all);
    if (ran == 0) die(EXIT_BAD_INPUT, "%s: no cases", argv[1]);
    printf("%s: %d case runs, %d failed\n", failures ? "FAIL" : "ok", ran, failures);
    return failures ? 1 : 0;
}
