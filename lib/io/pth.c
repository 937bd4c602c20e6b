// pth.c: torch.save's zip archive of a state_dict, over minizip (pth.h).
#include "pth.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>
#include <unzip.h>
#include <zip.h>

#include "alloc.h"
#include "error.h"
#include "torch_pickle.h"

#define MAX_ENTRIES (1 << 20)
#define NAME_LEN 1100

// One record of the archive, as its central directory lists it.
typedef struct {
    char *name;
    unz64_file_pos pos;
    unz_file_info64 info;
} Entry;

typedef struct {
    const char *path;
    char *err;
    size_t len;
    unzFile zf;
    int fd;                 // the same file, for pread of stored storages (-1: not open)
    long long file_size;
    Entry *entries;
    int n_entries;
    char prefix[NAME_LEN];  // "NAME/"
} Reader;

// Formats one message into err, every byte a terminal could act on (a
// newline in a key, a path or a record's name) escaped (text_escape), so
// that it stays one line.
static void vset_err(char *err, size_t len, const char *path, const char *fmt, va_list ap) {
    char raw[PTH_ERR_LEN];
    int k = snprintf(raw, sizeof raw, "%s: ", path);
    if (k >= 0 && (size_t)k < sizeof raw) vsnprintf(raw + k, sizeof raw - (size_t)k, fmt, ap);
    text_escape(err, len, raw);
}

