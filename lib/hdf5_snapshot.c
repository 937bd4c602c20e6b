// hdf5_snapshot.c: see hdf5_snapshot.h. The child writes records to a pipe:
//   'P' text                  progress: what it is about to read
//   'A' attribute, 'O' object one per attribute of the group, one per link
//   'Z' status                the end: the snapshot is complete
// Numbers are int64 and strings length-prefixed, in the machine's byte order
// (parent and child are one program).
#include "hdf5_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// Under a sanitizer or libFuzzer, a crash in the child would run their
// report and crash-file machinery; this lets the child die quietly instead.
// Weak: NULL in a plain build, and then not called.
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// --- the child: read with HDF5, write records --------------------------------

static int out_fd = -1;

// The child's output is buffered and sent at each progress record and at the
// end: few system calls, and the parent still knows how far the child got.
static char out_buf[1 << 16];
static size_t out_len;

static void flush_out(void) {
    const char *c = out_buf;
    size_t n = out_len;
    while (n > 0) {
        ssize_t w = write(out_fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(3);  // the parent is gone: nothing left to do
        c += w, n -= (size_t)w;
    }
    out_len = 0;
}

static void put(const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        if (out_len == sizeof out_buf) flush_out();
        size_t k = n < sizeof out_buf - out_len ? n : sizeof out_buf - out_len;
        memcpy(out_buf + out_len, c, k);
        out_len += k, c += k, n -= k;
    }
}
static void put_i64(long long v) { put(&v, sizeof v); }
static void put_str(const char *s) {
    long long n = s ? (long long)strlen(s) : 0;
    put_i64(n);
    put(s ? s : "", (size_t)n);
}
static void put_tag(char tag) { put(&tag, 1); }

// Tells the parent what the child is about to read ("attribute 'chapter'").
static void about_to(const char *what, const char *name) {
    char line[200];
    if (name) snprintf(line, sizeof line, "%s '%.120s'", what, name);
    else snprintf(line, sizeof line, "%s", what);
    put_tag('P');
    put_str(line);
    flush_out();
}

// "float32", "float64", "int32", "string", ...: how a found type is named in errors.
static void describe_type(hid_t type, char *buf, size_t len) {
    size_t size = H5Tget_size(type);
    switch (H5Tget_class(type)) {
    case H5T_FLOAT: snprintf(buf, len, "float%zu", 8 * size); break;
    case H5T_INTEGER: snprintf(buf, len, "%sint%zu", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size); break;
    case H5T_STRING: snprintf(buf, len, "string"); break;
    case H5T_COMPOUND: snprintf(buf, len, "compound"); break;
    default: snprintf(buf, len, "a non-numeric type"); break;
    }
}

// Reads one string attribute. Strings may be variable length (h5py's Python
// str: HDF5 hands back memory it allocated) or fixed length, ASCII or UTF-8:
// the memory type copies the file's character set, since HDF5 converts
// between the two sets not at all. Returns a malloc'd copy, or NULL.
// Longer attribute strings are treated as unreadable: no fixture needs one,
// and a corrupt length must not travel to the parent.
#define MAX_STRING (64 * 1024)
// What the parent accepts from the child at most, all datasets together.
#define MAX_STREAM (64u << 20)

static char *read_string(hid_t attr, hid_t type) {
    hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mem, H5Tget_cset(type));
    char *copy = NULL;
    if (H5Tis_variable_str(type) > 0) {
        H5Tset_size(mem, H5T_VARIABLE);
        char *value = NULL;
        if (H5Aread(attr, mem, &value) >= 0 && value) {
            if (strlen(value) <= MAX_STRING) copy = strdup(value);
            H5free_memory(value);
        }
    } else {
        size_t size = H5Tget_size(type);
        char *buf = size <= MAX_STRING ? calloc(size + 1, 1) : NULL;
        H5Tset_size(mem, size + 1);
        H5Tset_strpad(mem, H5T_STR_NULLTERM);
        if (buf && H5Aread(attr, mem, buf) >= 0) copy = buf;
        else free(buf);
    }
    H5Tclose(mem);
    return copy;
}

