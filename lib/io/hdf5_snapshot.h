// hdf5_snapshot.h: everything a fixture reader may ask of an HDF5 file, read
// in a child process.
//
// Debian 12's HDF5 (1.10.8) crashes, loops forever, overruns buffers or
// allocates gigabytes on some corrupt files: our fuzzer finds one-byte
// changes to a fixture that do each, and whether a given call goes wrong can
// depend on the calls before it. So the caller never runs HDF5 on a user's
// file. A forked child reads one group (or every group directly under the
// root): its attributes, what each link leads to, and every dataset's type,
// shape, role and values, and sends them back over a pipe; the caller
// answers every question from that snapshot.
//
// The child reads the descriptor the caller opened and checked (mapped, or
// through /proc/self/fd/N), never the path again; it dies with its parent
// (PR_SET_PDEATHSIG); it is bounded by CPU time, address space and a
// generous wall-clock limit, each with its own message. Data that does not
// live in the file itself (virtual datasets, external storage, external
// links) and data behind a filter this library lacks are described, never
// read.
#ifndef LITATTN_HDF5_SNAPSHOT_H
#define LITATTN_HDF5_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

// The default number of values per dataset the child reads (4 MiB of
// float32): more than any chapter accepts. Larger datasets are described
// (type, shape) but not read.
#define SNAPSHOT_MAX_ELEMENTS (1 << 20)
// Ranks the child reads the values of (0 to 4); higher ranks are described only.
#define SNAPSHOT_MAX_VALUE_RANK 4
#define SNAPSHOT_MAX_RANK 32
// String attributes longer than this are described (their length), not read.
#define SNAPSHOT_MAX_STRING (64 * 1024)

// The child's limits. A zero field takes its default.
typedef struct {
    long long max_elements;  // values per dataset read (default SNAPSHOT_MAX_ELEMENTS)
    double cpu_seconds;      // RLIMIT_CPU: default 10 s (a fixture takes milliseconds)
    double wall_seconds;     // against a blocked read only: default 60 s
    long long memory_bytes;  // RLIMIT_AS: default 2 GiB plus 8 bytes per allowed value;
                             // not applied under a sanitizer (its shadow memory is larger)
    int all_groups;          // also snapshot every group directly under the root
} SnapshotLimits;

typedef enum { ATTR_STRING, ATTR_INT, ATTR_FLOAT, ATTR_OTHER } AttrKind;
typedef enum { SPACE_SIMPLE, SPACE_SCALAR, SPACE_NULL, SPACE_UNREADABLE } SpaceKind;

typedef struct {
    char *name;
    AttrKind kind;
    char type[32];       // "string", "int64", "uint64", "float64", ...: as errors name it
    SpaceKind space;
    long long count;     // how many values it holds (1 for a single value, 0 for none)
    int read_ok;         // a single value was read (for a string: one within the length limit)
    int is_unsigned;     // ATTR_INT: an unsigned type (the value is in uvalue)
    long long length;    // ATTR_STRING: its length in bytes, also when too long to read
    char *text;          // ATTR_STRING: the value
    long long value;     // ATTR_INT, signed types
    unsigned long long uvalue;  // ATTR_INT, unsigned types
    double dvalue;       // ATTR_FLOAT
} SnapAttr;

typedef struct {
    char *name;
    char found[200];    // what the link leads to: "a dataset", "a group", "a soft link to nothing",
                        // "an external link to 'x.h5' '/inputs'", ...
    int is_dataset, is_group;
    // Datasets only:
    char type[32];      // "float32", "float64", "int32", "string", ...
    int is_float32;
    int is_int64;       // a signed 64-bit integer (token ids): its values go to ivalues
    SpaceKind space;
    int rank;           // 0 for a scalar
    long long dims[SNAPSHOT_MAX_RANK];
    char role[32];      // the "role" attribute, "" if none
    int values_read;    // 1: values holds numel floats (ivalues numel int64s); 0: not read (neither, rank > 4,
                        // empty, too large, or refused below); -1: HDF5 failed to read them
    char refused[200];  // why the values were not read although they could have been:
                        // "a virtual dataset ...", "external storage ...", "a filter ..."; "" if not
    long long numel;    // clamped to max_elements + 1
    float *values;
    int64_t *ivalues;
} SnapObject;

