/* SPDX-License-Identifier: MIT */
/*
 * trace/threads.c -- a recorded threaded program replayed with one thread per recorded
 * thread: the plan and the two replay modes (threads.h; the command: threads_cli.c).
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* MAP_NORESERVE */
#endif
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "clock.h"
#include "driver.h"
#include "peers.h"
#include "replay.h"
#include "threads.h"

/* ---- the plan -------------------------------------------------------------------------------- */

#define NO_OBJECT UINT32_MAX /* a slot that holds no object */

void rp_plan_free(rp_plan_t *p)
{
    free(p->trace.ops);
    free(p->seq);
    free(p->start);
    free(p->order);
    memset(p, 0, sizeof *p);
}

/* Renames the slots of st's ops to objects (one per allocation: an op that creates a block into an
 * empty slot, or any op flagged failed that does not act on a held block) and numbers each op's
 * place among the ops on its object. */
static bool plan_objects(const tr_stream_t *st, rp_plan_t *p)
{
    const wl_trace_t *t = &st->trace;
    uint32_t *cur = malloc((t->slots ? t->slots : 1u) * sizeof *cur);
    uint32_t *maker = malloc((t->nops ? t->nops : 1u) * sizeof *maker); /* per object: its thread */
    uint32_t *len = calloc(t->nops ? t->nops : 1u, sizeof *len);        /* per object: ops so far */
    bool ok = cur != NULL && maker != NULL && len != NULL;
    for (uint32_t s = 0; ok && s < t->slots; s++) {
        cur[s] = NO_OBJECT;
    }
    uint32_t nobj = 0;
    for (size_t i = 0; ok && i < t->nops; i++) {
        wl_op_t *op = &p->trace.ops[i];
        uint32_t s = t->ops[i].slot, th = st->thread[i];
        bool failed = (op->kind & WL_OP_FAILED) != 0u;
        bool held = cur[s] != NO_OBJECT;
        uint32_t obj;
        if (WL_OP_KIND(op) == WL_FREE) {
            obj = cur[s]; /* tr_load checked: a free only of a full slot */
            cur[s] = NO_OBJECT;
            p->cross += maker[obj] != th;
        } else if (WL_OP_KIND(op) == WL_REALLOC && held) {
            obj = cur[s]; /* the block's next op, failed or not: the driver keeps it in its slot */
            p->cross += maker[obj] != th;
            if (!failed) {
                maker[obj] = th; /* the new block is this thread's */
            }
        } else {
            obj = nobj++;
            maker[obj] = th;
            if (!failed) {
                cur[s] = obj;
            }
        }
        op->slot = obj;
        p->seq[i] = len[obj]++;
    }
    p->trace.slots = nobj;
    free(cur);
    free(maker);
    free(len);
    return ok;
}

bool rp_plan_make(const tr_stream_t *st, rp_plan_t *p)
{
    memset(p, 0, sizeof *p);
    const wl_trace_t *t = &st->trace;
    if (st->thread == NULL || st->threads == 0u) {
        return false;
    }
    /* The threads the replay starts: up to the highest one that made a call, never what the
     * stream's header claims (a file's `threads` is input: 2^32 - 1 must not start 2^32 - 1
     * threads or size a table) */
    uint32_t used = 0;
    for (size_t i = 0; i < t->nops; i++) {
        if (st->thread[i] >= st->threads) {
            return false; /* tr_load refuses it; a stream built in memory may not */
        }
        used = st->thread[i] + 1u > used ? st->thread[i] + 1u : used;
    }
    if (used == 0u || used > RP_MAX_THREADS) {
        return false;
    }
    size_t n = t->nops ? t->nops : 1u;
    p->trace = *t;
    p->trace.ops = malloc(n * sizeof *p->trace.ops);
    p->seq = malloc(n * sizeof *p->seq);
    p->start = calloc((size_t)used + 1u, sizeof *p->start);
    p->order = malloc(n * sizeof *p->order);
    if (p->trace.ops == NULL || p->seq == NULL || p->start == NULL || p->order == NULL) {
        rp_plan_free(p);
        return false;
    }
    memcpy(p->trace.ops, t->ops, t->nops * sizeof *t->ops);
    p->nthreads = used;
    p->thread = st->thread;
    if (!plan_objects(st, p)) {
        rp_plan_free(p);
        return false;
    }
    /* group the ops by thread: counts, prefix sums, then a stable fill */
    for (size_t i = 0; i < t->nops; i++) {
        p->start[st->thread[i] + 1u]++;
    }
    for (uint32_t th = 0; th < p->nthreads; th++) {
        p->start[th + 1u] += p->start[th];
    }
    size_t *fill = malloc((size_t)p->nthreads * sizeof *fill);
    if (fill == NULL) {
        rp_plan_free(p);
        return false;
    }
    memcpy(fill, p->start, (size_t)p->nthreads * sizeof *fill);
    for (size_t i = 0; i < t->nops; i++) {
        p->order[fill[st->thread[i]]++] = i;
    }
    free(fill);
    p->peak = rp_peak_live(t);
    return true;
}

