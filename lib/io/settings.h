// settings.h: the attributes a fixture gives a chapter, and the rule each is
// checked against (type and range). One table, read by the chapters'
// runtime (config.c) and by the errors catalogue (tools/cases/malformed/attributes.c),
// which breaks every rule on purpose.
#ifndef LITATTN_SETTINGS_H
#define LITATTN_SETTINGS_H

typedef enum {
    SETTING_INT,    // an int64 scalar in [min, max]
    SETTING_BOOL,   // an int64 scalar, 0 or 1
    SETTING_FLOAT,  // a Python float as its repr() string, in [min, max]
    SETTING_SEED,   // torch.manual_seed's argument, a Python int in decimal, as a string
    SETTING_TEXT,   // a string
} SettingKind;

typedef struct {
    const char *name;
    SettingKind kind;
    long long min, max;   // SETTING_INT and SETTING_BOOL: the range; SETTING_FLOAT: as doubles
    const char *about;
} SettingRule;

extern const SettingRule setting_rules[];
extern const int n_setting_rules;

// The rule of attribute `name`, or NULL. A name may carry a site prefix
// ("exercise_3_3.d_in", "sa_v2.seed"): the rule of its last part applies.
const SettingRule *setting_rule(const char *name);

#endif