static void set_err(char *err, size_t len, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void set_err(char *err, size_t len, const char *path, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vset_err(err, len, path, fmt, ap);
    va_end(ap);
}

static int failf(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(Reader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vset_err(r->err, r->len, r->path, fmt, ap);
    va_end(ap);
    return 0;
}

static int cmp_entry(const void *a, const void *b) {
    return strcmp(((const Entry *)a)->name, ((const Entry *)b)->name);
}

static const Entry *find(const Reader *r, const char *rel) {
    char name[NAME_LEN + 64];
    snprintf(name, sizeof name, "%s%s", r->prefix, rel);
    Entry key = {.name = name};
    return bsearch(&key, r->entries, (size_t)r->n_entries, sizeof *r->entries, cmp_entry);
}

// What a file that minizip cannot open as a zip is.
static int not_a_zip(Reader *r) {
    unsigned char b[4] = {0};
    size_t got = 0;
    FILE *f = fopen(r->path, "rb");
    if (f) {
        got = fread(b, 1, sizeof b, f);
        fclose(f);
    }
    if (r->file_size == 0) return failf(r, "expected a zip archive (torch.save's format), found an empty file");
    if (got >= 2 && b[0] == 0x80 && b[1] <= 5)
        return failf(r, "expected a zip archive (torch.save's format since torch 1.6), found a bare pickle "
                        "(torch.save's legacy format, _use_new_zipfile_serialization=False)");
    if (got == 4 && b[0] == 'P' && b[1] == 'K')
        return failf(r, "expected a zip archive with its central directory at the end, found none in its %lld bytes "
                        "(a truncated file?)", r->file_size);
    char hex[16] = "";
    for (size_t i = 0; i < got; i++) {
        size_t k = strlen(hex);
        snprintf(hex + k, sizeof hex - k, "%s%02x", i ? " " : "", b[i]);
    }
    return failf(r, "expected a zip archive (torch.save's format; it starts with 50 4b), found the bytes %s", hex);
}

// Lists the central directory, sorted by name, and finds the archive's folder.
static int list_entries(Reader *r) {
    unz_global_info64 gi;
    if (unzGetGlobalInfo64(r->zf, &gi) != UNZ_OK) return failf(r, "expected a zip's end record, found an unreadable one");
    if (gi.number_entry == 0) return failf(r, "expected the records of a torch.save archive, found an empty zip");
    if (gi.number_entry > MAX_ENTRIES)
        return failf(r, "expected at most %d records, found a zip declaring %llu", MAX_ENTRIES, (unsigned long long)gi.number_entry);
    r->entries = xcalloc((size_t)gi.number_entry, sizeof *r->entries, "the archive's records");
    int rc = unzGoToFirstFile(r->zf);
    while (rc == UNZ_OK && r->n_entries < (int)gi.number_entry) {
        Entry *e = &r->entries[r->n_entries];
        char name[NAME_LEN];
        if (unzGetCurrentFileInfo64(r->zf, &e->info, name, sizeof name, NULL, 0, NULL, 0) != UNZ_OK)
            return failf(r, "expected readable zip records, found an unreadable directory entry %d", r->n_entries);
        if (e->info.size_filename >= sizeof name)
            return failf(r, "expected record names of at most %d bytes, found one of %lu", NAME_LEN - 1, e->info.size_filename);
        if (unzGetFilePos64(r->zf, &e->pos) != UNZ_OK)
            return failf(r, "expected readable zip records, found an unreadable directory entry %d", r->n_entries);
        e->name = xstrdup(name, "the archive's record names");
        r->n_entries++;
        rc = unzGoToNextFile(r->zf);
    }
    if (rc != UNZ_OK && rc != UNZ_END_OF_LIST_OF_FILE)
        return failf(r, "expected a zip central directory of %llu records, found it unreadable after %d",
                     (unsigned long long)gi.number_entry, r->n_entries);
    // torch names the archive's folder after its first record.
    const char *slash = strchr(r->entries[0].name, '/');
    if (!slash) return failf(r, "expected records in one folder (NAME/data.pkl), found '%s' first", r->entries[0].name);
    snprintf(r->prefix, sizeof r->prefix, "%.*s", (int)(slash - r->entries[0].name + 1), r->entries[0].name);
    qsort(r->entries, (size_t)r->n_entries, sizeof *r->entries, cmp_entry);
    for (int i = 1; i < r->n_entries; i++)
        if (strcmp(r->entries[i - 1].name, r->entries[i].name) == 0)
            return failf(r, "expected each record once, found '%s' twice", r->entries[i].name);
    return 1;
}

// Checks a record's declared sizes: no larger than the file, `want` bytes
// uncompressed when want >= 0, at most `max` when max >= 0.
static int check_sizes(Reader *r, const Entry *e, long long want, long long max) {
    const unz_file_info64 *in = &e->info;
    if (in->compression_method != 0 && in->compression_method != Z_DEFLATED)
        return failf(r, "%s: expected a stored or deflated record, found compression method %lu", e->name, in->compression_method);
    if (in->compressed_size > (unsigned long long)r->file_size)
        return failf(r, "%s: expected a record of at most the file's %lld bytes, found one declaring %llu", e->name,
                     r->file_size, (unsigned long long)in->compressed_size);
    if (in->compression_method == 0 && in->uncompressed_size != in->compressed_size)
        return failf(r, "%s: expected a stored record of as many bytes as it occupies (%llu), found one declaring %llu",
                     e->name, (unsigned long long)in->compressed_size, (unsigned long long)in->uncompressed_size);
    if (want >= 0 && in->uncompressed_size != (unsigned long long)want)
        return failf(r, "%s: expected %lld bytes, found a record of %llu", e->name, want, (unsigned long long)in->uncompressed_size);
    if (max >= 0 && in->uncompressed_size > (unsigned long long)max)
        return failf(r, "%s: expected a record of at most %lld bytes, found one declaring %llu", e->name, max,
                     (unsigned long long)in->uncompressed_size);
    return 1;
}

// A stored record of at least this many bytes is read with pread straight
// into its tensor, where minizip's local header says its data starts, and its
// CRC-32 computed a chunk at a time while the chunk is in cache: minizip
// would copy it through a 16 KiB buffer first. The CRC-32 is libdeflate's:
// the zip's CRC-32, zlib's crc32 value for value, computed with carry-less
// multiplication where the CPU has it (PCLMULQDQ, PMULL), several times
// faster than zlib's table-driven crc32 (tests/BENCHMARKS.md).
#define DIRECT_MIN (1 << 20)
#define DIRECT_CHUNK (1 << 20)

static int read_direct(Reader *r, const Entry *e, unsigned char *buf, unsigned long long size) {
    ZPOS64_T pos = unzGetCurrentFileZStreamPos64(r->zf);
    unzCloseCurrentFile(r->zf);  // nothing read through minizip
    if (pos == 0 || pos > (unsigned long long)r->file_size || size > (unsigned long long)r->file_size - pos)
        return failf(r, "%s: expected %llu bytes of data from byte %llu, found the file ends at byte %lld (truncated)",
                     e->name, size, (unsigned long long)pos, r->file_size);
    uint32_t crc = 0;  // libdeflate_crc32's initial value, as zlib's crc32(0, NULL, 0)
    for (unsigned long long done = 0; done < size;) {
        size_t chunk = size - done > DIRECT_CHUNK ? DIRECT_CHUNK : (size_t)(size - done);
        ssize_t got = pread(r->fd, buf + done, chunk, (off_t)(pos + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            return failf(r, "%s: expected %llu bytes, found %llu (%s)", e->name, size, done,
                         got == 0 ? "the file ends there: truncated" : strerror(errno));
        crc = libdeflate_crc32(crc, buf + done, (size_t)got);
        done += (unsigned long long)got;
    }
    if (crc != e->info.crc)
        return failf(r, "%s: expected data of the CRC-32 the archive records (%08lx), found other data (%08lx)", e->name,
                     e->info.crc, (unsigned long)crc);
    return 1;
}

// Reads a whole record into buf (its uncompressed size), its CRC-32 checked.
static int read_record(Reader *r, const Entry *e, void *buf) {
    unsigned long long size = e->info.uncompressed_size, done = 0;
    if (unzGoToFilePos64(r->zf, &e->pos) != UNZ_OK || unzOpenCurrentFile(r->zf) != UNZ_OK)
        return failf(r, "%s: expected a readable local header, found one that does not match the directory", e->name);
    if (e->info.compression_method == 0 && size >= DIRECT_MIN && r->fd >= 0) return read_direct(r, e, buf, size);
    while (done < size) {
        unsigned chunk = size - done > (1u << 30) ? (1u << 30) : (unsigned)(size - done);
        int got = unzReadCurrentFile(r->zf, (char *)buf + done, chunk);
        if (got <= 0) {
            unzCloseCurrentFile(r->zf);
            return failf(r, "%s: expected %llu bytes, found %llu (%s)", e->name, size, done,
                         got == 0 ? "the file ends there: truncated" : "unreadable data");
        }
        done += (unsigned)got;
    }
    int rc = unzCloseCurrentFile(r->zf);
    if (rc == UNZ_CRCERROR)
        return failf(r, "%s: expected data of the CRC-32 the archive records (%08lx), found other data", e->name, e->info.crc);
    if (rc != UNZ_OK) return failf(r, "%s: expected a readable record, found minizip error %d", e->name, rc);
    return 1;
}

// A small text record (version, byteorder) without its trailing newline.
static int read_record_text(Reader *r, const Entry *e, char *out, size_t n) {
    if (!check_sizes(r, e, -1, (long long)n - 1)) return 0;
    memset(out, 0, n);
    if (!read_record(r, e, out)) return 0;
    size_t k = strlen(out);
    while (k && (out[k - 1] == '\n' || out[k - 1] == '\r')) out[--k] = '\0';
    return 1;
}

static const char *dtype_of(const char *storage) {
    static const char *const map[][2] = {
        {"FloatStorage", "float32"}, {"DoubleStorage", "float64"}, {"HalfStorage", "float16"},
        {"BFloat16Storage", "bfloat16"}, {"LongStorage", "int64"}, {"IntStorage", "int32"},
        {"ShortStorage", "int16"}, {"CharStorage", "int8"}, {"ByteStorage", "uint8"}, {"BoolStorage", "bool"},
        {"ComplexFloatStorage", "complex64"}, {"ComplexDoubleStorage", "complex128"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(map[i][0], storage) == 0) return map[i][1];
    return "a quantized type";
}

// Bytes per element: 4 for float32, 1 for bool (the only two read).
static int64_t element_size(const PickleStorage *s) { return strcmp(s->type, "BoolStorage") == 0 ? 1 : 4; }

// A bool storage's bytes as float32 0.0 and 1.0, in place (buf holds n
// floats' room, its first n bytes the storage's); a byte other than 0 or 1
// is refused.
static int bools_to_floats(Reader *r, const PickleStorage *s, float *buf, int64_t n) {
    const unsigned char *b = (const unsigned char *)buf;
    for (int64_t i = 0; i < n; i++)
        if (b[i] > 1)
            return failf(r, "storage %s (torch.BoolStorage): expected bytes 0 or 1, found %u at element %lld", s->key,
                         b[i], (long long)i);
    for (int64_t i = n - 1; i >= 0; i--) buf[i] = b[i] ? 1.0f : 0.0f;  // from the end: no byte read is overwritten
    return 1;
}

static void format_dims(char *buf, size_t n, int ndim, const int64_t *d) {
    long long dd[TORCH_PICKLE_MAX_DIMS];
    for (int i = 0; i < ndim; i++) dd[i] = d[i];
    shape_format(ndim, dd, buf, n);
}

// The last element a tensor reaches (offset when it has none), or -1 past 2^62.
static int64_t last_element(const PickleTensor *t, bool *empty) {
    int64_t last = t->offset;
    *empty = false;
    for (int d = 0; d < t->ndim; d++)
        if (t->size[d] == 0) *empty = true;
    if (*empty) return last;
    for (int d = 0; d < t->ndim; d++) {
        int64_t term;
        if (__builtin_mul_overflow(t->size[d] - 1, t->stride[d], &term) || __builtin_add_overflow(last, term, &last))
            return -1;
    }
    return last;
}

static bool is_contiguous(const PickleTensor *t) {
    int64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->size[d] != 1 && t->stride[d] != want) return false;
        want *= t->size[d];
    }
    return true;
}

// Copies a strided tensor out of its storage's floats.
static void gather(float *dst, const float *src, const PickleTensor *t) {
    int64_t idx[TORCH_PICKLE_MAX_DIMS] = {0};
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= t->size[d];
    for (int64_t k = 0; k < n; k++) {
        int64_t off = t->offset;
        for (int d = 0; d < t->ndim; d++) off += idx[d] * t->stride[d];
        dst[k] = src[off];
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->size[d]) break;
            idx[d] = 0;
        }
    }
}

static void reader_close(Reader *r) {
    if (r->zf) unzClose(r->zf);
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    for (int i = 0; i < r->n_entries; i++) free(r->entries[i].name);
    free(r->entries);
    r->zf = NULL;
    r->entries = NULL;
    r->n_entries = 0;
}

void pth_state_dict_free(PthStateDict *sd) {
    for (int i = 0; i < sd->n; i++) {
        free(sd->keys[i]);
        if (sd->tensors[i].data) tensor_free(sd->tensors[i]);
    }
    free(sd->keys);
    free(sd->tensors);
    *sd = (PthStateDict){0};
}

// Everything but the storages' bytes: the archive, its records, the pickle,
// and every tensor against its storage.
static int load_checked(Reader *r, PickleStateDict *pk, const Entry ***records) {
    struct stat st;
    if (stat(r->path, &st) != 0) return failf(r, "expected a readable file, found: %s", strerror(errno));
    if (!S_ISREG(st.st_mode)) return failf(r, "expected a regular file (a torch.save archive), found another kind of file");
    r->file_size = (long long)st.st_size;
    r->zf = unzOpen64(r->path);
    if (!r->zf) return not_a_zip(r);
    r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) return failf(r, "expected a readable file, found: %s", strerror(errno));
    if (!list_entries(r)) return 0;

    const Entry *version = find(r, "version");
    if (!version) version = find(r, ".data/version");
    if (!version) return failf(r, "expected a record %sversion (torch.save writes one), found none", r->prefix);
    char text[16];
    if (!read_record_text(r, version, text, sizeof text)) return 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < 1 || v > 10)
        return failf(r, "%s: expected a format version from 1 to 10 (torch.save writes 3), found '%s'", version->name, text);
    const Entry *bo = find(r, "byteorder");
    if (bo) {
        if (!read_record_text(r, bo, text, sizeof text)) return 0;
        if (strcmp(text, "little") != 0)
            return failf(r, "%s: expected 'little' (this reader's byte order), found '%s'", bo->name, text);
    }

    const Entry *pkl = find(r, "data.pkl");
    if (!pkl) return failf(r, "expected a record %sdata.pkl (the state_dict's pickle), found none", r->prefix);
    if (!check_sizes(r, pkl, -1, PTH_MAX_PICKLE)) return 0;
    size_t n = (size_t)pkl->info.uncompressed_size;
    unsigned char *buf = xmalloc(n ? n : 1, "the state_dict's pickle");
    if (!read_record(r, pkl, buf)) {
        free(buf);
        return 0;
    }
    char perr[PTH_ERR_LEN / 2];
    int ok = torch_pickle_read(buf, n, pk, perr, sizeof perr);
    free(buf);
    if (!ok) return failf(r, "%s %s", pkl->name, perr);

    *records = xcalloc((size_t)pk->n_storages + 1, sizeof **records, "the storages' records");
    for (int i = 0; i < pk->n_tensors; i++) {
        const PickleTensor *t = &pk->tensors[i];
        const PickleStorage *s = &pk->storages[t->storage];
        if (strcmp(s->type, "FloatStorage") != 0 && strcmp(s->type, "BoolStorage") != 0)
            return failf(r, "'%s': expected a float32 tensor (torch.FloatStorage) or a bool one (torch.BoolStorage), "
                            "found torch.%s (%s)", t->key, s->type, dtype_of(s->type));
    }
    for (int i = 0; i < pk->n_storages; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "data/%s", pk->storages[i].key);
        const Entry *e = find(r, rel);
        if (!e) return failf(r, "expected a record %s%s for storage %s, found none", r->prefix, rel, pk->storages[i].key);
        if (!check_sizes(r, e, pk->storages[i].numel * element_size(&pk->storages[i]), -1)) return 0;
        (*records)[i] = e;
    }
    for (int i = 0; i < pk->n_tensors; i++) {
        const PickleTensor *t = &pk->tensors[i];
        const PickleStorage *s = &pk->storages[t->storage];
        char sz[128], st_[128];
        format_dims(sz, sizeof sz, t->ndim, t->size);
        format_dims(st_, sizeof st_, t->ndim, t->stride);
        if (t->ndim > TENSOR_MAX_DIMS)
            return failf(r, "'%s': expected a tensor of at most %d axes, found the shape %s", t->key, TENSOR_MAX_DIMS, sz);
        int64_t count = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->size[d] > INT_MAX || __builtin_mul_overflow(count, t->size[d], &count) || count > TENSOR_MAX_NUMEL)
                return failf(r, "'%s': expected a tensor of at most 2^26 elements, found the shape %s", t->key, sz);
        }
        bool empty;
        int64_t last = last_element(t, &empty);
        if (last < 0 || (empty ? last > s->numel : last >= s->numel))
            return failf(r, "'%s': expected shape %s, stride %s at offset %lld inside storage %s of %lld elements, "
                            "found it reaches element %s%lld", t->key, sz, st_, (long long)t->offset, s->key,
                         (long long)s->numel, last < 0 ? "past " : "", last < 0 ? (long long)INT64_MAX : (long long)last);
    }
    return 1;
}

