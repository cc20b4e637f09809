/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/trace_record.c -- `rtbench trace record` end to end (doc/traces.md).
 *
 *   trace_record RTBENCH DIR   records `trace_record prog` with RTBENCH into DIR/trace_record.rtt,
 *                              loads it and checks it (the test ctest runs)
 *   trace_record prog          the recorded program: a known sequence of calls (below), 4 threads
 *                              handing blocks to each other, a fork whose child allocates and frees
 *                              a parent's block, then an exec of itself ("exec") that exits 7
 *
 * The check is exact on the calls the program makes itself -- each has a size (or an alignment)
 * nothing else in the process uses, and the check follows every slot to know whose block a free
 * frees -- and structural on the whole stream (libc's own calls are in it too): three streams
 * (the image, its fork child, the exec'd image with the same pid), the exit status passed
 * through, every op kind, alignment and failed flag where expected, the realloc cases, the
 * foreign free of the child, the thread count, and a replay of every stream through its slots in
 * which no slot is freed empty or filled full. Linux x86-64 glibc only (CMake registers it there).
 */
#include <errno.h>
#include <malloc.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "trace.h"

/* ---- the recorded program ------------------------------------------------------------------- */

enum { NTHREADS = 4, PER_THREAD = 500, HANDOFF = 64 };
#define HUGE_REQUEST ((size_t)1 << 62)

static void *volatile sink; /* keeps the compiler from eliding calls */

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static void *queue[HANDOFF];
static size_t q_len;

/* Thread t mallocs PER_THREAD blocks of 3000 + t bytes; every other one goes into a shared queue
 * and is freed by whichever thread takes it (another thread's free, address reuse across
 * threads), the rest it frees itself. The queue is drained at the end. */
static void *worker(void *arg)
{
    size_t t = (size_t)(uintptr_t)arg;
    for (size_t i = 0; i < PER_THREAD; i++) {
        void *p = malloc(3000 + t);
        if (p == NULL) {
            abort();
        }
        memset(p, 1, 16);
        if (i % 2 == 0) {
            free(p);
            continue;
        }
        void *victim = NULL;
        pthread_mutex_lock(&q_lock);
        if (q_len == HANDOFF || (q_len > 0 && i % 3 == 0)) {
            victim = queue[--q_len];
        }
        if (q_len < HANDOFF) {
            queue[q_len++] = p;
            p = NULL;
        }
        pthread_mutex_unlock(&q_lock);
        free(victim);
        free(p);
    }
    return NULL;
}

/* The exec'd image: closes every descriptor it does not know (as daemons and subprocess's
 * close_fds do), then makes enough calls for the log to grow by two windows. */
enum { EXEC_LOOP = 600000 };

static int prog_exec(void)
{
    char *p = malloc(1201);
    p = realloc(p, 1202);
    for (int fd = 3; fd < 1024; fd++) {
        close(fd);
    }
    for (int i = 0; i < EXEC_LOOP; i++) {
        void *q = malloc(1203);
        sink = q;
        free(q);
    }
    sink = p;
    free(p);
    return 7;
}

/* Killed: what it did before the signal is in the log (nothing waits for an exit). */
static int prog_kill(void)
{
    void *a = malloc(1301), *b = malloc(1301), *c = malloc(1301);
    free(b);
    sink = a;
    sink = c;
    kill(getpid(), SIGKILL);
    return 0;
}

/* The single-threaded calls of every kind, after keep's malloc: each block freed at the end.
 * 0, or the exit status that says which call misbehaved. */
static int prog_calls(void)
{
    char *p1 = malloc(1001);
    char *p2 = calloc(3, 111);
    p1 = realloc(p1, 5001);         /* grow */
    p1 = realloc(p1, 1003);         /* shrink */
    char *p3 = realloc(NULL, 1004); /* realloc(NULL, n): from an empty slot */
    sink = realloc(p3, 0);          /* glibc: frees p3, returns NULL */
    void *p4 = NULL;
    if (posix_memalign(&p4, 256, 1005) != 0) {
        return 10;
    }
    void *p5 = aligned_alloc(64, 1088);
    void *p6 = valloc(1006);
    free(NULL);
    sink = malloc(HUGE_REQUEST); /* fails */
    if (sink != NULL) {
        return 11;
    }
    if (realloc(p1, HUGE_REQUEST) != NULL) { /* fails, p1 stays */
        return 12;
    }
    volatile size_t half = SIZE_MAX / 2;     /* volatile: the compiler refuses a constant overflow */
    if (reallocarray(p1, half, 4) != NULL) { /* overflows: fails, p1 stays */
        return 17;
    }
    if (calloc(half, 4) != NULL) { /* overflows: fails */
        return 18;
    }
    void *bad = NULL;
    if (posix_memalign(&bad, 24, 1009) != EINVAL) { /* not a power of two: fails */
        return 19;
    }
    void *zero = realloc(NULL, 0); /* glibc: malloc(0), recorded as such */
    free(zero);
    void *big = malloc((size_t)5 << 30); /* above 4 GiB - 1: left out of the stream (or fails) */
    free(big);
    void *p7 = pvalloc(1007); /* a page, page-aligned */
    void *p8 = memalign(32, 1008);
    void *p9 = reallocarray(NULL, 10, 101);
    free(p1);
    free(p2);
    free(p4);
    free(p5);
    free(p6);
    free(p7);
    free(p8);
    free(p9);
    return 0;
}

/* Runs the NTHREADS workers to the end, then frees what is left in their queue. 0, or 13 when a
 * thread cannot be started. */
static int prog_threads(void)
{
    pthread_t th[NTHREADS];
    for (size_t t = 0; t < NTHREADS; t++) {
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
            return 13;
        }
    }
    for (size_t t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
    }
    while (q_len > 0) {
        free(queue[--q_len]);
    }
    return 0;
}

/* Forks a child that allocates and frees keep (the parent's), frees keep, then execs itself
 * ("exec"). Returns only on failure, with the exit status that says which step failed. */
static int prog_fork_exec(char *keep)
{
    if (chdir("/") != 0) { /* the fork child and the exec'd image open their logs from here */
        return 20;
    }
    pid_t c = fork();
    if (c == 0) {
        void *a = malloc(1111);
        void *b = calloc(1, 1112);
        free(a);
        free(b);
        free(keep);
        _exit(0);
    }
    int status = 0;
    if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return 14;
    }
    free(keep);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        return 15;
    }
    self[n] = '\0';
    char *args[] = {self, (char *)"exec", NULL};
    execv(self, args);
    return 16;
}

