// materialise.h: the bonus notebook's implementations (mha-implementations.ipynb)
// run as torch runs them, every (T, T) tensor made (chapter.h makes them
// ATTENTION_MATERIALISED, nn/mode.h), and the exact fused attention beside them.
//
// An implementation that materialises its scores is run only while its
// largest (T, T) tensor fits the limit every tensor of a chapter keeps
// (TENSOR_MAX_NUMEL, 2^26 elements: lib/README.md, Limits): the wrapper's
// (b, T, T) per head, the other classes' (h, T, T) per batch item (they make
// one batch item's at a time, with the same bits). Past it the chapter skips
// the implementation with a note, and the fused attention, which never
// holds a (T, T) tensor, runs alone.
#ifndef LITATTN_MATERIALISE_H
#define LITATTN_MATERIALISE_H

#include <stdbool.h>

#include "mha_combined_qkv.h"
#include "mha_einsum.h"
#include "multihead_attention.h"
#include "run.h"
#include "tensor.h"
#include "torch_multihead_attention.h"

// Whether `instance`, whose largest (T, T) tensor has shape `largest`, fits
// the limit; if not, one note line says so and names the limit.
bool materialising_fits(const char *instance, Size largest);

// m(x) with its attention fused (ATTENTION_FUSED, nn/mode.h): no (T, T) tensor.
Tensor multihead_attention_forward_fused(MultiHeadAttention *m, Tensor x);

// One line: whether a and b hold the same float32 bits (signs of zero and
// NaN payloads included), and where they first differ if not.
void print_same_bits(const Run *run, const char *a_name, Tensor a, const char *b_name, Tensor b);

// Before anything prints: the widest tensor the run makes from the input,
// `name` of shape (batch_size, context_len, width * embed_dim) (width 3 for
// a combined Q, K, V projection), with the settings or the command line's
// --batch-size and --context-len, must fit the limit of 2^26 elements; else
// one line (exit 2) names the values and the largest batch_size *
// context_len that fits.
void check_input_size(const Run *run, const char *name, int width, int book_batch_size, int book_context_len,
                      int book_embed_dim);

#endif
