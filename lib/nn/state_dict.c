// state_dict.c: state_dict() and a strict load_state_dict() of CausalAttention, and the
// strict check itself (state_dict.h).
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

// Appends to msg as far as it goes (the line is cut, never overrun).
static void append(char *msg, size_t len, const char *a, const char *b, const char *c) {
    size_t at = strlen(msg);
    if (at + 1 < len) snprintf(msg + at, len - at, "%s%s%s", a, b, c);
}

// A shape as torch's message prints it: torch.Size([2, 3]).
static void torch_size(Size s, char *buf, size_t len) {
    int at = snprintf(buf, len, "torch.Size([");
    for (int i = 0; i < s.ndim && at > 0 && (size_t)at < len; i++)
        at += snprintf(buf + at, len - (size_t)at, "%s%d", i ? ", " : "", s.dims[i]);
    if (at > 0 && (size_t)at < len) snprintf(buf + at, len - (size_t)at, "])");
}

static int find_key(const StateKey *keys, int n, const char *key) {
    for (int i = 0; i < n; i++)
        if (!strcmp(keys[i].key, key)) return i;
    return -1;
}

// Appends to order[*n] the keys under `prefix` ("" or "heads.0."): its own
// parameters, its own buffers, then each submodule's, in the order of their first key.
static void order_under(const StateKey *made, int n_params, int n_all, const char *prefix, StateKey *order, int *n) {
    size_t len = strlen(prefix);
    for (int pass = 0; pass < 2; pass++)  // its own parameters, then its own buffers
        for (int i = pass ? n_params : 0; i < (pass ? n_all : n_params); i++)
            if (!strncmp(made[i].key, prefix, len) && !strchr(made[i].key + len, '.')) order[(*n)++] = made[i];
    for (int i = 0; i < n_all; i++) {
        if (strncmp(made[i].key, prefix, len) != 0) continue;
        const char *rest = made[i].key + len, *dot = strchr(rest, '.');
        if (!dot) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strncmp(made[j].key, prefix, len) && !strncmp(made[j].key + len, rest, (size_t)(dot - rest) + 1);
        if (seen) continue;
        char sub[200];
        snprintf(sub, sizeof sub, "%.*s", (int)(dot - made[i].key) + 1, made[i].key);
        order_under(made, n_params, n_all, sub, order, n);
    }
}

void state_dict_order(const StateKey *made, int n_params, int n_all, StateKey *order) {
    int n = 0;
    order_under(made, n_params, n_all, "", order, &n);
}

// The prefixes a wrapped model puts before every key of its state_dict:
// nn.DataParallel's (the model is its .module) and torch.compile's (its ._orig_mod).
static const struct {
    const char *prefix, *wrapper, *inner;
} wrapped_models[] = {
    {"module.", "a DataParallel model's state_dict", "model.module"},
    {"_orig_mod.", "a torch.compile'd model's state_dict", "model._orig_mod"},
};

static bool every_key_starts(const StateKey *keys, int n, const char *prefix) {
    for (int i = 0; i < n; i++)
        if (strncmp(keys[i].key, prefix, strlen(prefix)) != 0) return false;
    return n > 0;
}

// Up to three keys as torch quotes them, and how many there are: "a", "b", "c", ... (5 keys).
static void some_keys(const StateKey *keys, int n, char *buf, size_t len) {
    buf[0] = '\0';
    for (int i = 0; i < n && i < 3; i++) append(buf, len, i ? ", \"" : "\"", keys[i].key, "\"");
    if (n > 3) {
        char more[64];
        snprintf(more, sizeof more, ", ... (%d keys)", n);
        append(buf, len, more, "", "");
    }
}

// A wrapped model's state_dict: every key it gives carries the wrapper's
// prefix and no key of the module does. msg says so, and what to do.
static bool wrapped_model(const char *cls, const StateKey *own, int n_own, const StateKey *given, int n_given,
                          char *msg, size_t len) {
    for (size_t w = 0; w < sizeof wrapped_models / sizeof *wrapped_models; w++) {
        const char *prefix = wrapped_models[w].prefix;
        if (!every_key_starts(given, n_given, prefix)) continue;
        bool own_has = false;
        for (int i = 0; i < n_own; i++) own_has |= !strncmp(own[i].key, prefix, strlen(prefix));
        if (own_has) continue;
        char want[512], found[512];
        some_keys(own, n_own, want, sizeof want);
        some_keys(given, n_given, found, sizeof found);
        snprintf(msg, len, "Error(s) in loading state_dict for %s: expected its keys, %s, found every key starting "
                 "with '%s' (%s): strip the prefix, {k.removeprefix('%s'): v for k, v in sd.items()}, or save "
                 "%s.state_dict(); the keys found: %s", cls, want, prefix, wrapped_models[w].wrapper, prefix,
                 wrapped_models[w].inner, found);
        return true;
    }
    return false;
}

bool state_dict_check_strict(const char *cls, const StateKey *own, int n_own, const StateKey *given, int n_given,
                             char *msg, size_t len) {
    // torch: "Error(s) in loading state_dict for CLS:" then the missing keys,
    // the unexpected keys, each size mismatch (its lines joined here).
    static char missing[STATE_DICT_ERR_LEN], unexpected[STATE_DICT_ERR_LEN], sizes[STATE_DICT_ERR_LEN];
    missing[0] = unexpected[0] = sizes[0] = '\0';
    for (int i = 0; i < n_own; i++) {
        int k = find_key(given, n_given, own[i].key);
        if (k < 0) {
            append(missing, sizeof missing, missing[0] ? ", \"" : "\"", own[i].key, "\"");
        } else if (!size_equal(given[k].size, own[i].size)) {
            char have[128], want[128];
            torch_size(given[k].size, have, sizeof have);
            torch_size(own[i].size, want, sizeof want);
            append(sizes, sizeof sizes, sizes[0] ? " size mismatch for " : "size mismatch for ", own[i].key, "");
            append(sizes, sizeof sizes, ": copying a param with shape ", have, " from checkpoint, ");
            append(sizes, sizeof sizes, "the shape in current model is ", want, ".");
        }
    }
    for (int k = 0; k < n_given; k++)
        if (find_key(own, n_own, given[k].key) < 0)
            append(unexpected, sizeof unexpected, unexpected[0] ? ", \"" : "\"", given[k].key, "\"");
    if (!missing[0] && !unexpected[0] && !sizes[0]) return true;
    if (wrapped_model(cls, own, n_own, given, n_given, msg, len)) return false;
    snprintf(msg, len, "Error(s) in loading state_dict for %s:%s%s%s%s%s%s%s%s", cls,
             missing[0] ? " Missing key(s) in state_dict: " : "", missing, missing[0] ? "." : "",
             unexpected[0] ? " Unexpected key(s) in state_dict: " : "", unexpected, unexpected[0] ? "." : "",
             sizes[0] ? " " : "", sizes);
    return false;
}

void causal_attention_load_state_dict(CausalAttention *m, const StateDict *sd, const char *what) {
    StateDict own = causal_attention_state_dict(m);  // in its state_dict() order
    StateKey want[STATE_DICT_MAX], have[STATE_DICT_MAX];
    for (int i = 0; i < own.n; i++) want[i] = (StateKey){own.entry[i].key, shape(own.entry[i].value)};
    for (int i = 0; i < sd->n; i++) have[i] = (StateKey){sd->entry[i].key, shape(sd->entry[i].value)};
    static char msg[STATE_DICT_ERR_LEN];
    if (!state_dict_check_strict(what, want, own.n, have, sd->n, msg, sizeof msg)) die(EXIT_BAD_INPUT, "%s", msg);
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
