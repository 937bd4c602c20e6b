// fast_threads.h: the fast kernels' threads: the thread count (--threads)
// and the split of a call's independent items into one contiguous range per
// thread. No sum is ever split, so the thread count changes no bit.
#ifndef LITATTN_FAST_THREADS_H
#define LITATTN_FAST_THREADS_H

// Threads per call: 1 (the default) or more. The bits never depend on it.
void fast_threads_set(int n);
int fast_threads_get(void);

// --- for the dispatchers ---
// Work items [begin, end) on thread `thread` (0: the caller).
typedef void (*RangeFn)(void *ctx, int thread, long begin, long end);
// How many threads n items are worth: min(threads, n, work / min_work),
// where `work` is what the n items cost and min_work what pays for one
// thread.
int fast_threads_plan(long n, double work, double min_work);
// Runs fn over items [0, n) on k threads: thread t takes [n t / k,
// n (t+1) / k), the caller being thread 0.
void fast_threads_run(int k, long n, RangeFn fn, void *ctx);
// fast_threads_run on fast_threads_plan(n, work, min_work) threads.
void fast_threads_parallel_for(long n, double work, double min_work, RangeFn fn, void *ctx);

#endif
