// make_malformed: writes the `errors` suite's catalogue of broken fixtures.
//
//   make_malformed CHAPTERS_TXT FIXTURES_DIR OUT_DIR [DEPFILE STAMP]
//
// For every chapter of CHAPTERS_TXT (chapters/chapters.txt) it copies the
// chapter's book fixture (its first variant; its `small` variant where it
// lists one, the book's being too slow to run in every case) byte for byte, then breaks
// exactly one thing in the copy: the file itself (truncated, empty, text, a
// directory, unreadable, missing, a name full of control characters), one
// attribute, or one dataset the chapter reads. What to break is read from
// the good fixture itself, not from a table of chapters: every dataset with
// role "input", "weight" or "random", the first gradient record ("<...>.grad",
// role "output", which a module chapter checks once it has computed it),
// every root attribute that is not one of the exporter's provenance
// records, each by its own type. So a new
// chapter, dataset or attribute gets its cases without a line here.
//
// Whether a chapter reads an attribute at all is not in the fixture: each
// attribute gets a probe case, attr_probe:NAME (its value replaced by one
// of another type), and the checker runs an attribute's other cases only
// for a chapter that refuses its probe (tests/error_check.c).
//
// Every case is one line of OUT_DIR/catalogue.tsv:
//
//   case<TAB>chapter<TAB>path<TAB>extra-args<TAB>must-mention<TAB>stdout
//
// must-mention is what the chapter's error line has to name: '&' joins
// texts that must all appear, '|' alternatives of which one must (empty for
// file-level cases, where the path is enough). stdout says what the chapter
// may print before it stops: `prefix` (the start of what it prints on its
// good fixture, cell markers aside), `finite` (the broken thing changes what
// comes first, e.g. other inputs: only finite numbers), or `either` (the
// file may be valid for this chapter: exit 0 with the good run's output, or
// a refusal by the usual rules). Case `good` is the untouched copy, which
// the chapter must accept.
//
// Nothing here is committed: the build runs this (tools/meson.build) again
// whenever a file it read changes: DEPFILE names them (the chapter table
// and each chapter's book fixture) as what STAMP, an empty file written
// last, depends on. (Not OUT_DIR itself: the errors suite makes and
// removes scratch directories in it, which changes its time.)
#include <dirent.h>
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings.h"

#define MAX_CHAPTERS 64
#define MAX_NAMES 64

typedef struct {
    char name[128];
    H5T_class_t cls;
    int digest;  // <tensor>.role/.sha256/.shape: a digest-only tensor's record, for fixture_check
} RootAttr;

// A chapter as chapters.txt and its book fixture describe it.
typedef struct {
    char name[128], variant[64];
    int draws;                           // "yes" in chapters.txt: takes --seed
    char inputs[MAX_NAMES][128];         // datasets with role "input", in name order
    int input_rank[MAX_NAMES], n_inputs;
    char weights[MAX_NAMES][128];        // role "weight" or "random"
    int n_weights;
    char grad[128];                      // the first gradient record in name order ("batch.grad"), or ""
    RootAttr attrs[MAX_NAMES];           // root attributes other than provenance
    int n_attrs;
} Chapter;

static Chapter chapters[MAX_CHAPTERS];
static int n_chapters;

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
    snprintf(buf, len, "%s/%.127s.%.63s.h5", g.fixtures, ch->name, ch->variant);
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

#define MAX_RANK 4

typedef struct {
    int rank;
    hsize_t dims[MAX_RANK];
    size_t n;
    float *data;
} Array;

// An integer attribute of the root, which must be there.
static long long root_int(hid_t loc, const char *name) {
    long long v = 0;
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
    MUST(attr);
    MUST(H5Aread(attr, H5T_NATIVE_LLONG, &v));
    H5Aclose(attr);
    return v;
}