static herr_t send_attribute(hid_t obj, const char *name, const H5A_info_t *info, void *data) {
    (void)info, (void)data;
    about_to("attribute", name);
    hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1, space = attr >= 0 ? H5Aget_space(attr) : -1;
    char type_s[32] = "an unreadable type";
    if (type >= 0) describe_type(type, type_s, sizeof type_s);
    long long count = space >= 0 ? (long long)H5Sget_simple_extent_npoints(space) : 0;
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    AttrKind kind = cls == H5T_STRING ? ATTR_STRING : cls == H5T_INTEGER ? ATTR_INT : ATTR_OTHER;
    char *text = NULL;
    long long value = 0;
    int read_ok = 0;
    if (kind == ATTR_STRING && count == 1) read_ok = (text = read_string(attr, type)) != NULL;
    if (kind == ATTR_INT && count == 1) read_ok = H5Aread(attr, H5T_NATIVE_LLONG, &value) >= 0;
    put_tag('A');
    put_str(name);
    put_i64(kind);
    put_str(type_s);
    put_i64(count);
    put_i64(read_ok);
    put_str(text);
    put_i64(value);
    free(text);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    if (attr >= 0) H5Aclose(attr);
    return 0;
}

// The dataset's "role" attribute, if it is a single string.
static void read_role(hid_t ds, char *role, size_t len) {
    role[0] = '\0';
    if (H5Aexists(ds, "role") <= 0) return;
    hid_t attr = H5Aopen(ds, "role", H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    if (type >= 0 && H5Tget_class(type) == H5T_STRING) {
        char *text = read_string(attr, type);
        if (text) snprintf(role, len, "%s", text);
        free(text);
    }
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
}

static void send_dataset_fields(hid_t ds) {
    hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
    char type_s[32] = "an unreadable type", role[32];
    if (type >= 0) describe_type(type, type_s, sizeof type_s);
    int is_f32 = type >= 0 && H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 4;
    H5S_class_t sclass = space >= 0 ? H5Sget_simple_extent_type(space) : H5S_NO_CLASS;
    SpaceKind kind = sclass == H5S_SIMPLE ? SPACE_SIMPLE : sclass == H5S_SCALAR ? SPACE_SCALAR
                     : sclass == H5S_NULL ? SPACE_NULL : SPACE_UNREADABLE;
    int rank = kind == SPACE_SCALAR ? 0 : kind == SPACE_SIMPLE ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[H5S_MAX_RANK] = {0};
    if (rank < 0 || rank > SNAPSHOT_MAX_RANK || (rank > 0 && H5Sget_simple_extent_dims(space, dims, NULL) != rank))
        kind = SPACE_UNREADABLE, rank = -1;
    // The number of values, clamped one past the limit so it cannot overflow.
    long long numel = rank >= 0 ? 1 : 0;
    for (int i = 0; i < rank; i++) {
        long long d = dims[i] > SNAPSHOT_MAX_ELEMENTS ? SNAPSHOT_MAX_ELEMENTS + 1LL : (long long)dims[i];
        numel = numel * d > SNAPSHOT_MAX_ELEMENTS ? SNAPSHOT_MAX_ELEMENTS + 1LL : numel * d;
    }
    read_role(ds, role, sizeof role);
    float *values = NULL;
    int values_read = 0;
    if (is_f32 && rank >= 0 && rank <= 4 && numel > 0 && numel <= SNAPSHOT_MAX_ELEMENTS) {
        values = malloc((size_t)numel * sizeof *values);
        values_read = values && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0 ? 1 : -1;
    }
    put_str(type_s);
    put_i64(is_f32);
    put_i64(kind);
    put_i64(rank);
    for (int i = 0; i < rank; i++) put_i64((long long)dims[i]);
    put_str(role);
    put_i64(values_read);
    put_i64(numel);
    if (values_read == 1) put(values, (size_t)numel * sizeof *values);
    free(values);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
}

// What the link `name` in `loc` leads to, for the "found ..." of an error.
static const char *describe_link(hid_t loc, const char *name, hid_t *opened) {
    *opened = -1;
    H5L_info_t link;
    if (H5Lget_info(loc, name, &link, H5P_DEFAULT) < 0) return "an unreadable link";
    hid_t obj = H5Oopen(loc, name, H5P_DEFAULT);
    if (obj < 0) {
        if (link.type == H5L_TYPE_SOFT) return "a soft link to nothing";
        if (link.type == H5L_TYPE_EXTERNAL) return "an external link that does not resolve";
        return "an object HDF5 cannot open";
    }
    *opened = obj;
    switch (H5Iget_type(obj)) {
    case H5I_GROUP: return "a group";
    case H5I_DATASET: return "a dataset";
    case H5I_DATATYPE: return "a named datatype";
    default: return "an object of another kind";
    }
}

static herr_t send_object(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)info, (void)data;
    about_to("the object", name);
    hid_t obj;
    const char *found = describe_link(loc, name, &obj);
    int is_dataset = obj >= 0 && H5Iget_type(obj) == H5I_DATASET;
    if (is_dataset) about_to("dataset", name);  // before the record: records do not nest
    put_tag('O');
    put_str(name);
    put_str(found);
    put_i64(is_dataset);
    put_i64(obj >= 0 && H5Iget_type(obj) == H5I_GROUP);
    if (is_dataset) send_dataset_fields(obj);
    if (obj >= 0) H5Oclose(obj);
    return 0;
}

