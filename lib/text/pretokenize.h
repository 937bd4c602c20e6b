// pretokenize.h: GPT-2's pre-tokenizer, the regular expression
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// written out by hand. A regex engine scanning for successive matches tries
// the alternatives left to right at each position and takes the first that
// matches (leftmost-first, as in Perl, JavaScript, Python's re, Rust's
// fancy-regex); every code point belongs to one of the classes of
// unicode_tables.h, so some alternative always matches at the current position
// and the matches tile the text with no gaps. What each alternative matches
// there, given the code point c at the position:
//
//   1. c is "'" followed by s, t, re, ve, m, ll or d (lower case only: the
//      pattern is case-sensitive): those two or three bytes.
//   2.-4. ` ?X+` for X = \p{L}, \p{N}, [^\s\p{L}\p{N}]: c is a space U+0020
//      followed by a code point of class X: the space and the longest run of
//      class X after it; or c itself has class X: the longest run of class X
//      from c. (The three are tried in that order but their first code
//      points exclude each other, so the order does not matter here.)
//   5. `\s+(?!\S)`: c is White_Space and R is the longest run of White_Space
//      from c: all of R if R reaches the end of the text; else R less its
//      last code point, if R has two or more (greedy \s+ backs off one code
//      point so that the lookahead sees White_Space, not the \S after R).
//   6. `\s+`: R, here always a single code point followed by \S.
//
// The text is one segment: with special tokens allowed, tiktoken runs the
// regex on the text between two specials on its own, so "end of text" in 5.
// is the end of that segment.
#ifndef LITATTN_PRETOKENIZE_H
#define LITATTN_PRETOKENIZE_H

#include <stddef.h>

// The end of the pre-token that starts at byte i of s[0..len), i < len; s
// must be well-formed UTF-8 (utf8_check) and i at a code point boundary.
size_t pretokenize_next(const unsigned char *s, size_t len, size_t i);

#endif
