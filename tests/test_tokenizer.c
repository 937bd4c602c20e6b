// test_tokenizer.c: lib/text/ (GPT-2's BPE) against a tokenizer that is not
// ours.
//
//   test_tokenizer fixtures/gpt2/gpt2.tiktoken fixtures/tokenizer_cases.txt
//
// The cases file is js-tiktoken's ids (tools/cases/tokenizer_cases.mjs; its
// header says the format): the book's small-text-sample.txt, hand-picked
// edges, random Unicode texts from a fixed seed, special-token cases, each
// in the modes allow / disallow / text. For every case: the ids are the
// reference's, or, where the reference raised on a disallowed
// <|endoftext|>, bpe_encode refuses with BPE_E_SPECIAL at that byte; and
// decode(encode(x)) == x. Then known answers of our own: invalid UTF-8
// refused at Python's UnicodeDecodeError.start, a disallowed special at its
// offset, the checks' order, a failed call leaving its output as it was,
// bad ids in decode, and the vocabulary loader's refusals.
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "harness.h"
#include "utf8.h"

static int failures;

static void check(bool ok, const char *what) {
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

// ---------------------------------------------------------------- the reference cases

// Parses one unsigned decimal at *p (then skips one space); false if none.
static bool parse_num(const char **p, const char *end, unsigned long *v) {
    const char *s = *p;
    if (s >= end || *s < '0' || *s > '9') return false;
    unsigned long x = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        x = x * 10 + (unsigned long)(*s - '0');
        if (x > 0xFFFFFFFFul) return false;
        s++;
    }
    if (s < end && *s == ' ') s++;
    *p = s;
    *v = x;
    return true;
}

// Runs every case of the file d[0..len); prints the first few mismatches.
// Returns the number of cases run, or -1 if the file is malformed.
static long run_cases(const Bpe *bpe, const char *d, size_t len, long *mismatched) {
    const char *p = d, *end = d + len;
    long n = 0, shown = 0;
    *mismatched = 0;
    while (p < end && *p == '#') {  // the header
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return -1;
        p = nl + 1;
    }
    BpeIds ids = {0};
    BpeBytes back = {0};
    while (p < end) {
        // C <mode> <nbytes> <label>\n<text>\n
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || p[0] != 'C' || p[1] != ' ') return -1;
        char mode[16] = "", label[128] = "";
        unsigned long nbytes = 0;
        const char *q = p + 2, *sp = memchr(q, ' ', (size_t)(nl - q));
        if (!sp || (size_t)(sp - q) >= sizeof mode) return -1;
        memcpy(mode, q, (size_t)(sp - q));
        q = sp + 1;
        if (!parse_num(&q, nl, &nbytes)) return -1;
        snprintf(label, sizeof label, "%.*s", (int)(nl - q), q);
        const char *text = nl + 1;
        if (nbytes > (size_t)(end - text) - 1 || text[nbytes] != '\n') return -1;
        p = text + nbytes + 1;
        BpeSpecial special = strcmp(mode, "allow") == 0      ? BPE_SPECIAL_ALLOW
                             : strcmp(mode, "disallow") == 0 ? BPE_SPECIAL_DISALLOW
                             : strcmp(mode, "text") == 0     ? BPE_SPECIAL_AS_TEXT
                                                             : (BpeSpecial)-1;
        if ((int)special < 0) return -1;
        // E <count> <ids...>\n  or  X <offset>\n
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || (p[0] != 'E' && p[0] != 'X') || p[1] != ' ') return -1;
        char kind = p[0];
        q = p + 2;
        unsigned long count = 0;
        if (!parse_num(&q, nl, &count)) return -1;
        ids.len = 0;
        size_t where = 0;
        BpeStatus st = bpe_encode(bpe, text, nbytes, special, &ids, &where);
        bool ok;
        if (kind == 'X') {
            ok = st == BPE_E_SPECIAL && where == count && ids.len == 0;
        } else {
            ok = st == BPE_OK && ids.len == count;
            for (unsigned long i = 0; i < count; i++) {
                unsigned long id = 0;
                if (!parse_num(&q, nl, &id)) return -1;
                if (ok && ids.ids[i] != id) ok = false;
            }
            if (ok) {  // decode(encode(x)) == x
                back.len = 0;
                ok = bpe_decode(bpe, ids.ids, ids.len, &back, &where) == BPE_OK && back.len == nbytes &&
                     (nbytes == 0 || memcmp(back.bytes, text, nbytes) == 0);
            }
        }
        p = nl + 1;
        n++;
        if (!ok) {
            ++*mismatched;
            if (shown++ < 5) {
                printf("FAIL: case %s (%s, %lu bytes): status %s, %zu ids; want %s %lu\n", label, mode, nbytes,
                       bpe_status_str(st), ids.len, kind == 'X' ? "a disallowed special at byte" : "ids:", count);
            }
        }
    }
    bpe_ids_free(&ids);
    bpe_bytes_free(&back);
    return n;
}

