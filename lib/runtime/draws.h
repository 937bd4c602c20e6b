// draws.h: every number a chapter draws at random, drawn as PyTorch draws it.
//
// The notebook seeds torch's default generator (`torch.manual_seed(123)`)
// and then draws: torch.rand, nn.Linear's initialisation, nn.Dropout's masks.
// A chapter does the same through these functions, each naming what it draws
// (its dataset name in the fixture), and the modules it makes draw through
// draws_source(run), the ParamSource (nn/param_source.h) that the chapter
// macros of chapter.h hand them, whose ctx is the run: the generator is the
// run's (run->draws). A chapter calls them without the run (chapter.h passes
// its own). Which of two modes a run is in, chapter_begin decides once
// (run->drawing):
//  - with --seed (or sizes of the run's own): the draws are made here, by the PyTorch-compatible MT19937
//    (torch_generator.h), and kept for --dump (role "weight" for parameters,
//    "random" for the rest); the tests compare them with PyTorch's, bit for bit;
//  - without: what PyTorch drew is read from the fixture, and the generator,
//    seeded as the fixture says, is advanced by as many draws, so that a
//    tensor the fixture holds only as a digest (too large to commit: Exercise
//    3.3's 2.36 M parameters) is drawn here in step with PyTorch.
#ifndef LITATTN_DRAWS_H
#define LITATTN_DRAWS_H

#include "param_source.h"
#include "run.h"
#include "tensor.h"
#include "torch_generator.h"

// chapter_begin calls it: the run's generator and ParamSource made.
void draws_begin(Run *run);

// torch.manual_seed(book_seed): the book's seed, written as in the notebook.
// The seed used is the run's (--seed, or the fixture's `seed` attribute); when
// it differs from the book's, the chapter's output says so. The run's first
// seeding (this, or initial_seed) also discards --skip K (or, reading the
// fixture's draws, its `skip`) draws: the earlier cells'. Once per run.
void manual_seed(Run *run, long long book_seed);
// The same for a second seeding site of a chapter, whose seed is the
// fixture's `<site>.seed` attribute (or --seed <site>=N).
void manual_seed_at(Run *run, const char *site, long long book_seed);

// A notebook that draws before any torch.manual_seed (multihead-attention.ipynb:
// its nn.Embedding tables, its DataLoader's shuffle) draws from the default
// generator as the process started it, seeded with torch.initial_seed(),
// which differs in every process. initial_seed() starts that generator at
// the fixture's `seed` (the exporter's process's) or at --seed N, and says
// so in a note line; --skip K (or the fixture's `skip`) then discards K draws.
void initial_seed(Run *run);
// torch.manual_seed(book_seed) at `site` in such a chapter: the site's seed is
// its fixture attribute `<site>.seed` or --seed SITE=N; a plain --seed N
// (the process's start) leaves it alone.
void manual_seed_in_process(Run *run, const char *site, long long book_seed);
// The default generator itself, once seeded (the DataLoader draws from it);
// `what` names the draw in the message if it is not.
TorchGenerator *default_generator(Run *run, const char *what);

// torch.rand(*s): one draw per element in memory order. role: "weight" for
// nn.Parameter(torch.rand(...)), "random" for a random input.
Tensor draw_rand(Run *run, const char *name, Size s, const char *role);

// torch.randn(*s): normal_(0, 1), torch 1.13's CPU kernel (random/normal.h).
Tensor draw_randn(Run *run, const char *name, Size s, const char *role);

// The modules' source: uniform_ (nn.Linear's init) and rand (an
// nn.Parameter) as parameters (role "weight"), and nn.Dropout(p)'s noise in
// training mode (role "random"): bernoulli_(1 - p) then div_(1 - p), two
// 32-bit draws per element. Its ctx is the run.
const ParamSource *draws_source(const Run *run);

#endif
