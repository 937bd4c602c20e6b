// torch_pickle.c: a state_dict's pickle, read by a small stack machine that
// builds only strings, integers, tuples, dicts, storages and tensor
// descriptions (torch_pickle.h), and written as Python's pickler writes it.
#include "torch_pickle.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

// --- opcodes (pickletools' names) ---------------------------------------------------------
enum {
    OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_NONE = 'N',
    OP_BINPERSID = 'Q', OP_REDUCE = 'R', OP_BINUNICODE = 'X', OP_BUILD = 'b', OP_GLOBAL = 'c',
    OP_BINGET = 'h', OP_LONG_BINGET = 'j', OP_BINPUT = 'q', OP_LONG_BINPUT = 'r', OP_SETITEM = 's',
    OP_TUPLE = 't', OP_EMPTY_TUPLE = ')', OP_SETITEMS = 'u', OP_EMPTY_DICT = '}', OP_PROTO = 0x80,
    OP_TUPLE1 = 0x85, OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87, OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a,
};

// Every opcode of pickle protocols 0 to 5, to name the one refused.
static const char *op_name(int op) {
    switch (op) {
    case '(': return "MARK"; case '.': return "STOP"; case '0': return "POP"; case '1': return "POP_MARK";
    case '2': return "DUP"; case 'F': return "FLOAT"; case 'I': return "INT"; case 'J': return "BININT";
    case 'K': return "BININT1"; case 'L': return "LONG"; case 'M': return "BININT2"; case 'N': return "NONE";
    case 'P': return "PERSID"; case 'Q': return "BINPERSID"; case 'R': return "REDUCE"; case 'S': return "STRING";
    case 'T': return "BINSTRING"; case 'U': return "SHORT_BINSTRING"; case 'V': return "UNICODE";
    case 'X': return "BINUNICODE"; case 'a': return "APPEND"; case 'b': return "BUILD"; case 'c': return "GLOBAL";
    case 'd': return "DICT"; case '}': return "EMPTY_DICT"; case 'e': return "APPENDS"; case 'g': return "GET";
    case 'h': return "BINGET"; case 'i': return "INST"; case 'j': return "LONG_BINGET"; case 'l': return "LIST";
    case ']': return "EMPTY_LIST"; case 'o': return "OBJ"; case 'p': return "PUT"; case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT"; case 's': return "SETITEM"; case 't': return "TUPLE"; case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS"; case 'G': return "BINFLOAT"; case 0x80: return "PROTO"; case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1"; case 0x83: return "EXT2"; case 0x84: return "EXT4"; case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2"; case 0x87: return "TUPLE3"; case 0x88: return "NEWTRUE"; case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1"; case 0x8b: return "LONG4"; case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8"; case 0x8e: return "BINBYTES8"; case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS"; case 0x91: return "FROZENSET"; case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL"; case 0x94: return "MEMOIZE"; case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8"; case 0x97: return "NEXT_BUFFER"; case 0x98: return "READONLY_BUFFER";
    case 'B': return "BINBYTES"; case 'C': return "SHORT_BINBYTES";
    default: return NULL;
    }
}

// torch's storage types: named by a pickle, never made. Only FloatStorage
// is float32; the others are read as names and refused by the archive
// reader as another dtype.
static const char *const storage_types[] = {
    "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage",
    "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage",
    "QInt8Storage", "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage",
};

// The most values on the stack and entries in the memo: far more than a
// state_dict's pickle uses (a SETITEMS batch is 2000 values), few enough
// that a hostile pickle costs bounded memory.
#define MAX_STACK (1 << 20)

enum kind { K_MARK, K_NONE, K_BOOL, K_INT, K_STR, K_TUPLE, K_DICT, K_GLOBAL, K_STORAGE, K_TENSOR };
enum global { G_ORDERED_DICT, G_REBUILD_V2, G_STORAGE };

typedef struct Value Value;
struct Value {
    int kind;
    int64_t i;             // INT, BOOL; GLOBAL: enum global; STORAGE, TENSOR, DICT: an index
    const char *s;         // STR: into the pickle (not NUL-terminated); GLOBAL G_STORAGE: its type name
    uint32_t len;          // STR's bytes
    Value **items;         // TUPLE
    int n;
};

typedef struct {
    Value **keys, **vals;
    int n, cap;
} Dict;

// An open-addressing set of byte strings, by index into the caller's table:
// finding a storage's key or a repeated state_dict key in constant time, so
// that a pickle of many entries costs linear time.
typedef struct {
    int *slot;      // index + 1, 0 empty
    size_t cap;     // a power of two
    int n;
} Index;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

// The slot of (s, n) in ix: a hit (*found) or the empty slot where it goes.
// name(i, &len) gives the i-th string of the caller's table.
static size_t index_find(const Index *ix, const char *s, size_t n, const char *(*name)(void *, int, size_t *), void *ctx,
                         bool *found) {
    size_t m = ix->cap - 1, h = (size_t)hash_bytes(s, n) & m;
    for (;; h = (h + 1) & m) {
        if (!ix->slot[h]) {
            *found = false;
            return h;
        }
        size_t len;
        const char *t = name(ctx, ix->slot[h] - 1, &len);
        if (len == n && memcmp(t, s, n) == 0) {
            *found = true;
            return h;
        }
    }
}

