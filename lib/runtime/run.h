// run.h: one chapter run, the whole of its state, in one struct.
//
// chapter_begin (chapter.h) fills it: the options parsed, the fixture opened,
// the dump made, whether the run draws decided; every unit of runtime/ is
// then handed it as an explicit `Run *` argument, and the modules of nn/ get
// it as the ctx of their ParamSource (draws.h) and Recorder (keep.h). The
// chapters never name it: chapter.h's calls (manual_seed(123), KEEP(x),
// print(x), causal_attention(...)) pass the run chapter_begin made. A run
// holds every pointer to what it opened once (one Fixture *, one Dump *),
// and chapter_end frees them.
//
// The fields are each unit's own: a unit reads and writes its part (draws.c
// `draws`, loader.c `loader`, ...) and reads the run's common part (options,
// fixture, dump, drawing).
#ifndef LITATTN_RUN_H
#define LITATTN_RUN_H

#include <limits.h>
#include <stdbool.h>

#include "bpe.h"
#include "cli.h"
#include "dataset.h"
#include "dump.h"
#include "fixture.h"
#include "locate.h"
#include "param_source.h"
#include "pth.h"
#include "random_source.h"
#include "recorder.h"
#include "tensor.h"
#include "torch_generator.h"

#define RUN_MAX_KEYS 400    // a module's parameters (the wrapper: 64 heads of 6, and out_proj)
// weights.c's part: the --weights files, the chapter's modules, and the module being made.
typedef struct {
    int n;
    struct {
        const char *text;   // the --weights value as typed
        const char *path;
        const char *key;    // FILE:KEY's entry, or NULL
        int module;         // the module it is for: an index into modules
        PthStateDict sd;
    } file[CLI_MAX_WEIGHTS];
    const char *const *modules;  // the modules the chapter makes, in order (chapter_begin's names)
    int n_modules;
    int n_made;             // how many it has made so far
    // The module being made.
    char module[64];
    int at;                 // its file, or -1
    int n_keys;
    struct {
        char key[96];
        Size size;
    } keys[RUN_MAX_KEYS];   // its parameters in the order it made them
} RunWeights;

typedef struct Run {
    // --- what chapter_begin decides, once ---------------------------------
    Options opt;                // the command line, parsed (cli.h)
    Fixture *fixture;           // the fixture read: the only pointer to it
    Dump *dump;                 // --dump, or NULL
    LocatePlaces places;        // the directories fixtures are looked up in (locate.h)
    const BuiltinFiles *files;  // the book's text and the vocabulary, built in
    // The run draws in C (--seed, or sizes of its own), else reads the
    // fixture's draws: from the chapter table's draws flag and the options.
    bool drawing;
    // --context-len or --batch-size given: setting_int gives them, and the
    // fixture's outputs (of the book's sizes) are not looked up.
    bool own_sizes;
    ParamSource source;         // draws.c's, ctx this run
    Recorder recorder;          // keep.c's, ctx this run

    // --- draws.c: the default generator -----------------------------------
    struct {
        TorchGenerator gen;
        RandomSource rng;       // over gen
        bool seeded;            // a manual_seed or initial_seed has run
        bool skipped;           // the skip has been discarded (once per run)
    } draws;

    // --- output.c: stdout -------------------------------------------------
    bool quiet;                 // a setup cell: print() writes nothing
    char stdout_buffer[1 << 16];

    // --- loader.c: the text, the vocabulary, the dataset --------------------
    struct {
        Bpe *bpe;
        char *text;             // the text read (newlines translated)
        char source[4200];      // where it came from, for messages
        GPTDatasetV1 dataset;
        const char *ids_bytes;  // the text whose ids are `ids` (its bytes and length)
        size_t ids_len;
        LongTensor ids;
    } loader;

    // --- checkpoint.c: torch.save's directory -----------------------------
    struct {
        char dir[PATH_MAX];     // the temporary directory, "" until the first save
        char file[PATH_MAX];    // the file last written in it
    } checkpoint;

    // --- weights.c: the --weights files and the module being made ----------
    RunWeights weights;
} Run;

#endif