static Array read_array(hid_t loc, const char *name) {
    Array a = {0, {1, 1, 1, 1}, 1, NULL};
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    MUST(ds);
    hid_t space = H5Dget_space(ds);
    a.rank = H5Sget_simple_extent_ndims(space);
    if (a.rank < 0 || a.rank > MAX_RANK) fatal("dataset '%s' has rank %d", name, a.rank);
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

    // A name full of terminal controls (ESC, BEL, DEL, C1 CSI raw and as
    // UTF-8), on a file cut short: the error quotes the name, escaped.
    char named[4400];
    snprintf(named, sizeof named, "%s/%.127s/name_\x1b[2J\x07\x7f\x9b\xc2\x9b.h5", g.out, ch->name);
    spit(named, bytes, 100);
    record("control_characters_in_name", ch, named, "", "\\x1b[2J\\x07\\x7f\\x9b\\xc2\\x9b", "prefix");

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

// --- attributes ------------------------------------------------------------------

// The exporter's provenance records (tools/export/write.py, provenance):
// written for people and for --check, read by no chapter.
static int is_provenance(const char *name) {
    static const char *const names[] = {"variant", "mirrors", "command", "torch_version", "torch_config", "blas",
                                        "cpu_capability", "inputs_seed"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

// The rules the chapters hold attributes to are lib/io/settings.c's table.

static void put_null_attr(hid_t loc, const char *name, hid_t type) {
    if (H5Aexists(loc, name) > 0) MUST(H5Adelete(loc, name));
    hid_t space = H5Screate(H5S_NULL);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    MUST(attr);
    H5Aclose(attr);
    H5Sclose(space);
}

// Every kind of broken attribute, by the attribute's own type. The cases
// are named attr_<kind>:<name>; attr_probe:<name> tells the checker whether
// the chapter reads the attribute at all.
static void attr_cases(const Chapter *ch, const RootAttr *at) {
    char path[4096], kase[160], mention[200];
    const char *attr = at->name;
    hid_t f;
#define ACASE(kind) (snprintf(kase, sizeof kase, "attr_%s:%s", kind, attr), f = begin(ch, kase, path, sizeof path))
#define ADONE() end(f, kase, ch, path, attr, "prefix")
#define ADONE_WITH(text) (snprintf(mention, sizeof mention, "%s&%s", attr, text), end(f, kase, ch, path, mention, "prefix"))
    const int is_string = at->cls == H5T_STRING, is_int = at->cls == H5T_INTEGER, is_float = at->cls == H5T_FLOAT;
    // optional: absent means a default (no earlier draws), so no "missing" case.
    int optional = !strcmp(attr, "skip");

    ACASE("probe");
    if (is_string) put_int_attr(f, attr, 7);
    else put_string_attr(f, attr, "probe");
    ADONE();
    // A digest record is read by fixture_check, never by the chapter: its
    // probe shows that, and the other kinds would only be skipped.
    if (at->digest) return;

    if (!optional) {
        ACASE("missing");
        MUST(H5Adelete(f, attr));
        ADONE();
    }

    // No value at all: a null dataspace of the attribute's own type.
    ACASE("null_dataspace");
    hid_t type = H5Tcopy(is_string ? H5T_C_S1 : is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE);
    if (is_string) H5Tset_size(type, H5T_VARIABLE);
    put_null_attr(f, attr, type);
    H5Tclose(type);
    ADONE_WITH("null dataspace");

    ACASE("array");
    if (is_string) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, H5T_VARIABLE);
        const char *two[2] = {ch->name, ch->name};
        put_attr(f, attr, st, st, 2, two);
        H5Tclose(st);
    } else {
        long long pair[2] = {1, 2};
        put_attr(f, attr, H5T_STD_I64LE, H5T_NATIVE_LLONG, 2, pair);
    }
    ADONE();

    if (is_string) {
        ACASE("int");
        put_int_attr(f, attr, 123);
        ADONE();
        // 1 MiB of text: described by its length, not read.
        ACASE("1MiB");
        char *big = malloc((1 << 20) + 1);
        memset(big, 'x', 1 << 20);
        big[1 << 20] = '\0';
        put_string_attr(f, attr, big);
        free(big);
        ADONE_WITH("1048576");
        // Values a string setting's rule refuses: a probability outside [0, 1]
        // or not a number; a seed that is not an integer torch.manual_seed takes.
        const SettingRule *srule = setting_rule(attr);
        static const struct { SettingKind kind; const char *case_kind, *value; } bad_text[] = {
            {SETTING_FLOAT, "above_max", "1.5"},        {SETTING_FLOAT, "below_min", "-0.1"},
            {SETTING_FLOAT, "not_a_number", "half"},    {SETTING_FLOAT, "nan", "nan"},
            {SETTING_SEED, "not_an_integer", "12a"},    {SETTING_SEED, "a_float", "123.0"},
            {SETTING_SEED, "above_max", "18446744073709551616"},
        };
        for (size_t k = 0; srule && k < sizeof bad_text / sizeof *bad_text; k++) {
            if (bad_text[k].kind != srule->kind) continue;
            ACASE(bad_text[k].case_kind);
            put_string_attr(f, attr, bad_text[k].value);
            ADONE_WITH(bad_text[k].value);
        }
    }
    if (is_int || is_float) {
        ACASE("string");
        put_string_attr(f, attr, "2");
        ADONE();
    }
    if (is_int) {
        ACASE("float");
        double two = 2.0;
        put_attr(f, attr, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &two);
        ADONE();
        // The largest uint64: to be reported as itself, not as 2^63 - 1.
        ACASE("uint64_max");
        unsigned long long max = UINT64_MAX;
        put_attr(f, attr, H5T_STD_U64LE, H5T_NATIVE_ULLONG, 0, &max);
        ADONE_WITH("18446744073709551615");
        const SettingRule *rule = setting_rule(attr);
        if (rule && (rule->kind == SETTING_INT || rule->kind == SETTING_BOOL)) {
            const struct { const char *kind; long long value; } bad[] = {
                {"below_min", rule->min - 1}, {"above_max", rule->max + 1}, {"huge", 1ll << 40},
            };
            for (int b = 0; b < 3; b++) {
                ACASE(bad[b].kind);
                put_int_attr(f, attr, bad[b].value);
                char v[32];
                snprintf(v, sizeof v, "%lld", bad[b].value);
                ADONE_WITH(v);
            }
        }
    }
    if (is_float) {
        ACASE("int");
        put_int_attr(f, attr, 1);
        ADONE();
    }
    // A head count that does not divide the width it splits (the bonus
    // notebook's embed_dim): in range, but refused by the first class that
    // splits heads (`assert d_out % num_heads == 0`); the chapter checks it
    // as it reads the setting.
    if (is_int && !strcmp(attr, "num_heads")) {
        char src[4096];
        good_path(ch, src, sizeof src);
        hid_t good = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
        MUST(good);
        long long width = H5Aexists(good, "embed_dim") > 0 ? root_int(good, "embed_dim") : 0;
        H5Fclose(good);
        long long heads = 2;
        while (width > 1 && heads < width && width % heads == 0) heads++;
        if (width > 1 && heads < width) {
            ACASE("not_dividing");
            put_int_attr(f, attr, heads);
            snprintf(mention, sizeof mention, "num_heads = %lld&%lld", heads, width);
            end(f, kase, ch, path, mention, "prefix");
        }
    }
#undef ACASE
#undef ADONE
#undef ADONE_WITH
}

// The `chapter` attribute names the program; every chapter checks it.
static void chapter_attr_cases(const Chapter *ch) {
    char path[4096];
    hid_t f = begin(ch, "attr_wrong_value:chapter", path, sizeof path);
    put_string_attr(f, "chapter", "ch03_9_no_such_chapter");
    end(f, "attr_wrong_value:chapter", ch, path, "chapter", "prefix");

    // A value with terminal controls in it: C0 (ESC, BEL), DEL, C1 as a raw
    // byte (0x9b, CSI) and as UTF-8 (U+009B). Quoted in the error, escaped.
    f = begin(ch, "attr_control_characters:chapter", path, sizeof path);
    put_string_attr(f, "chapter", "ch03\x1b[2J\x07\x7f\x9b" "31m\xc2\x9b" "0m");
    end(f, "attr_control_characters:chapter", ch, path, "chapter&\\x1b[2J\\x07\\x7f\\x9b31m\\xc2\\x9b0m", "prefix");
}

// A dataset the chapter reads: its first input, or (a chapter that reads
// no input, the data-loading one) its first weight.
static const char *first_read(const Chapter *ch) { return ch->n_inputs ? ch->inputs[0] : ch->weights[0]; }

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
    char link[4 + 256];
    snprintf(link, sizeof link, "cfg/%s", first_read(ch));
    MUST(H5Ldelete(f, link, H5P_DEFAULT));
    MUST(H5Fclose(f));
    record("group_input_missing", ch, path, "--group cfg", first_read(ch), "prefix");
    H5Fclose(in);

    // --group naming a dataset.
    f = begin(ch, "group_is_dataset", path, sizeof path);
    MUST(H5Fclose(f));
    snprintf(extra, sizeof extra, "--group %s", first_read(ch));
    record("group_is_dataset", ch, path, extra, first_read(ch), "prefix");
}

