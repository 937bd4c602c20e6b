// torch_pickle.c: the pickle of torch.save, read by a small stack machine
// over one arena of 32-bit handles (torch_pickle.h), and a state_dict's
// pickle written as Python's pickler writes it.
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
    OP_MARK = '(', OP_STOP = '.', OP_POP = '0', OP_INT = 'I', OP_BININT = 'J', OP_BININT1 = 'K', OP_LONG = 'L',
    OP_BININT2 = 'M', OP_NONE = 'N', OP_BINPERSID = 'Q', OP_REDUCE = 'R', OP_BINUNICODE = 'X', OP_APPEND = 'a',
    OP_BUILD = 'b', OP_GLOBAL = 'c', OP_APPENDS = 'e', OP_BINGET = 'h', OP_LONG_BINGET = 'j', OP_EMPTY_LIST = ']',
    OP_BINPUT = 'q', OP_LONG_BINPUT = 'r', OP_SETITEM = 's', OP_TUPLE = 't', OP_EMPTY_TUPLE = ')', OP_SETITEMS = 'u',
    OP_BINFLOAT = 'G', OP_EMPTY_DICT = '}', OP_BINBYTES = 'B', OP_SHORT_BINBYTES = 'C', OP_PROTO = 0x80,
    OP_NEWOBJ = 0x81, OP_TUPLE1 = 0x85, OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87, OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89,
    OP_LONG1 = 0x8a, OP_SHORT_BINUNICODE = 0x8c, OP_BINUNICODE8 = 0x8d, OP_BINBYTES8 = 0x8e, OP_STACK_GLOBAL = 0x93,
    OP_MEMOIZE = 0x94, OP_FRAME = 0x95,
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
#define N_STORAGE_TYPES (int)(sizeof storage_types / sizeof *storage_types)

// --- values ---------------------------------------------------------------------------------
// A value is a 32-bit handle: its kind in the top 4 bits, 28 bits of payload.
// A literal (int, float, str, bytes) is the position of its opcode in the
// pickle, decoded when it is used; a container is an index into the arena.
typedef uint32_t H;
enum kind {
    K_MARK,     // payload: 1 + the stack index of the MARK below it (0: none); 0 is also "no value" in the memo
    K_CONST,    // C_NONE, C_FALSE, C_TRUE, C_EMPTY_TUPLE
    K_INT, K_FLOAT, K_STR, K_BYTES,  // the opcode's position
    K_GLOBAL,   // G_*, or G_STORAGE + the storage type's index
    K_TUPLE1, K_TUPLE2, K_TUPLE3,    // the arena index of 1, 2, 3 items
    K_TUPLEN,   // the arena index of [count, items...]
    K_LIST,     // no payload: a list's items are never needed, only dropped
    K_DICT,     // the arena index of its header word
    K_STORAGE,  // its persistent id, a K_TUPLEN of 5 items
    K_TENSOR,   // _rebuild_tensor_v2's arguments, a K_TUPLEN of 6 or 7
    K_PARAM,    // _rebuild_parameter's arguments, a K_TUPLE3 (tensor, requires_grad, hooks)
};
enum { C_NONE, C_FALSE, C_TRUE, C_EMPTY_TUPLE };
enum { G_ORDERED_DICT, G_REBUILD_V2, G_REBUILD_PARAMETER, G_STORAGE };
#define PAYLOAD_BITS 28
#define MAKE(k, x) ((H)(k) << PAYLOAD_BITS | (H)(x))
#define KIND(h) ((int)((h) >> PAYLOAD_BITS))
#define PAY(h) ((h) & ((1u << PAYLOAD_BITS) - 1))

// A dict is a header word, then entries of 3 words [previous entry, key, value]
// chained backwards from the header's last one. Only entries whose key is a
// str are kept (a state_dict's and a checkpoint's keys are str); any other
// key is counted in the header's flags and its entry dropped.
#define LAST_BITS 28
#define LAST(hdr) ((hdr) & ((1u << LAST_BITS) - 1))
#define F_NOT_TENSOR (1u << 28)  // a value that is not a tensor
#define F_KEY_KIND(hdr) ((hdr) >> 29)  // the first key that is not a str: 0 none, else key_kinds[]
static const char *const key_kinds[] = {"", "None, a bool or ()", "an int", "a float", "bytes", "a tuple", "a dict",
                                        "another object"};

static const char *kind_name(int kind) {
    static const char *const names[] = {"a MARK", "None", "an int", "a float", "a str", "bytes", "a global",
                                        "a tuple", "a tuple", "a tuple", "a tuple", "a list", "a dict",
                                        "a storage", "a tensor", "a Parameter"};
    return names[kind];
}

static const char *value_name(H v) {
    if (KIND(v) == K_CONST) return PAY(v) == C_NONE ? "None" : PAY(v) == C_EMPTY_TUPLE ? "a tuple" : "a bool";
    return kind_name(KIND(v));
}

// --- the reader's state ---------------------------------------------------------------------
// The arena holds the stack (from its top down) and the containers (from
// word 1 up); the memo has a dense part (indices below the pickle's count of
// PUTs, as every pickler numbers them) and a sorted table for any index
// above. All three are sized by a first pass over the opcodes, to what the
// pickle can need at most (budget_of): at most 2 words per byte of pickle.
typedef struct {
    const unsigned char *buf;
    size_t len, pos, op_pos;
    size_t end;          // where the first pass stopped: the STOP, or its error
    char scan_err[512];  // the first pass's error at `end` ("" when it found STOP)
    char *err;
    size_t errlen;
    bool failed;
    H *arena;
    size_t cap, top, sp;  // words; the next free container word; the stack's depth
    size_t mark;          // 1 + the stack index of the topmost MARK (0: none)
    H *memo;              // dense: memo[i] for i < n_dense
    size_t n_dense, n_memo;  // n_memo: distinct indices put (MEMOIZE's next index)
    uint32_t *far_idx;    // sorted, distinct
    H *far_val;
    size_t n_far;
    size_t bytes, peak;   // what this read holds, and the most it held
} P;

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

// Every allocation of a read is counted, so that a test can hold the reader
// to its bound (PickleStateDict.peak). Out of memory stops the program
// (die_oom, exit 3): the sizes are bounded by the pickle's.
static void *take(P *p, size_t n, size_t size, const char *what) {
    void *q = xcalloc(n, size, what);
    p->bytes += n * size;
    if (p->bytes > p->peak) p->peak = p->bytes;
    return q;
}

