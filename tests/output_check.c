// output_check: output that cannot be written is never reported as success.
//
//   output_check CHAPTER FIXTURE
//
// Runs the chapter with its standard output in the states a careless or
// unlucky user gives it, and checks the answer:
//   - stdout closed:                 exit 1, one line on stderr naming stdout
//   - stdout on a full device:       exit 1, one line naming the error
//   - --help into either of them:    the same
//   - a reader that is gone before anything is written: the chapter ends
//     quietly, as `yes | head -1` does: by SIGPIPE, with nothing on stderr;
//     one that stops after a line (`| head -1`): quietly too (exit 0 if the
//     output fitted into the pipe before the reader left)
//   - with --dump, any of these leaves an existing dump target byte for
//     byte as it was, and no temporary file beside it.
// Each case's line: "ok|FAIL <case>: <what happened>".
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "strbuf.h"

static int failures;

typedef enum { OUT_CLOSED, OUT_FULL, OUT_EARLY_EXIT, OUT_READER_GONE } OutState;

typedef struct {
    int status;      // waitpid status
    StrBuf err;      // stderr
} Outcome;

// Runs argv with stdout in `state` and stderr captured.
static Outcome run_with_stdout(char *const argv[], OutState state) {
    Outcome o = {0, {0}};
    int err_pipe[2], out_pipe[2] = {-1, -1};
    int piped = state == OUT_EARLY_EXIT || state == OUT_READER_GONE;
    if (pipe(err_pipe) != 0 || (piped && pipe(out_pipe) != 0)) {
        perror("pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        harness_default_signals();
        dup2(err_pipe[1], STDERR_FILENO);
        close(err_pipe[0]), close(err_pipe[1]);
        if (state == OUT_CLOSED) close(STDOUT_FILENO);
        if (state == OUT_FULL) {
            int full = open("/dev/full", O_WRONLY);
            if (full < 0) _exit(126);
            dup2(full, STDOUT_FILENO), close(full);
        }
        if (piped) {
            dup2(out_pipe[1], STDOUT_FILENO);
            close(out_pipe[0]), close(out_pipe[1]);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    close(err_pipe[1]);
    if (state == OUT_READER_GONE) close(out_pipe[0]), close(out_pipe[1]);  // nobody will read
    if (state == OUT_EARLY_EXIT) {
        // `head -1`: read up to the first newline, then go away.
        close(out_pipe[1]);
        char c;
        while (read(out_pipe[0], &c, 1) == 1 && c != '\n') {
        }
        close(out_pipe[0]);
    }
    char chunk[4096];
    ssize_t n;
    while ((n = read(err_pipe[0], chunk, sizeof chunk)) > 0) sb_put(&o.err, chunk, (size_t)n);
    close(err_pipe[0]);
    while (waitpid(pid, &o.status, 0) < 0 && errno == EINTR) {
    }
    return o;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void report(const char *kase, int ok, const char *what) {
    printf("%s %s: %s\n", ok ? "ok  " : "FAIL", kase, what);
    failures += !ok;
}

// The refusal every case but the early reader expects: exit 1, one line that names stdout.
static void expect_refusal(const char *kase, Outcome *o) {
    char what[600];
    int line_ok = count_lines(sb_str(&o->err)) == 1 && strstr(sb_str(&o->err), "stdout");
    int ok = WIFEXITED(o->status) && WEXITSTATUS(o->status) == 1 && line_ok;
    snprintf(what, sizeof what, "%s %d, stderr: %.400s", WIFEXITED(o->status) ? "exit" : "signal",
             WIFEXITED(o->status) ? WEXITSTATUS(o->status) : WTERMSIG(o->status), sb_str(&o->err));
    what[strcspn(what, "\n")] = '\0';
    report(kase, ok, what);
}

// Files in dir other than `keep`: a temporary left behind by a failed --dump.
static int strays(const char *dir, const char *keep) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep)) n++;
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: output_check CHAPTER FIXTURE\n");
        return 2;
    }
    char *chapter = argv[1], *fixture = argv[2];
    char *plain[] = {chapter, "--fixture", fixture, NULL};
    char *help[] = {chapter, "--help", NULL};

    Outcome o = run_with_stdout(plain, OUT_CLOSED);
    expect_refusal("stdout closed", &o);
    sb_free(&o.err);
    o = run_with_stdout(plain, OUT_FULL);
    expect_refusal("stdout on /dev/full", &o);
    sb_free(&o.err);
    o = run_with_stdout(help, OUT_CLOSED);
    expect_refusal("--help, stdout closed", &o);
    sb_free(&o.err);
    o = run_with_stdout(help, OUT_FULL);
    expect_refusal("--help, stdout on /dev/full", &o);
    sb_free(&o.err);

    char what[600];
    for (int k = 0; k < 2; k++) {
        o = run_with_stdout(plain, k ? OUT_EARLY_EXIT : OUT_READER_GONE);
        int piped = WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGPIPE;
        int quiet = o.err.len == 0 && (piped || (k == 1 && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0));
        snprintf(what, sizeof what, "%s %d, stderr '%.300s' (want: %s, stderr empty)",
                 WIFEXITED(o.status) ? "exit" : "signal",
                 WIFEXITED(o.status) ? WEXITSTATUS(o.status) : WTERMSIG(o.status), sb_str(&o.err),
                 k ? "exit 0 or SIGPIPE" : "killed by SIGPIPE");
        report(k ? "a reader that stops after one line" : "a reader gone before the first line", quiet, what);
        sb_free(&o.err);
    }

    // --dump onto an existing file, with the printed cells lost: the old
    // file stays as it was, and nothing else appears in its directory.
    char dir[512], target[600];
    temp_path(dir, sizeof dir, "outdir");
    unlink(dir);
    if (mkdir(dir, 0700) != 0) {
        perror(dir);
        return 1;
    }
    snprintf(target, sizeof target, "%s/old.h5", dir);
    const char before[] = "an earlier dump, not to be destroyed\n";
    FILE *f = fopen(target, "wb");
    if (!f || fwrite(before, 1, sizeof before - 1, f) != sizeof before - 1 || fclose(f) != 0) {
        perror(target);
        return 1;
    }
    char *with_dump[] = {chapter, "--fixture", fixture, "--dump", target, NULL};
    const OutState states[] = {OUT_FULL, OUT_READER_GONE};
    const char *names[] = {"--dump, stdout on /dev/full", "--dump, a reader gone before the first line"};
    for (int k = 0; k < 2; k++) {
        o = run_with_stdout(with_dump, states[k]);
        size_t len = 0;
        char *after = read_whole_file(target, &len);
        int kept = after && len == sizeof before - 1 && !memcmp(after, before, len);
        int n_strays = strays(dir, "old.h5");
        snprintf(what, sizeof what, "the old target %s, %d other file%s in its directory",
                 kept ? "unchanged" : "CHANGED", n_strays, n_strays == 1 ? "" : "s");
        report(names[k], kept && n_strays == 0 && !(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0), what);
        free(after);
        sb_free(&o.err);
    }
    unlink(target);
    rmdir(dir);
    printf("%s\n", failures ? "FAILED" : "lost output is never reported as success");
    return failures ? 1 : 0;
}
