// error_check_process.c: the process-level cases of tests/error_check.c,
// which includes this file (it uses that file's helpers and state; it is not
// compiled on its own). Each case sets up files in a scratch directory of
// its own chapter (OUT_DIR/process-<chapter>/), runs the chapter once or a
// few times, and checks the answer and what the run left on disk.

// --- scratch files ---------------------------------------------------------------

static void remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char child[8192];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void die_setup(const char *what, const char *path) {
    fprintf(stderr, "error_check: cannot set up %s: %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void copy_file(const char *from, const char *to) {
    if (!copy_file_with(from, to, 0)) die_setup("a copy", to);
}

// A copy the chapter was not built with: its bytes and one zero byte more
// (copy_file_with). A chapter answers a file of its shipped fixtures' exact
// bytes without a reader child (lib/io/hdf5_snapshot.h); these cases are about
// that child, so it has to run.
static void copy_unshipped(const char *from, const char *to) {
    if (!copy_file_with(from, to, 1)) die_setup("a copy", to);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) die_setup("a file", path);
}

// The names in `dir` other than `keep` (NULL-terminated), comma-separated
// into buf: what a run left behind. Returns how many.
static int leftovers(const char *dir, const char *const *keep, char *buf, size_t len) {
    DIR *d = opendir(dir);
    int n = 0;
    buf[0] = '\0';
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int kept = 0;
        for (int i = 0; keep[i]; i++) kept |= !strcmp(keep[i], e->d_name);
        if (kept) continue;
        n++;
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", strlen(buf) ? ", " : "", e->d_name);
    }
    if (d) closedir(d);
    return n;
}

static void path_in(char *buf, size_t len, const char *name) {
    int n = snprintf(buf, len, "%s/%s", g.scratch, name);
    if (n < 0 || (size_t)n >= len) die_setup("a path", name);
}

// --- the checks ----------------------------------------------------------------------

// A run that must go as the good run went: exit 0, nothing on stderr, and
// the good run's stdout. `setting` says, for the report, what was different.
static void expect_good_run(const char *kase, Chapter *ch, char *const args[], const RunOptions *opt,
                            const char *const *inputs, const char *setting) {
    Verdict v;
    if (!run_or_fail(kase, ch->name, args, opt, inputs, &v)) return;
    if (v.run.exit_code != 0 || *v.run.err)
        reason(&v, "exit %d, stderr '%s': expected 0 and nothing", v.run.exit_code, v.line);
    else if (strcmp(v.run.out, ch->good_out) != 0)
        reason(&v, "stdout is not the good run's");
    snprintf(v.line, sizeof v.line, "(%s: exit %d, %s)", setting, v.run.exit_code,
             v.n_why ? "see below" : "the good run's output");
    finish(kase, ch->name, &v);
}

// A run that must be refused with one line naming `mention` (see must_mention),
// printing nothing: what a bad --dump target or fixture path gets.
static void expect_refusal(const char *kase, Chapter *ch, char *const args[], const RunOptions *opt,
                           const char *const *inputs, const char *mention) {
    Verdict v;
    if (!run_or_fail(kase, ch->name, args, opt, inputs, &v)) return;
    check_failure(ch->name, 1, &v);
    must_mention(&v, "", mention);
    must_mention(&v, "", "expected");
    must_mention(&v, "", "found");
    if (*v.run.out) reason(&v, "printed on stdout before refusing");
    finish(kase, ch->name, &v);
}

// The dump directory after a run: only `keep` in it (no temporary left),
// and the old target, if given, byte for byte as it was.
static void check_dump_dir(Verdict *v, const char *dir, const char *const *keep, const char *target,
                           const char *old) {
    char left[1024];
    if (leftovers(dir, keep, left, sizeof left)) reason(v, "left behind in %s: %s", dir, left);
    if (target && old) {
        Guard gd = {target, strdup(old), strlen(old)};
        guard_check(&gd, v);
    }
}

// --- the cases ------------------------------------------------------------------------

