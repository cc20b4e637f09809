/* SPDX-License-Identifier: MIT */
/*
 * bounded.c -- boundedness without clocks: the allocators' own probe counts (free blocks or
 * bitmap look-ups inspected by the last malloc), never time.
 *
 *  1. TLSF (16 and 32 slots) and half-fit: every malloc, calloc and memalign takes 1 or 2 probes,
 *     over randomised runs (several seeds, sizes 1..64 KiB, a 4 MiB heap) and adversarial states
 *     (hundreds of free blocks of hundreds of sizes, none coalescable; the blog's mem_frag).
 *  2. The blog's mem_frag: N free 72-byte blocks, each fenced by an allocated 8-byte spacer, then
 *     malloc(120), N = 1..256. Segregated fit walks the 72-byte blocks of the request's class:
 *     probes must grow strictly with N and reach at least 256 at N = 256 (the blog measured
 *     N + 3; the fitted line is printed). First fit and best fit grow likewise; TLSF stays flat.
 *
 *  3. The probe counters against an independent count: a walk counts the free blocks before and
 *     after each malloc-family call (probes_vs_walk): list walks visit at most every free block
 *     (+1 bitmap look-up); the binary buddy's probes are exactly 1 + its splits, which the change
 *     of the free-block count gives, and at most K + 1.
 *  4. Counts the code under test cannot fake: the heaps are built with the indexes' count hook
 *     (tests/common/idx_count_config.h, RT_IDX_COUNT in src/index/list.h), which counts each list head,
 *     block and bitmap word a find reads, and each insert and remove, where it happens. Every
 *     call of 1 and 3 is checked on them too: an O(1) find reads at most one list head, one block
 *     and three bitmap words (TLSF's good fit, its row climb); a walk reads exactly as many
 *     blocks as it reports probes (less its bitmap look-up), at most the free blocks. The quick
 *     lists' worst malloc (quick_flush_bound): a miss the index cannot serve gives back exactly
 *     the cached blocks -- as many inserts between its failed find and its retry -- at most the
 *     limit, whatever the probes say.
 * Which allocator gets which check comes from its descriptor (family, malloc_bound), never its
 * name; the suite fails when the registry holds fewer allocators than the build registers.
 *
 * Usage: bounded [seed]   (default: seeds 1..8 for the randomised runs; one seed to replay)
 */
#include "testlib.h"

#include "rtalloc/heap.h"
#include "rtalloc/registry.h"

/* --- the indexes' own counts (tests/common/idx_count_config.h) --------------------------------------- */

static unsigned long ev_total[BT_EV_KINDS];
static unsigned char ev_log[1u << 16];
static size_t ev_n;
static bool ev_lost; /* the log overflowed: the call's counts are not all there */

void idx_test_count(int event)
{
    if (event >= 0 && event < BT_EV_KINDS) {
        ev_total[event]++;
    }
    if (ev_n < sizeof ev_log) {
        ev_log[ev_n++] = (unsigned char)event;
    } else {
        ev_lost = true;
    }
}

static void ev_reset(void)
{
    ev_n = 0;
    ev_lost = false;
}

/* What the indexes did during one call (the log since ev_reset). */
typedef struct ev_call {
    unsigned finds;
    unsigned heads, blocks, maps;             /* summed over the call's finds */
    unsigned max_heads, max_blocks, max_maps; /* the most of one find */
    unsigned inserts, removes;
    unsigned releases; /* inserts between the first find and the second (a flush), else 0 */
} ev_call_t;

static ev_call_t ev_call(void)
{
    ev_call_t c;
    memset(&c, 0, sizeof c);
    unsigned h = 0, b = 0, m = 0, between = 0;
    for (size_t i = 0; i < ev_n; i++) {
        switch (ev_log[i]) {
        case BT_EV_FIND:
            c.finds++;
            h = b = m = 0;
            if (c.finds == 2u) {
                c.releases = between;
            }
            break;
        case BT_EV_HEAD: c.heads++, h++; break;
        case BT_EV_BLOCK: c.blocks++, b++; break;
        case BT_EV_MAP: c.maps++, m++; break;
        case BT_EV_INSERT:
            c.inserts++;
            between += c.finds == 1u;
            break;
        case BT_EV_REMOVE: c.removes++; break;
        default: break;
        }
        c.max_heads = h > c.max_heads ? h : c.max_heads;
        c.max_blocks = b > c.max_blocks ? b : c.max_blocks;
        c.max_maps = m > c.max_maps ? m : c.max_maps;
    }
    return c;
}

