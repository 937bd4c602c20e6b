// tensor_repr.c: PyTorch's repr() of a tensor, rebuilt from torch/_tensor_str.py
// (1.13) for tensors of rank 0 to 4.
//
// torch prints in three steps, and so does this file:
//   1. choose one number format for the whole tensor (_Formatter) from the
//      finite, non-zero values that will be shown;
//   2. spell every shown value in that format, right-aligned to one width;
//   3. lay the values out (_tensor_str_with_formatter): ", " between values,
//      a 1-d row wraps after as many as fit in 80 columns, and the slices of
//      an N-d tensor are joined by "," plus (N-1) newlines plus the indent.
// Then come the suffixes (grad_fn=<...> or requires_grad=True), on the same
// line if they fit (_add_suffixes).
// Tensors of more than 1000 elements are summarised: each axis longer than 6
// shows its first 3 and last 3 entries around "...", and the format of step 1
// is chosen from the shown values only.
#include "tensor_repr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

// torch's default PRINT_OPTS.
enum { PRECISION = 4, THRESHOLD = 1000, EDGEITEMS = 3, LINEWIDTH = 80 };
// Longest spelling of a float32: "%.4f" of -FLT_MAX is 46 characters.
enum { NUM_LEN = 64 };

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
    if (n < 0 || n >= NUM_LEN) die_internal("cannot format %a for printing", v);
    return n;
}

// --- which values are shown ------------------------------------------------------

// Whether an axis of n entries is summarised: torch cuts only axes longer
// than both edges, and only in a tensor of more than THRESHOLD elements.
static bool axis_cut(int n, bool summarize) { return summarize && n > 2 * EDGEITEMS; }

// The shown index after i: on a cut axis the first EDGEITEMS jump to the last EDGEITEMS.
static int next_index(int i, int n, bool cut) { return (cut && i == EDGEITEMS - 1) ? n - EDGEITEMS : i + 1; }

// Calls fn(value, ctx) for every shown value, in memory order (get_summarized_data).
static void each_shown(Tensor t, bool summarize, void (*fn)(float, void *), void *ctx) {
    if (t.ndim == 0) {
        fn(t.data[0], ctx);
        return;
    }
    const int n = t.shape[0];
    const bool cut = axis_cut(n, summarize);
    for (int i = 0; i < n; i = next_index(i, n, cut)) each_shown(sel(t, i), summarize, fn, ctx);
}

// --- step 1: the formatter ---------------------------------------------------------

typedef struct {
    bool any, integral;
    double lo, hi;  // smallest and largest |value| among finite non-zero shown values
    Mode mode;
    int width;
} Survey;

static void survey_value(float v, void *p) {
    Survey *s = p;
    if (!isfinite(v) || v == 0.0f) return;
    double a = fabs((double)v);
    s->any = true;
    if (a < s->lo) s->lo = a;
    if (a > s->hi) s->hi = a;
    if (v != ceilf(v)) s->integral = false;
}

static void width_of_value(float v, void *p) {
    Survey *s = p;
    if (!isfinite(v) || v == 0.0f) return;
    char text[NUM_LEN];
    int n = spell(text, s->mode, v);
    if (n > s->width) s->width = n;
}

// _Formatter: the sci-mode tests are made in double, as torch converts min
// and max to float64 before dividing.
static Formatter formatter_for(Tensor t, bool summarize) {
    Survey s = {false, true, INFINITY, 0.0, FMT_INT, 1};
    each_shown(t, summarize, survey_value, &s);
    Formatter f = {FMT_INT, 1};
    if (!s.any) return f;  // only zeros, nan and inf: int mode, width 1
    bool wide = s.hi / s.lo > 1000.0 || s.hi > 1.0e8;
    if (s.integral) f.mode = wide ? FMT_SCI : FMT_INT;  // integers never switch for being small
    else f.mode = (wide || s.lo < 1.0e-4) ? FMT_SCI : FMT_FIXED;
    s.mode = f.mode;
    each_shown(t, summarize, width_of_value, &s);
    f.max_width = s.width;
    return f;
}

// --- step 2 and 3: values and layout -------------------------------------------------

// A value right-aligned to the common width. Zeros, -0. and nan/inf did not
// count towards that width, so they may be wider: torch then adds no padding.
static void put_value(StrBuf *b, const Formatter *f, float x) {
    char s[NUM_LEN];
    int n = spell(s, f->mode, x);
    sb_spaces(b, f->max_width - n);
    sb_put(b, s, (size_t)n);
}

