// fixture.c: the HDF5 fixture reader. Checks before it reads, and says what
// it expected and what it found; HDF5's own error stack is switched off, so
// a broken file gives one line, never a page of diagnostics.
#include "fixture.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// Far more than any attention fixture needs, small enough that a dataset
// declaring a huge shape is refused before anything is allocated.
#define FIXTURE_MAX_ELEMENTS (1 << 24)

struct Fixture {
    hid_t file;
    hid_t loc;           // the root group, or the configuration's group
    char label[400];     // "path" or "path, group NAME": how errors name the file
};

static int fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(char *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, FIXTURE_ERR_LEN, fmt, ap);
    va_end(ap);
    return 0;
}

static void quiet_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

// What the link `name` in `loc` leads to, for the "found ..." of an error:
// a name can hold a group, a dataset, a named datatype, or a link to nothing.
static const char *describe_object(hid_t loc, const char *name) {
    H5L_info_t link;
    if (H5Lget_info(loc, name, &link, H5P_DEFAULT) < 0) return "an unreadable link";
    hid_t obj = H5Oopen(loc, name, H5P_DEFAULT);
    if (obj < 0) {
        if (link.type == H5L_TYPE_SOFT) return "a soft link to nothing";
        if (link.type == H5L_TYPE_EXTERNAL) return "an external link that does not resolve";
        return "an object HDF5 cannot open";
    }
    H5I_type_t kind = H5Iget_type(obj);
    H5Oclose(obj);
    switch (kind) {
    case H5I_GROUP: return "a group";
    case H5I_DATASET: return "a dataset";
    case H5I_DATATYPE: return "a named datatype";
    default: return "an object of another kind";
    }
}

Fixture *fixture_open(const char *path, const char *group, char err[FIXTURE_ERR_LEN]) {
    quiet_hdf5();
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
    if (H5Fis_hdf5(path) <= 0) {
        fail(err, "%s: expected an HDF5 fixture file, found %lld bytes without an HDF5 signature",
             path, (long long)st.st_size);
        return NULL;
    }
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        fail(err, "%s: expected a readable HDF5 file, found a corrupt or truncated one", path);
        return NULL;
    }
    hid_t loc;
    if (group && *group) {
        if (H5Lexists(file, group, H5P_DEFAULT) <= 0) {
            fail(err, "%s: expected a group '%s', found none", path, group);
            H5Fclose(file);
            return NULL;
        }
        if ((loc = H5Gopen2(file, group, H5P_DEFAULT)) < 0) {
            fail(err, "%s: expected a group '%s', found %s", path, group, describe_object(file, group));
            H5Fclose(file);
            return NULL;
        }
    } else if ((loc = H5Gopen2(file, "/", H5P_DEFAULT)) < 0) {
        fail(err, "%s: expected a root group, found a corrupt file", path);
        H5Fclose(file);
        return NULL;
    }
    Fixture *fx = calloc(1, sizeof *fx);
    if (!fx) {
        fail(err, "%s: out of memory", path);
        H5Gclose(loc);
        H5Fclose(file);
        return NULL;
    }
    fx->file = file;
    fx->loc = loc;
    if (group && *group) snprintf(fx->label, sizeof fx->label, "%s, group %s", path, group);
    else snprintf(fx->label, sizeof fx->label, "%s", path);
    return fx;
}

void fixture_close(Fixture *fx) {
    if (!fx) return;
    H5Gclose(fx->loc);
    H5Fclose(fx->file);
    free(fx);
}

const char *fixture_path(const Fixture *fx) { return fx->label; }

int fixture_has(const Fixture *fx, const char *name) {
    return H5Lexists(fx->loc, name, H5P_DEFAULT) > 0;
}

// "float32", "float64", "int32", "string", ...: how a found type is named in errors.
static void describe_type(hid_t type, char *buf, size_t len) {
    size_t size = H5Tget_size(type);
    switch (H5Tget_class(type)) {
    case H5T_FLOAT: snprintf(buf, len, "float%zu", 8 * size); break;
    case H5T_INTEGER:
        snprintf(buf, len, "%sint%zu", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size);
        break;
    case H5T_STRING: snprintf(buf, len, "string"); break;
    case H5T_COMPOUND: snprintf(buf, len, "compound"); break;
    default: snprintf(buf, len, "a non-numeric type"); break;
    }
}

// "(3, 2)", "(6,)", "()" for rank 0; SHAPE_ANY prints as "*".
static void describe_dims(int ndim, const long long *dims, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < ndim && n < len; i++) {
        if (dims[i] < 0) n += (size_t)snprintf(buf + n, len - n, "%s*", i ? ", " : "");
        else n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", dims[i]);
    }
    if (n < len) snprintf(buf + n, len - n, ndim == 1 ? ",)" : ")");
}

static void describe_shape(Shape s, char *buf, size_t len) {
    long long dims[2] = {s.dims[0], s.dims[1]};
    describe_dims(s.ndim, dims, buf, len);
}

