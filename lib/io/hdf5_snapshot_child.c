// hdf5_snapshot_child.c: the reader child of hdf5_snapshot.h. Forked by the
// parent (hdf5_snapshot_parent.c), it is the only code that runs HDF5 on a
// file: it dies with its parent, resets the signals, caps its CPU time,
// address space and core files, maps the descriptor the parent checked (never
// the path again) and hands it to HDF5's in-memory driver, then reads one
// group (or every group under the root): its attributes, what each link leads
// to, and every dataset's type, shape, role and values, and writes them as the
// records of hdf5_snapshot_records.h to its pipe. External links, external
// storage, virtual datasets and filters HDF5 lacks are described, never
// followed or read. What it is about to read is kept in the page shared with
// the parent, so that a crash or a limit is reported with where HDF5 was. It
// ends with _exit, never returning.
#define _GNU_SOURCE  // prctl's PR_SET_PDEATHSIG
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#ifdef LITATTN_COVERAGE
void __gcov_dump(void);  // gcc's runtime (libgcov): writes this process's counters
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "hdf5_snapshot.h"
#include "hdf5_snapshot_records.h"

// Under a sanitizer or libFuzzer, a crash in the child would run their
// report and crash-file machinery; this lets the child die quietly instead.
// Weak: NULL in a plain build, and then not called. Its presence also tells
// that the address space cannot be capped (the shadow memory alone is larger).
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static int out_fd = -1;
static Limits lim;
static Progress *progress;

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

// Plain copies, not snprintf: called twice per object, it must cost nothing.
static void about_to(const char *what, const char *name) {
    char *p = progress->last, *end = progress->last + 160;
    while (*what && p < end) *p++ = *what++;
    if (name) {
        *p++ = ' ', *p++ = '\'';
        while (*name && p < end) *p++ = *name++;
        *p++ = '\'';
    }
    *p = '\0';
}

// After an HDF5 call failed: was it for want of memory? HDF5 reports a
// failed allocation as a "resource unavailable" error on its stack.
static herr_t spot_memory(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n, (void)data;
    if (e->maj_num == H5E_RESOURCE || e->min_num == H5E_CANTALLOC || e->min_num == H5E_NOSPACE)
        progress->memory_failed = 1;
    return 0;
}
static void after_failure(void) { H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, spot_memory, NULL); }

// "float32", "float64", "int32", "uint64", "string", ...: how a found type is named in errors.
static void describe_type(hid_t type, char *buf, size_t len) {
    size_t size = H5Tget_size(type);
    switch (H5Tget_class(type)) {
    case H5T_FLOAT: snprintf(buf, len, "float%zu", 8 * size); break;
    case H5T_INTEGER: snprintf(buf, len, "%sint%zu", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size); break;
    case H5T_STRING: snprintf(buf, len, "string"); break;
    case H5T_COMPOUND: snprintf(buf, len, "compound"); break;
    case H5T_ENUM: snprintf(buf, len, "enum"); break;
    default: snprintf(buf, len, "a non-numeric type"); break;
    }
}

// Reads one string attribute. Strings may be variable length (h5py's Python
// str: HDF5 hands back memory it allocated) or fixed length, ASCII or UTF-8:
// the memory type copies the file's character set, since HDF5 converts
// between the two sets not at all. Sets *length to the string's length even
// when it is longer than SNAPSHOT_MAX_STRING, in which case NULL is
// returned: no fixture needs one, and a corrupt length must not travel to
// the parent. NULL with *length -1: unreadable.
static char *read_string(hid_t attr, hid_t type, long long *length) {
    hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_cset(mem, H5Tget_cset(type));
    char *copy = NULL;
    *length = -1;
    if (H5Tis_variable_str(type) > 0) {
        H5Tset_size(mem, H5T_VARIABLE);
        char *value = NULL;
        if (H5Aread(attr, mem, &value) >= 0 && value) {
            *length = (long long)strlen(value);
            if (*length <= SNAPSHOT_MAX_STRING && !(copy = mem_strdup(value))) progress->memory_failed = 1;
            H5free_memory(value);
        } else {
            after_failure();
        }
    } else {
        size_t size = H5Tget_size(type);
        if (size > SNAPSHOT_MAX_STRING) {
            *length = (long long)size;  // fixed length: the declared size, unread
        } else {
            char *buf = mem_calloc(size + 1, 1);
            H5Tset_size(mem, size + 1);
            H5Tset_strpad(mem, H5T_STR_NULLTERM);
            if (buf && H5Aread(attr, mem, buf) >= 0) {
                copy = buf, *length = (long long)strlen(buf);
            } else {
                if (!buf) progress->memory_failed = 1;
                else after_failure();
                free(buf);
            }
        }
    }
    H5Tclose(mem);
    return copy;
}

