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

// LITATTN_ALLOC_SITES=1: where each allocation was asked for (the address
// its call returns to), so that a test can fail one allocation of each site.
#define MAX_SITES 4096
static bool tracing;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const void *at;
    unsigned long first, last;
} sites[MAX_SITES];
static int n_sites;

static void count_report(void) {
    if (!atomic_load(&in_child)) fprintf(stderr, "%s: %lu allocations\n", error_program(), atomic_load(&counted));
}

// "<program>: allocation sites: F-L@OFFSET ...": each site's first and last
// allocation, in the order of the first, and where it is.
static void sites_report(void) {
    if (atomic_load(&in_child)) return;
    fprintf(stderr, "%s: allocation sites:", error_program());
    for (int i = 0; i < n_sites; i++)  // the site as an offset from this function: the same in every run
        fprintf(stderr, " %lu-%lu@%td", sites[i].first, sites[i].last,
                (const char *)sites[i].at - (const char *)(uintptr_t)sites_report);
    fprintf(stderr, "%s\n", n_sites == MAX_SITES ? " (more not listed)" : "");
}

static void forked(void) { atomic_store(&in_child, true); }

__attribute__((constructor)) static void alloc_start(void) {
    const char *fail = getenv("LITATTN_FAIL_ALLOC"), *count = getenv("LITATTN_ALLOC_COUNT");
    const char *trace = getenv("LITATTN_ALLOC_SITES");
    if (fail && *fail) {
        char *end;
        unsigned long n = strtoul(fail, &end, 10);
        if (*end == '\0') fail_at = n;
    }
    if (count && *count && strcmp(count, "0") != 0) atexit(count_report);
    tracing = trace && *trace && strcmp(trace, "0") != 0;
    if (tracing) atexit(sites_report);
    if (fail_at || (count && *count) || tracing) pthread_atfork(NULL, NULL, forked);
}

// Counts one allocation, asked for at `site`, and says whether it is the one to fail.
static bool fails(const void *site) {
    if (atomic_load_explicit(&in_child, memory_order_relaxed)) return false;
    unsigned long n = atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed) + 1;
    if (tracing) {
        pthread_mutex_lock(&sites_lock);
        int i = 0;
        while (i < n_sites && sites[i].at != site) i++;
        if (i < n_sites) sites[i].last = n;
        else if (n_sites < MAX_SITES) sites[n_sites].at = site, sites[n_sites].first = sites[n_sites].last = n, n_sites++;
        pthread_mutex_unlock(&sites_lock);
    }
    return n == fail_at;
}

#define CALLER __builtin_return_address(0)

bool mem_fails_next(void) { return fails(CALLER); }

unsigned long mem_count(void) { return atomic_load(&counted); }

void *mem_malloc(size_t bytes) { return fails(CALLER) ? NULL : malloc(bytes ? bytes : 1); }
void *mem_calloc(size_t n, size_t size) { return fails(CALLER) ? NULL : calloc(n ? n : 1, size ? size : 1); }
void *mem_realloc(void *p, size_t bytes) { return fails(CALLER) ? NULL : realloc(p, bytes ? bytes : 1); }
char *mem_strdup(const char *s) { return fails(CALLER) ? NULL : strdup(s); }

void *xmalloc(size_t bytes, const char *what) {
    void *p = fails(CALLER) ? NULL : malloc(bytes ? bytes : 1);
    if (!p) die_oom(bytes, what);
    return p;
}

void *xcalloc(size_t n, size_t size, const char *what) {
    if (size && n > SIZE_MAX / size) die_oom(SIZE_MAX, what);
    void *p = fails(CALLER) ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p) die_oom(n * size, what);
    return p;
}

void *xrealloc(void *p, size_t bytes, const char *what) {
    void *q = fails(CALLER) ? NULL : realloc(p, bytes ? bytes : 1);
    if (!q) die_oom(bytes, what);  // p is still the caller's, reachable: die() exits
    return q;
}

char *xstrdup(const char *s, const char *what) {
    char *p = fails(CALLER) ? NULL : strdup(s);
    if (!p) die_oom(strlen(s) + 1, what);
    return p;
}

char *xstrndup(const char *s, size_t n, const char *what) {
    char *p = fails(CALLER) ? NULL : strndup(s, n);
    if (!p) die_oom(strnlen(s, n) + 1, what);
    return p;
}

void *xaligned(size_t align, size_t bytes, const char *what) {
    void *p = fails(CALLER) ? NULL : aligned_alloc(align, bytes);
    if (!p) die_oom(bytes, what);
    return p;
}