// The result's own memory (PickleStateDict), bounded by its count of
// tensors, is not the read's: it is not counted in peak.
static void *take_result(size_t n, size_t size, const char *what) { return xcalloc(n, size, what); }

static void give(P *p, void *q, size_t n, size_t size) {
    if (!q) return;
    free(q);
    p->bytes -= n * size;
}

static uint32_t le32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t le64(const unsigned char *b) { return le32(b) | (uint64_t)le32(b + 4) << 32; }

// --- the first pass: each opcode's length and what it may need ------------------------------------
// The words an opcode may add to the arena: a value pushed is one word, and a
// str or a GET one more (the third word of a dict entry whose key it
// becomes); EMPTY_DICT's header; a tuple's net growth (its items leave the
// stack, its count or its handle takes one word). The memo takes a word per
// PUT, and two more per PUT whose index is above the count of PUTs.
typedef struct {
    size_t words, puts, explicit, far;
} Budget;

static const unsigned char *line_end(const P *p, size_t from) {
    return from <= p->len ? memchr(p->buf + from, '\n', p->len - from) : NULL;
}

// The length of the opcode at pos with its argument, or 0 (scan_err set)
// when it runs past the pickle's end or is no opcode.
static size_t op_length(P *p, size_t pos) {
    const unsigned char *b = p->buf + pos;
    size_t left = p->len - pos - 1, arg;
    int op = b[0];
    switch (op) {
    case OP_PROTO: case OP_BININT1: case OP_BINGET: case OP_BINPUT: case 0x82: arg = 1; break;
    case OP_BININT2: case 0x83: arg = 2; break;
    case OP_BININT: case OP_LONG_BINGET: case OP_LONG_BINPUT: case 0x84: arg = 4; break;
    case OP_BINFLOAT: case OP_FRAME: arg = 8; break;
    case OP_SHORT_BINUNICODE: case OP_SHORT_BINBYTES: case OP_LONG1: case 'U':
        arg = left >= 1 ? 1 + (size_t)b[1] : 1;
        break;
    case OP_BINUNICODE: case OP_BINBYTES: case 'T': case 0x8b:
        arg = left >= 4 ? 4 + (size_t)le32(b + 1) : 4;
        break;
    case OP_BINUNICODE8: case OP_BINBYTES8: case 0x96: {
        uint64_t n = left >= 8 ? le64(b + 1) : 0;
        arg = n > left ? SIZE_MAX : 8 + (size_t)n;
        break;
    }
    case OP_INT: case OP_LONG: case 'F': case 'S': case 'V': case 'P': case 'g': case 'p': {
        const unsigned char *nl = line_end(p, pos + 1);
        arg = nl ? (size_t)(nl - b) : SIZE_MAX;
        break;
    }
    case OP_GLOBAL: case 'i': {
        const unsigned char *nl = line_end(p, pos + 1);
        nl = nl ? line_end(p, (size_t)(nl - p->buf) + 1) : NULL;
        arg = nl ? (size_t)(nl - b) : SIZE_MAX;
        break;
    }
    default:
        if (!op_name(op)) {
            snprintf(p->scan_err, sizeof p->scan_err, "expected a pickle opcode, found the byte 0x%02x", op);
            return 0;
        }
        arg = 0;
    }
    if (arg > left) {
        snprintf(p->scan_err, sizeof p->scan_err, "expected %s's argument, found the pickle's end", op_name(op));
        return 0;
    }
    return 1 + arg;
}

static size_t op_cost(int op) {
    switch (op) {
    case OP_SHORT_BINUNICODE: case OP_BINUNICODE: case OP_BINUNICODE8: case OP_BINGET: case OP_LONG_BINGET:
    case OP_EMPTY_DICT:
        return 2;
    case OP_MARK: case OP_NONE: case OP_NEWTRUE: case OP_NEWFALSE: case OP_EMPTY_TUPLE: case OP_EMPTY_LIST:
    case OP_BININT: case OP_BININT1: case OP_BININT2: case OP_LONG1: case OP_INT: case OP_LONG: case OP_BINFLOAT:
    case OP_SHORT_BINBYTES: case OP_BINBYTES: case OP_BINBYTES8: case OP_GLOBAL:
    case OP_TUPLE1: case OP_TUPLE2: case OP_TUPLE3: case OP_TUPLE:
        return 1;
    default:
        return 0;  // pops at least as much as it makes, touches only the memo, or is refused when reached
    }
}

// Walks the opcodes up to STOP: sets p->end and the budget. With far != NULL
// (the second walk, the count of PUTs known), collects into it the indices
// at or above that count.
static void scan(P *p, Budget *b, uint32_t *far) {
    size_t pos = 0;
    p->scan_err[0] = '\0';
    while (pos < p->len) {
        int op = p->buf[pos];
        size_t n = op_length(p, pos);
        if (!n) break;
        if (op == OP_STOP) {
            p->end = pos + 1;
            return;
        }
        if (op == OP_FRAME && le64(p->buf + pos + 1) > p->len - pos - n) {
            snprintf(p->scan_err, sizeof p->scan_err, "expected a FRAME of at most the %zu bytes left, found one of %llu",
                     p->len - pos - n, (unsigned long long)le64(p->buf + pos + 1));
            break;
        }
        if (!far) {
            b->words += op_cost(op);
            b->puts += op == OP_MEMOIZE || op == OP_BINPUT || op == OP_LONG_BINPUT;
            b->explicit += op == OP_BINPUT || op == OP_LONG_BINPUT;
        } else if (op == OP_BINPUT || op == OP_LONG_BINPUT) {
            uint32_t idx = op == OP_BINPUT ? p->buf[pos + 1] : le32(p->buf + pos + 1);
            if (idx >= b->puts) far[b->far++] = idx;
        }
        pos += n;
    }
    if (!p->scan_err[0]) snprintf(p->scan_err, sizeof p->scan_err, "expected STOP, found the pickle's end");
    p->end = pos;
}

// --- the stack ------------------------------------------------------------------------------
// The stack's k-th value is arena[cap - 1 - k]; containers grow from word 1.
#define STACK(p, k) ((p)->arena[(p)->cap - 1 - (k)])

static bool push(P *p, H v) {
    if (p->top + p->sp >= p->cap) die_internal("the pickle's arena of %zu words is full: its budget is wrong", p->cap);
    STACK(p, p->sp) = v;
    p->sp++;
    return true;
}

