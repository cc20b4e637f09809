/* SPDX-License-Identifier: MIT */
/*
 * contract.c -- one suite, run unchanged against every allocator of the registry (doc/design.md,
 * "Tests": the same suite must pass, unchanged, against every backend).
 *
 * Every case gets a fresh instance over a fresh malloc'd buffer (some deliberately misaligned by
 * 1..15 bytes), installs a recording error handler (any report the case did not provoke is a
 * failure) and ends with the allocator's integrity check. A case that needs an optional function
 * the descriptor lacks is skipped, and says so.
 *
 * The only family-specific knowledge (the descriptor's family, never its name): the binary buddy
 * (RT_FAMILY_BUDDY) coalesces only with its buddy, so the coalescing cases pick buddies there, and
 * its realloc grows in place only within the block's order. The wait-free buddy trees
 * (RT_FAMILY_TREE, rtalloc/waitfree.h) hand out post-order subtrees: two sibling
 * chunks x, x + f (f = footprint) free together the subtree of their parent, the node after them
 * (min_block bytes), and a realloc that needs a larger subtree moves.
 *
 * Page allocators say so by properties of their descriptor (registry.h), never by name:
 * page_size != 0 (FMA) -- blocks unite only as a whole page, so the coalescing cases free the
 * halves (quarters) of one page and expect a page-sized request at its start, and a realloc that
 * needs a larger block moves; never_unites (BSD 4.4) -- freed blocks are never united and pages
 * keep their size, so the coalescing cases are skipped and after free(everything) the instance
 * is not required to be as fresh (largest_free, free_blocks), only empty.
 *
 * Usage: contract [allocator|all] [seed]   (default: all, seed 0; the seed varies the randomised
 *        cases -- overlap, stats, walk -- and a failure prints it)
 */
#include "testlib.h"

#include "rtalloc/registry.h"

#define MAX_LIVE 16384u

typedef struct live {
    unsigned char *p;
    size_t n;      /* bytes requested */
    size_t usable; /* usable_size (or n) */
    uint64_t id;
} live_t;

typedef struct ctx {
    const rt_allocator_t *d;
    tl_buffer_t buf;
    void *h;
    tl_recorder_t rec;
    unsigned long expected_reports;
    const char *name; /* case */
    live_t *live;
    size_t nlive;
    uint64_t next_id;
} ctx_t;

static live_t live_store[MAX_LIVE];
static uint64_t g_seed; /* mixed into the seeds of the randomised cases; 0 by default */
static live_t sort_store[MAX_LIVE];

/* --- thin wrappers over the descriptor -------------------------------------------------------- */

static void *am(ctx_t *c, size_t n) { return c->d->malloc(c->h, n); }
static void af(ctx_t *c, void *p) { c->d->free(c->h, p); }
static size_t au(ctx_t *c, void *p, size_t requested)
{
    return c->d->usable_size != NULL ? c->d->usable_size(c->h, p) : requested;
}
static bool ast(ctx_t *c, rt_stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (c->d->stats == NULL) {
        return false;
    }
    c->d->stats(c->h, s);
    return true;
}
static bool is_buddy(const rt_allocator_t *d) { return d->family == RT_FAMILY_BUDDY; }
static bool is_tree(const rt_allocator_t *d)
{
    return d->family == RT_FAMILY_TREE || d->family == RT_FAMILY_TREE_CACHED;
}

/* The peak is the back end's, which counts what caches or thread heaps held (>= the exact one). */
static bool caches_peak(const rt_allocator_t *d)
{
    return d->family == RT_FAMILY_TREE_CACHED || d->family == RT_FAMILY_THREAD_HEAPS;
}

/* The request that would never fit: larger than any instance could serve. */
static size_t too_large(ctx_t *c)
{
    if (c->d->max_request != NULL) {
        return c->d->max_request(c->h) + 1u;
    }
    return c->buf.size + 1u;
}

/* --- live-set bookkeeping ----------------------------------------------------------------------- */

static bool track(ctx_t *c, void *p, size_t n)
{
    TL_REQUIRE(c->nlive < MAX_LIVE, "%s/%s: live table full", c->d->name, c->name);
    TL_REQUIRE(((uintptr_t)p % c->d->alignment) == 0u, "%s/%s: %p not aligned to %zu", c->d->name, c->name, p,
               c->d->alignment);
    size_t u = au(c, p, n);
    TL_REQUIRE(u >= n, "%s/%s: usable_size %zu < requested %zu", c->d->name, c->name, u, n);
    TL_REQUIRE(tl_inside(p, u, &c->buf), "%s/%s: block %p+%zu outside the buffer", c->d->name, c->name, p, u);
    live_t *l = &c->live[c->nlive++];
    l->p = p;
    l->n = n;
    l->usable = u;
    l->id = c->next_id++;
    tl_fill(p, n, l->id);
    return true;
}

static bool verify_one(ctx_t *c, const live_t *l)
{
    size_t bad = tl_verify(l->p, l->n, l->id);
    TL_REQUIRE(bad == l->n, "%s/%s: block %p (id %" PRIu64 ", %zu bytes) corrupted at offset %zu", c->d->name, c->name,
               (void *)l->p, l->id, l->n, bad);
    return true;
}

/* Verifies the pattern of live block i, frees it and drops it from the table. */
static bool untrack_free(ctx_t *c, size_t i)
{
    if (!verify_one(c, &c->live[i])) {
        return false;
    }
    af(c, c->live[i].p);
    c->live[i] = c->live[--c->nlive];
    return true;
}

static bool free_all(ctx_t *c)
{
    while (c->nlive > 0u) {
        if (!untrack_free(c, c->nlive - 1u)) {
            return false;
        }
    }
    return true;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const live_t *)a)->p, y = (uintptr_t)((const live_t *)b)->p;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* No two live ranges [p, p + usable) overlap; every pattern intact. */
static bool verify_all(ctx_t *c)
{
    memcpy(sort_store, c->live, c->nlive * sizeof(live_t));
    qsort(sort_store, c->nlive, sizeof(live_t), by_address);
    for (size_t i = 0; i + 1u < c->nlive; i++) {
        TL_REQUIRE((uintptr_t)sort_store[i].p + sort_store[i].usable <= (uintptr_t)sort_store[i + 1u].p,
                   "%s/%s: blocks %p+%zu and %p overlap", c->d->name, c->name, (void *)sort_store[i].p,
                   sort_store[i].usable, (void *)sort_store[i + 1u].p);
    }
    for (size_t i = 0; i < c->nlive; i++) {
        if (!verify_one(c, &c->live[i])) {
            return false;
        }
    }
    return true;
}

static bool check_heap(ctx_t *c, const char *where)
{
    if (c->d->check == NULL) {
        return true;
    }
    TL_REQUIRE(c->d->check(c->h), "%s/%s: integrity check failed %s", c->d->name, c->name, where);
    return true;
}

