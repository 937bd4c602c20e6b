// error_check: bad input is an answer, never a crash.
//
//   error_check [--wrap "CMD ARG..."] [--time-limit S] [--only TEXT]... CHAPTER_DIR CATALOGUE
//
// CATALOGUE is the catalogue.tsv that tools/make_malformed writes: one broken
// fixture per line (case, chapter, path, extra arguments, the dataset or
// attribute the error must name, and what stdout may hold). Every chapter
// is run on every case of its own, and on a table of bad command lines, and
// must answer each with:
//   - exit 1 for bad input, 2 for a usage error: never 0, never a signal;
//   - exactly one line on stderr, "<chapter>: ...", that for a fixture names
//     the file, the dataset or attribute at fault, what it "expected" and
//     what it "found";
//   - no HDF5 error stack ("HDF5-DIAG", "#000:") on either stream;
//   - within the time limit (1 s);
//   - on stdout nothing but what it prints for the good fixture, up to where
//     it stopped (or, when the broken thing changes what comes first, no
//     nan or inf: nothing computed from garbage).
// Each chapter's untouched copy (case `good`) must run clean: exit 0, empty
// stderr; so the check can fail both ways.
//
// One line per case: "ok|FAIL|SKIP <case> <chapter>: <the stderr line>",
// the reasons of a FAIL indented below it, then a summary. Exits 1 on any FAIL.
// --wrap runs every chapter under a tool (valgrind); --only runs the cases
// whose name contains TEXT (and the good ones).
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MAX_CASES 4096
#define MAX_CHAPTERS 16
#define MAX_ARGS 64

typedef struct {
    char *kase, *chapter, *path, *extra, *mention, *rule;
} Case;

typedef struct {
    const char *name;
    int draws_weights;  // its --help offers --seed
    char *good_out;     // what it prints on its good fixture (NULL until run)
    char *good_path;    // that fixture
} Chapter;

static struct {
    const char *chapter_dir;
    char catalogue_dir[4096];
    char *wrap[16];
    int n_wrap;
    double time_limit;
    const char *only[64];
    int n_only;
    Chapter chapters[MAX_CHAPTERS];
    int n_chapters;
    int ok, failed, skipped;
    double slowest;
    char slowest_case[256];
} g;

// --- one run -----------------------------------------------------------------

typedef struct {
    RunResult run;
    char line[1024];      // stderr's first line, for the report
    char why[8][256];     // reasons for a FAIL
    int n_why;
} Verdict;

static void reason(Verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(Verdict *v, const char *fmt, ...) {
    if (v->n_why >= 8) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why[v->n_why++], sizeof v->why[0], fmt, ap);
    va_end(ap);
}

static Chapter *chapter_named(const char *name) {
    for (int i = 0; i < g.n_chapters; i++)
        if (!strcmp(g.chapters[i].name, name)) return &g.chapters[i];
    if (g.n_chapters == MAX_CHAPTERS) {
        fprintf(stderr, "error_check: more than %d chapters\n", MAX_CHAPTERS);
        exit(1);
    }
    g.chapters[g.n_chapters] = (Chapter){name, 0, NULL, NULL};
    return &g.chapters[g.n_chapters++];
}