// A filter no HDF5 library registers: its id is one of those set aside for
// testing (256-511). Here it copies the bytes, so the file is written; a
// reader does not have it.
#define FAKE_FILTER 305
static size_t copy_filter(unsigned flags, size_t n, const unsigned values[], size_t nbytes, size_t *buf_size,
                          void **buf) {
    (void)flags, (void)n, (void)values, (void)buf_size, (void)buf;
    return nbytes;
}

// Data that does not live in the file, or that this reader cannot decode:
// each would read as something (fill values, another file's data, a raw
// file's bytes) if the reader did not refuse it before reading.
static void outside_cases(const Chapter *ch, const char *pfx, const char *name, const char *role) {
    char path[4096], kase[128], other[4200];
    hid_t f, dcpl;
    Array a;
#define CASE(kind) (snprintf(kase, sizeof kase, "%s_%s:%s", pfx, kind, name), f = begin(ch, kase, path, sizeof path), \
                    a = read_array(f, name), dcpl = H5Pcreate(H5P_DATASET_CREATE))
#define DONE() (H5Pclose(dcpl), end(f, kase, ch, path, name, "prefix"), free(a.data))

    // A virtual dataset whose source file is missing: HDF5 reads fill values.
    CASE("vds_missing_source");
    if (a.rank == 0) fatal("dataset '%s' is a scalar: no layout but contiguous or compact", name);
    hid_t vspace = H5Screate_simple(a.rank, a.dims, NULL), sspace = H5Screate_simple(a.rank, a.dims, NULL);
    MUST(H5Pset_virtual(dcpl, vspace, "no_such_source.h5", "/data", sspace));
    H5Sclose(vspace), H5Sclose(sspace);
    put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, NULL, dcpl);
    DONE();

    // External storage: the values in a raw file beside it, which exists.
    CASE("external_storage");
    snprintf(other, sizeof other, "%s.raw", path);
    MUST(H5Pset_external(dcpl, other, 0, (hsize_t)(a.n * sizeof(float))));
    put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, a.data, dcpl);
    DONE();

    // An external link that resolves: to the same dataset in a good copy.
    CASE("external_link_resolving");
    snprintf(other, sizeof other, "%s.target.h5", path);
    {
        char src[4096];
        size_t n;
        good_path(ch, src, sizeof src);
        unsigned char *bytes = slurp(src, &n);
        spit(other, bytes, n);
        free(bytes);
    }
    MUST(H5Ldelete(f, name, H5P_DEFAULT));
    MUST(H5Lcreate_external(other, name, f, name, H5P_DEFAULT, H5P_DEFAULT));
    DONE();

    // A filter this reader's HDF5 does not have (plugins are not loaded).
    CASE("filter_unavailable");
    H5Z_class2_t fake = {H5Z_CLASS_T_VERS, FAKE_FILTER, 1, 1, "litattn test filter", NULL, NULL, copy_filter};
    if (H5Zfilter_avail(FAKE_FILTER) <= 0) MUST(H5Zregister(&fake));
    hsize_t chunk[MAX_RANK] = {1, 1, 1, 1};
    memcpy(chunk, a.dims, (size_t)a.rank * sizeof *chunk);
    MUST(H5Pset_chunk(dcpl, a.rank, chunk));
    MUST(H5Pset_filter(dcpl, FAKE_FILTER, H5Z_FLAG_MANDATORY, 0, NULL));
    put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, a.data, dcpl);
    DONE();
