/* SPDX-License-Identifier: MIT */
/*
 * pools.c -- what only the boundary-tag heap has (rtalloc/heap.h), and the hosted drivers.
 *
 *   pools        allocations spill into a pool added when the first is full; frees into either
 *                pool; check and walk cover both; overlapping, too small and too many pools are
 *                refused with BAD_POOL
 *   lock hooks   called in balanced, non-nested pairs around every operation, the token handed
 *                back unchanged; walk callbacks run under the lock, error handlers outside it
 *                (and may call the heap again); the buddy's hooks likewise
 *   direct API   rt_<index>_malloc etc. interoperate with the generic rt_heap_* on one heap
 *   selection    rt_heap_create gives the default index; index names; create_with refusals;
 *                min_buffer agrees with the registry
 *   coexistence  heaps of all six indexes in one program, used interleaved
 *   drivers      4 threads hammer one heap through rt_pthread_lock/unlock, every block stamped
 *                with its owner; rt_error_print reports and returns; rt_error_print_abort aborts
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#include "rtalloc/buddy.h"
#include "rtalloc/drivers.h"
#include "rtalloc/heap.h"
#include "rtalloc/registry.h"

static const char *const index_names[RT_INDEX_COUNT] = {"tlsf",    "tlsf32",  "seglist", "firstfit",
                                                        "bestfit", "halffit", "tlsfq"};

static bool in_buffer(const void *p, const tl_buffer_t *b) { return tl_inside(p, 1, b); }

/* --- pools ------------------------------------------------------------------------------------- */

typedef struct pool_walk {
    const tl_buffer_t *b1, *b2;
    size_t in1, in2, elsewhere, footprint;
} pool_walk_t;

static bool pool_walk_fn(void *context, const rt_block_info_t *info)
{
    pool_walk_t *w = context;
    w->footprint += info->footprint;
    if (in_buffer(info->pointer, w->b1)) {
        w->in1++;
    } else if (in_buffer(info->pointer, w->b2)) {
        w->in2++;
    } else {
        w->elsewhere++;
    }
    return true;
}

static void refuse_pool(rt_heap_t *h, tl_recorder_t *rec, void *mem, size_t size, const char *what)
{
    rt_stats_t before, after;
    rt_heap_stats(h, &before);
    tl_recorder_reset(rec);
    bool added = rt_heap_add_pool(h, mem, size);
    rt_heap_stats(h, &after);
    TL_CHECK(!added, "%s: add_pool %s accepted", rt_heap_index_name(h), what);
    TL_CHECK(rec->count == 1u && rec->last == RT_ERR_BAD_POOL, "%s: add_pool %s: %lu reports, last %s",
             rt_heap_index_name(h), what, rec->count, tl_kind_name(rec->last));
    TL_CHECK(after.capacity == before.capacity && after.errors == before.errors + 1u && rt_heap_check(h),
             "%s: add_pool %s changed the heap", rt_heap_index_name(h), what);
    tl_recorder_reset(rec);
}

static void *pool_live[1024]; /* two_pools and max_pools */

/* Fill the first pool, add a second of 16 KiB, spill into it, walk, free everything. */
static bool two_pools(rt_heap_t *h, tl_recorder_t *rec, const char *name, tl_buffer_t *b1, tl_buffer_t *b2)
{
    size_t nlive = 0, n1 = 0, n2 = 0;
    /* fill the first pool */
    for (void *p; (p = rt_heap_malloc(h, 512)) != NULL;) {
        pool_live[nlive++] = p;
        n1 += in_buffer(p, b1);
    }
    TL_CHECK(n1 == nlive && nlive > 10u, "%s: %zu of %zu blocks in the first pool", name, n1, nlive);
    rt_stats_t s1, s2;
    rt_heap_stats(h, &s1);
    bool added = rt_heap_add_pool(h, b2->mem, b2->size);
    if (!TL_CHECK(added && rec->count == 0u, "%s: add_pool of 16 KiB refused", name)) {
        return false;
    }
    rt_heap_stats(h, &s2);
    TL_CHECK(s2.capacity > s1.capacity && s2.capacity <= s1.capacity + b2->size && s2.used_bytes == s1.used_bytes,
             "%s: capacity %zu -> %zu after a pool of %zu", name, s1.capacity, s2.capacity, b2->size);
    TL_CHECK(rt_heap_check(h), "%s: check with two pools", name);
    /* spill */
    for (void *p; nlive < 1024u && (p = rt_heap_malloc(h, 512)) != NULL;) {
        pool_live[nlive++] = p;
        n2 += in_buffer(p, b2);
        TL_CHECK(in_buffer(p, b2), "%s: block %p after the first pool filled is not in the second", name, p);
    }
    TL_CHECK(n2 > 10u, "%s: only %zu blocks spilled into the second pool", name, n2);
    for (size_t i = 0; i < nlive; i++) {
        memset(pool_live[i], (int)(i & 0x7Fu), 512);
    }
    pool_walk_t w = {b1, b2, 0, 0, 0, 0};
    rt_heap_walk(h, pool_walk_fn, &w);
    rt_heap_stats(h, &s2);
    TL_CHECK(w.in1 >= n1 && w.in2 >= n2 && w.elsewhere == 0u && w.footprint == s2.capacity,
             "%s: walk: %zu blocks in pool 1, %zu in pool 2, %zu elsewhere; footprints %zu, capacity %zu", name, w.in1,
             w.in2, w.elsewhere, w.footprint, s2.capacity);
    /* free every other block (both pools), check, then the rest */
    for (size_t i = 0; i < nlive; i += 2u) {
        unsigned char *c = pool_live[i];
        TL_CHECK(c[0] == (unsigned char)(i & 0x7Fu) && c[511] == (unsigned char)(i & 0x7Fu), "%s: block %zu changed",
                 name, i);
        rt_heap_free(h, pool_live[i]);
        pool_live[i] = NULL;
    }
    TL_CHECK(rt_heap_check(h), "%s: check after freeing half in both pools", name);
    for (size_t i = 1; i < nlive; i += 2u) {
        rt_heap_free(h, pool_live[i]);
    }
    rt_heap_stats(h, &s2);
    TL_CHECK(rt_heap_check(h) && s2.used_blocks == 0u && s2.used_bytes == 0u && s2.free_blocks == 2u,
             "%s: all freed: used %zu, free blocks %zu (expected one per pool)", name, s2.used_bytes, s2.free_blocks);
    return true;
}