// Runs the chapter with `args` (NULL-terminated), under --wrap if given.
static int run_chapter(const char *kase, const char *chapter, char *const args[], Verdict *v) {
    char exe[4096];
    snprintf(exe, sizeof exe, "%s/%s", g.chapter_dir, chapter);
    char *argv[MAX_ARGS + 20];
    int n = 0;
    for (int i = 0; i < g.n_wrap; i++) argv[n++] = g.wrap[i];
    argv[n++] = exe;
    for (int i = 0; args[i] && n < MAX_ARGS + 18; i++) argv[n++] = args[i];
    argv[n] = NULL;
    memset(v, 0, sizeof *v);
    // A chapter that blocks (a FIFO as fixture) or spins is killed long
    // after the 1 s it is allowed, so the case fails instead of the suite hanging.
    const double kill_after = g.n_wrap ? 120.0 : 10.0;
    if (!run_program(argv, kill_after, &v->run)) {
        reason(v, "cannot run %s", exe);
        return 0;
    }
    if (v->run.timed_out) reason(v, "still running after %.0f s: killed", kill_after);
    snprintf(v->line, sizeof v->line, "%.*s", (int)strcspn(v->run.err, "\n"), v->run.err);
    if (v->run.seconds > g.slowest) {
        g.slowest = v->run.seconds;
        snprintf(g.slowest_case, sizeof g.slowest_case, "%s %s", kase, chapter);
    }
    return 1;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

// HDF5's error stack starts "HDF5-DIAG: Error detected" and numbers its frames "#000:".
static void check_no_hdf5_stack(Verdict *v) {
    const char *streams[2] = {v->run.out, v->run.err};
    for (int i = 0; i < 2; i++)
        if (strstr(streams[i], "HDF5-DIAG") || strstr(streams[i], "#000:"))
            reason(v, "HDF5's error stack on %s", i ? "stderr" : "stdout");
}

// The rules every failing run must keep: exit code, one line, named, quiet, fast.
static void check_failure(const char *chapter, int want_exit, Verdict *v) {
    int code = v->run.exit_code;
    if (code != want_exit)
        reason(v, "exit %d%s, expected %d", code, code > 128 ? " (killed by a signal)" : "", want_exit);
    int lines = count_lines(v->run.err);
    size_t len = strlen(v->run.err);
    int unterminated = len && v->run.err[len - 1] != '\n';
    if (lines != 1 || unterminated)
        reason(v, "stderr has %d line%s%s, expected exactly one", lines, lines == 1 ? "" : "s",
               unterminated ? " and an unterminated one" : "");
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s: ", chapter);
    if (strncmp(v->run.err, prefix, strlen(prefix)) != 0) reason(v, "the line does not start with '%s'", prefix);
    check_no_hdf5_stack(v);
    if (g.time_limit > 0 && v->run.seconds >= g.time_limit)
        reason(v, "took %.3f s, limit %.3f s", v->run.seconds, g.time_limit);
}

static void must_mention(Verdict *v, const char *what, const char *text) {
    if (*text && !strstr(v->line, text)) reason(v, "the line does not mention %s '%s'", what, text);
}

// --- stdout ------------------------------------------------------------------

// The next line of `s` that is not a cell marker (">>> code", which echoes
// attributes such as d_out); NULL at the end. *len is its length.
static const char *next_value_line(const char **s, size_t *len) {
    while (**s) {
        const char *line = *s;
        size_t n = strcspn(line, "\n");
        *s = line + n + (line[n] == '\n');
        if (strncmp(line, ">>> ", 4) != 0) {
            *len = n;
            return line;
        }
    }
    return NULL;
}

static int has_word(const char *line, size_t len, const char *word) {
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= len; i++) {
        if (strncmp(line + i, word, w) != 0) continue;
        int before = i > 0 && ((line[i - 1] >= 'a' && line[i - 1] <= 'z') || line[i - 1] == '_');
        int after = i + w < len && ((line[i + w] >= 'a' && line[i + w] <= 'z') || line[i + w] == '_');
        if (!before && !after) return 1;
    }
    return 0;
}

// What a chapter prints before it stops: whole lines; under rule "prefix",
// the values the good run printed, in the same order; under "finite", no nan
// or inf where the good run printed none (the book itself shows a naive
// softmax overflowing to nan).
static void check_stdout(Verdict *v, const char *rule, const char *good) {
    const char *out = v->run.out;
    size_t len = strlen(out);
    if (len && out[len - 1] != '\n') reason(v, "stdout ends in the middle of a line");
    const char *p = out, *q = good ? good : "";
    size_t n, m;
    const char *line, *want;
    int row = 0;
    while ((line = next_value_line(&p, &n)) != NULL) {
        row++;
        want = next_value_line(&q, &m);
        if (strcmp(rule, "prefix") != 0) {
            int bad = has_word(line, n, "nan") || has_word(line, n, "inf");
            int book = want && (has_word(want, m, "nan") || has_word(want, m, "inf"));
            if (bad && !book) {
                reason(v, "stdout value line %d holds nan or inf: %.*s", row, (int)(n > 80 ? 80 : n), line);
                return;
            }
            continue;
        }
        if (!want || n != m || strncmp(line, want, n) != 0) {
            reason(v, "stdout value line %d is not the good run's: %.*s", row, (int)(n > 80 ? 80 : n), line);
            return;
        }
    }
}