static void send_end(SnapStatus status, const char *group_found, int listing_failed) {
    put_tag('Z');
    put_i64(status);
    put_str(group_found);
    put_i64(listing_failed);
    flush_out();
    _exit(0);  // _exit: nothing of the parent's (open files, stdio, leak checks) may run twice
}

static void child(const char *path, const char *group) {
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO), dup2(null, STDOUT_FILENO);
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) signal(fatal[i], SIG_DFL);
    // A corrupt length can make HDF5 allocate gigabytes: cap the child's
    // address space, so such an allocation fails at once. Not under a
    // sanitizer, whose shadow memory alone is larger than any such cap (there
    // the time limit bounds the child instead).
    if (!__sanitizer_set_death_callback) {
        struct rlimit cap = {2ul << 30, 2ul << 30};
        setrlimit(RLIMIT_AS, &cap);
    }

    about_to("the file's superblock", NULL);
    if (H5Fis_hdf5(path) <= 0) send_end(SNAP_NOT_HDF5, "", 0);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) send_end(SNAP_CORRUPT, "", 0);
    hid_t loc = -1;
    if (group && *group) {
        about_to("group", group);
        if (H5Lexists(file, group, H5P_DEFAULT) <= 0) send_end(SNAP_NO_GROUP, "", 0);
        if ((loc = H5Gopen2(file, group, H5P_DEFAULT)) < 0) {
            hid_t obj;
            const char *found = describe_link(file, group, &obj);
            send_end(SNAP_NOT_GROUP, found, 0);
        }
    } else {
        about_to("the root group", NULL);
        if ((loc = H5Gopen2(file, "/", H5P_DEFAULT)) < 0) send_end(SNAP_NO_ROOT, "", 0);
    }
    hsize_t idx = 0;
    H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, &idx, send_attribute, NULL);
    idx = 0;
    int listing_failed = H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, &idx, send_object, NULL) < 0;
    send_end(SNAP_OK, "", listing_failed);
}

// --- the parent: collect, then decode --------------------------------------

typedef struct {
    char *data;
    size_t len, cap, pos;
    int bad;  // a read past the end: the stream is incomplete
} Stream;

static int grow(Stream *s, size_t more) {
    if (s->len + more <= s->cap) return 1;
    size_t cap = s->cap ? s->cap : 1 << 16;
    while (cap < s->len + more) cap *= 2;
    char *data = realloc(s->data, cap);
    if (!data) return 0;
    s->data = data, s->cap = cap;
    return 1;
}

static void get(Stream *s, void *p, size_t n) {
    if (s->bad || n > s->len - s->pos) {
        s->bad = 1;
        memset(p, 0, n);
        return;
    }
    memcpy(p, s->data + s->pos, n);
    s->pos += n;
}
static long long get_i64(Stream *s) {
    long long v;
    get(s, &v, sizeof v);
    return v;
}
static char *get_str(Stream *s) {
    long long n = get_i64(s);
    if (n < 0 || (size_t)n > s->len - s->pos) {
        s->bad = 1;
        n = 0;
    }
    char *text = malloc((size_t)n + 1);
    if (!text) {
        s->bad = 1;
        return NULL;
    }
    get(s, text, (size_t)n);
    text[n] = '\0';
    return text;
}
static void get_fixed(Stream *s, char *buf, size_t len) {
    char *text = get_str(s);
    snprintf(buf, len, "%s", text ? text : "");
    free(text);
}

static void *append(void *array, int *n, size_t size) {
    char *grown = realloc(array, (size_t)(*n + 1) * size);
    if (!grown) return NULL;
    memset(grown + (size_t)*n * size, 0, size);
    (*n)++;
    return grown;
}

