// fixture_check: runs a chapter on a fixture with --dump and compares every
// tensor the chapter computed with the one PyTorch computed, in ulps.
//
//   fixture_check [--from-seed] [--max-ulp N] [--allow NAME=N]... CHAPTER FIXTURE [GROUP]
//   fixture_check --sweep CHAPTER_DIR [--from-seed] [--max-ulp N] SWEEP_FILE
//
// Compared: every dataset of the fixture with role "output" and, with
// --from-seed (the chapter draws its own weights with the fixture's seed),
// every "weight" too. One line per tensor with its worst ulp distance and
// where; fails when a tensor is missing, has another shape, or is farther
// than --max-ulp (or its --allow exception).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"
#include "ulp.h"

typedef struct {
    int from_seed;
    unsigned max_ulp;
    const char *allow_name[16];
    unsigned allow_ulp[16];
    int n_allow;
} Options;

typedef struct {
    const Options *opt;
    Fixture *want, *got;
    const char *label;
    int failures, compared;
    unsigned worst;
} Compare;

static unsigned limit_for(const Options *opt, const char *name) {
    for (int i = 0; i < opt->n_allow; i++)
        if (!strcmp(opt->allow_name[i], name)) return opt->allow_ulp[i];
    return opt->max_ulp;
}

static void compare_one(const char *name, const char *role, void *ctx) {
    Compare *c = ctx;
    int is_weight = !strcmp(role, "weight");
    if (strcmp(role, "output") && !(is_weight && c->opt->from_seed)) return;
    char err[FIXTURE_ERR_LEN];
    Tensor want, got;
    Shape any = {0, {SHAPE_ANY, SHAPE_ANY}};
    for (any.ndim = 0; any.ndim <= 2; any.ndim++)
        if (fixture_read(c->want, name, any, &want, err)) break;
    if (any.ndim > 2) {
        printf("FAIL %s %s: cannot read the expected tensor: %s\n", c->label, name, err);
        c->failures++;
        return;
    }
    if (!fixture_read(c->got, name, tensor_shape(want), &got, err)) {
        printf("FAIL %s %s: %s\n", c->label, name, err);
        c->failures++;
        return;
    }
    unsigned worst = 0;
    int at = 0;
    for (int i = 0; i < tensor_numel(want); i++) {
        uint32_t d = ulp_distance(got.data[i], want.data[i]);
        if (d > worst) worst = d, at = i;
    }
    unsigned limit = limit_for(c->opt, name);
    int ok = worst <= limit;
    printf("%s %s %-40s worst %u ulp", ok ? "ok  " : "FAIL", c->label, name, worst);
    if (worst) printf(" at flat index %d (C %.9g, PyTorch %.9g)", at, (double)got.data[at], (double)want.data[at]);
    printf("%s\n", ok ? "" : " > allowed");
    if (!ok) c->failures++;
    c->compared++;
    if (worst > c->worst) c->worst = worst;
}

// Runs one chapter on one fixture (or one group of it) and compares. `want`:
// that fixture or group already open (the sweep's, from one snapshot), or
// NULL to open it here.
static int check(const Options *opt, const char *chapter, const char *path, const char *group, Fixture *want,
                 unsigned *worst) {
    char label[256], dump[512], seed[64], skip[32];
    snprintf(label, sizeof label, "%s", group ? group : strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    temp_path(dump, sizeof dump, "dump");
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)chapter;
    argv[n++] = "--fixture", argv[n++] = (char *)path;
    if (group) argv[n++] = "--group", argv[n++] = (char *)group;
    argv[n++] = "--dump", argv[n++] = dump;
    if (opt->from_seed) {
        if (want ? !fixture_seed_args_of(want, seed, sizeof seed, skip, sizeof skip)
                 : !fixture_seed_args(path, group, seed, sizeof seed, skip, sizeof skip)) {
            unlink(dump);
            return 1;
        }
        argv[n++] = "--seed", argv[n++] = seed, argv[n++] = "--skip", argv[n++] = skip;
    }
    argv[n] = NULL;
    RunResult run;
    if (!run_program(argv, RUN_LIMIT_SECONDS, &run)) {
        printf("FAIL %s: cannot run %s\n", label, chapter);
        unlink(dump);
        return 1;
    }
    int failures = 0;
    if (run.exit_code != 0) {
        printf("FAIL %s: %s exited %d: %s", label, chapter, run.exit_code, run.err);
        failures = 1;
    } else {
        char err[FIXTURE_ERR_LEN];
        Compare c = {opt, want ? want : fixture_open(path, group, err), NULL, label, 0, 0, 0};
        // The dump is this test's own output: trusted with more values per dataset.
        FixtureOptions trusted = {.max_elements = HARNESS_MAX_ELEMENTS};
        c.got = c.want ? fixture_open_with(dump, NULL, &trusted, err) : NULL;
        if (!c.want || !c.got) {
            printf("FAIL %s: %s\n", label, err);
            failures = 1;
        } else if (!fixture_each_dataset(c.want, compare_one, &c, err)) {
            printf("FAIL %s: %s\n", label, err);
            failures = 1;
        } else {
            failures = c.failures + (c.compared == 0);
            if (c.compared == 0) printf("FAIL %s: nothing to compare (no dataset with role \"output\")\n", label);
            if (c.worst > *worst) *worst = c.worst;
        }
        if (!want) fixture_close(c.want);
        fixture_close(c.got);
    }
    run_result_free(&run);
    unlink(dump);
    tensor_release_all();
    return failures;
}