#undef CASE
#undef DONE
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

    // One more axis, of size 1 in front.
    CASE("extra_axis");
    hsize_t more[MAX_RANK + 1] = {1};
    memcpy(more + 1, a.dims, (size_t)a.rank * sizeof *a.dims);
    put_floats(f, name, role, a.rank + 1, more, a.data);
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
    hsize_t none[MAX_RANK];
    memcpy(none, a.dims, sizeof none);
    none[0] = 0;
    put_floats(f, name, role, a.rank ? a.rank : 1, none, NULL);
    DONE();

    // No NaN or infinity kinds: torch computes with them, and so do the
    // chapters (the sweep holds inputs with a NaN).

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
    outside_cases(ch, pfx, name, role);
#undef CASE
#undef DONE
}

static void input_cases(const Chapter *ch, int i) {
    const char *input = ch->inputs[i];
    dataset_cases(ch, "input", input, "input");
    char path[4096], kase[160];
    hid_t f;

    // Declares 2^40 values (4 TiB of float32; 2^20 x 2^20 for a matrix) in
    // chunks of which none is stored: the file stays a few KiB.
    snprintf(kase, sizeof kase, "input_huge:%s", input);
    f = begin(ch, kase, path, sizeof path);
    Array a = read_array(f, input);
    hsize_t big[MAX_RANK], chunk[MAX_RANK];
    for (int d = 0; d < a.rank; d++) big[d] = a.rank == 1 ? 1ull << 40 : 1ull << 20, chunk[d] = 1;
    chunk[a.rank - 1] = 1024;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    MUST(H5Pset_chunk(dcpl, a.rank, chunk));
    put_dataset(f, input, "input", H5T_IEEE_F32LE, a.rank, big, H5T_NATIVE_FLOAT, NULL, dcpl);
    H5Pclose(dcpl);
    free(a.data);
    end(f, kase, ch, path, input, "prefix");
    if (ch->input_rank[i] != 2) return;  // the token cases are for (T, d_in) inputs

    // Too many tokens to attend over, though within the reader's element
    // limit (2^20): 8193 tokens of the fixture's own d_in (or 2^20 / d_in,
    // if fewer), so that the weights still fit and the T x T scores (over
    // 2^26 elements) or the causal mask's context length are what is refused. Chunked, nothing stored (a fill value of 0.5). With --seed nothing is read
    // for the weights either. (A wide input within the element limit is
    // not bad input: the limits count elements, not the size of one axis.)
    for (int k = 0; k < (ch->draws ? 2 : 1); k++) {
        static const char *const kinds[] = {"too_many_tokens", "too_many_tokens_seeded"};
        snprintf(kase, sizeof kase, "%s:%s", kinds[k], input);
        f = begin(ch, kase, path, sizeof path);
        a = read_array(f, input);
        hsize_t tokens = (1ull << 20) / a.dims[1] < 8193 ? (1ull << 20) / a.dims[1] : 8193;  // 8193^2 > 2^26
        hsize_t dims[2] = {tokens, a.dims[1]}, chunk2[2] = {1024, a.dims[1]};
        free(a.data);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        MUST(H5Pset_chunk(dcpl, 2, chunk2));
        const float half = 0.5f;  // unstored chunks read as 0.5, not 0 (0/0 would print nan)
        MUST(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &half));
        put_dataset(f, input, "input", H5T_IEEE_F32LE, 2, dims, H5T_NATIVE_FLOAT, NULL, dcpl);
        H5Pclose(dcpl);
        MUST(H5Fclose(f));
        record(kase, ch, path, k ? "--seed 1" : "", input, "finite");  // other inputs print other values
    }

    // One token. Some chapters need two (their query is inputs[1]), others
    // attend over one: refused or accepted, either is an answer.
    snprintf(kase, sizeof kase, "one_token:%s", input);
    f = begin(ch, kase, path, sizeof path);
    a = read_array(f, input);
    hsize_t one[2] = {1, a.dims[1]};
    put_floats(f, input, "input", 2, one, a.data);
    free(a.data);
    end(f, kase, ch, path, input, "either");
}

