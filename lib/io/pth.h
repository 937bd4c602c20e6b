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
// The zip is read by a small reader of its central directory over pread
// (zip64 sizes and offsets where a 32-bit field says 0xffffffff; stored
// records, and deflated ones through libdeflate); it is written with
// minizip (zlib's contrib/minizip, Debian's libminizip). Every record's
// CRC-32 is checked.
//
// Reading: a state_dict (torch.save(model.state_dict()), or
// dict(model.named_parameters()): a Parameter is read as its tensor), or
// with a key the state_dict a dict holds under it (a training checkpoint:
// torch.save({"model_state_dict": ..., "optimizer_state_dict": ...,
// "epoch": 3})), at any pickle protocol torch.save writes (1 to 5). Its
// tensors are float32 (or bool, torch.BoolStorage, each byte 0 or 1 read
// as 0.0 or 1.0: the causal mask a module registers with .bool(), as the
// bonus notebook's MHAPyTorchSDPAWithoutFlash and MHAPyTorchClass do) of up
// to TENSOR_MAX_DIMS axes and TENSOR_MAX_NUMEL elements, any strides and
// storage offset inside their storage, storages shared between tensors;
// each comes back as a contiguous Tensor of the library's pool. A storage
// that one tensor covers exactly, in order, is read into that tensor and
// nowhere else (with pread, its CRC-32 computed by libdeflate a chunk at a
// time); any other is read once into a buffer, its tensors copied out of
// it, and the buffer freed. Everything the pickle says is checked before
// any tensor is made.
//
// Memory: the pickle's bytes and at most 8 bytes per byte of them while it
// is read (torch_pickle.h), the archive's central directory, and the
// tensors (at most PTH_MAX_ELEMENTS in all). A record may declare no more than the file holds (deflated: at
// most 1032 times its bytes, deflate's limit). Out of memory stops the
// program (die_oom, exit 3), never a refusal of the file.
//
// Every failure is one line, "PATH: what: expected ..., found ...": what
// the OS says (permission denied, is a directory), not a zip, truncated, a
// record's CRC-32, a declared size larger than the file or than what its
// storage needs, a storage shorter than its tensor, strides or an offset
// outside the storage, a dtype other than float32 and bool, a bool byte
// other than 0 and 1, an opcode or global outside torch.save's pickles, a
// pickle without STOP. A dict that holds state_dicts, read without a key,
// is refused in a line that names the keys holding them and the form that
// selects one (PATH:KEY). torch.save(model) is refused in a line that says
// to save model.state_dict().
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
// The most elements of all a file's tensors together (1 GiB of float32):
// each is made whole, even a view that repeats its storage's elements.
#define PTH_MAX_ELEMENTS ((int64_t)1 << 28)

// Reads path into out (tensors from the pool, keys malloc'd): with key
// NULL the file's object is the state_dict; else the object is a dict and
// its entry `key` holds the state_dict (e.g. "model_state_dict"). 1 on
// success; else 0, one line in err, and nothing made (out empty).
int pth_load_select(const char *path, const char *key, PthStateDict *out, char *err, size_t len);
// pth_load_select(path, NULL, ...).
int pth_load(const char *path, PthStateDict *out, char *err, size_t len);
// Writes sd as torch 1.13's torch.save writes an OrderedDict of contiguous
// float32 tensors (one storage per tensor, records aligned to 64 bytes, the
// archive named after the file's base name), to a temporary file beside
// path renamed into place once complete. 1 on success; else 0, one line in
// err, path untouched and no temporary left (out of memory: die_oom, exit 3).
int pth_save(const char *path, const PthStateDict *sd, char *err, size_t len);
// Frees the keys and arrays, and gives back the tensors pth_load made.
void pth_state_dict_free(PthStateDict *sd);

// The same, ending the program with one line on failure (die, exit 1).
PthStateDict pth_read(const char *path);
void pth_write(const char *path, const PthStateDict *sd);

#endif
