// bench_neighbour: a chapter's whole-process time on a quiet machine and
// right after a busy neighbour, side by side (figures only, never a failure).
//
//   bench_neighbour CHAPTER NEIGHBOUR [PYTHON BENCH_TORCH_PY]
//
// Runs CHAPTER --seed 123 --threads 1 (Exercise 3.3's GPT-2-size forward)
// in rounds: alone, after NEIGHBOUR (tests/neighbour.c: touches and frees
// 8 GiB), and after a torch process (tools/bench/bench_torch.py --runs 1), where
// torch imports. Prints the median wall and CPU time of the chapter's runs
// in each setting, and each against the quiet one: the huge pages a chapter
// asks for (lib/pages.c) must not make it wait while the kernel compacts
// memory a neighbour left behind.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { ROUNDS = 5 };

typedef struct {
    const char *label;
    char *const *neighbour;  // NULL: none
    double wall, cpu;
    int ok;
} Setting;

static void run_setting(const char *chapter, Setting *s) {
    double wall[ROUNDS], cpu[ROUNDS];
    int n = 0;
    for (int i = 0; i < ROUNDS; i++) {
        RunResult r;
        if (s->neighbour) {
            if (!run_program(s->neighbour, 600, &r) || r.exit_code != 0) {
                printf("  %s: the neighbour %s did not run (exit %d)\n", s->label, s->neighbour[0], r.exit_code);
                run_result_free(&r);
                return;
            }
            run_result_free(&r);
        }
        char *argv[] = {(char *)chapter, "--seed", "123", "--threads", "1", NULL};
        if (!run_program(argv, 120, &r) || r.exit_code != 0) {
            printf("  %s: the chapter failed (exit %d)\n", s->label, r.exit_code);
            run_result_free(&r);
            return;
        }
        wall[n] = r.seconds, cpu[n] = r.cpu_seconds, n++;
        run_result_free(&r);
    }
    s->wall = harness_median(wall, n), s->cpu = harness_median(cpu, n), s->ok = 1;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: bench_neighbour CHAPTER NEIGHBOUR [PYTHON BENCH_TORCH_PY]\n");
        return 2;
    }
    char *filler[] = {argv[2], "8", NULL};
    char *torch[] = {argc == 5 ? argv[3] : NULL, argc == 5 ? argv[4] : NULL, "--runs", "1", NULL};
    Setting settings[] = {
        {"quiet", NULL, 0, 0, 0},
        {"after 8 GiB touched and freed", filler, 0, 0, 0},
        {"after a torch forward", argc == 5 ? torch : NULL, 0, 0, 0},
    };
    int n = argc == 5 ? 3 : 2;
    FILE *defrag = fopen("/sys/kernel/mm/transparent_hugepage/defrag", "r");
    char mode[128] = "(no THP)";
    if (defrag && fgets(mode, sizeof mode, defrag)) mode[strcspn(mode, "\n")] = '\0';
    if (defrag) fclose(defrag);
    printf("Exercise 3.3's forward (%s --seed 123 --threads 1), whole process, median of %d runs;\n"
           "THP defrag: %s\n", argv[1], ROUNDS, mode);
    printf("  %-32s %10s %10s %12s\n", "setting", "wall s", "CPU s", "wall/quiet");
    for (int i = 0; i < n; i++) {
        run_setting(argv[1], &settings[i]);
        if (!settings[i].ok) continue;
        printf("  %-32s %10.3f %10.3f %12.2f\n", settings[i].label, settings[i].wall, settings[i].cpu,
               settings[0].ok ? settings[i].wall / settings[0].wall : 0.0);
    }
    if (argc != 5) printf("  (no torch neighbour: give PYTHON and tools/bench/bench_torch.py)\n");
    return 0;
}
