// dump.c: the --dump writer. float32, row-major, rank 0 as a scalar dataspace,
// exactly like the fixtures, so a dump can be compared with one name by name.
//
// See dump.h for what it promises. How: the target is resolved and checked
// with stat (never opened, so a FIFO cannot block it), the temporary is made
// with mkstemp beside the real file, HDF5 builds the file in memory (its
// core driver, no backing store), this code writes the bytes to the
// temporary with pwrite and syncs it, and rename() replaces the target in
// one step. HDF5 does no file I/O here at all: a write error is ours to see,
// with its errno, and HDF5 never holds a file it failed to close (which
// crashes its exit-time cleanup). The temporary's name is kept where a
// signal handler and an exit handler can reach it, to remove it on any way
// out before the rename.
#define _GNU_SOURCE  // realpath, SA_RESETHAND
#include "dump.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"
#include "pages.h"

struct Dump {
    hid_t file;
    int fd;             // the temporary, as mkstemp opened it: synced before the rename
    char *path;         // the target as given, for messages
    char *final;        // where the file goes: the target, or the file its symbolic link points to
    char *temp;
};

// --- the temporary, removed on every way out ---------------------------------

// One dump at a time per process: its temporary's name, for the handlers.
static char live_temp[PATH_MAX + 32];
static volatile sig_atomic_t temp_is_live;

static void remove_live_temp(void) {
    if (temp_is_live) {
        temp_is_live = 0;
        unlink(live_temp);
    }
}

static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP};

// Removes the temporary, then dies of the signal as if no handler were set
// (SA_RESETHAND restored the default action). Only async-signal-safe calls.
static void on_signal(int sig) {
    if (temp_is_live) unlink(live_temp);
    temp_is_live = 0;
    raise(sig);
}

// Installs the handlers once (before the first temporary exists).
static void install_handlers(void) {
    static int installed;
    if (installed) return;
    installed = 1;
    atexit(remove_live_temp);  // die() and any exit before the rename
    error_on_cleanup(remove_live_temp);  // a reader gone from stdout ends the program by SIGPIPE
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
        struct sigaction old, sa;
        // An ignored signal (nohup) stays ignored: nothing would kill us.
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(fatal_signals[i], &sa, NULL);
    }
    // Past RLIMIT_FSIZE a write fails with EFBIG, reported as such, instead
    // of SIGXFSZ killing the process with the temporary still there.
    signal(SIGXFSZ, SIG_IGN);
}

// mkstemp with the fatal signals held back until the name is recorded: a
// signal in between would otherwise leave the temporary behind.
static int make_temp(char *temp) {
    install_handlers();
    sigset_t fatal, old;
    sigemptyset(&fatal);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) sigaddset(&fatal, fatal_signals[i]);
    sigprocmask(SIG_BLOCK, &fatal, &old);
    int fd = mkstemp(temp);
    int e = errno;
    if (fd >= 0) {
        snprintf(live_temp, sizeof live_temp, "%s", temp);
        temp_is_live = 1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return fd;
}

// Renames without a signal in between the rename and forgetting the name.
static int commit_temp(const char *temp, const char *final) {
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int rc = rename(temp, final);
    if (rc == 0) temp_is_live = 0;
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return rc;
}

// --- checks ---------------------------------------------------------------------

static int say(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return 0;
}

static const char *kind_of(mode_t mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO (named pipe)"
           : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
           : S_ISSOCK(mode) ? "a socket" : "something that is not a regular file";
}

// The directory part of `path` ("." for a bare name), in a new string.
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".", "the --dump's directory");
    if (slash == path) return xstrdup("/", "the --dump's directory");
    return xstrndup(path, (size_t)(slash - path), "the --dump's directory");
}

// The path `path` resolves to: realpath for a file that is there; for one
// that is not, its directory's realpath and its name. Returns 0 (out "")
// when neither resolves.
static int resolved(const char *path, char out[PATH_MAX]) {
    out[0] = '\0';
    if (realpath(path, out)) return 1;
    char *dir = dir_of(path), real[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    int ok = dir && *base && strcmp(base, ".") && strcmp(base, "..") && realpath(dir, real) &&
             (size_t)snprintf(out, PATH_MAX, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) < PATH_MAX;
    free(dir);
    if (!ok) out[0] = '\0';
    return ok;
}

void dump_input_of(const char *path, const char *what, DumpInput *out) {
    memset(out, 0, sizeof *out);
    out->what = what;
    struct stat st;
    if (stat(path, &st) == 0) out->dev = st.st_dev, out->ino = st.st_ino;
    resolved(path, out->path);
}

// An input the target resolves to by name: its `what`, or NULL.
static const char *input_by_path(const char *path, const DumpInput *inputs, int n_inputs) {
    char target[PATH_MAX];
    if (!resolved(path, target)) return NULL;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i].path[0] && !strcmp(inputs[i].path, target)) return inputs[i].what ? inputs[i].what : "an input";
    return NULL;
}