/* add_pool refusals: overlaps, a duplicate, tiny, NULL */
static void pool_refusals(rt_heap_t *h, tl_recorder_t *rec, tl_buffer_t *b1, tl_buffer_t *b2)
{
    refuse_pool(h, rec, b2->mem + 100, 4096, "overlapping the second pool");
    refuse_pool(h, rec, b2->mem, b2->size, "identical to the second pool");
    refuse_pool(h, rec, b1->mem, b1->size, "overlapping the first pool and the control structure");
    refuse_pool(h, rec, b2->mem - 2048, 4096, "overlapping the start of the second pool");
    unsigned char tiny[64];
    refuse_pool(h, rec, tiny, 8, "of 8 bytes");
    refuse_pool(h, rec, NULL, 4096, "of NULL");
}

/* Fill the remaining pool slots, then one too many; every pool serves. */
static void max_pools(rt_heap_t *h, tl_recorder_t *rec, const char *name, tl_buffer_t *b1, tl_buffer_t *b2)
{
    tl_buffer_t extra[RT_HEAP_MAX_POOLS + 1];
    pool_walk_t w;
    rt_stats_t s2;
    size_t nlive;
    size_t nextra = 0;
    for (unsigned p = 2; p < RT_HEAP_MAX_POOLS; p++) {
        if (!TL_CHECK(tl_buffer_new(&extra[nextra], 4096, p), "out of memory")) {
            return; /* (the buffers had so far are not freed, as before) */
        }
        TL_CHECK(rt_heap_add_pool(h, extra[nextra].mem, 4096), "%s: add_pool number %u refused", name, p + 1u);
        nextra++;
    }
    if (TL_CHECK(tl_buffer_new(&extra[nextra], 4096, 0), "out of memory")) {
        nextra++;
        refuse_pool(h, rec, extra[nextra - 1u].mem, 4096, "beyond RT_HEAP_MAX_POOLS");
    }
    /* every pool serves */
    nlive = 0;
    for (void *p; nlive < 1024u && (p = rt_heap_malloc(h, 200)) != NULL;) {
        pool_live[nlive++] = p;
    }
    w = (pool_walk_t){b1, b2, 0, 0, 0, 0};
    rt_heap_walk(h, pool_walk_fn, &w);
    rt_heap_stats(h, &s2);
    TL_CHECK(w.footprint == s2.capacity && rt_heap_check(h), "%s: %u pools: walk footprints %zu, capacity %zu", name,
             (unsigned)RT_HEAP_MAX_POOLS, w.footprint, s2.capacity);
    size_t in_extra = 0;
    for (size_t i = 0; i < nlive; i++) {
        for (size_t k = 0; k + 1u < nextra; k++) {
            in_extra += in_buffer(pool_live[i], &extra[k]);
        }
        rt_heap_free(h, pool_live[i]);
    }
    TL_CHECK(nextra <= 1u || in_extra > 0u, "%s: no block came from the extra pools", name);
    TL_CHECK(rt_heap_check(h) && rec->count == 0u, "%s: end of pools test", name);
    for (size_t k = 0; k < nextra; k++) {
        tl_buffer_free(&extra[k]);
    }
}

