/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/glibcmem.c -- glibc's memory over one replay (see glibcmem.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "glibcmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define GM_HAVE 1
#include <malloc.h>
#include <pthread.h>

#define GM_HEAP_MAX ((uintptr_t)2 * 4 * 1024 * 1024 * sizeof(long))

/* The counts of the run in progress (one at a time: gm_run joins its thread). */
static struct {
    uintptr_t heap, base, end;
    size_t used, peak_used;
    size_t sys_base, sys_peak;
    bool sample, first_done, fresh;
} gm;

static size_t gm_system(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.arena + mi.hblkhd;
}

/* After every allocating call: a new block's chunk into span and used, and the footprint sampled.
 * The first allocation of the thread attaches its arena: a new one adds its heap to arena. */
static void gm_got(void *p, size_t before)
{
    if (gm.sample) {
        size_t sys = gm_system();
        if (!gm.first_done) {
            gm.first_done = true;
            gm.fresh = sys > before;
        }
        if (sys > gm.sys_base && sys - gm.sys_base > gm.sys_peak) {
            gm.sys_peak = sys - gm.sys_base;
        }
    }
    if (p == NULL) {
        return;
    }
    size_t u = malloc_usable_size(p);
    uintptr_t heap = (uintptr_t)p & ~(GM_HEAP_MAX - 1u);
    if (gm.heap == 0) {
        gm.heap = heap;
    }
    if (heap == gm.heap) {
        uintptr_t b = (uintptr_t)p - 2u * sizeof(size_t), e = (uintptr_t)p + u; /* the chunk */
        gm.end = e > gm.end ? e : gm.end;
        gm.base = b < gm.base ? b : gm.base;
    }
    gm.used += u + sizeof(size_t);
    gm.peak_used = gm.used > gm.peak_used ? gm.used : gm.peak_used;
}

static size_t gm_first_before(void) { return gm.sample && !gm.first_done ? gm_system() : 0u; }

static void gm_gone(void *p)
{
    if (p != NULL) {
        gm.used -= malloc_usable_size(p) + sizeof(size_t);
    }
}

static void *gm_create(void *mem, size_t size)
{
    (void)mem, (void)size;
    return NULL;
}
static void *gm_malloc(void *h, size_t n)
{
    (void)h;
    size_t before = gm_first_before();
    void *p = malloc(n);
    gm_got(p, before);
    return p;
}
static void gm_free(void *h, void *p)
{
    (void)h;
    gm_gone(p);
    free(p);
}
static void *gm_realloc(void *h, void *p, size_t n)
{
    (void)h;
    size_t before = gm_first_before();
    size_t old = p != NULL ? malloc_usable_size(p) + sizeof(size_t) : 0u;
    void *q = realloc(p, n);
    if (q != NULL || n == 0u) {
        gm.used -= old; /* moved or freed; counted again below if q */
    }
    gm_got(q, before);
    return q;
}
static void *gm_calloc(void *h, size_t c, size_t n)
{
    (void)h;
    size_t before = gm_first_before();
    void *p = calloc(c, n);
    gm_got(p, before);
    return p;
}
static void *gm_memalign(void *h, size_t a, size_t n)
{
    (void)h;
    size_t before = gm_first_before();
    void *p = NULL;
    if (posix_memalign(&p, a < sizeof(void *) ? sizeof(void *) : a, n) != 0) {
        p = NULL;
    }
    gm_got(p, before);
    return p;
}
static void gm_stats(void *h, rt_stats_t *s)
{
    (void)h;
    memset(s, 0, sizeof *s);
    s->watermark = gm.end > gm.base ? (size_t)(gm.end - gm.base) : 0u;
    s->peak_used = gm.peak_used;
    s->used_bytes = gm.used;
}

void gm_view(const rt_allocator_t *glibc, rt_allocator_t *view)
{
    *view = *glibc;
    view->create = gm_create; /* never called: marks the view as one with a watermark */
    view->malloc = gm_malloc;
    view->free = gm_free;
    view->realloc = gm_realloc;
    view->calloc = gm_calloc;
    view->memalign = gm_memalign;
    view->stats = gm_stats;
}

typedef struct gm_job {
    void (*body)(void *);
    void *arg;
} gm_job_t;

static void *gm_thread(void *arg)
{
    gm_job_t *j = arg;
    gm.sys_base = gm_system(); /* before this thread's first allocation */
    j->body(j->arg);
    return NULL;
}

bool gm_available(void) { return true; }

bool gm_run(void (*body)(void *arg), void *arg, bool footprint, gm_result_t *out)
{
    memset(out, 0, sizeof *out);
    malloc_trim(0);
    memset(&gm, 0, sizeof gm);
    gm.sample = footprint;
    gm.base = UINTPTR_MAX;
    gm_job_t job = {body, arg};
    pthread_t th;
    if (pthread_create(&th, NULL, gm_thread, &job) != 0) {
        return false;
    }
    pthread_join(th, NULL);
    out->ok = true;
    out->fresh = gm.fresh;
    out->span = gm.end > gm.base ? (uint64_t)(gm.end - gm.base) : 0u;
    out->peak_used = gm.peak_used;
    out->end_used = gm.used;
    out->footprint = gm.sys_peak;
    return true;
}

