// fuzz_tokenizer.c: libFuzzer over lib/text/ (bpe_encode, bpe_decode, and
// through them pretokenize and utf8).
//
// The first input byte picks the special-token mode, the rest is the text.
// Checked on every input, besides the sanitizers:
//   - text that is not UTF-8 is refused with BPE_E_UTF8 at the offset an
//     independent decoder below finds (where its first bad sequence starts);
//   - UTF-8 text with "<|endoftext|>" and the mode DISALLOW is refused with
//     BPE_E_SPECIAL at its first occurrence;
//   - otherwise every id is in 0..50256 (50256 only where allowed) and
//     decode(encode(text)) == text;
//   - a failed encode leaves its output empty.
// The vocabulary is fixtures/gpt2/gpt2.tiktoken (LITATTN_FUZZ_VOCAB, set by
// tests/fuzz/meson.build), or $LITATTN_VOCAB.
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"

static Bpe *vocab;  // loaded once; read-only afterwards

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *path = getenv("LITATTN_VOCAB");
#ifdef LITATTN_FUZZ_VOCAB
    if (!path) path = LITATTN_FUZZ_VOCAB;
#endif
    char err[256];
    vocab = path ? bpe_load(path, err, sizeof err) : NULL;
    if (!vocab) {
        fprintf(stderr, "fuzz_tokenizer: %s\n", path ? err : "set LITATTN_VOCAB");
        abort();
    }
    return 0;
}

// The reference decoder: true if s[0..n) is UTF-8, else false with *bad at
// the lead byte of the first sequence that is cut short, has a
// non-continuation byte, is overlong, is a surrogate or is above U+10FFFF.
static bool reference_utf8(const uint8_t *s, size_t n, size_t *bad) {
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1Fu, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0Fu, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07u, min = 0x10000;
        } else {
            *bad = i;
            return false;
        }
        bool ok = i + len <= n;
        for (size_t k = 1; ok && k < len; k++) {
            ok = (s[i + k] & 0xC0) == 0x80;
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        }
        if (!ok || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = i;
            return false;
        }
        i += len;
    }
    return true;
}

// Where "<|endoftext|>" first occurs in s[0..n), or n.
static size_t first_special(const uint8_t *s, size_t n) {
    for (size_t i = 0; i + 13 <= n; i++) {
        if (memcmp(s + i, "<|endoftext|>", 13) == 0) return i;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    BpeSpecial mode = (BpeSpecial)(data[0] % 3);
    const uint8_t *text = data + 1;
    size_t n = size - 1, bad = 0, where = 0;
    BpeIds ids = {0};
    BpeStatus st = bpe_encode(vocab, (const char *)text, n, mode, &ids, &where);
    if (!reference_utf8(text, n, &bad)) {
        if (st != BPE_E_UTF8 || where != bad) abort();
    } else if (mode == BPE_SPECIAL_DISALLOW && first_special(text, n) < n) {
        if (st != BPE_E_SPECIAL || where != first_special(text, n)) abort();
    } else {
        if (st != BPE_OK) abort();
        for (size_t i = 0; i < ids.len; i++) {
            if (ids.ids[i] > BPE_GPT2_ENDOFTEXT) abort();
            if (ids.ids[i] == BPE_GPT2_ENDOFTEXT && mode != BPE_SPECIAL_ALLOW) abort();
        }
        BpeBytes back = {0};
        if (bpe_decode(vocab, ids.ids, ids.len, &back, &where) != BPE_OK) abort();
        if (back.len != n || (n > 0 && memcmp(back.bytes, text, n) != 0)) abort();
        bpe_bytes_free(&back);
    }
    if (st != BPE_OK && ids.len != 0) abort();  // a failed encode leaves out as it was
    bpe_ids_free(&ids);
    return 0;
}
