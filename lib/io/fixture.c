// fixture.c: the fixture reader. Checks before it reads, and says what it
// expected and what it found, in one line.
//
// The file itself is read by HDF5 in a child process (hdf5_snapshot.h), so
// that no bug of the HDF5 library can crash or hang a chapter; everything
// here answers from that snapshot.
// fixture.c: the fixture reader. Checks before it reads, and says what it
// expected and what it found, in one line.
//
// The file is opened here once and checked with fstat on that descriptor
// (no stat-then-open race), then read by HDF5 in a child process through the
// same descriptor (hdf5_snapshot.h), so that no bug of the HDF5 library can
// crash or hang a chapter; everything here answers from that snapshot.
#include "fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"
#include "hdf5_snapshot.h"

struct Fixture {
    Snapshot *snap;         // shared by a fixture_open_all fixture and its group views
    int owns_snap;
    const SnapGroup *grp;   // the root group, or the configuration's group
    char *path;
    char *label;            // "path" or "path, group NAME": how errors name the file
    long long max_elements;
    dev_t dev;
    ino_t ino;
};

static int fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char *err, const char *fmt, ...) {
    char raw[FIXTURE_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    // Messages quote names and values from the file, which may hold a
    // newline or a terminal control: escaped, the message stays one plain line.
    text_escape(err, FIXTURE_ERR_LEN, raw);
    return 0;
}

static char *label_for(const char *path, const char *group) {
    size_t n = strlen(path) + (group ? strlen(group) : 0) + 16;
    char *label = xmalloc(n, "the fixture's name");
    if (group && *group) snprintf(label, n, "%s, group %s", path, group);
    else snprintf(label, n, "%s", path);
    return label;
}

// A name longer than ERROR_NAME_MAX is refused, so that every message that
// quotes one stays whole (error.h): 1, or 0 with err.
static int name_fits(char *err, const char *label, const char *what, const char *name) {
    size_t n = strlen(name);
    if (n <= ERROR_NAME_MAX) return 1;
    return fail(err, "%s: expected %s name of at most %d bytes, found one of %zu bytes ('%.40s...')", label, what,
                ERROR_NAME_MAX, n, name);
}

// Why open() refused the path, in the words of an error's "found".
static const char *open_failure(int e) {
    switch (e) {
    case ENOENT: return "no such file";
    case ENAMETOOLONG: return "a path, or a name in it, longer than the system allows";
    case EMFILE: case ENFILE: return "no file descriptor left to open it (the limit on open files is reached)";
    case EACCES: case EPERM: return "a file it may not read";
    case ELOOP: return "a loop of symbolic links";
    case ENOTDIR: return "a path through something that is not a directory";
    case ENXIO: return "a socket or a device without a reader";
    case ENOMEM: return "no memory to open it";
    default: return "a path that cannot be opened";
    }
}

static const char *kind_of(mode_t mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
           : S_ISSOCK(mode) ? "a socket" : "something that is not a regular file";
}

// HDF5 looks for its signature at offset 0, then 512, 1024, 2048, ... (a
// user block may come first): the same search, without HDF5.
static int has_signature(int fd, off_t size) {
    static const char sig[8] = "\211HDF\r\n\032\n";
    for (off_t at = 0; at + 8 <= size; at = at ? 2 * at : 512) {
        char buf[8];
        if (pread(fd, buf, 8, at) == 8 && !memcmp(buf, sig, 8)) return 1;
    }
    return 0;
}

// The file-system checks, on one descriptor: returns it, open, or -1 with err.
static int open_checked(const char *path, struct stat *st, char *err) {
    size_t n = strlen(path);
    if (n >= PATH_MAX)
        return fail(err, "%.80s...: expected a fixture path of at most %d bytes, found one of %zu bytes", path,
                    PATH_MAX - 1, n) - 1;
    // O_NONBLOCK: a FIFO put in the file's place opens at once (and is then
    // refused) instead of waiting for a writer forever.
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == EMFILE) {
            struct rlimit nofile;
            getrlimit(RLIMIT_NOFILE, &nofile);
            return fail(err, "%s: expected an HDF5 fixture file, found no file descriptor left to open it (%s: "
                        "the limit on open files, RLIMIT_NOFILE, is %lld)", path, strerror(e),
                        (long long)nofile.rlim_cur) - 1;
        }
        return fail(err, "%s: expected an HDF5 fixture file, found %s (%s)", path, open_failure(e), strerror(e)) - 1;
    }
    if (fstat(fd, st) != 0) {
        fail(err, "%s: expected an HDF5 fixture file, found one fstat cannot describe (%s)", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        fail(err, "%s: expected an HDF5 fixture file, found %s", path, kind_of(st->st_mode));
        close(fd);
        return -1;
    }
    if (st->st_size == 0) {
        fail(err, "%s: expected an HDF5 fixture file, found an empty file (0 bytes)", path);
        close(fd);
        return -1;
    }
    // HDF5 1.10 writers hold an exclusive lock while the file is open: its
    // contents are then in flux. A shared lock, held while the child reads,
    // also keeps a writer from starting meanwhile.
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        fail(err, "%s: expected an HDF5 fixture file no one is writing, found one locked by a writer (another "
             "process has it open for writing)", path);
        close(fd);
        return -1;
    }
    if (!has_signature(fd, st->st_size)) {
        fail(err, "%s: expected an HDF5 fixture file, found %lld bytes without an HDF5 signature", path,
             (long long)st->st_size);
        close(fd);
        return -1;
    }
    return fd;
}

