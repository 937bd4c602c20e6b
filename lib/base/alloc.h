// alloc.h: the one door through which lib/ asks for memory.
//
// Every allocation of lib/ (malloc, calloc, realloc, strdup, aligned memory,
// an anonymous mapping) is made here, so that running out of memory looks
// the same everywhere: one line on stderr and exit 3 (error.h: die_oom), and
// so that a test can make any one of them fail:
//   LITATTN_FAIL_ALLOC=n     the n-th allocation of the process (1-based)
//                            fails as if the system had no memory left;
//   LITATTN_ALLOC_COUNT=1    at exit, "<program>: N allocations" on stderr.
//   LITATTN_ALLOC_SITES=1    at exit, "<program>: allocation sites: F-L@OFFSET
//                            ..." on stderr: for each place in the code that
//                            asks (the address its call returns to, as an
//                            offset that is the same in every run of the
//                            program), the n of its first and of its last
//                            allocation, in the order of the first (so that a
//                            test can fail one of each).
// They are read once, when the program starts. Only the process that started
// counts and fails: the reader child (io/hdf5_snapshot_child.c) inherits neither,
// so the count of a run does not depend on whether it forked. HDF5's own
// allocations are HDF5's (only the dump's file image comes through here), and
// die() formats its one line in its own buffers.
#ifndef LITATTN_ALLOC_H
#define LITATTN_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

// Allocations that die when there is no memory: "out of memory: expected N
// bytes for WHAT, found none", exit 3. `what` names what the memory is for.
void *xmalloc(size_t bytes, const char *what);
void *xcalloc(size_t n, size_t size, const char *what);  // n * size past SIZE_MAX is out of memory too
void *xrealloc(void *p, size_t bytes, const char *what);
char *xstrdup(const char *s, const char *what);
char *xstrndup(const char *s, size_t n, const char *what);
// `bytes` aligned to `align` (a power of two), `bytes` a multiple of it.
void *xaligned(size_t align, size_t bytes, const char *what);

// The same, returning NULL instead of dying, for the few callers that
// report running out of memory another way (the reader child, HDF5's file
// image callbacks).
void *mem_malloc(size_t bytes);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *p, size_t bytes);
char *mem_strdup(const char *s);

// Counts one allocation made by other means (an anonymous mmap) and says
// whether it is the one a test asked to fail.
bool mem_fails_next(void);

// How many allocations the process has made through this file so far.
unsigned long mem_count(void);

#endif