// --dump onto the fixture however it is named: refused, the fixture intact.
static int dump_onto_fixture_cases(Chapter *ch, const char *fixture) {
    char hard[4400], soft[4400], dotdot[8800], proc[64];
    path_in(hard, sizeof hard, "hard_link.h5");
    path_in(soft, sizeof soft, "symbolic_link.h5");
    char absolute[PATH_MAX];
    if (link(fixture, hard) != 0) die_setup("a hard link", hard);
    if (!realpath(fixture, absolute) || symlink(absolute, soft) != 0) die_setup("a symbolic link", soft);
    const char *base = strrchr(g.scratch, '/') ? strrchr(g.scratch, '/') + 1 : g.scratch;
    snprintf(dotdot, sizeof dotdot, "%s/../%s/fixture.h5", g.scratch, base);
    int fd = open(fixture, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die_setup("a descriptor", fixture);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    const char *inputs[] = {fixture, NULL};
    struct {
        const char *kase;
        char *target;
    } t[] = {{"dump_onto_a_hard_link_of_the_fixture", hard}, {"dump_onto_a_symlink_to_the_fixture", soft},
             {"dump_onto_the_fixture_through_dotdot", dotdot}, {"dump_onto_proc_self_fd_of_the_fixture", proc}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char *args[] = {"--fixture", (char *)fixture, "--dump", t[i].target, NULL};
        RunOptions opt = {0};
        opt.pass_fd = fd;
        char mention[4600];
        snprintf(mention, sizeof mention, "%s&the fixture", t[i].target);
        expect_refusal(t[i].kase, ch, args, &opt, inputs, mention);
    }
    close(fd);
    unlink(hard), unlink(soft);
    return 4;
}

// --dump onto what is not a regular file: refused without being opened (a
// FIFO would block an open), named for what it is.
static int dump_onto_special_cases(Chapter *ch, const char *fixture) {
    char fifo[4400], dir[4400], sock[4400];
    path_in(fifo, sizeof fifo, "fifo.h5");
    path_in(dir, sizeof dir, "a_directory.h5");
    path_in(sock, sizeof sock, "socket.h5");
    if (mkfifo(fifo, 0644) != 0) die_setup("a FIFO", fifo);
    if (mkdir(dir, 0755) != 0) die_setup("a directory", dir);
    // A socket file: bound, then the socket closed (the file stays).
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int have_socket = s >= 0 && strlen(sock) < sizeof addr.sun_path;
    if (have_socket) {
        snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock);
        have_socket = bind(s, (struct sockaddr *)&addr, sizeof addr) == 0;
    }
    if (s >= 0) close(s);
    struct {
        const char *kase, *target, *found;
    } t[] = {{"dump_onto_a_fifo", fifo, "FIFO"},
             {"dump_onto_a_directory_named_h5", dir, "a directory"},
             {"dump_onto_dev_stdout", "/dev/stdout", "FIFO"},  // stdout is the harness's pipe
             {"dump_onto_dev_full", "/dev/full", "a character device"},
             {"dump_onto_a_socket", sock, "a socket"}};
    int n = 0;
    const char *inputs[] = {fixture, NULL};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (t[i].target == sock && !have_socket) {
            skip(t[i].kase, ch->name, "cannot make a socket file at %s here", sock);
            continue;
        }
        char *args[] = {"--fixture", (char *)fixture, "--dump", (char *)t[i].target, NULL};
        char mention[4600];
        snprintf(mention, sizeof mention, "%s&%s", t[i].target, t[i].found);
        expect_refusal(t[i].kase, ch, args, NULL, inputs, mention);
        n++;
    }
    unlink(fifo), rmdir(dir), unlink(sock);
    return n;
}

static const char OLD_DUMP[] = "the dump of an earlier run: must survive a failed one\n";

// Write errors and failed runs: the old target stays, no temporary is left.
static int dump_failure_cases(Chapter *ch, const char *fixture) {
    char dumps[4400], target[4500];
    path_in(dumps, sizeof dumps, "dumps");
    snprintf(target, sizeof target, "%s/target.h5", dumps);
    if (mkdir(dumps, 0755) != 0) die_setup("a directory", dumps);
    const char *keep[] = {"target.h5", NULL};
    struct {
        const char *kase;
        long long fsize;
        int enospc;
        const char *fixture, *mention;
    } t[] = {
        // RLIMIT_FSIZE set before exec: the writes fail with EFBIG (SIGXFSZ is ignored).
        {"dump_past_rlimit_fsize", 4096, 0, fixture, "RLIMIT_FSIZE&File too large"},
        // A full device: every pwrite (HDF5's file driver writes with it) fails with ENOSPC.
        {"dump_on_a_full_device", 0, 1, fixture, "no space left"},
        // A fixture refused after the dump was begun (too many tokens to attend over).
        {"dump_then_bad_input", 0, 0, ch->late_failure, ch->late_mention},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (!t[i].fixture) {
            skip(t[i].kase, ch->name, "the catalogue has no too_many_tokens case for this chapter");
            continue;
        }
        write_text(target, OLD_DUMP);
        char *args[] = {"--fixture", (char *)t[i].fixture, "--dump", target, NULL};
        RunOptions opt = {0};
        opt.fsize = t[i].fsize;
        opt.pwrite_enospc = t[i].enospc;
        const char *inputs[] = {t[i].fixture, NULL};
        Verdict v;
        if (!run_or_fail(t[i].kase, ch->name, args, &opt, inputs, &v)) continue;
        check_failure(ch->name, 1, &v);
        must_mention(&v, "", t[i].mention);
        check_dump_dir(&v, dumps, keep, target, OLD_DUMP);
        finish(t[i].kase, ch->name, &v);
        n++;
    }
    unlink(target);
    rmdir(dumps);
    return n;
}

typedef struct {
    const char *dir;
    int sig, sent;
} SignalWhenTemp;

// Watches the dump directory: once the temporary is there, sends the signal.
static int signal_when_temp(pid_t pid, void *ctx) {
    SignalWhenTemp *w = ctx;
    const char *keep[] = {"target.h5", NULL};
    char left[512];
    if (!leftovers(w->dir, keep, left, sizeof left)) return 0;
    kill(pid, w->sig);
    w->sent = 1;
    return 1;
}

