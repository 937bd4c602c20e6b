// dump.c: the --dump writer. float32, row-major, rank 0 as a scalar dataspace,
// exactly like the fixtures, so a dump can be compared with one name by name.
#include "dump.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

struct Dump {
    hid_t file;
    char *path;
};

// Why H5Fcreate refused `path`: HDF5 keeps no errno, so ask the file system.
static const char *why_not_created(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return "a directory";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (stat(dir, &st) != 0) return "no such directory";
    if (!S_ISDIR(st.st_mode)) return "a parent that is not a directory";
    if (access(dir, W_OK) != 0) return "a directory that is not writable";
    if (stat(path, &st) == 0) return "a file HDF5 will not truncate (read-only, or open here: the fixture itself?)";
    return "a path HDF5 cannot create";
}

Dump *dump_create(const char *path, const Fixture *input) {
    // The fixture is read into memory, not held open, so nothing else
    // would stop --dump from truncating the very file it came from.
    struct stat in, out;
    if (stat(fixture_file(input), &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino)
        die(EXIT_BAD_INPUT, "%s: --dump: expected a file to write, found the fixture being read", path);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        die(EXIT_BAD_INPUT, "%s: cannot create the --dump file: expected a new or writable file, found %s", path,
            why_not_created(path));
    Dump *d = malloc(sizeof *d);
    char *copy = malloc(strlen(path) + 1);
    if (!d || !copy) die(EXIT_BAD_INPUT, "out of memory");
    strcpy(copy, path);
    d->file = file;
    d->path = copy;
    return d;
}

static void write_role(hid_t ds, const char *role) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(ds, "role", type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = attr < 0 ? -1 : H5Awrite(attr, type, &role);
    if (attr >= 0) H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    if (rc < 0) die(EXIT_BAD_INPUT, "cannot write attribute 'role' to the --dump file");
}

void dump_write(Dump *d, const char *name, const char *role, Tensor t) {
    if (H5Lexists(d->file, name, H5P_DEFAULT) > 0) H5Ldelete(d->file, name, H5P_DEFAULT);
    hsize_t dims[TENSOR_MAX_DIMS];
    for (int i = 0; i < t.ndim; i++) dims[i] = (hsize_t)t.shape[i];
    hid_t space = t.ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(t.ndim, dims, NULL);
    hid_t ds = H5Dcreate2(d->file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data);
    if (rc < 0) die(EXIT_BAD_INPUT, "%s: cannot write dataset '%s'", d->path, name);
    write_role(ds, role);
    H5Dclose(ds);
    H5Sclose(space);
}

void dump_close(Dump *d) {
    if (!d) return;
    if (H5Fclose(d->file) < 0) die(EXIT_BAD_INPUT, "%s: cannot finish the --dump file", d->path);
    free(d->path);
    free(d);
}