// Resolves the target to the file that will be replaced (*final, malloc'd)
// and checks it. Returns 1, or 0 with err; *mode gets the mode the new file
// should have (an existing file's, else the umask's default).
static int resolve_target(const char *path, const DumpInput *inputs, int n_inputs, char **final, mode_t *mode,
                          char *err, size_t len) {
    *final = NULL;
    size_t n = strlen(path);
    if (n == 0) return say(err, len, "--dump: expected a file name, found an empty one");
    if (n >= PATH_MAX)
        return say(err, len, "%.80s...: --dump: expected a path of at most %d bytes, found one of %zu bytes", path,
                   PATH_MAX - 1, n);
    mode_t mask = umask(0);
    umask(mask);
    *mode = 0666 & ~mask;
    struct stat st;
    const char *input = input_by_path(path, inputs, n_inputs);
    if (input) return say(err, len, "%s: --dump: expected a file to write, found %s being read", path, input);
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return say(err, len, "%s: --dump: expected a file to write, found a path that cannot be followed (%s)",
                       path, strerror(errno));
        *final = xstrdup(path, "the --dump's path");  // a new file: its directory is checked when the temporary is made
        return 1;
    }
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return say(err, len, "%s: --dump: expected a file to write, found a symbolic link to nothing (%s)", path,
                   strerror(errno));
    // Same file as an input, or as what stdout or stderr writes to: by
    // device and inode, which no spelling of the path changes.
    for (int i = 0; i < n_inputs; i++)
        if ((inputs[i].dev || inputs[i].ino) && st.st_dev == inputs[i].dev && st.st_ino == inputs[i].ino)
            return say(err, len, "%s: --dump: expected a file to write, found %s being read", path,
                       inputs[i].what ? inputs[i].what : "an input");
    static const char *const streams[] = {NULL, "standard output", "standard error"};
    for (int fd = 1; fd <= 2; fd++) {
        struct stat s;
        if (fstat(fd, &s) == 0 && s.st_dev == st.st_dev && s.st_ino == st.st_ino && S_ISREG(s.st_mode))
            return say(err, len, "%s: --dump: expected a file to write, found the file this program's %s goes to",
                       path, streams[fd]);
    }
    if (!S_ISREG(st.st_mode))
        return say(err, len, "%s: --dump: expected a regular file to write, found %s", path, kind_of(st.st_mode));
    *mode = st.st_mode & 07777;
    // The file a symbolic link (or /proc/self/fd/N) leads to: replaced in its
    // own directory, and the link kept.
    char real[PATH_MAX];
    if (!realpath(path, real))
        return say(err, len, "%s: --dump: expected a file to write, found a path that cannot be resolved (%s)", path,
                   strerror(errno));
    *final = xstrdup(real, "the --dump's path");
    return 1;
}

int dump_check_target(const char *path, const DumpInput *inputs, int n_inputs, char *err, size_t len) {
    char *final;
    mode_t mode;
    int ok = resolve_target(path, inputs, n_inputs, &final, &mode, err, len);
    free(final);
    return ok;
}

// --- write errors: the real cause -----------------------------------------------

// Why HDF5 failed, when it says: its file drivers write the errno they saw
// into the error stack ("errno = 28, error message = ..."); with the file in
// memory, that is only ever a failed allocation.
static herr_t find_errno(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    const char *at = e->desc ? strstr(e->desc, "errno = ") : NULL;
    if (at && *(int *)data == 0) *(int *)data = atoi(at + 8);
    return 0;
}

static void describe_errno(int e, char *buf, size_t len) {
    struct rlimit fsize;
    if (e == EFBIG && getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY)
        snprintf(buf, len, "the file size limit reached (RLIMIT_FSIZE is %llu bytes: %s)",
                 (unsigned long long)fsize.rlim_cur, strerror(e));
    else if (e == ENOSPC) snprintf(buf, len, "no space left on the device (%s)", strerror(e));
    else if (e == EDQUOT) snprintf(buf, len, "the disk quota exceeded (%s)", strerror(e));
    else if (e) snprintf(buf, len, "a write error (%s)", strerror(e));
    else snprintf(buf, len, "a write error HDF5 gives no cause for");
}

