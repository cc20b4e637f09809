/* SPDX-License-Identifier: MIT */
/*
 * wf_stress.c -- the wait-free buddy tree under real concurrency (a stress test, not a benchmark).
 *
 * For every wait-free variant of the registry (and the hints + read-only combination): T threads
 * share one instance and each runs N random operations -- malloc of sizes from 1 byte to a
 * quarter of the tree, calloc, realloc, free -- on its own live set. Proven on every operation:
 *   - no two live blocks overlap: a shadow array with one atomic owner word per tree node; a
 *     thread claims every node of the chunk it got with a compare-and-swap from 0, and a claim
 *     that finds the node owned is an overlap (the shadow is released before free or realloc);
 *   - every block keeps its owner's pattern: filled after malloc, verified before free/realloc;
 *   - calloc'd blocks are zero, realloc keeps the contents;
 *   - no error report (the handler is installed; bad input is never made here).
 * At quiescence -- every Q operations all threads meet at a barrier, and at the end -- one thread
 * checks the paper's equation 3 (rt_wf_check: every counter equals the free leaves below it, every
 * live chunk intact) and that stats.used_blocks equals the blocks the threads hold; at the end,
 * with everything freed, the root's counter is back to all leaves less the control chunk.
 * Failures (NULL) are allowed: the tree can be full, and the weak guarantee lets overlapping
 * calls fail; they are counted and printed.
 *
 * The tree behind per-thread caches (rtalloc/wfcache.h) runs the same operations through its own
 * API, in the registry's configuration and in three that stress its edges (a capacity of 1 so
 * that nearly every free flushes, batches of 8, and 2 slots for many threads so most threads run
 * without a cache beside those with one), and at 2 and 64 threads; its threads also pass blocks
 * to each other through a mailbox (remote frees: the receiver verifies and frees what another
 * thread allocated). At the end every cache is flushed (rt_wfc_flush_all) and nothing may stay
 * used.
 *
 * Racing frees (every variant, and the caches): two threads free the same K blocks at the same
 * time, round after round -- an application's double free on two cores. Of each pair of frees
 * exactly one may claim the block: K DOUBLE_FREE reports per round, K frees counted, nothing used
 * afterwards, equation 3 at the end of each round.
 *
 * Runs in every configuration of test.sh, ThreadSanitizer and ASan/UBSan included.
 *
 * Usage: wf_stress [threads] [ops per thread] [seed]   (default 4, 20000, 1; printed on failure)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>

#include "testlib.h"

#include "rtalloc/waitfree.h"
#include "rtalloc/wfcache.h"

#define MAX_THREADS 64u
#define MAILBOX 8u
#define LIVE 64u
#define TREE_BYTES ((size_t)1 << 20)
#define QUIESCE 2000u

typedef struct shared {
    const char *name;
    rt_wf_t *w;
    rt_wfc_t *c;                              /* not NULL: every call goes through the caches */
    _Atomic(struct block *) mailbox[MAILBOX]; /* blocks in transit between threads */
    unsigned char *tree;                      /* node 0 (the buffer is 64-aligned, so nothing is skipped) */
    size_t node;
    atomic_uint *owner; /* per node: 0 free, else thread id + 1 */
    unsigned threads;
    unsigned ops;
    uint64_t seed;
    pthread_barrier_t barrier;
    atomic_size_t live_total; /* blocks held at the barrier */
    atomic_uint overlaps, corruptions, reports, quiescent_failures;
    atomic_ulong failures, mallocs;
    tl_recorder_t rec;
} shared_t;

typedef struct block {
    unsigned char *p;
    size_t n;
    uint64_t id;
} block_t;

typedef struct thread {
    shared_t *sh;
    unsigned id;
    tl_rng_t rng;
    block_t live[LIVE];
    size_t nlive;
    uint64_t next_id;
} thread_t;