static SpaceKind space_kind(hid_t space) {
    switch (space >= 0 ? H5Sget_simple_extent_type(space) : H5S_NO_CLASS) {
    case H5S_SIMPLE: return SPACE_SIMPLE;
    case H5S_SCALAR: return SPACE_SCALAR;
    case H5S_NULL: return SPACE_NULL;
    default: return SPACE_UNREADABLE;
    }
}

static herr_t send_attribute(hid_t obj, const char *name, const H5A_info_t *info, void *data) {
    (void)info, (void)data;
    about_to("attribute", name);
    hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1, space = attr >= 0 ? H5Aget_space(attr) : -1;
    char type_s[32] = "an unreadable type";
    if (type >= 0) describe_type(type, type_s, sizeof type_s);
    SpaceKind sk = space_kind(space);
    long long count = sk == SPACE_SIMPLE || sk == SPACE_SCALAR ? (long long)H5Sget_simple_extent_npoints(space) : 0;
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    AttrKind kind = cls == H5T_STRING ? ATTR_STRING : cls == H5T_INTEGER ? ATTR_INT
                    : cls == H5T_FLOAT ? ATTR_FLOAT : ATTR_OTHER;
    int is_unsigned = kind == ATTR_INT && H5Tget_sign(type) == H5T_SGN_NONE;
    char *text = NULL;
    long long value = 0, length = 0;
    unsigned long long uvalue = 0;
    double dvalue = 0;
    int read_ok = 0;
    // Integers are read in their own signedness, so that a uint64 of 2^64 - 1
    // arrives as itself, not clamped to 2^63 - 1 by HDF5's conversion.
    if (count == 1) {
        if (kind == ATTR_STRING) read_ok = (text = read_string(attr, type, &length)) != NULL;
        else if (kind == ATTR_INT && is_unsigned) read_ok = H5Aread(attr, H5T_NATIVE_ULLONG, &uvalue) >= 0;
        else if (kind == ATTR_INT) read_ok = H5Aread(attr, H5T_NATIVE_LLONG, &value) >= 0;
        else if (kind == ATTR_FLOAT) read_ok = H5Aread(attr, H5T_NATIVE_DOUBLE, &dvalue) >= 0;
        if (!read_ok && kind != ATTR_STRING && kind != ATTR_OTHER) after_failure();
    }
    put_tag('A');
    put_str(name);
    put_i64(kind);
    put_str(type_s);
    put_i64(sk);
    put_i64(count);
    put_i64(read_ok);
    put_i64(is_unsigned);
    put_i64(length);
    put_str(text);
    put_i64(value);
    put(&uvalue, sizeof uvalue);
    put(&dvalue, sizeof dvalue);
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
        long long length;
        char *text = read_string(attr, type, &length);
        if (text) snprintf(role, len, "%s", text);
        free(text);
    }
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
}

// Why the values of `ds` must not be read, from its creation properties
// alone, before any read: "" when they may. A virtual dataset's values live
// in other files (and read as fill values when those are missing), external
// storage keeps them in raw files beside it, and a filter this library
// lacks cannot decode them.
static void refusal(hid_t ds, char *why, size_t len) {
    why[0] = '\0';
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl < 0) {
        snprintf(why, len, "a dataset whose storage properties HDF5 cannot read");
        return;
    }
    char name[128] = "";
    if (H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        size_t n = 0;
        H5Pget_virtual_count(dcpl, &n);
        if (n > 0 && H5Pget_virtual_filename(dcpl, 0, name, sizeof name) < 0) name[0] = '\0';
        snprintf(why, len, "a virtual dataset (its values live in %zu source%s, the first in file '%s')", n,
                 n == 1 ? "" : "s", name);
    } else if (H5Pget_external_count(dcpl) > 0) {
        off_t offset;
        hsize_t size;
        if (H5Pget_external(dcpl, 0, sizeof name, name, &offset, &size) < 0) name[0] = '\0';
        snprintf(why, len, "a dataset with external storage (its values live in the raw file '%s')", name);
    } else {
        int n = H5Pget_nfilters(dcpl);
        for (int i = 0; i < n && !why[0]; i++) {
            unsigned flags, config;
            size_t nvalues = 0;
            H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvalues, NULL, sizeof name, name, &config);
            if (id < 0) snprintf(why, len, "a dataset whose filter %d HDF5 cannot describe", i);
            else if (H5Zfilter_avail(id) <= 0)
                snprintf(why, len, "data encoded with filter %d ('%s'), which this HDF5 library does not have",
                         (int)id, name);
        }
    }
    H5Pclose(dcpl);
}

