// tensor_repr.h: tensors printed exactly as PyTorch 1.13's repr() prints them
// (torch/_tensor_str.py with the default options: precision 4, threshold 1000
// elements, 3 edge items, line width 80, sci_mode chosen automatically),
// ranks 0 to 4, with the grad_fn=<...> or requires_grad=True suffix torch
// would add. No dtype suffix: float32 is torch's default dtype, so torch
// prints none either.
#ifndef LITATTN_TENSOR_REPR_H
#define LITATTN_TENSOR_REPR_H

#include "strbuf.h"
#include "tensor.h"

// "tensor([[0.4300, 0.1500, 0.8900],\n        [...]])", appended to b.
void tensor_repr_to(StrBuf *b, Tensor t);
// The same as a malloc'd string; the caller frees it.
char *tensor_repr(Tensor t);
// "Parameter containing:\n" + the tensor's repr: how an nn.Parameter prints.
void parameter_repr_to(StrBuf *b, Tensor t);
// "torch.Size([6, 2])"; "torch.Size([])" for a 0-d tensor's shape.
void size_repr_to(StrBuf *b, Size s);

#endif