// A weight (or a gradient record) of the right rank and the wrong shape: one
// more on the first axis, one more on the last, or (matrices) transposed.
// Cases "<pfx>_axis0:<name>", ...; `role` is the dataset's role attribute.
static void shape_cases(const Chapter *ch, const char *name, const char *pfx, const char *role) {
    static const char *const kinds[] = {"axis0", "last_axis", "transposed"};
    for (int k = 0; k < 3; k++) {
        char path[4096], kase[160];
        snprintf(kase, sizeof kase, "%s_%s:%s", pfx, kinds[k], name);
        hid_t f = begin(ch, kase, path, sizeof path);
        Array a = read_array(f, name);
        if (a.rank == 0 || (k == 1 && a.rank == 1) || (k == 2 && (a.rank != 2 || a.dims[0] == a.dims[1]))) {
            // Not a kind this shape has: the copy is dropped.
            MUST(H5Fclose(f));
            unlink(path);
            free(a.data);
            continue;
        }
        hsize_t dims[MAX_RANK];
        memcpy(dims, a.dims, sizeof dims);
        if (k == 0) dims[0]++;
        if (k == 1) dims[a.rank - 1]++;
        if (k == 2) dims[0] = a.dims[1], dims[1] = a.dims[0];
        size_t n = 1;
        for (int d = 0; d < a.rank; d++) n *= dims[d];
        float *v = calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++) v[i] = a.data[i % a.n];
        put_floats(f, name, role, a.rank, dims, v);
        free(v);
        free(a.data);
        end(f, kase, ch, path, name, "prefix");
    }
}

