// fixture_check: runs a chapter on a fixture with --dump and compares every
// tensor the chapter computed with the one PyTorch computed, bit for bit.
//
//   fixture_check [--from-seed] [--threads N] [--full] [--arg ARG]... CHAPTER FIXTURE [GROUP]
//   fixture_check --sweep CHAPTER_DIR [--from-seed] [--threads N] [--full] SWEEP_FILE
//
// --arg ARG passes ARG on to the chapter (at most 8: the weights suite's
// --weights FILE.pth). The chapter runs with --threads N (1 if not given); with --full (or
// LITATTN_TESTS=full) once with --threads 1 and once with --threads 2, each
// run's dump compared in full: the bits must not depend on the threads.
//
// Compared: every dataset of the fixture with role "output" and, with
// --from-seed (the chapter then draws everything itself, seeded as the
// fixture records), every "weight" and "random" too. A tensor too large to
// commit is in the fixture as its SHA-256 and its first and last rows
// (fixtures/README.md): the dump's tensor must have that digest, and its
// first and last rows are compared value by value.
//
// "The same" means the same float32 bits: +0 and -0 differ (torch prints
// "0." and "-0."), and only NaN matches NaN (the payload aside). One line per
// tensor with the worst distance in ulps where values differ; it fails on
// any difference, a missing tensor or another shape.
//
// The sweep runs every configuration with --full (or LITATTN_TESTS=full in
// the environment, which `meson test --setup full` sets). Without it, a
// selection, the same on every run: for each chapter, in name order and
// greedily, the fewest configurations that together hold every setting
// their names spell (tools/export/export_fixtures.py names each configuration by
// its settings: p0.1, train0, bias1, bstack, ex2dim-1, zerorows, nan, ...)
// but the seed and the sizes (T, ctx, din, dout, h, b<n>, sa<n>, and the
// <d_out> of Exercise 3.2's ex<d_out>dim<dim>): every dropout rate, eval and
// training mode, bias or none, stacked inputs, each Exercise 3.2 softmax
// dimension and every special input at least once.
#include <hdf5.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "pages.h"
#include "ulp.h"

typedef struct {
    int from_seed;
    const char *extra[8];  // --arg ARG: more arguments for the chapter (the weights suite's --weights FILE)
    int n_extra;
    int threads[2], n_threads;  // the chapter runs once per count (--threads; with --full, 1 and 2)
} Options;

typedef struct {
    const Options *opt;
    Fixture *want;
    hid_t got;            // the dump, read with HDF5 directly: our own file, and possibly large
    const char *label;
    int failures, compared;
    unsigned worst;
} Compare;

// A dataset of the dump, whole; NULL (and *n = -1) if it is missing.
static float *read_dump(hid_t file, const char *name, int *ndim, hsize_t dims[TENSOR_MAX_DIMS], long *n) {
    *n = -1;
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return NULL;
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    hid_t space = H5Dget_space(ds);
    *ndim = H5Sget_simple_extent_ndims(space);
    if (*ndim < 0 || *ndim > TENSOR_MAX_DIMS) *ndim = -1;
    else H5Sget_simple_extent_dims(space, dims, NULL);
    long count = (long)H5Sget_simple_extent_npoints(space);
    float *v = pages_alloc((size_t)(count > 0 ? count : 1) * sizeof *v, "a dataset");  // a GPT-2 tensor: huge pages
    if (v && *ndim >= 0 && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0) *n = count;
    H5Sclose(space);
    H5Dclose(ds);
    return v;
}

// Compares n values; prints the tensor's line. Returns 1 if all bits agree.
static int compare_values(Compare *c, const char *name, const float *got, const float *want, long n,
                          const char *what) {
    long differ = 0, at = -1;
    unsigned worst = 0;
    int zero_sign = 0;
    for (long i = 0; i < n; i++) {
        if (same_bits(got[i], want[i])) continue;
        differ++;
        uint32_t d = ulp_distance(got[i], want[i]);
        if (d == 0) zero_sign = 1;  // +0 against -0
        if (at < 0 || d > worst) worst = d, at = i;
    }
    if (!differ) {
        printf("ok   %s %-44s identical bits (%ld values%s)\n", c->label, name, n, what);
        return 1;
    }
    printf("FAIL %s %-44s %ld of %ld values differ%s, worst %u ulp at flat index %ld (C %a, PyTorch %a)%s\n",
           c->label, name, differ, n, what, worst, at, (double)got[at], (double)want[at],
           zero_sign ? "; a sign of zero differs" : "");
    if (worst > c->worst) c->worst = worst;
    return 0;
}

