// fuzz_fixture.c: libFuzzer over the HDF5 fixture reader (lib/io/fixture.c).
//
// The input bytes are a candidate fixture file. They are written to one
// scratch file per process (HDF5 opens files by name, not from memory) and
// read as the chapters read a fixture: the 'chapter' and 'd_out' attributes,
// the inputs (T, d_in), the weights, the scaling demo's 'tensor', then every
// dataset and every group (each group opened as --group opens it).
//
// Besides the sanitizers, every call is checked against fixture.h's
// contract: a failure fills err with one non-empty line; a success gives a
// tensor of the wanted shape (finite values where asked); and no HDF5 object
// is open in this process afterwards: HDF5 reads the file only in the
// reader's child process (lib/io/hdf5_snapshot.h), where its crashes and hangs
// become one-line errors. A crash here is therefore always ours.
#include <hdf5.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "tensor.h"

// Enough to reach everything a real fixture holds, few enough that a file
// listing thousands of links costs one bounded pass.
#define MAX_NAMES 16
#define NAME_LEN 64

static char scratch[4096];

// The reader child's limits, lowered: libFuzzer counts an input that takes
// 5 s as a hang, and the chapters' own limits (10 s of CPU, 60 s of wall
// time) are generous on purpose. What the fuzzer checks is that a limit hit
// is a one-line error like any other.
static const FixtureOptions limits = {.cpu_seconds = 1, .wall_seconds = 2};

static void remove_scratch(void) {
    if (scratch[0]) unlink(scratch);
}

// Crashes on purpose (libFuzzer then saves the input): a broken invariant.
static void broken(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_fixture: invariant broken: %s: %s\n", what, detail ? detail : "");
    abort();
}

// fixture.h: "fills err with one line" on every failure.
static void check_err(const char *call, const char *err) {
    size_t n = strnlen(err, FIXTURE_ERR_LEN);
    if (n == 0) broken(call, "failed with an empty error message");
    if (n == FIXTURE_ERR_LEN) broken(call, "error message not NUL-terminated");
    if (strchr(err, '\n')) broken(call, err);
}

static void check_tensor(const char *name, Size want, Tensor t, int finite) {
    Size have = shape(t);
    if (!size_matches(want, have)) broken(name, "tensor shape differs from the wanted one");
    if (!t.data) broken(name, "tensor without data");
    int n = numel(t);
    if (n <= 0) broken(name, "empty tensor returned as success");
    for (int i = 0; i < n; i++) {
        volatile float v = t.data[i];  // touch every value: ASan checks the allocation
        if (finite && !isfinite(v)) broken(name, "non-finite value from fixture_read_finite");
    }
}

static void read_one(Fixture *fx, const char *name, Size want, int finite) {
    char err[FIXTURE_ERR_LEN];
    memset(err, 0, sizeof err);
    Tensor t;
    int ok = finite ? fixture_read_finite(fx, name, want, &t, err) : fixture_read(fx, name, want, &t, err);
    if (ok) check_tensor(name, want, t, finite);
    else check_err("fixture_read", err);
}

struct names {
    int n;
    char name[MAX_NAMES][NAME_LEN];
};

static void collect(const char *name, const char *role, void *ctx) {
    struct names *ns = ctx;
    if (!name) broken("visit", "NULL name");
    if (!role) broken("visit", "NULL role");
    if (strnlen(role, 32) >= 32) broken("visit", "role longer than its buffer");
    if (ns->n < MAX_NAMES && strlen(name) < NAME_LEN) snprintf(ns->name[ns->n++], NAME_LEN, "%s", name);
}

