// locate.c: see locate.h.
#define _GNU_SOURCE  // realpath
#include "locate.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"

// chapters/meson.build passes both: the data directory as installed
// (<prefix>/<datadir>/litattn/fixtures), and the way there from bindir
// ("" when bindir or datadir is an absolute path of its own).
#ifndef LITATTN_DATADIR
#error "LITATTN_DATADIR must name the installed data directory, <prefix>/<datadir>/litattn/fixtures"
#endif
#ifndef LITATTN_DATADIR_FROM_BINDIR
#error "LITATTN_DATADIR_FROM_BINDIR must name the data directory relative to bindir (or be \"\")"
#endif

static void add_place(LocatePlaces *places, const char *dir) {
    char real[PATH_MAX];
    // A directory that exists is named as it resolves (no "bin/.."); one
    // that does not is named as configured.
    const char *shown = realpath(dir, real) ? real : dir;
    for (int i = 0; i < places->n; i++)
        if (!strcmp(places->dir[i], shown)) return;
    if (places->n < LOCATE_MAX_PLACES && strlen(shown) < PATH_MAX)
        snprintf(places->dir[places->n++], PATH_MAX, "%s", shown);
}

// "/a/b/bin/../share/x" -> "/a/b/share/x", in place: '..' takes away the
// name before it. Right for a path whose directories are no symbolic
// links, as the program's directory from /proc/self/exe is.
static char *lexically_normal(char *path) {
    char *out = path, *in = path;
    while (*in) {
        while (*in == '/') in++;
        const char *name = in;
        size_t n = strcspn(in, "/");
        in += n;
        if (n == 0 || (n == 1 && name[0] == '.')) continue;
        if (n == 2 && name[0] == '.' && name[1] == '.') {
            while (out > path && *--out != '/') {}
            continue;
        }
        *out++ = '/';
        memmove(out, name, n);
        out += n;
    }
    if (out == path) *out++ = '/';
    *out = '\0';
    return path;
}

void locate_find_places(LocatePlaces *places) {
    memset(places, 0, sizeof *places);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0 && (size_t)n < sizeof exe - 1) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *(slash == exe ? slash + 1 : slash) = '\0';
            add_place(places, exe);
            places->beside = 1;
            if (*LITATTN_DATADIR_FROM_BINDIR) {
                char rel[PATH_MAX];
                if ((size_t)snprintf(rel, sizeof rel, "%s/%s", exe, LITATTN_DATADIR_FROM_BINDIR) < sizeof rel)
                    add_place(places, lexically_normal(rel));
            }
        }
    }
    if (!places->beside) snprintf(places->no_exe, sizeof places->no_exe, "the program's directory (/proc/self/exe unreadable)");
    add_place(places, LITATTN_DATADIR);
}

int locate_place_count(const LocatePlaces *places) { return places->n; }

const char *locate_place(const LocatePlaces *places, int i, int *beside) {
    *beside = places->beside && i == 0;
    return i >= 0 && i < places->n ? places->dir[i] : NULL;
}

void locate_places(const LocatePlaces *places, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < places->n && at < len; i++) {
        const char *sep = i == 0 ? "" : i == places->n - 1 ? " or " : ", ";
        int w = places->beside && i == 0 ? snprintf(buf + at, len - at, "beside the program (%s)", places->dir[i])
                                         : snprintf(buf + at, len - at, "%sin %s", sep, places->dir[i]);
        if (w < 0) break;
        at += (size_t)w;
    }
    if (!places->beside && at < len) snprintf(buf + at, len - at, " (not in %s)", places->no_exe);
}

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

static const ShippedSnapshot *builtin_named(const ShippedSnapshots *shipped, const char *name) {
    for (int i = 0; shipped && i < shipped->n; i++)
        if (!strcmp(shipped->table[i].name, name)) return &shipped->table[i];
    return NULL;
}

void locate_variants(const ShippedSnapshots *shipped, const char *chapter, char *buf, size_t len) {
    size_t at = 0, k = strlen(chapter);
    buf[0] = '\0';
    for (int i = 0; shipped && i < shipped->n && at < len; i++) {
        const char *name = shipped->table[i].name;
        size_t n = strlen(name);
        if (n < k + 5 || strncmp(name, chapter, k) != 0 || name[k] != '.' || strcmp(name + n - 3, ".h5") != 0) continue;
        int w = snprintf(buf + at, len - at, "%s%.*s", at ? ", " : "", (int)(n - k - 4), name + k + 1);
        if (w < 0) break;
        at += (size_t)w;
    }
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

int locate_fixture(const LocatePlaces *places, const char *value, const char *chapter, const char *book_variant,
                   const ShippedSnapshots *shipped, Located *out, char *err, size_t len) {
    out->path = NULL, out->builtin = NULL;
    if (value && (strchr(value, '/') || is_file(value) || strlen(value) > NAME_MAX)) {
        out->path = xstrdup(value, "the fixture's path");  // as given (fixture_open refuses one too long)
        return 1;
    }
    char name[NAME_MAX + 1];
    int w = !value ? snprintf(name, sizeof name, "%s.%s.h5", chapter, book_variant)
          : ends_with(value, ".h5") ? snprintf(name, sizeof name, "%s", value)
                                    : snprintf(name, sizeof name, "%s.%s.h5", chapter, value);
    if (w < 0 || (size_t)w >= sizeof name) {
        out->path = xstrdup(value, "the fixture's path");  // no file can have this name: fixture_open says so
        return 1;
    }
    for (int i = 0; i < places->n; i++) {
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", places->dir[i], name) >= sizeof path) continue;
        if (is_file(path)) {
            out->path = xstrdup(path, "the fixture's path");
            return 1;
        }
    }
    if ((out->builtin = builtin_named(shipped, name))) return 1;
    char where[3 * PATH_MAX + 200], built[512], raw[ERROR_LINE_LEN];
    locate_places(places, where, sizeof where);
    locate_variants(shipped, chapter, built, sizeof built);
    snprintf(raw, sizeof raw, "%s: --fixture: expected a fixture file or a variant of %s (built in: %s), found no "
             "file %s%s %s, and none built in", value ? value : name, chapter, *built ? built : "none",
             value ? "of that name in the working directory, no " : "", name, where);
    text_escape(err, len, raw);  // the value as typed may hold a control character
    return 0;
}

void located_free(Located *l) {
    free(l->path);
    l->path = NULL;
}

const BuiltinFile *locate_builtin_file(const BuiltinFiles *files, const char *name) {
    for (int i = 0; files && i < files->n; i++)
        if (!strcmp(files->table[i].name, name)) return &files->table[i];
    return NULL;
}