Fixture *fixture_open_with(const char *path, const char *group, const FixtureOptions *opt,
                           char err[FIXTURE_ERR_LEN]) {
    err[0] = '\0';  // a call that succeeds leaves no earlier message behind
    if (group && strlen(path) < PATH_MAX && !name_fits(err, path, "a group", group)) return NULL;
    struct stat st;
    int fd = open_checked(path, &st, err);
    if (fd < 0) return NULL;
    Fixture *fx = xcalloc(1, sizeof *fx, "the fixture");
    Snapshot *snap = xcalloc(1, sizeof *snap, "the fixture's snapshot");
    char *label = label_for(path, group), *copy = xstrdup(path, "the fixture's path");
    *fx = (Fixture){snap, 1, NULL, copy, label, FIXTURE_MAX_ELEMENTS, st.st_dev, st.st_ino};
    SnapshotLimits lim = {0};
    if (opt) {
        lim = (SnapshotLimits){opt->max_elements, opt->cpu_seconds, opt->wall_seconds, opt->memory_bytes,
                               opt->all_groups};
        if (opt->max_elements > 0) fx->max_elements = opt->max_elements;
    }
    lim.max_elements = fx->max_elements;
    char why[FIXTURE_ERR_LEN];
    int ok = hdf5_snapshot(fd, path, group, &lim, snap, why, sizeof why);
    close(fd);  // also releases the shared lock
    if (!ok) {
        fail(err, "%s", why);
        fixture_close(fx);
        return NULL;
    }
    const SnapGroup *g = snap->n_groups ? &snap->groups[0] : NULL;
    if (snap->status == SNAP_CORRUPT && snap->note[0])
        ok = fail(err, "%s: expected a readable HDF5 file, found %s", path, snap->note);
    else if (snap->status == SNAP_CORRUPT)
        ok = fail(err, "%s: expected a readable HDF5 file, found a corrupt or truncated one", path);
    else if (snap->status == SNAP_NO_ROOT || !g)
        ok = fail(err, "%s: expected a root group, found a corrupt file", path);
    else if (g->status == SNAP_NO_GROUP)
        ok = fail(err, "%s: expected a group '%s', found none", path, group);
    else if (g->status == SNAP_NOT_GROUP)
        ok = fail(err, "%s: expected a group '%s', found %s", path, group, g->found);
    if (!ok) {
        fixture_close(fx);
        return NULL;
    }
    fx->grp = g;
    return fx;
}

