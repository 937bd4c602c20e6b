// fast_path.c: which path the fast kernels (*_fast.c) run on, chosen
// once per process: on x86-64 AVX-512 (F/BW/DQ/VL), AVX2 + FMA, or the
// scalar reference kernels, and on AMD's Zen 4 (512-bit instructions as two
// 256-bit halves) AVX-512's kernels with AVX2's register tile for the
// products; on AArch64 NEON (Advanced SIMD) or the scalar kernels.
// LITATTN_KERNELS=scalar|avx2|avx512|avx512-ymm|neon asks for one; a path
// the CPU lacks gives the best it has. Also whether the size thresholds hold
// (fast_path_ignore_thresholds, for tests). Every path gives the same
// bits: the choice is speed only. State: the path and the thresholds' flag,
// the process's.
#include "fast_path.h"

#ifdef LITATTN_FAST_X86
#include <cpuid.h>
#endif
#ifdef LITATTN_FAST_NEON
#include <sys/auxv.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t path_once = PTHREAD_ONCE_INIT;
static atomic_int active_path = FAST_PATH_SCALAR;
static atomic_int ignore_thresholds = 0;  // tests: every size is fast and split

// The best path this CPU (and OS: __builtin_cpu_supports checks XCR0) runs.
static int best_path(void) {
#ifdef LITATTN_FAST_X86
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (avx2 && avx512) return FAST_PATH_AVX512;
    if (avx2) return FAST_PATH_AVX2;
#endif
#ifdef LITATTN_FAST_NEON
    // Advanced SIMD and its floating point: part of every ARMv8-A core
    // Linux runs on, asked all the same (HWCAP_ASIMD, HWCAP_FP)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    if ((hwcap & HWCAP_ASIMD) && (hwcap & HWCAP_FP)) return FAST_PATH_NEON;
#endif
    return FAST_PATH_SCALAR;
}

// The path to take when none is asked for: the best one, except on a core
// that runs 512-bit instructions as two 256-bit halves, AMD's Zen 4 (family
// 19h; Zen 3, the same family, has no AVX-512). There AVX-512's register
// tile is the slower and its exp the faster, so the path is AVX-512 with
// AVX2's tile (simd_isa_avx512_ymm). The bits are the same either way.
static int preferred_path(int best) {
#ifdef LITATTN_FAST_X86
    unsigned int eax, ebx, ecx, edx;
    if (best == FAST_PATH_AVX512 && __get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == 0x68747541u /* "Auth" */ &&
        edx == 0x69746e65u /* "enti" */ && ecx == 0x444d4163u /* "cAMD" */ && __get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        const unsigned int base = (eax >> 8) & 0xf, family = base == 0xf ? base + ((eax >> 20) & 0xff) : base;
        if (family == 0x19) return FAST_PATH_AVX512_YMM;
    }
#endif
    return best;
}

// Whether a CPU whose best path is best runs path: every CPU the scalar
// one; x86-64's AVX2 where its best is AVX2 or AVX-512, AVX-512 (with either
// tile) where it is AVX-512; NEON where it is NEON.
static bool runs_on(int path, int best) {
    switch (path) {
    case FAST_PATH_SCALAR: return true;
    case FAST_PATH_AVX2: return best == FAST_PATH_AVX2 || best == FAST_PATH_AVX512;
    case FAST_PATH_AVX512:
    case FAST_PATH_AVX512_YMM: return best == FAST_PATH_AVX512;
    case FAST_PATH_NEON: return best == FAST_PATH_NEON;
    default: return false;
    }
}

// path if this CPU runs it, else the best path it has (below the first
// path: the scalar one)
static int clamp_path(int path, int best) {
    if (path < FAST_PATH_SCALAR) return FAST_PATH_SCALAR;
    return runs_on(path, best) ? path : best;
}

int fast_path_preferred(void) { return preferred_path(best_path()); }

static void choose_path(void) {
    const int best = best_path();
    int want = preferred_path(best);
    const char *env = getenv("LITATTN_KERNELS");
    if (env && strcmp(env, "scalar") == 0) want = FAST_PATH_SCALAR;
    if (env && strcmp(env, "avx2") == 0) want = FAST_PATH_AVX2;
    if (env && strcmp(env, "avx512") == 0) want = FAST_PATH_AVX512;
    if (env && strcmp(env, "avx512-ymm") == 0) want = FAST_PATH_AVX512_YMM;
    if (env && strcmp(env, "neon") == 0) want = FAST_PATH_NEON;
    atomic_store(&active_path, clamp_path(want, best));
}

int fast_path_get(void) {
    pthread_once(&path_once, choose_path);
    return atomic_load(&active_path);
}

const char *fast_path_name_of(int path) {
    static const char *const names[FAST_PATHS] = {"scalar", "avx2", "avx512", "avx512-ymm", "neon"};
    return path >= FAST_PATH_SCALAR && path < FAST_PATHS ? names[path] : "none";
}

const char *fast_path_name(void) { return fast_path_name_of(fast_path_get()); }

bool fast_path_runs(int path) { return runs_on(path, best_path()); }

void fast_path_force(int path) {
    pthread_once(&path_once, choose_path);
    atomic_store(&active_path, clamp_path(path, best_path()));
}

void fast_path_ignore_thresholds(int on) { atomic_store(&ignore_thresholds, on != 0); }

int fast_path_thresholds_ignored(void) { return atomic_load(&ignore_thresholds); }

const SimdIsa *fast_path_isa_of(int path) {
    switch (path) {
#ifdef LITATTN_FAST_X86
    case FAST_PATH_AVX2: return &simd_isa_avx2;
    case FAST_PATH_AVX512: return &simd_isa_avx512;
    case FAST_PATH_AVX512_YMM: return &simd_isa_avx512_ymm;
#endif
#ifdef LITATTN_FAST_NEON
    case FAST_PATH_NEON: return &simd_isa_neon;
#endif
    default: return NULL;
    }
}

// The active instruction set's kernels, or NULL for the scalar path.
const SimdIsa *fast_path_isa(void) { return fast_path_isa_of(fast_path_get()); }
