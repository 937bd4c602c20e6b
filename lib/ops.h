// ops.h: the notebook's torch expressions, one function each. They check
// shapes, allocate the result and call a kernel from kernels.h, so a chapter
// reads like its notebook: `attn_scores_2 = torch_matmul(query_2, torch_transpose(keys))`.
#ifndef LITATTN_OPS_H
#define LITATTN_OPS_H

#include "tensor.h"

Tensor torch_matmul(Tensor a, Tensor b);     // a @ b: (M,K)@(K,N); (K,)@(K,N) -> (N,)
Tensor torch_transpose(Tensor a);            // a.T of a rank-2 tensor
Tensor torch_dot(Tensor a, Tensor b);        // torch.dot(a, b) of two (n,) -> 0-d
Tensor torch_sum(Tensor a);                  // a.sum() -> 0-d
Tensor torch_sum_rows(Tensor a);             // a.sum(dim=-1) of (rows, cols) -> (rows,)
Tensor torch_div(Tensor a, float s);         // a / s, s a Python float or a 0-d tensor
Tensor torch_mul(Tensor a, float s);         // a * s
Tensor torch_exp(Tensor a);                  // torch.exp(a)
Tensor torch_softmax(Tensor a, int dim);     // torch.softmax(a, dim); dim must be the last one
void torch_add_scaled_(Tensor acc, float w, Tensor x);  // acc += w * x, in place

#endif
