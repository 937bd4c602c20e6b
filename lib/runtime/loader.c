// loader.c: see loader.h.
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpe.h"
#include "draws.h"
#include "alloc.h"
#include "error.h"
#include "keep.h"
#include "locate.h"
#include "print.h"
#include "utf8.h"

// A file built into the chapter: its bytes, or one line naming what is missing.
static const BuiltinFile *builtin(const Run *run, const char *name, const char *option) {
    const BuiltinFile *f = locate_builtin_file(run->files, name);
    if (!f) die(EXIT_BAD_INPUT, "%s (built in): expected the build to have put it into this program, found none (%s "
                "FILE reads one)", name, option);
    return f;
}

void loader_end(Run *run) {
    bpe_free(run->loader.bpe);
    free(run->loader.text);
    run->loader.bpe = NULL, run->loader.text = NULL;
}

static const char *kind_of(mode_t mode) {
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" : "not a regular file";
}

// The file's bytes: a regular file of at most LOADER_MAX_TEXT_BYTES, opened
// without blocking (a FIFO is refused, not waited for). `option` and `what`
// say which (--text: "UTF-8 text"; --vocab: "a tiktoken vocabulary").
static char *read_file(const char *path, const char *shown, const char *option, const char *what, size_t *len) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        die(EXIT_BAD_INPUT, "%s: %s: expected a readable file of %s, found %s", shown, option, what,
            e == ENOENT ? "no such file" : e == EACCES ? "a file this user may not read (permission denied)"
                                                      : strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        die(EXIT_BAD_INPUT, "%s: %s: expected a regular file of %s, found %s", shown, option, what,
            kind_of(st.st_mode));
    }
    if ((unsigned long long)st.st_size > LOADER_MAX_TEXT_BYTES) {
        close(fd);
        die(EXIT_BAD_INPUT, "%s: %s: expected at most %zu bytes (64 MiB) of %s, found %lld bytes", shown, option,
            LOADER_MAX_TEXT_BYTES, what, (long long)st.st_size);
    }
    // One byte more than the limit is asked for: a file that grew is caught.
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = xmalloc(cap + 1, "the text read");
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf), close(fd);
            die(EXIT_BAD_INPUT, "%s: %s: expected a readable file of %s, found a read error (%s)", shown, option,
                what, e == EISDIR ? "a directory" : strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n == cap) {
            if (n > LOADER_MAX_TEXT_BYTES) {
                free(buf), close(fd);
                die(EXIT_BAD_INPUT, "%s: %s: expected at most %zu bytes (64 MiB) of %s, found more", shown, option,
                    LOADER_MAX_TEXT_BYTES, what);
            }
            cap = cap * 2 > LOADER_MAX_TEXT_BYTES + 1 ? LOADER_MAX_TEXT_BYTES + 1 : cap * 2;
            buf = xrealloc(buf, cap + 1, "the text read");
        }
    }
    close(fd);
    *len = n;
    return buf;
}

// Text mode's universal newlines: "\r\n" and a lone "\r" read as "\n".
static size_t translate_newlines(char *s, size_t n) {
    size_t w = 0;
    for (size_t r = 0; r < n; r++) {
        if (s[r] == '\r') {
            s[w++] = '\n';
            if (r + 1 < n && s[r + 1] == '\n') r++;
        } else {
            s[w++] = s[r];
        }
    }
    return w;
}

Text read_text(Run *run, const char *book_file) {
    const char *text_path = run->opt.text;
    char shown[4200];
    size_t n = 0;
    char *bytes;
    if (text_path) {
        text_escape(shown, sizeof shown, text_path);
        bytes = read_file(text_path, shown, "--text", "UTF-8 text", &n);
        print_note("# raw_text read from --text here; the book reads", book_file);
    } else if (fixture_has_attr(run->fixture, "text")) {
        // A sweep configuration's own text, at most 64 KiB (fixture.h).
        char err[FIXTURE_ERR_LEN];
        size_t cap = 64 * 1024 + 1;
        bytes = xmalloc(cap, "the fixture's text");
        if (!fixture_attr_string(run->fixture, "text", bytes, cap, err)) free(bytes), die(EXIT_BAD_INPUT, "%s", err);
        n = strlen(bytes);
        snprintf(shown, sizeof shown, "%s: attribute 'text'", error_input());
        char note[160];
        snprintf(note, sizeof note, "# raw_text is the fixture's own text here (%zu bytes); the book reads", n);
        print_note(note, book_file);
    } else {
        // The book's file, built into the chapter (its copy in fixtures/gpt2/).
        const BuiltinFile *f = builtin(run, book_file, "--text");
        snprintf(shown, sizeof shown, "%s (built in)", book_file);
        bytes = xmalloc(f->size + 1, "the built-in text");
        memcpy(bytes, f->bytes, f->size);
        n = f->size;
    }
    size_t bad, bad_end;
    if (!utf8_check((const unsigned char *)bytes, n, &bad, &bad_end)) {
        unsigned byte = (unsigned char)bytes[bad];
        free(bytes);
        die(EXIT_BAD_INPUT, "%s: expected UTF-8 text (the notebook opens it with encoding=\"utf-8\"), found byte "
            "0x%02x at byte offset %zu that is not UTF-8", shown, byte, bad);
    }
    n = translate_newlines(bytes, n);
    free(run->loader.text);
    run->loader.text = bytes;
    snprintf(run->loader.source, sizeof run->loader.source, "%s", shown);
    return (Text){bytes, n, run->loader.source};
}

