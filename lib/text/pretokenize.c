// pretokenize.c: GPT-2's pre-tokenizer regex by hand (see pretokenize.h).
#include "pretokenize.h"

#include "unicode_tables.h"
#include "utf8.h"

// The class (unicode_tables.h) of the code point at s[i], and its length in *n.
static int class_at(const unsigned char *s, size_t i, size_t *n) {
    if (s[i] < 0x80) {
        *n = 1;
        return unicode_class_latin1[s[i]];
    }
    return unicode_class(utf8_decode(s + i, n));
}

// The end of the longest run of code points of class cls starting at byte
// i (whose code point has that class); *last receives where the run's last
// code point starts.
static size_t run_end(const unsigned char *s, size_t len, size_t i, int cls, size_t *last) {
    size_t n;
    *last = i;
    (void)class_at(s, i, &n);
    i += n;
    while (i < len) {
        // ASCII letters and digits, the bulk of English text, without a call.
        if (s[i] < 0x80) {
            if (unicode_class_latin1[s[i]] != cls) break;
            *last = i++;
            continue;
        }
        if (class_at(s, i, &n) != cls) break;
        *last = i;
        i += n;
    }
    return i;
}

// The length of the contraction 's 't 're 've 'm 'll 'd that starts at s
// (s[0] is the apostrophe; avail bytes from s on), or 0 if none does.
static size_t contraction_length(const unsigned char *s, size_t avail) {
    if (avail < 2) return 0;
    switch (s[1]) {
    case 's': case 't': case 'm': case 'd':
        return 2;
    case 'r': case 'v':
        return avail >= 3 && s[2] == 'e' ? 3 : 0;
    case 'l':
        return avail >= 3 && s[2] == 'l' ? 3 : 0;
    default:
        return 0;
    }
}

size_t pretokenize_next(const unsigned char *s, size_t len, size_t i) {
    size_t n, last;
    // 1. The contractions.
    if (s[i] == '\'') {
        size_t k = contraction_length(s + i, len - i);
        if (k > 0) return i + k;
    }
    // 2.-4. ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: a space that some
    // non-space follows joins the run of that code point's class.
    int cls = class_at(s, i, &n);
    if (s[i] == ' ' && i + 1 < len) {
        size_t n2;
        int next = class_at(s, i + 1, &n2);
        if (next != UC_SPACE) return run_end(s, len, i + 1, next, &last);
    }
    if (cls != UC_SPACE) return run_end(s, len, i, cls, &last);
    // 5. `\s+(?!\S)`, then 6. `\s+`.
    size_t end = run_end(s, len, i, UC_SPACE, &last);
    if (end == len) return end;
    if (last > i) return last;
    return end;
}
