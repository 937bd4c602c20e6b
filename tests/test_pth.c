// test_pth.c: unit / pth, the .pth reader and writer (lib/io/pth.h) over
// the cases of tools/cases/pth_cases.py (fixtures/pth/cases.tsv).
//
//   test_pth CASES_DIR                     every case: each good file read (with its
//                                          key) bit for bit as torch 1.13 saved it
//                                          (NAME.txt, NAME.bin), written again and read
//                                          back; each bad file refused in one line naming
//                                          the file and containing the case's words; then
//                                          the checks below
//   test_pth --copy IN.pth OUT.pth [KEY]   reads IN (its entry KEY), writes OUT (the
//                                          torch round trip, tools/cases/pth_roundtrip.py;
//                                          the out-of-memory runs below)
//
// The checks after the cases: the pickle reader's memory against its bound
// (torch_pickle.h, TORCH_PICKLE_MAX_BYTES) over pickles of 2^18 opcodes of
// each kind; every byte value of a bool storage; the OS's errors named (a
// file that cannot be read, as root too, and a directory); every allocation
// of a read and a write failed in turn, each exit 3.
#define _GNU_SOURCE  // setresuid, setresgid
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libdeflate.h>

#include "alloc.h"
#include "error.h"
#include "harness.h"
#include "pth.h"
#include "tensor.h"
#include "torch_pickle.h"

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

