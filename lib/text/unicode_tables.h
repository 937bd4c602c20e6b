// unicode_tables.h: the four character classes of GPT-2's pre-tokenizer
// pattern, looked up in tables generated from the Unicode Character Database
// (unicode_tables.c, written by tools/cases/gen_unicode_tables.py; its header
// names the UCD version and the SHA-256 of the files it was made from).
//
//   UC_LETTER  \p{L}  General_Category L (Lu Ll Lt Lm Lo)
//   UC_NUMBER  \p{N}  General_Category N (Nd Nl No)
//   UC_SPACE   \s     the White_Space property, as in Rust's regex crate
//                         (tiktoken); JavaScript's \s differs in two code
//                         points, see lib/text/README.md
//   UC_OTHER   the rest: [^\s\p{L}\p{N}], unassigned code points included
#ifndef LITATTN_UNICODE_TABLES_H
#define LITATTN_UNICODE_TABLES_H

#include <stdint.h>

enum { UC_OTHER = 0, UC_LETTER = 1, UC_NUMBER = 2, UC_SPACE = 3 };

extern const char unicode_tables_version[];             // e.g. "15.0.0"
extern const unsigned char unicode_class_latin1[256];   // classes of U+0000..U+00FF
extern const uint32_t unicode_class_n_runs;             // runs of equal class, in order:
extern const uint32_t unicode_class_run_start[];        //   run i starts here,
extern const unsigned char unicode_class_run_class[];   //   and has this class

// The class of code point cp (any value; above U+10FFFF is OTHER): the
// Latin-1 table, else a binary search for the last run starting at or
// before cp.
static inline int unicode_class(uint32_t cp) {
    if (cp < 256) return unicode_class_latin1[cp];
    if (cp > 0x10FFFF) return UC_OTHER;
    uint32_t lo = 0, hi = unicode_class_n_runs;  // run_start[lo] <= cp < run_start[hi]
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (unicode_class_run_start[mid] <= cp) lo = mid;
        else hi = mid;
    }
    return unicode_class_run_class[lo];
}

#endif
