/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/sibling.c -- running a sibling benchmark binary as a child process (sibling.h).
 * Taken out of studies/exp_hardening.c for studies/exp_layout.c.
 */
#include "sibling.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "driver.h"

bool sib_self_dir(char *out, size_t size)
{
    char buf[1024];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash == NULL) {
        return false;
    }
    slash[1] = '\0';
    snprintf(out, size, "%s", buf);
    return true;
}

bool sib_tmpdir(char *out, size_t size, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, size, "%s/rtbench-%s-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", tag);
    return mkdtemp(out) != NULL;
}

void sib_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            char path[1400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                sib_remove_tree(path);
            } else {
                unlink(path);
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

double sib_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Forks and executes exe with argv in its own process group: stdin from /dev/null, stdout to
 * logpath, stderr to a pipe whose read end goes to *errfd. Returns the child's pid, or -1. */
static pid_t spawn_child(const char *exe, const char *const *argv, const char *logpath, int *errfd)
{
    int err[2];
    if (pipe(err) != 0) {
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(err[0]);
        close(err[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
#if defined(__linux__)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(127);
        }
#else
        (void)parent;
#endif
        signal(SIGINT, SIG_DFL);
        int in = open("/dev/null", O_RDONLY);
        int out = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0) {
            _exit(127);
        }
        dup2(in, STDIN_FILENO);
        dup2(out, STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        close(in);
        close(out);
        close(err[0]);
        close(err[1]);
        execv(exe, (char *const *)argv);
        fprintf(stderr, "rtbench: cannot execute %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* either side may win the race; both ask for the same */
    close(err[1]);
    *errfd = err[0];
    return pid;
}

/* Hands each complete line in line[0..*used) to on_line; keeps the unfinished rest at the start
 * of line. */
static void relay_lines(char *line, size_t size, size_t *used, sib_line_fn on_line, void *context)
{
    char *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        if (on_line != NULL) {
            on_line(context, line);
        }
        size_t rest = *used - (size_t)(nl + 1 - line);
        memmove(line, nl + 1, rest + 1u);
        *used = rest;
    }
    if (*used == size - 1u) {
        *used = 0; /* an over-long line: dropped */
    }
}

/* Relays the child's stderr (errfd) until the child exits, forwarding Ctrl-C (drv_stop) to its
 * group as SIGINT and killing the group 5 s later. Returns waitpid's result (<= 0: not reaped),
 * the wait status in *status. */
static pid_t relay_child(pid_t pid, int errfd, sib_line_fn on_line, void *context, int *status)
{
    char line[512];
    size_t used = 0;
    bool eof = false, forwarded = false;
    double forwarded_at = 0.0;
    pid_t done = 0;
    while (done == 0) {
        if (drv_stop && !forwarded) {
            kill(-pid, SIGINT);
            forwarded = true;
            forwarded_at = sib_now_s();
        }
        if (forwarded && sib_now_s() - forwarded_at > 5.0) {
            kill(-pid, SIGKILL);
        }
        if (!eof) {
            struct pollfd pfd = {.fd = errfd, .events = POLLIN};
            int pr = poll(&pfd, 1, 200);
            if (pr > 0) {
                ssize_t n = read(errfd, line + used, sizeof line - 1u - used);
                if (n <= 0) {
                    eof = n == 0 || (errno != EINTR && errno != EAGAIN);
                } else {
                    used += (size_t)n;
                    line[used] = '\0';
                    relay_lines(line, sizeof line, &used, on_line, context);
                }
            }
        } else {
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        }
        done = waitpid(pid, status, WNOHANG);
        if (done < 0 && errno != EINTR) {
            break;
        }
        if (done < 0) {
            done = 0;
        }
    }
    return done;
}

int sib_run(const char *exe, const char *const *argv, const char *stdout_path, sib_line_fn on_line, void *context)
{
    int errfd = -1;
    pid_t pid = spawn_child(exe, argv, stdout_path, &errfd);
    if (pid < 0) {
        return -1;
    }
    int status = 0;
    pid_t done = relay_child(pid, errfd, on_line, context, &status);
    close(errfd);
    if (done <= 0) {
        return -1;
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGINT ? 130 : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

size_t sib_read_csv(const char *dir, const char *name, size_t min_fields, sib_row_fn row, void *context)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char line[2048];
    size_t rows = 0;
    bool header = true;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#') {
            continue;
        }
        if (header) {
            header = false;
            continue;
        }
        line[strcspn(line, "\r\n")] = '\0';
        char *field[32];
        size_t nf = 0;
        for (char *p = line, *tok; nf < 32 && (tok = strsep(&p, ",")) != NULL;) {
            field[nf++] = tok;
        }
        if (nf >= min_fields && row(context, field, nf)) {
            rows++;
        }
    }
    fclose(f);
    return rows;
}
