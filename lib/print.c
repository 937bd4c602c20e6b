// print.c: PyTorch's tensor repr, rebuilt from torch/_tensor_str.py (1.13).
//
// torch prints in three steps, and so does this file:
//   1. choose one number format for the whole tensor (_Formatter) from the
//      finite, non-zero values that will be shown;
//   2. spell every shown value in that format, right-aligned to one width;
//   3. lay the values out: ", " between them, a 1-d row wraps after as many
//      as fit in 80 columns, 2-d rows go one per line under the first '['.
// Tensors of more than 1000 elements are summarised: each long axis shows
// its first 3 and last 3 entries around a "..." gap, and the format of step 1
// is chosen from those shown values only.
#include "print.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

// torch's default PRINT_OPTS.
enum { PRECISION = 4, THRESHOLD = 1000, EDGEITEMS = 3, LINEWIDTH = 80 };
// len("tensor("): the column of the outermost '['; nested rows sit one further in.
enum { INDENT = 7 };
// Longest spelling of a float32: "%.4f" of -FLT_MAX is 46 characters.
enum { NUM_LEN = 64 };

// ---------------------------------------------------------------------------
// A growable string: the repr of a 1000-element tensor is ~10 kB, of a
// summarised one a few hundred bytes; no fixed buffer is ever written past.

typedef struct {
    char *s;
    size_t len, cap;  // cap counts the terminating NUL
} Buf;

static void buf_reserve(Buf *b, size_t extra) {
    if (extra > SIZE_MAX - b->len - 1) die(EXIT_BAD_INPUT, "tensor repr too long");
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 128;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
    char *s = realloc(b->s, cap);
    if (!s) die(EXIT_BAD_INPUT, "out of memory printing a tensor (%zu bytes)", cap);
    b->s = s;
    b->cap = cap;
}

