// param_source.c: see param_source.h.
#include "param_source.h"

#include "init.h"
#include "rows.h"

static void random_uniform_(void *ctx, const char *name, Tensor t, double from, double to) {
    (void)name;
    uniform_fill(t.data, numel(t), from, to, ctx);
}

static void random_rand(void *ctx, const char *name, Tensor t) {
    (void)name;
    rand_fill(t.data, numel(t), ctx);
}

static void random_dropout_noise(void *ctx, const char *name, Tensor noise, double p) {
    (void)name;
    // noise.bernoulli_(1 - p): 1 where a 53-bit uniform is below 1 - p;
    // noise.div_(1 - p): a float division by (float)(1 - p).
    const double keep_p = 1.0 - p;
    bernoulli_fill(noise.data, numel(noise), keep_p, ctx);
    rows_div_scalar(noise.data, noise.data, (float)keep_p, numel(noise));
}

ParamSource param_source_random(RandomSource *rs) {
    return (ParamSource){random_uniform_, random_rand, random_dropout_noise, NULL, rs};
}
