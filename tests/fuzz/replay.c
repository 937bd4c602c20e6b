// replay.c: a harness's inputs, replayed without libFuzzer.
//
//   fuzz_pth_replay DIR_OR_FILE...
//
// Linked with one harness (fuzz_*.c) in every build, gcc's and the
// sanitizers' alike, so that each committed seed of tests/fuzz/corpus/ and
// every input a fuzzer once broke on (kept there under its cause's name) is
// a test of the suite: the harness checks its contracts on each input and
// aborts on a broken one. Calls LLVMFuzzerInitialize first when the harness
// has one, then LLVMFuzzerTestOneInput on each file (a directory: each of
// its regular files, in name order). Prints one line per harness; exit 0,
// or 1 when an input cannot be read or none is given.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replayed;

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open: expected a fuzzer input\n", path);
        return 0;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *more = realloc(buf, cap *= 2);
            if (!more) free(buf);
            buf = more;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: expected to read the input, found a read error or no memory\n", path);
        free(buf);
        return 0;
    }
    // Cut to exactly the input's size, so ASan sees a read past its end.
    uint8_t *exact = realloc(buf, n ? n : 1);
    if (!exact) exact = buf;
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    replayed++;
    return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int replay(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: expected a file or a directory of fuzzer inputs, found nothing\n", path);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) return replay_file(path);
    struct dirent **names;
    int n = scandir(path, &names, NULL, by_name), ok = n >= 0;
    for (int i = 0; i < n; i++) {
        char p[4096];
        struct stat e;
        snprintf(p, sizeof p, "%s/%s", path, names[i]->d_name);
        if (stat(p, &e) == 0 && S_ISREG(e.st_mode)) ok = replay_file(p) && ok;
        free(names[i]);
    }
    if (n >= 0) free(names);
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int ok = 1;
    for (int i = 1; i < argc; i++) ok = replay(argv[i]) && ok;
    printf("%s: %d inputs replayed, every contract held\n", argv[0], replayed);
    if (!replayed) fprintf(stderr, "%s: expected at least one input, found none\n", argv[0]);
    return ok && replayed ? 0 : 1;
}