// Arena words for a container, from the bottom.
static size_t grab(P *p, size_t words) {
    if (p->top + words + p->sp > p->cap)
        die_internal("the pickle's arena of %zu words is full: its budget is wrong", p->cap);
    size_t at = p->top;
    p->top += words;
    return at;
}

// The values above the topmost MARK: how many (or -1 with the error set).
static long since_mark(P *p, const char *op) {
    if (!p->mark) return fail(p, "expected a MARK on the stack for %s, found none", op), -1;
    return (long)(p->sp - p->mark);
}

static void pop_mark(P *p) {
    p->sp = p->mark - 1;
    p->mark = PAY(STACK(p, p->sp));
}

// The n values on top (none a MARK): false with the error set.
static bool have(P *p, size_t n, const char *op) {
    size_t above = p->mark ? p->sp - p->mark : p->sp;
    if (above >= n) return true;
    return fail(p, "expected %zu value%s on the stack for %s, found %s", n, n == 1 ? "" : "s", op,
                above ? "fewer" : p->sp ? "a MARK" : "an empty stack");
}

static H pop(P *p) { return STACK(p, --p->sp); }

// --- literals -------------------------------------------------------------------------------
typedef struct {
    const char *s;
    size_t len;
} Str;

static Str str_of(const P *p, H v) {
    const unsigned char *b = p->buf + PAY(v);
    switch (b[0]) {
    case OP_SHORT_BINUNICODE: case OP_SHORT_BINBYTES: return (Str){(const char *)b + 2, b[1]};
    case OP_BINUNICODE: case OP_BINBYTES: return (Str){(const char *)b + 5, le32(b + 1)};
    default: return (Str){(const char *)b + 9, (size_t)le64(b + 1)};
    }
}

static bool str_is(const P *p, H v, const char *s) {
    if (KIND(v) != K_STR) return false;
    Str t = str_of(p, v);
    return t.len == strlen(s) && memcmp(t.s, s, t.len) == 0;
}

// A decimal int of INT or LONG's text ("I-12\n", "L12L\n"): false if it is not one of at most 18 digits.
static bool text_int(const unsigned char *b, size_t n, int64_t *x) {
    size_t i = 0;
    bool neg = false;
    if (n && b[n - 1] == 'L') n--;  // LONG's suffix
    if (i < n && (b[i] == '-' || b[i] == '+')) neg = b[i++] == '-';
    if (i == n || n - i > 18) return false;
    int64_t v = 0;
    for (; i < n; i++) {
        if (b[i] < '0' || b[i] > '9') return false;
        v = v * 10 + (b[i] - '0');
    }
    *x = neg ? -v : v;
    return true;
}

// The value of an int (its opcode checked when it was pushed).
static int64_t int_of(const P *p, H v) {
    const unsigned char *b = p->buf + PAY(v);
    switch (b[0]) {
    case OP_BININT1: return b[1];
    case OP_BININT2: return b[1] | b[2] << 8;
    case OP_BININT: return (int32_t)le32(b + 1);
    case OP_LONG1: {
        int n = b[1];
        uint64_t u = 0;
        for (int i = 0; i < n; i++) u |= (uint64_t)b[2 + i] << (8 * i);
        if (n > 0 && n < 8 && (b[1 + n] & 0x80)) u |= ~(uint64_t)0 << (8 * n);  // sign-extend
        return (int64_t)u;
    }
    default: {  // INT, LONG
        const unsigned char *nl = memchr(b + 1, '\n', p->len - PAY(v) - 1);
        int64_t x = 0;
        text_int(b + 1, (size_t)(nl - b - 1), &x);
        return x;
    }
    }
}

static bool push_literal(P *p, int op) {
    const unsigned char *b = p->buf + p->op_pos;
    switch (op) {
    case OP_LONG1:
        if (b[1] > 8) return fail(p, "expected LONG1 of at most 8 bytes, found %d", b[1]);
        break;
    case OP_INT: case OP_LONG: {
        const unsigned char *nl = memchr(b + 1, '\n', p->len - p->op_pos - 1);
        size_t n = (size_t)(nl - b - 1);
        if (op == OP_INT && n == 2 && b[1] == '0' && (b[2] == '0' || b[2] == '1'))  // protocol 1's bools
            return push(p, MAKE(K_CONST, b[2] == '1' ? C_TRUE : C_FALSE));
        int64_t x;
        if (!text_int(b + 1, n, &x))
            return fail(p, "expected %s's decimal digits (at most 18), found %zu bytes of another form", op_name(op), n);
        break;
    }
    default: break;
    }
    int kind = op == OP_BINFLOAT ? K_FLOAT
             : op == OP_SHORT_BINUNICODE || op == OP_BINUNICODE || op == OP_BINUNICODE8 ? K_STR
             : op == OP_SHORT_BINBYTES || op == OP_BINBYTES || op == OP_BINBYTES8 ? K_BYTES : K_INT;
    return push(p, MAKE(kind, p->op_pos));
}

// --- globals --------------------------------------------------------------------------------
// Only a state_dict's and a checkpoint's: the name is compared, never looked
// up. A refused one is named whole up to 200 bytes; one that is a class
// saved whole (its object made by NEWOBJ, or any global of __main__, or
// copyreg's protocol-1 reconstructor) means torch.save(model).
static H global(P *p, const char *m, size_t mlen, const char *n, size_t nlen, size_t after) {
#define IS(s, l, lit) ((l) == sizeof(lit) - 1 && memcmp((s), (lit), (l)) == 0)
    if (IS(m, mlen, "collections") && IS(n, nlen, "OrderedDict")) return MAKE(K_GLOBAL, G_ORDERED_DICT);
    if (IS(m, mlen, "torch._utils") && IS(n, nlen, "_rebuild_tensor_v2")) return MAKE(K_GLOBAL, G_REBUILD_V2);
    if (IS(m, mlen, "torch._utils") && IS(n, nlen, "_rebuild_parameter")) return MAKE(K_GLOBAL, G_REBUILD_PARAMETER);
    if (IS(m, mlen, "torch"))
        for (int i = 0; i < N_STORAGE_TYPES; i++)
            if (nlen == strlen(storage_types[i]) && memcmp(n, storage_types[i], nlen) == 0)
                return MAKE(K_GLOBAL, G_STORAGE + i);
    // What comes next: a memo PUT, then () NEWOBJ makes an object of the class.
    size_t q = after;
    while (q < p->end && (p->buf[q] == OP_MEMOIZE || p->buf[q] == OP_BINPUT || p->buf[q] == OP_LONG_BINPUT))
        q += p->buf[q] == OP_MEMOIZE ? 1 : p->buf[q] == OP_BINPUT ? 2 : 5;
    bool whole = (q + 1 < p->end && p->buf[q] == OP_EMPTY_TUPLE && p->buf[q + 1] == OP_NEWOBJ) ||
                 IS(m, mlen, "__main__") || (IS(m, mlen, "copyreg") && IS(n, nlen, "_reconstructor")) ||
                 (IS(m, mlen, "copy_reg") && IS(n, nlen, "_reconstructor"));
#undef IS
    fail(p, "expected a global of a state_dict (collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
            "torch._utils._rebuild_parameter, torch.<type>Storage), found %.*s.%.*s: refused, nothing is imported or run%s",
         mlen > 200 ? 200 : (int)mlen, m, nlen > 200 ? 200 : (int)nlen, n,
         whole ? "; an object saved whole (torch.save(model)) is not read: save its weights with "
                 "torch.save(model.state_dict(), PATH)" : "");
    return 0;
}