Tokenizer tiktoken_get_encoding(Run *run, const char *name) {
    if (strcmp(name, "gpt2") != 0) die_internal("tiktoken.get_encoding('%s'): only gpt2 is here", name);
    const char *vocab_path = run->opt.vocab;
    Bpe **bpe = &run->loader.bpe;
    if (!*bpe) {
        // --vocab FILE, read as --text is (a regular file, at most 64 MiB), or the copy built in;
        // then parsed, in one place: its out of memory is exit 3, whichever it was.
        char err[512], shown[4200];
        size_t n = 0;
        char *read = NULL;
        const void *bytes;
        if (vocab_path) {
            text_escape(shown, sizeof shown, vocab_path);
            bytes = read = read_file(vocab_path, shown, "--vocab", "a tiktoken vocabulary", &n);
        } else {
            const BuiltinFile *f = builtin(run, "gpt2.tiktoken", "--vocab");
            snprintf(shown, sizeof shown, "gpt2.tiktoken (built in)");
            bytes = f->bytes, n = f->size;
        }
        *bpe = bpe_load_mem(bytes, n, err, sizeof err);
        free(read);
        if (!*bpe && !strcmp(err, bpe_status_str(BPE_E_NOMEM))) die_oom(0, "the vocabulary");
        if (!*bpe)
            die(EXIT_BAD_INPUT, "%s: %sexpected GPT-2's vocabulary as tiktoken writes it (\"<base64> <rank>\" lines, "
                "%u tokens), found %s", shown, vocab_path ? "--vocab: " : "", BPE_GPT2_N_RANKS, err);
    }
    return (Tokenizer){*bpe};
}

// The ids of `text` with <|endoftext|> allowed (id 50256), made once per
// text: the notebook encodes its text twice (In [2]'s encoded_text and the
// dataset's token_ids), and both are these ids wherever tiktoken's encode()
// does not raise, that is wherever the text holds no <|endoftext|>.
static LongTensor allowed_ids(Run *run, Tokenizer tok, Text text) {
    if (run->loader.ids_bytes == text.bytes && run->loader.ids_len == text.len) return run->loader.ids;
    BpeIds ids = {0};
    size_t where;
    BpeStatus st = bpe_encode(tok.bpe, text.bytes, text.len, BPE_SPECIAL_ALLOW, &ids, &where);
    if (st == BPE_E_NOMEM) bpe_ids_free(&ids), die_oom(0, "the text's token ids");
    if (st != BPE_OK) die(EXIT_BAD_INPUT, "%s: cannot tokenize the text: %s", text.source, bpe_status_str(st));
    if (ids.len > (size_t)TENSOR_MAX_NUMEL)
        bpe_ids_free(&ids), die(EXIT_BAD_INPUT, "%s: expected at most 2^26 tokens, found %zu", text.source, ids.len);
    LongTensor t = long_tensor_empty(SIZE((int)ids.len));
    for (size_t i = 0; i < ids.len; i++) t.data[i] = ids.ids[i];
    bpe_ids_free(&ids);
    run->loader.ids_bytes = text.bytes, run->loader.ids_len = text.len, run->loader.ids = t;
    return t;
}

LongTensor tokenizer_encode(Run *run, Tokenizer tokenizer, Text text) {
    // tiktoken's encode(text) raises ValueError at the first <|endoftext|>.
    static const char special[] = BPE_ENDOFTEXT_TEXT;
    const size_t k = sizeof special - 1;
    for (size_t i = 0; i + k <= text.len; i++) {
        if (text.bytes[i] != '<' || memcmp(text.bytes + i, special, k) != 0) continue;
        char note[200];
        snprintf(note, sizeof note, "tokenizer.encode(raw_text) raises ValueError here: the text holds "
                 "<|endoftext|> at byte %zu; going on with allowed_special={'<|endoftext|>'}", i);
        print_note("#", note);
        break;
    }
    return allowed_ids(run, tokenizer, text);
}

DataLoader create_dataloader(Run *run, Text txt, int batch_size, int max_length, int stride, bool shuffle) {
    // tokenizer = tiktoken.get_encoding("gpt2")
    Tokenizer tokenizer = tiktoken_get_encoding(run, "gpt2");
    // token_ids = tokenizer.encode(txt, allowed_special={'<|endoftext|>'})
    LongTensor token_ids = allowed_ids(run, tokenizer, txt);
    keep_long(run, "token_ids", token_ids);
    long n = long_numel(token_ids);
    if (n <= max_length)
        die(EXIT_BAD_INPUT, "%s: expected more than max_length = %d tokens for one window of GPTDatasetV1 "
            "(len(token_ids) > max_length), found %ld token%s", txt.source, max_length, n, n == 1 ? "" : "s");
    run->loader.dataset = gpt_dataset_v1(token_ids.data, n, max_length, stride);
    return data_loader(&run->loader.dataset, batch_size, shuffle, false);
}

void first_batch(Run *run, DataLoader *dataloader, LongTensor *x, LongTensor *y) {
    TorchGenerator *g = default_generator(run, "the DataLoader's shuffle");
    data_loader_iter(dataloader, g);
    if (!data_loader_next(dataloader, g, x, y)) die(EXIT_BAD_INPUT, "the DataLoader gave no batch");
}
