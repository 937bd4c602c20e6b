// torch_pickle.h: the pickle of torch.save (the `data.pkl` record of its
// archive), read and written without running anything.
//
// The reader is not an unpickler. It builds only what a state_dict and a
// training checkpoint hold: None, bools, ints, floats, strs, bytes, tuples,
// lists (their items dropped), dicts, storages and tensors. It reads the
// opcodes torch.save writes at pickle protocols 1 to 5 (FRAME, MEMOIZE,
// STACK_GLOBAL, SHORT_BINUNICODE, BINUNICODE8, protocol 1's INT bools among
// them). Its globals are named, never looked up or called:
// `collections.OrderedDict`, `torch._utils._rebuild_tensor_v2`,
// `torch._utils._rebuild_parameter` and torch's storage types. STACK_GLOBAL's
// module and name are strs on the stack, checked as GLOBAL's are. Any other
// opcode or global is refused in one line naming it; a global that is a
// class saved whole (torch.save(model)) says to save model.state_dict().
//
// Memory: a first pass over the opcodes sizes everything the read holds to
// what the pickle can need, at most 8 bytes per byte of pickle (two 32-bit
// words: a value, and a dict entry's third word or a dict's header), plus
// the result (one PickleTensor and its key per tensor). Work is linear but
// for memo indices no pickler writes (above the count of PUTs: a binary
// search). Out of memory stops the program (die_oom, exit 3).
#ifndef LITATTN_TORCH_PICKLE_H
#define LITATTN_TORCH_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The most axes a pickled tensor may have (the caller may accept fewer).
#define TORCH_PICKLE_MAX_DIMS 8
// The longest state_dict key and storage key read.
#define TORCH_PICKLE_NAME_MAX 1024
// The most tensors of a state_dict.
#define TORCH_PICKLE_MAX_TENSORS (1 << 16)

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
    bool parameter;      // a Parameter (torch._utils._rebuild_parameter)
    bool requires_grad;  // saved with requires_grad=True
} PickleTensor;

typedef struct {
    PickleTensor *tensors;    // in the dict's order
    int n_tensors;
    PickleStorage *storages;  // in the order the state_dict first names them
    int n_storages;
    char *holder;   // refused without a key: the first key whose entry holds a state_dict
    size_t peak;    // the most bytes the read held at once, its result aside (set on a refusal too)
} PickleStateDict;

// What a read of a pickle of len bytes holds at most while it reads (its
// peak): two 32-bit words per byte, and four words of its own.
#define TORCH_PICKLE_MAX_BYTES(len) (8 * (size_t)(len) + 16)

// Reads a state_dict from the pickle buf[0 .. len): with key NULL the
// pickled object itself, else its entry `key` (a checkpoint's
// "model_state_dict"). A state_dict is a dict of str -> tensor (an
// OrderedDict's `_metadata` ignored; a Parameter read as its tensor).
// 1 on success; else 0 with one line in err ("at byte N: expected ...,
// found ...") and out empty but for `holder` and `peak`.
int torch_pickle_read(const unsigned char *buf, size_t len, const char *key, PickleStateDict *out, char *err,
                      size_t errlen);
void torch_pickle_free(PickleStateDict *sd);

// The pickle torch 1.13's torch.save writes for an OrderedDict (no
// `_metadata`) of n contiguous float32 tensors, tensor i in storage "i" of
// numel[i] elements at offset 0, with sizes dims[i][0 .. ndim[i]): the same
// opcodes and memo numbers as Python's pickler. Returns a malloc'd buffer and
// its length in *len (out of memory: die_oom, exit 3).
unsigned char *torch_pickle_write(int n, const char *const *keys, const int *ndim, const int64_t (*dims)[TORCH_PICKLE_MAX_DIMS],
                                  size_t *len);

#endif
