// error_check_weights.c: part of error_check.c (included there): --weights
// [NAME=]FILE[:KEY] given a checkpoint it must refuse, a command line it must
// refuse, and --dump onto the .pth.
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
//   - the file's path: missing, a directory, unreadable (mode 000; as root the
//     chapter runs without root's power over file modes, so that holds): exit 1, the line names
//     the file and what the system found; a file named w=1.pth given as
//     ./w=1.pth, and one named run:best given as run:best:, are read (exit 0,
//     the chapter's note names the file); run:best is the file run and the
//     KEY best (refused: no such file run);
// on every chapter that makes modules, --weights w=1.pth (the module w, which
// none makes): exit 2 before anything is printed, the line naming the value,
// the chapter's modules as its --help lists them, and ./w=1.pth;
// and on the chapter each case names, every case of DIR/weights/bad.tsv
// (tools/cases/weights_cases.py: CausalAttention's missing key, unexpected keys,
// wrong shape, transposed weight, keys with the prefix `module.` or
// `_orig_mod.`, other mask, a training checkpoint without its key,
// torch.save(model), dict(named_parameters()); the bonus
// notebook's MHAPyTorchClass given its nn.MultiheadAttention's state_dict
// alone, MHAPyTorchSDPAWithoutFlash a bool mask other than its own), as
// --weights ARG on the fixture the case names, with --dump: the same checks,
// the refusal of a state_dict once the module is made (torch's
// load_state_dict comes after it).
// Each file is a copy in the chapter's scratch directory, never the source
// tree's own.

static const char *weights_chapter = "ch03_5_3_causal_attention";

// arg: the --weights value, '@' standing for the file (a copy of src);
// fixture: NULL for the chapter's own.
static int weights_case(Chapter *ch, const char *kase, const char *src, const char *arg_form, const char *fixture,
                        const char *words, int before_output) {
    char pth[4600], dump[4400], arg[9400];
    const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
    path_in(pth, sizeof pth, base);
    path_in(dump, sizeof dump, "weights_dump.h5");
    copy_file(src, pth);
    const char *at = strchr(arg_form, '@');
    if (!at) die_setup("a --weights value with @ for its file", arg_form);
    snprintf(arg, sizeof arg, "%.*s%s%s", (int)(at - arg_form), arg_form, pth, at + 1);
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
    unlink(dump);  // a run that wrongly went on: the next case starts clean
    if (fixture) unlink(fx);
    return 1;
}

// The bad lines of a cases file, tab-separated: "bad NAME WORDS" (pth), run
// on ch as --weights FILE; or "NAME CHAPTER FILE ARG FIXTURE WHOSE WORDS"
// (weights), run if CHAPTER is ch, FIXTURE "-" for the chapter's own.
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
        const char *file = pth_format ? name : strtok_r(NULL, "\t", &save);
        const char *arg = pth_format ? "@" : strtok_r(NULL, "\t", &save);
        const char *fixture = pth_format ? "-" : strtok_r(NULL, "\t", &save);
        const char *whose = pth_format ? "reader" : strtok_r(NULL, "\t", &save);
        char *words = strtok_r(NULL, "\t", &save);
        if (!name || !chapter || !file || !arg || !fixture || !whose || !words)
            die_setup(pth_format ? "a line bad NAME WORDS" : "a line NAME CHAPTER FILE ARG FIXTURE WHOSE WORDS", path);
        if (strcmp(chapter, ch->name) != 0) continue;
        char src[4600], kase[300], fixture_path[4600];
        snprintf(src, sizeof src, "%s/%s.pth", dir, file);
        snprintf(fixture_path, sizeof fixture_path, "%s/%s", dir, fixture);
        snprintf(kase, sizeof kase, "weights_%s", name);
        if (!selected(kase)) continue;
        // A file pth refuses is refused at the start; a state_dict the module
        // refuses, once the module is made (torch's load_state_dict, after it).
        n += weights_case(ch, kase, src, arg, strcmp(fixture, "-") ? fixture_path : NULL, words, pth_format);
    }
    fclose(f);
    return n;
}

// A run that must read the --weights file: exit 0, nothing on stderr, and
// the chapter's note that `module` took its parameters from `shown`.
static void weights_read_case(Chapter *ch, const char *kase, const char *value, const char *module,
                              const char *shown) {
    char *args[] = {"--weights", (char *)value, NULL};
    RunOptions opt = {0};
    opt.cwd = g.scratch;
    Verdict v;
    if (!run_or_fail(kase, ch->name, args, &opt, NULL, &v)) return;
    if (v.run.exit_code != 0 || *v.run.err)
        reason(&v, "exit %d, stderr '%s': expected 0 and nothing", v.run.exit_code, v.line);
    char note[4600];
    snprintf(note, sizeof note, "# %s.load_state_dict(torch.load(\"%s\")): its parameters from that file", module, shown);
    if (!strstr(v.run.out, note)) reason(&v, "stdout has no line '%s'", note);
    snprintf(v.line, sizeof v.line, "(--weights %s: exit %d)", value, v.run.exit_code);
    finish(kase, ch->name, &v);
}

