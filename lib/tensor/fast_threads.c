// fast_threads.c: the fast kernels' threads. A call's work is n independent
// items (rows, heads, batch items, blocks of tiles, each a set of whole
// outputs); fast_threads_run gives each of k threads one contiguous range of
// them, the caller being thread 0, and returns when all are done. Threads
// are created and joined per call (some tens of microseconds), so a call
// takes more than one only where its work pays for them
// (fast_threads_plan); never more than fast_threads_get(). No sum is
// ever split, so the thread count changes no bit. State: the thread count
// (--threads), the process's.
#include "fast_threads.h"

#include <pthread.h>
#include <stdatomic.h>

#include "fast_path.h"

enum { MAX_THREADS = 64 };

static atomic_int thread_count = 1;

void fast_threads_set(int n) {
    atomic_store(&thread_count, n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n);
}

int fast_threads_get(void) { return atomic_load(&thread_count); }

typedef struct {
    RangeFn fn;
    void *ctx;
    int thread;
    long begin, end;
} Chunk;

static void *chunk_main(void *p) {
    const Chunk *c = p;
    c->fn(c->ctx, c->thread, c->begin, c->end);
    return NULL;
}

// How many threads n items are worth: min(threads, n, work / min_work),
// where `work` is what the n items cost and min_work what pays for one
// thread (creating and joining one costs some tens of microseconds).
int fast_threads_plan(long n, double work, double min_work) {
    long k = fast_threads_get();
    if (k > n) k = n;
    if (k > 1 && !fast_path_thresholds_ignored() && work / min_work < (double)k) k = (long)(work / min_work);
    return k < 1 ? 1 : (int)k;
}

// Runs fn over items [0, n) on k threads: thread t takes [n t / k,
// n (t+1) / k), the caller being thread 0. A thread that cannot be created
// leaves its range to the caller.
void fast_threads_run(int k, long n, RangeFn fn, void *ctx) {
    if (n <= 0) return;
    if (k <= 1) {
        fn(ctx, 0, 0, n);
        return;
    }
    pthread_t tid[MAX_THREADS];
    Chunk chunk[MAX_THREADS];
    int started[MAX_THREADS];
    for (int t = 0; t < k; t++) chunk[t] = (Chunk){fn, ctx, t, n * t / k, n * (t + 1) / k};
    // The workers need little stack (the kernels' buffers are on the heap).
    pthread_attr_t attr;
    const int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr) pthread_attr_setstacksize(&attr, 1 << 20);
    for (int t = 1; t < k; t++)
        started[t] = pthread_create(&tid[t], have_attr ? &attr : NULL, chunk_main, &chunk[t]) == 0;
    if (have_attr) pthread_attr_destroy(&attr);
    chunk_main(&chunk[0]);
    for (int t = 1; t < k; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else chunk_main(&chunk[t]);
    }
}

void fast_threads_parallel_for(long n, double work, double min_work, RangeFn fn, void *ctx) {
    if (n > 0) fast_threads_run(fast_threads_plan(n, work, min_work), n, fn, ctx);
}
