// hdf5_snapshot_records.h (internal to the hdf5_snapshot*.c units): the
// records the reader child (hdf5_snapshot_child.c) writes to its pipe, which
// the parent (hdf5_snapshot_parent.c) collects and decodes
// (hdf5_snapshot_records.c), and which the build compiles into a chapter for
// the fixtures it ships (hdf5_snapshot_shipped.c); and what the parent and
// the child share besides: the resolved limits and the progress page.
//
// A record is a one-byte tag and its fields, in this order. Numbers are
// int64 (i64) and strings (str) an i64 length then that many bytes, no NUL,
// in the machine's byte order (parent and child are one program; a shipped
// snapshot is compiled for the machine that made it).
//   'G' group      str name, i64 SnapStatus, str found: the start of a group
//   'A' attribute  str name, i64 AttrKind, str type, i64 SpaceKind, i64 count,
//                  i64 read_ok, i64 is_unsigned, i64 length, str text,
//                  i64 value, 8 bytes uvalue (u64), 8 bytes dvalue (double):
//                  one per attribute of the group
//   'O' object     str name, str found, i64 is_dataset, i64 is_group; for a
//                  dataset then str type, i64 is_float32, i64 is_int64,
//                  i64 SpaceKind, i64 rank, rank x i64 dims, str role,
//                  i64 values_read, str refused, i64 numel, and where
//                  values_read is 1 the numel values (int64 if is_int64,
//                  else float32): one per link of the group
//   'L'            (no fields) listing the group's links failed part way
//   'Z' end        i64 SnapStatus, str note: the snapshot is complete
// Every snapshot ends with 'Z'; the groups come in SnapGroup order.
#ifndef LITATTN_HDF5_SNAPSHOT_RECORDS_H
#define LITATTN_HDF5_SNAPSHOT_RECORDS_H

#include <stddef.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include "hdf5_snapshot.h"

#define DEFAULT_CPU_SECONDS 10.0
#define DEFAULT_WALL_SECONDS 60.0
#define DEFAULT_MEMORY (2LL << 30)

// SnapshotLimits with every default filled in.
typedef struct {
    long long max_elements, memory_bytes;
    double cpu_seconds, wall_seconds;
    int all_groups;
} Limits;

static inline Limits snapshot_limits(const SnapshotLimits *in) {
    Limits l = {SNAPSHOT_MAX_ELEMENTS, 0, DEFAULT_CPU_SECONDS, DEFAULT_WALL_SECONDS, 0};
    if (in && in->max_elements > 0) l.max_elements = in->max_elements;
    if (in && in->cpu_seconds > 0) l.cpu_seconds = in->cpu_seconds;
    if (in && in->wall_seconds > 0) l.wall_seconds = in->wall_seconds;
    l.memory_bytes = in && in->memory_bytes > 0 ? in->memory_bytes : DEFAULT_MEMORY + 8 * l.max_elements;
    l.all_groups = in && in->all_groups;
    return l;
}

// The page the child writes its progress to ("attribute 'chapter'"), read
// by the parent after the child has ended: where HDF5 was when the child
// crashed or hit a limit, at no cost in system calls. Mapped once per
// process (MAP_SHARED), by the parent.
typedef struct {
    char last[200];
    int memory_failed;  // an allocation failed (ours or HDF5's)
} Progress;

// --- the child (hdf5_snapshot_child.c) ---
// Reads `group` ("" or NULL: the root; with lim->all_groups every group
// under the root too) of the HDF5 file open on fd with HDF5 and writes its
// records to out_fd, reporting its progress in *progress; the process is
// the child forked by `parent`, and ends with _exit.
noreturn void hdf5_snapshot_child(int fd, pid_t parent, const char *group, int out_fd, const Limits *lim,
                                  Progress *progress);

// --- the decoder (hdf5_snapshot_records.c) ---
// The records, as they are decoded.
typedef struct {
    const unsigned char *data;
    size_t len, pos;
    int bad;  // a read past the end: the stream is incomplete
} Stream;
// Decodes the records of s into out (values up to max_elements per
// dataset); returns 1 when the stream ended with 'Z'.
int hdf5_snapshot_decode(Stream *s, Snapshot *out, long long max_elements);

// --- the shipped snapshots (hdf5_snapshot_shipped.c) ---
// The snapshot of the file open on fd from the shipped records of a fixture
// with its bytes; 0 for any other file, and whenever group or lim asks for
// anything but the defaults the build read with.
int hdf5_snapshot_from_shipped(int fd, const char *group, const Limits *lim, Snapshot *out);
// The first `size` bytes of fd, in a new buffer; NULL if they cannot all be
// read. pread: the descriptor's offset stays where it was.
unsigned char *hdf5_snapshot_read_bytes(int fd, size_t size);

#endif