static void test_pools(rt_index_t idx)
{
    const char *name = index_names[idx];
    tl_buffer_t b1, b2;
    size_t size1 = rt_heap_min_buffer(idx) + (16u << 10);
    bool got = tl_buffer_new(&b1, size1, 3);
    got = tl_buffer_new(&b2, 16u << 10, 11) && got;
    if (!TL_CHECK(got, "out of memory")) {
        tl_buffer_free(&b1);
        tl_buffer_free(&b2);
        return;
    }
    tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
    rt_heap_t *h = rt_heap_create_with(b1.mem, b1.size, idx);
    if (TL_CHECK(h != NULL, "%s: create", name)) {
        rt_heap_set_handler(h, tl_record, &rec);
        if (two_pools(h, &rec, name, &b1, &b2)) {
            pool_refusals(h, &rec, &b1, &b2);
            max_pools(h, &rec, name, &b1, &b2);
        }
    }
    tl_buffer_free(&b1);
    tl_buffer_free(&b2);
}

/* --- lock hooks -------------------------------------------------------------------------------- */

typedef struct lock_probe {
    unsigned depth;
    unsigned long locks, unlocks, misuse;
    uintptr_t stack[8];
    unsigned walk_depth_bad;
    unsigned handler_calls, handler_depth_bad;
    rt_heap_t *heap; /* the handler calls back into it */
} lock_probe_t;

static uintptr_t probe_lock(void *context)
{
    lock_probe_t *l = context;
    if (l->depth != 0u) {
        l->misuse++; /* nested: a mutex would deadlock */
    }
    uintptr_t token = 0xA000u + l->locks;
    l->locks++;
    if (l->depth < 8u) {
        l->stack[l->depth] = token;
    }
    l->depth++;
    return token;
}

static void probe_unlock(void *context, uintptr_t token)
{
    lock_probe_t *l = context;
    l->unlocks++;
    if (l->depth == 0u) {
        l->misuse++;
        return;
    }
    l->depth--;
    if (l->depth < 8u && l->stack[l->depth] != token) {
        l->misuse++;
    }
}

static bool probe_walk(void *context, const rt_block_info_t *info)
{
    lock_probe_t *l = context;
    (void)info;
    if (l->depth != 1u) {
        l->walk_depth_bad++;
    }
    return true;
}

static void probe_handler(void *context, const rt_error_t *error)
{
    lock_probe_t *l = context;
    (void)error;
    l->handler_calls++;
    if (l->depth != 0u) {
        l->handler_depth_bad++;
    }
    if (l->heap != NULL) {
        rt_stats_t s;
        rt_heap_stats(l->heap, &s); /* calling the heap again from the handler must not deadlock */
    }
}

/* After each operation: balanced, nothing held, at least one pair taken. */
static void lock_step(lock_probe_t *l, unsigned long before, const char *name, const char *op)
{
    TL_CHECK(l->depth == 0u && l->locks == l->unlocks && l->misuse == 0u,
             "%s: %s: lock depth %u, %lu locks / %lu unlocks, %lu misuses", name, op, l->depth, l->locks, l->unlocks,
             l->misuse);
    TL_CHECK(l->locks > before, "%s: %s ran without taking the lock", name, op);
}

#define LOCKED(l, name, op, stmt)              \
    do {                                       \
        unsigned long before_ = (l)->locks;    \
        stmt;                                  \
        lock_step((l), before_, (name), (op)); \
    } while (0)

