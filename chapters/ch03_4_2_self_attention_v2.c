// §3.4.2 Implementing a compact self-attention Python class: SelfAttention_v2,
// and Exercise 3.1 (v1 and v2 agree once v1 holds v2's weights, transposed).
//
// Read beside transcript 004 (In [24], seed 789), 000 (In [40], In [41]) or
// 001 (In [92], In [95], seed 42). The class itself is lib/self_attention.c.
#include "chapter.h"

int main(int argc, char **argv) {
    chapter_begin(argc, argv, &(ChapterSpec){
        .name = "ch03_4_2_self_attention_v2",
        .variant = "seed789",
        .about = "Book §3.4.2: SelfAttention_v2 with nn.Linear layers, and Exercise 3.1.",
        .draws_weights = 1,
    });

    // In [23] (000), In [3] (004): inputs.shape
    cell("inputs.shape");
    Tensor inputs = fixture_inputs(1);
    show("%S\n", inputs);

    // In [48] (001), In [4] (004): d_in = inputs.shape[1]; d_out = 2
    int d_out = (int)fixture_int("d_out", 1, CHAPTER_MAX_DIM);
    int qkv_bias = (int)fixture_int("qkv_bias", 0, 1);
    cell("d_in = inputs.shape[1]; d_out = %d", d_out);
    int d_in = tensor_dim(inputs, 1);

    // In [92] (001), In [40] (000): class SelfAttention_v2(nn.Module): ...  (lib/self_attention.c)
    cell("class SelfAttention_v2(nn.Module): ...");

    // In [24] (004), In [41] (000), In [95] (001): torch.manual_seed(789); sa_v2 = SelfAttention_v2(d_in, d_out)
    cell("torch.manual_seed(%s); sa_v2 = SelfAttention_v2(d_in, d_out%s)", seed_text(),
         qkv_bias ? ", qkv_bias=True" : "");
    SelfAttentionV2 sa_v2 = self_attention_v2_new(d_in, d_out, qkv_bias, manual_seed());

    cell("sa_v2(inputs)");
    AttentionTrace tr = self_attention_v2_forward(&sa_v2, inputs);
    show("%T\n", tr.context_vec);
    keep_trace(tr);

    // In [95] (001, commented out there), Exercise 3.1: sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T), ...
    if (qkv_bias) {
        cell("# Exercise 3.1 compares with SelfAttention_v1, which has no bias: skipped for qkv_bias=True");
        return chapter_end();
    }
    cell("sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T); sa_v1.W_key = ...; sa_v1.W_value = ...; sa_v1(inputs)");
    SelfAttentionV1 sa_v1 = {
        .W_query = torch_transpose(sa_v2.W_query.weight),
        .W_key = torch_transpose(sa_v2.W_key.weight),
        .W_value = torch_transpose(sa_v2.W_value.weight),
    };
    Tensor context_vec_v1 = self_attention_v1_forward(&sa_v1, inputs).context_vec;
    show("%T\n", context_vec_v1);
    keep("sa_v1(inputs)", context_vec_v1);

    cell("torch.equal(sa_v1(inputs), sa_v2(inputs))");
    int equal = 1;
    for (int i = 0; i < tensor_numel(context_vec_v1); i++) equal &= context_vec_v1.data[i] == tr.context_vec.data[i];
    show("%s\n", equal ? "True" : "False");

    return chapter_end();
}