// What a chapter does with an open fixture (lib/runtime/chapter.c), and what the
// test drivers do when they walk one.
static void exercise(Fixture *fx, int walk_groups, const char *path) {
    char err[FIXTURE_ERR_LEN], buf[128];
    long long v;

    if (!fixture_path(fx)) broken("fixture_path", "NULL");
    memset(err, 0, sizeof err);
    if (fixture_attr_string(fx, "chapter", buf, sizeof buf, err)) {
        if (strnlen(buf, sizeof buf) == sizeof buf) broken("fixture_attr_string", "unterminated value");
    } else {
        check_err("fixture_attr_string", err);
    }
    // A short buffer: the value must be cut, never overrun.
    char tiny[4];
    memset(err, 0, sizeof err);
    if (fixture_attr_string(fx, "seed", tiny, sizeof tiny, err)) {
        if (strnlen(tiny, sizeof tiny) == sizeof tiny) broken("fixture_attr_string", "unterminated short value");
    } else {
        check_err("fixture_attr_string", err);
    }
    memset(err, 0, sizeof err);
    if (!fixture_attr_int(fx, "d_out", &v, err)) check_err("fixture_attr_int", err);
    if (fixture_has_attr(fx, "skip")) {
        memset(err, 0, sizeof err);
        if (!fixture_attr_int(fx, "skip", &v, err)) check_err("fixture_attr_int", err);
    }

    read_one(fx, "inputs", (Size){2, {SIZE_ANY, SIZE_ANY}}, 1);
    read_one(fx, "W_query", (Size){2, {SIZE_ANY, SIZE_ANY}}, 1);
    read_one(fx, "W_query.weight", (Size){2, {SIZE_ANY, SIZE_ANY}}, 1);
    read_one(fx, "W_query.bias", (Size){1, {SIZE_ANY}}, 1);
    read_one(fx, "tensor", (Size){1, {SIZE_ANY}}, 1);
    read_one(fx, "attn_score_22", (Size){0, {0, 0}}, 0);
    (void)fixture_has(fx, "context_vec");

    // Every dataset, read as the test drivers read outputs: any shape of its rank.
    struct names ds = {0};
    memset(err, 0, sizeof err);
    if (!fixture_each_dataset(fx, collect, &ds, err)) check_err("fixture_each_dataset", err);
    for (int i = 0; i < ds.n; i++) {
        read_one(fx, ds.name[i], (Size){0, {0, 0}}, 0);
        read_one(fx, ds.name[i], (Size){1, {SIZE_ANY}}, 0);
        read_one(fx, ds.name[i], (Size){2, {SIZE_ANY, SIZE_ANY}}, 0);
    }

    struct names gs = {0};
    memset(err, 0, sizeof err);
    if (!fixture_each_group(fx, collect, &gs, err)) check_err("fixture_each_group", err);
    if (!walk_groups) return;
    // Each group as `--group NAME` opens it: a second handle on the same file.
    for (int i = 0; i < gs.n; i++) {
        memset(err, 0, sizeof err);
        Fixture *g = fixture_open_with(path, gs.name[i], &limits, err);
        if (!g) {
            check_err("fixture_open(group)", err);
            continue;
        }
        exercise(g, 0, path);
        fixture_close(g);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!scratch[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/litattn_fuzz_fixture.%ld.h5", dir && *dir ? dir : "/tmp",
                 (long)getpid());
        atexit(remove_scratch);
    }
    FILE *f = fopen(scratch, "wb");
    if (!f) broken("scratch file", strerror(errno));
    if (size && fwrite(data, 1, size, f) != size) broken("scratch file", "short write");
    if (fclose(f) != 0) broken("scratch file", "close failed");

    char err[FIXTURE_ERR_LEN];
    memset(err, 0, sizeof err);
    Fixture *fx = fixture_open_with(scratch, NULL, &limits, err);
    if (!fx) {
        check_err("fixture_open", err);
    } else {
        exercise(fx, 1, scratch);
        fixture_close(fx);
    }
    tensor_release_all();

    // Everything the reader opened is closed again.
    ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open_ids != 0) {
        char n[32];
        snprintf(n, sizeof n, "%zd HDF5 objects still open", open_ids);
        broken("after fixture_close", n);
    }
    return 0;
}
