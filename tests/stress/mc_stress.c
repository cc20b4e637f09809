/* SPDX-License-Identifier: MIT */
/*
 * mc_stress.c -- the TLSF heaps per thread (rtalloc/mcheap.h) under real concurrency.
 *
 * T threads (2 .. 64) share one instance and each runs N random operations on its own live set
 * -- malloc (1 B .. 4 KiB, now and then up to 64 KiB), calloc, realloc, memalign, free -- and
 * passes blocks to the others through a mailbox, so that about a third of the frees are remote
 * (the receiver verifies and frees what another thread allocated: the owner's inbox path).
 * Proven on every operation:
 *   - no two live blocks overlap: a shadow word per RT_HEAP_ALIGN bytes of the buffer, claimed
 *     with a compare-and-swap from 0 for every granule of a block's usable bytes;
 *   - every block keeps its owner's pattern (filled after malloc, verified before free), calloc'd
 *     blocks are zero, realloc keeps the contents, memalign honours its alignment;
 *   - no error report.
 * Every Q operations all threads meet at a barrier: one thread runs rt_mc_check and compares
 * stats.used_blocks with the blocks the threads and the mailbox hold. Threads leave in turn with
 * rt_mc_thread_exit while others still run (their slots adopted or freed); at the end every block
 * is freed, every slot exits, and the trees must be wholly free again (used_bytes 0).
 *
 * Racing frees: two threads free the same K blocks at the same time, round after round, one of
 * them the blocks' owner: exactly one free of each pair may win -- K DOUBLE_FREE reports a round,
 * nothing used afterwards.
 *
 * Work against the stated bound: every malloc and free through the descriptor's malloc_work and
 * free_work must stay within the bound it returns (rt_mc_bound), under real overlap.
 *
 * Usage: mc_stress [threads] [ops per thread] [seed]   (default 4, 20000, 1; printed on failure)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>

#include "testlib.h"

#include "rtalloc/heap.h"
#include "rtalloc/mcheap.h"
#include "rtalloc/registry.h"

#define MAX_THREADS 64u
#define MAILBOX 16u
#define LIVE 64u
#define HEAP_BYTES ((size_t)8 << 20)
#define QUIESCE 2000u
#define GRAN ((size_t)RT_HEAP_ALIGN)

typedef struct block {
    unsigned char *p;
    size_t n;
    uint64_t id;
} block_t;

typedef struct shared {
    const rt_allocator_t *d;
    rt_mc_t *mc;
    unsigned char *buf;
    atomic_uint *owner; /* per granule of the buffer: 0 free, else thread id + 1 */
    _Atomic(block_t *) mailbox[MAILBOX];
    unsigned threads, ops, quiesce;
    uint64_t seed;
    pthread_barrier_t barrier;
    atomic_size_t live_total;
    atomic_uint overlaps, corruptions, reports, quiescent_failures, over_bound, exits;
    atomic_ulong failures, remote;
} shared_t;

typedef struct thread {
    shared_t *sh;
    unsigned id;
    tl_rng_t rng;
    block_t live[LIVE];
    size_t nlive;
    uint64_t next_id;
    bool exited;
} thread_t;

static void count_report(void *context, const rt_error_t *error)
{
    shared_t *sh = context;
    (void)error;
    atomic_fetch_add(&sh->reports, 1u);
}

static bool shadow(thread_t *t, const unsigned char *p, bool claim)
{
    shared_t *sh = t->sh;
    size_t usable = rt_mc_usable_size(sh->mc, (void *)(uintptr_t)p);
    size_t first = (size_t)(p - sh->buf) / GRAN, count = (usable + GRAN - 1u) / GRAN;
    for (size_t i = 0; i < count; i++) {
        if (claim) {
            unsigned expected = 0;
            if (!atomic_compare_exchange_strong(&sh->owner[first + i], &expected, t->id + 1u)) {
                atomic_fetch_add(&sh->overlaps, 1u);
                TL_CHECK(false, "tlsfmc: thread %u got %p (%zu bytes) but granule %zu is held by thread %u", t->id,
                         (const void *)p, usable, first + i, expected - 1u);
                return false;
            }
        } else {
            atomic_store(&sh->owner[first + i], 0u);
        }
    }
    return true;
}

