// make_malformed: writes the `errors` suite's catalogue of broken fixtures.
//
//   make_malformed FIXTURES_DIR OUT_DIR
//
// For every chapter it copies the chapter's book fixture byte for byte, then
// breaks exactly one thing in the copy: the file itself (truncated, empty,
// text, a directory, unreadable, missing), one attribute, or one dataset of
// each role the chapter reads (its input, every weight). Every case is one
// line of OUT_DIR/catalogue.tsv:
//
//   case<TAB>chapter<TAB>path<TAB>extra-args<TAB>must-mention<TAB>stdout
//
// must-mention is the dataset or attribute the chapter's error line has to
// name (empty for file-level cases, where the path is enough); stdout says
// what the chapter may print before it stops: `prefix` (the start of what it
// prints on its good fixture, cell markers aside) or `finite` (the broken
// thing changes what comes first, e.g. other inputs: only finite numbers).
// Case `good` is the untouched copy, which the chapter must accept.
//
// Nothing here is committed: meson runs this on every build (tools/meson.build).
#include <dirent.h>
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// What each chapter reads, in the order it reads it (chapters/*.c).
typedef struct {
    const char *name, *variant;
    const char *input;        // its input dataset: (T, d_in) `inputs`, or (n,) `tensor`
    int min_tokens;           // rows the chapter needs (query = inputs[1] needs 2)
    const char *weights[4];   // weight datasets, NULL-terminated
    int d_out, seed, skip, qkv_bias;  // which root attributes it reads
} Chapter;

static const Chapter chapters[] = {
    {"ch03_3_simplified_attention", "book", "inputs", 2, {NULL}, 0, 0, 0, 0},
    {"ch03_4_1_trainable_weights", "seed123", "inputs", 2, {"W_query", "W_key", "W_value", NULL}, 1, 1, 0, 0},
    {"ch03_4_1_scaling_rationale", "book", "tensor", 1, {NULL}, 0, 0, 0, 0},
    {"ch03_4_2_self_attention_v1", "seed123", "inputs", 1, {"W_query", "W_key", "W_value", NULL}, 1, 1, 1, 0},
    {"ch03_4_2_self_attention_v2", "seed789", "inputs", 1,
     {"W_query.weight", "W_key.weight", "W_value.weight", NULL}, 1, 1, 0, 1},
};
enum { N_CHAPTERS = sizeof chapters / sizeof chapters[0] };

static struct {
    const char *fixtures;     // the source tree's fixtures/
    char out[4096];           // OUT_DIR, absolute
    FILE *manifest;
    int cases;
    char kinds[128][48];      // distinct kinds seen, for the summary
    int n_kinds;
} g;

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("make_malformed: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

// HDF5 calls here must all succeed: a failure is a bug in this generator.
#define MUST(x)                                                   \
    do {                                                             \
        if ((x) < 0) fatal("%s:%d: %s failed", __FILE__, __LINE__, #x); \
    } while (0)

// --- files -----------------------------------------------------------------

// Removes `path` and, if it is a directory, everything under it.
static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) fatal("%s: %s", path, strerror(errno));
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char child[4096];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        closedir(d);
        if (rmdir(path) != 0) fatal("%s: %s", path, strerror(errno));
    } else if (unlink(path) != 0) {
        fatal("%s: %s", path, strerror(errno));
    }
}

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fatal("%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) fatal("%s: cannot read", path);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void spit(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) fatal("%s: cannot write", path);
}

static void good_path(const Chapter *ch, char *buf, size_t len) {
    snprintf(buf, len, "%s/%s.%s.h5", g.fixtures, ch->name, ch->variant);
}

// --- the manifest ----------------------------------------------------------

