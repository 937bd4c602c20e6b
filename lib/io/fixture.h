// fixture.h: reading PyTorch-exported HDF5 fixtures (schema: fixtures/README.md).
//
// Every check happens before any data is read: the object exists and is a
// dataset, its type is 32-bit IEEE float, its rank and shape are the wanted
// ones, and (for inputs) every value is finite. A failure never prints HDF5's
// error stack; it fills `err` with one line naming the file, the dataset, what
// was expected and what was found, and the call returns 0. Text taken from
// the file is escaped in that line (text_escape, error.h).
//
// The file is opened once, read-only and without blocking, and refused
// unless it is a regular, non-empty file with an HDF5 signature that no
// HDF5 writer holds locked; HDF5 then reads that same descriptor in a child
// process (hdf5_snapshot.h), and everything here answers from the snapshot.
// A file with the bytes of one of the chapter's own fixtures is answered
// from the build's snapshot of it instead, with no child.
#ifndef LITATTN_FIXTURE_H
#define LITATTN_FIXTURE_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "tensor.h"

// Holds any message of the reader whole (error.h).
#define FIXTURE_ERR_LEN ERROR_LINE_LEN
// Values per dataset the reader accepts from a fixture (4 MiB of float32).
#define FIXTURE_MAX_ELEMENTS (1 << 20)

typedef struct Fixture Fixture;

// How a file is read. Zero fields take their defaults.
typedef struct {
    // Values per dataset: FIXTURE_MAX_ELEMENTS unless raised for a trusted
    // file (the tests read --dump files of up to 2^26 values per dataset).
    long long max_elements;
    // Snapshot every group directly under the root as well, in the same
    // child process: fixture_group then answers without reading the file again.
    int all_groups;
    // The reader child's limits (hdf5_snapshot.h: 10 s of CPU, 60 s of wall
    // time, 2 GiB of address space); tests lower them to see each one hit.
    double cpu_seconds, wall_seconds;
    long long memory_bytes;
} FixtureOptions;

// Opens `path` read-only; `group` (NULL or "" for the root) selects one
// configuration inside a file that holds several (the sweep).
Fixture *fixture_open(const char *path, const char *group, char err[FIXTURE_ERR_LEN]);
Fixture *fixture_open_with(const char *path, const char *group, const FixtureOptions *opt,
                           char err[FIXTURE_ERR_LEN]);
// A fixture built into the program (hdf5_snapshot.h's ShippedSnapshot),
// answered from what the build read of it, with no file: named "NAME (built
// in)" in messages. It has its root only; a `group` is refused in one line.
struct ShippedSnapshot;
Fixture *fixture_open_shipped(const struct ShippedSnapshot *f, const char *group, char err[FIXTURE_ERR_LEN]);
// Opens the root and every group directly under it, in one reading of the file.
Fixture *fixture_open_all(const char *path, char err[FIXTURE_ERR_LEN]);
// A group of a fixture opened with all_groups, answered from its snapshot: as
// fixture_open(path, name) would, without reading the file again. The result
// is closed with fixture_close, before `all` is.
Fixture *fixture_group(Fixture *all, const char *name, char err[FIXTURE_ERR_LEN]);
void fixture_close(Fixture *fx);
// "path" or "path, group NAME": how messages name the fixture (not escaped).
const char *fixture_path(const Fixture *fx);
// The device and inode of the file read, as fstat found them on the
// descriptor that was read: --dump refuses to write onto this file. Both 0
// for a fixture built in (no file).
void fixture_file_id(const Fixture *fx, dev_t *dev, ino_t *ino);

int fixture_has(const Fixture *fx, const char *name);
int fixture_is_long(const Fixture *fx, const char *name);  // a dataset of int64 (fixture_read_long)

// Reads dataset `name` into a new tensor of shape `want`.
int fixture_read(Fixture *fx, const char *name, Size want, Tensor *out, char err[FIXTURE_ERR_LEN]);
// An int64 dataset of any shape up to rank 4 (token ids): the fixtures'
// outputs of the data pipeline, for the tests.
int fixture_read_long(Fixture *fx, const char *name, LongTensor *out, char err[FIXTURE_ERR_LEN]);
// As fixture_read, and every value must be finite (for inputs and weights).
int fixture_read_finite(Fixture *fx, const char *name, Size want, Tensor *out,
                        char err[FIXTURE_ERR_LEN]);

// --- attributes of the fixture's root (or of its group) ---------------------

typedef enum { FIXTURE_ATTR_STRING, FIXTURE_ATTR_INT, FIXTURE_ATTR_FLOAT, FIXTURE_ATTR_OTHER } FixtureAttrKind;

// What an attribute is, for a runtime that checks every attribute's type
// and range itself. Pointers stay valid until the fixture is closed.
typedef struct {
    const char *name;
    FixtureAttrKind kind;
    const char *type;   // "string", "int64", "uint64", "float64", "compound", ...
    long long count;    // values it holds: 1 for a single value, 0 for none
    int is_null;        // a null dataspace (no value at all)
    int is_unsigned;    // an unsigned integer type
    int read_ok;        // its single value was read (strings: within the length limit)
    long long length;   // strings: the length in bytes, also of one too long to read
} FixtureAttrInfo;

int fixture_has_attr(Fixture *fx, const char *name);
// The attributes of the root (or group), by index: for listing them.
int fixture_attr_count(const Fixture *fx);
const char *fixture_attr_name(const Fixture *fx, int i);
// Fills info; returns 0 when there is no such attribute.
int fixture_attr_info(Fixture *fx, const char *name, FixtureAttrInfo *info);
// Calls fn for every attribute, in name order.
typedef void (*FixtureAttrVisit)(const FixtureAttrInfo *info, void *ctx);
void fixture_each_attr(Fixture *fx, FixtureAttrVisit fn, void *ctx);

// A single string (fixed or variable length, as h5py writes Python str), at
// most 64 KiB; cut to fit buf.
int fixture_attr_string(Fixture *fx, const char *name, char *buf, size_t len,
                        char err[FIXTURE_ERR_LEN]);
// A single integer of any width and signedness that fits a long long; an
// unsigned value above 2^63 - 1 is refused, reported as itself.
int fixture_attr_int(Fixture *fx, const char *name, long long *out, char err[FIXTURE_ERR_LEN]);
// As fixture_attr_int, and within [min, max]; the message reports the real
// value, whatever its type (18446744073709551615 for a uint64 of 2^64 - 1).
int fixture_attr_int_in(Fixture *fx, const char *name, long long min, long long max, long long *out,
                        char err[FIXTURE_ERR_LEN]);
// A single float (float32 or float64, as a double; not range-checked:
// nan and inf come back as they are).
int fixture_attr_double(Fixture *fx, const char *name, double *out, char err[FIXTURE_ERR_LEN]);

// Calls fn for every dataset directly in the fixture's root or group, with the
// dataset's "role" attribute ("input", "weight" or "output"; "" if absent).
typedef void (*FixtureVisit)(const char *name, const char *role, void *ctx);
int fixture_each_dataset(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]);
// Calls fn for every group directly in the fixture's root (role is "").
int fixture_each_group(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]);

#endif