/* Allocates until nothing more fits, from the largest possible request down to 1 byte, tracking
 * every block. Afterwards not even malloc(1) succeeds. */
static bool exhaust(ctx_t *c)
{
    rt_stats_t s;
    size_t size = 1u << 20;
    if (ast(c, &s)) {
        size = s.largest_free;
    } else if (c->d->max_request != NULL) {
        size = c->d->max_request(c->h);
    }
    if (c->d->max_request != NULL && size > c->d->max_request(c->h)) {
        size = c->d->max_request(c->h);
    }
    while (size > 0u) {
        void *p = am(c, size);
        if (p != NULL) {
            if (!track(c, p, size)) {
                return false;
            }
        } else {
            size /= 2u;
        }
    }
    TL_REQUIRE(am(c, 1) == NULL, "%s/%s: malloc(1) succeeded on an exhausted instance", c->d->name, c->name);
    if (ast(c, &s)) {
        TL_REQUIRE(s.largest_free == 0u, "%s/%s: exhausted, yet largest_free = %zu", c->d->name, c->name,
                   s.largest_free);
    }
    return true;
}

static size_t find_live(ctx_t *c, const void *p)
{
    for (size_t i = 0; i < c->nlive; i++) {
        if (c->live[i].p == p) {
            return i;
        }
    }
    return SIZE_MAX;
}

static bool free_tracked(ctx_t *c, const void *p)
{
    size_t i = find_live(c, p);
    TL_REQUIRE(i != SIZE_MAX, "%s/%s: %p not tracked", c->d->name, c->name, p);
    return untrack_free(c, i);
}

