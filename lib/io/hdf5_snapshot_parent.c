// hdf5_snapshot_parent.c: the parent of hdf5_snapshot.h. It answers a shipped
// fixture from its records (hdf5_snapshot_shipped.c); any other file it
// reads in a reader child (hdf5_snapshot_child.c): it forks the child over
// a pipe and the shared progress page, collects its records until the pipe
// closes (at most the stream's limit, within the wall-clock limit, against
// a blocked read), decodes them (hdf5_snapshot_records.c), and, when the
// records end short, reports in one line why: the wall-clock, CPU or
// memory limit, HDF5's crash (the signal) or its failure, each with where
// HDF5 was. A child that sent its whole snapshot is reaped later. Also
// what the build compiles in for a fixture (hdf5_snapshot_shippable).
// State: the progress page, the last child to reap, the count of children,
// the process's.
#define _GNU_SOURCE  // wait4
#include "hdf5_snapshot.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"
#include "hdf5_snapshot_records.h"

// What the parent accepts from the child at most, all datasets together,
// beyond the values the limit allows for one dataset.
#define STREAM_SLACK (64LL << 20)

// What the child wrote, as the parent collects it.
typedef struct {
    unsigned char *data;
    size_t len, cap;
} Records;

static int grow(Records *r, size_t more) {
    if (r->len + more <= r->cap) return 1;
    size_t cap = r->cap ? r->cap : 1 << 16;
    while (cap < r->len + more) cap *= 2;
    r->data = xrealloc(r->data, cap, "the reader's records");
    r->cap = cap;
    return 1;
}

// A child that sent its whole snapshot is reaped later: its exit (the
// kernel tearing down its memory) then overlaps the chapter's own work
// instead of adding to it. Reaped before the next snapshot and at exit,
// so every child is reaped on every path.
static pid_t pending_child;

static void reap_pending(void) {
    if (pending_child <= 0) return;
    while (waitpid(pending_child, NULL, 0) < 0 && errno == EINTR) {
    }
    pending_child = 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    default: return "a signal";
    }
}

static int children;  // reader children started, for hdf5_snapshot_children
static Limits lim;    // the limits of the snapshot being read
static Progress *progress;  // the page shared with the children, mapped at the first

