// fixture.c: the fixture reader. Checks before it reads, and says what it
// expected and what it found, in one line.
//
// The file itself is read by HDF5 in a child process (hdf5_snapshot.h), so
// that no bug of the HDF5 library can crash or hang a chapter; everything
// here answers from that snapshot.
#include "fixture.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hdf5_snapshot.h"

struct Fixture {
    Snapshot snap;       // the root group, or the configuration's group
    char label[400];     // "path" or "path, group NAME": how errors name the file
    char *file;          // the path
};

static int fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, FIXTURE_ERR_LEN, fmt, ap);
    va_end(ap);
    // Messages quote names from the file, which may hold a newline or a
    // terminal escape: shown as '?', the message stays one plain line.
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return 0;
}

Fixture *fixture_open(const char *path, const char *group, char err[FIXTURE_ERR_LEN]) {
    struct stat st;
    // Plain file-system problems first: they deserve the system's words.
    if (stat(path, &st) != 0) {
        fail(err, "%s: expected an HDF5 fixture file, found %s (%s)", path,
             errno == ENOENT ? "no such file" : "a path that cannot be followed", strerror(errno));
        return NULL;
    }
    // Anything but a regular file is refused before it is opened: a FIFO
    // would block the open forever.
    if (!S_ISREG(st.st_mode)) {
        fail(err, "%s: expected an HDF5 fixture file, found %s", path,
             S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
             : S_ISCHR(st.st_mode) ? "a character device" : S_ISBLK(st.st_mode) ? "a block device"
             : S_ISSOCK(st.st_mode) ? "a socket" : "something that is not a regular file");
        return NULL;
    }
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        fail(err, "%s: expected a readable HDF5 fixture file, found one that cannot be opened (%s)", path,
             strerror(errno));
        return NULL;
    }
    fclose(probe);
    if (st.st_size == 0) {
        fail(err, "%s: expected an HDF5 fixture file, found an empty file (0 bytes)", path);
        return NULL;
    }
    Fixture *fx = calloc(1, sizeof *fx);
    if (!fx) {
        fail(err, "%s: out of memory", path);
        return NULL;
    }
    char why[FIXTURE_ERR_LEN];
    if (!hdf5_snapshot(path, group, &fx->snap, why, sizeof why)) {
        fail(err, "%s", why);
        free(fx);
        return NULL;
    }
    int ok = 0;
    switch (fx->snap.status) {
    case SNAP_OK: ok = 1; break;
    case SNAP_NOT_HDF5:
        fail(err, "%s: expected an HDF5 fixture file, found %lld bytes without an HDF5 signature", path,
             (long long)st.st_size);
        break;
    case SNAP_CORRUPT: fail(err, "%s: expected a readable HDF5 file, found a corrupt or truncated one", path); break;
    case SNAP_NO_ROOT: fail(err, "%s: expected a root group, found a corrupt file", path); break;
    case SNAP_NO_GROUP: fail(err, "%s: expected a group '%s', found none", path, group); break;
    case SNAP_NOT_GROUP: fail(err, "%s: expected a group '%s', found %s", path, group, fx->snap.group_found); break;
    }
    if (!ok) {
        fixture_close(fx);
        return NULL;
    }
    fx->file = strdup(path);
    if (group && *group) snprintf(fx->label, sizeof fx->label, "%s, group %s", path, group);
    else snprintf(fx->label, sizeof fx->label, "%s", path);
    return fx;
}

void fixture_close(Fixture *fx) {
    if (!fx) return;
    snapshot_free(&fx->snap);
    free(fx->file);
    free(fx);
}

const char *fixture_path(const Fixture *fx) { return fx->label; }
const char *fixture_file(const Fixture *fx) { return fx->file ? fx->file : ""; }

static const SnapObject *find_object(const Fixture *fx, const char *name) {
    for (int i = 0; i < fx->snap.n_objects; i++)
        if (!strcmp(fx->snap.objects[i].name, name)) return &fx->snap.objects[i];
    return NULL;
}

static const SnapAttr *find_attr(const Fixture *fx, const char *name) {
    for (int i = 0; i < fx->snap.n_attrs; i++)
        if (!strcmp(fx->snap.attrs[i].name, name)) return &fx->snap.attrs[i];
    return NULL;
}

int fixture_has(const Fixture *fx, const char *name) { return find_object(fx, name) != NULL; }

