// test_fixture_reader: the fixture reader's answers to good and bad files.
//
// Each case writes a small HDF5 file with the plain HDF5 API, then checks
// that the reader either reads it right or refuses it with one line naming
// the file, the dataset and what was expected versus found.
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "hdf5_snapshot.h"

static int failures;
static char dir[512];

static void report(int ok, const char *what, const char *detail) {
    printf("%s %-40s %s\n", ok ? "ok  " : "FAIL", what, detail);
    failures += !ok;
}

// --- writing test files ---------------------------------------------------

static void path_in_dir(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

static void write_dataset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data) {
    hid_t space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (data) H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
}

static void write_string_attr(hid_t loc, const char *name, const char *value, int variable) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, variable ? H5T_VARIABLE : strlen(value));
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, type, variable ? (const void *)&value : (const void *)value);
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
}

// A fixture with inputs (2, 3) float32, W (3, 2) float64, counts (2,) int32, ids (2, 3) int64,
// bad (2,) float32 holding a NaN, empty (0, 3), huge (2^20, 2^20) declared
// only (chunked, nothing stored), scalar (), a group "grp", and attributes.
static void write_sample(const char *path) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    float inputs[6] = {0.43f, 0.15f, 0.89f, 0.55f, 0.87f, 0.66f};
    double w[6] = {1, 2, 3, 4, 5, 6};
    int counts[2] = {1, 2};
    float bad[2] = {1.0f, NAN}, scalar = 1.8524f;
    hsize_t d23[2] = {2, 3}, d32[2] = {3, 2}, d2[1] = {2}, d03[2] = {0, 3};
    write_dataset(f, "inputs", H5T_NATIVE_FLOAT, 2, d23, inputs);
    write_dataset(f, "W", H5T_NATIVE_DOUBLE, 2, d32, w);
    write_dataset(f, "counts", H5T_NATIVE_INT, 1, d2, counts);
    long long ids[6] = {7120, 7002, 4940, 351, 50256, -1};  // int64 (token ids; any value)
    write_dataset(f, "ids", H5T_STD_I64LE, 2, d23, ids);
    write_dataset(f, "bad", H5T_NATIVE_FLOAT, 1, d2, bad);
    write_dataset(f, "empty", H5T_NATIVE_FLOAT, 2, d03, NULL);
    write_dataset(f, "scalar", H5T_NATIVE_FLOAT, 0, NULL, &scalar);
    hsize_t huge[2] = {1u << 20, 1u << 20}, chunk[2] = {64, 64};
    hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(plist, 2, chunk);
    hid_t space = H5Screate_simple(2, huge, NULL);
    H5Dclose(H5Dcreate2(f, "huge", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, plist, H5P_DEFAULT));
    H5Sclose(space);
    H5Pclose(plist);
    hid_t g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    write_dataset(g, "inputs", H5T_NATIVE_FLOAT, 2, d23, inputs);
    write_string_attr(g, "chapter", "in a group", 1);
    H5Gclose(g);
    write_string_attr(f, "chapter", "ch03_4_2_self_attention_v2", 1);
    write_string_attr(f, "fixed", "fixed length", 0);
    long long d_out = 2;
    hid_t aspace = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(f, "d_out", H5T_NATIVE_LLONG, aspace, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, H5T_NATIVE_LLONG, &d_out);
    H5Aclose(attr);
    H5Sclose(aspace);
    H5Fclose(f);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

// --- checks ---------------------------------------------------------------

// err must hold every fragment (NULL-terminated list).
static int has_all(const char *err, const char *const *fragments) {
    for (; *fragments; fragments++)
        if (!strstr(err, *fragments)) return 0;
    return !strchr(err, '\n');
}

static void expect_open_error(const char *what, const char *path, const char *fragment) {
    char err[FIXTURE_ERR_LEN] = "";
    Fixture *fx = fixture_open(path, NULL, err);
    const char *want[] = {path, "expected", fragment, NULL};
    const char *want_os[] = {path, fragment, NULL};  // system errors use the system's words
    report(!fx && (has_all(err, want) || has_all(err, want_os)), what, err);
    fixture_close(fx);
}

static void expect_read_error(Fixture *fx, const char *what, const char *name, Size shape, int finite,
                              const char *fragment) {
    char err[FIXTURE_ERR_LEN] = "";
    Tensor t;
    int ok = finite ? fixture_read_finite(fx, name, shape, &t, err) : fixture_read(fx, name, shape, &t, err);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", name);
    const char *want[] = {fixture_path(fx), quoted, "expected", "found", fragment, NULL};
    report(!ok && has_all(err, want), what, err);
}