/* Which bound an allocator states, from its descriptor (never its name): */
/* flat: a boundary-tag heap whose malloc is O(1) (TLSF, tlsf32, half-fit): 1 or 2 probes */
static bool is_flat(const rt_allocator_t *d)
{
    return d->family == RT_FAMILY_HEAP && d->malloc_bound != NULL && strncmp(d->malloc_bound, "O(1)", 4) == 0;
}

/* walks: a heap whose malloc walks a free list, O(free blocks): probes = free blocks visited */
static bool walks_list(const rt_allocator_t *d)
{
    return d->family == RT_FAMILY_HEAP && d->malloc_bound != NULL && strstr(d->malloc_bound, "free blocks") != NULL;
}

/* buddy: probes = 1 (the bitmap search) + splits, at most K + 1 for K orders above the smallest */
static bool is_buddy(const rt_allocator_t *d) { return d->family == RT_FAMILY_BUDDY; }

/* quick lists: an O(1) heap whose stated bound adds the flush of the cached blocks */
static bool has_quick(const rt_allocator_t *d)
{
    return is_flat(d) && strstr(d->malloc_bound, "cached blocks") != NULL;
}

/* The limit of cached blocks flat_random sets on a heap with quick lists. */
#define QUICK_LIMIT 64u

typedef struct probe_stat {
    unsigned max;
    unsigned long calls;
    unsigned long twos;
} probe_stat_t;

/* The probes of the call just made must be 1 or 2; and the index's own counts (ev_log, since
 * the caller's ev_reset): one find (two when quick lists were flushed first, after at most
 * QUICK_LIMIT releases; none for a quick-list hit), each reading at most one list head, one
 * block and three bitmap words. */
static bool flat_probe(tl_inst_t *x, probe_stat_t *ps, const char *what, size_t size, uint64_t seed, unsigned op)
{
    unsigned p = x->d->last_probes(x->h);
    ps->calls++;
    ps->twos += p == 2u;
    ps->max = p > ps->max ? p : ps->max;
    TL_REQUIRE(p >= 1u && p <= 2u, "%s: %s(%zu) took %u probes (seed %" PRIu64 " op %u; replay: bounded %" PRIu64 ")",
               x->d->name, what, size, p, seed, op, seed);
    ev_call_t c = ev_call();
    bool quick = has_quick(x->d);
    TL_REQUIRE(!ev_lost && c.finds <= (quick ? 2u : 1u) && c.max_heads <= 1u && c.max_blocks <= 1u &&
                   c.max_maps <= 3u && c.releases <= (quick ? QUICK_LIMIT : 0u),
               "%s: %s(%zu): %u finds reading up to %u heads, %u blocks, %u bitmap words; %u released before a retry "
               "(seed %" PRIu64 " op %u)",
               x->d->name, what, size, c.finds, c.max_heads, c.max_blocks, c.max_maps, c.releases, seed, op);
    return true;
}

static size_t draw(tl_rng_t *r)
{
    switch (tl_next(r) % 4u) {
    case 0: return tl_range(r, 1, 64);
    case 1: return tl_range(r, 1, 65536);
    default: { /* log-uniform 1..64 KiB: every octave equally often */
        unsigned octave = (unsigned)tl_range(r, 0, 15);
        return tl_range(r, (size_t)1 << octave, ((size_t)2 << octave) - 1u);
    }
    }
}

#define LIVE 400u

/* The random churn's free step (k < 45 of 100, or a full live set): frees a random live block.
 * True when it did, and the step is over. */
static bool churn_free(const rt_allocator_t *d, void *h, tl_rng_t *r, unsigned k, void **live, size_t *nlive)
{
    if (*nlive == 0u || (k >= 45u && *nlive < LIVE)) {
        return false;
    }
    size_t i = tl_range(r, 0, *nlive - 1u);
    d->free(h, live[i]);
    live[i] = live[--*nlive];
    return true;
}