// Adds index i (string s, n) after a miss; false when out of memory.
static bool index_add(Index *ix, int i, const char *s, size_t n, const char *(*name)(void *, int, size_t *), void *ctx) {
    if ((size_t)(ix->n + 1) * 2 > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 64;
        int *slot = mem_calloc(cap, sizeof *slot);
        if (!slot) return false;
        Index bigger = {slot, cap, 0};
        for (size_t k = 0; k < ix->cap; k++)
            if (ix->slot[k]) {
                size_t len;
                const char *t = name(ctx, ix->slot[k] - 1, &len);
                bool f;
                bigger.slot[index_find(&bigger, t, len, name, ctx, &f)] = ix->slot[k];
            }
        bigger.n = ix->n;
        free(ix->slot);
        *ix = bigger;
    }
    bool f;
    ix->slot[index_find(ix, s, n, name, ctx, &f)] = i + 1;
    ix->n++;
    return true;
}

// Every allocation of one read, freed together.
typedef struct Block {
    struct Block *next;
    max_align_t align[];
} Block;

typedef struct {
    const unsigned char *buf;
    size_t len, pos, op_pos;
    char *err;
    size_t errlen;
    Block *blocks;
    Value **stack;
    int sp, cap;
    Value **memo;
    size_t n_memo;
    Dict *dicts;
    int n_dicts, cap_dicts;
    PickleTensor *tensors;   // every tensor built, keys unset
    int n_tensors, cap_tensors;
    PickleStorage *storages;
    int n_storages, cap_storages;
    Index storage_index;   // storages by key
    bool failed;
} P;

static Value mark_value = {.kind = K_MARK};


static int fail(P *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// The message is one line whatever the pickle holds: every byte a terminal
// could act on (a newline in a key or a name) is escaped (text_escape).
static int fail(P *p, const char *fmt, ...) {
    if (p->failed) return 0;
    p->failed = true;
    char raw[2048];  // the longest message: two names of 200 bytes and the words around them
    int k = snprintf(raw, sizeof raw, "at byte %zu: ", p->op_pos);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw + k, sizeof raw - (size_t)k, fmt, ap);
    va_end(ap);
    text_escape(p->err, p->errlen, raw);
    return 0;
}

static void *alloc(P *p, size_t bytes) {
    Block *b = mem_malloc(sizeof(Block) + bytes);
    if (!b) {
        fail(p, "expected memory for the pickle's objects, found none left");
        return NULL;
    }
    b->next = p->blocks;
    p->blocks = b;
    return b->align;
}

// Grows *arr (of *cap elements of `size` bytes) to hold at least `need`.
static bool grow(P *p, void **arr, int *cap, int need, size_t size) {
    if (need <= *cap) return true;
    int c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = mem_realloc(*arr, (size_t)c * size);
    if (!q) return fail(p, "expected memory for the pickle's objects, found none left");
    *arr = q;
    *cap = c;
    return true;
}

static Value *new_value(P *p, int kind) {
    Value *v = alloc(p, sizeof *v);
    if (v) *v = (Value){.kind = kind};
    return v;
}

static bool push(P *p, Value *v) {
    if (!v) return false;
    if (p->sp >= MAX_STACK) return fail(p, "expected a stack of at most %d values, found more", MAX_STACK);
    if (!grow(p, (void **)&p->stack, &p->cap, p->sp + 1, sizeof *p->stack)) return false;
    p->stack[p->sp++] = v;
    return true;
}

// Pops a value (not a MARK); NULL with the error set on an empty stack.
static Value *pop(P *p, const char *op) {
    if (p->sp == 0 || p->stack[p->sp - 1]->kind == K_MARK) {
        fail(p, "expected a value on the stack for %s, found %s", op, p->sp ? "a MARK" : "an empty stack");
        return NULL;
    }
    return p->stack[--p->sp];
}

static Value *top(P *p, const char *op) {
    if (p->sp == 0 || p->stack[p->sp - 1]->kind == K_MARK) {
        fail(p, "expected a value on the stack for %s, found %s", op, p->sp ? "a MARK" : "an empty stack");
        return NULL;
    }
    return p->stack[p->sp - 1];
}

// The index of the topmost MARK, or -1 with the error set.
static int find_mark(P *p, const char *op) {
    for (int i = p->sp - 1; i >= 0; i--)
        if (p->stack[i]->kind == K_MARK) return i;
    fail(p, "expected a MARK on the stack for %s, found none", op);
    return -1;
}

static bool need(P *p, size_t n) {
    if (p->len - p->pos < n)
        return fail(p, "expected %zu more bytes of the opcode's argument, found the pickle's end", n - (p->len - p->pos));
    return true;
}