// --- reporting -----------------------------------------------------------------

static void report(const char *status, const char *kase, const char *chapter, Verdict *v) {
    printf("%s %s %s: %s\n", status, kase, chapter, v->line);
    for (int i = 0; i < v->n_why; i++) printf("    - %s\n", v->why[i]);
}

static void finish(const char *kase, const char *chapter, Verdict *v) {
    if (v->n_why) g.failed++;
    else g.ok++;
    report(v->n_why ? "FAIL" : "ok", kase, chapter, v);
    run_result_free(&v->run);
}

static int selected(const char *kase) {
    if (g.n_only == 0 || !strcmp(kase, "good")) return 1;
    for (int i = 0; i < g.n_only; i++)
        if (strstr(kase, g.only[i])) return 1;
    return 0;
}

// --- the catalogue -------------------------------------------------------------

static int read_catalogue(const char *path, Case *cases) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "error_check: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    char buf[8192];
    int n = 0;
    while (fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n') continue;
        buf[strcspn(buf, "\n")] = '\0';
        char *field[6], *s = buf;
        int k = 0;
        for (; k < 6 && s; k++) {
            field[k] = s;
            s = strchr(s, '\t');
            if (s) *s++ = '\0';
        }
        if (k != 6 || n == MAX_CASES) {
            fprintf(stderr, "error_check: %s: malformed line %d (%d fields)\n", path, n + 1, k);
            exit(1);
        }
        Case *c = &cases[n++];
        char **slot[6] = {&c->kase, &c->chapter, &c->path, &c->extra, &c->mention, &c->rule};
        for (int i = 0; i < 6; i++) {
            *slot[i] = strdup(field[i]);
            if (!*slot[i]) exit(1);
        }
        chapter_named(c->chapter);
    }
    fclose(f);
    return n;
}

// --help says whether the chapter takes --seed, i.e. draws weights.
static void probe_chapter(Chapter *ch) {
    Verdict v;
    char *args[] = {"--help", NULL};
    if (!run_chapter("help", ch->name, args, &v)) {
        report("FAIL", "help", ch->name, &v);
        g.failed++;
        return;
    }
    if (v.run.exit_code != 0 || *v.run.err) reason(&v, "--help: exit %d, stderr '%s'", v.run.exit_code, v.line);
    ch->draws_weights = strstr(v.run.out, "--seed") != NULL;
    snprintf(v.line, sizeof v.line, "--help (%s weights)", ch->draws_weights ? "draws" : "draws no");
    finish("help", ch->name, &v);
}

// The untouched copy: exit 0, nothing on stderr, some output. Kept for "prefix".
static void check_good(const Case *c) {
    Chapter *ch = chapter_named(c->chapter);
    ch->good_path = c->path;
    char *args[] = {"--fixture", c->path, NULL};
    Verdict v;
    if (!run_chapter(c->kase, c->chapter, args, &v)) {
        report("FAIL", c->kase, c->chapter, &v);
        g.failed++;
        return;
    }
    if (v.run.exit_code != 0) reason(&v, "exit %d, expected 0", v.run.exit_code);
    if (*v.run.err) reason(&v, "stderr is not empty");
    if (!*v.run.out) reason(&v, "printed nothing");
    check_no_hdf5_stack(&v);
    if (g.time_limit > 0 && v.run.seconds >= g.time_limit)
        reason(&v, "took %.3f s, limit %.3f s", v.run.seconds, g.time_limit);
    if (!v.n_why) {
        ch->good_out = strdup(v.run.out);
        snprintf(v.line, sizeof v.line, "(accepted: exit 0, %zu bytes on stdout, stderr empty)", strlen(v.run.out));
    }
    finish(c->kase, c->chapter, &v);
}

// A file the catalogue made unreadable, which this process can read anyway:
// root ignores permissions. Then the case proves nothing.
static int permissions_ignored(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0444) == 0 && access(path, R_OK) == 0;
}

