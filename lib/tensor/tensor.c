// tensor.c: making tensors, their shapes, views, and the pool that frees them.
#include "tensor.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "pages.h"

// --- the pool -------------------------------------------------------------------
// Small tensors (a scalar, a row of a few floats: the element-by-element
// loops of §3.3 make one per step) are cut from 64 KiB slabs, so a 1024 x
// 1024 loop of dot products costs 4 MiB, as much as the scores it fills.
// Large tensors get a block of their own (pages.h: aligned for vector loads,
// on huge pages from 2 MiB up: a 12 x 1024 x 1024 tensor of scores would
// otherwise take 12288 page faults), which tensor_free() can give back
// early; a freed one is kept for the next tensor that fits it.

enum { SMALL_BYTES = 256, SLAB_BYTES = 64 * 1024 };

typedef struct Slab {
    struct Slab *next;
    size_t used;
    _Alignas(16) unsigned char bytes[SLAB_BYTES];
} Slab;

static Slab *slabs;          // newest first
static size_t n_blocks, cap_blocks;

static float *small_alloc(size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    if (!slabs || slabs->used + bytes > SLAB_BYTES) {
        Slab *s = xcalloc(1, sizeof *s, "a slab of small tensors");
        s->next = slabs;
        slabs = s;
    }
    float *p = (float *)(void *)(slabs->bytes + slabs->used);
    slabs->used += bytes;
    return p;  // slabs are zeroed by calloc and never reused
}

enum { SPARE_BLOCKS = 8 };

typedef struct {
    float *p;
    size_t bytes;  // its capacity
} Block;

static Block *blocks;               // the large blocks handed out and not yet freed
static Block spare[SPARE_BLOCKS];  // freed large blocks, kept for reuse
static int n_spare;

static void track(float *p, size_t bytes) {
    if (n_blocks == cap_blocks) {
        size_t cap = cap_blocks ? 2 * cap_blocks : 64;
        Block *grown = xrealloc(blocks, cap * sizeof *grown, "the list of large tensors");
        blocks = grown;
        cap_blocks = cap;
    }
    blocks[n_blocks++] = (Block){p, bytes};
}

static float *block_alloc(size_t bytes, bool zero) {
    size_t rounded = pages_rounded(bytes);
    // A spare block that fits, and is not more than twice the size.
    for (int i = 0; i < n_spare; i++) {
        if (spare[i].bytes < rounded || spare[i].bytes > 2 * rounded) continue;
        Block b = spare[i];
        spare[i] = spare[--n_spare];
        if (zero) memset(b.p, 0, bytes);
        track(b.p, b.bytes);
        return b.p;
    }
    float *p = pages_alloc(bytes, "a tensor");
    if (zero) memset(p, 0, rounded);
    track(p, rounded);
    return p;
}

// The elements of shape s, refused (one line) past TENSOR_MAX_NUMEL.
static long checked_numel(Size s) {
    if (s.ndim < 0 || s.ndim > TENSOR_MAX_DIMS) die(EXIT_BAD_INPUT, "a tensor of rank %d (at most %d)", s.ndim, TENSOR_MAX_DIMS);
    long n = 1;
    for (int i = 0; i < s.ndim; i++) {
        if (s.dims[i] < 0) die(EXIT_BAD_INPUT, "a tensor with a negative size");
        if (s.dims[i] > 0 && n > TENSOR_MAX_NUMEL / s.dims[i]) n = TENSOR_MAX_NUMEL + 1;
        else n *= s.dims[i];
    }
    if (n > TENSOR_MAX_NUMEL) {
        char shape_s[96];
        size_format(s, shape_s, sizeof shape_s);
        die(EXIT_BAD_INPUT, "%s: expected inputs that make tensors of at most 2^26 elements, found ones that make "
            "a tensor of shape %s", error_input(), shape_s);
    }
    return n;
}

LongTensor long_tensor_empty(Size s) {
    long n = checked_numel(s);
    LongTensor t = {0};
    t.ndim = s.ndim;
    memcpy(t.shape, s.dims, sizeof t.shape);
    size_t bytes = (size_t)n * sizeof(int64_t);
    t.data = (int64_t *)(void *)(bytes <= SMALL_BYTES ? small_alloc(bytes ? bytes : sizeof(int64_t))
                                                      : block_alloc(bytes, false));
    return t;
}

LongTensor torch_arange(int n) {
    LongTensor t = long_tensor_empty(SIZE(n));
    for (int i = 0; i < n; i++) t.data[i] = i;
    return t;
}

long long_numel(LongTensor t) { return size_numel(long_shape(t)); }

Size long_shape(LongTensor t) {
    Size s = {t.ndim, {0}};
    memcpy(s.dims, t.shape, sizeof s.dims);
    return s;
}

static Tensor make(Size s, bool zero) {
    long n = checked_numel(s);
    Tensor t = {0};
    t.ndim = s.ndim;
    memcpy(t.shape, s.dims, sizeof t.shape);
    size_t bytes = (size_t)n * sizeof(float);
    t.data = bytes <= SMALL_BYTES ? small_alloc(bytes ? bytes : sizeof(float)) : block_alloc(bytes, zero);
    return t;
}

Tensor tensor_zeros(Size s) { return make(s, true); }
Tensor tensor_empty(Size s) { return make(s, false); }

Tensor tensor_scalar(float value) {
    Tensor t = make(SIZE_SCALAR, true);
    t.data[0] = value;
    return t;
}

