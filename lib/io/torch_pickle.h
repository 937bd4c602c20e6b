// torch_pickle.h: the pickle of a state_dict (the `data.pkl` record of a
// torch.save archive), read and written without running anything.
//
// The reader is not an unpickler: it knows the opcodes of pickle protocol 2
// that torch.save(model.state_dict()) emits (PROTO, GLOBAL, MARK, TUPLE*,
// EMPTY_TUPLE, EMPTY_DICT, SETITEM(S), BINUNICODE, BININT*, LONG1, NONE,
// NEWTRUE/NEWFALSE, BINPUT/LONG_BINPUT, BINGET/LONG_BINGET, BINPERSID,
// REDUCE, BUILD, STOP) and three kinds of global: `collections.OrderedDict`,
// `torch._utils._rebuild_tensor_v2` and torch's storage types
// (`torch.FloatStorage`, ... : named, never made). REDUCE is understood only
// as OrderedDict() and _rebuild_tensor_v2(storage, offset, size, stride,
// requires_grad, OrderedDict()); BUILD only as an OrderedDict's `_metadata`
// (read and ignored). Any other opcode or global is refused in one line
// naming it; nothing is imported, called or looked up by name.
#ifndef LITATTN_TORCH_PICKLE_H
#define LITATTN_TORCH_PICKLE_H

#include <stddef.h>
#include <stdint.h>

// The most axes a pickled tensor may have (the caller may accept fewer).
#define TORCH_PICKLE_MAX_DIMS 8
// The longest state_dict key and storage key read.
#define TORCH_PICKLE_NAME_MAX 1024

// One storage, as its persistent id names it: ('storage', torch.<Type>Storage,
// key, location, numel). Its bytes are the archive's record data/<key>.
typedef struct {
    char *key;           // digits, as torch writes them
    char type[32];       // "FloatStorage", "HalfStorage", ...
    char *location;      // "cpu", "cuda:0", ...: where it was, ignored
    int64_t numel;       // elements
} PickleStorage;

// One entry of the state_dict: key -> _rebuild_tensor_v2(storage, ...).
typedef struct {
    char *key;
    int storage;         // index into PickleStateDict.storages
    int64_t offset;      // storage_offset, in elements
    int ndim;
    int64_t size[TORCH_PICKLE_MAX_DIMS];
    int64_t stride[TORCH_PICKLE_MAX_DIMS];
} PickleTensor;

typedef struct {
    PickleTensor *tensors;    // in the dict's order
    int n_tensors;
    PickleStorage *storages;  // in the order the pickle first names them
    int n_storages;
} PickleStateDict;

// Reads a state_dict's pickle from buf[0 .. len). 1 on success; else 0 with
// one line in err ("expected ..., found ..." with the byte offset), and out
// left empty. Accepts any object the subset can build only if it is a dict
// of str -> tensor (an OrderedDict, its `_metadata` ignored).
int torch_pickle_read(const unsigned char *buf, size_t len, PickleStateDict *out, char *err, size_t errlen);
void torch_pickle_free(PickleStateDict *sd);

// The pickle torch 1.13's torch.save writes for an OrderedDict (no
// `_metadata`) of n contiguous float32 tensors, tensor i in storage "i" of
// numel[i] elements at offset 0, with sizes dims[i][0 .. ndim[i]): the same
// opcodes and memo numbers as Python's pickler. Returns a malloc'd buffer and
// its length in *len, or NULL when out of memory.
unsigned char *torch_pickle_write(int n, const char *const *keys, const int *ndim, const int64_t (*dims)[TORCH_PICKLE_MAX_DIMS],
                                  size_t *len);

#endif