static int read_dataset(Fixture *fx, const char *name, Size want, Tensor *out, char *err) {
    char want_s[64], have_s[64] = "an unreadable shape";
    size_format(want, want_s, sizeof want_s);
    const SnapObject *o = find_object(fx, name);
    if (!o)
        return fail(err, "%s: dataset '%s': expected float32 %s, found no such dataset", fx->label, name, want_s);
    if (!o->is_dataset)
        return fail(err, "%s: dataset '%s': expected float32 %s, found %s, not a dataset", fx->label, name, want_s,
                    o->found);
    if (o->rank >= 0) shape_format(o->rank, o->dims, have_s, sizeof have_s);
    if (o->space == SPACE_NULL) snprintf(have_s, sizeof have_s, "with a null dataspace (no shape)");

    // Type, rank and shape are all checked before a single value is used.
    // Sizes are clamped one past the limit: an absurd declared shape fails
    // the element check instead of overflowing an int.
    Size have = {o->rank, {0}};
    for (int i = 0; i < o->rank && i < TENSOR_MAX_DIMS; i++)
        have.dims[i] = (int)(o->dims[i] > SNAPSHOT_MAX_ELEMENTS ? SNAPSHOT_MAX_ELEMENTS + 1LL : o->dims[i]);
    if (!o->is_float32)
        return fail(err, "%s: dataset '%s': expected float32 %s, found %s %s", fx->label, name, want_s, o->type,
                    have_s);
    if (o->rank < 0 || o->rank > TENSOR_MAX_DIMS || !size_matches(want, have))
        return fail(err, "%s: dataset '%s': expected float32 %s, found float32 %s", fx->label, name, want_s, have_s);
    if (o->numel > SNAPSHOT_MAX_ELEMENTS)
        return fail(err, "%s: dataset '%s': expected at most %d elements, found shape %s", fx->label, name,
                    SNAPSHOT_MAX_ELEMENTS, have_s);
    if (o->numel == 0)
        return fail(err, "%s: dataset '%s': expected float32 %s with elements, found an empty dataset %s",
                    fx->label, name, want_s, have_s);
    if (o->values_read != 1)
        return fail(err, "%s: dataset '%s': expected %lld readable float32 values, found a corrupt or truncated dataset",
                    fx->label, name, o->numel);
    Tensor t = tensor_empty(have);
    memcpy(t.data, o->values, (size_t)o->numel * sizeof(float));
    *out = t;
    return 1;
}

int fixture_read(Fixture *fx, const char *name, Size want, Tensor *out, char err[FIXTURE_ERR_LEN]) {
    return read_dataset(fx, name, want, out, err);
}

int fixture_read_finite(Fixture *fx, const char *name, Size want, Tensor *out,
                        char err[FIXTURE_ERR_LEN]) {
    Tensor t;
    if (!read_dataset(fx, name, want, &t, err)) return 0;
    for (long i = 0; i < numel(t); i++) {
        if (!isfinite(t.data[i]))
            return fail(err, "%s: dataset '%s': expected finite values, found %s at flat index %ld",
                        fx->label, name, isnan(t.data[i]) ? "nan" : (t.data[i] > 0 ? "inf" : "-inf"), i);
    }
    *out = t;
    return 1;
}

int fixture_has_attr(Fixture *fx, const char *name) { return find_attr(fx, name) != NULL; }
int fixture_attr_count(const Fixture *fx) { return fx->snap.n_attrs; }
const char *fixture_attr_name(const Fixture *fx, int i) { return fx->snap.attrs[i].name; }

// The attribute `name` if it is a single value of the wanted kind, or NULL
// with the reason in err.
static const SnapAttr *single_attr(Fixture *fx, const char *name, AttrKind want, const char *want_s, char *err) {
    const SnapAttr *a = find_attr(fx, name);
    if (!a) {
        fail(err, "%s: attribute '%s': expected %s %s, found no such attribute", fx->label, name,
             strchr("aeiou", want_s[0]) ? "an" : "a", want_s);
        return NULL;
    }
    if (a->kind != want || a->count != 1) {
        fail(err, "%s: attribute '%s': expected a single %s, found %s%s", fx->label, name, want_s,
             a->kind == want ? "several values of " : "", a->type);
        return NULL;
    }
    if (!a->read_ok) {
        fail(err, "%s: attribute '%s': expected a readable %s, found a corrupt one", fx->label, name, want_s);
        return NULL;
    }
    return a;
}

int fixture_attr_string(Fixture *fx, const char *name, char *buf, size_t len, char err[FIXTURE_ERR_LEN]) {
    const SnapAttr *a = single_attr(fx, name, ATTR_STRING, "string", err);
    if (!a) return 0;
    snprintf(buf, len, "%s", a->text ? a->text : "");
    return 1;
}

int fixture_attr_int(Fixture *fx, const char *name, long long *out, char err[FIXTURE_ERR_LEN]) {
    const SnapAttr *a = single_attr(fx, name, ATTR_INT, "integer", err);
    if (!a) return 0;
    *out = a->value;
    return 1;
}

int fixture_each_dataset(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]) {
    if (fx->snap.listing_failed) return fail(err, "%s: expected a listable group, found a corrupt one", fx->label);
    for (int i = 0; i < fx->snap.n_objects; i++)
        if (fx->snap.objects[i].is_dataset) fn(fx->snap.objects[i].name, fx->snap.objects[i].role, ctx);
    return 1;
}

int fixture_each_group(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]) {
    if (fx->snap.listing_failed) return fail(err, "%s: expected a listable group, found a corrupt one", fx->label);
    for (int i = 0; i < fx->snap.n_objects; i++)
        if (fx->snap.objects[i].is_group) fn(fx->snap.objects[i].name, "", ctx);
    return 1;
}