static void fill(block_t *b) { tl_fill(b->p, b->n, (unsigned)b->id); }
static bool intact(thread_t *t, const block_t *b)
{
    if (tl_verify(b->p, b->n, (unsigned)b->id) != b->n) {
        atomic_fetch_add(&t->sh->corruptions, 1u);
        TL_CHECK(false, "tlsfmc: thread %u: block %p (%zu bytes) lost its pattern", t->id, (void *)b->p, b->n);
        return false;
    }
    return true;
}

static void *t_malloc(thread_t *t, size_t n)
{
    rt_work_t w;
    void *p = t->sh->d->malloc_work(t->sh->mc, n, &w);
    if (w.nodes_bound != 0u && (w.nodes > w.nodes_bound || w.rmw > w.rmw_bound)) {
        atomic_fetch_add(&t->sh->over_bound, 1u);
        TL_CHECK(false, "tlsfmc: malloc(%zu): %u steps, %u RMW, over the bound %u / %u", n, w.nodes, w.rmw,
                 w.nodes_bound, w.rmw_bound);
    }
    return p;
}
static void t_free(thread_t *t, void *p)
{
    rt_work_t w;
    t->sh->d->free_work(t->sh->mc, p, &w);
    if (w.nodes_bound != 0u && (w.nodes > w.nodes_bound || w.rmw > w.rmw_bound)) {
        atomic_fetch_add(&t->sh->over_bound, 1u);
        TL_CHECK(false, "tlsfmc: free: %u steps, %u RMW, over the bound %u / %u", w.nodes, w.rmw, w.nodes_bound,
                 w.rmw_bound);
    }
}

static void drop(thread_t *t, size_t i)
{
    block_t *b = &t->live[i];
    if (intact(t, b)) {
        shadow(t, b->p, false);
        t_free(t, b->p);
    }
    t->live[i] = t->live[--t->nlive];
}

static void take(thread_t *t, unsigned char *p, size_t n, bool zero)
{
    if (p == NULL) {
        atomic_fetch_add(&t->sh->failures, 1u);
        return;
    }
    if (zero && tl_verify(p, n, 0) != 0u) {
        /* tl_verify counts matching bytes of the pattern; zeros are checked directly */
    }
    if (zero) {
        for (size_t i = 0; i < n; i++) {
            if (p[i] != 0u) {
                atomic_fetch_add(&t->sh->corruptions, 1u);
                TL_CHECK(false, "tlsfmc: calloc'd block %p not zero at %zu", (void *)p, i);
                break;
            }
        }
    }
    if (!shadow(t, p, true)) {
        return;
    }
    block_t *b = &t->live[t->nlive++];
    b->p = p;
    b->n = n;
    b->id = ((uint64_t)t->id << 40) | t->next_id++;
    fill(b);
}

static size_t draw_size(thread_t *t)
{
    return tl_chance(&t->rng, 2) ? tl_range(&t->rng, 4096, 65536) : tl_range(&t->rng, 1, 4096);
}

static void one_op(thread_t *t)
{
    shared_t *sh = t->sh;
    unsigned r = (unsigned)tl_range(&t->rng, 0, 99);
    if (t->nlive == LIVE || (t->nlive > 0u && r < 35u)) {
        drop(t, tl_range(&t->rng, 0, t->nlive - 1u));
    } else if (t->nlive > 0u && r < 50u) { /* hand a block to whoever takes the slot */
        size_t i = tl_range(&t->rng, 0, t->nlive - 1u);
        block_t *b = malloc(sizeof *b);
        if (b != NULL) {
            *b = t->live[i];
            t->live[i] = t->live[--t->nlive];
            b = atomic_exchange(&sh->mailbox[tl_range(&t->rng, 0, MAILBOX - 1u)], b);
            if (b != NULL) { /* someone else's block: verify, free (a remote free, mostly) */
                if (intact(t, b)) {
                    shadow(t, b->p, false);
                    t_free(t, b->p);
                    atomic_fetch_add(&sh->remote, 1u);
                }
                free(b);
            }
        }
    } else if (t->nlive > 0u && r < 60u) {
        size_t i = tl_range(&t->rng, 0, t->nlive - 1u);
        block_t *b = &t->live[i];
        if (!intact(t, b)) {
            return;
        }
        size_t n = draw_size(t);
        shadow(t, b->p, false);
        unsigned char *q = rt_mc_realloc(sh->mc, b->p, n);
        if (q == NULL) {
            shadow(t, b->p, true);
            atomic_fetch_add(&sh->failures, 1u);
            return;
        }
        size_t keep = n < b->n ? n : b->n;
        if (tl_verify(q, keep, (unsigned)b->id) != keep) {
            atomic_fetch_add(&sh->corruptions, 1u);
            TL_CHECK(false, "tlsfmc: realloc lost the contents");
        }
        t->live[i] = t->live[--t->nlive];
        take(t, q, n, false);
    } else if (r < 68u) {
        size_t n = draw_size(t);
        take(t, rt_mc_calloc(sh->mc, 1, n), n, true);
    } else if (r < 73u) {
        size_t a = (size_t)1 << tl_range(&t->rng, 5, 12);
        size_t n = draw_size(t);
        unsigned char *p = rt_mc_memalign(sh->mc, a, n);
        if (p != NULL && ((uintptr_t)p & (a - 1u)) != 0u) {
            TL_CHECK(false, "tlsfmc: memalign(%zu) returned %p", a, (void *)p);
        }
        take(t, p, n, false);
    } else {
        size_t n = draw_size(t);
        take(t, t_malloc(t, n), n, false);
    }
}

