// cli.h: the command line every chapter shares.
#ifndef LITATTN_CLI_H
#define LITATTN_CLI_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *fixture;  // --fixture PATH; NULL: the book's variant in fixtures/
    const char *group;    // --group NAME: one configuration of a multi-group file (the sweep)
    const char *dump;     // --dump PATH: also write every computed tensor there
    const char *seed;     // --seed N as typed; NULL: weights come from the fixture
    uint64_t seed_value;  // N as PyTorch's manual_seed takes it (negative N is 2^64 + N)
    long long skip;       // --skip K: draws discarded after seeding (the continuing stream)
    int help;             // --help
} Options;

enum { CLI_OK = 0, CLI_USAGE = 1 };

// Parses argv[1..]; on a usage error returns CLI_USAGE with one line in err.
// allow_seed: whether --seed and --skip mean anything to this chapter.
int cli_parse(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len);

// "usage: NAME [--fixture PATH] ..." without a trailing newline.
void cli_usage(char *buf, size_t len, const char *name, int allow_seed);

#endif
