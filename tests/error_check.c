// error_check: bad input is an answer, never a crash, a hang or lost data.
//
//   error_check [--full | --table CHAPTERS_TXT] [--list] [--wrap "CMD ARG..."] [--cpu-limit S]
//               [--chapter NAME] [--only TEXT]... [--vocab GPT2_TIKTOKEN] [--fixtures-dir DIR]
//               CHAPTER_DIR CATALOGUE
//
// CATALOGUE is the catalogue.tsv that make_malformed (tools/cases/malformed/) writes: one broken
// fixture per line (case, chapter, path, extra arguments, what the error
// must name, and what stdout may hold). Every chapter (or, with --chapter,
// one: meson runs one shard per chapter, in parallel) is run on every case
// of its own, on a table of bad command lines, and on the process-level
// cases below, and must answer each with:
//   - exit 1 for bad input, 2 for a usage error: never 0, never a signal;
//   - exactly one line on stderr, "<chapter>: ...", that for a fixture names
//     the file (as text_escape shows it), the dataset or attribute at fault,
//     what it "expected" and what it "found";
//   - no raw control character on stderr (C0, DEL, C1 raw or as UTF-8);
//   - no HDF5 error stack ("HDF5-DIAG", "#000:") on either stream;
//   - within the CPU-time limit: 1 s of user + system time (4 s under a
//     sanitizer), the chapter's reader child included; a busy machine
//     stretches wall time, not this (a chapter still running after 60 s of
//     wall time is killed);
//   - on stdout nothing but what it prints for the good fixture, up to where
//     it stopped (or, when the broken thing changes what comes first, no
//     nan or inf: nothing computed from garbage);
//   - every input file (the case's fixture, the good copy, the fixture it
//     came from) byte for byte as it was before the run.
// Each chapter's untouched copy (case `good`) must run clean: exit 0, empty
// stderr; so the check can fail both ways. A case attr_KIND:NAME runs only
// if the chapter refused attr_probe:NAME (the attribute with a value of
// another type): a chapter that accepts it does not read NAME at all.
//
// With --fixtures-dir, the --weights cases (error_check_weights.c): bad
// checkpoints and --dump onto the .pth, on the chapter of CausalAttention.
//
// The process-level cases (process_cases below) run the chapter with --dump
// onto its own fixture however named, onto files that are no regular
// files, past RLIMIT_FSIZE, on a "full device" (a seccomp filter), killed by
// a signal while the dump is half written; on a path longer than PATH_MAX;
// on a fixture that a writer holds locked, that is being swapped for a
// FIFO, or under a low descriptor limit; and kill a chapter while its
// reader child runs, to see the child go too.
//
// One line per case: "ok|FAIL|SKIP <case> <chapter>: <the stderr line>",
// the reasons of a FAIL indented below it, then a summary. Exits 1 on any FAIL.
// --wrap runs every chapter under a tool (valgrind; the process-level cases
// are then skipped); --only runs the cases whose name contains TEXT (and the
// good ones); --list prints the cases that would run, and runs none.
//
// Which cases run. --full (or LITATTN_TESTS=full in the environment, which
// `meson test --setup full` sets) runs all of the above on every chapter.
// Without it, a representative selection, the same on every run
// (choose_cases below; CHAPTERS_TXT, chapters/chapters.txt, says which
// chapters draw):
//   - the catalogue: each kind of broken fixture once (a kind is the case's
//     name up to ':', e.g. weight_float64). The k-th kind, counted in
//     catalogue order, runs in the (k mod n)-th of the n chapters that have
//     it (table order), so consecutive kinds go to consecutive chapters; in
//     that chapter, on the dataset or attribute it has broken the fewest
//     times so far (the first in catalogue order among equals), so the
//     kinds of one chapter spread over its inputs, weights, random tensors
//     and attributes. An attr_KIND:NAME case brings its attr_probe:NAME
//     along (it runs only after the probe). Every chapter's good case runs.
//   - the bad command lines: the k-th line of the table runs on the
//     (k mod n)-th of the n chapters it applies to.
//   - the process-level cases: all of them, on two chapters, one of each
//     kind: the first of the table that draws nothing (it reads one input)
//     and the first that draws (it reads weights and seeds as well). What
//     they exercise (the reader child, --dump, signals, limits) is the
//     runtime's, which every chapter shares; what differs between chapters
//     is what they read.
#define _GNU_SOURCE  // F_SETPIPE_SZ
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "fixture.h"
#include "harness.h"

#define MAX_CASES 8192
#define MAX_CHAPTERS 64
#define MAX_ARGS 64
#define MAX_GUARDED 4

