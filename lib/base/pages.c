// pages.c: memory for large buffers (see pages.h).
#define _DEFAULT_SOURCE  // madvise(MADV_HUGEPAGE)
#include "pages.h"

#include <stdlib.h>
#include <sys/mman.h>

size_t pages_rounded(size_t bytes) {
    size_t align = bytes >= PAGES_HUGE ? PAGES_HUGE : PAGES_ALIGN;
    return (bytes + align - 1) & ~(align - 1);
}

void *pages_alloc(size_t bytes) {
    size_t rounded = pages_rounded(bytes ? bytes : 1);
    if (rounded < bytes) return NULL;  // past SIZE_MAX
    const int huge = rounded >= PAGES_HUGE;
    void *p = aligned_alloc(huge ? PAGES_HUGE : PAGES_ALIGN, rounded);
    if (p && huge) (void)madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}
