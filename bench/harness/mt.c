/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/mt.c -- the multi-thread driver (mt.h): threads, pinning, SCHED_FIFO, the start gate and
 * barriers, records, progress.
 *
 * Start: every thread, once created, waits on a gate (mutex + condition variable) until the
 * driver has created all of them (or failed to, and then they exit without running); then the
 * T threads meet at a pthread barrier and start their bodies together. The gate keeps a failed
 * pthread_create from leaving the others stuck at a barrier that can never fill.
 */
#include "mt.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { MT_MAX_CPUS = 1024 };

static unsigned allowed_cpus(int *list, unsigned cap)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    unsigned n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (size_t c = 0; c < (size_t)CPU_SETSIZE && n < cap; c++) {
            if (CPU_ISSET(c, &set)) {
                list[n++] = (int)c;
            }
        }
    }
    return n;
}

unsigned mt_cpus(void)
{
    static int list[MT_MAX_CPUS];
    unsigned n = allowed_cpus(list, MT_MAX_CPUS);
    return n != 0 ? n : 1u;
}

int mt_lock_memory(void)
{
#ifdef MCL_ONFAULT
    /* ONFAULT: future mappings (the system allocators' arenas, thread stacks) are locked as they
     * are touched instead of populated whole at mmap. */
    if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0) {
        return 0;
    }
#endif
    return mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? 0 : errno;
}

void mt_unlock_memory(void) { munlockall(); }

static void *rt_probe(void *arg)
{
    (void)arg;
    return NULL;
}

int mt_rt_permitted(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = sched_get_priority_max(SCHED_FIFO) - 1;
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    pthread_attr_setschedparam(&attr, &sp);
    pthread_t t;
    int rc = pthread_create(&t, &attr, rt_probe, NULL);
    pthread_attr_destroy(&attr);
    if (rc == 0) {
        pthread_join(t, NULL);
    }
    return rc;
}

/* The start gate. */
typedef struct gate {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int state; /* 0 wait, 1 go, 2 abort */
} gate_t;

typedef struct start {
    mt_thread_t *th;
    gate_t *gate;
    _Atomic unsigned *finished;
} start_t;

static void *thread_main(void *arg)
{
    start_t *s = arg;
    mt_thread_t *th = s->th;
    mt_run_t *run = th->run;
    pthread_mutex_lock(&s->gate->mutex);
    while (s->gate->state == 0) {
        pthread_cond_wait(&s->gate->cond, &s->gate->mutex);
    }
    int state = s->gate->state;
    pthread_mutex_unlock(&s->gate->mutex);
    if (state != 1) {
        return NULL;
    }
    pthread_barrier_wait(&run->barrier);
    th->start_ns = clk_now_ns();
    run->cfg.body(th, run->cfg.arg);
    th->end_ns = clk_now_ns();
    atomic_fetch_add_explicit(s->finished, 1u, memory_order_release);
    /* No thread frees its blocks while another still measures. */
    pthread_barrier_wait(&run->barrier);
    if (run->cfg.free_at_end) {
        for (size_t i = 0; i < th->nlive; i++) {
            run->cfg.a->free(run->cfg.handle, th->live[i]);
        }
    }
    return NULL;
}

static void *alloc_touched(size_t n, size_t size)
{
    void *p = calloc(n != 0 ? n : 1u, size);
    if (p != NULL) {
        memset(p, 0, (n != 0 ? n : 1u) * size); /* touch: no page fault while measuring */
    }
    return p;
}

void mt_release(mt_run_t *run)
{
    if (run->th != NULL) {
        for (unsigned i = 0; i < run->cfg.threads; i++) {
            mt_thread_t *th = &run->th[i];
            free(th->malloc_cycles);
            free(th->free_cycles);
            free(th->malloc_work);
            free(th->free_work);
            free(th->live);
            free(th->live_size);
        }
        free(run->th);
    }
    run->th = NULL;
}

static int create_thread(pthread_t *t, start_t *s, int cpu, bool rt, bool *pinned)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (rt) {
        struct sched_param sp;
        memset(&sp, 0, sizeof sp);
        sp.sched_priority = sched_get_priority_max(SCHED_FIFO) - 1;
        pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
        pthread_attr_setschedparam(&attr, &sp);
    }
    *pinned = false;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((size_t)cpu, &set);
        *pinned = pthread_attr_setaffinity_np(&attr, sizeof set, &set) == 0;
    }
    int rc = pthread_create(t, &attr, thread_main, s);
    if (rc == EINVAL && *pinned) { /* the CPU refused: run unpinned */
        pthread_attr_destroy(&attr);
        *pinned = false;
        return create_thread(t, s, -1, rt, pinned);
    }
    pthread_attr_destroy(&attr);
    return rc;
}

