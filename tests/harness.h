// harness.h: what the test drivers share: running a chapter program and
// capturing what it prints, and the seed a fixture was drawn with.
#ifndef LITATTN_HARNESS_H
#define LITATTN_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "pcg32.h"

typedef struct {
    int exit_code;  // the program's exit status, or 128 + signal
    int timed_out;  // it ran past the time limit and was killed (exit_code is then 128 + 9)
    char *out;      // everything it wrote to stdout (malloc'd, NUL-terminated)
    char *err;      // everything it wrote to stderr
    double seconds; // wall-clock time it took
    double cpu_seconds;  // user + system time of it and of the children it waited for:
                         // what a "fast enough" check should bound, since a busy machine
                         // stretches wall time but not this
} RunResult;

// Runs argv[0] with argv (NULL-terminated), capturing stdout and stderr, and
// kills it if it is still running after `limit` seconds: a hung chapter is a
// failed test, not a hung suite. Returns 0 if it could not be started at all.
// Where LITATTN_EXE_WRAPPER is set (words separated by spaces: meson's
// exe_wrapper of a cross build, e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu",
// tests/meson.build), argv[0] is run through it, as WRAPPER... argv[0] argv[1]...
// (at most 16 words, 255 arguments), and gets ten times the time limit.
int run_program(char *const argv[], double limit, RunResult *res);

// What run_program_with sets up for the program. Zero fields: nothing.
typedef struct {
    double limit;         // seconds of wall time before it is killed (0: RUN_LIMIT_SECONDS)
    int nofile;           // > 0: its RLIMIT_NOFILE (descriptors it may have open)
    long long fsize;      // > 0: its RLIMIT_FSIZE in bytes (EFBIG past that, SIGXFSZ unless ignored)
    int pwrite_enospc;    // a seccomp filter makes pwrite64, pwritev and pwritev2 fail with ENOSPC,
                          // as on a full device: the calls HDF5's file driver writes with, and
                          // nothing else the chapters do (stdout is written with write)
    int no_fork;          // a seccomp filter makes fork, vfork, clone and clone3 fail with EAGAIN:
                          // the program can start no process and no thread
    int pass_fd;          // > 0: this descriptor of the caller stays open in the program, same number
    int stdout_fd;        // > 0: the program's stdout is this descriptor, not captured
    int unprivileged;     // when the caller is root, the program runs without root's power over
                          // file modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): a file of mode 000
                          // is refused to it, as to any other user
    const char *cwd;      // non-NULL: the program starts in this directory (argv[0] is
                          // resolved first; other relative paths in argv would not be)
    // Called once, in the caller, soon after the program started and again
    // every millisecond while it runs, until it returns non-zero.
    int (*watch)(pid_t pid, void *ctx);
    void *ctx;
} RunOptions;
int run_program_with(char *const argv[], const RunOptions *opt, RunResult *res);

// Every program the tests run starts with SIGINT, SIGTERM, SIGHUP, SIGQUIT
// and SIGPIPE at their default actions and no signal blocked, whatever the
// suite inherited: under nohup SIGHUP is ignored, in a background job SIGINT
// and SIGQUIT, and a chapter keeps an ignored signal ignored (as it should).
// run_program_with does this itself; a driver that forks a program of its
// own calls this in the child, before exec.
void harness_default_signals(void);

// Values per dataset the tests accept from files they wrote themselves
// (--dump output): more than a fixture may hold (FIXTURE_MAX_ELEMENTS).
#define HARNESS_MAX_ELEMENTS (1LL << 26)

// The limit for one chapter run of a driver (fixture_check, book_check, ...):
// a hang guard, not a speed goal. Most runs take milliseconds; the notebook-size
// ones (the bonus notebook's (8, 1024, 768), Exercise 3.3) take seconds on an
// idle machine and can take a minute on two busy cores, so the guard sits
// well past that (meson's own time limit for those tests, tests/meson.build, is
// the same).
#define RUN_LIMIT_SECONDS 300.0
void run_result_free(RunResult *res);