static void test_lock_hooks(rt_index_t idx)
{
    const char *name = index_names[idx];
    tl_buffer_t b, b2;
    bool got = tl_buffer_new(&b, rt_heap_min_buffer(idx) + (64u << 10), 5);
    got = tl_buffer_new(&b2, 8192, 0) && got;
    if (!TL_CHECK(got, "out of memory")) {
        tl_buffer_free(&b);
        tl_buffer_free(&b2);
        return;
    }
    rt_heap_t *h = rt_heap_create_with(b.mem, b.size, idx);
    if (TL_CHECK(h != NULL, "%s: create", name)) {
        lock_probe_t l;
        memset(&l, 0, sizeof l);
        l.heap = h;
        rt_heap_set_lock(h, probe_lock, probe_unlock, &l);
        LOCKED(&l, name, "set_handler", rt_heap_set_handler(h, probe_handler, &l));
        void *p = NULL, *q = NULL, *r = NULL;
        LOCKED(&l, name, "malloc", p = rt_heap_malloc(h, 100));
        LOCKED(&l, name, "calloc", q = rt_heap_calloc(h, 10, 10));
        LOCKED(&l, name, "memalign", r = rt_heap_memalign(h, 256, 100));
        LOCKED(&l, name, "usable_size", (void)rt_heap_usable_size(h, p));
        LOCKED(&l, name, "realloc in place", p = rt_heap_realloc(h, p, 50));
        LOCKED(&l, name, "realloc moving", q = rt_heap_realloc(h, q, 5000));
        LOCKED(&l, name, "realloc(NULL)", r = (rt_heap_free(h, r), rt_heap_realloc(h, NULL, 64)));
        rt_stats_t s;
        LOCKED(&l, name, "stats", rt_heap_stats(h, &s));
        LOCKED(&l, name, "check", (void)rt_heap_check(h));
        LOCKED(&l, name, "walk", rt_heap_walk(h, probe_walk, &l));
        LOCKED(&l, name, "add_pool", (void)rt_heap_add_pool(h, b2.mem, b2.size));
        LOCKED(&l, name, "free", rt_heap_free(h, p));
        LOCKED(&l, name, "double free (reported)", rt_heap_free(h, p));
        LOCKED(&l, name, "malloc too large (reported)", (void)rt_heap_malloc(h, SIZE_MAX / 2u));
        LOCKED(&l, name, "memalign bad alignment (reported)", (void)rt_heap_memalign(h, 3, 10));
        LOCKED(&l, name, "calloc overflow (reported)", (void)rt_heap_calloc(h, SIZE_MAX, 2));
        LOCKED(&l, name, "add_pool overlapping (reported)", (void)rt_heap_add_pool(h, b2.mem, b2.size));
        LOCKED(&l, name, "realloc(p, 0)", (void)rt_heap_realloc(h, q, 0));
        LOCKED(&l, name, "free", rt_heap_free(h, r));
        /* the direct backend functions take the same hooks */
        void *(*direct_malloc)(rt_heap_t *, size_t) = NULL;
        void (*direct_free)(rt_heap_t *, void *) = NULL;
        switch (idx) {
        case RT_INDEX_TLSF:
            direct_malloc = rt_tlsf_malloc;
            direct_free = rt_tlsf_free;
            break;
        case RT_INDEX_TLSF32:
            direct_malloc = rt_tlsf32_malloc;
            direct_free = rt_tlsf32_free;
            break;
        case RT_INDEX_SEGLIST:
            direct_malloc = rt_seglist_malloc;
            direct_free = rt_seglist_free;
            break;
        case RT_INDEX_FIRSTFIT:
            direct_malloc = rt_firstfit_malloc;
            direct_free = rt_firstfit_free;
            break;
        case RT_INDEX_BESTFIT:
            direct_malloc = rt_bestfit_malloc;
            direct_free = rt_bestfit_free;
            break;
        case RT_INDEX_HALFFIT:
            direct_malloc = rt_halffit_malloc;
            direct_free = rt_halffit_free;
            break;
        default:
            direct_malloc = rt_tlsfq_malloc;
            direct_free = rt_tlsfq_free;
            break;
        }
        LOCKED(&l, name, "direct malloc", p = direct_malloc(h, 300));
        LOCKED(&l, name, "direct free", direct_free(h, p));
        TL_CHECK(l.walk_depth_bad == 0u, "%s: walk callback ran outside the lock", name);
        TL_CHECK(l.handler_calls == 5u && l.handler_depth_bad == 0u,
                 "%s: %u handler calls (expected 5), %u under the lock", name, l.handler_calls, l.handler_depth_bad);
        rt_heap_set_lock(h, NULL, NULL, NULL);
        unsigned long locks = l.locks;
        void *x = rt_heap_malloc(h, 10);
        rt_heap_free(h, x);
        TL_CHECK(l.locks == locks, "%s: hooks called after they were removed", name);
        TL_CHECK(rt_heap_check(h), "%s: check after the lock test", name);
    }
    tl_buffer_free(&b);
    tl_buffer_free(&b2);
}

static void test_buddy_lock_hooks(void)
{
    tl_buffer_t b;
    if (!TL_CHECK(tl_buffer_new(&b, 64u << 10, 9), "out of memory")) {
        return;
    }
    rt_buddy_t *h = rt_buddy_create(b.mem, b.size);
    if (TL_CHECK(h != NULL, "buddy: create")) {
        lock_probe_t l;
        memset(&l, 0, sizeof l);
        rt_buddy_set_lock(h, probe_lock, probe_unlock, &l);
        const char *name = "buddy";
        LOCKED(&l, name, "set_handler", rt_buddy_set_handler(h, probe_handler, &l));
        void *p = NULL, *q = NULL;
        LOCKED(&l, name, "malloc", p = rt_buddy_malloc(h, 100));
        LOCKED(&l, name, "calloc", q = rt_buddy_calloc(h, 10, 10));
        LOCKED(&l, name, "realloc", q = rt_buddy_realloc(h, q, 3000));
        LOCKED(&l, name, "memalign", (void)rt_buddy_memalign(h, 1024, 10));
        LOCKED(&l, name, "usable_size", (void)rt_buddy_usable_size(h, p));
        rt_stats_t s;
        LOCKED(&l, name, "stats", rt_buddy_stats(h, &s));
        LOCKED(&l, name, "check", (void)rt_buddy_check(h));
        LOCKED(&l, name, "walk", rt_buddy_walk(h, probe_walk, &l));
        LOCKED(&l, name, "free", rt_buddy_free(h, p));
        LOCKED(&l, name, "double free (reported)", rt_buddy_free(h, p));
        LOCKED(&l, name, "malloc too large (reported)", (void)rt_buddy_malloc(h, SIZE_MAX / 2u));
        LOCKED(&l, name, "free", rt_buddy_free(h, q));
        TL_CHECK(l.walk_depth_bad == 0u, "buddy: walk callback ran outside the lock");
        TL_CHECK(l.handler_calls == 2u && l.handler_depth_bad == 0u, "buddy: %u handler calls (expected 2), %u locked",
                 l.handler_calls, l.handler_depth_bad);
    }
    tl_buffer_free(&b);
}