/* Allocates and tracks; NULL fails the case. */
#define ALLOC(var, c, n)                                                                           \
    do {                                                                                           \
        size_t alloc_n_ = (n);                                                                     \
        (var) = am((c), alloc_n_);                                                                 \
        TL_REQUIRE((var) != NULL, "%s/%s: malloc(%zu) failed", (c)->d->name, (c)->name, alloc_n_); \
        if (!track((c), (var), alloc_n_)) {                                                        \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

/* --- cases ------------------------------------------------------------------------------------ */

/* Every pointer is aligned to desc->alignment, lies in the buffer, has usable >= requested and
 * keeps its pattern, for sizes 1..5000 and powers of two +-1. */
static bool case_alignment(ctx_t *c)
{
    for (size_t n = 1; n <= 5000u; n++) {
        void *p;
        ALLOC(p, c, n);
        if (c->nlive >= 16u && !untrack_free(c, 0)) {
            return false;
        }
    }
    if (!verify_all(c) || !free_all(c)) {
        return false;
    }
    size_t limit = c->d->max_request != NULL ? c->d->max_request(c->h) : c->buf.size / 4u;
    for (unsigned k = 1; k <= 16u; k++) {
        size_t base = (size_t)1 << k;
        for (size_t n = base - 1u; n <= base + 1u; n++) {
            if (n > limit / 2u) {
                continue;
            }
            void *p;
            ALLOC(p, c, n);
            if (!untrack_free(c, 0)) {
                return false;
            }
        }
    }
    return true;
}

/* Patterns survive, live ranges never overlap, through random allocation and partial release. */
static bool case_overlap(ctx_t *c)
{
    tl_rng_t r = tl_rng_seed(0xC0FFEEu + g_seed);
    for (unsigned round = 0; round < 3u; round++) {
        for (unsigned i = 0; i < 150u; i++) {
            size_t n = tl_chance(&r, 70) ? tl_range(&r, 1, 128) : tl_range(&r, 129, 2000);
            void *p = am(c, n);
            if (p == NULL) {
                break;
            }
            if (!track(c, p, n)) {
                return false;
            }
        }
        if (!verify_all(c)) {
            return false;
        }
        for (size_t i = 0; i < c->nlive;) {
            if (tl_chance(&r, 50)) {
                if (!untrack_free(c, i)) {
                    return false;
                }
            } else {
                i++;
            }
        }
        if (!verify_all(c) || !check_heap(c, "after partial release")) {
            return false;
        }
    }
    return free_all(c);
}

/* One allocation from a fresh instance leaves the rest free; small ones are distinct. */
static bool case_split(ctx_t *c)
{
    rt_stats_t s0, s1;
    bool st = ast(c, &s0);
    void *p, *q, *r;
    ALLOC(p, c, 1024);
    if (st) {
        ast(c, &s1);
        TL_REQUIRE(s1.free_bytes > 0u && s1.largest_free > 0u && s1.free_blocks >= 1u,
                   "%s: after one malloc(1024) of %zu: free_bytes %zu largest_free %zu free_blocks %zu", c->d->name,
                   s0.capacity, s1.free_bytes, s1.largest_free, s1.free_blocks);
        TL_REQUIRE(s1.used_blocks == 1u, "%s: used_blocks %zu", c->d->name, s1.used_blocks);
        TL_REQUIRE(s1.free_bytes <= s0.free_bytes - 1024u, "%s: free_bytes %zu -> %zu", c->d->name, s0.free_bytes,
                   s1.free_bytes);
    }
    ALLOC(q, c, 16);
    ALLOC(r, c, 16);
    TL_REQUIRE(p != q && q != r && p != r, "%s: split blocks not distinct", c->d->name);
    if (!verify_all(c) || !free_all(c)) {
        return false;
    }
    if (st && c->d->never_unites) {
        ast(c, &s1);
        TL_REQUIRE(s1.free_bytes == s0.free_bytes && s1.used_blocks == 0u,
                   "%s: after freeing all: free_bytes %zu (fresh %zu)", c->d->name, s1.free_bytes, s0.free_bytes);
    } else if (st) {
        ast(c, &s1);
        TL_REQUIRE(s1.largest_free == s0.largest_free && s1.free_blocks == s0.free_blocks &&
                       s1.free_bytes == s0.free_bytes,
                   "%s: after freeing all: largest_free %zu (fresh %zu), free_blocks %zu (fresh %zu)", c->d->name,
                   s1.largest_free, s0.largest_free, s1.free_blocks, s0.free_blocks);
    }
    return true;
}

#define UNIT 256u

/* Request whose block is exactly `bytes` (a multiple of UNIT). */
static size_t req(ctx_t *c, size_t bytes) { return bytes - c->d->block_overhead; }

/* Blocks of n * UNIT at consecutive addresses (boundary-tag heaps from a fresh instance). */
static bool alloc_run(ctx_t *c, unsigned char **out, const unsigned *units, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        void *p;
        ALLOC(p, c, req(c, units[i] * UNIT));
        out[i] = p;
        if (i > 0u) {
            TL_REQUIRE(out[i] == out[i - 1u] + units[i - 1u] * UNIT,
                       "%s: consecutive mallocs from a fresh heap not adjacent: %p then %p", c->d->name,
                       (void *)out[i - 1u], (void *)out[i]);
        }
    }
    return true;
}

/* malloc(n) must succeed and return `expect` (when not NULL); the block is released again. */
static bool fits_as_one(ctx_t *c, size_t n, const void *expect, const char *what)
{
    rt_stats_t s;
    if (ast(c, &s)) {
        TL_REQUIRE(s.largest_free >= n, "%s/%s: %s: largest_free %zu < %zu", c->d->name, c->name, what, s.largest_free,
                   n);
    }
    void *p = am(c, n);
    TL_REQUIRE(p != NULL, "%s/%s: %s: malloc(%zu) of the merged space failed", c->d->name, c->name, what, n);
    TL_REQUIRE(expect == NULL || p == expect, "%s/%s: %s: merged block at %p, expected %p", c->d->name, c->name, what,
               p, expect);
    tl_fill(p, n, 7);
    TL_REQUIRE(tl_verify(p, n, 7) == n, "%s: merged block not writable", c->d->name);
    af(c, p);
    return true;
}

static bool does_not_fit(ctx_t *c, size_t n, const char *what)
{
    void *p = am(c, n);
    TL_REQUIRE(p == NULL, "%s/%s: %s: malloc(%zu) succeeded on a full instance", c->d->name, c->name, what, n);
    return true;
}

/* Forward ([B][C]: free B, then C) and backward (free C, then B) coalescing: the merged space
 * must serve one request that neither half could. The rest of the instance is exhausted first,
 * so the merged block is the only place the request can go. */
static bool case_coalesce_pair(ctx_t *c)
{
    unsigned char *blk[8];
    unsigned char *x, *y; /* the pair: x below y */
    size_t unit = UNIT;   /* x and y are blocks of `unit` bytes */
    if (c->d->never_unites) {
        tl_skip("%s/%s: never unites freed blocks (never_unites)", c->d->name, c->name);
        return true;
    }
    if (c->d->page_size != 0u) {
        /* The two halves of one page: free, they unite into the page. */
        unit = c->d->page_size / 2u;
        for (unsigned i = 0; i < 8u; i++) {
            void *p;
            ALLOC(p, c, unit);
            blk[i] = p;
        }
        x = y = NULL;
        for (unsigned i = 0; i < 8u && x == NULL; i++) {
            for (unsigned j = 0; j < 8u; j++) {
                if (((uintptr_t)blk[i] & (c->d->page_size - 1u)) == 0u && blk[j] == blk[i] + unit) {
                    x = blk[i];
                    y = blk[j];
                    break;
                }
            }
        }
        TL_REQUIRE(x != NULL, "%s: no two of 8 blocks of %zu bytes are the halves of a page", c->d->name, unit);
    } else if (is_tree(c->d)) {
        /* Sibling subtrees: y starts right after x (a right child is followed by its parent, an
         * internal node, which never starts a chunk). */
        for (unsigned i = 0; i < 8u; i++) {
            void *p;
            ALLOC(p, c, req(c, UNIT));
            blk[i] = p;
        }
        size_t f = au(c, blk[0], req(c, UNIT)) + c->d->block_overhead;
        x = y = NULL;
        for (unsigned i = 0; i < 8u && x == NULL; i++) {
            for (unsigned j = 0; j < 8u; j++) {
                if (blk[j] == blk[i] + f) {
                    x = blk[i];
                    y = blk[j];
                    break;
                }
            }
        }
        TL_REQUIRE(x != NULL, "%s: no two of 8 chunks of %zu bytes are siblings", c->d->name, f);
    } else if (is_buddy(c->d)) {
        /* Buddies: two blocks of UNIT whose addresses differ only in the UNIT bit. */
        for (unsigned i = 0; i < 8u; i++) {
            void *p;
            ALLOC(p, c, UNIT);
            blk[i] = p;
        }
        x = y = NULL;
        for (unsigned i = 0; i < 8u && x == NULL; i++) {
            for (unsigned j = 0; j < 8u; j++) {
                if (((uintptr_t)blk[i] ^ (uintptr_t)blk[j]) == UNIT && blk[i] < blk[j]) {
                    x = blk[i];
                    y = blk[j];
                    break;
                }
            }
        }
        TL_REQUIRE(x != NULL, "buddy: no two of 8 blocks of %u bytes are buddies", UNIT);
    } else {
        static const unsigned units[4] = {1, 1, 1, 1}; /* A B C D; the pair is B, C */
        if (!alloc_run(c, blk, units, 4)) {
            return false;
        }
        x = blk[1];
        y = blk[2];
    }
    if (!exhaust(c)) {
        return false;
    }
    size_t two = req(c, 2u * unit);
    if (!does_not_fit(c, two, "before")) {
        return false;
    }
    for (unsigned round = 0; round < 2u; round++) {
        const char *what = round == 0u ? "forward (free lower, then upper)" : "backward (free upper, then lower)";
        if (!free_tracked(c, round == 0u ? x : y) || !check_heap(c, "after the first free") ||
            !does_not_fit(c, two, "one half free") || !free_tracked(c, round == 0u ? y : x) ||
            !check_heap(c, "after the second free") || !fits_as_one(c, two, x, what)) {
            return false;
        }
        /* Take the two halves back: the merged block is the only free space. */
        void *p, *q;
        ALLOC(p, c, req(c, unit));
        ALLOC(q, c, req(c, unit));
        TL_REQUIRE((p == x && q == y) || (p == y && q == x), "%s: halves came back at %p %p, expected %p %p",
                   c->d->name, p, q, (void *)x, (void *)y);
        if (!does_not_fit(c, 1, "retaken")) {
            return false;
        }
    }
    return verify_all(c) && free_all(c);
}

/* Coalescing on both sides at once: [B free][C][D free] and C is freed => one block. Then the
 * other orders: C first, then B (B merges forward), then D (merges backward). Buddy: four
 * quarter blocks of one aligned 4*UNIT block; freeing Q1, Q3, Q0, Q2 must cascade to 4*UNIT. */
/* 32 blocks of `size` into blk (tracked). */
static bool alloc32(ctx_t *c, unsigned char *blk[32], size_t size)
{
    for (unsigned i = 0; i < 32u; i++) {
        void *p;
        ALLOC(p, c, size);
        blk[i] = p;
    }
    return true;
}

/* Among blk, four blocks at base + offsets[k] with base aligned to `align` (1: any): into q. */
static bool find_quad(ctx_t *c, unsigned char *const blk[32], size_t align, const size_t offsets[4],
                      unsigned char *q[4], const char *what)
{
    unsigned char *base = NULL;
    for (unsigned i = 0; i < 32u && base == NULL; i++) {
        if (((uintptr_t)blk[i] & (align - 1u)) != 0u) {
            continue;
        }
        unsigned found = 0;
        for (unsigned k = 0; k < 4u; k++) {
            for (unsigned j = 0; j < 32u; j++) {
                found += blk[j] == blk[i] + offsets[k];
            }
        }
        base = found == 4u ? blk[i] : NULL;
    }
    TL_REQUIRE(base != NULL, "%s: no %s among 32 blocks", c->d->name, what);
    for (unsigned k = 0; k < 4u; k++) {
        q[k] = base + offsets[k];
    }
    return true;
}

/* Everything else exhausted, the quarters q freed Q1, Q3, Q0, Q2: `whole` bytes fit nowhere
 * before the last free and at Q0 after it. */
static bool free_quarters(ctx_t *c, unsigned char *const q[4], size_t whole, const char *what)
{
    if (!exhaust(c)) {
        return false;
    }
    static const unsigned order[4] = {1, 3, 0, 2};
    for (unsigned k = 0; k < 4u; k++) {
        if (!does_not_fit(c, whole, "before the last quarter") || !free_tracked(c, q[order[k]]) ||
            !check_heap(c, "between frees")) {
            return false;
        }
    }
    return fits_as_one(c, whole, q[0], what) && verify_all(c) && free_all(c);
}

/* [A][B][C][D][E] of 1, 1, 2, 1, 1 units: B, D, C freed, then C, B, D; each time the three are one
 * block, and come back in place. */
static bool coalesce_around_heap(ctx_t *c, size_t four)
{
    unsigned char *blk[32];
    static const unsigned units[5] = {1, 1, 2, 1, 1}; /* A B C D E */
    if (!alloc_run(c, blk, units, 5) || !exhaust(c)) {
        return false;
    }
    unsigned char *b = blk[1], *cc = blk[2], *d = blk[3];
    /* round 0: B, D, then C (both sides at once); round 1: C, B (forward), D (backward). */
    static const unsigned orders[2][3] = {{1, 3, 2}, {2, 1, 3}};
    for (unsigned round = 0; round < 2u; round++) {
        for (unsigned k = 0; k < 3u; k++) {
            if (!does_not_fit(c, four, "not all three free") || !free_tracked(c, blk[orders[round][k]]) ||
                !check_heap(c, "between frees")) {
                return false;
            }
        }
        if (!fits_as_one(c, four, b, round == 0u ? "[B free][C][D free], C freed" : "C, then B, then D")) {
            return false;
        }
        void *p;
        ALLOC(p, c, req(c, UNIT));
        TL_REQUIRE(p == b, "%s: B came back at %p, expected %p", c->d->name, p, (void *)b);
        ALLOC(p, c, req(c, 2u * UNIT));
        TL_REQUIRE(p == cc, "%s: C came back at %p, expected %p", c->d->name, p, (void *)cc);
        ALLOC(p, c, req(c, UNIT));
        TL_REQUIRE(p == d, "%s: D came back at %p, expected %p", c->d->name, p, (void *)d);
    }
    return verify_all(c) && free_all(c);
}

static bool case_coalesce_around(ctx_t *c)
{
    unsigned char *blk[32];
    unsigned char *q[4];
    size_t four = req(c, 4u * UNIT);
    if (c->d->never_unites) {
        tl_skip("%s/%s: never unites freed blocks (never_unites)", c->d->name, c->name);
        return true;
    }
    if (c->d->page_size != 0u) {
        /* The four quarters of one page: the page only when all are free. */
        size_t quarter = c->d->page_size / 4u;
        const size_t offsets[4] = {0, quarter, 2u * quarter, 3u * quarter};
        return alloc32(c, blk, quarter) && find_quad(c, blk, c->d->page_size, offsets, q, "page of four quarters") &&
               free_quarters(c, q, c->d->page_size, "four quarters back into their page");
    }
    if (is_tree(c->d)) {
        /* Four chunks of one subtree two levels up: x, x + f, then after their parent node
         * (min_block bytes) x + 2f + B, x + 3f + B. */
        if (!alloc32(c, blk, req(c, UNIT))) {
            return false;
        }
        size_t f = au(c, blk[0], req(c, UNIT)) + c->d->block_overhead, node = c->d->min_block;
        const size_t offsets[4] = {0, f, 2u * f + node, 3u * f + node};
        return find_quad(c, blk, 1, offsets, q, "four chunks of one subtree") &&
               free_quarters(c, q, four, "four chunks back into their subtree");
    }
    if (is_buddy(c->d)) {
        /* four quarter blocks of one aligned 4*UNIT block: the cascade of buddies */
        const size_t offsets[4] = {0, UNIT, 2u * UNIT, 3u * UNIT};
        return alloc32(c, blk, UNIT) && find_quad(c, blk, 4u * UNIT, offsets, q, "aligned quad") &&
               free_quarters(c, q, four, "cascade of buddies");
    }
    return coalesce_around_heap(c, four);
}

static size_t exhaust_size(size_t i) { return 1u + (i * 97u) % 700u + (i % 13u == 0u ? 3000u : 0u); }

/* Allocate until NULL; the instance is intact; free everything; the instance is as fresh and the
 * same sequence gives the same blocks again. */
static bool case_exhaust(ctx_t *c)
{
    rt_stats_t s0, s1;
    bool st = ast(c, &s0);
    static unsigned char *first[MAX_LIVE];
    size_t count[2] = {0, 0};
    for (unsigned round = 0; round < 2u; round++) {
        uint64_t failures = 0;
        if (st) {
            ast(c, &s1);
            failures = s1.failures;
        }
        for (size_t i = 0;; i++) {
            size_t n = exhaust_size(i);
            void *p = am(c, n);
            if (p == NULL) {
                break;
            }
            if (!track(c, p, n)) {
                return false;
            }
            if (round == 0u) {
                first[i] = p;
            } else {
                TL_REQUIRE(i < count[0] && first[i] == p, "%s: second run, block %zu at %p, first run %p", c->d->name,
                           i, p, i < count[0] ? (void *)first[i] : NULL);
            }
            count[round]++;
        }
        TL_REQUIRE(count[round] > 10u, "%s: only %zu blocks fit", c->d->name, count[round]);
        if (!check_heap(c, "when exhausted") || !verify_all(c)) {
            return false;
        }
        if (st) {
            ast(c, &s1);
            TL_REQUIRE(s1.failures == failures + 1u, "%s: failures %" PRIu64 " -> %" PRIu64 " after one NULL",
                       c->d->name, failures, s1.failures);
        }
        if (!free_all(c) || !check_heap(c, "after freeing all")) {
            return false;
        }
        if (st) {
            ast(c, &s1);
            TL_REQUIRE(s1.used_bytes == 0u && s1.used_blocks == 0u && s1.free_bytes == s1.capacity,
                       "%s: after freeing all: used_bytes %zu used_blocks %zu", c->d->name, s1.used_bytes,
                       s1.used_blocks);
            TL_REQUIRE(c->d->never_unites || (s1.largest_free == s0.largest_free && s1.free_blocks == s0.free_blocks),
                       "%s: after freeing all: largest_free %zu (fresh %zu) free_blocks %zu (fresh %zu)", c->d->name,
                       s1.largest_free, s0.largest_free, s1.free_blocks, s0.free_blocks);
        }
    }
    TL_REQUIRE(count[0] == count[1], "%s: %zu blocks fit first, %zu second", c->d->name, count[0], count[1]);
    /* Down to the last byte, and back. */
    if (!exhaust(c) || !check_heap(c, "exhausted to the byte") || !free_all(c)) {
        return false;
    }
    if (st && !c->d->never_unites) {
        ast(c, &s1);
        TL_REQUIRE(s1.largest_free == s0.largest_free, "%s: largest_free %zu, fresh %zu", c->d->name, s1.largest_free,
                   s0.largest_free);
    }
    return true;
}

/* realloc(NULL, n) = malloc(n) (s0: the stats before); shrinking and realloc to the usable size
 * stay in place. *pp: the block (not tracked), *pu its usable size, filled with pattern 2. */
static bool realloc_small(ctx_t *c, bool st, const rt_stats_t *s0, unsigned char **pp, size_t *pu)
{
    rt_stats_t s1;
    unsigned char *p = c->d->realloc(c->h, NULL, 100);
    TL_REQUIRE(p != NULL, "%s: realloc(NULL, 100) failed", c->d->name);
    if (st) {
        ast(c, &s1);
        TL_REQUIRE(s1.mallocs == s0->mallocs + 1u && s1.used_blocks == 1u, "%s: realloc(NULL): mallocs %" PRIu64,
                   c->d->name, s1.mallocs);
    }
    tl_fill(p, 100, 1);
    /* shrink: same pointer, prefix kept */
    unsigned char *q = c->d->realloc(c->h, p, 40);
    TL_REQUIRE(q == p, "%s: shrinking realloc moved %p -> %p", c->d->name, (void *)p, (void *)q);
    TL_REQUIRE(tl_verify(q, 40, 1) == 40u, "%s: shrink lost the contents", c->d->name);
    /* to its own usable size: same pointer */
    size_t u = au(c, q, 40);
    q = c->d->realloc(c->h, p, u);
    TL_REQUIRE(q == p, "%s: realloc to usable_size %zu moved", c->d->name, u);
    TL_REQUIRE(tl_verify(q, 40, 1) == 40u, "%s: realloc to usable_size lost the contents", c->d->name);
    tl_fill(q, u, 2);
    *pp = p;
    *pu = u;
    return true;
}

/* p (usable u, the first block of a fresh instance) grows to 3000 into its free successor (in
 * place for the boundary-tag heaps); the result is tracked. */
static bool realloc_grow(ctx_t *c, bool st, unsigned char *p, size_t u, unsigned char **qq)
{
    rt_stats_t s0, s1;
    if (st) {
        ast(c, &s0);
    }
    unsigned char *q = c->d->realloc(c->h, p, 3000);
    TL_REQUIRE(q != NULL, "%s: growing realloc failed", c->d->name);
    TL_REQUIRE(tl_verify(q, u, 2) == u, "%s: growing realloc lost the contents", c->d->name);
    if (st) {
        ast(c, &s1);
        TL_REQUIRE(s1.reallocs == s0.reallocs + 1u, "%s: reallocs %" PRIu64 " -> %" PRIu64, c->d->name, s0.reallocs,
                   s1.reallocs);
    }
    if (!is_buddy(c->d) && !is_tree(c->d) && c->d->page_size == 0u) {
        TL_REQUIRE(q == p, "%s: realloc did not grow into the free successor (%p -> %p)", c->d->name, (void *)p,
                   (void *)q);
        if (st) {
            TL_REQUIRE(s1.reallocs_in_place == s0.reallocs_in_place + 1u && s1.mallocs == s0.mallocs,
                       "%s: grow in place: reallocs_in_place %" PRIu64 " -> %" PRIu64 ", mallocs %" PRIu64
                       " -> %" PRIu64,
                       c->d->name, s0.reallocs_in_place, s1.reallocs_in_place, s0.mallocs, s1.mallocs);
        }
    } else if (q == p) {
        printf("  note: %s grew 100 -> 3000 in place\n", c->d->name);
    }
    TL_REQUIRE(au(c, q, 3000) >= 3000u, "%s: usable after grow %zu", c->d->name, au(c, q, 3000));
    if (!track(c, q, 3000)) { /* refills */
        return false;
    }
    *qq = q;
    return true;
}

/* q (3000 bytes, tracked) grows to 6000 with a fence behind: moves (or grows in place if it
 * can), contents kept. *rr: the block; *ff: the fence (both tracked). */
static bool realloc_move(ctx_t *c, bool st, unsigned char *q, unsigned char **rr, void **ff)
{
    rt_stats_t s0, s1;
    void *fence;
    ALLOC(fence, c, 64);
    if (st) {
        ast(c, &s0);
    }
    size_t qi = find_live(c, q);
    unsigned char *r = c->d->realloc(c->h, q, 6000);
    TL_REQUIRE(r != NULL, "%s: realloc 3000 -> 6000 failed", c->d->name);
    TL_REQUIRE(tl_verify(r, 3000, c->live[qi].id) == 3000u, "%s: moving realloc lost the contents", c->d->name);
    if (st) {
        ast(c, &s1);
        if (r != q) {
            TL_REQUIRE(s1.mallocs == s0.mallocs + 1u && s1.frees == s0.frees + 1u && s1.reallocs == s0.reallocs + 1u &&
                           s1.used_blocks == s0.used_blocks,
                       "%s: moving realloc: mallocs %" PRIu64 "->%" PRIu64 " frees %" PRIu64 "->%" PRIu64, c->d->name,
                       s0.mallocs, s1.mallocs, s0.frees, s1.frees);
        } else {
            TL_REQUIRE(s1.reallocs_in_place == s0.reallocs_in_place + 1u, "%s: in-place realloc not counted",
                       c->d->name);
        }
    }
    c->live[qi].p = r;
    c->live[qi].n = 6000;
    c->live[qi].usable = au(c, r, 6000);
    tl_fill(r, 6000, c->live[qi].id);
    if (!verify_all(c) || !check_heap(c, "after moving realloc")) {
        return false;
    }
    *rr = r;
    *ff = fence;
    return true;
}

/* a realloc of r that cannot succeed leaves the block as it was */
static bool realloc_fails(ctx_t *c, bool st, unsigned char *r)
{
    rt_stats_t s0;
    size_t huge = too_large(c);
    c->expected_reports++;
    TL_REQUIRE(c->d->realloc(c->h, r, huge) == NULL, "%s: realloc(p, %zu) succeeded", c->d->name, huge);
    if (st) {
        /* more than the free bytes plus the block itself: cannot fit in place or moved */
        ast(c, &s0);
        size_t big = s0.free_bytes + au(c, r, 6000) + 1u;
        unsigned long before = c->rec.count;
        TL_REQUIRE(c->d->realloc(c->h, r, big) == NULL, "%s: realloc(p, %zu) on a used instance succeeded", c->d->name,
                   big);
        c->expected_reports += c->rec.count - before; /* out of memory: a report is not required */
    }
    if (!verify_all(c) || !check_heap(c, "after failed reallocs")) {
        return false;
    }
    return true;
}

/* realloc(fence, 0) frees; then everything is freed */
static bool realloc_zero(ctx_t *c, bool st, void *fence)
{
    rt_stats_t s0, s1;
    if (st) {
        ast(c, &s0);
    }
    size_t fi = find_live(c, fence);
    TL_REQUIRE(verify_one(c, &c->live[fi]), "fence");
    TL_REQUIRE(c->d->realloc(c->h, fence, 0) == NULL, "%s: realloc(p, 0) returned a block", c->d->name);
    c->live[fi] = c->live[--c->nlive];
    if (st) {
        ast(c, &s1);
        TL_REQUIRE(s1.frees == s0.frees + 1u && s1.used_blocks == s0.used_blocks - 1u,
                   "%s: realloc(p, 0) did not free: frees %" PRIu64 " -> %" PRIu64, c->d->name, s0.frees, s1.frees);
    }
    if (!free_all(c)) {
        return false;
    }
    if (st) {
        ast(c, &s1);
        TL_REQUIRE(s1.used_bytes == 0u && s1.used_blocks == 0u, "%s: used_bytes %zu after all freed", c->d->name,
                   s1.used_bytes);
    }
    return true;
}

static bool case_realloc(ctx_t *c)
{
    if (c->d->realloc == NULL) {
        tl_skip("%s/%s: no realloc", c->d->name, c->name);
        return true;
    }
    rt_stats_t s0;
    bool st = ast(c, &s0);
    unsigned char *p, *q, *r;
    size_t u;
    void *fence;
    return realloc_small(c, st, &s0, &p, &u) && realloc_grow(c, st, p, u, &q) && realloc_move(c, st, q, &r, &fence) &&
           realloc_fails(c, st, r) && realloc_zero(c, st, fence);
}

static bool case_memalign(ctx_t *c)
{
    if (c->d->memalign == NULL) {
        tl_skip("%s/%s: no memalign", c->d->name, c->name);
        return true;
    }
    static const size_t sizes[] = {1, 24, 100, 1000, 5000};
    for (size_t a = 1; a <= 4096u; a *= 2u) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            unsigned char *p = c->d->memalign(c->h, a, sizes[k]);
            TL_REQUIRE(p != NULL, "%s: memalign(%zu, %zu) failed", c->d->name, a, sizes[k]);
            TL_REQUIRE((uintptr_t)p % a == 0u, "%s: memalign(%zu, %zu) = %p", c->d->name, a, sizes[k], (void *)p);
            if (!track(c, p, sizes[k])) {
                return false;
            }
        }
        if (!check_heap(c, "after memalign")) {
            return false;
        }
    }
    if (!verify_all(c)) {
        return false;
    }
    /* free every other one, and align again into the holes */
    for (size_t i = 0; i < c->nlive; i++) {
        if (!untrack_free(c, i)) {
            return false;
        }
    }
    for (size_t a = 64; a <= 4096u; a *= 4u) {
        unsigned char *p = c->d->memalign(c->h, a, 700);
        TL_REQUIRE(p != NULL && (uintptr_t)p % a == 0u, "%s: memalign(%zu, 700) = %p", c->d->name, a, (void *)p);
        if (!track(c, p, 700)) {
            return false;
        }
    }
    return verify_all(c) && free_all(c);
}

