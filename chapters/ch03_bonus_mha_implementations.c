// Bonus: comparing efficient multi-head attention implementations
//
// Read beside mha-implementations.ipynb, In [1] to In [14]: one input, and
// causal multi-head attention written nine ways. The classes are in lib/nn/:
// the wrapper and chapter 3's class (multihead_attention.c), the combined
// QKV projection and the SDPA classes' parameters (mha_combined_qkv.c), the
// einsum class (mha_einsum.c), and torch 1.13's nn.MultiheadAttention under
// the notebook's MHAPyTorchClass (torch_multihead_attention.c).
//
// Implementations 1-4, 7 and 8 run as torch 1.13 runs them, every (T, T)
// tensor made, and give its bits. 5 and 6 call
// nn.functional.scaled_dot_product_attention, which arrived in torch 2.0, and
// 9 FlexAttention (torch 2.5 and CUDA): here litattn's exact fused attention
// (lib/tensor/attend_fast.c) stands in, which never holds a
// (T, T) tensor, and the chapter shows that it gives chapter 3's bits.
//
// Beyond the notebook, after implementations 1 to 4, 7 and 8 a cell of our
// own runs loss = out.sum(); loss.backward() and prints the shape of every
// gradient (--dump keeps them; torch's autograd's bits).
//
// --context-len N and --batch-size B (the notebook's variables) run it all
// at other sizes, drawn in C; past the limit of a materialised (T, T)
// tensor the implementations that make one are skipped with a note.
// Section 10's timings are a benchmark (meson test --benchmark), not cells:
// this output is the same on every run.
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv,
                  "mha_ch03_wrapper", "mha_ch03", "mha_combined_qkv", "mha_einsum", "mha_pytorch_scaled",
                  "mha_pytorch_sdpa_no_flash", "mha_pytorch_class_default", "mha_pytorch_class_noweights");
    // The widest tensor is the combined Q, K, V projection's output (3 x 768
    // features): a size past the limit is refused before anything prints.
    check_input_size("the combined QKV projection's output", 3, 8, 1024, 768);

    ImplIn(1, "import torch");
    manual_seed(123);
    print("Using device: cpu");  // device = torch.device("cpu")   # CPU fallback
    print_note("# litattn: C11 with torch 1.13.1's CPU float32 bits (the notebook ran torch 2.8.0 on mps)");
    int batch_size = setting_int("batch_size", 8);
    int context_len = setting_int("context_len", 1024);
    int embed_dim = setting_int("embed_dim", 768);
    int num_heads = setting_int_dividing("num_heads", 12, embed_dim, "embed_dim");  // the notebook writes 12 in every class
    Tensor embeddings = draw_randn("embeddings", SIZE(batch_size, context_len, embed_dim), "random");

    ImplIn(2, "# pip install --upgrade torch torchvision torchaudio");

    // ## 1. CausalAttention MHA wrapper class from chapter 3
    ImplIn(3, "import torch.nn as nn");
    MultiHeadAttentionWrapper mha_ch03_wrapper = Ch03_MHA_Wrapper(
        "mha_ch03_wrapper", embed_dim, embed_dim / num_heads, context_len, 0.0, num_heads, false);
    bool ran = materialising_fits("mha_ch03_wrapper", SIZE(batch_size, context_len, context_len));
    if (ran) {
        Tensor out = multihead_attention_wrapper_forward(&mha_ch03_wrapper, embeddings);
        print(shape(out));
        keep("mha_ch03_wrapper(embeddings)", out);
    }

    // Beyond the notebook: what loss.backward() leaves, torch's autograd bit
    // for bit (the forward runs again, fused: the backward computes each
    // head's weights again from what it keeps), where the forward ran. The
    // later cells set embeddings.grad = None first: loss.backward() adds to it.
    if (ran) {
        Beyond("embeddings.requires_grad_(); loss = mha_ch03_wrapper(embeddings).sum(); loss.backward()");
        Gradients grads = multihead_attention_wrapper_sum_backward(&mha_ch03_wrapper, embeddings);
        keep_grads(&grads, "embeddings (mha_ch03_wrapper)");
        print_grad_shapes(&grads, "embeddings");
    }

    // ## 2. The multi-head attention class from chapter 3
    ImplIn(4, "class Ch03_MHA(nn.Module):");
    MultiHeadAttention mha_ch03 = Ch03_MHA("mha_ch03", embed_dim, embed_dim, context_len, 0.0, num_heads, false);
    Tensor mha_ch03_out = {0};
    if (materialising_fits("mha_ch03", SIZE(num_heads, context_len, context_len))) {
        Tensor out = mha_ch03_out = multihead_attention_forward(&mha_ch03, embeddings);
        print(shape(out));
        keep("mha_ch03(embeddings)", out);
    }

    if (mha_ch03_out.data) {
        Beyond("embeddings.grad = None; embeddings.requires_grad_(); loss = mha_ch03(embeddings).sum(); "
               "loss.backward()");
        Gradients grads = multihead_attention_sum_backward(&mha_ch03, embeddings);
        keep_grads(&grads, "embeddings (mha_ch03)");
        print_grad_shapes(&grads, "embeddings");
    }

    // ## 3. An alternative multi-head attention with combined weights
    ImplIn(5, "import torch.nn as nn");
    MultiHeadAttentionCombinedQKV mha_combined_qkv = MultiHeadAttentionCombinedQKV(
        "mha_combined_qkv", embed_dim, embed_dim, num_heads, context_len, 0.0, false);
    if (materialising_fits("mha_combined_qkv", SIZE(num_heads, context_len, context_len))) {
        Tensor out = mha_combined_qkv_forward(&mha_combined_qkv, embeddings);
        print(shape(out));
        keep("mha_combined_qkv(embeddings)", out);
        Beyond("embeddings.grad = None; embeddings.requires_grad_(); "
               "loss = mha_combined_qkv(embeddings).sum(); loss.backward()");
        Gradients grads = mha_combined_qkv_sum_backward(&mha_combined_qkv, embeddings);
        keep_grads(&grads, "embeddings (mha_combined_qkv)");
        print_grad_shapes(&grads, "embeddings");
    }

    // ## 4. Multi-head attention with Einsum
    ImplIn(6, "import math");
    MHAEinsum mha_einsum = MHAEinsum("mha_einsum", embed_dim, embed_dim, context_len, 0.0, num_heads, false);
    if (materialising_fits("mha_einsum", SIZE(num_heads, context_len, context_len))) {
        Tensor out = mha_einsum_forward(&mha_einsum, embeddings);
        print(shape(out));
        keep("mha_einsum(embeddings)", out);
        Beyond("embeddings.grad = None; embeddings.requires_grad_(); loss = mha_einsum(embeddings).sum(); "
               "loss.backward()");
        Gradients grads = mha_einsum_sum_backward(&mha_einsum, embeddings);
        keep_grads(&grads, "embeddings (mha_einsum)");
        print_grad_shapes(&grads, "embeddings");
    }

    // ## 5. Multi-head attention with PyTorch's scaled dot product attention and FlashAttention
    ImplSec(5.1, "class MHAPyTorchScaledDotProduct(nn.Module):");
    print_note("# torch 1.13 has no nn.functional.scaled_dot_product_attention (it arrived in torch 2.0):");
    print_note("# litattn's exact fused attention stands in, chapter 3's order of operations a block of query");
    print_note("# rows at a time, no (T, T) tensor held; its bits are torch 1.13's for the composed ops");

    ImplSec(5.2, "mha_pytorch_scaled = MHAPyTorchScaledDotProduct(");
    MultiHeadAttentionCombinedQKV mha_pytorch_scaled = MHAPyTorchScaledDotProduct(
        "mha_pytorch_scaled", embed_dim, embed_dim, num_heads, context_len, 0.0, false);
    {
        Tensor out = mha_combined_qkv_forward(&mha_pytorch_scaled, embeddings);
        print(shape(out));
        keep("mha_pytorch_scaled(embeddings)", out);
    }

    // Beyond the notebook: the fused attention gives chapter 3's class its
    // very bits, each output row depending on its own row of scores only.
    Beyond("mha_ch03 with its attention fused: no (b, h, T, T) tensor");
    {
        Tensor fused = multihead_attention_forward_fused(&mha_ch03, embeddings);
        if (mha_ch03_out.data) print_same_bits("mha_ch03(embeddings) materialised", mha_ch03_out, "fused", fused);
        else print(shape(fused));
        keep("mha_ch03(embeddings), fused", fused);
    }

    // ## 6. PyTorch's scaled dot product attention without FlashAttention
    ImplIn(8, "class MHAPyTorchSDPAWithoutFlash(nn.Module):");
    print_note("# scaled_dot_product_attention with an explicit mask: torch 2.0 too; the fused attention stands in");

    ImplIn(9, "mha_pytorch_sdpa_no_flash = MHAPyTorchSDPAWithoutFlash(");
    MultiHeadAttentionCombinedQKV mha_pytorch_sdpa_no_flash = MHAPyTorchSDPAWithoutFlash(
        "mha_pytorch_sdpa_no_flash", embed_dim, embed_dim, num_heads, context_len, 0.0, false);
    {
        Tensor out = mha_combined_qkv_forward(&mha_pytorch_sdpa_no_flash, embeddings);
        print(shape(out));
        keep("mha_pytorch_sdpa_no_flash(embeddings)", out);
    }

    // ## 7. Using PyTorch's torch.nn.MultiheadAttention
    ImplSec(7.1, "import torch.nn as nn");
    MHAPyTorchClass mha_pytorch_class_default = MHAPyTorchClass(
        "mha_pytorch_class_default", embed_dim, embed_dim, num_heads, context_len, 0.0, false, true);
    if (materialising_fits("mha_pytorch_class_default", SIZE(num_heads, context_len, context_len))) {
        Tensor out = mha_pytorch_class_forward(&mha_pytorch_class_default, embeddings);
        print(shape(out));
        keep("mha_pytorch_class_default(embeddings)", out);
        Beyond("embeddings.grad = None; embeddings.requires_grad_(); "
               "loss = mha_pytorch_class_default(embeddings).sum(); loss.backward()");
        Gradients grads = mha_pytorch_class_sum_backward(&mha_pytorch_class_default, embeddings);
        keep_grads(&grads, "embeddings (mha_pytorch_class_default)");
        print_grad_shapes(&grads, "embeddings");
    }

    // ## 8. Using PyTorch's torch.nn.MultiheadAttention with `scaled_dot_product_attention`
    ImplSec(8.1, "mha_pytorch_class_noweights = MHAPyTorchClass(");
    print_note("# in torch 1.13, need_weights=False takes the same path (the weights are only not returned)");
    MHAPyTorchClass mha_pytorch_class_noweights = MHAPyTorchClass(
        "mha_pytorch_class_noweights", embed_dim, embed_dim, num_heads, context_len, 0.0, false, false);
    if (materialising_fits("mha_pytorch_class_noweights", SIZE(num_heads, context_len, context_len))) {
        Tensor out = mha_pytorch_class_forward(&mha_pytorch_class_noweights, embeddings);
        print(shape(out));
        keep("mha_pytorch_class_noweights(embeddings)", out);
        Beyond("embeddings.grad = None; embeddings.requires_grad_(); "
               "loss = mha_pytorch_class_noweights(embeddings).sum(); loss.backward()");
        Gradients grads = mha_pytorch_class_sum_backward(&mha_pytorch_class_noweights, embeddings);
        keep_grads(&grads, "embeddings (mha_pytorch_class_noweights)");
        print_grad_shapes(&grads, "embeddings");
    }

    // ## 9. Using PyTorch's FlexAttention
    ImplIn(12, "from packaging.version import parse as parse_version");
    print_note("# current_version = 1.13.1 (litattn's reference), below MIN_TORCH_VERSION = 2.5.0; no CUDA");
    ImplIn(13, "if current_version >= required_version and torch.cuda.is_available():");
    ImplIn(14, "if current_version >= required_version and torch.cuda.is_available():");
    print_note("# the guard is false: mha_pytorch_flex is neither made nor run (nothing drawn); the fused");
    print_note("# attention above is the exact causal attention without a (T, T) tensor");

    return chapter_end();
}
