// simd_isa.c: the tables of simd_isa.h, one per path, each made from the one
// list SIMD_ISA_KERNELS. Each family's SIMD body is compiled at width 8
// (AVX2, NEON) and, on x86-64, where the width can change without changing a
// bit, at 16 (AVX-512); the kernels whose lanes are the reference's order on
// every path (the softmax's backward: torch's 8 AVX2 lanes), the 8 x 8
// transpose, and the division and multiplication by a scalar are compiled
// at width 8 only, and the AVX-512 tables take AVX2's.
#include "simd_isa.h"

#include "gemm_simd.h"
#include "layout_simd.h"
#include "noise_simd.h"
#include "rows_simd.h"

// A table's kernels: each entry of SIMD_ISA_KERNELS as field = body
// function, suffixed with the build the table names for its kind
// (SIMD_ISA_TILE, SIMD_ISA_WIDE, SIMD_ISA_EIGHT, defined before each table).
#define SIMD_ISA_PASTE_(fn, suffix) fn##_##suffix
#define SIMD_ISA_NAME_(fn, suffix) SIMD_ISA_PASTE_(fn, suffix)
#define SIMD_ISA_ENTRY_(field, type, fn, build) .field = SIMD_ISA_NAME_(fn, SIMD_ISA_##build),

#ifdef LITATTN_FAST_X86
#define SIMD_ISA_TILE avx2
#define SIMD_ISA_WIDE avx2
#define SIMD_ISA_EIGHT avx2
const SimdIsa simd_isa_avx2 = {
    .name = "avx2",
    .mr = GEMM_AVX2_MR,
    .nr = GEMM_AVX2_NR,
    .kc = GEMM_AVX2_KC,
    .mc = GEMM_AVX2_MC,
    .nc = GEMM_AVX2_NC,
    SIMD_ISA_KERNELS(SIMD_ISA_ENTRY_)
};
#undef SIMD_ISA_TILE
#undef SIMD_ISA_WIDE

#define SIMD_ISA_TILE avx512
#define SIMD_ISA_WIDE avx512
const SimdIsa simd_isa_avx512 = {
    .name = "avx512",
    .mr = GEMM_AVX512_MR,
    .nr = GEMM_AVX512_NR,
    .kc = GEMM_AVX2_KC,
    .mc = GEMM_AVX2_MC,
    .nc = GEMM_AVX2_NC,
    SIMD_ISA_KERNELS(SIMD_ISA_ENTRY_)
};
#undef SIMD_ISA_TILE

// The path for a core that runs a 512-bit instruction as two 256-bit halves
// (AMD's Zen 4). There a 512-bit mul or add takes two slots of the FP pipes,
// so the 8 x 32 tile computes no more flops per cycle than AVX2's 6 x 16 and
// runs slower; but a 512-bit instruction takes one slot of the scheduler, so
// a chain as long as exp's keeps twice the elements in flight, and the
// softmax runs faster. The products take AVX2's tile; everything else is
// AVX-512's. (The timings of both: tests/BENCHMARKS.md.)
#define SIMD_ISA_TILE avx2
const SimdIsa simd_isa_avx512_ymm = {
    .name = "avx512-ymm",
    .mr = GEMM_AVX2_MR,
    .nr = GEMM_AVX2_NR,
    .kc = GEMM_AVX2_KC,
    .mc = GEMM_AVX2_MC,
    .nc = GEMM_AVX2_NC,
    SIMD_ISA_KERNELS(SIMD_ISA_ENTRY_)
};
#undef SIMD_ISA_TILE
#undef SIMD_ISA_WIDE
#undef SIMD_ISA_EIGHT

const SimdIsa *const simd_isa_tables[] = {&simd_isa_avx2, &simd_isa_avx512, &simd_isa_avx512_ymm, NULL};

#elif defined(LITATTN_FAST_NEON)
// AArch64: every body compiled once, at 8 lanes, with NEON's own 6 x 16
// tile in its 32 registers
#define SIMD_ISA_TILE neon
#define SIMD_ISA_WIDE neon
#define SIMD_ISA_EIGHT neon
const SimdIsa simd_isa_neon = {
    .name = "neon",
    .mr = GEMM_NEON_MR,
    .nr = GEMM_NEON_NR,
    .kc = GEMM_NEON_KC,
    .mc = GEMM_NEON_MC,
    .nc = GEMM_NEON_NC,
    SIMD_ISA_KERNELS(SIMD_ISA_ENTRY_)
};
#undef SIMD_ISA_TILE
#undef SIMD_ISA_WIDE
#undef SIMD_ISA_EIGHT

const SimdIsa *const simd_isa_tables[] = {&simd_isa_neon, NULL};

#else
// no SIMD path on this architecture: the scalar kernels only
const SimdIsa *const simd_isa_tables[] = {NULL};
#endif