/* --- direct functions, selection, names --------------------------------------------------------- */

typedef struct direct {
    rt_heap_t *(*create)(void *, size_t);
    void *(*malloc)(rt_heap_t *, size_t);
    void (*free)(rt_heap_t *, void *);
    void *(*realloc)(rt_heap_t *, void *, size_t);
    void *(*calloc)(rt_heap_t *, size_t, size_t);
    void *(*memalign)(rt_heap_t *, size_t, size_t);
} direct_t;

/* clang-format off */
#define DIRECT(n) {rt_##n##_create, rt_##n##_malloc, rt_##n##_free, rt_##n##_realloc, rt_##n##_calloc, rt_##n##_memalign}
/* clang-format on */
static const direct_t directs[RT_INDEX_COUNT] = {DIRECT(tlsf),    DIRECT(tlsf32),  DIRECT(seglist), DIRECT(firstfit),
                                                 DIRECT(bestfit), DIRECT(halffit), DIRECT(tlsfq)};

static void test_direct(rt_index_t idx)
{
    const char *name = index_names[idx];
    const direct_t *f = &directs[idx];
    tl_buffer_t b;
    if (!TL_CHECK(tl_buffer_new(&b, rt_heap_min_buffer(idx) + (128u << 10), 7), "out of memory")) {
        return;
    }
    rt_heap_t *h = f->create(b.mem, b.size);
    if (TL_CHECK(h != NULL, "%s: rt_%s_create", name, name)) {
        TL_CHECK(rt_heap_index(h) == idx && strcmp(rt_heap_index_name(h), name) == 0,
                 "%s: rt_%s_create made a heap of index %d (%s)", name, name, (int)rt_heap_index(h),
                 rt_heap_index_name(h));
        tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, true};
        rt_heap_set_handler(h, tl_record, &rec);
        tl_rng_t r = tl_rng_seed(idx);
        static unsigned char *live[64];
        static size_t len[64];
        size_t nlive = 0;
        for (unsigned op = 0; op < 3000u; op++) {
            bool direct = tl_chance(&r, 50);
            unsigned k = (unsigned)tl_range(&r, 0, 99);
            if (nlive > 0u && (k < 40u || nlive == 64u)) {
                size_t i = tl_range(&r, 0, nlive - 1u);
                TL_CHECK(tl_verify(live[i], len[i], (uint64_t)(uintptr_t)live[i]) == len[i], "%s: block changed", name);
                if (direct) {
                    f->free(h, live[i]);
                } else {
                    rt_heap_free(h, live[i]);
                }
                live[i] = live[--nlive];
                len[i] = len[nlive];
                continue;
            }
            size_t n = tl_range(&r, 1, 3000);
            unsigned char *p;
            if (nlive > 0u && k < 55u) {
                size_t i = tl_range(&r, 0, nlive - 1u);
                unsigned char *old = live[i];
                size_t keep = n < len[i] ? n : len[i];
                p = direct ? f->realloc(h, old, n) : rt_heap_realloc(h, old, n);
                if (p != NULL) {
                    TL_CHECK(tl_verify(p, keep, (uint64_t)(uintptr_t)old) == keep, "%s: realloc lost contents", name);
                    live[i] = p;
                    len[i] = n;
                    tl_fill(p, n, (uint64_t)(uintptr_t)p);
                }
                continue;
            }
            if (k < 70u) {
                p = direct ? f->calloc(h, 1, n) : rt_heap_calloc(h, 1, n);
                if (p != NULL) {
                    size_t j = 0;
                    while (j < n && p[j] == 0u) {
                        j++;
                    }
                    TL_CHECK(j == n, "%s: calloc not zeroed", name);
                }
            } else if (k < 80u) {
                size_t a = (size_t)1 << tl_range(&r, 0, 11);
                p = direct ? f->memalign(h, a, n) : rt_heap_memalign(h, a, n);
                TL_CHECK(p == NULL || (uintptr_t)p % a == 0u, "%s: memalign(%zu) misaligned", name, a);
            } else {
                p = direct ? f->malloc(h, n) : rt_heap_malloc(h, n);
            }
            if (p != NULL) {
                tl_fill(p, n, (uint64_t)(uintptr_t)p);
                live[nlive] = p;
                len[nlive++] = n;
            }
            if (op % 50u == 0u) {
                TL_CHECK(rt_heap_check(h), "%s: check during mixed direct/generic use (op %u)", name, op);
            }
        }
        while (nlive > 0u) {
            rt_heap_free(h, live[--nlive]);
        }
        rt_stats_t s;
        rt_heap_stats(h, &s);
        TL_CHECK(rt_heap_check(h) && s.used_blocks == 0u && rec.count == 0u,
                 "%s: direct/generic: used_blocks %zu, reports %lu", name, s.used_blocks, rec.count);
    }
    tl_buffer_free(&b);
}

