// kernels.h: the scalar reference forwards, by family (gemm.h, rows.h,
// layout.h). Superseded by the family headers.
#ifndef LITATTN_KERNELS_H
#define LITATTN_KERNELS_H
#include "gemm.h"
#include "layout.h"
#include "rows.h"
#endif
