// book_check: what the book's notebooks print, against what the chapter prints.
//
//   book_check BLOCKS [--seed-from FIXTURE] -- CHAPTER [ARGS...]
//
// BLOCKS is a file under tests/book/, written by tools/cases/extract_book_blocks.py
// from the notebooks: a line "#! <provenance>", then for each block a header
// line "# <source> <cell>" and the block's lines. Two kinds:
//   - "# ch03.ipynb In [25]" (or exercise-solutions.ipynb ...): the whole
//     output of that cell. The chapter's output between its marker line for
//     the cell (">>> In [25]: ...") and the next marker must be exactly this
//     text, character for character (grad_fn suffixes included), once the
//     chapter's notes about a variant ("# ...") are set aside.
//   - "# 004_....txt:68 In [9]": a tensor a transcript printed. It must appear
//     in the chapter's output; grad_fn suffixes are left out on both sides,
//     since some transcripts made their parameters with requires_grad=False.
// --seed-from re-runs the chapter with everything drawn in C, seeded as
// FIXTURE records (--seed and --skip).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "strbuf.h"

// The text of `s` with every ", grad_fn=<...>" removed, wherever its comma
// and line break fall ("...]],\n       grad_fn=<SoftmaxBackward0>)").
static char *without_grad_fn(const char *s) {
    StrBuf b = {0};
    while (*s) {
        const char *g = strstr(s, "grad_fn=<");
        if (!g) {
            sb_puts(&b, s);
            break;
        }
        const char *cut = g;  // back over blanks and the comma before it
        while (cut > s && (cut[-1] == ' ' || cut[-1] == '\n')) cut--;
        if (cut > s && cut[-1] == ',') cut--;
        sb_put(&b, s, (size_t)(cut - s));
        const char *end = strchr(g, '>');
        s = end ? end + 1 : g + strlen(g);
    }
    return sb_take(&b);
}

// The output of the cell labelled `label` ("In [25]"): what follows its
// marker line up to the next marker, less the chapter's notes about the run
// (lines starting "# ", such as "# d_out = 16 here; the book has 2": no
// notebook output line starts so). NULL if the chapter has no such cell.
static char *cell_output(const char *out, const char *label) {
    char marker[160];
    snprintf(marker, sizeof marker, ">>> %s: ", label);
    const char *p = out;
    while ((p = strstr(p, marker)) && p != out && p[-1] != '\n') p++;
    if (!p) return NULL;
    const char *start = strchr(p, '\n');
    if (!start) return strdup("");
    start++;
    const char *end = start;
    while (*end && strncmp(end, ">>> ", 4)) {
        const char *nl = strchr(end, '\n');
        end = nl ? nl + 1 : end + strlen(end);
    }
    StrBuf b = {0};
    sb_puts(&b, "");
    for (const char *line = start; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *next = nl ? nl + 1 : end;
        if (strncmp(line, "# ", 2) != 0) sb_put(&b, line, (size_t)(next - line));
        line = next;
    }
    return sb_take(&b);
}

// The first line where want and got differ, for the report.
static void show_difference(const char *want, const char *got) {
    int line = 1;
    while (*want && *want == *got) line += *want == '\n', want++, got++;
    printf("    first difference in line %d:\n      book: %.*s\n      C:    %.*s\n", line,
           (int)strcspn(want, "\n"), want, (int)strcspn(got, "\n"), got);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: book_check BLOCKS [--seed-from FIXTURE] -- CHAPTER [ARGS...]\n");
        return 2;
    }
    const char *blocks_path = argv[1], *seed_from = NULL;
    int i = 2;
    if (!strcmp(argv[i], "--seed-from") && i + 1 < argc) seed_from = argv[i + 1], i += 2;
    if (i >= argc || strcmp(argv[i], "--")) {
        fprintf(stderr, "book_check: expected -- before the chapter\n");
        return 2;
    }
    i++;
    char *run_argv[64];
    int n = 0;
    for (; i < argc && n < 24; i++) run_argv[n++] = argv[i];
    SeedArgs seeds;
    if (seed_from) {
        if (!fixture_seed_args(seed_from, NULL, &seeds)) return 1;
        for (int k = 0; k < seeds.n; k++) run_argv[n++] = seeds.argv[k];
    }
    run_argv[n] = NULL;

    RunResult run;
    if (!run_program(run_argv, RUN_LIMIT_SECONDS, &run) || run.exit_code != 0) {
        printf("FAIL %s exited %d: %s\n", run_argv[0], run.exit_code, run.err ? run.err : "");
        return 1;
    }
    char *plain_out = without_grad_fn(run.out);

    // Walk the blocks: a header line, then text up to the next header.
    char *blocks = read_whole_file(blocks_path, NULL);
    if (!blocks) {
        perror(blocks_path);
        return 1;
    }
    int found = 0, missing = 0, cells = 0;
    for (char *p = blocks; p && *p;) {
        char *next = strstr(p, "\n# ");
        if (next) *next = '\0';
        if (!strncmp(p, "#!", 2)) {  // provenance
            p = next ? next + 1 : NULL;
            continue;
        }
        if (strncmp(p, "# ", 2) != 0) {
            fprintf(stderr, "%s: expected a '# ' header line, found: %.40s\n", blocks_path, p);
            return 1;
        }
        char *header = p + 2, *body = strchr(p, '\n');
        body = body ? (*body = '\0', body + 1) : header + strlen(header);
        char *source = header, *cell = strchr(header, ' ');
        if (cell) *cell++ = '\0';
        size_t slen = strlen(source);
        if (slen > 6 && !strcmp(source + slen - 6, ".ipynb") && cell) {
            // An official cell: its whole output, exactly. Re-terminated: the
            // block ended where the next header's newline was cut.
            const char *label = cell;  // as the chapter's marker line prints it
            char *want = malloc(strlen(body) + 2);
            if (!want) return 1;
            sprintf(want, next ? "%s\n" : "%s", body);  // the last block keeps the file's own newline
            char *got = cell_output(run.out, label);
            cells++;
            if (got && !strcmp(got, want)) {
                printf("ok   %s %s: the cell's output, identical\n", source, cell);
                found++;
            } else {
                printf("FAIL %s %s: %s\n", source, cell, got ? "the cell's output differs" : "no such cell in the output");
                if (got) show_difference(want, got);
                missing++;
            }
            free(got);
            free(want);
        } else {
            size_t len = strlen(body);
            while (len && body[len - 1] == '\n') body[--len] = '\0';
            if (strstr(plain_out, body)) {
                printf("ok   %s %s  %s\n", source, cell ? cell : "", strchr(body, '\n') ? "(block)" : body);
                found++;
            } else {
                printf("FAIL %s %s: not in the output:\n%s\n", source, cell ? cell : "", body);
                missing++;
            }
        }
        p = next ? next + 1 : NULL;
    }
    printf("%d of %d blocks of the book found in the output of %s (%d whole cells)\n", found, found + missing,
           run_argv[0], cells);
    if (found + missing == 0) printf("FAIL: %s holds no blocks\n", blocks_path);
    free(blocks);
    free(plain_out);
    run_result_free(&run);
    return (missing || found == 0) ? 1 : 0;
}