static void test_file_errors(void) {
    char path[600];
    path_in_dir(path, sizeof path, "missing.h5");
    expect_open_error("a missing file", path, "No such file");
    expect_open_error("a directory", dir, "found a directory");
    path_in_dir(path, sizeof path, "empty.h5");
    write_text(path, "");
    expect_open_error("a zero-byte file", path, "empty file");
    path_in_dir(path, sizeof path, "text.h5");
    write_text(path, "tensor([0.4306, 1.4551])\n");
    expect_open_error("a text file", path, "without an HDF5 signature");
}

static void test_dataset_errors(Fixture *fx) {
    Size m23 = {2, {2, 3}}, any2 = {2, {SIZE_ANY, SIZE_ANY}};
    expect_read_error(fx, "a missing dataset", "W_query", m23, 0, "no such dataset");
    expect_read_error(fx, "a group in place of a dataset", "grp", m23, 0, "not a dataset");
    expect_read_error(fx, "a float64 dataset", "W", (Size){2, {3, 2}}, 0, "found float64 (3, 2)");
    expect_read_error(fx, "an int32 dataset", "counts", (Size){1, {2}}, 0, "found int32 (2,)");
    expect_read_error(fx, "the wrong rank", "inputs", (Size){1, {6}}, 0, "expected float32 (6,), found float32 (2, 3)");
    expect_read_error(fx, "the wrong size on axis 0", "inputs", (Size){2, {6, 3}}, 0, "found float32 (2, 3)");
    expect_read_error(fx, "the wrong size on axis 1", "inputs", (Size){2, {2, 2}}, 0, "found float32 (2, 3)");
    expect_read_error(fx, "an empty dataset", "empty", any2, 0, "empty dataset (0, 3)");
    expect_read_error(fx, "a dataset too large for memory", "huge", any2, 0, "(1048576, 1048576)");
    expect_read_error(fx, "a NaN among the inputs", "bad", (Size){1, {2}}, 1, "found nan at flat index 1");
}

static void test_attribute_errors(Fixture *fx) {
    char err[FIXTURE_ERR_LEN] = "", buf[64];
    long long v;
    int ok = !fixture_attr_string(fx, "seed", buf, sizeof buf, err) && strstr(err, "'seed'") &&
             strstr(err, "no such attribute");
    report(ok, "a missing attribute", err);
    ok = !fixture_attr_int(fx, "chapter", &v, err) && strstr(err, "expected a single integer, found string");
    report(ok, "a string where an integer belongs", err);
    ok = !fixture_attr_string(fx, "d_out", buf, sizeof buf, err) && strstr(err, "expected a single string, found int64");
    report(ok, "an integer where a string belongs", err);
}

static void test_reads(Fixture *fx) {
    char err[FIXTURE_ERR_LEN] = "", buf[64];
    Tensor t;
    int ok = fixture_read_finite(fx, "inputs", (Size){2, {SIZE_ANY, 3}}, &t, err) && t.shape[0] == 2 &&
             t.shape[1] == 3 && t.data[4] == 0.87f;
    report(ok, "a float32 (2, 3) dataset", ok ? "read" : err);
    ok = fixture_read(fx, "scalar", (Size){0, {0, 0}}, &t, err) && t.ndim == 0 && t.data[0] == 1.8524f;
    report(ok, "a scalar dataset", ok ? "read" : err);
    ok = fixture_attr_string(fx, "chapter", buf, sizeof buf, err) && !strcmp(buf, "ch03_4_2_self_attention_v2");
    report(ok, "a variable-length string attribute", ok ? buf : err);
    ok = fixture_attr_string(fx, "fixed", buf, sizeof buf, err) && !strcmp(buf, "fixed length");
    report(ok, "a fixed-length string attribute", ok ? buf : err);
    long long d_out = 0;
    ok = fixture_attr_int(fx, "d_out", &d_out, err) && d_out == 2;
    report(ok, "an integer attribute", ok ? "2" : err);
    LongTensor ids;
    ok = fixture_is_long(fx, "ids") && fixture_read_long(fx, "ids", &ids, err) && ids.ndim == 2 && ids.shape[0] == 2 &&
         ids.shape[1] == 3 && ids.data[4] == 50256 && ids.data[5] == -1;
    report(ok, "an int64 (2, 3) dataset (token ids)", ok ? "read" : err);
    ok = !fixture_is_long(fx, "counts") && !fixture_read_long(fx, "counts", &ids, err) && strstr(err, "'counts'") &&
         strstr(err, "expected int64") && strstr(err, "found int32");
    report(ok, "an int32 dataset read as int64", err);
    ok = !fixture_read_long(fx, "inputs", &ids, err) && strstr(err, "found float32");
    report(ok, "a float32 dataset read as int64", err);
}

