// Understanding PyTorch buffers
//
// Read beside understanding-buffers.ipynb, In [1] to In [16]: the book's
// CausalAttention with its causal mask held two ways, as a plain attribute
// (CausalAttentionWithoutBuffers: self.mask = ...) and as a buffer
// (CausalAttentionWithBuffer: self.register_buffer("mask", ...)), on the
// book's batch. Both compute as lib/nn/causal_attention.c does; how a module
// holds its mask (causal_attention_hold_mask) decides what state_dict()
// returns (lib/nn/state_dict.c) and what .to(device) moves.
//
// The notebook ran on a GPU (cuda:0). litattn computes on the CPU, the
// notebook's own fallback (device = torch.device("cpu")): each cell prints
// what it prints on a CPU, and where the GPU's output differs (device='cuda:0'
// in a tensor, a device's name, In [4]'s RuntimeError) one note line says
// what the notebook showed.
#include "chapter.h"

int main(int argc, char **argv) {
    // The modules it makes, in that order: the NAMEs --weights NAME=FILE takes (chapter.h).
    chapter_begin(argc, argv, "ca_without_buffer", "ca_with_buffer", "new_ca_with_buffer", "new_ca_without_buffer");

    // class CausalAttentionWithoutBuffers(nn.Module): the mask a plain attribute
    BufIn(1, "import torch");

    BufIn(2, "torch.manual_seed(123)");
    manual_seed(123);
    Tensor inputs = input_tensor("inputs", SIZE(SIZE_ANY, SIZE_ANY));
    Tensor batch = torch_stack(TENSORS(inputs, inputs), 0);
    int context_length = dim(batch, 1);
    int d_in = dim(inputs, 1);
    int d_out = setting_int("d_out", 2);
    CausalAttention ca_without_buffer =  // self.mask = torch.triu(...)
        causal_attention_holding("ca_without_buffer", d_in, d_out, context_length, 0.0, false, MASK_ATTRIBUTE);
    torch_set_grad_enabled(false);  // with torch.no_grad():
    Tensor context_vecs = causal_attention_forward(&ca_without_buffer, batch);
    torch_set_grad_enabled(true);
    print(context_vecs);
    KEEP(context_vecs);

    BufIn(3, "has_cuda = torch.cuda.is_available()");
    print_note("# the notebook's machine had a GPU: \"Machine has GPU: True\", \"Using device: cuda\"");
    bool has_cuda = false, has_mps = false;  // litattn computes on the CPU
    print("Machine has GPU:", (bool)(has_cuda || has_mps));
    const char *device = "cpu";  // device = torch.device("cpu")   # CPU fallback
    print("Using device:", device);
    // batch = batch.to(device); ca_without_buffer = ca_without_buffer.to(device):
    // .to() moves the parameters and buffers; on the CPU nothing moves.

    BufIn(4, "with torch.no_grad():");
    print_note("# on cuda the notebook raised RuntimeError: expected self and mask to be on the same device, "
               "but got mask on cpu and self on cuda:0");
    torch_set_grad_enabled(false);  // with torch.no_grad():
    context_vecs = causal_attention_forward(&ca_without_buffer, batch);
    torch_set_grad_enabled(true);
    print(context_vecs);
    KEEP(context_vecs);

    BufIn(5, "print(\"W_query.device:\", ca_without_buffer.W_query.weight.device)");
    print_note("# on cuda: W_query.device: cuda:0 (a parameter moved), mask.device: cpu (the attribute did not)");
    print("W_query.device:", device_of(ca_without_buffer.W_query.weight));
    print("mask.device:", device_of(ca_without_buffer.mask));

    BufIn(6, "type(ca_without_buffer.mask)");
    print("torch.Tensor");  // a plain tensor: not an nn.Parameter, not a registered buffer

    BufIn(7, "ca_without_buffer.mask = ca_without_buffer.mask.to(device)");
    print_note("# on cuda: mask.device: cuda:0");
    print("mask.device:", device_of(ca_without_buffer.mask));

    BufIn(8, "with torch.no_grad():");
    print_note("# on cuda the tensor printed with device='cuda:0'");
    torch_set_grad_enabled(false);  // with torch.no_grad():
    context_vecs = causal_attention_forward(&ca_without_buffer, batch);
    torch_set_grad_enabled(true);
    print(context_vecs);
    KEEP(context_vecs);

    // class CausalAttentionWithBuffer(nn.Module): the mask a registered buffer
    BufIn(9, "import torch");

    BufIn(10, "ca_with_buffer = CausalAttentionWithBuffer(d_in, d_out, context_length, 0.0)");
    CausalAttention ca_with_buffer =  // self.register_buffer("mask", torch.triu(...))
        causal_attention_holding("ca_with_buffer", d_in, d_out, context_length, 0.0, false, MASK_BUFFER);
    print_note("# on cuda: W_query.device: cuda:0, mask.device: cuda:0 (the buffer moved with the module)");
    print("W_query.device:", device_of(ca_with_buffer.W_query.weight));
    print("mask.device:", device_of(ca_with_buffer.mask));

    BufIn(11, "with torch.no_grad():");
    print_note("# on cuda the tensor printed with device='cuda:0'");
    torch_set_grad_enabled(false);  // with torch.no_grad():
    context_vecs = causal_attention_forward(&ca_with_buffer, batch);
    torch_set_grad_enabled(true);
    print(context_vecs);
    KEEP(context_vecs);

    // The cell's value, as IPython displays an OrderedDict (lib/runtime/pretty.c).
    BufIn(12, "ca_without_buffer.state_dict()");
    print_note("# on cuda each tensor printed with device='cuda:0'");
    StateDict without_buffer_state = causal_attention_state_dict(&ca_without_buffer);
    display_state_dict(&without_buffer_state);  // no "mask": a plain attribute is not in it

    BufIn(13, "ca_with_buffer.state_dict()");
    print_note("# on cuda each tensor printed with device='cuda:0'");
    StateDict with_buffer_state = causal_attention_state_dict(&ca_with_buffer);
    display_state_dict(&with_buffer_state);  // "mask" first: the module's own buffer, then its submodules'

    BufIn(14, "ca_with_buffer.mask[ca_with_buffer.mask == 1.] = 2.");
    print_note("# on cuda the tensor printed with device='cuda:0'");
    torch_masked_fill_(&ca_with_buffer.mask, torch_eq_scalar(ca_with_buffer.mask, 1.0), 2.0f);
    print(ca_with_buffer.mask);
    keep("ca_with_buffer.mask", ca_with_buffer.mask);

    // torch.save(state_dict, "model.pth") then torch.load("model.pth"): a
    // real file, written and read as torch does (lib/runtime/checkpoint.h),
    // in a temporary directory of its own rather than the working directory.
    BufIn(15, "torch.save(ca_with_buffer.state_dict(), \"model.pth\")");
    StateDict state = causal_attention_state_dict(&ca_with_buffer);
    torch_save(&state, "model.pth");
    CausalAttention new_ca_with_buffer =
        causal_attention_holding("new_ca_with_buffer", d_in, d_out, context_length, 0.0, false, MASK_BUFFER);
    StateDict loaded = torch_load("model.pth");
    causal_attention_load_state_dict(&new_ca_with_buffer, &loaded, "CausalAttentionWithBuffer");
    print(new_ca_with_buffer.mask);  // the 2s came back with the state_dict
    keep("new_ca_with_buffer.mask", new_ca_with_buffer.mask);

    BufIn(16, "ca_without_buffer.mask[ca_without_buffer.mask == 1.] = 2.");
    torch_masked_fill_(&ca_without_buffer.mask, torch_eq_scalar(ca_without_buffer.mask, 1.0), 2.0f);
    keep("ca_without_buffer.mask", ca_without_buffer.mask);
    state = causal_attention_state_dict(&ca_without_buffer);
    torch_save(&state, "model.pth");  // torch.save(ca_without_buffer.state_dict(), "model.pth")
    CausalAttention new_ca_without_buffer =
        causal_attention_holding("new_ca_without_buffer", d_in, d_out, context_length, 0.0, false, MASK_ATTRIBUTE);
    loaded = torch_load("model.pth");
    causal_attention_load_state_dict(&new_ca_without_buffer, &loaded, "CausalAttentionWithoutBuffers");
    print(new_ca_without_buffer.mask);  // its own fresh mask: the 2s were never in the state_dict
    keep("new_ca_without_buffer.mask", new_ca_without_buffer.mask);

    return chapter_end();
}
