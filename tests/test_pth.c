// test_pth.c: unit / pth, the .pth reader and writer (lib/io/pth.h) over
// the cases of tools/cases/pth_cases.py (fixtures/pth/cases.tsv).
//
//   test_pth CASES_DIR               every case: each good file read bit for bit as
//                                    torch 1.13 saved it (NAME.txt, NAME.bin), written
//                                    again and read back; each bad file refused in one
//                                    line naming the file and containing the case's words
//   test_pth --copy IN.pth OUT.pth   reads IN, writes OUT (the torch round trip,
//                                    tools/cases/pth_roundtrip.py)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pth.h"
#include "tensor.h"

static int failures;

static void failf(const char *name, const char *msg, const char *detail) {
    printf("FAIL %s: %s%s%s\n", name, msg, detail ? ": " : "", detail ? detail : "");
    failures++;
}

// Compares sd with NAME.txt (keys, ranks, sizes) and NAME.bin (the values).
static int compare(const char *dir, const char *name, const PthStateDict *sd, const char *what) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.txt", dir, name);
    FILE *txt = fopen(p, "r");
    snprintf(p, sizeof p, "%s/%s.bin", dir, name);
    FILE *bin = fopen(p, "rb");
    if (!txt || !bin) {
        failf(name, "cannot open its .txt or .bin", p);
        if (txt) fclose(txt);
        if (bin) fclose(bin);
        return 0;
    }
    char line[2048];
    int i = 0, ok = 1;
    while (ok && fgets(line, sizeof line, txt)) {
        char key[1100];
        int ndim, dims[8] = {0}, off = 0;
        if (sscanf(line, "%1099s %d%n", key, &ndim, &off) != 2) break;
        for (int d = 0; d < ndim; d++) {
            int k = 0;
            sscanf(line + off, "%d%n", &dims[d], &k);
            off += k;
        }
        if (i >= sd->n) {
            failf(name, what, "fewer keys than torch saved");
            ok = 0;
            break;
        }
        if (strcmp(sd->keys[i], key) != 0) {
            failf(name, what, "a key differs or is out of order");
            printf("    key %d: torch '%s', read '%s'\n", i, key, sd->keys[i]);
            ok = 0;
            break;
        }
        Tensor t = sd->tensors[i];
        int same = t.ndim == ndim;
        for (int d = 0; same && d < ndim; d++) same = t.shape[d] == dims[d];
        if (!same) {
            failf(name, what, "a shape differs");
            printf("    key '%s'\n", key);
            ok = 0;
            break;
        }
        long n = numel(t);
        float *want = malloc((size_t)n * 4 + 4);
        if (!want || fread(want, 4, (size_t)n, bin) != (size_t)n) {
            failf(name, ".bin shorter than its .txt", key);
            free(want);
            ok = 0;
            break;
        }
        if (n && memcmp(want, t.data, (size_t)n * 4) != 0) {
            failf(name, what, "values differ in their bits");
            printf("    key '%s'\n", key);
            ok = 0;
        }
        free(want);
        i++;
    }
    if (ok && i != sd->n) {
        failf(name, what, "more keys than torch saved");
        ok = 0;
    }
    fclose(txt);
    fclose(bin);
    return ok;
}

static void good(const char *dir, const char *name) {
    char p[4096], err[PTH_ERR_LEN];
    snprintf(p, sizeof p, "%s/%s.pth", dir, name);
    PthStateDict sd;
    if (!pth_load(p, &sd, err, sizeof err)) {
        failf(name, "refused", err);
        return;
    }
    int ok = compare(dir, name, &sd, "read");
    // Written by the C and read again: the same keys, shapes and bits.
    char out[] = "/tmp/litattn-test-pth.XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0) {
        failf(name, "cannot make a temporary file", NULL);
        pth_state_dict_free(&sd);
        return;
    }
    close(fd);
    PthStateDict again;
    if (!pth_save(out, &sd, err, sizeof err)) {
        failf(name, "write", err);
        ok = 0;
    } else if (!pth_load(out, &again, err, sizeof err)) {
        failf(name, "its copy refused", err);
        ok = 0;
    } else {
        ok = compare(dir, name, &again, "written and read again") && ok;
        pth_state_dict_free(&again);
    }
    unlink(out);
    int sd_n = sd.n;
    pth_state_dict_free(&sd);
    if (ok) printf("ok   %s: %d tensors bit for bit, written and read again\n", name, sd_n);
}

