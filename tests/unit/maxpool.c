/* SPDX-License-Identifier: MIT */
/*
 * maxpool.c -- pools of exactly the maximum size, for every heap index.
 *
 * Built against a second copy of the core compiled with RT_HEAP_MAX_BLOCK_LOG2=16 (largest block
 * 2^16 - A), so that the maximum pool fits in a test buffer. (Public TLSFs have crashed on a pool
 * of exactly the maximum block.) For each index and several buffer misalignments:
 *   - B*, the smallest buffer whose pool reaches the largest block, is found by growing the
 *     buffer a byte at a time; B* obeys heap.h's sizing rule (control + slack + sentinel + block);
 *   - over B* - 1, B*, B* + 1 and 2 B* (capped): create succeeds, capacity is exact, the integrity
 *     check passes, malloc(max_request) succeeds exactly once and is writable at both ends,
 *     max_request + 1 and RT_HEAP_MAX_REQUEST + 1 fail with TOO_LARGE; on the fit indexes (no
 *     rounding) max_request is RT_HEAP_MAX_REQUEST itself;
 *   - churn on the maximal pool, and a second maximal pool through rt_heap_add_pool.
 */
#include "testlib.h"

#include "rtalloc/heap.h"
#include "rtalloc/registry.h"

_Static_assert(RT_HEAP_MAX_BLOCK_LOG2 == 16, "maxpool must be built with RT_HEAP_MAX_BLOCK_LOG2=16");

#define LARGEST ((size_t)RT_HEAP_LARGEST_BLOCK)

typedef struct pool {
    tl_buffer_t buf;
    rt_heap_t *h;
    tl_recorder_t rec;
} pool_t;

static bool pool_open(pool_t *p, rt_index_t index, size_t size, size_t mis)
{
    memset(p, 0, sizeof *p);
    TL_REQUIRE(tl_buffer_new(&p->buf, size, mis), "out of memory");
    p->h = rt_heap_create_with(p->buf.mem, size, index);
    if (p->h != NULL) {
        rt_heap_set_handler(p->h, tl_record, &p->rec);
    }
    return true;
}

static void pool_close(pool_t *p) { tl_buffer_free(&p->buf); }

static size_t capacity_of(rt_heap_t *h)
{
    rt_stats_t s;
    rt_heap_stats(h, &s);
    return s.capacity;
}

/* One more request through the generic API: must fail with exactly one TOO_LARGE. */
static bool too_large(pool_t *p, const char *name, size_t n)
{
    tl_recorder_reset(&p->rec);
    void *q = rt_heap_malloc(p->h, n);
    bool ok = TL_CHECK(q == NULL, "%s: malloc(%zu) succeeded", name, n);
    ok = TL_CHECK(p->rec.count == 1u && p->rec.last == RT_ERR_TOO_LARGE, "%s: malloc(%zu): %lu reports, last %s", name,
                  n, p->rec.count, tl_kind_name(p->rec.last)) &&
         ok;
    tl_recorder_reset(&p->rec);
    return ok;
}

