// keep.h: keeping what a chapter computes, for --dump. Each tensor is kept
// under the notebook's name for it (the fixture's name too, so tests compare
// the two name by name); without --dump nothing happens.
//
//   KEEP(context_vec_2);                        // "context_vec_2"
//   keep("attn_weights_2.sum()", s);            // an expression the notebook printed
//
// The modules' forward() locals ("ca.attn_scores") come through
// keep_recorder(), the Recorder (nn/recorder.h) that the chapter macros of
// chapter.h hand them. A name kept again replaces the earlier value, as a
// notebook variable does when a later cell assigns it.
#ifndef LITATTN_KEEP_H
#define LITATTN_KEEP_H

#include "dump.h"
#include "mode.h"
#include "recorder.h"
#include "tensor.h"

void keep_begin(Dump *dump);  // chapter_start calls it; NULL without --dump

void keep(const char *name, Tensor t);                        // role "output"
void keep_as(const char *name, const char *role, Tensor t);   // role "input", "weight", "random" or "output"
void keep_long(const char *name, LongTensor t);              // an int64 tensor (token ids), role "output"
const Recorder *keep_recorder(void);                          // keep(), for modules (a NULL record without --dump)
const Recorder *no_recorder(void);                            // for modules whose locals --dump leaves out
// How a module that reports to keep_recorder() computes: ATTENTION_RECORDED
// with --dump (its locals are kept), else ATTENTION_FUSED (nn/mode.h).
ComputeMode keep_mode(void);

#define KEEP(x) keep(#x, (x))
#define KEEP_LONG(x) keep_long(#x, (x))

#endif