static void check_case(const Case *c) {
    if (permissions_ignored(c->path)) {
        printf("SKIP %s %s: %s has mode 000 but is readable here (euid %d): permissions do not apply\n", c->kase,
               c->chapter, c->path, (int)geteuid());
        g.skipped++;
        return;
    }
    char extra[1024], *args[MAX_ARGS];
    int n = 0;
    args[n++] = "--fixture", args[n++] = c->path;
    snprintf(extra, sizeof extra, "%s", c->extra);
    for (char *tok = strtok(extra, " "); tok && n < MAX_ARGS - 1; tok = strtok(NULL, " ")) args[n++] = tok;
    args[n] = NULL;
    Verdict v;
    if (!run_chapter(c->kase, c->chapter, args, &v)) {
        report("FAIL", c->kase, c->chapter, &v);
        g.failed++;
        return;
    }
    check_failure(c->chapter, 1, &v);
    must_mention(&v, "the fixture", c->path);
    must_mention(&v, "", c->mention);
    must_mention(&v, "", "expected");
    must_mention(&v, "", "found");
    Chapter *ch = chapter_named(c->chapter);
    if (!ch->good_out) reason(&v, "no good run to compare stdout with");
    check_stdout(&v, c->rule, ch->good_out);
    finish(c->kase, c->chapter, &v);
}

// --- bad command lines -----------------------------------------------------------

enum { ALL, DRAWS, FIXED };  // which chapters a command line applies to

typedef struct {
    const char *kase;
    const char *args[6];
    int exit_code;
    const char *mention;  // "@DUMP", "@DIR", "@GOOD": the paths made below
    int applies;
} CommandLine;

static const CommandLine command_lines[] = {
    {"unknown_option", {"--bogus"}, 2, "--bogus", ALL},
    {"unknown_option_with_value", {"--fixtures=x.h5"}, 2, "--fixtures", ALL},
    {"fixture_without_value", {"--fixture"}, 2, "--fixture", ALL},
    {"fixture_empty_value", {"--fixture="}, 2, "--fixture", ALL},
    {"seed_without_value", {"--seed"}, 2, "--seed", ALL},
    {"seed_not_a_number", {"--seed", "abc"}, 2, "--seed", ALL},
    {"seed_above_2^64-1", {"--seed", "18446744073709551616"}, 2, "--seed", ALL},
    {"seed_below_-2^63", {"--seed", "-9223372036854775809"}, 2, "--seed", ALL},
    {"seed_on_a_chapter_without_weights", {"--seed", "123"}, 2, "--seed", FIXED},
    {"skip_without_seed", {"--skip", "3"}, 2, "--skip", ALL},
    {"skip_negative", {"--seed", "1", "--skip", "-3"}, 2, "--skip", DRAWS},
    {"skip_not_a_number", {"--seed", "1", "--skip", "x"}, 2, "--skip", DRAWS},
    {"group_without_fixture", {"--group", "g"}, 2, "--group", ALL},
    {"stray_argument", {"stray"}, 2, "stray", ALL},
    {"stray_after_help", {"--help", "stray"}, 2, "stray", ALL},
    {"dump_into_missing_directory", {"--dump", "@DUMP"}, 1, "@DUMP", ALL},
    {"dump_onto_a_directory", {"--dump", "@DIR"}, 1, "@DIR", ALL},
    // HDF5 refuses to truncate a file it has open: the fixture survives.
    {"dump_onto_the_fixture", {"--fixture", "@GOOD", "--dump", "@GOOD"}, 1, "@GOOD", ALL},
};