typedef struct {
    char *kase, *chapter, *path, *extra, *mention, *rule;
    int chosen;  // in the selection that runs (every case with --full)
} Case;

typedef struct {
    const char *name;
    int draws_weights;  // its --help offers --seed
    int reads_text;     // its --help offers --text (the data-loading chapter): text_cases
    int runs_sizes;     // its --help offers --context-len (the bonus notebook's chapter)
    char modules[1024]; // the modules its --help lists for --weights, "sa_v2, exercise_3_1.sa_v1" ("": none)
    char *good_out;     // what it prints on its good fixture (NULL until run)
    double good_cpu;    // and the CPU time that took
    double dump_cpu;    // the CPU time of a good run with --dump (0 until run)
    char *good_path;    // that fixture
    // A catalogue case that fails after --dump has begun (too many tokens:
    // refused once the scores would be made), and what its error names.
    char *late_failure, *late_mention;
    // Attributes the chapter was probed for: read (refused a value of another type) or not.
    char *probed[64];
    int probe_read[64], n_probed;
} Chapter;

static struct {
    const char *chapter_dir, *only_chapter;
    const char *fixtures_dir;  // --fixtures-dir: the source tree's fixtures/ (error_check_weights.c)
    const char *vocab;  // --vocab: GPT-2's vocabulary, for the cases of a chapter that reads a text
    int full;  // --full or LITATTN_TESTS=full: every case, not the selection
    // chapters.txt (--table): each chapter and whether it draws, in table order
    char table[MAX_CHAPTERS][128];
    int table_draws[MAX_CHAPTERS], table_sizes[MAX_CHAPTERS], n_table;
    int catalogue_total, catalogue_kinds;  // the whole catalogue, every chapter's
    int command_lines_run;
    char catalogue_dir[4096], scratch[4200];
    char *wrap[16];
    int n_wrap;
    double cpu_limit;
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
    char line[ERROR_LINE_LEN + 256];  // stderr's first line, whole, for the checks and the report
    double cpu_allowed;   // the CPU time this run may take
    char why[8][320];     // reasons for a FAIL
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
    g.chapters[g.n_chapters] = (Chapter){.name = name};
    return &g.chapters[g.n_chapters++];
}

// A file's bytes, to see that a run left it as it was (NULL: not a regular file).
typedef struct {
    const char *path;
    char *bytes;
    size_t len;
} Guard;

static void guard_take(Guard *gd, const char *path) {
    gd->path = path, gd->bytes = NULL, gd->len = 0;
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0444)) return;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    gd->bytes = malloc((size_t)st.st_size + 1);
    gd->len = gd->bytes ? fread(gd->bytes, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
}

static void guard_check(Guard *gd, Verdict *v) {
    if (!gd->bytes) return;
    Guard now;
    guard_take(&now, gd->path);
    if (!now.bytes || now.len != gd->len || memcmp(now.bytes, gd->bytes, gd->len) != 0)
        reason(v, "input file %s changed (%zu bytes before, %zu after)", gd->path, gd->len, now.len);
    free(now.bytes);
    free(gd->bytes);
    gd->bytes = NULL;
}

// A build for coverage (meson's b_coverage) writes its counters when a chapter
// exits, and where it cannot (the descriptor, file size and device limits the
// catalogue sets) gcc's runtime says so on stderr. Those lines are the
// measurement's, not the chapter's: dropped there, and only there.
static void drop_coverage_lines(char *err) {
#ifdef LITATTN_COVERAGE
    char *w = err;
    for (const char *p = err; *p;) {
        size_t n = strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
        if (strncmp(p, "libgcov profiling error:", 24) != 0 && strncmp(p, "profiling:", 10) != 0) {
            memmove(w, p, n);
            w += n;
        }
        p += n;
    }
    *w = '\0';
#else
    (void)err;
#endif
}

