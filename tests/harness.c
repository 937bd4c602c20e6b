// harness.c: spawning chapters for the test drivers.
#define _GNU_SOURCE  // wait4
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "fixture.h"
#include "strbuf.h"


// The system-call convention the filter below applies to: this program's own.
#if defined(__x86_64__)
#define HARNESS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HARNESS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "tests/harness.c: no seccomp architecture for this target (add its AUDIT_ARCH_*)"
#endif

// Makes the system calls `nr` (n of them, at most 4) fail with errno `e`
// from now on, in this process and what it executes. Returns 0 if the
// kernel refused the filter.
static int install_failing_filter(const int *nr, int n, int e) {
    struct sock_filter code[10] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HARNESS_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    };
    if (n < 1 || n > 4) return 0;
    int k = 4;
    for (int i = 0; i < n; i++)  // to the ERRNO return, past the ALLOW after the jumps
        code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr[i], (unsigned char)(n - i), 0);
    code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)e & SECCOMP_RET_DATA));
    struct sock_fprog prog = {(unsigned short)k, code};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// A full device, for the one kind of write HDF5's file driver makes.
static int install_enospc_filter(void) {
    static const int nr[] = {SYS_pwrite64, SYS_pwritev, SYS_pwritev2};
    return install_failing_filter(nr, 3, ENOSPC);
}

// No new process or thread: fork, vfork, clone and clone3 fail with EAGAIN.
static int install_no_fork_filter(void) {
    static const int nr[] = {
#ifdef SYS_fork  // not on every architecture (glibc forks with clone)
        SYS_fork, SYS_vfork,
#endif
        SYS_clone, SYS_clone3};
    return install_failing_filter(nr, (int)(sizeof nr / sizeof *nr), EAGAIN);
}

// The signals every program the tests run starts with at their defaults.
// Root keeps its user id but gives up CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH, here and across exec (bounding and inheritable sets
// too): a file's mode then applies to it as to its owner, so a file of mode
// 000 is refused, while every path root owns (a checkout under /root, whose
// mode is 700) stays reachable. 1 when done.
static int drop_file_capabilities(void) {
    const int drop[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH};
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &head, data) != 0) return 0;
    for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) {
        if (prctl(PR_CAPBSET_DROP, drop[i], 0, 0, 0) != 0) return 0;
        const unsigned bit = 1u << (drop[i] % 32);
        data[drop[i] / 32].effective &= ~bit;
        data[drop[i] / 32].permitted &= ~bit;
        data[drop[i] / 32].inheritable &= ~bit;
    }
    return syscall(SYS_capset, &head, data) == 0;
}

static sigset_t default_signals(void) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaddset(&set, sigs[i]);
    return set;
}