static void *s_malloc(shared_t *sh, size_t n) { return sh->c ? rt_wfc_malloc(sh->c, n) : rt_wf_malloc(sh->w, n); }
static void *s_calloc(shared_t *sh, size_t n) { return sh->c ? rt_wfc_calloc(sh->c, 1, n) : rt_wf_calloc(sh->w, 1, n); }
static void s_free(shared_t *sh, void *p)
{
    if (sh->c != NULL) {
        rt_wfc_free(sh->c, p);
    } else {
        rt_wf_free(sh->w, p);
    }
}
static void *s_realloc(shared_t *sh, void *p, size_t n)
{
    return sh->c ? rt_wfc_realloc(sh->c, p, n) : rt_wf_realloc(sh->w, p, n);
}
static void s_stats(shared_t *sh, rt_stats_t *s)
{
    if (sh->c != NULL) {
        rt_wfc_stats(sh->c, s);
    } else {
        rt_wf_stats(sh->w, s);
    }
}
static bool s_check(shared_t *sh) { return sh->c ? rt_wfc_check(sh->c) : rt_wf_check(sh->w); }

static void count_report(void *context, const rt_error_t *error)
{
    shared_t *sh = context;
    (void)error;
    atomic_fetch_add(&sh->reports, 1u);
}

/* Node range of a block: from the node before p to the end of its chunk. */
static void node_range(const shared_t *sh, const unsigned char *p, size_t usable, size_t *first, size_t *count)
{
    *first = (size_t)(p - 4 - sh->tree) / sh->node;
    *count = (usable + RT_WF_OVERHEAD) / sh->node;
}

static bool shadow_claim(thread_t *t, const unsigned char *p)
{
    shared_t *sh = t->sh;
    size_t first = 0, count = 0;
    node_range(sh, p, rt_wf_usable_size(sh->w, (void *)(uintptr_t)p), &first, &count);
    for (size_t i = 0; i < count; i++) {
        unsigned expected = 0;
        if (!atomic_compare_exchange_strong(&sh->owner[first + i], &expected, t->id + 1u)) {
            atomic_fetch_add(&sh->overlaps, 1u);
            TL_CHECK(false, "%s: thread %u got %p (nodes %zu..%zu) but node %zu is held by thread %u", sh->name, t->id,
                     (const void *)p, first, first + count - 1u, first + i, expected - 1u);
            return false;
        }
    }
    return true;
}

static void shadow_release(thread_t *t, const unsigned char *p)
{
    shared_t *sh = t->sh;
    size_t first = 0, count = 0;
    node_range(sh, p, rt_wf_usable_size(sh->w, (void *)(uintptr_t)p), &first, &count);
    for (size_t i = 0; i < count; i++) {
        atomic_store(&sh->owner[first + i], 0u);
    }
}

static size_t draw_size(thread_t *t)
{
    unsigned k = (unsigned)(tl_next(&t->rng) % 100u);
    if (k < 40u) {
        return tl_range(&t->rng, 1, 64);
    }
    if (k < 85u) {
        return tl_range(&t->rng, 65, 2048);
    }
    if (k < 98u) {
        return tl_range(&t->rng, 2049, 32768);
    }
    return tl_range(&t->rng, 32769, TREE_BYTES / 4u);
}

static bool verify(thread_t *t, const block_t *b)
{
    size_t bad = tl_verify(b->p, b->n, b->id);
    if (bad != b->n) {
        atomic_fetch_add(&t->sh->corruptions, 1u);
        TL_CHECK(false, "%s: thread %u: block %p (%zu bytes) corrupted at %zu", t->sh->name, t->id, (void *)b->p, b->n,
                 bad);
        return false;
    }
    return true;
}

static bool add(thread_t *t, unsigned char *p, size_t n, bool zeroed)
{
    if (!shadow_claim(t, p)) {
        return false;
    }
    if (zeroed) {
        for (size_t j = 0; j < n; j++) {
            if (p[j] != 0u) {
                atomic_fetch_add(&t->sh->corruptions, 1u);
                return TL_CHECK(false, "%s: calloc block not zero at %zu", t->sh->name, j);
            }
        }
    }
    block_t *b = &t->live[t->nlive++];
    b->p = p;
    b->n = n;
    b->id = ((uint64_t)t->id << 48) | t->next_id++;
    tl_fill(p, n, b->id);
    atomic_fetch_add(&t->sh->mallocs, 1ul);
    return true;
}

/* Leaves block m in a random mailbox slot and frees whatever was there: a block another thread
 * allocated, verified first (its shadow is claimed again: an overlap shows). */