static int has_attr(const Chapter *ch, const char *name) {
    for (int i = 0; i < ch->n_attrs; i++)
        if (!strcmp(ch->attrs[i].name, name)) return 1;
    return 0;
}

// Shapes that disagree with each other: one of the weights is where it
// shows (which one depends on the order the chapter reads them in).
static void consistency_cases(const Chapter *ch) {
    char path[4096], any_weight[2048] = "";
    for (int w = 0; w < ch->n_weights; w++)
        snprintf(any_weight + strlen(any_weight), sizeof any_weight - strlen(any_weight), "%s%s", w ? "|" : "",
                 ch->weights[w]);
    int in = -1;
    for (int i = 0; i < ch->n_inputs; i++)
        if (!strcmp(ch->inputs[i], "inputs") && ch->input_rank[i] == 2) in = i;
    if (in < 0) return;

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
    end(f, "inputs_d_in_mismatch", ch, path, any_weight, "finite");

    if (!has_attr(ch, "d_out")) return;
    // d_out one more than the weights hold.
    f = begin(ch, "d_out_mismatch", path, sizeof path);
    // Twice the fixture's d_out: still a multiple of any head count.
    long long d_out = 2 * root_int(f, "d_out");
    put_int_attr(f, "d_out", (long long)d_out);
    end(f, "d_out_mismatch", ch, path, any_weight, "prefix");
}

// A chapter with qkv_bias reads NAME.bias (d_out,) beside every NAME.weight
// once qkv_bias is 1.
static void bias_cases(const Chapter *ch) {
    char biases[MAX_NAMES][128];
    int n = 0;
    for (int w = 0; w < ch->n_weights; w++) {
        size_t len = strlen(ch->weights[w]);
        if (len > 7 && !strcmp(ch->weights[w] + len - 7, ".weight"))
            snprintf(biases[n++], sizeof biases[0], "%.*s.bias", (int)(len - 7), ch->weights[w]);
    }
    if (n == 0) return;
    // Every bias name (at most 127 bytes each) and a '|' between two: at most
    // MAX_NAMES x 128 bytes with the NUL.
    char path[4096], kase[160], any_bias[MAX_NAMES * sizeof biases[0]];
    size_t used = 0;
    for (int b = 0; b < n; b++) {
        const size_t len = strnlen(biases[b], sizeof biases[0] - 1);
        if (b) any_bias[used++] = '|';
        memcpy(any_bias + used, biases[b], len);
        used += len;
    }
    any_bias[used] = '\0';
    hid_t f = begin(ch, "qkv_bias_without_biases", path, sizeof path);
    put_int_attr(f, "qkv_bias", 1);
    end(f, "qkv_bias_without_biases", ch, path, any_bias, "prefix");

    for (int b = 0; b < n; b++) {
        static const char *const kinds[] = {"bias_missing", "bias_wrong_length", "bias_rank2", "bias_float64"};
        for (int k = 0; k < 4; k++) {
            snprintf(kase, sizeof kase, "%s:%.120s", kinds[k], biases[b]);
            f = begin(ch, kase, path, sizeof path);
            put_int_attr(f, "qkv_bias", 1);
            Array w = read_array(f, ch->weights[0]);
            hsize_t len = w.dims[0];
            float *v = malloc(len * sizeof *v);
            double *dv = malloc(len * sizeof *dv);
            for (hsize_t i = 0; i < len; i++) v[i] = 0.25f * (float)(i + 1), dv[i] = v[i];
            for (int i = 0; i < n; i++)
                if (i != b) put_floats(f, biases[i], "weight", 1, &len, v);
            hsize_t longer = len + 1, row[2] = {1, len};
            float *lv = calloc(len + 1, sizeof *lv);
            if (k == 1) put_floats(f, biases[b], "weight", 1, &longer, lv);
            if (k == 2) put_floats(f, biases[b], "weight", 2, row, v);
            if (k == 3) put_dataset(f, biases[b], "weight", H5T_IEEE_F64LE, 1, &len, H5T_NATIVE_DOUBLE, dv, H5P_DEFAULT);
            free(v), free(dv), free(lv), free(w.data);
            // Any of the biases: the chapter reads them in its own order, and
            // the cell line says qkv_bias=True first.
            end(f, kase, ch, path, biases[b], "finite");
        }
    }
}

