// test_print.c: lib/tensor/tensor_repr.c against the text PyTorch 1.13 prints.
//
// usage: test_print fixtures/printer_cases.h5
//
// Every case of the fixture (written by tools/export/printer_cases.py from real
// torch) holds a float32 tensor and what torch printed for it: repr(t), or
// repr(nn.Parameter(t)) when its "kind" is "parameter", and str(t.shape).
// A case may also say what autograd would record (grad_fn, requires_grad),
// whose suffix torch adds. Each is compared byte for byte.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fixture.h"
#include "strbuf.h"
#include "tensor.h"
#include "tensor_repr.h"

// The longest repr in the fixture (1000 unsummarised values) is ~15 kB.
#define TEXT_LEN 65536

static int failures, checked;

// Compares one text with torch's; on a mismatch shows both and where they part.
static int same_text(const char *what, const char *want, const char *got) {
    if (strcmp(want, got) == 0) return 1;
    size_t i = 0, line = 1, col = 1;
    for (; want[i] && want[i] == got[i]; i++) {
        if (want[i] == '\n') line++, col = 1;
        else col++;
    }
    printf("  %s differs at byte %zu (line %zu, column %zu)\n", what, i, line, col);
    printf("  torch:\n%s\n  ours:\n%s\n", want, got);
    return 0;
}

// Reads a string attribute, refusing one that filled the buffer (it may be cut).
static int read_text(Fixture *fx, const char *name, char *buf, char *err) {
    if (!fixture_attr_string(fx, name, buf, TEXT_LEN, err)) return 0;
    if (strlen(buf) >= TEXT_LEN - 1) {
        snprintf(err, FIXTURE_ERR_LEN, "%s: attribute '%s': longer than %d bytes", fixture_path(fx),
                 name, TEXT_LEN - 2);
        return 0;
    }
    return 1;
}

// The case's tensor. fixture_read refuses 0-element datasets (no fixture
// input may be empty), so an empty case is built from its shape attributes
// (ndim, dim0 .. dim3; dims past ndim are absent or 0).
static int read_case_tensor(Fixture *fx, Tensor *t, char *err) {
    long long ndim;
    Size s = {0, {0}};
    if (!fixture_attr_int(fx, "ndim", &ndim, err)) return 0;
    if (ndim < 0 || ndim > TENSOR_MAX_DIMS) {
        snprintf(err, FIXTURE_ERR_LEN, "%s: attribute 'ndim': expected 0 to 4, found %lld", fixture_path(fx), ndim);
        return 0;
    }
    s.ndim = (int)ndim;
    for (int i = 0; i < s.ndim; i++) {
        char key[16];
        long long d;
        snprintf(key, sizeof key, "dim%d", i);
        if (!fixture_attr_int(fx, key, &d, err)) return 0;
        if (d < 0 || d > 1 << 20) {
            snprintf(err, FIXTURE_ERR_LEN, "%s: attribute '%s': expected a size, found %lld", fixture_path(fx), key, d);
            return 0;
        }
        s.dims[i] = (int)d;
    }
    if (size_numel(s) == 0) {
        *t = tensor_zeros(s);
        return 1;
    }
    return fixture_read(fx, "tensor", s, t, err);
}

static void check_case(Fixture *all, const char *name) {
    char err[FIXTURE_ERR_LEN];
    char *want_repr = malloc(TEXT_LEN), *want_size = malloc(TEXT_LEN), *kind = malloc(TEXT_LEN);
    char grad_fn[64] = "";
    if (!want_repr || !want_size || !kind) die(EXIT_BAD_INPUT, "out of memory");
    Tensor t;
    int ok = 0;
    checked++;
    Fixture *fx = fixture_group(all, name, err);
    if (fx && read_text(fx, "repr", want_repr, err) && read_text(fx, "size", want_size, err) &&
        read_text(fx, "kind", kind, err) && read_case_tensor(fx, &t, err) &&
        (!fixture_has_attr(fx, "grad_fn") || fixture_attr_string(fx, "grad_fn", grad_fn, sizeof grad_fn, err))) {
        long long requires_grad = 0;
        if (fixture_has_attr(fx, "requires_grad")) fixture_attr_int(fx, "requires_grad", &requires_grad, err);
        t.grad_fn = *grad_fn ? grad_fn : NULL;
        t.requires_grad = requires_grad != 0;
        StrBuf repr = {0}, size = {0};
        if (!strcmp(kind, "parameter")) parameter_repr_to(&repr, t);
        else tensor_repr_to(&repr, t);
        size_repr_to(&size, shape(t));
        ok = same_text(kind, want_repr, sb_str(&repr));
        ok = same_text("torch.Size", want_size, sb_str(&size)) && ok;
        sb_free(&repr);
        sb_free(&size);
    } else {
        printf("  %s\n", err);
    }
    fixture_close(fx);
    printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    if (!ok) failures++;
    free(want_repr);
    free(want_size);
    free(kind);
}

int main(int argc, char **argv) {
    error_set_program(argv[0]);
    if (argc != 2) die(EXIT_USAGE, "usage: %s printer_cases.h5", argv[0]);
    char err[FIXTURE_ERR_LEN];
    // One reading of the file (one snapshot child), every case answered from it.
    Fixture *root = fixture_open_all(argv[1], err);
    if (!root) die(EXIT_BAD_INPUT, "%s", err);
    char *cases = malloc(TEXT_LEN);
    if (!cases) die(EXIT_BAD_INPUT, "out of memory");
    if (!read_text(root, "cases", cases, err)) die(EXIT_BAD_INPUT, "%s", err);

    // "cases" lists the groups, one name a line.
    for (char *name = strtok(cases, "\n"); name; name = strtok(NULL, "\n")) check_case(root, name);
    fixture_close(root);
    free(cases);
    tensor_release_all();

    printf("%d cases, %d failed\n", checked, failures);
    if (checked == 0) {
        printf("FAIL no cases in %s\n", argv[1]);
        return 1;
    }
    return failures ? 1 : 0;
}
