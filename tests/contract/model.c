/* SPDX-License-Identifier: MIT */
/*
 * model.c -- randomised model-based test: every allocator of the registry against a shadow model.
 *
 * The model is the array of live blocks (pointer, requested size, pattern id). Each run draws a
 * random mix of malloc (sizes: tiny, uniform 1..4096, medium, occasionally huge), free, realloc,
 * calloc and memalign from a seeded xorshift64*, and after EVERY operation checks:
 *   - the allocator's integrity check;
 *   - the new or resized block: aligned, inside the buffer, usable >= requested, not overlapping
 *     any other live block (an interval check against the whole model);
 *   - the pattern of a block before it is freed or resized (and of every block every 64 ops);
 *   - stats: used_blocks = model count, mallocs / frees / failures exactly as the model counted,
 *     mallocs - frees = used_blocks;
 *   - no error report except TOO_LARGE for the requests that can never fit;
 *   - every NULL justified: stats.largest_free below the request, and no free block of a walk
 *     that could have served it (null_justified: per family, exact or conservative, below).
 * It is a correctness test, not a benchmark. ctest runs 50 seeds in sanitizer and emulated builds.
 *
 * Usage: model                              all allocators, seeds 1..200, 2000 ops each
 *                                            (1..50 when the library is built with RT_DEBUG >= 2;
 *                                            1..TL_MODEL_SEEDS when that is defined)
 *        model <allocator|all> [seed] [ops] [seeds]
 * A failure prints the allocator, the seed and the op number: `model <allocator> <seed>` replays it.
 */
#include "testlib.h"

#include "rtalloc/registry.h"

#define MAX_LIVE 64u
#define HEAP_SIZE (64u << 10)

/* Seeds of the default run (compile-time knob: the emulated targets run fewer, see ports/). */
#ifndef TL_MODEL_SEEDS
#define TL_MODEL_SEEDS (TL_DEBUG_WALKS ? 50 : 200)
#endif

typedef struct mblock {
    unsigned char *p;
    size_t n;
    size_t usable;
    uint64_t id;
} mblock_t;

typedef struct run {
    const rt_allocator_t *d;
    uint64_t seed;
    unsigned op;
    tl_buffer_t buf;
    void *h;
    tl_rng_t rng;
    mblock_t live[MAX_LIVE];
    size_t nlive;
    uint64_t next_id;
    uint64_t mallocs, frees, failures; /* what stats must say */
    uint64_t allowed_reports;
    tl_recorder_t rec;
    size_t max_request;
    unsigned long nulls_checked; /* NULLs shown justified by a walk (null_justified) */
} run_t;

#define RCHECK(r, cond, ...)                                                                                    \
    do {                                                                                                        \
        if (!TL_CHECK(cond, __VA_ARGS__)) {                                                                     \
            printf("  at: %s seed %" PRIu64 " op %u (replay: model %s %" PRIu64 ")\n", (r)->d->name, (r)->seed, \
                   (r)->op, (r)->d->name, (r)->seed);                                                           \
            return false;                                                                                       \
        }                                                                                                       \
    } while (0)

static size_t draw_size(run_t *r)
{
    unsigned k = (unsigned)(tl_next(&r->rng) % 100u);
    if (k < 35u) {
        return tl_range(&r->rng, 1, 32);
    }
    if (k < 90u) {
        return tl_range(&r->rng, 1, 4096);
    }
    if (k < 98u) {
        return tl_range(&r->rng, 4097, 32768);
    }
    /* huge: around the heap's size, sometimes beyond what it could ever hold */
    return tl_range(&r->rng, HEAP_SIZE / 4u, HEAP_SIZE + HEAP_SIZE / 4u);
}