static uint32_t le32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static Value *make_tuple(P *p, int from) {
    Value *t = new_value(p, K_TUPLE);
    if (!t) return NULL;
    t->n = p->sp - from;
    t->items = t->n ? alloc(p, (size_t)t->n * sizeof *t->items) : NULL;
    if (t->n && !t->items) return NULL;
    for (int i = 0; i < t->n; i++) t->items[i] = p->stack[from + i];
    p->sp = from;
    return t;
}

static Value *make_int(P *p, int64_t x) {
    Value *v = new_value(p, K_INT);
    if (v) v->i = x;
    return v;
}

static bool str_is(const Value *v, const char *s) {
    return v->kind == K_STR && v->len == strlen(s) && memcmp(v->s, s, v->len) == 0;
}

static const char *kind_name(int kind) {
    static const char *const names[] = {"a MARK", "None", "a bool", "an int", "a str", "a tuple", "a dict",
                                        "a global", "a storage", "a tensor"};
    return names[kind];
}

// A NUL-terminated copy of a STR value.
static char *str_dup(P *p, const Value *v) {
    char *s = mem_malloc((size_t)v->len + 1);
    if (!s) {
        fail(p, "expected memory for the pickle's objects, found none left");
        return NULL;
    }
    memcpy(s, v->s, v->len);
    s[v->len] = '\0';
    return s;
}

// GLOBAL: "module\nname\n". Only the three kinds of a state_dict.
static Value *op_global(P *p) {
    const unsigned char *start = p->buf + p->pos, *end = p->buf + p->len;
    const unsigned char *nl1 = memchr(start, '\n', (size_t)(end - start));
    const unsigned char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(end - nl1 - 1)) : NULL;
    if (!nl2) {
        fail(p, "expected GLOBAL's \"module\\nname\\n\", found the pickle's end");
        return NULL;
    }
    int mlen = (int)(nl1 - start), nlen = (int)(nl2 - nl1 - 1);
    const char *m = (const char *)start, *n = (const char *)nl1 + 1;
    p->pos = (size_t)(nl2 + 1 - p->buf);
    Value *v = new_value(p, K_GLOBAL);
    if (!v) return NULL;
#define IS(s, l, lit) ((l) == (int)sizeof(lit) - 1 && memcmp((s), (lit), (size_t)(l)) == 0)
    if (IS(m, mlen, "collections") && IS(n, nlen, "OrderedDict")) {
        v->i = G_ORDERED_DICT;
        return v;
    }
    if (IS(m, mlen, "torch._utils") && IS(n, nlen, "_rebuild_tensor_v2")) {
        v->i = G_REBUILD_V2;
        return v;
    }
    if (IS(m, mlen, "torch"))
        for (size_t i = 0; i < sizeof storage_types / sizeof *storage_types; i++)
            if (nlen == (int)strlen(storage_types[i]) && memcmp(n, storage_types[i], (size_t)nlen) == 0) {
                v->i = G_STORAGE;
                v->s = storage_types[i];
                return v;
            }
#undef IS
    // A name is shown whole up to 200 bytes (die() escapes what a terminal would act on).
    fail(p, "expected a global of a state_dict (collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
            "torch.<type>Storage), found %.*s.%.*s: refused, nothing is imported or run",
         mlen > 200 ? 200 : mlen, m, nlen > 200 ? 200 : nlen, n);
    return NULL;
}

static const char *storage_name(void *ctx, int i, size_t *len) {
    const P *p = ctx;
    *len = strlen(p->storages[i].key);
    return p->storages[i].key;
}

static const char *dict_key_name(void *ctx, int i, size_t *len) {
    const Dict *d = ctx;
    *len = d->keys[i]->len;
    return d->keys[i]->s;
}

