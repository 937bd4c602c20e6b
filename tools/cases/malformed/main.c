// make_malformed: writes the `errors` suite's catalogue of broken fixtures.
//
//   make_malformed CHAPTERS_TXT FIXTURES_DIR OUT_DIR [DEPFILE STAMP]
//
// For every chapter of CHAPTERS_TXT (chapters/chapters.txt) it copies the
// chapter's book fixture (its first variant; its `small` variant where it
// lists one, the book's being too slow to run in every case) byte for byte, then breaks
// exactly one thing in the copy: the file itself (truncated, empty, text, a
// directory, unreadable, missing, a name full of control characters), one
// attribute, or one dataset the chapter reads. What to break is read from
// the good fixture itself, not from a table of chapters: every dataset with
// role "input", "weight" or "random", the first gradient record ("<...>.grad",
// role "output", which a module chapter checks once it has computed it),
// every root attribute that is not one of the exporter's provenance
// records, each by its own type. So a new
// chapter, dataset or attribute gets its cases without a line here.
//
// Whether a chapter reads an attribute at all is not in the fixture: each
// attribute gets a probe case, attr_probe:NAME (its value replaced by one
// of another type), and the checker runs an attribute's other cases only
// for a chapter that refuses its probe (tests/error_check.c).
//
// Every case is one line of OUT_DIR/catalogue.tsv:
//
//   case<TAB>chapter<TAB>path<TAB>extra-args<TAB>must-mention<TAB>stdout
//
// must-mention is what the chapter's error line has to name: '&' joins
// texts that must all appear, '|' alternatives of which one must (empty for
// file-level cases, where the path is enough). stdout says what the chapter
// may print before it stops: `prefix` (the start of what it prints on its
// good fixture, cell markers aside), `finite` (the broken thing changes what
// comes first, e.g. other inputs: only finite numbers), or `either` (the
// file may be valid for this chapter: exit 0 with the good run's output, or
// a refusal by the usual rules). Case `good` is the untouched copy, which
// the chapter must accept.
//
// Nothing here is committed: the build runs this (tools/meson.build) again
// whenever a file it read changes: DEPFILE names them (the chapter table
// and each chapter's book fixture) as what STAMP, an empty file written
// last, depends on. (Not OUT_DIR itself: the errors suite makes and
// removes scratch directories in it, which changes its time.)
//
// The catalogue is written by the families of cases of tools/cases/malformed/
// (malformed.h), one chapter at a time, in the order below.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "malformed.h"

// A path in a depfile: blanks, '#' and '$' escaped as ninja reads them.
static void put_dep(FILE *f, const char *path) {
    fputs(" \\\n  ", f);
    for (const char *p = path; *p; p++) {
        if (*p == '$') fputc('$', f);
        else if (*p == ' ' || *p == '#' || *p == '\\') fputc('\\', f);
        fputc(*p, f);
    }
}

// What the catalogue was made from, as the prerequisites of `target`: the
// chapter table and every book fixture.
static void write_depfile(const char *path, const char *target, const char *table) {
    FILE *f = fopen(path, "w");
    if (!f) fatal("%s: %s", path, strerror(errno));
    fputs(target, f);
    fputc(':', f);
    put_dep(f, table);
    for (int c = 0; c < n_chapters; c++) {
        char fixture[4096];
        good_path(&chapters[c], fixture, sizeof fixture);
        put_dep(f, fixture);
    }
    fputc('\n', f);
    if (fclose(f) != 0) fatal("%s: cannot write", path);
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: make_malformed CHAPTERS_TXT FIXTURES_DIR OUT_DIR [DEPFILE STAMP]\n");
        return 2;
    }
    read_chapter_table(argv[1]);
    catalogue.fixtures = argv[2];
    remove_tree(argv[3]);
    if (mkdir(argv[3], 0755) != 0) fatal("%s: %s", argv[3], strerror(errno));
    // Absolute paths in the manifest: the checker may run from anywhere.
    char cwd[2048];
    if (argv[3][0] == '/') snprintf(catalogue.out, sizeof catalogue.out, "%s", argv[3]);
    else if (getcwd(cwd, sizeof cwd)) snprintf(catalogue.out, sizeof catalogue.out, "%s/%s", cwd, argv[3]);
    else fatal("getcwd: %s", strerror(errno));
    char manifest[4200];
    snprintf(manifest, sizeof manifest, "%s/catalogue.tsv", catalogue.out);
    catalogue.manifest = fopen(manifest, "w");
    if (!catalogue.manifest) fatal("%s: %s", manifest, strerror(errno));
    fprintf(catalogue.manifest,
            "# case\tchapter\tpath\textra-args\tmust-mention\tstdout (written by tools/make_malformed)\n");

    for (int c = 0; c < n_chapters; c++) {
        Chapter *ch = &chapters[c];
        describe_chapter(ch);
        char dir[4400];
        snprintf(dir, sizeof dir, "%s/%.127s", catalogue.out, ch->name);
        if (mkdir(dir, 0755) != 0) fatal("%s: %s", dir, strerror(errno));
        file_cases(ch, &chapters[(c + 1) % n_chapters]);
        group_cases(ch);
        for (int i = 0; i < ch->n_inputs; i++) input_cases(ch, i);
        for (int w = 0; w < ch->n_weights; w++) {
            dataset_cases(ch, "weight", ch->weights[w], "weight");
            shape_cases(ch, ch->weights[w], "weight", "weight");
        }
        // A gradient record (role output, "<...>.grad"), which the chapter
        // looks up once it has computed that gradient: the first in name order,
        // whose check comes before any GPT-2-size backward (its module's
        // input, "inputs.grad" or "batch.grad"). Every kind, once.
        if (ch->grad[0]) {
            dataset_cases(ch, "grad", ch->grad, "output");
            shape_cases(ch, ch->grad, "grad", "output");
        }
        if (ch->n_weights) consistency_cases(ch);
        // Every attribute the chapter may read; of the digest records (a
        // GPT-2 size run each, to the end), the first one's probe only.
        int digests = 0;
        for (int a = 0; a < ch->n_attrs; a++)
            if (!ch->attrs[a].digest || digests++ == 0) attr_cases(ch, &ch->attrs[a]);
        if (has_attr(ch, "chapter")) chapter_attr_cases(ch);
        if (has_attr(ch, "qkv_bias")) bias_cases(ch);
    }
    if (fclose(catalogue.manifest) != 0) fatal("%s: cannot write", manifest);
    if (argc == 6) {
        write_depfile(argv[4], argv[5], argv[1]);
        spit(argv[5], "", 0);
    }
    printf("make_malformed: %d chapters, %d kinds, %d cases in %s\n", n_chapters, catalogue.n_kinds, catalogue.cases,
           manifest);
    return 0;
}