/* Frees what the churn left live and closes the instance (its check included). */
static void churn_close(const rt_allocator_t *d, tl_inst_t *x, void **live, size_t nlive)
{
    while (nlive > 0u) {
        d->free(x->h, live[--nlive]);
    }
    tl_inst_close(x, true);
}

/* Randomised: malloc / calloc / memalign / free with a live set of up to LIVE blocks. */
static bool flat_random(const rt_allocator_t *d, uint64_t seed, probe_stat_t *ps)
{
    static void *live[LIVE];
    size_t nlive = 0;
    tl_inst_t x;
    bool ok = tl_inst_open(&x, d, 4u << 20, (size_t)(seed % 16u));
    if (ok && has_quick(d)) {
        ok = TL_CHECK(rt_heap_set_quick_limit(x.h, QUICK_LIMIT) == QUICK_LIMIT, "%s: quick limit", d->name);
    }
    tl_rng_t r = tl_rng_seed(seed ^ 0xB0D3Du);
    for (unsigned op = 0; ok && op < 6000u; op++) {
        unsigned k = (unsigned)(tl_next(&r) % 100u);
        if (churn_free(d, x.h, &r, k, live, &nlive)) {
            continue;
        }
        size_t n = draw(&r);
        void *p;
        const char *what;
        ev_reset();
        if (k < 55u && d->calloc != NULL) {
            p = d->calloc(x.h, 1, n);
            what = "calloc";
        } else if (k < 65u && d->memalign != NULL) {
            p = d->memalign(x.h, (size_t)1 << tl_range(&r, 0, 10), n);
            what = "memalign";
        } else {
            p = d->malloc(x.h, n);
            what = "malloc";
        }
        ok = flat_probe(&x, ps, what, n, seed, op);
        if (p != NULL) {
            live[nlive++] = p;
        }
    }
    churn_close(d, &x, live, nlive);
    return ok;
}

/* Adversarial: hundreds of isolated free blocks of hundreds of sizes, then every request size in
 * turn (each freed again, so the state stays adversarial). */
static bool flat_adversarial(const rt_allocator_t *d, probe_stat_t *ps)
{
    static void *keep[4096];
    size_t nkeep = 0;
    tl_inst_t x;
    bool ok = tl_inst_open(&x, d, 4u << 20, 3);
    for (size_t n = 1; ok && n <= 3000u; n += 7u) {
        void *a = d->malloc(x.h, n);
        void *spacer = d->malloc(x.h, 8);
        ok = TL_CHECK(a != NULL && spacer != NULL, "%s: setup malloc(%zu)", d->name, n);
        if (ok) {
            d->free(x.h, a); /* isolated: both neighbours are used */
            keep[nkeep++] = spacer;
        }
    }
    for (size_t n = 1; ok && n <= 70000u; n += n < 4096u ? 1u : 997u) {
        ev_reset();
        void *p = d->malloc(x.h, n);
        ok = flat_probe(&x, ps, "malloc (adversarial)", n, 0, (unsigned)n);
        d->free(x.h, p);
    }
    while (nkeep > 0u) {
        d->free(x.h, keep[--nkeep]);
    }
    tl_inst_close(&x, true);
    return ok;
}

/* K + 1 for the buddy: K = log2(largest block / smallest block) orders above the smallest. */
static unsigned buddy_max_probes(const rt_allocator_t *d)
{
    tl_inst_t x;
    unsigned k = 0;
    if (tl_inst_open(&x, d, 4u << 20, 0) && d->max_request != NULL) {
        for (size_t b = d->min_block; b < d->max_request(x.h) && k < 64u; b *= 2u) {
            k++;
        }
    }
    tl_inst_close(&x, true);
    return k + 1u;
}

static bool count_free(void *context, const rt_block_info_t *info)
{
    *(size_t *)context += info->used ? 0u : 1u;
    return true;
}

static size_t free_blocks(const rt_allocator_t *d, void *h)
{
    size_t n = 0;
    d->walk(h, count_free, &n);
    return n;
}