Fixture *fixture_open_shipped(const ShippedSnapshot *f, const char *group, char err[FIXTURE_ERR_LEN]) {
    err[0] = '\0';
    Fixture *fx = xcalloc(1, sizeof *fx, "the fixture");
    Snapshot *snap = xcalloc(1, sizeof *snap, "the fixture's snapshot");
    size_t n = strlen(f->name) + 16;
    char *path = xmalloc(n, "the fixture's name");
    snprintf(path, n, "%s (built in)", f->name);
    char *label = label_for(path, group);
    // No file: nothing a --dump could overwrite (dev 0, ino 0).
    *fx = (Fixture){snap, 1, NULL, path, label, FIXTURE_MAX_ELEMENTS, 0, 0};
    char why[FIXTURE_ERR_LEN];
    if (!hdf5_snapshot_shipped(f, snap, why, sizeof why)) {
        fail(err, "%s", why);
        fixture_close(fx);
        return NULL;
    }
    const SnapGroup *g = snap->n_groups ? &snap->groups[0] : NULL;
    if (!g) {
        fail(err, "%s: expected a root group, found none in what the build read", path);
        fixture_close(fx);
        return NULL;
    }
    if (group && *group) {
        // The build read the root alone: a group of it is read from the file.
        const char *found = "none";
        for (int i = 0; i < g->n_objects; i++)
            if (!strcmp(g->objects[i].name, group)) found = g->objects[i].found;
        fail(err, "%s: expected a group '%s', found %s (a group is read from a fixture file: --fixture PATH)", path,
             group, found);
        fixture_close(fx);
        return NULL;
    }
    fx->grp = g;
    return fx;
}

Fixture *fixture_open(const char *path, const char *group, char err[FIXTURE_ERR_LEN]) {
    return fixture_open_with(path, group, NULL, err);
}

Fixture *fixture_open_all(const char *path, char err[FIXTURE_ERR_LEN]) {
    FixtureOptions opt = {.all_groups = 1};
    return fixture_open_with(path, NULL, &opt, err);
}

Fixture *fixture_group(Fixture *all, const char *name, char err[FIXTURE_ERR_LEN]) {
    err[0] = '\0';  // a call that succeeds leaves no earlier message behind
    if (!name_fits(err, all->path, "a group", name)) return NULL;
    const SnapGroup *g = NULL;
    for (int i = 1; i < all->snap->n_groups && !g; i++)
        if (!strcmp(all->snap->groups[i].name, name)) g = &all->snap->groups[i];
    if (!g) {
        // Not a group directly under the root: say what the name is, as
        // fixture_open would (a dataset, a link to nothing, nothing at all).
        const char *found = "none";
        for (int i = 0; i < all->grp->n_objects; i++)
            if (!strcmp(all->grp->objects[i].name, name)) found = all->grp->objects[i].found;
        fail(err, "%s: expected a group '%s', found %s", all->path, name, found);
        return NULL;
    }
    Fixture *fx = xcalloc(1, sizeof *fx, "the fixture");
    char *label = label_for(all->path, name), *copy = xstrdup(all->path, "the fixture's path");
    *fx = (Fixture){all->snap, 0, g, copy, label, all->max_elements, all->dev, all->ino};
    return fx;
}

void fixture_close(Fixture *fx) {
    if (!fx) return;
    if (fx->owns_snap) {
        snapshot_free(fx->snap);
        free(fx->snap);
    }
    free(fx->path);
    free(fx->label);
    free(fx);
}

void fixture_file_id(const Fixture *fx, dev_t *dev, ino_t *ino) {
    *dev = fx->dev;
    *ino = fx->ino;
}

const char *fixture_path(const Fixture *fx) { return fx->label; }

static const SnapObject *find_object(const Fixture *fx, const char *name) {
    for (int i = 0; i < fx->grp->n_objects; i++)
        if (!strcmp(fx->grp->objects[i].name, name)) return &fx->grp->objects[i];
    return NULL;
}

static const SnapAttr *find_attr(const Fixture *fx, const char *name) {
    for (int i = 0; i < fx->grp->n_attrs; i++)
        if (!strcmp(fx->grp->attrs[i].name, name)) return &fx->grp->attrs[i];
    return NULL;
}

int fixture_has(const Fixture *fx, const char *name) { return find_object(fx, name) != NULL; }

int fixture_is_long(const Fixture *fx, const char *name) {
    const SnapObject *o = find_object(fx, name);
    return o && o->is_dataset && o->is_int64;
}