static void send_dataset_fields(hid_t ds) {
    hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
    char type_s[32] = "an unreadable type", role[32], why[200];
    if (type >= 0) describe_type(type, type_s, sizeof type_s);
    int is_f32 = type >= 0 && H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 4;
    int is_i64 = type >= 0 && H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == 8 &&
                 H5Tget_sign(type) == H5T_SGN_2;
    const size_t width = is_i64 ? sizeof(int64_t) : sizeof(float);
    SpaceKind kind = space_kind(space);
    int rank = kind == SPACE_SCALAR ? 0 : kind == SPACE_SIMPLE ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[H5S_MAX_RANK] = {0};
    if (rank < 0 || rank > SNAPSHOT_MAX_RANK || (rank > 0 && H5Sget_simple_extent_dims(space, dims, NULL) != rank))
        kind = kind == SPACE_NULL ? kind : SPACE_UNREADABLE, rank = -1;
    // The number of values, clamped one past the limit so it cannot overflow.
    const long long cap = lim.max_elements + 1;
    long long numel = rank >= 0 ? 1 : 0;
    for (int i = 0; i < rank; i++) {
        long long d = dims[i] > (hsize_t)cap ? cap : (long long)dims[i];
        numel = d != 0 && numel > cap / d ? cap : numel * d;
        if (numel > cap) numel = cap;
    }
    read_role(ds, role, sizeof role);
    refusal(ds, why, sizeof why);
    void *values = NULL;
    int values_read = 0;
    if (!why[0] && (is_f32 || is_i64) && rank >= 0 && rank <= SNAPSHOT_MAX_VALUE_RANK && numel > 0 && numel <= lim.max_elements) {
        int memory_before = progress->memory_failed;
        progress->memory_failed = 0;
        values = mem_malloc((size_t)numel * width);
        if (!values) progress->memory_failed = 1;
        values_read = values && H5Dread(ds, is_i64 ? H5T_NATIVE_INT64 : H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL,
                                        H5P_DEFAULT, values) >= 0 ? 1 : -1;
        if (values && values_read < 0) after_failure();
        // Refused for want of memory, not corrupt: said as such.
        if (values_read < 0 && progress->memory_failed)
            snprintf(why, sizeof why, "a dataset that needs more than the reader's %lld MiB of memory to read",
                     lim.memory_bytes >> 20);
        progress->memory_failed |= memory_before;
    }
    put_str(type_s);
    put_i64(is_f32);
    put_i64(is_i64);
    put_i64(kind);
    put_i64(rank);
    for (int i = 0; i < rank; i++) put_i64((long long)dims[i]);
    put_str(role);
    put_i64(values_read);
    put_str(why);
    put_i64(numel);
    if (values_read == 1) put(values, (size_t)numel * width);
    free(values);
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
}

// Link access that refuses to follow any external link, wherever one sits
// on a path (inside a soft link's target too): data from another file is
// never read. external_seen says that this is why a traversal failed.
static hid_t no_external_lapl = -1;
static int external_seen;

static herr_t refuse_external(const char *parent, const char *target_file, const char *target_obj,
                              const char *link, unsigned *flags, hid_t fapl, void *data) {
    (void)parent, (void)target_file, (void)target_obj, (void)link, (void)flags, (void)fapl, (void)data;
    external_seen = 1;
    return -1;
}