static bool exercise(pool_t *p, const rt_allocator_t *d, const char *label, bool maximal)
{
    const char *name = rt_heap_index_name(p->h);
    TL_REQUIRE(rt_heap_check(p->h), "%s %s: check of the fresh heap", name, label);
    size_t cap = capacity_of(p->h);
    if (maximal) {
        TL_REQUIRE(cap == LARGEST, "%s %s: capacity %zu, largest block %zu", name, label, cap, LARGEST);
    } else {
        TL_REQUIRE(cap < LARGEST, "%s %s: capacity %zu not below the largest block", name, label, cap);
    }
    size_t m = d->max_request(p->h);
    rt_stats_t s;
    rt_heap_stats(p->h, &s);
    TL_REQUIRE(m > 0u && m <= RT_HEAP_MAX_REQUEST && s.largest_free == m,
               "%s %s: max_request %zu, largest_free %zu, RT_HEAP_MAX_REQUEST %zu", name, label, m, s.largest_free,
               (size_t)RT_HEAP_MAX_REQUEST);
    rt_index_t idx = rt_heap_index(p->h);
    bool exact_fit = idx == RT_INDEX_SEGLIST || idx == RT_INDEX_FIRSTFIT || idx == RT_INDEX_BESTFIT;
    if (maximal && exact_fit) {
        TL_REQUIRE(m == RT_HEAP_MAX_REQUEST, "%s %s: max_request %zu, RT_HEAP_MAX_REQUEST %zu", name, label, m,
                   (size_t)RT_HEAP_MAX_REQUEST);
    }
    for (unsigned round = 0; round < 2u; round++) {
        unsigned char *q = rt_heap_malloc(p->h, m);
        TL_REQUIRE(q != NULL, "%s %s: malloc(max_request = %zu) failed", name, label, m);
        TL_REQUIRE(tl_inside(q, m, &p->buf), "%s %s: block outside the buffer", name, label);
        q[0] = 0x11;
        q[m - 1u] = 0x22;
        TL_REQUIRE(rt_heap_usable_size(p->h, q) >= m, "%s %s: usable_size", name, label);
        void *again = rt_heap_malloc(p->h, m);
        TL_REQUIRE(again == NULL, "%s %s: malloc(max_request) succeeded twice", name, label);
        TL_REQUIRE(rt_heap_check(p->h), "%s %s: check with the largest block live", name, label);
        rt_heap_free(p->h, q);
        TL_REQUIRE(rt_heap_check(p->h), "%s %s: check after freeing the largest block", name, label);
    }
    TL_REQUIRE(p->rec.count == 0u, "%s %s: unexpected report %s", name, label, tl_kind_name(p->rec.last));
    if (!too_large(p, name, m + 1u) || !too_large(p, name, (size_t)RT_HEAP_MAX_REQUEST + 1u) ||
        !too_large(p, name, LARGEST) || !too_large(p, name, SIZE_MAX)) {
        return false;
    }
    if (m < RT_HEAP_MAX_REQUEST && !too_large(p, name, RT_HEAP_MAX_REQUEST)) {
        return false;
    }
    /* calloc and memalign at the limit */
    void *q = rt_heap_calloc(p->h, 1, m);
    TL_REQUIRE(q != NULL, "%s %s: calloc(1, max_request) failed", name, label);
    rt_heap_free(p->h, q);
    /* churn on the pool, then everything back */
    static void *live[128];
    size_t nlive = 0;
    tl_rng_t r = tl_rng_seed(cap);
    for (unsigned op = 0; op < 2000u; op++) {
        if (nlive > 0u && (tl_chance(&r, 45) || nlive == 128u)) {
            size_t i = tl_range(&r, 0, nlive - 1u);
            rt_heap_free(p->h, live[i]);
            live[i] = live[--nlive];
        } else {
            void *b = rt_heap_malloc(p->h, tl_chance(&r, 90) ? tl_range(&r, 1, 2000) : tl_range(&r, 2000, m));
            if (b != NULL) {
                live[nlive++] = b;
            }
        }
        if (op % 100u == 0u) {
            TL_REQUIRE(rt_heap_check(p->h), "%s %s: check during churn (op %u)", name, label, op);
        }
    }
    while (nlive > 0u) {
        rt_heap_free(p->h, live[--nlive]);
    }
    TL_REQUIRE(rt_heap_check(p->h) && p->rec.count == 0u, "%s %s: after churn", name, label);
    q = rt_heap_malloc(p->h, m);
    TL_REQUIRE(q != NULL, "%s %s: malloc(max_request) after churn failed", name, label);
    rt_heap_free(p->h, q);
    return true;
}

/* B*: the smallest buffer (at misalignment mis) whose pool holds the largest block, checked
 * against heap.h's sizing rule. 0 when none; SIZE_MAX when a buffer could not be had. */
static size_t exact_pool(rt_index_t idx, const char *name, size_t control, size_t mis)
{
    size_t lo = control + LARGEST - 256u, best = 0;
    for (size_t b = lo; b < lo + 1024u && best == 0u; b++) {
        pool_t p;
        if (!pool_open(&p, idx, b, mis)) {
            return SIZE_MAX;
        }
        if (p.h != NULL && capacity_of(p.h) == LARGEST) {
            best = b;
        }
        pool_close(&p);
    }
    if (!TL_CHECK(best != 0u, "%s +%zu: no buffer up to %zu bytes reaches the largest block", name, mis, lo + 1024u)) {
        return 0;
    }
    size_t overhead = best - LARGEST;
    TL_CHECK(overhead >= control + sizeof(size_t) + 2u * RT_HEAP_POOL_GUARD &&
                 overhead <= control + (size_t)RT_HEAP_ALIGN - 1u + (size_t)RT_HEAP_ALIGN + sizeof(size_t) +
                                 2u * RT_HEAP_POOL_GUARD,
             "%s +%zu: exact pool = largest block + %zu (control %zu): outside heap.h's sizing rule", name, mis,
             overhead, control);
    return best;
}

