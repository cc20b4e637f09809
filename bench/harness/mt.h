/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/mt.h -- the multi-thread driver: T threads run one operation sequence each against ONE
 * shared allocator instance, and every call is timed.
 *
 * A run (mt_run):
 *   1. The driver creates T threads, each pinned to one CPU of the process's affinity mask,
 *      round-robin (thread i on allowed CPU i mod n); more threads than CPUs = oversubscribed,
 *      and the run says so (mt_run_t.cpus, .oversubscribed). A CPU that refuses the pin leaves
 *      that thread unpinned (mt_run_t.pinned counts the pinned ones). With cfg.rt the threads are
 *      created SCHED_FIFO (priority max - 1, leaving the kernel's own FIFO-99 threads alone); where
 *      that is not permitted they run SCHED_OTHER and mt_run_t.rt_granted is false.
 *   2. All T threads and the driver meet at a barrier; each thread then records its start
 *      (CLOCK_MONOTONIC) and runs cfg.body, which calls mt_malloc / mt_free below.
 *   3. mt_malloc and mt_free time the one call through the descriptor with the fenced TSC of
 *      clock.h (lfence; rdtsc; lfence on both sides; raw, nothing subtracted), outside any other
 *      work: the budget check (below), the byte written into a fresh block and the bookkeeping
 *      come before or after the timed region.
 *   4. While the threads run, the driver thread sleeps and reports progress every 50 ms. Ctrl-C
 *      (drv_stop, driver.h) makes every body stop at its next operation (mt_stop); never inside a
 *      timed region.
 *   5. After the body, each thread waits at a second barrier (so no thread frees while another
 *      still measures), then frees, untimed, the blocks it still holds when cfg.free_at_end (the
 *      system allocators' memory; a heap over the benchmark's arena is simply re-created).
 *
 * Budget: allocators without their own heap limit (system allocators, noop) run "until out of
 * memory" tests against a shared budget of requested bytes live (cfg.budget, e.g. 64 MiB): a
 * malloc that would exceed it is refused by the driver -- not called, not timed -- and counts as
 * a failure (refused). The check is one relaxed fetch-add on a shared counter, outside the timed
 * region.
 *
 * Work counters: when cfg.malloc_work / cfg.free_work are set (an allocator that reports per-call
 * work, e.g. nodes visited and atomic read-modify-writes), mt_malloc / mt_free call those instead
 * of the descriptor's functions and record the counts of every call beside its cycles.
 */
#ifndef RTBENCH_MT_H
#define RTBENCH_MT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "driver.h"
#include "rtalloc/registry.h"

/* Work of one call, as an allocator with counters reports it (the descriptor's malloc_work and
 * free_work, rtalloc/registry.h). */
typedef rt_work_t mt_work_t;

typedef void *(*mt_malloc_work_fn)(void *handle, size_t size, mt_work_t *work);
typedef void (*mt_free_work_fn)(void *handle, void *ptr, mt_work_t *work);

struct mt_run;

/* One thread's records. Arrays are sized by the config's capacities; an op beyond a capacity
 * stops the body (capacity_hit) instead of overrunning. */
typedef struct mt_thread {
    struct mt_run *run;
    unsigned index;
    int cpu; /* the CPU it is pinned to, or -1 */
    /* timed calls */
    uint32_t *malloc_cycles; /* successful mallocs */
    size_t nmalloc;
    uint32_t *free_cycles;
    size_t nfree;
    mt_work_t *malloc_work; /* per successful malloc (NULL without work counters) */
    mt_work_t *free_work;   /* per free */
    size_t failures;        /* mallocs that returned NULL (timed) or were refused by the budget */
    size_t refused;         /* of those, refused by the budget (not called) */
    uint32_t fail_max;      /* the largest cycles of a failed (called) malloc */
    mt_work_t fail_work_max;
    uint64_t bytes_obtained; /* requested bytes of the successful mallocs */
    uint64_t bytes_freed;    /* requested bytes given back by mt_free */
    /* blocks still held (freed untimed after the run when cfg.free_at_end) */
    void **live;
    size_t *live_size;
    size_t nlive;
    bool capacity_hit;
    uint64_t start_ns, end_ns;
    _Atomic size_t ops_done; /* for progress */
} mt_thread_t;

typedef struct mt_config {
    const rt_allocator_t *a;
    void *handle; /* the shared instance (NULL for system allocators) */
    unsigned threads;
    size_t malloc_cap;   /* per thread: successful mallocs recorded at most */
    size_t free_cap;     /* per thread: frees recorded at most */
    size_t live_cap;     /* per thread: blocks held at most */
    size_t budget;       /* 0: none; else the most requested bytes live across all threads */
    bool free_at_end;    /* free the blocks still held after the run (untimed) */
    bool rt;             /* SCHED_FIFO where permitted */
    size_t expected_ops; /* per thread, for progress (0: unknown) */
    void (*body)(mt_thread_t *th, void *arg);
    void *arg;
    mt_malloc_work_fn malloc_work; /* optional, see above */
    mt_free_work_fn free_work;
} mt_config_t;

typedef struct mt_run {
    mt_config_t cfg;
    mt_thread_t *th; /* cfg.threads of them */
    unsigned cpus;   /* CPUs in the process's affinity mask */
    unsigned pinned; /* threads pinned to a CPU */
    bool oversubscribed;
    bool rt_granted; /* cfg.rt and SCHED_FIFO was granted to every thread */
    int rt_error;    /* errno of the refusal, when cfg.rt and not granted */
    bool interrupted;
    uint64_t wall_ns; /* first start to last end */
    _Atomic size_t budget_used;
    pthread_barrier_t barrier;
} mt_run_t;

/* Progress: fraction of the run's expected operations done, in [0, 1]. */
typedef void (*mt_progress_fn)(void *context, double done);

/* Runs cfg: allocates the records, starts the threads, waits for them. Returns false when
 * threads or record memory could not be had (nothing measured then). Release with mt_release. */
bool mt_run(mt_run_t *run, const mt_config_t *cfg, mt_progress_fn progress, void *context);
void mt_release(mt_run_t *run);

/* CPUs in the process's affinity mask (at least 1). */
unsigned mt_cpus(void);

/* mlockall(MCL_CURRENT | MCL_FUTURE [| MCL_ONFAULT]); returns 0 or the errno. mt_unlock_memory
 * undoes it. */
int mt_lock_memory(void);
void mt_unlock_memory(void);

/* Whether a thread may be made SCHED_FIFO here: 0, or the errno of the refusal (EPERM). */
int mt_rt_permitted(void);

/* True when the body should stop: Ctrl-C, or a record array full. */
static inline bool mt_stop(const mt_thread_t *th) { return drv_stop || th->capacity_hit; }

static inline uint32_t mt_clip(uint64_t d) { return d >= UINT32_MAX ? UINT32_MAX - 1u : (uint32_t)d; }

/* Timed malloc through the shared instance; NULL on failure (or refusal by the budget). A block
 * obtained is remembered as held (th->live) when keep, so that it can be freed after the run. */
static inline void *mt_malloc(mt_thread_t *th, size_t size, bool keep)
{
    struct mt_run *run = th->run;
    const mt_config_t *cfg = &run->cfg;
    if (th->nmalloc >= cfg->malloc_cap || (keep && th->nlive >= cfg->live_cap)) {
        th->capacity_hit = true;
        return NULL;
    }
    if (cfg->budget != 0) {
        size_t old = atomic_fetch_add_explicit(&run->budget_used, size, memory_order_relaxed);
        if (old + size > cfg->budget || old + size < old) {
            atomic_fetch_sub_explicit(&run->budget_used, size, memory_order_relaxed);
            th->failures++;
            th->refused++;
            atomic_store_explicit(&th->ops_done, th->ops_done + 1u, memory_order_relaxed);
            return NULL;
        }
    }
    void *p;
    uint64_t t0, t1;
    mt_work_t w = {0};
    if (cfg->malloc_work != NULL) {
        t0 = clk_start();
        p = cfg->malloc_work(cfg->handle, size, &w);
        t1 = clk_end();
    } else {
        t0 = clk_start();
        p = cfg->a->malloc(cfg->handle, size);
        t1 = clk_end();
    }
    uint32_t c = mt_clip(t1 - t0);
    if (p != NULL) {
        *(volatile unsigned char *)p = (unsigned char)th->index;
        th->malloc_cycles[th->nmalloc] = c;
        if (th->malloc_work != NULL) {
            th->malloc_work[th->nmalloc] = w;
        }
        th->nmalloc++;
        th->bytes_obtained += size;
        if (keep) {
            th->live[th->nlive] = p;
            th->live_size[th->nlive] = size;
            th->nlive++;
        }
    } else {
        if (cfg->budget != 0) {
            atomic_fetch_sub_explicit(&run->budget_used, size, memory_order_relaxed);
        }
        th->failures++;
        th->fail_max = c > th->fail_max ? c : th->fail_max;
        th->fail_work_max.nodes = w.nodes > th->fail_work_max.nodes ? w.nodes : th->fail_work_max.nodes;
        th->fail_work_max.rmw = w.rmw > th->fail_work_max.rmw ? w.rmw : th->fail_work_max.rmw;
    }
    atomic_store_explicit(&th->ops_done, th->ops_done + 1u, memory_order_relaxed);
    return p;
}

/* Timed free of a block of `size` requested bytes that was not kept (mt_malloc(.., false)). */
static inline void mt_free(mt_thread_t *th, void *p, size_t size)
{
    struct mt_run *run = th->run;
    const mt_config_t *cfg = &run->cfg;
    if (th->nfree >= cfg->free_cap) {
        th->capacity_hit = true;
        cfg->a->free(cfg->handle, p); /* untimed: the record is full */
        if (cfg->budget != 0) {
            atomic_fetch_sub_explicit(&run->budget_used, size, memory_order_relaxed);
        }
        return;
    }
    uint64_t t0, t1;
    mt_work_t w = {0};
    if (cfg->free_work != NULL) {
        t0 = clk_start();
        cfg->free_work(cfg->handle, p, &w);
        t1 = clk_end();
    } else {
        t0 = clk_start();
        cfg->a->free(cfg->handle, p);
        t1 = clk_end();
    }
    th->free_cycles[th->nfree] = mt_clip(t1 - t0);
    if (th->free_work != NULL) {
        th->free_work[th->nfree] = w;
    }
    th->nfree++;
    th->bytes_freed += size;
    if (cfg->budget != 0) {
        atomic_fetch_sub_explicit(&run->budget_used, size, memory_order_relaxed);
    }
    atomic_store_explicit(&th->ops_done, th->ops_done + 1u, memory_order_relaxed);
}

#endif /* RTBENCH_MT_H */
