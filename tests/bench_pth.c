// bench_pth.c: reads one .pth file as a chapter would (lib/io/pth.h) and
// prints its tensor count and bytes: the C side of tools/bench/bench_pth.py, which
// times this whole process against torch.load's.
#include <stdio.h>

#include "pth.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.pth\n", argv[0]);
        return 2;
    }
    PthStateDict sd = pth_read(argv[1]);
    long long n = 0;
    for (int i = 0; i < sd.n; i++) n += numel(sd.tensors[i]);
    printf("%d tensors, %lld floats\n", sd.n, n);
    pth_state_dict_free(&sd);
    return 0;
}