typedef enum {
    SNAP_OK,
    SNAP_CORRUPT,       // HDF5 cannot open it (note says more when it knows)
    SNAP_NO_ROOT,       // the root group cannot be opened
    SNAP_NO_GROUP,      // the wanted group does not exist
    SNAP_NOT_GROUP,     // the wanted name is something else (found says what)
} SnapStatus;

typedef struct {
    char *name;          // "" for the root, else the group's path as asked or listed
    SnapStatus status;   // SNAP_OK, SNAP_NO_GROUP or SNAP_NOT_GROUP
    char found[200];     // SNAP_NOT_GROUP: what the name leads to
    int listing_failed;  // HDF5 failed part way through listing the group's links
    SnapAttr *attrs;
    int n_attrs;
    SnapObject *objects;  // in name order, as H5Literate gives them
    int n_objects;
} SnapGroup;

typedef struct {
    SnapStatus status;  // of the file: SNAP_OK, SNAP_CORRUPT or SNAP_NO_ROOT
    char note[200];     // why HDF5 could not open it, when known ("" otherwise)
    SnapGroup *groups;  // [0]: the group asked for (or the root); then, with all_groups,
    int n_groups;       // every group directly under the root, in name order
} Snapshot;

// Reads `group` ("" or NULL: the root) of the HDF5 file open on `fd` (a
// regular file the caller opened and checked; `label` names it in messages,
// and is never opened) into out. Returns 1 when the child finished: then
// out->status and each group's status say whether the file was usable.
// Returns 0 with one line in err when the child crashed, failed, hit a
// limit, or could not be started.
int hdf5_snapshot(int fd, const char *label, const char *group, const SnapshotLimits *limits, Snapshot *out,
                  char *err, size_t len);
void snapshot_free(Snapshot *s);

// --- fixtures the build has read already -------------------------------------
//
// The child's records depend on the file's bytes alone (and on the limits,
// and on this program's HDF5). So the build reads each fixture it ships once,
// with the default limits, and compiles its bytes and its records into the
// chapter (tools/build/embed_snapshots.c). A file with exactly those bytes, asked
// for with the default limits and no group, is then answered from those
// records, with no child and no HDF5 at all: the same snapshot, sooner
// (`meson test -C build --benchmark startup` shows by how much). Any other
// file, one byte different or longer, goes to the child.
typedef struct ShippedSnapshot {
    const char *name;              // the file's name, without its directory
    const unsigned char *bytes;    // the file as the build read it
    size_t size;
    const unsigned char *records;  // what the reader child wrote for it
    size_t records_size;
} ShippedSnapshot;

typedef struct ShippedSnapshots {
    const ShippedSnapshot *table;
    int n;
} ShippedSnapshots;

// The table hdf5_snapshot consults from now on (NULL: none, the default).
void hdf5_snapshot_ship(const ShippedSnapshots *shipped);
// The snapshot of a shipped fixture itself, with no file at all: what the
// build read of it (its root group, the default limits). Returns 1, or 0
// with one line in err when the records do not decode (a build fault).
int hdf5_snapshot_shipped(const ShippedSnapshot *f, Snapshot *out, char *err, size_t len);
// What the build compiles in for the file open on fd (a regular file):
// its bytes, and the records the child writes for its root with the
// default limits, each in a new buffer (free both). Returns 0 with one line
// in err when the file cannot be read whole, the child failed, or the file
// is not a usable one.
int hdf5_snapshot_shippable(int fd, const char *label, unsigned char **bytes, size_t *size,
                            unsigned char **records, size_t *records_size, char *err, size_t len);
// How many reader children this process has started: tests tell from it
// which way a snapshot was made.
int hdf5_snapshot_children(void);

#endif