// _vector_str: t is (n,), its '[' at column `indent`; each item takes its
// width plus ", ", and a line holds as many items as fit in the line width
// (at least one); continuation lines start under the first value.
static void put_vector(StrBuf *b, Tensor t, int indent, bool summarize, const Formatter *f) {
    int per_line = (LINEWIDTH - indent) / (f->max_width + 2);
    if (per_line < 1) per_line = 1;
    const int n = t.shape[0];
    const bool cut = axis_cut(n, summarize);
    int item = 0;
    sb_putc(b, '[');
    for (int i = 0; i < n; i = next_index(i, n, cut)) {
        for (int k = 0; k < 1 + (cut && i == EDGEITEMS - 1); k++) {  // the value, then " ..." after the head
            if (item > 0 && item % per_line == 0) {
                sb_puts(b, ",\n");
                sb_spaces(b, indent + 1);
            } else if (item > 0) {
                sb_puts(b, ", ");
            }
            if (k == 0) put_value(b, f, t.data[i]);
            else sb_puts(b, " ...");
            item++;
        }
    }
    sb_putc(b, ']');
}

// _tensor_str_with_formatter: slices of a rank-d tensor joined by "," plus
// (d - 1) newlines plus indent + 1 spaces; a cut axis shows "..." as a slice.
static void put_slices(StrBuf *b, Tensor t, int indent, bool summarize, const Formatter *f) {
    if (t.ndim == 0) {
        put_value(b, f, t.data[0]);
        return;
    }
    if (t.ndim == 1) {
        put_vector(b, t, indent, summarize, f);
        return;
    }
    const int n = t.shape[0];
    const bool cut = axis_cut(n, summarize);
    sb_putc(b, '[');
    for (int i = 0; i < n; i = next_index(i, n, cut)) {
        if (i > 0) {
            sb_putc(b, ',');
            for (int k = 0; k < t.ndim - 1; k++) sb_putc(b, '\n');
            sb_spaces(b, indent + 1);
        }
        put_slices(b, sel(t, i), indent + 1, summarize, f);
        if (cut && i == EDGEITEMS - 1) {
            sb_putc(b, ',');
            for (int k = 0; k < t.ndim - 1; k++) sb_putc(b, '\n');
            sb_spaces(b, indent + 1);
            sb_puts(b, "...");
        }
    }
    sb_putc(b, ']');
}

// _add_suffixes: a suffix goes on the same line after ", " unless that line
// would pass the line width, judged with torch's quirk of counting the last
// line as its real length plus 2; then it gets a line of its own.
static void put_suffix(StrBuf *b, const char *suffix, int indent) {
    size_t nl = b->len;
    while (nl > 0 && b->s[nl - 1] != '\n') nl--;
    // len(s) - s.rfind('\n') + 1: the characters after the newline plus 2
    size_t last_line_len = b->len - nl + 2;
    if (last_line_len + strlen(suffix) + 2 > LINEWIDTH) {
        sb_puts(b, ",\n");
        sb_spaces(b, indent);
    } else {
        sb_puts(b, ", ");
    }
    sb_puts(b, suffix);
}

void tensor_repr_to(StrBuf *b, Tensor t) {
    if (t.ndim < 0 || t.ndim > TENSOR_MAX_DIMS || (numel(t) > 0 && !t.data))
        die_internal("cannot print a tensor of rank %d", t.ndim);
    const size_t start = b->len;
    enum { INDENT = 7 };  // len("tensor("): the column of the outermost '['
    sb_puts(b, "tensor(");
    StrBuf suffixes[2] = {{0}};
    int n_suffixes = 0;
    if (numel(t) == 0) {
        // torch names the shape of an empty tensor unless it is (0,).
        sb_puts(b, "[]");
        if (t.ndim != 1) {
            char s[96];
            size_format(shape(t), s, sizeof s);
            sb_printf(&suffixes[n_suffixes++], "size=%s", s);
        }
    } else {
        const bool summarize = numel(t) > THRESHOLD;
        const Formatter f = formatter_for(t, summarize);
        put_slices(b, t, INDENT, summarize, &f);
    }
    if (t.grad_fn) sb_printf(&suffixes[n_suffixes++], "grad_fn=<%s>", t.grad_fn);
    else if (t.requires_grad) sb_puts(&suffixes[n_suffixes++], "requires_grad=True");
    // The suffix test looks at this tensor's own text only.
    StrBuf own = {0};
    sb_put(&own, b->s + start, b->len - start);
    for (int i = 0; i < n_suffixes; i++) {
        size_t before = own.len;
        put_suffix(&own, sb_str(&suffixes[i]), INDENT);
        sb_put(b, own.s + before, own.len - before);
        sb_free(&suffixes[i]);
    }
    sb_free(&own);
    sb_putc(b, ')');
}

char *tensor_repr(Tensor t) {
    StrBuf b = {0};
    tensor_repr_to(&b, t);
    return sb_take(&b);
}

void parameter_repr_to(StrBuf *b, Tensor t) {
    sb_puts(b, "Parameter containing:\n");
    tensor_repr_to(b, t);
}

void size_repr_to(StrBuf *b, Size s) {
    sb_puts(b, "torch.Size([");
    for (int i = 0; i < s.ndim; i++) sb_printf(b, "%s%d", i ? ", " : "", s.dims[i]);
    sb_puts(b, "])");
}
