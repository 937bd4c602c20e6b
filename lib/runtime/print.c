// print.c: Python's print() and str() of the values a chapter prints.
#include "print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "strbuf.h"
#include "tensor_repr.h"

PyValue py_str(const char *s) { return (PyValue){.kind = PY_STR, .as.str = s}; }
PyValue py_tensor(Tensor t) { return (PyValue){.kind = PY_TENSOR, .as.tensor = t}; }
PyValue param(Tensor t) { return (PyValue){.kind = PY_PARAM, .as.tensor = t}; }
PyValue py_size(Size s) { return (PyValue){.kind = PY_SIZE, .as.size = s}; }
PyValue py_int(int v) { return (PyValue){.kind = PY_INT, .as.integer = v}; }
PyValue py_long(long v) { return (PyValue){.kind = PY_INT, .as.integer = v}; }
PyValue py_llong(long long v) { return (PyValue){.kind = PY_INT, .as.integer = v}; }
PyValue py_float(double v) { return (PyValue){.kind = PY_FLOAT, .as.real = v}; }
PyValue py_bool(bool v) { return (PyValue){.kind = PY_BOOL, .as.boolean = v}; }
PyValue py_value(PyValue v) { return v; }
PyValue fixed(double v, int digits) { return (PyValue){.kind = PY_FIXED, .as.fixed = {v, digits}}; }

double as_printed(float x) {
    char text[64];
    snprintf(text, sizeof text, "%.4f", (double)x);
    return strtod(text, NULL);
}

PyValue py_tuple(const PyValue *items, int n) {
    return (PyValue){.kind = PY_TUPLE, .as.tuple = {items, n}};
}

// Python's repr(float) (float_repr_style 'short'): the shortest digits that
// read back as the same double, in fixed notation for exponents -4 to 15
// ("98.0", "0.0001", "4.692901219967951") and in scientific notation
// otherwise ("1e+16", "1.5e-05"); inf and nan as Python spells them.
static void float_repr(StrBuf *b, double x) {
    if (isnan(x)) {
        sb_puts(b, "nan");
        return;
    }
    if (isinf(x)) {
        sb_puts(b, x > 0 ? "inf" : "-inf");
        return;
    }
    char sci[40];
    for (int prec = 0; prec <= 16; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, x);
        if (strtod(sci, NULL) == x) break;
    }
    // sci is "-d.ddde+XX": split into sign, digits and exponent.
    char *e = strchr(sci, 'e');
    int exp10 = atoi(e + 1);
    *e = '\0';
    const char *m = sci;
    if (*m == '-') sb_putc(b, '-'), m++;
    char digits[24];
    size_t nd = 0;
    for (; *m && nd + 1 < sizeof digits; m++)
        if (*m != '.') digits[nd++] = *m;
    while (nd > 1 && digits[nd - 1] == '0') nd--;  // shortest: no trailing zeros
    digits[nd] = '\0';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            sb_puts(b, "0.");
            for (int i = -1; i > exp10; i--) sb_putc(b, '0');
            sb_puts(b, digits);
        } else {
            for (int i = 0; i <= exp10; i++) sb_putc(b, (size_t)i < nd ? digits[i] : '0');
            sb_putc(b, '.');
            sb_puts(b, (size_t)exp10 + 1 < nd ? digits + exp10 + 1 : "0");
        }
    } else {
        sb_putc(b, digits[0]);
        if (nd > 1) sb_printf(b, ".%s", digits + 1);
        sb_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
}

static void str_of(StrBuf *b, PyValue v) {
    switch (v.kind) {
    case PY_STR: sb_puts(b, v.as.str); break;
    case PY_TENSOR: tensor_repr_to(b, v.as.tensor); break;
    case PY_PARAM: parameter_repr_to(b, v.as.tensor); break;
    case PY_SIZE: size_repr_to(b, v.as.size); break;
    case PY_INT: sb_printf(b, "%lld", v.as.integer); break;
    case PY_FLOAT: float_repr(b, v.as.real); break;
    case PY_FIXED: sb_printf(b, "%.*f", v.as.fixed.digits, v.as.fixed.value); break;
    case PY_BOOL: sb_puts(b, v.as.boolean ? "True" : "False"); break;
    case PY_TUPLE:
        // A tuple's str() is the repr() of its items; for these values the same.
        sb_putc(b, '(');
        for (int i = 0; i < v.as.tuple.n; i++) {
            if (i) sb_puts(b, ", ");
            str_of(b, v.as.tuple.items[i]);
        }
        if (v.as.tuple.n == 1) sb_putc(b, ',');
        sb_putc(b, ')');
        break;
    }
}

static void print_line(const PyValue *args, int n) {
    StrBuf b = {0};
    for (int i = 0; i < n; i++) {
        if (i) sb_putc(&b, ' ');
        str_of(&b, args[i]);
    }
    sb_putc(&b, '\n');
    output_write(b.s, b.len);
    sb_free(&b);
}

void py_print(const Run *run, const PyValue *args, int n) {
    if (!output_is_quiet(run)) print_line(args, n);
}

void py_print_note(const PyValue *args, int n) { print_line(args, n); }

const char *device_of(Tensor t) {
    (void)t;
    return "cpu";
}