int pth_load(const char *path, PthStateDict *out, char *err, size_t len) {
    *out = (PthStateDict){0};
    Reader r = {.path = path, .err = err, .len = len, .fd = -1};
    PickleStateDict pk = {0};
    const Entry **records = NULL;
    int ok = load_checked(&r, &pk, &records);
    PthStateDict sd = {0};
    if (ok) {
        sd.keys = xcalloc((size_t)pk.n_tensors + 1, sizeof *sd.keys, "the state_dict's keys");
        sd.tensors = xcalloc((size_t)pk.n_tensors + 1, sizeof *sd.tensors, "the state_dict's tensors");
    }
    // How many tensors use each storage, and whether one covers it exactly.
    int *users = ok ? xcalloc((size_t)pk.n_storages + 1, sizeof *users, "the storages' users") : NULL;
    for (int i = 0; ok && i < pk.n_tensors; i++) users[pk.tensors[i].storage]++;
    for (int i = 0; ok && i < pk.n_tensors; i++) {
        const PickleTensor *t = &pk.tensors[i];
        Size s = {.ndim = t->ndim};
        for (int d = 0; d < t->ndim; d++) s.dims[d] = (int)t->size[d];
        sd.keys[i] = xstrdup(t->key, "the state_dict's keys");
        sd.tensors[i] = tensor_empty(s);
        sd.n = i + 1;
    }
    // Each storage's bytes: straight into its one tensor when that tensor is
    // the whole storage in order; else through a buffer.
    for (int si = 0; ok && si < pk.n_storages; si++) {
        int64_t snumel = pk.storages[si].numel;
        int only = -1;
        for (int i = 0; i < pk.n_tensors; i++)
            if (pk.tensors[i].storage == si) only = i;
        const PickleTensor *t = only >= 0 ? &pk.tensors[only] : NULL;
        if (!t) continue;  // named by a persistent id but by no tensor of the dict
        const bool bools = element_size(&pk.storages[si]) == 1;
        if (!bools && users[si] == 1 && t->offset == 0 && is_contiguous(t) && snumel == numel(sd.tensors[only])) {
            if (snumel) ok = read_record(&r, records[si], sd.tensors[only].data);
            continue;
        }
        // (a size the file gives: no memory for it is the file's fault)
        float *buf = mem_malloc((size_t)snumel * 4 + 4);
        if (!buf) {
            ok = failf(&r, "expected memory for storage %s (%lld floats), found none", pk.storages[si].key, (long long)snumel);
            break;
        }
        ok = snumel == 0 || read_record(&r, records[si], buf);
        if (ok && bools) ok = bools_to_floats(&r, &pk.storages[si], buf, snumel);
        for (int i = 0; ok && i < pk.n_tensors; i++)
            if (pk.tensors[i].storage == si) gather(sd.tensors[i].data, buf, &pk.tensors[i]);
        free(buf);
    }
    free(users);
    free(records);
    torch_pickle_free(&pk);
    reader_close(&r);
    if (!ok) {
        pth_state_dict_free(&sd);
        return 0;
    }
    *out = sd;
    return 1;
}

