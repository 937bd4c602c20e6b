// keep.h: keeping what a chapter computes, for --dump. Each tensor is kept
// under the notebook's name for it (the fixture's name too, so tests compare
// the two name by name); without --dump nothing happens.
//
//   KEEP(context_vec_2);                        // "context_vec_2"
//   keep("attn_weights_2.sum()", s);            // an expression the notebook printed
//   KEEP_LOCAL(m->name, attn_scores);           // a module's forward() local: "ca.attn_scores"
//
// A name kept again replaces the earlier value, as a notebook variable does
// when a later cell assigns it.
#ifndef LITATTN_KEEP_H
#define LITATTN_KEEP_H

#include "tensor.h"

void keep(const char *name, Tensor t);                        // role "output"
void keep_as(const char *name, const char *role, Tensor t);   // role "input", "weight", "random" or "output"
void keep_local(const char *module, const char *local, Tensor t);  // "<module>.<local>", role "output"

#define KEEP(x) keep(#x, (x))
#define KEEP_LOCAL(module, x) keep_local((module), #x, (x))

#endif