static void quiesce(thread_t *t)
{
    shared_t *sh = t->sh;
    atomic_fetch_add(&sh->live_total, t->nlive);
    int w = pthread_barrier_wait(&sh->barrier);
    if (w == PTHREAD_BARRIER_SERIAL_THREAD) {
        size_t held = atomic_load(&sh->live_total);
        for (unsigned m = 0; m < MAILBOX; m++) {
            held += atomic_load(&sh->mailbox[m]) != NULL ? 1u : 0u;
        }
        rt_stats_t s;
        rt_mc_stats(sh->mc, &s);
        bool ok = rt_mc_check(sh->mc);
        if (!TL_CHECK(ok && s.used_blocks == held, "tlsfmc: at a barrier: check %s, used_blocks %zu, held %zu",
                      ok ? "passed" : "FAILED", s.used_blocks, held)) {
            atomic_fetch_add(&sh->quiescent_failures, 1u);
        }
        atomic_store(&sh->live_total, 0u);
    }
    pthread_barrier_wait(&sh->barrier);
}

static void *worker(void *arg)
{
    thread_t *t = arg;
    shared_t *sh = t->sh;
    for (unsigned i = 1; i <= sh->ops; i++) {
        one_op(t);
        if (i % sh->quiesce == 0u) {
            quiesce(t);
        }
    }
    while (t->nlive > 0u) {
        drop(t, t->nlive - 1u);
    }
    rt_mc_thread_exit(sh->mc);
    atomic_fetch_add(&sh->exits, 1u);
    return NULL;
}

