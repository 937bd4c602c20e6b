// config.c: inputs and settings from the fixture, checked before use.
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "keep.h"
#include "print.h"

static const SettingRule *rule_or_die(const char *name, SettingKind kind) {
    const SettingRule *r = setting_rule(name);
    if (!r || r->kind != kind) die_internal("setting '%s' has no rule of that kind in settings.c", name);
    return r;
}

Tensor input_tensor(Run *run, const char *name, Size want) {
    char err[FIXTURE_ERR_LEN];
    Tensor t;
    if (!fixture_read(run->fixture, name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    keep_as(run, name, "input", t);
    return t;
}

bool has_input(const Run *run, const char *name) { return fixture_has(run->fixture, name); }

void expect_output(const Run *run, const char *name, Size want) {
    // Sizes of one's own (--context-len, --batch-size): the fixture's outputs
    // are of the book's sizes, and nothing of this run is compared with them
    if (run->own_sizes) return;
    Fixture *fixture = run->fixture;
    char err[FIXTURE_ERR_LEN], key[200];
    snprintf(key, sizeof key, "%s.sha256", name);
    if (!fixture_has(fixture, name) && fixture_has_attr(fixture, key)) {
        char want_s[96], found[96];
        size_format(want, want_s, sizeof want_s);
        snprintf(key, sizeof key, "%s.shape", name);
        if (!fixture_attr_string(fixture, key, found, sizeof found, err)) die(EXIT_BAD_INPUT, "%s", err);
        if (strcmp(found, want_s) != 0)
            die(EXIT_BAD_INPUT, "%s: attribute '%s': expected the digest of a tensor of shape %s, found '%s'",
                error_input(), key, want_s, found);
        return;
    }
    Tensor t;
    if (!fixture_read(fixture, name, want, &t, err)) die(EXIT_BAD_INPUT, "%s", err);
    tensor_free(t);
}

static long long read_int(const Run *run, const char *name, const SettingRule *r) {
    char err[FIXTURE_ERR_LEN];
    long long v;
    if (!fixture_attr_int(run->fixture, name, &v, err)) die(EXIT_BAD_INPUT, "%s", err);
    if (v < r->min || v > r->max)
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected %s in [%lld, %lld], found %lld", error_input(),
            name, r->kind == SETTING_BOOL ? "0 or 1" : "an integer", r->min, r->max, v);
    return v;
}

int setting_int_silent(const Run *run, const char *name, int book) {
    (void)book;
    // The settings the command line gives (0: not given).
    const struct {
        const char *setting, *option;
        int value;
    } given[] = {
        {"context_len", "--context-len", run->opt.context_len},
        {"batch_size", "--batch-size", run->opt.batch_size},
    };
    for (size_t i = 0; i < sizeof given / sizeof *given; i++) {
        if (!given[i].value || strcmp(given[i].setting, name) != 0) continue;
        const SettingRule *r = rule_or_die(name, SETTING_INT);
        if (given[i].value < r->min || given[i].value > r->max)
            die(EXIT_USAGE, "%s: expected a count in [%lld, %lld], found %d", given[i].option, r->min, r->max,
                given[i].value);
        return given[i].value;
    }
    return (int)read_int(run, name, rule_or_die(name, SETTING_INT));
}

int setting_int(const Run *run, const char *name, int book) {
    int v = setting_int_silent(run, name, book);
    if (v != book) print_note("#", name, "=", v, "here; the book has", book);
    return v;
}

int setting_int_dividing(const Run *run, const char *name, int book, int width, const char *width_name) {
    int v = setting_int(run, name, book);
    if (width % v != 0)
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected a count that divides %s = %d (d_out must be divisible by "
            "num_heads), found %s = %d", error_input(), name, width_name, width, name, v);
    return v;
}

bool setting_bool(const Run *run, const char *name, bool book) {
    bool v = read_int(run, name, rule_or_die(name, SETTING_BOOL)) != 0;
    if (v != book) print_note("#", name, "=", v, "here; the book has", book);
    return v;
}

// A Python float, stored as its repr() in a string attribute, so that the
// double is exactly Python's (strtod rounds correctly, as float() does).
double setting_float(const Run *run, const char *name, double book) {
    const SettingRule *r = rule_or_die(name, SETTING_FLOAT);
    char err[FIXTURE_ERR_LEN], text[64];
    if (!fixture_attr_string(run->fixture, name, text, sizeof text, err)) die(EXIT_BAD_INPUT, "%s", err);
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || isnan(v) || v < (double)r->min || v > (double)r->max)
        die(EXIT_BAD_INPUT, "%s: attribute '%s': expected a number in [%lld, %lld] written as Python writes a float, "
            "found '%s'", error_input(), name, r->min, r->max, text);
    if (v != book) print_note("#", name, "=", v, "here; the book has", book);
    return v;
}