static bool op_global(P *p) {
    const unsigned char *m = p->buf + p->op_pos + 1;
    const unsigned char *nl1 = memchr(m, '\n', p->len - p->op_pos - 1);
    const unsigned char *n = nl1 + 1, *nl2 = memchr(n, '\n', (size_t)(p->buf + p->len - n));
    H g = global(p, (const char *)m, (size_t)(nl1 - m), (const char *)n, (size_t)(nl2 - n), p->pos);
    return g && push(p, g);
}

// STACK_GLOBAL: the module and the name are strs on the stack (from the memo
// too), checked exactly as GLOBAL's.
static bool op_stack_global(P *p) {
    if (!have(p, 2, "STACK_GLOBAL")) return false;
    H name = pop(p), module = pop(p);
    if (KIND(name) != K_STR || KIND(module) != K_STR)
        return fail(p, "expected STACK_GLOBAL of two strs, found %s and %s", value_name(module), value_name(name));
    Str m = str_of(p, module), n = str_of(p, name);
    H g = global(p, m.s, m.len, n.s, n.len, p->pos);
    return g && push(p, g);
}

// --- containers -----------------------------------------------------------------------------
// A tuple's items: how many, and where.
static size_t items(const P *p, H t, const H **out) {
    switch (KIND(t)) {
    case K_TUPLE1: case K_TUPLE2: case K_TUPLE3:
        *out = p->arena + PAY(t);
        return (size_t)(KIND(t) - K_TUPLE1 + 1);
    case K_TUPLEN: case K_STORAGE: case K_TENSOR:
        *out = p->arena + PAY(t) + 1;
        return p->arena[PAY(t)];
    case K_PARAM:
        *out = p->arena + PAY(t);
        return 3;
    default:
        *out = NULL;
        return 0;
    }
}

static bool is_tuple(H v) {
    return (KIND(v) >= K_TUPLE1 && KIND(v) <= K_TUPLEN) || v == MAKE(K_CONST, C_EMPTY_TUPLE);
}

