// pages.h: memory for large buffers, on transparent huge pages where it can be.
//
// A fresh 4 KiB page costs a fault of about 16 us on these machines (a
// virtual machine that shadows page tables): the 129 MB of a GPT-2-size dump
// would cost half a second in faults alone. A buffer of 2 MiB or more is
// therefore 2 MiB-aligned and advised MADV_HUGEPAGE (advice only: without
// THP it is an ordinary buffer). Smaller ones are aligned to 64 bytes, for
// any vector load.
#ifndef LITATTN_PAGES_H
#define LITATTN_PAGES_H

#include <stddef.h>

enum { PAGES_HUGE = 2 * 1024 * 1024, PAGES_ALIGN = 64 };

// The bytes pages_alloc(n) reserves: n rounded up to 2 MiB when n is that
// large, else to 64 bytes.
size_t pages_rounded(size_t bytes);
// A buffer of at least `bytes` (uninitialised; NULL if out of memory),
// given back with free().
void *pages_alloc(size_t bytes);

#endif
