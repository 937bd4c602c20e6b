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

void weights_begin(Run *run, const char *const *modules) {
    const Options *opt = &run->opt;
    RunWeights *w = &run->weights;
    w->at = -1;
    w->modules = modules;
    while (modules && modules[w->n_modules]) w->n_modules++;
    char err[PTH_ERR_LEN];
    for (int i = 0; i < opt->n_weights; i++) {
        w->file[i].text = opt->weights[i].text;
        w->file[i].path = opt->weights[i].path;
        w->file[i].module = opt->weights[i].module;
        if (w->file[i].module < 0 || w->file[i].module >= w->n_modules)
            die_internal("--weights %s: no module chosen for it", w->file[i].text);
        w->file[i].key = opt->weights[i].key[0] ? opt->weights[i].key : NULL;
        if (!pth_load_select(w->file[i].path, w->file[i].key, &w->file[i].sd, err, sizeof err))
            die(EXIT_BAD_INPUT, "%s", err);
        w->n = i + 1;
    }
}

int weights_count(const Run *run) { return run->weights.n; }
const char *weights_path(const Run *run, int i) { return run->weights.file[i].path; }

// The chapter's modules, "sa_v2, exercise_3_1.sa_v1, ...", for a message.
static void module_list(const RunWeights *w, char *buf, size_t len) {
    buf[0] = '\0';
    for (int m = 0, at = 0; m < w->n_modules && at >= 0 && (size_t)at + 1 < len; m++)
        at += snprintf(buf + at, len - (size_t)at, "%s%s", m ? ", " : "", w->modules[m]);
}

void weights_module_begin(Run *run, const char *name) {
    RunWeights *w = &run->weights;
    // The chapter's list (chapter_begin) says which module comes next.
    const int m = w->n_made;
    if (m >= w->n_modules || strcmp(w->modules[m], name) != 0) {
        char list[1024];
        module_list(w, list, sizeof list);
        die_internal("the chapter makes the module %s as its module %d, but its chapter_begin lists %s (%s)", name,
                     m + 1, m < w->n_modules ? w->modules[m] : "no more", w->n_modules ? list : "none");
    }
    w->n_made++;
    snprintf(w->module, sizeof w->module, "%s", name);
    w->n_keys = 0;
    // Its file, if a --weights is for it (cli_weights_modules chose).
    w->at = -1;
    for (int i = 0; i < w->n; i++)
        if (w->file[i].module == m) w->at = i;
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
    const char *key = w->file[w->at].key;
    snprintf(note, sizeof note, "%s.load_state_dict(torch.load(\"%s\")%s%s%s): its parameters from that file",
             w->module, path, key ? "[\"" : "", key ? key : "", key ? "\"]" : "");
    print_note("#", note);
    w->at = -1;
}

void weights_end(Run *run) {
    RunWeights *w = &run->weights;
    if (w->n_made != w->n_modules) {
        char list[1024];
        module_list(w, list, sizeof list);
        die_internal("the chapter made %d module%s, but its chapter_begin lists %d (%s)", w->n_made,
                     w->n_made == 1 ? "" : "s", w->n_modules, list);
    }
    for (int i = 0; i < w->n; i++) pth_state_dict_free(&w->file[i].sd);
    w->n = 0;
}