// Reverses the stack's top n values where they lie, so that the first
// pushed is at the lowest address: arena[cap - sp + i] is the i-th.
static void reverse_top(P *p, size_t n) {
    H *a = p->arena + (p->cap - p->sp);
    for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        H t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

// The stack's top n values (and the MARK below them, if marked) into a new
// tuple, pushed. The items are moved down to the containers' end, which
// the budget keeps free: no word is needed twice.
static bool make_tuple(P *p, size_t n, bool marked) {
    if (n == 0) {
        if (marked) pop_mark(p);
        return push(p, MAKE(K_CONST, C_EMPTY_TUPLE));
    }
    bool counted = n > 3;
    size_t src = p->cap - p->sp, at = p->top;
    reverse_top(p, n);
    p->sp -= n;
    if (marked) pop_mark(p);
    grab(p, n + counted);
    memmove(p->arena + at + counted, p->arena + src, n * sizeof *p->arena);
    if (counted) p->arena[at] = (H)n;
    return push(p, MAKE(counted ? K_TUPLEN : K_TUPLE1 + (int)n - 1, at));
}

static H new_dict(P *p) {
    size_t at = grab(p, 1);
    p->arena[at] = 0;
    return MAKE(K_DICT, at);
}

static int key_kind(H k) {
    switch (KIND(k)) {
    case K_CONST: return k == MAKE(K_CONST, C_EMPTY_TUPLE) ? 5 : 1;
    case K_INT: return 2;
    case K_FLOAT: return 3;
    case K_BYTES: return 4;
    case K_TUPLE1: case K_TUPLE2: case K_TUPLE3: case K_TUPLEN: return 5;
    case K_DICT: return 6;
    default: return 7;
    }
}

static bool dict_set(P *p, H d, H k, H v) {
    if (KIND(d) != K_DICT) return fail(p, "expected SETITEM(S) on a dict, found %s", value_name(d));
    H *hdr = &p->arena[PAY(d)];
    if (KIND(k) != K_STR) {
        if (!F_KEY_KIND(*hdr)) *hdr |= (H)key_kind(k) << 29;
        return true;
    }
    size_t at = grab(p, 3);
    p->arena[at] = LAST(*hdr);
    p->arena[at + 1] = k;
    p->arena[at + 2] = v;
    *hdr = (*hdr & ~((1u << LAST_BITS) - 1)) | (H)at;
    if (KIND(v) != K_TENSOR && KIND(v) != K_PARAM) *hdr |= F_NOT_TENSOR;
    return true;
}

static bool dict_empty(const P *p, H d) { return KIND(d) == K_DICT && p->arena[PAY(d)] == 0; }

// --- torch's reductions ---------------------------------------------------------------------
// BINPERSID: ('storage', torch.<Type>Storage, key, location, numel) -> a storage.
static bool op_persid(P *p) {
    if (!have(p, 1, "BINPERSID")) return false;
    H pid = pop(p);
    const H *a;
    size_t n = items(p, pid, &a);
    if (KIND(pid) != K_TUPLEN || n != 5 || !str_is(p, a[0], "storage") || KIND(a[1]) != K_GLOBAL ||
        PAY(a[1]) < G_STORAGE || KIND(a[2]) != K_STR || KIND(a[3]) != K_STR || KIND(a[4]) != K_INT)
        return fail(p, "expected a persistent id ('storage', torch.<type>Storage, key, location, numel), found %s%s",
                    value_name(pid), is_tuple(pid) ? " of another form" : "");
    Str key = str_of(p, a[2]);
    if (key.len == 0 || key.len > 20) return fail(p, "expected a storage key of 1 to 20 digits, found one of %zu bytes", key.len);
    for (size_t i = 0; i < key.len; i++)
        if (key.s[i] < '0' || key.s[i] > '9')
            return fail(p, "expected a storage key of digits, found '%.*s'", (int)key.len, key.s);
    if (str_of(p, a[3]).len > 64) return fail(p, "expected a storage location of at most 64 bytes, found %zu", str_of(p, a[3]).len);
    int64_t numel = int_of(p, a[4]);
    if (numel < 0 || numel > ((int64_t)1 << 40)) return fail(p, "expected a storage of 0 to 2^40 elements, found %lld", (long long)numel);
    return push(p, MAKE(K_STORAGE, PAY(pid)));
}

// A tuple of ints, each 0 to 2^40: a size or a stride.
static bool int_tuple(P *p, H t, const char *what) {
    if (!is_tuple(t)) return fail(p, "expected _rebuild_tensor_v2's %s as a tuple, found %s", what, value_name(t));
    const H *a;
    size_t n = items(p, t, &a);
    if (n > TORCH_PICKLE_MAX_DIMS) return fail(p, "expected a %s of at most %d axes, found %zu", what, TORCH_PICKLE_MAX_DIMS, n);
    for (size_t i = 0; i < n; i++) {
        if (KIND(a[i]) != K_INT) return fail(p, "expected a %s of ints, found %s", what, value_name(a[i]));
        int64_t x = int_of(p, a[i]);
        if (x < 0 || x > ((int64_t)1 << 40)) return fail(p, "expected a %s of ints from 0 to 2^40, found %lld", what, (long long)x);
    }
    return true;
}

static bool is_bool(H v) { return v == MAKE(K_CONST, C_TRUE) || v == MAKE(K_CONST, C_FALSE); }

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata]).
static bool rebuild_tensor(P *p, H args) {
    const H *a;
    size_t n = items(p, args, &a);
    if (n != 6 && n != 7) return fail(p, "expected _rebuild_tensor_v2 with 6 arguments, found %zu", n);
    if (KIND(a[0]) != K_STORAGE)
        return fail(p, "expected _rebuild_tensor_v2's first argument to be a storage, found %s", value_name(a[0]));
    if (KIND(a[1]) != K_INT || int_of(p, a[1]) < 0 || int_of(p, a[1]) > ((int64_t)1 << 40))
        return fail(p, "expected a storage offset from 0 to 2^40, found %s", KIND(a[1]) == K_INT ? "one outside" : value_name(a[1]));
    if (!int_tuple(p, a[2], "size") || !int_tuple(p, a[3], "stride")) return false;
    const H *s;
    size_t ns = items(p, a[2], &s), nt = items(p, a[3], &s);
    if (ns != nt) return fail(p, "expected a stride of as many axes as the size's %zu, found %zu", ns, nt);
    if (!is_bool(a[4])) return fail(p, "expected requires_grad as a bool, found %s", value_name(a[4]));
    if (!dict_empty(p, a[5]))
        return fail(p, "expected backward_hooks as an empty OrderedDict, found %s", KIND(a[5]) == K_DICT ? "a dict with hooks" : value_name(a[5]));
    if (n == 7 && !dict_empty(p, a[6]))
        return fail(p, "expected no tensor metadata, found %s", KIND(a[6]) == K_DICT ? "a dict of it" : value_name(a[6]));
    return push(p, MAKE(K_TENSOR, PAY(args)));
}

// _rebuild_parameter(data, requires_grad, backward_hooks): a Parameter, as
// dict(model.named_parameters()) saves it; read as its tensor.
static bool rebuild_parameter(P *p, H args) {
    const H *a;
    if (KIND(args) != K_TUPLE3) return fail(p, "expected _rebuild_parameter with 3 arguments, found %zu", items(p, args, &a));
    items(p, args, &a);
    if (KIND(a[0]) != K_TENSOR) return fail(p, "expected a Parameter's data to be a tensor, found %s", value_name(a[0]));
    if (!is_bool(a[1])) return fail(p, "expected a Parameter's requires_grad as a bool, found %s", value_name(a[1]));
    if (!dict_empty(p, a[2]))
        return fail(p, "expected a Parameter's backward_hooks as an empty OrderedDict, found %s",
                    KIND(a[2]) == K_DICT ? "a dict with hooks" : value_name(a[2]));
    return push(p, MAKE(K_PARAM, PAY(args)));
}

static bool op_reduce(P *p) {
    if (!have(p, 2, "REDUCE")) return false;
    H args = pop(p), fn = pop(p);
    if (KIND(fn) != K_GLOBAL) return fail(p, "expected REDUCE of a global, found REDUCE of %s", value_name(fn));
    if (!is_tuple(args)) return fail(p, "expected REDUCE's arguments as a tuple, found %s", value_name(args));
    switch (PAY(fn)) {
    case G_ORDERED_DICT:
        if (args != MAKE(K_CONST, C_EMPTY_TUPLE)) return fail(p, "expected OrderedDict(), found OrderedDict of arguments");
        return push(p, new_dict(p));
    case G_REBUILD_V2: return rebuild_tensor(p, args);
    case G_REBUILD_PARAMETER: return rebuild_parameter(p, args);
    default:
        return fail(p, "expected REDUCE of collections.OrderedDict, torch._utils._rebuild_tensor_v2 or "
                       "torch._utils._rebuild_parameter, found REDUCE of torch.%s", storage_types[PAY(fn) - G_STORAGE]);
    }
}

// --- the memo ---------------------------------------------------------------------------------
static H *memo_slot(P *p, uint32_t idx) {
    if (idx < p->n_dense) return &p->memo[idx];
    size_t lo = 0, hi = p->n_far;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->far_idx[mid] < idx) lo = mid + 1;
        else hi = mid;
    }
    return lo < p->n_far && p->far_idx[lo] == idx ? &p->far_val[lo] : NULL;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool memo_put(P *p, uint32_t idx) {
    if (!have(p, 1, "a memo PUT")) return false;
    H *slot = memo_slot(p, idx);
    if (!slot) die_internal("memo index %u was not found by the first pass", idx);
    if (!*slot) p->n_memo++;
    *slot = STACK(p, p->sp - 1);
    return true;
}

