// chapter.h: what a chapter program stands on, so that the chapter itself
// reads like its notebook: cells in the book's order, the book's names, no
// plumbing.
//
//   int main(int argc, char **argv) {
//       chapter_begin(argc, argv);                 // options, the fixture, --dump
//       In(20, "attn_scores_2 = query_2 @ keys.T # All attention scores for given query");
//       Tensor attn_scores_2 = torch_matmul(query_2, torch_T(keys));
//       print(attn_scores_2);                      // as the notebook printed it
//       KEEP(attn_scores_2);                       // for --dump, under the notebook's name
//       return chapter_end();
//   }
//
// The program's name, its book variant and whether it draws at random come
// from the chapter table (chapters/chapters.txt), through the build. A
// chapter that makes modules (the constructors below) names them after
// argv, in the order it makes them, under the names its tensors have in
// --dump: chapter_begin(argc, argv, "sa_v2", "exercise_3_1.sa_v1",
// "exercise_3_1.sa_v2"). --weights NAME=FILE and --help take the names from
// there, and the run checks that the chapter makes exactly these modules, in
// this order (weights.h): a list that says otherwise is an internal error.
// chapter_begin fills the chapter's one run (run.h), which every call below
// passes to runtime/'s units; the chapter itself never names it.
// Every failure (bad option, bad fixture) ends the program with one line on
// stderr: exit 2 for usage, 1 for bad input.
#ifndef LITATTN_CHAPTER_H
#define LITATTN_CHAPTER_H

#include <stdio.h>

#include "causal_attention.h"
#include "checkpoint.h"
#include "config.h"
#include "draws.h"
#include "grads.h"
#include "dropout.h"
#include "embedding.h"
#include "keep.h"
#include "linear.h"
#include "loader.h"
#include "materialise.h"
#include "multihead_attention.h"
#include "ops.h"
#include "pcg32.h"
#include "pretty.h"
#include "print.h"
#include "run.h"
#include "self_attention.h"
#include "state_dict.h"
#include "tensor.h"
#include "weights.h"

typedef struct {
    const char *name;     // the executable, and the fixture's `chapter` attribute
    const char *variant;  // the book's variant: <name>.<variant>.h5, found or built in (locate.h)
    const char *title;    // one line for --help: the book section it mirrors
    int draws;            // it draws at random (takes --seed and --skip)
    int reads_text;       // it reads a text (takes --text): the data-loading notebook
    int sizes;            // it runs at other sizes (--context-len, --batch-size): the bonus notebook
    const struct ShippedSnapshots *shipped;  // its fixtures as the build read them (hdf5_snapshot.h)
    const struct BuiltinFiles *files;        // the other files built in: the book's text, the vocabulary (locate.h)
    const char *const *modules;  // the modules it makes, in order, NULL-terminated (chapter_begin's names)
} ChapterSpec;

// Written by the build for each chapter (tools/build/embed_snapshots.c).
extern const struct ShippedSnapshots litattn_shipped;
extern const struct BuiltinFiles litattn_builtin_files;

// LITATTN_CHAPTER, _VARIANT, _TITLE and _DRAWS come from chapters/chapters.txt
// through chapters/meson.build.
// chapter_begin(argc, argv, MODULE...): the names after argv, if any, end
// with a NULL added here.
#define chapter_begin(...) chapter_begin_with(__VA_ARGS__, NULL)
#define chapter_begin_with(argc, argv, ...)                                                                    \
    chapter_begin_spec((argc), (argv), &(ChapterSpec){LITATTN_CHAPTER, LITATTN_VARIANT, LITATTN_TITLE, LITATTN_DRAWS,     \
                                                 LITATTN_READS_TEXT, LITATTN_SIZES, &litattn_shipped,          \
                                                 &litattn_builtin_files, (const char *const[]){__VA_ARGS__}})

void chapter_begin_spec(int argc, char **argv, const ChapterSpec *spec);
int chapter_end(void);  // finishes --dump and stdout, frees everything; returns the exit code