static int prog(void)
{
    char *keep = malloc(1100); /* freed by the fork child: a foreign free there */
    int rc = prog_calls();
    if (rc != 0) {
        return rc;
    }
    rc = prog_threads();
    if (rc != 0) {
        return rc;
    }
    return prog_fork_exec(keep);
}

/* ---- the check ------------------------------------------------------------------------------ */

/* testlib.h counts and prints; CHECK names the condition only. */
#define CHECK(cond) TL_CHECK(cond, "%s", "")

/* Our calls, identified by their op kind and size (and alignment). */
typedef struct want {
    uint32_t kind; /* with alignment and WL_OP_FAILED */
    uint32_t size;
    int count; /* expected */
    int seen;
} want_t;

#define MA(a) (WL_MEMALIGN | (uint32_t)(a) << 8)

static want_t main_want[] = {
    {WL_MALLOC, 1100, 1, 0},
    {WL_MALLOC, 1001, 1, 0},
    {WL_CALLOC, 333, 1, 0},
    {WL_REALLOC, 5001, 1, 0},
    {WL_REALLOC, 1003, 1, 0},
    {WL_REALLOC, 1004, 1, 0},
    {MA(8), 1005, 1, 0},
    {MA(6), 1088, 1, 0},
    {MA(12), 1006, 1, 0},
    {WL_MALLOC | WL_OP_FAILED, UINT32_MAX, 2, 0},  /* 2^62, and 5 GiB (too large or failed) */
    {WL_REALLOC | WL_OP_FAILED, UINT32_MAX, 2, 0}, /* realloc 2^62, reallocarray overflow */
    {WL_CALLOC | WL_OP_FAILED, UINT32_MAX, 1, 0},  /* calloc overflow */
    {MA(5) | WL_OP_FAILED, 1009, 1, 0},            /* posix_memalign(24): EINVAL */
    {WL_MALLOC, 0, 1, 0},                          /* realloc(NULL, 0) */
    {MA(12), 4096, 1, 0},
    {MA(5), 1008, 1, 0},
    {WL_REALLOC, 1010, 1, 0},
    {WL_MALLOC, 3000, PER_THREAD, 0},
    {WL_MALLOC, 3001, PER_THREAD, 0},
    {WL_MALLOC, 3002, PER_THREAD, 0},
    {WL_MALLOC, 3003, PER_THREAD, 0},
};
static want_t child_want[] = {
    {WL_MALLOC, 1111, 1, 0},
    {WL_CALLOC, 1112, 1, 0},
};
static want_t exec_want[] = {
    {WL_MALLOC, 1201, 1, 0},
    {WL_REALLOC, 1202, 1, 0},
    {WL_MALLOC, 1203, EXEC_LOOP, 0},
};

/* Replays st through its slots: the order must be valid. Counts the ops of `want` and the frees
 * of blocks one of them made (ours_freed); returns false on an invalid order. */
