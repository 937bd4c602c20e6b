// shapes.c: a weight (or a gradient record) of the right rank and the wrong
// shape: one more on the first axis, one more on the last, or (non-square
// matrices) transposed.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "malformed.h"

// A weight (or a gradient record) of the right rank and the wrong shape: one
// more on the first axis, one more on the last, or (matrices) transposed.
// Cases "<pfx>_axis0:<name>", ...; `role` is the dataset's role attribute.
void shape_cases(const Chapter *ch, const char *name, const char *pfx, const char *role) {
    static const char *const kinds[] = {"axis0", "last_axis", "transposed"};
    for (int k = 0; k < 3; k++) {
        char path[4096], kase[160];
        snprintf(kase, sizeof kase, "%s_%s:%s", pfx, kinds[k], name);
        hid_t f = begin(ch, kase, path, sizeof path);
        Array a = read_array(f, name);
        if (a.rank == 0 || (k == 1 && a.rank == 1) || (k == 2 && (a.rank != 2 || a.dims[0] == a.dims[1]))) {
            // Not a kind this shape has: the copy is dropped.
            MUST(H5Fclose(f));
            unlink(path);
            free(a.data);
            continue;
        }
        hsize_t dims[MAX_RANK];
        memcpy(dims, a.dims, sizeof dims);
        if (k == 0) dims[0]++;
        if (k == 1) dims[a.rank - 1]++;
        if (k == 2) dims[0] = a.dims[1], dims[1] = a.dims[0];
        size_t n = 1;
        for (int d = 0; d < a.rank; d++) n *= dims[d];
        float *v = calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++) v[i] = a.data[i % a.n];
        put_floats(f, name, role, a.rank, dims, v);
        free(v);
        free(a.data);
        end(f, kase, ch, path, name, "prefix");
    }
}