/* The allocator's probe count of each malloc-family call against a count of our own: the free
 * blocks a walk sees before and after the call.
 *   list walks (first fit, best fit, segregated fit): each probe is a free block visited, plus at
 *     most one bitmap look-up (segregated fit, for a higher class): 1 <= probes <= free + 1,
 *     where free is the walk's count before the call.
 *   buddy: probes = 1 + splits exactly, and a successful malloc of order k from a block of order
 *     j takes one free block and leaves j - k new ones: splits = after - before + 1; a failure
 *     changes nothing and costs 1 probe. probes <= K + 1. */
static bool probes_vs_walk(const rt_allocator_t *d, uint64_t seed, probe_stat_t *ps)
{
    static void *live[LIVE];
    size_t nlive = 0;
    tl_inst_t x;
    bool ok = tl_inst_open(&x, d, 1u << 20, (size_t)(seed % 16u));
    unsigned kmax = is_buddy(d) ? buddy_max_probes(d) : UINT32_MAX;
    tl_rng_t r = tl_rng_seed(seed ^ 0xC0C0Au);
    for (unsigned op = 0; ok && op < 1500u; op++) {
        unsigned k = (unsigned)(tl_next(&r) % 100u);
        if (churn_free(d, x.h, &r, k, live, &nlive)) {
            continue;
        }
        size_t n = draw(&r);
        size_t before = free_blocks(d, x.h);
        ev_reset();
        void *p = k < 55u && d->calloc != NULL ? d->calloc(x.h, 1, n) : d->malloc(x.h, n);
        ev_call_t c = ev_call();
        unsigned probes = d->last_probes(x.h);
        size_t after = free_blocks(d, x.h);
        ps->calls++;
        ps->max = probes > ps->max ? probes : ps->max;
        if (walks_list(d)) {
            ok = TL_CHECK(probes >= 1u && probes <= before + 1u,
                          "%s: malloc(%zu) took %u probes with %zu free blocks (seed %" PRIu64 " op %u)", d->name, n,
                          probes, before, seed, op);
            /* the walk's own count: one find, each block it read counted there, as many as it
             * reports (its bitmap look-up apart), never more than there are free blocks */
            ok = ok && TL_CHECK(!ev_lost && c.finds == 1u && c.heads == 1u && c.blocks <= before &&
                                    c.blocks + c.maps == probes,
                                "%s: malloc(%zu): %u finds, %u heads, %u blocks and %u bitmap words read for %u "
                                "probes, %zu free blocks (seed %" PRIu64 " op %u)",
                                d->name, n, c.finds, c.heads, c.blocks, c.maps, probes, before, seed, op);
        } else if (p == NULL) {
            ok = TL_CHECK(probes == 1u && after == before, "%s: failed malloc(%zu): %u probes, free blocks %zu -> %zu",
                          d->name, n, probes, before, after);
        } else {
            ok = TL_CHECK(after + 1u >= before && probes == after + 2u - before && probes <= kmax,
                          "%s: malloc(%zu): %u probes, free blocks %zu -> %zu (1 + splits = %zu), K + 1 = %u "
                          "(seed %" PRIu64 " op %u)",
                          d->name, n, probes, before, after, after + 2u - before, kmax, seed, op);
        }
        if (p != NULL) {
            live[nlive++] = p;
        }
    }
    churn_close(d, &x, live, nlive);
    return ok;
}

/* mem_frag(N): N free 72-byte blocks, each fenced by an 8-byte spacer, then malloc(120).
 * Returns the probes of that malloc, or UINT32_MAX on a setup failure. */