// A whole tensor of the fixture against the dump.
static void compare_whole(Compare *c, const char *name) {
    char err[FIXTURE_ERR_LEN];
    Tensor want;
    Size any = {0, {SIZE_ANY, SIZE_ANY, SIZE_ANY, SIZE_ANY}};
    for (any.ndim = 0; any.ndim <= TENSOR_MAX_DIMS; any.ndim++)
        if (fixture_read(c->want, name, any, &want, err)) break;
    c->compared++;
    if (any.ndim > TENSOR_MAX_DIMS) {
        printf("FAIL %s %s: cannot read the expected tensor: %s\n", c->label, name, err);
        c->failures++;
        return;
    }
    int ndim;
    hsize_t dims[TENSOR_MAX_DIMS];
    long n;
    float *got = read_dump(c->got, name, &ndim, dims, &n);
    int shape_ok = n == numel(want) && ndim == want.ndim;
    for (int i = 0; shape_ok && i < ndim; i++) shape_ok = dims[i] == (hsize_t)want.shape[i];
    if (!shape_ok) {
        char ws[96];
        size_format(shape(want), ws, sizeof ws);
        printf("FAIL %s %s: expected a dumped tensor of shape %s, found %s\n", c->label, name, ws,
               n < 0 ? "none" : "another shape");
        c->failures++;
    } else if (!compare_values(c, name, got, want.data, n, "")) {
        c->failures++;
    }
    free(got);
}

