// fast_kernels.h: the fast kernels, by family (gemm.h, rows.h, noise.h,
// layout.h, attend.h), their path (fast_path.h) and threads
// (fast_threads.h). Superseded by those headers.
#ifndef LITATTN_FAST_KERNELS_H
#define LITATTN_FAST_KERNELS_H
#include "attend.h"
#include "fast_path.h"
#include "fast_threads.h"
#include "gemm.h"
#include "layout.h"
#include "noise.h"
#include "rows.h"
#endif
