// Multi-head attention plus data loading: multihead-attention.ipynb
//
// Read beside multihead-attention.ipynb, In [2] to In [8]: the chapter's
// takeaway. A text is read and tokenized with GPT-2's BPE (lib/text/bpe.c,
// tiktoken's ids), sliced by chapter 2's GPTDatasetV1 and batched by a
// shuffling DataLoader (lib/text/dataset.c), embedded by two nn.Embedding
// tables (lib/nn/embedding.c), and run through both multi-head attention
// classes (lib/nn/multihead_attention.c; this notebook's wrapper ends with
// an out_proj).
//
// The notebook draws its embedding tables and its shuffle before any
// torch.manual_seed, from the generator its process started with: here
// initial_seed(), the seed the fixture recorded (or --seed N). --text FILE
// runs it all on your own text.
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "variant_a.mha", "variant_b.mha");

    MhaIn(2, "import tiktoken");
    initial_seed();  // the default generator, as the notebook's process started it
    // with open("small-text-sample.txt", "r", encoding="utf-8") as f:
    //     raw_text = f.read()
    Text raw_text = read_text("small-text-sample.txt");
    Tokenizer tokenizer = tiktoken_get_encoding("gpt2");
    LongTensor encoded_text = tokenizer_encode(tokenizer, raw_text);
    (void)encoded_text;  // the notebook computes it and uses it no further

    int vocab_size = 50257;
    int output_dim = setting_int("output_dim", 256);
    int max_len = 1024;
    int context_length = max_len;

    Embedding token_embedding_layer = nn_embedding("token_embedding_layer", vocab_size, output_dim);
    Embedding pos_embedding_layer = nn_embedding("pos_embedding_layer", context_length, output_dim);

    int max_length = setting_int("max_length", 4);
    DataLoader dataloader = create_dataloader(raw_text, setting_int("batch_size", 8), max_length,
                                              setting_int("stride", max_length), true);

    MhaIn(3, "for batch in dataloader:");
    LongTensor x, y;
    first_batch(&dataloader, &x, &y);  // x, y = batch ... break
    KEEP_LONG(x);
    KEEP_LONG(y);
    Tensor token_embeddings = embedding_forward(&token_embedding_layer, x);
    Tensor pos_embeddings = embedding_forward(&pos_embedding_layer, torch_arange(max_length));
    Tensor input_embeddings = torch_add(token_embeddings, pos_embeddings);
    KEEP(token_embeddings);
    KEEP(pos_embeddings);
    KEEP(input_embeddings);

    MhaIn(4, "print(input_embeddings.shape)");
    print(shape(input_embeddings));

    MhaIn(5, "class CausalSelfAttention(nn.Module):");
    // CausalSelfAttention is ch03.ipynb's CausalAttention (lib/nn/causal_attention.c);
    // this notebook's MultiHeadAttentionWrapper stacks them and adds an out_proj
    // (multihead_attention_wrapper_out_proj, lib/nn/multihead_attention.c).

    MhaIn(6, "torch.manual_seed(123)");
    manual_seed_in_process("variant_a", 123);
    context_length = max_length;
    int d_in = output_dim;
    int num_heads = setting_int("num_heads", 2);
    int d_out = d_in / num_heads;
    MultiHeadAttentionWrapper mha = multihead_attention_wrapper_out_proj("variant_a.mha", d_in, d_out, context_length,
                                                                         0.0, num_heads, false);
    Tensor batch = input_embeddings;
    Tensor context_vecs = multihead_attention_wrapper_forward(&mha, batch);
    print("context_vecs.shape:", shape(context_vecs));
    keep("variant_a.context_vecs", context_vecs);

    MhaIn(7, "class MultiHeadAttention(nn.Module):");
    // ch03.ipynb's MultiHeadAttention (lib/nn/multihead_attention.c).

    MhaIn(8, "torch.manual_seed(123)");
    {  // the notebook binds mha, batch and context_vecs again
        manual_seed_in_process("variant_b", 123);
        context_length = max_length;
        d_in = output_dim;
        d_out = d_in;
        MultiHeadAttention mha = multihead_attention("variant_b.mha", d_in, d_out, context_length, 0.0, num_heads,
                                                     false);
        Tensor batch = input_embeddings;
        Tensor context_vecs = multihead_attention_forward(&mha, batch);
        print("context_vecs.shape:", shape(context_vecs));
        keep("variant_b.context_vecs", context_vecs);
    }

    return chapter_end();
}