static bool memo_get(P *p, uint32_t idx) {
    H *slot = memo_slot(p, idx);
    if (!slot || !*slot) return fail(p, "expected a memo entry %u put before, found none", idx);
    return push(p, *slot);
}

// --- one opcode -------------------------------------------------------------------------------
static bool step(P *p, bool *stop) {
    p->op_pos = p->pos;
    if (p->pos >= p->end) return fail(p, "%s", p->scan_err);
    int op = p->buf[p->pos];
    p->pos += op_length(p, p->pos);
    const unsigned char *arg = p->buf + p->op_pos + 1;
    switch (op) {
    case OP_PROTO:
        if (arg[0] > 5) return fail(p, "expected pickle protocol 1 to 5 (what torch.save writes), found %d", arg[0]);
        return true;
    case OP_FRAME: return true;  // the whole pickle is in memory: frames need nothing
    case OP_STOP: *stop = true; return true;
    case OP_MARK: {
        bool ok = push(p, MAKE(K_MARK, p->mark));
        p->mark = p->sp;
        return ok;
    }
    case OP_NONE: return push(p, MAKE(K_CONST, C_NONE));
    case OP_NEWTRUE: return push(p, MAKE(K_CONST, C_TRUE));
    case OP_NEWFALSE: return push(p, MAKE(K_CONST, C_FALSE));
    case OP_EMPTY_TUPLE: return push(p, MAKE(K_CONST, C_EMPTY_TUPLE));
    case OP_EMPTY_LIST: return push(p, MAKE(K_LIST, 0));
    case OP_EMPTY_DICT: return push(p, new_dict(p));
    case OP_BININT1: case OP_BININT2: case OP_BININT: case OP_LONG1: case OP_INT: case OP_LONG: case OP_BINFLOAT:
    case OP_SHORT_BINUNICODE: case OP_BINUNICODE: case OP_BINUNICODE8: case OP_SHORT_BINBYTES: case OP_BINBYTES:
    case OP_BINBYTES8:
        return push_literal(p, op);
    case OP_TUPLE1: case OP_TUPLE2: case OP_TUPLE3: {
        size_t n = (size_t)(op - OP_TUPLE1 + 1);
        return have(p, n, op_name(op)) && make_tuple(p, n, false);
    }
    case OP_TUPLE: {
        long n = since_mark(p, "TUPLE");
        return n >= 0 && make_tuple(p, (size_t)n, true);
    }
    case OP_SETITEM: {
        if (!have(p, 3, "SETITEM")) return false;
        H v = pop(p), k = pop(p);
        return dict_set(p, STACK(p, p->sp - 1), k, v);
    }
    case OP_SETITEMS: {
        long n = since_mark(p, "SETITEMS");
        if (n < 0) return false;
        if (n % 2) return fail(p, "expected SETITEMS of key, value pairs, found an odd count %ld", n);
        size_t from = p->mark;
        if (from < 2 || KIND(STACK(p, from - 2)) == K_MARK)
            return fail(p, "expected a dict below SETITEMS' MARK, found %s", from < 2 ? "an empty stack" : "a MARK");
        H d = STACK(p, from - 2);
        if (KIND(d) != K_DICT) return fail(p, "expected SETITEM(S) on a dict, found %s", value_name(d));
        // An entry takes three words for the two its pair frees, the third
        // paid by its key (a str). The pairs are moved down first, as many
        // words above the containers' end as there are str keys, so that
        // no entry is written over a pair not yet read.
        size_t strs = 0;
        for (size_t i = from; i < p->sp; i += 2) strs += KIND(STACK(p, i)) == K_STR;
        size_t src = p->cap - p->sp, dst = p->top + strs;
        reverse_top(p, (size_t)n);
        p->sp -= (size_t)n;
        pop_mark(p);
        if (dst + (size_t)n + p->sp > p->cap) die_internal("the pickle's arena of %zu words is full: its budget is wrong", p->cap);
        memmove(p->arena + dst, p->arena + src, (size_t)n * sizeof *p->arena);
        for (size_t k = 0; k < (size_t)n; k += 2) dict_set(p, d, p->arena[dst + k], p->arena[dst + k + 1]);
        return true;
    }
    case OP_APPEND: case OP_APPENDS: {
        size_t n = 1;
        if (op == OP_APPENDS) {
            long m = since_mark(p, "APPENDS");
            if (m < 0) return false;
            n = (size_t)m;
            pop_mark(p);
        } else if (!have(p, 2, "APPEND")) {
            return false;
        } else {
            p->sp--;
        }
        (void)n;
        if (!p->sp || KIND(STACK(p, p->sp - 1)) != K_LIST)
            return fail(p, "expected %s on a list, found %s", op_name(op), p->sp ? value_name(STACK(p, p->sp - 1)) : "an empty stack");
        return true;  // a list's items are never a state_dict's: dropped
    }
    case OP_GLOBAL: return op_global(p);
    case OP_STACK_GLOBAL: return op_stack_global(p);
    case OP_BINPERSID: return op_persid(p);
    case OP_REDUCE: return op_reduce(p);
    case OP_BUILD: {
        if (!have(p, 2, "BUILD")) return false;
        H state = pop(p), obj = STACK(p, p->sp - 1);
        if (KIND(obj) != K_DICT || KIND(state) != K_DICT)
            return fail(p, "expected BUILD of an OrderedDict with its _metadata, found BUILD of %s with %s", value_name(obj),
                        value_name(state));
        return true;  // the _metadata (module versions) is not needed: ignored
    }
    case OP_BINPUT: return memo_put(p, arg[0]);
    case OP_LONG_BINPUT: return memo_put(p, le32(arg));
    case OP_MEMOIZE: return memo_put(p, (uint32_t)p->n_memo);
    case OP_BINGET: return memo_get(p, arg[0]);
    case OP_LONG_BINGET: return memo_get(p, le32(arg));
    default:
        return fail(p, "expected an opcode of torch.save's pickles, found %s (0x%02x): refused", op_name(op), op);
    }
}

