// bench_startup: how long a chapter takes as a whole process, start to exit.
//
//   bench_startup [--runs N] CHAPTER FIXTURE [CHAPTER FIXTURE ...]
//
// For each chapter (tests/meson.build passes every chapter of
// chapters/chapters.txt with its book fixture): the median wall time of N
// runs (default 20, after one not counted) on its book fixture, which it
// answers from what the build read (lib/io/hdf5_snapshot.h), and on a copy one
// byte longer, which HDF5 reads in the reader child; /bin/true, run the
// same way, is the floor. The runs alternate, so that a machine whose speed
// drifts slows both alike. Figures, never a verdict: it fails only when a
// program cannot be run or exits non-zero.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

// One run; its wall time in ms, or -1 (and why on stderr) if it failed.
static double once(char *const argv[]) {
    RunResult r;
    if (!run_program(argv, RUN_LIMIT_SECONDS, &r)) {
        fprintf(stderr, "bench_startup: cannot run %s\n", argv[0]);
        return -1;
    }
    double ms = r.exit_code == 0 ? 1e3 * r.seconds : -1;
    if (ms < 0) fprintf(stderr, "bench_startup: %s exited %d: %.300s\n", argv[0], r.exit_code, r.err);
    run_result_free(&r);
    return ms;
}

int main(int argc, char **argv) {
    int runs = 20, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--runs")) runs = atoi(argv[2]), first = 3;
    if (runs < 1 || runs > 1000 || (argc - first) < 2 || (argc - first) % 2) {
        fprintf(stderr, "usage: bench_startup [--runs N] CHAPTER FIXTURE [CHAPTER FIXTURE ...]\n");
        return 2;
    }
    double *a = calloc((size_t)runs, sizeof *a), *b = calloc((size_t)runs, sizeof *b),
           *t = calloc((size_t)runs, sizeof *t);
    if (!a || !b || !t) return 1;
    char copy[512];
    temp_path(copy, sizeof copy, "startup");
    char *truth[] = {"/bin/true", NULL};
    printf("Start-up: a chapter as a whole process, from spawn to exit; median wall ms of %d runs each\n", runs);
    printf("%-32s %10s %12s %10s\n", "chapter", "book", "other copy", "/bin/true");
    int failed = 0;
    for (int c = first; c + 1 < argc; c += 2) {
        const char *exe = argv[c], *fixture = argv[c + 1];
        if (!copy_file_with(fixture, copy, 1)) {
            fprintf(stderr, "bench_startup: cannot copy %s to %s\n", fixture, copy);
            failed = 1;
            break;
        }
        char *book[] = {(char *)exe, "--fixture", (char *)fixture, NULL};
        char *other[] = {(char *)exe, "--fixture", copy, NULL};
        int bad = once(book) < 0 || once(other) < 0 || once(truth) < 0;  // not counted
        for (int i = 0; i < runs && !bad; i++) {
            a[i] = once(book), b[i] = once(other), t[i] = once(truth);
            bad = a[i] < 0 || b[i] < 0 || t[i] < 0;
        }
        if (bad) {
            failed = 1;
            continue;
        }
        const char *name = strrchr(exe, '/');
        printf("%-32s %10.1f %12.1f %10.1f\n", name ? name + 1 : exe, harness_median(a, runs), harness_median(b, runs),
               harness_median(t, runs));
    }
    printf("book: the book fixture, answered from what the build read of it (no HDF5 at run time);\n"
           "other copy: the same bytes and one more, read by HDF5 in the reader child.\n"
           "Each figure includes the chapter's own work: where that is large (many draws, a\n"
           "GPT-2-size forward), it is most of the figure.\n");
    unlink(copy);
    free(a), free(b), free(t);
    return failed;
}