// Decodes the records; returns 1 when the stream ended with 'Z'. `last`
// receives the last progress line, for an error message.
static int decode(Stream *s, Snapshot *out, char *last, size_t last_len) {
    while (!s->bad && s->pos < s->len) {
        char tag;
        get(s, &tag, 1);
        if (tag == 'P') {
            get_fixed(s, last, last_len);
        } else if (tag == 'A') {
            SnapAttr *attrs = append(out->attrs, &out->n_attrs, sizeof *attrs);
            if (!attrs) return 0;
            out->attrs = attrs;
            SnapAttr *a = &attrs[out->n_attrs - 1];
            a->name = get_str(s);
            a->kind = (AttrKind)get_i64(s);
            get_fixed(s, a->type, sizeof a->type);
            a->count = get_i64(s);
            a->read_ok = (int)get_i64(s);
            a->text = get_str(s);
            a->value = get_i64(s);
        } else if (tag == 'O') {
            SnapObject *objects = append(out->objects, &out->n_objects, sizeof *objects);
            if (!objects) return 0;
            out->objects = objects;
            SnapObject *o = &objects[out->n_objects - 1];
            o->name = get_str(s);
            get_fixed(s, o->found, sizeof o->found);
            o->is_dataset = (int)get_i64(s);
            o->is_group = (int)get_i64(s);
            if (!o->is_dataset) continue;
            get_fixed(s, o->type, sizeof o->type);
            o->is_float32 = (int)get_i64(s);
            o->space = (SpaceKind)get_i64(s);
            o->rank = (int)get_i64(s);
            if (o->rank > SNAPSHOT_MAX_RANK) s->bad = 1, o->rank = -1;
            for (int i = 0; i < o->rank; i++) o->dims[i] = get_i64(s);
            get_fixed(s, o->role, sizeof o->role);
            o->values_read = (int)get_i64(s);
            o->numel = get_i64(s);
            if (o->values_read == 1) {
                if (o->numel <= 0 || o->numel > SNAPSHOT_MAX_ELEMENTS ||
                    !(o->values = malloc((size_t)o->numel * sizeof(float)))) {
                    s->bad = 1;
                    o->values_read = 0;
                    break;
                }
                get(s, o->values, (size_t)o->numel * sizeof(float));
            }
        } else if (tag == 'Z') {
            out->status = (SnapStatus)get_i64(s);
            get_fixed(s, out->group_found, sizeof out->group_found);
            out->listing_failed = (int)get_i64(s);
            return !s->bad;
        } else {
            s->bad = 1;
        }
    }
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int hdf5_snapshot(const char *path, const char *group, Snapshot *out, char *err, size_t len) {
    memset(out, 0, sizeof *out);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, len, "%s: expected to read the file in a child process, found no pipe (%s)", path, strerror(errno));
        return 0;
    }
    // The library is set up once here, where it reads no file, so that every
    // child starts with it ready instead of initialising it again.
    static int ready;
    if (!ready) {
        H5open();
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        ready = 1;
    }
    fflush(NULL);  // the child must not inherit unwritten output
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, len, "%s: expected to read the file in a child process, found fork failing (%s)", path,
                 strerror(errno));
        close(fds[0]), close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        out_fd = fds[1];
        child(path, group);
        _exit(0);
    }
    close(fds[1]);

    // Collect everything the child writes, until it closes the pipe or its time is up.
    Stream s = {0};
    int timed_out = 0, no_memory = 0;
    double deadline = now() + SNAPSHOT_SECONDS;
    for (;;) {
        double left = deadline - now();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        if (poll(&p, 1, (int)(left * 1000) + 1) <= 0) continue;
        if (s.len > MAX_STREAM || !grow(&s, 1 << 16)) {
            no_memory = 1;
            break;
        }
        ssize_t n = read(fds[0], s.data + s.len, s.cap - s.len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        s.len += (size_t)n;
    }
    close(fds[0]);
    if (timed_out || no_memory) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char last[200] = "the file";
    int complete = decode(&s, out, last, sizeof last);
    free(s.data);
    int clean = !timed_out && !no_memory && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean && complete) return 1;
    snapshot_free(out);
    if (timed_out)
        snprintf(err, len, "%s: expected a file the HDF5 library reads in under %.0f s, found one it was still "
                 "reading after that (at %s)", path, SNAPSHOT_SECONDS, last);
    else if (no_memory)
        snprintf(err, len, "%s: expected a file whose contents fit in memory, found more (at %s)", path, last);
    else if (WIFSIGNALED(status))
        snprintf(err, len, "%s: expected a file the HDF5 library can read, found one that crashes it (signal %d, "
                 "at %s)", path, WTERMSIG(status), last);
    else
        snprintf(err, len, "%s: expected a file the HDF5 library can read, found one that makes it fail "
                 "(exit %d, at %s)", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1, last);
    return 0;
}

void snapshot_free(Snapshot *s) {
    for (int i = 0; i < s->n_attrs; i++) free(s->attrs[i].name), free(s->attrs[i].text);
    for (int i = 0; i < s->n_objects; i++) free(s->objects[i].name), free(s->objects[i].values);
    free(s->attrs);
    free(s->objects);
    memset(s, 0, sizeof *s);
}
