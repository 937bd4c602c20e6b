// embed_snapshots: compiles the fixtures a chapter ships into the chapter.
//
//   embed_snapshots OUT.c FIXTURE...
//
// Reads each FIXTURE as a chapter would (lib/io/hdf5_snapshot.h: HDF5 in a
// child process, the default limits, the root group) and writes OUT.c, a C
// file that defines `litattn_shipped`: each fixture's bytes and the records
// its reader child wrote. A chapter given a file with exactly those bytes
// answers from the records instead of starting HDF5 (hdf5_snapshot_ship).
// chapters/meson.build runs this for every chapter of chapters/chapters.txt,
// on the fixtures of its variants; nothing it writes is committed.
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

static void array(const char *name, int i, const unsigned char *p, size_t n) {
    fprintf(out, "static const unsigned char %s_%d[%zu] = {", name, i, n);
    for (size_t k = 0; k < n; k++) fprintf(out, "%s%u,", k % 24 ? "" : "\n", p[k]);
    fprintf(out, "\n};\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: embed_snapshots OUT.c FIXTURE...\n");
        return 2;
    }
    out_path = argv[1];
    out = fopen(out_path, "w");
    if (!out) fatal("%s: cannot write (%s)", out_path, strerror(errno));
    fprintf(out, "// Written by tools/embed_snapshots for chapters/meson.build: not to be edited or committed.\n"
                 "#include \"hdf5_snapshot.h\"\n\n");
    int n = argc - 2;
    for (int i = 0; i < n; i++) {
        const char *path = argv[i + 2];
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        // Named in a comment of the C file: nothing that could end the comment or the line.
        if (!*base || strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(base))
            fatal("%s: expected a file name of letters, digits, '.', '_' and '-'", path);
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
    fprintf(out, "\nstatic const ShippedSnapshot table[%d] = {\n", n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
        fprintf(out, "    {bytes_%d, sizeof bytes_%d, records_%d, sizeof records_%d},\n", i, i, i, i);
    fprintf(out, "};\nconst ShippedSnapshots litattn_shipped = {table, %d};\n", n);
    if (ferror(out) | fclose(out)) {
        out = NULL;
        unlink(out_path);
        fatal("%s: cannot write (%s)", out_path, strerror(errno));
    }
    return 0;
}
