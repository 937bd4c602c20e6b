// §3.6.1 Stacking multiple single-head attention layers, and Exercise 3.2
//
// Read beside ch03.ipynb, In [35], and exercise-solutions.ipynb, Exercise
// 3.2: two CausalAttention heads side by side, their outputs concatenated.
// The class is lib/nn/multihead_attention.c.
//
// Exercise 3.2's recorded output in exercise-solutions.ipynb is older than its
// code: it is what CausalAttention printed when its softmax normalised over
// dim=1 (the queries) instead of the last dimension. The book's variant runs
// the code as written; the variant `recorded` runs that old softmax and reproduces
// the recorded text (softmax over a dimension that is not the last: lib/tensor/rows.c).
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "mha", "exercise_3_2.mha");

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Setup(33, "batch = torch.stack((inputs, inputs), dim=0)");
    Tensor batch = torch_stack(TENSORS(inputs, inputs), 0);
    if (has_input("batch")) batch = input_tensor("batch", SIZE(SIZE_ANY, SIZE_ANY, SIZE_ANY));  // a sweep's own batch

    In(35, "class MultiHeadAttentionWrapper(nn.Module):");
    manual_seed(123);
    int context_length = setting_int("context_length", dim(batch, 1));  // This is the number of tokens
    int d_in = dim(batch, 2), d_out = setting_int("d_out", 2);
    MultiHeadAttentionWrapper mha =
        multihead_attention_wrapper("mha", d_in, d_out, context_length, setting_float("dropout", 0.0),
                                    setting_int("num_heads", 2), setting_bool("qkv_bias", false));
    if (!setting_bool("training", true))
        for (int i = 0; i < mha.num_heads; i++) causal_attention_eval(&mha.heads[i]);
    Tensor context_vecs = multihead_attention_wrapper_forward(&mha, batch);
    print(context_vecs);
    print("context_vecs.shape:", shape(context_vecs));
    KEEP(context_vecs);

    // Beyond the book: what loss.backward() leaves in each parameter, the
    // gradients chapter 5's training follows. The forward runs again, as
    // torch's does after requires_grad_() (with dropout, a second mask per head).
    Beyond("batch.requires_grad_(); context_vecs = mha(batch); loss = context_vecs.sum(); loss.backward()");
    Gradients grads = multihead_attention_wrapper_sum_backward(&mha, batch);
    keep_grads(&grads, "batch");
    for (int i = 0; i < grads.n; i++)  // for name, param in mha.named_parameters():
        print(grads.param[i].key, grads.param[i].grad);  //     print(name, param.grad)
    print("batch.grad:", grads.x);

    Exercise("3.2", "torch.manual_seed(123)");
    manual_seed_at("exercise_3_2", 123);
    int ex_d_out = setting_int("exercise_3_2.d_out", 1);
    MultiHeadAttentionWrapper ex_mha =
        multihead_attention_wrapper("exercise_3_2.mha", d_in, ex_d_out, context_length, 0.0, 2, false);
    // The `recorded` variant: softmax over dim=1, as the class was when the output was recorded.
    int softmax_dim = setting_int("exercise_3_2.softmax_dim", -1);
    for (int i = 0; i < ex_mha.num_heads; i++) ex_mha.heads[i].softmax_dim = softmax_dim;
    Tensor ex_context_vecs = multihead_attention_wrapper_forward(&ex_mha, batch);
    print(ex_context_vecs);
    print("context_vecs.shape:", shape(ex_context_vecs));
    keep("exercise_3_2.context_vecs", ex_context_vecs);

    // And its gradients, through the softmax over dim=1 in the `recorded` variant;
    // batch.grad still holds the first backward's, which loss.backward() would add to.
    Beyond("batch.grad = None; batch.requires_grad_(); context_vecs = mha(batch); loss = context_vecs.sum(); "
           "loss.backward()");
    Gradients ex_grads = multihead_attention_wrapper_sum_backward(&ex_mha, batch);
    keep_grads(&ex_grads, "exercise_3_2.batch");
    for (int i = 0; i < ex_grads.n; i++)  // for name, param in mha.named_parameters():
        print(ex_grads.param[i].key, ex_grads.param[i].grad);  //     print(name, param.grad)
    print("batch.grad:", ex_grads.x);

    return chapter_end();
}