static void bad(const char *dir, const char *name, const char *words) {
    char p[4096], err[PTH_ERR_LEN];
    snprintf(p, sizeof p, "%s/%s.pth", dir, name);
    PthStateDict sd;
    memset(err, 0, sizeof err);
    if (pth_load(p, &sd, err, sizeof err)) {
        failf(name, "accepted", "expected a refusal");
        pth_state_dict_free(&sd);
        return;
    }
    if (sd.n != 0 || sd.keys || sd.tensors) failf(name, "a refusal left a state_dict behind", NULL);
    if (strncmp(err, p, strlen(p)) != 0) failf(name, "the error does not start with the file's path", err);
    else if (strchr(err, '\n')) failf(name, "the error is more than one line", err);
    else if (!strstr(err, "expected") || !strstr(err, "found")) failf(name, "the error does not say expected and found", err);
    else if (!strstr(err, words)) {
        failf(name, "the error lacks the case's words", err);
        printf("    wanted: %s\n", words);
    } else
        printf("ok   %s: %s\n", name, err);
}

// A storage of 4 MiB, past the size that is read with pread and its CRC-32
// computed a chunk at a time (lib/io/pth.c): written, read back bit for bit,
// then refused with one bit flipped in its data.
static void large(void) {
    const char *name = "large (4 MiB storage)";
    char out[] = "/tmp/litattn-test-pth-large.XXXXXX", err[PTH_ERR_LEN];
    int fd = mkstemp(out);
    if (fd < 0) {
        failf(name, "cannot make a temporary file", NULL);
        return;
    }
    close(fd);
    Tensor t = tensor_empty(SIZE(1024, 1024));
    for (long i = 0; i < numel(t); i++) t.data[i] = (float)i * 0.5f - 1000.0f;
    char *key = "w";
    PthStateDict sd = {.n = 1, .keys = &key, .tensors = &t}, back;
    if (!pth_save(out, &sd, err, sizeof err)) {
        failf(name, "write", err);
    } else if (!pth_load(out, &back, err, sizeof err)) {
        failf(name, "refused", err);
    } else {
        if (back.n != 1 || strcmp(back.keys[0], "w") || numel(back.tensors[0]) != numel(t) ||
            memcmp(back.tensors[0].data, t.data, (size_t)numel(t) * 4))
            failf(name, "read back", "another key, shape or bits");
        else
            printf("ok   %s: written and read back bit for bit\n", name);
        pth_state_dict_free(&back);
        // One bit flipped in the middle of the data.
        FILE *f = fopen(out, "r+b");
        unsigned char c = 0;
        if (!f || fseek(f, 2L << 20, SEEK_SET) || fread(&c, 1, 1, f) != 1 || fseek(f, 2L << 20, SEEK_SET) ||
            (c ^= 0x10, fwrite(&c, 1, 1, f) != 1)) {
            failf(name, "cannot flip a bit", out);
        } else {
            fclose(f);
            f = NULL;
            if (pth_load(out, &back, err, sizeof err)) {
                failf(name, "a flipped bit accepted", NULL);
                pth_state_dict_free(&back);
            } else if (!strstr(err, "CRC-32")) {
                failf(name, "a flipped bit refused without naming the CRC-32", err);
            } else {
                printf("ok   %s, one bit flipped: %s\n", name, err);
            }
        }
        if (f) fclose(f);
    }
    unlink(out);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--copy") == 0) {
        PthStateDict sd = pth_read(argv[2]);
        pth_write(argv[3], &sd);
        pth_state_dict_free(&sd);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASES_DIR | --copy IN.pth OUT.pth\n", argv[0]);
        return 2;
    }
    char p[4096], line[4096];
    snprintf(p, sizeof p, "%s/cases.tsv", argv[1]);
    FILE *f = fopen(p, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", p);
        return 1;
    }
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || !line[0]) continue;
        char *kind = strtok(line, "\t"), *name = strtok(NULL, "\t"), *words = strtok(NULL, "");
        if (!kind || !name) continue;
        if (strcmp(kind, "good") == 0) good(argv[1], name);
        else if (words) bad(argv[1], name, words);
        else failf(name, "a bad case without its words", NULL);
        tensor_release_all();
        n++;
    }
    fclose(f);
    large();
    tensor_release_all();
    if (n < 20) failf("cases.tsv", "fewer than 20 cases", p);
    printf("%d cases, %d failed\n", n, failures);
    return failures ? 1 : 0;
}