// OUT_DIR/<chapter>/<case>.h5, with the case's ':' (kind:dataset) as '-'.
static void case_path(const Chapter *ch, const char *kase, char *buf, size_t len) {
    int n = snprintf(buf, len, "%s/%s/%s.h5", g.out, ch->name, kase);
    if (n < 0 || (size_t)n >= len) fatal("path too long: %s/%s/%s.h5", g.out, ch->name, kase);
    for (char *p = buf + n - 3 - strlen(kase); *p; p++)
        if (*p == ':') *p = '-';
}

static void record(const char *kase, const Chapter *ch, const char *path, const char *extra, const char *mention,
                   const char *rule) {
    fprintf(g.manifest, "%s\t%s\t%s\t%s\t%s\t%s\n", kase, ch->name, path, extra, mention, rule);
    if (!strcmp(kase, "good")) return;
    g.cases++;
    char kind[48];
    snprintf(kind, sizeof kind, "%.*s", (int)strcspn(kase, ":"), kase);
    for (int i = 0; i < g.n_kinds; i++)
        if (!strcmp(g.kinds[i], kind)) return;
    if (g.n_kinds < 128) snprintf(g.kinds[g.n_kinds++], sizeof g.kinds[0], "%s", kind);
}

// Copies the chapter's good fixture to the case's path and opens it for writing.
static hid_t begin(const Chapter *ch, const char *kase, char *path, size_t len) {
    char src[4096];
    good_path(ch, src, sizeof src);
    case_path(ch, kase, path, len);
    size_t n;
    unsigned char *bytes = slurp(src, &n);
    spit(path, bytes, n);
    free(bytes);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) fatal("%s: cannot open the copy", path);
    return f;
}

static void end(hid_t f, const char *kase, const Chapter *ch, const char *path, const char *mention,
                const char *rule) {
    MUST(H5Fclose(f));
    record(kase, ch, path, "", mention, rule);
}

// --- datasets and attributes ------------------------------------------------

typedef struct {
    int rank;
    hsize_t dims[2];
    size_t n;
    float *data;
} Array;

static Array read_array(hid_t loc, const char *name) {
    Array a = {0, {1, 1}, 1, NULL};
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    MUST(ds);
    hid_t space = H5Dget_space(ds);
    a.rank = H5Sget_simple_extent_ndims(space);
    if (a.rank < 0 || a.rank > 2) fatal("dataset '%s' has rank %d", name, a.rank);
    MUST(H5Sget_simple_extent_dims(space, a.dims, NULL));
    for (int i = 0; i < a.rank; i++) a.n *= a.dims[i];
    a.data = malloc(a.n * sizeof(float));
    if (!a.data) fatal("out of memory");
    MUST(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.data));
    H5Sclose(space);
    H5Dclose(ds);
    return a;
}

static void put_string_attr(hid_t loc, const char *name, const char *value) {
    if (H5Aexists(loc, name) > 0) MUST(H5Adelete(loc, name));
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    MUST(attr);
    MUST(H5Awrite(attr, type, &value));
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
}

// An attribute of file type `ftype` holding n values of memory type `mtype`
// (n == 0: a scalar holding one).
static void put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *value) {
    if (H5Aexists(loc, name) > 0) MUST(H5Adelete(loc, name));
    hid_t space = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    MUST(attr);
    MUST(H5Awrite(attr, mtype, value));
    H5Aclose(attr);
    H5Sclose(space);
}

static void put_int_attr(hid_t loc, const char *name, long long v) {
    put_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, 0, &v);
}

