// test_print.c: lib/print.c against the text PyTorch 1.13 prints.
//
// usage: test_print fixtures/printer_cases.h5
//
// Every case of the fixture (written by tools/printer_cases.py from real
// torch) holds a float32 tensor and what torch printed for it: repr(t), or
// repr(nn.Parameter(t)) when its "kind" is "parameter", and str(t.shape).
// Each is compared byte for byte with tensor_repr / print_tensor /
// print_parameter / tensor_size_str / print_size.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fixture.h"
#include "print.h"
#include "tensor.h"

// The longest repr in the fixture (1000 unsummarised values) is ~15 kB.
#define TEXT_LEN 65536

static int failures, checked;

// The whole of what print_fn writes to a FILE, as a malloc'd string.
static char *capture(void (*print_fn)(FILE *, Tensor), Tensor t) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) die(EXIT_BAD_INPUT, "open_memstream failed");
    print_fn(f, t);
    if (fclose(f) != 0 || !text) die(EXIT_BAD_INPUT, "open_memstream failed");
    return text;
}

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
// input may be empty), so an empty case is built from its shape attributes.
static int read_case_tensor(Fixture *fx, Tensor *t, char *err) {
    long long ndim, dim0, dim1;
    if (!fixture_attr_int(fx, "ndim", &ndim, err) || !fixture_attr_int(fx, "dim0", &dim0, err) ||
        !fixture_attr_int(fx, "dim1", &dim1, err))
        return 0;
    if (ndim < 0 || ndim > 2 || dim0 < 0 || dim1 < 0 || dim0 > 1 << 20 || dim1 > 1 << 20) {
        snprintf(err, FIXTURE_ERR_LEN, "%s: expected a rank 0..2 shape, found ndim %lld (%lld, %lld)",
                 fixture_path(fx), ndim, dim0, dim1);
        return 0;
    }
    int empty = (ndim == 1 && dim0 == 0) || (ndim == 2 && dim0 * dim1 == 0);
    if (empty) {
        *t = ndim == 1 ? tensor_vector(0) : tensor_matrix((int)dim0, (int)dim1);
        return 1;
    }
    Shape want = {(int)ndim, {ndim > 0 ? (int)dim0 : 0, ndim > 1 ? (int)dim1 : 0}};
    return fixture_read(fx, "tensor", want, t, err);
}

static void check_case(const char *path, const char *name) {
    char err[FIXTURE_ERR_LEN];
    char *want_repr = malloc(TEXT_LEN), *want_size = malloc(TEXT_LEN), *kind = malloc(TEXT_LEN);
    if (!want_repr || !want_size || !kind) die(EXIT_BAD_INPUT, "out of memory");
    Tensor t;
    int ok = 0;
    checked++;
    Fixture *fx = fixture_open(path, name, err);
    if (fx && read_text(fx, "repr", want_repr, err) && read_text(fx, "size", want_size, err) &&
        read_text(fx, "kind", kind, err) && read_case_tensor(fx, &t, err)) {
        int parameter = strcmp(kind, "parameter") == 0;
        char *repr = tensor_repr(t), *size = tensor_size_str(t);
        char *printed = capture(parameter ? print_parameter : print_tensor, t);
        char *printed_size = capture(print_size, t);
        // For a parameter, torch's text is the header line and then the repr.
        const char *header = "Parameter containing:\n";
        const char *want_plain = parameter && strncmp(want_repr, header, strlen(header)) == 0
                                     ? want_repr + strlen(header) : want_repr;
        ok = same_text(parameter ? "print_parameter" : "print_tensor", want_repr, printed);
        ok = same_text("tensor_repr", want_plain, repr) && ok;
        ok = same_text("tensor_size_str", want_size, size) && ok;
        ok = same_text("print_size", want_size, printed_size) && ok;
        free(repr);
        free(size);
        free(printed);
        free(printed_size);
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
    Fixture *root = fixture_open(argv[1], NULL, err);
    if (!root) die(EXIT_BAD_INPUT, "%s", err);
    char *cases = malloc(TEXT_LEN);
    if (!cases) die(EXIT_BAD_INPUT, "out of memory");
    if (!read_text(root, "cases", cases, err)) die(EXIT_BAD_INPUT, "%s", err);
    fixture_close(root);

    // "cases" lists the groups, one name a line.
    for (char *name = strtok(cases, "\n"); name; name = strtok(NULL, "\n")) check_case(argv[1], name);
    free(cases);
    tensor_release_all();

    printf("%d cases, %d failed\n", checked, failures);
    if (checked == 0) {
        printf("FAIL no cases in %s\n", argv[1]);
        return 1;
    }
    return failures ? 1 : 0;
}
