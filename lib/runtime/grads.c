// grads.c: see grads.h.
#include "grads.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "keep.h"
#include "print.h"

static void keep_grad(Run *run, const char *name, Tensor grad) {
    expect_output(run, name, shape(grad));
    keep(run, name, grad);
}

const Gradients *keep_grads(Run *run, const Gradients *g, const char *input) {
    char name[160];
    for (int i = 0; i < g->n; i++) {
        snprintf(name, sizeof name, "%s.%s.grad", g->module, g->param[i].key);
        keep_grad(run, name, g->param[i].grad);
    }
    snprintf(name, sizeof name, "%s.grad", input);
    keep_grad(run, name, g->x);
    return g;
}

void print_grad_shapes(const Run *run, const Gradients *g, const char *input) {
    for (int i = 0; i < g->n; i++) run_print(run, g->param[i].key, shape(g->param[i].grad));
    char name[160];
    snprintf(name, sizeof name, "%s.grad:", input);
    run_print(run, name, shape(g->x));
}
