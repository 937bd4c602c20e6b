// bpe.c: GPT-2's byte-level BPE, tiktoken's CoreBPE in C (see bpe.h).
#include "bpe.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "pretokenize.h"
#include "utf8.h"

#define NO_RANK UINT32_MAX        // "not a token", above every rank
#define NO_PART UINT32_MAX        // "no previous part" in the large merge
#define SMALL_PIECE 100           // tiktoken's threshold between its two merges
#define HASH_SLOTS (1u << 17)     // 131072 slots for 50256 tokens: load 0.38
#define MAX_FILE_BYTES ((size_t)64 << 20)
#define MAX_TOKEN_BYTES 768       // a longer token is refused by the loader
#define ENDOFTEXT_LEN (sizeof BPE_ENDOFTEXT_TEXT - 1)

// ---------------------------------------------------------------- errors

// Writes a one-line message to err[0..errlen) (if there is room for any).
static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *bpe_status_str(BpeStatus st) {
    switch (st) {
    case BPE_OK: return "ok";
    case BPE_E_NOMEM: return "out of memory";
    case BPE_E_TOO_LONG: return "text longer than 256 MiB";
    case BPE_E_UTF8: return "text is not valid UTF-8";
    case BPE_E_SPECIAL: return "text contains the special token <|endoftext|>, which is not allowed";
    case BPE_E_BAD_ID: return "token id not in the vocabulary";
    }
    return "unknown status";
}

// ---------------------------------------------------------------- buffers

// Makes room for at least `more` further ids in o (doubling), or NOMEM.
static BpeStatus ids_reserve(BpeIds *o, size_t more) {
    if (o->cap - o->len >= more) return BPE_OK;
    size_t cap = o->cap ? o->cap : 256;
    while (cap - o->len < more) {
        if (cap > SIZE_MAX / 2 / sizeof *o->ids) return BPE_E_NOMEM;
        cap *= 2;
    }
    uint32_t *p = mem_realloc(o->ids, cap * sizeof *p);
    if (!p) return BPE_E_NOMEM;
    o->ids = p;
    o->cap = cap;
    return BPE_OK;
}

// Appends one id to o.
static inline BpeStatus ids_push(BpeIds *o, uint32_t id) {
    if (o->len == o->cap) {
        BpeStatus st = ids_reserve(o, 1);
        if (st != BPE_OK) return st;
    }
    o->ids[o->len++] = id;
    return BPE_OK;
}

// Appends n bytes to b.
static BpeStatus bytes_put(BpeBytes *b, const unsigned char *s, size_t n) {
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) return BPE_E_NOMEM;
            cap *= 2;
        }
        unsigned char *p = mem_realloc(b->bytes, cap);
        if (!p) return BPE_E_NOMEM;
        b->bytes = p;
        b->cap = cap;
    }
    if (n) memcpy(b->bytes + b->len, s, n);
    b->len += n;
    return BPE_OK;
}

void bpe_ids_free(BpeIds *ids) {
    free(ids->ids);
    *ids = (BpeIds){0};
}

void bpe_bytes_free(BpeBytes *b) {
    free(b->bytes);
    *b = (BpeBytes){0};
}

// ---------------------------------------------------------------- hash table

// A 64-bit hash of s[0..n): eight bytes at a time, each folded in with a
// multiply and xorshift (the SplitMix64 finalizer's constants).
static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ n;
    while (n > 0) {
        uint64_t w = 0;
        size_t k = n < 8 ? n : 8;
        memcpy(&w, s, k);
        h = (h ^ w) * UINT64_C(0xBF58476D1CE4E5B9);
        h ^= h >> 31;
        s += k;
        n -= k;
    }
    h *= UINT64_C(0x94D049BB133111EB);
    return h ^ (h >> 29);
}

// The bytes of rank r and their count.
static inline const unsigned char *token_at(const Bpe *b, uint32_t r, size_t *n) {
    *n = b->off[r + 1] - b->off[r];
    return b->bytes + b->off[r];
}