// What the link `name` in `loc` leads to, for the "found ..." of an error.
// External and user-defined links are described, never followed.
static void describe_link(hid_t loc, const char *name, hid_t *opened, char *found, size_t len) {
    *opened = -1;
    H5L_info_t link;
    if (H5Lget_info(loc, name, &link, no_external_lapl) < 0) {
        snprintf(found, len, external_seen ? "a path through an external link (to data in another file)"
                                           : "an unreadable link");
        return;
    }
    if (link.type == H5L_TYPE_EXTERNAL) {
        char val[256] = "";
        const char *file = "?", *obj = "?";
        unsigned flags;
        if (link.u.val_size <= sizeof val && H5Lget_val(loc, name, val, sizeof val, no_external_lapl) >= 0 &&
            H5Lunpack_elink_val(val, link.u.val_size, &flags, &file, &obj) < 0)
            file = obj = "?";
        snprintf(found, len, "an external link to '%.60s' '%.60s' (data in another file)", file, obj);
        return;
    }
    if (link.type != H5L_TYPE_HARD && link.type != H5L_TYPE_SOFT) {
        snprintf(found, len, "a user-defined link (type %d)", (int)link.type);
        return;
    }
    external_seen = 0;
    hid_t obj = H5Oopen(loc, name, no_external_lapl);
    if (obj < 0) {
        snprintf(found, len, "%s", external_seen ? "a soft link through an external link (to data in another file)"
                                 : link.type == H5L_TYPE_SOFT ? "a soft link to nothing"
                                                              : "an object HDF5 cannot open");
        return;
    }
    *opened = obj;
    switch (H5Iget_type(obj)) {
    case H5I_GROUP: snprintf(found, len, "a group"); break;
    case H5I_DATASET: snprintf(found, len, "a dataset"); break;
    case H5I_DATATYPE: snprintf(found, len, "a named datatype"); break;
    default: snprintf(found, len, "an object of another kind"); break;
    }
}

static herr_t send_object(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)info, (void)data;
    about_to("the object", name);
    hid_t obj;
    char found[200];
    describe_link(loc, name, &obj, found, sizeof found);
    int is_dataset = obj >= 0 && H5Iget_type(obj) == H5I_DATASET;
    if (is_dataset) about_to("dataset", name);
    put_tag('O');
    put_str(name);
    put_str(found);
    put_i64(is_dataset);
    put_i64(obj >= 0 && H5Iget_type(obj) == H5I_GROUP);
    if (is_dataset) send_dataset_fields(obj);
    if (obj >= 0) H5Oclose(obj);
    return 0;
}

// One group: its attributes and links.
static void send_group(hid_t loc, const char *name) {
    put_tag('G');
    put_str(name);
    put_i64(SNAP_OK);
    put_str("");
    hsize_t idx = 0;
    H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, &idx, send_attribute, NULL);
    idx = 0;
    if (H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, &idx, send_object, NULL) < 0) put_tag('L');
}

static void send_missing_group(const char *name, SnapStatus status, const char *found) {
    put_tag('G');
    put_str(name);
    put_i64(status);
    put_str(found);
}

// The file as mapped by the child (see hdf5_snapshot_child()), unmapped at the end, and
// the descriptor it was read from, closed at the end if not before.
static void *mapped;
static size_t mapped_size;
static int file_fd = -1;

static noreturn void send_end(SnapStatus status, const char *note) {
    // A mapping holds the open file, and with it the parent's shared lock,
    // until it goes: gone before the last record, a child that is reaped
    // later never keeps a writer waiting. HDF5 is not called again.
    if (mapped) munmap(mapped, mapped_size);
    if (file_fd >= 0) close(file_fd);
#ifdef LITATTN_COVERAGE
    // A coverage build (b_coverage): _exit writes no counters, so they are
    // written here, while the parent still waits for the last record (once
    // it has it, the parent may exit and take this process with it).
    __gcov_dump();
#endif
    put_tag('Z');
    put_i64(status);
    put_str(note);
    flush_out();
    // The parent sees the end now, not after the kernel has taken this
    // process's memory apart (which it does before closing descriptors).
    close(out_fd);
    _exit(0);  // _exit: nothing of the parent's (open files, stdio, leak checks) may run twice
}

// The groups directly under the root, for all_groups.
typedef struct {
    char **names;
    int n;
} NameList;

static herr_t collect_group(hid_t loc, const char *name, const H5L_info_t *info, void *data) {
    (void)loc;
    NameList *l = data;
    if (info->type != H5L_TYPE_HARD && info->type != H5L_TYPE_SOFT) return 0;
    char **grown = mem_realloc(l->names, (size_t)(l->n + 1) * sizeof *grown);
    if (grown) l->names = grown;
    if (!grown || !(grown[l->n] = mem_strdup(name))) {
        progress->memory_failed = 1;
        return -1;
    }
    l->names = grown, l->n++;
    return 0;
}

// Why H5Fopen failed, when it can be told: a writer's flag in the superblock,
// memory, or the descriptor itself cannot be opened again (no descriptor left).
static herr_t spot_open_cause(unsigned n, const H5E_error2_t *e, void *data) {
    (void)n;
    char *note = data;
    if (e->desc && strstr(e->desc, "already open for write"))
        snprintf(note, 200, "a file whose superblock says a writer still has it open (a crashed writer: "
                            "h5clear -s clears the flag)");
    return 0;
}

