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
// module's tensor of the same key; a key missing from sd, a key the module
// does not have or a value of another shape is refused in one line, as torch
// refuses it, before anything is copied.
#ifndef LITATTN_STATE_DICT_H
#define LITATTN_STATE_DICT_H

#include "causal_attention.h"
#include "tensor.h"

#define STATE_DICT_MAX 16

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
// ca.load_state_dict(sd); `what` names the module's class in a refusal.
void causal_attention_load_state_dict(CausalAttention *m, const StateDict *sd, const char *what);

// Every value copied (the keys and their order kept): what torch.load gives
// back of what torch.save wrote.
StateDict state_dict_clone(const StateDict *sd);

#endif
