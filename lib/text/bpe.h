// bpe.h: GPT-2's byte-level BPE tokenizer, the same ids as tiktoken's
// "gpt2" encoding (and r50k_base, which has the same ranks and pattern).
//
// Encoding is three steps, as in tiktoken's CoreBPE:
//   1. special tokens: "<|endoftext|>" is id 50256 where allowed; the text
//      between two of them is encoded on its own (steps 2-3);
//   2. pre-tokenization: GPT-2's regex splits the text into pieces
//      (pretokenize.h);
//   3. byte pair merging: a piece that is a token as a whole is that token;
//      otherwise its bytes start as one part each and, repeatedly, the two
//      adjacent parts whose concatenation has the lowest rank (the leftmost
//      of equal ranks) are merged, until no concatenation is a token. Each
//      part left is a token, its rank its id.
//
//   char err[256];
//   Bpe *bpe = bpe_load("fixtures/gpt2/gpt2.tiktoken", err, sizeof err);
//   if (!bpe) { fprintf(stderr, "%s\n", err); ... }
//   BpeIds ids = {0};
//   size_t where;
//   BpeStatus st = bpe_encode(bpe, text, len, BPE_SPECIAL_ALLOW, &ids, &where);
//   if (st != BPE_OK) { fprintf(stderr, "%s at byte %zu\n", bpe_status_str(st), where); ... }
//   ... ids.ids[0 .. ids.len) ...
//   bpe_ids_free(&ids);
//   bpe_free(bpe);
//
// The library never prints, never exits and keeps no global state: a loaded
// Bpe is read-only, so one Bpe serves any number of threads at once (each
// with its own output buffers). Every failure is a BpeStatus.
//
// Limits: a text of at most BPE_MAX_TEXT_BYTES (256 MiB) per call. Memory:
// the ids (4 bytes each, at most one per byte of text), plus 28 bytes per
// byte of the longest piece of 100 bytes or more that is not a token (the
// merge's heap; shorter pieces merge in about 800 bytes on the stack). The
// vocabulary takes about 1.3 MB.
#ifndef LITATTN_BPE_H
#define LITATTN_BPE_H

#include <stddef.h>
#include <stdint.h>

#define BPE_GPT2_N_RANKS 50256u   // mergeable tokens, ids 0..50255
#define BPE_GPT2_N_VOCAB 50257u   // with <|endoftext|>
#define BPE_GPT2_ENDOFTEXT 50256u // the id of "<|endoftext|>"
#define BPE_ENDOFTEXT_TEXT "<|endoftext|>"
#define BPE_MAX_TEXT_BYTES ((size_t)1 << 28)  // 256 MiB

typedef enum {
    BPE_OK = 0,
    BPE_E_NOMEM,     // an allocation failed
    BPE_E_TOO_LONG,  // the text is longer than BPE_MAX_TEXT_BYTES
    BPE_E_UTF8,      // the text is not UTF-8; where = the first ill-formed byte (Python's .start)
    BPE_E_SPECIAL,   // "<|endoftext|>" in the text but not allowed; where = its first byte
    BPE_E_BAD_ID,    // decode: an id outside 0..50256; where = its index in the ids
} BpeStatus;

// What bpe_encode does with "<|endoftext|>" in the text.
typedef enum {
    BPE_SPECIAL_DISALLOW = 0,  // fail with BPE_E_SPECIAL: tiktoken's encode(text), which raises ValueError
    BPE_SPECIAL_ALLOW = 1,     // id 50256: encode(text, allowed_special={"<|endoftext|>"}) or "all"
    BPE_SPECIAL_AS_TEXT = 2,   // plain text, 7 ordinary tokens: encode_ordinary(text),
                               // or encode(text, disallowed_special=())
} BpeSpecial;

// The vocabulary: token i's bytes are bytes[off[i] .. off[i + 1]), and a
// hash table maps bytes back to ranks. Made by bpe_load, then read-only.
typedef struct {
    uint32_t n_ranks;          // BPE_GPT2_N_RANKS
    uint32_t max_token_len;    // the longest token, in bytes (128 for GPT-2)
    uint32_t *off;             // n_ranks + 1 offsets into bytes
    unsigned char *bytes;      // all tokens' bytes, in rank order
    uint32_t *slots;           // open addressing, linear probing: rank + 1, or 0 for empty
    uint32_t slot_mask;        // number of slots - 1 (a power of two)
    uint32_t byte_rank[256];   // the rank of each single byte
} Bpe;

// A growable array of token ids.
typedef struct {
    uint32_t *ids;
    size_t len;
    size_t cap;
} BpeIds;

// A growable byte string (decode's output; not NUL-terminated).
typedef struct {
    unsigned char *bytes;
    size_t len;
    size_t cap;
} BpeBytes;

// Reads a vocabulary in tiktoken's format: one line per mergeable token,
// "<base64 of its bytes> <rank>\n", the ranks exactly 0..50255 in any order
// (fixtures/gpt2/gpt2.tiktoken). NULL on failure, with a one-line reason in
// err (if errlen > 0); when an allocation failed, err reads exactly
// bpe_status_str(BPE_E_NOMEM), so that a caller can tell the system's fault
// from the file's.
Bpe *bpe_load(const char *path, char *err, size_t errlen);
// The same from the file's bytes in memory (data need not be NUL-terminated).
Bpe *bpe_load_mem(const void *data, size_t len, char *err, size_t errlen);
void bpe_free(Bpe *bpe);

// Appends the ids of text[0..len) to out. On failure out->len is as it was
// and *where (if where is not NULL) tells the byte offset of the fault (see
// BpeStatus). The checks come in this order: length, UTF-8, special tokens.
BpeStatus bpe_encode(const Bpe *bpe, const char *text, size_t len, BpeSpecial special,
                     BpeIds *out, size_t *where);

// Appends the bytes of ids[0..n) to out ("<|endoftext|>" for 50256): the
// bytes of tiktoken's decode_bytes. They are UTF-8 when the ids came from
// bpe_encode, not always otherwise (check with utf8_check). On failure
// out->len is as it was and *where is the index of the bad id.
BpeStatus bpe_decode(const Bpe *bpe, const uint32_t *ids, size_t n, BpeBytes *out, size_t *where);

// The rank of the byte string s[0..len), or -1 if it is no token.
long bpe_rank(const Bpe *bpe, const void *s, size_t len);
// The bytes of token id (special included) and their count, or NULL.
const unsigned char *bpe_token_bytes(const Bpe *bpe, uint32_t id, size_t *len);

// A short English description of st.
const char *bpe_status_str(BpeStatus st);

void bpe_ids_free(BpeIds *ids);
void bpe_bytes_free(BpeBytes *b);

#endif