static bool replay(const tr_stream_t *st, want_t *want, size_t nwant, int *ours_freed, int *free_of_realloc0)
{
    const wl_trace_t *t = &st->trace;
    int8_t *owner = calloc(t->slots + 1u, 1); /* 0 empty, 1 someone's, 2 ours */
    bool ok = owner != NULL;
    *ours_freed = 0;
    *free_of_realloc0 = 0;
    uint32_t *last_size = calloc(t->slots + 1u, sizeof *last_size);
    for (size_t i = 0; ok && i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        if (op->slot >= t->slots) {
            ok = false;
            break;
        }
        bool mine = false;
        for (size_t w = 0; w < nwant; w++) {
            if (want[w].kind == op->kind && want[w].size == op->size) {
                want[w].seen++;
                mine = true;
            }
        }
        if (op->kind & WL_OP_FAILED) {
            continue;
        }
        switch (WL_OP_KIND(op)) {
        case WL_FREE:
            ok = owner[op->slot] != 0;
            *ours_freed += owner[op->slot] == 2;
            *free_of_realloc0 += owner[op->slot] == 2 && last_size[op->slot] == 1004;
            owner[op->slot] = 0;
            break;
        case WL_REALLOC: owner[op->slot] = mine ? 2 : 1; break;
        default:
            ok = owner[op->slot] == 0;
            owner[op->slot] = mine ? 2 : 1;
            break;
        }
        last_size[op->slot] = op->size;
    }
    free(owner);
    free(last_size);
    return ok;
}

static void check_want(const char *which, const want_t *want, size_t n)
{
    for (size_t w = 0; w < n; w++) {
        if (want[w].seen != want[w].count) {
            fprintf(stderr, "%s: kind 0x%x size %u: %d ops, expected %d\n", which, (unsigned)want[w].kind,
                    (unsigned)want[w].size, want[w].seen, want[w].count);
        }
        CHECK(want[w].seen == want[w].count);
    }
}

/* cd dir; rtbench trace record -o trace_record.rtt -- self mode: rtbench's exit status, or -1.
 * The output path is relative on purpose: the program changes directory before it forks and
 * execs, and the logs of those images must still land beside the output. */
static int record(const char *rtbench, const char *dir, const char *self, const char *mode)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(dir) != 0) {
            _exit(126);
        }
        execl(rtbench, rtbench, "trace", "record", "-o", "trace_record.rtt", "--", self, mode, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}

/* The recorded image's stream m: every call of ours, its frees, threads, failed calls, peak. */
static void check_image(const tr_stream_t *m)
{
    int freed = 0, freed_r0 = 0;
    CHECK(strstr(m->command, "trace_record prog") != NULL);
    CHECK(replay(m, main_want, sizeof main_want / sizeof main_want[0], &freed, &freed_r0));
    check_want("image", main_want, sizeof main_want / sizeof main_want[0]);
    /* every block of ours freed: keep, p1 (through its reallocs), p2, p3 (by realloc(p3, 0)),
     * p4..p9, zero: 11, and the threads' 4 x 500 (big's free is dropped, not foreign) */
    CHECK(freed == 11 + NTHREADS * PER_THREAD); /* and zero */
    CHECK(freed_r0 == 1);                       /* realloc(p3, 0) became a free of p3's slot */
    CHECK(m->threads == 1 + NTHREADS);
    CHECK((m->failed == 5 || m->failed == 6) && m->foreign == 0); /* 6 when 5 GiB failed */
    CHECK(m->trace.peak_live >= 1100 + 5001 + 333);
    CHECK(strstr(m->trace.params, "forked") == NULL);
}

/* The fork child's stream c (m: its parent's): its own calls and the foreign free of keep. */
static void check_child(const tr_stream_t *c, const tr_stream_t *m)
{
    int freed = 0, freed_r0 = 0;
    CHECK(replay(c, child_want, 2, &freed, &freed_r0));
    check_want("child", child_want, 2);
    CHECK(freed == 2);
    CHECK(c->foreign == 1);                                         /* free(keep): allocated by the parent */
    CHECK(c->trace.nops == 4 && c->trace.peak_live == 1111 + 1112); /* nothing but ours in the child */
    CHECK(c->pid != m->pid);
    CHECK(c->threads == 1);
    CHECK(strstr(c->trace.params, "forked") != NULL);
}

/* The exec'd image's stream e (m: the image it replaced, same pid). */
static void check_exec(const tr_stream_t *e, const tr_stream_t *m)
{
    int freed = 0, freed_r0 = 0;
    CHECK(replay(e, exec_want, 3, &freed, &freed_r0));
    check_want("exec", exec_want, 3);
    CHECK(freed == 1 + EXEC_LOOP);
    CHECK(e->pid == m->pid);
    CHECK(strstr(e->command, "trace_record exec") != NULL);
    CHECK(e->trace.nops == 3 + 2 * EXEC_LOOP && e->trace.peak_live == 1202 + 1203 && e->threads == 1 &&
          e->foreign == 0);
}