void harness_default_signals(void) {
    sigset_t set = default_signals(), none;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&set, sig) == 1) signal(sig, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

int run_program(char *const argv[], double limit, RunResult *res) {
    RunOptions opt = {0};
    opt.limit = limit;
    return run_program_with(argv, &opt, res);
}

static double since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

// LITATTN_EXE_WRAPPER (harness.h): its words, split at spaces once; NULL-terminated.
#define WRAPPER_WORDS 16
static char **exe_wrapper(void) {
    static char copy[1024], *words[WRAPPER_WORDS + 1];
    static int done;
    if (!done) {
        done = 1;
        const char *w = getenv("LITATTN_EXE_WRAPPER");
        snprintf(copy, sizeof copy, "%s", w ? w : "");
        int n = 0;
        for (char *tok = strtok(copy, " "); tok && n < WRAPPER_WORDS; tok = strtok(NULL, " ")) words[n++] = tok;
        words[n] = NULL;
    }
    return words[0] ? words : NULL;
}

// The time limits are hang guards for a chapter on two busy cores. AddressSanitizer
// (its shadow memory and checks on every access) and gcov's counters make
// every program several times slower: under either, each limit is five times
// as long (CI's sanitizer run, .ci/run, also gives meson's limits three times).
#if defined(__SANITIZE_ADDRESS__) || defined(LITATTN_COVERAGE)
#define SLOW_BUILD 5
#else
#define SLOW_BUILD 1
#endif

int run_program_with(char *const argv[], const RunOptions *opt, RunResult *res) {
    int out_pipe[2], err_pipe[2];
    memset(res, 0, sizeof *res);
    // Through a wrapper (an emulator: several times slower), ten times the limit;
    // in a build whose programs run several times slower (SLOW_BUILD), five times.
    const double limit = (opt->limit > 0 ? opt->limit : RUN_LIMIT_SECONDS) * (exe_wrapper() ? 10 : 1) * SLOW_BUILD;
    if (pipe(out_pipe) != 0) return 0;
    if (pipe(err_pipe) != 0) {
        close(out_pipe[0]), close(out_pipe[1]);
        return 0;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(NULL);
    pid_t pid = -1;
    // With a working directory of its own, the program by its absolute path:
    // a relative one would be looked up from there.
    char exe[PATH_MAX];
    const char *path = argv[0];
    if (opt->cwd && realpath(argv[0], exe)) path = exe;
    // Through the wrapper, if one is set: WRAPPER... PATH ARGS..., the wrapper found on PATH.
    char **wrapper = exe_wrapper(), *wrapped[WRAPPER_WORDS + 256];
    char *const *run_argv = argv;
    const char *file = path;
    if (wrapper) {
        int n = 0;
        while (wrapper[n]) wrapped[n] = wrapper[n], n++;
        wrapped[n++] = (char *)path;
        for (int i = 1; argv[i]; i++) {
            if (n == WRAPPER_WORDS + 255) {
                close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
                return 0;
            }
            wrapped[n++] = argv[i];
        }
        wrapped[n] = NULL;
        run_argv = wrapped;
        file = wrapper[0];
    }
    // A plain run is spawned (posix_spawn: no copy of this process's page
    // tables, and no copy-on-write faults on its heap afterwards, which in a
    // driver that runs hundreds of chapters cost more than the chapters);
    // one with limits or a filter to set is forked, which can.
    const int plain = opt->nofile <= 0 && opt->fsize <= 0 && !opt->pwrite_enospc && !opt->no_fork && !opt->unprivileged;
    if (plain) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, opt->stdout_fd > 0 ? opt->stdout_fd : out_pipe[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, err_pipe[1], STDERR_FILENO);
        int pipes[] = {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]};
        for (int i = 0; i < 4; i++)
            if (pipes[i] > STDERR_FILENO) posix_spawn_file_actions_addclose(&fa, pipes[i]);
        if (opt->pass_fd > 0) posix_spawn_file_actions_adddup2(&fa, opt->pass_fd, opt->pass_fd);  // kept across exec
        if (opt->cwd) posix_spawn_file_actions_addchdir_np(&fa, opt->cwd);
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t defaults = default_signals(), none;
        sigemptyset(&none);
        posix_spawnattr_setsigdefault(&attr, &defaults);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
        int e = wrapper ? posix_spawnp(&pid, file, &fa, &attr, run_argv, environ)
                        : posix_spawn(&pid, file, &fa, &attr, run_argv, environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        if (e != 0) {
            // As a forked child that cannot exec reports it: exit 127, the reason on stderr.
            close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
            StrBuf why = {0};
            sb_printf(&why, "cannot run %s: %s\n", argv[0], strerror(e));
            res->exit_code = 127;
            res->out = strdup("");
            res->err = sb_take(&why);
            res->seconds = since(&t0);
            return res->out && res->err;
        }
    } else {
        pid = fork();
    }
    if (pid < 0) {
        close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
        return 0;
    }
    if (pid == 0 && !plain) {
        harness_default_signals();
        dup2(opt->stdout_fd > 0 ? opt->stdout_fd : out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
        if (opt->pass_fd > 0) fcntl(opt->pass_fd, F_SETFD, 0);  // kept across exec
        if (opt->nofile > 0) {
            struct rlimit r = {(rlim_t)opt->nofile, (rlim_t)opt->nofile};
            if (setrlimit(RLIMIT_NOFILE, &r) != 0) _exit(126);
        }
        if (opt->fsize > 0) {
            struct rlimit r = {(rlim_t)opt->fsize, (rlim_t)opt->fsize};
            if (setrlimit(RLIMIT_FSIZE, &r) != 0) _exit(126);
        }
#ifdef LITATTN_COVERAGE
        // A coverage build (b_coverage) adds each run's counters to the .gcda
        // files at exit. A run under a descriptor, file-size or device limit
        // would write them cut short (a file-size limit smaller than a .gcda),
        // and every later run's merge would then fail on that file: such a run
        // writes none (under a prefix no directory can be made in; gcc's
        // runtime says so on stderr, which error_check leaves out).
        if (opt->nofile > 0 || opt->fsize > 0 || opt->pwrite_enospc)
            setenv("GCOV_PREFIX", "/dev/null/no-counters", 1);
#endif
        if (opt->no_fork) {
            // LeakSanitizer's check at exit runs in a thread of its own, which
            // the filter forbids: such a run is not checked for leaks (every
            // other run of the sanitizer build is).
            const char *asan = getenv("ASAN_OPTIONS");
            char with[1024];
            snprintf(with, sizeof with, "%s%sdetect_leaks=0", asan ? asan : "", asan && *asan ? ":" : "");
            setenv("ASAN_OPTIONS", with, 1);
        }
        if ((opt->pwrite_enospc && !install_enospc_filter()) || (opt->no_fork && !install_no_fork_filter())) {
            fprintf(stderr, "cannot install the seccomp filter: %s\n", strerror(errno));
            _exit(126);
        }
        if (opt->cwd && chdir(opt->cwd) != 0) _exit(126);
        // Without CAP_SETPCAP (some containers' root) the bounding set stays:
        // then the run is nobody's (uid and gid 65534), who reaches any
        // checkout but one under a directory of mode 700.
        if (opt->unprivileged && geteuid() == 0 && !drop_file_capabilities() &&
            (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
            fprintf(stderr, "cannot give up root's power over file modes, nor run as nobody: %s\n", strerror(errno));
            _exit(126);
        }
        if (wrapper) execvp(file, run_argv);
        else execv(file, run_argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (opt->stdout_fd > 0) close(out_pipe[0]), out_pipe[0] = -1;
    // Read both pipes as they fill, so neither can block the child.
    StrBuf out = {0}, err = {0};
    sb_puts(&out, "");
    sb_puts(&err, "");
    struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = out_pipe[0] >= 0 ? 2 : 1;
    int watching = opt->watch != NULL;
    while (open_fds > 0) {
        if (watching) watching = !opt->watch(pid, opt->ctx);
        double left = limit - since(&t0);
        if (left <= 0) {
            kill(pid, SIGKILL);
            res->timed_out = 1;
            for (int i = 0; i < 2; i++)
                if (fds[i].fd >= 0) close(fds[i].fd);
            break;
        }
        int ready = poll(fds, 2, watching ? 1 : (int)(left * 1000) + 1);
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char chunk[8192];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                sb_put(i == 0 ? &out : &err, chunk, (size_t)n);
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    res->out = sb_take(&out);
    res->err = sb_take(&err);
    res->seconds = since(&t0);
    res->cpu_seconds = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                       (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    return 1;
}

void run_result_free(RunResult *res) {
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

int fixture_seed_args(const char *path, const char *group, SeedArgs *out) {
    char err[FIXTURE_ERR_LEN];
    Fixture *fx = fixture_open(path, group, err);
    if (!fx) {
        fprintf(stderr, "%s\n", err);
        return 0;
    }
    int ok = fixture_seed_args_of(fx, out);
    fixture_close(fx);
    return ok;
}

// Whether attribute `name` seeds a draw: "seed" (*site_len = 0) or
// "SITE.seed" (*site_len = the length of SITE).
static int is_seed_attr(const char *name, size_t *site_len) {
    size_t len = strlen(name);
    *site_len = len > 5 ? len - 5 : 0;
    return !strcmp(name, "seed") || (len > 5 && !strcmp(name + len - 5, ".seed"));
}

int fixture_has_seed(Fixture *fx) {
    size_t site_len;
    for (int i = 0; i < fixture_attr_count(fx); i++)
        if (is_seed_attr(fixture_attr_name(fx, i), &site_len)) return 1;
    return 0;
}

int fixture_seed_args_of(Fixture *fx, SeedArgs *out) {
    char err[FIXTURE_ERR_LEN];
    memset(out, 0, sizeof *out);
    int ok = 1, texts = 0, seeds = 0;
    for (int i = 0; ok && i < fixture_attr_count(fx) && texts < 14; i++) {
        const char *name = fixture_attr_name(fx, i);
        size_t site_len;
        if (!is_seed_attr(name, &site_len)) continue;
        char value[64];
        if (!(ok = fixture_attr_string(fx, name, value, sizeof value, err))) break;
        if (!strcmp(name, "seed")) snprintf(out->text[texts], sizeof out->text[0], "%s", value);
        else snprintf(out->text[texts], sizeof out->text[0], "%.*s=%s", (int)site_len, name, value);
        out->argv[out->n++] = "--seed";
        out->argv[out->n++] = out->text[texts++];
        seeds++;
    }
    long long k = 0;
    ok = ok && (!fixture_has_attr(fx, "skip") || fixture_attr_int(fx, "skip", &k, err));
    if (ok && !seeds) snprintf(err, sizeof err, "%s: expected a 'seed' attribute, found none", fixture_path(fx)), ok = 0;
    if (!ok) fprintf(stderr, "%s\n", err);
    snprintf(out->text[texts], sizeof out->text[0], "%lld", k);
    out->argv[out->n++] = "--skip";
    out->argv[out->n++] = out->text[texts];
    return ok;
}

char *read_whole_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    StrBuf b = {0};
    char chunk[65536];
    size_t n;
    sb_puts(&b, "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_put(&b, chunk, n);
    fclose(f);
    if (len) *len = b.len;
    return sb_take(&b);
}

int copy_file_with(const char *from, const char *to, int extra) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    for (int i = 0; ok && i < extra; i++) ok = fputc(0, out) != EOF;
    if (in) fclose(in);
    if (out) ok = fclose(out) == 0 && ok;
    return ok;
}

// Where scratch files go: $TMPDIR if set; else /dev/shm when it is a memory
// file system with 1 GiB free (a GPT-2-size --dump is about 140 MB, written and
// synced, then read back: on a disk that was a second of each such test);
// else /tmp.
static const char *scratch_dir(void) {
    const char *dir = getenv("TMPDIR");
    if (dir && *dir) return dir;
    struct statfs fs;
    if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
        (unsigned long long)fs.f_bavail * (unsigned long long)fs.f_bsize >= (1ull << 30) && access("/dev/shm", W_OK) == 0)
        return "/dev/shm";
    return "/tmp";
}

void temp_path(char *buf, size_t len, const char *tag) {
    snprintf(buf, len, "%s/litattn-%s-XXXXXX", scratch_dir(), tag);
    int fd = mkstemp(buf);
    if (fd < 0) {
        fprintf(stderr, "cannot create a scratch file %s: %s\n", buf, strerror(errno));
        exit(1);
    }
    close(fd);
}

int child_pids(pid_t pid, pid_t *out, int max) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    int count = 0;
    for (char *tok = strtok(buf, " \n"); tok && count < max; tok = strtok(NULL, " \n")) out[count++] = (pid_t)atoi(tok);
    return count;
}

int process_alive(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');  // the state follows the command name
    return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' && close_paren[2] != 'X';
}

int write_endless_opens(int64_t file, int links) {
    hid_t g = H5Gcreate2(file, "endless", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return 0;
    int ok = H5Lcreate_hard(file, "/endless", g, "endless", H5P_DEFAULT, H5P_DEFAULT) >= 0;
    hsize_t three = 3;
    hid_t space = H5Screate_simple(1, &three, NULL);
    hid_t ds = H5Dcreate2(g, "d", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = ok && ds >= 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(space);
    // hop_k -> /endless/endless/.../endless/hop_{k+1}; the last hop -> .../d
    const size_t step = strlen("endless/");
    char *target = malloc(1 + HARNESS_ENDLESS_DEPTH * step + 32);
    ok = ok && target;
    for (int k = HARNESS_ENDLESS_HOPS; k >= 1 && ok; k--) {
        char *p = target;
        *p++ = '/';
        for (int i = 0; i < HARNESS_ENDLESS_DEPTH; i++, p += step) memcpy(p, "endless/", step);
        if (k == HARNESS_ENDLESS_HOPS) snprintf(p, 32, "d");
        else snprintf(p, 32, "hop_%d", k + 1);
        char name[32];
        snprintf(name, sizeof name, "hop_%d", k);
        ok = H5Lcreate_soft(target, g, name, H5P_DEFAULT, H5P_DEFAULT) >= 0;
    }
    free(target);
    for (int i = 0; i < links && ok; i++) {
        char name[32];
        snprintf(name, sizeof name, "endless_%04d", i);
        ok = H5Lcreate_soft("/endless/hop_1", file, name, H5P_DEFAULT, H5P_DEFAULT) >= 0;
    }
    H5Gclose(g);
    return ok;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double harness_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double harness_cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec);
}

double harness_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    char (*names)[128];
    int len, cap;
} CaseNames;

static void collect_case(const char *name, const char *role, void *ctx) {
    (void)role;
    CaseNames *n = ctx;
    if (n->len == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 256;
        n->names = realloc(n->names, (size_t)n->cap * sizeof *n->names);
        if (!n->names) die(EXIT_BAD_INPUT, "out of memory listing cases");
    }
    snprintf(n->names[n->len++], sizeof *n->names, "%s", name);
}

// One case: its group, from the snapshot of the whole file.
static void run_one_case(Fixture *all, const char *name, const char *attr, CaseKind *kinds, int n_kinds) {
    char err[FIXTURE_ERR_LEN], kind[64];
    Fixture *fx = fixture_group(all, name, err);
    if (!fx) die(EXIT_BAD_INPUT, "%s", err);
    if (!fixture_attr_string(fx, attr, kind, sizeof kind, err)) die(EXIT_BAD_INPUT, "%s", err);
    int k = 0;
    while (k < n_kinds && strcmp(kinds[k].name, kind) != 0) k++;
    if (k == n_kinds) die(EXIT_BAD_INPUT, "%s: unknown %s '%s'", fixture_path(fx), attr, kind);
    kinds[k].run(fx, name);
    kinds[k].cases++;
    fixture_close(fx);
    tensor_release_all();
}

int run_case_file(const char *path, const char *attr, CaseKind *kinds, int n_kinds, int *missing) {
    char err[FIXTURE_ERR_LEN];
    // Every group read in one child process: one snapshot, not one per case.
    Fixture *fx = fixture_open_all(path, err);
    if (!fx) die(EXIT_BAD_INPUT, "%s", err);
    CaseNames cases = {0};
    if (!fixture_each_group(fx, collect_case, &cases, err)) die(EXIT_BAD_INPUT, "%s", err);
    for (int i = 0; i < cases.len; i++) run_one_case(fx, cases.names[i], attr, kinds, n_kinds);
    fixture_close(fx);
    *missing = 0;
    for (int k = 0; k < n_kinds; k++) {
        if (kinds[k].cases == 0) {
            printf("FAIL %s: no case in %s\n", kinds[k].name, path);
            ++*missing;
        }
    }
    free(cases.names);
    return cases.len;
}

int harness_full_selection(const char *driver, int argc, char **argv) {
    const char *tests = getenv("LITATTN_TESTS");
    if (tests && *tests && strcmp(tests, "full") != 0 && strcmp(tests, "default") != 0) {
        fprintf(stderr, "%s: LITATTN_TESTS is '%s': expected full or default\n", driver, tests);
        exit(2);
    }
    int full = tests && !strcmp(tests, "full");
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--full")) full = 1;
    return full;
}

#if defined(__x86_64__)
// The core's mul + add peak, measured: independent chains of vmulps and
// vaddps (7 of each, enough to cover their latency on both pipes of each),
// the instructions the exact kernels issue. GFLOP/s counting each lane of
// each instruction as one flop; the fastest of 30 windows. zmm on AVX-512,
// ymm on AVX2; 0 if the CPU lacks it.
#define MULADD_ROUND(r)                                                                              \
    "vmulps %%" r "14, %%" r "0, %%" r "0\n\tvmulps %%" r "14, %%" r "1, %%" r "1\n\t"           \
    "vmulps %%" r "14, %%" r "2, %%" r "2\n\tvmulps %%" r "14, %%" r "3, %%" r "3\n\t"            \
    "vmulps %%" r "14, %%" r "4, %%" r "4\n\tvmulps %%" r "14, %%" r "5, %%" r "5\n\t"            \
    "vmulps %%" r "14, %%" r "6, %%" r "6\n\t"                                                   \
    "vaddps %%" r "15, %%" r "7, %%" r "7\n\tvaddps %%" r "15, %%" r "8, %%" r "8\n\t"            \
    "vaddps %%" r "15, %%" r "9, %%" r "9\n\tvaddps %%" r "15, %%" r "10, %%" r "10\n\t"          \
    "vaddps %%" r "15, %%" r "11, %%" r "11\n\tvaddps %%" r "15, %%" r "12, %%" r "12\n\t"        \
    "vaddps %%" r "15, %%" r "13, %%" r "13\n\t"
#define MULADD_ZERO(r)                                                                               \
    "vxorps %%" r "0, %%" r "0, %%" r "0\n\tvxorps %%" r "1, %%" r "1, %%" r "1\n\t"              \
    "vxorps %%" r "2, %%" r "2, %%" r "2\n\tvxorps %%" r "3, %%" r "3, %%" r "3\n\t"              \
    "vxorps %%" r "4, %%" r "4, %%" r "4\n\tvxorps %%" r "5, %%" r "5, %%" r "5\n\t"              \
    "vxorps %%" r "6, %%" r "6, %%" r "6\n\tvxorps %%" r "7, %%" r "7, %%" r "7\n\t"              \
    "vxorps %%" r "8, %%" r "8, %%" r "8\n\tvxorps %%" r "9, %%" r "9, %%" r "9\n\t"              \
    "vxorps %%" r "10, %%" r "10, %%" r "10\n\tvxorps %%" r "11, %%" r "11, %%" r "11\n\t"        \
    "vxorps %%" r "12, %%" r "12, %%" r "12\n\tvxorps %%" r "13, %%" r "13, %%" r "13\n\t"        \
    "vxorps %%" r "14, %%" r "14, %%" r "14\n\tvxorps %%" r "15, %%" r "15, %%" r "15\n\t"
#define MULADD_BLOCK(r) MULADD_ZERO(r) MULADD_ROUND(r) MULADD_ROUND(r) MULADD_ROUND(r) MULADD_ROUND(r) \
    MULADD_ROUND(r) MULADD_ROUND(r) MULADD_ROUND(r) MULADD_ROUND(r) "vzeroupper\n\t"
#define MULADD_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
    "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

double harness_mul_add_peak(int avx512) {
    __builtin_cpu_init();
    if (avx512 ? !__builtin_cpu_supports("avx512f") : !__builtin_cpu_supports("avx2")) return 0;
    const long passes = 20000;  // x 8 rounds x 14 instructions
    double best = 0;
    for (int rep = 0; rep < 30; rep++) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < passes; i++) {
            if (avx512) __asm__ volatile(MULADD_BLOCK("zmm")::: MULADD_CLOBBERS);
            else __asm__ volatile(MULADD_BLOCK("ymm")::: MULADD_CLOBBERS);
        }
        const double gflops = (double)passes * 8 * 14 * (avx512 ? 16 : 8) / since(&t0) * 1e-9;
        if (gflops > best) best = gflops;
    }
    return best;
}
#else
// No peak loop for this architecture: the benchmarks say the peak was not measured.
double harness_mul_add_peak(int avx512) {
    (void)avx512;
    return 0;
}
#endif

float *harness_uniform_floats(pcg32_random_t *rng, long n, float lo, float hi, const char *who) {
    float *x = malloc((size_t)n * sizeof(float));
    if (!x) {
        fprintf(stderr, "%s: out of memory\n", who);
        exit(3);
    }
    for (long i = 0; i < n; i++) x[i] = lo + (hi - lo) * (float)pcg32_double_r(rng);
    return x;
}