// The run chapter_begin made (run.h): the one state of a chapter. Every unit
// of runtime/ takes it as its first argument; a chapter names it nowhere, as
// a notebook names no run: the calls below pass it.
Run *chapter_run(void);
// draws.h
#define manual_seed(...) manual_seed(chapter_run(), __VA_ARGS__)
#define manual_seed_at(...) manual_seed_at(chapter_run(), __VA_ARGS__)
#define manual_seed_in_process(...) manual_seed_in_process(chapter_run(), __VA_ARGS__)
#define initial_seed() initial_seed(chapter_run())
#define default_generator(...) default_generator(chapter_run(), __VA_ARGS__)
#define draw_rand(...) draw_rand(chapter_run(), __VA_ARGS__)
#define draw_randn(...) draw_randn(chapter_run(), __VA_ARGS__)
#define draws_source() draws_source(chapter_run())
// keep.h
#define keep(...) keep(chapter_run(), __VA_ARGS__)
#define keep_as(...) keep_as(chapter_run(), __VA_ARGS__)
#define keep_long(...) keep_long(chapter_run(), __VA_ARGS__)
#define keep_recorder() keep_recorder(chapter_run())
#define keep_mode() keep_mode(chapter_run())
#define KEEP(x) keep(#x, (x))
#define KEEP_LONG(x) keep_long(#x, (x))
// config.h
#define input_tensor(...) input_tensor(chapter_run(), __VA_ARGS__)
#define has_input(...) has_input(chapter_run(), __VA_ARGS__)
#define expect_output(...) expect_output(chapter_run(), __VA_ARGS__)
#define setting_int(...) setting_int(chapter_run(), __VA_ARGS__)
#define setting_int_dividing(...) setting_int_dividing(chapter_run(), __VA_ARGS__)
#define setting_int_silent(...) setting_int_silent(chapter_run(), __VA_ARGS__)
#define setting_float(...) setting_float(chapter_run(), __VA_ARGS__)
#define setting_bool(...) setting_bool(chapter_run(), __VA_ARGS__)
// print.h, pretty.h, grads.h, materialise.h
#define print(...) run_print(chapter_run(), __VA_ARGS__)
#define display_state_dict(...) display_state_dict(chapter_run(), __VA_ARGS__)
#define keep_grads(...) keep_grads(chapter_run(), __VA_ARGS__)
#define print_grad_shapes(...) print_grad_shapes(chapter_run(), __VA_ARGS__)
#define print_same_bits(...) print_same_bits(chapter_run(), __VA_ARGS__)
#define check_input_size(...) check_input_size(chapter_run(), __VA_ARGS__)
// loader.h, checkpoint.h
#define read_text(...) read_text(chapter_run(), __VA_ARGS__)
#define tiktoken_get_encoding(...) tiktoken_get_encoding(chapter_run(), __VA_ARGS__)
#define tokenizer_encode(...) tokenizer_encode(chapter_run(), __VA_ARGS__)
#define create_dataloader(...) create_dataloader(chapter_run(), __VA_ARGS__)
#define first_batch(...) first_batch(chapter_run(), __VA_ARGS__)
#define torch_save(...) torch_save(chapter_run(), __VA_ARGS__)
#define torch_load(...) torch_load(chapter_run(), __VA_ARGS__)
// weights.h: the module macros below
#define weights_module_begin(...) weights_module_begin(chapter_run(), __VA_ARGS__)
#define weights_module_made(...) weights_module_made(chapter_run(), __VA_ARGS__)

