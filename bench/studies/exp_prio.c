/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_prio.c -- experiment "prio": priority inversion, the reason a lock makes TLSF
 * unfit for real time on several cores.
 *
 * Four SCHED_FIFO threads pinned to one CPU, one shared allocator (64 MiB arena):
 *   H   highest priority: every 500 us (clock_nanosleep) malloc(s) then free of one block, s drawn
 *       from 16..1024, each call timed with the fenced clock; 2,000 periods at quick scale, 10,000
 *       at standard and above;
 *   L1, L2  lowest priority: malloc/free of 16..1024 bytes without pause over a window of 64
 *       blocks (yielding to each other every 64 calls) -- so a lock is often held when H wakes;
 *   M   middle priority: CPU-bound, 2 ms of spinning then 3 ms asleep -- it preempts L1 and L2.
 * With one mutex (tlsf+mutex), H wakes, finds the lock held by a preempted L, and waits while M
 * spins: the classic inversion, milliseconds. A priority-inheritance mutex (tlsf+pi) lends H's
 * priority to L, so H waits for L's critical section only. tlsfmc and wfc take no lock: H waits
 * for nobody. Table: H's malloc and free, median / p99 / p99.9 / max, max in microseconds, and
 * each max against tlsf+mutex's in the same run.
 *
 * Where SCHED_FIFO is refused (no CAP_SYS_NICE, RLIMIT_RTPRIO 0) the study is skipped with a line
 * that says so. Output: prio.csv.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "metrics.h"
#include "mt.h"
#include "mtpeers.h"
#include "peers.h"

enum { PR_HEAP_MIB = 64, PR_PERIOD_US = 500, PR_BURST_US = 2000, PR_REST_US = 3000, PR_WINDOW = 64 };
#define PR_HEAP ((size_t)PR_HEAP_MIB << 20)

typedef struct pr_shared {
    const rt_allocator_t *a;
    void *h;
    atomic_bool stop;
    unsigned periods;
    uint32_t *m_cycles, *f_cycles;
    atomic_uint started;
    uint64_t seed;
} pr_shared_t;

typedef struct pr_thread {
    pr_shared_t *sh;
    unsigned id;
} pr_thread_t;

static uint64_t pr_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void pr_sleep_until(struct timespec *t, long us)
{
    t->tv_nsec += us * 1000L;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR) {
    }
}

static void *pr_high(void *arg)
{
    pr_thread_t *t = arg;
    pr_shared_t *sh = t->sh;
    uint64_t s = sh->seed | 1u;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pr_sleep_until(&next, 20000); /* let L and M get going */
    for (unsigned i = 0; i < sh->periods && !drv_stop; i++) {
        pr_sleep_until(&next, PR_PERIOD_US);
        size_t n = 16u + (size_t)(pr_rng(&s) % 1009u);
        uint64_t a = clk_start();
        void *p = sh->a->malloc(sh->h, n);
        uint64_t b = clk_end();
        if (p != NULL) {
            ((volatile char *)p)[0] = 1;
        }
        uint64_t c = clk_start();
        if (p != NULL) {
            sh->a->free(sh->h, p);
        }
        uint64_t d = clk_end();
        sh->m_cycles[i] = mt_clip(b - a);
        sh->f_cycles[i] = mt_clip(d - c);
        if (i % 256u == 0u) {
            bench_progress("prio", sh->a->name, "high-priority calls", (double)i / sh->periods);
        }
    }
    atomic_store(&sh->stop, true);
    return NULL;
}

static void *pr_low(void *arg)
{
    pr_thread_t *t = arg;
    pr_shared_t *sh = t->sh;
    uint64_t s = (sh->seed + 77u * t->id) | 1u;
    void *win[PR_WINDOW] = {0};
    unsigned k = 0;
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed) && !drv_stop) {
        unsigned j = (unsigned)(pr_rng(&s) % PR_WINDOW);
        if (win[j] != NULL) {
            sh->a->free(sh->h, win[j]);
        }
        win[j] = sh->a->malloc(sh->h, 16u + (size_t)(pr_rng(&s) % 1009u));
        if (++k % 64u == 0u) {
            sched_yield(); /* the other low thread gets its turn (same FIFO priority) */
        }
    }
    for (unsigned j = 0; j < PR_WINDOW; j++) {
        if (win[j] != NULL) {
            sh->a->free(sh->h, win[j]);
        }
    }
    if (sh->a->thread_exit != NULL) {
        sh->a->thread_exit(sh->h);
    }
    return NULL;
}