static void test_selection(void)
{
    size_t reg_count = 0;
    (void)rt_registry(&reg_count);
    for (int i = 0; i < (int)RT_INDEX_COUNT; i++) {
        rt_index_t idx = (rt_index_t)i;
        TL_CHECK(rt_index_name(idx) != NULL && strcmp(rt_index_name(idx), index_names[i]) == 0,
                 "rt_index_name(%d) = %s, expected %s", i, rt_index_name(idx), index_names[i]);
        const rt_allocator_t *d = rt_registry_find(index_names[i]);
        if (TL_CHECK(d != NULL && d->min_buffer != NULL, "registry lacks %s", index_names[i])) {
            TL_CHECK(d->min_buffer() == rt_heap_min_buffer(idx), "%s: registry min_buffer %zu, rt_heap_min_buffer %zu",
                     index_names[i], d->min_buffer(), rt_heap_min_buffer(idx));
        }
        TL_CHECK(rt_heap_control_size(idx) > 0u && rt_heap_control_size(idx) < rt_heap_min_buffer(idx),
                 "%s: control %zu, min_buffer %zu", index_names[i], rt_heap_control_size(idx), rt_heap_min_buffer(idx));
        tl_buffer_t b;
        if (TL_CHECK(tl_buffer_new(&b, rt_heap_min_buffer(idx) + 4096u, 1), "out of memory")) {
            rt_heap_t *h = rt_heap_create_with(b.mem, b.size, idx);
            TL_CHECK(h != NULL && rt_heap_index(h) == idx && strcmp(rt_heap_index_name(h), index_names[i]) == 0,
                     "rt_heap_create_with(%s)", index_names[i]);
            TL_CHECK(rt_heap_create_with(NULL, b.size, idx) == NULL, "create_with(NULL, %s)", index_names[i]);
            TL_CHECK(rt_heap_create_with(b.mem, rt_heap_control_size(idx), idx) == NULL,
                     "create_with(%s) over only the control size", index_names[i]);
            tl_buffer_free(&b);
        }
    }
    TL_CHECK(rt_index_name(RT_INDEX_COUNT) != NULL, "rt_index_name(out of range) returned NULL");
    tl_buffer_t b;
    if (TL_CHECK(tl_buffer_new(&b, 1u << 16, 0), "out of memory")) {
        TL_CHECK(rt_heap_create_with(b.mem, b.size, RT_INDEX_COUNT) == NULL, "create_with(RT_INDEX_COUNT)");
        TL_CHECK(rt_heap_create_with(b.mem, b.size, (rt_index_t)-1) == NULL, "create_with(-1)");
        rt_heap_t *h = rt_heap_create(b.mem, b.size);
        TL_CHECK(h != NULL && rt_heap_index(h) == RT_HEAP_DEFAULT_INDEX, "rt_heap_create: index %d, default %d",
                 h != NULL ? (int)rt_heap_index(h) : -1, (int)RT_HEAP_DEFAULT_INDEX);
#ifndef RT_CONFIG_HEADER
        TL_CHECK(h != NULL && rt_heap_index(h) == RT_INDEX_TLSF && strcmp(rt_heap_index_name(h), "tlsf") == 0,
                 "rt_heap_create (default configuration) is not TLSF");
#endif
        tl_buffer_free(&b);
    }
}

/* --- six heaps side by side -------------------------------------------------------------------- */