// The rank of s[0..n), or NO_RANK: single bytes from byte_rank, longer
// strings up to the longest token from the hash table.
static inline uint32_t rank_of(const Bpe *b, const unsigned char *s, size_t n) {
    if (n == 1) return b->byte_rank[s[0]];
    if (n == 0 || n > b->max_token_len) return NO_RANK;
    for (uint32_t i = (uint32_t)hash_bytes(s, n) & b->slot_mask;; i = (i + 1) & b->slot_mask) {
        uint32_t v = b->slots[i];
        if (v == 0) return NO_RANK;
        size_t tn;
        const unsigned char *t = token_at(b, v - 1, &tn);
        if (tn == n && memcmp(t, s, n) == 0) return v - 1;
    }
}

// Puts rank r into the table; false if its bytes are there already.
static bool table_insert(Bpe *b, uint32_t r) {
    size_t n;
    const unsigned char *s = token_at(b, r, &n);
    for (uint32_t i = (uint32_t)hash_bytes(s, n) & b->slot_mask;; i = (i + 1) & b->slot_mask) {
        uint32_t v = b->slots[i];
        if (v == 0) {
            b->slots[i] = r + 1;
            return true;
        }
        size_t tn;
        const unsigned char *t = token_at(b, v - 1, &tn);
        if (tn == n && memcmp(t, s, n) == 0) return false;
    }
}

long bpe_rank(const Bpe *bpe, const void *s, size_t len) {
    uint32_t r = rank_of(bpe, s, len);
    return r == NO_RANK ? -1 : (long)r;
}

const unsigned char *bpe_token_bytes(const Bpe *bpe, uint32_t id, size_t *len) {
    if (id == BPE_GPT2_ENDOFTEXT) {
        *len = ENDOFTEXT_LEN;
        return (const unsigned char *)BPE_ENDOFTEXT_TEXT;
    }
    if (id >= bpe->n_ranks) return NULL;
    return token_at(bpe, id, len);
}

// ---------------------------------------------------------------- loading

// The 6-bit value of base64 character c (standard alphabet), or -1.
static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Decodes padded base64 s[0..n) into out (room for n / 4 * 3 bytes);
// the decoded length, or -1 if s is not canonical padded base64.
static long b64_decode(const unsigned char *s, size_t n, unsigned char *out) {
    if (n == 0 || n % 4 != 0) return -1;
    size_t pad = (s[n - 1] == '=') + (s[n - 1] == '=' && s[n - 2] == '=');
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            bool padding = i + 4 == n && (size_t)k >= 4 - pad;
            v[k] = padding ? 0 : b64_value(s[i + (size_t)k]);
            if (v[k] < 0) return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = (unsigned char)(w >> 16);
        if (i + 4 < n || pad < 2) out[o++] = (unsigned char)(w >> 8);
        if (i + 4 < n || pad < 1) out[o++] = (unsigned char)w;
        // Canonical: the bits that padding drops are zero.
        if (i + 4 == n && (w & (pad == 2 ? 0xFFFFu : pad == 1 ? 0xFFu : 0u)) != 0) return -1;
    }
    return (long)o;
}

// One line of the ranks file, split: the base64 field and the rank.
typedef struct {
    const unsigned char *b64;
    size_t b64_len;
    uint32_t rank;
} RankLine;

// Parses line s[0..n) (no '\n'; a trailing '\r' allowed) as
// "<base64> <decimal rank>"; false if it is not one.
static bool parse_line(const unsigned char *s, size_t n, RankLine *line) {
    if (n > 0 && s[n - 1] == '\r') n--;
    const unsigned char *sp = memchr(s, ' ', n);
    if (!sp || sp == s) return false;
    line->b64 = s;
    line->b64_len = (size_t)(sp - s);
    const unsigned char *d = sp + 1, *end = s + n;
    if (d == end || (*d == '0' && end - d > 1)) return false;  // no digits, or a leading zero
    uint64_t r = 0;
    for (; d < end; d++) {
        if (*d < '0' || *d > '9') return false;
        r = r * 10 + (uint64_t)(*d - '0');
        if (r > UINT32_MAX) return false;
    }
    line->rank = (uint32_t)r;
    return true;
}