static void check_command_line(const CommandLine *cl, Chapter *ch) {
    if ((cl->applies == DRAWS && !ch->draws_weights) || (cl->applies == FIXED && ch->draws_weights)) return;
    if (!selected(cl->kase)) return;
    // A path in a directory that does not exist, a directory, the good fixture.
    char dump[4200], dir[4200];
    snprintf(dump, sizeof dump, "%s/no_such_directory/dump.h5", g.catalogue_dir);
    snprintf(dir, sizeof dir, "%s", g.catalogue_dir);
    char *good = ch->good_path ? ch->good_path : "good.h5";
    char *args[8];
    int n = 0;
    for (; n < 6 && cl->args[n]; n++)
        args[n] = !strcmp(cl->args[n], "@DUMP") ? dump : !strcmp(cl->args[n], "@DIR") ? dir
                : !strcmp(cl->args[n], "@GOOD") ? good : (char *)cl->args[n];
    args[n] = NULL;
    const char *mention = !strcmp(cl->mention, "@DUMP") ? dump : !strcmp(cl->mention, "@DIR") ? dir
                        : !strcmp(cl->mention, "@GOOD") ? good : cl->mention;
    Verdict v;
    if (!run_chapter(cl->kase, ch->name, args, &v)) {
        report("FAIL", cl->kase, ch->name, &v);
        g.failed++;
        return;
    }
    check_failure(ch->name, cl->exit_code, &v);
    must_mention(&v, "", mention);
    if (cl->exit_code == 1) {  // a path that is bad input: said as for a fixture
        must_mention(&v, "", "expected");
        must_mention(&v, "", "found");
    }
    if (*v.run.out) reason(&v, "printed on stdout before checking its command line");
    finish(cl->kase, ch->name, &v);
}

// --- main ----------------------------------------------------------------------

static void usage(void) {
    fprintf(stderr, "usage: error_check [--wrap \"CMD ARG...\"] [--time-limit S] [--only TEXT]... "
                    "CHAPTER_DIR CATALOGUE\n");
    exit(2);
}

// --wrap's command, split on spaces; its program found on PATH.
static void set_wrap(char *text) {
    for (char *tok = strtok(text, " "); tok && g.n_wrap < 15; tok = strtok(NULL, " ")) g.wrap[g.n_wrap++] = tok;
    if (!g.n_wrap || strchr(g.wrap[0], '/')) return;
    const char *path = getenv("PATH");
    char dirs[4096], *save = NULL;
    snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        static char full[4200];
        snprintf(full, sizeof full, "%s/%s", d, g.wrap[0]);
        if (access(full, X_OK) == 0) {
            g.wrap[0] = full;
            return;
        }
    }
    fprintf(stderr, "error_check: --wrap: %s not found on PATH\n", g.wrap[0]);
    exit(2);
}

int main(int argc, char **argv) {
    g.time_limit = 1.0;
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--wrap") && i + 1 < argc) set_wrap(argv[++i]);
        else if (!strcmp(argv[i], "--time-limit") && i + 1 < argc) g.time_limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc && g.n_only < 64) g.only[g.n_only++] = argv[++i];
        else usage();
    }
    if (argc - i != 2) usage();
    g.chapter_dir = argv[i];
    snprintf(g.catalogue_dir, sizeof g.catalogue_dir, "%s", argv[i + 1]);
    char *slash = strrchr(g.catalogue_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(g.catalogue_dir, sizeof g.catalogue_dir, ".");

    static Case cases[MAX_CASES];
    int n = read_catalogue(argv[i + 1], cases);
    for (int c = 0; c < g.n_chapters; c++) probe_chapter(&g.chapters[c]);
    int goods = 0;
    for (int c = 0; c < n; c++)
        if (!strcmp(cases[c].kase, "good")) check_good(&cases[c]), goods++;
    for (int c = 0; c < n; c++)
        if (strcmp(cases[c].kase, "good") && selected(cases[c].kase)) check_case(&cases[c]);
    for (int c = 0; c < g.n_chapters; c++)
        for (size_t k = 0; k < sizeof command_lines / sizeof command_lines[0]; k++)
            check_command_line(&command_lines[k], &g.chapters[c]);

    if (goods != g.n_chapters) {
        printf("FAIL the catalogue has %d good cases for %d chapters\n", goods, g.n_chapters);
        g.failed++;
    }
    int total = g.ok + g.failed + g.skipped;
    printf("%d runs: %d ok, %d FAIL, %d SKIP (catalogue: %d fixtures for %d chapters; plus --help and %zu command "
           "lines each); slowest %.3f s (%s)\n",
           total, g.ok, g.failed, g.skipped, n, g.n_chapters, sizeof command_lines / sizeof command_lines[0],
           g.slowest, g.slowest_case);
    return g.failed || total == 0 ? 1 : 0;
}