static void test_coexistence(void)
{
    tl_buffer_t b[RT_INDEX_COUNT];
    rt_heap_t *h[RT_INDEX_COUNT];
    tl_recorder_t rec[RT_INDEX_COUNT];
    static unsigned char *live[RT_INDEX_COUNT][48];
    static size_t len[RT_INDEX_COUNT][48];
    size_t nlive[RT_INDEX_COUNT];
    for (int i = 0; i < (int)RT_INDEX_COUNT; i++) {
        nlive[i] = 0;
        memset(&rec[i], 0, sizeof rec[i]);
        h[i] = NULL;
        if (!TL_CHECK(tl_buffer_new(&b[i], rt_heap_min_buffer((rt_index_t)i) + (96u << 10), (size_t)i * 3u),
                      "out of memory")) {
            return;
        }
        h[i] = rt_heap_create_with(b[i].mem, b[i].size, (rt_index_t)i);
        TL_CHECK(h[i] != NULL, "create %s", index_names[i]);
        if (h[i] != NULL) {
            rt_heap_set_handler(h[i], tl_record, &rec[i]);
        }
    }
    tl_rng_t r = tl_rng_seed(6);
    for (unsigned op = 0; op < 30000u; op++) {
        size_t i = tl_range(&r, 0, RT_INDEX_COUNT - 1u);
        if (h[i] == NULL) {
            continue;
        }
        if (nlive[i] > 0u && (tl_chance(&r, 45) || nlive[i] == 48u)) {
            size_t k = tl_range(&r, 0, nlive[i] - 1u);
            TL_CHECK(tl_verify(live[i][k], len[i][k], (uint64_t)i * 1000003u + (uintptr_t)live[i][k]) == len[i][k],
                     "%s: block changed (op %u)", index_names[i], op);
            rt_heap_free(h[i], live[i][k]);
            live[i][k] = live[i][--nlive[i]];
            len[i][k] = len[i][nlive[i]];
        } else {
            size_t n = tl_range(&r, 1, 2500);
            unsigned char *p = rt_heap_malloc(h[i], n);
            if (p != NULL) {
                TL_CHECK(in_buffer(p, &b[i]), "%s: block from another heap's buffer", index_names[i]);
                tl_fill(p, n, (uint64_t)i * 1000003u + (uintptr_t)p);
                live[i][nlive[i]] = p;
                len[i][nlive[i]++] = n;
            }
        }
        if (op % 1000u == 999u) {
            for (size_t j = 0; j < RT_INDEX_COUNT; j++) {
                TL_CHECK(h[j] == NULL || rt_heap_check(h[j]), "%s: check (op %u)", index_names[j], op);
            }
        }
    }
    /* a block freed into the wrong heap is foreign there and stays live in its own */
    if (h[0] != NULL && h[1] != NULL && nlive[1] > 0u) {
        rt_heap_free(h[0], live[1][0]);
        TL_CHECK(rec[0].count == 1u && rec[0].last == RT_ERR_FOREIGN_POINTER, "free into the wrong heap: %s",
                 tl_kind_name(rec[0].last));
        tl_recorder_reset(&rec[0]);
    }
    for (size_t i = 0; i < RT_INDEX_COUNT; i++) {
        while (h[i] != NULL && nlive[i] > 0u) {
            rt_heap_free(h[i], live[i][--nlive[i]]);
        }
        if (h[i] != NULL) {
            rt_stats_t s;
            rt_heap_stats(h[i], &s);
            TL_CHECK(rt_heap_check(h[i]) && s.used_blocks == 0u && rec[i].count == 0u,
                     "%s: coexistence end: used %zu, reports %lu", index_names[i], s.used_blocks, rec[i].count);
        }
        tl_buffer_free(&b[i]);
    }
}

/* --- pthread driver ---------------------------------------------------------------------------- */

#define THREADS 4

typedef struct shared {
    const rt_allocator_t *d;
    void *h;
    unsigned ops;
} shared_t;

typedef struct worker {
    shared_t *s;
    unsigned id;
    unsigned long bad;      /* stamp mismatches */
    unsigned long done;     /* allocations */
    unsigned long failures; /* NULLs */
} worker_t;

static void *hammer(void *arg)
{
    worker_t *w = arg;
    const rt_allocator_t *d = w->s->d;
    enum { SLOTS = 64 };
    unsigned char *slot[SLOTS];
    size_t len[SLOTS];
    memset(slot, 0, sizeof slot);
    tl_rng_t r = tl_rng_seed(0x7447u + w->id);
    for (unsigned op = 0; op < w->s->ops; op++) {
        size_t i = tl_range(&r, 0, SLOTS - 1u);
        if (slot[i] != NULL) {
            unsigned char stamp = (unsigned char)(w->id * 16u + (unsigned)(len[i] & 15u));
            for (size_t j = 0; j < len[i]; j += 7u) {
                w->bad += slot[i][j] != stamp;
            }
            d->free(w->s->h, slot[i]);
            slot[i] = NULL;
        } else {
            size_t n = tl_range(&r, 1, 1500);
            slot[i] = d->malloc(w->s->h, n);
            if (slot[i] == NULL) {
                w->failures++;
                continue;
            }
            len[i] = n;
            memset(slot[i], (int)(w->id * 16u + (unsigned)(n & 15u)), n);
            w->done++;
        }
    }
    for (size_t i = 0; i < SLOTS; i++) {
        if (slot[i] != NULL) {
            d->free(w->s->h, slot[i]);
        }
    }
    return NULL;
}