static void run(const char *what, unsigned threads, unsigned ops, uint64_t seed, const rt_mc_config_t *cfg)
{
    shared_t sh;
    memset(&sh, 0, sizeof sh);
    sh.d = rt_registry_find("tlsfmc");
    sh.buf = aligned_alloc(64, HEAP_BYTES);
    sh.owner = calloc(HEAP_BYTES / GRAN, sizeof *sh.owner);
    if (!TL_CHECK(sh.d != NULL && sh.buf != NULL && sh.owner != NULL, "setup")) {
        return;
    }
    memset(sh.buf, 0x5A, HEAP_BYTES);
    sh.mc = rt_mc_create(sh.buf, HEAP_BYTES, cfg);
    if (!TL_CHECK(sh.mc != NULL, "rt_mc_create")) {
        return;
    }
    rt_mc_set_handler(sh.mc, count_report, &sh);
    sh.threads = threads;
    sh.ops = ops;
    sh.seed = seed;
    sh.quiesce = ops < QUIESCE ? ops : QUIESCE;
    ops = ops / sh.quiesce * sh.quiesce; /* every thread meets every barrier */
    sh.ops = ops;
    pthread_barrier_init(&sh.barrier, NULL, threads);
    thread_t *t = calloc(threads, sizeof *t);
    pthread_t *tid = calloc(threads, sizeof *tid);
    for (unsigned i = 0; i < threads; i++) {
        t[i].sh = &sh;
        t[i].id = i;
        t[i].rng = tl_rng_seed(seed * 1000003u + i);
        t[i].next_id = 1;
        pthread_create(&tid[i], NULL, worker, &t[i]);
    }
    for (unsigned i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
    }
    /* what stayed in the mailbox: freed by this thread (remote frees into exited slots) */
    thread_t last = {.sh = &sh, .id = threads};
    for (unsigned m = 0; m < MAILBOX; m++) {
        block_t *b = atomic_exchange(&sh.mailbox[m], NULL);
        if (b != NULL) {
            if (intact(&last, b)) {
                shadow(&last, b->p, false);
                rt_mc_free(sh.mc, b->p);
            }
            free(b);
        }
    }
    rt_mc_thread_exit(sh.mc);
    /* Every slot has exited; the last remote free into each exited heap gave its spans back. */
    rt_stats_t s;
    rt_mc_stats(sh.mc, &s);
    bool ok = rt_mc_check(sh.mc);
    TL_CHECK(ok && s.used_bytes == 0u && s.used_blocks == 0u && rt_mc_held_bytes(sh.mc) == 0u,
             "%s: at the end: check %s, %zu bytes in %zu blocks used, %zu held by heaps", what,
             ok ? "passed" : "FAILED", s.used_bytes, s.used_blocks, rt_mc_held_bytes(sh.mc));
    TL_CHECK(atomic_load(&sh.overlaps) == 0u && atomic_load(&sh.corruptions) == 0u && atomic_load(&sh.reports) == 0u &&
                 atomic_load(&sh.quiescent_failures) == 0u && atomic_load(&sh.over_bound) == 0u,
             "%s: overlaps %u corruptions %u reports %u barrier failures %u over the bound %u", what,
             atomic_load(&sh.overlaps), atomic_load(&sh.corruptions), atomic_load(&sh.reports),
             atomic_load(&sh.quiescent_failures), atomic_load(&sh.over_bound));
    printf("%-28s %2u threads x %u ops: %lu remote frees, %lu NULLs, %zu bytes held after exit, %s\n", what, threads,
           ops, atomic_load(&sh.remote), atomic_load(&sh.failures), rt_mc_held_bytes(sh.mc),
           tl_state.failed == 0u ? "ok" : "FAILED");
    pthread_barrier_destroy(&sh.barrier);
    free(t);
    free(tid);
    free(sh.owner);
    free(sh.buf);
}

/* The owner takes back at most k blocks a call: another thread pushes 40 of the owner's blocks;
 * each of the owner's next calls takes back exactly k until the inbox is empty (counted by the
 * call's trace), and none of them takes more. */
typedef struct drain_case {
    rt_mc_t *mc;
    void *blk[40];
} drain_case_t;

static void *drain_pusher(void *arg)
{
    drain_case_t *dc = arg;
    for (unsigned i = 0; i < 40u; i++) {
        rt_mc_free(dc->mc, dc->blk[i]);
    }
    rt_mc_thread_exit(dc->mc);
    return NULL;
}

static void drain_bounded(void)
{
    static unsigned char buf[1u << 20] __attribute__((aligned(64)));
    drain_case_t dc;
    dc.mc = rt_mc_create(buf, sizeof buf, NULL);
    if (!TL_CHECK(dc.mc != NULL, "drain: create")) {
        return;
    }
    for (unsigned i = 0; i < 40u; i++) {
        dc.blk[i] = rt_mc_malloc(dc.mc, 64);
    }
    pthread_t t;
    pthread_create(&t, NULL, drain_pusher, &dc);
    pthread_join(t, NULL);
    unsigned taken = 0, calls = 0, most = 0;
    while (taken < 40u && calls < 100u) {
        rt_mc_trace_t tr;
        void *p = rt_mc_malloc_ex(dc.mc, 64, &tr);
        taken += tr.drained;
        most = tr.drained > most ? tr.drained : most;
        rt_mc_free_ex(dc.mc, p, &tr); /* a free takes back its share too */
        taken += tr.drained;
        most = tr.drained > most ? tr.drained : most;
        calls++;
    }
    TL_CHECK(taken == 40u && most == RT_MC_DRAIN && calls == (40u + 2u * RT_MC_DRAIN - 1u) / (2u * RT_MC_DRAIN),
             "drain: %u blocks taken back in %u malloc/free pairs, at most %u a call (k = %u)", taken, calls, most,
             RT_MC_DRAIN);
    rt_stats_t s;
    rt_mc_stats(dc.mc, &s);
    TL_CHECK(s.used_blocks == 0u && rt_mc_check(dc.mc), "drain: %zu blocks used after", s.used_blocks);
    printf("%-28s 40 remote frees taken back %u a call, in %u malloc/free pairs: %s\n", "tlsfmc drain", most, calls,
           taken == 40u && most == RT_MC_DRAIN ? "ok" : "FAILED");
    rt_mc_thread_exit(dc.mc);
}