typedef struct walk_acc {
    size_t blocks, used, free, footprint;
    uintptr_t last;
    bool ordered;
    uintptr_t base; /* start of the first block */
    size_t stop_after;
    ctx_t *c;
    size_t unknown;  /* used blocks not in the live table */
    size_t mismatch; /* used blocks whose size differs from usable_size */
} walk_acc_t;

static bool walk_fn(void *context, const rt_block_info_t *b)
{
    walk_acc_t *w = context;
    if (w->blocks == 0u) {
        w->base = (uintptr_t)b->pointer - (b->footprint - b->size);
    }
    w->blocks++;
    w->footprint += b->footprint;
    if ((uintptr_t)b->pointer <= w->last) {
        w->ordered = false;
    }
    w->last = (uintptr_t)b->pointer;
    if (b->used) {
        w->used++;
        if (w->c != NULL) {
            size_t i = find_live(w->c, b->pointer);
            if (i == SIZE_MAX) {
                w->unknown++;
            } else if (w->c->live[i].usable != b->size) {
                w->mismatch++;
            }
        }
    } else {
        w->free++;
    }
    return w->stop_after == 0u || w->blocks < w->stop_after;
}

static bool walk_and_compare(ctx_t *c, const char *when)
{
    walk_acc_t w = {0, 0, 0, 0, 0, true, 0, 0, c, 0, 0};
    c->d->walk(c->h, walk_fn, &w);
    rt_stats_t s;
    TL_REQUIRE(w.ordered, "%s: walk %s not in address order", c->d->name, when);
    TL_REQUIRE(w.used == c->nlive && w.unknown == 0u && w.mismatch == 0u,
               "%s: walk %s: %zu used blocks (%zu unknown, %zu size mismatches), %zu live", c->d->name, when, w.used,
               w.unknown, w.mismatch, c->nlive);
    if (ast(c, &s)) {
        TL_REQUIRE(w.footprint == s.capacity, "%s: walk %s: footprints add up to %zu, capacity %zu", c->d->name, when,
                   w.footprint, s.capacity);
        TL_REQUIRE(w.free == s.free_blocks && w.used == s.used_blocks,
                   "%s: walk %s: %zu free / %zu used, stats %zu / %zu", c->d->name, when, w.free, w.used, s.free_blocks,
                   s.used_blocks);
    }
    return true;
}

