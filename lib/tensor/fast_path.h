// fast_path.h: which path the fast kernels (the *_fast.c dispatchers) run
// on, chosen once per process: on x86-64 AVX-512 (F/BW/DQ/VL), AVX2 + FMA,
// or the scalar reference, and on a core that runs 512-bit instructions as
// two 256-bit halves (Zen 4) AVX-512 with AVX2's register tile for the
// products; on AArch64 NEON or the scalar reference. The environment
// variable LITATTN_KERNELS=scalar|avx2|avx512|avx512-ymm|neon asks for a
// path; a path the CPU lacks falls back silently to the best one it has.
// Every path gives the same bits.
#ifndef LITATTN_FAST_PATH_H
#define LITATTN_FAST_PATH_H

#include <stdbool.h>

#include "simd_isa.h"

// The active path: 0 = scalar (the reference), 1 = AVX2, 2 = AVX-512, 3 =
// AVX-512 with AVX2's 6 x 16 register tile for the products (which needs
// what AVX-512 needs), 4 = NEON (AArch64's Advanced SIMD).
enum {
    FAST_PATH_SCALAR = 0,
    FAST_PATH_AVX2 = 1,
    FAST_PATH_AVX512 = 2,
    FAST_PATH_AVX512_YMM = 3,
    FAST_PATH_NEON = 4,
    FAST_PATHS = 5
};
int fast_path_get(void);
const char *fast_path_name(void);
// "scalar", "avx2", "avx512", "avx512-ymm", "neon" (the LITATTN_KERNELS values)
const char *fast_path_name_of(int path);
// Whether this CPU runs the path.
bool fast_path_runs(int path);
// The path taken when LITATTN_KERNELS asks for none (the best this CPU has,
// or AVX-512 with AVX2's tile on a Zen 4).
int fast_path_preferred(void);
// Asks for a path (tests, benchmark); clamps to the best path the CPU has.
void fast_path_force(int path);
// Tests only: 1 = ignore the size thresholds, so that every size takes the
// chosen path (no scalar fallback for small sizes) and any work with two or
// more pieces is split over the threads; 0 (the default) = choose by size.
void fast_path_ignore_thresholds(int on);

// --- for the dispatchers ---
// The active path's kernels, or NULL for the scalar path.
const SimdIsa *fast_path_isa(void);
// A path's kernels whether this CPU runs them or not (tests): NULL for the
// scalar path and for a path of another architecture than the build's.
const SimdIsa *fast_path_isa_of(int path);
// 1 when fast_path_ignore_thresholds(1) asked every size to take the
// path and every work of two or more pieces to be split over the threads.
int fast_path_thresholds_ignored(void);

#endif
