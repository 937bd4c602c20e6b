// chapter.c: a chapter's life: options, the fixture, --dump, cells, the end.
#include "chapter.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "dump.h"
#include "error.h"
#include "fast_threads.h"
#include "fixture.h"
#include "hdf5_snapshot.h"
#include "loader.h"
#include "locate.h"
#include "output.h"

// The chapter's run: the only state of runtime/ (run.h). chapter_begin
// fills it; the chapter reaches it through chapter.h's calls.
static Run run;

Run *chapter_run(void) { return &run; }

// die()'s cleanup: the directory torch_save made, if any.
static void cleanup_run(void) { checkpoint_cleanup(&run); }

static void check_chapter_attribute(const Run *r, const ChapterSpec *spec) {
    char err[FIXTURE_ERR_LEN], found[128];
    if (!fixture_attr_string(r->fixture, "chapter", found, sizeof found, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (strcmp(found, spec->name) != 0)
        die(EXIT_BAD_INPUT, "%s: attribute 'chapter': expected '%s', found '%s' (a fixture of another chapter)",
            fixture_path(r->fixture), spec->name, found);
}

void chapter_begin_spec(int argc, char **argv, const ChapterSpec *spec) {
    Run *r = &run;
    error_set_program(spec->name);
    char err[FIXTURE_ERR_LEN];
    const int allow = (spec->draws ? CLI_SEEDS : 0) | (spec->reads_text ? CLI_TEXT : 0) | (spec->sizes ? CLI_SIZES : 0) |
                      (spec->modules && spec->modules[0] ? CLI_WEIGHTS : 0);
    // The options, and which module each --weights is for (its NAME one of
    // the chapter's modules): a usage error before anything is read or run.
    if (cli_parse(argc, argv, allow, &r->opt, err, sizeof err) != CLI_OK ||
        cli_weights_modules(&r->opt, spec->modules, err, sizeof err) != CLI_OK) {
        char usage[384];
        cli_usage(usage, sizeof usage, spec->name, allow);
        die(EXIT_USAGE, "%s (%s)", err, usage);
    }
    output_begin(r);
    locate_find_places(&r->places);
    if (r->opt.help) {
        char help[16384], places[3 * PATH_MAX + 200], variants[512];
        const int n_places = locate_place_count(&r->places);
        locate_variants(spec->shipped, spec->name, variants, sizeof variants);
        for (int i = 0, at = 0, beside; i < n_places && at < (int)sizeof places; i++) {
            const char *dir = locate_place(&r->places, i, &beside);
            at += snprintf(places + at, sizeof places - (size_t)at, "                    %s%s\n", dir,
                           beside ? " (beside the program)" : i == n_places - 1 ? " (as installed)"
                                                                                : " (found from the program)");
        }
        cli_help(help, sizeof help, spec->name, spec->title, spec->variant, variants, places, allow, spec->modules);
        output_text(help);
        output_end();
        exit(0);
    }
    fast_threads_set(r->opt.threads);
    hdf5_snapshot_ship(spec->shipped);
    // --fixture NAME is looked up beside the program, in the data directory,
    // then among the fixtures built in; PATH is used as given, never cut to
    // a buffer (fixture_open refuses one too long). No option: the book's
    // variant, by the same lookup (locate.h).
    Located at;
    if (!locate_fixture(&r->places, r->opt.fixture, spec->name, spec->variant, spec->shipped, &at, err, sizeof err))
        die(EXIT_BAD_INPUT, "%s", err);
    r->fixture = at.builtin ? fixture_open_shipped(at.builtin, r->opt.group, err)
                            : fixture_open(at.path, r->opt.group, err);
    located_free(&at);
    if (!r->fixture) die(EXIT_BAD_INPUT, "%s", err);
    error_set_input(fixture_path(r->fixture));
    check_chapter_attribute(r, spec);
    // --weights: every file read whole and checked now, before anything is
    // printed or written (weights.h).
    weights_begin(r, spec->modules);
    if (r->opt.dump) {
        // No output may be an input. The fixture is read into memory, not
        // held open: the dump refuses the file it came from by device and
        // inode, however it is named (one built in is no file). Every other
        // file the run reads is refused by device and inode and by its
        // resolved path: one line each in `reads`, and each --weights file.
        const struct {
            const char *path, *what;
        } reads[] = {
            {r->opt.text, "the text (--text)"},
            {r->opt.vocab, "the vocabulary (--vocab)"},
        };
        enum { N_READS = sizeof reads / sizeof *reads };
        DumpInput inputs[1 + N_READS + CLI_MAX_WEIGHTS];
        int n = 0;
        inputs[n] = (DumpInput){.what = "the fixture"};
        fixture_file_id(r->fixture, &inputs[n].dev, &inputs[n].ino);
        n++;
        for (int i = 0; i < N_READS; i++)
            if (reads[i].path) dump_input_of(reads[i].path, reads[i].what, &inputs[n++]);
        for (int i = 0; i < weights_count(r); i++)
            dump_input_of(weights_path(r, i), "a state_dict (--weights)", &inputs[n++]);
        r->dump = dump_create(r->opt.dump, inputs, n);
    }
    r->files = spec->files;
    // Whether the run draws, decided here once: a chapter that draws (the
    // chapter table) draws in C with --seed, or at sizes of its own
    // (--context-len, --batch-size: the fixture's draws are of the book's);
    // else it reads the draws the fixture holds.
    r->own_sizes = spec->sizes && (r->opt.context_len > 0 || r->opt.batch_size > 0);
    r->drawing = spec->draws && (r->opt.n_seeds > 0 || r->own_sizes);
    draws_begin(r);
    keep_begin(r);
    error_on_cleanup(cleanup_run);
}

int chapter_end(void) {
    Run *r = &run;
    weights_end(r);  // the chapter made the modules it lists
    // stdout first: if the printed cells cannot be written, the run failed,
    // and a --dump must not replace what was there (die() removes it).
    output_end();
    dump_close(r->dump);
    checkpoint_cleanup(r);  // the chapter's model.pth, if it wrote one
    loader_end(r);
    fixture_close(r->fixture);
    tensor_release_all();
    return 0;
}

static void marker(const char *label, const char *tag, const char *code) {
    output_set_quiet(&run, false);
    output_text(">>> ");
    output_text(label);
    output_text(tag);
    output_text(": ");
    output_text(code);
    output_text("\n");
}

void cell(const char *label, const char *code) { marker(label, "", code); }

void setup_cell(const char *label, const char *code) {
    marker(label, " (setup)", code);
    output_set_quiet(&run, true);
}
