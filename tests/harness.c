// harness.c: spawning chapters for the test drivers.
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "strbuf.h"


int run_program(char *const argv[], double limit, RunResult *res) {
    int out_pipe[2], err_pipe[2];
    memset(res, 0, sizeof *res);
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        dup2(out_pipe[1], STDOUT_FILENO);
        dup2(err_pipe[1], STDERR_FILENO);
        close(out_pipe[0]), close(out_pipe[1]), close(err_pipe[0]), close(err_pipe[1]);
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    // Read both pipes as they fill, so neither can block the child.
    StrBuf out = {0}, err = {0};
    sb_puts(&out, "");
    sb_puts(&err, "");
    struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double left = limit - ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        if (left <= 0) {
            kill(pid, SIGKILL);
            res->timed_out = 1;
            for (int i = 0; i < 2; i++)
                if (fds[i].fd >= 0) close(fds[i].fd);
            break;
        }
        int ready = poll(fds, 2, (int)(left * 1000) + 1);
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char chunk[8192];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                sb_put(i == 0 ? &out : &err, chunk, (size_t)n);
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    res->out = sb_take(&out);
    res->err = sb_take(&err);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return 1;
}

void run_result_free(RunResult *res) {
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}

int fixture_seed_args(const char *path, const char *group, SeedArgs *out) {
    char err[FIXTURE_ERR_LEN];
    Fixture *fx = fixture_open(path, group, err);
    if (!fx) {
        fprintf(stderr, "%s\n", err);
        return 0;
    }
    memset(out, 0, sizeof *out);
    int ok = 1, texts = 0, seeds = 0;
    for (int i = 0; ok && i < fixture_attr_count(fx) && texts < 14; i++) {
        const char *name = fixture_attr_name(fx, i);
        size_t len = strlen(name);
        int main_site = !strcmp(name, "seed");
        if (!main_site && (len < 6 || strcmp(name + len - 5, ".seed"))) continue;
        char value[64];
        if (!(ok = fixture_attr_string(fx, name, value, sizeof value, err))) break;
        if (main_site) snprintf(out->text[texts], sizeof out->text[0], "%s", value);
        else snprintf(out->text[texts], sizeof out->text[0], "%.*s=%s", (int)(len - 5), name, value);
        out->argv[out->n++] = "--seed";
        out->argv[out->n++] = out->text[texts++];
        seeds++;
    }
    long long k = 0;
    ok = ok && (!fixture_has_attr(fx, "skip") || fixture_attr_int(fx, "skip", &k, err));
    if (ok && !seeds) snprintf(err, sizeof err, "%s: expected a 'seed' attribute, found none", fixture_path(fx)), ok = 0;
    if (!ok) fprintf(stderr, "%s\n", err);
    snprintf(out->text[texts], sizeof out->text[0], "%lld", k);
    out->argv[out->n++] = "--skip";
    out->argv[out->n++] = out->text[texts];
    fixture_close(fx);
    return ok;
}

void temp_path(char *buf, size_t len, const char *tag) {
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/litattn-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag);
    int fd = mkstemp(buf);
    if (fd < 0) {
        fprintf(stderr, "cannot create a scratch file %s: %s\n", buf, strerror(errno));
        exit(1);
    }
    close(fd);
}