// ---------------------------------------------------------------- known answers

// Encodes text[0..len) onto an output that already holds one id (7); the
// status and where, and checks that a failure left the output as it was.
static BpeStatus encode_onto_one(const Bpe *bpe, const char *text, size_t len, BpeSpecial special,
                                 size_t *where, size_t *n_new) {
    BpeIds ids = {0};
    BpeStatus st = bpe_encode(bpe, "(", 1, BPE_SPECIAL_DISALLOW, &ids, where);  // "(" is id 7
    check(st == BPE_OK && ids.len == 1 && ids.ids[0] == 7, "\"(\" is id 7");
    *where = (size_t)-1;
    st = bpe_encode(bpe, text, len, special, &ids, where);
    if (st != BPE_OK) check(ids.len == 1 && ids.ids[0] == 7, "a failed bpe_encode leaves its output as it was");
    *n_new = ids.len - 1;
    bpe_ids_free(&ids);
    return st;
}

static void test_utf8_refused(const Bpe *bpe) {
    // Ill-formed UTF-8 and where Python's bytes.decode('utf-8') reports it
    // (UnicodeDecodeError .start, .end).
    static const struct {
        const char *s;
        size_t len, start, end;
        const char *what;
    } bad[] = {
        {"abc\xff", 4, 3, 4, "0xFF never starts a sequence"},
        {"ab\x80", 3, 2, 3, "a lone continuation byte"},
        {"a\xc3", 2, 1, 2, "a 2-byte sequence cut short at the end"},
        {"a\xc3(b", 4, 1, 2, "a 2-byte sequence cut short by ASCII"},
        {"\xc0\xaf", 2, 0, 1, "an overlong 2-byte form (C0)"},
        {"x\xe0\x80\x80", 4, 1, 2, "an overlong 3-byte form (E0 80)"},
        {"ok\xed\xa0\x80", 5, 2, 3, "a surrogate, U+D800 (ED A0)"},
        {"\xf4\x90\x80\x80", 4, 0, 1, "above U+10FFFF (F4 90)"},
        {"\xf5\x80\x80\x80", 4, 0, 1, "F5 never starts a sequence"},
        {"caf\xc3\xa9 \xe2\x82", 8, 6, 8, "a 3-byte sequence cut short after 2 bytes (maximal subpart 2)"},
        {"\xf0\x9f\x98", 3, 0, 3, "a 4-byte emoji cut short after 3 bytes"},
        {"12345678\xe2\x28\xa1", 11, 8, 9, "after eight ASCII bytes (the fast path)"},
        {"<|endoftext|>\xff", 14, 13, 14, "UTF-8 is checked before the special token"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[160];
        size_t start = 0, end = 0, where, n_new;
        bool valid = utf8_check((const unsigned char *)bad[i].s, bad[i].len, &start, &end);
        snprintf(what, sizeof what, "utf8_check: %s: .start %zu .end %zu (got %s, %zu, %zu)", bad[i].what,
                 bad[i].start, bad[i].end, valid ? "valid" : "invalid", start, end);
        check(!valid && start == bad[i].start && end == bad[i].end, what);
        for (int mode = 0; mode < 3; mode++) {
            BpeStatus st = encode_onto_one(bpe, bad[i].s, bad[i].len, (BpeSpecial)mode, &where, &n_new);
            snprintf(what, sizeof what, "bpe_encode (mode %d) refuses %s with BPE_E_UTF8 at byte %zu (got %s at %zu)",
                     mode, bad[i].what, bad[i].start, bpe_status_str(st), where);
            check(st == BPE_E_UTF8 && where == bad[i].start, what);
        }
    }
    // Well-formed edges: the first and last code points of each length.
    static const char *const good[] = {"\x7f", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf",
                                       "\xee\x80\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        check(utf8_check((const unsigned char *)good[i], strlen(good[i]), NULL, NULL),
              "utf8_check accepts a well-formed edge code point");
    }
}

