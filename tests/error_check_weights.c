// error_check_weights.c: part of error_check.c (included there): --weights
// FILE.pth given a checkpoint it must refuse, and --dump onto the .pth.
//
// With --fixtures-dir DIR (the source tree's fixtures/), on the chapter of
// CausalAttention (ch03_5_3_causal_attention):
//   - every bad case of DIR/pth/cases.tsv (tools/cases/pth_cases.py: not a zip,
//     truncated, a wrong CRC-32, a huge record, a short storage, strides or
//     an offset out of range, another dtype, os.system or builtins.eval, a
//     pickle without STOP or that never ends, ...) as --weights, with
//     --dump: exit 1, one line naming the file and saying the case's words,
//     the .pth byte for byte as it was, no dump made, nothing printed;
//   - --dump onto the .pth being read, as given, through "./" and through a
//     symbolic link: refused in one line naming the target and "a state_dict
//     (--weights)", nothing printed, the .pth unchanged;
// and on the chapter each case names, every case of DIR/weights/bad.tsv
// (tools/cases/weights_cases.py: CausalAttention's missing key, unexpected keys,
// wrong shape and other mask; the bonus notebook's MHAPyTorchClass given
// its nn.MultiheadAttention's state_dict alone, MHAPyTorchSDPAWithoutFlash
// a bool mask other than its own), as --weights [MODULE=]FILE on the fixture
// the case names, with --dump: the same checks, the refusal once the module
// is made (torch's load_state_dict comes after it).
// Each file is a copy in the chapter's scratch directory, never the source
// tree's own.

static const char *weights_chapter = "ch03_5_3_causal_attention";

// module: "" for the plain --weights FILE; fixture: NULL for the chapter's own.
static int weights_case(Chapter *ch, const char *kase, const char *src, const char *module, const char *fixture,
                        const char *words, int before_output) {
    char pth[4600], dump[4400], arg[4700];
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    path_in(pth, sizeof pth, base);
    path_in(dump, sizeof dump, "weights_dump.h5");
    copy_file(src, pth);
    snprintf(arg, sizeof arg, "%s%s%s", module, *module ? "=" : "", pth);
    char fx[4600];
    const char *fx_base = fixture ? (strrchr(fixture, '/') ? strrchr(fixture, '/') + 1 : fixture) : NULL;
    if (fixture) path_in(fx, sizeof fx, fx_base), copy_file(fixture, fx);
    char *args[] = {"--weights", arg, "--dump", dump, fixture ? "--fixture" : NULL, fx, NULL};
    const char *inputs[] = {pth, fixture ? fx : NULL, NULL};
    Verdict v;
    if (!run_or_fail(kase, ch->name, args, NULL, inputs, &v)) return 1;
    check_failure(ch->name, 1, &v);
    must_mention_path(&v, pth);
    must_mention(&v, "", words);
    if (before_output && *v.run.out) reason(&v, "printed on stdout before refusing the file");
    const char *keep[] = {base, fx_base, NULL};
    check_dump_dir(&v, g.scratch, keep, NULL, NULL);
    finish(kase, ch->name, &v);
    unlink(pth);
    if (fixture) unlink(fx);
    return 1;
}

