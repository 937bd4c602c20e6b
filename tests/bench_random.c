// bench_random.c: nn.Embedding(50257, 256)'s 12,865,792 normal draws in C
// (lib/random/normal.h) against torch 1.13 building the same module.
//
// usage: build/tests/bench_random      (meson: `meson test -C build --benchmark --suite benchmark random`)
//
// C: normal_fill on a warm buffer on each path this CPU runs (portable,
// AVX2), and embedding_fill into a fresh malloc'd buffer (as nn.Embedding's
// torch.empty: its first-touch page faults included). torch: the bare
// w.normal_() on a warm tensor and nn.Embedding(50257, 256), in-process
// (/usr/bin/python3, one thread). Best and median of 7 runs, wall time and
// this thread's CPU time (steadier on a shared machine). The C weight's
// SHA-256 is checked against torch's. Figures only: a benchmark never fails.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "harness.h"
#include "init.h"
#include "normal.h"
#include "torch_generator.h"

enum { RUNS = 7 };
#define NUM 50257L
#define DIM 256L

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sha256_hex(const float *v, long n, char hex[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_Digest(v, (size_t)n * sizeof(float), md, &len, EVP_sha256(), NULL);
    for (unsigned i = 0; i < len && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static void report(const char *what, double *wall, double *cpu) {
    double wbest = wall[0], cbest = cpu[0];
    for (int i = 1; i < RUNS; i++) wbest = wall[i] < wbest ? wall[i] : wbest, cbest = cpu[i] < cbest ? cpu[i] : cbest;
    printf("  %-44s wall best %7.1f ms, median %7.1f ms; thread CPU best %7.1f ms\n", what, wbest * 1e3,
           harness_median(wall, RUNS) * 1e3, cbest * 1e3);
}

// torch's side, in one python3 process (given in single quotes to sh: no ' in it);
// prints its lines, then the weight's SHA-256 (last line).
static const char *torch_script =
    "import hashlib, statistics, time, torch, torch.nn as nn\n"
    "torch.set_num_threads(1)\n"
    "w = torch.empty(50257, 256)\n"
    "for label, make in ((\"torch bare w.normal_() (warm tensor)\", lambda: w.normal_()),\n"
    "                    (\"torch nn.Embedding(50257, 256)\", lambda: nn.Embedding(50257, 256))):\n"
    "    wall, cpu = [], []\n"
    "    for _ in range(7):\n"
    "        torch.manual_seed(123)\n"
    "        t0, c0 = time.perf_counter(), time.thread_time()\n"
    "        out = make()\n"
    "        wall.append(time.perf_counter() - t0); cpu.append(time.thread_time() - c0)\n"
    "    print(\"  %-44s wall best %7.1f ms, median %7.1f ms; thread CPU best %7.1f ms\" % (label, min(wall) * 1e3,\n"
    "          statistics.median(wall) * 1e3, min(cpu) * 1e3))\n"
    "print(hashlib.sha256(out.weight.detach().numpy().tobytes()).hexdigest())\n";

int main(void) {
    const long n = NUM * DIM;
    double wall[RUNS], cpu[RUNS];
    TorchGenerator g;
    printf("nn.Embedding(50257, 256): %ld normal draws, seed 123, %d runs each\n", n, RUNS);
    float *warm = malloc((size_t)n * sizeof *warm);
    if (!warm) return 0;
    static const struct {
        NormalPath path;
        const char *name;
    } paths[] = {{NORMAL_PORTABLE, "C normal_fill, portable (warm buffer)"}, {NORMAL_AVX2, "C normal_fill, AVX2 (warm buffer)"}};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (!normal_path_available(paths[p].path)) continue;
        for (int r = 0; r < RUNS; r++) {
            torch_manual_seed(&g, 123);
            const double w = seconds(CLOCK_MONOTONIC), c = seconds(CLOCK_THREAD_CPUTIME_ID);
            normal_fill_with_path(warm, n, 0.0, 1.0, &g, paths[p].path);
            wall[r] = seconds(CLOCK_MONOTONIC) - w, cpu[r] = seconds(CLOCK_THREAD_CPUTIME_ID) - c;
        }
        report(paths[p].name, wall, cpu);
    }
    char c_sha[65] = "", line[256], last[256] = "";
    for (int r = 0; r < RUNS; r++) {
        torch_manual_seed(&g, 123);
        const double w = seconds(CLOCK_MONOTONIC), c = seconds(CLOCK_THREAD_CPUTIME_ID);
        float *fresh = malloc((size_t)n * sizeof *fresh);
        if (!fresh) return 0;
        embedding_fill(fresh, NUM, DIM, -1, &g);
        wall[r] = seconds(CLOCK_MONOTONIC) - w, cpu[r] = seconds(CLOCK_THREAD_CPUTIME_ID) - c;
        if (r == 0) sha256_hex(fresh, n, c_sha);
        free(fresh);
    }
    report("C embedding_fill (fresh malloc'd buffer)", wall, cpu);
    free(warm);
    fflush(stdout);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c '%s' 2>&1", torch_script);
    FILE *py = popen(cmd, "r");
    if (!py) {
        printf("torch: could not run /usr/bin/python3\n");
        return 0;
    }
    while (fgets(line, sizeof line, py)) {
        if (last[0]) fputs(last, stdout);
        snprintf(last, sizeof last, "%s", line);
    }
    const int status = pclose(py);
    last[strcspn(last, "\n")] = '\0';
    if (status != 0) printf("torch: python3 failed: %s\n", last);
    else printf("weights: C and torch SHA-256 %s (%s)\n", strcmp(last, c_sha) == 0 ? "identical" : "DIFFER", c_sha);
    return 0;
}