// Replaces (or adds) dataset `name`: file type `ftype`, `rank` dims (rank -1:
// a null dataspace), filled from `data` of memory type `mtype` unless data is
// NULL. `dcpl` lays it out (H5P_DEFAULT: contiguous). Tagged with `role`.
static void put_dataset(hid_t loc, const char *name, const char *role, hid_t ftype, int rank, const hsize_t *dims,
                        hid_t mtype, const void *data, hid_t dcpl) {
    if (H5Lexists(loc, name, H5P_DEFAULT) > 0) MUST(H5Ldelete(loc, name, H5P_DEFAULT));
    hid_t space = rank < 0 ? H5Screate(H5S_NULL) : rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    MUST(ds);
    if (data) MUST(H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
    put_string_attr(ds, "role", role);
    H5Dclose(ds);
    H5Sclose(space);
}

static void put_floats(hid_t loc, const char *name, const char *role, int rank, const hsize_t *dims, const float *v) {
    put_dataset(loc, name, role, H5T_IEEE_F32LE, rank, dims, H5T_NATIVE_FLOAT, v, H5P_DEFAULT);
}

// --- one file per kind ---------------------------------------------------------

static void file_cases(const Chapter *ch, const Chapter *other) {
    char src[4096], path[4096];
    good_path(ch, src, sizeof src);
    size_t n;
    unsigned char *bytes = slurp(src, &n);

    case_path(ch, "good", path, sizeof path);
    spit(path, bytes, n);
    record("good", ch, path, "", "", "prefix");

    // Cut short: inside the signature, the superblock, the first object
    // headers, the middle, and one byte before the end.
    const struct { const char *kase; size_t len; } cuts[] = {
        {"truncated_8", 8}, {"truncated_100", 100}, {"truncated_512", 512},
        {"truncated_half", n / 2}, {"truncated_size_minus_1", n - 1},
    };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        case_path(ch, cuts[i].kase, path, sizeof path);
        spit(path, bytes, cuts[i].len);
        record(cuts[i].kase, ch, path, "", "", "prefix");
    }

    case_path(ch, "empty_file", path, sizeof path);
    spit(path, "", 0);
    record("empty_file", ch, path, "", "", "prefix");

    static const char text[] = "inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]])\n";
    case_path(ch, "text_file", path, sizeof path);
    spit(path, text, sizeof text - 1);
    record("text_file", ch, path, "", "", "prefix");

    // The HDF5 signature, then 2 KiB that are no superblock.
    unsigned char junk[2048];
    memcpy(junk, "\211HDF\r\n\032\n", 8);
    unsigned x = 12345u;
    for (size_t i = 8; i < sizeof junk; i++) junk[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
    case_path(ch, "signature_then_garbage", path, sizeof path);
    spit(path, junk, sizeof junk);
    record("signature_then_garbage", ch, path, "", "", "prefix");

    case_path(ch, "directory", path, sizeof path);
    if (mkdir(path, 0755) != 0) fatal("%s: %s", path, strerror(errno));
    record("directory", ch, path, "", "", "prefix");

    // As root this file is readable anyway: the checker then skips the case.
    case_path(ch, "unreadable", path, sizeof path);
    spit(path, bytes, n);
    if (chmod(path, 0) != 0) fatal("%s: %s", path, strerror(errno));
    record("unreadable", ch, path, "", "", "prefix");

    case_path(ch, "missing_file", path, sizeof path);
    record("missing_file", ch, path, "", "", "prefix");

    // Paths that are no regular file: a FIFO (opening one blocks until a
    // writer comes), a device, a symbolic link to itself or to nothing, and
    // a path that goes through a file as if it were a directory.
    case_path(ch, "fifo", path, sizeof path);
    if (mkfifo(path, 0644) != 0) fatal("%s: %s", path, strerror(errno));
    record("fifo", ch, path, "", "", "prefix");
    record("device", ch, "/dev/null", "", "", "prefix");
    case_path(ch, "symlink_loop", path, sizeof path);
    if (symlink(path, path) != 0) fatal("%s: %s", path, strerror(errno));
    record("symlink_loop", ch, path, "", "", "prefix");
    case_path(ch, "symlink_dangling", path, sizeof path);
    if (symlink("no_such_target.h5", path) != 0) fatal("%s: %s", path, strerror(errno));
    record("symlink_dangling", ch, path, "", "", "prefix");
    char through[4200];
    case_path(ch, "good", path, sizeof path);
    snprintf(through, sizeof through, "%s/inputs.h5", path);
    record("path_through_a_file", ch, through, "", "", "prefix");

    // Another chapter's good fixture.
    char theirs[4096];
    good_path(other, theirs, sizeof theirs);
    unsigned char *their_bytes = slurp(theirs, &n);
    case_path(ch, "wrong_chapter", path, sizeof path);
    spit(path, their_bytes, n);
    free(their_bytes);
    record("wrong_chapter", ch, path, "", "chapter", "prefix");
    free(bytes);
}

static void chapter_attr_cases(const Chapter *ch) {
    char path[4096];
    hid_t f = begin(ch, "chapter_attr_missing", path, sizeof path);
    MUST(H5Adelete(f, "chapter"));
    end(f, "chapter_attr_missing", ch, path, "chapter", "prefix");

    f = begin(ch, "chapter_attr_int", path, sizeof path);
    put_int_attr(f, "chapter", 33);
    end(f, "chapter_attr_int", ch, path, "chapter", "prefix");

    f = begin(ch, "chapter_attr_wrong_value", path, sizeof path);
    put_string_attr(f, "chapter", "ch03_9_no_such_chapter");
    end(f, "chapter_attr_wrong_value", ch, path, "chapter", "prefix");

    // Two names where one is wanted (the sweep's root names two chapters, but
    // as one comma-separated string).
    f = begin(ch, "chapter_attr_array", path, sizeof path);
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    const char *names[2] = {ch->name, ch->name};
    MUST(H5Adelete(f, "chapter"));
    put_attr(f, "chapter", type, type, 2, names);
    H5Tclose(type);
    end(f, "chapter_attr_array", ch, path, "chapter", "prefix");
}

// A sweep-like file: the good fixture as group `cfg` of a new file.
static void group_cases(const Chapter *ch) {
    char src[4096], path[4096], extra[256];
    good_path(ch, src, sizeof src);
    hid_t in = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
    MUST(in);

    case_path(ch, "group_missing", path, sizeof path);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    MUST(f);
    MUST(H5Ocopy(in, "/", f, "cfg", H5P_DEFAULT, H5P_DEFAULT));
    MUST(H5Fclose(f));
    record("group_missing", ch, path, "--group no_such_group", "no_such_group", "prefix");

    case_path(ch, "group_input_missing", path, sizeof path);
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    MUST(f);
    MUST(H5Ocopy(in, "/", f, "cfg", H5P_DEFAULT, H5P_DEFAULT));
    char link[128];
    snprintf(link, sizeof link, "cfg/%s", ch->input);
    MUST(H5Ldelete(f, link, H5P_DEFAULT));
    MUST(H5Fclose(f));
    record("group_input_missing", ch, path, "--group cfg", ch->input, "prefix");
    H5Fclose(in);

    // --group naming a dataset.
    f = begin(ch, "group_is_dataset", path, sizeof path);
    MUST(H5Fclose(f));
    snprintf(extra, sizeof extra, "--group %s", ch->input);
    record("group_is_dataset", ch, path, extra, ch->input, "prefix");
}

// Kinds that break one float32 dataset `name` (the input or a weight), each
// case named "<pfx>_<kind>:<name>"; `role` is the dataset's role attribute.
static void dataset_cases(const Chapter *ch, const char *pfx, const char *name, const char *role) {
    char path[4096], kase[128];
    hid_t f;
    Array a;
#define CASE(kind) (snprintf(kase, sizeof kase, "%s_%s:%s", pfx, kind, name), f = begin(ch, kase, path, sizeof path), \
                    a = read_array(f, name))
#define DONE() (end(f, kase, ch, path, name, "prefix"), free(a.data))

    CASE("missing");
    MUST(H5Ldelete(f, name, H5P_DEFAULT));
    DONE();

    CASE("rank0");
    put_floats(f, name, role, 0, NULL, a.data);
    DONE();

    // A matrix flattened to a vector; a vector made a one-row matrix.
    CASE("wrong_rank");
    hsize_t flat[2] = {a.n, 1}, row[2] = {1, a.n};
    if (a.rank == 2) put_floats(f, name, role, 1, flat, a.data);
    else put_floats(f, name, role, 2, row, a.data);
    DONE();

    CASE("rank3");
    hsize_t dims3[3] = {1, a.dims[0], a.rank == 2 ? a.dims[1] : 1};
    put_floats(f, name, role, 3, dims3, a.data);
    DONE();

    CASE("float64");
    double *d = malloc(a.n * sizeof *d);
    for (size_t i = 0; i < a.n; i++) d[i] = a.data[i];
    put_dataset(f, name, role, H5T_IEEE_F64LE, a.rank, a.dims, H5T_NATIVE_DOUBLE, d, H5P_DEFAULT);
    free(d);
    DONE();

    CASE("int32");
    int *iv = malloc(a.n * sizeof *iv);
    for (size_t i = 0; i < a.n; i++) iv[i] = (int)lrintf(a.data[i] * 100.0f);
    put_dataset(f, name, role, H5T_STD_I32LE, a.rank, a.dims, H5T_NATIVE_INT, iv, H5P_DEFAULT);
    free(iv);
    DONE();

    // The values as text, "0.4300", 16 bytes each.
    CASE("string");
    char *sv = calloc(a.n, 16);
    for (size_t i = 0; i < a.n; i++) snprintf(sv + 16 * i, 16, "%.4f", (double)a.data[i]);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 16);
    put_dataset(f, name, role, st, a.rank, a.dims, st, sv, H5P_DEFAULT);
    H5Tclose(st);
    free(sv);
    DONE();

    CASE("null_dataspace");
    put_floats(f, name, role, -1, NULL, NULL);
    DONE();

    CASE("empty");
    hsize_t none[2] = {0, a.rank == 2 ? a.dims[1] : 0};
    put_floats(f, name, role, a.rank, none, NULL);
    DONE();

    static const char *const bad_names[] = {"nan", "posinf", "neginf"};
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        CASE(bad_names[k]);
        a.data[a.n - 1 - (size_t)k % a.n] = bad[k];  // near the end: every value is checked
        put_floats(f, name, role, a.rank, a.dims, a.data);
        DONE();
    }

    CASE("is_group");
    MUST(H5Ldelete(f, name, H5P_DEFAULT));
    hid_t grp = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    MUST(grp);
    H5Gclose(grp);
    DONE();

    CASE("dangling_link");
    MUST(H5Ldelete(f, name, H5P_DEFAULT));
    MUST(H5Lcreate_soft("/no/such/object", f, name, H5P_DEFAULT, H5P_DEFAULT));
    DONE();

    CASE("external_link");
    MUST(H5Ldelete(f, name, H5P_DEFAULT));
    MUST(H5Lcreate_external("no_such_file.h5", name, f, name, H5P_DEFAULT, H5P_DEFAULT));
    DONE();

    // Chunked and compressed, then one chunk's bytes overwritten: inflating fails.
    // And with a Fletcher-32 checksum, one data byte changed: the sum fails.
    for (int k = 0; k < 2; k++) {
        CASE(k == 0 ? "corrupt_deflate" : "bad_checksum");
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        MUST(H5Pset_chunk(dcpl, a.rank ? a.rank : 1, a.dims));
        if (k == 0) MUST(H5Pset_deflate(dcpl, 6));
        else MUST(H5Pset_fletcher32(dcpl));
        put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, a.data, dcpl);
        H5Pclose(dcpl);
        hid_t ds = H5Dopen2(f, name, H5P_DEFAULT), space = H5Dget_space(ds);
        haddr_t addr;
        hsize_t size;
        MUST(H5Dget_chunk_info(ds, space, 0, NULL, NULL, &addr, &size));
        H5Sclose(space);
        H5Dclose(ds);
        MUST(H5Fclose(f));
        FILE *fp = fopen(path, "r+b");
        if (!fp || fseek(fp, (long)addr + (k == 0 ? 0 : 1), SEEK_SET) != 0) fatal("%s: cannot patch", path);
        if (k == 0) {
            for (hsize_t i = 0; i < size; i++) fputc(0xA5, fp);
        } else {
            int byte = fgetc(fp);
            fseek(fp, (long)addr + 1, SEEK_SET);
            fputc(byte ^ 0xFF, fp);
        }
        fclose(fp);
        record(kase, ch, path, "", name, "prefix");
        free(a.data);
    }