/* ---- the replay ------------------------------------------------------------------------------ */

typedef struct thr_shared {
    const rp_plan_t *p;
    rp_thr_mode_t mode;
    bool timed;
    drv_instance_t in;
    atomic_bool go;         /* every thread created: start */
    _Atomic size_t next;    /* ordered: the op whose turn it is */
    _Atomic uint32_t *done; /* concurrent: per object, its ops done */
    sem_t *turn;            /* ordered: per thread, posted when its op's turn comes */
    atomic_bool stop;       /* Ctrl-C seen: every thread leaves */
    uint32_t *cycles;       /* timed: per op */
} thr_shared_t;

typedef struct thr_worker {
    thr_shared_t *sh;
    uint32_t index;
    size_t failures, calls;
} thr_worker_t;

/* Waits (spinning, then yielding) until op i's earlier ops on its object are done. False when the
 * run stops. */
static bool wait_object(thr_shared_t *sh, size_t i)
{
    uint32_t obj = sh->p->trace.ops[i].slot, want = sh->p->seq[i];
    for (unsigned spins = 0; atomic_load_explicit(&sh->done[obj], memory_order_acquire) != want; spins++) {
        if (spins >= 64u) {
            if (atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
                return false;
            }
            if (drv_stop) {
                atomic_store(&sh->stop, true);
                return false;
            }
            sched_yield();
        }
    }
    return true;
}

/* Waits until it is op i's turn (ordered). False when the run stops. */
static bool wait_turn(thr_shared_t *sh, uint32_t self, size_t i)
{
    while (atomic_load_explicit(&sh->next, memory_order_acquire) != i) {
        if (atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
            return false;
        }
        sem_wait(&sh->turn[self]);
    }
    return true;
}

/* Op i is done: hands the turn on (ordered) or marks the object (concurrent). */
static void mark_done(thr_shared_t *sh, uint32_t self, size_t i)
{
    if (sh->mode == RP_CONCURRENT) {
        atomic_store_explicit(&sh->done[sh->p->trace.ops[i].slot], sh->p->seq[i] + 1u, memory_order_release);
        return;
    }
    atomic_store_explicit(&sh->next, i + 1u, memory_order_release);
    if (i + 1u < sh->p->trace.nops) {
        uint32_t owner = sh->p->thread[i + 1u];
        if (owner != self) {
            sem_post(&sh->turn[owner]);
        }
    }
}

