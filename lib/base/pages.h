// pages.h: memory for large buffers, on transparent huge pages where it can be.
//
// Small pages cost twice, most of all on a virtual machine whose page tables
// the host shadows: a fault per 4 KiB page, and a TLB miss on every new page
// a kernel streams through. A buffer of 2 MiB or more is therefore
// 2 MiB-aligned, advised MADV_HUGEPAGE where that cannot stall the program
// (pages.c: the kernel's defrag mode, and free 2 MiB blocks), and populated
// in one call (MADV_POPULATE_WRITE) instead of one fault per page. Huge
// pages can cost more than small ones: on a virtual machine that hands its
// free 2 MiB blocks back to the host, each such block faults in again on the
// host, 4 KiB at a time. So a buffer's huge pages are populated 4 MiB at
// a time, each step timed (the thread's CPU time); past 2 ms per huge page,
// that buffer's rest and every later buffer go on small pages. Smaller buffers are aligned to 64
// bytes, for any vector load.
#ifndef LITATTN_PAGES_H
#define LITATTN_PAGES_H

#include <stddef.h>

enum { PAGES_HUGE = 2 * 1024 * 1024, PAGES_ALIGN = 64 };

// The bytes pages_alloc(n) reserves: n rounded up to 2 MiB when n is that
// large, else to 64 bytes.
size_t pages_rounded(size_t bytes);
// A buffer of at least `bytes` (uninitialised), given back with free(); out
// of memory, the program stops (alloc.h: "... for <what> ...", exit 3).
void *pages_alloc(size_t bytes, const char *what);

#endif