#undef CASE
#undef DONE
}

static void input_cases(const Chapter *ch) {
    dataset_cases(ch, "input", ch->input, "input");
    char path[4096];
    hid_t f;

    // Declares 2^40 values (4 TiB of float32; 2^20 x 2^20 for a matrix) in
    // chunks of which none is stored: the file stays a few KiB.
    f = begin(ch, "input_huge", path, sizeof path);
    Array a = read_array(f, ch->input);
    hsize_t big[2] = {1ull << 20, 1ull << 20}, chunk[2] = {1, 1024};
    if (a.rank == 1) big[0] = 1ull << 40, chunk[0] = 1024;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    MUST(H5Pset_chunk(dcpl, a.rank, chunk));
    put_dataset(f, ch->input, "input", H5T_IEEE_F32LE, a.rank, big, H5T_NATIVE_FLOAT, NULL, dcpl);
    H5Pclose(dcpl);
    free(a.data);
    end(f, "input_huge", ch, path, ch->input, "prefix");

    // Too big to attend over, though each is within the reader's element
    // limit (2^20): 2^20 tokens of one feature (T x T scores would need 2^40
    // floats), and two tokens of 2^19 features (d_in x d_out weights), both
    // past the chapters' 1024. Chunked, nothing stored.
    // With --seed the weights are drawn, not read, so no shape check stops it.
    for (int k = 0; k < (ch->weights[0] ? 4 : 2); k++) {
        static const char *const kinds[] = {"too_many_tokens", "too_many_features", "too_many_tokens_seeded",
                                            "too_many_features_seeded"};
        if (!strcmp(ch->input, "tensor")) break;  // a 1-D tensor: its length is only capped by the element limit
        f = begin(ch, kinds[k], path, sizeof path);
        hsize_t dims[2] = {1ull << 20, 1}, chunk[2] = {1024, 1};
        if (k % 2) dims[0] = 2, dims[1] = 1ull << 19, chunk[0] = 1, chunk[1] = 1024;
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        MUST(H5Pset_chunk(dcpl, 2, chunk));
        put_dataset(f, ch->input, "input", H5T_IEEE_F32LE, 2, dims, H5T_NATIVE_FLOAT, NULL, dcpl);
        H5Pclose(dcpl);
        MUST(H5Fclose(f));
        record(kinds[k], ch, path, k >= 2 ? "--seed 1" : "", ch->input, "prefix");
    }

    if (ch->min_tokens >= 2) {
        // One token: the chapter's query is inputs[1].
        f = begin(ch, "too_few_tokens", path, sizeof path);
        a = read_array(f, ch->input);
        hsize_t one[2] = {1, a.dims[1]};
        put_floats(f, ch->input, "input", 2, one, a.data);
        free(a.data);
        end(f, "too_few_tokens", ch, path, ch->input, "prefix");
    }
}