static void *thr_main(void *arg)
{
    thr_worker_t *w = arg;
    thr_shared_t *sh = w->sh;
    const rp_plan_t *p = sh->p;
    while (!atomic_load_explicit(&sh->go, memory_order_acquire)) {
        sched_yield();
    }
    for (size_t k = p->start[w->index]; k < p->start[w->index + 1u]; k++) {
        size_t i = p->order[k];
        if (atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
            break;
        }
        bool ready = sh->mode == RP_ORDERED ? wait_turn(sh, w->index, i) : wait_object(sh, i);
        if (!ready) {
            break;
        }
        if (sh->mode == RP_ORDERED && (i & 0xFFFFu) == 0u && drv_stop) {
            atomic_store(&sh->stop, true);
            for (uint32_t t = 0; t < p->nthreads; t++) {
                sem_post(&sh->turn[t]);
            }
            break;
        }
        const wl_op_t *op = &p->trace.ops[i];
        bool got;
        if (sh->timed) {
            uint64_t t0 = clk_start();
            got = drv_apply(&sh->in, op, i);
            uint64_t t1 = clk_end();
            sh->cycles[i] = t1 - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(t1 - t0);
        } else {
            got = drv_apply(&sh->in, op, i);
        }
        w->calls++;
        w->failures += !got && (op->kind & WL_OP_FAILED) == 0u;
        mark_done(sh, w->index, i);
    }
    if (sh->in.a->thread_exit != NULL) {
        sh->in.a->thread_exit(sh->in.handle); /* as the drop-in does when a thread ends */
    }
    return NULL;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* The timed run's per-call figures, from the calls made. */
static void thr_stats(const thr_shared_t *sh, rp_thr_run_t *out)
{
    size_t n = sh->p->trace.nops;
    uint32_t *v = malloc((n ? n : 1u) * sizeof *v);
    if (v == NULL) {
        return;
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        v[i] = sh->cycles[i];
        sum += v[i];
    }
    qsort(v, n, sizeof *v, cmp_u32);
    out->mean = n ? sum / (double)n : 0.0;
    out->p99 = n ? v[(size_t)((double)(n - 1u) * 0.99)] : 0u;
    out->max = n ? v[n - 1u] : 0u;
    free(v);
}

static bool thr_alloc(thr_shared_t *sh, const rp_plan_t *p, rp_thr_mode_t mode, bool timed)
{
    size_t nobj = p->trace.slots ? p->trace.slots : 1u;
    if (mode == RP_CONCURRENT) {
        sh->done = calloc(nobj, sizeof *sh->done);
        if (sh->done == NULL) {
            return false;
        }
    } else {
        sh->turn = calloc(p->nthreads, sizeof *sh->turn);
        if (sh->turn == NULL) {
            return false;
        }
        for (uint32_t t = 0; t < p->nthreads; t++) {
            sem_init(&sh->turn[t], 0, 0);
        }
    }
    if (timed) {
        sh->cycles = calloc(p->trace.nops ? p->trace.nops : 1u, sizeof *sh->cycles);
        if (sh->cycles == NULL) {
            return false;
        }
    }
    return true;
}

static void thr_release(thr_shared_t *sh, const rp_plan_t *p)
{
    if (sh->turn != NULL) {
        for (uint32_t t = 0; t < p->nthreads; t++) {
            sem_destroy(&sh->turn[t]);
        }
    }
    free(sh->turn);
    free((void *)sh->done);
    free(sh->cycles);
}

bool rp_threaded(const rt_allocator_t *a, void *buffer, size_t size, const rp_plan_t *p, rp_thr_mode_t mode, bool timed,
                 rp_thr_run_t *out)
{
    memset(out, 0, sizeof *out);
    thr_shared_t *sh = calloc(1, sizeof *sh);
    thr_worker_t *w = calloc(p->nthreads, sizeof *w);
    pthread_t *tid = calloc(p->nthreads, sizeof *tid);
    bool ok = sh != NULL && w != NULL && tid != NULL;
    if (ok) {
        sh->p = p;
        sh->mode = mode;
        sh->timed = timed;
        ok = thr_alloc(sh, p, mode, timed);
    }
    ok = ok && drv_open(&sh->in, a, buffer, size, p->trace.slots, false);
    if (!ok) {
        if (sh != NULL) {
            thr_release(sh, p);
        }
        free(sh), free(w), free(tid);
        return false;
    }
    uint32_t started = 0;
    for (; started < p->nthreads; started++) {
        w[started].sh = sh;
        w[started].index = started;
        if (pthread_create(&tid[started], NULL, thr_main, &w[started]) != 0) {
            break;
        }
    }
    if (started < p->nthreads) {
        fprintf(stderr, "rtbench trace threads: cannot create thread %u of %u\n", started, p->nthreads);
        atomic_store(&sh->stop, true); /* the threads started leave at once */
    }
    uint64_t c0 = clk_read_fenced(), n0 = clk_now_ns();
    atomic_store_explicit(&sh->go, true, memory_order_release);
    for (uint32_t t = 0; t < started; t++) {
        pthread_join(tid[t], NULL);
    }
    uint64_t c1 = clk_read_fenced(), n1 = clk_now_ns();
    out->ran = started == p->nthreads;
    out->interrupted = atomic_load(&sh->stop);
    out->wall_ns = (double)(n1 - n0);
    out->ticks_per_ns = CLK_TSC && n1 > n0 ? (double)(c1 - c0) / (double)(n1 - n0) : 1.0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        out->failures += w[t].failures;
        out->calls += w[t].calls;
    }
    if (timed && !out->interrupted) {
        thr_stats(sh, out);
    }
    drv_close(&sh->in);
    thr_release(sh, p);
    free(sh), free(w), free(tid);
    return true;
}

bool rp_threaded_fits(const rt_allocator_t *a, void *buffer, size_t size, const void *context)
{
    const rp_plan_t *p = context;
    rp_thr_run_t r;
    return rp_threaded(a, buffer, size, p, RP_ORDERED, false, &r) && !r.interrupted && r.failures == 0u &&
           r.calls == p->trace.nops;
}