/* Each thread's record and its touched buffers (the work buffers only where cfg asks for them). */
static bool alloc_threads(mt_run_t *run, const mt_config_t *cfg, unsigned n)
{
    bool ok = true;
    for (unsigned i = 0; ok && i < n; i++) {
        mt_thread_t *th = &run->th[i];
        th->run = run;
        th->index = i;
        th->cpu = -1;
        th->malloc_cycles = alloc_touched(cfg->malloc_cap, sizeof *th->malloc_cycles);
        th->free_cycles = alloc_touched(cfg->free_cap, sizeof *th->free_cycles);
        th->live = alloc_touched(cfg->live_cap, sizeof *th->live);
        th->live_size = alloc_touched(cfg->live_cap, sizeof *th->live_size);
        ok = th->malloc_cycles && th->free_cycles && th->live && th->live_size;
        if (ok && cfg->malloc_work != NULL) {
            th->malloc_work = alloc_touched(cfg->malloc_cap, sizeof *th->malloc_work);
            ok = th->malloc_work != NULL;
        }
        if (ok && cfg->free_work != NULL) {
            th->free_work = alloc_touched(cfg->free_cap, sizeof *th->free_work);
            ok = th->free_work != NULL;
        }
    }
    return ok;
}

/* Creates the n threads, each pinned to the next allowed CPU (cpus[0..ncpu)), SCHED_FIFO when
 * cfg asks and the system permits; *created: how many to join. False if one could not be made. */
static bool start_threads(mt_run_t *run, unsigned n, start_t *starts, pthread_t *tids, gate_t *gate,
                          _Atomic unsigned *finished, const int *cpus, unsigned ncpu, unsigned *created)
{
    bool ok = true;
    bool rt = run->cfg.rt;
    run->rt_granted = rt;
    for (unsigned i = 0; i < n; i++) {
        starts[i].th = &run->th[i];
        starts[i].gate = gate;
        starts[i].finished = finished;
        int cpu = ncpu != 0 ? cpus[i % ncpu] : -1;
        bool pinned = false;
        int rc = create_thread(&tids[i], &starts[i], cpu, rt, &pinned);
        if (rc == EPERM && rt) {
            /* SCHED_FIFO refused: every thread of the run goes without it. */
            run->rt_granted = false;
            run->rt_error = rc;
            rt = false;
            rc = create_thread(&tids[i], &starts[i], cpu, false, &pinned);
            if (rc == 0 && i > 0) {
                /* the first i threads are FIFO already: not what the run claims; abort */
                *created = i + 1;
                ok = false;
                break;
            }
        }
        if (rc != 0) {
            ok = false;
            break;
        }
        (*created)++;
        run->th[i].cpu = pinned ? cpu : -1;
        run->pinned += pinned ? 1u : 0u;
    }
    return ok;
}

/* Waits for the n threads to finish, reporting the ops done so far every 50 ms. */
static void wait_finished(mt_run_t *run, unsigned n, _Atomic unsigned *finished, mt_progress_fn progress, void *context)
{
    size_t expected = run->cfg.expected_ops * n;
    while (atomic_load_explicit(finished, memory_order_acquire) < n) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (progress != NULL && expected != 0) {
            size_t done = 0;
            for (unsigned i = 0; i < n; i++) {
                done += atomic_load_explicit(&run->th[i].ops_done, memory_order_relaxed);
            }
            progress(context, done >= expected ? 1.0 : (double)done / (double)expected);
        }
    }
}

bool mt_run(mt_run_t *run, const mt_config_t *cfg, mt_progress_fn progress, void *context)
{
    memset(run, 0, sizeof *run);
    run->cfg = *cfg;
    unsigned n = cfg->threads;
    static int cpus[MT_MAX_CPUS];
    unsigned ncpu = allowed_cpus(cpus, MT_MAX_CPUS);
    run->cpus = ncpu != 0 ? ncpu : 1u;
    run->oversubscribed = n > run->cpus;
    run->th = calloc(n, sizeof *run->th);
    start_t *starts = calloc(n, sizeof *starts);
    pthread_t *tids = calloc(n, sizeof *tids);
    bool ok = run->th != NULL && starts != NULL && tids != NULL && alloc_threads(run, cfg, n);
    if (!ok || pthread_barrier_init(&run->barrier, NULL, n) != 0) {
        free(starts);
        free(tids);
        mt_release(run);
        return false;
    }
    gate_t gate;
    pthread_mutex_init(&gate.mutex, NULL);
    pthread_cond_init(&gate.cond, NULL);
    gate.state = 0;
    _Atomic unsigned finished = 0;
    unsigned created = 0;
    ok = start_threads(run, n, starts, tids, &gate, &finished, cpus, ncpu, &created);
    pthread_mutex_lock(&gate.mutex);
    gate.state = ok ? 1 : 2;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.mutex);
    if (ok) {
        wait_finished(run, n, &finished, progress, context);
    }
    for (unsigned i = 0; i < created; i++) {
        pthread_join(tids[i], NULL);
    }
    pthread_barrier_destroy(&run->barrier);
    pthread_cond_destroy(&gate.cond);
    pthread_mutex_destroy(&gate.mutex);
    free(starts);
    free(tids);
    if (!ok) {
        mt_release(run);
        return false;
    }
    uint64_t first = UINT64_MAX, last = 0;
    for (unsigned i = 0; i < n; i++) {
        first = run->th[i].start_ns < first ? run->th[i].start_ns : first;
        last = run->th[i].end_ns > last ? run->th[i].end_ns : last;
    }
    run->wall_ns = last > first ? last - first : 0;
    run->interrupted = drv_stop != 0;
    return true;
}
