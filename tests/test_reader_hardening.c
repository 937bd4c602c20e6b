// test_reader_hardening: the fixture reader against hostile and unusual
// files, and the reader child's limits; text_escape; the dump target checks.
//
// Each case writes its file with the plain HDF5 API (in this process: files
// of our own), then checks the reader's answer: the value, or one line that
// names the cause. The limits are lowered through FixtureOptions so that
// each is hit in well under a second of CPU time, on any machine, but the
// CPU-time limit: a second (RLIMIT_CPU's least), run with --full or
// LITATTN_TESTS=full only.
//
// usage: test_reader_hardening [--full]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dump.h"
#include "error.h"
#include "fixture.h"
#include "harness.h"
#include "hdf5_snapshot.h"

static int failures;
static char dir[512];

static void report(int ok, const char *what, const char *detail) {
    printf("%s %-58s %s\n", ok ? "ok  " : "FAIL", what, detail);
    failures += !ok;
}

static void path_in_dir(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

// err holds every fragment, on one line, with no raw control character.
static int says(const char *err, const char *const *fragments) {
    for (; *fragments; fragments++)
        if (!strstr(err, *fragments)) return 0;
    char safe[FIXTURE_ERR_LEN];
    text_escape(safe, sizeof safe, err);
    return !strcmp(safe, err);
}
#define SAYS(err, ...) says(err, (const char *const[]){__VA_ARGS__, NULL})

// --- text_escape -------------------------------------------------------------

static void test_text_escape(void) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain text, ok", "plain text, ok"},
        {"a\nb\tc\x1b[2J", "a\\x0ab\\x09c\\x1b[2J"},
        {"del\x7f", "del\\x7f"},
        {"raw C1 \x9b" "31m", "raw C1 \\x9b31m"},
        {"UTF-8 C1 \xc2\x9b" "0m", "UTF-8 C1 \\xc2\\x9b0m"},
        {"caf\xc3\xa9 \xc2\xa0nbsp \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xc2\xa0nbsp \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"overlong \xc0\xaf, surrogate \xed\xa0\x80, cut \xe2\x82", "overlong \\xc0\\xaf, surrogate \\xed\\xa0\\x80, cut \\xe2\\x82"},
        {"back\\slash stays", "back\\slash stays"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256], again[256];
        size_t n = text_escape(out, sizeof out, cases[i].in);
        text_escape(again, sizeof again, out);
        int ok = !strcmp(out, cases[i].out) && n == strlen(out) && !strcmp(again, out);
        report(ok, "text_escape", out);
    }
    // A short buffer: cut before an escape, never inside one; the full length returned.
    char small[8];
    size_t n = text_escape(small, sizeof small, "abcde\x1b" "fg");
    report(!strcmp(small, "abcde") && n == 11, "text_escape into 8 bytes: cut whole", small);
    n = text_escape(small, sizeof small, "ab\xe2\x82\xac\xe2\x82\xac");
    report(!strcmp(small, "ab\xe2\x82\xac") && n == 8, "text_escape: a UTF-8 character is not cut", small);
    report(text_escape(NULL, 0, "\x01") == 4, "text_escape with no buffer: the length", "4");
}

// --- attributes ----------------------------------------------------------------

static void put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *value) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, mtype, value);
    H5Aclose(attr);
    H5Sclose(space);
}

static void put_string(hid_t loc, const char *name, const char *value) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    put_attr(loc, name, type, type, &value);
    H5Tclose(type);
}