static int read_dataset(Fixture *fx, const char *name, Shape want, Tensor *out, char *err) {
    char want_s[64];
    describe_shape(want, want_s, sizeof want_s);
    if (!fixture_has(fx, name))
        return fail(err, "%s: dataset '%s': expected float32 %s, found no such dataset",
                    fx->label, name, want_s);
    hid_t ds = H5Dopen2(fx->loc, name, H5P_DEFAULT);
    if (ds < 0) {
        const char *found = describe_object(fx->loc, name);
        if (!strcmp(found, "a dataset"))
            return fail(err, "%s: dataset '%s': expected float32 %s, found a dataset HDF5 cannot open (corrupt?)",
                        fx->label, name, want_s);
        return fail(err, "%s: dataset '%s': expected float32 %s, found %s, not a dataset", fx->label, name, want_s,
                    found);
    }
    int ok = 0;
    hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
    char type_s[32] = "an unreadable type", have_s[64] = "an unreadable shape";
    if (type >= 0) describe_type(type, type_s, sizeof type_s);
    H5S_class_t sclass = space >= 0 ? H5Sget_simple_extent_type(space) : H5S_NO_CLASS;
    int rank = sclass == H5S_SCALAR ? 0 : (sclass == H5S_SIMPLE ? H5Sget_simple_extent_ndims(space) : -1);
    hsize_t dims[H5S_MAX_RANK] = {0};
    long long ldims[H5S_MAX_RANK] = {0};
    if (rank > 0 && H5Sget_simple_extent_dims(space, dims, NULL) == rank) {
        for (int i = 0; i < rank; i++) ldims[i] = (long long)dims[i];
    }
    if (rank >= 0) describe_dims(rank, ldims, have_s, sizeof have_s);
    if (sclass == H5S_NULL) snprintf(have_s, sizeof have_s, "with a null dataspace (no shape)");

    // Type, rank and shape are all checked before a single value is read.
    int is_f32 = type >= 0 && H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 4;
    // Sizes are clamped to one past the limit: an absurd declared shape fails
    // the element check below instead of overflowing an int.
    Shape have = {rank, {0, 0}};
    long long numel = 1;
    for (int i = 0; i < rank; i++) {
        long long d = dims[i] > (hsize_t)FIXTURE_MAX_ELEMENTS ? FIXTURE_MAX_ELEMENTS + 1LL : (long long)dims[i];
        if (i < 2) have.dims[i] = (int)d;
        numel = numel * d > FIXTURE_MAX_ELEMENTS ? FIXTURE_MAX_ELEMENTS + 1LL : numel * d;
    }
    if (!is_f32) {
        fail(err, "%s: dataset '%s': expected float32 %s, found %s %s", fx->label, name, want_s, type_s, have_s);
    } else if (rank < 0 || rank > 2 || !shape_matches(want, have)) {
        fail(err, "%s: dataset '%s': expected float32 %s, found float32 %s", fx->label, name, want_s, have_s);
    } else if (numel > FIXTURE_MAX_ELEMENTS) {
        fail(err, "%s: dataset '%s': expected at most %d elements, found shape %s", fx->label, name,
             FIXTURE_MAX_ELEMENTS, have_s);
    } else if (numel == 0) {
        fail(err, "%s: dataset '%s': expected float32 %s with elements, found an empty dataset %s",
             fx->label, name, want_s, have_s);
    } else {
        Tensor t = rank == 0 ? tensor_scalar(0.0f) : rank == 1 ? tensor_vector(have.dims[0])
                                                               : tensor_matrix(have.dims[0], have.dims[1]);
        if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data) < 0) {
            fail(err, "%s: dataset '%s': expected %lld readable float32 values, found a corrupt or truncated dataset",
                 fx->label, name, numel);
        } else {
            *out = t;
            ok = 1;
        }
    }
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    H5Dclose(ds);
    return ok;
}

int fixture_read(Fixture *fx, const char *name, Shape want, Tensor *out, char err[FIXTURE_ERR_LEN]) {
    return read_dataset(fx, name, want, out, err);
}

int fixture_read_finite(Fixture *fx, const char *name, Shape want, Tensor *out,
                        char err[FIXTURE_ERR_LEN]) {
    Tensor t;
    if (!read_dataset(fx, name, want, &t, err)) return 0;
    for (int i = 0; i < tensor_numel(t); i++) {
        if (!isfinite(t.data[i]))
            return fail(err, "%s: dataset '%s': expected finite values, found %s at flat index %d",
                        fx->label, name, isnan(t.data[i]) ? "nan" : (t.data[i] > 0 ? "inf" : "-inf"), i);
    }
    *out = t;
    return 1;
}

int fixture_has_attr(Fixture *fx, const char *name) { return H5Aexists(fx->loc, name) > 0; }

