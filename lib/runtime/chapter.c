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

static struct {
    const ChapterSpec *spec;
    Options opt;
    Fixture *fixture;
    Dump *dump;
} ch;

static void check_chapter_attribute(void) {
    char err[FIXTURE_ERR_LEN], found[128];
    if (!fixture_attr_string(ch.fixture, "chapter", found, sizeof found, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (strcmp(found, ch.spec->name) != 0)
        die(EXIT_BAD_INPUT, "%s: attribute 'chapter': expected '%s', found '%s' (a fixture of another chapter)",
            fixture_path(ch.fixture), ch.spec->name, found);
}

void chapter_start(int argc, char **argv, const ChapterSpec *spec) {
    ch.spec = spec;
    error_set_program(spec->name);
    char err[FIXTURE_ERR_LEN];
    const int allow = (spec->draws ? CLI_SEEDS : 0) | (spec->reads_text ? CLI_TEXT : 0) | (spec->sizes ? CLI_SIZES : 0);
    if (cli_parse(argc, argv, allow, &ch.opt, err, sizeof err) != CLI_OK) {
        char usage[384];
        cli_usage(usage, sizeof usage, spec->name, allow);
        die(EXIT_USAGE, "%s (%s)", err, usage);
    }
    output_begin();
    if (ch.opt.help) {
        static char help[16384], places[3 * PATH_MAX + 200];
        char variants[512];
        locate_variants(spec->shipped, spec->name, variants, sizeof variants);
        for (int i = 0, at = 0, beside; i < locate_place_count() && at < (int)sizeof places; i++) {
            const char *dir = locate_place(i, &beside);
            at += snprintf(places + at, sizeof places - (size_t)at, "                    %s%s\n", dir,
                           beside ? " (beside the program)" : i == locate_place_count() - 1 ? " (as installed)"
                                                                                               : " (found from the program)");
        }
        cli_help(help, sizeof help, spec->name, spec->title, spec->variant, variants, places, allow);
        output_text(help);
        output_end();
        exit(0);
    }
    fast_threads_set(ch.opt.threads);
    hdf5_snapshot_ship(spec->shipped);
    // --fixture NAME is looked up beside the program, in the data directory,
    // then among the fixtures built in; PATH is used as given, never cut to
    // a buffer (fixture_open refuses one too long). No option: the book's
    // variant, by the same lookup (locate.h).
    Located at;
    if (!locate_fixture(ch.opt.fixture, spec->name, spec->variant, spec->shipped, &at, err, sizeof err))
        die(EXIT_BAD_INPUT, "%s", err);
    ch.fixture = at.builtin ? fixture_open_shipped(at.builtin, ch.opt.group, err)
                            : fixture_open(at.path, ch.opt.group, err);
    located_free(&at);
    if (!ch.fixture) die(EXIT_BAD_INPUT, "%s", err);
    error_set_input(fixture_path(ch.fixture));
    check_chapter_attribute();
    // --weights: every file read whole and checked now, before anything is
    // printed or written (weights.h).
    weights_begin(&ch.opt);
    if (ch.opt.dump) {
        // No output may be an input. The fixture is read into memory, not
        // held open: the dump refuses the file it came from by device and
        // inode, however it is named (one built in is no file). Every other
        // file the run reads is refused by device and inode and by its
        // resolved path: one line each in `reads`, and each --weights file.
        const struct {
            const char *path, *what;
        } reads[] = {
            {ch.opt.text, "the text (--text)"},
            {ch.opt.vocab, "the vocabulary (--vocab)"},
        };
        enum { N_READS = sizeof reads / sizeof *reads };
        static DumpInput inputs[1 + N_READS + CLI_MAX_WEIGHTS];
        int n = 0;
        inputs[n] = (DumpInput){.what = "the fixture"};
        fixture_file_id(ch.fixture, &inputs[n].dev, &inputs[n].ino);
        n++;
        for (int i = 0; i < N_READS; i++)
            if (reads[i].path) dump_input_of(reads[i].path, reads[i].what, &inputs[n++]);
        for (int i = 0; i < weights_count(); i++) dump_input_of(weights_path(i), "a state_dict (--weights)", &inputs[n++]);
        ch.dump = dump_create(ch.opt.dump, inputs, n);
    }
    // What the cells read, draw and keep: handed down, once.
    config_begin(ch.fixture);
    if (ch.opt.context_len) config_override("context_len", ch.opt.context_len, "--context-len");
    if (ch.opt.batch_size) config_override("batch_size", ch.opt.batch_size, "--batch-size");
    draws_begin(&ch.opt, ch.fixture);
    keep_begin(ch.dump);
    loader_begin(ch.opt.text, ch.opt.vocab, spec->files, ch.fixture);
}

int chapter_end(void) {
    weights_end();  // a --weights NAME=FILE for a module never made
    // stdout first: if the printed cells cannot be written, the run failed,
    // and a --dump must not replace what was there (die() removes it).
    output_end();
    dump_close(ch.dump);
    checkpoint_cleanup();  // the chapter's model.pth, if it wrote one
    loader_end();
    fixture_close(ch.fixture);
    tensor_release_all();
    return 0;
}

static void marker(const char *label, const char *tag, const char *code) {
    output_set_quiet(false);
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
    output_set_quiet(true);
}
