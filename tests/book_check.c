// book_check: every tensor the book's transcripts print must appear, as
// text, in the chapter's output.
//
//   book_check BLOCKS [--seed-from FIXTURE] -- CHAPTER [ARGS...]
//
// BLOCKS is a file under tests/book/, written by tools/extract_book_blocks.py
// from the transcripts: a line "# <transcript>:<line> <cell>" before each
// block, then the block's lines exactly as the notebook printed them (grad_fn
// suffixes removed: C has no autograd). --seed-from re-runs the chapter with
// --seed and --skip read from FIXTURE, so the weights are drawn in C.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    text[n] = '\0';
    fclose(f);
    return text;
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
    char *run_argv[64], seed[64], skip[32];
    int n = 0;
    for (; i < argc && n < 56; i++) run_argv[n++] = argv[i];
    if (seed_from) {
        if (!fixture_seed_args(seed_from, NULL, seed, sizeof seed, skip, sizeof skip)) return 1;
        run_argv[n++] = "--seed", run_argv[n++] = seed, run_argv[n++] = "--skip", run_argv[n++] = skip;
    }
    run_argv[n] = NULL;

    RunResult run;
    if (!run_program(run_argv, RUN_LIMIT_SECONDS, &run) || run.exit_code != 0) {
        printf("FAIL %s exited %d: %s\n", run_argv[0], run.exit_code, run.err ? run.err : "");
        return 1;
    }

    // Walk the blocks: a header line, then text up to the next header.
    char *blocks = read_file(blocks_path);
    int found = 0, missing = 0;
    char *p = blocks;
    while (p && *p) {
        if (strncmp(p, "# ", 2) != 0) {
            fprintf(stderr, "%s: expected a '# ' header line, found: %.40s\n", blocks_path, p);
            return 1;
        }
        char *header = p, *body = strchr(p, '\n');
        if (!body) break;
        *body++ = '\0';
        char *next = strstr(body, "\n# ");
        if (next) *next = '\0';
        size_t len = strlen(body);
        while (len && body[len - 1] == '\n') body[--len] = '\0';
        if (strstr(run.out, body)) {
            printf("ok   %s  %s\n", header + 2, strchr(body, '\n') ? "(block)" : body);
            found++;
        } else {
            printf("FAIL %s: not in the output:\n%s\n", header + 2, body);
            missing++;
        }
        p = next ? next + 1 : NULL;
    }
    printf("%d of %d printed tensors of the book found in the output of %s\n", found, found + missing, run_argv[0]);
    if (found + missing == 0) printf("FAIL: %s holds no blocks\n", blocks_path);
    free(blocks);
    run_result_free(&run);
    return (missing || found == 0) ? 1 : 0;
}
