// pretty.h: what a notebook shows for a cell's last expression when it is a
// state_dict: IPython's pretty printer (IPython.lib.pretty, the text/plain
// of the cell's Out[N]) on an OrderedDict of tensors,
//
//   OrderedDict([('W_query.weight',
//                 tensor([[-0.2354,  0.0191, -0.2867],
//                         [ 0.2177, -0.4919,  0.4232]])),
//                ('W_key.weight', ...)])
//
// A multi-line tensor repr breaks its tuple and the list; what fits in 79
// columns stays on one line ("OrderedDict([('a', tensor([1.]))])").
#ifndef LITATTN_PRETTY_H
#define LITATTN_PRETTY_H

#include "run.h"
#include "state_dict.h"

// The text IPython shows for sd, a newline after it (as the cell prints it).
char *state_dict_pretty(const StateDict *sd);
// The cell's Out[N]: state_dict_pretty(sd) on stdout, except in a setup cell.
void display_state_dict(const Run *run, const StateDict *sd);

#endif
