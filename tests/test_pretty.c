// test_pretty.c: lib/runtime/pretty.c against what IPython displays for a
// state_dict.
//
// usage: test_pretty fixtures/pretty_cases.txt
//
// Each case of the file (written by tools/cases/pretty_cases.py with Debian's
// IPython and torch 1.13) is an OrderedDict of float32 tensors, given by
// their bits, and IPython.lib.pretty.pretty() of it. state_dict_pretty()
// must give the same text, byte for byte (plus the newline the cell prints).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pretty.h"
#include "strbuf.h"
#include "tensor.h"

static int bad_line(const char *path, int lineno, const char *what) {
    fprintf(stderr, "%s:%d: expected %s\n", path, lineno, what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_pretty fixtures/pretty_cases.txt\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char line[1 << 16];
    char name[128] = "";
    StateDict sd = {0};
    StrBuf want = {0};
    int lineno = 0, cases = 0, failures = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || !line[0]) continue;
        if (!strncmp(line, "case ", 5)) {
            snprintf(name, sizeof name, "%.100s", line + 5);
            sd = (StateDict){0};
            sb_clear(&want);
        } else if (!strncmp(line, "entry ", 6)) {
            if (sd.n == STATE_DICT_MAX) return bad_line(argv[1], lineno, "fewer entries");
            StateDictEntry *e = &sd.entry[sd.n++];
            char *save = NULL, *tok = strtok_r(line + 6, " ", &save);
            snprintf(e->key, sizeof e->key, "%.60s", tok ? tok : "");
            tok = strtok_r(NULL, " ", &save);
            Size s = {.ndim = tok ? atoi(tok) : -1};
            if (s.ndim < 0 || s.ndim > 4) return bad_line(argv[1], lineno, "a rank of 0 to 4");
            for (int d = 0; d < s.ndim; d++) {
                tok = strtok_r(NULL, " ", &save);
                if (!tok) return bad_line(argv[1], lineno, "the shape");
                s.dims[d] = atoi(tok);
            }
            e->value = s.ndim ? tensor_empty(s) : tensor_scalar(0.0f);
            for (long i = 0; i < numel(e->value); i++) {
                tok = strtok_r(NULL, " ", &save);
                if (!tok) return bad_line(argv[1], lineno, "a value's bits for every element");
                uint32_t bits = (uint32_t)strtoul(tok, NULL, 16);
                memcpy(&e->value.data[i], &bits, sizeof bits);
            }
        } else if (!strncmp(line, "text", 4)) {
            sb_puts(&want, line[4] ? line + 5 : "");
            sb_putc(&want, '\n');
        } else if (!strcmp(line, "end")) {
            char *got = state_dict_pretty(&sd);
            cases++;
            if (strcmp(got, sb_str(&want))) {
                failures++;
                printf("FAIL %s\n  IPython:\n%s  ours:\n%s", name, sb_str(&want), got);
            } else {
                printf("ok   %s\n", name);
            }
            free(got);
        } else {
            return bad_line(argv[1], lineno, "case, entry, text or end");
        }
    }
    fclose(f);
    sb_free(&want);
    printf("%d of %d cases as IPython displays them\n", cases - failures, cases);
    return failures || !cases ? 1 : 0;
}