int pth_load_select(const char *path, const char *key, PthStateDict *out, char *err, size_t len) {
    if (!key) return pth_load(path, out, err, len);
    *out = (PthStateDict){0};
    set_err(err, len, path, "expected a file that holds the state_dict itself (this reader selects no entry of a "
            "checkpoint), found the key '%s' asked for", key);
    return 0;
}

PthStateDict pth_read(const char *path) {
    PthStateDict sd;
    char err[PTH_ERR_LEN];
    if (!pth_load(path, &sd, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
    return sd;
}

// --- writing ----------------------------------------------------------------------------

// Local header: 30 bytes, the name, the extra field ("FB" padding, and minizip's
// zip64 field when asked for).
#define LOCAL_HEADER 30
#define ALIGN 64

static int add_record(zipFile zf, const char *name, const void *data, unsigned long long n, int zip64,
                      unsigned long long *offset) {
    // torch aligns every record's data to 64 bytes with an extra field of id
    // "FB" (0x4246) filled with 'Z'; the same here.
    size_t name_len = strlen(name);
    unsigned long long header = LOCAL_HEADER + name_len + 4 + (zip64 ? 20 : 0);
    unsigned pad = (unsigned)((ALIGN - (*offset + header) % ALIGN) % ALIGN);
    unsigned char extra[4 + ALIGN];
    extra[0] = 'F';
    extra[1] = 'B';
    extra[2] = (unsigned char)pad;
    extra[3] = 0;
    memset(extra + 4, 'Z', pad);
    zip_fileinfo fi;
    memset(&fi, 0, sizeof fi);
    if (zipOpenNewFileInZip64(zf, name, &fi, extra, 4 + pad, NULL, 0, NULL, 0, 0, zip64) != ZIP_OK) return 0;
    unsigned long long done = 0;
    while (done < n) {
        unsigned chunk = n - done > (1u << 30) ? (1u << 30) : (unsigned)(n - done);
        if (zipWriteInFileInZip(zf, (const char *)data + done, chunk) != ZIP_OK) return 0;
        done += chunk;
    }
    if (zipCloseFileInZip(zf) != ZIP_OK) return 0;
    *offset += header + pad + n;
    return 1;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pth_save(const char *path, const PthStateDict *sd, char *err, size_t len) {
    // The archive's folder: the file's base name without its extension, as torch 1.13 names it.
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char archive[NAME_LEN];
    snprintf(archive, sizeof archive, "%s", base);
    char *dot = strrchr(archive, '.');
    if (dot && dot != archive) *dot = '\0';
    if (!archive[0] || strlen(archive) > 255) snprintf(archive, sizeof archive, "archive");

    int n = sd->n;
    int *ndim = xcalloc((size_t)n + 1, sizeof *ndim, "the state_dict's shapes");
    int64_t(*dims)[TORCH_PICKLE_MAX_DIMS] = xcalloc((size_t)n + 1, sizeof *dims, "the state_dict's shapes");
    char **order = xcalloc((size_t)n + 1, sizeof *order, "the storages' order");
    char *names = xcalloc((size_t)n + 1, 24, "the storages' names");
    unsigned long long total = 0;
    for (int i = 0; i < n; i++) {
        ndim[i] = sd->tensors[i].ndim;
        for (int d = 0; d < ndim[i]; d++) dims[i][d] = sd->tensors[i].shape[d];
        snprintf(names + 24 * i, 24, "%d", i);
        order[i] = names + 24 * i;
        total += (unsigned long long)numel(sd->tensors[i]) * 4;
    }
    // torch writes the storages in the order of their keys sorted as strings.
    qsort(order, (size_t)n, sizeof *order, cmp_str);
    size_t pkl_len = 0;
    unsigned char *pkl = torch_pickle_write(n, (const char *const *)sd->keys, ndim, (const int64_t(*)[TORCH_PICKLE_MAX_DIMS])dims,
                                            &pkl_len);
    free(ndim);
    free(dims);
    if (!pkl) die_oom(0, "the state_dict's pickle");  // torch_pickle_write's only failure

    // A temporary beside the target, renamed into place once complete.
    char temp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    int ok = snprintf(temp, sizeof temp, "%.*s.%s.XXXXXX", dir_len, path, base) < (int)sizeof temp;
    int fd = ok ? mkstemp(temp) : -1;
    if (fd < 0) {
        free(pkl), free(order), free(names);
        set_err(err, len, path, "expected a writable directory for it, found: %s", ok ? strerror(errno) : "a path too long");
        return 0;
    }
    // mkstemp's file is 0600: give it the mode torch.save's would have (an
    // existing target's, else the umask's default).
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (st.st_mode & 07777) : (0666 & ~mask));
    close(fd);
    int zip64 = total + pkl_len > 0xf0000000ull;
    zipFile zf = zipOpen64(temp, APPEND_STATUS_CREATE);
    ok = zf != NULL;
    unsigned long long offset = 0;
    char name[NAME_LEN + 64];
    if (ok) {
        snprintf(name, sizeof name, "%s/data.pkl", archive);
        ok = add_record(zf, name, pkl, pkl_len, zip64, &offset);
    }
    for (int k = 0; ok && k < n; k++) {
        int i = atoi(order[k]);
        snprintf(name, sizeof name, "%s/data/%d", archive, i);
        ok = add_record(zf, name, sd->tensors[i].data, (unsigned long long)numel(sd->tensors[i]) * 4, zip64, &offset);
    }
    if (ok) {
        snprintf(name, sizeof name, "%s/version", archive);
        ok = add_record(zf, name, "3\n", 2, zip64, &offset);
    }
    int saved_errno = errno;
    if (zf && zipClose(zf, NULL) != ZIP_OK) ok = 0;
    free(pkl), free(order), free(names);
    if (ok) {
        fd = open(temp, O_RDONLY);
        ok = fd >= 0 && fsync(fd) == 0;
        if (fd >= 0) close(fd);
        saved_errno = errno;
    }
    if (ok && rename(temp, path) != 0) {
        ok = 0;
        saved_errno = errno;
    }
    if (!ok) {
        unlink(temp);
        set_err(err, len, path, "expected to write the archive, found: %s", strerror(saved_errno ? saved_errno : EIO));
        return 0;
    }
    return 1;
}

void pth_write(const char *path, const PthStateDict *sd) {
    char err[PTH_ERR_LEN];
    if (!pth_save(path, sd, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
}