/* Pools of one byte less than B*, exactly B*, one byte and one alignment unit more, twice.
 * false when a buffer could not be had. */
static bool around_exact(rt_index_t idx, const rt_allocator_t *d, size_t best, size_t mis)
{
    const struct {
        size_t size;
        bool maximal;
        const char *label;
    } cases[] = {
        {best - 1u, false, "one byte less"}, {best, true, "exact"},
        {best + 1u, true, "one byte more"},  {best + (size_t)RT_HEAP_ALIGN, true, "one alignment unit more"},
        {2u * best, true, "twice (capped)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pool_t p;
        if (!pool_open(&p, idx, cases[c].size, mis)) {
            return false;
        }
        char label[96];
        snprintf(label, sizeof label, "%s (%zu bytes at +%zu)", cases[c].label, cases[c].size, mis);
        if (TL_CHECK(p.h != NULL, "%s: create over %s failed", d->name, label)) {
            exercise(&p, d, label, cases[c].maximal);
        }
        pool_close(&p);
    }
    return true;
}

/* The reachable maximum, printed once per index, and a second maximal pool: a maximal block in
 * each. */
static void two_maximal_pools(rt_index_t idx, const rt_allocator_t *d, const char *name, size_t control)
{
    pool_t p;
    if (pool_open(&p, idx, 2u * (control + LARGEST), 0) && p.h != NULL) {
        printf("%-9s max_request on a maximal pool %zu (RT_HEAP_MAX_REQUEST %zu)\n", name, d->max_request(p.h),
               (size_t)RT_HEAP_MAX_REQUEST);
        tl_buffer_t second;
        size_t room = LARGEST + 32u + 2u * RT_HEAP_POOL_GUARD; /* slack, sentinel, guards */
        if (tl_buffer_new(&second, room, 7)) {
            bool added = rt_heap_add_pool(p.h, second.mem, room);
            if (TL_CHECK(added, "%s: add_pool of a maximal second pool", name)) {
                TL_CHECK(capacity_of(p.h) == 2u * LARGEST || capacity_of(p.h) > LARGEST,
                         "%s: capacity with two pools %zu", name, capacity_of(p.h));
                void *a = rt_heap_malloc(p.h, d->max_request(p.h));
                void *b = rt_heap_malloc(p.h, d->max_request(p.h));
                TL_CHECK(a != NULL && b != NULL && rt_heap_check(p.h), "%s: two maximal blocks in two pools", name);
                rt_heap_free(p.h, a);
                rt_heap_free(p.h, b);
                TL_CHECK(rt_heap_check(p.h) && p.rec.count == 0u, "%s: two pools, check", name);
            }
            tl_buffer_free(&second);
        }
    }
    pool_close(&p);
}

static void one_index(rt_index_t idx)
{
    const char *name = rt_index_name(idx);
    const rt_allocator_t *d = rt_registry_find(name);
    if (!TL_CHECK(d != NULL && d->max_request != NULL, "no descriptor with max_request for %s", name)) {
        return;
    }
    size_t control = rt_heap_control_size(idx);
    static const size_t mis[] = {0, 1, 8, 15};
    for (size_t k = 0; k < sizeof mis / sizeof mis[0]; k++) {
        size_t best = exact_pool(idx, name, control, mis[k]);
        if (best == SIZE_MAX) {
            return;
        }
        if (best == 0u) {
            continue;
        }
        if (k == 0u) {
            printf("%-9s largest block %zu: exact pool %zu bytes at +0 (control %zu + %zu)\n", name, LARGEST, best,
                   control, best - LARGEST - control);
        }
        if (!around_exact(idx, d, best, mis[k])) {
            return;
        }
    }
    two_maximal_pools(idx, d, name, control);
}

int main(void)
{
    TL_CHECK(LARGEST == ((size_t)1 << 16) - (size_t)RT_HEAP_ALIGN, "RT_HEAP_LARGEST_BLOCK %zu", LARGEST);
    for (int i = 0; i < (int)RT_INDEX_COUNT; i++) {
        one_index((rt_index_t)i);
    }
    return tl_summary("maxpool");
}