static bool case_walk(ctx_t *c)
{
    if (c->d->walk == NULL) {
        tl_skip("%s/%s: no walk", c->d->name, c->name);
        return true;
    }
    if (!walk_and_compare(c, "fresh")) {
        return false;
    }
    tl_rng_t r = tl_rng_seed(77u + g_seed);
    for (unsigned i = 0; i < 60u; i++) {
        void *p;
        ALLOC(p, c, tl_range(&r, 1, 900));
    }
    for (size_t i = 0; i < c->nlive; i += 2u) {
        if (!untrack_free(c, i)) {
            return false;
        }
    }
    if (!walk_and_compare(c, "after churn")) {
        return false;
    }
    walk_acc_t w = {0, 0, 0, 0, 0, true, 0, 3, NULL, 0, 0};
    c->d->walk(c->h, walk_fn, &w);
    TL_REQUIRE(w.blocks == 3u, "%s: walk visited %zu blocks after the callback said stop at 3", c->d->name, w.blocks);
    return free_all(c) && walk_and_compare(c, "after freeing all");
}

/* Counters exact, used_bytes = sum of footprints, peak and watermark. */
static bool case_stats(ctx_t *c)
{
    rt_stats_t s, prev;
    if (!ast(c, &s)) {
        tl_skip("%s/%s: no stats", c->d->name, c->name);
        return true;
    }
    TL_REQUIRE(s.mallocs == 0u && s.frees == 0u && s.failures == 0u && s.reallocs == 0u && s.errors == 0u &&
                   s.used_bytes == 0u && s.used_blocks == 0u && s.peak_used == 0u && s.watermark == 0u,
               "%s: fresh stats not zero (mallocs %" PRIu64 " used %zu peak %zu watermark %zu)", c->d->name, s.mallocs,
               s.used_bytes, s.peak_used, s.watermark);
    TL_REQUIRE(s.capacity > 0u && s.capacity <= c->buf.size && s.free_bytes == s.capacity && s.largest_free > 0u &&
                   s.largest_free <= s.capacity && s.free_blocks >= 1u,
               "%s: fresh: capacity %zu (buffer %zu) free %zu largest %zu", c->d->name, s.capacity, c->buf.size,
               s.free_bytes, s.largest_free);
    uintptr_t base = 0;
    if (c->d->walk != NULL) {
        walk_acc_t w = {0, 0, 0, 0, 0, true, 0, 1, NULL, 0, 0};
        c->d->walk(c->h, walk_fn, &w);
        base = w.base;
    }
    tl_rng_t r = tl_rng_seed(4242u + g_seed);
    uint64_t mallocs = 0, frees = 0, failures = 0;
    size_t peak = 0;
    prev = s;
    for (unsigned op = 0; op < 600u; op++) {
        if (c->nlive > 0u && (tl_chance(&r, 45) || c->nlive >= 200u)) {
            if (!untrack_free(c, (size_t)tl_range(&r, 0, c->nlive - 1u))) {
                return false;
            }
            frees++;
        } else {
            size_t n = tl_chance(&r, 90) ? tl_range(&r, 1, 1500) : tl_range(&r, 1500, 20000);
            void *p = am(c, n);
            if (p == NULL) {
                failures++;
            } else {
                mallocs++;
                if (!track(c, p, n)) {
                    return false;
                }
            }
        }
        ast(c, &s);
        size_t footprints = 0;
        uintptr_t hi = 0;
        for (size_t i = 0; i < c->nlive; i++) {
            footprints += c->live[i].usable + c->d->block_overhead;
            uintptr_t end = (uintptr_t)c->live[i].p + c->live[i].usable;
            hi = end > hi ? end : hi;
        }
        peak = s.used_bytes > peak ? s.used_bytes : peak;
        TL_REQUIRE(s.mallocs == mallocs && s.frees == frees && s.failures == failures,
                   "%s: op %u: mallocs %" PRIu64 "/%" PRIu64 " frees %" PRIu64 "/%" PRIu64 " failures %" PRIu64
                   "/%" PRIu64 " (stats/expected)",
                   c->d->name, op, s.mallocs, mallocs, s.frees, frees, s.failures, failures);
        TL_REQUIRE(s.used_blocks == c->nlive, "%s: op %u: used_blocks %zu, live %zu", c->d->name, op, s.used_blocks,
                   c->nlive);
        /* thread heaps: a block served by the tree directly (rtalloc/mcheap.h) costs the tree's
         * 12 bytes and up to 12 of alignment instead of the heap's header: 16 more at most */
        TL_REQUIRE(s.used_bytes == footprints || (c->d->family == RT_FAMILY_THREAD_HEAPS && s.used_bytes > footprints &&
                                                  s.used_bytes - footprints <= 16u * c->nlive),
                   "%s: op %u: used_bytes %zu, sum of (usable + overhead) %zu", c->d->name, op, s.used_bytes,
                   footprints);
        TL_REQUIRE(s.free_bytes == s.capacity - s.used_bytes, "%s: op %u: free_bytes %zu", c->d->name, op,
                   s.free_bytes);
        /* a cached tree's peak also counts what its caches held (rtalloc/wfcache.h): never below */
        TL_REQUIRE(s.peak_used == peak || (caches_peak(c->d) && s.peak_used >= peak),
                   "%s: op %u: peak_used %zu, highest used_bytes seen %zu", c->d->name, op, s.peak_used, peak);
        TL_REQUIRE(s.watermark >= prev.watermark, "%s: op %u: watermark fell %zu -> %zu", c->d->name, op,
                   prev.watermark, s.watermark);
        /* thread heaps: the watermark is an address, and each span's heap control lies below it
         * without being capacity (rtalloc/mcheap.h): within the buffer */
        TL_REQUIRE(
            s.watermark >= s.used_bytes &&
                (s.watermark <= s.capacity || (c->d->family == RT_FAMILY_THREAD_HEAPS && s.watermark <= c->buf.size)),
            "%s: op %u: watermark %zu, used %zu, capacity %zu", c->d->name, op, s.watermark, s.used_bytes, s.capacity);
        if (base != 0u && hi != 0u) {
            TL_REQUIRE(s.watermark >= (size_t)(hi - base), "%s: op %u: watermark %zu below a live block's end %zu",
                       c->d->name, op, s.watermark, (size_t)(hi - base));
        }
        TL_REQUIRE(s.errors == 0u, "%s: op %u: errors %" PRIu64, c->d->name, op, s.errors);
        prev = s;
    }
    /* a refused request: counted as a failure and as an error */
    c->expected_reports++;
    TL_REQUIRE(am(c, too_large(c)) == NULL, "%s: too large request succeeded", c->d->name);
    ast(c, &s);
    TL_REQUIRE(s.failures == failures + 1u && s.errors == 1u,
               "%s: refused request: failures %" PRIu64 " errors %" PRIu64, c->d->name, s.failures, s.errors);
    if (!free_all(c)) {
        return false;
    }
    ast(c, &s);
    TL_REQUIRE(s.used_bytes == 0u && s.used_blocks == 0u &&
                   (s.peak_used == peak || (caches_peak(c->d) && s.peak_used >= peak)) && s.watermark == prev.watermark,
               "%s: all freed: used %zu blocks %zu peak %zu (expected %zu) watermark %zu (was %zu)", c->d->name,
               s.used_bytes, s.used_blocks, s.peak_used, peak, s.watermark, prev.watermark);
    return true;
}

