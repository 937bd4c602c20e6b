// keep.h: keeping what a chapter computes, for --dump. Each tensor is kept
// under the notebook's name for it (the fixture's name too, so tests compare
// the two name by name); without --dump nothing happens.
//
//   KEEP(context_vec_2);                        // "context_vec_2"
//   keep("attn_weights_2.sum()", s);            // an expression the notebook printed
//
// The modules' forward() locals ("ca.attn_scores") come through
// keep_recorder(run), the Recorder (nn/recorder.h) that the chapter macros of
// chapter.h hand them: its ctx is the run, whose dump it writes to. A name
// kept again replaces the earlier value, as a notebook variable does when a
// later cell assigns it. A chapter writes KEEP(x) and keep(name, t):
// chapter.h passes its run.
#ifndef LITATTN_KEEP_H
#define LITATTN_KEEP_H

#include "mode.h"
#include "recorder.h"
#include "run.h"
#include "tensor.h"

void keep_begin(Run *run);  // chapter_begin calls it, run->dump made (NULL without --dump)

void keep(Run *run, const char *name, Tensor t);                       // role "output"
void keep_as(Run *run, const char *name, const char *role, Tensor t);  // "input", "weight", "random" or "output"
void keep_long(Run *run, const char *name, LongTensor t);             // an int64 tensor (token ids), role "output"
// keep(), for modules, ctx the run (a NULL record without --dump).
const Recorder *keep_recorder(const Run *run);
const Recorder *no_recorder(void);  // for modules whose locals --dump leaves out
// How a module that reports to keep_recorder() computes: ATTENTION_RECORDED
// with --dump (its locals are kept), else ATTENTION_FUSED (nn/mode.h).
ComputeMode keep_mode(const Run *run);

#endif
