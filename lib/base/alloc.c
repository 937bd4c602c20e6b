// alloc.c: the one door for memory (see alloc.h).
#define _DEFAULT_SOURCE  // strndup
#include "alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static atomic_ulong counted;
static unsigned long fail_at;  // 0: none fails
static atomic_bool in_child;   // a forked child neither counts nor fails

static void count_report(void) {
    if (!atomic_load(&in_child)) fprintf(stderr, "%s: %lu allocations\n", error_program(), atomic_load(&counted));
}

static void forked(void) { atomic_store(&in_child, true); }

__attribute__((constructor)) static void alloc_start(void) {
    const char *fail = getenv("LITATTN_FAIL_ALLOC"), *count = getenv("LITATTN_ALLOC_COUNT");
    if (fail && *fail) {
        char *end;
        unsigned long n = strtoul(fail, &end, 10);
        if (*end == '\0') fail_at = n;
    }
    if (count && *count && strcmp(count, "0") != 0) atexit(count_report);
    if (fail_at || (count && *count)) pthread_atfork(NULL, NULL, forked);
}

bool mem_fails_next(void) {
    if (atomic_load_explicit(&in_child, memory_order_relaxed)) return false;
    unsigned long n = atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed) + 1;
    return n == fail_at;
}

unsigned long mem_count(void) { return atomic_load(&counted); }

void *mem_malloc(size_t bytes) { return mem_fails_next() ? NULL : malloc(bytes ? bytes : 1); }
void *mem_calloc(size_t n, size_t size) { return mem_fails_next() ? NULL : calloc(n ? n : 1, size ? size : 1); }
void *mem_realloc(void *p, size_t bytes) { return mem_fails_next() ? NULL : realloc(p, bytes ? bytes : 1); }
char *mem_strdup(const char *s) { return mem_fails_next() ? NULL : strdup(s); }

void *xmalloc(size_t bytes, const char *what) {
    void *p = mem_malloc(bytes);
    if (!p) die_oom(bytes, what);
    return p;
}

void *xcalloc(size_t n, size_t size, const char *what) {
    if (size && n > SIZE_MAX / size) die_oom(SIZE_MAX, what);
    void *p = mem_calloc(n, size);
    if (!p) die_oom(n * size, what);
    return p;
}

void *xrealloc(void *p, size_t bytes, const char *what) {
    void *q = mem_realloc(p, bytes);
    if (!q) die_oom(bytes, what);  // p is still the caller's, reachable: die() exits
    return q;
}

char *xstrdup(const char *s, const char *what) {
    char *p = mem_strdup(s);
    if (!p) die_oom(strlen(s) + 1, what);
    return p;
}

char *xstrndup(const char *s, size_t n, const char *what) {
    char *p = mem_fails_next() ? NULL : strndup(s, n);
    if (!p) die_oom(strnlen(s, n) + 1, what);
    return p;
}

void *xaligned(size_t align, size_t bytes, const char *what) {
    void *p = mem_fails_next() ? NULL : aligned_alloc(align, bytes);
    if (!p) die_oom(bytes, what);
    return p;
}