static bool post(thread_t *t, block_t *m)
{
    shared_t *sh = t->sh;
    block_t *got = atomic_exchange(&sh->mailbox[tl_range(&t->rng, 0, MAILBOX - 1u)], m);
    if (got == NULL) {
        return true;
    }
    bool ok = shadow_claim(t, got->p) && verify(t, got);
    shadow_release(t, got->p);
    s_free(sh, got->p);
    free(got);
    return ok;
}

static bool op(thread_t *t)
{
    shared_t *sh = t->sh;
    unsigned k = (unsigned)(tl_next(&t->rng) % 100u);
    if (t->nlive > 0u && (k < 45u || t->nlive == LIVE)) {
        size_t i = tl_range(&t->rng, 0, t->nlive - 1u);
        block_t *b = &t->live[i];
        if (!verify(t, b)) {
            return false;
        }
        if (k < 10u) { /* realloc: the shadow is released first (the old chunk goes back inside) */
            size_t n = draw_size(t);
            shadow_release(t, b->p);
            unsigned char *q = s_realloc(sh, b->p, n);
            if (q == NULL) {
                atomic_fetch_add(&sh->failures, 1ul);
                return shadow_claim(t, b->p) && verify(t, b);
            }
            size_t keep = n < b->n ? n : b->n;
            if (tl_verify(q, keep, b->id) != keep) {
                atomic_fetch_add(&sh->corruptions, 1u);
                return TL_CHECK(false, "%s: realloc lost the contents", sh->name);
            }
            if (!shadow_claim(t, q)) {
                return false;
            }
            b->p = q;
            b->n = n;
            b->id = ((uint64_t)t->id << 48) | t->next_id++;
            tl_fill(q, n, b->id);
            return true;
        }
        if (sh->c != NULL && k >= 40u) { /* to the mailbox: another thread frees it */
            block_t *m = malloc(sizeof *m);
            if (m != NULL) {
                *m = *b;
                shadow_release(t, b->p);
                t->live[i] = t->live[--t->nlive];
                return post(t, m);
            }
        }
        shadow_release(t, b->p);
        s_free(sh, b->p);
        t->live[i] = t->live[--t->nlive];
        return true;
    }
    size_t n = draw_size(t);
    bool zeroed = k >= 90u;
    unsigned char *p = zeroed ? s_calloc(sh, n) : s_malloc(sh, n);
    if (p == NULL) {
        atomic_fetch_add(&sh->failures, 1ul);
        return true;
    }
    return add(t, p, n, zeroed);
}

/* All threads stopped between two barriers: the tree is quiescent. */
static void quiescent_check(shared_t *sh, const char *when)
{
    rt_stats_t s;
    s_stats(sh, &s);
    size_t held = atomic_load(&sh->live_total);
    for (unsigned i = 0; i < MAILBOX; i++) {
        held += atomic_load(&sh->mailbox[i]) != NULL ? 1u : 0u;
    }
    bool ok = TL_CHECK(s_check(sh), "%s: equation 3 %s", sh->name, when);
    ok = TL_CHECK(s.used_blocks == held, "%s: %s: stats.used_blocks %zu, threads hold %zu", sh->name, when,
                  s.used_blocks, held) &&
         ok;
    if (!ok) {
        atomic_fetch_add(&sh->quiescent_failures, 1u);
    }
}