// BINPERSID: ('storage', torch.<Type>Storage, key, location, numel) -> a storage.
static Value *op_persid(P *p) {
    Value *pid = pop(p, "BINPERSID");
    if (!pid) return NULL;
    if (pid->kind != K_TUPLE || pid->n != 5 || !str_is(pid->items[0], "storage") || pid->items[1]->kind != K_GLOBAL ||
        pid->items[1]->i != G_STORAGE || pid->items[2]->kind != K_STR || pid->items[3]->kind != K_STR ||
        pid->items[4]->kind != K_INT) {
        fail(p, "expected a persistent id ('storage', torch.<type>Storage, key, location, numel), found %s%s",
             kind_name(pid->kind), pid->kind == K_TUPLE ? " of another form" : "");
        return NULL;
    }
    const Value *key = pid->items[2];
    if (key->len == 0 || key->len > 20) {
        fail(p, "expected a storage key of 1 to 20 digits, found one of %u bytes", key->len);
        return NULL;
    }
    for (uint32_t i = 0; i < key->len; i++)
        if (key->s[i] < '0' || key->s[i] > '9') {
            fail(p, "expected a storage key of digits, found '%.*s'", (int)key->len, key->s);
            return NULL;
        }
    int64_t numel = pid->items[4]->i;
    if (numel < 0 || numel > ((int64_t)1 << 40)) {
        fail(p, "expected a storage of 0 to 2^40 elements, found %lld", (long long)numel);
        return NULL;
    }
    const char *type = pid->items[1]->s;
    int idx = -1;
    bool found = false;
    if (p->storage_index.cap) {
        size_t h = index_find(&p->storage_index, key->s, key->len, storage_name, p, &found);
        if (found) idx = p->storage_index.slot[h] - 1;
    }
    if (idx >= 0) {
        if (strcmp(p->storages[idx].type, type) != 0 || p->storages[idx].numel != numel) {
            fail(p, "expected storage %s named again as torch.%s of %lld elements, found torch.%s of %lld",
                 p->storages[idx].key, p->storages[idx].type, (long long)p->storages[idx].numel, type, (long long)numel);
            return NULL;
        }
    } else {
        if (!grow(p, (void **)&p->storages, &p->cap_storages, p->n_storages + 1, sizeof *p->storages)) return NULL;
        PickleStorage *s = &p->storages[p->n_storages];
        *s = (PickleStorage){.numel = numel};
        snprintf(s->type, sizeof s->type, "%s", type);
        s->key = str_dup(p, key);
        s->location = s->key ? str_dup(p, pid->items[3]) : NULL;
        if (!s->key || !s->location) {
            free(s->key);
            return NULL;
        }
        idx = p->n_storages++;
        if (!index_add(&p->storage_index, idx, s->key, key->len, storage_name, p)) {
            fail(p, "expected memory for the pickle's objects, found none left");
            return NULL;
        }
    }
    Value *v = new_value(p, K_STORAGE);
    if (v) v->i = idx;
    return v;
}

// A tuple of ints, each 0 to 2^40: a size or a stride.
static bool int_tuple(P *p, const Value *t, const char *what, int *ndim, int64_t *out) {
    if (t->kind != K_TUPLE) return fail(p, "expected _rebuild_tensor_v2's %s as a tuple, found %s", what, kind_name(t->kind));
    if (t->n > TORCH_PICKLE_MAX_DIMS)
        return fail(p, "expected a %s of at most %d axes, found %d", what, TORCH_PICKLE_MAX_DIMS, t->n);
    for (int i = 0; i < t->n; i++) {
        if (t->items[i]->kind != K_INT) return fail(p, "expected a %s of ints, found %s", what, kind_name(t->items[i]->kind));
        int64_t x = t->items[i]->i;
        if (x < 0 || x > ((int64_t)1 << 40))
            return fail(p, "expected a %s of ints from 0 to 2^40, found %lld", what, (long long)x);
        out[i] = x;
    }
    *ndim = t->n;
    return true;
}

static Value *new_dict(P *p) {
    if (!grow(p, (void **)&p->dicts, &p->cap_dicts, p->n_dicts + 1, sizeof *p->dicts)) return NULL;
    p->dicts[p->n_dicts] = (Dict){0};
    Value *v = new_value(p, K_DICT);
    if (v) v->i = p->n_dicts++;
    return v;
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata]).
static Value *rebuild_tensor(P *p, const Value *args) {
    if (args->n != 6 && args->n != 7) {
        fail(p, "expected _rebuild_tensor_v2 with 6 arguments, found %d", args->n);
        return NULL;
    }
    Value *const *a = args->items;
    if (a[0]->kind != K_STORAGE) {
        fail(p, "expected _rebuild_tensor_v2's first argument to be a storage, found %s", kind_name(a[0]->kind));
        return NULL;
    }
    if (a[1]->kind != K_INT || a[1]->i < 0 || a[1]->i > ((int64_t)1 << 40)) {
        fail(p, "expected a storage offset from 0 to 2^40, found %s", a[1]->kind == K_INT ? "one outside" : kind_name(a[1]->kind));
        return NULL;
    }
    PickleTensor t = {.storage = (int)a[0]->i, .offset = a[1]->i};
    int nstride;
    if (!int_tuple(p, a[2], "size", &t.ndim, t.size) || !int_tuple(p, a[3], "stride", &nstride, t.stride)) return NULL;
    if (nstride != t.ndim) {
        fail(p, "expected a stride of as many axes as the size's %d, found %d", t.ndim, nstride);
        return NULL;
    }
    if (a[4]->kind != K_BOOL) {
        fail(p, "expected requires_grad as a bool, found %s", kind_name(a[4]->kind));
        return NULL;
    }
    if (a[5]->kind != K_DICT || p->dicts[a[5]->i].n != 0) {
        fail(p, "expected backward_hooks as an empty OrderedDict, found %s", a[5]->kind == K_DICT ? "a dict with hooks" : kind_name(a[5]->kind));
        return NULL;
    }
    if (args->n == 7 && (a[6]->kind != K_DICT || p->dicts[a[6]->i].n != 0)) {
        fail(p, "expected no tensor metadata, found %s", a[6]->kind == K_DICT ? "a dict of it" : kind_name(a[6]->kind));
        return NULL;
    }
    if (!grow(p, (void **)&p->tensors, &p->cap_tensors, p->n_tensors + 1, sizeof *p->tensors)) return NULL;
    p->tensors[p->n_tensors] = t;
    Value *v = new_value(p, K_TENSOR);
    if (v) v->i = p->n_tensors++;
    return v;
}

