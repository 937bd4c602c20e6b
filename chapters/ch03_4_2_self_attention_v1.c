// §3.4.2 Implementing a compact self-attention Python class: SelfAttention_v1
//
// Read beside ch03.ipynb, In [23]. Variants: transcript 000 builds it right
// after §3.4.1's three torch.rand matrices without re-seeding, so the stream
// continues (18 draws in); transcript 001 uses seed 42. The class itself is
// lib/nn/self_attention.c.
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "sa_v1");

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Setup(15, "x_2 = inputs[1] # second input element");
    int d_in = dim(inputs, 1);
    int d_out = setting_int("d_out", 2);

    In(23, "import torch.nn as nn");
    manual_seed(123);
    SelfAttentionV1 sa_v1 = self_attention_v1("sa_v1", d_in, d_out);
    Tensor context_vec = self_attention_v1_forward(&sa_v1, inputs);
    print(context_vec);
    keep("sa_v1(inputs)", context_vec);

    // Beyond the book: what loss.backward() leaves in each parameter, the
    // gradients chapter 5's training follows.
    Beyond("inputs.requires_grad_(); context_vec = sa_v1(inputs); loss = context_vec.sum(); loss.backward()");
    Gradients grads = self_attention_v1_sum_backward(&sa_v1, inputs);
    keep_grads(&grads, "inputs");
    for (int i = 0; i < grads.n; i++)  // for name, param in sa_v1.named_parameters():
        print(grads.param[i].key, grads.param[i].grad);  //     print(name, param.grad)
    print("inputs.grad:", grads.x);

    return chapter_end();
}
