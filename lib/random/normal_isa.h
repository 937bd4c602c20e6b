// normal_isa.h (internal to normal*.c): the AVX2 blocks of normal_fill, in
// their own file so that only it is compiled with -mavx2 -mfma.
#ifndef LITATTN_NORMAL_ISA_H
#define LITATTN_NORMAL_ISA_H

// data (nblocks * 16,): each block of 16 transformed in place, the same bits
// as normal.c's block16 on each (normal_avx2.c; call only if the CPU has
// AVX2 and FMA).
void normal_blocks_avx2(float *data, long nblocks, float mean, float std);

#endif