// Opens a scalar attribute of the wanted class, or explains why not.
static hid_t open_attr(Fixture *fx, const char *name, H5T_class_t want, const char *want_s, char *err) {
    if (H5Aexists(fx->loc, name) <= 0) {
        fail(err, "%s: attribute '%s': expected %s %s, found no such attribute", fx->label, name,
             strchr("aeiou", want_s[0]) ? "an" : "a", want_s);
        return -1;
    }
    hid_t attr = H5Aopen(fx->loc, name, H5P_DEFAULT);
    if (attr < 0) {
        fail(err, "%s: attribute '%s': expected %s, found an unreadable attribute", fx->label, name, want_s);
        return -1;
    }
    hid_t type = H5Aget_type(attr), space = H5Aget_space(attr);
    char type_s[32] = "an unreadable type";
    if (type >= 0) describe_type(type, type_s, sizeof type_s);
    int ok = type >= 0 && H5Tget_class(type) == want;
    int scalar = space >= 0 && (H5Sget_simple_extent_type(space) == H5S_SCALAR ||
                                H5Sget_simple_extent_npoints(space) == 1);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    if (!ok || !scalar) {
        fail(err, "%s: attribute '%s': expected a single %s, found %s%s", fx->label, name, want_s,
             ok ? "several values of " : "", type_s);
        H5Aclose(attr);
        return -1;
    }
    return attr;
}

// Reads the string attribute `name` of object `obj` into buf. Strings may be
// variable length (h5py's Python str: HDF5 hands back memory it allocated)
// or fixed length, ASCII or UTF-8: the memory type copies the file's
// character set, since HDF5 converts between the two sets not at all.
static int read_string_attr(hid_t obj, const char *name, char *buf, size_t len) {
    hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
    if (attr < 0) return 0;
    hid_t type = H5Aget_type(attr);
    hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mem, H5Tget_cset(type));
    int ok = 0;
    if (H5Tget_class(type) != H5T_STRING) {
        ok = 0;
    } else if (H5Tis_variable_str(type) > 0) {
        H5Tset_size(mem, H5T_VARIABLE);
        char *value = NULL;
        if (H5Aread(attr, mem, &value) >= 0 && value) {
            snprintf(buf, len, "%s", value);
            H5free_memory(value);
            ok = 1;
        }
    } else {
        size_t size = H5Tget_size(type);
        char *tmp = calloc(size + 1, 1);
        H5Tset_size(mem, size + 1);
        H5Tset_strpad(mem, H5T_STR_NULLTERM);
        if (tmp && H5Aread(attr, mem, tmp) >= 0) {
            snprintf(buf, len, "%s", tmp);
            ok = 1;
        }
        free(tmp);
    }
    H5Tclose(mem);
    H5Tclose(type);
    H5Aclose(attr);
    return ok;
}

int fixture_attr_string(Fixture *fx, const char *name, char *buf, size_t len, char err[FIXTURE_ERR_LEN]) {
    hid_t attr = open_attr(fx, name, H5T_STRING, "string", err);
    if (attr < 0) return 0;
    H5Aclose(attr);
    if (!read_string_attr(fx->loc, name, buf, len))
        return fail(err, "%s: attribute '%s': expected a readable string, found a corrupt one", fx->label, name);
    return 1;
}

int fixture_attr_int(Fixture *fx, const char *name, long long *out, char err[FIXTURE_ERR_LEN]) {
    hid_t attr = open_attr(fx, name, H5T_INTEGER, "integer", err);
    if (attr < 0) return 0;
    int ok = H5Aread(attr, H5T_NATIVE_LLONG, out) >= 0;
    H5Aclose(attr);
    if (!ok) fail(err, "%s: attribute '%s': expected a readable integer, found a corrupt one", fx->label, name);
    return ok;
}

struct visit {
    Fixture *fx;
    FixtureVisit fn;
    void *ctx;
};

static herr_t visit_link(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)info;
    struct visit *v = data;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return 0;  // a group or something else: not a tensor
    char role[32] = "";
    read_string_attr(ds, "role", role, sizeof role);
    H5Dclose(ds);
    v->fn(name, role, v->ctx);
    return 0;
}

int fixture_each_dataset(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]) {
    struct visit v = {fx, fn, ctx};
    hsize_t idx = 0;
    if (H5Literate(fx->loc, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_link, &v) < 0)
        return fail(err, "%s: expected a listable group, found a corrupt one", fx->label);
    return 1;
}

static herr_t visit_group(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)info;
    struct visit *v = data;
    hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
    if (g < 0) return 0;  // a dataset: not a configuration
    H5Gclose(g);
    v->fn(name, "", v->ctx);
    return 0;
}

int fixture_each_group(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]) {
    struct visit v = {fx, fn, ctx};
    hsize_t idx = 0;
    if (H5Literate(fx->loc, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_group, &v) < 0)
        return fail(err, "%s: expected a listable group, found a corrupt one", fx->label);
    return 1;
}
