// §3.5.3 Implementing a compact causal attention class
//
// Read beside ch03.ipynb, In [33] and In [34]: a batch of two copies of the
// inputs, and CausalAttention on it. The class is lib/nn/causal_attention.c.
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "ca");

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Setup(15, "x_2 = inputs[1] # second input element");
    int d_out = setting_int("d_out", 2);

    In(33, "batch = torch.stack((inputs, inputs), dim=0)");
    Tensor batch = torch_stack(TENSORS(inputs, inputs), 0);
    if (has_input("batch")) batch = input_tensor("batch", SIZE(SIZE_ANY, SIZE_ANY, SIZE_ANY));  // a sweep's own batch
    print(shape(batch));  // 2 inputs with 6 tokens each, and each token has embedding dimension 3
    int d_in = dim(batch, 2);

    In(34, "class CausalAttention(nn.Module):");
    manual_seed(123);
    int context_length = setting_int("context_length", dim(batch, 1));
    CausalAttention ca = causal_attention("ca", d_in, d_out, context_length, setting_float("dropout", 0.0),
                                          setting_bool("qkv_bias", false));
    if (!setting_bool("training", true)) causal_attention_eval(&ca);
    Tensor context_vecs = causal_attention_forward(&ca, batch);
    print(context_vecs);
    print("context_vecs.shape:", shape(context_vecs));
    KEEP(context_vecs);

    // Beyond the book: what loss.backward() leaves in each parameter, the
    // gradients chapter 5's training follows. The forward runs again, as
    // torch's does after requires_grad_() (with dropout, a second mask).
    Beyond("batch.requires_grad_(); context_vecs = ca(batch); loss = context_vecs.sum(); loss.backward()");
    Gradients grads = causal_attention_sum_backward(&ca, batch);
    keep_grads(&grads, "batch");
    for (int i = 0; i < grads.n; i++)  // for name, param in ca.named_parameters():
        print(grads.param[i].key, grads.param[i].grad);  //     print(name, param.grad)
    print("batch.grad:", grads.x);

    return chapter_end();
}