/* Every stream's free and create counts against its ops; prints one line per stream. */
static void check_counts(const tr_file_t *f)
{
    for (size_t s = 0; s < f->nstreams; s++) {
        const wl_trace_t *t = &f->streams[s].trace;
        size_t frees = 0, creates = 0;
        for (size_t i = 0; i < t->nops; i++) {
            frees += WL_OP_KIND(&t->ops[i]) == WL_FREE;
            creates += WL_OP_KIND(&t->ops[i]) != WL_FREE && !(t->ops[i].kind & WL_OP_FAILED);
        }
        CHECK(frees == t->nfree && creates == t->nmalloc);
        printf("stream %zu: pid %u '%s', %zu ops, %u slots, %u threads, %llu failed, %llu foreign, peak %llu\n", s,
               (unsigned)f->streams[s].pid, f->streams[s].command, t->nops, (unsigned)t->slots,
               (unsigned)f->streams[s].threads, (unsigned long long)f->streams[s].failed,
               (unsigned long long)f->streams[s].foreign, (unsigned long long)t->peak_live);
    }
}

/* Records `self prog`, loads out and checks its three streams. False when out cannot be loaded. */
static bool check_prog(const char *rtbench, const char *dir, const char *self, const char *out)
{
    CHECK(record(rtbench, dir, self, "prog") == 7); /* the exec'd image's status, through rtbench */
    tr_file_t f;
    char err[512];
    bool loaded = tr_load(out, &f, err, sizeof err);
    if (!loaded) {
        fprintf(stderr, "%s\n", err);
    }
    CHECK(loaded);
    if (!loaded) {
        return false;
    }
    CHECK(f.nstreams == 3);
    CHECK(strstr(f.command, "trace_record prog") != NULL);
    if (f.nstreams == 3) {
        check_image(&f.streams[0]);
        check_child(&f.streams[1], &f.streams[0]);
        check_exec(&f.streams[2], &f.streams[0]);
        check_counts(&f); /* nstreams == 3 */
    }
    tr_release(&f);
    remove(out);
    return true;
}

/* A program killed by SIGKILL: its calls are in the trace, its status passed on (128 + 9). */
static void check_killed(const char *rtbench, const char *dir, const char *self, const char *out)
{
    tr_file_t f;
    char err[512];
    CHECK(record(rtbench, dir, self, "kill") == 128 + SIGKILL);
    bool loaded = tr_load(out, &f, err, sizeof err);
    CHECK(loaded && f.nstreams == 1);
    if (loaded && f.nstreams == 1) {
        want_t kw[] = {{WL_MALLOC, 1301, 3, 0}};
        int freed = 0, freed_r0 = 0;
        CHECK(replay(&f.streams[0], kw, 1, &freed, &freed_r0));
        check_want("killed", kw, 1);
        CHECK(freed == 1 && f.streams[0].trace.nops == 4 && f.streams[0].trace.peak_live == 3 * 1301);
    }
    if (loaded) {
        tr_release(&f);
    }
    remove(out);
}

/* The raw logs are gone from dir after both conversions. */
static void check_raw_gone(const char *dir)
{
    DIR *d = opendir(dir);
    int left = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        left += strncmp(e->d_name, ".rtbench-raw-", 13) == 0;
    }
    if (d != NULL) {
        closedir(d);
    }
    CHECK(d != NULL && left == 0);
}

static int check(const char *rtbench_arg, const char *dir)
{
    char rtbench[4096]; /* absolute: record() changes directory before it runs rtbench */
    if (realpath(rtbench_arg, rtbench) == NULL) {
        fprintf(stderr, "no rtbench at %s\n", rtbench_arg);
        return 1;
    }
    char out[4096], self[4096];
    snprintf(out, sizeof out, "%s/trace_record.rtt", dir);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        return 1;
    }
    self[n] = '\0';
    if (!check_prog(rtbench, dir, self, out)) {
        return tl_summary("trace_record");
    }
    check_killed(rtbench, dir, self, out);
    check_raw_gone(dir);
    return tl_summary("trace_record");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "prog") == 0) {
        return prog();
    }
    if (argc == 2 && strcmp(argv[1], "exec") == 0) {
        return prog_exec();
    }
    if (argc == 2 && strcmp(argv[1], "kill") == 0) {
        return prog_kill();
    }
    if (argc == 3) {
        return check(argv[1], argv[2]);
    }
    fprintf(stderr, "usage: trace_record RTBENCH DIR | trace_record prog\n");
    return 2;
}