// SIGINT, SIGTERM, SIGHUP while the dump is half written. The chapter's
// stdout is a pipe already full, which nobody reads: its first flush blocks,
// after the temporary was made and before it is renamed. The signal then
// must remove the temporary and end the chapter.
static int dump_signal_cases(Chapter *ch, const char *fixture) {
    char dumps[4400], target[4500];
    path_in(dumps, sizeof dumps, "dumps_signal");
    snprintf(target, sizeof target, "%s/target.h5", dumps);
    if (mkdir(dumps, 0755) != 0) die_setup("a directory", dumps);
    const char *keep[] = {"target.h5", NULL};
    static const struct {
        const char *kase;
        int sig;
    } t[] = {{"dump_interrupted_by_sigint", SIGINT}, {"dump_interrupted_by_sigterm", SIGTERM},
             {"dump_interrupted_by_sighup", SIGHUP}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        write_text(target, OLD_DUMP);
        int full[2];
        if (pipe(full) != 0) die_setup("a pipe", "stdout");
        fcntl(full[1], F_SETPIPE_SZ, 4096);
        fcntl(full[1], F_SETFL, O_NONBLOCK);
        char block[4096];
        memset(block, '.', sizeof block);
        while (write(full[1], block, sizeof block) > 0) {
        }
        fcntl(full[1], F_SETFL, 0);
        SignalWhenTemp w = {dumps, t[i].sig, 0};
        RunOptions opt = {0};
        opt.stdout_fd = full[1];
        opt.watch = signal_when_temp;
        opt.ctx = &w;
        opt.limit = 30;
        char *args[] = {"--fixture", (char *)fixture, "--dump", target, NULL};
        const char *inputs[] = {fixture, NULL};
        Verdict v;
        int ran = run_chapter_with(t[i].kase, ch->name, args, &opt, inputs, &v);
        close(full[0]), close(full[1]);
        if (!ran) {
            report("FAIL", t[i].kase, ch->name, &v);
            g.failed++;
            continue;
        }
        if (!w.sent) reason(&v, "the temporary never appeared in %s (exit %d)", dumps, v.run.exit_code);
        else if (v.run.exit_code != 128 + t[i].sig)
            reason(&v, "exit %d, expected death by signal %d (exit %d)", v.run.exit_code, t[i].sig, 128 + t[i].sig);
        check_dump_dir(&v, dumps, keep, target, OLD_DUMP);
        snprintf(v.line, sizeof v.line, "(signal %d sent with the temporary there: %s)", t[i].sig,
                 v.n_why ? "see below" : "the old dump intact, no temporary left");
        finish(t[i].kase, ch->name, &v);
    }
    unlink(target);
    rmdir(dumps);
    return 3;
}

// A dump that succeeds: the old target replaced (a new file, an HDF5 one),
// nothing else left, and a symbolic link to the target still a link.
static int dump_success_case(Chapter *ch, const char *fixture) {
    char dumps[4400], target[4500], link_path[4500];
    path_in(dumps, sizeof dumps, "dumps_ok");
    snprintf(target, sizeof target, "%s/target.h5", dumps);
    snprintf(link_path, sizeof link_path, "%s/link.h5", dumps);
    if (mkdir(dumps, 0755) != 0) die_setup("a directory", dumps);
    write_text(target, OLD_DUMP);
    if (symlink("target.h5", link_path) != 0) die_setup("a symbolic link", link_path);
    char *args[] = {"--fixture", (char *)fixture, "--dump", link_path, NULL};
    const char *inputs[] = {fixture, NULL};
    Verdict v;
    if (!run_or_fail("dump_through_a_symlink_replaces_the_target", ch->name, args, NULL, inputs, &v)) return 1;
    if (v.run.exit_code != 0 || *v.run.err) reason(&v, "exit %d, stderr '%s': expected 0 and nothing", v.run.exit_code, v.line);
    else ch->dump_cpu = v.run.cpu_seconds;  // the measure for the dump cases after this one
    struct stat st;
    if (lstat(link_path, &st) != 0 || !S_ISLNK(st.st_mode)) reason(&v, "%s is no longer a symbolic link", link_path);
    char head[8] = "";
    FILE *f = fopen(target, "rb");
    if (!f || fread(head, 1, 8, f) != 8 || memcmp(head, "\211HDF\r\n\032\n", 8) != 0)
        reason(&v, "%s is not an HDF5 file after the run", target);
    if (f) fclose(f);
    const char *keep[] = {"target.h5", "link.h5", NULL};
    check_dump_dir(&v, dumps, keep, NULL, NULL);
    snprintf(v.line, sizeof v.line, "(exit 0: the link kept, its target replaced, nothing left behind)");
    finish("dump_through_a_symlink_replaces_the_target", ch->name, &v);
    unlink(link_path), unlink(target), rmdir(dumps);
    return 1;
}

// Paths longer than PATH_MAX are refused, not cut to a buffer's size.
static int long_path_cases(Chapter *ch, const char *fixture) {
    size_t n = PATH_MAX + 900;
    char *long_path = malloc(n + 1);
    // "./" repeated, then the fixture's name: it would name the fixture if it were not too long.
    size_t used = 0;
    while (used + 2 + strlen(fixture) < n) long_path[used++] = '.', long_path[used++] = '/';
    snprintf(long_path + used, n + 1 - used, "%s", fixture[0] == '/' ? fixture + 1 : fixture);
    char max[32];
    snprintf(max, sizeof max, "%d", PATH_MAX - 1);
    const char *inputs[] = {fixture, NULL};
    char *a1[] = {"--fixture", long_path, NULL};
    expect_refusal("fixture_path_longer_than_path_max", ch, a1, NULL, inputs, max);
    char *a2[] = {"--fixture", (char *)fixture, "--dump", long_path, NULL};
    expect_refusal("dump_path_longer_than_path_max", ch, a2, NULL, inputs, max);
    free(long_path);
    return 2;
}

// A path of exactly `len` bytes under the scratch directory, ending in
// `name`: directories of at most 255 bytes each are made on the way.
static void path_of_length(char *buf, size_t len, const char *name) {
    int n = snprintf(buf, len + 1, "%s/", g.scratch);
    size_t used = (size_t)n, tail = strlen(name);
    if (n < 0 || used + tail + 2 > len) die_setup("a path of that length", g.scratch);
    while (used + tail < len) {
        size_t left = len - tail - used;             // bytes before the name, each component with its '/'
        size_t part = left > 256 ? 200 : left - 1;  // 200 while more than one component is left
        memset(buf + used, 'p', part);
        used += part;
        buf[used] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) die_setup("a directory", buf);
        buf[used++] = '/';
    }
    snprintf(buf + used, len + 1 - used, "%s", name);
}

