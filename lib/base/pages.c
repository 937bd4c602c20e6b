// pages.c: memory for large buffers (see pages.h).
#define _DEFAULT_SOURCE  // madvise(MADV_HUGEPAGE, MADV_POPULATE_WRITE)
#include "pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "alloc.h"
#include "error.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL, and the pages fault in as usual
#endif

size_t pages_rounded(size_t bytes) {
    size_t align = bytes >= PAGES_HUGE ? PAGES_HUGE : PAGES_ALIGN;
    return (bytes + align - 1) & ~(align - 1);
}

// --- when to ask for huge pages ---------------------------------------------------
//
// A region advised MADV_HUGEPAGE gets a 2 MiB page per fault from the
// kernel's free 2 MiB blocks. When none is left, what the fault does depends
// on the THP "defrag" mode: under "always", "madvise" (Debian's default) and
// "defer+madvise" it compacts memory there and then (direct compaction), and
// the program waits: a third of a second for the GPT-2-size forward, right
// after another process (torch) has used and freed memory. Under "defer" and
// "never" it falls back to small pages at once. So: under "defer" or "never",
// always ask; under the others, ask only while /proc/buddyinfo counted free
// 2 MiB blocks at the first large allocation (less those handed out since,
// and a margin for the rest of the machine); past them, small pages.

enum { ASK_UNKNOWN, ASK_ALWAYS, ASK_WHILE_FREE };
static int ask = ASK_UNKNOWN;
static long free_blocks;  // 2 MiB blocks left to ask for under ASK_WHILE_FREE
enum { MARGIN_BLOCKS = 32 };

// The bracketed word of the defrag setting: "[madvise]" in
// "always defer defer+madvise [madvise] never".
static int defrag_stalls(void) {
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/defrag", "r");
    char line[256] = "";
    if (!f) return 0;  // no THP here: the advice is ignored, nothing stalls
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
    return !strstr(line, "[defer]") && !strstr(line, "[never]");
}

// Free blocks of 2 MiB and more, in 2 MiB units, over every zone: the
// columns of orders 9 and 10 of /proc/buddyinfo (4 KiB pages).
static long buddy_free_blocks(void) {
    FILE *f = fopen("/proc/buddyinfo", "r");
    char line[512];
    long blocks = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, "zone");
        if (!p) continue;
        p += 4;
        while (*p == ' ') p++;
        while (*p && *p != ' ') p++;  // the zone's name
        long count[11] = {0};
        int order = 0;
        for (char *end; order < 11; order++, p = end) {
            count[order] = strtol(p, &end, 10);
            if (end == p) break;
        }
        if (order == 11) blocks += count[9] + 2 * count[10];
    }
    if (f) fclose(f);
    return blocks;
}

// --- when huge pages cost more than small ones -------------------------------------
//
// On a virtual machine that gives free memory back to its host (virtio-balloon's
// free page reporting hands over every free 2 MiB block a few seconds after it
// is freed), a huge page made of such a block faults in, 4 KiB at a time, on
// the host while the kernel zeroes it: populating it then costs several times
// what small pages cost (which come from smaller free blocks, never handed
// over). Right after another process (torch) exited, most 2 MiB blocks may be
// such ones. So a buffer's huge pages are populated PROBE_BYTES at a time,
// each probe's CPU time taken (the thread's: time the program waits for the
// CPU does not count); past SLOW_NS_PER_HUGE per huge page, the rest of the
// buffer and every later one go on small pages. Where huge pages are cheap (a
// few hundred microseconds of CPU each) nothing changes.
enum { SLOW_NS_PER_HUGE = 2000000 };  // 2 ms of CPU for 2 MiB: 1 GB/s, about what small pages cost
#define PROBE_BYTES ((size_t)2 * PAGES_HUGE)
static int huge_slow;

static long long thread_cpu_ns(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return -1;
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int ask_for_huge(size_t rounded) {
    if (huge_slow) return 0;
    if (ask == ASK_UNKNOWN) {
        ask = defrag_stalls() ? ASK_WHILE_FREE : ASK_ALWAYS;
        if (ask == ASK_WHILE_FREE) free_blocks = buddy_free_blocks() - MARGIN_BLOCKS;
    }
    if (ask == ASK_ALWAYS) return 1;
    long need = (long)(rounded / PAGES_HUGE);
    if (need > free_blocks) return 0;
    free_blocks -= need;
    return 1;
}

void *pages_alloc(size_t bytes, const char *what) {
    size_t rounded = pages_rounded(bytes ? bytes : 1);
    if (rounded < bytes) die_oom(SIZE_MAX, what);  // past SIZE_MAX
    const int huge = rounded >= PAGES_HUGE;
    void *p = xaligned(huge ? PAGES_HUGE : PAGES_ALIGN, rounded, what);
    if (!huge) return p;
    // Huge pages for the whole 2 MiB blocks the buffer covers; its tail (a
    // 3 MiB tensor's last 1 MiB) on small pages, so that no page is zeroed
    // that the buffer does not use.
    const size_t head = bytes / PAGES_HUGE * PAGES_HUGE, used = (bytes + 4095) & ~(size_t)4095;
    size_t done = 0;  // bytes populated
    if (ask_for_huge(head)) {
        (void)madvise(p, head, MADV_HUGEPAGE);
        // The huge pages a probe at a time, each timed; the first slow one
        // puts the rest on small pages.
        while (done < head) {
            size_t n = head - done < PROBE_BYTES ? head - done : PROBE_BYTES;
            long long t0 = thread_cpu_ns();
            int populated = madvise((char *)p + done, n, MADV_POPULATE_WRITE) == 0;
            long long t1 = thread_cpu_ns();
            done += n;
            if (!populated || t0 < 0 || t1 < 0) break;  // no populating, or no clock: pages fault in as touched
            if (t1 - t0 > (long long)(n / PAGES_HUGE) * SLOW_NS_PER_HUGE) {
                huge_slow = 1;
                if (head > done) (void)madvise((char *)p + done, head - done, MADV_NOHUGEPAGE);
                break;
            }
        }
    }
    if (used > head) (void)madvise((char *)p + head, rounded - head, MADV_NOHUGEPAGE);
    // Every page at once, in one call, instead of one fault each: the
    // buffer is about to be written whole. Advice only: on failure the
    // pages fault in as they are touched.
    (void)madvise((char *)p + done, used - done, MADV_POPULATE_WRITE);
    return p;
}