// Runs the chapter with `args` (NULL-terminated), under --wrap if given,
// with `opt` (NULL: defaults), checking afterwards that every file of
// `inputs` (NULL-terminated, up to MAX_GUARDED) is byte for byte unchanged.
static int run_chapter_with(const char *kase, const char *chapter, char *const args[], const RunOptions *opt,
                            const char *const *inputs, Verdict *v) {
    char exe[4096];
    snprintf(exe, sizeof exe, "%s/%s", g.chapter_dir, chapter);
    char *argv[MAX_ARGS + 20];
    int n = 0;
    for (int i = 0; i < g.n_wrap; i++) argv[n++] = g.wrap[i];
    argv[n++] = exe;
    for (int i = 0; args[i] && n < MAX_ARGS + 18; i++) argv[n++] = args[i];
    argv[n] = NULL;
    memset(v, 0, sizeof *v);
    Guard guards[MAX_GUARDED];
    int n_guards = 0;
    for (; inputs && inputs[n_guards] && n_guards < MAX_GUARDED; n_guards++) guard_take(&guards[n_guards], inputs[n_guards]);
    // A chapter that blocks or spins is killed long after the CPU second it
    // is allowed, so the case fails instead of the suite hanging.
    RunOptions o = opt ? *opt : (RunOptions){0};
    if (!o.limit) o.limit = g.n_wrap ? 300.0 : 60.0;
    int started = run_program_with(argv, &o, &v->run);
    for (int i = 0; i < n_guards; i++) guard_check(&guards[i], v);
    if (!started) {
        reason(v, "cannot run %s", exe);
        return 0;
    }
    if (v->run.timed_out) reason(v, "still running after %.0f s: killed", o.limit);
    // A refusal is quick; a case that fails only at the end (a --dump that
    // cannot be written) may take what the chapter's whole computation takes.
    // The good run itself is the measurement: it may take what a full
    // computation takes on a busy machine (the wall-clock limit still holds).
    // A run with --dump may take what a good run with --dump took: a write
    // error (a full device, RLIMIT_FSIZE) shows only once the file is closed.
    const Chapter *ch = chapter_named(chapter);
    double reference = ch->good_cpu;
    for (int i = 0; args[i]; i++)
        if (!strcmp(args[i], "--dump") && ch->dump_cpu > reference) reference = ch->dump_cpu;
    v->cpu_allowed = ch->good_out ? g.cpu_limit + 2.0 * reference : 30.0 * g.cpu_limit;
    drop_coverage_lines(v->run.err);
    snprintf(v->line, sizeof v->line, "%.*s", (int)strcspn(v->run.err, "\n"), v->run.err);
    if (v->run.cpu_seconds > g.slowest) {
        g.slowest = v->run.cpu_seconds;
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

// Nothing a terminal acts on: stderr, its line ends aside, reads the same
// escaped (text_escape changes exactly the bytes that are not safe).
static void check_no_control_characters(Verdict *v) {
    const char *p = v->run.err;
    while (*p) {
        size_t n = strcspn(p, "\n");
        char *line = strndup(p, n), safe[8192];
        size_t len = text_escape(safe, sizeof safe, line);
        if (len != n || strcmp(safe, line) != 0) reason(v, "stderr holds raw control characters: %.200s", safe);
        free(line);
        p += n + (p[n] == '\n');
    }
}

static void check_fast(Verdict *v) {
    if (g.cpu_limit > 0 && !g.n_wrap && v->run.cpu_seconds >= v->cpu_allowed)
        reason(v, "took %.3f s of CPU time, limit %.3f s", v->run.cpu_seconds, v->cpu_allowed);
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
    check_no_control_characters(v);
    check_fast(v);
}

// `want`: texts joined by '&' that must all appear, each a list of
// alternatives joined by '|' of which one must.
static void must_mention(Verdict *v, const char *what, const char *want) {
    if (!*want) return;
    char *copy = strdup(want), *save = NULL;
    for (char *all = strtok_r(copy, "&", &save); all; all = strtok_r(NULL, "&", &save)) {
        int found = 0;
        char *alt_copy = strdup(all), *save2 = NULL;
        for (char *alt = strtok_r(alt_copy, "|", &save2); alt && !found; alt = strtok_r(NULL, "|", &save2))
            found = strstr(v->line, alt) != NULL;
        if (!found) reason(v, "the line does not mention %s '%.200s'", what, all);
        free(alt_copy);
    }
    free(copy);
}

// A path as the chapters show it: escaped.
static void must_mention_path(Verdict *v, const char *path) {
    char safe[ERROR_LINE_LEN];
    text_escape(safe, sizeof safe, path);
    if (!strstr(v->line, safe)) reason(v, "the line does not mention the fixture '%.200s'", safe);
}

// --- stdout ------------------------------------------------------------------

// The next line of `s` that is not a cell marker (">>> code", which echoes
// attributes such as d_out); NULL at the end. *len is its length.
static const char *next_value_line(const char **s, size_t *len) {
    while (**s) {
        const char *line = *s;
        size_t n = strcspn(line, "\n");
        *s = line + n + (line[n] == '\n');
        // Markers and the chapter's notes about the run ("# d_out = 3 here;
        // the book has 2") echo attributes; values are what is compared.
        if (strncmp(line, ">>> ", 4) != 0 && strncmp(line, "# ", 2) != 0) {
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
// the values the good run printed, in the same order; under "finite" (and
// "either"), no nan or inf where the good run printed none (the book itself
// shows a naive softmax overflowing to nan).
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

// run_chapter_with; a chapter that cannot be started is the case's FAIL,
// reported and counted here (0: the caller goes on to the next case).
static int run_or_fail(const char *kase, const char *chapter, char *const args[], const RunOptions *opt,
                       const char *const *inputs, Verdict *v) {
    if (run_chapter_with(kase, chapter, args, opt, inputs, v)) return 1;
    report("FAIL", kase, chapter, v);
    g.failed++;
    return 0;
}

static void skip(const char *kase, const char *chapter, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void skip(const char *kase, const char *chapter, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    printf("SKIP %s %s: %s\n", kase, chapter, why);
    g.skipped++;
}

static int selected(const char *kase) {
    if (g.n_only == 0 || !strcmp(kase, "good")) return 1;
    for (int i = 0; i < g.n_only; i++)
        if (strstr(kase, g.only[i])) return 1;
    return 0;
}

// --- the catalogue -------------------------------------------------------------

// A case's kind: its name up to ':' (weight_float64 of weight_float64:W_key);
// its target: what follows, the dataset or attribute broken ("" if none).
static int same_kind(const char *a, const char *b) {
    size_t n = strcspn(a, ":");
    return n == strcspn(b, ":") && !strncmp(a, b, n);
}

static const char *target_of(const char *kase) {
    const char *colon = strchr(kase, ':');
    return colon ? colon + 1 : "";
}

// The default selection (see the top of this file): marks the cases that
// run. Every case with --full; else every good case and, for each kind, one
// case: the k-th kind in the (k mod n)-th of the n chapters that have it,
// on the target broken the fewest times there so far, with the attr_probe
// that an attribute's case needs.
static void choose_cases(Case *cases, int n) {
    int *picked = malloc((size_t)(n + 1) * sizeof *picked), n_picked = 0, k = 0;
    if (!picked) exit(1);
    g.catalogue_total = g.catalogue_kinds = 0;
    for (int i = 0; i < n; i++) {
        cases[i].chosen = g.full || !strcmp(cases[i].kase, "good");
        g.catalogue_total += strcmp(cases[i].kase, "good") != 0;
    }
    for (int i = 0; i < n; i++) {
        const char *kase = cases[i].kase;
        int seen = !strcmp(kase, "good");
        for (int j = 0; j < i && !seen; j++) seen = same_kind(cases[j].kase, kase);
        if (seen) continue;
        g.catalogue_kinds++;
        // Probes come with the attribute cases that need them.
        if (g.full || !strncmp(kase, "attr_probe:", 11)) continue;
        const char *have[MAX_CHAPTERS];
        int n_have = 0;
        for (int j = i; j < n; j++) {
            if (!same_kind(cases[j].kase, kase)) continue;
            int listed = 0;
            for (int h = 0; h < n_have && !listed; h++) listed = !strcmp(have[h], cases[j].chapter);
            if (!listed && n_have < MAX_CHAPTERS) have[n_have++] = cases[j].chapter;
        }
        const char *chapter = have[k++ % n_have];
        int best = -1, best_hits = 0;
        for (int j = i; j < n; j++) {
            if (!same_kind(cases[j].kase, kase) || strcmp(cases[j].chapter, chapter) != 0) continue;
            const char *target = target_of(cases[j].kase);
            int hits = 0;
            for (int p = 0; p < n_picked && *target; p++)
                hits += !strcmp(target_of(cases[picked[p]].kase), target);
            if (best < 0 || hits < best_hits) best = j, best_hits = hits;
        }
        cases[best].chosen = 1;
        picked[n_picked++] = best;
        if (!strncmp(cases[best].kase, "attr_", 5) && *target_of(cases[best].kase))
            for (int j = 0; j < n; j++)
                if (!strncmp(cases[j].kase, "attr_probe:", 11) && !strcmp(cases[j].chapter, chapter) &&
                    !strcmp(cases[j].kase + 11, target_of(cases[best].kase)))
                    cases[j].chosen = 1;
    }
    free(picked);
}

// chapters.txt (--table): the program and draws columns, in table order.
static void read_table(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "error_check: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\n")] = '\0';
        char program[128], draws[16], variants[512], cells[256];
        int cols = sscanf(line, "%127s %15s %511s %255s", program, draws, variants, cells);
        if (cols < 2) continue;
        if (g.n_table == MAX_CHAPTERS || (strcmp(draws, "yes") && strcmp(draws, "no"))) {
            fprintf(stderr, "error_check: %s: cannot read the line of %s\n", path, program);
            exit(1);
        }
        snprintf(g.table[g.n_table], sizeof g.table[0], "%s", program);
        g.table_sizes[g.n_table] = cols == 4 && strstr(cells, "ImplIn[") != NULL;
        g.table_draws[g.n_table++] = !strcmp(draws, "yes");
    }
    fclose(f);
}

// Whether the default selection runs the process-level cases on this
// chapter: the first of the table that draws nothing, the first that draws.
static int process_chapter(const Chapter *ch) {
    if (g.full) return 1;
    int first[2] = {-1, -1};
    for (int i = 0; i < g.n_table; i++)
        if (first[g.table_draws[i]] < 0) first[g.table_draws[i]] = i;
    for (int d = 0; d < 2; d++)
        if (first[d] >= 0 && !strcmp(g.table[first[d]], ch->name)) return 1;
    return 0;
}

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
    }
    fclose(f);
    // The selection is made over every chapter's cases, then this shard
    // keeps its own chapter's (--chapter).
    choose_cases(cases, n);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (g.only_chapter && strcmp(cases[i].chapter, g.only_chapter) != 0) {
            Case *other = &cases[i];
            char *fields[6] = {other->kase, other->chapter, other->path, other->extra, other->mention, other->rule};
            for (int f = 0; f < 6; f++) free(fields[f]);
            continue;
        }
        Case *c = &cases[kept++];
        *c = cases[i];
        Chapter *ch = chapter_named(c->chapter);
        if (!strncmp(c->kase, "too_many_tokens:", 16) && !ch->late_failure) {
            ch->late_failure = c->path;
            ch->late_mention = c->mention;
        }
    }
    return kept;
}