// Pass 1 over the file: each rank's line, checked (base64, rank in range,
// each rank once); the total token bytes in *total. False with err set.
static bool index_lines(const unsigned char *d, size_t len, RankLine *by_rank, size_t *total,
                        char *err, size_t errlen) {
    unsigned char tok[MAX_TOKEN_BYTES];
    size_t count = 0, lineno = 0;
    *total = 0;
    for (size_t i = 0; i < len; lineno++) {
        const unsigned char *nl = memchr(d + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (d + i)) : len - i;
        const unsigned char *s = d + i;
        i += n + (nl != NULL);
        if (n == 0 || (n == 1 && s[0] == '\r')) continue;  // empty lines, as tiktoken skips them
        RankLine line;
        if (!parse_line(s, n, &line)) {
            set_err(err, errlen, "line %zu: not \"<base64> <rank>\"", lineno + 1);
            return false;
        }
        if (line.b64_len > MAX_TOKEN_BYTES / 3 * 4) {
            set_err(err, errlen, "line %zu: token longer than %d bytes", lineno + 1, MAX_TOKEN_BYTES);
            return false;
        }
        long tn = b64_decode(line.b64, line.b64_len, tok);
        if (tn <= 0) {
            set_err(err, errlen, "line %zu: bad base64", lineno + 1);
            return false;
        }
        if (line.rank >= BPE_GPT2_N_RANKS || by_rank[line.rank].b64) {
            set_err(err, errlen, "line %zu: rank %u out of range 0..%u or repeated", lineno + 1,
                    line.rank, BPE_GPT2_N_RANKS - 1);
            return false;
        }
        by_rank[line.rank] = line;
        *total += (size_t)tn;
        count++;
    }
    if (count != BPE_GPT2_N_RANKS) {
        set_err(err, errlen, "%zu tokens, GPT-2 has %u", count, BPE_GPT2_N_RANKS);
        return false;
    }
    return true;
}

// Pass 2: decodes every token into b->bytes in rank order, fills off,
// byte_rank, max_token_len and the hash table. False with err set if a
// token repeats or a single byte has no token.
static bool fill_vocab(Bpe *b, const RankLine *by_rank, char *err, size_t errlen) {
    uint32_t o = 0;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        b->off[r] = o;
        o += (uint32_t)b64_decode(by_rank[r].b64, by_rank[r].b64_len, b->bytes + o);
        if (o - b->off[r] > b->max_token_len) b->max_token_len = o - b->off[r];
    }
    b->off[b->n_ranks] = o;
    for (int c = 0; c < 256; c++) b->byte_rank[c] = NO_RANK;
    for (uint32_t r = 0; r < b->n_ranks; r++) {
        if (!table_insert(b, r)) {
            set_err(err, errlen, "rank %u repeats the bytes of an earlier token", r);
            return false;
        }
        size_t n;
        const unsigned char *t = token_at(b, r, &n);
        if (n == 1) b->byte_rank[t[0]] = r;
    }
    for (int c = 0; c < 256; c++) {
        if (b->byte_rank[c] == NO_RANK) {
            set_err(err, errlen, "byte 0x%02x has no token", c);
            return false;
        }
    }
    return true;
}

Bpe *bpe_load_mem(const void *data, size_t len, char *err, size_t errlen) {
    Bpe *b = mem_calloc(1, sizeof *b);
    RankLine *by_rank = mem_calloc(BPE_GPT2_N_RANKS, sizeof *by_rank);
    size_t total = 0;
    if (!b || !by_rank) goto nomem;
    b->n_ranks = BPE_GPT2_N_RANKS;
    b->slot_mask = HASH_SLOTS - 1;
    if (!index_lines(data, len, by_rank, &total, err, errlen)) goto fail;
    b->off = mem_malloc((b->n_ranks + 1) * sizeof *b->off);
    b->bytes = mem_malloc(total);
    b->slots = mem_calloc(HASH_SLOTS, sizeof *b->slots);
    if (!b->off || !b->bytes || !b->slots) goto nomem;
    if (!fill_vocab(b, by_rank, err, errlen)) goto fail;
    free(by_rank);
    return b;
nomem:
    set_err(err, errlen, "%s", bpe_status_str(BPE_E_NOMEM));
fail:
    free(by_rank);
    bpe_free(b);
    return NULL;
}

