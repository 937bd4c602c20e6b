// params.c: parameters drawn from a random source, in the order PyTorch
// draws them (row-major, one 32-bit draw per element; a Linear's weight,
// then its bias).
#include "params.h"

#include <stdio.h>

#include "init.h"

static void report(ParamSource *ps, const char *name, Tensor t) {
    if (ps->made) ps->made(name, t);
}

static Tensor drawn_rand(ParamSource *ps, const char *name, int rows, int cols) {
    Tensor t = tensor_matrix(rows, cols);
    rand_fill(t.data, rows * cols, ps->rng);
    report(ps, name, t);
    return t;
}

static Linear drawn_linear(ParamSource *ps, const char *name, int in, int out, int bias) {
    Linear l = linear_new(in, out, bias, ps->rng);
    char key[128];
    snprintf(key, sizeof key, "%s.weight", name);
    report(ps, key, l.weight);
    if (bias) {
        snprintf(key, sizeof key, "%s.bias", name);
        report(ps, key, l.bias);
    }
    return l;
}

ParamSource params_drawn(RandomSource *rng, void (*made)(const char *, Tensor)) {
    ParamSource ps = {drawn_rand, drawn_linear, made, rng};
    return ps;
}
