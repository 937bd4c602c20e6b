// gradients.c: see gradients.h.
#include "gradients.h"

#include <stdio.h>

#include "error.h"
#include "ops.h"

void gradients_begin(Gradients *g, const char *module) {
    g->n = 0;
    g->x = (Tensor){0};
    snprintf(g->module, sizeof g->module, "%s", module);
}

void gradients_add(Gradients *g, const char *prefix, const char *key, Tensor grad) {
    if (g->n == GRADIENTS_MAX) die_internal("%s: more than %d parameters", g->module, GRADIENTS_MAX);
    ParamGrad *p = &g->param[g->n++];
    snprintf(p->key, sizeof p->key, "%s%s", prefix, key);
    grad.grad_fn = NULL;  // a .grad is a leaf that requires no grad
    grad.requires_grad = false;
    p->grad = grad;
}

void gradients_add_linear(Gradients *g, const char *prefix, const char *attr, LinearGrad lg) {
    char key[48];
    snprintf(key, sizeof key, "%s.weight", attr);
    gradients_add(g, prefix, key, lg.weight);
    if (lg.bias.data) {
        snprintf(key, sizeof key, "%s.bias", attr);
        gradients_add(g, prefix, key, lg.bias);
    }
}

void attention_saved_free(AttentionSaved *saved) {
    Tensor t[] = {saved->keys, saved->queries, saved->values, saved->attn_weights, saved->noise, saved->context, saved->attn_output};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].data) tensor_free(t[i]);
    *saved = (AttentionSaved){0};
}

Gradients module_sum_backward(const ModuleOps *ops, void *m, const char *name, Tensor x) {
    x.requires_grad = true;                    // x.requires_grad_()
    Tensor out = ops->forward_keeping(m, x);   // out = m(x)
    Tensor ones = torch_ones(shape(out));      // loss = out.sum(): d loss / d out
    tensor_free(out);
    Gradients g;
    gradients_begin(&g, name);
    ops->backward(m, ones, &g);                // loss.backward()
    tensor_free(ones);
    ops->forget(m);
    return g;
}
