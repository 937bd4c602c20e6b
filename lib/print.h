// print.h: tensors printed exactly as PyTorch 1.13's repr() prints them
// (torch/_tensor_str.py with the default options: precision 4, threshold 1000
// elements, 3 edge items, line width 80, sci_mode chosen automatically).
//
// Only what a C tensor can have is printed: no grad_fn, no requires_grad, no
// dtype suffix (float32 is torch's default dtype, so torch prints none either).
#ifndef LITATTN_PRINT_H
#define LITATTN_PRINT_H

#include <stdio.h>

#include "tensor.h"

// "tensor([[0.4300, 0.1500, 0.8900],\n        [...]])": malloc'd, caller frees.
char *tensor_repr(Tensor t);
// "torch.Size([6, 2])", "torch.Size([])" for rank 0: malloc'd, caller frees.
char *tensor_size_str(Tensor t);

void print_tensor(FILE *f, Tensor t);     // tensor_repr(t), no newline
void print_parameter(FILE *f, Tensor t);  // "Parameter containing:\n" + tensor_repr(t), no newline
void print_size(FILE *f, Tensor t);       // tensor_size_str(t), no newline

#endif
