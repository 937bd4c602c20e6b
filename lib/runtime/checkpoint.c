// checkpoint.c: see checkpoint.h.
#include "checkpoint.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "print.h"
#include "pth.h"

static void path_of(const char *dir, const char *name, char *out, size_t len) {
    if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        die(EXIT_BAD_INPUT, "torch.save: expected a plain file name, found '%s'", name);
    if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
        die(EXIT_BAD_INPUT, "torch.save: %s/%s: expected a path of fewer than %zu bytes", dir, name, len);
}

void torch_save(Run *run, const StateDict *sd, const char *name) {
    char *dir = run->checkpoint.dir;
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp) tmp = "/tmp";
        if ((size_t)snprintf(dir, sizeof run->checkpoint.dir, "%s/litattn.XXXXXX", tmp) >= sizeof run->checkpoint.dir)
            die(EXIT_BAD_INPUT, "$TMPDIR: expected a directory path of fewer than %d bytes", PATH_MAX - 16);
        if (!mkdtemp(dir)) {
            char shown[PATH_MAX];
            snprintf(shown, sizeof shown, "%s", dir);
            dir[0] = '\0';
            die(EXIT_BAD_INPUT, "%s: expected to make a temporary directory for %s, found it cannot be made", shown,
                name);
        }
        char note[300];
        snprintf(note, sizeof note, "%s written to a directory of its own in $TMPDIR (litattn.XXXXXX), "
                 "removed at the end: a chapter leaves nothing in the working directory", name);
        print_note("#", note);
    }
    char path[PATH_MAX];
    path_of(dir, name, path, sizeof path);
    // The state_dict's tensors as pth writes them: its keys, in order.
    char *keys[STATE_DICT_MAX];
    Tensor tensors[STATE_DICT_MAX];
    for (int i = 0; i < sd->n; i++) keys[i] = (char *)sd->entry[i].key, tensors[i] = sd->entry[i].value;
    PthStateDict out = {.n = sd->n, .keys = keys, .tensors = tensors};
    pth_write(path, &out);
    snprintf(run->checkpoint.file, sizeof run->checkpoint.file, "%s", path);
}

StateDict torch_load(const Run *run, const char *name) {
    char path[PATH_MAX];
    if (!run->checkpoint.dir[0])
        die(EXIT_BAD_INPUT, "torch.load: %s: expected a file torch.save wrote, found none", name);
    path_of(run->checkpoint.dir, name, path, sizeof path);
    PthStateDict in = pth_read(path);
    if (in.n > STATE_DICT_MAX)
        die(EXIT_BAD_INPUT, "%s: expected a state_dict of at most %d entries, found %d", path, STATE_DICT_MAX, in.n);
    StateDict sd = {.n = in.n};
    for (int i = 0; i < in.n; i++) {
        if (strlen(in.keys[i]) >= sizeof sd.entry[i].key)
            die(EXIT_BAD_INPUT, "%s: expected keys of fewer than %zu bytes, found one of %zu", path,
                sizeof sd.entry[i].key, strlen(in.keys[i]));
        snprintf(sd.entry[i].key, sizeof sd.entry[i].key, "%s", in.keys[i]);
        sd.entry[i].value = tensor_copy(in.tensors[i]);
    }
    pth_state_dict_free(&in);
    return sd;
}

void checkpoint_cleanup(Run *run) {
    if (run->checkpoint.file[0]) unlink(run->checkpoint.file), run->checkpoint.file[0] = '\0';
    if (run->checkpoint.dir[0]) rmdir(run->checkpoint.dir), run->checkpoint.dir[0] = '\0';
}
