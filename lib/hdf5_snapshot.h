// hdf5_snapshot.h: everything a fixture reader may ask of one group of an
// HDF5 file, read in a child process.
//
// Debian 12's HDF5 (1.10.8) crashes, loops forever, overruns buffers or
// allocates gigabytes on some corrupt files: our fuzzer finds one-byte
// changes to a fixture that do each, and whether a given call goes wrong can
// depend on the calls before it. So the caller never runs HDF5 on a fixture.
// A forked child reads the group's attributes, what each link leads to, and
// every dataset's type, shape, role and values, and sends them back over a
// pipe; the caller answers every question from that snapshot. If the child
// dies or runs past its time, the file is refused with one line that says
// what HDF5 was reading.
#ifndef LITATTN_HDF5_SNAPSHOT_H
#define LITATTN_HDF5_SNAPSHOT_H

#include <stddef.h>

// Seconds the child may take before the file counts as one that hangs HDF5.
#define SNAPSHOT_SECONDS 2.0
// Datasets with more values than this (4 MiB of float32) are described but
// not read: more than any chapter accepts, and refused from their shape.
#define SNAPSHOT_MAX_ELEMENTS (1 << 20)
#define SNAPSHOT_MAX_RANK 32

typedef enum { ATTR_STRING, ATTR_INT, ATTR_OTHER } AttrKind;

typedef struct {
    char *name;
    AttrKind kind;
    char type[32];      // "string", "int64", "float64", ...: as errors name it
    long long count;    // how many values it holds (1 for a single value)
    int read_ok;        // a single string or integer value was read
    char *text;         // ATTR_STRING: the value
    long long value;    // ATTR_INT: the value
} SnapAttr;

typedef enum { SPACE_SIMPLE, SPACE_SCALAR, SPACE_NULL, SPACE_UNREADABLE } SpaceKind;

typedef struct {
    char *name;
    char found[48];     // what the link leads to: "a dataset", "a group", "a soft link to nothing", ...
    int is_dataset, is_group;
    // Datasets only:
    char type[32];      // "float32", "float64", "int32", "string", ...
    int is_float32;
    SpaceKind space;
    int rank;           // 0 for a scalar
    long long dims[SNAPSHOT_MAX_RANK];
    char role[32];      // the "role" attribute, "" if none
    int values_read;    // 1: values holds numel floats; 0: not read (not float32, rank > 4,
                        // empty, too large); -1: HDF5 failed to read them
    long long numel;
    float *values;
} SnapObject;

typedef enum {
    SNAP_OK,
    SNAP_NOT_HDF5,      // no HDF5 signature
    SNAP_CORRUPT,       // HDF5 cannot open it
    SNAP_NO_ROOT,       // the root group cannot be opened
    SNAP_NO_GROUP,      // the wanted group does not exist
    SNAP_NOT_GROUP,     // the wanted name is something else (group_found says what)
} SnapStatus;

typedef struct {
    SnapStatus status;
    char group_found[48];
    int listing_failed;  // HDF5 failed part way through listing the group's links
    SnapAttr *attrs;
    int n_attrs;
    SnapObject *objects;  // in name order, as H5Literate gives them
    int n_objects;
} Snapshot;

// Reads `group` of `path` ("" or NULL: the root) into out. Returns 1 when
// the child finished; out->status then says whether the file was usable.
// Returns 0 with one line in err when the child crashed, failed or hung.
int hdf5_snapshot(const char *path, const char *group, Snapshot *out, char *err, size_t len);
void snapshot_free(Snapshot *s);

#endif