static void attr_cases(const Chapter *ch, const char *attr, int is_string) {
    char path[4096], kase[128];
    hid_t f;
#define ACASE(kind) (snprintf(kase, sizeof kase, "%s_%s", attr, kind), f = begin(ch, kase, path, sizeof path))
#define ADONE() end(f, kase, ch, path, attr, "prefix")
    if (strcmp(attr, "skip")) {  // skip is optional: absent means 0
        ACASE("missing");
        MUST(H5Adelete(f, attr));
        ADONE();
    }
    if (is_string) {
        ACASE("int");
        put_int_attr(f, attr, 123);
        ADONE();
        return;
    }
    ACASE("string");
    put_string_attr(f, attr, "2");
    ADONE();

    ACASE("float");
    double two = 2.0;
    put_attr(f, attr, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &two);
    ADONE();

    ACASE("array");
    long long pair[2] = {1, 2};
    put_attr(f, attr, H5T_STD_I64LE, H5T_NATIVE_LLONG, 2, pair);
    ADONE();

    // Out of range, per attribute: d_out in [1, 1024], skip in [0, 10^9],
    // qkv_bias in {0, 1}; 2^40 would also overflow an int.
    static const struct { const char *attr, *kind; long long value; } bad[] = {
        {"d_out", "zero", 0},       {"d_out", "negative", -1},    {"d_out", "huge", 1ll << 40},
        {"skip", "negative", -1},   {"skip", "huge", 1ll << 40},
        {"qkv_bias", "two", 2},     {"qkv_bias", "negative", -1}, {"qkv_bias", "huge", 1ll << 40},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (strcmp(bad[k].attr, attr)) continue;
        ACASE(bad[k].kind);
        put_int_attr(f, attr, bad[k].value);
        ADONE();
    }
#undef ACASE
#undef ADONE
}

