// chapter.h: what a chapter program stands on, so that the chapter itself
// reads like its notebook: cells in order, the book's names, no plumbing.
//
//   chapter_begin(argc, argv, &spec);   // options, the fixture, --dump
//   cell("attn_scores_2 = query_2 @ keys.T");          // prints ">>> attn_scores_2 = ..."
//   Tensor attn_scores_2 = torch_matmul(query_2, torch_transpose(keys));
//   SHOW(attn_scores_2);                // prints it as PyTorch does, keeps it for --dump
//   return chapter_end();
//
// Every failure (bad option, bad fixture) ends the program with one line on
// stderr: exit 2 for usage, 1 for bad input.
#ifndef LITATTN_CHAPTER_H
#define LITATTN_CHAPTER_H

#include "ops.h"
#include "params.h"
#include "self_attention.h"
#include "tensor.h"

// The largest T, d_in and d_out a chapter accepts: with every dimension at
// most 1024, no tensor a chapter makes (T x T scores, d_in x d_out weights)
// exceeds 2^20 floats, the reader's own limit, and no size overflows an int.
#define CHAPTER_MAX_DIM 1024

typedef struct {
    const char *name;     // the executable, and the fixture's `chapter` attribute
    const char *variant;  // the book's variant: fixtures/<name>.<variant>.h5
    const char *about;    // one line for --help: the book section it mirrors
    int draws_weights;    // takes --seed and --skip
} ChapterSpec;

void chapter_begin(int argc, char **argv, const ChapterSpec *spec);
int chapter_end(void);  // writes --dump, frees everything; returns the exit code

// Prints the cell's marker line: ">>> " and the notebook's code (printf format).
void cell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Prints like Python's print(f"..."), with conversions of our own: %T a
// tensor, %P a Parameter ("Parameter containing:\n" + tensor), %S its
// torch.Size, %r a double as Python's repr() prints a float; plus %d, %s and
// %.Nf. Nothing is kept for --dump.
void show(const char *fmt, ...);

// Keeps a computed tensor for --dump under the notebook's name.
void keep(const char *name, Tensor t);
#define KEEP(x) keep(#x, (x))
// Prints the tensor on its own line, as the notebook's cell output, and keeps it.
void show_kept(const char *name, Tensor t);
#define SHOW(x) show_kept(#x, (x))

// The fixture's inputs: dataset `name` of shape `want`, every value finite.
Tensor fixture_input(const char *name, Shape want);
// The fixture's `inputs`, (T, d_in) token embeddings with T >= min_tokens.
Tensor fixture_inputs(int min_tokens);
// An integer attribute of the fixture (e.g. d_out), within [min, max].
long long fixture_int(const char *name, long long min, long long max);

// The notebook's `torch.manual_seed(...)`. With --seed: seeds the
// PyTorch-compatible generator, discards --skip draws, and returns a source
// that draws parameters as PyTorch does. Without: returns a source that
// reads the parameters PyTorch drew from the fixture.
ParamSource *manual_seed(void);
// The seed as the notebook wrote it: --seed's text, or the fixture's `seed`.
const char *seed_text(void);
// Draws the notebook made between manual_seed and these parameters: --skip,
// or the fixture's `skip` (0 when absent).
long long skip_count(void);

// Keeps forward()'s locals (keys, queries, ..., context_vec) for --dump.
void keep_trace(AttentionTrace tr);

#endif