// Reads all of file f into a malloc'd buffer (at most MAX_FILE_BYTES); NULL
// with err set on failure.
static unsigned char *read_all(FILE *f, size_t *len, char *err, size_t errlen) {
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = mem_malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= MAX_FILE_BYTES) {
            set_err(err, errlen, "larger than %zu bytes", MAX_FILE_BYTES);
            free(buf);
            return NULL;
        }
        unsigned char *p = mem_realloc(buf, cap * 2);
        if (!p) free(buf);
        buf = p;
        cap *= 2;
    }
    if (!buf) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    if (ferror(f)) {
        set_err(err, errlen, "read error");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

Bpe *bpe_load(const char *path, char *err, size_t errlen) {
    char why[200] = "";
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "%s: cannot open", path);
        return NULL;
    }
    size_t len = 0;
    unsigned char *data = read_all(f, &len, why, sizeof why);
    fclose(f);
    Bpe *b = data ? bpe_load_mem(data, len, why, sizeof why) : NULL;
    free(data);
    if (!b) set_err(err, errlen, "%s: %s", path, why);
    return b;
}

void bpe_free(Bpe *bpe) {
    if (!bpe) return;
    free(bpe->off);
    free(bpe->bytes);
    free(bpe->slots);
    free(bpe);
}

// ---------------------------------------------------------------- merging

// tiktoken's _byte_pair_merge for a piece of 2..SMALL_PIECE-1 bytes: parts
// as a flat array of (start, rank of this part joined with the next),
// the minimum found by a scan (the first of equal ranks), the merged-away
// part removed by a move. O(n^2) worst case, fast for the short pieces of
// ordinary text. Appends the final parts' ranks to out.
static BpeStatus merge_small(const Bpe *b, const unsigned char *p, size_t n, BpeIds *out) {
    uint32_t start[SMALL_PIECE + 1], rank[SMALL_PIECE + 1];
    size_t m = n + 1;  // parts, counting the end sentinel start[n] = n
    uint32_t min = NO_RANK;
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        start[i] = (uint32_t)i;
        rank[i] = rank_of(b, p + i, 2);
        if (rank[i] < min) min = rank[i], at = i;
    }
    start[n - 1] = (uint32_t)(n - 1), rank[n - 1] = NO_RANK;
    start[n] = (uint32_t)n, rank[n] = NO_RANK;
    while (min != NO_RANK) {
        // Part at absorbs part at+1: the new pairs are (at-1, at) and (at, at+2),
        // whose byte ranges end at start[at+2] and start[at+3].
        if (at > 0) rank[at - 1] = rank_of(b, p + start[at - 1], start[at + 2] - start[at - 1]);
        rank[at] = at + 3 < m ? rank_of(b, p + start[at], start[at + 3] - start[at]) : NO_RANK;
        memmove(start + at + 1, start + at + 2, (m - at - 2) * sizeof *start);
        memmove(rank + at + 1, rank + at + 2, (m - at - 2) * sizeof *rank);
        m--;
        min = NO_RANK;
        for (size_t i = 0; i + 1 < m; i++) {
            if (rank[i] < min) min = rank[i], at = i;
        }
    }
    BpeStatus st = ids_reserve(out, m - 1);
    for (size_t i = 0; st == BPE_OK && i + 1 < m; i++) {
        out->ids[out->len++] = rank_of(b, p + start[i], start[i + 1] - start[i]);
    }
    return st;
}

// A binary min-heap of merge candidates, each (rank << 32 | start) so that
// the least is the lowest rank, then the leftmost start.
typedef struct {
    uint64_t *key;
    size_t len;
} Heap;