static void hex_sha256(const float *v, long n, char out[65]) {
    unsigned char md[32];
    unsigned len = 0;
    EVP_Digest(v, (size_t)n * sizeof(float), md, &len, EVP_sha256(), NULL);  // little-endian floats, as stored
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

// A tensor the fixture holds as <name>.sha256, <name>.shape and its first
// and last rows.
static void compare_digest(Compare *c, const char *name) {
    char err[FIXTURE_ERR_LEN], key[320], want_sha[80], want_shape[96], got_shape[96], got_sha[65];
    c->compared++;
    snprintf(key, sizeof key, "%s.sha256", name);
    int ok = fixture_attr_string(c->want, key, want_sha, sizeof want_sha, err);
    snprintf(key, sizeof key, "%s.shape", name);
    ok = ok && fixture_attr_string(c->want, key, want_shape, sizeof want_shape, err);
    if (!ok) {
        printf("FAIL %s %s: %s\n", c->label, name, err);
        c->failures++;
        return;
    }
    int ndim;
    hsize_t dims[TENSOR_MAX_DIMS];
    long n;
    float *got = read_dump(c->got, name, &ndim, dims, &n);
    if (n < 0) {
        printf("FAIL %s %s: expected a dumped tensor of shape %s, found none\n", c->label, name, want_shape);
        c->failures++;
        free(got);
        return;
    }
    long long d[TENSOR_MAX_DIMS];
    for (int i = 0; i < ndim; i++) d[i] = (long long)dims[i];
    shape_format(ndim, d, got_shape, sizeof got_shape);
    hex_sha256(got, n, got_sha);
    int same = !strcmp(got_shape, want_shape) && !strcmp(got_sha, want_sha);
    // The rows say where a difference is; the digest says whether there is one.
    long row = ndim ? (long)dims[ndim - 1] : 1, rows = row ? n / row : 0;
    const char *which[2] = {"first_row", "last_row"};
    for (int k = 0; k < 2 && rows > 0 && !strcmp(got_shape, want_shape); k++) {
        Tensor want;
        snprintf(key, sizeof key, "%s.%s", name, which[k]);
        if (!fixture_read(c->want, key, SIZE((int)row), &want, err)) {
            printf("FAIL %s %s\n", c->label, err);
            same = 0;
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, ", the %s row", k ? "last" : "first");
        if (!compare_values(c, name, got + (k ? rows - 1 : 0) * row, want.data, row, what)) same = 0;
    }
    if (same) printf("ok   %s %-44s identical bits (%ld values, SHA-256 %.16s...)\n", c->label, name, n, got_sha);
    else {
        printf("FAIL %s %-44s expected shape %s and SHA-256 %.16s..., found %s and %.16s...\n", c->label, name,
               want_shape, want_sha, got_shape, got_sha);
        c->failures++;
    }
    free(got);
}

// An int64 tensor (token ids, a batch of them): every id equal.
static void compare_long(Compare *c, const char *name) {
    char err[FIXTURE_ERR_LEN];
    LongTensor want;
    c->compared++;
    if (!fixture_read_long(c->want, name, &want, err)) {
        printf("FAIL %s %s: cannot read the expected ids: %s\n", c->label, name, err);
        c->failures++;
        return;
    }
    long n = long_numel(want), differ = 0, at = -1;
    int64_t *got = NULL;
    int shape_ok = 0, type_ok = 1;
    if (H5Lexists(c->got, name, H5P_DEFAULT) > 0) {
        hid_t ds = H5Dopen2(c->got, name, H5P_DEFAULT), space = H5Dget_space(ds), type = H5Dget_type(ds);
        hsize_t dims[TENSOR_MAX_DIMS];
        int ndim = H5Sget_simple_extent_ndims(space);
        // the fixture's type (fixture_is_long: a signed 64-bit integer), sign
        // included: a uint64 array holds the same values, but torch.from_numpy
        // refuses it
        type_ok = H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == sizeof(int64_t) &&
                  H5Tget_sign(type) == H5T_SGN_2;
        shape_ok = ndim == want.ndim && type_ok;
        if (shape_ok && ndim > 0) H5Sget_simple_extent_dims(space, dims, NULL);
        for (int i = 0; shape_ok && i < ndim; i++) shape_ok = dims[i] == (hsize_t)want.shape[i];
        got = malloc((size_t)(n > 0 ? n : 1) * sizeof *got);
        shape_ok = shape_ok && got && H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0;
        H5Tclose(type), H5Sclose(space), H5Dclose(ds);
    }
    char ws[96];
    size_format(long_shape(want), ws, sizeof ws);
    if (!type_ok) {
        printf("FAIL %s %s: expected dumped ids of the fixture's type, a signed 64-bit integer, found another type\n",
               c->label, name);
        c->failures++;
    } else if (!shape_ok) {
        printf("FAIL %s %s: expected dumped int64 ids of shape %s, found none or another shape\n", c->label, name,
               ws);
        c->failures++;
    } else {
        for (long i = 0; i < n; i++)
            if (got[i] != want.data[i]) differ++, at = at < 0 ? i : at;
        if (!differ) {
            printf("ok   %s %-44s identical ids (%ld int64 values)\n", c->label, name, n);
        } else {
            printf("FAIL %s %-44s %ld of %ld ids differ, the first at flat index %ld (C %lld, reference %lld)\n",
                   c->label, name, differ, n, at, (long long)got[at], (long long)want.data[at]);
            c->failures++;
        }
    }
    free(got);
}

static void compare_one(const char *name, const char *role, void *ctx) {
    Compare *c = ctx;
    if (fixture_is_long(c->want, name)) {
        if (!strcmp(role, "output")) compare_long(c, name);
        return;
    }
    int drawn = !strcmp(role, "weight") || !strcmp(role, "random");
    if (!strcmp(role, "output") || (drawn && c->opt->from_seed)) compare_whole(c, name);
}

// The digests: attributes "<name>.sha256" of tensors too large to commit.
static void compare_digests(Compare *c) {
    char err[FIXTURE_ERR_LEN];
    int n = fixture_attr_count(c->want);
    for (int i = 0; i < n; i++) {
        const char *attr = fixture_attr_name(c->want, i);
        size_t len = strlen(attr);
        if (len < 8 || strcmp(attr + len - 7, ".sha256")) continue;
        char name[256], key[300], role[32];
        snprintf(name, sizeof name, "%.*s", (int)(len - 7), attr);
        snprintf(key, sizeof key, "%s.role", name);
        if (!fixture_attr_string(c->want, key, role, sizeof role, err)) {
            printf("FAIL %s %s\n", c->label, err);
            c->failures++;
            continue;
        }
        // In fixture mode the chapter draws these itself too (it cannot read them).
        if (!strcmp(role, "output") || !strcmp(role, "weight") || !strcmp(role, "random")) compare_digest(c, name);
    }
}

// Runs one chapter on one fixture (or one group of it) and compares. `want`:
// that fixture or group already open (the sweep's, from one snapshot), or
// NULL to open it here.
static int check_at(const Options *opt, int threads, const char *chapter, const char *path, const char *group,
                    Fixture *want, unsigned *worst) {
    char label[300], dump[512], threads_arg[16];
    snprintf(label, sizeof label, "%s", group ? group : strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    if (threads != 1) snprintf(label + strlen(label), sizeof label - strlen(label), " --threads %d", threads);
    snprintf(threads_arg, sizeof threads_arg, "%d", threads);
    temp_path(dump, sizeof dump, "dump");
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)chapter;
    argv[n++] = "--fixture", argv[n++] = (char *)path;
    if (group) argv[n++] = "--group", argv[n++] = (char *)group;
    argv[n++] = "--dump", argv[n++] = dump;
    argv[n++] = "--threads", argv[n++] = threads_arg;
    for (int i = 0; i < opt->n_extra; i++) argv[n++] = (char *)opt->extra[i];
    SeedArgs seeds;
    // A sweep group of a chapter that draws nothing (§3.3) has nothing to
    // seed: its run is the fixture's, and bitexact checks it again.
    if (opt->from_seed && (!want || fixture_has_seed(want))) {
        if (want ? !fixture_seed_args_of(want, &seeds) : !fixture_seed_args(path, group, &seeds)) {
            unlink(dump);
            return 1;
        }
        for (int i = 0; i < seeds.n && n < 60; i++) argv[n++] = seeds.argv[i];
    }
    argv[n] = NULL;
    RunResult run;
    if (!run_program(argv, RUN_LIMIT_SECONDS, &run)) {
        printf("FAIL %s: cannot run %s\n", label, chapter);
        unlink(dump);
        return 1;
    }
    int failures = 0;
    if (run.exit_code != 0) {
        printf("FAIL %s: %s exited %d: %s", label, chapter, run.exit_code, run.err);
        failures = 1;
    } else {
        char err[FIXTURE_ERR_LEN];
        Compare c = {opt, want ? want : fixture_open(path, group, err), -1, label, 0, 0, 0};
        if (c.want) c.got = H5Fopen(dump, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (!c.want || c.got < 0) {
            printf("FAIL %s: %s\n", label, c.want ? "cannot open the dump" : err);
            failures = 1;
        } else if (!fixture_each_dataset(c.want, compare_one, &c, err)) {
            printf("FAIL %s: %s\n", label, err);
            failures = 1;
        } else {
            compare_digests(&c);
            failures = c.failures + (c.compared == 0);
            if (c.compared == 0) printf("FAIL %s: nothing to compare (no dataset with role \"output\")\n", label);
            if (c.worst > *worst) *worst = c.worst;
        }
        if (c.got >= 0) H5Fclose(c.got);
        if (!want) fixture_close(c.want);
    }
    run_result_free(&run);
    unlink(dump);
    tensor_release_all();
    return failures;
}

// check_at for each thread count of the options: the bits must not depend on it.
static int check(const Options *opt, const char *chapter, const char *path, const char *group, Fixture *want,
                 unsigned *worst) {
    int failures = 0;
    for (int i = 0; i < opt->n_threads; i++)
        failures += check_at(opt, opt->threads[i], chapter, path, group, want, worst);
    return failures;
}

// The sweep: one group per configuration, each naming its chapter.
#define MAX_GROUPS 1024
#define MAX_TOKENS 24

typedef struct {
    char *name, chapter[128];
    char *words;              // the name, cut into the tokens below
    char *token[MAX_TOKENS];  // the settings its name spells (see the top of this file)
    int n_tokens, chosen;
} Group;

typedef struct {
    const char *chapter_dir, *path;
    const Options *opt;
    Fixture *all;  // every group, from one snapshot of the file
    int failures, groups, full;
    unsigned worst;
    Group list[MAX_GROUPS];
    int n_listed;
} Sweep;

// A token of a configuration's name that is a seed or a size: letters, then a number.
static int seed_or_size(const char *token) {
    static const char *const names[] = {"seed", "T", "ctx", "din", "dout", "h", "b", "sa"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(token, names[i], n) != 0) continue;
        const char *v = token + n + (token[n] == '-');
        if (*v >= '0' && *v <= '9' && strspn(v, "0123456789") == strlen(v)) return 1;
    }
    return 0;
}

static void list_group(const char *name, const char *role, void *ctx) {
    (void)role;
    Sweep *sw = ctx;
    if (sw->n_listed == MAX_GROUPS) return;
    Group *g = &sw->list[sw->n_listed++];
    memset(g, 0, sizeof *g);
    g->name = strdup(name);
    char err[FIXTURE_ERR_LEN], *save = NULL;
    Fixture *grp = fixture_group(sw->all, name, err);
    // A group without its chapter is run (and fails there), whatever the selection.
    if (!grp || !fixture_attr_string(grp, "chapter", g->chapter, sizeof g->chapter, err)) g->chosen = 1;
    fixture_close(grp);
    char *copy = g->words = strdup(name);
    strtok_r(copy, "_", &save);  // the class (ca, mha, v2, ...): the chapter's
    for (char *t = strtok_r(NULL, "_", &save); t && g->n_tokens < MAX_TOKENS; t = strtok_r(NULL, "_", &save)) {
        // ex<d_out>dim<dim>: Exercise 3.2's softmax dimension is a setting, its d_out a size.
        if (!strncmp(t, "ex", 2) && strstr(t, "dim")) t = strstr(t, "dim");
        if (!seed_or_size(t)) g->token[g->n_tokens++] = t;
    }
}

// How many of g's settings no chosen configuration of its chapter holds yet.
static int new_settings(const Sweep *sw, const Group *g) {
    int n = 0;
    for (int t = 0; t < g->n_tokens; t++) {
        int held = 0;
        for (int i = 0; i < sw->n_listed && !held; i++) {
            const Group *o = &sw->list[i];
            if (!o->chosen || strcmp(o->chapter, g->chapter) != 0) continue;
            for (int u = 0; u < o->n_tokens && !held; u++) held = !strcmp(o->token[u], g->token[t]);
        }
        n += !held;
    }
    return n;
}

// The default selection (see the top of this file).
static void choose_groups(Sweep *sw) {
    for (int i = 0; i < sw->n_listed; i++) {
        Group *first = &sw->list[i];
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(sw->list[j].chapter, first->chapter);
        if (seen || !*first->chapter) continue;
        for (int taken = 0;; taken++) {  // this chapter's configurations, greedily
            Group *best = NULL;
            int best_new = 0;
            for (int j = i; j < sw->n_listed; j++) {
                Group *g = &sw->list[j];
                if (g->chosen || strcmp(g->chapter, first->chapter) != 0) continue;
                int n = new_settings(sw, g);
                if (!best || n > best_new) best = g, best_new = n;
            }
            if (!best || (taken && best_new == 0)) break;
            best->chosen = 1;
        }
    }
}

static int group_chosen(const Sweep *sw, const char *name) {
    if (sw->full) return 1;
    for (int i = 0; i < sw->n_listed; i++)
        if (!strcmp(sw->list[i].name, name)) return sw->list[i].chosen;
    return 1;
}

static void check_group(const char *name, const char *role, void *ctx) {
    (void)role;
    Sweep *sw = ctx;
    if (!group_chosen(sw, name)) return;
    char err[FIXTURE_ERR_LEN], chapter_name[128], chapter[1024];
    Fixture *grp = fixture_group(sw->all, name, err);
    int ok = grp && fixture_attr_string(grp, "chapter", chapter_name, sizeof chapter_name, err);
    sw->groups++;
    if (!ok) {
        printf("FAIL %s\n", err);
        fixture_close(grp);
        sw->failures++;
        return;
    }
    snprintf(chapter, sizeof chapter, "%s/%s", sw->chapter_dir, chapter_name);
    sw->failures += check(sw->opt, chapter, sw->path, name, grp, &sw->worst) != 0;
    fixture_close(grp);
}

static void usage(void) {
    fprintf(stderr, "usage: fixture_check [--from-seed] [--threads N] [--full] [--arg ARG]... CHAPTER FIXTURE [GROUP]\n"
                    "       fixture_check --sweep CHAPTER_DIR [--from-seed] [--threads N] [--full] SWEEP_FILE\n");
    exit(2);
}

int main(int argc, char **argv) {
    Options opt = {0};
    int threads = 1;
    const char *sweep_dir = NULL;
    // meson test --setup full sets LITATTN_TESTS=full: every configuration.
    int full = harness_full_selection("fixture_check", argc, argv);
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--from-seed")) opt.from_seed = 1;
        else if (!strcmp(argv[i], "--full")) full = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end || t < 1 || t > 64) usage();
            threads = (int)t;
        }
        else if (!strcmp(argv[i], "--sweep") && i + 1 < argc) sweep_dir = argv[++i];
        else if (!strcmp(argv[i], "--arg") && i + 1 < argc && opt.n_extra < 8) opt.extra[opt.n_extra++] = argv[++i];
        else usage();
    }
    // The default run at --threads N (1 if not given); the full run at 1 and 2 threads.
    opt.threads[opt.n_threads++] = full ? 1 : threads;
    if (full) opt.threads[opt.n_threads++] = 2;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    unsigned worst = 0;
    int failures = 0, runs = 0;
    if (sweep_dir) {
        if (argc - i != 1) usage();
        char err[FIXTURE_ERR_LEN];
        Fixture *fx = fixture_open_all(argv[i], err);
        static Sweep sw;
        sw.chapter_dir = sweep_dir, sw.path = argv[i], sw.opt = &opt, sw.all = fx, sw.full = full;
        if (!fx || !fixture_each_group(fx, list_group, &sw, err)) {
            printf("FAIL %s\n", err);
            return 1;
        }
        if (sw.n_listed == MAX_GROUPS) {
            printf("FAIL %s: more than %d configurations\n", argv[i], MAX_GROUPS - 1);
            return 1;
        }
        if (!full) choose_groups(&sw);
        if (!fixture_each_group(fx, check_group, &sw, err)) {
            printf("FAIL %s\n", err);
            return 1;
        }
        fixture_close(fx);
        for (int g = 0; g < sw.n_listed; g++) free(sw.list[g].name), free(sw.list[g].words);
        failures = sw.failures + (sw.groups == 0);
        if (sw.groups == 0) printf("FAIL %s: no configurations\n", argv[i]);
        runs = sw.groups;
        worst = sw.worst;
        if (!full)
            printf("the default selection: %d of the %d configurations, every setting of each chapter's "
                   "but the seeds and sizes; LITATTN_TESTS=full (meson test --setup full) runs them all\n",
                   sw.groups, sw.n_listed);
    } else {
        if (argc - i < 2 || argc - i > 3) usage();
        failures = check(&opt, argv[i], argv[i + 1], argc - i == 3 ? argv[i + 2] : NULL, NULL, &worst);
        runs = 1;
    }
    printf("%d run%s, %d failed; %s\n", runs, runs == 1 ? "" : "s", failures,
           failures ? "tensors above differ from PyTorch's" : "every tensor has PyTorch's bits");
    return failures ? 1 : 0;
}