static void good(const char *dir, const char *name, const char *key) {
    char p[4096], err[PTH_ERR_LEN];
    snprintf(p, sizeof p, "%s/%s.pth", dir, name);
    PthStateDict sd;
    if (!pth_load_select(p, key, &sd, err, sizeof err)) {
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

static void bad(const char *dir, const char *name, const char *key, const char *words) {
    char p[4096], err[PTH_ERR_LEN];
    snprintf(p, sizeof p, "%s/%s.pth", dir, name);
    PthStateDict sd;
    memset(err, 0, sizeof err);
    if (pth_load_select(p, key, &sd, err, sizeof err)) {
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

// --- every byte value of a bool storage --------------------------------------------------
static uint32_t rd32(const unsigned char *b) { return b[0] | b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24; }
static void wr32(unsigned char *b, uint32_t x) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(x >> (8 * i));
}

// NAME.pth holds one bool storage of one byte, 0 (torch.save's). Each value
// v is written into its data and its CRC-32 fields (the central directory's
// and the data descriptor's after the data), which is the file torch.save
// writes for v (tools/cases/pth_cases.py checks it): 0 and 1 read as 0.0 and
// 1.0, every other byte refused, 0x80-0xff too (a signed char would pass them).
static void bool_bytes(const char *dir, const char *name) {
    char p[4096], err[PTH_ERR_LEN];
    snprintf(p, sizeof p, "%s/%s.pth", dir, name);
    FILE *f = fopen(p, "rb");
    unsigned char file[4096];
    size_t n = f ? fread(file, 1, sizeof file, f) : 0;
    if (f) fclose(f);
    // The central directory entry of ".../data/0", and its record's data.
    size_t cd = 0, data = 0;
    for (size_t i = 0; i + 46 < n && !cd; i++)
        if (rd32(file + i) == 0x02014b50) {
            size_t nlen = file[i + 28] | file[i + 29] << 8;
            if (nlen > 7 && i + 46 + nlen <= n && memcmp(file + i + 46 + nlen - 7, "/data/0", 7) == 0) cd = i;
        }
    if (cd) {
        size_t h = rd32(file + cd + 42);
        if (h + 30 < n) data = h + 30 + (file[h + 26] | file[h + 27] << 8) + (file[h + 28] | file[h + 29] << 8);
    }
    if (!cd || !data || data + 9 > n || rd32(file + data + 1) != 0x08074b50) {
        failf(name, "no record data/0 of one byte with a data descriptor", p);
        return;
    }
    char out[] = "/tmp/litattn-test-pth-bool.XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0) {
        failf(name, "cannot make a temporary file", NULL);
        return;
    }
    close(fd);
    int wrong = 0;
    for (int v = 0; v < 256; v++) {
        unsigned char b = (unsigned char)v;
        file[data] = b;
        uint32_t crc = libdeflate_crc32(0, &b, 1);
        wr32(file + cd + 16, crc);
        wr32(file + data + 5, crc);
        f = fopen(out, "wb");
        if (!f || fwrite(file, 1, n, f) != n) wrong++;
        if (f) fclose(f);
        PthStateDict sd;
        int ok = pth_load(out, &sd, err, sizeof err);
        char want[64];
        snprintf(want, sizeof want, "expected bytes 0 or 1, found %d at element 0", v);
        if (v <= 1 && (!ok || sd.n != 1 || numel(sd.tensors[0]) != 1 || sd.tensors[0].data[0] != (float)v)) {
            printf("    byte %d: %s\n", v, ok ? "read as another value" : err);
            wrong++;
        } else if (v > 1 && (ok || !strstr(err, want))) {
            printf("    byte %d: %s\n", v, ok ? "accepted" : err);
            wrong++;
        }
        if (ok) pth_state_dict_free(&sd);
        tensor_release_all();
    }
    unlink(out);
    if (wrong) failf(name, "a bool byte read wrong", NULL);
    else printf("ok   %s: bytes 0 and 1 read as 0.0 and 1.0, the 254 others refused\n", name);
}

// --- the pickle reader's memory -------------------------------------------------------------
// A pickle of `head`, then `body` n times, then `tail`.
static unsigned char *repeat(const char *head, size_t hn, const char *body, size_t bn, size_t n, const char *tail,
                             size_t tn, size_t *len) {
    *len = hn + bn * n + tn;
    unsigned char *b = malloc(*len);
    if (!b) return NULL;
    memcpy(b, head, hn);
    for (size_t i = 0; i < n; i++) memcpy(b + hn + i * bn, body, bn);
    memcpy(b + hn + bn * n, tail, tn);
    return b;
}

#define LIT(s) s, sizeof(s) - 1

// Each pickle of 2^18 opcodes of one kind (and those that grow the memo by
// index, or nest) is read (or refused) holding at most
// TORCH_PICKLE_MAX_BYTES of its length: the reader's own count of what it
// allocates (PickleStateDict.peak).
static void memory_bound(void) {
    const size_t N = 1 << 18;
    struct {
        const char *name;
        unsigned char *pkl;
        size_t len;
    } k[16];
    int nk = 0;
#define CASE(label, head, body, tail) \
    (k[nk].name = label, k[nk].pkl = repeat(LIT(head), LIT(body), N, LIT(tail), &k[nk].len), nk++)
    CASE("TUPLE1", "\x80\x02N", "\x85", ".");
    CASE("NONE SETITEM", "\x80\x02}", "NNs", ".");
    CASE("str SETITEM", "\x80\x02}", "\x8c\x00Ns", ".");
    CASE("SETITEMS", "\x80\x02}(", "\x8c\x00N", "u.");
    CASE("MARK", "\x80\x02", "(", ".");
    CASE("EMPTY_DICT", "\x80\x02", "}", ".");
    CASE("BINPUT", "\x80\x02N", "q\x07", ".");
    CASE("MEMOIZE", "\x80\x04N", "\x94", ".");
    CASE("BINGET (DUP-like growth)", "\x80\x02Nq\x00", "h\x00", ".");
    CASE("nested dicts", "\x80\x02}", "\x8c\x00}", ".");
    CASE("nested tuples", "\x80\x02N", "(N", ".");
    CASE("APPEND", "\x80\x02]", "Na", ".");
    CASE("STACK_GLOBAL refused", "\x80\x04", "\x8c\x00", "\x93.");
#undef CASE
    // The memo grown by index: LONG_BINPUT i for i = 0, 1, 2, ... and, far
    // above the count of PUTs, 4096 * i.
    for (int far = 0; far < 2; far++) {
        size_t len = 3 + 5 * N + 1;
        unsigned char *b = malloc(len);
        if (b) {
            memcpy(b, "\x80\x02N", 3);
            for (size_t i = 0; i < N; i++) {
                b[3 + 5 * i] = 'r';
                wr32(b + 4 + 5 * i, (uint32_t)(far ? 4096 * i + 4095 : i));
            }
            b[len - 1] = '.';
        }
        k[nk].name = far ? "LONG_BINPUT far above the PUTs" : "LONG_BINPUT 0, 1, 2, ...";
        k[nk].pkl = b;
        k[nk++].len = len;
    }
    for (int i = 0; i < nk; i++) {
        if (!k[i].pkl) {
            failf(k[i].name, "no memory for the test's pickle", NULL);
            continue;
        }
        PickleStateDict sd;
        char err[PTH_ERR_LEN] = "";
        unsigned long before = mem_count();
        int ok = torch_pickle_read(k[i].pkl, k[i].len, NULL, &sd, err, sizeof err);
        unsigned long allocations = mem_count() - before;
        size_t peak = sd.peak, bound = TORCH_PICKLE_MAX_BYTES(k[i].len);
        torch_pickle_free(&sd);
        if (allocations > 8) {
            char d[160];
            snprintf(d, sizeof d, "%lu allocations for one read (its arena, memo and result: at most 8)", allocations);
            failf(k[i].name, "the reader's allocations", d);
        } else if (peak == 0 || peak > bound) {
            char d[160];
            snprintf(d, sizeof d, "%zu bytes of pickle held %zu bytes, the bound %zu", k[i].len, peak, bound);
            failf(k[i].name, "the reader's memory", d);
        } else if (!ok && (!err[0] || strchr(err, '\n'))) {
            failf(k[i].name, "refused without one line", err);
        } else {
            printf("ok   memory of %s: %zu bytes of pickle held %zu bytes in %lu allocations (%.2f per byte; bound 8): %s\n",
                   k[i].name, k[i].len, peak, allocations, (double)peak / (double)k[i].len, ok ? "read" : err);
        }
        free(k[i].pkl);
    }
}

// The deflated bomb of the .pth cases (8 MiB of TUPLE1 in a file of 9 KiB)
// read in a child whose address space may grow by only 8 bytes per byte of
// its pickle and 32 MiB (RLIMIT_AS, as `ulimit -v` sets it): refused in one
// line, not out of memory. Not under AddressSanitizer, whose shadow memory
// is address space the limit would count.
static void address_space(const char *dir) {
    const char *name = "tuple1_bomb under RLIMIT_AS";
#if defined(__SANITIZE_ADDRESS__)
    (void)dir;
    printf("ok   %s: not run under AddressSanitizer (its shadow memory is address space); the reader's own count is\n",
           name);
#else
    char p[4096];
    snprintf(p, sizeof p, "%s/tuple1_bomb.pth", dir);
    pid_t pid = fork();
    if (pid == 0) {
        // What the process maps now, from /proc/self/status's VmSize (kB).
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long vm_kb = -1;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "VmSize: %ld kB", &vm_kb) == 1) break;
        if (f) fclose(f);
        if (vm_kb < 0) _exit(10);
        struct rlimit lim;
        lim.rlim_cur = lim.rlim_max = (rlim_t)vm_kb * 1024 + 9 * (8u << 20) + (32u << 20);  // the pickle, 8 per byte of it, 32 MiB
        if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(11);
        PthStateDict sd;
        char err[PTH_ERR_LEN];
        int ok = pth_load(p, &sd, err, sizeof err);
        _exit(ok ? 12 : strstr(err, "found a tuple") ? 0 : 13);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char d[64];
        snprintf(d, sizeof d, "exit %d (3: out of memory)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        failf(name, "not refused within the limit", d);
    } else {
        printf("ok   %s: refused within an address space of its pickle, 8 bytes per byte of it and 32 MiB\n", name);
    }
#endif
}

// --- the OS's errors --------------------------------------------------------------------------
// A file that cannot be read says "permission denied"; a directory, "is a
// directory". Root reads a file of mode 000, so as root the read runs in a
// child that has dropped to user and group nobody (65534); as a user, in
// the process itself. Both ways read the same file of mode 000.
static void os_errors(const char *dir) {
    const char *name = "unreadable file";
    char p[4096], tmp[] = "/tmp/litattn-test-pth-mode000.XXXXXX", err[PTH_ERR_LEN];
    snprintf(p, sizeof p, "%s/linear.pth", dir);
    int fd = mkstemp(tmp);
    FILE *in = fopen(p, "rb");
    char buf[4096];
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in) fclose(in);
    if (fd < 0 || !n || write(fd, buf, n) != (ssize_t)n || fchmod(fd, 0) != 0) {
        failf(name, "cannot make a file of mode 000", tmp);
    } else {
        close(fd);
        fd = -1;
        int pipefd[2];
        if (pipe(pipefd) != 0) {
            failf(name, "no pipe", NULL);
        } else {
            pid_t pid = fork();
            if (pid == 0) {
                close(pipefd[0]);
                if (geteuid() == 0 && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0))
                    snprintf(err, sizeof err, "cannot drop root to nobody: %s", strerror(errno));
                else if (pth_load(tmp, &(PthStateDict){0}, err, sizeof err))
                    snprintf(err, sizeof err, "accepted");
                ssize_t w = write(pipefd[1], err, strlen(err));
                _exit(w < 0);
            }
            close(pipefd[1]);
            ssize_t got = 0, r;
            while (pid > 0 && got < (ssize_t)sizeof err - 1 && (r = read(pipefd[0], err + got, sizeof err - 1 - (size_t)got)) > 0) got += r;
            err[got > 0 ? got : 0] = '\0';
            close(pipefd[0]);
            int status;
            if (pid > 0) waitpid(pid, &status, 0);
            char want[4200];
            snprintf(want, sizeof want, "%s: expected a readable file, found: permission denied", tmp);
            if (strcmp(err, want) != 0) failf(name, "not refused as permission denied", err);
            else printf("ok   %s (%s): %s\n", name, geteuid() == 0 ? "as nobody, dropped from root" : "as this user", err);
        }
    }
    if (fd >= 0) close(fd);
    unlink(tmp);
    PthStateDict sd;
    char want[4200];
    snprintf(want, sizeof want, "%s: expected a regular file (a torch.save archive), found: is a directory", dir);
    if (pth_load(dir, &sd, err, sizeof err)) {
        failf("directory", "accepted", dir);
        pth_state_dict_free(&sd);
    } else if (strcmp(err, want) != 0) {
        failf("directory", "not refused as a directory", err);
    } else {
        printf("ok   directory: %s\n", err);
    }
}