// Page faults are the child's main cost (on a virtual machine that shadows
// page tables a fault costs many times what a page costs when the kernel
// populates a range in one call). HDF5 allocates about a megabyte
// to open a file (half of it its metadata cache's hash table, cleared with
// memset): that much heap is made up front, populated in one madvise, and
// freed, so that HDF5's allocations land on pages already there. Not under
// a sanitizer, whose allocator is its own.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; an older kernel refuses it, and nothing is lost
#endif
#define PREFAULT_BYTES (1152 << 10)

static void prefault_heap(void) {
    if (__sanitizer_set_death_callback) return;
#ifdef M_MMAP_THRESHOLD
    // From the heap, not from fresh mmaps, and never given back: the child is short-lived.
    mallopt(M_MMAP_THRESHOLD, 8 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    char *block = mem_malloc(PREFAULT_BYTES);
    if (!block) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)block + page - 1) & ~(page - 1), end = ((uintptr_t)block + PREFAULT_BYTES) & ~(page - 1);
    madvise((void *)start, end - start, MADV_POPULATE_WRITE);
    free(block);
}

// The file image is the mapped file itself, shared with HDF5 and never
// copied: HDF5 "allocates" and "copies" it through these callbacks (the
// pattern of H5LTopen_file_image's DONT_COPY), and may not grow it.
static void *image_malloc(size_t size, H5FD_file_image_op_t op, void *image) {
    (void)size, (void)op;
    return image;
}
static void *image_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op, void *image) {
    (void)src, (void)size, (void)op, (void)image;
    return dest;  // dest and src are both the image
}
static void *image_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *image) {
    (void)ptr, (void)size, (void)op, (void)image;
    return NULL;  // read-only: never grown
}
static herr_t image_free(void *ptr, H5FD_file_image_op_t op, void *image) {
    (void)ptr, (void)op, (void)image;
    return 0;  // unmapped when the child exits
}
static void *image_udata_copy(void *image) { return image; }
static herr_t image_udata_free(void *image) {
    (void)image;
    return 0;
}

