// catalogue.c: the catalogue's files: fatal(), whole-file reads and
// writes, removing the previous catalogue, and for each case its copy of
// the chapter's good fixture (OUT_DIR/<chapter>/<case>.h5) and its line of
// OUT_DIR/catalogue.tsv (case, chapter, path, extra-args, must-mention,
// stdout), counted by kind for the summary.
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "malformed.h"

Catalogue catalogue;

void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("make_malformed: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

// Removes `path` and, if it is a directory, everything under it.
void remove_tree(const char *path) {
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

unsigned char *slurp(const char *path, size_t *len) {
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

void spit(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) fatal("%s: cannot write", path);
}

void good_path(const Chapter *ch, char *buf, size_t len) {
    snprintf(buf, len, "%s/%.127s.%.63s.h5", catalogue.fixtures, ch->name, ch->variant);
}

// OUT_DIR/<chapter>/<case>.h5, with the case's ':' (kind:dataset) as '-'.
void case_path(const Chapter *ch, const char *kase, char *buf, size_t len) {
    int n = snprintf(buf, len, "%s/%s/%s.h5", catalogue.out, ch->name, kase);
    if (n < 0 || (size_t)n >= len) fatal("path too long: %s/%s/%s.h5", catalogue.out, ch->name, kase);
    for (char *p = buf + n - 3 - strlen(kase); *p; p++)
        if (*p == ':') *p = '-';
}

void record(const char *kase, const Chapter *ch, const char *path, const char *extra, const char *mention,
                   const char *rule) {
    fprintf(catalogue.manifest, "%s\t%s\t%s\t%s\t%s\t%s\n", kase, ch->name, path, extra, mention, rule);
    if (!strcmp(kase, "good")) return;
    catalogue.cases++;
    char kind[48];
    snprintf(kind, sizeof kind, "%.*s", (int)strcspn(kase, ":"), kase);
    for (int i = 0; i < catalogue.n_kinds; i++)
        if (!strcmp(catalogue.kinds[i], kind)) return;
    if (catalogue.n_kinds < 128) snprintf(catalogue.kinds[catalogue.n_kinds++], sizeof catalogue.kinds[0], "%s", kind);
}

// Copies the chapter's good fixture to the case's path and opens it for writing.
hid_t begin(const Chapter *ch, const char *kase, char *path, size_t len) {
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

void end(hid_t f, const char *kase, const Chapter *ch, const char *path, const char *mention,
                const char *rule) {
    MUST(H5Fclose(f));
    record(kase, ch, path, "", mention, rule);
}
