// embed_snapshots: compiles what a chapter reads into the chapter.
//
//   embed_snapshots OUT.c FIXTURE... [--files FILE...]
//
// Reads each FIXTURE as a chapter would (lib/io/hdf5_snapshot.h: HDF5 in a
// child process, the default limits, the root group) and writes OUT.c, a C
// file that defines `litattn_shipped`: each fixture's file name, its bytes
// and the records its reader child wrote. A chapter given a file with
// exactly those bytes answers from the records instead of starting HDF5
// (hdf5_snapshot_ship), and a chapter given no file at all (its book
// variant, a variant by name that is nowhere on disk) reads the records
// alone (fixture_open_shipped). Each FILE after --files is compiled in as
// it is, under its file name, in `litattn_builtin_files`
// (lib/runtime/locate.h): the data-loading chapter's text and vocabulary.
// chapters/meson.build runs this for every chapter of chapters/chapters.txt;
// nothing it writes is committed.
//
// The bytes are written as string literals, which the compiler reads many
// times faster than lists of numbers (a few MB of fixture: under a second
// instead of tens; tests/BENCHMARKS.md).
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hdf5_snapshot.h"

static const char *out_path;
static FILE *out;

static void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("embed_snapshots: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (out) fclose(out), unlink(out_path);
    exit(1);
}

// const unsigned char NAME_I[N] = "...": every byte that is not plain
// printable ASCII as a three-digit octal escape (never one that a following
// digit could extend), 64 bytes of the file a line.
static void array(const char *name, int i, const unsigned char *p, size_t n) {
    fprintf(out, "static const unsigned char %s_%d[%zu] =", name, i, n ? n : 1);
    if (!n) fputs(" \"\"", out);
    for (size_t k = 0; k < n; k++) {
        if (k % 64 == 0) fputs(k ? "\"\n    \"" : "\n    \"", out);
        unsigned c = p[k];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?') fputc((int)c, out);
        else fprintf(out, "\\%03o", c);
    }
    fputs(n ? "\";\n" : ";\n", out);
}

// The file name of a path, checked: it is quoted in the C file, as a comment and a string.
static const char *base_of(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base || strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(base))
        fatal("%s: expected a file name of letters, digits, '.', '_' and '-'", path);
    return base;
}

// All of a regular file's bytes, in a new buffer.
static unsigned char *read_whole(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fatal("%s: expected a readable regular file", path);
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) fatal("%s: cannot read it whole (%s)", path, r < 0 ? strerror(errno) : "it shrank");
        got += (size_t)r;
    }
    if (!buf) fatal("%s: out of memory", path);
    close(fd);
    *size = got;
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: embed_snapshots OUT.c FIXTURE... [--files FILE...]\n");
        return 2;
    }
    out_path = argv[1];
    int n = 0, first_file = argc;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--files")) {
            first_file = i + 1;
            break;
        } else {
            n++;
        }
    out = fopen(out_path, "w");
    if (!out) fatal("%s: cannot write (%s)", out_path, strerror(errno));
    fprintf(out, "// Written by embed_snapshots (tools/build/embed_snapshots.c) for chapters/meson.build: not to be edited or committed.\n"
                 "#include \"hdf5_snapshot.h\"\n#include \"locate.h\"\n\n"
                 "// The bytes are string literals, longer than ISO C's 4095 (GCC and Clang take them).\n"
                 "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n\n");
    for (int i = 0; i < n; i++) {
        const char *path = argv[i + 2];
        const char *base = base_of(path);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) fatal("%s: cannot open (%s)", path, strerror(errno));
        size_t size, records_size;
        unsigned char *bytes, *records;
        char err[512];
        if (!hdf5_snapshot_shippable(fd, path, &bytes, &size, &records, &records_size, err, sizeof err))
            fatal("%s", err);
        close(fd);
        fprintf(out, "// %s\n", base);
        array("bytes", i, bytes, size);
        array("records", i, records, records_size);
        free(bytes), free(records);
    }
    int n_files = argc - first_file;
    size_t *file_size = calloc((size_t)n_files + 1, sizeof *file_size);
    if (!file_size) fatal("out of memory");
    for (int i = 0; i < n_files; i++) {
        const char *path = argv[first_file + i];
        unsigned char *bytes = read_whole(path, &file_size[i]);
        fprintf(out, "// %s\n", base_of(path));
        array("file", i, bytes, file_size[i]);
        free(bytes);
    }
    fprintf(out, "\nstatic const ShippedSnapshot table[%d] = {\n", n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
        fprintf(out, "    {\"%s\", bytes_%d, sizeof bytes_%d, records_%d, sizeof records_%d},\n", base_of(argv[i + 2]),
                i, i, i, i);
    if (!n) fprintf(out, "    {\"\", 0, 0, 0, 0},  // none: ISO C has no empty array\n");
    fprintf(out, "};\nconst ShippedSnapshots litattn_shipped = {table, %d};\n", n);
    fprintf(out, "\nstatic const BuiltinFile files[%d] = {\n", n_files > 0 ? n_files : 1);
    for (int i = 0; i < n_files; i++)
        fprintf(out, "    {\"%s\", file_%d, %zu},\n", base_of(argv[first_file + i]), i, file_size[i]);
    if (!n_files) fprintf(out, "    {\"\", 0, 0},  // none: ISO C has no empty array\n");
    free(file_size);
    fprintf(out, "};\nconst BuiltinFiles litattn_builtin_files = {files, %d};\n", n_files);
    if (ferror(out) | fclose(out)) {
        out = NULL;
        unlink(out_path);
        fatal("%s: cannot write (%s)", out_path, strerror(errno));
    }
    return 0;
}