static void *pr_middle(void *arg)
{
    pr_shared_t *sh = ((pr_thread_t *)arg)->sh;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed) && !drv_stop) {
        uint64_t until = clk_now_ns() + (uint64_t)PR_BURST_US * 1000u;
        while (clk_now_ns() < until) {
        }
        clock_gettime(CLOCK_MONOTONIC, &next);
        pr_sleep_until(&next, PR_REST_US);
    }
    return NULL;
}

static int pr_spawn(pthread_t *tid, void *(*fn)(void *), void *arg, int prio, unsigned cpu)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = prio;
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    pthread_attr_setschedparam(&attr, &sp);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    int rc = pthread_create(tid, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

typedef struct pr_result {
    const char *name;
    mt_summary_t m, f;
    unsigned failures;
} pr_result_t;

static bool pr_run_one(bench_ctx_t *ctx, const rt_allocator_t *a, unsigned periods, unsigned cpu, pr_result_t *r)
{
    pr_shared_t sh;
    memset(&sh, 0, sizeof sh);
    sh.a = a;
    sh.periods = periods;
    sh.seed = ctx->seed;
    sh.m_cycles = calloc(periods, sizeof *sh.m_cycles);
    sh.f_cycles = calloc(periods, sizeof *sh.f_cycles);
    if (sh.m_cycles == NULL || sh.f_cycles == NULL) {
        free(sh.m_cycles);
        free(sh.f_cycles);
        return false;
    }
    memset(ctx->arena, 0xA5, PR_HEAP);
    sh.h = a->create != NULL ? a->create(ctx->arena, PR_HEAP) : NULL;
    if (a->create != NULL && sh.h == NULL) {
        free(sh.m_cycles);
        free(sh.f_cycles);
        return false;
    }
    int base = sched_get_priority_min(SCHED_FIFO);
    pr_thread_t th[4] = {{&sh, 0}, {&sh, 1}, {&sh, 2}, {&sh, 3}};
    pthread_t tid[4];
    bool ok = pr_spawn(&tid[0], pr_low, &th[0], base + 1, cpu) == 0;
    ok = ok && pr_spawn(&tid[1], pr_low, &th[1], base + 1, cpu) == 0;
    ok = ok && pr_spawn(&tid[2], pr_middle, &th[2], base + 2, cpu) == 0;
    ok = ok && pr_spawn(&tid[3], pr_high, &th[3], base + 3, cpu) == 0;
    if (!ok) {
        atomic_store(&sh.stop, true);
    }
    for (unsigned i = 0; i < 4u; i++) {
        if (i < 4u && ok) {
            pthread_join(tid[i], NULL);
        }
    }
    r->name = a->name;
    mt_summarize_u32(sh.m_cycles, periods, &r->m, NULL);
    mt_summarize_u32(sh.f_cycles, periods, &r->f, NULL);
    free(sh.m_cycles);
    free(sh.f_cycles);
    return ok;
}

int exp_prio(bench_ctx_t *ctx)
{
    printf("== prio -- priority inversion: a SCHED_FIFO thread's malloc/free while lower ones allocate ==\n");
    int why = mt_rt_permitted();
    if (why != 0) {
        printf("prio: skipped -- SCHED_FIFO threads are refused here (%s); run as root or with CAP_SYS_NICE "
               "(or raise RLIMIT_RTPRIO) to measure it.\n\n",
               strerror(why));
        return 0;
    }
    if (ctx->arena_size < PR_HEAP) {
        fprintf(stderr, "prio: the arena is smaller than %d MiB\n", PR_HEAP_MIB);
        return 1;
    }
    unsigned periods = ctx->scale == BENCH_QUICK ? 2000u : 10000u;
    const rt_allocator_t *cand[4] = {bench_mt_tlsf_mutex(), bench_mt_tlsf_pi(), rt_registry_find("tlsfmc"),
                                     rt_registry_find("wfc")};
    pr_result_t res[4];
    size_t n = 0;
    unsigned cpu = 0;
    for (size_t i = 0; i < 4u; i++) {
        const rt_allocator_t *a = cand[i];
        if (a == NULL ||
            (ctx->allocs_explicit && !bench_selected(ctx, a->name) && !(i == 0u && bench_selected(ctx, "tlsf")))) {
            continue;
        }
        if (pr_run_one(ctx, a, periods, cpu, &res[n])) {
            n++;
        } else {
            printf("prio: %s could not be run (threads or instance refused)\n", a->name);
        }
    }
    bench_progress_clear();
    double tpn = ctx->clock.ticks_per_ns > 0.0 ? ctx->clock.ticks_per_ns : 1.0;
    printf("H: SCHED_FIFO, every %d us one malloc(16..1024) and its free, %u periods; L1, L2: lowest priority, "
           "allocating without pause; M: middle priority, %d ms spinning, %d ms asleep; all on CPU %u.\n",
           PR_PERIOD_US, periods, PR_BURST_US / 1000, PR_REST_US / 1000, cpu);
    printf("%-11s %9s %9s %9s %11s %9s %7s | %9s %9s %11s %9s\n", "allocator", "m median", "m p99", "m p99.9", "m max",
           "max us", "x lock", "f median", "f p99.9", "f max", "max us");
    const pr_result_t *lock = n > 0u && strcmp(res[0].name, "tlsf+mutex") == 0 ? &res[0] : NULL;
    char path[512];
    FILE *csv = bench_csv_open(ctx, "prio.csv", false, path, sizeof path);
    if (csv != NULL) {
        bench_print_header(csv, ctx, "# ");
        fprintf(csv, "allocator,periods,malloc_median,malloc_p99,malloc_p999,malloc_max,malloc_max_us,"
                     "free_median,free_p99,free_p999,free_max,free_max_us,malloc_max_vs_mutex\n");
    }
    for (size_t i = 0; i < n; i++) {
        const pr_result_t *r = &res[i];
        double ratio = lock != NULL && lock->m.max > 0u ? (double)r->m.max / (double)lock->m.max : 0.0;
        char rt[16];
        snprintf(rt, sizeof rt, lock != NULL ? "%.3f" : "-", ratio);
        printf("%-11s %9llu %9llu %9llu %11llu %9.1f %7s | %9llu %9llu %11llu %9.1f\n", r->name,
               (unsigned long long)r->m.median, (unsigned long long)r->m.p99, (unsigned long long)r->m.p999,
               (unsigned long long)r->m.max, (double)r->m.max / tpn / 1000.0, rt, (unsigned long long)r->f.median,
               (unsigned long long)r->f.p999, (unsigned long long)r->f.max, (double)r->f.max / tpn / 1000.0);
        if (csv != NULL) {
            fprintf(csv, "%s,%u,%llu,%llu,%llu,%llu,%.3f,%llu,%llu,%llu,%llu,%.3f,%.5f\n", r->name, periods,
                    (unsigned long long)r->m.median, (unsigned long long)r->m.p99, (unsigned long long)r->m.p999,
                    (unsigned long long)r->m.max, (double)r->m.max / tpn / 1000.0, (unsigned long long)r->f.median,
                    (unsigned long long)r->f.p99, (unsigned long long)r->f.p999, (unsigned long long)r->f.max,
                    (double)r->f.max / tpn / 1000.0, ratio);
        }
    }
    if (csv != NULL) {
        bench_csv_close(csv, path);
    }
    printf("Cycles (%s), fenced; x lock: H's worst malloc against tlsf+mutex's in this run (the target for a\n"
           "lock-free allocator: <= 0.1). An inversion shows as a max near M's %d ms burst.\n\n",
           CLK_UNIT, PR_BURST_US / 1000);
    return 0;
}