// A cell's marker line, ">>> <label>: <code>", where code is the cell's first
// line exactly as the notebook has it, so a search for a book line finds the
// C. The labels:
#define In(n, code) cell("In [" #n "]", (code))                       // ch03.ipynb, In [n]
#define MhaIn(n, code) cell("multihead-attention In [" #n "]", (code))  // multihead-attention.ipynb
#define ExIn(n, code) cell("exercise-solutions In [" #n "]", (code))  // exercise-solutions.ipynb
#define Exercise(number, code) cell("Exercise " number, (code))       // an exercise given as text only
// mha-implementations.ipynb, whose execution counts repeat (In [10] and In [11]
// twice): ImplIn(n, ...) for a cell whose count is unique, ImplSec(5.2, ...) for
// the 2nd code cell of section "5." of a cell whose count is not.
#define ImplIn(n, code) cell("mha-implementations In [" #n "]", (code))
#define ImplSec(s, code) cell("mha-implementations \u00a7" #s, (code))
#define BufIn(n, code) cell("understanding-buffers In [" #n "]", (code))  // understanding-buffers.ipynb
#define Transcript(label, code) cell((label), (code))                 // a transcript's own cell, e.g. "004 In [6]"
#define Beyond(code) cell("litattn", (code))                          // litattn's own addition
// A cell of another section that this chapter runs again for what it defines
// (the inputs, an earlier module): its marker says "(setup)", and what it
// prints is left out; the chapter that owns the cell shows it.
#define Setup(n, code) setup_cell("In [" #n "]", (code))
void cell(const char *label, const char *code);
void setup_cell(const char *label, const char *code);

// The book's modules, made as the notebook makes them, under the notebook's
// variable name ("ca"): `CausalAttention(d_in, d_out, context_length, 0.0)` is
//   CausalAttention ca = causal_attention("ca", d_in, d_out, context_length, 0.0, false);
// Their parameters and dropout masks come from this run (drawn with --seed,
// else read from the fixture: draws_source(), draws.h, the run its ctx), and
// their forward() keeps its locals for --dump (keep_recorder(), keep.h): they
// compute ATTENTION_RECORDED with --dump, else ATTENTION_FUSED (keep_mode(),
// nn/mode.h). The modules themselves (lib/nn/) take all three as arguments
// and know nothing of a chapter.
// With --weights (weights.h) a module's parameters then come from a
// state_dict file: weights_module_begin before it is made, weights_made_*
// after, which checks the file as load_state_dict(strict=True) does.
static inline SelfAttentionV1 weights_made_sa_v1(SelfAttentionV1 m) {
    weights_module_made("SelfAttention_v1", 0, NULL, 0, NULL);
    return m;
}
static inline SelfAttentionV2 weights_made_sa_v2(SelfAttentionV2 m) {
    weights_module_made("SelfAttention_v2", 0, NULL, 0, NULL);
    return m;
}
static inline CausalAttention weights_made_ca(CausalAttention m) {
    static const char *const mask[] = {"mask"};  // register_buffer('mask', ...)
    weights_module_made("CausalAttention", 1, mask, m.context_length, NULL);
    return m;
}
// cls: the class's name in load_state_dict's message ("MultiHeadAttention",
// the bonus notebook's "Ch03_MHA").
static inline MultiHeadAttention weights_made_mha_as(MultiHeadAttention m, const char *cls) {
    static const char *const mask[] = {"mask"};
    weights_module_made(cls, 1, mask, m.context_length, NULL);
    return m;
}
static inline MultiHeadAttention weights_made_mha(MultiHeadAttention m) {
    return weights_made_mha_as(m, "MultiHeadAttention");
}
static inline MultiHeadAttentionWrapper weights_made_wrapper_as(MultiHeadAttentionWrapper m, const char *cls) {
    char keys[MAX_HEADS][32];  // heads.0.mask, ...: each head's own buffer
    const char *masks[MAX_HEADS];
    for (int i = 0; i < m.num_heads; i++) snprintf(keys[i], sizeof keys[i], "heads.%d.mask", i), masks[i] = keys[i];
    weights_module_made(cls, m.num_heads, masks, m.num_heads ? m.heads[0].context_length : 0, NULL);
    return m;
}
static inline MultiHeadAttentionWrapper weights_made_wrapper(MultiHeadAttentionWrapper m) {
    return weights_made_wrapper_as(m, "MultiHeadAttentionWrapper");
}
// The bonus notebook's classes. Their keys (torch's state_dict()):
//   MultiHeadAttentionCombinedQKV  mask, qkv.weight, proj.weight, proj.bias
//   MHAPyTorchScaledDotProduct     qkv.weight, proj.weight, proj.bias (no mask: is_causal=True)
//   MHAPyTorchSDPAWithoutFlash     mask (bool), qkv.weight, proj.weight, proj.bias
//   MHAEinsum                      W_query, W_key, W_value, mask, out_proj.weight, out_proj.bias
//   MHAPyTorchClass                mask (bool), multihead_attn.in_proj_weight,
//                                  multihead_attn.out_proj.weight, proj.weight, proj.bias
// (qkv.bias, bias_q, bias_k, bias_v with qkv_bias=True); every mask is
// made as forward() needs it, so the file's must be triu(ones, 1).
static inline MultiHeadAttentionCombinedQKV weights_made_combined_qkv(MultiHeadAttentionCombinedQKV m,
                                                                      const char *cls, bool has_mask) {
    static const char *const mask[] = {"mask"};
    weights_module_made(cls, has_mask ? 1 : 0, mask, m.context_length, NULL);
    return m;
}
static inline MHAEinsum weights_made_einsum(MHAEinsum m) {
    static const char *const mask[] = {"mask"};
    weights_module_made("MHAEinsum", 1, mask, m.context_length, NULL);
    return m;
}
static inline MHAPyTorchClass weights_made_pytorch_class(MHAPyTorchClass m) {
    static const char *const mask[] = {"mask"};
    weights_module_made("MHAPyTorchClass", 1, mask, m.context_length, NULL);
    return m;
}
// understanding-buffers.ipynb's two classes: CausalAttention holding its mask
// whole, as a plain attribute (CausalAttentionWithoutBuffers: not in its
// state_dict) or a registered buffer (CausalAttentionWithBuffer: "mask", which
// load_state_dict copies in).
static inline CausalAttention weights_made_ca_holding(CausalAttention m, MaskKind kind) {
    static const char *const mask[] = {"mask"};
    causal_attention_hold_mask(&m, kind);
    if (kind == MASK_BUFFER) weights_module_made("CausalAttentionWithBuffer", 1, mask, m.context_length, &m.mask);
    else weights_module_made("CausalAttentionWithoutBuffers", 0, NULL, 0, NULL);
    return m;
}
#define causal_attention_holding(name, d_in, d_out, context_length, dropout, qkv_bias, kind)                    \
    (weights_module_begin(name),                                                                               \
     weights_made_ca_holding(causal_attention_new(draws_source(), keep_recorder(), keep_mode(), name, d_in,     \
                                                  d_out, context_length, dropout, qkv_bias),                   \
                             kind))
