// cli.h: the command line every chapter shares, and its help text.
#ifndef LITATTN_CLI_H
#define LITATTN_CLI_H

#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_SEEDS 8
#define CLI_MAX_SKIP 1000000000LL  // --skip's largest count: 10^9 draws
#define CLI_MAX_THREADS 64
#define CLI_MAX_WEIGHTS 8

typedef struct {
    const char *fixture;  // --fixture NAME or PATH (locate.h); NULL: the book's variant
    const char *group;    // --group NAME: one configuration of a multi-group file (the sweep)
    const char *dump;     // --dump PATH: also write every computed tensor there
    const char *text;     // --text FILE: the text a chapter that reads one reads (CLI_TEXT); NULL: its default
    const char *vocab;    // --vocab FILE: its GPT-2 vocabulary (CLI_TEXT); NULL: the one built in
    // --seed N (every torch.manual_seed of the chapter) and --seed SITE=N (one
    // of them, named as in the fixture's SITE.seed attribute). n_seeds == 0:
    // parameters come from the fixture.
    struct {
        char site[48];      // "" for the plain --seed N
        const char *text;   // N as typed
        uint64_t value;     // N as PyTorch's manual_seed takes it (negative N is 2^64 + N)
    } seeds[CLI_MAX_SEEDS];
    int n_seeds;
    // --weights FILE.pth (the chapter's first module) and --weights NAME=FILE.pth
    // (the module the chapter names NAME: "sa_v2", "exercise_3_1.sa_v1");
    // lib/runtime/weights.h.
    struct {
        char name[48];      // "" for the plain --weights FILE
        const char *path;
    } weights[CLI_MAX_WEIGHTS];
    int n_weights;
    long long skip;       // --skip K: draws discarded after the first seeding (the continuing stream)
    int context_len;      // --context-len N (CLI_SIZES): tokens per input; 0 when not given
    int batch_size;       // --batch-size B (CLI_SIZES): inputs per batch; 0 when not given
    int threads;          // --threads N (default 1): identical bits for any N
    int help;             // --help
} Options;

enum { CLI_OK = 0, CLI_USAGE = 1 };
// What a chapter takes besides the common options (the `allow` bits below;
// 1, a chapter that draws, is CLI_SEEDS).
// CLI_SIZES: the chapter runs at other sizes (--context-len, --batch-size:
// the bonus notebook's own variable names), everything then drawn in C.
enum { CLI_SEEDS = 1, CLI_TEXT = 2, CLI_SIZES = 4 };
#define CLI_MAX_SIZE 2147483647LL  // --context-len and --batch-size: a count in [1, 2^31 - 1]

// Parses argv[1..]; on a usage error returns CLI_USAGE with one line in err.
// An option given twice is a usage error ("--seed given twice"), and so is
// --seed SITE=N twice for one SITE; --seed N and --seed SITE=N go together.
// allow_seed: CLI_SEEDS if --seed and --skip mean anything to this chapter,
// | CLI_TEXT if --text does.
int cli_parse(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len);

// "usage: NAME [--fixture NAME|PATH] ..." without a trailing newline.
void cli_usage(char *buf, size_t len, const char *name, int allow_seed);

// The whole --help text: usage, `about` (one line: the book section), and
// every option; `book_variant` is the variant read without --fixture,
// `variants` the chapter's variants, `places` where names are looked up
// (one indented line each, locate.h).
void cli_help(char *buf, size_t len, const char *name, const char *about, const char *book_variant,
              const char *variants, const char *places, int allow_seed);

#endif