// --help says whether the chapter takes --seed, i.e. draws weights.
static void probe_chapter(Chapter *ch) {
    Verdict v;
    char *args[] = {"--help", NULL};
    if (!run_or_fail("help", ch->name, args, NULL, NULL, &v)) return;
    if (v.run.exit_code != 0 || *v.run.err) reason(&v, "--help: exit %d, stderr '%s'", v.run.exit_code, v.line);
    ch->draws_weights = strstr(v.run.out, "--seed") != NULL;
    ch->reads_text = strstr(v.run.out, "--text") != NULL;
    ch->runs_sizes = strstr(v.run.out, "--context-len") != NULL;
    // The modules: the words after "(as their tensors are named in --dump):" up to "NAME= is read".
    const char *from = strstr(v.run.out, "(as their tensors are named in --dump):\n");
    const char *to = from ? strstr(from, "NAME= is read") : NULL;
    ch->modules[0] = '\0';
    for (const char *c = from ? strchr(from, '\n') + 1 : NULL; c && to && c < to; c++) {
        size_t at = strlen(ch->modules);
        const int blank = *c == ' ' || *c == '\n';
        if (blank && (at == 0 || ch->modules[at - 1] != ',')) continue;  // indentation
        if (at + 1 < sizeof ch->modules) ch->modules[at] = blank ? ' ' : *c, ch->modules[at + 1] = '\0';
    }
    if (strstr(v.run.out, "--weights") && !ch->modules[0]) reason(&v, "--help offers --weights but lists no module");
    snprintf(v.line, sizeof v.line, "--help (%s weights)", ch->draws_weights ? "draws" : "draws no");
    finish("help", ch->name, &v);
}