// The first dataset of role `role` in the fixture, into name ("" if none).
typedef struct {
    const char *role;
    char *name;
    size_t len;
} FirstOfRole;
static void first_of_role(const char *dataset, const char *role, void *ctx) {
    FirstOfRole *f = ctx;
    if (!f->name[0] && !strcmp(role, f->role)) snprintf(f->name, f->len, "%s", dataset);
}

// Long paths and names, up to the longest accepted: the message keeps its
// cause ("expected ..., found ...") whole, and names the path whole. A
// fixture without its first input dataset at a path of 480, 1000 and
// PATH_MAX - 1 bytes; then at that longest path, a group name of the most
// bytes the reader accepts (ERROR_NAME_MAX), and one byte more.
static int long_message_cases(Chapter *ch, const char *fixture) {
    char input[256] = "", err[FIXTURE_ERR_LEN];
    FirstOfRole want = {"input", input, sizeof input};
    Fixture *fx = fixture_open(fixture, NULL, err);
    if (fx) fixture_each_dataset(fx, first_of_role, &want, err);
    fixture_close(fx);
    if (!input[0]) {
        skip("long_path_messages", ch->name, "its fixture has no dataset of role input");
        return 0;
    }
    char broken[4400];
    path_in(broken, sizeof broken, "no-input.h5");
    copy_unshipped(fixture, broken);
    hid_t f = H5Fopen(broken, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0 || H5Ldelete(f, input, H5P_DEFAULT) < 0 || H5Fclose(f) < 0) die_setup("a fixture without its input", broken);
    char mention[512];
    snprintf(mention, sizeof mention, "dataset '%s': expected float32&found no such dataset", input);
    static const size_t lengths[] = {480, 1000, PATH_MAX - 1};
    char *path = malloc(PATH_MAX + 1);
    int n = 0;
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        path_of_length(path, lengths[i], "f.h5");
        remove(path);
        if (link(broken, path) != 0) die_setup("a link to the fixture", path);
        char kase[64];
        snprintf(kase, sizeof kase, "missing_input_at_a_path_of_%zu_bytes", lengths[i]);
        char *args[] = {"--fixture", path, NULL};
        const char *inputs[] = {broken, NULL};
        Verdict v;
        if (!run_or_fail(kase, ch->name, args, NULL, inputs, &v)) continue;
        check_failure(ch->name, 1, &v);
        must_mention(&v, "", mention);
        must_mention_path(&v, path);
        finish(kase, ch->name, &v);
        n++;
    }
    // At the longest path: the longest group name, and one byte more.
    char group[ERROR_NAME_MAX + 2];
    memset(group, 'g', ERROR_NAME_MAX + 1);
    group[ERROR_NAME_MAX + 1] = '\0';
    char too_long[64];
    snprintf(too_long, sizeof too_long, "at most %d bytes&found one of %d bytes", ERROR_NAME_MAX, ERROR_NAME_MAX + 1);
    for (int extra = 0; extra <= 1; extra++) {
        group[ERROR_NAME_MAX + extra] = '\0';
        char *args[] = {"--fixture", path, "--group", group, NULL};
        const char *inputs[] = {broken, NULL};
        const char *kase = extra ? "group_name_one_byte_too_long" : "longest_group_name_at_the_longest_path";
        Verdict v;
        if (!run_or_fail(kase, ch->name, args, NULL, inputs, &v)) continue;
        check_failure(ch->name, 1, &v);
        char found[ERROR_NAME_MAX + 64];
        snprintf(found, sizeof found, "expected a group '%s'&found none", group);
        must_mention(&v, "", extra ? too_long : found);
        must_mention_path(&v, path);
        finish(kase, ch->name, &v);
        n++;
        group[ERROR_NAME_MAX + extra] = 'g';
    }
    unlink(path);
    free(path);
    unlink(broken);
    return n;
}

// A fixture an HDF5 writer has open (HDF5 1.10 holds an exclusive flock
// meanwhile; this process holds one the same way).
static int locked_fixture_case(Chapter *ch, const char *good) {
    char path[4400];
    path_in(path, sizeof path, "locked.h5");
    copy_file(good, path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) die_setup("a lock", path);
    char *args[] = {"--fixture", path, NULL};
    const char *inputs[] = {path, NULL};
    char mention[4600];
    snprintf(mention, sizeof mention, "%s&locked by a writer", path);
    expect_refusal("fixture_locked_by_a_writer", ch, args, NULL, inputs, mention);
    close(fd);
    unlink(path);
    return 1;
}

