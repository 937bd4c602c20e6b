// edit.c: HDF5 edits of a case's copy, each of which must succeed (MUST):
// an integer attribute read, a float32 dataset read whole, attributes of a
// given type, shape and value (or none) written over, datasets replaced
// with a given type, shape, layout and role.
#include <stdlib.h>

#include "malformed.h"

// An integer attribute of the root, which must be there.
long long root_int(hid_t loc, const char *name) {
    long long v = 0;
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
    MUST(attr);
    MUST(H5Aread(attr, H5T_NATIVE_LLONG, &v));
    H5Aclose(attr);
    return v;
}

Array read_array(hid_t loc, const char *name) {
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

void put_string_attr(hid_t loc, const char *name, const char *value) {
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
void put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *value) {
    if (H5Aexists(loc, name) > 0) MUST(H5Adelete(loc, name));
    hid_t space = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    MUST(attr);
    MUST(H5Awrite(attr, mtype, value));
    H5Aclose(attr);
    H5Sclose(space);
}

void put_int_attr(hid_t loc, const char *name, long long v) {
    put_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, 0, &v);
}

// Replaces (or adds) dataset `name`: file type `ftype`, `rank` dims (rank -1:
// a null dataspace), filled from `data` of memory type `mtype` unless data is
// NULL. `dcpl` lays it out (H5P_DEFAULT: contiguous). Tagged with `role`.
void put_dataset(hid_t loc, const char *name, const char *role, hid_t ftype, int rank, const hsize_t *dims,
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

void put_floats(hid_t loc, const char *name, const char *role, int rank, const hsize_t *dims, const float *v) {
    put_dataset(loc, name, role, H5T_IEEE_F32LE, rank, dims, H5T_NATIVE_FLOAT, v, H5P_DEFAULT);
}

void put_null_attr(hid_t loc, const char *name, hid_t type) {
    if (H5Aexists(loc, name) > 0) MUST(H5Adelete(loc, name));
    hid_t space = H5Screate(H5S_NULL);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    MUST(attr);
    H5Aclose(attr);
    H5Sclose(space);
}
