// chapter.c: a chapter's life: options, the fixture, --dump, cells, the end.
#include "chapter.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump.h"
#include "error.h"
#include "fast_kernels.h"
#include "fixture.h"
#include "hdf5_snapshot.h"
#include "loader.h"
#include "output.h"

#ifndef LITATTN_FIXTURES_DIR
#error "LITATTN_FIXTURES_DIR must name the source tree's fixtures/ directory"
#endif

static struct {
    const ChapterSpec *spec;
    Options opt;
    Fixture *fixture;
    Dump *dump;
    char default_fixture[PATH_MAX];
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
        char usage[256];
        cli_usage(usage, sizeof usage, spec->name, allow);
        die(EXIT_USAGE, "%s (%s)", err, usage);
    }
    output_begin();
    snprintf(ch.default_fixture, sizeof ch.default_fixture, "%s/%s.%s.h5", LITATTN_FIXTURES_DIR, spec->name,
             spec->variant);
    if (ch.opt.help) {
        char help[4096];
        cli_help(help, sizeof help, spec->name, spec->title, ch.default_fixture, allow);
        output_text(help);
        output_end();
        exit(0);
    }
    fast_kernels_set_threads(ch.opt.threads);
    hdf5_snapshot_ship(spec->shipped);
    // --fixture's path is used as given (fixture_open refuses one too long), never cut to a buffer.
    const char *path = ch.opt.fixture ? ch.opt.fixture : ch.default_fixture;
    ch.fixture = fixture_open(path, ch.opt.group, err);
    if (!ch.fixture) die(EXIT_BAD_INPUT, "%s", err);
    error_set_input(fixture_path(ch.fixture));
    check_chapter_attribute();
    if (ch.opt.dump) {
        // The fixture is read into memory, not held open: the dump refuses
        // the file it came from by device and inode, however it is named.
        DumpInput fixture = {0, 0, "the fixture"};
        fixture_file_id(ch.fixture, &fixture.dev, &fixture.ino);
        ch.dump = dump_create(ch.opt.dump, &fixture, 1);
    }
    // What the cells read, draw and keep: handed down, once.
    config_begin(ch.fixture);
    if (ch.opt.context_len) config_override("context_len", ch.opt.context_len, "--context-len");
    if (ch.opt.batch_size) config_override("batch_size", ch.opt.batch_size, "--batch-size");
    draws_begin(&ch.opt, ch.fixture);
    keep_begin(ch.dump);
    loader_begin(ch.opt.text, ch.fixture);
}

int chapter_end(void) {
    // stdout first: if the printed cells cannot be written, the run failed,
    // and a --dump must not replace what was there (die() removes it).
    output_end();
    dump_close(ch.dump);
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