static void test_attributes(void) {
    char path[600], err[FIXTURE_ERR_LEN];
    path_in_dir(path, sizeof path, "attrs.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    unsigned long long umax = UINT64_MAX, five = 5;
    double p = 0.1;
    float q = 0.25f;
    long long big = 1LL << 40;
    put_attr(f, "umax", H5T_STD_U64LE, H5T_NATIVE_ULLONG, &umax);
    put_attr(f, "five", H5T_STD_U8LE, H5T_NATIVE_ULLONG, &five);
    put_attr(f, "dropout", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &p);
    put_attr(f, "q32", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &q);
    put_attr(f, "big", H5T_STD_I64LE, H5T_NATIVE_LLONG, &big);
    hid_t null_space = H5Screate(H5S_NULL);
    H5Aclose(H5Acreate2(f, "nothing", H5T_STD_I64LE, null_space, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(null_space);
    char *huge = malloc((1 << 20) + 1);
    memset(huge, 'x', 1 << 20);
    huge[1 << 20] = '\0';
    put_string(f, "huge", huge);
    free(huge);
    put_string(f, "escape", "ch03\x1b[2J\x9b\xc2\x9b\x7f");
    H5Fclose(f);

    Fixture *fx = fixture_open(path, NULL, err);
    report(fx != NULL, "a file of odd attributes opens", fx ? path : err);
    if (!fx) return;
    long long v = 0;
    int ok = !fixture_attr_int(fx, "umax", &v, err) && SAYS(err, "'umax'", "18446744073709551615", "uint64");
    report(ok, "uint64 2^64-1 is reported as itself", err);
    ok = !fixture_attr_int_in(fx, "umax", 1, 1024, &v, err) && SAYS(err, "[1, 1024]", "found 18446744073709551615");
    report(ok, "uint64 2^64-1 against a range", err);
    ok = fixture_attr_int(fx, "five", &v, err) && v == 5;
    report(ok, "a uint8 attribute reads as an integer", ok ? "5" : err);
    ok = !fixture_attr_int_in(fx, "big", 0, 1000, &v, err) && SAYS(err, "found 1099511627776 (int64)");
    report(ok, "a range error names the real value and type", err);
    double d = 0;
    ok = fixture_attr_double(fx, "dropout", &d, err) && d == 0.1;
    report(ok, "a float64 attribute (fixture_attr_double)", ok ? "0.1" : err);
    ok = fixture_attr_double(fx, "q32", &d, err) && d == 0.25;
    report(ok, "a float32 attribute read as a double", ok ? "0.25" : err);
    ok = !fixture_attr_double(fx, "big", &d, err) && SAYS(err, "expected a single float, found int64");
    report(ok, "an integer where a float is expected", err);
    ok = !fixture_attr_int(fx, "nothing", &v, err) && SAYS(err, "'nothing'", "a null dataspace (no value)");
    report(ok, "a null-dataspace attribute", err);
    char buf[64];
    ok = !fixture_attr_string(fx, "huge", buf, sizeof buf, err) &&
         SAYS(err, "'huge'", "a string of 1048576 bytes, longer than the 64 KiB limit");
    report(ok, "a 1 MiB string attribute", err);
    ok = fixture_attr_string(fx, "escape", buf, sizeof buf, err) && !strcmp(buf, "ch03\x1b[2J\x9b\xc2\x9b\x7f");
    report(ok, "a string with controls reads as it is (escaping is for display)", ok ? "read" : err);
    FixtureAttrInfo info;
    ok = fixture_attr_info(fx, "umax", &info) && info.kind == FIXTURE_ATTR_INT && info.is_unsigned &&
         !strcmp(info.type, "uint64") && info.count == 1 && !info.is_null;
    ok = ok && fixture_attr_info(fx, "nothing", &info) && info.is_null && info.count == 0;
    ok = ok && fixture_attr_info(fx, "huge", &info) && info.kind == FIXTURE_ATTR_STRING && !info.read_ok &&
         info.length == 1 << 20;
    ok = ok && !fixture_attr_info(fx, "absent", &info);
    report(ok, "fixture_attr_info: kind, type, count, null, length", "");
    fixture_close(fx);
    unlink(path);
}

// --- datasets of every rank, the element limit, groups --------------------------------

static void put_floats(hid_t loc, const char *name, int rank, const hsize_t *dims) {
    hsize_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *v = malloc(n * sizeof *v);
    for (hsize_t i = 0; i < n; i++) v[i] = (float)i;
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(loc, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(ds);
    H5Sclose(space);
    free(v);
}

static void test_ranks_and_limits(void) {
    char path[600], err[FIXTURE_ERR_LEN];
    path_in_dir(path, sizeof path, "ranks.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d3[3] = {2, 3, 4}, d4[4] = {2, 1, 3, 2}, d5[5] = {1, 1, 1, 1, 2}, over[1] = {(1 << 20) + 1};
    put_floats(f, "r3", 3, d3);
    put_floats(f, "r4", 4, d4);
    put_floats(f, "r5", 5, d5);
    put_floats(f, "over", 1, over);
    for (int g = 0; g < 3; g++) {
        char name[16];
        snprintf(name, sizeof name, "g%d", g);
        hid_t grp = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t d = (hsize_t)g + 1;
        put_floats(grp, "x", 1, &d);
        put_string(grp, "kernel", name);
        H5Gclose(grp);
    }
    H5Fclose(f);

    // The snapshot itself: values of rank 0 to 4 are read, rank 5 only described.
    int fd = open(path, O_RDONLY);
    Snapshot snap;
    int ok = hdf5_snapshot(fd, path, NULL, NULL, &snap, err, sizeof err);
    close(fd);
    int r3 = 0, r4 = 0, r5 = 0;
    for (int i = 0; ok && i < snap.groups[0].n_objects; i++) {
        const SnapObject *o = &snap.groups[0].objects[i];
        if (!strcmp(o->name, "r3")) r3 = o->values_read == 1 && o->numel == 24 && o->values[23] == 23.0f;
        if (!strcmp(o->name, "r4")) r4 = o->values_read == 1 && o->numel == 12 && o->rank == 4 && o->dims[3] == 2;
        if (!strcmp(o->name, "r5")) r5 = o->values_read == 0 && o->rank == 5;
    }
    report(ok && r3 && r4 && r5, "values of rank 3 and 4 read, rank 5 described", ok ? "" : err);
    if (ok) snapshot_free(&snap);

    Fixture *fx = fixture_open(path, NULL, err);
    Tensor t;
    ok = fx && !fixture_read(fx, "over", (Size){1, {SIZE_ANY}}, &t, err) && SAYS(err, "at most 1048576 elements");
    report(ok, "2^20 + 1 values: past a fixture's limit", err);
    fixture_close(fx);
    FixtureOptions trusted = {.max_elements = 1LL << 26};
    fx = fixture_open_with(path, NULL, &trusted, err);
    ok = fx && fixture_read(fx, "over", (Size){1, {SIZE_ANY}}, &t, err) && t.data[1 << 20] == (float)(1 << 20);
    report(ok, "2^20 + 1 values: read with a raised limit", ok ? "read" : err);
    fixture_close(fx);

    // Every group in one snapshot.
    Fixture *all = fixture_open_all(path, err);
    ok = all != NULL;
    for (int g = 0; ok && g < 3; g++) {
        char name[16], kernel[16];
        snprintf(name, sizeof name, "g%d", g);
        Fixture *grp = fixture_group(all, name, err);
        ok = grp && fixture_attr_string(grp, "kernel", kernel, sizeof kernel, err) && !strcmp(kernel, name) &&
             fixture_read(grp, "x", (Size){1, {g + 1}}, &t, err) && strstr(fixture_path(grp), name) != NULL;
        fixture_close(grp);
    }
    report(ok, "fixture_open_all: each group answered from one snapshot", ok ? "3 groups" : err);
    Fixture *none = all ? fixture_group(all, "no_such", err) : NULL;
    report(all && !none && SAYS(err, "expected a group 'no_such', found none"), "fixture_group: a missing group", err);
    none = all ? fixture_group(all, "r3", err) : NULL;
    report(all && !none && SAYS(err, "expected a group 'r3', found a dataset"), "fixture_group: a dataset", err);
    fixture_close(all);
    tensor_release_all();
    unlink(path);
}

// --- the file: locked, written, a long path, a name with controls -------------------------

static void test_files(void) {
    char path[600], copy[600], err[FIXTURE_ERR_LEN];
    path_in_dir(path, sizeof path, "locked.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t two = 2;
    put_floats(f, "x", 1, &two);
    H5Fclose(f);

    // An HDF5 writer holding the file (HDF5 1.10 takes an exclusive lock).
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    Fixture *fx = fixture_open(path, NULL, err);
    report(!fx && SAYS(err, path, "locked by a writer"), "a file an HDF5 writer has open", err);
    fixture_close(fx);
    H5Fclose(f);
    // The same with a plain flock.
    int fd = open(path, O_RDWR);
    flock(fd, LOCK_EX);
    fx = fixture_open(path, NULL, err);
    report(!fx && SAYS(err, path, "locked by a writer"), "a file under an exclusive flock", err);
    fixture_close(fx);
    close(fd);
    fx = fixture_open(path, NULL, err);
    report(fx != NULL, "the same file once the writer is gone", fx ? "read" : err);
    fixture_close(fx);

    // A copy taken while a writer had it open with the newest format: the
    // superblock still says so.
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    path_in_dir(copy, sizeof copy, "crashed_writer.h5");
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    put_floats(f, "x", 1, &two);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, copy);
    int rc = system(cmd);
    H5Fclose(f);
    H5Pclose(fapl);
    fx = rc == 0 ? fixture_open(copy, NULL, err) : NULL;
    report(rc == 0 && !fx && SAYS(err, copy, "a writer still has it open", "h5clear"),
           "a file whose superblock says a writer has it open", err);
    fixture_close(fx);
    unlink(copy);

    // Longer than PATH_MAX: refused, not cut to a buffer.
    char *long_path = malloc(PATH_MAX + 100);
    memset(long_path, 'a', PATH_MAX + 99);
    long_path[0] = '/';
    long_path[PATH_MAX + 99] = '\0';
    fx = fixture_open(long_path, NULL, err);
    report(!fx && SAYS(err, "at most 4095 bytes", "found one of 4195 bytes"), "a path longer than PATH_MAX", err);
    free(long_path);

    // A name full of terminal controls: quoted escaped.
    path_in_dir(copy, sizeof copy, "bad\x1b[2J\x9b\xc2\x9b\x07.h5");
    FILE *t = fopen(copy, "w");
    if (t) fputs("no HDF5 here\n", t), fclose(t);
    fx = fixture_open(copy, NULL, err);
    report(!fx && SAYS(err, "bad\\x1b[2J\\x9b\\xc2\\x9b\\x07.h5", "without an HDF5 signature"),
           "a file name with control characters, escaped", err);
    unlink(copy);
    unlink(path);
}

// --- names up to the longest accepted ---------------------------------------------

// A dataset and an attribute whose names have ERROR_NAME_MAX bytes are read;
// names one byte longer are refused, saying so; and a message that quotes a
// name of the longest kind keeps its cause whole.
static void test_long_names(void) {
    char path[600], err[FIXTURE_ERR_LEN], name[ERROR_NAME_MAX + 2];
    path_in_dir(path, sizeof path, "names.h5");
    memset(name, 'n', sizeof name - 1);
    name[ERROR_NAME_MAX] = '\0';
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t two = 2;
    hid_t space = H5Screate_simple(1, &two, NULL);
    float values[2] = {1.5f, -2.0f};
    hid_t ds = H5Dcreate2(f, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(ds);
    H5Sclose(space);
    H5Fclose(f);

    err[0] = '\0';
    Fixture *fx = fixture_open(path, NULL, err);
    Tensor t;
    int ok = fx && fixture_read(fx, name, (Size){1, {2}}, &t, err) && t.data[1] == -2.0f;
    report(ok, "a dataset name of ERROR_NAME_MAX bytes: read", ok ? "read" : err);
    if (ok) tensor_free(t);
    // One byte longer: refused, with both lengths.
    name[ERROR_NAME_MAX] = 'n';
    name[ERROR_NAME_MAX + 1] = '\0';
    char longer[64];
    snprintf(longer, sizeof longer, "found one of %d bytes", ERROR_NAME_MAX + 1);
    ok = fx && !fixture_read(fx, name, (Size){1, {2}}, &t, err) && SAYS(err, path, "a dataset name", longer);
    report(ok, "a dataset name one byte longer: refused", err);
    ok = fx && !fixture_has_attr(fx, name) && !fixture_attr_string(fx, name, longer, sizeof longer, err) &&
         SAYS(err, "an attribute name", "at most");
    report(ok, "an attribute name one byte longer: refused", err);
    // The longest name, missing: "expected ..., found no such dataset" whole.
    name[ERROR_NAME_MAX] = '\0';
    name[0] = 'm';
    ok = fx && !fixture_read(fx, name, (Size){1, {2}}, &t, err) && SAYS(err, name, "found no such dataset");
    report(ok, "a missing dataset of the longest name: the cause whole", err);
    fixture_close(fx);
    unlink(path);
}

// --- the child's limits -------------------------------------------------------------

// One dataset of n values in chunks of `chunk`, none of them stored: HDF5
// fills the values in. A file of a few KiB that takes a lot of memory to read.
static void write_unstored(const char *path, hsize_t n, hsize_t chunk) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(1, &n, NULL);
    H5Pset_chunk(dcpl, 1, &chunk);
    H5Dclose(H5Dcreate2(f, "unstored", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Sclose(space);
    H5Pclose(dcpl);
    H5Fclose(f);
}

static long long vm_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmSize:", 7)) kb = atoll(line + 7);
    if (f) fclose(f);
    return kb * 1024;
}

extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// Whether an address-space cap holds here at all: a child capped at its
// address space and 16 MiB more must fail to allocate 64 MiB. It does not
// under qemu-user, which takes setrlimit(RLIMIT_AS) and applies nothing
// (its own emulator needs the address space), so the cross build's run
// under qemu (tools/build/cross/arm64.sh) cannot prove the reader's memory limit.
static int address_space_cap_holds(void) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 1;  // the test below runs, and says what it found
    if (pid == 0) {
        struct rlimit r = {(rlim_t)(vm_size() + (16 << 20)), (rlim_t)(vm_size() + (16 << 20))};
        if (setrlimit(RLIMIT_AS, &r) != 0) _exit(2);
        volatile char *p = malloc(64 << 20);
        if (p) p[0] = 1;
        _exit(p ? 1 : 0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

static int full;  // --full or LITATTN_TESTS=full: the CPU-time limit too

static void test_limits(void) {
    char path[600], err[FIXTURE_ERR_LEN];
    // CPU and wall time: a file whose every name takes HDF5 about a second
    // of CPU time to open, 4096 names (harness.h): no CPU gets through it
    // before its limit, so each limit fires on any machine, however fast,
    // and says so in its own words.
    path_in_dir(path, sizeof path, "endless.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int made = f >= 0 && write_endless_opens(f, HARNESS_ENDLESS_LINKS);
    if (f >= 0 && H5Fclose(f) < 0) made = 0;
    report(made, "a file of endless reads written", path);
    // CPU time: 1 s, RLIMIT_CPU's least, so a second of CPU time: with
    // --full only (the default run's budget is 15 s of two cores).
    err[0] = '\0';
    Fixture *fx = NULL;
    if (full) {
        FixtureOptions cpu = {.cpu_seconds = 1};
        fx = fixture_open_with(path, NULL, &cpu, err);
        report(!fx && SAYS(err, path, "within 1 s of CPU time", "'endless_0"), "the CPU-time limit", err);
        fixture_close(fx);
    }
    // Wall time: 50 ms (the work takes at least as long in wall time as in CPU time).
    err[0] = '\0';
    FixtureOptions wall = {.wall_seconds = 0.05};
    fx = fixture_open_with(path, NULL, &wall, err);
    report(!fx && SAYS(err, path, "in under 0.05 s", "blocked read"), "the wall-clock limit", err);
    fixture_close(fx);
    unlink(path);

    // Memory: the address space as it is now and 16 MiB more; the values of
    // a dataset of 64 MiB then cannot be held. (Not under a sanitizer: no cap there.)
    if (__sanitizer_set_death_callback) {
        printf("SKIP the memory limit: no address-space cap under a sanitizer\n");
        return;
    }
    if (!address_space_cap_holds()) {
        printf("SKIP the memory limit: a child capped by setrlimit(RLIMIT_AS) at its address space and 16 MiB more "
               "still allocated 64 MiB (qemu-user applies no such cap)\n");
        return;
    }
    path_in_dir(path, sizeof path, "big.h5");
    write_unstored(path, 1 << 24, 1 << 16);
    FixtureOptions mem = {.max_elements = 1 << 24, .memory_bytes = vm_size() + (16 << 20)};
    fx = fixture_open_with(path, NULL, &mem, err);
    Tensor t;
    int ok = fx ? !fixture_read(fx, "unstored", (Size){1, {SIZE_ANY}}, &t, err) &&
                      SAYS(err, "'unstored'", "MiB of memory")
                : SAYS(err, path, "MiB of memory");
    report(ok, "the memory limit", err);
    fixture_close(fx);
    unlink(path);
}

// --- --dump targets (the checks alone) -------------------------------------------------

static void test_dump_targets(void) {
    char target[600], fixture[600], err[FIXTURE_ERR_LEN], err2[FIXTURE_ERR_LEN];
    path_in_dir(fixture, sizeof fixture, "in.h5");
    FILE *t = fopen(fixture, "w");
    if (t) fputs("input\n", t), fclose(t);
    struct stat st;
    stat(fixture, &st);
    DumpInput in = {.dev = st.st_dev, .ino = st.st_ino, .what = "the fixture"};  // by device and inode alone
    path_in_dir(target, sizeof target, "new.h5");
    report(dump_check_target(target, &in, 1, err, sizeof err), "dump target: a new file", target);
    report(!dump_check_target(fixture, &in, 1, err, sizeof err) && SAYS(err, "the fixture being read"),
           "dump target: the input", err);
    // By resolved path alone: a file not there yet, named another way ("dir/./x").
    DumpInput named;
    char missing[600], spelled[700];
    path_in_dir(missing, sizeof missing, "not_yet.txt");
    dump_input_of(missing, "the text (--text)", &named);
    snprintf(spelled, sizeof spelled, "%.*s/./not_yet.txt", (int)(strrchr(missing, '/') - missing), missing);
    report(named.dev == 0 && named.ino == 0 && named.path[0] == '/', "dump input: a missing file has a path, no id",
           named.path);
    report(!dump_check_target(spelled, &named, 1, err, sizeof err) && SAYS(err, "the text (--text) being read"),
           "dump target: an input by resolved path", err);
    report(dump_check_target(target, &named, 1, err, sizeof err), "dump target: another path than the input's", err);
    report(!dump_check_target("/dev/null", &in, 1, err, sizeof err) && SAYS(err, "a character device"),
           "dump target: /dev/null", err);
    report(!dump_check_target(dir, &in, 1, err, sizeof err) && SAYS(err, "a directory"), "dump target: a directory",
           err);
    report(!dump_check_target("", &in, 1, err, sizeof err) && SAYS(err, "empty"), "dump target: an empty name", err);

    // A whole dump, written and committed: the file appears, nothing else.
    Dump *d = dump_open(target, &in, 1, err, sizeof err);
    Tensor x = tensor_zeros(SIZE(3));
    int ok = d && dump_add(d, "x", "output", x, err, sizeof err) && dump_commit(d, err, sizeof err);
    report(ok && access(target, R_OK) == 0, "dump_open, dump_add, dump_commit", ok ? target : err);
    // Aborted: the old file stays.
    d = dump_open(target, &in, 1, err, sizeof err);
    if (d) dump_abort(d);
    Fixture *fx = fixture_open(target, NULL, err);
    report(fx && fixture_has(fx, "x"), "dump_abort leaves the earlier dump", fx ? "intact" : err);
    fixture_close(fx);
    // A commit that fails (the file size limit, lowered for this process
    // alone and raised again): reported with its cause, the old dump kept,
    // no temporary left, and this process alive (SIGXFSZ is ignored).
    struct rlimit old_limit, low = {4096, 0};
    getrlimit(RLIMIT_FSIZE, &old_limit);
    low.rlim_max = old_limit.rlim_max;
    d = dump_open(target, &in, 1, err, sizeof err);
    Tensor big = tensor_zeros(SIZE(4096));
    ok = d && dump_add(d, "big", "output", big, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &low);
    int committed = ok && dump_commit(d, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old_limit);
    fx = fixture_open(target, NULL, err2);
    int kept = fx && fixture_has(fx, "x") && !fixture_has(fx, "big");
    fixture_close(fx);
    char listing[1024] = "";
    DIR *dd = opendir(dir);
    struct dirent *e;
    while (dd && (e = readdir(dd)) != NULL)
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            snprintf(listing + strlen(listing), sizeof listing - strlen(listing), " %s", e->d_name);
    if (dd) closedir(dd);
    report(ok && !committed && SAYS(err, "RLIMIT_FSIZE") && kept && !listing[0],
           "a failed commit: cause named, old dump kept, no temporary", listing[0] ? listing : err);
    unlink(target);
    unlink(fixture);
    tensor_release_all();
}

int main(int argc, char **argv) {
    full = harness_full_selection("test_reader_hardening", argc, argv);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--full") != 0) {
            fprintf(stderr, "test_reader_hardening: %s: expected --full\n", argv[i]);
            return 2;
        }
    temp_path(dir, sizeof dir, "hardening");
    unlink(dir);
    if (mkdir(dir, 0700) != 0) {
        perror(dir);
        return 1;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    test_text_escape();
    test_attributes();
    test_ranks_and_limits();
    test_files();
    test_long_names();
    test_limits();
    test_dump_targets();
    rmdir(dir);
    if (!full) printf("(the default selection: every case but the CPU-time limit, a second of CPU; --full runs it)\n");
    printf("%s\n", failures ? "FAILED" : "every case answered as expected");
    return failures ? 1 : 0;
}