#define self_attention_v1(name, d_in, d_out)                                                                  \
    (weights_module_begin(name), weights_made_sa_v1(self_attention_v1_new(draws_source(), keep_recorder(),      \
                                                                          keep_mode(), name, d_in, d_out)))
#define self_attention_v2(name, d_in, d_out, qkv_bias)                                                        \
    (weights_module_begin(name), weights_made_sa_v2(self_attention_v2_new(draws_source(), keep_recorder(),      \
                                                                          keep_mode(), name, d_in, d_out,     \
                                                                          qkv_bias)))
#define causal_attention(name, d_in, d_out, context_length, dropout, qkv_bias)                                \
    (weights_module_begin(name), weights_made_ca(causal_attention_new(draws_source(), keep_recorder(),          \
                                                                      keep_mode(), name, d_in, d_out,         \
                                                                      context_length, dropout, qkv_bias)))
#define multihead_attention_wrapper(name, d_in, d_out, context_length, dropout, num_heads, qkv_bias)          \
    (weights_module_begin(name),                                                                               \
     weights_made_wrapper(multihead_attention_wrapper_new(draws_source(), keep_recorder(), keep_mode(), name,   \
                                                          d_in, d_out, context_length, dropout, num_heads,     \
                                                          qkv_bias)))
#define multihead_attention(name, d_in, d_out, context_length, dropout, num_heads, qkv_bias)                  \
    (weights_module_begin(name),                                                                               \
     weights_made_mha(multihead_attention_new(draws_source(), keep_recorder(), keep_mode(), name, d_in, d_out,  \
                                              context_length, dropout, num_heads, qkv_bias)))
#define nn_dropout(name, p) dropout_new(draws_source(), name, p)  // torch.nn.Dropout(p)
// multihead-attention.ipynb's classes: nn.Embedding(num, dim), and its
// MultiHeadAttentionWrapper, which ends with an out_proj.
#define nn_embedding(name, num_embeddings, embedding_dim)                                                     \
    embedding_new(draws_source(), name, num_embeddings, embedding_dim)