// The fixture's path switching between a good file and a FIFO while the
// chapter runs: the file is opened once, without blocking, and checked on
// that descriptor, so every run ends, either reading the file or refusing
// the FIFO.
static int fifo_race_case(Chapter *ch, const char *good) {
    char path[4400], file_tmp[4400], fifo_tmp[4400];
    path_in(path, sizeof path, "swapped.h5");
    path_in(file_tmp, sizeof file_tmp, "swapped.file");
    path_in(fifo_tmp, sizeof fifo_tmp, "swapped.fifo");
    copy_file(good, path);
    char master[4400];
    path_in(master, sizeof master, "swapped.master");
    copy_file(good, master);
    fflush(NULL);
    pid_t swapper = fork();
    if (swapper == 0) {
        // Renames are atomic: the path is always the one or the other. Each
        // lasts about 0.1 ms, far shorter than a chapter's start (so that the
        // runs see both), without a core spent spinning on it.
        const struct timespec pause = {0, 100000};
        for (;;) {
            if (mkfifo(fifo_tmp, 0644) == 0) rename(fifo_tmp, path);
            nanosleep(&pause, NULL);
            if (link(master, file_tmp) == 0) rename(file_tmp, path);
            nanosleep(&pause, NULL);
        }
    }
    Verdict v;
    memset(&v, 0, sizeof v);
    int runs = 20, accepted = 0, refused = 0;
    for (int i = 0; i < runs && !v.n_why; i++) {
        Verdict one;
        char *args[] = {"--fixture", path, NULL};
        RunOptions opt = {0};
        opt.limit = 20;
        const char *inputs[] = {good, master, NULL};
        if (!run_chapter_with("fixture_swapped_for_a_fifo", ch->name, args, &opt, inputs, &one)) {
            reason(&v, "cannot run the chapter");
            break;
        }
        if (one.run.exit_code == 0 && !*one.run.err) {
            accepted++;
        } else {
            check_failure(ch->name, 1, &one);
            must_mention(&one, "", "FIFO");
            refused++;
        }
        for (int k = 0; k < one.n_why; k++) reason(&v, "run %d: %s (%.200s)", i + 1, one.why[k], one.line);
        if (one.run.cpu_seconds > v.run.cpu_seconds) v.run.cpu_seconds = one.run.cpu_seconds;
        run_result_free(&one.run);
    }
    kill(swapper, SIGKILL);
    waitpid(swapper, NULL, 0);
    unlink(path), unlink(file_tmp), unlink(fifo_tmp), unlink(master);
    v.run.out = strdup(""), v.run.err = strdup("");
    snprintf(v.line, sizeof v.line, "(%d runs while the path switched: %d read the file, %d refused the FIFO, "
             "none hung)", runs, accepted, refused);
    finish("fixture_swapped_for_a_fifo", ch->name, &v);
    return 1;
}

// A low limit on open descriptors, from 4 (stdin, stdout, stderr and one
// more, which the dynamic loader needs for a moment) up: each run reads the
// fixture or says that descriptors ran out.
static int descriptor_limit_case(Chapter *ch, const char *good) {
    Verdict v;
    memset(&v, 0, sizeof v);
    int accepted = 0, refused = 0;
    for (int nofile = 4; nofile <= 10; nofile++) {
        Verdict one;
        char *args[] = {"--fixture", (char *)good, NULL};
        const char *inputs[] = {good, NULL};
        RunOptions opt = {0};
        opt.nofile = nofile;
        if (!run_chapter_with("descriptor_limit", ch->name, args, &opt, inputs, &one)) {
            reason(&v, "cannot run the chapter");
            break;
        }
        if (one.run.exit_code == 0 && !*one.run.err) {
            accepted++;
        } else {
            check_failure(ch->name, 1, &one);
            must_mention(&one, "", "open files|descriptor");
            refused++;
            if (refused == 1) snprintf(v.line, sizeof v.line, "RLIMIT_NOFILE %d: %.1900s", nofile, one.line);
        }
        for (int k = 0; k < one.n_why; k++) reason(&v, "RLIMIT_NOFILE %d: %s", nofile, one.why[k]);
        run_result_free(&one.run);
    }
    if (!refused) reason(&v, "no limit from 4 up made the chapter run out of descriptors");
    if (!accepted) reason(&v, "no limit up to 10 let the chapter read its fixture");
    v.run.out = strdup(""), v.run.err = strdup("");
    finish("descriptor_limit", ch->name, &v);
    return 1;
}

// A fixture whose snapshot takes HDF5 seconds of CPU time: datasets of 2^20
// values in chunks of one value, none of them stored (HDF5 looks each up in
// turn). Valid, and slow: a child that is still reading when the test wants it.
static void write_slow_fixture(const char *good, const char *path) {
    copy_file(good, path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) die_setup("a slow fixture", path);
    // Names that take HDF5 about a second each to open (harness.h): the
    // reader child is there to be caught on any CPU, until its limit.
    if (!write_endless_opens(f, HARNESS_ENDLESS_LINKS)) die_setup("endless links", path);
    if (H5Fclose(f) < 0) die_setup("a slow fixture", path);
}

typedef struct {
    pid_t child;
    int stopped;  // the child was caught running and stopped
    double t0;
} KillWhenChild;

// The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), or 0.
static char process_state(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
}

// Once the chapter has a reader child that still runs: stop the child
// (SIGSTOP), then kill the chapter. A stopped child would stay forever,
// unless the chapter's death kills it (PR_SET_PDEATHSIG sends SIGKILL,
// which ends a stopped process too).
static int kill_when_child(pid_t pid, void *ctx) {
    KillWhenChild *w = ctx;
    pid_t kids[4];
    if (child_pids(pid, kids, 4) < 1) return 0;
    w->child = kids[0];
    // Past its set-up (PR_SET_PDEATHSIG comes first, then stderr goes to
    // /dev/null): before that, a stopped child could never have learnt to die.
    char fd2[64], target[64] = "";
    snprintf(fd2, sizeof fd2, "/proc/%d/fd/2", (int)w->child);
    ssize_t n = readlink(fd2, target, sizeof target - 1);
    if (n <= 0 || strncmp(target, "/dev/null", 9) != 0) return 0;
    char state = process_state(w->child);
    if (state == 'R' || state == 'S' || state == 'D') {
        kill(w->child, SIGSTOP);
        for (double t = harness_seconds(); harness_seconds() - t < 2.0 && process_state(w->child) != 'T';) usleep(500);
        w->stopped = process_state(w->child) == 'T';
    }
    w->t0 = harness_seconds();
    kill(pid, SIGKILL);
    return 1;
}