static Value *op_reduce(P *p) {
    Value *args = pop(p, "REDUCE");
    Value *fn = args ? pop(p, "REDUCE") : NULL;
    if (!fn) return NULL;
    if (fn->kind != K_GLOBAL) {
        fail(p, "expected REDUCE of a global, found REDUCE of %s", kind_name(fn->kind));
        return NULL;
    }
    if (args->kind != K_TUPLE) {
        fail(p, "expected REDUCE's arguments as a tuple, found %s", kind_name(args->kind));
        return NULL;
    }
    if (fn->i == G_ORDERED_DICT) {
        if (args->n != 0) {
            fail(p, "expected OrderedDict(), found OrderedDict of %d arguments", args->n);
            return NULL;
        }
        return new_dict(p);
    }
    if (fn->i == G_REBUILD_V2) return rebuild_tensor(p, args);
    fail(p, "expected REDUCE of collections.OrderedDict or torch._utils._rebuild_tensor_v2, found REDUCE of torch.%s",
         fn->s);
    return NULL;
}

static bool dict_set(P *p, Value *d, Value *k, Value *v) {
    if (d->kind != K_DICT) return fail(p, "expected SETITEM(S) on a dict, found %s", kind_name(d->kind));
    Dict *dd = &p->dicts[d->i];
    if (!grow(p, (void **)&dd->keys, &dd->cap, dd->n + 1, sizeof *dd->keys)) return false;
    int cap = dd->cap;
    void *vals = mem_realloc(dd->vals, (size_t)cap * sizeof *dd->vals);
    if (!vals) return fail(p, "expected memory for the pickle's objects, found none left");
    dd->vals = vals;
    dd->keys[dd->n] = k;
    dd->vals[dd->n++] = v;
    return true;
}

static bool memo_put(P *p, uint32_t idx) {
    if (p->sp == 0 || p->stack[p->sp - 1]->kind == K_MARK) return fail(p, "expected a value to memoize, found none");
    // Python's pickler numbers the memo from 0, one entry per PUT: an index
    // past the pickle's length could not have been written by it.
    if (idx >= p->len) return fail(p, "expected a memo index below the pickle's length %zu, found %u", p->len, idx);
    if (idx >= p->n_memo) {
        size_t n = p->n_memo ? p->n_memo : 64;
        while (n <= idx) n *= 2;
        Value **m = mem_realloc(p->memo, n * sizeof *m);
        if (!m) return fail(p, "expected memory for the pickle's objects, found none left");
        memset(m + p->n_memo, 0, (n - p->n_memo) * sizeof *m);
        p->memo = m;
        p->n_memo = n;
    }
    p->memo[idx] = p->stack[p->sp - 1];
    return true;
}

static bool memo_get(P *p, uint32_t idx) {
    if (idx >= p->n_memo || !p->memo[idx]) return fail(p, "expected a memo entry %u put before, found none", idx);
    return push(p, p->memo[idx]);
}