#define multihead_attention_wrapper_out_proj(name, d_in, d_out, context_length, dropout, num_heads, qkv_bias)   \
    (weights_module_begin(name),                                                                               \
     weights_made_wrapper(multihead_attention_wrapper_out_proj_new(draws_source(), keep_recorder(), keep_mode(), \
                                                                   name, d_in, d_out, context_length, dropout,  \
                                                                   num_heads, qkv_bias)))

// mha-implementations.ipynb's classes, named as the notebook names them, made
// to run as torch runs them: ATTENTION_MATERIALISED, their (T, T) tensors
// made, one batch item's at a time (nn/mode.h, materialise.h). Their
// forward()s' locals are not kept for --dump: only the outputs are. The SDPA
// classes' stand-in is the fused attention: ATTENTION_FUSED.
#define AS_TORCH ((ComputeMode){.attention = ATTENTION_MATERIALISED})
#define Ch03_MHA_Wrapper(name, d_in, d_out, context_length, dropout, num_heads, qkv_bias)                      \
    (weights_module_begin(name),                                                                               \
     weights_made_wrapper_as(multihead_attention_wrapper_out_proj_new(draws_source(), no_recorder(), AS_TORCH,  \
                                                                      name, d_in, d_out, context_length,      \
                                                                      dropout, num_heads, qkv_bias),          \
                             "Ch03_MHA_Wrapper"))
#define Ch03_MHA(name, d_in, d_out, context_length, dropout, num_heads, qkv_bias)                              \
    (weights_module_begin(name),                                                                               \
     weights_made_mha_as(multihead_attention_new(draws_source(), no_recorder(), AS_TORCH, name, d_in, d_out,    \
                                                 context_length, dropout, num_heads, qkv_bias),                \
                         "Ch03_MHA"))
#define MultiHeadAttentionCombinedQKV(name, d_in, d_out, num_heads, context_length, dropout, qkv_bias)         \
    (weights_module_begin(name),                                                                               \
     weights_made_combined_qkv(mha_combined_qkv_new(draws_source(), no_recorder(), AS_TORCH, name, d_in, d_out, \
                                                    num_heads, context_length, dropout, qkv_bias),             \
                               "MultiHeadAttentionCombinedQKV", true))
#define MHAEinsum(name, d_in, d_out, context_length, dropout, num_heads, qkv_bias)                             \
    (weights_module_begin(name),                                                                               \
     weights_made_einsum(mha_einsum_new(draws_source(), no_recorder(), AS_TORCH, name, d_in, d_out,             \
                                        context_length, dropout, num_heads, qkv_bias)))
#define MHAPyTorchScaledDotProduct(name, d_in, d_out, num_heads, context_length, dropout, qkv_bias)            \
    (weights_module_begin(name),                                                                               \
     weights_made_combined_qkv(mha_sdpa_new(draws_source(), no_recorder(), (ComputeMode){.attention = ATTENTION_FUSED}, name, \
                                            d_in, d_out, num_heads, context_length, dropout, qkv_bias),        \
                               "MHAPyTorchScaledDotProduct", false))
#define MHAPyTorchSDPAWithoutFlash(name, d_in, d_out, num_heads, context_length, dropout, qkv_bias)            \
    (weights_module_begin(name),                                                                               \
     weights_made_combined_qkv(mha_sdpa_new(draws_source(), no_recorder(), (ComputeMode){.attention = ATTENTION_FUSED}, name, \
                                            d_in, d_out, num_heads, context_length, dropout, qkv_bias),        \
                               "MHAPyTorchSDPAWithoutFlash", true))
#define MHAPyTorchClass(name, d_in, d_out, num_heads, context_length, dropout, qkv_bias, need_weights)         \
    (weights_module_begin(name),                                                                               \
     weights_made_pytorch_class(mha_pytorch_class_new(draws_source(), no_recorder(), AS_TORCH, name, d_in,      \
                                                      d_out, num_heads, context_length, dropout, qkv_bias,     \
                                                      need_weights)))

#endif