noreturn void hdf5_snapshot_child(int fd, pid_t parent, const char *group, int out, const Limits *limits,
                                  Progress *shared) {
    out_fd = out, lim = *limits, progress = shared;
    // Dies with the parent: a chapter killed while HDF5 reads leaves no
    // process behind. The parent may already be gone by this line, and then
    // the death signal never comes: hence the check of who the parent is.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(4);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO), dup2(null, STDOUT_FILENO), close(null);
    // Default actions: a crash ends the child (the parent reports it), and an
    // interrupt must not run a handler of the parent's (the --dump cleanup).
    static const int reset[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGXCPU, SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof reset / sizeof *reset; i++) signal(reset[i], SIG_DFL);
    // CPU time, not wall time, bounds a loop: a busy machine slows a valid
    // file down but does not make it cost more CPU. SIGXCPU at the soft
    // limit, SIGKILL a second later.
    rlim_t cpu = (rlim_t)(lim.cpu_seconds + 0.999);
    struct rlimit cpu_cap = {cpu, cpu + 1}, no_core = {0, 0};
    setrlimit(RLIMIT_CPU, &cpu_cap);
    setrlimit(RLIMIT_CORE, &no_core);  // a crash of HDF5 leaves no core file behind
    // A corrupt length can make HDF5 allocate gigabytes: the address-space
    // cap makes such an allocation fail at once.
    if (!__sanitizer_set_death_callback) {
        struct rlimit as = {(rlim_t)lim.memory_bytes, (rlim_t)lim.memory_bytes};
        setrlimit(RLIMIT_AS, &as);
    }

    file_fd = fd;
    prefault_heap();
    about_to("the file's superblock", NULL);
    // HDF5 is set up here, in the child only: the parent, which never reads
    // a file with it, pays neither its start nor its exit.
    if (H5open() < 0) {
        progress->memory_failed = 1;
        send_end(SNAP_CORRUPT, "");
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    H5dont_atexit();
    no_external_lapl = H5Pcreate(H5P_LINK_ACCESS);
    H5Pset_elink_cb(no_external_lapl, refuse_external, NULL);

    // The descriptor the parent checked is read, never the path again: a
    // file swapped in meanwhile is never read. Mapped into memory and handed
    // to HDF5's in-memory driver as its image, it needs no file name at all
    // (HDF5 opening /proc/self/fd/N fails once the name was replaced: it
    // resolves the link to a path that no longer exists), and costs no
    // system call per read. Where it cannot be mapped, /proc/self/fd/N.
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_file_locking(fapl, 0, 1);  // the parent holds a shared lock, so HDF5's own is not needed
    // A small metadata cache: the default one costs more to set up than
    // reading a fixture does.
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    if (H5Pget_mdc_config(fapl, &mdc) >= 0) {
        mdc.set_initial_size = 1;
        mdc.initial_size = 16 * 1024;
        mdc.min_size = 16 * 1024;
        H5Pset_mdc_config(fapl, &mdc);
    }
    // Only the filters built into the library: a plugin would be code
    // loaded from HDF5_PLUGIN_PATH, run on whatever the file says.
    H5PLset_loading_state(0);
    char name[64];
    struct stat st;
    void *image = fstat(fd, &st) == 0 && st.st_size > 0
                      ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (image != MAP_FAILED) {
        mapped = image, mapped_size = (size_t)st.st_size;
        H5FD_file_image_callbacks_t callbacks = {image_malloc, image_memcpy, image_realloc, image_free,
                                                 image_udata_copy, image_udata_free, image};
        H5Pset_file_image_callbacks(fapl, &callbacks);
        H5Pset_file_image(fapl, image, (size_t)st.st_size);
        H5Pset_fapl_core(fapl, 64 * 1024, 0);
        // The in-memory driver still opens the name it is given, to refuse
        // an image that would shadow an existing file: with a name that can
        // be there (one in the working directory), a file of that name would
        // fail every fixture, and a FIFO of that name would hang the chapter.
        // A descriptor number of -1 names nothing, on any system.
        snprintf(name, sizeof name, "/proc/self/fd/-1");
    } else {
        snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    }
    hid_t file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    if (file < 0) {
        char note[200] = "";
        after_failure();
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, spot_open_cause, note);
        if (!note[0] && progress->memory_failed)
            snprintf(note, sizeof note, "a file HDF5 needs more than the reader's %lld MiB of memory to open",
                     lim.memory_bytes >> 20);
        if (!note[0] && image == MAP_FAILED) {
            int again = open(name, O_RDONLY | O_NONBLOCK);
            if (again < 0 && (errno == EMFILE || errno == ENFILE))
                snprintf(note, sizeof note, "no file descriptor left to open it (%s)", strerror(errno));
            else if (again < 0)
                snprintf(note, sizeof note, "%s that cannot be opened again (%s)", name, strerror(errno));
            if (again >= 0) close(again);
        }
        send_end(SNAP_CORRUPT, note);
    }
    // The descriptor is not needed any more (HDF5 reads the mapping, or
    // opened /proc/self/fd/N for itself): closed, as the mapping is at the
    // end, so that the parent's shared lock goes with the parent's own
    // descriptor, not with this child, which is reaped later.
    close(fd);
    file_fd = -1;
    if (group && *group) {
        about_to("group", group);
        external_seen = 0;
        if (H5Lexists(file, group, no_external_lapl) <= 0) {
            send_missing_group(group, external_seen ? SNAP_NOT_GROUP : SNAP_NO_GROUP,
                               external_seen ? "a path through an external link (to data in another file)" : "");
            send_end(SNAP_OK, "");
        }
        hid_t obj;
        char found[200];
        describe_link(file, group, &obj, found, sizeof found);
        if (obj < 0 || H5Iget_type(obj) != H5I_GROUP) send_missing_group(group, SNAP_NOT_GROUP, found);
        else send_group(obj, group);
        send_end(SNAP_OK, "");
    }
    about_to("the root group", NULL);
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    if (root < 0) {
        after_failure();
        send_end(SNAP_NO_ROOT, "");
    }
    send_group(root, "");
    if (lim.all_groups) {
        NameList l = {NULL, 0};
        hsize_t idx = 0;
        if (H5Literate(root, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_group, &l) < 0) put_tag('L');
        for (int i = 0; i < l.n; i++) {
            about_to("group", l.names[i]);
            hid_t obj;
            char found[200];
            describe_link(root, l.names[i], &obj, found, sizeof found);
            if (obj >= 0 && H5Iget_type(obj) == H5I_GROUP) send_group(obj, l.names[i]);
            if (obj >= 0) H5Oclose(obj);
        }
    }
    send_end(SNAP_OK, "");
}