// --- out of memory ------------------------------------------------------------------------------
// `test_pth --copy` reads a file and writes it again. Run with every one of
// its allocations failed in turn (LITATTN_FAIL_ALLOC=n, lib/base/alloc.h),
// each run must exit 3 with one line "out of memory: ...": the reader's
// pickle, its result and the writer's pickle never exit 1 (bad input).
static void out_of_memory(const char *self, const char *dir) {
    // (layouts: storages read through a buffer, views copied out of it)
    const char *files[][2] = {{"linear", NULL}, {"protocol4", NULL}, {"checkpoint", "model_state_dict"}, {"parameters", NULL},
                              {"layouts", NULL}};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char in[4096], out[] = "/tmp/litattn-test-pth-oom.XXXXXX", label[128];
        snprintf(in, sizeof in, "%s/%s.pth", dir, files[f][0]);
        snprintf(label, sizeof label, "out of memory reading and writing %s", files[f][0]);
        int fd = mkstemp(out);
        if (fd < 0) {
            failf(label, "cannot make a temporary file", NULL);
            continue;
        }
        close(fd);
        char *argv[] = {(char *)self, "--copy", in, out, (char *)files[f][1], NULL};
        RunResult res;
        setenv("LITATTN_ALLOC_COUNT", "1", 1);
        int started = run_program(argv, 60, &res);
        unsetenv("LITATTN_ALLOC_COUNT");
        unsigned long count = 0;
        const char *at = started ? strstr(res.err, ": ") : NULL;
        if (!started || res.exit_code != 0 || !at || sscanf(at, ": %lu allocations", &count) != 1 || count < 10) {
            failf(label, "the counting run", started ? res.err : "not started");
            if (started) run_result_free(&res);
            unlink(out);
            continue;
        }
        run_result_free(&res);
        int wrong = 0;
        for (unsigned long n = 1; n <= count; n++) {
            char v[32];
            snprintf(v, sizeof v, "%lu", n);
            setenv("LITATTN_FAIL_ALLOC", v, 1);
            started = run_program(argv, 60, &res);
            unsetenv("LITATTN_FAIL_ALLOC");
            const char *line = started ? strstr(res.err, ": out of memory: expected ") : NULL;
            if (!started || res.exit_code != 3 || !line || strchr(res.err, '\n') != res.err + strlen(res.err) - 1) {
                if (wrong++ < 3) printf("    n=%lu: exit %d: %s", n, started ? res.exit_code : -1, started ? res.err : "not started\n");
            }
            if (started) run_result_free(&res);
        }
        unlink(out);
        if (wrong) failf(label, "an allocation failed without exit 3 and one line", NULL);
        else printf("ok   %s: each of its %lu allocations failed in turn, exit 3 and one line\n", label, count);
    }
}