static void test_special(const Bpe *bpe) {
    static const char text[] = "Hello, <|endoftext|> world<|endoftext|>";
    size_t len = sizeof text - 1, where, n_new;
    BpeStatus st = encode_onto_one(bpe, text, len, BPE_SPECIAL_DISALLOW, &where, &n_new);
    check(st == BPE_E_SPECIAL && where == 7, "a disallowed <|endoftext|> is reported at its first byte (7)");
    st = encode_onto_one(bpe, text, len, BPE_SPECIAL_ALLOW, &where, &n_new);
    check(st == BPE_OK, "allowed, the same text encodes");
    st = encode_onto_one(bpe, "<|endoftext|", 12, BPE_SPECIAL_DISALLOW, &where, &n_new);
    check(st == BPE_OK, "a partial <|endoftext| is plain text, even when specials are disallowed");
    BpeIds ids = {0};
    st = bpe_encode(bpe, "<|endoftext|>", 13, BPE_SPECIAL_ALLOW, &ids, &where);
    check(st == BPE_OK && ids.len == 1 && ids.ids[0] == BPE_GPT2_ENDOFTEXT, "allowed, <|endoftext|> is 50256");
    ids.len = 0;
    st = bpe_encode(bpe, "<|endoftext|>", 13, BPE_SPECIAL_AS_TEXT, &ids, &where);
    check(st == BPE_OK && ids.len > 1, "as text, <|endoftext|> is several ordinary tokens");
    bpe_ids_free(&ids);
}

static void test_decode(const Bpe *bpe) {
    const uint32_t ids[] = {15496, 11, BPE_GPT2_ENDOFTEXT, 50257};
    BpeBytes b = {0};
    size_t where = 0;
    BpeStatus st = bpe_decode(bpe, ids, 3, &b, &where);
    check(st == BPE_OK && b.len == 19 && memcmp(b.bytes, "Hello,<|endoftext|>", 19) == 0,
          "decode [15496, 11, 50256] is \"Hello,<|endoftext|>\"");
    size_t len0 = b.len;
    st = bpe_decode(bpe, ids, 4, &b, &where);
    check(st == BPE_E_BAD_ID && where == 3 && b.len == len0, "decode refuses id 50257 at its index, output unchanged");
    bpe_bytes_free(&b);
}

static void test_loader(const char *vocab_path, const char *vocab, size_t vocab_len) {
    char err[256] = "";
    Bpe *b = bpe_load("/nonexistent/gpt2.tiktoken", err, sizeof err);
    check(!b && strstr(err, "/nonexistent/gpt2.tiktoken") != NULL, "bpe_load names a file it cannot open");
    b = bpe_load_mem(vocab, vocab_len / 2, err, sizeof err);
    printf("half the vocabulary: %s\n", err);
    check(!b && err[0] != '\0', "bpe_load_mem refuses half the vocabulary, saying why");
    b = bpe_load_mem("IQ== 0\n", 7, err, sizeof err);
    check(!b && strstr(err, "1 tokens") != NULL, "bpe_load_mem refuses a one-token vocabulary");
    b = bpe_load_mem("I Q== 0\n", 8, err, sizeof err);
    check(!b, "bpe_load_mem refuses a malformed line");
    b = bpe_load(vocab_path, err, sizeof err);
    check(b && b->n_ranks == BPE_GPT2_N_RANKS && b->max_token_len == 128,
          "the vocabulary: 50256 ranks, the longest token 128 bytes");
    bpe_free(b);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s VOCAB.tiktoken CASES.txt\n", argv[0]);
        return 2;
    }
    size_t vocab_len = 0, cases_len = 0;
    char *vocab = read_whole_file(argv[1], &vocab_len);
    char *cases = read_whole_file(argv[2], &cases_len);
    if (!vocab || !cases) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], vocab ? argv[2] : argv[1]);
        return 1;
    }
    char err[256];
    Bpe *bpe = bpe_load_mem(vocab, vocab_len, err, sizeof err);
    if (!bpe) {
        fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], err);
        return 1;
    }
    long mismatched = 0, n = run_cases(bpe, cases, cases_len, &mismatched);
    if (n < 0) {
        printf("FAIL: %s is not a cases file (tools/cases/tokenizer_cases.mjs)\n", argv[2]);
        failures++;
    } else {
        printf("%ld reference cases, %ld mismatched\n", n, mismatched);
        check(n > 1000, "the cases file has more than 1000 cases");
        failures += (int)(mismatched > 0);
    }
    test_utf8_refused(bpe);
    test_special(bpe);
    test_decode(bpe);
    test_loader(argv[1], vocab, vocab_len);
    bpe_free(bpe);
    free(vocab);
    free(cases);
    printf("%s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
