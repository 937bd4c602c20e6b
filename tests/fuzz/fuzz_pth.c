// fuzz_pth.c: libFuzzer over the .pth reader (lib/io/pth.c) and the
// state_dict pickle reader under it (lib/io/torch_pickle.c).
//
// The input bytes are read twice: as a pickle (torch_pickle_read, so that
// mutations reach the opcodes without first breaking a zip's CRC-32), with
// no key and with the key "model_state_dict" (a checkpoint's); and as a
// whole .pth file, written to one scratch file per process (minizip writes
// files by name). Besides the sanitizers, every call is checked against the
// headers' contracts: a failure is one non-empty line (the file's path
// first, for pth_load) and leaves nothing behind; the pickle reader holds
// no more than TORCH_PICKLE_MAX_BYTES of the input's length, refused or not;
// a success gives tensors inside their declared shapes, which pth_save
// writes and pth_load reads back with the same keys and bits (every 16th
// accepted input).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pth.h"
#include "tensor.h"
#include "torch_pickle.h"

static char scratch[4096], copy[4096];

static void remove_scratch(void) {
    if (scratch[0]) unlink(scratch);
    if (copy[0]) unlink(copy);
}

static void broken(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_pth: invariant broken: %s: %s\n", what, detail ? detail : "");
    abort();
}

static void check_err(const char *call, const char *err, size_t len, const char *prefix) {
    size_t n = strnlen(err, len);
    if (n == 0) broken(call, "failed with an empty error message");
    if (n == len) broken(call, "error message not NUL-terminated");
    if (strchr(err, '\n')) broken(call, err);
    if (prefix && strncmp(err, prefix, strlen(prefix)) != 0) broken(call, "error does not start with the path");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[PTH_ERR_LEN];
    PickleStateDict pk;
    for (int pass = 0; pass < 2; pass++) {
        const char *key = pass ? "model_state_dict" : NULL;
        memset(err, 0, sizeof err);
        if (torch_pickle_read(data, size, key, &pk, err, sizeof err)) {
            for (int i = 0; i < pk.n_tensors; i++) {
                if (!pk.tensors[i].key) broken("torch_pickle_read", "a tensor without its key");
                if (pk.tensors[i].storage < 0 || pk.tensors[i].storage >= pk.n_storages) broken("torch_pickle_read", "storage index");
                if (pk.tensors[i].ndim < 0 || pk.tensors[i].ndim > TORCH_PICKLE_MAX_DIMS) broken("torch_pickle_read", "rank");
            }
        } else {
            check_err("torch_pickle_read", err, sizeof err, NULL);
            if (pk.n_tensors || pk.tensors || pk.storages) broken("torch_pickle_read", "a refusal left a result");
        }
        if (pk.peak > TORCH_PICKLE_MAX_BYTES(size)) broken("torch_pickle_read", "it held more than its bound");
        torch_pickle_free(&pk);
    }

    if (!scratch[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch, sizeof scratch, "%s/fuzz_pth.%d.pth", tmp && *tmp ? tmp : "/tmp", (int)getpid());
        snprintf(copy, sizeof copy, "%s/fuzz_pth_copy.%d.pth", tmp && *tmp ? tmp : "/tmp", (int)getpid());
        atexit(remove_scratch);
    }
    // A new file each time: ext4 flushes a file truncated and written again
    // when it is closed (auto_da_alloc), which would make the fuzzer wait on the disk.
    unlink(scratch);
    FILE *f = fopen(scratch, "wb");
    if (!f) broken("scratch file", scratch);
    if (size && fwrite(data, 1, size, f) != size) broken("scratch file", "short write");
    fclose(f);

    PthStateDict sd;
    memset(err, 0, sizeof err);
    if (!pth_load(scratch, &sd, err, sizeof err)) {
        check_err("pth_load", err, sizeof err, scratch);
        if (sd.n || sd.keys || sd.tensors) broken("pth_load", "a refusal left a state_dict");
        tensor_release_all();
        return 0;
    }
    for (int i = 0; i < sd.n; i++) {
        long n = numel(sd.tensors[i]);
        for (long k = 0; k < n; k++) {
            volatile float v = sd.tensors[i].data[k];  // ASan checks every value is inside its allocation
            (void)v;
        }
    }
    // The round trip syncs a file to disk: every 16th accepted input, so
    // that the fuzzer's time goes to the readers.
    static unsigned accepted;
    if (accepted++ % 16) {
        pth_state_dict_free(&sd);
        tensor_release_all();
        return 0;
    }
    PthStateDict again;
    if (!pth_save(copy, &sd, err, sizeof err)) broken("pth_save", err);
    if (!pth_load(copy, &again, err, sizeof err)) broken("pth_load of pth_save's file", err);
    if (again.n != sd.n) broken("round trip", "another number of tensors");
    for (int i = 0; i < sd.n; i++) {
        if (strcmp(again.keys[i], sd.keys[i]) != 0) broken("round trip", "another key");
        if (!size_equal(shape(again.tensors[i]), shape(sd.tensors[i]))) broken("round trip", "another shape");
        long n = numel(sd.tensors[i]);
        if (n && memcmp(again.tensors[i].data, sd.tensors[i].data, (size_t)n * 4) != 0) broken("round trip", "other bits");
    }
    pth_state_dict_free(&again);
    pth_state_dict_free(&sd);
    tensor_release_all();
    return 0;
}
