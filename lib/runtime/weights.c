// weights.c: see weights.h.
#include "weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "pth.h"
#include "print.h"
#include "state_dict.h"

void weights_begin(Run *run) {
    const Options *opt = &run->opt;
    RunWeights *w = &run->weights;
    w->at = -1;
    char err[PTH_ERR_LEN];
    for (int i = 0; i < opt->n_weights; i++) {
        w->file[i].name = opt->weights[i].name;
        w->file[i].path = opt->weights[i].path;
        if (!pth_load(w->file[i].path, &w->file[i].sd, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
        w->n = i + 1;
    }
}

int weights_count(const Run *run) { return run->weights.n; }
const char *weights_path(const Run *run, int i) { return run->weights.file[i].path; }

void weights_module_begin(Run *run, const char *name) {
    RunWeights *w = &run->weights;
    snprintf(w->module, sizeof w->module, "%s", name);
    w->at = -1;
    w->n_keys = 0;
    if (w->n_made < RUN_MAX_MODULES) snprintf(w->made[w->n_made++], sizeof w->made[0], "%s", name);
    // The file named for it, else the plain --weights FILE if no module has taken it yet.
    for (int pass = 0; pass < 2 && w->at < 0; pass++)
        for (int i = 0; i < w->n && w->at < 0; i++)
            if (!w->file[i].module[0] && (pass == 0 ? !strcmp(w->file[i].name, name) : !w->file[i].name[0]))
                w->at = i;
    if (w->at >= 0) snprintf(w->file[w->at].module, sizeof w->file[0].module, "%s", name);
}

static int find(const PthStateDict *sd, const char *key) {
    for (int i = 0; i < sd->n; i++)
        if (!strcmp(sd->keys[i], key)) return i;
    return -1;
}

void weights_fill(Run *run, const char *name, Tensor t) {
    RunWeights *w = &run->weights;
    if (w->at < 0) return;
    size_t len = strlen(w->module);
    if (strncmp(name, w->module, len) != 0 || name[len] != '.') return;  // not this module's
    const char *key = name + len + 1;
    // A parameter drawn twice (MHAEinsum's randn, then reset_parameters())
    // is one key; the file's value replaces each draw, so the last one too.
    int at = 0;
    while (at < w->n_keys && strcmp(w->keys[at].key, key) != 0) at++;
    if (at == RUN_MAX_KEYS) die(EXIT_BAD_INPUT, "%s: more than %d parameters", w->module, RUN_MAX_KEYS);
    if (at == w->n_keys) snprintf(w->keys[w->n_keys++].key, sizeof w->keys[0].key, "%s", key);
    w->keys[at].size = shape(t);
    const PthStateDict *sd = &w->file[w->at].sd;
    int k = find(sd, key);
    // param.copy_(input_param): the same floats. A key missing, or another
    // shape, is refused when the module is made (weights_module_made).
    if (k >= 0 && size_equal(shape(sd->tensors[k]), shape(t)))
        memcpy(t.data, sd->tensors[k].data, (size_t)numel(t) * sizeof(float));
}

// Appends to msg as far as it goes (the line is cut, never overrun).
static void add(char *msg, size_t len, const char *fmt, const char *a, const char *b, const char *c) {
    size_t at = strlen(msg);
    if (at + 1 < len) snprintf(msg + at, len - at, fmt, a, b, c);
}

void weights_module_made(Run *run, const char *cls, int n_buffers, const char *const *buffer_keys,
                         int context_length, Tensor *held) {
    RunWeights *w = &run->weights;
    if (w->at < 0) return;
    const char *path = w->file[w->at].path;
    const PthStateDict *sd = &w->file[w->at].sd;
    // The module's keys in its state_dict() order, whatever order it drew
    // them in, and the file's; load_state_dict(strict=True)'s check (nn/state_dict.h).
    StateKey made[RUN_MAX_KEYS * 2], own[RUN_MAX_KEYS * 2];
    int n_all = 0;
    for (int i = 0; i < w->n_keys; i++) made[n_all++] = (StateKey){w->keys[i].key, w->keys[i].size};
    for (int b = 0; b < n_buffers && n_all < RUN_MAX_KEYS * 2; b++)
        made[n_all++] = (StateKey){buffer_keys[b], SIZE(context_length, context_length)};
    state_dict_order(made, w->n_keys, n_all, own);
    StateKey *file = xcalloc((size_t)sd->n + 1, sizeof *file, "a state_dict's keys");
    for (int k = 0; k < sd->n; k++) file[k] = (StateKey){sd->keys[k], shape(sd->tensors[k])};
    char msg[STATE_DICT_ERR_LEN];
    const bool strict_ok = state_dict_check_strict(cls, own, n_all, file, sd->n, msg, sizeof msg);
    free(file);
    if (!strict_ok) die(EXIT_BAD_INPUT, "%s: %s", path, msg);
    // The buffers: held whole, they take the file's values (buffer.copy_(...));
    // else litattn makes the causal mask itself, and it must be that one.
    for (int b = 0; b < n_buffers; b++) {
        Tensor m = sd->tensors[find(sd, buffer_keys[b])];
        if (held) {
            memcpy(held[b].data, m.data, (size_t)numel(m) * sizeof(float));
            continue;
        }
        for (long i = 0; i < context_length; i++)
            for (long j = 0; j < context_length; j++)
                if (m.data[i * context_length + j] != (j > i ? 1.0f : 0.0f))
                    die(EXIT_BAD_INPUT, "%s: '%s': expected the causal mask the module makes, "
                        "triu(ones(%d, %d), diagonal=1), found %g at [%ld, %ld]", path, buffer_keys[b],
                        context_length, context_length, (double)m.data[i * context_length + j], i, j);
    }
    char note[600];
    snprintf(note, sizeof note, "%s.load_state_dict(torch.load(\"%s\")): its parameters from that file", w->module,
             path);
    print_note("#", note);
    w->at = -1;
}

void weights_end(Run *run) {
    RunWeights *w = &run->weights;
    for (int i = 0; i < w->n; i++) {
        if (w->file[i].module[0]) continue;
        char made[RUN_MAX_MODULES * 66] = "";
        for (int m = 0; m < w->n_made; m++) add(made, sizeof made, "%s%s%s", m ? ", " : "", w->made[m], "");
        if (w->file[i].name[0])
            die(EXIT_USAGE, "--weights %s=%s: this chapter makes no module %s (it makes: %s)", w->file[i].name,
                w->file[i].path, w->file[i].name, w->n_made ? made : "none that --weights loads");
        die(EXIT_USAGE, "--weights %s: this chapter makes no module that --weights loads", w->file[i].path);
    }
    for (int i = 0; i < w->n; i++) pth_state_dict_free(&w->file[i].sd);
    w->n = 0;
}