// The bad lines of a cases file, tab-separated: "bad NAME WORDS" (pth), run
// on ch; or "NAME CHAPTER MODULE FIXTURE WORDS" (weights), run if CHAPTER is
// ch, MODULE and FIXTURE "-" for the plain --weights FILE and the chapter's
// own fixture.
static int weights_cases_of(Chapter *ch, const char *dir, const char *tsv, int pth_format) {
    char path[4400], line[4096];
    snprintf(path, sizeof path, "%s/%s", dir, tsv);
    FILE *f = fopen(path, "r");
    if (!f) die_setup("the cases of --weights", path);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || !line[0]) continue;
        char *save = NULL, *first = strtok_r(line, "\t", &save);
        if (pth_format && strcmp(first, "bad") != 0) continue;
        char *name = pth_format ? strtok_r(NULL, "\t", &save) : first;
        const char *chapter = pth_format ? ch->name : strtok_r(NULL, "\t", &save);
        const char *module = pth_format ? "-" : strtok_r(NULL, "\t", &save);
        const char *fixture = pth_format ? "-" : strtok_r(NULL, "\t", &save);
        char *words = strtok_r(NULL, "\t", &save);
        if (!name || !chapter || !module || !fixture || !words) die_setup("a line NAME CHAPTER MODULE FIXTURE WORDS", path);
        if (strcmp(chapter, ch->name) != 0) continue;
        char src[4600], kase[300], fixture_path[4600];
        snprintf(src, sizeof src, "%s/%s.pth", dir, name);
        snprintf(fixture_path, sizeof fixture_path, "%s/%s", dir, fixture);
        snprintf(kase, sizeof kase, "weights_%s", name);
        if (!selected(kase)) continue;
        // A file pth refuses is refused at the start; a state_dict the module
        // refuses, once the module is made (torch's load_state_dict, after it).
        n += weights_case(ch, kase, src, strcmp(module, "-") ? module : "",
                          strcmp(fixture, "-") ? fixture_path : NULL, words, pth_format);
    }
    fclose(f);
    return n;
}

static int weights_dump_cases(Chapter *ch, const char *good_pth) {
    char rel[4400], pth[PATH_MAX], soft[4400];
    path_in(rel, sizeof rel, "model.pth");
    path_in(soft, sizeof soft, "link_to_model.pth");
    copy_file(good_pth, rel);
    if (symlink("model.pth", soft) != 0) die_setup("a symbolic link", soft);
    // Absolute: the runs below start in the scratch directory (for "./model.pth").
    if (!realpath(rel, pth)) die_setup("an absolute path", rel);
    char soft_abs[PATH_MAX + 32];
    snprintf(soft_abs, sizeof soft_abs, "%.*s/link_to_model.pth", (int)(strrchr(pth, '/') - pth), pth);
    struct {
        const char *kase, *target;
    } t[] = {
        {"dump_onto_the_weights", pth},
        {"dump_onto_the_weights_through_dot", "./model.pth"},
        {"dump_onto_a_symlink_to_the_weights", soft_abs},
    };
    const char *inputs[] = {pth, NULL};
    const char *keep[] = {"model.pth", "link_to_model.pth", NULL};
    int n = 0;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (!selected(t[i].kase)) continue;
        char *args[] = {"--weights", pth, "--dump", (char *)t[i].target, NULL};
        RunOptions opt = {0};
        opt.cwd = g.scratch;  // "./model.pth" from there
        Verdict v;
        n++;
        if (!run_or_fail(t[i].kase, ch->name, args, &opt, inputs, &v)) continue;
        check_failure(ch->name, 1, &v);
        must_mention(&v, "", t[i].target);
        must_mention(&v, "", "a state_dict (--weights)&expected&found");
        if (*v.run.out) reason(&v, "printed on stdout before refusing");
        check_dump_dir(&v, g.scratch, keep, NULL, NULL);
        finish(t[i].kase, ch->name, &v);
    }
    unlink(soft);
    unlink(rel);
    return n;
}

static int weights_cases(Chapter *ch) {
    if (!g.fixtures_dir || !ch->draws_weights) return 0;  // a chapter without --weights
    if (!begin_scratch(ch, "weights", "weights cases")) return 0;
    char pth_dir[4400], weights_dir[4400], good[4500];
    snprintf(pth_dir, sizeof pth_dir, "%s/pth", g.fixtures_dir);
    snprintf(weights_dir, sizeof weights_dir, "%s/weights", g.fixtures_dir);
    snprintf(good, sizeof good, "%s/ca.pth", weights_dir);
    int n = weights_cases_of(ch, weights_dir, "bad.tsv", 0);
    if (!strcmp(ch->name, weights_chapter)) {
        n += weights_cases_of(ch, pth_dir, "cases.tsv", 1);
        n += weights_dump_cases(ch, good);
    }
    remove_tree(g.scratch);
    return n;
}
