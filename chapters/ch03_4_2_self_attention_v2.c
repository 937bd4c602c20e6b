// §3.4.2 Implementing a compact self-attention Python class: SelfAttention_v2,
// and Exercise 3.1: SelfAttention_v1 computes the same once it holds v2's
// weights, transposed.
//
// Read beside ch03.ipynb, In [24], and exercise-solutions.ipynb, In [2] to
// In [7]. Variant: transcript 001 uses seed 42. The classes are
// lib/nn/self_attention.c.
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "sa_v2", "exercise_3_1.sa_v1", "exercise_3_1.sa_v2");

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Setup(15, "x_2 = inputs[1] # second input element");
    int d_in = dim(inputs, 1);
    int d_out = setting_int("d_out", 2);

    In(24, "class SelfAttention_v2(nn.Module):");
    manual_seed(789);
    SelfAttentionV2 sa_v2 = self_attention_v2("sa_v2", d_in, d_out, setting_bool("qkv_bias", false));
    Tensor context_vec = self_attention_v2_forward(&sa_v2, inputs);
    print(context_vec);
    keep("sa_v2(inputs)", context_vec);

    // Beyond the book: what loss.backward() leaves in each parameter, the
    // gradients chapter 5's training follows.
    Beyond("inputs.requires_grad_(); context_vec = sa_v2(inputs); loss = context_vec.sum(); loss.backward()");
    Gradients grads = self_attention_v2_sum_backward(&sa_v2, inputs);
    keep_grads(&grads, "inputs");
    for (int i = 0; i < grads.n; i++)  // for name, param in sa_v2.named_parameters():
        print(grads.param[i].key, grads.param[i].grad);  //     print(name, param.grad)
    print("inputs.grad:", grads.x);

    // Exercise 3.1 runs on the same inputs and d_out, with seed 123.
    ExIn(2, "inputs = torch.tensor(");

    ExIn(3, "import torch.nn as nn");
    manual_seed_at("exercise_3_1", 123);
    SelfAttentionV1 ex_sa_v1 = self_attention_v1("exercise_3_1.sa_v1", d_in, d_out);

    ExIn(4, "class SelfAttention_v2(nn.Module):");
    manual_seed_at("exercise_3_1", 123);
    SelfAttentionV2 ex_sa_v2 = self_attention_v2("exercise_3_1.sa_v2", d_in, d_out, false);
    ex_sa_v2.softmax_dim = 1;  // this copy of the class writes dim=1: for 2-D scores the last axis too

    ExIn(5, "sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)");
    ex_sa_v1.W_query = torch_T(ex_sa_v2.W_query.weight);
    ex_sa_v1.W_key = torch_T(ex_sa_v2.W_key.weight);
    ex_sa_v1.W_value = torch_T(ex_sa_v2.W_value.weight);
    ex_sa_v1.W_query.requires_grad = ex_sa_v1.W_key.requires_grad = ex_sa_v1.W_value.requires_grad = true;
    ex_sa_v1.W_query.grad_fn = ex_sa_v1.W_key.grad_fn = ex_sa_v1.W_value.grad_fn = NULL;  // new Parameters

    ExIn(6, "sa_v1(inputs)");
    Tensor v1_out = self_attention_v1_forward(&ex_sa_v1, inputs);
    print(v1_out);
    keep("exercise_3_1.sa_v1(inputs)", v1_out);

    ExIn(7, "sa_v2(inputs)");
    Tensor v2_out = self_attention_v2_forward(&ex_sa_v2, inputs);
    print(v2_out);
    keep("exercise_3_1.sa_v2(inputs)", v2_out);

    // The same products in the same order: equal, unless a NaN is among them.
    Beyond("torch.equal(sa_v1(inputs), sa_v2(inputs))");
    bool equal = torch_equal(v1_out, v2_out);
    print(equal);
    keep("exercise_3_1.torch.equal(sa_v1(inputs), sa_v2(inputs))", tensor_scalar(equal ? 1.0f : 0.0f));

    return chapter_end();
}
