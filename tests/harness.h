// harness.h: what the test drivers share: running a chapter program and
// capturing what it prints, and the seed a fixture was drawn with.
#ifndef LITATTN_HARNESS_H
#define LITATTN_HARNESS_H

#include <stddef.h>

typedef struct {
    int exit_code;  // the program's exit status, or 128 + signal
    char *out;      // everything it wrote to stdout (malloc'd, NUL-terminated)
    char *err;      // everything it wrote to stderr
    double seconds; // wall-clock time it took
} RunResult;

// Runs argv[0] with argv (NULL-terminated), capturing stdout and stderr.
// Returns 0 if the program could not be started at all.
int run_program(char *const argv[], RunResult *res);
void run_result_free(RunResult *res);

// Reads the `seed` (string) and `skip` (integer, 0 if absent) attributes a
// fixture records, for re-running a chapter with --seed. Returns 0 and prints
// why on stderr when the fixture has no seed.
int fixture_seed_args(const char *path, const char *group, char *seed, size_t seed_len, char *skip,
                      size_t skip_len);

// A scratch file path under $TMPDIR (or /tmp), with `tag` in its name; the
// file exists, empty; the caller removes it.
void temp_path(char *buf, size_t len, const char *tag);

#endif