Tensor tensor_copy(Tensor t) {
    Tensor c = make(shape(t), false);
    memcpy(c.data, t.data, (size_t)numel(t) * sizeof(float));
    return c;
}

Tensor tensor_detach(Tensor t) {
    t.grad_fn = NULL;
    t.requires_grad = false;
    return t;
}

static bool grad_enabled = true;  // the process's, as torch's is its thread's

void torch_set_grad_enabled(bool enabled) { grad_enabled = enabled; }

bool torch_is_grad_enabled(void) { return grad_enabled; }

void tensor_free(Tensor t) {
    // Small tensors stay in their slab until the end; large ones are found by
    // their block (searched from the newest: temporaries die young).
    for (size_t i = n_blocks; i-- > 0;) {
        if (blocks[i].p != t.data) continue;
        Block b = blocks[i];
        blocks[i] = blocks[--n_blocks];
        if (n_spare < SPARE_BLOCKS) spare[n_spare++] = b;
        else free(b.p);
        return;
    }
}

void tensor_release_all(void) {
    for (size_t i = 0; i < n_blocks; i++) free(blocks[i].p);
    for (int i = 0; i < n_spare; i++) free(spare[i].p);
    n_spare = 0;
    free(blocks);
    blocks = NULL;
    n_blocks = cap_blocks = 0;
    while (slabs) {
        Slab *next = slabs->next;
        free(slabs);
        slabs = next;
    }
}

// --- shape ------------------------------------------------------------------------

long size_numel(Size s) {
    long n = 1;
    for (int i = 0; i < s.ndim; i++) n *= s.dims[i];
    return n;
}

long numel(Tensor t) { return size_numel(shape(t)); }

int dim(Tensor t, int d) {
    int k = d < 0 ? d + t.ndim : d;
    if (k < 0 || k >= t.ndim) die(EXIT_BAD_INPUT, "dimension %d of a tensor of rank %d", d, t.ndim);
    return t.shape[k];
}

Size shape(Tensor t) {
    Size s = {t.ndim, {0}};
    memcpy(s.dims, t.shape, sizeof s.dims);
    return s;
}

bool size_equal(Size a, Size b) {
    if (a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim; i++)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

bool size_matches(Size want, Size have) {
    if (want.ndim != have.ndim) return false;
    for (int i = 0; i < want.ndim; i++)
        if (want.dims[i] != SIZE_ANY && want.dims[i] != have.dims[i]) return false;
    return true;
}

void shape_format(int ndim, const long long *dims, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < ndim && n < len; i++) {
        if (dims[i] < 0) n += (size_t)snprintf(buf + n, len - n, "%s*", i ? ", " : "");
        else n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", dims[i]);
    }
    if (n < len) snprintf(buf + n, len - n, ndim == 1 ? ",)" : ")");
}

void size_format(Size s, char *buf, size_t len) {
    long long dims[TENSOR_MAX_DIMS];
    for (int i = 0; i < s.ndim; i++) dims[i] = s.dims[i];
    shape_format(s.ndim, dims, buf, len);
}

// --- views ------------------------------------------------------------------------

Tensor sel(Tensor t, int i) {
    if (t.ndim == 0) die_internal("indexing a 0-d tensor");
    int k = i < 0 ? i + t.shape[0] : i;
    if (k < 0 || k >= t.shape[0])
        die(EXIT_BAD_INPUT, "%s: expected inputs with an index %d on an axis, found %d entries there", error_input(),
            i, t.shape[0]);
    Tensor v = t;
    v.ndim = t.ndim - 1;
    memmove(v.shape, t.shape + 1, sizeof(int) * (size_t)v.ndim);
    v.shape[TENSOR_MAX_DIMS - 1] = 0;
    v.data = t.data + (size_t)k * (size_t)(numel(t) / t.shape[0]);
    // torch records the indexing (SelectBackward0) when t needs grad.
    if (grad_enabled && (t.requires_grad || t.grad_fn)) v.grad_fn = "SelectBackward0";
    v.requires_grad = false;
    return v;
}

Tensor sel2(Tensor t, int i, int j) { return sel(sel(t, i), j); }

Tensor view(Tensor t, Size s) {
    if (size_numel(s) != numel(t)) {
        char have[96], want[96];
        size_format(shape(t), have, sizeof have);
        size_format(s, want, sizeof want);
        die(EXIT_BAD_INPUT, "%s: view: expected a shape of as many elements as %s, found %s", error_input(), have, want);
    }
    Tensor v = t;
    v.ndim = s.ndim;
    memcpy(v.shape, s.dims, sizeof v.shape);
    if (grad_enabled && (t.requires_grad || t.grad_fn)) v.grad_fn = "ViewBackward0";
    v.requires_grad = false;
    return v;
}

float item(Tensor t) {
    if (numel(t) != 1) die(EXIT_BAD_INPUT, "item() of a tensor with %ld elements", numel(t));
    return t.data[0];
}

float *at(Tensor t, int n, const int *index) {
    if (n != t.ndim) die(EXIT_BAD_INPUT, "%d indices into a tensor of rank %d", n, t.ndim);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (index[i] < 0 || index[i] >= t.shape[i])
            die(EXIT_BAD_INPUT, "%s: expected inputs with an index %d on axis %d, found %d entries there",
                error_input(), index[i], i, t.shape[i]);
        off = off * (size_t)t.shape[i] + (size_t)index[i];
    }
    return t.data + off;
}