// The command-line arguments that re-run a chapter with everything drawn in
// C, seeded as the fixture records: "--seed N" for its `seed` attribute,
// "--seed SITE=N" for each `SITE.seed`, and "--skip K" (its `skip`, 0 if
// absent).
typedef struct {
    char *argv[32];
    int n;
    char text[16][96];
} SeedArgs;
// Returns 0 and prints why on stderr when the fixture records no seed.
int fixture_seed_args(const char *path, const char *group, SeedArgs *out);
// The same, from a fixture already open (a group of fixture_open_all).
typedef struct Fixture Fixture;
int fixture_seed_args_of(Fixture *fx, SeedArgs *out);
// A file of unit-test cases (kernel_cases.h5, backward_cases.h5): one group
// per case, whose string attribute `attr` ("kernel", "op") names its kind.
// Runs every case, in the file's order, with its kind's `run`, counting
// them in `cases`; an unknown kind stops the test. Then a kind with no case
// is a FAIL line: a file that lost a kind's cases must not pass by testing
// nothing. Returns the number of cases; *missing gets the kinds with none.
typedef struct {
    const char *name;
    void (*run)(Fixture *fx, const char *name);
    int cases;
} CaseKind;
int run_case_file(const char *path, const char *attr, CaseKind *kinds, int n_kinds, int *missing);

// Whether it records any seed ("seed" or "SITE.seed"): a chapter that draws
// nothing (§3.3) has none.
int fixture_has_seed(Fixture *fx);

// A scratch file path under $TMPDIR (without it, /dev/shm if it is a memory
// file system with 1 GiB free, else /tmp), with `tag` in its name; the file
// exists, empty; the caller removes it.
void temp_path(char *buf, size_t len, const char *tag);

// Every byte of the file, NUL-terminated (malloc'd; *len without the NUL, if
// len is not NULL), or NULL if it cannot be opened.
char *read_whole_file(const char *path, size_t *len);
// Copies the file, then appends `extra` zero bytes (HDF5 never reads past a
// file's end of address: a fixture so lengthened reads the same, but is no
// longer one a chapter was built with). Returns 0 if either file failed.
int copy_file_with(const char *from, const char *to, int extra);

// Adds to the root of the open HDF5 file `file` a group "endless" that
// holds itself (endless/endless is endless), a small dataset in it, and
// `links` soft links endless_0000, ... that lead to the dataset through a
// chain of HARNESS_ENDLESS_HOPS soft links, each a path of
// HARNESS_ENDLESS_DEPTH components endless/endless/...: opening one name
// walks 14 x 20000 groups, about a second of CPU time here, and HDF5 caches
// none of it. A reader that opens every name does that `links` times: with
// 4096 names, over 10^9 group look-ups, past any limit a test sets on any
// CPU. Work that only a limit stops, in a file of about 1 MiB. Returns 0 if
// HDF5 failed.
#define HARNESS_ENDLESS_LINKS 4096
#define HARNESS_ENDLESS_HOPS 14
#define HARNESS_ENDLESS_DEPTH 20000
int write_endless_opens(int64_t file, int links);

// The median of v[0..n-1] (n >= 1; v is sorted in place).
double harness_median(double *v, int n);

// Seconds on the monotonic clock (differences of two calls time a run).
double harness_seconds(void);
// Seconds of CPU time this process has used, user + system (getrusage):
// a busy machine stretches a run's wall time far more than this.
double harness_cpu_seconds(void);

// The core's mul + add peak in GFLOP/s, measured (benchmarks): independent
// chains of vmulps and vaddps, zmm if avx512 else ymm; 0 if the CPU lacks them,
// and 0 on other architectures than x86-64 (not measured there).
double harness_mul_add_peak(int avx512);

// x (n,) drawn uniform in [lo, hi) from rng, for the benchmarks' operands;
// out of memory: a line naming `who` on stderr, exit 3.
float *harness_uniform_floats(pcg32_random_t *rng, long n, float lo, float hi, const char *who);

// Whether a driver runs its whole selection: --full among argv[1..], or
// LITATTN_TESTS=full (meson test --setup full). Any other value of
// LITATTN_TESTS but default is refused: one line naming `driver`, exit 2.
int harness_full_selection(const char *driver, int argc, char **argv);

// The pids of pid's children (from /proc/PID/task/PID/children): up to max;
// returns how many.
int child_pids(pid_t pid, pid_t *out, int max);
// Whether pid is a process that is still running (not gone, not a zombie).
int process_alive(pid_t pid);

#endif
