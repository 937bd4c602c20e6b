// biases.c: qkv_bias set to 1 with every bias missing, and each bias in
// turn missing, one longer, of rank 2, or float64, the others right.
#include <stdlib.h>
#include <string.h>

#include "malformed.h"

// A chapter with qkv_bias reads NAME.bias (d_out,) beside every NAME.weight
// once qkv_bias is 1.
void bias_cases(const Chapter *ch) {
    char biases[MAX_NAMES][128];
    int n = 0;
    for (int w = 0; w < ch->n_weights; w++) {
        size_t len = strlen(ch->weights[w]);
        if (len > 7 && !strcmp(ch->weights[w] + len - 7, ".weight"))
            snprintf(biases[n++], sizeof biases[0], "%.*s.bias", (int)(len - 7), ch->weights[w]);
    }
    if (n == 0) return;
    // Every bias name (at most 127 bytes each) and a '|' between two: at most
    // MAX_NAMES x 128 bytes with the NUL.
    char path[4096], kase[160], any_bias[MAX_NAMES * sizeof biases[0]];
    size_t used = 0;
    for (int b = 0; b < n; b++) {
        const size_t len = strnlen(biases[b], sizeof biases[0] - 1);
        if (b) any_bias[used++] = '|';
        memcpy(any_bias + used, biases[b], len);
        used += len;
    }
    any_bias[used] = '\0';
    hid_t f = begin(ch, "qkv_bias_without_biases", path, sizeof path);
    put_int_attr(f, "qkv_bias", 1);
    end(f, "qkv_bias_without_biases", ch, path, any_bias, "prefix");

    for (int b = 0; b < n; b++) {
        static const char *const kinds[] = {"bias_missing", "bias_wrong_length", "bias_rank2", "bias_float64"};
        for (int k = 0; k < 4; k++) {
            snprintf(kase, sizeof kase, "%s:%.120s", kinds[k], biases[b]);
            f = begin(ch, kase, path, sizeof path);
            put_int_attr(f, "qkv_bias", 1);
            Array w = read_array(f, ch->weights[0]);
            hsize_t len = w.dims[0];
            float *v = malloc(len * sizeof *v);
            double *dv = malloc(len * sizeof *dv);
            for (hsize_t i = 0; i < len; i++) v[i] = 0.25f * (float)(i + 1), dv[i] = v[i];
            for (int i = 0; i < n; i++)
                if (i != b) put_floats(f, biases[i], "weight", 1, &len, v);
            hsize_t longer = len + 1, row[2] = {1, len};
            float *lv = calloc(len + 1, sizeof *lv);
            if (k == 1) put_floats(f, biases[b], "weight", 1, &longer, lv);
            if (k == 2) put_floats(f, biases[b], "weight", 2, row, v);
            if (k == 3) put_dataset(f, biases[b], "weight", H5T_IEEE_F64LE, 1, &len, H5T_NATIVE_DOUBLE, dv, H5P_DEFAULT);
            free(v), free(dv), free(lv), free(w.data);
            // Any of the biases: the chapter reads them in its own order, and
            // the cell line says qkv_bias=True first.
            end(f, kase, ch, path, biases[b], "finite");
        }
    }
}
