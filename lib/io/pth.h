// pth.h: PyTorch's checkpoint files (torch.save(model.state_dict(), "x.pth")),
// read and written without Python and without running a pickle.
//
// The file is torch's zip archive (since torch 1.6): records under one
// folder, the archive's name (any name: torch 1.13 uses the file's base name,
// torch 2.x "archive" or the base name):
//   NAME/data.pkl         the state_dict's pickle (torch_pickle.h)
//   NAME/data/KEY         each storage's bytes, little-endian
//   NAME/version          "3\n" (or NAME/.data/version)
//   NAME/byteorder        "little" (torch 2.x; absent in 1.13)
// and, from torch 2.x, records that are not needed here and are skipped
// (NAME/.data/serialization_id, NAME/.format_version, NAME/.storage_alignment).
// The zip format itself is minizip's (zlib's contrib/minizip, Debian's
// libminizip): the central directory, the local headers, the CRC-32 of
// every record read.
//
// Reading: float32 tensors (and bool ones, torch.BoolStorage, each byte
// 0 or 1 read as 0.0 or 1.0: the causal mask a module registers with
// .bool(), as the bonus notebook's MHAPyTorchSDPAWithoutFlash and
// MHAPyTorchClass do) of up to TENSOR_MAX_DIMS axes and
// TENSOR_MAX_NUMEL elements, any strides and storage offset inside their
// storage, storages shared between tensors; each comes back as a contiguous
// Tensor of the library's pool. A storage that one tensor covers exactly, in
// order, is read into that tensor and nowhere else (a stored record of
// 1 MiB or more with pread straight from the file, its CRC-32 computed by
// libdeflate a chunk at a time; a smaller one through minizip's 16 KiB buffer);
// any other is read once into a buffer, its tensors copied out of it, and
// the buffer freed. So the peak memory is the tensors' bytes and little
// more. Everything the pickle says is checked before any tensor is made.
//
// Every failure is one line, "PATH: what: expected ..., found ...": not a
// zip, truncated, a record's CRC-32, a declared size larger than the file or
// than what its storage needs, a storage shorter than its tensor, strides
// or an offset outside the storage, a dtype other than float32 and bool, a
// bool byte other than 0 and 1, an opcode or
// global outside a state_dict's pickle, a pickle without STOP.
#ifndef LITATTN_PTH_H
#define LITATTN_PTH_H

#include <stddef.h>

#include "tensor.h"

// A state_dict: keys in order, each with its tensor.
typedef struct {
    int n;
    char **keys;
    Tensor *tensors;
} PthStateDict;

// Enough for any message: a path, a key, and what was expected and found.
#define PTH_ERR_LEN 8192
// The largest data.pkl read (its declared size): a state_dict of 10^5
// tensors pickles to a few MiB.
#define PTH_MAX_PICKLE (64L << 20)

// Reads path into out (tensors from the pool, keys malloc'd). 1 on success;
// else 0, one line in err, and nothing made (out empty).
int pth_load(const char *path, PthStateDict *out, char *err, size_t len);
// The same with a key: NULL, the file's top-level object is the state_dict
// (pth_load); else the entry `key` of a top-level dict holds it (a training
// checkpoint's "model_state_dict"). This reader takes no key: one is refused
// in one line.
int pth_load_select(const char *path, const char *key, PthStateDict *out, char *err, size_t len);
// Writes sd as torch 1.13's torch.save writes an OrderedDict of contiguous
// float32 tensors (one storage per tensor, records aligned to 64 bytes, the
// archive named after the file's base name), to a temporary file beside
// path renamed into place once complete. 1 on success; else 0, one line in
// err, path untouched and no temporary left.
int pth_save(const char *path, const PthStateDict *sd, char *err, size_t len);
// Frees the keys and arrays, and gives back the tensors pth_load made.
void pth_state_dict_free(PthStateDict *sd);

// The same, ending the program with one line (die, exit 1) on failure.
PthStateDict pth_read(const char *path);
void pth_write(const char *path, const PthStateDict *sd);

#endif