static int write_failed(Dump *d, const char *what, char *err, size_t len) {
    int e = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_errno, &e);
    char cause[160];
    describe_errno(e, cause, sizeof cause);
    return say(err, len, "%s: --dump: cannot write %s: expected room to write it, found %s", d->path, what, cause);
}

// --- the dump -----------------------------------------------------------------

static void free_dump(Dump *d) {
    free(d->path);
    free(d->final);
    free(d->temp);
    free(d);
}

// --- the file's memory -------------------------------------------------------------
// A dump at GPT-2 size is about 140 MB, built in memory by HDF5's core driver and
// copied once more by H5Fget_file_image: both buffers are pages_alloc'd
// (huge pages). The core driver grows its buffer through file_realloc, a
// MiB at a time; the block doubles, so most calls keep it.

static struct {
    void *block;  // the core driver's buffer (one file at a time)
    size_t cap;
} file_mem;

static void *file_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata) {
    (void)op, (void)udata;
    if (ptr != file_mem.block) return NULL;  // not ours: refuse rather than guess
    if (size <= file_mem.cap) return ptr;
    if (size > SIZE_MAX / 2) return NULL;  // the doubling below would wrap and never end
    // From one huge page up: even a small dump's MiB would be 256 faults.
    size_t cap = file_mem.cap ? 2 * file_mem.cap : pages_rounded(size > PAGES_HUGE ? size : PAGES_HUGE);
    while (cap < size) cap *= 2;
    void *grown = pages_alloc(cap, "the --dump's file image");  // none: the program stops, the temporary removed
    if (ptr) memcpy(grown, ptr, file_mem.cap);
    free(ptr);
    file_mem.block = grown, file_mem.cap = cap;
    return grown;
}

static void *file_malloc(size_t size, H5FD_file_image_op_t op, void *udata) {
    return file_realloc(file_mem.block, size, op, udata);
}

static void *file_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op, void *udata) {
    (void)op, (void)udata;
    return memcpy(dest, src, size);
}

static herr_t file_free(void *ptr, H5FD_file_image_op_t op, void *udata) {
    (void)op, (void)udata;
    if (ptr != file_mem.block) return -1;
    free(ptr);
    file_mem.block = NULL, file_mem.cap = 0;
    return 0;
}

