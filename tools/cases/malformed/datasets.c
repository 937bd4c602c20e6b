// datasets.c: one float32 dataset (an input, a weight, a gradient record)
// broken every way: missing, rank 0, the wrong rank, an extra axis,
// float64, int32, strings, a null dataspace, empty, a group, a dangling
// soft link, an external link to nothing, a corrupt deflate chunk, a bad
// Fletcher-32 checksum; then outside.c's kinds.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "malformed.h"

// Kinds that break one float32 dataset `name` (the input or a weight), each
// case named "<pfx>_<kind>:<name>"; `role` is the dataset's role attribute.
void dataset_cases(const Chapter *ch, const char *pfx, const char *name, const char *role) {
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