/* The new block [p, p + usable) lies in the buffer, is aligned and overlaps no other live block. */
static bool check_placement(run_t *r, const mblock_t *b, size_t alignment)
{
    RCHECK(r, ((uintptr_t)b->p % r->d->alignment) == 0u && ((uintptr_t)b->p % alignment) == 0u,
           "%p not aligned to %zu / %zu", (void *)b->p, r->d->alignment, alignment);
    RCHECK(r, b->usable >= b->n, "usable %zu < requested %zu", b->usable, b->n);
    RCHECK(r, tl_inside(b->p, b->usable, &r->buf), "block %p+%zu outside the buffer", (void *)b->p, b->usable);
    uintptr_t lo = (uintptr_t)b->p, hi = lo + b->usable;
    const mblock_t *hit = NULL;
    for (size_t i = 0; i < r->nlive && hit == NULL; i++) {
        const mblock_t *o = &r->live[i];
        uintptr_t olo = (uintptr_t)o->p, ohi = olo + o->usable;
        if (o != b && hi > olo && ohi > lo) {
            hit = o;
        }
    }
    RCHECK(r, hit == NULL, "block %p+%zu overlaps live block %p+%zu", (void *)b->p, b->usable,
           hit != NULL ? (void *)hit->p : NULL, hit != NULL ? hit->usable : 0u);
    return true;
}

static bool verify_block(run_t *r, const mblock_t *b)
{
    size_t bad = tl_verify(b->p, b->n, b->id);
    RCHECK(r, bad == b->n, "block %p (%zu bytes, id %" PRIu64 ") corrupted at offset %zu", (void *)b->p, b->n, b->id,
           bad);
    return true;
}

static size_t usable(run_t *r, void *p, size_t n) { return r->d->usable_size != NULL ? r->d->usable_size(r->h, p) : n; }

/* Adds a fresh block to the model (zero-filled check for calloc) and patterns it. */
static bool add_block(run_t *r, void *p, size_t n, size_t alignment, bool zeroed)
{
    mblock_t *b = &r->live[r->nlive++];
    b->p = p;
    b->n = n;
    b->usable = usable(r, p, n);
    b->id = r->next_id++;
    r->mallocs++;
    if (!check_placement(r, b, alignment)) {
        return false;
    }
    if (zeroed) {
        size_t j = 0;
        while (j < n && b->p[j] == 0u) {
            j++;
        }
        RCHECK(r, j == n, "calloc block %p not zero at %zu", (void *)b->p, j);
    }
    tl_fill(p, n, b->id);
    return true;
}

/* --- was a NULL justified? ---------------------------------------------------------------------
 * After a request returns NULL (a failing call changes no free block), two checks:
 *  1. the allocator's own claim: stats.largest_free ("the largest single request that would
 *     succeed now") is below the request (malloc, calloc, realloc; not for the page allocators,
 *     whose largest_free is the largest class with a free block or free run: a smaller request
 *     of another class can fail below it);
 *  2. independently, a walk of the free blocks finds none that could have served it. "Could
 *     serve", per family (descriptor properties: family, block_overhead, min_block, alignment,
 *     page_size, malloc_bound), with B the request's block:
 *     heap   B = max(min_block, round_up(n + block_overhead, alignment)); a memalign beyond the
 *            natural alignment adds alignment + min_block (the gap in front becomes a free block).
 *            Exact for the indexes that search the whole free list (malloc_bound "O(free
 *            blocks)": first fit, best fit, segregated fit): a free footprint >= B serves.
 *            Conservative for the O(1) good-fit indexes: TLSF rounds the request up to the next
 *            second-level slot (< 1/16 or 1/32 more) and half-fit to the next power of two, so a
 *            free block in B's own slot may be skipped; one of footprint >= 2B is always found.
 *     buddy  B = the next power of two >= max(n + block_overhead, min_block, alignment): exact, a
 *            free block of footprint >= B serves (a bitmap search over every order >= B's;
 *            blocks are aligned to their size).
 *     tree   a free block (a free subtree, as the walk reports it) of usable size >= n serves:
 *            exact, a sequential search never fails while a fitting chunk exists
 *            (rtalloc/waitfree.h). The walk also reports free nodes of usable size 0, which
 *            serve nothing, hence usable size, not footprint. memalign beyond the natural
 *            alignment: not checked.
 *     pages  B = the next power of two >= max(n, min_block, alignment). B < page: a free block
 *            of exactly B (on a page cut for that class) serves, and for FMA a free page too:
 *            exact for FMA; for BSD 4.4 (never_unites) conservative, since its walk shows a free
 *            page and a freed whole-page block alike and only the latter cannot be cut. B = page:
 *            a free block of a page serves (both). Several pages: not checked (the walk reports
 *            each free page alone, not the runs).
 *  Every NULL so checked is counted; the summary line prints how many. */
