// layout_simd.c: the 8 x 8 register transpose over the lane-width layer's
// 8-lane vectors (simd.h), compiled at width 8 only (an 8 x 8 block is 8
// vectors of 8 on every path). No arithmetic: moves only.
#include "layout_simd.h"

#include "simd.h"

// unpack pairs, shuffle quads, swap 128-bit halves
void SIMD_FN(layout_simd_transpose_8x8)(float *out, long ldo, const float *a, long lda) {
    v8 row[8], t[8];
    for (int i = 0; i < 8; i++) row[i] = v8_load(a + i * lda);
    for (int i = 0; i < 8; i += 2) {
        t[i] = v8_unpacklo(row[i], row[i + 1]);
        t[i + 1] = v8_unpackhi(row[i], row[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        row[i] = v8_shuffle(t[i], t[i + 2], 0x44);
        row[i + 1] = v8_shuffle(t[i], t[i + 2], 0xee);
        row[i + 2] = v8_shuffle(t[i + 1], t[i + 3], 0x44);
        row[i + 3] = v8_shuffle(t[i + 1], t[i + 3], 0xee);
    }
    for (int i = 0; i < 4; i++) {
        v8_store(out + i * ldo, v8_halves(row[i], row[i + 4], 0x20));
        v8_store(out + (i + 4) * ldo, v8_halves(row[i], row[i + 4], 0x31));
    }
}
