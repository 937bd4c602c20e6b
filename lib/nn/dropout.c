// dropout.c: see dropout.h.
#include "dropout.h"

#include <stdio.h>

#include "error.h"
#include "ops.h"

Dropout dropout_new(const ParamSource *ps, const char *name, double p) {
    if (!(p >= 0.0 && p <= 1.0)) die(EXIT_BAD_INPUT, "nn.Dropout: expected a probability in [0, 1], found %g", p);
    Dropout d = {.p = p, .training = true, .source = *ps};
    snprintf(d.name, sizeof d.name, "%s", name);
    return d;
}

Tensor dropout_forward(Dropout *d, Tensor x) {
    // _dropout_impl: these return the input tensor itself.
    if (!d->training || d->p == 0.0 || numel(x) == 0) return x;
    if (d->p == 1.0) return torch_mul_scalar(x, 0.0);  // input * zeros({})
    Tensor noise = dropout_noise(d, shape(x));
    Tensor out = torch_mul(x, noise);
    tensor_free(noise);
    return out;
}

Tensor dropout_factor(Dropout *d, Size s) {
    if (!d->training || d->p == 0.0 || size_numel(s) == 0) return (Tensor){0};
    if (d->p == 1.0) return tensor_zeros(s);  // input * zeros({}): nothing drawn
    return dropout_noise(d, s);
}

Tensor dropout_forward_keep(Dropout *d, Tensor x, Tensor *noise) {
    *noise = dropout_factor(d, shape(x));
    if (!noise->data) return x;
    if (d->p == 1.0) return torch_mul_scalar(x, 0.0);
    return torch_mul(x, *noise);
}

Tensor dropout_noise(Dropout *d, Size s) {
    char name[128];
    if (++d->calls == 1) snprintf(name, sizeof name, "%s.noise", d->name);
    else snprintf(name, sizeof name, "%s.noise.%d", d->name, d->calls);
    Tensor noise = tensor_empty(s);
    d->source.dropout_noise(d->source.ctx, name, noise, d->p);
    return noise;
}

Tensor dropout_replace(Dropout *d, Tensor x) {
    Tensor y = dropout_forward(d, x);
    if (y.data != x.data) tensor_free(x);
    return y;
}
