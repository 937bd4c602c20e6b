// attention.h: what every attention module of nn/ shares, written once.
//
//   attention_scale(d)  = d ** 0.5, as the book writes keys.shape[-1]**0.5:
//                         Python's float power of an int, a double; the
//                         division by it then happens in float32, the
//                         tensor's type (lib/NUMERICS.md).
//   attention_expect_batch(x, module, dims)
//                       = x is a batch of rank 3, or one line and exit 1:
//                         "<input>: <module>: expected a batch (<dims>),
//                         found shape (...)".
#ifndef LITATTN_ATTENTION_H
#define LITATTN_ATTENTION_H

#include "tensor.h"

double attention_scale(int d);

// x: (b, num_tokens, d) expected. dims: the expected shape as the message
// shows it ("b, num_tokens, d_in"); last: the size dim 2 must have, or 0 for any.
void attention_expect_batch(Tensor x, const char *module, const char *dims, int last);

#endif