/* max_request: malloc(max_request) succeeds on a fresh instance, max_request + 1 is refused. */
static bool max_request_one(const rt_allocator_t *d, size_t size, size_t mis)
{
    tl_buffer_t b;
    TL_REQUIRE(tl_buffer_new(&b, size, mis), "out of memory");
    tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
    bool ok = false;
    void *h = d->create(b.mem, size);
    if (!TL_CHECK(h != NULL, "%s: create(%zu bytes at +%zu) failed", d->name, size, mis)) {
        goto out;
    }
    if (d->set_handler != NULL) {
        d->set_handler(h, tl_record, &rec);
    }
    size_t m = d->max_request(h);
    if (!TL_CHECK(m > 0u && m < size, "%s: max_request %zu over %zu bytes", d->name, m, size)) {
        goto out;
    }
    if (d->stats != NULL) {
        rt_stats_t s;
        d->stats(h, &s);
        if (!TL_CHECK(s.largest_free == m, "%s: fresh over %zu at +%zu: largest_free %zu, max_request %zu", d->name,
                      size, mis, s.largest_free, m)) {
            goto out;
        }
    }
    for (unsigned round = 0; round < 2u; round++) {
        unsigned char *p = d->malloc(h, m);
        if (!TL_CHECK(p != NULL, "%s: malloc(max_request = %zu) failed over %zu bytes at +%zu (round %u)", d->name, m,
                      size, mis, round)) {
            goto out;
        }
        if (!TL_CHECK(tl_inside(p, m, &b) && (uintptr_t)p % d->alignment == 0u,
                      "%s: max block %p+%zu outside the buffer or misaligned", d->name, (void *)p, m)) {
            goto out;
        }
        p[0] = 1;
        p[m - 1u] = 2;
        d->free(h, p);
    }
    if (m < SIZE_MAX) {
        if (!TL_CHECK(d->malloc(h, m + 1u) == NULL, "%s: malloc(max_request + 1 = %zu) succeeded over %zu bytes",
                      d->name, m + 1u, size)) {
            goto out;
        }
        if (!TL_CHECK(rec.count == 1u && rec.last == RT_ERR_TOO_LARGE,
                      "%s: malloc(max_request + 1): %lu reports, last %s (expected one TOO_LARGE)", d->name, rec.count,
                      tl_kind_name(rec.last))) {
            goto out;
        }
    }
    ok = d->check == NULL || TL_CHECK(d->check(h), "%s: check after max_request", d->name);
out:
    tl_buffer_free(&b);
    return ok;
}