static void *thread_main(void *arg)
{
    thread_t *t = arg;
    shared_t *sh = t->sh;
    bool ok = true;
    for (unsigned i = 0; i < sh->ops; i++) {
        if (ok && !op(t)) {
            ok = false; /* keep meeting the barriers so the others can finish */
        }
        if (i % QUIESCE == QUIESCE - 1u) {
            atomic_fetch_add(&sh->live_total, t->nlive);
            if (pthread_barrier_wait(&sh->barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
                quiescent_check(sh, "at a barrier");
                atomic_store(&sh->live_total, 0u);
            }
            pthread_barrier_wait(&sh->barrier);
        }
    }
    while (t->nlive > 0u) {
        block_t *b = &t->live[--t->nlive];
        verify(t, b);
        shadow_release(t, b->p);
        s_free(sh, b->p);
    }
    return NULL;
}

static void run(const char *name, const rt_wf_config_t *cfg, const rt_wfc_config_t *ccfg, unsigned threads,
                unsigned ops, uint64_t seed)
{
    static shared_t sh;
    memset(&sh, 0, sizeof sh);
    sh.name = name;
    sh.threads = threads;
    sh.ops = ops;
    sh.seed = seed;
    unsigned char *buf = aligned_alloc(64, TREE_BYTES);
    if (!TL_CHECK(buf != NULL, "out of memory")) {
        return;
    }
    if (ccfg != NULL) {
        sh.c = rt_wfc_create(buf, TREE_BYTES, ccfg);
        sh.w = sh.c != NULL ? rt_wfc_tree(sh.c) : NULL;
    } else {
        sh.w = rt_wf_create(buf, TREE_BYTES, cfg);
    }
    if (!TL_CHECK(sh.w != NULL, "%s: create", name)) {
        free(buf);
        return;
    }
    rt_wf_set_handler(sh.w, count_report, &sh);
    sh.tree = buf;
    sh.node = rt_wf_node_size(sh.w);
    sh.owner = calloc(rt_wf_nodes(sh.w), sizeof *sh.owner);
    TL_CHECK(sh.owner != NULL, "out of memory");
    int root_before = rt_wf_counter(sh.w, rt_wf_nodes(sh.w) - 1u);
    pthread_barrier_init(&sh.barrier, NULL, threads);
    static thread_t th[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    unsigned created = 0;
    for (unsigned i = 0; i < threads; i++) {
        memset(&th[i], 0, sizeof th[i]);
        th[i].sh = &sh;
        th[i].id = i;
        th[i].rng = tl_rng_seed(seed * 1000003u + i);
        th[i].next_id = 1;
        /* no TL_CHECK here: the threads already running may be counting checks */
        created += pthread_create(&tid[i], NULL, thread_main, &th[i]) == 0 ? 1u : 0u;
    }
    for (unsigned i = 0; i < created; i++) {
        pthread_join(tid[i], NULL);
    }
    TL_CHECK(created == threads, "pthread_create");
    pthread_barrier_destroy(&sh.barrier);
    /* quiescent: the mailbox emptied, every cache flushed, everything freed */
    for (unsigned i = 0; i < MAILBOX; i++) {
        block_t *m = atomic_exchange(&sh.mailbox[i], NULL);
        if (m != NULL) {
            s_free(&sh, m->p);
            free(m);
        }
    }
    if (sh.c != NULL) {
        TL_CHECK(rt_wfc_check(sh.c), "%s: caches after the run", name);
        rt_wfc_flush_all(sh.c);
        TL_CHECK(rt_wfc_cached_bytes(sh.c) == 0u, "%s: %zu bytes still cached", name, rt_wfc_cached_bytes(sh.c));
    }
    rt_stats_t s;
    s_stats(&sh, &s);
    TL_CHECK(s_check(&sh), "%s: equation 3 after the run", name);
    TL_CHECK(s.used_blocks == 0u && s.used_bytes == 0u, "%s: %zu blocks / %zu bytes still used", name, s.used_blocks,
             s.used_bytes);
    /* the caches' records that are tree chunks stay (never freed): checked by equation 3 above */
    TL_CHECK(sh.c != NULL || rt_wf_counter(sh.w, rt_wf_nodes(sh.w) - 1u) == root_before,
             "%s: root counter %d, fresh %d", name, rt_wf_counter(sh.w, rt_wf_nodes(sh.w) - 1u), root_before);
    TL_CHECK(atomic_load(&sh.reports) == 0u && s.errors == 0u, "%s: %u error reports", name, atomic_load(&sh.reports));
    bool bad = atomic_load(&sh.overlaps) != 0u || atomic_load(&sh.corruptions) != 0u ||
               atomic_load(&sh.quiescent_failures) != 0u;
    printf("%-22s %u threads x %u ops: %lu blocks, %lu NULL (full or overlapping calls), stats mallocs %" PRIu64
           ": %s\n",
           name, threads, ops, atomic_load(&sh.mallocs), atomic_load(&sh.failures), s.mallocs, bad ? "FAILED" : "ok");
    if (bad) {
        printf("  (replay: wf_stress %u %u %" PRIu64 ")\n", threads, ops, seed);
    }
    free(sh.owner);
    free(buf);
}

/* --- racing frees ------------------------------------------------------------------------------- */

#define RACE_K 32u

typedef struct race {
    shared_t *sh;
    unsigned char *p[RACE_K];
    unsigned rounds;
    pthread_barrier_t barrier;
    atomic_uint bad_rounds;
    tl_rng_t rng;
} race_t;

static void *race_main(void *arg)
{
    race_t *rc = *(race_t **)arg;
    bool first = ((race_t **)arg)[1] != NULL;
    shared_t *sh = rc->sh;
    for (unsigned round = 0; round < rc->rounds; round++) {
        unsigned before = 0;
        rt_stats_t s0;
        if (first) {
            s_stats(sh, &s0);
            before = atomic_load(&sh->reports);
            for (unsigned i = 0; i < RACE_K; i++) {
                rc->p[i] = s_malloc(sh, tl_range(&rc->rng, 1, 2048));
            }
        }
        pthread_barrier_wait(&rc->barrier);
        for (unsigned i = 0; i < RACE_K; i++) {
            s_free(sh, rc->p[i]); /* both threads, the same block at about the same time */
        }
        pthread_barrier_wait(&rc->barrier);
        if (first) {
            unsigned got = 0;
            for (unsigned i = 0; i < RACE_K; i++) {
                got += rc->p[i] != NULL ? 1u : 0u;
            }
            rt_stats_t s1;
            s_stats(sh, &s1);
            unsigned reports = atomic_load(&sh->reports) - before;
            if (!TL_CHECK(reports == got && s1.frees - s0.frees == got && s1.used_blocks == 0u && s_check(sh),
                          "%s: round %u: %u blocks freed twice at once: %u reports, %llu frees counted, %zu blocks "
                          "used",
                          sh->name, round, got, reports, (unsigned long long)(s1.frees - s0.frees), s1.used_blocks)) {
                atomic_fetch_add(&rc->bad_rounds, 1u);
            }
        }
        pthread_barrier_wait(&rc->barrier);
    }
    return NULL;
}

static void race_run(const char *name, const rt_wf_config_t *cfg, const rt_wfc_config_t *ccfg, unsigned rounds)
{
    static shared_t sh;
    memset(&sh, 0, sizeof sh);
    sh.name = name;
    unsigned char *buf = aligned_alloc(64, TREE_BYTES);
    if (!TL_CHECK(buf != NULL, "out of memory")) {
        return;
    }
    sh.c = ccfg != NULL ? rt_wfc_create(buf, TREE_BYTES, ccfg) : NULL;
    sh.w = ccfg != NULL ? (sh.c != NULL ? rt_wfc_tree(sh.c) : NULL) : rt_wf_create(buf, TREE_BYTES, cfg);
    if (!TL_CHECK(sh.w != NULL, "%s: create", name)) {
        free(buf);
        return;
    }
    rt_wf_set_handler(sh.w, count_report, &sh);
    static race_t rc;
    memset(&rc, 0, sizeof rc);
    rc.sh = &sh;
    rc.rounds = rounds;
    rc.rng = tl_rng_seed(0x2ACEu);
    pthread_barrier_init(&rc.barrier, NULL, 2);
    race_t *args[2][2] = {{&rc, &rc}, {&rc, NULL}};
    pthread_t tid[2];
    unsigned created = 0;
    for (unsigned i = 0; i < 2u; i++) {
        created += pthread_create(&tid[i], NULL, race_main, args[i]) == 0 ? 1u : 0u;
    }
    for (unsigned i = 0; i < created; i++) {
        pthread_join(tid[i], NULL);
    }
    pthread_barrier_destroy(&rc.barrier);
    TL_CHECK(created == 2u, "pthread_create");
    if (sh.c != NULL) {
        rt_wfc_flush_all(sh.c);
    }
    rt_stats_t s;
    s_stats(&sh, &s);
    TL_CHECK(s_check(&sh) && s.used_bytes == 0u, "%s: racing frees: %zu bytes used at the end", name, s.used_bytes);
    printf("%-22s racing frees, 2 threads x %u rounds of %u blocks: %u double-free reports: %s\n", name, rounds, RACE_K,
           atomic_load(&sh.reports), atomic_load(&rc.bad_rounds) == 0u ? "ok" : "FAILED");
    free(buf);
}

int main(int argc, char **argv)
{
    uint64_t threads = 4, ops = 20000, seed = 1;
    if ((argc > 1 && (!tl_parse_u64(argv[1], &threads) || threads < 1u || threads > MAX_THREADS)) ||
        (argc > 2 && !tl_parse_u64(argv[2], &ops)) || (argc > 3 && !tl_parse_u64(argv[3], &seed))) {
        fprintf(stderr, "usage: wf_stress [threads 1..%u] [ops per thread] [seed]\n", MAX_THREADS);
        return 2;
    }
    size_t n = 0;
    const rt_allocator_t *const *all = rt_registry(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i]->family == RT_FAMILY_TREE_CACHED) {
            rt_wfc_config_t ccfg;
            rt_wfc_default_config(&ccfg);
            run(all[i]->name, NULL, &ccfg, (unsigned)threads, (unsigned)ops, seed);
            continue;
        }
        if (all[i]->family != RT_FAMILY_TREE) {
            continue;
        }
        /* the registry's configuration, recovered from a throw-away instance */
        static unsigned char probe[1u << 16] __attribute__((aligned(64)));
        rt_wf_t *w = all[i]->create(probe, sizeof probe);
        if (!TL_CHECK(w != NULL, "%s: create", all[i]->name)) {
            continue;
        }
        rt_wf_config_t cfg = {rt_wf_node_size(w), rt_wf_flags(w)};
        run(all[i]->name, &cfg, NULL, (unsigned)threads, (unsigned)ops, seed);
    }
    rt_wf_config_t ro_hints = {64, RT_WF_READONLY_DESCENT | RT_WF_HINTS};
    run("hints+read-only", &ro_hints, NULL, (unsigned)threads, (unsigned)ops, seed);
    rt_wf_config_t all_three = {64, RT_WF_READONLY_DESCENT | RT_WF_HINTS | RT_WF_LAZY_REINIT};
    run("hints+read-only+lazy", &all_three, NULL, (unsigned)threads, (unsigned)ops, seed);
    /* the caches at their edges, and at 2 and 64 threads */
    rt_wfc_config_t c1;
    rt_wfc_default_config(&c1);
    c1.capacity = 1u;
    c1.batch_log2 = 1u;
    run("wfc capacity 1", NULL, &c1, (unsigned)threads, (unsigned)ops, seed);
    rt_wfc_config_t c8;
    rt_wfc_default_config(&c8);
    c8.batch_log2 = 3u;
    c8.capacity = 9u;
    c8.tree_flags = RT_WF_READONLY_DESCENT | RT_WF_HINTS;
    run("wfc batch 8, read-only", NULL, &c8, (unsigned)threads, (unsigned)ops, seed);
    rt_wfc_config_t c2;
    rt_wfc_default_config(&c2);
    c2.caches = 2u;
    run("wfc 2 slots", NULL, &c2, 8u, (unsigned)ops / 2u, seed);
    rt_wfc_config_t cd;
    rt_wfc_default_config(&cd);
    run("wfc", NULL, &cd, 2u, (unsigned)ops, seed + 1u);
    run("wfc", NULL, &cd, 64u, (unsigned)ops / 16u, seed + 2u);
    /* racing frees of one block on two threads, every variant and the caches */
    unsigned rounds = (unsigned)(ops / 100u > 0u ? ops / 100u : 1u);
    static const struct {
        const char *name;
        unsigned flags;
    } rv[] = {{"wf", 0},
              {"wf_ro", RT_WF_READONLY_DESCENT},
              {"wf_lazy", RT_WF_LAZY_REINIT},
              {"wf_hint", RT_WF_HINTS | RT_WF_LAZY_REINIT}};
    for (size_t i = 0; i < sizeof rv / sizeof rv[0]; i++) {
        rt_wf_config_t cfg = {64, rv[i].flags};
        race_run(rv[i].name, &cfg, NULL, rounds);
    }
    race_run("wfc", NULL, &cd, rounds);
    race_run("wfc capacity 1", NULL, &c1, rounds);
    return tl_summary("wf_stress");
}