static int read_dataset(Fixture *fx, const char *name, Size want, Tensor *out, char *err) {
    err[0] = '\0';  // a call that succeeds leaves no earlier message behind
    if (!name_fits(err, fx->label, "a dataset", name)) return 0;
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
        have.dims[i] = (int)(o->dims[i] > fx->max_elements ? fx->max_elements + 1LL : o->dims[i]);
    if (!o->is_float32)
        return fail(err, "%s: dataset '%s': expected float32 %s, found %s %s", fx->label, name, want_s, o->type,
                    have_s);
    if (o->rank < 0 || o->rank > TENSOR_MAX_DIMS || !size_matches(want, have))
        return fail(err, "%s: dataset '%s': expected float32 %s, found float32 %s", fx->label, name, want_s, have_s);
    if (o->numel > fx->max_elements)
        return fail(err, "%s: dataset '%s': expected at most %lld elements, found shape %s", fx->label, name,
                    fx->max_elements, have_s);
    if (o->numel == 0)
        return fail(err, "%s: dataset '%s': expected float32 %s with elements, found an empty dataset %s",
                    fx->label, name, want_s, have_s);
    if (o->refused[0])
        return fail(err, "%s: dataset '%s': expected float32 values stored in this file, found %s", fx->label,
                    name, o->refused);
    if (o->values_read != 1)
        return fail(err, "%s: dataset '%s': expected %lld readable float32 values, found a corrupt or truncated dataset",
                    fx->label, name, o->numel);
    Tensor t = tensor_empty(have);
    memcpy(t.data, o->values, (size_t)o->numel * sizeof(float));
    *out = t;
    return 1;
}

int fixture_read_long(Fixture *fx, const char *name, LongTensor *out, char err[FIXTURE_ERR_LEN]) {
    err[0] = '\0';
    if (!name_fits(err, fx->label, "a dataset", name)) return 0;
    const SnapObject *o = find_object(fx, name);
    if (!o) return fail(err, "%s: dataset '%s': expected int64 values, found no such dataset", fx->label, name);
    if (!o->is_dataset)
        return fail(err, "%s: dataset '%s': expected int64 values, found %s, not a dataset", fx->label, name, o->found);
    char have_s[64] = "an unreadable shape";
    if (o->rank >= 0) shape_format(o->rank, o->dims, have_s, sizeof have_s);
    if (!o->is_int64)
        return fail(err, "%s: dataset '%s': expected int64 values, found %s %s", fx->label, name, o->type, have_s);
    if (o->rank < 0 || o->rank > TENSOR_MAX_DIMS)
        return fail(err, "%s: dataset '%s': expected int64 of rank 0 to %d, found %s", fx->label, name,
                    TENSOR_MAX_DIMS, have_s);
    if (o->numel > fx->max_elements || o->numel == 0 || o->refused[0] || o->values_read != 1)
        return fail(err, "%s: dataset '%s': expected 1 to %lld readable int64 values stored in this file, found "
                    "shape %s%s%s", fx->label, name, fx->max_elements, have_s, o->refused[0] ? ", " : "", o->refused);
    Size have = {o->rank, {0}};
    for (int i = 0; i < o->rank; i++) have.dims[i] = (int)o->dims[i];
    LongTensor t = long_tensor_empty(have);
    memcpy(t.data, o->ivalues, (size_t)o->numel * sizeof(int64_t));
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
    const long n = numel(t);
    for (long i = 0; i < n; i++) {
        if (!isfinite(t.data[i]))
            return fail(err, "%s: dataset '%s': expected finite values, found %s at flat index %ld",
                        fx->label, name, isnan(t.data[i]) ? "nan" : (t.data[i] > 0 ? "inf" : "-inf"), i);
    }
    *out = t;
    return 1;
}

int fixture_has_attr(Fixture *fx, const char *name) { return find_attr(fx, name) != NULL; }
int fixture_attr_count(const Fixture *fx) { return fx->grp->n_attrs; }
const char *fixture_attr_name(const Fixture *fx, int i) { return fx->grp->attrs[i].name; }

static FixtureAttrInfo info_of(const SnapAttr *a) {
    FixtureAttrKind kind = a->kind == ATTR_STRING ? FIXTURE_ATTR_STRING : a->kind == ATTR_INT ? FIXTURE_ATTR_INT
                           : a->kind == ATTR_FLOAT ? FIXTURE_ATTR_FLOAT : FIXTURE_ATTR_OTHER;
    return (FixtureAttrInfo){a->name, kind, a->type, a->count, a->space == SPACE_NULL, a->is_unsigned,
                             a->read_ok, a->length};
}

int fixture_attr_info(Fixture *fx, const char *name, FixtureAttrInfo *info) {
    const SnapAttr *a = find_attr(fx, name);
    if (a) *info = info_of(a);
    return a != NULL;
}

void fixture_each_attr(Fixture *fx, FixtureAttrVisit fn, void *ctx) {
    for (int i = 0; i < fx->grp->n_attrs; i++) {
        FixtureAttrInfo info = info_of(&fx->grp->attrs[i]);
        fn(&info, ctx);
    }
}