static unsigned mem_frag(const rt_allocator_t *d, unsigned n)
{
    static void *a[256], *s[256];
    tl_inst_t x;
    unsigned probes = UINT32_MAX;
    if (!tl_inst_open(&x, d, 96u << 10, 0)) {
        tl_inst_close(&x, true);
        return probes;
    }
    bool ok = true;
    for (unsigned i = 0; i < n && ok; i++) {
        a[i] = d->malloc(x.h, 72);
        s[i] = d->malloc(x.h, 8);
        ok = TL_CHECK(a[i] != NULL && s[i] != NULL, "%s: mem_frag setup N=%u", d->name, n);
    }
    if (ok) {
        for (unsigned i = 0; i < n; i++) {
            d->free(x.h, a[i]);
        }
        ev_reset();
        void *p = d->malloc(x.h, 120);
        ev_call_t c = ev_call();
        probes = d->last_probes(x.h);
        ok = TL_CHECK(p != NULL, "%s: mem_frag malloc(120) failed at N=%u", d->name, n);
        if (ok && walks_list(d)) { /* the probes are the blocks the walk read (+ its bitmap look-up) */
            ok = TL_CHECK(c.finds == 1u && c.blocks + c.maps == probes && c.blocks <= n + 1u,
                          "%s: mem_frag N=%u: %u probes, %u blocks and %u bitmap words read", d->name, n, probes,
                          c.blocks, c.maps);
        }
        d->free(x.h, p);
        for (unsigned i = 0; i < n; i++) {
            d->free(x.h, s[i]);
        }
    }
    tl_inst_close(&x, true);
    return ok ? probes : UINT32_MAX;
}

static void fit_line(const unsigned *y, unsigned n, double *slope, double *intercept)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (unsigned i = 1; i <= n; i++) {
        double xi = (double)i, yi = (double)y[i];
        sx += xi;
        sy += yi;
        sxx += xi * xi;
        sxy += xi * yi;
    }
    double m = (double)n;
    *slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    *intercept = (sy - *slope * sx) / m;
}

/* 1. flat: at most 2 probes, always */
static void test_flat(const rt_allocator_t *d, uint64_t first, uint64_t seeds)
{
    probe_stat_t ps = {0, 0, 0};
    for (uint64_t s = first; s < first + seeds; s++) {
        if (!flat_random(d, s, &ps)) {
            break;
        }
    }
    flat_adversarial(d, &ps);
    printf("%-8s %lu malloc-family calls: max probes %u (%lu took 2); mem_frag below\n", d->name, ps.calls, ps.max,
           ps.twos);
}

/* 2. mem_frag: list walks grow with N, the flat ones stay at 1..2, buddy within K + 1 */
static void test_mem_frag(const rt_allocator_t *d)
{
    unsigned probes[257];
    for (unsigned n = 1; n <= 256u; n++) {
        probes[n] = mem_frag(d, n);
        if (probes[n] == UINT32_MAX) {
            return;
        }
    }
    double slope, intercept;
    fit_line(probes, 256, &slope, &intercept);
    printf("%-9s", d->name);
    for (unsigned n = 1; n <= 256u; n *= 2u) {
        printf(" %5u", probes[n]);
    }
    printf("   probes = %.3f N %+.3f\n", slope, intercept);
    unsigned lo = 1u, hi = is_flat(d) ? 2u : is_buddy(d) ? buddy_max_probes(d) : UINT32_MAX;
    for (unsigned n = 1; n <= 256u; n++) {
        if (!TL_CHECK(probes[n] >= lo && probes[n] <= hi, "%s: mem_frag N=%u: malloc(120) took %u probes, bound %u..%u",
                      d->name, n, probes[n], lo, hi)) {
            break;
        }
    }
    if (walks_list(d)) {
        for (unsigned n = 2; n <= 256u; n++) {
            if (!TL_CHECK(probes[n] > probes[n - 1u], "%s: mem_frag probes not increasing: N=%u %u, N=%u %u", d->name,
                          n - 1u, probes[n - 1u], n, probes[n])) {
                break;
            }
        }
        TL_CHECK(probes[256] >= 256u, "%s: mem_frag N=256 took %u probes, expected >= 256", d->name, probes[256]);
    }
}

/* 4a. The hook's events mean what idx_count_config.h says: a fresh heap has had one insert (its
 * pool's block) and no find; a malloc that splits that block is one find, one remove and one
 * insert (the tail), reading no list head and bitmap words only for an O(1) index (a small
 * request: no good fit), and the head and its one block for a walk of one list. */
