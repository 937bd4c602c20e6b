// loader.h: multihead-attention.ipynb's text and data pipeline (In [2] and
// In [3]), for a chapter: the text read as the notebook reads it, tiktoken's
// GPT-2 encoding (lib/text/bpe.h), GPTDatasetV1 and the shuffling DataLoader
// (lib/text/dataset.h), drawing from the chapter's default generator
// (draws.h), and the token ids kept for --dump.
//
// The text is --text FILE if given, else the fixture's `text` attribute (a
// sweep configuration's own text), else the book's file, built into the
// chapter (fixtures/gpt2/small-text-sample.txt as the build read it). The
// vocabulary is --vocab FILE if given, else GPT-2's, built in likewise
// (fixtures/gpt2/gpt2.tiktoken): the chapter reads no file of its own.
// What is refused, each with one line on stderr and exit 1 (lib/README.md,
// "Limits"): a --text or --vocab path that is missing, unreadable, a
// directory, a FIFO or anything but a regular file; one of more than
// LOADER_MAX_TEXT_BYTES (refused before it is read); a text whose bytes are
// not UTF-8 (the offset Python's UnicodeDecodeError gives); a vocabulary
// that is not GPT-2's in tiktoken's format; and, in create_dataloader, a
// text with too few tokens for one window.
#ifndef LITATTN_LOADER_H
#define LITATTN_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "dataset.h"
#include "run.h"
#include "tensor.h"

// The largest text a chapter reads: 64 MiB (about 16 M tokens, whose int64
// ids take 128 MiB). Past it the chapter stops before reading a byte.
#define LOADER_MAX_TEXT_BYTES ((size_t)64 << 20)

// Each takes the run: --text and --vocab (its options; NULL: the files built
// in, run->files), the fixture, and run->loader, where the text, the
// vocabulary and the dataset are kept. A chapter calls them without the run
// (chapter.h passes its own).
void loader_end(Run *run);  // chapter_end: frees the text and the vocabulary

// raw_text as Python's f.read() returns it: UTF-8, newlines translated as
// text mode does ("\r\n" and "\r" become "\n").
typedef struct {
    const char *bytes;
    size_t len;
    const char *source;  // where it came from, for messages
} Text;

// with open(book_file, "r", encoding="utf-8") as f: raw_text = f.read()
Text read_text(Run *run, const char *book_file);

typedef struct {
    const Bpe *bpe;  // the loaded vocabulary
} Tokenizer;

// tiktoken.get_encoding("gpt2"): --vocab FILE, else the vocabulary built in, loaded once.
Tokenizer tiktoken_get_encoding(Run *run, const char *name);
// tokenizer.encode(text): (n,) int64. Where tiktoken raises (the text holds
// "<|endoftext|>", which encode() refuses without allowed_special), a note
// line says so, and the ids are the dataset's tokenization, which allows it.
LongTensor tokenizer_encode(Run *run, Tokenizer tokenizer, Text text);

// create_dataloader(txt, batch_size, max_length, stride, shuffle):
// GPTDatasetV1(txt, tokenizer, max_length, stride) over
// tokenizer.encode(txt, allowed_special={'<|endoftext|>'}) (kept as
// `token_ids`, int64), then DataLoader(dataset, batch_size, shuffle). A text
// of len(token_ids) <= max_length makes no window (the notebook then fails
// on `input_embeddings`, a NameError): refused in one line.
DataLoader create_dataloader(Run *run, Text txt, int batch_size, int max_length, int stride, bool shuffle);

// for batch in dataloader: x, y = batch ... break: iter(), then the first
// next(), drawing from the default generator.
void first_batch(Run *run, DataLoader *dataloader, LongTensor *x, LongTensor *y);

#endif
