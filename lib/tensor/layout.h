// layout.h: the layout copies (no arithmetic): transpose, the heads split
// and merged, the gradients of cat and stack. The scalar reference
// (layout.c) and the fast versions (layout_fast.c: 8 x 8 register
// transposes of layout_simd.c, threads for big copies), the same floats.
#ifndef LITATTN_LAYOUT_H
#define LITATTN_LAYOUT_H

// --- reference ---
// a (M, N) -> out (N, M); transpose's gradient is the transpose back
void layout_transpose(float *out, const float *a, int M, int N);
// dout (rows, total) -> dpart (rows, width): torch.cat(dim=-1)'s gradient for the
// input at columns offset .. offset + width - 1
void layout_cat_lastdim_backward(float *dpart, const float *dout, long rows, int total, int offset, int width);
// dout (n, m) of torch.stack(n inputs of m floats, dim=0) -> dpart (m,): input i's gradient
void layout_stack_backward(float *dpart, const float *dout, int i, long m);
// in (b, T, h * hd) -> out (b, h, T, hd): view(b, T, h, hd).transpose(1, 2), contiguous
void layout_heads_split(float *out, const float *in, int b, int T, int h, int hd);
// in (b, h, T, hd) -> out (b, T, h * hd): transpose(1, 2).contiguous().view(b, T, h * hd)
void layout_heads_merge(float *out, const float *in, int b, int T, int h, int hd);
// (view's gradient is the same floats in the input's shape: no kernel)

// --- fast (layout_fast.c) ---
// out (N, M) = a (M, N) transposed: transpose()
void layout_fast_transpose(float *out, const float *a, int M, int N);
// out (B, H, T, D) = x (B, T, H, D) with axes 1 and 2 swapped (the heads split)
void layout_fast_split_heads(float *out, const float *x, int B, int T, int H, int D);
// out (B, T, H, D) = x (B, H, T, D) with axes 1 and 2 swapped (the heads merged)
void layout_fast_merge_heads(float *out, const float *x, int B, int H, int T, int D);

#endif