// One opcode; false when the pickle is refused.
static bool step(P *p, bool *stop) {
    p->op_pos = p->pos;
    int op = p->buf[p->pos++];
    switch (op) {
    case OP_PROTO:
        if (!need(p, 1)) return false;
        if (p->buf[p->pos] != 2) return fail(p, "expected pickle protocol 2 (torch.save's), found %d", p->buf[p->pos]);
        p->pos++;
        return true;
    case OP_MARK: return push(p, &mark_value);
    case OP_STOP: *stop = true; return true;
    case OP_NONE: return push(p, new_value(p, K_NONE));
    case OP_NEWTRUE:
    case OP_NEWFALSE: {
        Value *v = new_value(p, K_BOOL);
        if (v) v->i = op == OP_NEWTRUE;
        return push(p, v);
    }
    case OP_BININT1:
        if (!need(p, 1)) return false;
        p->pos += 1;
        return push(p, make_int(p, p->buf[p->pos - 1]));
    case OP_BININT2:
        if (!need(p, 2)) return false;
        p->pos += 2;
        return push(p, make_int(p, p->buf[p->pos - 2] | p->buf[p->pos - 1] << 8));
    case OP_BININT:
        if (!need(p, 4)) return false;
        p->pos += 4;
        return push(p, make_int(p, (int32_t)le32(p->buf + p->pos - 4)));
    case OP_LONG1: {
        if (!need(p, 1)) return false;
        int n = p->buf[p->pos++];
        if (n > 8) return fail(p, "expected LONG1 of at most 8 bytes, found %d", n);
        if (!need(p, (size_t)n)) return false;
        uint64_t u = 0;
        for (int i = 0; i < n; i++) u |= (uint64_t)p->buf[p->pos + i] << (8 * i);
        if (n > 0 && n < 8 && (p->buf[p->pos + n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n);  // sign-extend
        p->pos += (size_t)n;
        return push(p, make_int(p, (int64_t)u));
    }
    case OP_BINUNICODE: {
        if (!need(p, 4)) return false;
        uint32_t n = le32(p->buf + p->pos);
        p->pos += 4;
        if (!need(p, n)) return false;
        Value *v = new_value(p, K_STR);
        if (!v) return false;
        v->s = (const char *)p->buf + p->pos;
        v->len = n;
        p->pos += n;
        return push(p, v);
    }
    case OP_EMPTY_TUPLE: return push(p, make_tuple(p, p->sp));
    case OP_TUPLE1:
    case OP_TUPLE2:
    case OP_TUPLE3: {
        int n = op - OP_TUPLE1 + 1;
        for (int i = 1; i <= n; i++)
            if (p->sp - i < 0 || p->stack[p->sp - i]->kind == K_MARK)
                return fail(p, "expected %d values on the stack for %s, found fewer", n, op_name(op));
        return push(p, make_tuple(p, p->sp - n));
    }
    case OP_TUPLE: {
        int m = find_mark(p, "TUPLE");
        if (m < 0) return false;
        Value *t = make_tuple(p, m + 1);
        if (!t) return false;
        p->sp = m;
        return push(p, t);
    }
    case OP_EMPTY_DICT: return push(p, new_dict(p));
    case OP_SETITEM: {
        Value *v = pop(p, "SETITEM");
        Value *k = v ? pop(p, "SETITEM") : NULL;
        Value *d = k ? top(p, "SETITEM") : NULL;
        return d && dict_set(p, d, k, v);
    }
    case OP_SETITEMS: {
        int m = find_mark(p, "SETITEMS");
        if (m < 0) return false;
        if ((p->sp - m - 1) % 2) return fail(p, "expected SETITEMS of key, value pairs, found an odd count %d", p->sp - m - 1);
        if (m == 0) return fail(p, "expected a dict below SETITEMS' MARK, found an empty stack");
        Value *d = p->stack[m - 1];
        for (int i = m + 1; i < p->sp; i += 2)
            if (!dict_set(p, d, p->stack[i], p->stack[i + 1])) return false;
        p->sp = m;
        return true;
    }
    case OP_GLOBAL: return push(p, op_global(p));
    case OP_BINPERSID: return push(p, op_persid(p));
    case OP_REDUCE: return push(p, op_reduce(p));
    case OP_BUILD: {
        Value *state = pop(p, "BUILD");
        Value *obj = state ? top(p, "BUILD") : NULL;
        if (!obj) return false;
        if (obj->kind != K_DICT || state->kind != K_DICT)
            return fail(p, "expected BUILD of an OrderedDict with its _metadata, found BUILD of %s with %s",
                        kind_name(obj->kind), kind_name(state->kind));
        return true;  // the _metadata (module versions) is not needed: ignored
    }
    case OP_BINPUT:
        if (!need(p, 1)) return false;
        return memo_put(p, p->buf[p->pos++]);
    case OP_LONG_BINPUT:
        if (!need(p, 4)) return false;
        p->pos += 4;
        return memo_put(p, le32(p->buf + p->pos - 4));
    case OP_BINGET:
        if (!need(p, 1)) return false;
        return memo_get(p, p->buf[p->pos++]);
    case OP_LONG_BINGET:
        if (!need(p, 4)) return false;
        p->pos += 4;
        return memo_get(p, le32(p->buf + p->pos - 4));
    default: {
        const char *name = op_name(op);
        if (name) return fail(p, "expected an opcode of a state_dict's pickle, found %s (0x%02x): refused", name, op);
        return fail(p, "expected a pickle opcode, found the byte 0x%02x", op);
    }
    }
}

static void free_parts(P *p) {
    while (p->blocks) {
        Block *b = p->blocks;
        p->blocks = b->next;
        free(b);
    }
    for (int i = 0; i < p->n_dicts; i++) {
        free(p->dicts[i].keys);
        free(p->dicts[i].vals);
    }
    free(p->dicts);
    free(p->stack);
    free(p->memo);
    free(p->tensors);
    free(p->storage_index.slot);
}

void torch_pickle_free(PickleStateDict *sd) {
    for (int i = 0; i < sd->n_tensors; i++) free(sd->tensors[i].key);
    for (int i = 0; i < sd->n_storages; i++) {
        free(sd->storages[i].key);
        free(sd->storages[i].location);
    }
    free(sd->tensors);
    free(sd->storages);
    *sd = (PickleStateDict){0};
}

int torch_pickle_read(const unsigned char *buf, size_t len, PickleStateDict *out, char *err, size_t errlen) {
    *out = (PickleStateDict){0};
    P p = {.buf = buf, .len = len, .err = err, .errlen = errlen};
    bool stop = false, ok = true;
    while (ok && !stop) {
        if (p.pos >= p.len) {
            p.op_pos = p.pos;
            ok = fail(&p, "expected STOP, found the pickle's end");
            break;
        }
        ok = step(&p, &stop);
    }
    Value *result = NULL;
    if (ok) {
        if (p.sp != 1 || p.stack[0]->kind == K_MARK)
            ok = fail(&p, "expected one object on the stack at STOP, found %d values", p.sp);
        else
            result = p.stack[0];
    }
    if (ok && result->kind != K_DICT) ok = fail(&p, "expected a state_dict (a dict of tensors), found %s", kind_name(result->kind));
    PickleStateDict sd = {.storages = p.storages, .n_storages = p.n_storages};
    p.storages = NULL;
    Index keys = {0};
    if (ok) {
        Dict *d = &p.dicts[result->i];
        sd.tensors = mem_calloc((size_t)d->n + 1, sizeof *sd.tensors);
        if (!sd.tensors) ok = fail(&p, "expected memory for the state_dict, found none left");
        for (int i = 0; ok && i < d->n; i++) {
            Value *k = d->keys[i], *v = d->vals[i];
            if (k->kind != K_STR) {
                ok = fail(&p, "expected a state_dict's keys to be str, found %s", kind_name(k->kind));
                break;
            }
            if (v->kind != K_TENSOR) {
                ok = fail(&p, "expected the value of '%.*s' to be a tensor, found %s", (int)(k->len > 200 ? 200 : k->len),
                          k->s, kind_name(v->kind));
                break;
            }
            if (k->len > TORCH_PICKLE_NAME_MAX || memchr(k->s, '\0', k->len)) {
                ok = fail(&p, "expected keys of at most %d bytes and no NUL, found one of %u bytes", TORCH_PICKLE_NAME_MAX, k->len);
                break;
            }
            bool twice = false;
            if (keys.cap) index_find(&keys, k->s, k->len, dict_key_name, d, &twice);
            if (twice) {
                ok = fail(&p, "expected each key once, found '%.*s' twice", (int)(k->len > 200 ? 200 : k->len), k->s);
                break;
            }
            if (!index_add(&keys, i, k->s, k->len, dict_key_name, d)) {
                ok = fail(&p, "expected memory for the state_dict, found none left");
                break;
            }
            sd.tensors[i] = p.tensors[v->i];
            sd.tensors[i].key = str_dup(&p, k);
            if (!sd.tensors[i].key) ok = false;
            sd.n_tensors = i + 1;
        }
    }
    free(keys.slot);
    free_parts(&p);
    if (!ok) {
        torch_pickle_free(&sd);
        return 0;
    }
    *out = sd;
    return 1;
}

// --- writing --------------------------------------------------------------------------

typedef struct {
    unsigned char *b;
    size_t n, cap;
    bool oom;
    uint32_t memo;  // the next memo index
} W;

static void put_bytes(W *w, const void *s, size_t n) {
    if (w->oom) return;
    if (w->n + n > w->cap) {
        size_t c = w->cap ? w->cap : 1024;
        while (c < w->n + n) c *= 2;
        unsigned char *q = mem_realloc(w->b, c);
        if (!q) {
            w->oom = true;
            return;
        }
        w->b = q;
        w->cap = c;
    }
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

static void put_op(W *w, int op) {
    unsigned char c = (unsigned char)op;
    put_bytes(w, &c, 1);
}

static void put_u32(W *w, uint32_t x) {
    unsigned char b[4] = {(unsigned char)x, (unsigned char)(x >> 8), (unsigned char)(x >> 16), (unsigned char)(x >> 24)};
    put_bytes(w, b, 4);
}

// BINPUT/LONG_BINPUT of the next memo index, returned.
static uint32_t memoize(W *w) {
    uint32_t i = w->memo++;
    if (i < 256) {
        put_op(w, OP_BINPUT);
        put_op(w, (int)i);
    } else {
        put_op(w, OP_LONG_BINPUT);
        put_u32(w, i);
    }
    return i;
}

static void get(W *w, uint32_t i) {
    if (i < 256) {
        put_op(w, OP_BINGET);
        put_op(w, (int)i);
    } else {
        put_op(w, OP_LONG_BINGET);
        put_u32(w, i);
    }
}

// Python's save_long for protocol 2.
static void put_int(W *w, int64_t x) {
    if (x >= 0 && x <= 0xff) {
        put_op(w, OP_BININT1);
        put_op(w, (int)x);
    } else if (x >= 0 && x <= 0xffff) {
        put_op(w, OP_BININT2);
        put_op(w, (int)(x & 0xff));
        put_op(w, (int)(x >> 8));
    } else if (x >= INT32_MIN && x <= INT32_MAX) {
        put_op(w, OP_BININT);
        put_u32(w, (uint32_t)x);
    } else {
        // The fewest little-endian two's-complement bytes that keep the sign.
        unsigned char b[8];
        uint64_t u = (uint64_t)x;
        int n = 8;
        for (int i = 0; i < 8; i++) b[i] = (unsigned char)(u >> (8 * i));
        while (n > 1 && ((b[n - 1] == 0 && !(b[n - 2] & 0x80)) || (b[n - 1] == 0xff && (b[n - 2] & 0x80)))) n--;
        put_op(w, OP_LONG1);
        put_op(w, n);
        put_bytes(w, b, (size_t)n);
    }
}

static uint32_t put_str(W *w, const char *s) {
    size_t n = strlen(s);
    put_op(w, OP_BINUNICODE);
    put_u32(w, (uint32_t)n);
    put_bytes(w, s, n);
    return memoize(w);
}

// A tuple of ints as Python saves it: EMPTY_TUPLE (not memoized), TUPLE1-3,
// or MARK ... TUPLE; then memoized.
static void put_int_tuple(W *w, int n, const int64_t *x) {
    if (n == 0) {
        put_op(w, OP_EMPTY_TUPLE);
        return;
    }
    if (n > 3) put_op(w, OP_MARK);
    for (int i = 0; i < n; i++) put_int(w, x[i]);
    put_op(w, n == 1 ? OP_TUPLE1 : n == 2 ? OP_TUPLE2 : n == 3 ? OP_TUPLE3 : OP_TUPLE);
    memoize(w);
}

#define UNSET UINT32_MAX

unsigned char *torch_pickle_write(int n, const char *const *keys, const int *ndim, const int64_t (*dims)[TORCH_PICKLE_MAX_DIMS],
                                  size_t *len) {
    W w = {0};
    static const char od[] = "collections\nOrderedDict\n", rebuild[] = "torch._utils\n_rebuild_tensor_v2\n",
                      floatst[] = "torch\nFloatStorage\n";
    put_op(&w, OP_PROTO);
    put_op(&w, 2);
    put_op(&w, OP_GLOBAL);
    put_bytes(&w, od, sizeof od - 1);
    uint32_t od_memo = memoize(&w);
    put_op(&w, OP_EMPTY_TUPLE);
    put_op(&w, OP_REDUCE);
    memoize(&w);
    uint32_t rebuild_memo = UNSET, storage_memo = UNSET, float_memo = UNSET, cpu_memo = UNSET;
    // The pickler's batches: 1000 items each, a batch of one as SETITEM.
    for (int b = 0; b < n; b += 1000) {
        int end = n - b > 1000 ? b + 1000 : n;
        if (end - b > 1) put_op(&w, OP_MARK);
        for (int i = b; i < end; i++) {
            put_str(&w, keys[i]);
            if (rebuild_memo == UNSET) {
                put_op(&w, OP_GLOBAL);
                put_bytes(&w, rebuild, sizeof rebuild - 1);
                rebuild_memo = memoize(&w);
            } else {
                get(&w, rebuild_memo);
            }
            put_op(&w, OP_MARK);  // the arguments
            put_op(&w, OP_MARK);  // the persistent id
            if (storage_memo == UNSET) storage_memo = put_str(&w, "storage");
            else get(&w, storage_memo);
            if (float_memo == UNSET) {
                put_op(&w, OP_GLOBAL);
                put_bytes(&w, floatst, sizeof floatst - 1);
                float_memo = memoize(&w);
            } else {
                get(&w, float_memo);
            }
            char key[24];
            snprintf(key, sizeof key, "%d", i);
            put_str(&w, key);
            if (cpu_memo == UNSET) cpu_memo = put_str(&w, "cpu");
            else get(&w, cpu_memo);
            // torch's contiguous strides count an empty axis as 1.
            int64_t count = 1, step = 1, stride[TORCH_PICKLE_MAX_DIMS];
            for (int d = ndim[i] - 1; d >= 0; d--) {
                stride[d] = step;
                step *= dims[i][d] > 1 ? dims[i][d] : 1;
                count *= dims[i][d];
            }
            put_int(&w, count);
            put_op(&w, OP_TUPLE);
            memoize(&w);
            put_op(&w, OP_BINPERSID);
            put_int(&w, 0);
            put_int_tuple(&w, ndim[i], dims[i]);
            put_int_tuple(&w, ndim[i], stride);
            put_op(&w, OP_NEWFALSE);
            get(&w, od_memo);  // backward_hooks: OrderedDict()
            put_op(&w, OP_EMPTY_TUPLE);
            put_op(&w, OP_REDUCE);
            memoize(&w);
            put_op(&w, OP_TUPLE);
            memoize(&w);
            put_op(&w, OP_REDUCE);
            memoize(&w);
        }
        put_op(&w, end - b > 1 ? OP_SETITEMS : OP_SETITEM);
    }
    put_op(&w, OP_STOP);
    if (w.oom) {
        free(w.b);
        return NULL;
    }
    *len = w.n;
    return w.b;
}