// Adds k to h (room is the caller's: at most 2n keys for an n-byte piece).
static void heap_push(Heap *h, uint64_t k) {
    size_t i = h->len++;
    while (i > 0 && h->key[(i - 1) / 2] > k) {
        h->key[i] = h->key[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->key[i] = k;
}

// Removes and returns the least key of the non-empty heap h.
static uint64_t heap_pop(Heap *h) {
    uint64_t top = h->key[0], k = h->key[--h->len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->len) break;
        if (c + 1 < h->len && h->key[c + 1] < h->key[c]) c++;
        if (h->key[c] >= k) break;
        h->key[i] = h->key[c];
        i = c;
    }
    if (h->len > 0) h->key[i] = k;
    return top;
}

// The state of the large merge: parts as a doubly linked list over byte
// positions. For a part starting at s: end[s] is where it ends (the next
// part's start), prev[s] the previous part's start, pair[s] the rank of
// it joined with the next part (NO_RANK if none, or if s no longer starts
// a part).
typedef struct {
    const unsigned char *p;
    size_t n;
    uint32_t *end, *prev, *pair;
    Heap heap;
} LargeMerge;

// Sets pair[s] to the rank of the part at s joined with the next, and
// offers it to the heap if it is a token.
static void offer_pair(const Bpe *b, LargeMerge *lm, uint32_t s) {
    uint32_t next = lm->end[s];
    lm->pair[s] = next < lm->n ? rank_of(b, lm->p + s, lm->end[next] - s) : NO_RANK;
    if (lm->pair[s] != NO_RANK) heap_push(&lm->heap, (uint64_t)lm->pair[s] << 32 | s);
}

// tiktoken's _byte_pair_merge_large for a piece of SMALL_PIECE or more
// bytes: the same merges as merge_small (lowest rank, then leftmost) with
// a heap, O(n log n). Stale heap entries are skipped: an entry is current
// only while pair[start] still equals its rank (the string of a pair at a
// given start only grows, so its rank never comes back).
static BpeStatus merge_large(const Bpe *b, const unsigned char *p, size_t n, BpeIds *out) {
    LargeMerge lm = {.p = p, .n = n};
    if (n > SIZE_MAX / (2 * sizeof *lm.heap.key)) return BPE_E_NOMEM;  // 32-bit size_t
    lm.end = mem_malloc(n * sizeof *lm.end);
    lm.prev = mem_malloc(n * sizeof *lm.prev);
    lm.pair = mem_malloc(n * sizeof *lm.pair);
    lm.heap.key = mem_malloc(2 * n * sizeof *lm.heap.key);
    BpeStatus st = BPE_E_NOMEM;
    if (!lm.end || !lm.prev || !lm.pair || !lm.heap.key) goto done;
    for (uint32_t i = 0; i < n; i++) {
        lm.end[i] = i + 1;
        lm.prev[i] = i > 0 ? i - 1 : NO_PART;
    }
    for (uint32_t i = 0; i < n; i++) offer_pair(b, &lm, i);
    while (lm.heap.len > 0) {
        uint64_t k = heap_pop(&lm.heap);
        uint32_t s = (uint32_t)k, r = (uint32_t)(k >> 32);
        if (lm.pair[s] != r) continue;  // stale
        uint32_t right = lm.end[s];
        lm.end[s] = lm.end[right];
        lm.pair[right] = NO_RANK;  // no longer a part
        if (lm.end[s] < n) lm.prev[lm.end[s]] = s;
        offer_pair(b, &lm, s);
        if (lm.prev[s] != NO_PART) offer_pair(b, &lm, lm.prev[s]);
    }
    st = BPE_OK;
    for (uint32_t s = 0; st == BPE_OK && s < n; s = lm.end[s]) {
        st = ids_push(out, rank_of(b, p + s, lm.end[s] - s));
    }
done:
    free(lm.end);
    free(lm.prev);
    free(lm.pair);
    free(lm.heap.key);
    return st;
}

// Appends the ids of one pre-token p[0..n): the whole piece if it is a
// token (tiktoken checks this first), else the byte pair merge.
static BpeStatus encode_piece(const Bpe *b, const unsigned char *p, size_t n, BpeIds *out) {
    uint32_t r = rank_of(b, p, n);
    if (r != NO_RANK) return ids_push(out, r);
    return n < SMALL_PIECE ? merge_small(b, p, n, out) : merge_large(b, p, n, out);
}

// ---------------------------------------------------------------- encoding

// Appends the ids of the text segment s[0..len), no special token inside:
// GPT-2's pre-tokenizer, then each piece's BPE.
static BpeStatus encode_segment(const Bpe *b, const unsigned char *s, size_t len, BpeIds *out) {
    for (size_t i = 0; i < len;) {
        size_t j = pretokenize_next(s, len, i);
        BpeStatus st = encode_piece(b, s + i, j - i, out);
        if (st != BPE_OK) return st;
        i = j;
    }
    return BPE_OK;
}

// Where the first "<|endoftext|>" at or after byte from of s[0..len)
// starts, or len if there is none.
static size_t find_special(const unsigned char *s, size_t len, size_t from) {
    while (len - from >= ENDOFTEXT_LEN) {
        const unsigned char *lt = memchr(s + from, '<', len - from - ENDOFTEXT_LEN + 1);
        if (!lt) break;
        size_t at = (size_t)(lt - s);
        if (memcmp(lt, BPE_ENDOFTEXT_TEXT, ENDOFTEXT_LEN) == 0) return at;
        from = at + 1;
    }
    return len;
}

// Appends the ids of s[0..len) with "<|endoftext|>" as id 50256: the
// segments between specials are encoded each on its own.
static BpeStatus encode_with_specials(const Bpe *b, const unsigned char *s, size_t len, BpeIds *out) {
    size_t start = 0;
    for (;;) {
        size_t at = find_special(s, len, start);
        BpeStatus st = encode_segment(b, s + start, at - start, out);
        if (st != BPE_OK || at == len) return st;
        st = ids_push(out, BPE_GPT2_ENDOFTEXT);
        if (st != BPE_OK) return st;
        start = at + ENDOFTEXT_LEN;
    }
}

// The checks before encoding, in order: length, UTF-8, a disallowed special.
static BpeStatus check_text(const unsigned char *s, size_t len, BpeSpecial special, size_t *where) {
    if (len > BPE_MAX_TEXT_BYTES) {
        *where = BPE_MAX_TEXT_BYTES;
        return BPE_E_TOO_LONG;
    }
    if (!utf8_check(s, len, where, NULL)) return BPE_E_UTF8;
    if (special == BPE_SPECIAL_DISALLOW) {
        *where = find_special(s, len, 0);
        if (*where < len) return BPE_E_SPECIAL;
    }
    return BPE_OK;
}

BpeStatus bpe_encode(const Bpe *bpe, const char *text, size_t len, BpeSpecial special,
                     BpeIds *out, size_t *where) {
    const unsigned char *s = (const unsigned char *)text;
    size_t at = 0, len0 = out->len;
    BpeStatus st = check_text(s, len, special, &at);
    if (st == BPE_OK) {
        // About one id per 4 bytes of English: reserve that much at once.
        st = ids_reserve(out, len / 4 + 16);
    }
    if (st == BPE_OK) {
        st = special == BPE_SPECIAL_ALLOW ? encode_with_specials(bpe, s, len, out)
                                          : encode_segment(bpe, s, len, out);
    }
    if (st != BPE_OK) {
        out->len = len0;
        if (where) *where = at;
    }
    return st;
}

// ---------------------------------------------------------------- decoding

BpeStatus bpe_decode(const Bpe *bpe, const uint32_t *ids, size_t n, BpeBytes *out, size_t *where) {
    size_t len0 = out->len;
    for (size_t i = 0; i < n; i++) {
        size_t tn;
        const unsigned char *t = bpe_token_bytes(bpe, ids[i], &tn);
        BpeStatus st = t ? bytes_put(out, t, tn) : BPE_E_BAD_ID;
        if (st != BPE_OK) {
            out->len = len0;
            if (where) *where = i;
            return st;
        }
    }
    return BPE_OK;
}
