// attributes.c: the root attributes' cases, attr_<kind>:<name>, by the
// attribute's own type: a probe (a value of another type: does the chapter
// read it at all?), missing, a null dataspace, an array, the wrong type, a
// string of 1 MiB, values the setting's rule refuses (lib/io/settings.c's
// table), the largest uint64, a head count that does not divide the width;
// and the `chapter` attribute's wrong and control-character values.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

#include "malformed.h"

// The rules the chapters hold attributes to are lib/io/settings.c's table.

// Every kind of broken attribute, by the attribute's own type. The cases
// are named attr_<kind>:<name>; attr_probe:<name> tells the checker whether
// the chapter reads the attribute at all.
void attr_cases(const Chapter *ch, const RootAttr *at) {
    char path[4096], kase[160], mention[200];
    const char *attr = at->name;
    hid_t f;
#define ACASE(kind) (snprintf(kase, sizeof kase, "attr_%s:%s", kind, attr), f = begin(ch, kase, path, sizeof path))
#define ADONE() end(f, kase, ch, path, attr, "prefix")
#define ADONE_WITH(text) (snprintf(mention, sizeof mention, "%s&%s", attr, text), end(f, kase, ch, path, mention, "prefix"))
    const int is_string = at->cls == H5T_STRING, is_int = at->cls == H5T_INTEGER, is_float = at->cls == H5T_FLOAT;
    // optional: absent means a default (no earlier draws), so no "missing" case.
    int optional = !strcmp(attr, "skip");

    ACASE("probe");
    if (is_string) put_int_attr(f, attr, 7);
    else put_string_attr(f, attr, "probe");
    ADONE();
    // A digest record is read by fixture_check, never by the chapter: its
    // probe shows that, and the other kinds would only be skipped.
    if (at->digest) return;

    if (!optional) {
        ACASE("missing");
        MUST(H5Adelete(f, attr));
        ADONE();
    }

    // No value at all: a null dataspace of the attribute's own type.
    ACASE("null_dataspace");
    hid_t type = H5Tcopy(is_string ? H5T_C_S1 : is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE);
    if (is_string) H5Tset_size(type, H5T_VARIABLE);
    put_null_attr(f, attr, type);
    H5Tclose(type);
    ADONE_WITH("null dataspace");

    ACASE("array");
    if (is_string) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, H5T_VARIABLE);
        const char *two[2] = {ch->name, ch->name};
        put_attr(f, attr, st, st, 2, two);
        H5Tclose(st);
    } else {
        long long pair[2] = {1, 2};
        put_attr(f, attr, H5T_STD_I64LE, H5T_NATIVE_LLONG, 2, pair);
    }
    ADONE();

    if (is_string) {
        ACASE("int");
        put_int_attr(f, attr, 123);
        ADONE();
        // 1 MiB of text: described by its length, not read.
        ACASE("1MiB");
        char *big = malloc((1 << 20) + 1);
        memset(big, 'x', 1 << 20);
        big[1 << 20] = '\0';
        put_string_attr(f, attr, big);
        free(big);
        ADONE_WITH("1048576");
        // Values a string setting's rule refuses: a probability outside [0, 1]
        // or not a number; a seed that is not an integer torch.manual_seed takes.
        const SettingRule *srule = setting_rule(attr);
        static const struct { SettingKind kind; const char *case_kind, *value; } bad_text[] = {
            {SETTING_FLOAT, "above_max", "1.5"},        {SETTING_FLOAT, "below_min", "-0.1"},
            {SETTING_FLOAT, "not_a_number", "half"},    {SETTING_FLOAT, "nan", "nan"},
            {SETTING_SEED, "not_an_integer", "12a"},    {SETTING_SEED, "a_float", "123.0"},
            {SETTING_SEED, "above_max", "18446744073709551616"},
        };
        for (size_t k = 0; srule && k < sizeof bad_text / sizeof *bad_text; k++) {
            if (bad_text[k].kind != srule->kind) continue;
            ACASE(bad_text[k].case_kind);
            put_string_attr(f, attr, bad_text[k].value);
            ADONE_WITH(bad_text[k].value);
        }
    }
    if (is_int || is_float) {
        ACASE("string");
        put_string_attr(f, attr, "2");
        ADONE();
    }
    if (is_int) {
        ACASE("float");
        double two = 2.0;
        put_attr(f, attr, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &two);
        ADONE();
        // The largest uint64: to be reported as itself, not as 2^63 - 1.
        ACASE("uint64_max");
        unsigned long long max = UINT64_MAX;
        put_attr(f, attr, H5T_STD_U64LE, H5T_NATIVE_ULLONG, 0, &max);
        ADONE_WITH("18446744073709551615");
        const SettingRule *rule = setting_rule(attr);
        if (rule && (rule->kind == SETTING_INT || rule->kind == SETTING_BOOL)) {
            const struct { const char *kind; long long value; } bad[] = {
                {"below_min", rule->min - 1}, {"above_max", rule->max + 1}, {"huge", 1ll << 40},
            };
            for (int b = 0; b < 3; b++) {
                ACASE(bad[b].kind);
                put_int_attr(f, attr, bad[b].value);
                char v[32];
                snprintf(v, sizeof v, "%lld", bad[b].value);
                ADONE_WITH(v);
            }
        }
    }
    if (is_float) {
        ACASE("int");
        put_int_attr(f, attr, 1);
        ADONE();
    }
    // A head count that does not divide the width it splits (the bonus
    // notebook's embed_dim): in range, but refused by the first class that
    // splits heads (`assert d_out % num_heads == 0`); the chapter checks it
    // as it reads the setting.
    if (is_int && !strcmp(attr, "num_heads")) {
        char src[4096];
        good_path(ch, src, sizeof src);
        hid_t good = H5Fopen(src, H5F_ACC_RDONLY, H5P_DEFAULT);
        MUST(good);
        long long width = H5Aexists(good, "embed_dim") > 0 ? root_int(good, "embed_dim") : 0;
        H5Fclose(good);
        long long heads = 2;
        while (width > 1 && heads < width && width % heads == 0) heads++;
        if (width > 1 && heads < width) {
            ACASE("not_dividing");
            put_int_attr(f, attr, heads);
            snprintf(mention, sizeof mention, "num_heads = %lld&%lld", heads, width);
            end(f, kase, ch, path, mention, "prefix");
        }
    }
#undef ACASE
#undef ADONE
#undef ADONE_WITH
}

// The `chapter` attribute names the program; every chapter checks it.
void chapter_attr_cases(const Chapter *ch) {
    char path[4096];
    hid_t f = begin(ch, "attr_wrong_value:chapter", path, sizeof path);
    put_string_attr(f, "chapter", "ch03_9_no_such_chapter");
    end(f, "attr_wrong_value:chapter", ch, path, "chapter", "prefix");

    // A value with terminal controls in it: C0 (ESC, BEL), DEL, C1 as a raw
    // byte (0x9b, CSI) and as UTF-8 (U+009B). Quoted in the error, escaped.
    f = begin(ch, "attr_control_characters:chapter", path, sizeof path);
    put_string_attr(f, "chapter", "ch03\x1b[2J\x07\x7f\x9b" "31m\xc2\x9b" "0m");
    end(f, "attr_control_characters:chapter", ch, path, "chapter&\\x1b[2J\\x07\\x7f\\x9b31m\\xc2\\x9b0m", "prefix");
}
