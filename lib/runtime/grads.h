// grads.h: the gradients of litattn's own cell after a module's forward,
//
//     x.requires_grad_(); context_vecs = m(x); loss = context_vecs.sum(); loss.backward()
//
// (nn/gradients.h), kept for --dump under the fixtures' names:
// "<module>.<state_dict key>.grad" for each parameter ("ca.W_query.weight.grad",
// "mha.heads.1.W_key.weight.grad", "exercise_3_3.mha.out_proj.bias.grad")
// and "<input>.grad" for the input ("batch.grad", "exercise_3_3.x.grad").
//
// A fixture records every gradient its chapter computes (fixtures/README.md).
// Each is looked up there as the chapter's weights are: float32 of the
// gradient's shape, or, for a tensor too large to commit, a digest whose
// `.shape` is that shape. Missing, of another type or shape, the fixture is
// refused in one line (file, dataset, expected, found), exit 1. The values
// are the checkers' to compare (tests/fixture_check.c), never the chapter's.
#ifndef LITATTN_GRADS_H
#define LITATTN_GRADS_H

#include "gradients.h"
#include "run.h"

// Keeps every gradient of g, and x's as "<input>.grad", in the run's dump,
// after checking the run's fixture's record of each. Returns g.
const Gradients *keep_grads(Run *run, const Gradients *g, const char *input);

// for name, param in m.named_parameters(): print(name, param.grad.shape)
// print("<input>.grad:", x.grad.shape): the shapes only, where the values are
// millions (the bonus notebook's; --dump keeps them).
void print_grad_shapes(const Run *run, const Gradients *g, const char *input);

#endif