// --- the chapter table and the good fixtures ---------------------------------------

// chapters.txt: program, draws, variants (the first is the book's), official cells.
static void read_chapter_table(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) fatal("%s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "#\n")] = '\0';
        char program[128], draws[16], variants[512], cells[128];
        int n = sscanf(line, "%127s %15s %511s %127s", program, draws, variants, cells);
        if (n <= 0) continue;
        if (n != 4) fatal("%s:%d: expected 4 columns (program draws variants cells), found %d", path, lineno, n);
        if (strcmp(draws, "yes") && strcmp(draws, "no"))
            fatal("%s:%d: draws: expected yes or no, found '%s'", path, lineno, draws);
        if (n_chapters == MAX_CHAPTERS) fatal("%s: more than %d chapters", path, MAX_CHAPTERS);
        Chapter *ch = &chapters[n_chapters++];
        memset(ch, 0, sizeof *ch);
        snprintf(ch->name, sizeof ch->name, "%s", program);
        snprintf(ch->variant, sizeof ch->variant, "%.*s", (int)strcspn(variants, ","), variants);
        // A chapter whose book fixture takes seconds to run (the bonus
        // notebook at its own size, (8, 1024, 768)) lists a variant `small`:
        // the catalogue breaks that one, whose every case runs in milliseconds.
        for (char *v = variants; *v; v += strcspn(v, ",") + (v[strcspn(v, ",")] == ',')) {
            size_t k = strcspn(v, ",");
            if (k == 5 && !strncmp(v, "small", 5)) snprintf(ch->variant, sizeof ch->variant, "small");
        }
        ch->draws = !strcmp(draws, "yes");
    }
    fclose(f);
    if (n_chapters == 0) fatal("%s: no chapters", path);
}

static herr_t visit_dataset(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)info;
    Chapter *ch = data;
    H5O_info_t oi;
    if (H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_DATASET) return 0;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    MUST(ds);
    char role[32] = "";
    if (H5Aexists(ds, "role") > 0) {
        hid_t attr = H5Aopen(ds, "role", H5P_DEFAULT), type = H5Aget_type(attr);
        char *text = NULL;
        if (H5Tis_variable_str(type) > 0 && H5Aread(attr, type, &text) >= 0 && text) {
            snprintf(role, sizeof role, "%s", text);
            H5free_memory(text);
        }
        H5Tclose(type);
        H5Aclose(attr);
    }
    hid_t space = H5Dget_space(ds);
    int rank = H5Sget_simple_extent_ndims(space);
    H5Sclose(space);
    H5Dclose(ds);
    if (!strcmp(role, "input") && ch->n_inputs < MAX_NAMES) {
        ch->input_rank[ch->n_inputs] = rank;
        snprintf(ch->inputs[ch->n_inputs++], sizeof ch->inputs[0], "%s", name);
    } else if ((!strcmp(role, "weight") || !strcmp(role, "random")) && ch->n_weights < MAX_NAMES) {
        snprintf(ch->weights[ch->n_weights++], sizeof ch->weights[0], "%s", name);
    } else if (!strcmp(role, "output") && !ch->grad[0] && strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".grad")) {
        snprintf(ch->grad, sizeof ch->grad, "%s", name);
    }
    return 0;
}

static herr_t visit_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    Chapter *ch = data;
    if (is_provenance(name) || ch->n_attrs == MAX_NAMES) return 0;
    const char *dot = strrchr(name, '.');
    const int digest = dot && (!strcmp(dot, ".role") || !strcmp(dot, ".sha256") || !strcmp(dot, ".shape"));
    // Only the first digest record gets cases (below): the others are not
    // kept, so that a fixture of many digests (the bonus notebook's) leaves
    // room for its settings.
    for (int i = 0; digest && i < ch->n_attrs; i++)
        if (ch->attrs[i].digest) return 0;
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), type = H5Aget_type(attr);
    RootAttr *a = &ch->attrs[ch->n_attrs++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->cls = H5Tget_class(type);
    a->digest = digest;
    H5Tclose(type);
    H5Aclose(attr);
    return 0;
}

// What the book fixture holds: the datasets a chapter reads, and its attributes.
static void describe_chapter(Chapter *ch) {
    char path[4096];
    good_path(ch, path, sizeof path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fatal("%s: cannot open the book fixture of %s", path, ch->name);
    hsize_t idx = 0;
    MUST(H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_dataset, ch));
    idx = 0;
    MUST(H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_attr, ch));
    MUST(H5Fclose(f));
    if (ch->n_inputs == 0 && ch->n_weights == 0) fatal("%s: no dataset with role \"input\" or \"weight\"", path);
}