typedef struct gm_replay_job {
    const rt_allocator_t *view;
    const wl_trace_t *t;
    void **slots;
    size_t failures;
    uint64_t end_used;
    bool interrupted;
} gm_replay_job_t;

static void gm_replay_body(void *arg)
{
    gm_replay_job_t *j = arg;
    drv_instance_t in;
    memset(&in, 0, sizeof in);
    in.a = j->view;
    in.slots = j->slots;
    in.nslots = j->t->slots;
    for (size_t i = 0; i < j->t->nops; i++) {
        if ((i & 4095u) == 0u && drv_stop) {
            j->interrupted = true;
            break;
        }
        const wl_op_t *op = &j->t->ops[i];
        if ((op->kind & WL_OP_FAILED) != 0u) {
            continue; /* NULL when recorded: not one of the replay's blocks (a 3 GiB malloc that
                         glibc's mmap serves here would be its footprint) */
        }
        if (!drv_apply(&in, op, i)) {
            j->failures++;
        }
    }
    j->end_used = gm.used;
    for (uint32_t s = 0; s < j->t->slots; s++) {
        if (j->slots[s] != NULL) {
            j->view->free(NULL, j->slots[s]);
            j->slots[s] = NULL;
        }
    }
}

static bool gm_replay_here(const rt_allocator_t *glibc, const wl_trace_t *t, void **slots, bool footprint,
                           gm_result_t *out)
{
    rt_allocator_t view;
    gm_view(glibc, &view);
    void **own = NULL;
    if (slots == NULL) {
        own = calloc(t->slots != 0u ? t->slots : 1u, sizeof *own);
        if (own == NULL) {
            memset(out, 0, sizeof *out);
            return false;
        }
        slots = own;
    }
    gm_replay_job_t job = {&view, t, slots, 0, 0, false};
    bool ok = gm_run(gm_replay_body, &job, footprint, out);
    free(own);
    out->failures = job.failures;
    out->end_used = job.end_used;
    out->ok = ok && !job.interrupted;
    return out->ok;
}

/* Idle threads that hold the arenas a forked child inherits (each attaches to one with its first
 * malloc and waits on a pipe until the child exits), until one gets a new arena: the free list is
 * then empty and the replay's thread gets a new arena too. */
enum { GM_MAX_HOLDERS = 64 };
static int gm_hold_pipe[2], gm_ready_pipe[2];

static void *gm_holder(void *arg)
{
    (void)arg;
    size_t before = gm_system();
    void *p = malloc(1);
    char fresh = gm_system() > before ? 1 : 0;
    *(volatile char *)p = 0;
    while (write(gm_ready_pipe[1], &fresh, 1) < 0 && errno == EINTR) {
    }
    char c;
    while (read(gm_hold_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    return p;
}

static void gm_drain_arenas(void)
{
    if (pipe(gm_hold_pipe) != 0 || pipe(gm_ready_pipe) != 0) {
        return;
    }
    for (int k = 0; k < GM_MAX_HOLDERS; k++) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 65536);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &attr, gm_holder, NULL);
        pthread_attr_destroy(&attr);
        char fresh = 0;
        if (rc != 0 || read(gm_ready_pipe[0], &fresh, 1) != 1 || fresh) {
            return; /* a new arena: the free list is empty */
        }
    }
}

bool gm_replay(const rt_allocator_t *glibc, const wl_trace_t *t, void **slots, bool own_process, gm_result_t *out)
{
    memset(out, 0, sizeof *out);
    if (!own_process) {
        return gm_replay_here(glibc, t, slots, false, out);
    }
    gm_result_t *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        return false;
    }
    memset(shared, 0, sizeof *shared);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(shared, sizeof *shared);
        return false;
    }
    if (pid == 0) {
        gm_drain_arenas();
        gm_result_t r;
        gm_replay_here(glibc, t, slots, true, &r);
        *shared = r;
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && shared->ok;
    if (ok) {
        *out = *shared;
    }
    munmap(shared, sizeof *shared);
    if (slots != NULL) {
        memset(slots, 0, t->slots * sizeof *slots); /* the child's blocks are gone with it */
    }
    return ok;
}

#else /* not glibc >= 2.33 */

bool gm_available(void) { return false; }
void gm_view(const rt_allocator_t *glibc, rt_allocator_t *view) { *view = *glibc; }
bool gm_run(void (*body)(void *arg), void *arg, bool footprint, gm_result_t *out)
{
    (void)body, (void)arg, (void)footprint;
    memset(out, 0, sizeof *out);
    return false;
}
bool gm_replay(const rt_allocator_t *glibc, const wl_trace_t *t, void **slots, bool own_process, gm_result_t *out)
{
    (void)glibc, (void)t, (void)slots, (void)own_process;
    memset(out, 0, sizeof *out);
    return false;
}

#endif
