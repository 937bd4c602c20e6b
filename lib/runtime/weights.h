// weights.h: --weights FILE.pth, a module's parameters and buffers from a
// state_dict that torch.save wrote (io/pth.h), as
// `m.load_state_dict(torch.load("FILE.pth"))` loads them.
//
// Part of the run's ParamSource (draws.h): a module is made as the notebook
// makes it (its parameters drawn, or read from the fixture, so the generator
// moves as torch's does), then each parameter the file holds replaces the
// drawn one before anything reads or keeps it. The modules themselves
// (lib/nn/) know nothing of it.
//
// Which module: --weights NAME=FILE for the module the chapter names NAME
// (the name its tensors have in --dump: "sa_v2", "ca", "mha",
// "exercise_3_1.sa_v1", "variant_b.mha", the bonus notebook's "mha_einsum",
// "mha_pytorch_class_default", ...), --weights FILE for the first module
// no NAME=FILE names; FILE:KEY for the state_dict in a checkpoint's entry
// KEY (io/pth.h's pth_load_select). How a value is read (a file name that
// holds '=' or ':') and which module it is for: cli.h. The chapter names its
// modules (chapter_begin), so that an unknown NAME is a usage error before
// anything runs, and the run checks that it makes exactly those, in that
// order: a module it makes that its list does not name, or one its list
// names that it never makes, is an internal error (exit 4).
// Every module class of chapter.h takes one: v1, v2,
// CausalAttention, the wrappers, MultiHeadAttention, the buffers notebook's
// two classes, and the bonus notebook's Ch03_MHA_Wrapper, Ch03_MHA,
// MultiHeadAttentionCombinedQKV, MHAEinsum, MHAPyTorchScaledDotProduct,
// MHAPyTorchSDPAWithoutFlash and MHAPyTorchClass. Each file is first opened
// here: one that is missing, unreadable or not a regular file (a directory)
// is refused in one line that says so. Then it is checked as
// load_state_dict(strict=True) checks (nn/state_dict.h, the one check), in one line that names the file,
// exit 1: the keys missing from the file, the keys the module does not have,
// each shape (torch's words, and its state_dict() order: a module's own
// parameters, its own buffers, then its submodules', whatever order the
// module drew them in); every key with the prefix of a wrapped model
// ("module.", "_orig_mod.") is named as such. The file's dtypes are float32, and bool read as 0
// and 1 (pth.h refuses any other). A causal mask buffer ("mask",
// "heads.0.mask"; bool in MHAPyTorchSDPAWithoutFlash and MHAPyTorchClass) of
// a module that makes its mask as forward() needs it must be that mask,
// triu(ones(context_length, context_length), diagonal=1), and the line says
// so when the file's differs; a module that holds its mask as a buffer
// (understanding-buffers.ipynb's) takes the file's values.
#ifndef LITATTN_WEIGHTS_H
#define LITATTN_WEIGHTS_H

#include "run.h"
#include "tensor.h"

// The files and the module being made are the run's (run->weights); a
// chapter's module macros (chapter.h) pass their run.
// chapter_begin: the chapter's modules (chapter_begin's names, in order,
// NULL-terminated), and every --weights file read (one line and exit 1 on a
// bad one); run->opt's files already have their modules (cli_weights_modules).
void weights_begin(Run *run, const char *const *modules);
// How many files, and the i-th one's path (for --dump's refusal of its inputs).
int weights_count(const Run *run);
const char *weights_path(const Run *run, int i);

// A module named `name` is being made: its parameters come next. It must be
// the next of the chapter's modules (else an internal error, exit 4).
void weights_module_begin(Run *run, const char *name);
// The parameter `name` ("ca.W_query.weight") was drawn into t: the file's
// value replaces it, if a file is for this module and holds it at t's shape.
// A parameter drawn twice (MHAEinsum's W_query: randn, then
// reset_parameters()) is one key, replaced each time.
void weights_fill(Run *run, const char *name, Tensor t);
// The module is made: its class (for the message) and its buffers, each a
// causal mask of side context_length under the key buffer_keys[i]
// ("mask", "heads.0.mask"). The strict check; a refusal ends the run. held:
// NULL for modules that make their mask as forward() needs it (the file's
// must then be triu(ones, 1)); else each buffer's tensor, held whole, which
// the file's values replace (understanding-buffers' CausalAttentionWithBuffer).
void weights_module_made(Run *run, const char *cls, int n_buffers, const char *const *buffer_keys,
                         int context_length, Tensor *held);

// chapter_end: every module of the chapter's list was made (else an internal
// error, exit 4); the files are freed.
void weights_end(Run *run);

#endif