Dump *dump_open(const char *path, const DumpInput *inputs, int n_inputs, char *err, size_t len) {
    char *final;
    mode_t mode;
    if (!resolve_target(path, inputs, n_inputs, &final, &mode, err, len)) return NULL;
    Dump *d = xcalloc(1, sizeof *d, "the --dump");
    char *dir = dir_of(final);
    const char *base = strrchr(final, '/') ? strrchr(final, '/') + 1 : final;
    size_t n = strlen(dir) + strlen(base) + 32;
    char *temp = xmalloc(n, "the --dump's temporary name");
    d->path = xstrdup(path, "the --dump's path");
    d->final = final;
    d->fd = -1;
    d->file = -1;
    // Hidden, beside the target (same file system: the rename is atomic).
    snprintf(temp, n, "%s/.%s.XXXXXX", dir, base);
    d->temp = temp;
    d->fd = make_temp(temp);
    if (d->fd < 0) {
        int e = errno;
        struct stat st;
        const char *found = stat(dir, &st) != 0 ? "no such directory" : !S_ISDIR(st.st_mode)
                            ? "a parent that is not a directory" : e == EACCES || e == EPERM || e == EROFS
                            ? "a directory it may not write in" : "a directory it cannot create a file in";
        say(err, len, "%s: --dump: expected a directory to write the file in, found %s (%s: %s)", path, found, dir,
            strerror(e));
        free(dir);
        free_dump(d);
        return NULL;
    }
    free(dir);
    fchmod(d->fd, mode);
    // Only this process's own file ever reaches HDF5 here: the parent never
    // runs HDF5 on a file it reads. Its exit-time cleanup is not wanted
    // either: after a failed close it crashes, and exit must stay quiet.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 20, 0);  // in memory, grown a MiB at a time, never written by HDF5
    H5FD_file_image_callbacks_t memory = {file_malloc, file_memcpy, file_realloc, file_free, NULL, NULL, NULL};
    H5Pset_file_image_callbacks(fapl, &memory);
    d->file = H5Fcreate(temp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (d->file < 0) write_failed(d, "the file", err, len);  // before any other call clears HDF5's error stack
    H5Pclose(fapl);
    if (d->file < 0) {
        dump_abort(d);
        return NULL;
    }
    return d;
}

static int write_role(hid_t ds, const char *role) {
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(ds, "role", type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = attr < 0 ? -1 : H5Awrite(attr, type, &role);
    if (attr >= 0) H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    return rc >= 0;
}

// One dataset of `ndim` axes, `file_type` in the file, `mem_type` in memory.
static int add_dataset(Dump *d, const char *name, const char *role, int ndim, const int *shape, hid_t file_type,
                       hid_t mem_type, const void *data, char *err, size_t len) {
    if (H5Lexists(d->file, name, H5P_DEFAULT) > 0) H5Ldelete(d->file, name, H5P_DEFAULT);
    hsize_t dims[TENSOR_MAX_DIMS];
    for (int i = 0; i < ndim; i++) dims[i] = (hsize_t)shape[i];
    hid_t space = ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(ndim, dims, NULL);
    hid_t ds = H5Dcreate2(d->file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = ds >= 0 && H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0 && write_role(ds, role);
    char what[200];
    snprintf(what, sizeof what, "dataset '%.150s'", name);
    if (!ok) write_failed(d, what, err, len);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(space);
    return ok;
}

int dump_add(Dump *d, const char *name, const char *role, Tensor t, char *err, size_t len) {
    return add_dataset(d, name, role, t.ndim, t.shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, t.data, err, len);
}

int dump_add_long(Dump *d, const char *name, const char *role, LongTensor t, char *err, size_t len) {
    return add_dataset(d, name, role, t.ndim, t.shape, H5T_STD_I64LE, H5T_NATIVE_INT64, t.data, err, len);
}

static int write_error(Dump *d, int e, char *err, size_t len) {
    char cause[160];
    describe_errno(e, cause, sizeof cause);
    return say(err, len, "%s: --dump: cannot write the file: expected room to write it, found %s", d->path, cause);
}

// The whole image, with pwrite (short writes and EINTR continued).
static int write_all(int fd, const char *buf, size_t n) {
    off_t at = 0;
    while (n > 0) {
        ssize_t w = pwrite(fd, buf, n, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return 0;
        }
        buf += w, n -= (size_t)w, at += w;
    }
    return 1;
}

int dump_commit(Dump *d, char *err, size_t len) {
    int ok = 1;
    // The file's bytes, as HDF5 built them in memory.
    char *image = NULL;
    ssize_t size = H5Fflush(d->file, H5F_SCOPE_LOCAL) < 0 ? -1 : H5Fget_file_image(d->file, NULL, 0);
    if (size > 0) image = pages_alloc((size_t)size, "the --dump's file image");
    if (size <= 0 || H5Fget_file_image(d->file, image, (size_t)size) != size) ok = write_failed(d, "the file", err, len);
    H5Fclose(d->file);  // in memory: nothing left to fail
    d->file = -1;
    if (ok && !write_all(d->fd, image, (size_t)size)) ok = write_error(d, errno, err, len);
    free(image);
    // Synced before the rename: the target is never replaced by a file
    // whose bytes are not on the disk yet.
    if (ok && fsync(d->fd) != 0) ok = write_error(d, errno, err, len);
    if (close(d->fd) != 0 && ok) ok = write_error(d, errno, err, len);
    d->fd = -1;
    if (ok && commit_temp(d->temp, d->final) != 0)
        ok = say(err, len, "%s: --dump: expected to put the written file in place, found rename failing (%s)",
                 d->path, strerror(errno));
    if (!ok) remove_live_temp();
    free_dump(d);
    return ok;
}

void dump_abort(Dump *d) {
    if (!d) return;
    if (d->file >= 0) H5Fclose(d->file);
    if (d->fd >= 0) close(d->fd);
    remove_live_temp();
    free_dump(d);
}

// --- for chapters: one line and exit on failure ---------------------------------

Dump *dump_create(const char *path, const DumpInput *inputs, int n_inputs) {
    char err[ERROR_LINE_LEN];
    Dump *d = dump_open(path, inputs, n_inputs, err, sizeof err);
    if (!d) die(EXIT_BAD_INPUT, "%s", err);
    return d;
}

void dump_write(Dump *d, const char *name, const char *role, Tensor t) {
    char err[ERROR_LINE_LEN];
    if (!dump_add(d, name, role, t, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
}

void dump_write_long(Dump *d, const char *name, const char *role, LongTensor t) {
    char err[ERROR_LINE_LEN];
    if (!dump_add_long(d, name, role, t, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
}

void dump_close(Dump *d) {
    char err[ERROR_LINE_LEN];
    if (d && !dump_commit(d, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
}
