// neighbour: a busy neighbour for tests/bench_neighbour.c. Touches every
// page of N GiB (default 8), then frees them and exits: what a process that
// used and freed a lot of memory leaves the kernel with.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    const long gib = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
    if (gib < 1 || gib > 64) {
        fprintf(stderr, "usage: neighbour [GIB (1 to 64)]\n");
        return 2;
    }
    const size_t bytes = (size_t)gib << 30;
    volatile char *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "neighbour: cannot allocate %ld GiB\n", gib);
        return 1;
    }
    for (size_t i = 0; i < bytes; i += 4096) p[i] = (char)i;
    free((void *)p);
    return 0;
}
