// backward_kernels.h: the scalar reference backwards, by family (gemm.h,
// rows.h, noise.h, layout.h, attend.h). Superseded by the family headers.
#ifndef LITATTN_BACKWARD_KERNELS_H
#define LITATTN_BACKWARD_KERNELS_H
#include "attend.h"
#include "gemm.h"
#include "layout.h"
#include "noise.h"
#include "rows.h"
#endif