// What an attribute that is not a single value of the wanted kind holds
// instead, for the "found ..." of the error.
static void describe_attr(const SnapAttr *a, AttrKind want, char *buf, size_t len) {
    if (a->space == SPACE_NULL) snprintf(buf, len, "a null dataspace (no value)");
    else if (a->space == SPACE_UNREADABLE) snprintf(buf, len, "%s with an unreadable dataspace", a->type);
    else if (a->count == 0) snprintf(buf, len, "an empty array of %s (no value)", a->type);
    else if (a->count > 1) snprintf(buf, len, "%lld values of %s", a->count, a->type);
    else if (a->kind != want) snprintf(buf, len, "%s", a->type);
    else if (a->kind == ATTR_STRING && a->length > SNAPSHOT_MAX_STRING)
        snprintf(buf, len, "a string of %lld bytes, longer than the %d KiB limit", a->length, SNAPSHOT_MAX_STRING / 1024);
    else snprintf(buf, len, "a %s HDF5 cannot read (corrupt)", a->type);
}

// The attribute `name` if it is a single readable value of the wanted kind,
// or NULL with the reason in err.
static const SnapAttr *single_attr(Fixture *fx, const char *name, AttrKind want, const char *want_s, char *err) {
    err[0] = '\0';  // a call that succeeds leaves no earlier message behind
    if (!name_fits(err, fx->label, "an attribute", name)) return NULL;
    const SnapAttr *a = find_attr(fx, name);
    if (!a) {
        fail(err, "%s: attribute '%s': expected %s %s, found no such attribute", fx->label, name,
             strchr("aeiou", want_s[0]) ? "an" : "a", want_s);
        return NULL;
    }
    if (a->kind != want || a->count != 1 || a->space == SPACE_NULL || !a->read_ok) {
        char found[160];
        describe_attr(a, want, found, sizeof found);
        fail(err, "%s: attribute '%s': expected a single %s, found %s", fx->label, name, want_s, found);
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

int fixture_attr_int_in(Fixture *fx, const char *name, long long min, long long max, long long *out,
                        char err[FIXTURE_ERR_LEN]) {
    const SnapAttr *a = single_attr(fx, name, ATTR_INT, "integer", err);
    if (!a) return 0;
    // The value as it is, whatever its type: an unsigned one above 2^63 - 1
    // is reported in full, never wrapped or clamped.
    int above = a->is_unsigned && a->uvalue > (unsigned long long)max;
    long long v = a->is_unsigned ? (long long)(above ? 0 : a->uvalue) : a->value;
    if (above || v < min || v > max) {
        char found[32];
        if (a->is_unsigned) snprintf(found, sizeof found, "%llu", a->uvalue);
        else snprintf(found, sizeof found, "%lld", a->value);
        return fail(err, "%s: attribute '%s': expected an integer in [%lld, %lld], found %s (%s)", fx->label, name,
                    min, max, found, a->type);
    }
    *out = v;
    return 1;
}

int fixture_attr_int(Fixture *fx, const char *name, long long *out, char err[FIXTURE_ERR_LEN]) {
    return fixture_attr_int_in(fx, name, LLONG_MIN, LLONG_MAX, out, err);
}

int fixture_attr_double(Fixture *fx, const char *name, double *out, char err[FIXTURE_ERR_LEN]) {
    const SnapAttr *a = single_attr(fx, name, ATTR_FLOAT, "float", err);
    if (!a) return 0;
    *out = a->dvalue;
    return 1;
}

int fixture_each_dataset(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]) {
    err[0] = '\0';  // a call that succeeds leaves no earlier message behind
    if (fx->grp->listing_failed) return fail(err, "%s: expected a listable group, found a corrupt one", fx->label);
    for (int i = 0; i < fx->grp->n_objects; i++)
        if (fx->grp->objects[i].is_dataset) fn(fx->grp->objects[i].name, fx->grp->objects[i].role, ctx);
    return 1;
}

int fixture_each_group(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]) {
    err[0] = '\0';  // a call that succeeds leaves no earlier message behind
    if (fx->grp->listing_failed) return fail(err, "%s: expected a listable group, found a corrupt one", fx->label);
    for (int i = 0; i < fx->grp->n_objects; i++)
        if (fx->grp->objects[i].is_group) fn(fx->grp->objects[i].name, "", ctx);
    return 1;
}