// The sweep: one group per configuration, each naming its chapter.
typedef struct {
    const char *chapter_dir, *path;
    const Options *opt;
    Fixture *all;  // every group, from one snapshot of the file
    int failures, groups;
    unsigned worst;
} Sweep;

static void check_group(const char *name, const char *role, void *ctx) {
    (void)role;
    Sweep *sw = ctx;
    char err[FIXTURE_ERR_LEN], chapter_name[128], chapter[1024];
    Fixture *grp = fixture_group(sw->all, name, err);
    int ok = grp && fixture_attr_string(grp, "chapter", chapter_name, sizeof chapter_name, err);
    sw->groups++;
    if (!ok) {
        printf("FAIL %s\n", err);
        fixture_close(grp);
        sw->failures++;
        return;
    }
    snprintf(chapter, sizeof chapter, "%s/%s", sw->chapter_dir, chapter_name);
    sw->failures += check(sw->opt, chapter, sw->path, name, grp, &sw->worst) != 0;
    fixture_close(grp);
}

static void usage(void) {
    fprintf(stderr, "usage: fixture_check [--from-seed] [--max-ulp N] [--allow NAME=N]... CHAPTER FIXTURE [GROUP]\n"
                    "       fixture_check --sweep CHAPTER_DIR [--from-seed] [--max-ulp N] SWEEP_FILE\n");
    exit(2);
}

int main(int argc, char **argv) {
    Options opt = {0};
    const char *sweep_dir = NULL;
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--from-seed")) opt.from_seed = 1;
        else if (!strcmp(argv[i], "--max-ulp") && i + 1 < argc) opt.max_ulp = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sweep") && i + 1 < argc) sweep_dir = argv[++i];
        else if (!strcmp(argv[i], "--allow") && i + 1 < argc && opt.n_allow < 16) {
            char *eq = strchr(argv[++i], '=');
            if (!eq) usage();
            *eq = '\0';
            opt.allow_name[opt.n_allow] = argv[i];
            opt.allow_ulp[opt.n_allow++] = (unsigned)atoi(eq + 1);
        } else usage();
    }
    unsigned worst = 0;
    int failures = 0, runs = 0;
    if (sweep_dir) {
        if (argc - i != 1) usage();
        char err[FIXTURE_ERR_LEN];
        Fixture *fx = fixture_open_all(argv[i], err);
        Sweep sw = {sweep_dir, argv[i], &opt, fx, 0, 0, 0};
        if (!fx || !fixture_each_group(fx, check_group, &sw, err)) {
            printf("FAIL %s\n", err);
            return 1;
        }
        fixture_close(fx);
        failures = sw.failures + (sw.groups == 0);
        if (sw.groups == 0) printf("FAIL %s: no configurations\n", argv[i]);
        runs = sw.groups;
        worst = sw.worst;
    } else {
        if (argc - i < 2 || argc - i > 3) usage();
        failures = check(&opt, argv[i], argv[i + 1], argc - i == 3 ? argv[i + 2] : NULL, NULL, &worst);
        runs = 1;
    }
    printf("%d run%s, %d failed, worst distance %u ulp (allowed %u)\n", runs, runs == 1 ? "" : "s", failures, worst,
           opt.max_ulp);
    return failures ? 1 : 0;
}
