// harness.h: what the test drivers share: running a chapter program and
// capturing what it prints, and the seed a fixture was drawn with.
#ifndef LITATTN_HARNESS_H
#define LITATTN_HARNESS_H

#include <stddef.h>

typedef struct {
    int exit_code;  // the program's exit status, or 128 + signal
    int timed_out;  // it ran past the time limit and was killed (exit_code is then 128 + 9)
    char *out;      // everything it wrote to stdout (malloc'd, NUL-terminated)
    char *err;      // everything it wrote to stderr
    double seconds; // wall-clock time it took
} RunResult;

// Runs argv[0] with argv (NULL-terminated), capturing stdout and stderr, and
// kills it if it is still running after `limit` seconds: a hung chapter is a
// failed test, not a hung suite. Returns 0 if it could not be started at all.
int run_program(char *const argv[], double limit, RunResult *res);

// The limit for a chapter that normally runs in milliseconds.
#define RUN_LIMIT_SECONDS 60.0
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

// A scratch file path under $TMPDIR (or /tmp), with `tag` in its name; the
// file exists, empty; the caller removes it.
void temp_path(char *buf, size_t len, const char *tag);

#endif
