// test_exit_codes.c: lib/base's ways to stop (error.h) and its door for
// memory (alloc.h), each in a child process: the exit code, and the one line
// on stderr, whole.
//   die_oom            exit 3, "out of memory: expected N bytes for WHAT, found none"
//   die_internal       exit 4, "internal error at tests/test_exit_codes.c:LINE: ..."
//                      (the path relative to the repository: no absolute
//                      source path, no "../")
//   xcalloc and pages_alloc past SIZE_MAX: exit 3, before any malloc
//   LITATTN_FAIL_ALLOC=n: this program run again; its n-th allocation fails
//   (exit 3), an allocation after it and the ones before succeed, and
//   LITATTN_ALLOC_COUNT=1 reports the count at exit.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"
#include "pages.h"

static int failures;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

// The child's stderr (read from fds[0], up to len - 1 bytes, NUL-terminated)
// and its exit code (128 + the signal that ended it).
static int collect_child(pid_t pid, int fds[2], char *err, size_t len) {
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(fds[0], err + n, len - 1 - n)) > 0) n += (size_t)r;
    err[n] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs child(ctx) in a forked child whose stderr goes into a pipe: its exit
// code and stderr.
static int in_child_with(void (*child)(const void *ctx), const void *ctx, char *err, size_t len) {
    int fds[2];
    if (pipe(fds) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        child(ctx);
        _exit(0);
    }
    return collect_child(pid, fds, err, len);
}

// A function of this program, run in the child.
typedef struct {
    void (*fn)(void);
} Call;
static void run_call(const void *ctx) {
    error_set_program("test_exit_codes");
    ((const Call *)ctx)->fn();
}
static int in_child(void (*fn)(void), char *err, size_t len) {
    const Call call = {fn};
    return in_child_with(run_call, &call, err, len);
}

static void call_oom(void) { die_oom(42, "a test's buffer"); }
// (one line: internal_line is the line of the die_internal call)
static void call_internal(void) { die_internal("%s before %s", "next()", "iter()"); } static const int internal_line = __LINE__;
static void call_xcalloc_wrap(void) { (void)xcalloc(SIZE_MAX / 2, 4, "an array too large"); }
static void call_pages_huge(void) { (void)pages_alloc(SIZE_MAX - 5, "pages too large"); }

static void expect(void (*fn)(void), int code, const char *line, const char *what) {
    char err[4096];
    int got = in_child(fn, err, sizeof err);
    printf("  exit %d, stderr %s", got, err);
    char name[512];
    snprintf(name, sizeof name, "%s: exit %d and the one line", what, code);
    check(got == code && !strcmp(err, line), name);
}

// The seam, in this program run again with LITATTN_FAIL_ALLOC=n: three
// allocations, the n-th failing.
static int seam_child(void) {
    for (int i = 1; i <= 3; i++) {
        char what[32];
        snprintf(what, sizeof what, "allocation %d", i);
        free(xmalloc(16, what));
    }
    return 0;
}

// This program again, with --seam and the seam's variables set (or unset).
typedef struct {
    const char *self, *fail, *count;
} SeamRun;
static void exec_seam(const void *ctx) {
    const SeamRun *r = ctx;
    if (r->fail) setenv("LITATTN_FAIL_ALLOC", r->fail, 1);
    else unsetenv("LITATTN_FAIL_ALLOC");
    if (r->count) setenv("LITATTN_ALLOC_COUNT", r->count, 1);
    else unsetenv("LITATTN_ALLOC_COUNT");
    // In a cross build under qemu-user, through meson's exe_wrapper
    // (LITATTN_EXE_WRAPPER, tests/harness.h): an emulated program cannot
    // exec another one for its machine by itself.
    const char *wrapper = getenv("LITATTN_EXE_WRAPPER");
    if (wrapper && *wrapper)
        execl("/bin/sh", "sh", "-c", "exec $LITATTN_EXE_WRAPPER \"$0\" --seam", r->self, (char *)NULL);
    else
        execl(r->self, "test_exit_codes", "--seam", (char *)NULL);
    _exit(127);
}
static int run_self(const char *self, const char *fail, const char *count, char *err, size_t len) {
    const SeamRun run = {self, fail, count};
    return in_child_with(exec_seam, &run, err, len);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--seam")) {
        error_set_program("test_exit_codes");
        return seam_child();
    }
    check(EXIT_BAD_INPUT == 1 && EXIT_USAGE == 2 && EXIT_NO_MEMORY == 3 && EXIT_INTERNAL == 4,
          "exit codes: bad input 1, usage 2, out of memory 3, internal error 4");
    expect(call_oom, 3, "test_exit_codes: out of memory: expected 42 bytes for a test's buffer, found none\n",
           "die_oom");
    char want[256];
    snprintf(want, sizeof want, "test_exit_codes: internal error at tests/test_exit_codes.c:%d: next() before iter()\n",
             internal_line);
    expect(call_internal, 4, want, "die_internal (naming the file relative to the repository, and the line)");
    expect(call_xcalloc_wrap, 3,
           "test_exit_codes: out of memory: expected more than 18446744073709551615 bytes for an array too large, found none\n",
           "xcalloc past SIZE_MAX");
    expect(call_pages_huge, 3,
           "test_exit_codes: out of memory: expected more than 18446744073709551615 bytes for pages too large, found none\n",
           "pages_alloc past SIZE_MAX");

    char err[4096];
    int got = run_self(argv[0], NULL, "1", err, sizeof err);
    printf("  exit %d, stderr %s", got, err);
    check(got == 0 && !strcmp(err, "test_exit_codes: 3 allocations\n"), "LITATTN_ALLOC_COUNT=1: the count at exit");
    for (int n = 1; n <= 4; n++) {
        char fail[8], want[160];
        snprintf(fail, sizeof fail, "%d", n);
        got = run_self(argv[0], fail, NULL, err, sizeof err);
        printf("  LITATTN_FAIL_ALLOC=%d: exit %d, stderr %s\n", n, got, err);
        if (n <= 3) {
            snprintf(want, sizeof want, "test_exit_codes: out of memory: expected 16 bytes for allocation %d, found none\n", n);
            check(got == 3 && !strcmp(err, want), "LITATTN_FAIL_ALLOC=n: the n-th allocation, and only it, fails");
        } else {
            check(got == 0 && !err[0], "LITATTN_FAIL_ALLOC past the count: nothing fails");
        }
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
