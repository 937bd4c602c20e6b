// test_cli: the chapters' command line, case by case.
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int failures;

// Parses `args` (space-separated) and checks the outcome; `want_err` is a
// fragment the error must contain, or NULL when parsing must succeed.
// argv (at most 15 words, NULL after them) from `args`, split at spaces
// into `copy`; returns argc.
static int split_args(const char *args, char copy[256], char *argv[16]) {
    int argc = 1;
    argv[0] = "chapter";
    snprintf(copy, 256, "%s", args);
    for (char *tok = strtok(copy, " "); tok && argc < 15; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc] = NULL;
    return argc;
}

static void expect(int allow_seed, const char *args, const char *want_err) {
    char copy[256], err[256] = "";
    char *argv[16];
    int argc = split_args(args, copy, argv);
    Options opt;
    int rc = cli_parse(argc, argv, allow_seed, &opt, err, sizeof err);
    int ok = want_err ? (rc == CLI_USAGE && strstr(err, want_err) != NULL) : rc == CLI_OK;
    printf("%s cli_parse(%s)%s%s\n", ok ? "ok  " : "FAIL", args, *err ? ": " : "", err);
    failures += !ok;
}

static void test_accepts(void) {
    expect(1, "", NULL);
    expect(1, "--fixture f.h5", NULL);
    expect(1, "--fixture=f.h5 --group g --dump d.h5", NULL);
    expect(1, "--seed 123", NULL);
    expect(1, "--seed 123 --seed exercise_3_1=7", NULL);
    expect(1, "--seed 1 --skip 1000000000", NULL);
    expect(1, "--threads 2", NULL);
    expect(1, "--seed -1 --skip 18", NULL);
    expect(1, "--seed 18446744073709551615", NULL);
    expect(1, "--seed -9223372036854775808", NULL);
    expect(0, "--help", NULL);
    expect(CLI_SEEDS | CLI_TEXT, "--text my.txt --seed 5 --seed variant_a=7", NULL);
    expect(CLI_TEXT, "--text=my.txt", NULL);
}

static void test_rejects(void) {
    expect(1, "--bogus", "unknown option '--bogus'");
    expect(1, "stray", "unexpected argument 'stray'");
    expect(1, "--fixture", "--fixture needs a value");
    expect(1, "--fixture=", "needs a non-empty value");
    expect(1, "--seed abc", "--seed: expected an integer");
    expect(1, "--seed 12a", "--seed: expected an integer");
    expect(1, "--seed 18446744073709551616", "--seed: expected an integer");
    expect(1, "--seed -9223372036854775809", "--seed: expected an integer");
    expect(1, "--skip 3", "--skip only means something with --seed");
    expect(1, "--seed 1 --skip -3", "--skip: expected a count");
    expect(1, "--group g", "--group needs --fixture");
    expect(0, "--seed 123", "this chapter draws nothing at random");
    expect(1, "--seed 1 --skip 1000000001", "--skip: expected a count");
    expect(1, "--seed Bad-Site=1", "--seed: expected N or SITE=N");
    expect(1, "--seed site=x", "--seed: expected an integer");
    expect(1, "--threads 0", "--threads: expected a count");
    expect(1, "--threads 65", "--threads: expected a count");
    expect(1, "--text my.txt", "--text: this chapter reads no text");
    expect(CLI_SEEDS | CLI_TEXT, "--text", "--text needs a value");
    expect(CLI_SEEDS | CLI_TEXT, "--text=", "needs a non-empty value");
}

// An option given twice is a usage error that names it, never its first
// (or last) value taken silently; --seed is once per SITE.
static void test_repeats(void) {
    expect(1, "--seed 1 --seed 2", "--seed given twice");
    expect(1, "--seed=1 --seed 1", "--seed given twice");
    expect(1, "--seed exercise_3_1=1 --seed exercise_3_1=2", "--seed exercise_3_1=N given twice");
    expect(1, "--seed exercise_3_1=1 --seed 5 --seed exercise_3_1=1", "--seed exercise_3_1=N given twice");
    expect(1, "--seed exercise_3_1=1 --seed exercise_3_3=2 --seed 3", NULL);
    expect(1, "--fixture a.h5 --fixture b.h5", "--fixture given twice");
    expect(1, "--fixture=a.h5 --group g --group h", "--group given twice");
    expect(1, "--dump a.h5 --dump=b.h5", "--dump given twice");
    expect(1, "--threads 2 --threads 2", "--threads given twice");
    expect(1, "--seed 1 --skip 2 --skip 3", "--skip given twice");
    expect(0, "--fixture a.h5 --fixture a.h5", "--fixture given twice");
    expect(0, "--help --help", NULL);
    expect(CLI_SEEDS | CLI_TEXT, "--text a.txt --text b.txt", "--text given twice");
}

