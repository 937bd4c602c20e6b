// dump.h: --dump, writing every tensor a chapter computed to an HDF5 file,
// each dataset named as in the fixture (schema: fixtures/README.md).
//
// A dump never destroys data. It is written to a temporary file in the
// target's directory and renamed into place only once every dataset is
// written, the file closed and synced; a run that fails (an error, a write
// error, SIGINT, SIGTERM or SIGHUP) leaves the old target as it was and no
// temporary behind. A target that is the same file as an input (however
// the path reaches it: a hard link, a symbolic link, "..", /proc/self/fd/N)
// or as the program's own stdout or stderr is refused, and so is any
// existing target that is not a regular file (a device, a FIFO, a
// directory, a socket). A symbolic link to a regular file stays a link: the
// file it points to is replaced.
#ifndef LITATTN_DUMP_H
#define LITATTN_DUMP_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "tensor.h"

typedef struct Dump Dump;

// A file the program reads, which the dump must not overwrite; `what`
// names it in the message ("the fixture", "the text (--text)"). The target
// is refused when it is the same file by device and inode (stat following
// links; both 0: no file id, as for a fixture built into the program), or
// when it resolves to the same path (realpath; for a file not there yet,
// its directory's realpath and its name). dump_input_of fills both from a
// path; fixture_file_id gives a fixture's id.
typedef struct {
    dev_t dev;
    ino_t ino;
    const char *what;
    char path[PATH_MAX];  // the file's resolved path, "" if unknown
} DumpInput;
void dump_input_of(const char *path, const char *what, DumpInput *out);

// The checks alone, creating nothing: 1 when `path` may be written, else 0
// with one line in err ("PATH: --dump: expected ..., found ...").
int dump_check_target(const char *path, const DumpInput *inputs, int n_inputs, char *err, size_t len);

// The steps, each returning 0 with one line in err on failure. dump_open
// checks the target and creates the temporary; dump_commit closes, syncs and
// renames it into place, and frees d whatever happens (a failed commit
// removes the temporary); dump_abort removes the temporary and frees d.
Dump *dump_open(const char *path, const DumpInput *inputs, int n_inputs, char *err, size_t len);
int dump_add(Dump *d, const char *name, const char *role, Tensor t, char *err, size_t len);
// The same for an int64 tensor (token ids): an int64 little-endian dataset.
int dump_add_long(Dump *d, const char *name, const char *role, LongTensor t, char *err, size_t len);
int dump_commit(Dump *d, char *err, size_t len);
void dump_abort(Dump *d);

// The same, ending the program with one line (die) on failure: for chapters.
Dump *dump_create(const char *path, const DumpInput *inputs, int n_inputs);
// Writes `t` as dataset `name` with attribute role ("input", "weight",
// "output"). A name written again replaces the earlier value, as a notebook
// variable does when a later cell assigns it.
void dump_write(Dump *d, const char *name, const char *role, Tensor t);
void dump_write_long(Dump *d, const char *name, const char *role, LongTensor t);
void dump_close(Dump *d);  // NULL: nothing to do

#endif