// The chapter killed (SIGKILL: no handler runs) while its reader child
// runs: the child must go at once too, not read on. The fixture is made
// endless to read (it stops only at the child's CPU limit), so that the
// child is there to be caught on any CPU; a child caught already finished
// would prove nothing, and the run is repeated.
static int killed_chapter_case(Chapter *ch, const char *good) {
    char path[4400];
    path_in(path, sizeof path, "slow.h5");
    write_slow_fixture(good, path);
    char *args[] = {"--fixture", path, NULL};
    const char *inputs[] = {path, NULL};
    Verdict v;
    KillWhenChild w = {0, 0, 0};
    int attempts = 0;
    for (;;) {
        memset(&w, 0, sizeof w);
        RunOptions opt = {0};
        opt.watch = kill_when_child;
        opt.ctx = &w;
        opt.limit = 60;
        attempts++;
        if (!run_or_fail("killed_chapter_leaves_no_child", ch->name, args, &opt, inputs, &v)) return 1;
        if (w.stopped || attempts == 5) break;
        run_result_free(&v.run);
    }
    double gone_after = -1;
    if (!w.stopped) {
        reason(&v, "in %d runs the reader child was never caught running (exit %d)", attempts, v.run.exit_code);
    } else {
        if (v.run.exit_code != 128 + SIGKILL) reason(&v, "exit %d, expected death by SIGKILL", v.run.exit_code);
        while (process_alive(w.child) && harness_seconds() - w.t0 < 5.0) usleep(2000);
        if (process_alive(w.child)) {
            reason(&v, "the reader child %d is still there %.1f s after its chapter was killed", (int)w.child,
                   harness_seconds() - w.t0);
            kill(w.child, SIGKILL);
        } else {
            gone_after = harness_seconds() - w.t0;
        }
    }
    snprintf(v.line, sizeof v.line, "(chapter killed while its stopped reader child %d was there: the child gone "
             "after %.3f s; %d run%s)", (int)w.child, gone_after, attempts, attempts == 1 ? "" : "s");
    finish("killed_chapter_leaves_no_child", ch->name, &v);
    unlink(path);
    return 1;
}

// A working directory with a trap in it. HDF5's in-memory driver opens the
// name it is given for the mapped fixture, to refuse one that would shadow a
// file: were that a relative name (litattn-snapshot-image, the name this
// case plants), a file of that name in the working directory would make
// every fixture "corrupt", and a FIFO would hang the chapter. Run from such
// a directory, the chapter prints what it prints anywhere.
static int working_directory_case(Chapter *ch, const char *good) {
    char dir[4400], trap[4500], fixture[PATH_MAX];
    path_in(dir, sizeof dir, "cwd");
    snprintf(trap, sizeof trap, "%s/litattn-snapshot-image", dir);
    if (mkdir(dir, 0755) != 0 || mkfifo(trap, 0644) != 0) die_setup("a FIFO", trap);
    if (!realpath(good, fixture)) die_setup("an absolute path", good);
    char *args[] = {"--fixture", fixture, NULL};
    const char *inputs[] = {good, NULL};
    RunOptions opt = {0};
    opt.cwd = dir;
    opt.limit = 20;
    expect_good_run("working_directory_with_a_fifo", ch, args, &opt, inputs,
                    "a FIFO named litattn-snapshot-image in the working directory");
    unlink(trap), rmdir(dir);
    return 1;
}

// No process to be had (fork, vfork, clone and clone3 fail). A fixture of
// exactly the bytes the chapter was built with is answered from the build's
// reading of it (lib/io/hdf5_snapshot.h), with no reader child: the good run's
// output. Any other file needs the child, and the chapter says it could not
// start one.
static int no_fork_cases(Chapter *ch, const char *unshipped) {
    RunOptions opt = {0};
    opt.no_fork = 1;
    char *args[] = {"--fixture", ch->good_path, NULL};
    const char *inputs[] = {ch->good_path, NULL};
    expect_good_run("shipped_fixture_without_fork", ch, args, &opt, inputs,
                    "the book fixture with fork and clone failing");
    char *other[] = {"--fixture", (char *)unshipped, NULL};
    const char *other_inputs[] = {unshipped, NULL};
    expect_refusal("other_fixture_without_fork", ch, other, &opt, other_inputs, "child process&fork");
    return 2;
}

// All of the above for one chapter; returns how many cases ran.
// --- a chapter that reads a text (--text): each bad text refused in one line -----------

// A text case: the chapter run with --text PATH and --dump onto an old
// file; exit 1, one line naming PATH, "expected", "found" and `mention`;
// stdout the good run's values up to where it stopped; the text and the old
// dump unchanged.
// unprivileged: as root, the chapter runs without root's power over file
// modes (harness.h), so that a file of mode 000 is refused to it.
static void bad_text_case_as(Chapter *ch, const char *kase, const char *path, const char *mention, int unprivileged) {
    char dump[4400];
    path_in(dump, sizeof dump, "old_dump.h5");
    write_text(dump, "an old dump, which a failed run must leave as it was\n");
    char *args[] = {"--text", (char *)path, "--dump", dump, NULL};
    const char *inputs[] = {path, dump, ch->good_path, NULL};
    RunOptions opt = {0};
    opt.unprivileged = unprivileged;
    Verdict v;
    if (!run_or_fail(kase, ch->name, args, &opt, inputs, &v)) return;
    check_failure(ch->name, 1, &v);
    must_mention_path(&v, path);
    must_mention(&v, "", "expected");
    must_mention(&v, "", "found");
    must_mention(&v, "", mention);
    check_stdout(&v, "prefix", ch->good_out);
    char left[1024];
    const char *keep[] = {"old_dump.h5", "text.txt", "dir", "fifo", "unreadable.txt", "bad_utf8.txt",
                          "bad_utf8_late.txt", "empty.txt", "three_tokens.txt", "huge.txt", NULL};
    if (leftovers(g.scratch, keep, left, sizeof left)) reason(&v, "left behind in %s: %s", g.scratch, left);
    finish(kase, ch->name, &v);
}