static void test_values(void) {
    Options opt;
    char err[256];
    char *argv[] = {"chapter", "--seed", "-1", "--skip", "18", NULL};
    int rc = cli_parse(5, argv, 1, &opt, err, sizeof err);
    // manual_seed(-1) seeds with 2^64 - 1 (lib/NUMERICS.md#the-generator).
    int ok = rc == CLI_OK && opt.n_seeds == 1 && opt.seeds[0].value == UINT64_MAX && opt.skip == 18;
    printf("%s --seed -1 --skip 18 -> seed %llu, skip %lld\n", ok ? "ok  " : "FAIL",
           (unsigned long long)opt.seeds[0].value, opt.skip);
    failures += !ok;
    char *argv2[] = {"chapter", "--seed", "exercise_3_1=123", NULL};
    rc = cli_parse(3, argv2, 1, &opt, err, sizeof err);
    ok = rc == CLI_OK && opt.n_seeds == 1 && !strcmp(opt.seeds[0].site, "exercise_3_1") && opt.seeds[0].value == 123;
    printf("%s --seed exercise_3_1=123 -> site '%s', seed %llu\n", ok ? "ok  " : "FAIL", opt.seeds[0].site,
           (unsigned long long)opt.seeds[0].value);
    failures += !ok;
    char *argv3[] = {"chapter", "--text", "my sentence.txt", NULL};
    rc = cli_parse(3, argv3, CLI_SEEDS | CLI_TEXT, &opt, err, sizeof err);
    ok = rc == CLI_OK && opt.text && !strcmp(opt.text, "my sentence.txt") && opt.n_seeds == 0;
    printf("%s --text 'my sentence.txt' -> text '%s'\n", ok ? "ok  " : "FAIL", opt.text ? opt.text : "(none)");
    failures += !ok;
}

// One --weights value as cli.h's rule reads it: NAME, FILE and KEY ("" for none).
static void expect_weights_value(const char *value, const char *name, const char *path, const char *key) {
    Options opt;
    char err[512] = "", copy[256];
    snprintf(copy, sizeof copy, "%s", value);
    char *argv[] = {"chapter", "--weights", copy, NULL};
    int rc = cli_parse(3, argv, CLI_SEEDS | CLI_WEIGHTS, &opt, err, sizeof err);
    int ok = rc == CLI_OK && opt.n_weights == 1 && !strcmp(opt.weights[0].name, name) &&
             !strcmp(opt.weights[0].path, path) && !strcmp(opt.weights[0].key, key);
    printf("%s --weights '%s' -> NAME '%s', FILE '%s', KEY '%s'%s%s\n", ok ? "ok  " : "FAIL", value,
           rc == CLI_OK ? opt.weights[0].name : "", rc == CLI_OK ? opt.weights[0].path : "",
           rc == CLI_OK ? opt.weights[0].key : "", *err ? ": " : "", err);
    failures += !ok;
}

