// fixture.h: reading PyTorch-exported HDF5 fixtures (schema: fixtures/README.md).
//
// Every check happens before any data is read: the object exists and is a
// dataset, its type is 32-bit IEEE float, its rank and shape are the wanted
// ones, and (for inputs) every value is finite. A failure never prints HDF5's
// error stack; it fills `err` with one line naming the file, the dataset, what
// was expected and what was found, and the call returns 0.
#ifndef LITATTN_FIXTURE_H
#define LITATTN_FIXTURE_H

#include <stddef.h>

#include "tensor.h"

#define FIXTURE_ERR_LEN 512

typedef struct Fixture Fixture;

// Opens `path` read-only; `group` (NULL or "" for the root) selects one
// configuration inside a file that holds several (the sweep).
Fixture *fixture_open(const char *path, const char *group, char err[FIXTURE_ERR_LEN]);
void fixture_close(Fixture *fx);
const char *fixture_path(const Fixture *fx);  // how messages name it: "path" or "path, group NAME"
const char *fixture_file(const Fixture *fx);  // the file's path

int fixture_has(const Fixture *fx, const char *name);

// Reads dataset `name` into a new tensor of shape `want`.
int fixture_read(Fixture *fx, const char *name, Size want, Tensor *out, char err[FIXTURE_ERR_LEN]);
// As fixture_read, and every value must be finite (for inputs and weights).
int fixture_read_finite(Fixture *fx, const char *name, Size want, Tensor *out,
                        char err[FIXTURE_ERR_LEN]);

// Attributes of the fixture's root (or of its group). Strings may be fixed or
// variable length, as h5py writes Python str.
int fixture_attr_string(Fixture *fx, const char *name, char *buf, size_t len,
                        char err[FIXTURE_ERR_LEN]);
int fixture_attr_int(Fixture *fx, const char *name, long long *out, char err[FIXTURE_ERR_LEN]);
int fixture_has_attr(Fixture *fx, const char *name);
// The attributes of the root (or group), by index: for listing them.
int fixture_attr_count(const Fixture *fx);
const char *fixture_attr_name(const Fixture *fx, int i);

// Calls fn for every dataset directly in the fixture's root or group, with the
// dataset's "role" attribute ("input", "weight" or "output"; "" if absent).
typedef void (*FixtureVisit)(const char *name, const char *role, void *ctx);
int fixture_each_dataset(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]);
// Calls fn for every group directly in the fixture's root (role is "").
int fixture_each_group(Fixture *fx, FixtureVisit fn, void *ctx, char err[FIXTURE_ERR_LEN]);

#endif