// A weight of the right rank and the wrong shape: one more row, one more
// column, or transposed ((d_out, d_in) where (d_in, d_out) is wanted).
static void weight_shape_cases(const Chapter *ch, const char *name) {
    static const char *const kinds[] = {"weight_axis0", "weight_axis1", "weight_transposed"};
    for (int k = 0; k < 3; k++) {
        char path[4096], kase[128];
        snprintf(kase, sizeof kase, "%s:%s", kinds[k], name);
        hid_t f = begin(ch, kase, path, sizeof path);
        Array a = read_array(f, name);
        hsize_t dims[2] = {a.dims[0] + (k == 0), a.dims[1] + (k == 1)};
        if (k == 2) dims[0] = a.dims[1], dims[1] = a.dims[0];
        float *v = calloc(dims[0] * dims[1], sizeof *v);
        for (hsize_t i = 0; i < dims[0] * dims[1]; i++) v[i] = a.data[i % a.n];
        put_floats(f, name, "weight", 2, dims, v);
        free(v);
        free(a.data);
        end(f, kase, ch, path, name, "prefix");
    }
}

// Shapes that disagree with each other: the first weight is where it shows.
static void consistency_cases(const Chapter *ch) {
    char path[4096];
    const char *w = ch->weights[0];

    // inputs with one more feature than the weights take.
    hid_t f = begin(ch, "inputs_d_in_mismatch", path, sizeof path);
    Array a = read_array(f, "inputs");
    hsize_t wider[2] = {a.dims[0], a.dims[1] + 1};
    float *v = malloc(wider[0] * wider[1] * sizeof *v);
    for (hsize_t r = 0; r < wider[0]; r++)
        for (hsize_t c = 0; c < wider[1]; c++) v[r * wider[1] + c] = c < a.dims[1] ? a.data[r * a.dims[1] + c] : 0.5f;
    put_floats(f, "inputs", "input", 2, wider, v);
    free(v);
    free(a.data);
    end(f, "inputs_d_in_mismatch", ch, path, w, "finite");

    // d_out says 3, the weights hold 2 columns (v2: rows).
    f = begin(ch, "d_out_mismatch", path, sizeof path);
    put_int_attr(f, "d_out", 3);
    end(f, "d_out_mismatch", ch, path, w, "prefix");
}