static void bad_text_case(Chapter *ch, const char *kase, const char *path, const char *mention) {
    bad_text_case_as(ch, kase, path, mention, 0);
}

static void write_bytes(const char *path, const char *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) die_setup("a file", path);
}

// The cases of one kind ("process", "text") on a chapter start here: they
// need its good run (else SKIP `what`, saying why, and 0) and an empty
// scratch directory, g.scratch = <catalogue>/<kind>-<chapter>.
static int begin_scratch(Chapter *ch, const char *kind, const char *what) {
    if (!ch->good_path || !ch->good_out) {
        skip(what, ch->name, "the chapter failed on its good fixture");
        return 0;
    }
    snprintf(g.scratch, sizeof g.scratch, "%s/%s-%s", g.catalogue_dir, kind, ch->name);
    remove_tree(g.scratch);
    if (mkdir(g.scratch, 0755) != 0) die_setup("a scratch directory", g.scratch);
    return 1;
}

// --dump onto the text or the vocabulary the run reads, however the path
// reaches it (as given, "./", "../dir/", a symbolic link, a hard link):
// refused in one line naming the target and the input, nothing printed,
// nothing written, the input byte for byte as it was. Files in their own
// directory (dump_inputs/), removed afterwards.
static int dump_onto_input_cases(Chapter *ch) {
    char dir[4400], text[4500], vocab[4500], soft[4500], hard[4500], dotdot[9000], vocab_soft[4500];
    path_in(dir, sizeof dir, "dump_inputs");
    if (mkdir(dir, 0755) != 0) die_setup("a directory", dir);
    snprintf(text, sizeof text, "%s/my.txt", dir);
    snprintf(vocab, sizeof vocab, "%s/vocab.tiktoken", dir);
    snprintf(soft, sizeof soft, "%s/link_to_my.txt", dir);
    snprintf(hard, sizeof hard, "%s/hard_link_of_my.txt", dir);
    snprintf(vocab_soft, sizeof vocab_soft, "%s/link_to_vocab.tiktoken", dir);
    const char *base = strrchr(g.scratch, '/') ? strrchr(g.scratch, '/') + 1 : g.scratch;
    snprintf(dotdot, sizeof dotdot, "../../%s/dump_inputs/my.txt", base);  // from dump_inputs/
    write_text(text, "Your journey starts with one step, and then the next one.");
    // GPT-2's own (--vocab FILE of this checker): without the refusal, the run would go on to the end and write.
    copy_file(g.vocab, vocab);
    if (symlink("my.txt", soft) != 0) die_setup("a symbolic link", soft);
    if (link(text, hard) != 0) die_setup("a hard link", hard);
    if (symlink("vocab.tiktoken", vocab_soft) != 0) die_setup("a symbolic link", vocab_soft);
    struct {
        const char *kase, *option, *input, *target, *what;
    } t[] = {
        {"dump_onto_the_text", "--text", text, text, "the text (--text)"},
        {"dump_onto_the_text_through_dot", "--text", text, "./my.txt", "the text (--text)"},
        {"dump_onto_the_text_through_dotdot", "--text", text, dotdot, "the text (--text)"},
        {"dump_onto_a_symlink_to_the_text", "--text", text, soft, "the text (--text)"},
        {"dump_onto_a_hard_link_of_the_text", "--text", text, hard, "the text (--text)"},
        {"dump_onto_the_vocabulary", "--vocab", vocab, vocab, "the vocabulary (--vocab)"},
        {"dump_onto_the_vocabulary_through_dot", "--vocab", vocab, "./vocab.tiktoken", "the vocabulary (--vocab)"},
        {"dump_onto_a_symlink_to_the_vocabulary", "--vocab", vocab, vocab_soft, "the vocabulary (--vocab)"},
    };
    const char *inputs[] = {text, vocab, NULL};
    const char *keep[] = {"my.txt", "vocab.tiktoken", "link_to_my.txt", "hard_link_of_my.txt",
                          "link_to_vocab.tiktoken", NULL};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char *args[] = {(char *)t[i].option, (char *)t[i].input, "--dump", (char *)t[i].target, NULL};
        RunOptions opt = {0};
        opt.cwd = dir;  // "./my.txt" and "../<scratch>/dump_inputs/my.txt" from there
        Verdict v;
        if (!run_or_fail(t[i].kase, ch->name, args, &opt, inputs, &v)) continue;
        check_failure(ch->name, 1, &v);
        must_mention(&v, "", t[i].target);
        must_mention(&v, "", t[i].what);
        must_mention(&v, "", "expected");
        must_mention(&v, "", "found");
        if (*v.run.out) reason(&v, "printed on stdout before refusing");
        check_dump_dir(&v, dir, keep, NULL, NULL);
        finish(t[i].kase, ch->name, &v);
    }
    remove_tree(dir);
    return (int)(sizeof t / sizeof *t);
}