static void buf_put(Buf *b, const char *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void buf_str(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_spaces(Buf *b, int n) {
    if (n <= 0) return;
    buf_reserve(b, (size_t)n);
    memset(b->s + b->len, ' ', (size_t)n);
    b->len += (size_t)n;
    b->s[b->len] = '\0';
}

static void buf_int(Buf *b, int v) {
    char s[16];
    int n = snprintf(s, sizeof s, "%d", v);
    buf_put(b, s, (size_t)n);
}

// ---------------------------------------------------------------------------
// Step 1 and 2: the formatter.

typedef enum {
    FMT_INT,    // "%.0f" plus '.': every shown value is integral ("1.", "-3.")
    FMT_FIXED,  // "%.4f"
    FMT_SCI,    // "%.4e"
} Mode;

typedef struct {
    Mode mode;
    int max_width;  // widest spelling of a finite non-zero shown value; at least 1
} Formatter;

// One value as Python's format() spells it, unpadded; returns its length.
// Python formats the float32 widened to double, and both Python and glibc
// round that exact binary value correctly (ties to even), so the digits
// agree; only non-finite values need care: glibc may write "-nan", Python
// always writes "nan". Non-finite values never get the int-mode '.'.
static int spell(char out[NUM_LEN], Mode mode, float x) {
    double v = (double)x;
    int n;
    if (isnan(v)) n = snprintf(out, NUM_LEN, "nan");
    else if (isinf(v)) n = snprintf(out, NUM_LEN, "%s", v > 0 ? "inf" : "-inf");
    else if (mode == FMT_SCI) n = snprintf(out, NUM_LEN, "%.*e", PRECISION, v);
    else if (mode == FMT_FIXED) n = snprintf(out, NUM_LEN, "%.*f", PRECISION, v);
    else n = snprintf(out, NUM_LEN, "%.0f.", v);
    if (n < 0 || n >= NUM_LEN) die(EXIT_BAD_INPUT, "cannot format %a for printing", v);
    return n;
}

// Whether an axis of n entries is summarised: torch cuts only axes longer
// than both edges, and only in a tensor of more than THRESHOLD elements.
static int axis_cut(int n, int summarize) { return summarize && n > 2 * EDGEITEMS; }

// The shown index after i: on a cut axis the first EDGEITEMS jump to the last EDGEITEMS.
static int next_index(int i, int n, int cut) {
    return (cut && i == EDGEITEMS - 1) ? n - EDGEITEMS : i + 1;
}

// _Formatter: x is (rows, cols); only shown values count (get_summarized_data),
// and of those only the finite non-zero ones. The sci-mode tests are made in
// double, as torch converts min and max to float64 before dividing.
static Formatter formatter_for(const float *x, int rows, int cols, int summarize) {
    int rcut = axis_cut(rows, summarize), ccut = axis_cut(cols, summarize);
    int any = 0, integral = 1;
    double lo = INFINITY, hi = 0.0;
    for (int r = 0; r < rows; r = next_index(r, rows, rcut)) {
        for (int c = 0; c < cols; c = next_index(c, cols, ccut)) {
            float v = x[(size_t)r * (size_t)cols + (size_t)c];
            if (!isfinite(v) || v == 0.0f) continue;
            double a = fabs((double)v);
            any = 1;
            if (a < lo) lo = a;
            if (a > hi) hi = a;
            if (v != ceilf(v)) integral = 0;
        }
    }
    Formatter f = {FMT_INT, 1};
    if (!any) return f;  // only zeros, nan and inf: int mode, width 1
    int wide = hi / lo > 1000.0 || hi > 1.0e8;
    if (integral) f.mode = wide ? FMT_SCI : FMT_INT;  // integers never switch for being small
    else f.mode = (wide || lo < 1.0e-4) ? FMT_SCI : FMT_FIXED;
    char s[NUM_LEN];
    for (int r = 0; r < rows; r = next_index(r, rows, rcut)) {
        for (int c = 0; c < cols; c = next_index(c, cols, ccut)) {
            float v = x[(size_t)r * (size_t)cols + (size_t)c];
            if (!isfinite(v) || v == 0.0f) continue;
            int n = spell(s, f.mode, v);
            if (n > f.max_width) f.max_width = n;
        }
    }
    return f;
}

// A value right-aligned to the common width. Zeros, -0. and nan/inf did not
// count towards that width, so they may be wider: torch then adds no padding.
static void put_value(Buf *b, const Formatter *f, float x) {
    char s[NUM_LEN];
    int n = spell(s, f->mode, x);
    buf_spaces(b, f->max_width - n);
    buf_put(b, s, (size_t)n);
}

// ---------------------------------------------------------------------------
// Step 3: layout.

// The separator before the item-th shown item of a row (the gap counts as one):
// a line holds per_line items, continuation lines start under the first value.
static void put_separator(Buf *b, int item, int per_line, int indent) {
    if (item == 0) return;
    if (item % per_line == 0) {
        buf_str(b, ",\n");
        buf_spaces(b, indent + 1);
    } else {
        buf_str(b, ", ");
    }
}

// _vector_str: x is (n,), printed with its '[' at column `indent`.
static void put_vector(Buf *b, const float *x, int n, int indent, int summarize, const Formatter *f) {
    // each item takes its width plus ", "; at least one item per line
    int per_line = (LINEWIDTH - indent) / (f->max_width + 2);
    if (per_line < 1) per_line = 1;
    int cut = axis_cut(n, summarize), item = 0;
    buf_str(b, "[");
    for (int i = 0; i < n; i = next_index(i, n, cut)) {
        put_separator(b, item++, per_line, indent);
        put_value(b, f, x[i]);
        if (cut && i == EDGEITEMS - 1) {
            put_separator(b, item++, per_line, indent);
            buf_str(b, " ...");
        }
    }
    buf_str(b, "]");
}

// 2-d: x is (rows, cols), each row a vector one column further in, rows
// joined by ",\n" and spaces; a cut shows "..." as a row of its own.
static void put_matrix(Buf *b, const float *x, int rows, int cols, int summarize, const Formatter *f) {
    int cut = axis_cut(rows, summarize);
    buf_str(b, "[");
    for (int r = 0; r < rows; r = next_index(r, rows, cut)) {
        if (r > 0) {
            buf_str(b, ",\n");
            buf_spaces(b, INDENT + 1);
        }
        put_vector(b, x + (size_t)r * (size_t)cols, cols, INDENT + 1, summarize, f);
        if (cut && r == EDGEITEMS - 1) {
            buf_str(b, ",\n");
            buf_spaces(b, INDENT + 1);
            buf_str(b, "...");
        }
    }
    buf_str(b, "]");
}

// A Tensor that breaks tensor.h's storage rule is a bug in the caller.
static void check_tensor(Tensor t) {
    int ok = t.rows >= 0 && t.cols >= 0 && (t.data || (long long)t.rows * t.cols == 0);
    if (t.ndim == 0) ok = ok && t.rows == 1 && t.cols == 1;
    else if (t.ndim == 1) ok = ok && t.rows == 1;
    else if (t.ndim != 2) ok = 0;
    if (!ok) die(EXIT_BAD_INPUT, "cannot print a tensor of rank %d stored as (%d, %d)", t.ndim, t.rows, t.cols);
}

char *tensor_repr(Tensor t) {
    check_tensor(t);
    Buf b = {0};
    long long numel = (long long)t.rows * t.cols;
    buf_str(&b, "tensor(");
    if (numel == 0) {
        // torch names the shape of an empty tensor unless it is (0,); the
        // suffix is short enough never to be moved to a line of its own.
        buf_str(&b, "[]");
        if (t.ndim != 1) {
            buf_str(&b, ", size=(");
            buf_int(&b, t.rows);
            buf_str(&b, ", ");
            buf_int(&b, t.cols);
            buf_str(&b, ")");
        }
    } else {
        int summarize = numel > THRESHOLD;
        Formatter f = formatter_for(t.data, t.rows, t.cols, summarize);
        if (t.ndim == 0) put_value(&b, &f, t.data[0]);
        else if (t.ndim == 1) put_vector(&b, t.data, t.cols, INDENT, summarize, &f);
        else put_matrix(&b, t.data, t.rows, t.cols, summarize, &f);
    }
    buf_str(&b, ")");
    return b.s;
}

char *tensor_size_str(Tensor t) {
    check_tensor(t);
    Buf b = {0};
    buf_str(&b, "torch.Size([");
    if (t.ndim == 1) {
        buf_int(&b, t.cols);
    } else if (t.ndim == 2) {
        buf_int(&b, t.rows);
        buf_str(&b, ", ");
        buf_int(&b, t.cols);
    }
    buf_str(&b, "])");
    return b.s;
}

void print_tensor(FILE *f, Tensor t) {
    char *s = tensor_repr(t);
    fputs(s, f);
    free(s);
}

void print_parameter(FILE *f, Tensor t) {
    fputs("Parameter containing:\n", f);
    print_tensor(f, t);
}

void print_size(FILE *f, Tensor t) {
    char *s = tensor_size_str(t);
    fputs(s, f);
    free(s);
}
