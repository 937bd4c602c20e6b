// state_dict.c: state_dict() and a strict load_state_dict() of CausalAttention.
#include "state_dict.h"

#include <stdio.h>
#include <string.h>

#include "error.h"

static void add(StateDict *sd, const char *key, Tensor t) {
    if (!t.data) return;  // a Linear without bias
    if (sd->n == STATE_DICT_MAX) die_internal("state_dict: more than %d entries", STATE_DICT_MAX);
    StateDictEntry *e = &sd->entry[sd->n++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->value = tensor_detach(t);  // state_dict() holds param.detach(): the same memory
}

StateDict causal_attention_state_dict(const CausalAttention *m) {
    StateDict sd = {0};
    // Module._save_to_state_dict: its own parameters (none here), its own
    // buffers; then each submodule's, in the order __init__ assigned them.
    if (m->mask_kind == MASK_BUFFER) add(&sd, "mask", m->mask);
    add(&sd, "W_query.weight", m->W_query.weight);
    add(&sd, "W_query.bias", m->W_query.bias);
    add(&sd, "W_key.weight", m->W_key.weight);
    add(&sd, "W_key.bias", m->W_key.bias);
    add(&sd, "W_value.weight", m->W_value.weight);
    add(&sd, "W_value.bias", m->W_value.bias);
    return sd;
}

static const StateDictEntry *find(const StateDict *sd, const char *key) {
    for (int i = 0; i < sd->n; i++)
        if (!strcmp(sd->entry[i].key, key)) return &sd->entry[i];
    return NULL;
}

void causal_attention_load_state_dict(CausalAttention *m, const StateDict *sd, const char *what) {
    StateDict own = causal_attention_state_dict(m);
    // torch names the unexpected keys, then the missing ones, each in quotes.
    for (int i = 0; i < sd->n; i++)
        if (!find(&own, sd->entry[i].key))
            die(EXIT_BAD_INPUT, "Error(s) in loading state_dict for %s: Unexpected key(s) in state_dict: \"%s\"",
                what, sd->entry[i].key);
    for (int i = 0; i < own.n; i++)
        if (!find(sd, own.entry[i].key))
            die(EXIT_BAD_INPUT, "Error(s) in loading state_dict for %s: Missing key(s) in state_dict: \"%s\"", what,
                own.entry[i].key);
    for (int i = 0; i < own.n; i++) {
        const StateDictEntry *e = find(sd, own.entry[i].key);
        if (!size_equal(shape(e->value), shape(own.entry[i].value))) {
            char have[96], want[96];
            size_format(shape(e->value), have, sizeof have);
            size_format(shape(own.entry[i].value), want, sizeof want);
            die(EXIT_BAD_INPUT,
                "Error(s) in loading state_dict for %s: size mismatch for %s: copying a param with shape %s "
                "from checkpoint, the shape in current model is %s",
                what, e->key, have, want);
        }
    }
    // param.copy_(input_param) for each key: the same floats.
    for (int i = 0; i < own.n; i++) {
        const StateDictEntry *e = find(sd, own.entry[i].key);
        memmove(own.entry[i].value.data, e->value.data, (size_t)numel(e->value) * sizeof(float));
    }
}

StateDict state_dict_clone(const StateDict *sd) {
    StateDict out = *sd;
    for (int i = 0; i < out.n; i++) out.entry[i].value = tensor_copy(sd->entry[i].value);
    return out;
}