static void test_weights_values(void) {
    expect_weights_value("ca.pth", "", "ca.pth", "");
    expect_weights_value("ca=ca.pth", "ca", "ca.pth", "");
    expect_weights_value("exercise_3_1.sa_v1=/dir/f.pth", "exercise_3_1.sa_v1", "/dir/f.pth", "");
    // A file whose name holds '=': its part before '=' is no module's name.
    expect_weights_value("w=1.pth", "w", "1.pth", "");
    expect_weights_value("./w=1.pth", "", "./w=1.pth", "");
    expect_weights_value("ca=./w=1.pth", "ca", "./w=1.pth", "");
    expect_weights_value("3d=f.pth", "", "3d=f.pth", "");
    expect_weights_value("a.=f.pth", "", "a.=f.pth", "");
    expect_weights_value("a..b=f.pth", "", "a..b=f.pth", "");
    expect_weights_value("sa v2=f.pth", "", "sa v2=f.pth", "");
    // :KEY: letters, digits and '_' after the last ':'.
    expect_weights_value("ckpt.pth:model_state_dict", "", "ckpt.pth", "model_state_dict");
    expect_weights_value("ca=/dir/ckpt.pth:model_state_dict", "ca", "/dir/ckpt.pth", "model_state_dict");
    expect_weights_value("a:b.pth", "", "a:b.pth", "");
    expect_weights_value("a:b:c", "", "a:b", "c");
    expect_weights_value("f.pth:2nd", "", "f.pth:2nd", "");
    expect_weights_value(":key", "", ":key", "");
    expect_weights_value("ca=:key", "ca", ":key", "");
    // A value that ends in ':' loses that ':' and has no KEY.
    expect_weights_value("run:best:", "", "run:best", "");
    expect_weights_value("f.pth:", "", "f.pth", "");
    expect_weights_value("run:best::", "", "run:best:", "");
    expect(CLI_SEEDS | CLI_WEIGHTS, "--weights ca=", "--weights ca=: expected a FILE");
    expect(CLI_SEEDS | CLI_WEIGHTS, "--weights :", "expected a FILE");
    expect(CLI_SEEDS | CLI_WEIGHTS, "--weights a.pth --weights b.pth", "--weights FILE given twice");
    expect(CLI_SEEDS | CLI_WEIGHTS, "--weights ca=a.pth --weights ca=b.pth", "--weights ca= given twice");
    expect(CLI_SEEDS, "--weights a.pth", "--weights: this chapter makes no module");
}

// cli_weights_modules over a command line: each --weights value's module (an
// index into modules), or the usage error's fragment.
static void expect_modules(const char *args, const char *const *modules, const int *want, const char *want_err) {
    char copy[256], err[512] = "";
    char *argv[16];
    int argc = split_args(args, copy, argv);
    Options opt;
    int rc = cli_parse(argc, argv, CLI_SEEDS | CLI_WEIGHTS, &opt, err, sizeof err);
    if (rc == CLI_OK) rc = cli_weights_modules(&opt, modules, err, sizeof err);
    int ok = want_err ? rc == CLI_USAGE && strstr(err, want_err) != NULL : rc == CLI_OK;
    for (int i = 0; ok && !want_err && i < opt.n_weights; i++) ok = opt.weights[i].module == want[i];
    printf("%s modules of %s:", ok ? "ok  " : "FAIL", args);
    for (int i = 0; rc == CLI_OK && i < opt.n_weights; i++) printf(" %s", modules[opt.weights[i].module]);
    printf("%s%s\n", *err ? ": " : "", err);
    failures += !ok;
}

static void test_weights_modules(void) {
    static const char *const two[] = {"mha", "exercise_3_2.mha", NULL};
    static const char *const one[] = {"ca", NULL};
    static const char *const none[] = {NULL};
    // NAME=FILE takes its module, whichever comes first; FILE the first module left.
    expect_modules("--weights a.pth --weights mha=b.pth", two, (const int[]){1, 0}, NULL);
    expect_modules("--weights mha=b.pth --weights a.pth", two, (const int[]){0, 1}, NULL);
    expect_modules("--weights exercise_3_2.mha=b.pth --weights a.pth", two, (const int[]){1, 0}, NULL);
    expect_modules("--weights a.pth --weights exercise_3_2.mha=b.pth", two, (const int[]){0, 1}, NULL);
    expect_modules("--weights a.pth", one, (const int[]){0}, NULL);
    expect_modules("--weights ca=b.pth", one, (const int[]){0}, NULL);
    expect_modules("--weights a.pth --weights ca=b.pth", one, NULL, "--weights a.pth: every module this chapter makes (ca)");
    expect_modules("--weights ca=b.pth --weights a.pth", one, NULL, "--weights a.pth: every module this chapter makes (ca)");
    expect_modules("--weights w=1.pth", one, NULL, "--weights w=1.pth: this chapter makes no module w (it makes ca)");
    expect_modules("--weights w=1.pth", one, NULL, "./w=1.pth");
    expect_modules("--weights w=1.pth", two, NULL, "(it makes mha, exercise_3_2.mha)");
    expect_modules("--weights a.pth", none, NULL, "this chapter makes no module that --weights loads");
    expect_modules("--weights a.pth", NULL, NULL, "this chapter makes no module that --weights loads");
    expect_modules("--seed 1", none, NULL, NULL);
}

int main(void) {
    test_accepts();
    test_weights_values();
    test_weights_modules();
    test_rejects();
    test_repeats();
    test_values();
    printf("%s\n", failures ? "FAILED" : "all command lines parsed as expected");
    return failures ? 1 : 0;
}