static void test_pthread(const rt_allocator_t *d)
{
    tl_buffer_t b;
    if (!TL_CHECK(tl_buffer_new(&b, 1u << 20, 1), "out of memory")) {
        return;
    }
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    shared_t s = {d, d->create(b.mem, b.size), TL_ASAN || TL_DEBUG_WALKS ? 4000u : 20000u};
    tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, true};
    if (TL_CHECK(s.h != NULL, "%s: create", d->name)) {
        d->set_handler(s.h, tl_record, &rec);
        d->set_lock(s.h, rt_pthread_lock, rt_pthread_unlock, &mutex);
        pthread_t t[THREADS];
        worker_t w[THREADS];
        unsigned started = 0;
        for (unsigned i = 0; i < THREADS; i++) {
            w[i] = (worker_t){&s, i + 1u, 0, 0, 0};
            if (TL_CHECK(pthread_create(&t[i], NULL, hammer, &w[i]) == 0, "pthread_create")) {
                started++;
            }
        }
        unsigned long allocations = 0, bad = 0;
        for (unsigned i = 0; i < started; i++) {
            pthread_join(t[i], NULL);
            allocations += w[i].done;
            bad += w[i].bad;
        }
        rt_stats_t st;
        d->stats(s.h, &st);
        TL_CHECK(bad == 0u, "%s: %lu stamp mismatches: blocks shared between threads", d->name, bad);
        TL_CHECK(d->check(s.h), "%s: check after %u threads", d->name, started);
        TL_CHECK(st.used_blocks == 0u && st.used_bytes == 0u && st.mallocs == allocations && st.frees == allocations,
                 "%s: threads: used %zu, mallocs %" PRIu64 " frees %" PRIu64 ", threads allocated %lu", d->name,
                 st.used_bytes, st.mallocs, st.frees, allocations);
        TL_CHECK(rec.count == 0u, "%s: %lu reports from the threads", d->name, rec.count);
        d->set_lock(s.h, NULL, NULL, NULL);
    }
    pthread_mutex_destroy(&mutex);
    tl_buffer_free(&b);
}

static void test_error_drivers(void)
{
    tl_buffer_t b;
    if (!TL_CHECK(tl_buffer_new(&b, 1u << 16, 0), "out of memory")) {
        return;
    }
    rt_heap_t *h = rt_heap_create(b.mem, b.size);
    if (TL_CHECK(h != NULL, "create")) {
        int local = 0;
        printf("(an expected report on stderr follows)\n");
        fflush(stdout);
        rt_heap_set_handler(h, rt_error_print, NULL);
        rt_heap_free(h, &local);
        rt_stats_t s;
        rt_heap_stats(h, &s);
        TL_CHECK(s.errors == 1u && rt_heap_check(h), "rt_error_print: errors %" PRIu64, s.errors);
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            rt_heap_set_handler(h, rt_error_print_abort, NULL);
            rt_heap_free(h, &local);
            _exit(0); /* not reached if the handler aborts */
        }
        if (TL_CHECK(pid > 0, "fork")) {
            int status = 0;
            TL_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
            TL_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                     "rt_error_print_abort did not abort (status %#x)", (unsigned)status);
        }
    }
    tl_buffer_free(&b);
}

int main(void)
{
    for (int i = 0; i < (int)RT_INDEX_COUNT; i++) {
        unsigned long failed = tl_state.failed;
        test_pools((rt_index_t)i);
        test_lock_hooks((rt_index_t)i);
        test_direct((rt_index_t)i);
        printf("%-9s pools, lock hooks, direct functions: %s\n", index_names[i],
               tl_state.failed > failed ? "FAILED" : "ok");
    }
    test_buddy_lock_hooks();
    test_selection();
    test_coexistence();
    size_t n = 0;
    const rt_allocator_t *const *all = rt_registry(&n);
    for (size_t i = 0; i < n; i++) {
        unsigned long failed = tl_state.failed;
        if (all[i]->set_lock == NULL || all[i]->check == NULL || all[i]->stats == NULL || all[i]->set_handler == NULL) {
            tl_skip("%s: pthread test needs set_lock, check, stats, set_handler", all[i]->name);
            continue;
        }
        test_pthread(all[i]);
        printf("%-9s %d threads through rt_pthread_lock: %s\n", all[i]->name, THREADS,
               tl_state.failed > failed ? "FAILED" : "ok");
    }
    test_error_drivers();
    return tl_summary("pools");
}
