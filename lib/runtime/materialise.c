// materialise.c: see materialise.h.
#include "materialise.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "print.h"

bool materialising_fits(const char *instance, Size largest) {
    long n = 1;
    for (int i = 0; i < largest.ndim; i++) n = n > TENSOR_MAX_NUMEL ? n : n * largest.dims[i];
    if (n <= TENSOR_MAX_NUMEL) return true;
    char s[96], note[384];
    size_format(largest, s, sizeof s);
    snprintf(note, sizeof note, "# %s skipped: its attention scores %s would hold %ld elements, more than the 2^26 "
             "a tensor may hold (lib/README.md, Limits); the fused attention of section 5 holds none", instance, s, n);
    print_note(note);
    return false;
}

Tensor multihead_attention_forward_fused(MultiHeadAttention *m, Tensor x) {
    return multihead_attention_forward_as(m, x, (ComputeMode){.attention = ATTENTION_FUSED});
}

void print_same_bits(const Run *run, const char *a_name, Tensor a, const char *b_name, Tensor b) {
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
    run_print(run, line);
}

void check_input_size(const Run *run, const char *name, int width, int book_batch_size, int book_context_len,
                      int book_embed_dim) {
    const long b = setting_int_silent(run, "batch_size", book_batch_size);
    const long T = setting_int_silent(run, "context_len", book_context_len);
    const long d = (long)width * setting_int_silent(run, "embed_dim", book_embed_dim);
    const double n = (double)b * (double)T * (double)d;  // each at most 2^24 (settings.c), width a few: exact
    if (n <= (double)TENSOR_MAX_NUMEL) return;
    die(EXIT_USAGE, "--batch-size %ld --context-len %ld: %s (%ld, %ld, %ld) would hold %.0f elements, more than the "
        "2^26 = %ld a tensor may hold (lib/README.md, Limits): at %ld features, batch_size * context_len is at most %ld",
        b, T, name, b, T, d, n, TENSOR_MAX_NUMEL, d, TENSOR_MAX_NUMEL / d);
}