// --vocab FILE: what is not GPT-2's vocabulary is refused in one line, as a bad text is.
static int bad_vocab_cases(Chapter *ch) {
    char p[4400];
    int n = 0;
    struct {
        const char *kase, *name, *content, *mention;
    } t[] = {
        {"vocab_missing", "no_such_vocab.tiktoken", NULL, "--vocab&no such file"},
        {"vocab_not_a_vocabulary", "not_a_vocab.tiktoken", "this is not base64 and a rank\n",
         "--vocab&tiktoken&line 1"},
        {"vocab_too_few_tokens", "three_tokens.tiktoken", "IQ== 0\nIg== 1\nIw== 2\n", "--vocab&3 tokens&50256"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        path_in(p, sizeof p, t[i].name);
        if (t[i].content) write_text(p, t[i].content);
        char *args[] = {"--vocab", p, NULL};
        const char *inputs[] = {t[i].content ? p : NULL, NULL};
        Verdict v;
        if (!run_or_fail(t[i].kase, ch->name, args, NULL, inputs, &v)) continue;
        check_failure(ch->name, 1, &v);
        must_mention_path(&v, p);
        must_mention(&v, "", t[i].mention);
        must_mention(&v, "", "expected");
        must_mention(&v, "", "found");
        check_stdout(&v, "prefix", ch->good_out);
        finish(t[i].kase, ch->name, &v);
        unlink(p);
        n++;
    }
    return n;
}

static int text_cases(Chapter *ch) {
    if (!ch->reads_text) return 0;
    if (!g.vocab) {
        fprintf(stderr, "error_check: %s reads a text: its cases need --vocab GPT2_TIKTOKEN\n", ch->name);
        exit(2);
    }
    if (!begin_scratch(ch, "text", "text cases")) return 0;
    char p[4400];
    int n = 0;
    // A good text first: the cases below can fail only by what they break.
    path_in(p, sizeof p, "text.txt");
    write_text(p, "Your journey starts with one step. Every effort moves you forward, one token at a time.\n");
    {
        char *args[] = {"--text", p, NULL};
        const char *inputs[] = {p, NULL};
        Verdict v;
        if (run_or_fail("text_good", ch->name, args, NULL, inputs, &v)) {
            if (v.run.exit_code != 0 || *v.run.err)
                reason(&v, "exit %d, stderr '%s': expected 0 and nothing", v.run.exit_code, v.line);
            snprintf(v.line, sizeof v.line, "(a good --text: exit %d)", v.run.exit_code);
            finish("text_good", ch->name, &v);
        }
        n++;
    }
    n += dump_onto_input_cases(ch);
    n += bad_vocab_cases(ch);
    path_in(p, sizeof p, "no_such_text.txt");
    bad_text_case(ch, "text_missing", p, "no such file"), n++;
    // The default run takes one case of each kind of refusal (the path, its
    // bytes, its tokens, its size); the full run adds the second of a kind.
    const int full = g.full;
    path_in(p, sizeof p, "dir");
    if (mkdir(p, 0755) != 0) die_setup("a directory", p);
    if (full) bad_text_case(ch, "text_directory", p, "a directory"), n++;
    path_in(p, sizeof p, "fifo");
    if (mkfifo(p, 0644) != 0) die_setup("a FIFO", p);
    bad_text_case(ch, "text_fifo", p, "a FIFO"), n++;  // refused at once, never waited on
    path_in(p, sizeof p, "unreadable.txt");
    write_text(p, "a text nobody may read\n");
    chmod(p, 0);
    if (full) bad_text_case_as(ch, "text_unreadable", p, "permission denied", 1), n++;
    chmod(p, 0644);
    path_in(p, sizeof p, "bad_utf8.txt");
    static const char bad_utf8[] = "Hello \xff world, one two three four five six";
    write_bytes(p, bad_utf8, sizeof bad_utf8 - 1);
    bad_text_case(ch, "text_invalid_utf8", p, "byte offset 6"), n++;
    // After a two-byte character, a lead byte cut short: Python's .start is 9.
    path_in(p, sizeof p, "bad_utf8_late.txt");
    static const char bad_utf8_late[] = "caf\xc3\xa9 ok \xe2\x82 then more words follow here";
    write_bytes(p, bad_utf8_late, sizeof bad_utf8_late - 1);
    if (full) bad_text_case(ch, "text_invalid_utf8_late", p, "byte offset 9"), n++;
    path_in(p, sizeof p, "empty.txt");
    write_text(p, "");
    if (full) bad_text_case(ch, "text_empty", p, "found 0 tokens&max_length = 4"), n++;
    path_in(p, sizeof p, "three_tokens.txt");
    write_text(p, "one two three");
    bad_text_case(ch, "text_too_few_tokens", p, "found 3 tokens&max_length = 4"), n++;
    // Past the documented limit (64 MiB): a sparse file, refused before a byte is read.
    path_in(p, sizeof p, "huge.txt");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, ((off_t)64 << 20) + 1) != 0 || close(fd) != 0) die_setup("a large file", p);
    bad_text_case(ch, "text_too_large", p, "64 MiB&67108865 bytes"), n++;
    remove_tree(g.scratch);
    return n;
}

static int process_cases(Chapter *ch) {
    if (!process_chapter(ch)) return 0;  // the default selection runs them on two chapters
    if (g.n_wrap) {
        skip("process-level cases", ch->name, "not under --wrap (they time and signal the chapter itself)");
        return 0;
    }
    if (!begin_scratch(ch, "process", "process-level cases")) return 0;
    char fixture[4400];
    path_in(fixture, sizeof fixture, "fixture.h5");
    copy_unshipped(ch->good_path, fixture);
    int n = 0;
    n += dump_success_case(ch, fixture);  // first: it times a good dump
    n += dump_onto_fixture_cases(ch, fixture);
    n += dump_onto_special_cases(ch, fixture);
    n += dump_failure_cases(ch, fixture);
    n += dump_signal_cases(ch, fixture);
    n += long_path_cases(ch, fixture);
    n += long_message_cases(ch, fixture);
    n += locked_fixture_case(ch, fixture);
    n += fifo_race_case(ch, fixture);
    n += descriptor_limit_case(ch, fixture);
    n += killed_chapter_case(ch, fixture);
    n += working_directory_case(ch, fixture);
    n += no_fork_cases(ch, fixture);
    remove_tree(g.scratch);
    return n;
}
