// state_dict.h: a module's state_dict(), and load_state_dict().
//
// torch's Module.state_dict() is an OrderedDict from each parameter's and
// buffer's key ("mask", "W_query.weight") to its tensor: a module's own
// parameters, then its own buffers, then each submodule's, in the order they
// were assigned. A plain tensor attribute is not in it. Its values are the
// module's own tensors (detached, the same memory): StateDict holds the
// module's Tensors, not copies.
//
// load_state_dict(sd) (strict, as torch's default) copies each value into the
// module's tensor of the same key; keys missing from sd, keys the module
// does not have and values of another shape are refused in one line, as torch
// refuses them, before anything is copied. That check is written once here
// (state_dict_check_strict), for the modules below and for --weights'
// files (runtime/weights.h), with the state_dict() order of keys it needs
// (state_dict_order).
#ifndef LITATTN_STATE_DICT_H
#define LITATTN_STATE_DICT_H

#include <stdbool.h>
#include <stddef.h>

#include "causal_attention.h"
#include "tensor.h"

#define STATE_DICT_MAX 16
// Enough for torch's message about a module's every key (400 at most) and shape.
#define STATE_DICT_ERR_LEN 8192

// One key of a state_dict and its value's shape.
typedef struct {
    const char *key;  // "W_query.weight", "heads.0.mask"
    Size size;
} StateKey;

// A module's keys in its state_dict() order (torch's _save_to_state_dict): a
// module's own parameters, then its own buffers, then each submodule's keys
// likewise, the submodules in the order they first appear. made[0, n_params)
// are the parameters in the order the module made them, made[n_params,
// n_all) its buffers; order gets the n_all keys (the same pointers).
void state_dict_order(const StateKey *made, int n_params, int n_all, StateKey *order);

// load_state_dict(strict=True)'s check of a module of class `cls`, whose keys
// are own[0, n_own) in its state_dict() order, against given[0, n_given):
// true when they are the same keys at the same shapes. Else false, and msg
// (len bytes, STATE_DICT_ERR_LEN enough) gets torch's error in one line, its
// parts in torch's order: "Error(s) in loading state_dict for CLS: Missing
// key(s) in state_dict: "a", "b". Unexpected key(s) in state_dict: "c".
// size mismatch for d: copying a param with shape torch.Size([2, 3]) from
// checkpoint, the shape in current model is torch.Size([3, 2])." The shapes
// are compared axis by axis, never by element count: a transposed (3, 2)
// where (2, 3) is expected is refused. When every key given carries the
// prefix of a wrapped model, and none of the module's does ("module.":
// nn.DataParallel; "_orig_mod.": torch.compile), msg names the prefix and
// how to strip it instead of listing every key as missing and unexpected.
bool state_dict_check_strict(const char *cls, const StateKey *own, int n_own, const StateKey *given, int n_given,
                             char *msg, size_t len);

typedef struct {
    char key[64];
    Tensor value;
} StateDictEntry;

typedef struct {
    int n;
    StateDictEntry entry[STATE_DICT_MAX];
} StateDict;

// ca.state_dict(): "mask" first when it is a buffer, then W_query.weight
// (W_query.bias), W_key.*, W_value.*.
StateDict causal_attention_state_dict(const CausalAttention *m);
// ca.load_state_dict(sd); `what` names the module's class in a refusal
// (state_dict_check_strict's line, exit 1).
void causal_attention_load_state_dict(CausalAttention *m, const StateDict *sd, const char *what);

// Every value copied (the keys and their order kept): what torch.load gives
// back of what torch.save wrote.
StateDict state_dict_clone(const StateDict *sd);

#endif