static bool case_max_request(ctx_t *c)
{
    if (c->d->max_request == NULL) {
        tl_skip("%s/%s: no max_request", c->d->name, c->name);
        return true;
    }
    static const size_t sizes[] = {0, 4096, 65536 + 17, 300000};
    size_t min = c->d->min_buffer != NULL ? c->d->min_buffer() : 0u;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t size = min + sizes[k];
        for (size_t mis = 0; size != 0u && mis < 16u; mis += 5u) {
            if (!max_request_one(c->d, size, mis)) {
                return false;
            }
        }
    }
    return true;
}

/* --- runner ------------------------------------------------------------------------------------ */

typedef struct case_def {
    const char *name;
    bool (*fn)(ctx_t *c);
    size_t buffer;
    size_t misalign;
} case_def_t;

static const case_def_t cases[] = {
    {"alignment", case_alignment, 1u << 20, 0},
    {"alignment+1", case_alignment, 1u << 20, 1},
    {"alignment+15", case_alignment, 1u << 20, 15},
    {"overlap", case_overlap, 512u << 10, 0},
    {"overlap+7", case_overlap, 512u << 10, 7},
    {"split", case_split, 64u << 10, 0},
    {"split+3", case_split, 64u << 10, 3},
    {"coalesce_pair", case_coalesce_pair, 64u << 10, 0},
    {"coalesce_pair+9", case_coalesce_pair, 64u << 10, 9},
    {"coalesce_around", case_coalesce_around, 64u << 10, 0},
    {"coalesce_around+5", case_coalesce_around, 64u << 10, 5},
    {"exhaust", case_exhaust, 128u << 10, 0},
    {"exhaust+9", case_exhaust, 128u << 10, 9},
    {"realloc", case_realloc, 64u << 10, 0},
    {"realloc+2", case_realloc, 64u << 10, 2},
    {"memalign", case_memalign, 512u << 10, 0},
    {"memalign+13", case_memalign, 512u << 10, 13},
    {"stats", case_stats, 192u << 10, 0},
    {"stats+11", case_stats, 192u << 10, 11},
    {"walk", case_walk, 96u << 10, 0},
    {"walk+6", case_walk, 96u << 10, 6},
    {"max_request", case_max_request, 64u << 10, 0},
};