int main(int argc, char **argv) {
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--copy") == 0) {
        PthStateDict sd;
        char err[PTH_ERR_LEN];
        if (!pth_load_select(argv[2], argc == 5 ? argv[4] : NULL, &sd, err, sizeof err)) die(EXIT_BAD_INPUT, "%s", err);
        pth_write(argv[3], &sd);
        pth_state_dict_free(&sd);
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASES_DIR | --copy IN.pth OUT.pth [KEY]\n", argv[0]);
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
        char *kind = strtok(line, "\t"), *name = strtok(NULL, "\t"), *rest = strtok(NULL, "");
        if (!kind || !name) continue;
        if (strcmp(kind, "good") == 0) {
            good(argv[1], name, rest);
        } else if (strcmp(kind, "bools") == 0) {
            bool_bytes(argv[1], name);
        } else if (strcmp(kind, "badkey") == 0) {
            char *key = rest ? strtok(rest, "\t") : NULL, *words = key ? strtok(NULL, "") : NULL;
            if (words) bad(argv[1], name, key, words);
            else failf(name, "a badkey case without its key and words", NULL);
        } else if (rest) {
            bad(argv[1], name, NULL, rest);
        } else {
            failf(name, "a bad case without its words", NULL);
        }
        tensor_release_all();
        n++;
    }
    fclose(f);
    large();
    tensor_release_all();
    memory_bound();
    address_space(argv[1]);
    os_errors(argv[1]);
    out_of_memory(argv[0], argv[1]);
    if (n < 50) failf("cases.tsv", "fewer than 50 cases", p);
    printf("%d cases, %d failed\n", n, failures);
    return failures ? 1 : 0;
}