// A path in a depfile: blanks, '#' and '$' escaped as ninja reads them.
static void put_dep(FILE *f, const char *path) {
    fputs(" \\\n  ", f);
    for (const char *p = path; *p; p++) {
        if (*p == '$') fputc('$', f);
        else if (*p == ' ' || *p == '#' || *p == '\\') fputc('\\', f);
        fputc(*p, f);
    }
}

// What the catalogue was made from, as the prerequisites of `target`: the
// chapter table and every book fixture.
static void write_depfile(const char *path, const char *target, const char *table) {
    FILE *f = fopen(path, "w");
    if (!f) fatal("%s: %s", path, strerror(errno));
    fputs(target, f);
    fputc(':', f);
    put_dep(f, table);
    for (int c = 0; c < n_chapters; c++) {
        char fixture[4096];
        good_path(&chapters[c], fixture, sizeof fixture);
        put_dep(f, fixture);
    }
    fputc('\n', f);
    if (fclose(f) != 0) fatal("%s: cannot write", path);
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: make_malformed CHAPTERS_TXT FIXTURES_DIR OUT_DIR [DEPFILE STAMP]\n");
        return 2;
    }
    read_chapter_table(argv[1]);
    g.fixtures = argv[2];
    remove_tree(argv[3]);
    if (mkdir(argv[3], 0755) != 0) fatal("%s: %s", argv[3], strerror(errno));
    // Absolute paths in the manifest: the checker may run from anywhere.
    char cwd[2048];
    if (argv[3][0] == '/') snprintf(g.out, sizeof g.out, "%s", argv[3]);
    else if (getcwd(cwd, sizeof cwd)) snprintf(g.out, sizeof g.out, "%s/%s", cwd, argv[3]);
    else fatal("getcwd: %s", strerror(errno));
    char manifest[4200];
    snprintf(manifest, sizeof manifest, "%s/catalogue.tsv", g.out);
    g.manifest = fopen(manifest, "w");
    if (!g.manifest) fatal("%s: %s", manifest, strerror(errno));
    fprintf(g.manifest, "# case\tchapter\tpath\textra-args\tmust-mention\tstdout (written by tools/make_malformed)\n");

    for (int c = 0; c < n_chapters; c++) {
        Chapter *ch = &chapters[c];
        describe_chapter(ch);
        char dir[4400];
        snprintf(dir, sizeof dir, "%s/%.127s", g.out, ch->name);
        if (mkdir(dir, 0755) != 0) fatal("%s: %s", dir, strerror(errno));
        file_cases(ch, &chapters[(c + 1) % n_chapters]);
        group_cases(ch);
        for (int i = 0; i < ch->n_inputs; i++) input_cases(ch, i);
        for (int w = 0; w < ch->n_weights; w++) {
            dataset_cases(ch, "weight", ch->weights[w], "weight");
            shape_cases(ch, ch->weights[w], "weight", "weight");
        }
        // A gradient record (role output, "<...>.grad"), which the chapter
        // looks up once it has computed that gradient: the first in name order,
        // whose check comes before any GPT-2-size backward (its module's
        // input, "inputs.grad" or "batch.grad"). Every kind, once.
        if (ch->grad[0]) {
            dataset_cases(ch, "grad", ch->grad, "output");
            shape_cases(ch, ch->grad, "grad", "output");
        }
        if (ch->n_weights) consistency_cases(ch);
        // Every attribute the chapter may read; of the digest records (a
        // GPT-2 size run each, to the end), the first one's probe only.
        int digests = 0;
        for (int a = 0; a < ch->n_attrs; a++)
            if (!ch->attrs[a].digest || digests++ == 0) attr_cases(ch, &ch->attrs[a]);
        if (has_attr(ch, "chapter")) chapter_attr_cases(ch);
        if (has_attr(ch, "qkv_bias")) bias_cases(ch);
    }
    if (fclose(g.manifest) != 0) fatal("%s: cannot write", manifest);
    if (argc == 6) {
        write_depfile(argv[4], argv[5], argv[1]);
        spit(argv[5], "", 0);
    }
    printf("make_malformed: %d chapters, %d kinds, %d cases in %s\n", n_chapters, g.n_kinds, g.cases, manifest);
    return 0;
}