// Reads the file in a child process (hdf5_snapshot_child); with keep, the
// records it wrote are handed back there as well.
static int read_in_child(int fd, const char *label, const char *group, Snapshot *out, Records *keep, char *err,
                         size_t len) {
    reap_pending();
    if (!progress) {
        if (mem_fails_next()) die_oom(sizeof *progress, "the page shared with the reader child");
        void *page = mmap(NULL, sizeof *progress, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED && errno == ENOMEM) die_oom(sizeof *progress, "the page shared with the reader child");
        if (page == MAP_FAILED) {
            snprintf(err, len, "%s: expected to read the file in a child process, found no memory to share with it "
                     "(%s)", label, strerror(errno));
            return 0;
        }
        progress = page;
    }
    memset(progress, 0, sizeof *progress);
    snprintf(progress->last, sizeof progress->last, "the file");
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, len, "%s: expected to read the file in a child process, found no pipe for it (%s%s)", label,
                 strerror(errno), errno == EMFILE ? ": the limit on open files is reached" : "");
        return 0;
    }
    fflush(NULL);  // the child must not inherit unwritten output
    pid_t parent = getpid();
    pid_t pid = fork();
    children += pid > 0;
    if (pid < 0) {
        snprintf(err, len, "%s: expected to read the file in a child process, found fork failing (%s)", label,
                 strerror(errno));
        close(fds[0]), close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        hdf5_snapshot_child(fd, parent, group, fds[1], &lim, progress);
    }
    close(fds[1]);

    // Collect everything the child writes, until it closes the pipe or the
    // wall-clock limit (a blocked read, which costs no CPU time) is up.
    Records r = {0};
    int timed_out = 0, too_much = 0;
    const size_t max_stream = (size_t)(STREAM_SLACK + 4 * lim.max_elements);
    double deadline = now() + lim.wall_seconds;
    for (;;) {
        double left = deadline - now();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int ready = poll(&p, 1, (int)(left * 1000) + 1);
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        if (r.len > max_stream || !grow(&r, 1 << 16)) {
            too_much = 1;
            break;
        }
        ssize_t n = read(fds[0], r.data + r.len, r.cap - r.len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) break;
        r.len += (size_t)n;
    }
    close(fds[0]);
    if (timed_out || too_much) kill(pid, SIGKILL);
    Stream s = {r.data, r.len, 0, 0};
    int complete = !timed_out && !too_much && hdf5_snapshot_decode(&s, out, lim.max_elements);
    if (complete && keep) *keep = r;
    else free(r.data);
    if (complete) {
        // Whatever the child does after its last record cannot change the
        // snapshot: it is reaped later (reap_pending), and its exit (the
        // kernel taking its memory apart) overlaps the chapter's own work.
        static int registered;
        if (!registered) registered = atexit(reap_pending) == 0;
        pending_child = pid;
        if (!registered) reap_pending();
        return 1;
    }
    // Reaped now, the rusage telling what a SIGKILL was for.
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    const char *last = progress->last;
    snapshot_free(out);
    double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                 1e-6 * (double)ru.ru_stime.tv_usec;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (timed_out)
        snprintf(err, len, "%s: expected a file HDF5 reads in under %g s, found one it was still reading after "
                 "that (a blocked read? at %s)", label, lim.wall_seconds, last);
    else if (too_much)
        snprintf(err, len, "%s: expected a file whose contents fit in %zu MiB, found more (at %s)", label,
                 max_stream >> 20, last);
    else if (sig == SIGXCPU || (sig == SIGKILL && cpu >= lim.cpu_seconds))
        snprintf(err, len, "%s: expected a file HDF5 reads within %.0f s of CPU time, found one it spent longer "
                 "on (at %s)", label, (double)(rlim_t)(lim.cpu_seconds + 0.999), last);
    else if (progress->memory_failed)
        snprintf(err, len, "%s: expected a file HDF5 reads within %lld MiB of memory, found one it needed more for "
                 "(at %s)", label, lim.memory_bytes >> 20, last);
    else if (sig)
        snprintf(err, len, "%s: expected a file the HDF5 library can read, found one that crashes it (%s, at %s)",
                 label, signal_name(sig), last);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        snprintf(err, len, "%s: expected a file the HDF5 library can read, found one it sent an incomplete "
                 "description of (at %s)", label, last);
    else
        snprintf(err, len, "%s: expected a file the HDF5 library can read, found one that makes it fail "
                 "(exit %d, at %s)", label, WIFEXITED(status) ? WEXITSTATUS(status) : -1, last);
    return 0;
}

int hdf5_snapshot_children(void) { return children; }

int hdf5_snapshot(int fd, const char *label, const char *group, const SnapshotLimits *limits, Snapshot *out,
                  char *err, size_t len) {
    memset(out, 0, sizeof *out);
    lim = snapshot_limits(limits);
    if (hdf5_snapshot_from_shipped(fd, group, &lim, out)) return 1;
    return read_in_child(fd, label, group, out, NULL, err, len);
}

int hdf5_snapshot_shippable(int fd, const char *label, unsigned char **bytes, size_t *size,
                            unsigned char **records, size_t *records_size, char *err, size_t len) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        snprintf(err, len, "%s: expected a non-empty regular file, found something else", label);
        return 0;
    }
    errno = 0;
    if (!(*bytes = hdf5_snapshot_read_bytes(fd, (size_t)st.st_size))) {
        snprintf(err, len, "%s: expected %lld bytes, could not read them all (%s)", label, (long long)st.st_size,
                 errno ? strerror(errno) : "end of file");
        return 0;
    }
    *size = (size_t)st.st_size;
    Snapshot snap;
    memset(&snap, 0, sizeof snap);
    lim = snapshot_limits(NULL);
    Records r = {0};
    int ok = read_in_child(fd, label, NULL, &snap, &r, err, len);
    if (ok && !(snap.status == SNAP_OK && snap.n_groups == 1 && snap.groups[0].status == SNAP_OK)) {
        snprintf(err, len, "%s: expected a fixture HDF5 reads, found one it cannot open", label);
        ok = 0;
    }
    snapshot_free(&snap);
    if (!ok) {
        free(*bytes), free(r.data);
        *bytes = NULL;
        return 0;
    }
    *records = r.data, *records_size = r.len;
    return 1;
}
