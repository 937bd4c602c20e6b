// outside.c: a dataset whose values do not live in the file, or that this
// reader cannot decode: a virtual dataset with its source missing, external
// storage, an external link that resolves, a filter this HDF5 does not
// have. Each would read as something (fill values, another file's data, a
// raw file's bytes) if the reader did not refuse it before reading.
#include <stdlib.h>
#include <string.h>

#include "malformed.h"

// A filter no HDF5 library registers: its id is one of those set aside for
// testing (256-511). Here it copies the bytes, so the file is written; a
// reader does not have it.
#define FAKE_FILTER 305
static size_t copy_filter(unsigned flags, size_t n, const unsigned values[], size_t nbytes, size_t *buf_size,
                          void **buf) {
    (void)flags, (void)n, (void)values, (void)buf_size, (void)buf;
    return nbytes;
}

// Data that does not live in the file, or that this reader cannot decode:
// each would read as something (fill values, another file's data, a raw
// file's bytes) if the reader did not refuse it before reading.
void outside_cases(const Chapter *ch, const char *pfx, const char *name, const char *role) {
    char path[4096], kase[128], other[4200];
    hid_t f, dcpl;
    Array a;
#define CASE(kind) (snprintf(kase, sizeof kase, "%s_%s:%s", pfx, kind, name), f = begin(ch, kase, path, sizeof path), \
                    a = read_array(f, name), dcpl = H5Pcreate(H5P_DATASET_CREATE))
#define DONE() (H5Pclose(dcpl), end(f, kase, ch, path, name, "prefix"), free(a.data))

    // A virtual dataset whose source file is missing: HDF5 reads fill values.
    CASE("vds_missing_source");
    if (a.rank == 0) fatal("dataset '%s' is a scalar: no layout but contiguous or compact", name);
    hid_t vspace = H5Screate_simple(a.rank, a.dims, NULL), sspace = H5Screate_simple(a.rank, a.dims, NULL);
    MUST(H5Pset_virtual(dcpl, vspace, "no_such_source.h5", "/data", sspace));
    H5Sclose(vspace), H5Sclose(sspace);
    put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, NULL, dcpl);
    DONE();

    // External storage: the values in a raw file beside it, which exists.
    CASE("external_storage");
    snprintf(other, sizeof other, "%s.raw", path);
    MUST(H5Pset_external(dcpl, other, 0, (hsize_t)(a.n * sizeof(float))));
    put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, a.data, dcpl);
    DONE();

    // An external link that resolves: to the same dataset in a good copy.
    CASE("external_link_resolving");
    snprintf(other, sizeof other, "%s.target.h5", path);
    {
        char src[4096];
        size_t n;
        good_path(ch, src, sizeof src);
        unsigned char *bytes = slurp(src, &n);
        spit(other, bytes, n);
        free(bytes);
    }
    MUST(H5Ldelete(f, name, H5P_DEFAULT));
    MUST(H5Lcreate_external(other, name, f, name, H5P_DEFAULT, H5P_DEFAULT));
    DONE();

    // A filter this reader's HDF5 does not have (plugins are not loaded).
    CASE("filter_unavailable");
    H5Z_class2_t fake = {H5Z_CLASS_T_VERS, FAKE_FILTER, 1, 1, "litattn test filter", NULL, NULL, copy_filter};
    if (H5Zfilter_avail(FAKE_FILTER) <= 0) MUST(H5Zregister(&fake));
    hsize_t chunk[MAX_RANK] = {1, 1, 1, 1};
    memcpy(chunk, a.dims, (size_t)a.rank * sizeof *chunk);
    MUST(H5Pset_chunk(dcpl, a.rank, chunk));
    MUST(H5Pset_filter(dcpl, FAKE_FILTER, H5Z_FLAG_MANDATORY, 0, NULL));
    put_dataset(f, name, role, H5T_IEEE_F32LE, a.rank, a.dims, H5T_NATIVE_FLOAT, a.data, dcpl);
    DONE();
#undef CASE
#undef DONE
}