static void test_group(const char *path) {
    char err[FIXTURE_ERR_LEN] = "", buf[64];
    Fixture *g = fixture_open(path, "grp", err);
    int ok = g && fixture_attr_string(g, "chapter", buf, sizeof buf, err) && !strcmp(buf, "in a group");
    report(ok, "a group's attribute", ok ? buf : err);
    fixture_close(g);
    g = fixture_open(path, "nope", err);
    report(!g && strstr(err, "expected a group 'nope'"), "a missing group", err);
    fixture_close(g);
}

// --- fixtures the build has read already (hdf5_snapshot_ship) -----------------

static int same_attr(const SnapAttr *a, const SnapAttr *b) {
    return !strcmp(a->name, b->name) && a->kind == b->kind && !strcmp(a->type, b->type) && a->space == b->space &&
           a->count == b->count && a->read_ok == b->read_ok && a->is_unsigned == b->is_unsigned &&
           a->length == b->length && !strcmp(a->text ? a->text : "", b->text ? b->text : "") &&
           a->value == b->value && a->uvalue == b->uvalue && !memcmp(&a->dvalue, &b->dvalue, sizeof a->dvalue);
}

static int same_object(const SnapObject *a, const SnapObject *b) {
    if (strcmp(a->name, b->name) || strcmp(a->found, b->found) || a->is_dataset != b->is_dataset ||
        a->is_group != b->is_group || strcmp(a->type, b->type) || a->is_float32 != b->is_float32 ||
        a->is_int64 != b->is_int64 || a->space != b->space || a->rank != b->rank || strcmp(a->role, b->role) || a->values_read != b->values_read ||
        strcmp(a->refused, b->refused) || a->numel != b->numel)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    if (a->values_read == 1 && a->is_int64) return !memcmp(a->ivalues, b->ivalues, (size_t)a->numel * sizeof(int64_t));
    return a->values_read != 1 || !memcmp(a->values, b->values, (size_t)a->numel * sizeof(float));
}

// Every field of the two snapshots, values bit for bit.
static int same_snapshot(const Snapshot *a, const Snapshot *b) {
    if (a->status != b->status || strcmp(a->note, b->note) || a->n_groups != b->n_groups) return 0;
    for (int g = 0; g < a->n_groups; g++) {
        const SnapGroup *x = &a->groups[g], *y = &b->groups[g];
        if (strcmp(x->name, y->name) || x->status != y->status || strcmp(x->found, y->found) ||
            x->listing_failed != y->listing_failed || x->n_attrs != y->n_attrs || x->n_objects != y->n_objects)
            return 0;
        for (int i = 0; i < x->n_attrs; i++)
            if (!same_attr(&x->attrs[i], &y->attrs[i])) return 0;
        for (int i = 0; i < x->n_objects; i++)
            if (!same_object(&x->objects[i], &y->objects[i])) return 0;
    }
    return 1;
}