static void test_events(const rt_allocator_t *d)
{
    tl_inst_t x;
    memset(ev_total, 0, sizeof ev_total);
    if (!tl_inst_open(&x, d, 64u << 10, 0)) {
        tl_inst_close(&x, false);
        return;
    }
    TL_CHECK(ev_total[BT_EV_INSERT] == 1u && ev_total[BT_EV_FIND] == 0u && ev_total[BT_EV_REMOVE] == 0u,
             "%s: create: %lu inserts, %lu finds, %lu removes counted", d->name, ev_total[BT_EV_INSERT],
             ev_total[BT_EV_FIND], ev_total[BT_EV_REMOVE]);
    size_t n = is_flat(d) ? 100u : 1000u;
    ev_reset();
    void *p = d->malloc(x.h, n);
    ev_call_t c = ev_call();
    TL_CHECK(p != NULL && c.finds == 1u && c.removes == 1u && c.inserts == 1u &&
                 (is_flat(d) ? c.heads == 0u && c.blocks == 0u && c.maps >= 1u
                             : c.heads == 1u && c.blocks == 1u && c.maps == 0u),
             "%s: malloc(%zu) on a fresh heap: %u finds, %u removes, %u inserts, %u heads, %u blocks, %u bitmap words",
             d->name, n, c.finds, c.removes, c.inserts, c.heads, c.blocks, c.maps);
    d->free(x.h, p);
    tl_inst_close(&x, true);
}

/* 4b. Quick lists: a heap of 48-byte blocks only, `n` of them freed with the lists' limit at
 * `limit` -- isolated (every other block) or in pairs of neighbours (n <= limit) -- then
 * malloc(100), which no block of the index serves: it gives every cached block back (exactly
 * min(n, limit) releases, counted as the index's inserts between its failed find and its retry),
 * then fails (isolated) or takes a merged pair. */
static unsigned long bt_locks;
static uintptr_t bt_lock(void *context)
{
    (void)context;
    return (uintptr_t)++bt_locks;
}
static void bt_unlock(void *context, uintptr_t token) { (void)context, (void)token; }

static void quick_flush_case(const rt_allocator_t *d, unsigned limit, unsigned n, bool pairs, bool locked)
{
    static void *blk[2048];
    tl_inst_t x;
    if (!tl_inst_open(&x, d, 64u << 10, 0)) {
        tl_inst_close(&x, false);
        return;
    }
    if (locked) { /* the hooked paths (a free with lock hooks caches through its own test of the room) */
        rt_heap_set_lock(x.h, bt_lock, bt_unlock, NULL);
    }
    bool ok = TL_CHECK(rt_heap_set_quick_limit(x.h, limit) == limit, "%s: limit %u", d->name, limit);
    /* the longest path: every block up to the limit cached (the bound in bytes, 1/64 of what is
     * in use, would cache fewer on this small heap) */
    (void)rt_heap_set_quick_share(x.h, 0);
    size_t count = 0;
    while (count < sizeof blk / sizeof blk[0] && (blk[count] = d->malloc(x.h, 48)) != NULL) {
        count++;
    }
    unsigned freed = 0;
    for (size_t i = 0; ok && freed < n && i < count; i++) {
        if (pairs ? i % 4u < 2u : i % 2u == 0u) {
            d->free(x.h, blk[i]);
            blk[i] = NULL;
            freed++;
        }
    }
    ok = ok && TL_CHECK(freed == n, "%s: setup: %u of %u blocks freed", d->name, freed, n);
    unsigned cached = n < limit ? n : limit;
    ev_reset();
    void *p = d->malloc(x.h, 100);
    ev_call_t c = ev_call();
    if (ok) {
        TL_CHECK(!ev_lost && c.finds == (cached != 0u ? 2u : 1u) && c.releases == cached && c.releases <= limit,
                 "%s%s: limit %u, %u blocks freed %s: the miss made %u finds and %u releases before its retry, "
                 "expected %u",
                 d->name, locked ? " (lock hooks)" : "", limit, n, pairs ? "in pairs" : "apart", c.finds, c.releases,
                 cached);
        TL_CHECK(pairs ? p != NULL : p == NULL, "%s: limit %u, %u blocks freed %s: malloc(100) = %p", d->name, limit, n,
                 pairs ? "in pairs" : "apart", p);
    }
    d->free(x.h, p);
    for (size_t i = 0; i < count; i++) {
        d->free(x.h, blk[i]);
    }
    tl_inst_close(&x, true);
}