// v2 with qkv_bias = 1: the Linear layers also read W_*.bias (d_out,).
static void bias_cases(const Chapter *ch) {
    static const char *const biases[] = {"W_query.bias", "W_key.bias", "W_value.bias"};
    char path[4096];
    hid_t f = begin(ch, "qkv_bias_without_biases", path, sizeof path);
    put_int_attr(f, "qkv_bias", 1);
    end(f, "qkv_bias_without_biases", ch, path, "W_query.bias", "prefix");

    for (int b = 0; b < 3; b++) {
        static const char *const kinds[] = {"bias_missing", "bias_wrong_length", "bias_rank2", "bias_float64",
                                            "bias_nan"};
        for (int k = 0; k < 5; k++) {
            char kase[128];
            snprintf(kase, sizeof kase, "%s:%s", kinds[k], biases[b]);
            f = begin(ch, kase, path, sizeof path);
            put_int_attr(f, "qkv_bias", 1);
            Array w = read_array(f, "W_query.weight");
            float v[3] = {0.25f, -0.125f, 0.5f};
            hsize_t n = w.dims[0];
            for (int i = 0; i < 3; i++) {
                if (i == b) continue;
                put_floats(f, biases[i], "weight", 1, &n, v);
            }
            hsize_t longer = n + 1, row[2] = {1, n};
            double dv[3] = {0.25, -0.125, 0.5};
            if (k == 1) put_floats(f, biases[b], "weight", 1, &longer, v);
            if (k == 2) put_floats(f, biases[b], "weight", 2, row, v);
            if (k == 3) put_dataset(f, biases[b], "weight", H5T_IEEE_F64LE, 1, &n, H5T_NATIVE_DOUBLE, dv, H5P_DEFAULT);
            if (k == 4) {
                float nv[3] = {0.25f, NAN, 0.5f};
                put_floats(f, biases[b], "weight", 1, &n, nv);
            }
            free(w.data);
            end(f, kase, ch, path, biases[b], "finite");  // the cell line says qkv_bias=True
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: make_malformed FIXTURES_DIR OUT_DIR\n");
        return 2;
    }
    g.fixtures = argv[1];
    remove_tree(argv[2]);
    if (mkdir(argv[2], 0755) != 0) fatal("%s: %s", argv[2], strerror(errno));
    // Absolute paths in the manifest: the checker may run from anywhere.
    char cwd[2048];
    if (argv[2][0] == '/') snprintf(g.out, sizeof g.out, "%s", argv[2]);
    else if (getcwd(cwd, sizeof cwd)) snprintf(g.out, sizeof g.out, "%s/%s", cwd, argv[2]);
    else fatal("getcwd: %s", strerror(errno));
    char manifest[4200];
    snprintf(manifest, sizeof manifest, "%s/catalogue.tsv", g.out);
    g.manifest = fopen(manifest, "w");
    if (!g.manifest) fatal("%s: %s", manifest, strerror(errno));
    fprintf(g.manifest, "# case\tchapter\tpath\textra-args\tmust-mention\tstdout (written by tools/make_malformed)\n");

    for (int c = 0; c < N_CHAPTERS; c++) {
        const Chapter *ch = &chapters[c];
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", g.out, ch->name);
        if (mkdir(dir, 0755) != 0) fatal("%s: %s", dir, strerror(errno));
        file_cases(ch, &chapters[(c + 1) % N_CHAPTERS]);
        chapter_attr_cases(ch);
        group_cases(ch);
        input_cases(ch);
        for (int w = 0; ch->weights[w]; w++) {
            dataset_cases(ch, "weight", ch->weights[w], "weight");
            weight_shape_cases(ch, ch->weights[w]);
        }
        if (ch->weights[0]) consistency_cases(ch);
        if (ch->d_out) attr_cases(ch, "d_out", 0);
        if (ch->seed) attr_cases(ch, "seed", 1);
        if (ch->skip) attr_cases(ch, "skip", 0);
        if (ch->qkv_bias) {
            attr_cases(ch, "qkv_bias", 0);
            bias_cases(ch);
        }
    }
    if (fclose(g.manifest) != 0) fatal("%s: cannot write", manifest);
    printf("make_malformed: %d kinds, %d cases in %s\n", g.n_kinds, g.cases, manifest);
    return 0;
}
