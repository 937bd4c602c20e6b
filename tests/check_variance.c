// check_variance: the scaling-rationale chapter's variance demo against
// theory (transcript 003, In [16]).
//
// For q, k with independent standard normal entries, x = q . k is a sum of
// dim independent products z = q_i k_i with E z = 0, Var z = 1 and
// E z^4 = (E q^4)^2 = 9. So Var x = dim, and E x^4 = 9 dim + 3 dim (dim - 1)
// = 3 dim^2 + 6 dim. The sample variance of n = 1000 trials then has
// standard deviation about sqrt((E x^4 - dim^2) / n) = sqrt((2 dim^2 + 6 dim) / n).
// The test allows 5 of those standard deviations (a false alarm chance below
// 1e-6 for any seed), relative to the expected value dim before scaling and 1
// after: 5 * sqrt((2 + 6 / dim) / n).
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "fixture.h"
#include "harness.h"

static int failures;

static double read_scalar(Fixture *dump, const char *name) {
    char err[FIXTURE_ERR_LEN];
    Tensor t;
    if (!fixture_read(dump, name, SIZE_SCALAR, &t, err)) {
        printf("FAIL %s\n", err);
        failures++;
        return NAN;
    }
    return t.data[0];
}

static void check(const char *what, double got, double want, double tolerance) {
    int ok = fabs(got - want) <= tolerance;
    printf("%s %-28s %10.4f, expected %g +- %.4f\n", ok ? "ok  " : "FAIL", what, got, want, tolerance);
    failures += !ok;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: check_variance CHAPTER\n");
        return 2;
    }
    char dump_path[512], err[FIXTURE_ERR_LEN];
    temp_path(dump_path, sizeof dump_path, "variance");
    char *run_argv[] = {argv[1], "--dump", dump_path, NULL};
    RunResult run;
    if (!run_program(run_argv, RUN_LIMIT_SECONDS, &run) || run.exit_code != 0) {
        printf("FAIL %s exited %d\n", argv[1], run.exit_code);
        return 1;
    }
    Fixture *dump = fixture_open(dump_path, NULL, err);
    if (!dump) {
        printf("FAIL %s\n", err);
        return 1;
    }
    const int n = 1000, dims[] = {5, 100};
    for (int i = 0; i < 2; i++) {
        int dim = dims[i];
        char before[64], after[64];
        snprintf(before, sizeof before, "variance_before_%d", dim);
        snprintf(after, sizeof after, "variance_after_%d", dim);
        double sd_rel = sqrt((2.0 + 6.0 / dim) / n);
        check(before, read_scalar(dump, before), dim, 5 * sd_rel * dim);
        check(after, read_scalar(dump, after), 1.0, 5 * sd_rel);
    }
    fixture_close(dump);
    unlink(dump_path);
    run_result_free(&run);
    tensor_release_all();
    return failures ? 1 : 0;
}
