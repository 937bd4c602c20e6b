// config.c: inputs and settings from the fixture, checked before use.
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fixture.h"
#include "keep.h"
#include "print.h"
#include "runtime.h"
#include "torch_generator.h"

// Sizes are checked per tensor in elements (TENSOR_MAX_NUMEL, tensor.h); a
// setting only has to be a sensible count. 2^24 keeps every product of two
// of them inside a long.
#define MAX_COUNT (1LL << 24)

const SettingRule setting_rules[] = {
    {"chapter", SETTING_TEXT, 0, 0, "the chapter the fixture is for"},
    {"seed", SETTING_SEED, 0, 0, "torch.manual_seed's argument, a Python int in decimal"},
    {"skip", SETTING_INT, 0, 1000000000LL, "draws discarded after seeding"},
    {"d_in", SETTING_INT, 1, MAX_COUNT, "input features per token"},
    {"d_out", SETTING_INT, 1, MAX_COUNT, "output features"},
    {"tokens", SETTING_INT, 1, MAX_COUNT, "tokens per input"},
    {"batch_size", SETTING_INT, 1, MAX_COUNT, "inputs per batch"},
    {"context_length", SETTING_INT, 1, MAX_COUNT, "the longest input the causal mask covers"},
    {"num_heads", SETTING_INT, 1, MAX_COUNT, "attention heads"},
    {"qkv_bias", SETTING_BOOL, 0, 1, "the query, key and value layers have a bias"},
    {"training", SETTING_BOOL, 0, 1, "the module is in training mode (dropout draws)"},
    {"dropout", SETTING_FLOAT, 0, 1, "nn.Dropout's probability p"},
    {"softmax_dim", SETTING_INT, -3, 2, "the dimension the attention softmax normalises"},
};
const int n_setting_rules = (int)(sizeof setting_rules / sizeof setting_rules[0]);

const SettingRule *setting_rule(const char *name) {
    const char *dot = strrchr(name, '.');
    const char *base = dot ? dot + 1 : name;
    for (int i = 0; i < n_setting_rules; i++)
        if (!strcmp(setting_rules[i].name, base)) return &setting_rules[i];
    return NULL;
}

static const SettingRule *rule_or_die(const char *name, SettingKind kind) {
    const SettingRule *r = setting_rule(name);
    if (!r || r->kind != kind) die(EXIT_BAD_INPUT, "setting '%s' has no rule of that kind in config.c", name);
    return r;
}

Tensor input_tensor(const char *name, Size want) {
    char err[FIXTURE_ERR_LEN];
    Tensor t;
    if (!fixture_read(runtime_fixture(), name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    keep_as(name, "input", t);
    return t;
}

bool has_input(const char *name) { return fixture_has(runtime_fixture(), name); }

static long long read_int(const char *name, const SettingRule *r) {
    char err[FIXTURE_ERR_LEN];
    long long v;
    if (!fixture_attr_int(runtime_fixture(), name, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (v < r->min || v > r->max)
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected %s in [%lld, %lld], found %lld", runtime_fixture_label(),
            name, r->kind == SETTING_BOOL ? "0 or 1" : "an integer", r->min, r->max, v);
    return v;
}

int setting_int(const char *name, int book) {
    int v = (int)read_int(name, rule_or_die(name, SETTING_INT));
    if (v != book) print_note("#", name, "=", v, "here; the book has", book);
    return v;
}

bool setting_bool(const char *name, bool book) {
    bool v = read_int(name, rule_or_die(name, SETTING_BOOL)) != 0;
    if (v != book) print_note("#", name, "=", v, "here; the book has", book);
    return v;
}

// A Python float, stored as its repr() in a string attribute, so that the
// double is exactly Python's (strtod rounds correctly, as float() does).
double setting_float(const char *name, double book) {
    const SettingRule *r = rule_or_die(name, SETTING_FLOAT);
    char err[FIXTURE_ERR_LEN], text[64];
    if (!fixture_attr_string(runtime_fixture(), name, text, sizeof text, err)) die(EXIT_BAD_INPUT, "%s", err);
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || isnan(v) || v < (double)r->min || v > (double)r->max)
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected a number in [%lld, %lld] written as Python writes a float, "
            "found '%s'", runtime_fixture_label(), name, r->min, r->max, text);
    if (v != book) print_note("#", name, "=", v, "here; the book has", book);
    return v;
}