// The untouched copy: exit 0, nothing on stderr, some output. Kept for "prefix".
static void check_good(const Case *c) {
    Chapter *ch = chapter_named(c->chapter);
    ch->good_path = c->path;
    char *args[] = {"--fixture", c->path, NULL};
    const char *inputs[] = {c->path, NULL};
    Verdict v;
    if (!run_or_fail(c->kase, c->chapter, args, NULL, inputs, &v)) return;
    if (v.run.exit_code != 0) reason(&v, "exit %d, expected 0", v.run.exit_code);
    if (*v.run.err) reason(&v, "stderr is not empty");
    if (!*v.run.out) reason(&v, "printed nothing");
    check_no_hdf5_stack(&v);
    check_fast(&v);
    if (!v.n_why) {
        ch->good_out = strdup(v.run.out);
        ch->good_cpu = v.run.cpu_seconds;
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

// attr_KIND:NAME: NAME, when the case is about an attribute (else NULL).
static const char *attribute_of(const char *kase) {
    return !strncmp(kase, "attr_", 5) && strchr(kase, ':') ? strchr(kase, ':') + 1 : NULL;
}

static int *probe_result(Chapter *ch, const char *attr) {
    for (int i = 0; i < ch->n_probed; i++)
        if (!strcmp(ch->probed[i], attr)) return &ch->probe_read[i];
    return NULL;
}

static void check_case(const Case *c) {
    Chapter *ch = chapter_named(c->chapter);
    if (permissions_ignored(c->path)) {
        skip(c->kase, c->chapter, "%s has mode 000 but this process can read it (euid %d): permissions do not apply",
             c->path, (int)geteuid());
        return;
    }
    const char *attr = attribute_of(c->kase);
    int is_probe = attr && !strncmp(c->kase, "attr_probe:", 11);
    if (attr && !is_probe) {
        int *read = probe_result(ch, attr);
        if (read && !*read) {
            skip(c->kase, c->chapter, "the chapter does not read attribute '%s' (attr_probe:%s)", attr, attr);
            return;
        }
    }
    char extra[1024], *args[MAX_ARGS];
    int n = 0;
    args[n++] = "--fixture", args[n++] = c->path;
    snprintf(extra, sizeof extra, "%s", c->extra);
    for (char *tok = strtok(extra, " "); tok && n < MAX_ARGS - 1; tok = strtok(NULL, " ")) args[n++] = tok;
    args[n] = NULL;
    const char *inputs[] = {c->path, ch->good_path, NULL};
    Verdict v;
    if (!run_or_fail(c->kase, c->chapter, args, NULL, inputs, &v)) return;
    if (is_probe && ch->n_probed < 64) {
        ch->probed[ch->n_probed] = strdup(attr);
        ch->probe_read[ch->n_probed++] = v.run.exit_code != 0;
        if (v.run.exit_code == 0 && !*v.run.err && !v.n_why) {
            skip(c->kase, c->chapter, "the chapter accepts attribute '%s' of another type: it does not read it, "
                 "and its attr_*:%s cases are skipped", attr, attr);
            run_result_free(&v.run);
            return;
        }
    }
    if (!strcmp(c->rule, "either") && v.run.exit_code == 0) {
        // A file that is valid for this chapter: accepted cleanly.
        if (*v.run.err) reason(&v, "exit 0 with stderr not empty");
        check_no_hdf5_stack(&v);
        check_fast(&v);
        check_stdout(&v, "finite", ch->good_out);
        snprintf(v.line, sizeof v.line, "(accepted: exit 0)");
        finish(c->kase, c->chapter, &v);
        return;
    }
    check_failure(c->chapter, 1, &v);
    must_mention_path(&v, c->path);
    must_mention(&v, "", c->mention);
    must_mention(&v, "", "expected");
    must_mention(&v, "", "found");
    if (!ch->good_out) reason(&v, "no good run to compare stdout with");
    check_stdout(&v, c->rule, ch->good_out);
    finish(c->kase, c->chapter, &v);
}

// --- bad command lines -----------------------------------------------------------

// which chapters a command line applies to: all, those that draw, those that
// draw nothing, those that run at other sizes (--context-len: the bonus
// notebook's), those that do not
enum { ALL, DRAWS, FIXED, SIZES, BOOK_SIZES };

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
    {"control_characters_in_an_option", {"--\x1b[2J\x9b\xc2\x9b"}, 2, "--\\x1b[2J\\x9b\\xc2\\x9b", ALL},
    {"dump_into_missing_directory", {"--dump", "@DUMP"}, 1, "@DUMP", ALL},
    {"dump_onto_a_directory", {"--dump", "@DIR"}, 1, "@DIR", ALL},
    {"dump_onto_the_fixture", {"--fixture", "@GOOD", "--dump", "@GOOD"}, 1, "@GOOD", ALL},
    {"text_without_value", {"--text"}, 2, "--text", ALL},
    {"text_empty_value", {"--text="}, 2, "--text", ALL},
    {"context_len_zero", {"--context-len", "0"}, 2, "--context-len&'0'&[1, 2^31 - 1]", SIZES},
    {"context_len_negative", {"--context-len", "-5"}, 2, "--context-len&'-5'&[1, 2^31 - 1]", SIZES},
    {"context_len_not_a_number", {"--context-len", "1k"}, 2, "--context-len&'1k'&[1, 2^31 - 1]", SIZES},
    {"context_len_past_the_settings_range", {"--context-len", "16777217"}, 2, "--context-len&16777217&16777216", SIZES},
    {"batch_size_zero", {"--batch-size", "0"}, 2, "--batch-size&'0'&[1, 2^31 - 1]", SIZES},
    {"batch_size_not_a_number", {"--batch-size", "eight"}, 2, "--batch-size&'eight'&[1, 2^31 - 1]", SIZES},
    {"context_len_given_twice", {"--context-len", "8", "--context-len", "9"}, 2, "--context-len given twice", SIZES},
    {"sizes_past_the_memory_limit", {"--batch-size", "2", "--context-len", "65536"}, 2,
     "--context-len 65536&(2, 65536, 2304)&2^26", SIZES},
    // The widest tensor is the combined QKV projection, 3 x 768 wide: 29127
    // tokens fit, 29128 do not, whichever of batch and length holds them.
    {"sizes_past_the_qkv_limit", {"--batch-size", "1", "--context-len", "29128"}, 2,
     "--context-len 29128&(1, 29128, 2304)&at most 29127", SIZES},
    {"batch_past_the_qkv_limit", {"--batch-size", "29128", "--context-len", "1"}, 2,
     "--batch-size 29128&(29128, 1, 2304)&at most 29127", SIZES},
    {"sizes_with_a_fixture", {"--context-len", "8", "--fixture", "@GOOD"}, 2, "--context-len", SIZES},
    {"sizes_on_a_chapter_at_the_book_sizes", {"--context-len", "8"}, 2, "--context-len", BOOK_SIZES},
};

// Whether a chapter of the table runs at other sizes: its cells are the
// bonus notebook's (ImplIn[...]), and its --help offers --context-len.
static int applies_to(int applies, int draws, int sizes) {
    return applies == ALL || (applies == DRAWS && draws) || (applies == FIXED && !draws) ||
           (applies == SIZES && sizes) || (applies == BOOK_SIZES && !sizes);
}

// The default selection's command lines: the k-th runs on the (k mod n)-th
// of the n chapters of the table it applies to.
static int command_line_chosen(const CommandLine *cl, const Chapter *ch) {
    if (g.full) return 1;
    const char *fit[MAX_CHAPTERS];
    int n = 0, k = (int)(cl - command_lines);
    for (int i = 0; i < g.n_table; i++)
        if (applies_to(cl->applies, g.table_draws[i], g.table_sizes[i])) fit[n++] = g.table[i];
    return n && !strcmp(fit[k % n], ch->name);
}

static void check_command_line(const CommandLine *cl, Chapter *ch) {
    if (!applies_to(cl->applies, ch->draws_weights, ch->runs_sizes)) return;
    if (!selected(cl->kase) || !command_line_chosen(cl, ch)) return;
    g.command_lines_run++;
    // A path in a directory that does not exist, a directory, the good fixture.
    char dump[4300], dir[4200];
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
    const char *inputs[] = {good, NULL};
    Verdict v;
    if (!run_or_fail(cl->kase, ch->name, args, NULL, inputs, &v)) return;
    check_failure(ch->name, cl->exit_code, &v);
    must_mention(&v, "", mention);
    if (cl->exit_code == 1) {  // a path that is bad input: said as for a fixture
        must_mention(&v, "", "expected");
        must_mention(&v, "", "found");
    }
    if (*v.run.out) reason(&v, "printed on stdout before checking its command line");
    finish(cl->kase, ch->name, &v);
}

#include "error_check_process.c"
#include "error_check_weights.c"

// --- main ----------------------------------------------------------------------

static void usage(void) {
    fprintf(stderr, "usage: error_check [--full | --table CHAPTERS_TXT] [--list] [--wrap \"CMD ARG...\"] [--cpu-limit S] "
                    "[--chapter NAME] [--only TEXT]... [--vocab GPT2_TIKTOKEN] [--fixtures-dir DIR] CHAPTER_DIR CATALOGUE\n");
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

// Present when this checker (and so the chapters beside it) is built with a
// sanitizer: the chapters then take several times the CPU time.
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

int main(int argc, char **argv) {
    g.cpu_limit = __sanitizer_set_death_callback ? 4.0 : 1.0;
    // meson test --setup full sets LITATTN_TESTS=full: every case.
    g.full = harness_full_selection("error_check", argc, argv);
    const char *table = NULL;
    int i = 1, list = 0;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--full")) g.full = 1;
        else if (!strcmp(argv[i], "--list")) list = 1;
        else if (!strcmp(argv[i], "--table") && i + 1 < argc) table = argv[++i];
        else if (!strcmp(argv[i], "--wrap") && i + 1 < argc) set_wrap(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-limit") && i + 1 < argc) g.cpu_limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--chapter") && i + 1 < argc) g.only_chapter = argv[++i];
        else if (!strcmp(argv[i], "--vocab") && i + 1 < argc) g.vocab = argv[++i];
        else if (!strcmp(argv[i], "--fixtures-dir") && i + 1 < argc) g.fixtures_dir = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc && g.n_only < 64) g.only[g.n_only++] = argv[++i];
        else usage();
    }
    if (argc - i != 2) usage();
    if (table) read_table(table);
    else if (!g.full) {
        fprintf(stderr, "error_check: the default selection needs --table CHAPTERS_TXT (or --full: every case)\n");
        return 2;
    }
    g.chapter_dir = argv[i];
    snprintf(g.catalogue_dir, sizeof g.catalogue_dir, "%s", argv[i + 1]);
    char *slash = strrchr(g.catalogue_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(g.catalogue_dir, sizeof g.catalogue_dir, ".");

    static Case cases[MAX_CASES];
    int n = read_catalogue(argv[i + 1], cases);
    if (g.only_chapter && g.n_chapters == 0) {
        fprintf(stderr, "error_check: no case for chapter %s in %s\n", g.only_chapter, argv[i + 1]);
        return 1;
    }
    if (list) {  // what would run, without running it
        for (int c = 0; c < n; c++)
            if (cases[c].chosen && selected(cases[c].kase)) printf("%s %s\n", cases[c].chapter, cases[c].kase);
        for (int c = 0; c < g.n_chapters; c++) {
            Chapter *ch = &g.chapters[c];
            for (int t = 0; t < g.n_table; t++)
                if (!strcmp(g.table[t], ch->name)) ch->draws_weights = g.table_draws[t], ch->runs_sizes = g.table_sizes[t];
            for (size_t k = 0; k < sizeof command_lines / sizeof command_lines[0]; k++) {
                const CommandLine *cl = &command_lines[k];
                if (!applies_to(cl->applies, ch->draws_weights, ch->runs_sizes)) continue;
                if (selected(cl->kase) && command_line_chosen(cl, ch)) printf("%s command_line:%s\n", ch->name, cl->kase);
            }
            if (process_chapter(ch)) printf("%s process-level cases\n", ch->name);
        }
        return 0;
    }
    for (int c = 0; c < g.n_chapters; c++) probe_chapter(&g.chapters[c]);
    // The table's draws column, which the selection follows, is what the chapter says.
    for (int c = 0; c < g.n_chapters; c++)
        for (int t = 0; t < g.n_table; t++)
            if (!strcmp(g.table[t], g.chapters[c].name) && g.table_draws[t] != g.chapters[c].draws_weights) {
                printf("FAIL %s: its --help %s --seed, but %s says it draws %s\n", g.chapters[c].name,
                       g.chapters[c].draws_weights ? "offers" : "does not offer", table, g.table_draws[t] ? "yes" : "no");
                g.failed++;
            }
    int goods = 0, chosen = 0;
    for (int c = 0; c < n; c++)
        if (!strcmp(cases[c].kase, "good")) check_good(&cases[c]), goods++;
    for (int c = 0; c < n; c++)
        if (strcmp(cases[c].kase, "good") && selected(cases[c].kase) && cases[c].chosen) check_case(&cases[c]), chosen++;
    for (int c = 0; c < g.n_chapters; c++)
        for (size_t k = 0; k < sizeof command_lines / sizeof command_lines[0]; k++)
            check_command_line(&command_lines[k], &g.chapters[c]);
    int process = 0;
    for (int c = 0; c < g.n_chapters; c++) process += process_cases(&g.chapters[c]);
    for (int c = 0; c < g.n_chapters; c++) process += text_cases(&g.chapters[c]);
    for (int c = 0; c < g.n_chapters; c++) process += weights_cases(&g.chapters[c]);

    if (goods != g.n_chapters) {
        printf("FAIL the catalogue has %d good cases for %d chapters\n", goods, g.n_chapters);
        g.failed++;
    }
    if (!g.full)
        printf("the default selection: %d of this chapter's %d catalogue cases (the catalogue's %d kinds each run "
               "in one of its chapters), %d of %zu command lines, %s; LITATTN_TESTS=full (meson test --setup full) "
               "runs every case\n",
               chosen, n - goods, g.catalogue_kinds, g.command_lines_run,
               sizeof command_lines / sizeof command_lines[0],
               process_chapter(&g.chapters[0]) ? "the process-level cases (run on the first chapter that draws "
               "nothing and the first that draws)" : "no process-level case (run on two other chapters)");
    int total = g.ok + g.failed + g.skipped;
    printf("%d runs: %d ok, %d FAIL, %d SKIP (catalogue: %d fixtures for %d chapter%s; plus --help, %zu command "
           "lines and %d process-level cases); most CPU time %.3f s (%s)\n",
           total, g.ok, g.failed, g.skipped, n, g.n_chapters, g.n_chapters == 1 ? "" : "s",
           sizeof command_lines / sizeof command_lines[0], process, g.slowest, g.slowest_case);
    return g.failed || total == 0 ? 1 : 0;
}
