// fuzz_dump.c: libFuzzer over the chapters' command line (lib/runtime/cli.c) and
// the --dump target checks behind it (lib/io/dump.c).
//
// The input is an argument vector, as for fuzz_cli: pieces separated by NUL
// bytes, after a fixed argv[0]. It is parsed as a chapter that draws weights
// parses it; a --dump value is then checked as a chapter checks it, from
// inside a scratch directory (made once per process, the working directory
// from then on) that holds:
//   fixture.h5        the input (kept open on a descriptor: /proc/self/fd/N)
//   hard.h5           a hard link to it       soft.h5   a symbolic link to it
//   dangling.h5       a symbolic link to nothing
//   fifo.h5           a FIFO                  dir.h5/   a directory
//   other.h5          a regular file          sub/      a directory, with sub/up -> ..
// Checked besides the sanitizers:
//   - a refusal is one non-empty line, as stderr shows it (escaped);
//   - an accepted target is not the fixture (by device and inode), and if it
//     exists it is a regular file;
//   - no check blocks (a FIFO is never opened: libFuzzer's -timeout catches one);
//   - an accepted target inside the scratch directory is then really
//     written (dump_open, dump_add, dump_commit): the commit succeeds, the
//     fixture's bytes never change, and no temporary is left behind. Targets
//     outside it are only checked: the fuzzer runs as whoever runs it.
#define _DEFAULT_SOURCE  // realpath, mkdtemp
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dump.h"
#include "error.h"
#include "tensor.h"

#define MAX_ARGS 64

static char scratch[PATH_MAX];
static DumpInput fixture_id = {.what = "the fixture"};
static char fixture_bytes[64];

static void broken(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_dump: invariant broken: %s: %s\n", what, detail ? detail : "");
    abort();
}

static void must(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "fuzz_dump: cannot set up %s: %s\n", what, strerror(errno));
        abort();
    }
}

static void write_file(const char *name, const char *text) {
    FILE *f = fopen(name, "w");
    must(f && fputs(text, f) >= 0 && fclose(f) == 0, name);
}

static void remove_scratch(void) {
    char cmd[PATH_MAX + 16];
    if (!scratch[0] || chdir("/") != 0) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_dump: could not remove %s\n", scratch);
}

static void set_up(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/litattn_fuzz_dump.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    must(mkdtemp(scratch) != NULL, "the scratch directory");
    atexit(remove_scratch);
    must(chdir(scratch) == 0, "chdir");
    snprintf(fixture_bytes, sizeof fixture_bytes, "the input: never to be changed\n");
    write_file("fixture.h5", fixture_bytes);
    write_file("other.h5", "a file that may be replaced\n");
    must(link("fixture.h5", "hard.h5") == 0, "hard.h5");
    must(symlink("fixture.h5", "soft.h5") == 0, "soft.h5");
    must(symlink("nothing.h5", "dangling.h5") == 0, "dangling.h5");
    must(mkfifo("fifo.h5", 0600) == 0, "fifo.h5");
    must(mkdir("dir.h5", 0700) == 0, "dir.h5");
    must(mkdir("sub", 0700) == 0, "sub");
    must(symlink("..", "sub/up") == 0, "sub/up");
    struct stat st;
    must(stat("fixture.h5", &st) == 0, "stat");
    fixture_id.dev = st.st_dev, fixture_id.ino = st.st_ino;
    // Held open for the whole run, as the fuzzer may name it /proc/self/fd/N.
    must(open("fixture.h5", O_RDONLY) >= 0, "the fixture's descriptor");
}

// The fixture still holds its bytes, and no hidden temporary is anywhere
// in the scratch directory or sub/.
static void check_scratch(const char *after) {
    char buf[128] = "";
    FILE *f = fopen("fixture.h5", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    if (strcmp(buf, fixture_bytes) != 0) broken("the fixture changed", after);
    const char *dirs[] = {".", "sub", "dir.h5"};
    for (int i = 0; i < 3; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) broken("a temporary left", e->d_name);
        if (d) closedir(d);
    }
}

// Whether `path`'s directory is the scratch directory or under it.
static int inside_scratch(const char *path) {
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    // A symbolic link is written where it leads: follow the target itself too.
    char target[PATH_MAX];
    if (realpath(path, target)) {
        size_t n = strlen(scratch);
        return !strncmp(target, scratch, n) && (target[n] == '/' || target[n] == '\0');
    }
    if (!realpath(dir, real)) return 0;
    size_t n = strlen(scratch);
    return !strncmp(real, scratch, n) && (real[n] == '/' || real[n] == '\0');
}

// The message as stderr shows it (die() escapes it with text_escape: a
// path's newline or control byte is written as an escape) is one line.
static void one_line(const char *what, const char *err) {
    if (!*err) broken(what, "refused with an empty message");
    char shown[4 * 1024 + 1];
    text_escape(shown, sizeof shown, err);
    if (strchr(shown, '\n')) broken(what, shown);
}

static void check_target(const char *path) {
    char err[1024] = "";
    if (!dump_check_target(path, &fixture_id, 1, err, sizeof err)) {
        one_line("dump_check_target", err);
        return;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (st.st_dev == fixture_id.dev && st.st_ino == fixture_id.ino) broken("accepted the fixture", path);
        if (!S_ISREG(st.st_mode)) broken("accepted something that is not a regular file", path);
    }
    if (!inside_scratch(path)) return;
    Dump *d = dump_open(path, &fixture_id, 1, err, sizeof err);
    if (!d) {
        one_line("dump_open", err);
        check_scratch(path);
        return;
    }
    Tensor t = tensor_zeros(SIZE(2));
    if (!dump_add(d, "x", "output", t, err, sizeof err)) broken("dump_add", err);
    if (!dump_commit(d, err, sizeof err)) broken("dump_commit", err);
    // The written file goes again, unless it replaced one of the fixed set;
    // then nothing hidden may be left (a target may itself be a dot file).
    char real[PATH_MAX];
    if (!realpath(path, real)) broken("the committed dump is not there", path);
    const char *base = strrchr(real, '/') + 1;
    if (strcmp(base, "other.h5") && strcmp(base, "fixture.h5")) unlink(real);
    check_scratch(path);
    tensor_release_all();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!scratch[0]) set_up();
    char *buf = malloc(size + 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    buf[size] = '\0';
    char prog[] = "chapter";
    char *argv[MAX_ARGS + 2] = {prog};
    int argc = 1;
    for (size_t start = 0; start < size && argc <= MAX_ARGS; start += strlen(buf + start) + 1)
        argv[argc++] = buf + start;
    argv[argc] = NULL;
    Options opt;
    char err[512];
    if (cli_parse(argc, argv, 1, &opt, err, sizeof err) == CLI_OK && opt.dump) check_target(opt.dump);
    // Any piece may be a path too: each is checked as a target.
    for (int i = 1; i < argc && i < 8; i++) check_target(argv[i]);
    free(buf);
    return 0;
}