// The file's path: missing, a directory, unreadable; file names holding '='
// and ':' (cli.h's rule), each a copy of `good` (CausalAttention's).
static int weights_path_cases(Chapter *ch, const char *good) {
    char p[4400], eq[4400], colon[4400];
    int n = 0;
    struct {
        const char *kase, *name, *mention;
        int make;  // 0 nothing, 1 a directory, 2 a file of mode 000
    } t[] = {
        {"weights_missing", "no_such.pth", "expected a readable file&no such file or directory", 0},
        {"weights_directory", "dir.pth", "expected a regular file&is a directory", 1},
        {"weights_unreadable", "unreadable.pth", "expected a readable file&permission denied", 2},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (!selected(t[i].kase)) continue;
        path_in(p, sizeof p, t[i].name);
        if (t[i].make == 1 && mkdir(p, 0755) != 0) die_setup("a directory", p);
        if (t[i].make == 2) copy_file(good, p), chmod(p, 0);
        char *args[] = {"--weights", p, NULL};
        RunOptions opt = {0};
        opt.unprivileged = 1;  // as root: without its power over file modes, so mode 000 holds
        Verdict v;
        n++;
        if (!run_or_fail(t[i].kase, ch->name, args, &opt, NULL, &v)) continue;
        check_failure(ch->name, 1, &v);
        must_mention_path(&v, p);
        must_mention(&v, "", t[i].mention);
        if (*v.run.out) reason(&v, "printed on stdout before refusing the file");
        finish(t[i].kase, ch->name, &v);
        if (t[i].make == 1) rmdir(p);
        else unlink(p);
    }
    // w=1.pth and run:best, read as the files they are when given as the rule says.
    path_in(eq, sizeof eq, "w=1.pth");
    path_in(colon, sizeof colon, "run:best");
    copy_file(good, eq);
    copy_file(good, colon);
    if (selected("weights_path_with_equals")) weights_read_case(ch, "weights_path_with_equals", "./w=1.pth", "ca", "./w=1.pth"), n++;
    if (selected("weights_path_with_colon")) weights_read_case(ch, "weights_path_with_colon", "run:best:", "ca", "run:best"), n++;
    if (selected("weights_path_with_colon_and_key")) {
        // run:best is the file run and the KEY best: no such file run.
        char *args[] = {"--weights", "run:best", NULL};
        RunOptions opt = {0};
        opt.cwd = g.scratch;
        Verdict v;
        n++;
        if (run_or_fail("weights_path_with_colon_and_key", ch->name, args, &opt, NULL, &v)) {
            check_failure(ch->name, 1, &v);
            must_mention(&v, "", ": run: expected a readable file&no such file");
            finish("weights_path_with_colon_and_key", ch->name, &v);
        }
    }
    unlink(eq);
    unlink(colon);
    return n;
}

// --weights w=1.pth on a chapter that makes modules: the module w, which it
// does not make, refused before anything runs, with the modules its --help
// lists (the chapter's own list: chapter.h's chapter_begin), and the file's
// other spelling, ./w=1.pth.
static int weights_unknown_module_case(Chapter *ch) {
    if (!selected("weights_unknown_module")) return 0;
    char *args[] = {"--weights", "w=1.pth", NULL};
    Verdict v;
    if (!run_or_fail("weights_unknown_module", ch->name, args, NULL, NULL, &v)) return 1;
    check_failure(ch->name, 2, &v);
    char want[1200];
    snprintf(want, sizeof want, "--weights w=1.pth&no module w&(it makes %s)&./w=1.pth", ch->modules);
    must_mention(&v, "", want);
    if (*v.run.out) reason(&v, "printed on stdout before refusing its command line");
    finish("weights_unknown_module", ch->name, &v);
    return 1;
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
    if (ch->modules[0]) n += weights_unknown_module_case(ch);
    if (!strcmp(ch->name, weights_chapter)) {
        n += weights_cases_of(ch, pth_dir, "cases.tsv", 1);
        n += weights_dump_cases(ch, good);
        n += weights_path_cases(ch, good);
    }
    remove_tree(g.scratch);
    return n;
}
