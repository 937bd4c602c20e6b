// §3.6.2 Implementing multi-head attention with weight splits, and Exercise 3.3
//
// Read beside ch03.ipynb, In [36] to In [38], and exercise-solutions.ipynb,
// Exercise 3.3: one set of projections split into heads by a view, the
// per-head products of a 4-D tensor, and the module at GPT-2's size. The
// class is lib/nn/multihead_attention.c.
//
// Beyond the book, Exercise 3.3's module also runs forward, on a (1, 1024,
// 768) input drawn with torch.rand in the same stream; the variant
// `gpt2_dropout` does so with dropout 0.1 in training mode. After each
// module's forward, a cell of our own runs loss = context_vecs.sum() and
// loss.backward() and prints every parameter's gradient and the input's.
#include "chapter.h"

// def count_parameters(model):
//     return sum(p.numel() for p in model.parameters() if p.requires_grad)
static long count_parameters(const MultiHeadAttention *model) { return multihead_attention_parameters(model); }

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "mha", "exercise_3_3.mha");

    Setup(2, "import torch");
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));

    Setup(33, "batch = torch.stack((inputs, inputs), dim=0)");
    Tensor batch = torch_stack(TENSORS(inputs, inputs), 0);
    if (has_input("batch")) batch = input_tensor("batch", SIZE(SIZE_ANY, SIZE_ANY, SIZE_ANY));  // a sweep's own batch

    In(36, "class MultiHeadAttention(nn.Module):");
    manual_seed(123);
    int context_length = setting_int("context_length", dim(batch, 1)), d_in = dim(batch, 2);
    int d_out = setting_int("d_out", 2);
    MultiHeadAttention mha = multihead_attention("mha", d_in, d_out, context_length, setting_float("dropout", 0.0),
                                                 setting_int("num_heads", 2), setting_bool("qkv_bias", false));
    if (!setting_bool("training", true)) multihead_attention_eval(&mha);
    Tensor context_vecs = multihead_attention_forward(&mha, batch);
    print(context_vecs);
    print("context_vecs.shape:", shape(context_vecs));
    KEEP(context_vecs);

    // Beyond the book: what loss.backward() leaves in each parameter, the
    // gradients chapter 5's training follows. The forward runs again, as
    // torch's does after requires_grad_() (with dropout, a second mask; a
    // forward that draws nothing gives the first one's bits, which the
    // module kept: lib/nn/multihead_attention.h).
    Beyond("batch.requires_grad_(); context_vecs = mha(batch); loss = context_vecs.sum(); loss.backward()");
    Gradients grads = multihead_attention_sum_backward(&mha, batch);
    keep_grads(&grads, "batch");
    for (int i = 0; i < grads.n; i++)  // for name, param in mha.named_parameters():
        print(grads.param[i].key, grads.param[i].grad);  //     print(name, param.grad)
    print("batch.grad:", grads.x);

    In(37, "# (b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4)");
    Tensor a = input_tensor("a", SIZE(SIZE_ANY, SIZE_ANY, SIZE_ANY, SIZE_ANY));
    Tensor products = torch_matmul(a, torch_transpose(a, 2, 3));
    print(products);
    keep("a @ a.transpose(2, 3)", products);

    In(38, "first_head = a[0, 0, :, :]");
    Tensor first_head = sel2(a, 0, 0);
    Tensor first_res = torch_matmul(first_head, torch_T(first_head));
    print("First head:\n", first_res);
    Tensor second_head = sel2(a, 0, 1);
    Tensor second_res = torch_matmul(second_head, torch_T(second_head));
    print("\nSecond head:\n", second_res);
    KEEP(first_res);
    KEEP(second_res);

    Exercise("3.3", "context_length = 1024");
    manual_seed_at("exercise_3_3", 123);
    int ex_context_length = setting_int("exercise_3_3.context_length", 1024);
    int ex_d_in = setting_int("exercise_3_3.d_in", 768), ex_d_out = setting_int("exercise_3_3.d_out", 768);
    int num_heads = setting_int("exercise_3_3.num_heads", 12);
    MultiHeadAttention ex_mha = multihead_attention("exercise_3_3.mha", ex_d_in, ex_d_out, ex_context_length,
                                                    setting_float("exercise_3_3.dropout", 0.0), num_heads,
                                                    setting_bool("exercise_3_3.qkv_bias", false));
    print(count_parameters(&ex_mha));

    Beyond("x = torch.rand(1, context_length, d_in); context_vecs = mha(x)");
    int batch_size = setting_int("exercise_3_3.batch_size", 1);
    int num_tokens = setting_int("exercise_3_3.tokens", ex_context_length);
    Tensor x = draw_rand("exercise_3_3.x", SIZE(batch_size, num_tokens, ex_d_in), "random");
    if (!setting_bool("exercise_3_3.training", true)) multihead_attention_eval(&ex_mha);
    Tensor ex_context_vecs = multihead_attention_forward(&ex_mha, x);
    print(ex_context_vecs);
    print("context_vecs.shape:", shape(ex_context_vecs));
    keep("exercise_3_3.context_vecs", ex_context_vecs);

    // And at GPT-2's size: 2.36 M parameter gradients.
    Beyond("x.requires_grad_(); context_vecs = mha(x); loss = context_vecs.sum(); loss.backward()");
    Gradients ex_grads = multihead_attention_sum_backward(&ex_mha, x);
    keep_grads(&ex_grads, "exercise_3_3.x");
    for (int i = 0; i < ex_grads.n; i++)  // for name, param in mha.named_parameters():
        print(ex_grads.param[i].key, ex_grads.param[i].grad);  //     print(name, param.grad)
    print("x.grad:", ex_grads.x);

    return chapter_end();
}