// --- the result -------------------------------------------------------------------------------
// An open-addressing set of byte strings, by index into the caller's table:
// a repeated key or a storage named again found in constant time.
typedef struct {
    int *slot;      // index + 1, 0 empty
    size_t cap;     // a power of two, at least twice the strings
} Index;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

// The slot of (s, n): a hit (*found) or the empty slot where it goes.
static size_t index_find(const Index *ix, const char *s, size_t n, const char *(*name)(const void *, int, size_t *),
                         const void *ctx, bool *found) {
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

static const char *tensor_key(const void *ctx, int i, size_t *len) {
    const PickleTensor *t = ctx;
    *len = strlen(t[i].key);
    return t[i].key;
}

static const char *storage_key(const void *ctx, int i, size_t *len) {
    const PickleStorage *s = ctx;
    *len = strlen(s[i].key);
    return s[i].key;
}

static char *copy_str(P *p, Str s) {
    (void)p;
    char *c = take_result(s.len + 1, 1, "the state_dict's keys");
    memcpy(c, s.s, s.len);
    return c;
}

// The entries of dict d, in the order they were set: n of them at (*out)[0 .. n).
static size_t entries(P *p, H d, uint32_t **out) {
    size_t n = 0;
    for (size_t e = LAST(p->arena[PAY(d)]); e; e = p->arena[e]) n++;
    *out = take(p, n + 1, sizeof **out, "the state_dict's entries");
    size_t i = n;
    for (size_t e = LAST(p->arena[PAY(d)]); e; e = p->arena[e]) (*out)[--i] = e;
    return n;
}

static bool is_state_dict(const P *p, H v) {
    return KIND(v) == K_DICT && p->arena[PAY(v)] && !(p->arena[PAY(v)] & F_NOT_TENSOR) && !F_KEY_KIND(p->arena[PAY(v)]);
}

// A key shown in a message: at most 200 bytes.
#define SHOWN(x) (int)((x).len > 200 ? 200 : (x).len), (x).s

// The dict the caller asked for: the top object (key NULL), or its entry
// `key`. 0 with the error set when there is none.
static H select_dict(P *p, H top, const char *key, char **holder) {
    if (KIND(top) != K_DICT)
        return fail(p, "expected %s, found %s", key ? "a dict with an entry holding a state_dict (a training checkpoint)"
                                                    : "a state_dict (a dict of tensors)", value_name(top)), 0;
    uint32_t *e;
    size_t n = entries(p, top, &e);
    H found = 0;
    size_t holders = 0, first_holder = 0;
    char list[600] = "";
    for (size_t i = 0; i < n; i++) {
        H k = p->arena[e[i] + 1], v = p->arena[e[i] + 2];
        Str ks = str_of(p, k);
        if (key && ks.len == strlen(key) && memcmp(ks.s, key, ks.len) == 0) {
            if (found) {
                fail(p, "expected the entry '%s' once, found it twice", key);
                give(p, e, n + 1, sizeof *e);
                return 0;
            }
            found = v;
        }
        if (is_state_dict(p, v)) {
            if (!holders++) first_holder = e[i];
            size_t k0 = strlen(list);
            if (k0 < 400) snprintf(list + k0, sizeof list - k0, "%s'%.*s'", k0 ? ", " : "", SHOWN(ks));
            else if (k0 < sizeof list - 8) snprintf(list + k0, sizeof list - k0, ", ...");
        }
    }
    give(p, e, n + 1, sizeof *e);
    if (holders && (!key || !found)) {
        Str hs = str_of(p, p->arena[first_holder + 1]);
        *holder = copy_str(p, hs);
    }
    if (!key) {
        H hdr = p->arena[PAY(top)];
        if (holders && (hdr & F_NOT_TENSOR))
            return fail(p, "expected a state_dict (a dict of tensors), found a dict whose entr%s %s hold%s one "
                           "(a training checkpoint): select %s by its key", holders > 1 ? "ies" : "y", list,
                        holders > 1 ? "" : "s", holders > 1 ? "one" : "it"), 0;
        return top;
    }
    if (!found) {
        if (!(p->arena[PAY(top)] & F_NOT_TENSOR) && !F_KEY_KIND(p->arena[PAY(top)]))
            return fail(p, "expected a dict with an entry '%s', found a state_dict itself (a dict of tensors): "
                           "read it without a key", key), 0;
        return fail(p, "expected an entry '%s', found none%s%s", key,
                    holders ? "; the entries holding a state_dict: " : "", list), 0;
    }
    if (KIND(found) != K_DICT)
        return fail(p, "expected the entry '%s' to hold a state_dict (a dict of tensors), found %s", key, value_name(found)), 0;
    return found;
}

// The state_dict's tensors and their storages, out of the arena.
static bool collect(P *p, H d, PickleStateDict *sd) {
    H hdr = p->arena[PAY(d)];
    if (F_KEY_KIND(hdr))
        return fail(p, "expected a state_dict's keys to be str, found %s", key_kinds[F_KEY_KIND(hdr)]);
    uint32_t *e;
    size_t n = entries(p, d, &e);
    bool ok = true;
    if (n > TORCH_PICKLE_MAX_TENSORS) ok = fail(p, "expected a state_dict of at most %d tensors, found %zu", TORCH_PICKLE_MAX_TENSORS, n);
    size_t cap = 16;
    while (ok && cap < 2 * n + 2) cap *= 2;
    Index keys = {ok ? take_result(cap, sizeof(int), "the state_dict's keys") : NULL, cap};
    Index stor = {ok ? take_result(cap, sizeof(int), "the state_dict's storages") : NULL, cap};
    if (ok) {
        sd->tensors = take_result(n + 1, sizeof *sd->tensors, "the state_dict's tensors");
        sd->storages = take_result(n + 1, sizeof *sd->storages, "the state_dict's storages");
    }
    for (size_t i = 0; ok && i < n; i++) {
        Str ks = str_of(p, p->arena[e[i] + 1]);
        H v = p->arena[e[i] + 2];
        if (KIND(v) != K_TENSOR && KIND(v) != K_PARAM) {
            ok = fail(p, "expected the value of '%.*s' to be a tensor, found %s", SHOWN(ks), value_name(v));
            break;
        }
        if (ks.len > TORCH_PICKLE_NAME_MAX || memchr(ks.s, '\0', ks.len)) {
            ok = fail(p, "expected keys of at most %d bytes and no NUL, found one of %zu bytes", TORCH_PICKLE_NAME_MAX, ks.len);
            break;
        }
        PickleTensor *t = &sd->tensors[i];
        *t = (PickleTensor){.key = copy_str(p, ks)};
        sd->n_tensors = (int)i + 1;
        bool twice;
        size_t h = index_find(&keys, t->key, ks.len, tensor_key, sd->tensors, &twice);
        if (twice) {
            ok = fail(p, "expected each key once, found '%.*s' twice", SHOWN(ks));
            break;
        }
        keys.slot[h] = (int)i + 1;
        const H *a;
        if (KIND(v) == K_PARAM) {
            items(p, v, &a);
            t->parameter = true;
            t->requires_grad = a[1] == MAKE(K_CONST, C_TRUE);
            v = a[0];
        }
        items(p, v, &a);
        t->requires_grad |= a[4] == MAKE(K_CONST, C_TRUE);
        t->offset = int_of(p, a[1]);
        const H *x;
        t->ndim = (int)items(p, a[2], &x);
        for (int k = 0; k < t->ndim; k++) t->size[k] = int_of(p, x[k]);
        items(p, a[3], &x);
        for (int k = 0; k < t->ndim; k++) t->stride[k] = int_of(p, x[k]);
        // its storage: ('storage', type, key, location, numel), named once per key
        const H *pid;
        items(p, a[0], &pid);
        Str skey = str_of(p, pid[2]), loc = str_of(p, pid[3]);
        const char *type = storage_types[PAY(pid[1]) - G_STORAGE];
        int64_t numel = int_of(p, pid[4]);
        char kbuf[24];
        snprintf(kbuf, sizeof kbuf, "%.*s", (int)skey.len, skey.s);
        bool seen;
        h = index_find(&stor, kbuf, skey.len, storage_key, sd->storages, &seen);
        if (seen) {
            const PickleStorage *s = &sd->storages[stor.slot[h] - 1];
            if (strcmp(s->type, type) != 0 || s->numel != numel) {
                ok = fail(p, "expected storage %s named again as torch.%s of %lld elements, found torch.%s of %lld", s->key,
                          s->type, (long long)s->numel, type, (long long)numel);
                break;
            }
            t->storage = stor.slot[h] - 1;
        } else {
            PickleStorage *s = &sd->storages[sd->n_storages];
            *s = (PickleStorage){.key = copy_str(p, skey), .location = copy_str(p, loc), .numel = numel};
            snprintf(s->type, sizeof s->type, "%s", type);
            t->storage = sd->n_storages++;
            stor.slot[h] = sd->n_storages;
        }
    }
    free(keys.slot);
    free(stor.slot);
    give(p, e, n + 1, sizeof *e);
    return ok;
}

void torch_pickle_free(PickleStateDict *sd) {
    for (int i = 0; i < sd->n_tensors; i++) free(sd->tensors[i].key);
    for (int i = 0; i < sd->n_storages; i++) {
        free(sd->storages[i].key);
        free(sd->storages[i].location);
    }
    free(sd->tensors);
    free(sd->storages);
    free(sd->holder);
    *sd = (PickleStateDict){0};
}

int torch_pickle_read(const unsigned char *buf, size_t len, const char *key, PickleStateDict *out, char *err, size_t errlen) {
    *out = (PickleStateDict){0};
    P p = {.buf = buf, .len = len, .err = err, .errlen = errlen};
    // The first pass: the opcodes' lengths, the arena's budget, the memo's indices.
    Budget b = {0};
    scan(&p, &b, NULL);
    if (b.words + 1 >= ((size_t)1 << PAYLOAD_BITS) || len >= ((size_t)1 << PAYLOAD_BITS))
        return fail(&p, "expected a pickle of less than %d MiB, found %zu bytes", 1 << (PAYLOAD_BITS - 20), len);
    p.n_dense = b.puts;
    p.memo = take(&p, b.puts + 1, sizeof *p.memo, "the pickle's memo");
    uint32_t *idx = NULL;
    if (b.explicit) {
        // The indices at or above the count of PUTs (no pickler writes them), sorted.
        idx = take(&p, b.explicit, sizeof *idx, "the pickle's memo");
        Budget far = {.puts = b.puts};
        scan(&p, &far, idx);
        qsort(idx, far.far, sizeof *idx, cmp_u32);
        for (size_t i = 0; i < far.far; i++)
            if (!p.n_far || idx[p.n_far - 1] != idx[i]) idx[p.n_far++] = idx[i];
        p.far_idx = idx;
        p.far_val = take(&p, p.n_far + 1, sizeof *p.far_val, "the pickle's memo");
    }
    p.cap = b.words + 1;
    p.arena = take(&p, p.cap, sizeof *p.arena, "the pickle's values");
    p.top = 1;  // word 0: "no entry"

    bool stop = false, ok = true;
    while (ok && !stop) ok = step(&p, &stop);
    H top = 0;
    if (ok) {
        if (p.sp != 1 || KIND(STACK(&p, 0)) == K_MARK)
            ok = fail(&p, "expected one object on the stack at STOP, found %zu values", p.sp);
        else
            top = STACK(&p, 0);
    }
    PickleStateDict sd = {0};
    H d = ok ? select_dict(&p, top, key, &sd.holder) : 0;
    ok = ok && d && collect(&p, d, &sd);
    size_t peak = p.peak;
    give(&p, p.arena, p.cap, sizeof *p.arena);
    give(&p, p.memo, b.puts + 1, sizeof *p.memo);
    give(&p, p.far_val, p.far_val ? p.n_far + 1 : 0, sizeof *p.far_val);
    give(&p, idx, b.explicit, sizeof *idx);
    if (!ok) {
        char *holder = sd.holder;
        sd.holder = NULL;
        torch_pickle_free(&sd);
        out->holder = holder;
        out->peak = peak;
        return 0;
    }
    sd.peak = peak;
    *out = sd;
    return 1;
}

// --- writing --------------------------------------------------------------------------

typedef struct {
    unsigned char *b;
    size_t n, cap;
    uint32_t memo;  // the next memo index
} W;

static void put_bytes(W *w, const void *s, size_t n) {
    if (w->n + n > w->cap) {
        size_t c = w->cap ? w->cap : 1024;
        while (c < w->n + n) c *= 2;
        w->b = xrealloc(w->b, c, "the state_dict's pickle");
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
    *len = w.n;
    return w.b;
}
