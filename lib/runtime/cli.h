// cli.h: the command line every chapter shares, and its help text.
#ifndef LITATTN_CLI_H
#define LITATTN_CLI_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_SEEDS 8
#define CLI_MAX_SKIP 1000000000LL  // --skip's largest count: 10^9 draws
#define CLI_MAX_THREADS 64
#define CLI_MAX_WEIGHTS 8
#define CLI_MAX_KEY 64   // --weights FILE:KEY: KEY's bytes, its NUL included

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
    // --weights [NAME=]FILE[:KEY] (how it is read: below; lib/runtime/weights.h):
    // the state_dict in FILE, or in its entry KEY, for the module the chapter
    // names NAME ("sa_v2", "exercise_3_1.sa_v1"), or without NAME for its
    // first module that no NAME=FILE names.
    struct CliWeights {
        const char *text;        // the value as typed, for messages
        char name[48];           // "" for the plain --weights FILE
        char path[PATH_MAX];     // FILE
        char key[CLI_MAX_KEY];   // "" without :KEY
        int module;              // the module it is for (cli_weights_modules), -1 until then
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
// CLI_WEIGHTS: it makes modules that --weights loads.
enum { CLI_SEEDS = 1, CLI_TEXT = 2, CLI_SIZES = 4, CLI_WEIGHTS = 8 };
#define CLI_MAX_SIZE 2147483647LL  // --context-len and --batch-size: a count in [1, 2^31 - 1]

// Parses argv[1..]; on a usage error returns CLI_USAGE with one line in err.
// An option given twice is a usage error ("--seed given twice"), and so is
// --seed SITE=N twice for one SITE; --seed N and --seed SITE=N go together.
// allow_seed: CLI_SEEDS if --seed and --skip mean anything to this chapter,
// | CLI_TEXT if --text does, | CLI_WEIGHTS if --weights does: its values are
// read here (the rule below), and given their modules by cli_weights_modules.
int cli_parse(int argc, char **argv, int allow_seed, Options *opt, char *err, size_t len);

// How a --weights value is read, the rule --help states:
//   NAME=  when the text before the first '=' is a module's name (letters,
//          digits, '_' and '.', each dotted part starting with a letter or
//          '_': "exercise_3_1.sa_v1"); otherwise the '=' is part of FILE, so
//          a file whose name holds '=' is given with its directory: ./w=1.pth;
//   :KEY   when the text after the last ':' is a key (letters, digits and
//          '_', not starting with a digit: "model_state_dict"); a value that
//          ends in ':' has no KEY and loses that one ':', so a file named
//          "run:best" is given as "run:best:".
// The rest is FILE, as given.
//
// Which module each --weights is for, given the chapter's modules (names in
// the order it makes them, NULL-terminated; NULL or empty: none): a NAME
// must be one of them; a plain FILE is for the first module no NAME=FILE
// names, so NAME=FILE takes precedence over FILE for the module NAME,
// whichever comes first. Sets each weights[i].module; on a usage error (an
// unknown NAME, a FILE left without a module, --weights on a chapter that
// makes none) returns CLI_USAGE with one line in err that names the value
// and the chapter's modules.
int cli_weights_modules(Options *opt, const char *const *modules, char *err, size_t len);

// "usage: NAME [--fixture NAME|PATH] ..." without a trailing newline.
void cli_usage(char *buf, size_t len, const char *name, int allow_seed);

// The whole --help text: usage, `about` (one line: the book section), and
// every option; `book_variant` is the variant read without --fixture,
// `variants` the chapter's variants, `places` where names are looked up
// (one indented line each, locate.h), `modules` the modules --weights
// loads (as for cli_weights_modules).
void cli_help(char *buf, size_t len, const char *name, const char *about, const char *book_variant,
              const char *variants, const char *places, int allow_seed, const char *const *modules);

#endif
