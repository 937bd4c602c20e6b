// §3.4.2 Implementing a compact self-attention Python class: SelfAttention_v1
//
// Read beside transcript 001 (cells In [69] and In [70], seed 42), 004 (the
// same cells, seed 123) or 000 (In [32], In [33]: built without re-seeding,
// after the three §3.4.1 matrices, so the stream continues). The class
// itself is lib/self_attention.c.
#include "chapter.h"

int main(int argc, char **argv) {
    chapter_begin(argc, argv, &(ChapterSpec){
        .name = "ch03_4_2_self_attention_v1",
        .variant = "seed123",
        .about = "Book §3.4.2: SelfAttention_v1, raw (d_in, d_out) parameter matrices, x @ W.",
        .draws_weights = 1,
    });

    // In [23] (000), In [3] (004): inputs.shape
    cell("inputs.shape");
    Tensor inputs = fixture_inputs(1);
    show("%S\n", inputs);

    // In [48] (001), In [4] (004): d_in = inputs.shape[1]; d_out = 2
    int d_out = (int)fixture_int("d_out", 1, CHAPTER_MAX_DIM);
    cell("d_in = inputs.shape[1]; d_out = %d", d_out);
    int d_in = tensor_dim(inputs, 1);

    // In [69] (001), In [32] (000): class SelfAttention_v1(nn.Module): ...  (lib/self_attention.c)
    cell("class SelfAttention_v1(nn.Module): ...");

    // In [70] (001), In [33] (000), In [None] (004): torch.manual_seed(123); sa_v1 = SelfAttention_v1(d_in, d_out)
    long long skip = skip_count();
    if (skip) cell("torch.manual_seed(%s); %lld draws by earlier cells; sa_v1 = SelfAttention_v1(d_in, d_out)",
                   seed_text(), skip);
    else cell("torch.manual_seed(%s); sa_v1 = SelfAttention_v1(d_in, d_out)", seed_text());
    SelfAttentionV1 sa_v1 = self_attention_v1_new(d_in, d_out, manual_seed());

    cell("sa_v1(inputs)");
    AttentionTrace tr = self_attention_v1_forward(&sa_v1, inputs);
    show("%T\n", tr.context_vec);
    keep_trace(tr);

    return chapter_end();
}