/* Bad input from another thread, as an attacker would send it: frees of an interior pointer, a
 * misaligned one, a pointer past the buffer and a block already freed, all of blocks the owner
 * holds, and a free of a copy of a block's header words placed inside another block (a forged
 * block). Each is reported and changes nothing: the owner's blocks keep their contents, the
 * counts stay, and rt_mc_check passes. */
typedef struct bad_case {
    rt_mc_t *mc;
    unsigned char *a, *b, *gone;
    unsigned reports;
} bad_case_t;

static void bad_report(void *context, const rt_error_t *e)
{
    (void)e;
    ((bad_case_t *)context)->reports++;
}

static void *bad_sender(void *arg)
{
    bad_case_t *bc = arg;
    rt_mc_free(bc->mc, bc->a + 16);              /* interior */
    rt_mc_free(bc->mc, bc->a + 1);               /* misaligned */
    rt_mc_free(bc->mc, bc->gone);                /* freed before: a double free */
    memcpy(bc->b + 64, bc->a - 16, 32);          /* a copy of a's header and first words inside b */
    rt_mc_free(bc->mc, bc->b + 64 + 16);         /* ... freed as if it were a block */
    (void)rt_mc_realloc(bc->mc, bc->a + 32, 10); /* interior realloc */
    static unsigned char outside[64];
    rt_mc_free(bc->mc, outside); /* not of the buffer */
    return NULL;
}

static void bad_remote(void)
{
    static unsigned char buf[1u << 20] __attribute__((aligned(64)));
    bad_case_t bc = {0};
    bc.mc = rt_mc_create(buf, sizeof buf, NULL);
    if (!TL_CHECK(bc.mc != NULL, "bad input: create")) {
        return;
    }
    rt_mc_set_handler(bc.mc, bad_report, &bc);
    bc.a = rt_mc_malloc(bc.mc, 200);
    bc.b = rt_mc_malloc(bc.mc, 200);
    bc.gone = rt_mc_malloc(bc.mc, 200);
    rt_mc_free(bc.mc, bc.gone);
    memset(bc.a, 0x11, 200);
    memset(bc.b, 0x22, 64);
    rt_stats_t s0, s1;
    rt_mc_stats(bc.mc, &s0);
    pthread_t t;
    pthread_create(&t, NULL, bad_sender, &bc);
    pthread_join(t, NULL);
    rt_mc_stats(bc.mc, &s1);
    bool intact = true;
    for (unsigned i = 0; i < 200u; i++) {
        intact = intact && bc.a[i] == 0x11;
    }
    TL_CHECK(bc.reports == 6u && intact && s1.used_blocks == s0.used_blocks && s1.frees == s0.frees &&
                 rt_mc_check(bc.mc),
             "bad input from another thread: %u reports (expected 6), a %s, used blocks %zu -> %zu, frees %llu -> %llu",
             bc.reports, intact ? "intact" : "CHANGED", s0.used_blocks, s1.used_blocks, (unsigned long long)s0.frees,
             (unsigned long long)s1.frees);
    rt_mc_free(bc.mc, bc.a);
    rt_mc_free(bc.mc, bc.b);
    rt_mc_stats(bc.mc, &s1);
    TL_CHECK(bc.reports == 6u && s1.used_blocks == 0u && rt_mc_check(bc.mc), "bad input: the owner frees its blocks");
    printf("%-28s interior, misaligned, double, forged, foreign frees from another thread: %s\n", "tlsfmc bad input",
           bc.reports == 6u && intact ? "ok" : "FAILED");
}

/* Racing frees: thread 0 (the owner) allocates K blocks; both threads free all K at once. */
#define RACE_K 32u
typedef struct race {
    shared_t *sh;
    void *blk[RACE_K];
    unsigned rounds;
    pthread_barrier_t barrier;
    atomic_uint bad_rounds;
} race_t;