static void test_quick_flush(const rt_allocator_t *d)
{
    static const unsigned limits[] = {1, 2, 7, 16, 64};
    for (unsigned locked = 0; locked < 2u; locked++) {
        for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
            unsigned l = limits[i];
            quick_flush_case(d, l, 0, false, locked != 0u);
            quick_flush_case(d, l, 1, false, locked != 0u);
            quick_flush_case(d, l, l, false, locked != 0u);
            quick_flush_case(d, l, l + 3u, false, locked != 0u);
            if (l >= 2u) {
                quick_flush_case(d, l, l & ~1u, true, locked != 0u);
            }
        }
    }
    printf("%-8s the worst malloc's flush: releases = cached blocks <= limit (limits 1..64, with and without lock "
           "hooks)\n",
           d->name);
}

int main(int argc, char **argv)
{
    uint64_t first = 1, seeds = TL_DEBUG_WALKS ? 2 : 8;
    if (argc > 1) {
        if (!tl_parse_u64(argv[1], &first)) {
            fprintf(stderr, "usage: bounded [seed]\n");
            return 2;
        }
        seeds = 1;
    }
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    (void)tl_check_registry(count);
    unsigned nflat = 0, nwalk = 0, nbuddy = 0;
    for (size_t i = 0; i < count; i++) {
        const rt_allocator_t *d = all[i];
        nflat += is_flat(d);
        nwalk += walks_list(d);
        nbuddy += is_buddy(d);
        if ((is_flat(d) || walks_list(d) || is_buddy(d)) && d->last_probes == NULL) {
            tl_skip("%s: no last_probes", d->name);
        }
    }
    /* the registry's own allocators: three of each heap kind and the buddy (a property that
     * changed would make this suite test less without failing) */
    TL_CHECK(nflat >= 3u && nwalk >= 3u && nbuddy >= 1u, "registry: %u O(1) heaps, %u list walks, %u buddies", nflat,
             nwalk, nbuddy);

    /* 4. the indexes' own counts: what each event means, then the quick lists' flush */
    unsigned nquick = 0;
    for (size_t i = 0; i < count; i++) {
        if (is_flat(all[i]) || walks_list(all[i])) {
            test_events(all[i]);
        }
        if (has_quick(all[i])) {
            nquick++;
            test_quick_flush(all[i]);
        }
    }
    TL_CHECK(nquick >= 1u, "registry: no heap with quick lists");
    for (size_t i = 0; i < count; i++) {
        if (is_flat(all[i]) && all[i]->last_probes != NULL) {
            test_flat(all[i], first, seeds);
        }
    }
    /* 3. the probe counters against an independent count of free blocks (a walk) */
    for (size_t i = 0; i < count; i++) {
        const rt_allocator_t *d = all[i];
        if ((walks_list(d) || is_buddy(d)) && d->last_probes != NULL && d->walk != NULL) {
            probe_stat_t ps = {0, 0, 0};
            for (uint64_t s = first; s < first + seeds; s++) {
                if (!probes_vs_walk(d, s, &ps)) {
                    break;
                }
            }
            printf("%-8s %lu malloc-family calls: probes backed by a walk's count of free blocks, max %u\n", d->name,
                   ps.calls, ps.max);
        }
    }

    printf("mem_frag: N free 72-byte blocks fenced by 8-byte spacers, then malloc(120): probes\n");
    printf("%-9s %5s %5s %5s %5s %5s %5s %5s %5s %5s   fit\n", "", "N=1", "2", "4", "8", "16", "32", "64", "128",
           "256");
    for (size_t i = 0; i < count; i++) {
        const rt_allocator_t *d = all[i];
        if ((is_flat(d) || walks_list(d) || is_buddy(d)) && d->last_probes != NULL) {
            test_mem_frag(d);
        }
    }
    printf("(the VaiOS blog: seglist probes = N + 3, TLSF flat at 2)\n");
    return tl_summary("bounded");
}