typedef struct fit {
    size_t need;    /* a free footprint >= need serves */
    size_t exact;   /* pages: a free footprint == exact serves too (0: none) */
    size_t page;    /* pages: only runs of whole pages count for `need` */
    size_t payload; /* tree: a free block of usable size >= payload serves (0: no such rule) */
    bool found;
    size_t free_blocks;
} fit_t;

/* strstr(s, w) != NULL, which the bare-metal ports' libc lacks (ports/common/port_libc.h) */
static bool contains(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s != '\0'; s++) {
        size_t i = 0;
        while (i < n && s[i] == w[i]) {
            i++;
        }
        if (i == n) {
            return true;
        }
    }
    return false;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1u) / a * a; }

static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n && p <= SIZE_MAX / 2u) {
        p *= 2u;
    }
    return p;
}

static size_t max3(size_t a, size_t b, size_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

static bool fit_visit(void *context, const rt_block_info_t *info)
{
    fit_t *f = context;
    if (info->used) {
        return true;
    }
    f->free_blocks++;
    size_t fp = info->footprint;
    bool run_ok = f->page == 0u || (fp >= f->page && fp % f->page == 0u);
    if ((f->need != 0u && fp >= f->need && run_ok) || (f->exact != 0u && fp == f->exact) ||
        (f->payload != 0u && info->size >= f->payload)) {
        f->found = true;
        return false;
    }
    return true;
}

/* Fills *f with what would serve a request of n bytes at `alignment` (1: the natural one).
 * Returns false when the family has no rule (nothing is checked). */
static bool fit_rule(const rt_allocator_t *d, size_t n, size_t alignment, fit_t *f)
{
    memset(f, 0, sizeof *f);
    if (n > SIZE_MAX / 4u || alignment > SIZE_MAX / 4u) {
        return false;
    }
    switch (d->family) {
    case RT_FAMILY_HEAP:
    case RT_FAMILY_THREAD_HEAPS: {
        size_t b = round_up(n + d->block_overhead, d->alignment);
        b = b > d->min_block ? b : d->min_block;
        if (alignment > d->alignment) {
            b += alignment + d->min_block;
        }
        bool searches_all = d->malloc_bound != NULL && contains(d->malloc_bound, "free blocks");
        f->need = searches_all ? b : 2u * b;
        return true;
    }
    case RT_FAMILY_BUDDY: f->need = pow2_at_least(max3(n + d->block_overhead, d->min_block, alignment)); return true;
    case RT_FAMILY_TREE:
    case RT_FAMILY_TREE_CACHED:
        if (alignment > d->alignment) {
            return false;
        }
        f->payload = n;
        return true;
    case RT_FAMILY_PAGES: {
        if (d->page_size == 0u) {
            return false;
        }
        size_t b = pow2_at_least(max3(n, d->min_block, alignment));
        f->page = d->page_size;
        if (b < d->page_size) {
            f->exact = b;                                  /* a free block of its class */
            f->need = d->never_unites ? 0u : d->page_size; /* FMA: or any free page */
        } else if (b == d->page_size) {
            f->need = d->page_size; /* a free page (BSD: or a free whole-page block) */
        } else {
            return false; /* runs: the walk reports each free page alone */
        }
        return true;
    }
    default: return false;
    }
}

static unsigned long nulls_checked; /* over all runs of the allocator being tested */

/* A request of n bytes (alignment 1: the natural one) returned NULL: justified? */
static bool null_justified(run_t *r, const char *what, size_t n, size_t alignment)
{
    const rt_allocator_t *d = r->d;
    if (n > r->max_request) {
        return true; /* can never fit */
    }
    if (d->stats != NULL && alignment <= d->alignment && d->family != RT_FAMILY_PAGES) {
        rt_stats_t s;
        d->stats(r->h, &s);
        RCHECK(r, n > s.largest_free, "%s(%zu) returned NULL, stats.largest_free %zu", what, n, s.largest_free);
    }
    fit_t f;
    if (d->walk == NULL || !fit_rule(d, n, alignment, &f)) {
        return true;
    }
    d->walk(r->h, fit_visit, &f);
    r->nulls_checked++;
    nulls_checked++;
    RCHECK(r, !f.found,
           "%s(%zu, alignment %zu) returned NULL with a free block that serves it (footprint >= %zu, or == %zu)", what,
           n, alignment, f.need, f.exact);
    return true;
}

/* A request returned NULL: it must be one that cannot fit now (or ever). */
static bool count_failure(run_t *r, const char *what, size_t n, size_t alignment)
{
    r->failures++;
    if (n > r->max_request) {
        r->allowed_reports++; /* TOO_LARGE */
    }
    return null_justified(r, what, n, alignment);
}

static bool op_malloc(run_t *r)
{
    size_t n = draw_size(r);
    void *p = r->d->malloc(r->h, n);
    if (p == NULL) {
        return count_failure(r, "malloc", n, 1);
    }
    return add_block(r, p, n, 1, false);
}

static bool op_calloc(run_t *r)
{
    size_t n = draw_size(r);
    size_t count = tl_range(&r->rng, 1, 4);
    size_t size = (n + count - 1u) / count;
    void *p = r->d->calloc(r->h, count, size);
    if (p == NULL) {
        return count_failure(r, "calloc", count * size, 1);
    }
    return add_block(r, p, count * size, 1, true);
}

static bool op_memalign(run_t *r)
{
    size_t alignment = (size_t)1 << tl_range(&r->rng, 0, tl_chance(&r->rng, 10) ? 12 : 8);
    size_t n = draw_size(r);
    void *p = r->d->memalign(r->h, alignment, n);
    if (p == NULL) {
        /* memalign may refuse what malloc would take (the search adds the alignment) */
        if (n <= r->max_request && alignment + 256u > r->max_request - n) {
            r->allowed_reports++; /* count_failure allows n > max_request */
        }
        return count_failure(r, "memalign", n, alignment);
    }
    return add_block(r, p, n, alignment, false);
}

static bool op_free(run_t *r)
{
    size_t i = tl_range(&r->rng, 0, r->nlive - 1u);
    if (!verify_block(r, &r->live[i])) {
        return false;
    }
    r->d->free(r->h, r->live[i].p);
    r->frees++;
    r->live[i] = r->live[--r->nlive];
    return true;
}

static bool op_realloc(run_t *r)
{
    size_t i = tl_range(&r->rng, 0, r->nlive - 1u);
    mblock_t *b = &r->live[i];
    if (!verify_block(r, b)) {
        return false;
    }
    size_t n = tl_chance(&r->rng, 5) ? 0u : tl_chance(&r->rng, 50) ? tl_range(&r->rng, 1, b->n + 64u) : draw_size(r);
    unsigned char *q = r->d->realloc(r->h, b->p, n);
    if (n == 0u) {
        RCHECK(r, q == NULL, "realloc(p, 0) returned %p", (void *)q);
        r->frees++;
        r->live[i] = r->live[--r->nlive];
        return true;
    }
    if (q == NULL) {
        return count_failure(r, "realloc", n, 1) && verify_block(r, b); /* untouched */
    }
    size_t keep = n < b->n ? n : b->n;
    size_t bad = tl_verify(q, keep, b->id);
    RCHECK(r, bad == keep, "realloc %p (%zu) -> %p (%zu) lost the contents at %zu", (void *)b->p, b->n, (void *)q, n,
           bad);
    if (q != b->p) {
        r->mallocs++;
        r->frees++;
    }
    b->p = q;
    b->n = n;
    b->usable = usable(r, q, n);
    b->id = r->next_id++;
    if (!check_placement(r, b, 1)) {
        return false;
    }
    tl_fill(q, n, b->id);
    return true;
}

static bool check_all(run_t *r)
{
    if (r->d->check != NULL) {
        RCHECK(r, r->d->check(r->h), "integrity check failed");
    }
    if (r->d->stats != NULL) {
        rt_stats_t s;
        r->d->stats(r->h, &s);
        RCHECK(r, s.used_blocks == r->nlive, "stats.used_blocks %zu, model %zu", s.used_blocks, r->nlive);
        RCHECK(r, s.mallocs == r->mallocs && s.frees == r->frees,
               "stats mallocs %" PRIu64 " frees %" PRIu64 ", model %" PRIu64 " %" PRIu64, s.mallocs, s.frees,
               r->mallocs, r->frees);
        RCHECK(r, s.mallocs - s.frees == s.used_blocks, "mallocs - frees = %" PRIu64 ", used_blocks %zu",
               s.mallocs - s.frees, s.used_blocks);
        RCHECK(r, s.failures == r->failures, "stats.failures %" PRIu64 ", model %" PRIu64, s.failures, r->failures);
        RCHECK(r, s.free_bytes == s.capacity - s.used_bytes && s.peak_used >= s.used_bytes,
               "free_bytes %zu capacity %zu used %zu peak %zu", s.free_bytes, s.capacity, s.used_bytes, s.peak_used);
        RCHECK(r, s.errors == r->rec.count, "stats.errors %" PRIu64 ", handler calls %lu", s.errors, r->rec.count);
    }
    RCHECK(r, r->rec.count <= r->allowed_reports, "unexpected error report (%s from %s)", tl_kind_name(r->rec.last),
           r->rec.operation != NULL ? r->rec.operation : "?");
    if (r->rec.count > 0u) {
        RCHECK(r, r->rec.last == RT_ERR_TOO_LARGE, "unexpected error report (%s from %s)", tl_kind_name(r->rec.last),
               r->rec.operation != NULL ? r->rec.operation : "?");
    }
    /* reports are allowed, not required: forget the allowance once used or not */
    r->allowed_reports = r->rec.count;
    return true;
}

/* One random operation, drawn with the run's leaning (live-set cap, free bias). */
static bool one_op(run_t *r, size_t cap, unsigned free_bias)
{
    const rt_allocator_t *d = r->d;
    unsigned k = (unsigned)(tl_next(&r->rng) % 100u);
    if (r->nlive > 0u && (r->nlive >= cap || k < free_bias)) {
        return op_free(r);
    }
    if (r->nlive > 0u && k < free_bias + 15u) {
        return d->realloc != NULL ? op_realloc(r) : op_malloc(r);
    }
    if (k < free_bias + 25u) {
        return d->calloc != NULL ? op_calloc(r) : op_malloc(r);
    }
    if (k < free_bias + 35u) {
        return d->memalign != NULL ? op_memalign(r) : op_malloc(r);
    }
    return op_malloc(r);
}

/* ops random operations, each checked, every block's pattern every 64; then free everything and
 * the allocator must be empty. */
static bool run_ops(run_t *r, unsigned ops)
{
    /* each run leans a little differently: a live-set cap and a free bias from the seed */
    size_t cap = 8u + (size_t)(r->seed * 7u % (MAX_LIVE - 8u));
    unsigned free_bias = 30u + (unsigned)(r->seed % 25u);
    for (r->op = 0; r->op < ops; r->op++) {
        if (!one_op(r, cap, free_bias) || !check_all(r)) {
            return false;
        }
        for (size_t i = 0; r->op % 64u == 63u && i < r->nlive; i++) {
            if (!verify_block(r, &r->live[i])) {
                return false;
            }
        }
    }
    while (r->nlive > 0u) {
        if (!op_free(r) || !check_all(r)) {
            return false;
        }
    }
    if (r->d->stats != NULL) {
        rt_stats_t s;
        r->d->stats(r->h, &s);
        return TL_CHECK(s.used_bytes == 0u && s.used_blocks == 0u, "%s seed %" PRIu64 ": all freed, used_bytes %zu",
                        r->d->name, r->seed, s.used_bytes);
    }
    return true;
}

/* One seeded run. Returns false on the first failure (already reported). */
static bool run_one(const rt_allocator_t *d, uint64_t seed, unsigned ops)
{
    static run_t r;
    memset(&r, 0, sizeof r);
    r.d = d;
    r.seed = seed;
    r.rng = tl_rng_seed(seed ^ 0x6D6F64656Cull);
    r.next_id = 1;
    if (!tl_buffer_new(&r.buf, HEAP_SIZE, (size_t)(seed % 16u))) {
        return TL_CHECK(false, "out of memory");
    }
    r.h = d->create(r.buf.mem, r.buf.size);
    bool ok = TL_CHECK(r.h != NULL, "%s: create failed (seed %" PRIu64 ")", d->name, seed);
    if (ok) {
        if (d->set_handler != NULL) {
            d->set_handler(r.h, tl_record, &r.rec);
        }
        r.max_request = d->max_request != NULL ? d->max_request(r.h) : SIZE_MAX;
        ok = run_ops(&r, ops);
    }
    tl_buffer_free(&r.buf);
    return ok;
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 && strcmp(argv[1], "all") != 0 ? argv[1] : NULL;
    uint64_t first = 1, ops = 2000, seeds = TL_MODEL_SEEDS;
    bool one_seed = false;
    if (argc > 2) {
        if (!tl_parse_u64(argv[2], &first)) {
            fprintf(stderr, "usage: model [allocator|all] [seed] [ops] [seeds]\n");
            return 2;
        }
        one_seed = true;
        seeds = 1;
    }
    if ((argc > 3 && !tl_parse_u64(argv[3], &ops)) || (argc > 4 && !tl_parse_u64(argv[4], &seeds))) {
        fprintf(stderr, "usage: model [allocator|all] [seed] [ops] [seeds]\n");
        return 2;
    }
    if (argc > 4) {
        one_seed = false;
    }
    size_t n = 0;
    const rt_allocator_t *const *all = rt_registry(&n);
    (void)tl_check_registry(n);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        const rt_allocator_t *d = all[i];
        if (only != NULL && strcmp(only, d->name) != 0) {
            continue;
        }
        found = true;
        unsigned long failed = tl_state.failed;
        uint64_t ran = 0;
        nulls_checked = 0;
        for (uint64_t s = first; s < first + seeds; s++) {
            ran++;
            if (!run_one(d, s, (unsigned)ops)) {
                break; /* the first failing seed of an allocator is enough */
            }
        }
        printf("%-9s %" PRIu64 " seed%s x %" PRIu64 " ops%s, %lu NULLs shown justified by a walk: %s\n", d->name, ran,
               ran == 1u ? "" : "s", ops, one_seed ? " (replay)" : "", nulls_checked,
               tl_state.failed > failed ? "FAILED" : "ok");
    }
    TL_CHECK(found, "no allocator named %s", only != NULL ? only : "?");
    return tl_summary("model");
}