static void *racer(void *arg)
{
    race_t *rc = ((void **)arg)[0];
    unsigned id = (unsigned)(uintptr_t)((void **)arg)[1];
    for (unsigned r = 0; r < rc->rounds; r++) {
        if (id == 0u) {
            for (unsigned k = 0; k < RACE_K; k++) {
                rc->blk[k] = rt_mc_malloc(rc->sh->mc, 16u + 48u * k);
            }
        }
        pthread_barrier_wait(&rc->barrier);
        for (unsigned k = 0; k < RACE_K; k++) {
            rt_mc_free(rc->sh->mc, rc->blk[(k + id * RACE_K / 2u) % RACE_K]);
        }
        pthread_barrier_wait(&rc->barrier);
        if (id == 0u) {
            rt_stats_t s;
            rt_mc_stats(rc->sh->mc, &s);
            unsigned reports = atomic_exchange(&rc->sh->reports, 0u);
            if (reports != RACE_K || s.used_blocks != 0u || !rt_mc_check(rc->sh->mc)) {
                atomic_fetch_add(&rc->bad_rounds, 1u);
                TL_CHECK(false, "tlsfmc: racing frees round %u: %u reports (expected %u), %zu blocks used", r, reports,
                         RACE_K, s.used_blocks);
            }
        }
        pthread_barrier_wait(&rc->barrier);
    }
    rt_mc_thread_exit(rc->sh->mc);
    return NULL;
}

static void race_run(unsigned rounds)
{
    shared_t sh;
    memset(&sh, 0, sizeof sh);
    sh.buf = aligned_alloc(64, HEAP_BYTES);
    sh.mc = sh.buf != NULL ? rt_mc_create(sh.buf, HEAP_BYTES, NULL) : NULL;
    if (!TL_CHECK(sh.mc != NULL, "race: create")) {
        return;
    }
    rt_mc_set_handler(sh.mc, count_report, &sh);
    race_t rc;
    memset(&rc, 0, sizeof rc);
    rc.sh = &sh;
    rc.rounds = rounds;
    pthread_barrier_init(&rc.barrier, NULL, 2u);
    pthread_t tid[2];
    void *args[2][2] = {{&rc, (void *)(uintptr_t)0}, {&rc, (void *)(uintptr_t)1}};
    for (unsigned i = 0; i < 2u; i++) {
        pthread_create(&tid[i], NULL, racer, args[i]);
    }
    for (unsigned i = 0; i < 2u; i++) {
        pthread_join(tid[i], NULL);
    }
    pthread_barrier_destroy(&rc.barrier);
    rt_stats_t s;
    rt_mc_stats(sh.mc, &s);
    TL_CHECK(rt_mc_check(sh.mc) && s.used_bytes == 0u, "tlsfmc: racing frees: %zu bytes used at the end", s.used_bytes);
    printf("%-28s racing frees, 2 threads x %u rounds of %u blocks: %s\n", "tlsfmc", rounds, RACE_K,
           atomic_load(&rc.bad_rounds) == 0u ? "ok" : "FAILED");
    free(sh.buf);
}

int main(int argc, char **argv)
{
    uint64_t threads = 4, ops = 20000, seed = 1;
    if ((argc > 1 && (!tl_parse_u64(argv[1], &threads) || threads < 1u || threads > MAX_THREADS)) ||
        (argc > 2 && !tl_parse_u64(argv[2], &ops)) || (argc > 3 && !tl_parse_u64(argv[3], &seed))) {
        fprintf(stderr, "usage: mc_stress [threads 1..%u] [ops per thread] [seed]\n", MAX_THREADS);
        return 2;
    }
    run("tlsfmc", (unsigned)threads, (unsigned)ops, seed, NULL);
    run("tlsfmc", 2u, (unsigned)ops, seed + 1u, NULL);
    run("tlsfmc", 64u, (unsigned)ops / 16u, seed + 2u, NULL);
    rt_mc_config_t grow;
    rt_mc_default_config(&grow);
    grow.min_span = 16u << 10; /* heaps that grow, and give their spans back when emptied */
    run("tlsfmc spans of 16 KiB", (unsigned)threads, (unsigned)ops, seed + 4u, &grow);
    rt_mc_config_t small;
    rt_mc_default_config(&small);
    small.slots = 2u; /* most threads without a heap: direct blocks beside the heaps */
    small.drain = 1u; /* inboxes that fill faster than they drain */
    run("tlsfmc 2 slots, drain 1", 8u, (unsigned)ops / 2u, seed + 3u, &small);
    race_run((unsigned)(ops / 100u > 0u ? ops / 100u : 1u));
    drain_bounded();
    bad_remote();
    return tl_summary("mc_stress");
}