// How a file is answered once a table of shipped fixtures holds it: from
// the build's records, with no reader child, exactly as the child answers;
// and what still goes to the child: other bytes (one byte longer, or one
// byte changed), a group, limits other than the defaults.
static void test_shipped(const char *path) {
    char err[FIXTURE_ERR_LEN] = "", other[600];
    size_t size = 0, n_records = 0, n_file = 0;
    unsigned char *bytes = NULL, *records = NULL;
    char *file = read_whole_file(path, &n_file);
    int fd = open(path, O_RDONLY);
    int ok = file && fd >= 0 && hdf5_snapshot_shippable(fd, path, &bytes, &size, &records, &n_records, err, sizeof err);
    ok = ok && size == n_file && !memcmp(bytes, file, size);
    report(ok, "what the build compiles in: the file's bytes", ok ? "" : err[0] ? err : "not the file's bytes");
    free(file);
    if (!ok) {
        free(bytes), free(records);
        if (fd >= 0) close(fd);
        return;
    }
    Snapshot by_child, by_table;
    ok = hdf5_snapshot(fd, path, NULL, NULL, &by_child, err, sizeof err);
    ShippedSnapshot one = {"shipped.h5", bytes, size, records, n_records};
    ShippedSnapshots table = {&one, 1};
    hdf5_snapshot_ship(&table);
    int before = hdf5_snapshot_children();
    ok = ok && hdf5_snapshot(fd, path, NULL, NULL, &by_table, err, sizeof err);
    int started = hdf5_snapshot_children() - before;
    report(ok && !started && same_snapshot(&by_child, &by_table), "shipped bytes: no child, the child's snapshot",
           started ? "a reader child was started" : err);
    if (ok) snapshot_free(&by_table);
    snapshot_free(&by_child);
    close(fd);

    Fixture *fx = fixture_open(path, NULL, err);
    Tensor t;
    ok = fx && fixture_read(fx, "inputs", (Size){2, {2, 3}}, &t, err) && t.data[5] == 0.66f;
    report(ok && hdf5_snapshot_children() == before, "shipped bytes through fixture_open", ok ? "" : err);
    fixture_close(fx);

    // The shipped fixture itself, with no file: the same values, named as
    // built in, no file id (nothing a --dump could overwrite), no group.
    fx = fixture_open_shipped(&one, NULL, err);
    dev_t dev = 1;
    ino_t ino = 1;
    if (fx) fixture_file_id(fx, &dev, &ino);
    ok = fx && fixture_read(fx, "inputs", (Size){2, {2, 3}}, &t, err) && t.data[5] == 0.66f;
    report(ok && hdf5_snapshot_children() == before && dev == 0 && ino == 0 &&
           !strcmp(fixture_path(fx), "shipped.h5 (built in)"), "a shipped fixture with no file (fixture_open_shipped)",
           ok ? fixture_path(fx) : err);
    fixture_close(fx);
    fx = fixture_open_shipped(&one, "grp", err);
    report(!fx && strstr(err, "shipped.h5 (built in)") && strstr(err, "group 'grp'") && strstr(err, "--fixture PATH"),
           "a group of a shipped fixture with no file: refused in one line", err);
    fixture_close(fx);

    // Each of these must start a child (and still read the file right).
    path_in_dir(other, sizeof other, "shipped-other.h5");
    const char *what[] = {"a copy one byte longer", "a copy with one byte changed", "a group of it",
                          "other limits"};
    for (int k = 0; k < 4; k++) {
        const char *file = path, *group = NULL;
        FixtureOptions opt = {0};
        if (k < 2) {
            FILE *f = fopen(other, "wb");
            unsigned char last = bytes[size - 1];
            if (k == 1) bytes[size - 1] ^= 1;  // the end of the file: past what HDF5 reads of this one
            int wrote = f && fwrite(bytes, 1, size, f) == size && (k == 1 || fputc(0, f) != EOF);
            if (f) wrote = fclose(f) == 0 && wrote;
            bytes[size - 1] = last;
            if (!wrote) report(0, what[k], "cannot write the copy");
            file = other;
        }
        if (k == 2) group = "grp";
        if (k == 3) opt.cpu_seconds = 5;
        before = hdf5_snapshot_children();
        fx = fixture_open_with(file, group, &opt, err);
        // A changed byte may break the file: only the child is asked for then.
        int started = hdf5_snapshot_children() == before + 1;
        report(started && (fx || k == 1), what[k], !started ? "no reader child was started" : fx ? "" : err);
        fixture_close(fx);
    }
    unlink(other);
    hdf5_snapshot_ship(NULL);
    free(bytes), free(records);
}

int main(void) {
    temp_path(dir, sizeof dir, "reader");
    unlink(dir);
    if (mkdir(dir, 0700) != 0) {
        perror(dir);
        return 1;
    }
    test_file_errors();
    char path[600], err[FIXTURE_ERR_LEN];
    path_in_dir(path, sizeof path, "sample.h5");
    write_sample(path);
    Fixture *fx = fixture_open(path, NULL, err);
    report(fx != NULL, "a good file opens", fx ? path : err);
    if (fx) {
        test_dataset_errors(fx);
        test_attribute_errors(fx);
        test_reads(fx);
        fixture_close(fx);
    }
    test_group(path);
    test_shipped(path);
    const char *names[] = {"sample.h5", "empty.h5", "text.h5"};
    for (int i = 0; i < 3; i++) {
        path_in_dir(path, sizeof path, names[i]);
        unlink(path);
    }
    rmdir(dir);
    tensor_release_all();
    printf("%s\n", failures ? "FAILED" : "every bad file refused with one clear line");
    return failures ? 1 : 0;
}