static void run_case(const rt_allocator_t *d, const case_def_t *k)
{
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.name = k->name;
    c.live = live_store;
    c.next_id = 1;
    c.rec.print = false;
    if (!TL_CHECK(tl_buffer_new(&c.buf, k->buffer, k->misalign), "out of memory")) {
        return;
    }
    c.h = d->create(c.buf.mem, c.buf.size);
    if (TL_CHECK(c.h != NULL, "%s: create over %zu bytes at +%zu failed", d->name, k->buffer, k->misalign)) {
        if (d->set_handler != NULL) {
            d->set_handler(c.h, tl_record, &c.rec);
        }
        unsigned long failed = tl_state.failed;
        bool ok = k->fn(&c);
        TL_CHECK(ok || tl_state.failed > failed, "%s/%s returned failure", d->name, k->name);
        if (d->check != NULL) {
            TL_CHECK(d->check(c.h), "%s/%s: integrity check at the end of the case", d->name, k->name);
        }
        TL_CHECK(c.rec.count == c.expected_reports, "%s/%s: %lu error reports, expected %lu (last: %s)", d->name,
                 k->name, c.rec.count, c.expected_reports, tl_kind_name(c.rec.last));
        printf("%-9s %-20s %s\n", d->name, k->name, tl_state.failed > failed ? "FAILED" : "ok");
        if (tl_state.failed > failed) {
            printf("  (seed %" PRIu64 "; replay: contract %s %" PRIu64 ")\n", g_seed, d->name, g_seed);
        }
    }
    tl_buffer_free(&c.buf);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 && strcmp(argv[1], "all") != 0 ? argv[1] : NULL;
    if (argc > 2 && !tl_parse_u64(argv[2], &g_seed)) {
        fprintf(stderr, "usage: contract [allocator|all] [seed]\n");
        return 2;
    }
    size_t n = 0;
    const rt_allocator_t *const *all = rt_registry(&n);
    (void)tl_check_registry(n);
    TL_CHECK(n >= 7u, "registry lists %zu allocators", n);
    for (size_t i = 0; i < n; i++) {
        const rt_allocator_t *d = all[i];
        if (only != NULL && strcmp(only, d->name) != 0) {
            continue;
        }
        if (!TL_CHECK(d->create != NULL && d->malloc != NULL && d->free != NULL && d->alignment > 0u &&
                          (d->alignment & (d->alignment - 1u)) == 0u,
                      "%s: descriptor lacks the trio or a power-of-two alignment", d->name)) {
            continue;
        }
        TL_CHECK(rt_registry_find(d->name) == d, "rt_registry_find(\"%s\")", d->name);
        TL_CHECK(d->min_buffer != NULL && d->min_buffer() > 0u, "%s: descriptor has no min_buffer", d->name);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            run_case(d, &cases[k]);
        }
    }
    TL_CHECK(rt_registry_find("no such allocator") == NULL, "rt_registry_find of an unknown name");
    return tl_summary("contract");
}
