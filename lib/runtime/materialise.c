// materialise.c: see materialise.h.
#include "materialise.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "print.h"

bool materialising_fits(const char *instance, Size largest) {
    long n = 1;
    for (int i = 0; i < largest.ndim; i++) n = n > TENSOR_MAX_NUMEL ? n : n * largest.dims[i];
    if (n <= TENSOR_MAX_NUMEL) return true;
    char s[96], note[384];
    size_format(largest, s, sizeof s);
    snprintf(note, sizeof note, "# %s skipped: its attention scores %s would hold %ld elements, more than the 2^26 "
             "a tensor may hold (lib/README.md, Limits); the fused attention below holds none", instance, s, n);
    print_note(note);
    return false;
}

MultiHeadAttentionWrapper materialising_wrapper(MultiHeadAttentionWrapper m) {
    for (int i = 0; i < m.num_heads; i++) m.heads[i].materialise = true;
    return m;
}

MultiHeadAttention materialising_mha(MultiHeadAttention m) {
    m.materialise = true;
    return m;
}

MultiHeadAttentionCombinedQKV materialising_combined_qkv(MultiHeadAttentionCombinedQKV m) {
    m.materialise = true;
    return m;
}

MHAEinsum materialising_einsum(MHAEinsum m) {
    m.materialise = true;
    return m;
}

MHAPyTorchClass materialising_pytorch_class(MHAPyTorchClass m) {
    m.materialise = true;
    return m;
}

Tensor multihead_attention_forward_fused(const MultiHeadAttention *m, Tensor x) {
    MultiHeadAttention fused = *m;
    fused.materialise = false;
    fused.rec = (Recorder){0};
    return multihead_attention_forward(&fused, x);
}

void print_same_bits(const char *a_name, Tensor a, const char *b_name, Tensor b) {
    char line[512];
    if (!size_equal(shape(a), shape(b))) {
        snprintf(line, sizeof line, "%s and %s: different shapes", a_name, b_name);
    } else {
        long n = numel(a), at = -1;
        for (long i = 0; i < n && at < 0; i++)
            if (memcmp(&a.data[i], &b.data[i], sizeof(float)) != 0) at = i;
        if (at < 0)
            snprintf(line, sizeof line, "%s and %s: the same float32 bits, all %ld values", a_name, b_name, n);
        else
            snprintf(line, sizeof line, "%s and %s: NOT the same bits, the first difference at flat index %ld "
                     "(%.9g and %.9g)", a_name, b_name, at, (double)a.data[at], (double)b.data[at]);
    }
    print(line);
}

void check_input_size(const char *name, Size s, const char *options) {
    long n = 1;
    for (int i = 0; i < s.ndim; i++) n = n > TENSOR_MAX_NUMEL ? n : n * s.dims[i];
    if (n <= TENSOR_MAX_NUMEL) return;
    char shape_s[96];
    size_format(s, shape_s, sizeof shape_s);
    die(EXIT_USAGE, "%s: %s of shape %s would hold %ld elements or more, more than the 2^26 = %ld a tensor may "
        "hold (lib/README.md, Limits)", options, name, shape_s, n, TENSOR_MAX_NUMEL);
}
