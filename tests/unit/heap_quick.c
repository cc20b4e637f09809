/* SPDX-License-Identifier: MIT */
/*
 * heap_quick.c -- the quick lists of rt_tlsfq (rtalloc/heap.h, "Quick lists"; src/heap/facade.h),
 * white-box: the test reads the heap's rt_quick_t and decodes block headers through the core's
 * private headers (tests/CMakeLists.txt adds src/ for this test), and attacks the cached blocks
 * the way a buggy program would.
 *
 *   hit        malloc, free, malloc of one size: the same block, one probe, exact counters
 *   classes    every request of 1..RT_HEAP_QUICK_MAX_REQUEST bytes lands on the list of its exact
 *              block size and comes back only for that block size; a larger block merges at once
 *   limit      the default (one block per 4 KiB of capacity, at most RT_HEAP_QUICK_BLOCKS), the
 *              limit enforced, rt_heap_set_quick_limit's return, clamp, 0, lowering; other indexes
 *   flush      a malloc / memalign / calloc / realloc the index cannot serve gives the cached blocks
 *              back and succeeds; rt_heap_flush; stats and walk flush first
 *   bad input  double free, realloc and usable_size of a cached block; use-after-free writes over a
 *              cached block's link (raw values, and links re-aimed at blocks by one who knows the
 *              key); one byte over a cached block's header (met by malloc, flush and check); an
 *              overflow of a live block into a cached successor's header, then its free
 *   locks      the quick paths run under the lock hooks, never nested; a report met while the
 *              lock is held is delivered after the unlock (test_locks)
 *   threads    two threads on one heap behind a pthread mutex (TSan's view of the quick paths)
 *   model      a randomised run against a shadow model of the live blocks: unique, aligned,
 *              non-overlapping blocks whose contents survive; hits predicted from the lists
 *
 * Every block handed out is tracked: none is ever handed out while live. RT_DEBUG 2 (a free
 * proves its block by a walk of the pool, which stops at a damaged header): the test repairs a
 * header before it frees the blocks after it. Usage:
 *   heap_quick [model ops [seed]]
 */
#include "testlib.h"

#include "rtalloc/heap.h"
/* White-box: struct rt_heap, rt_quick_t, HEAP_QUICK_MAX_BLOCK and the header verbs (block.h). */
#include "heap/quick.h"

#include <limits.h>

#if !defined(TL_TARGET) && (defined(__unix__) || defined(__APPLE__))
#include <pthread.h>
#define HQ_THREADS 1
#else
#define HQ_THREADS 0
#endif

#define HQ_W BLK_W
#define HQ_A BLK_A
#define HQ_QMAX HEAP_QUICK_MAX_BLOCK
#define HQ_NCLASS HEAP_QUICK_CLASSES
/* RT_DEBUG >= 2: every successful call ends with rt_heap_check (its own lock, its own "check"
 * report when the test left damage behind on purpose). */
#define HQ_DEBUG_CHECKS (RT_DEBUG >= 2 ? 1ul : 0ul)

/* --- reports and lock hooks ------------------------------------------------------------------ */

typedef struct hq_lock {
    unsigned long locks, unlocks;
    unsigned depth, max_depth;
    bool bad_token;
} hq_lock_t;

static uintptr_t hq_lock_fn(void *context)
{
    hq_lock_t *l = context;
    l->locks++;
    l->depth++;
    if (l->depth > l->max_depth) {
        l->max_depth = l->depth;
    }
    return (uintptr_t)0x5A00u + l->depth;
}

static void hq_unlock_fn(void *context, uintptr_t token)
{
    hq_lock_t *l = context;
    if (l->depth == 0u || token != (uintptr_t)0x5A00u + l->depth) {
        l->bad_token = true;
    }
    l->depth--;
    l->unlocks++;
}

typedef struct hq_report {
    rt_error_kind_t kind;
    const char *op;
    const void *ptr;
} hq_report_t;

typedef struct hq_rec {
    unsigned n;              /* reports, rt_heap_check's ("check") left out */
    unsigned checks;         /* rt_heap_check's: the test's own, or RT_DEBUG 2's after damage */
    hq_report_t r[8];        /* the first n */
    const hq_lock_t *lock;   /* the heap's counting lock hooks, if installed */
    unsigned locked_reports; /* reports delivered while the heap's lock was held */
} hq_rec_t;

static void hq_record(void *context, const rt_error_t *e)
{
    hq_rec_t *r = context;
    if (r->lock != NULL && r->lock->depth != 0u) {
        r->locked_reports++;
    }
    if (e->operation != NULL && strcmp(e->operation, "check") == 0) {
        r->checks++;
        return;
    }
    if (r->n < 8u) {
        r->r[r->n].kind = e->kind;
        r->r[r->n].op = e->operation;
        r->r[r->n].ptr = e->pointer;
    }
    r->n++;
}

typedef struct hq {
    tl_buffer_t buf;
    rt_heap_t *h;
    hq_rec_t rec;
    hq_lock_t lock;
} hq_t;

static bool hq_open(hq_t *f, size_t size, rt_index_t index)
{
    memset(f, 0, sizeof *f);
    if (!TL_CHECK(tl_buffer_new(&f->buf, size, 0), "out of memory")) {
        return false;
    }
    f->h = index == RT_INDEX_TLSFQ ? rt_tlsfq_create(f->buf.mem, size) : rt_heap_create_with(f->buf.mem, size, index);
    if (!TL_CHECK(f->h != NULL, "create %s over %zu bytes", rt_index_name(index), size)) {
        tl_buffer_free(&f->buf);
        return false;
    }
    rt_heap_set_handler(f->h, hq_record, &f->rec);
    /* the lists' mechanics on a few live blocks: only the limit in blocks (test_share checks the
     * bound in bytes) */
    (void)rt_heap_set_quick_share(f->h, 0);
    return true;
}

static void hq_use_lock(hq_t *f)
{
    rt_heap_set_lock(f->h, hq_lock_fn, hq_unlock_fn, &f->lock);
    f->rec.lock = &f->lock;
}

static void hq_close(hq_t *f)
{
    tl_buffer_free(&f->buf);
    f->h = NULL;
}

static void hq_rec_reset(hq_t *f)
{
    const hq_lock_t *lock = f->rec.lock;
    memset(&f->rec, 0, sizeof f->rec);
    f->rec.lock = lock;
}

/* Exactly one report since the last reset (rt_heap_check's left out): `kind` from `op`. */
static bool hq_one(const hq_t *f, rt_error_kind_t kind, const char *op)
{
    return f->rec.n == 1u && f->rec.r[0].kind == kind && f->rec.r[0].op != NULL && strcmp(f->rec.r[0].op, op) == 0;
}

/* The reports seen, for a failure message. */
static const char *hq_seen(const hq_t *f)
{
    static char text[256];
    int at = snprintf(text, sizeof text, "%u report(s)", f->rec.n);
    for (unsigned i = 0; i < f->rec.n && i < 4u && at > 0 && (size_t)at < sizeof text; i++) {
        at += snprintf(text + at, sizeof text - (size_t)at, "%s %s by %s", i == 0u ? ":" : ",",
                       tl_kind_name(f->rec.r[i].kind), f->rec.r[i].op != NULL ? f->rec.r[i].op : "?");
    }
    return text;
}

/* --- the heap, white-box --------------------------------------------------------------------- */

/* The block size of a request (rtalloc/heap.h: the request plus a header word, rounded up to
 * RT_HEAP_ALIGN, at least RT_HEAP_MIN_BLOCK). */
static size_t hq_block(size_t request)
{
    size_t n = (request + HQ_W + HQ_A - 1u) & ~(HQ_A - 1u);
    return n < BLK_MIN ? BLK_MIN : n;
}
/* The smallest and the largest request of a block size. */
static size_t hq_req_lo(size_t block) { return block == BLK_MIN ? 1u : block - HQ_A - HQ_W + 1u; }
static size_t hq_req_hi(size_t block) { return block - HQ_W; }
static size_t hq_class(size_t block) { return (block - BLK_MIN) / HQ_A; }

static rt_blk *hq_hdr(void *p) { return blk_from_payload(p); }
static unsigned hq_count(const rt_heap_t *h) { return heap_quick_count(h->quick); }
static rt_blk *hq_head(const rt_heap_t *h, size_t block) { return h->quick->head[hq_class(block)]; }

/* The decoded data (size | flags) of p's header, and whether it is a header at all. */
static bool hq_head_ok(const rt_heap_t *h, void *p) { return blk_head_ok(h->key, hq_hdr(p), hq_hdr(p)->head); }
static size_t hq_data(const rt_heap_t *h, void *p)
{
    (void)h;
    return blk_data(hq_hdr(p)->head);
}
/* p's header says: a block waiting on a quick list (used, MARK). */
static bool hq_cached(const rt_heap_t *h, void *p)
{
    return hq_head_ok(h, p) && (hq_data(h, p) & (BLK_FREE | BLK_MARK)) == BLK_MARK;
}
/* p's header says: free (a block of the index). */
static bool hq_free_blk(const rt_heap_t *h, void *p) { return hq_head_ok(h, p) && (hq_data(h, p) & BLK_FREE) != 0u; }

static uintptr_t hq_word(const void *at)
{
    uintptr_t w;
    memcpy(&w, at, sizeof w);
    return w;
}
static void hq_set_word(void *at, uintptr_t w) { memcpy(at, &w, sizeof w); }
/* A cached block's link as the library decodes it, and the raw word that makes it point at t. */
static rt_blk *hq_link(const rt_heap_t *h, rt_blk *b) { return (rt_blk *)(hq_word(blk_payload(b)) ^ h->key); }
static uintptr_t hq_encode(const rt_heap_t *h, const void *t) { return (uintptr_t)t ^ h->key; }

/* p is on the list of its block size (a walk bounded by the count). */
static bool hq_listed(const rt_heap_t *h, void *p)
{
    size_t block = blk_head_size(hq_data(h, p));
    if (block < BLK_MIN || block > HQ_QMAX) {
        return false;
    }
    unsigned left = hq_count(h);
    for (rt_blk *b = hq_head(h, block); b != NULL && left != 0u; b = hq_link(h, b), left--) {
        if (b == hq_hdr(p)) {
            return true;
        }
    }
    return false;
}

/* No list holds a block. */
static bool hq_lists_empty(const rt_heap_t *h)
{
    for (size_t c = 0; c < HQ_NCLASS; c++) {
        if (h->quick->head[c] != NULL) {
            return false;
        }
    }
    return hq_count(h) == 0u;
}

/* The heap's own counters (no flush): mallocs, frees, used bytes. */
static bool hq_counts(const rt_heap_t *h, uint64_t mallocs, uint64_t frees, size_t used)
{
    return h->mallocs == mallocs && h->frees == frees && h->used == used;
}

/* rt_heap_stats (which flushes the lists first): the counters and the block counts. */
static bool hq_stats(rt_heap_t *h, uint64_t mallocs, uint64_t frees, size_t used_bytes, size_t used_blocks,
                     size_t free_blocks)
{
    rt_stats_t s;
    rt_heap_stats(h, &s);
    bool ok = s.mallocs == mallocs && s.frees == frees && s.used_bytes == used_bytes && s.used_blocks == used_blocks &&
              (free_blocks == SIZE_MAX || s.free_blocks == free_blocks) && s.free_bytes == s.capacity - s.used_bytes;
    if (!ok) {
        printf("  stats: mallocs %" PRIu64 " (want %" PRIu64 "), frees %" PRIu64 " (%" PRIu64 "), used %zu (%zu), "
               "used blocks %zu (%zu), free blocks %zu (%zu)\n",
               s.mallocs, mallocs, s.frees, frees, s.used_bytes, used_bytes, s.used_blocks, used_blocks, s.free_blocks,
               free_blocks);
    }
    return ok && hq_lists_empty(h);
}

/* The bytes of pool 0 (guards included), the lists and the counters: a refused call changes none. */
typedef struct hq_snap {
    unsigned char *bytes;
    size_t n;
    rt_quick_t q;
    size_t used;
    uint64_t mallocs, frees;
} hq_snap_t;

static void hq_snap_take(hq_snap_t *s, const rt_heap_t *h)
{
    const unsigned char *lo = (const unsigned char *)h->pools[0].first - RT_HEAP_GUARD;
    const unsigned char *hi = (const unsigned char *)h->pools[0].end + HQ_W + RT_HEAP_GUARD;
    s->n = (size_t)(hi - lo);
    s->bytes = malloc(s->n);
    if (s->bytes != NULL) {
        memcpy(s->bytes, lo, s->n);
    }
    s->q = *h->quick;
    s->used = h->used;
    s->mallocs = h->mallocs;
    s->frees = h->frees;
}

static bool hq_snap_same(hq_snap_t *s, const rt_heap_t *h)
{
    const unsigned char *lo = (const unsigned char *)h->pools[0].first - RT_HEAP_GUARD;
    bool same = s->bytes != NULL && memcmp(s->bytes, lo, s->n) == 0 && memcmp(&s->q, h->quick, sizeof s->q) == 0 &&
                s->used == h->used && s->mallocs == h->mallocs && s->frees == h->frees;
    free(s->bytes);
    s->bytes = NULL;
    return same;
}

/* rt_heap_walk's counts. */
typedef struct hq_walk {
    size_t blocks, used, bytes;
} hq_walk_t;

static bool hq_walk_count(void *context, const rt_block_info_t *b)
{
    hq_walk_t *w = context;
    w->blocks++;
    if (b->used) {
        w->used++;
        w->bytes += b->footprint;
    }
    return true;
}

/* --- the blocks handed out: never one twice, never overlapping ------------------------------- */

#define HQ_TRACK 1200u
typedef struct hq_track {
    unsigned char *p[HQ_TRACK];
    size_t foot[HQ_TRACK]; /* header included */
    size_t n;
} hq_track_t;

static hq_track_t hq_tr;

/* Adds p (a block of `foot` bytes, header included); false if it overlaps a tracked one. */
static bool hq_track_add(hq_track_t *t, unsigned char *p, size_t foot)
{
    uintptr_t lo = (uintptr_t)p - HQ_W, hi = lo + foot;
    for (size_t i = 0; i < t->n; i++) {
        uintptr_t l2 = (uintptr_t)t->p[i] - HQ_W, h2 = l2 + t->foot[i];
        if (lo < h2 && l2 < hi) {
            printf("  block %p (%zu bytes) overlaps live %p (%zu bytes)\n", (void *)p, foot, (void *)t->p[i],
                   t->foot[i]);
            return false;
        }
    }
    if (t->n >= HQ_TRACK) {
        return false;
    }
    t->p[t->n] = p;
    t->foot[t->n] = foot;
    t->n++;
    return true;
}

/* Frees every tracked block; true iff none was refused. */
static bool hq_track_free_all(hq_t *f, hq_track_t *t)
{
    unsigned before = f->rec.n;
    for (size_t i = 0; i < t->n; i++) {
        rt_heap_free(f->h, t->p[i]);
    }
    t->n = 0;
    return f->rec.n == before;
}

/* A block handed out by a call that may have met damage: NULL, or a block that is no live one. */
static bool hq_fresh(hq_t *f, unsigned char *p, size_t request)
{
    if (p == NULL) {
        return true;
    }
    if (((uintptr_t)p & (HQ_A - 1u)) != 0u) {
        return false;
    }
    /* the block's own size where its header says more (the rest of a pool too small to split) */
    size_t foot = hq_block(request);
    if (hq_head_ok(f->h, p) && blk_head_size(hq_data(f->h, p)) > foot &&
        blk_head_size(hq_data(f->h, p)) <= f->h->capacity) {
        foot = blk_head_size(hq_data(f->h, p));
    }
    return hq_track_add(&hq_tr, p, foot);
}

/* --- 1. the hit path ------------------------------------------------------------------------- */

static void test_hit(void)
{
    hq_t f;
    if (!hq_open(&f, 64u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    rt_heap_t *h = f.h;
    TL_CHECK(rt_heap_index(h) == RT_INDEX_TLSFQ && strcmp(rt_heap_index_name(h), "tlsfq") == 0, "tlsfq: index %d %s",
             (int)rt_heap_index(h), rt_heap_index_name(h));
    TL_CHECK(h->quick != NULL && h->quick->limit != 0u && h->quick->room == h->quick->limit,
             "hit: a fresh 64 KiB heap has empty quick lists with a limit");
    const size_t B = hq_block(100);
    unsigned char *p = rt_tlsfq_malloc(h, 100);
    if (!TL_CHECK(p != NULL, "hit: malloc(100)")) {
        hq_close(&f);
        return;
    }
    TL_CHECK(((uintptr_t)p & (HQ_A - 1u)) == 0u && rt_heap_usable_size(h, p) == B - HQ_W, "hit: p aligned, %zu usable",
             rt_heap_usable_size(h, p));
    TL_CHECK(hq_counts(h, 1, 0, B) && hq_count(h) == 0u && rt_heap_check(h), "hit: after malloc");

    rt_tlsfq_free(h, p);
    TL_CHECK(hq_cached(h, p) && hq_head(h, B) == hq_hdr(p) && hq_count(h) == 1u, "hit: free(p) caches p");
    TL_CHECK(hq_counts(h, 1, 1, 0) && rt_heap_check(h), "hit: counters after the cached free");

    unsigned char *q = rt_tlsfq_malloc(h, 100);
    TL_CHECK(q == p && rt_heap_last_probes(h) == 1u, "hit: malloc(100) again: %p (p %p), %u probes", (void *)q,
             (void *)p, rt_heap_last_probes(h));
    TL_CHECK(!hq_cached(h, p) && hq_head(h, B) == NULL && hq_count(h) == 0u, "hit: p taken off its list");
    TL_CHECK(hq_counts(h, 2, 1, B) && rt_heap_check(h), "hit: counters after the hit");
    TL_CHECK(rt_heap_usable_size(h, p) == B - HQ_W, "hit: usable size after the hit");

    /* the largest and the smallest request of that block size hit too; so do calloc and memalign
     * up to RT_HEAP_ALIGN (the generic entry points) */
    rt_heap_free(h, p);
    q = rt_heap_malloc(h, hq_req_hi(B));
    TL_CHECK(q == p && rt_heap_last_probes(h) == 1u, "hit: malloc(%zu) (largest request of the block)", hq_req_hi(B));
    rt_heap_free(h, q);
    q = rt_heap_malloc(h, hq_req_lo(B));
    TL_CHECK(q == p && rt_heap_last_probes(h) == 1u, "hit: malloc(%zu) (smallest request of the block)", hq_req_lo(B));
    memset(p, 0xAB, B - HQ_W);
    rt_tlsfq_free(h, p);
    q = rt_tlsfq_calloc(h, 4, 25);
    bool zero = q != NULL;
    for (size_t i = 0; zero && i < 100u; i++) {
        zero = q[i] == 0u;
    }
    TL_CHECK(q == p && zero && rt_heap_last_probes(h) == 1u, "hit: calloc(4, 25) takes p, zeroed (link word included)");
    rt_tlsfq_free(h, q);
    q = rt_tlsfq_memalign(h, HQ_A, 100);
    TL_CHECK(q == p && rt_heap_last_probes(h) == 1u, "hit: memalign(A, 100) takes p");
    TL_CHECK(hq_counts(h, 6, 5, B) && rt_heap_check(h), "hit: counters after six mallocs");

    /* LIFO: three blocks of one size come back last freed first */
    unsigned char *a = rt_heap_malloc(h, 100), *b = rt_heap_malloc(h, 100), *c = rt_heap_malloc(h, 100);
    if (TL_CHECK(a != NULL && b != NULL && c != NULL, "hit: three more")) {
        rt_heap_free(h, a);
        rt_heap_free(h, b);
        rt_heap_free(h, c);
        TL_CHECK(hq_count(h) == 3u && hq_head(h, B) == hq_hdr(c) && hq_link(h, hq_hdr(c)) == hq_hdr(b) &&
                     hq_link(h, hq_hdr(b)) == hq_hdr(a) && hq_link(h, hq_hdr(a)) == NULL,
                 "hit: the list is c -> b -> a -> NULL");
        TL_CHECK(hq_counts(h, 9, 8, B) && rt_heap_check(h), "hit: counters with three cached");
        unsigned char *x = rt_heap_malloc(h, 100), *y = rt_heap_malloc(h, 100), *z = rt_heap_malloc(h, 100);
        TL_CHECK(x == c && y == b && z == a, "hit: LIFO order");
        TL_CHECK(hq_counts(h, 12, 8, 4u * B) && rt_heap_check(h), "hit: counters after three hits");
        rt_heap_free(h, x);
        rt_heap_free(h, y);
        rt_heap_free(h, z);
    }
    /* stats: exact counters; it gives the cached blocks back, so the heap is one free block again */
    TL_CHECK(hq_stats(h, 12, 11, B, 1, SIZE_MAX), "hit: stats with p live");
    rt_heap_free(h, p);
    TL_CHECK(hq_count(h) == 1u, "hit: p cached again");
    TL_CHECK(hq_stats(h, 12, 12, 0, 0, 1), "hit: stats of the empty heap: one free block");
    TL_CHECK(rt_heap_check(h) && f.rec.n == 0u && f.rec.checks == 0u, "hit: no reports (%s)", hq_seen(&f));
    hq_close(&f);
}

/* --- 2. classes ------------------------------------------------------------------------------ */

static void test_classes(void)
{
    hq_t f;
    if (!hq_open(&f, 64u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    rt_heap_t *h = f.h;
    TL_CHECK(HQ_QMAX == hq_block(RT_HEAP_QUICK_MAX_REQUEST), "classes: HEAP_QUICK_MAX_BLOCK %zu is the block of %u",
             (size_t)HQ_QMAX, RT_HEAP_QUICK_MAX_REQUEST);
    TL_CHECK(HQ_NCLASS == (HQ_QMAX - BLK_MIN) / HQ_A + 1u, "classes: %zu classes", (size_t)HQ_NCLASS);
    TL_CHECK(rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT) == RT_HEAP_QUICK_MAX_LIMIT, "classes: limit");
    size_t classes = 0, last = 0, failures = 0;
    /* every request up to a few alignment steps past the largest cached block */
    for (size_t s = 1; s <= RT_HEAP_QUICK_MAX_REQUEST + 4u * HQ_A && failures < 8u; s++) {
        const size_t B = hq_block(s);
        const bool quick = B <= HQ_QMAX;
        if (quick && B != last) {
            classes++;
            last = B;
        }
        unsigned char *p = rt_heap_malloc(h, s);
        if (!TL_CHECK(p != NULL && rt_heap_usable_size(h, p) == B - HQ_W, "classes: malloc(%zu)", s)) {
            failures++;
            continue;
        }
        rt_heap_free(h, p);
        bool ok = true;
        if (quick) {
            ok &= TL_CHECK(hq_cached(h, p) && hq_count(h) == 1u && hq_head(h, B) == hq_hdr(p),
                           "classes: request %zu: block %zu cached on list %zu", s, B, hq_class(B));
            for (size_t c = 0; c < HQ_NCLASS; c++) {
                if (c != hq_class(B) && h->quick->head[c] != NULL) {
                    ok &= TL_CHECK(false, "classes: request %zu: list %zu holds a block", s, c);
                }
            }
            /* the block sizes next to it do not take it */
            unsigned char *up = rt_heap_malloc(h, hq_req_hi(B + HQ_A));
            unsigned char *down = B > BLK_MIN ? rt_heap_malloc(h, hq_req_hi(B - HQ_A)) : NULL;
            ok &= TL_CHECK(up != NULL && up != p && (B == BLK_MIN || (down != NULL && down != p)) && hq_cached(h, p),
                           "classes: request %zu: the neighbouring block sizes took block %zu", s, B);
            /* the other end of its own block size takes it */
            size_t other = s == hq_req_lo(B) ? hq_req_hi(B) : hq_req_lo(B);
            unsigned char *again = rt_heap_malloc(h, other);
            ok &= TL_CHECK(again == p && rt_heap_last_probes(h) == 1u && hq_count(h) == 0u,
                           "classes: request %zu: malloc(%zu) of the same block size took %p, not p %p", s, other,
                           (void *)again, (void *)p);
            rt_heap_free(h, again);
            rt_heap_free(h, up);
            rt_heap_free(h, down);
            rt_heap_flush(h);
            ok &= TL_CHECK(hq_lists_empty(h), "classes: flush empties the lists");
        } else {
            /* not cached: given to the index at once, merged with the free rest of the pool */
            ok &= TL_CHECK(!hq_cached(h, p) && hq_count(h) == 0u && hq_free_blk(h, p) &&
                               blk_head_size(hq_data(h, p)) == h->capacity,
                           "classes: request %zu (block %zu > %zu) was not merged at once", s, B, (size_t)HQ_QMAX);
        }
        ok &= TL_CHECK(rt_heap_check(h), "classes: check after request %zu", s);
        ok &= TL_CHECK(hq_stats(h, h->mallocs, h->frees, 0, 0, 1), "classes: request %zu: one free block", s);
        if (!ok) {
            failures++;
        }
    }
    TL_CHECK(classes == HQ_NCLASS, "classes: %zu block sizes seen, %zu lists", classes, (size_t)HQ_NCLASS);
    /* The lists take blocks by size: a request a little above RT_HEAP_QUICK_MAX_REQUEST shares
     * the largest cached block size (and is cached) unless RT_HEAP_QUICK_MAX_REQUEST + W is a
     * multiple of A (64-bit with A = 16: requests 257..264; -m32: 257..260; A = 8 on 64-bit: none). */
    TL_CHECK((hq_block(RT_HEAP_QUICK_MAX_REQUEST + 1u) <= HQ_QMAX) ==
                 (((RT_HEAP_QUICK_MAX_REQUEST + HQ_W) & (HQ_A - 1u)) != 0u),
             "classes: the first request above the limit shares its block size exactly when it is rounded");
    /* larger blocks: never cached */
    static const size_t larger[] = {400, 511, 512, 600, 1000, 4000};
    for (size_t i = 0; i < sizeof larger / sizeof larger[0]; i++) {
        unsigned char *p = rt_heap_malloc(h, larger[i]);
        if (TL_CHECK(p != NULL, "classes: malloc(%zu)", larger[i])) {
            rt_heap_free(h, p);
            TL_CHECK(hq_count(h) == 0u && hq_free_blk(h, p) && blk_head_size(hq_data(h, p)) == h->capacity,
                     "classes: a block of %zu bytes merged at once", hq_block(larger[i]));
        }
    }

    /* one block of every size cached at once: each request takes its own, in any order */
    unsigned char *blk[HQ_NCLASS];
    size_t got = 0;
    for (size_t c = 0; c < HQ_NCLASS; c++) {
        blk[c] = rt_heap_malloc(h, hq_req_hi(BLK_MIN + c * HQ_A));
        got += blk[c] != NULL;
    }
    if (TL_CHECK(got == HQ_NCLASS, "classes: one block of each size")) {
        for (size_t c = 0; c < HQ_NCLASS; c++) {
            rt_heap_free(h, blk[c]);
        }
        TL_CHECK(hq_count(h) == HQ_NCLASS && rt_heap_check(h), "classes: %zu cached", (size_t)HQ_NCLASS);
        size_t order[HQ_NCLASS];
        for (size_t c = 0; c < HQ_NCLASS; c++) {
            order[c] = c;
        }
        tl_rng_t r = tl_rng_seed(7);
        for (size_t c = HQ_NCLASS - 1u; c > 0u; c--) {
            size_t j = tl_range(&r, 0, c), t = order[c];
            order[c] = order[j];
            order[j] = t;
        }
        for (size_t i = 0; i < HQ_NCLASS; i++) {
            size_t c = order[i], B = BLK_MIN + c * HQ_A;
            size_t s = tl_range(&r, hq_req_lo(B), hq_req_hi(B));
            unsigned char *p = rt_heap_malloc(h, s);
            TL_CHECK(p == blk[c] && rt_heap_last_probes(h) == 1u, "classes: malloc(%zu) took %p, not its block %p", s,
                     (void *)p, (void *)blk[c]);
        }
        TL_CHECK(hq_count(h) == 0u && rt_heap_check(h), "classes: all taken back");
        for (size_t c = 0; c < HQ_NCLASS; c++) {
            rt_heap_free(h, blk[c]);
        }
    }
    TL_CHECK(hq_stats(h, h->mallocs, h->frees, 0, 0, 1), "classes: one free block at the end");
    TL_CHECK(f.rec.n == 0u && f.rec.checks == 0u, "classes: no reports (%s)", hq_seen(&f));
    hq_close(&f);
}

/* --- 3. the limit ---------------------------------------------------------------------------- */

static void test_default_limits(void)
{
    const size_t control = rt_heap_control_size(RT_INDEX_TLSFQ);
    /* the buffer sizes, and the one that gives exactly 64 KiB of capacity (16 blocks) */
    const size_t sizes[] = {control + (2u << 10),
                            control + (5u << 10),
                            16u << 10,
                            64u << 10,
                            (64u << 10) + control + 2u * RT_HEAP_GUARD + 2u * HQ_A,
                            256u << 10,
                            512u << 10,
                            (512u << 10) + control + 2u * RT_HEAP_GUARD + 2u * HQ_A,
                            1u << 20,
                            ((size_t)RT_HEAP_QUICK_BLOCKS << 12) + control + 2u * RT_HEAP_GUARD + 2u * HQ_A};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        hq_t f;
        if (!hq_open(&f, sizes[i], RT_INDEX_TLSFQ)) {
            continue;
        }
        size_t per = f.h->capacity / 4096u;
        unsigned want = per < RT_HEAP_QUICK_BLOCKS ? (unsigned)per : RT_HEAP_QUICK_BLOCKS;
        TL_CHECK(f.h->quick->limit == want && f.h->quick->room == want,
                 "default limit: %zu-byte buffer (capacity %zu): limit %u, want %u", sizes[i], f.h->capacity,
                 f.h->quick->limit, want);
        if (i == 4u) {
            TL_CHECK(f.h->capacity >= (64u << 10) && want == 16u, "default limit: 64 KiB of capacity: 16");
        }
        if (sizes[i] >= ((size_t)RT_HEAP_QUICK_BLOCKS << 12) + control + 2u * RT_HEAP_GUARD) {
            TL_CHECK(want == RT_HEAP_QUICK_BLOCKS, "default limit: %zu bytes: %u", sizes[i], RT_HEAP_QUICK_BLOCKS);
        }
        if (want == 0u) { /* below 4 KiB of capacity: no block is cached */
            unsigned char *p = rt_heap_malloc(f.h, 40);
            if (TL_CHECK(p != NULL, "default limit: malloc on the small heap")) {
                rt_heap_free(f.h, p);
                TL_CHECK(!hq_cached(f.h, p) && hq_free_blk(f.h, p) && hq_count(f.h) == 0u,
                         "default limit 0: the free was not cached");
            }
            TL_CHECK(rt_heap_set_quick_limit(f.h, 4) == 4u, "default limit 0: set 4");
            p = rt_heap_malloc(f.h, 40);
            rt_heap_free(f.h, p);
            TL_CHECK(p != NULL && hq_cached(f.h, p) && hq_count(f.h) == 1u, "limit 4 on the small heap: cached");
        }
        TL_CHECK(rt_heap_check(f.h) && f.rec.n == 0u, "default limit: check (%s)", hq_seen(&f));
        hq_close(&f);
    }
}

static void test_limit(void)
{
    hq_t f;
    if (!hq_open(&f, 64u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    rt_heap_t *h = f.h;
    const size_t B = hq_block(100);
    TL_CHECK(rt_heap_set_quick_limit(h, 4) == 4u && h->quick->limit == 4u && h->quick->room == 4u, "limit: set 4");
    unsigned char *x[5];
    for (int i = 0; i < 5; i++) {
        x[i] = rt_heap_malloc(h, 100);
    }
    if (!TL_CHECK(x[0] != NULL && x[1] == x[0] + B && x[2] == x[1] + B && x[3] == x[2] + B && x[4] == x[3] + B,
                  "limit: five adjacent blocks")) {
        hq_close(&f);
        return;
    }
    for (int i = 0; i < 4; i++) {
        rt_heap_free(h, x[i]);
    }
    TL_CHECK(hq_count(h) == 4u && h->quick->room == 0u && hq_head(h, B) == hq_hdr(x[3]), "limit: four cached");
    /* the fifth goes to the index: merged with the free rest after it at once */
    rt_heap_free(h, x[4]);
    TL_CHECK(!hq_cached(h, x[4]) && hq_free_blk(h, x[4]) && blk_head_size(hq_data(h, x[4])) > B && hq_count(h) == 4u &&
                 !hq_listed(h, x[4]),
             "limit: the fifth free was cached or not merged");
    TL_CHECK(rt_heap_check(h), "limit: check with four cached and the fifth merged");
    for (int i = 0; i < 4; i++) {
        TL_CHECK(hq_cached(h, x[i]) && hq_listed(h, x[i]), "limit: x%d still cached", i);
    }
    /* raising: the cached blocks stay */
    TL_CHECK(rt_heap_set_quick_limit(h, 6) == 6u && hq_count(h) == 4u && h->quick->room == 2u,
             "limit: raised to 6 with 4 cached: room %u", h->quick->room);
    /* lowering below the count: the blocks above the new limit go back to the index */
    TL_CHECK(rt_heap_set_quick_limit(h, 2) == 2u && h->quick->limit == 2u && hq_count(h) <= 2u,
             "limit: lowered to 2: %u cached", hq_count(h));
    for (int i = 0; i < 4; i++) {
        TL_CHECK(hq_cached(h, x[i]) == hq_listed(h, x[i]), "limit: x%d cached but not listed", i);
    }
    TL_CHECK(rt_heap_check(h), "limit: check after lowering");
    TL_CHECK(hq_stats(h, 5, 5, 0, 0, 1), "limit: everything merged");
    /* 0: off */
    TL_CHECK(rt_heap_set_quick_limit(h, 0) == 0u && h->quick->limit == 0u && h->quick->room == 0u, "limit: 0");
    unsigned char *p = rt_heap_malloc(h, 100);
    rt_heap_free(h, p);
    TL_CHECK(p != NULL && !hq_cached(h, p) && hq_free_blk(h, p) && hq_count(h) == 0u, "limit 0: free not cached");
    /* clamps */
    TL_CHECK(rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT) == RT_HEAP_QUICK_MAX_LIMIT, "limit: the maximum");
    TL_CHECK(rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT + 1u) == RT_HEAP_QUICK_MAX_LIMIT &&
                 h->quick->limit == RT_HEAP_QUICK_MAX_LIMIT,
             "limit: the maximum + 1 clamps");
    TL_CHECK(rt_heap_set_quick_limit(h, UINT_MAX) == RT_HEAP_QUICK_MAX_LIMIT &&
                 h->quick->room == RT_HEAP_QUICK_MAX_LIMIT,
             "limit: UINT_MAX clamps");
    /* more than the default, and equal to the count: no flush */
    static unsigned char *many[300];
    size_t n = 0;
    for (; n < 300u; n++) {
        many[n] = rt_heap_malloc(h, 24);
        if (many[n] == NULL) {
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        rt_heap_free(h, many[i]);
    }
    TL_CHECK(n == 300u && hq_count(h) == 300u && rt_heap_check(h), "limit 1024: %zu blocks cached",
             (size_t)hq_count(h));
    TL_CHECK(rt_heap_set_quick_limit(h, 300) == 300u && hq_count(h) == 300u && h->quick->room == 0u,
             "limit: set to the count: nothing given back");
    p = rt_heap_malloc(h, 3000); /* no cached block of that size: the index */
    rt_heap_free(h, p);
    TL_CHECK(p != NULL && hq_count(h) == 300u, "limit: a large block neither takes nor joins the lists");
    TL_CHECK(rt_heap_set_quick_limit(h, 299) == 299u && hq_count(h) <= 299u && rt_heap_check(h),
             "limit: one below the count");
    TL_CHECK(f.rec.n == 0u && f.rec.checks == 0u, "limit: no reports (%s)", hq_seen(&f));
    hq_close(&f);
}

/* On every other index: set_quick_limit returns 0 and, like rt_heap_flush, changes nothing. */
static void test_other_indexes(void)
{
    for (int i = 0; i < (int)RT_INDEX_COUNT; i++) {
        rt_index_t index = (rt_index_t)i;
        if (index == RT_INDEX_TLSFQ) {
            continue;
        }
        hq_t f;
        if (!hq_open(&f, 16u << 10, index)) {
            continue;
        }
        unsigned char *a = rt_heap_malloc(f.h, 100), *b = rt_heap_malloc(f.h, 100);
        rt_heap_free(f.h, a);
        TL_CHECK(f.h->quick == NULL && a != NULL && b != NULL && hq_free_blk(f.h, a), "%s: no quick lists",
                 rt_index_name(index));
        unsigned char *copy = malloc(f.buf.size);
        if (TL_CHECK(copy != NULL, "out of memory")) {
            memcpy(copy, f.buf.mem, f.buf.size);
            TL_CHECK(rt_heap_set_quick_limit(f.h, 4) == 0u, "%s: set_quick_limit returns 0", rt_index_name(index));
            TL_CHECK(rt_heap_set_quick_limit(f.h, 0) == 0u, "%s: set_quick_limit(0) returns 0", rt_index_name(index));
            rt_heap_flush(f.h);
            TL_CHECK(memcmp(copy, f.buf.mem, f.buf.size) == 0, "%s: set_quick_limit or flush changed the heap",
                     rt_index_name(index));
            free(copy);
        }
        rt_heap_free(f.h, b);
        TL_CHECK(rt_heap_check(f.h) && f.rec.n == 0u, "%s: check (%s)", rt_index_name(index), hq_seen(&f));
        hq_close(&f);
    }
    /* the registry's descriptor says so */
    const rt_allocator_t *d = rt_registry_find("tlsfq");
    const rt_allocator_t *t = rt_registry_find("tlsf");
    TL_CHECK(d != NULL && d->caches_frees && t != NULL && !t->caches_frees, "registry: tlsfq caches frees, tlsf not");
}

/* --- 4. a malloc the index cannot serve gives the cached blocks back ------------------------- */

/* Fills the heap with blocks of requests cycling over reqs until malloc fails; returns the count. */
static size_t hq_fill(rt_heap_t *h, unsigned char **out, size_t max, const size_t *reqs, size_t nreqs)
{
    size_t n = 0;
    for (; n < max; n++) {
        out[n] = rt_heap_malloc(h, reqs[n % nreqs]);
        if (out[n] == NULL) {
            break;
        }
    }
    return n;
}

/* Frees blk[0..n); returns how many of them a list takes (with room for all): the blocks of at
 * most HEAP_QUICK_MAX_BLOCK bytes (the last block of a pool may be larger than its request).
 * foot: where given, each block's size. */
static size_t hq_free_blocks(rt_heap_t *h, unsigned char **blk, size_t n, size_t *foot)
{
    size_t cacheable = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = rt_heap_usable_size(h, blk[i]) + HQ_W;
        cacheable += b <= HQ_QMAX;
        if (foot != NULL) {
            foot[i] = b;
        }
        rt_heap_free(h, blk[i]);
    }
    return cacheable;
}

static void test_flush_on_failure(void)
{
    static unsigned char *blk[1100];
    static const size_t mixed[] = {1, 24, 40, 100, 130, 200, 256};
    const size_t one[] = {hq_req_hi(2u * BLK_MIN)};
    for (int mode = 0; mode < 6; mode++) {
        /* 0 malloc, 1 memalign(64), 2 calloc, 3 realloc that must move, 4 malloc of a small size
         * whose list is empty, 5 malloc that fails even after the flush */
        hq_t f;
        if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
            continue;
        }
        rt_heap_t *h = f.h;
        rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT);
        unsigned char *keep = mode == 3 ? rt_heap_malloc(h, 100) : NULL;
        if (keep != NULL) {
            tl_fill(keep, 100, 33);
        }
        size_t n = mode == 4 ? hq_fill(h, blk, 1100, one, 1) : hq_fill(h, blk, 1100, mixed, 7);
        TL_CHECK(n > 50u && n <= RT_HEAP_QUICK_MAX_LIMIT, "flush mode %d: %zu blocks fill the heap", mode, n);
        if (mode == 5) { /* one block in the middle stays: the pool is split in two */
            const size_t mid = n / 2u;
            keep = blk[mid];
            n--;
            blk[mid] = blk[n];
        }
        size_t cacheable = hq_free_blocks(h, blk, n, NULL);
        TL_CHECK(cacheable + 1u >= n && hq_count(h) == cacheable && rt_heap_check(h),
                 "flush mode %d: all %zu cached (%u)", mode, n, hq_count(h));
        const size_t big = h->capacity / 2u;
        rt_stats_t before;
        unsigned char *p = NULL;
        uint64_t failures = h->hooks.failures;
        switch (mode) {
        case 0: p = rt_heap_malloc(h, big); break;
        case 1: p = rt_heap_memalign(h, 64, big); break;
        case 2: p = rt_heap_calloc(h, big / 8u, 8); break;
        case 3: p = rt_heap_realloc(h, keep, big); break;
        case 4: /* 3 smallest blocks: above the fill's last block, which may take a remainder of
                 * less than a smallest block (so it may lie on the next list up) */
            TL_CHECK(hq_head(h, 3u * BLK_MIN) == NULL, "flush mode 4: the list of the request is empty");
            p = rt_heap_malloc(h, hq_req_hi(3u * BLK_MIN));
            break;
        default: p = rt_heap_malloc(h, h->capacity / 4u * 3u); break; /* keep splits the pool */
        }
        if (mode == 5) {
            TL_CHECK(p == NULL && h->hooks.failures == failures + 1u && hq_count(h) == 0u,
                     "flush: a request too large even after the flush: NULL, one failure, lists given back");
            rt_heap_stats(h, &before);
            TL_CHECK(before.free_blocks == 2u && before.used_blocks == 1u, "flush mode 5: merged around keep");
            rt_heap_free(h, keep);
        } else {
            /* (realloc's move frees the old block: onto the emptied lists) */
            TL_CHECK(p != NULL && hq_count(h) == (mode == 3 ? 1u : 0u) && h->hooks.failures == failures,
                     "flush mode %d: the request the cached blocks block succeeds after the flush", mode);
        }
        if (p != NULL) {
            TL_CHECK(((uintptr_t)p & (mode == 1 ? 63u : HQ_A - 1u)) == 0u, "flush mode %d: alignment", mode);
            if (mode == 2) {
                bool zero = true;
                for (size_t i = 0; i < big / 8u * 8u && zero; i++) {
                    zero = p[i] == 0u;
                }
                TL_CHECK(zero, "flush: calloc zeroed");
            }
            if (mode == 3) {
                TL_CHECK(p != keep && tl_verify(p, 100, 33) == 100u, "flush: realloc moved the contents");
            }
            TL_CHECK(rt_heap_check(h), "flush mode %d: check", mode);
            rt_heap_free(h, p);
        }
        TL_CHECK(hq_stats(h, h->mallocs, h->frees, 0, 0, 1), "flush mode %d: one free block at the end", mode);
        TL_CHECK(rt_heap_check(h) && f.rec.n == 0u && f.rec.checks == 0u, "flush mode %d: no reports (%s)", mode,
                 hq_seen(&f));
        hq_close(&f);
    }

    /* rt_heap_flush, stats and walk: every block back, merged; with a second pool */
    hq_t f;
    if (!hq_open(&f, 32u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    rt_heap_t *h = f.h;
    static unsigned char pool2[8u << 10];
    TL_CHECK(rt_heap_add_pool(h, pool2, sizeof pool2), "flush: a second pool");
    rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT);
    for (int how = 0; how < 3; how++) {
        size_t n = hq_fill(h, blk, 1100, mixed, 7);
        static size_t foot[1100];
        size_t in2 = 0;
        for (size_t i = 0; i < n; i++) {
            in2 += blk[i] >= pool2 && blk[i] < pool2 + sizeof pool2;
        }
        TL_CHECK(in2 != 0u, "flush: blocks in the second pool");
        size_t cacheable = hq_free_blocks(h, blk, n, foot);
        TL_CHECK(cacheable + 2u >= n && hq_count(h) == cacheable && rt_heap_check(h),
                 "flush: %zu of %zu cached across two pools", cacheable, n);
        if (how == 0) {
            /* the blocks of the second pool come back from the lists too */
            size_t hits = 0;
            for (size_t i = n; i-- > 0;) {
                if (foot[i] <= HQ_QMAX) {
                    unsigned char *p = rt_heap_malloc(h, hq_req_hi(foot[i]));
                    hits += p == blk[i];
                }
            }
            TL_CHECK(hits == cacheable && hq_count(h) == 0u, "flush: %zu of %zu popped in LIFO order", hits, cacheable);
            for (size_t i = 0; i < n; i++) {
                if (foot[i] <= HQ_QMAX) {
                    rt_heap_free(h, blk[i]);
                }
            }
            rt_heap_flush(h);
            TL_CHECK(hq_lists_empty(h) && h->quick->room == RT_HEAP_QUICK_MAX_LIMIT && rt_heap_check(h),
                     "rt_heap_flush empties the lists");
            TL_CHECK(hq_stats(h, h->mallocs, h->frees, 0, 0, 2), "rt_heap_flush: one free block per pool");
        } else if (how == 1) {
            TL_CHECK(hq_stats(h, h->mallocs, h->frees, 0, 0, 2), "stats flushes first: one free block per pool");
        } else {
            hq_walk_t ctx = {0, 0, 0};
            rt_heap_walk(h, hq_walk_count, &ctx);
            TL_CHECK(ctx.blocks == 2u && ctx.used == 0u && hq_lists_empty(h),
                     "walk flushes first: %zu blocks, %zu used", ctx.blocks, ctx.used);
        }
    }
    TL_CHECK(rt_heap_check(h) && f.rec.n == 0u && f.rec.checks == 0u, "flush: no reports (%s)", hq_seen(&f));
    hq_close(&f);
}

/* --- 5. bad input ---------------------------------------------------------------------------- */

/* A double free, realloc and usable_size of a cached block: reported, refused, nothing changed;
 * with room on the lists and without, with and without lock hooks. */
static void test_double_free(void)
{
    for (int locked = 0; locked < 2; locked++) {
        for (int full = 0; full < 2; full++) {
            hq_t f;
            if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
                continue;
            }
            if (locked) {
                hq_use_lock(&f);
            }
            rt_heap_t *h = f.h;
            unsigned char *g0 = rt_heap_malloc(h, 100), *p = rt_heap_malloc(h, 100), *g1 = rt_heap_malloc(h, 100);
            if (!TL_CHECK(g0 != NULL && p != NULL && g1 != NULL, "double free: setup")) {
                hq_close(&f);
                continue;
            }
            rt_heap_free(h, p);
            if (full) {
                rt_heap_set_quick_limit(h, hq_count(h)); /* a free now goes to the index */
            }
            TL_CHECK(hq_cached(h, p) && hq_listed(h, p) && h->quick->room == (full ? 0u : h->quick->limit - 1u),
                     "double free: p cached");
            static const char *const what[] = {"free",         "realloc(1)", "realloc(same)",
                                               "realloc(400)", "realloc(0)", "usable_size"};
            static const char *const op[] = {"free", "realloc", "realloc", "realloc", "free", "usable_size"};
            for (int k = 0; k < 6; k++) {
                hq_snap_t s;
                hq_snap_take(&s, h);
                hq_rec_reset(&f);
                void *r = NULL;
                size_t u = 0;
                switch (k) {
                case 0: rt_heap_free(h, p); break;
                case 1: r = rt_heap_realloc(h, p, 1); break;
                case 2: r = rt_tlsfq_realloc(h, p, 100); break;
                case 3: r = rt_heap_realloc(h, p, 400); break;
                case 4: r = rt_heap_realloc(h, p, 0); break;
                default: u = rt_heap_usable_size(h, p); break;
                }
                TL_CHECK(hq_one(&f, RT_ERR_DOUBLE_FREE, op[k]) && f.rec.r[0].ptr == p && r == NULL && u == 0u,
                         "double free (%s%s): %s of a cached block: %s", locked ? "locked" : "no lock",
                         full ? ", lists full" : "", what[k], hq_seen(&f));
                TL_CHECK(hq_snap_same(&s, h), "double free: %s of a cached block changed the heap", what[k]);
                TL_CHECK(rt_heap_check(h), "double free: check after %s", what[k]);
            }
            hq_rec_reset(&f);
            /* handed out once, and only once */
            unsigned char *x = rt_heap_malloc(h, 100), *y = rt_heap_malloc(h, 100);
            TL_CHECK(x == p && y != NULL && y != p && y != g0 && y != g1, "double free: p came back once");
            rt_heap_free(h, x);
            rt_heap_free(h, y);
            rt_heap_free(h, g0);
            rt_heap_free(h, g1);
            TL_CHECK(rt_heap_check(h) && f.rec.n == 0u && f.rec.checks == 0u, "double free: clean end (%s)",
                     hq_seen(&f));
            if (locked) {
                TL_CHECK(f.lock.depth == 0u && f.lock.max_depth == 1u && f.lock.locks == f.lock.unlocks &&
                             !f.lock.bad_token && f.rec.locked_reports == 0u,
                         "double free: lock depth %u, max %u, %lu locks, %lu unlocks, %u reports under the lock",
                         f.lock.depth, f.lock.max_depth, f.lock.locks, f.lock.unlocks, f.rec.locked_reports);
            }
            hq_close(&f);
        }
    }
}

/* The layout of the link tests: [L][a][b][c][g][x][y][D][rest]: L, g, y live; a, b, c of one
 * size freed in that order (list c -> b -> a); x a free block of the index; D a cached block of
 * another size. All of request 100 except x (not cacheable) and D. */
typedef struct hq_lay {
    unsigned char *L, *a, *b, *c, *g, *x, *y, *D;
    size_t s, sD;
} hq_lay_t;

static bool hq_layout(hq_t *f, hq_lay_t *t)
{
    rt_heap_t *h = f->h;
    rt_heap_set_quick_limit(h, 16); /* a 16 KiB heap caches 3 blocks by default */
    t->s = 100;
    t->sD = hq_req_hi(hq_block(100) + 2u * HQ_A);
    t->L = rt_heap_malloc(h, t->s);
    t->a = rt_heap_malloc(h, t->s);
    t->b = rt_heap_malloc(h, t->s);
    t->c = rt_heap_malloc(h, t->s);
    t->g = rt_heap_malloc(h, t->s);
    t->x = rt_heap_malloc(h, HQ_QMAX + 64u);
    t->y = rt_heap_malloc(h, t->s);
    t->D = rt_heap_malloc(h, t->sD);
    if (!TL_CHECK(t->L && t->a && t->b && t->c && t->g && t->x && t->y && t->D, "layout: mallocs")) {
        return false;
    }
    rt_heap_free(h, t->x);
    rt_heap_free(h, t->D);
    rt_heap_free(h, t->a);
    rt_heap_free(h, t->b);
    rt_heap_free(h, t->c);
    hq_tr.n = 0;
    bool ok = hq_track_add(&hq_tr, t->L, hq_block(t->s)) && hq_track_add(&hq_tr, t->g, hq_block(t->s)) &&
              hq_track_add(&hq_tr, t->y, hq_block(t->s));
    return TL_CHECK(ok && hq_free_blk(h, t->x) && hq_cached(h, t->D) && hq_count(h) == 4u &&
                        hq_head(h, hq_block(t->s)) == hq_hdr(t->c) && rt_heap_check(h) && f->rec.n == 0u,
                    "layout: c -> b -> a cached, x free, D cached");
}

static uintptr_t hq_outside_word; /* a word outside every heap */

/* After a reported damage the heap has fenced it off (containment, src/heap/heap_common.h):
 * rt_heap_check passes with no report, the live blocks (hq_tr) free cleanly, and then no block is
 * used and `fenced` bytes are quarantined (SIZE_MAX: any amount). At level 0 (no containment):
 * only that the live blocks free. */
static bool hq_contained(hq_t *f, size_t fenced, const char *what)
{
    rt_heap_t *h = f->h;
    hq_rec_reset(f);
    bool ok = true;
    if (RT_HARDENING >= 1) {
        ok &= TL_CHECK(rt_heap_check(h) && f->rec.checks == 0u, "%s: check after containment", what);
    }
    ok &= TL_CHECK(hq_track_free_all(f, &hq_tr) && f->rec.n == 0u, "%s: the live blocks free (%s)", what, hq_seen(f));
    if (RT_HARDENING >= 1) {
        rt_stats_t s;
        rt_heap_stats(h, &s);
        ok &= TL_CHECK(rt_heap_check(h) && f->rec.checks == 0u && s.used_blocks == 0u && s.used_bytes == 0u &&
                           (fenced == SIZE_MAX || s.quarantined_bytes == fenced) &&
                           s.free_bytes == s.capacity - s.quarantined_bytes,
                       "%s: after the frees: %zu used blocks, %zu bytes quarantined (want %zu), %u checks failed", what,
                       s.used_blocks, s.quarantined_bytes, fenced, f->rec.checks);
    }
    return ok;
}

/* A use after free writes a raw value over a cached block's link: its seal no longer holds
 * (heap/quick.h). The pop that meets it reports it and hands out nothing; the block is fenced
 * (dead), every other cached block goes back to the index. rt_heap_check, run first instead,
 * finds and fences it the same way. No live block is ever handed out. */
static void test_uaf_links(void)
{
    static const char *const name[] = {"0",
                                       "1",
                                       "42",
                                       "a live block",
                                       "the control structure",
                                       "a word outside the heap",
                                       "all ones",
                                       "a cached block (raw)"};
    for (int v = 0; v < 8; v++) {
        for (int pos = 0; pos < 3; pos++) {
            for (int where = 0; where < 2; where++) {
                hq_t f;
                hq_lay_t t;
                if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
                    continue;
                }
                if (!hq_layout(&f, &t)) {
                    hq_close(&f);
                    continue;
                }
                rt_heap_t *h = f.h;
                const uintptr_t values[] = {0u,           1u,
                                            42u,          (uintptr_t)t.L,
                                            (uintptr_t)h, (uintptr_t)&hq_outside_word,
                                            UINTPTR_MAX,  (uintptr_t)t.a};
                unsigned char *order[3] = {t.c, t.b, t.a};
                hq_set_word(order[pos], values[v]);
                bool ok = true;
                if (RT_HARDENING < 1 || (where == 0 && HQ_DEBUG_CHECKS != 0u)) {
                    /* level 0: no seal (the link is met where it leads, tests/contract/overflow.c); RT_DEBUG 2:
                     * the library's own check after the first pop finds the damage (where 1) */
                    hq_close(&f);
                    continue;
                }
                if (where == 1) {
                    ok &= TL_CHECK(!rt_heap_check(h) && f.rec.checks == 1u && f.rec.n == 0u,
                                   "uaf link (%s over link %d): rt_heap_check passed", name[v], pos);
                } else {
                    for (int i = 0; i < pos; i++) {
                        unsigned char *p = rt_heap_malloc(h, t.s);
                        ok &= TL_CHECK(p == order[i] && f.rec.n == 0u && hq_fresh(&f, p, t.s),
                                       "uaf link (%s over link %d): pop %d gave %p, not %p (%s)", name[v], pos, i,
                                       (void *)p, (void *)order[i], hq_seen(&f));
                    }
                    unsigned char *p = rt_heap_malloc(h, t.s);
                    ok &= TL_CHECK(p == NULL && hq_one(&f, RT_ERR_CORRUPTED, "malloc"),
                                   "uaf link (%s over link %d): the pop of the damaged block: %p, %s", name[v], pos,
                                   (void *)p, hq_seen(&f));
                }
                ok &= TL_CHECK(hq_lists_empty(h) && (hq_data(h, order[pos]) & BLK_FENCE) == BLK_FENCE,
                               "uaf link (%s over link %d, %s): the damaged block fenced, the lists given back",
                               name[v], pos, where == 0 ? "pop" : "check");
                hq_rec_reset(&f);
                for (int i = 0; i < 3; i++) {
                    unsigned char *p = rt_heap_malloc(h, t.s);
                    ok &= TL_CHECK(p != NULL && p != order[pos] && hq_fresh(&f, p, t.s) && f.rec.n == 0u,
                                   "uaf link (%s over link %d): later malloc %d", name[v], pos, i);
                }
                unsigned char *d = rt_heap_malloc(h, t.sD);
                ok &= TL_CHECK(d != NULL && hq_fresh(&f, d, t.sD), "uaf link (%s over link %d): malloc of D's size",
                               name[v], pos);
                ok &= hq_contained(&f, hq_block(t.s), "uaf link");
                (void)ok;
                hq_close(&f);
            }
        }
    }
}

/* Links re-aimed by one who knows the key and the seal (a forger: the tags are a check against
 * accident, not a MAC): cycles, skips, and links to blocks that are no cached block of the list.
 * A block is handed out only while its header says cached, so none is handed out twice; a link
 * to a block that is no cached block of the list's size is reported when the list reaches it. */
enum { T_C, T_B, T_A, T_L, T_X, T_D, T_INNER, T_NULL };
typedef struct hq_forge {
    int at;     /* whose link: 0 c, 1 b, 2 a */
    int target; /* T_... */
    const char *what;
} hq_forge_t;

static void test_forged_links(void)
{
    if (HQ_DEBUG_CHECKS != 0u) { /* RT_DEBUG 2: the library's own check after the first call sees the forgery */
        return;
    }
    static const hq_forge_t cases[] = {
        {0, T_C, "c -> c (a cycle of one)"},
        {2, T_C, "a -> c (a cycle through the whole list)"},
        {1, T_C, "b -> c (a cycle)"},
        {1, T_B, "b -> b"},
        {2, T_B, "a -> b"},
        {0, T_A, "c -> a (b skipped)"},
        {0, T_L, "c -> a live block of the size"},
        {0, T_X, "c -> a free block of the index"},
        {0, T_D, "c -> a cached block of another size"},
        {0, T_INNER, "c -> b's payload"},
        {0, T_NULL, "c -> NULL (b and a cut off)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const hq_forge_t *cs = &cases[k];
        hq_t f;
        hq_lay_t t;
        if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
            continue;
        }
        if (!hq_layout(&f, &t)) {
            hq_close(&f);
            continue;
        }
        rt_heap_t *h = f.h;
        TL_CHECK(hq_word(t.a) == h->key, "forged: the last link is the key (NULL encoded)");
        unsigned char *blocks[3] = {t.c, t.b, t.a};
        const void *target = NULL;
        switch (cs->target) {
        case T_C: target = hq_hdr(t.c); break;
        case T_B: target = hq_hdr(t.b); break;
        case T_A: target = hq_hdr(t.a); break;
        case T_L: target = hq_hdr(t.L); break;
        case T_X: target = hq_hdr(t.x); break;
        case T_D: target = hq_hdr(t.D); break;
        case T_INNER: target = t.b; break;
        default: target = NULL; break;
        }
        rt_blk *forged = hq_hdr(blocks[cs->at]);
        uintptr_t link = hq_encode(h, target);
        *heap_quick_link(forged) = link;
        *heap_quick_seal_word(forged) = heap_quick_seal(h, forged, link);
        hq_rec_reset(&f);
        /* follow the chain as the links make it: a cached block of the size not yet handed out is
         * handed out; NULL ends the list (the next malloc comes from the index); anything else is
         * reported by the malloc that reaches it */
        unsigned char *at = t.c;
        bool popped[3] = {false, false, false};
        bool reported = false;
        for (int i = 0; i < 6; i++) {
            int idx = at == t.c ? 0 : at == t.b ? 1 : at == t.a ? 2 : -1;
            unsigned char *p = rt_heap_malloc(h, t.s);
            if (at == NULL) {
                TL_CHECK(p != NULL && f.rec.n == 0u && hq_fresh(&f, p, t.s), "forged %s: the malloc after the list: %s",
                         cs->what, hq_seen(&f));
                break;
            }
            if (idx < 0 || popped[idx]) {
                TL_CHECK(p == NULL && hq_one(&f, RT_ERR_CORRUPTED, "malloc"),
                         "forged %s: the malloc reaching %p: %p, %s", cs->what, (void *)at, (void *)p, hq_seen(&f));
                reported = true;
                break;
            }
            TL_CHECK(p == at && f.rec.n == 0u && hq_fresh(&f, p, t.s), "forged %s: pop %d gave %p, not %p (%s)",
                     cs->what, i, (void *)p, (void *)at, hq_seen(&f));
            popped[idx] = true;
            at = idx == cs->at ? (target != NULL ? (unsigned char *)blk_payload((rt_blk *)(uintptr_t)target) : NULL)
                               : (idx < 2 ? blocks[idx + 1] : NULL);
        }
        (void)reported;
        hq_rec_reset(&f);
        for (int i = 0; i < 3; i++) {
            unsigned char *p = rt_heap_malloc(h, t.s);
            TL_CHECK(p != NULL && hq_fresh(&f, p, t.s) && f.rec.n == 0u, "forged %s: later malloc %d", cs->what, i);
        }
        unsigned char *d = rt_heap_malloc(h, t.sD);
        TL_CHECK(d != NULL && hq_fresh(&f, d, t.sD), "forged %s: malloc of D's size", cs->what);
        /* blocks cut off the list (still cached in their headers) are found by the first check,
         * which gives them back; the second passes */
        (void)rt_heap_check(h);
        TL_CHECK(hq_contained(&f, 0u, cs->what), "forged %s: contained", cs->what);
        hq_close(&f);
    }
}

/* The calls that give the cached blocks back (flush, stats, walk, set_quick_limit, and malloc
 * or memalign that the index cannot serve) meet a damaged link: reported by that call (a malloc
 * or memalign is refused), the damaged block fenced, every other cached block given back, no
 * block handed out twice. */
static void test_flush_meets_damage(void)
{
    static const char *const ops[] = {"flush", "stats", "walk", "set_quick_limit", "malloc", "memalign"};
    static unsigned char *blk[400];
    for (int k = 0; k < 6; k++) {
        hq_t f;
        if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
            continue;
        }
        rt_heap_t *h = f.h;
        rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT);
        const size_t s = 100, B = hq_block(s);
        const size_t req[] = {s};
        size_t n = hq_fill(h, blk, 400, req, 1);
        hq_tr.n = 0;
        bool ok = n > 40u;
        for (size_t i = 0; i < n; i++) {
            if (i != 10u && i != 20u && i != 30u) {
                ok &= hq_track_add(&hq_tr, blk[i], B);
            }
        }
        unsigned char *a = blk[10], *b = blk[20], *c = blk[30];
        rt_heap_free(h, a);
        rt_heap_free(h, b);
        rt_heap_free(h, c);
        if (!TL_CHECK(ok && hq_count(h) == 3u && f.rec.n == 0u, "flush damage: setup")) {
            hq_close(&f);
            continue;
        }
        hq_set_word(b, 0); /* b's link */
        unsigned char *p = NULL;
        hq_walk_t w = {0, 0, 0};
        rt_stats_t st;
        switch (k) {
        case 0: rt_heap_flush(h); break;
        case 1: rt_heap_stats(h, &st); break;
        case 2: rt_heap_walk(h, hq_walk_count, &w); break;
        case 3: TL_CHECK(rt_heap_set_quick_limit(h, 1) == 1u, "flush damage: set 1"); break;
        case 4: p = rt_heap_malloc(h, 3u * B); break;
        default: p = rt_heap_memalign(h, 64, 3u * B); break;
        }
        if (RT_HARDENING < 1) {
            hq_close(&f);
            continue;
        }
        TL_CHECK(hq_one(&f, RT_ERR_CORRUPTED, ops[k]), "flush damage: %s: %s", ops[k], hq_seen(&f));
        TL_CHECK(p == NULL, "flush damage: %s that met damage was not refused", ops[k]);
        TL_CHECK(hq_count(h) == 0u && hq_lists_empty(h), "flush damage: %s: lists empty", ops[k]);
        TL_CHECK(hq_free_blk(h, c) && hq_free_blk(h, a) && (hq_data(h, b) & BLK_FENCE) == BLK_FENCE,
                 "flush damage: %s: c and a back, b fenced", ops[k]);
        hq_rec_reset(&f);
        for (int i = 0; i < 2; i++) { /* a and c: b is fenced, and the rest of the heap is full */
            unsigned char *q = rt_heap_malloc(h, s);
            TL_CHECK(q != NULL && q != b && hq_fresh(&f, q, s), "flush damage: %s: later malloc %d", ops[k], i);
        }
        TL_CHECK(hq_contained(&f, B, ops[k]), "flush damage: %s: contained", ops[k]);
        hq_close(&f);
    }
}

/* One byte of a cached block's header overwritten (an overflow of the block before it): met by
 * the malloc that pops it (refused), by a flush, and by rt_heap_check -- each reports it once and
 * fences it: the block's link still carries its seal, so the header is written again and the block
 * goes back to the index with the others (nothing is lost). At RT_HARDENING >= 1 the tag makes
 * every one-byte change of any value visible (block.h); level 0 has no tag and no containment:
 * skipped. */
static void test_header_byte(void)
{
    static const char *const where_name[] = {"the pop", "a flush", "rt_heap_check"};
    unsigned cases = 0;
    if (RT_HARDENING < 1) {
        return;
    }
    for (size_t i = 0; i < HQ_W; i++) {
        for (int v = 0; v < 7; v++) {
            for (int where = 0; where < 3; where++) {
                hq_t f;
                hq_lay_t t;
                if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
                    continue;
                }
                if (!hq_layout(&f, &t)) {
                    hq_close(&f);
                    continue;
                }
                rt_heap_t *h = f.h;
                unsigned char *victim = where == 2 ? t.b : t.c;
                unsigned char *byte = (unsigned char *)hq_hdr(victim) + i;
                const unsigned char old = *byte;
                static const unsigned char flips[] = {0x01, 0x02, 0x04, 0x10, 0x80};
                const unsigned char val = v == 0 ? 0x00u : v == 1 ? 0xFFu : (unsigned char)(old ^ flips[v - 2]);
                if (val == old) {
                    hq_close(&f);
                    continue;
                }
                *byte = val;
                cases++;
                hq_rec_reset(&f);
                if (where == 0) {
                    unsigned char *p = rt_heap_malloc(h, t.s);
                    TL_CHECK(p == NULL && hq_one(&f, RT_ERR_CORRUPTED, "malloc"), "header byte %zu = %02x: %s: %s", i,
                             val, where_name[where], hq_seen(&f));
                } else if (where == 1) {
                    rt_heap_flush(h);
                    TL_CHECK(hq_one(&f, RT_ERR_CORRUPTED, "flush"), "header byte %zu = %02x: %s: %s", i, val,
                             where_name[where], hq_seen(&f));
                } else {
                    TL_CHECK(!rt_heap_check(h) && f.rec.checks == 1u && f.rec.n == 0u, "header byte %zu = %02x: %s: %s",
                             i, val, where_name[where], hq_seen(&f));
                }
                TL_CHECK(hq_lists_empty(h) && hq_free_blk(h, victim),
                         "header byte %zu = %02x: %s: the block mended and given back", i, val, where_name[where]);
                hq_rec_reset(&f);
                for (int k = 0; k < 3; k++) {
                    unsigned char *p = rt_heap_malloc(h, t.s);
                    TL_CHECK(p != NULL && hq_fresh(&f, p, t.s), "header byte %zu = %02x: later malloc", i, val);
                }
                TL_CHECK(hq_contained(&f, 0u, where_name[where]), "header byte %zu = %02x: %s: contained", i, val,
                         where_name[where]);
                hq_close(&f);
            }
        }
    }
    TL_CHECK(cases > 3u * HQ_W, "header byte: %u cases", cases);
}

/* A live block's overflow into the header of the cached block after it, then its free (or
 * realloc, usable_size): refused and reported before anything is written, then the damage fenced
 * (the cached block's header written again from its sealed link: it goes back to the index) --
 * the block that overflowed then frees. Paths: room on the lists (the quick free), the lists
 * full (the index's free), a block too large for the lists, lock hooks installed. RT_HARDENING
 * >= 1: any byte of the header, any value (the tag); level 0: a NUL or 0xFF over the size byte,
 * which no header can hold (the plausibility checks of the papers), no containment. */
static void test_overflow_into_cached(void)
{
    static const char *const path_name[] = {"quick free", "lists full", "large block", "locked"};
    static const char *const ops[] = {"free", "realloc", "usable_size"};
    for (size_t i = 0; i < HQ_W; i++) {
        for (int v = 0; v < 3; v++) {
            if (RT_HARDENING < 1 && (i != 0u || v == 2)) {
                continue;
            }
            for (int path = 0; path < 4; path++) {
                for (int k = 0; k < 3; k++) {
                    hq_t f;
                    if (!hq_open(&f, 16u << 10, RT_INDEX_TLSFQ)) {
                        continue;
                    }
                    if (path == 3) {
                        hq_use_lock(&f);
                    }
                    rt_heap_t *h = f.h;
                    const size_t xs = path == 2 ? HQ_QMAX + 64u : 100u;
                    unsigned char *x = rt_heap_malloc(h, xs), *y = rt_heap_malloc(h, 100), *g = rt_heap_malloc(h, 100);
                    if (!TL_CHECK(x != NULL && y != NULL && g != NULL, "overflow: setup")) {
                        hq_close(&f);
                        continue;
                    }
                    rt_heap_free(h, y);
                    if (path == 1) {
                        rt_heap_set_quick_limit(h, hq_count(h));
                    }
                    unsigned char *byte = x + rt_heap_usable_size(h, x) + i;
                    TL_CHECK(byte == (unsigned char *)hq_hdr(y) + i && hq_cached(h, y),
                             "overflow: x's end is y's header");
                    const unsigned char old = *byte;
                    const unsigned char val = v == 0 ? 0x00u : v == 1 ? 0xFFu : (unsigned char)(old ^ 0x01u);
                    if (val == old) {
                        hq_close(&f);
                        continue;
                    }
                    *byte = val;
                    hq_rec_reset(&f);
                    void *r = NULL;
                    size_t u = 1;
                    switch (k) {
                    case 0: rt_heap_free(h, x); break;
                    case 1: r = rt_heap_realloc(h, x, xs + 200u); break;
                    default: u = rt_heap_usable_size(h, x); break;
                    }
                    bool kind_ok = f.rec.n == 1u && (f.rec.r[0].kind == RT_ERR_CORRUPTED ||
                                                     (RT_HARDENING < 1 && f.rec.r[0].kind == RT_ERR_BAD_POINTER));
                    TL_CHECK(kind_ok && strcmp(f.rec.r[0].op, ops[k]) == 0 && f.rec.r[0].ptr == x && r == NULL &&
                                 (k != 2 || u == 0u),
                             "overflow byte %zu = %02x, %s: %s(x): %s", i, val, path_name[path], ops[k], hq_seen(&f));
                    if (RT_HARDENING < 1) {
                        *byte = old; /* no containment at level 0: repaired by hand */
                    } else {
                        TL_CHECK(hq_lists_empty(h) && hq_free_blk(h, y),
                                 "overflow byte %zu, %s, %s: y mended and given back", i, path_name[path], ops[k]);
                    }
                    hq_tr.n = 0;
                    TL_CHECK(hq_track_add(&hq_tr, x, hq_block(xs)) && hq_track_add(&hq_tr, g, hq_block(100)),
                             "overflow: tracking");
                    TL_CHECK(hq_contained(&f, 0u, path_name[path]), "overflow byte %zu = %02x, %s, %s: contained", i,
                             val, path_name[path], ops[k]);
                    if (path == 3) {
                        TL_CHECK(f.lock.depth == 0u && f.lock.max_depth == 1u && !f.lock.bad_token &&
                                     f.rec.locked_reports == 0u,
                                 "overflow, locked: lock depth %u, max %u, %u reports under the lock", f.lock.depth,
                                 f.lock.max_depth, f.rec.locked_reports);
                    }
                    hq_close(&f);
                }
            }
        }
    }
}

/* --- 6. lock hooks --------------------------------------------------------------------------- */

static void test_locks(void)
{
    hq_t f;
    if (!hq_open(&f, 64u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    hq_use_lock(&f);
    rt_heap_t *h = f.h;
    hq_lock_t *l = &f.lock;
    const unsigned long per = 1ul + HQ_DEBUG_CHECKS; /* the call's lock, and RT_DEBUG 2's check */
    unsigned long n0 = l->locks;
    unsigned char *p = rt_heap_malloc(h, 100);
    TL_CHECK(p != NULL && l->locks - n0 == per, "locks: malloc took the lock %lu times", l->locks - n0);
    n0 = l->locks;
    rt_heap_free(h, p);
    TL_CHECK(hq_cached(h, p) && l->locks - n0 == per, "locks: the quick free (push) took the lock %lu times",
             l->locks - n0);
    n0 = l->locks;
    unsigned char *q = rt_tlsfq_malloc(h, 100);
    TL_CHECK(q == p && rt_heap_last_probes(h) == 1u && l->locks - n0 == per,
             "locks: the hit (pop) took the lock %lu times", l->locks - n0);
    n0 = l->locks;
    rt_tlsfq_free(h, q);
    TL_CHECK(hq_cached(h, p) && l->locks - n0 == per, "locks: rt_tlsfq_free's push");
    n0 = l->locks;
    q = rt_heap_calloc(h, 1, 100);
    TL_CHECK(q == p && l->locks - n0 == per, "locks: calloc's hit");
    rt_heap_free(h, q);
    n0 = l->locks;
    q = rt_heap_memalign(h, HQ_A, 100);
    TL_CHECK(q == p && l->locks - n0 == per, "locks: memalign's hit");
    rt_heap_free(h, q);
    /* the calls that flush: once each */
    n0 = l->locks;
    TL_CHECK(rt_heap_set_quick_limit(h, 200) == 200u && l->locks - n0 == 1u, "locks: set_quick_limit");
    n0 = l->locks;
    rt_heap_flush(h);
    TL_CHECK(hq_count(h) == 0u && l->locks - n0 == 1u, "locks: flush");
    rt_heap_free(h, rt_heap_malloc(h, 50));
    n0 = l->locks;
    rt_stats_t st;
    rt_heap_stats(h, &st);
    TL_CHECK(hq_count(h) == 0u && st.free_blocks == 1u && l->locks - n0 == 1u, "locks: stats");
    rt_heap_free(h, rt_heap_malloc(h, 50));
    n0 = l->locks;
    hq_walk_t w = {0, 0, 0};
    rt_heap_walk(h, hq_walk_count, &w);
    TL_CHECK(hq_count(h) == 0u && w.blocks == 1u && l->locks - n0 == 1u, "locks: walk");
    n0 = l->locks;
    TL_CHECK(rt_heap_check(h) && l->locks - n0 == 1u, "locks: check");
    /* the flush on failure runs inside malloc's lock, without taking it again */
    static unsigned char *blk[1100];
    const size_t req[] = {40, 100};
    rt_heap_set_quick_limit(h, RT_HEAP_QUICK_MAX_LIMIT);
    size_t n = hq_fill(h, blk, 1100, req, 2);
    for (size_t i = 0; i < n; i++) {
        rt_heap_free(h, blk[i]);
    }
    TL_CHECK(n <= RT_HEAP_QUICK_MAX_LIMIT && hq_count(h) == n, "locks: %zu cached", (size_t)hq_count(h));
    n0 = l->locks;
    p = rt_heap_malloc(h, h->capacity / 2u);
    TL_CHECK(p != NULL && hq_count(h) == 0u && l->locks - n0 == per, "locks: malloc after the flush on failure");
    rt_heap_free(h, p);
    TL_CHECK(l->depth == 0u && l->max_depth == 1u && l->locks == l->unlocks && !l->bad_token && f.rec.n == 0u,
             "locks: depth %u, max %u, %lu locks, %lu unlocks (%s)", l->depth, l->max_depth, l->locks, l->unlocks,
             hq_seen(&f));

    /* A damaged list met under the lock. rtalloc/common.h: "The handler is called after the
     * allocator has refused the operation and released its lock, so it may log, count, abort, or
     * even call the allocator again."
     * This test found that the first version reported from quick_damaged and quick_flush with the
     * lock held (rt_hooks_report then took it a second time: a non-recursive mutex deadlocks), as
     * heap_claim's heap_corrupt did on every index; reports met under the lock are now kept
     * (heap_defer) and delivered after the unlock. Expected: max depth 1, no report under it. */
    for (int k = 0; k < 2; k++) {
        unsigned char *a = rt_heap_malloc(h, 100), *b = rt_heap_malloc(h, 100);
        rt_heap_free(h, a);
        rt_heap_free(h, b);
        hq_set_word(b, 0); /* the head's link */
        l->max_depth = 0;
        hq_rec_reset(&f);
        if (k == 0) {
            unsigned char *x = rt_heap_malloc(h, 100); /* b, the head: its link's seal is broken */
            TL_CHECK(x == NULL && hq_one(&f, RT_ERR_CORRUPTED, "malloc"), "locks: damaged pop: %s", hq_seen(&f));
        } else {
            rt_heap_flush(h);
            TL_CHECK(hq_one(&f, RT_ERR_CORRUPTED, "flush"), "locks: damaged flush: %s", hq_seen(&f));
        }
        TL_CHECK(l->depth == 0u && !l->bad_token, "locks: balanced after the damage");
        TL_CHECK(l->max_depth <= 1u && f.rec.locked_reports == 0u,
                 "the report of a damaged quick list (%s) is made with the heap's lock held: the lock "
                 "nested %u deep, %u report(s) delivered under the lock",
                 k == 0 ? "malloc" : "flush", l->max_depth, f.rec.locked_reports);
    }
    hq_close(&f);

    /* The same rule on the plain TLSF heap: a damaged free block met by malloc under the lock
     * (level 0 has no tag to see the damage with). */
    if (RT_HARDENING < 1 || !hq_open(&f, 64u << 10, RT_INDEX_TLSF)) {
        return;
    }
    hq_use_lock(&f);
    h = f.h;
    l = &f.lock;
    unsigned char *a = rt_heap_malloc(h, 100), *spacer = rt_heap_malloc(h, 100);
    rt_heap_free(h, a);
    size_t *head = (size_t *)(void *)(a - sizeof(size_t));
    size_t saved = *head;
    *head ^= (size_t)1 << (8u * sizeof(size_t) - 4u); /* a bit of the tag */
    l->max_depth = 0;
    hq_rec_reset(&f);
    unsigned char *x = rt_heap_malloc(h, 100);
    TL_CHECK(l->depth == 0u && l->max_depth <= 1u && f.rec.locked_reports == 0u,
             "tlsf: the report of a damaged free block is made with the lock held (nested %u deep, %u under it)",
             l->max_depth, f.rec.locked_reports);
    TL_CHECK(x == NULL && hq_one(&f, RT_ERR_CORRUPTED, "malloc"), "tlsf: damaged free block met by malloc: %s",
             hq_seen(&f));
    *head = saved;
    rt_heap_free(h, x);
    rt_heap_free(h, spacer);
    hq_close(&f);
}

/* --- 7. threads: the quick paths under a real lock (TSan) ------------------------------------ */

#if HQ_THREADS
typedef struct hq_mt {
    rt_heap_t *h;
    pthread_mutex_t mutex;
    unsigned long ops;
    unsigned bad; /* pattern or alignment failures seen by the threads */
} hq_mt_t;

static uintptr_t hq_mt_lock(void *context)
{
    pthread_mutex_lock(&((hq_mt_t *)context)->mutex);
    return 0;
}

static void hq_mt_unlock(void *context, uintptr_t token)
{
    (void)token;
    pthread_mutex_unlock(&((hq_mt_t *)context)->mutex);
}

typedef struct hq_mt_arg {
    hq_mt_t *mt;
    uint64_t seed;
    unsigned bad;
} hq_mt_arg_t;

static void *hq_mt_run(void *context)
{
    hq_mt_arg_t *arg = context;
    rt_heap_t *h = arg->mt->h;
    tl_rng_t r = tl_rng_seed(arg->seed);
    unsigned char *p[64] = {0};
    size_t n[64] = {0};
    uint64_t id[64] = {0};
    for (unsigned long i = 0; i < arg->mt->ops; i++) {
        size_t k = tl_range(&r, 0, 63);
        if (p[k] != NULL) {
            if (tl_verify(p[k], n[k], id[k]) != n[k]) {
                arg->bad++;
            }
            rt_heap_free(h, p[k]);
            p[k] = NULL;
        } else {
            n[k] = tl_chance(&r, 80) ? tl_range(&r, 1, RT_HEAP_QUICK_MAX_REQUEST) : tl_range(&r, 1, 600);
            id[k] = arg->seed * 1000003u + i;
            p[k] = rt_heap_malloc(h, n[k]);
            if (p[k] != NULL) {
                if (((uintptr_t)p[k] & (HQ_A - 1u)) != 0u) {
                    arg->bad++;
                }
                tl_fill(p[k], n[k], id[k]);
            }
        }
        if (i % 4096u == 4095u) {
            switch (tl_range(&r, 0, 2)) {
            case 0: rt_heap_flush(h); break;
            case 1: (void)rt_heap_set_quick_limit(h, (unsigned)tl_range(&r, 0, 300)); break;
            default: {
                rt_stats_t s;
                rt_heap_stats(h, &s);
                break;
            }
            }
        }
    }
    for (size_t k = 0; k < 64u; k++) {
        if (p[k] != NULL) {
            arg->bad += tl_verify(p[k], n[k], id[k]) != n[k];
            rt_heap_free(h, p[k]);
        }
    }
    return NULL;
}

static void test_threads(unsigned long ops)
{
    hq_t f;
    if (!hq_open(&f, 256u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    static hq_mt_t mt;
    mt.h = f.h;
    mt.ops = ops;
    mt.bad = 0;
    pthread_mutex_init(&mt.mutex, NULL);
    rt_heap_set_lock(f.h, hq_mt_lock, hq_mt_unlock, &mt);
    hq_mt_arg_t args[2] = {{&mt, 11, 0}, {&mt, 12, 0}};
    pthread_t th[2];
    int started = 0;
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&th[i], NULL, hq_mt_run, &args[i]) == 0) {
            started++;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
    }
    TL_CHECK(started == 2, "threads: %d started", started);
    TL_CHECK(args[0].bad == 0u && args[1].bad == 0u, "threads: %u + %u blocks overwritten or misaligned", args[0].bad,
             args[1].bad);
    TL_CHECK(rt_heap_check(f.h) && hq_stats(f.h, f.h->mallocs, f.h->frees, 0, 0, 1) && f.rec.n == 0u,
             "threads: a clean heap at the end (%s)", hq_seen(&f));
    pthread_mutex_destroy(&mt.mutex);
    hq_close(&f);
}
#endif

/* --- 8. the randomised model run ------------------------------------------------------------- */

typedef struct hq_live {
    unsigned char *p;
    size_t n;    /* bytes of the pattern */
    size_t foot; /* the block, header included */
    uint64_t id;
} hq_live_t;

#define HQ_MODEL_SLOTS 256u

static bool hq_model_overlaps(const hq_live_t *live, size_t n, size_t skip, const unsigned char *p, size_t foot)
{
    uintptr_t lo = (uintptr_t)p - HQ_W, hi = lo + foot;
    for (size_t i = 0; i < n; i++) {
        uintptr_t l2 = (uintptr_t)live[i].p - HQ_W, h2 = l2 + live[i].foot;
        if (i != skip && lo < h2 && l2 < hi) {
            return true;
        }
    }
    return false;
}

typedef struct hq_walk_model {
    const hq_live_t *live;
    size_t n, used, unknown;
} hq_walk_model_t;

static bool hq_walk_model(void *context, const rt_block_info_t *b)
{
    hq_walk_model_t *w = context;
    if (b->used) {
        w->used++;
        bool found = false;
        for (size_t i = 0; i < w->n && !found; i++) {
            found = w->live[i].p == b->pointer && w->live[i].foot == b->footprint;
        }
        w->unknown += !found;
    }
    return true;
}

static void test_model(uint64_t ops, uint64_t seed)
{
    hq_t f;
    if (!hq_open(&f, 64u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    rt_heap_t *h = f.h;
    static hq_live_t live[HQ_MODEL_SLOTS];
    size_t n = 0, used = 0;
    uint64_t next_id = 1, hits = 0, predicted = 0, ooms = 0;
    unsigned failures = 0;
    tl_rng_t r = tl_rng_seed(seed);
    for (uint64_t i = 0; i < ops && failures < 10u; i++) {
        /* phases: fill towards the slots' limit (exhausting the heap), then drain */
        const bool filling = ((i / 3000u) & 1u) == 0u;
        const unsigned op = (unsigned)tl_range(&r, 0, 99);
        const bool alloc = n == 0u || (n < HQ_MODEL_SLOTS && op < (filling ? 62u : 40u));
        bool ok = true;
        if (alloc) {
            const unsigned kind = (unsigned)tl_range(&r, 0, 99); /* < 70 malloc, < 80 calloc, < 90 memalign, realloc */
            size_t s = tl_chance(&r, 60) ? tl_range(&r, 1, RT_HEAP_QUICK_MAX_REQUEST) : tl_range(&r, 1, 600);
            const size_t B = hq_block(s);
            if (kind >= 90u && n != 0u) {
                /* realloc a live block */
                size_t k = tl_range(&r, 0, n - 1u);
                hq_live_t *e = &live[k];
                ok &= TL_CHECK(tl_verify(e->p, e->n, e->id) == e->n, "model %" PRIu64 ": block %p overwritten", i,
                               (void *)e->p);
                unsigned char *q = rt_heap_realloc(h, e->p, s);
                if (q == NULL) {
                    ooms++;
                    ok &= TL_CHECK(tl_verify(e->p, e->n, e->id) == e->n, "model: a failed realloc changed the block");
                    ok &= TL_CHECK(hq_count(h) == 0u, "model %" PRIu64 ": realloc failed with %u blocks cached", i,
                                   hq_count(h));
                } else {
                    size_t keep = e->n < s ? e->n : s;
                    ok &=
                        TL_CHECK(tl_verify(q, keep, e->id) == keep, "model %" PRIu64 ": realloc lost the contents", i);
                    size_t foot = rt_heap_usable_size(h, q) + HQ_W;
                    ok &= TL_CHECK(((uintptr_t)q & (HQ_A - 1u)) == 0u && foot >= B &&
                                       !hq_model_overlaps(live, n, k, q, foot),
                                   "model %" PRIu64 ": realloc gave a block that is misaligned or overlaps", i);
                    used = used - e->foot + foot;
                    e->p = q;
                    e->n = s;
                    e->foot = foot;
                    e->id = next_id++;
                    tl_fill(q, s, e->id);
                }
            } else {
                size_t align = kind >= 80u ? (size_t)1 << tl_range(&r, 3, 7) : HQ_A;
                rt_blk *head = B <= HQ_QMAX ? hq_head(h, B) : NULL;
                const bool from_list = head != NULL && align <= HQ_A;
                unsigned char *p = kind < 70u   ? rt_heap_malloc(h, s)
                                   : kind < 80u ? rt_heap_calloc(h, 1, s)
                                                : rt_heap_memalign(h, align, s);
                if (from_list) {
                    predicted++;
                    ok &= TL_CHECK(p == blk_payload(head) && rt_heap_last_probes(h) == 1u,
                                   "model %" PRIu64 ": request %zu with block %p on its list got %p", i, s,
                                   blk_payload(head), (void *)p);
                }
                if (p == NULL) {
                    /* out of memory only once every cached block was given back */
                    ooms++;
                    ok &= TL_CHECK(hq_count(h) == 0u, "model %" PRIu64 ": request %zu failed with %u blocks cached", i,
                                   s, hq_count(h));
                } else {
                    hits += from_list;
                    size_t foot = rt_heap_usable_size(h, p) + HQ_W;
                    ok &= TL_CHECK(((uintptr_t)p & (align - 1u)) == 0u && foot >= B &&
                                       !hq_model_overlaps(live, n, n, p, foot),
                                   "model %" PRIu64 ": a block that is misaligned or overlaps a live one", i);
                    if (kind >= 70u && kind < 80u) {
                        bool zero = true;
                        for (size_t j = 0; j < s && zero; j++) {
                            zero = p[j] == 0u;
                        }
                        ok &= TL_CHECK(zero, "model %" PRIu64 ": calloc not zeroed", i);
                    }
                    live[n].p = p;
                    live[n].n = s;
                    live[n].foot = foot;
                    live[n].id = next_id++;
                    tl_fill(p, s, live[n].id);
                    n++;
                    used += foot;
                }
            }
        } else {
            size_t k = tl_range(&r, 0, n - 1u);
            hq_live_t e = live[k];
            ok &= TL_CHECK(tl_verify(e.p, e.n, e.id) == e.n, "model %" PRIu64 ": block %p overwritten", i, (void *)e.p);
            /* level 0 caches no block whose header says PREV_FREE (facade_free: with no tag, only
             * the index's free can prove that flag) */
            const bool cache = e.foot <= HQ_QMAX && h->quick->room != 0u &&
                               (RT_HARDENING >= 1 || (hq_hdr(e.p)->head & BLK_PREV_FREE) == 0u);
            const unsigned before = hq_count(h);
            rt_heap_free(h, e.p);
            if (cache) {
                ok &= TL_CHECK(hq_head(h, e.foot) == hq_hdr(e.p) && hq_count(h) == before + 1u,
                               "model %" PRIu64 ": a free of %zu bytes with room was not cached", i, e.foot);
            } else {
                ok &=
                    TL_CHECK(hq_count(h) == before && !hq_cached(h, e.p),
                             "model %" PRIu64 ": a free of %zu bytes was cached (room %u)", i, e.foot, h->quick->room);
            }
            live[k] = live[--n];
            used -= e.foot;
        }
        ok &= TL_CHECK(h->used == used && h->mallocs - h->frees == n && h->quick->room <= h->quick->limit,
                       "model %" PRIu64 ": used %zu (model %zu), %" PRIu64 " live (model %zu)", i, h->used, used,
                       h->mallocs - h->frees, n);
        /* now and then: the calls around the lists */
        const unsigned extra = (unsigned)tl_range(&r, 0, 999);
        if (extra == 0u) {
            rt_heap_flush(h);
            ok &= TL_CHECK(hq_lists_empty(h), "model: flush");
        } else if (extra == 1u) {
            static const unsigned limits[] = {0, 1, 3, 16, 128, RT_HEAP_QUICK_MAX_LIMIT, 5000};
            unsigned want = limits[tl_range(&r, 0, 6)];
            unsigned got = rt_heap_set_quick_limit(h, want);
            ok &= TL_CHECK(got == (want < RT_HEAP_QUICK_MAX_LIMIT ? want : RT_HEAP_QUICK_MAX_LIMIT) &&
                               h->quick->limit == got && hq_count(h) <= got,
                           "model: set_quick_limit(%u) = %u", want, got);
        } else if (extra == 2u) {
            ok &= TL_CHECK(hq_stats(h, h->mallocs, h->frees, used, n, SIZE_MAX), "model %" PRIu64 ": stats", i);
        } else if (extra == 3u) {
            hq_walk_model_t w = {live, n, 0, 0};
            rt_heap_walk(h, hq_walk_model, &w);
            ok &=
                TL_CHECK(w.used == n && w.unknown == 0u && hq_lists_empty(h),
                         "model %" PRIu64 ": walk: %zu used blocks (model %zu), %zu unknown", i, w.used, n, w.unknown);
        }
        if (i % 1024u == 1023u) {
            ok &= TL_CHECK(rt_heap_check(h), "model %" PRIu64 ": check", i);
        }
        if (!ok) {
            failures++;
            printf("  model: seed %" PRIu64 ", op %" PRIu64 " (replay: heap_quick %" PRIu64 " %" PRIu64 ")\n", seed, i,
                   i + 1u, seed);
        }
    }
    for (size_t k = 0; k < n; k++) {
        TL_CHECK(tl_verify(live[k].p, live[k].n, live[k].id) == live[k].n, "model: block overwritten at the end");
        rt_heap_free(h, live[k].p);
    }
    TL_CHECK(rt_heap_check(h) && hq_stats(h, h->mallocs, h->frees, 0, 0, 1), "model: one free block at the end");
    TL_CHECK(f.rec.n == 0u && f.rec.checks == 0u, "model: no reports (%s)", hq_seen(&f));
    TL_CHECK(ops < 10000u || (hits > ops / 20u && predicted == hits && ooms > 0u),
             "model: %" PRIu64 " hits of %" PRIu64 " predicted, %" PRIu64 " out of memory", hits, predicted, ooms);
    printf("model: %" PRIu64 " ops, seed %" PRIu64 ": %" PRIu64 " quick-list hits, %" PRIu64 " out of memory\n", ops,
           seed, hits, ooms);
    hq_close(&f);
}

/* --------------------------------------------------------------------------------------------- */

/* A realloc that slides the block down into its free predecessor (facade_realloc) leaves the
 * old header inside the new block or its free tail: it must be made stale, or a later free of the
 * old pointer finds a valid used header there. tlsfq's push checks no neighbour, so it would take
 * that block (found by the fuzzer: regressions/tlsfq-realloc-slide-stale-header); tlsf refuses it
 * by its predecessor check. Both must report the stale free and change nothing. */
/* The bound in bytes (rt_heap_set_quick_share): with the default share a freed small block is
 * cached only while the cached bytes stay within (bytes in use) >> RT_HEAP_QUICK_SHARE_LOG2;
 * the rest go to the index. Lifting the bound caches up to the limit in blocks; setting it again
 * gives back what is above it. */
static void test_share(void)
{
    hq_t f;
    if (!hq_open(&f, 256u << 10, RT_INDEX_TLSFQ)) {
        return;
    }
    rt_heap_t *h = f.h;
    TL_CHECK(rt_heap_set_quick_share(h, RT_HEAP_QUICK_SHARE_LOG2) == 0u, "share: the fixture lifted the bound");
    enum { BALLAST = 32, SMALL = 64 };
    void *ballast[BALLAST], *small[SMALL];
    for (unsigned i = 0; i < BALLAST; i++) {
        ballast[i] = rt_heap_malloc(h, 2000);
    }
    for (unsigned i = 0; i < SMALL; i++) {
        small[i] = rt_heap_malloc(h, 100);
    }
    TL_CHECK(ballast[BALLAST - 1] != NULL && small[SMALL - 1] != NULL, "share: setup");
    unsigned cached = 0, kept_out = 0;
    for (unsigned i = 0; i < SMALL; i++) {
        unsigned before = hq_count(h);
        rt_heap_free(h, small[i]);
        bool in = hq_count(h) == before + 1u;
        cached += in;
        kept_out += !in;
        /* the rule holds at each caching free, the freed block still counted in use (later frees
         * to the index lower the bytes in use; what waits then stays as it was) */
        TL_CHECK(!in || h->quick->bytes <= (h->used + hq_block(100)) >> RT_HEAP_QUICK_SHARE_LOG2,
                 "share: free %u cached: %zu bytes cached, %zu used", i, h->quick->bytes, h->used);
    }
    TL_CHECK(cached > 0u && kept_out > 0u, "share: %u blocks cached, %u given to the index", cached, kept_out);
    TL_CHECK(rt_heap_set_quick_share(h, 0) == RT_HEAP_QUICK_SHARE_LOG2, "share: previous setting returned");
    for (unsigned i = 0; i < SMALL; i++) {
        small[i] = rt_heap_malloc(h, 100);
    }
    for (unsigned i = 0; i < SMALL; i++) {
        rt_heap_free(h, small[i]);
    }
    TL_CHECK(hq_count(h) == SMALL || hq_count(h) == h->quick->limit, "share 0: every small block cached (%u)",
             hq_count(h));
    TL_CHECK(rt_heap_set_quick_share(h, RT_HEAP_QUICK_SHARE_LOG2) == 0u &&
                 h->quick->bytes <= h->used >> RT_HEAP_QUICK_SHARE_LOG2 && f.rec.n == 0u,
             "share: set again, the blocks above the bound given back (%zu cached, %zu used)", h->quick->bytes,
             h->used);
    TL_CHECK(rt_heap_check(h), "share: check");
    for (unsigned i = 0; i < BALLAST; i++) {
        rt_heap_free(h, ballast[i]);
    }
    hq_close(&f);
}

static void test_stale_after_slide(void)
{
    const rt_index_t idx[] = {RT_INDEX_TLSFQ, RT_INDEX_TLSF};
    for (size_t k = 0; k < sizeof idx / sizeof idx[0]; k++) {
        hq_t f;
        if (!hq_open(&f, 16u << 10, idx[k])) {
            return;
        }
        rt_heap_t *h = f.h;
        /* [front][d][after][rest free], front above the largest cached size so that its free
         * makes a free predecessor in the index (a memalign's gap would depend on where the
         * buffer lies: an 'after' that lands in the gap leaves d a free successor to grow into) */
        unsigned char *front = rt_heap_malloc(h, 600);
        unsigned char *d = rt_heap_malloc(h, 7);
        unsigned char *after = rt_heap_malloc(h, 4000); /* d's successor stays used */
        rt_heap_free(h, front);
        TL_CHECK(d != NULL && after != NULL && blk_prev_is_free(hq_hdr(d)) && hq_hdr(after) == blk_next(hq_hdr(d)),
                 "slide (%s): a free predecessor, a used successor", rt_index_name(idx[k]));
        hq_rec_reset(&f);
        unsigned char *moved = rt_heap_realloc(h, d, 2u * BLK_MIN); /* more than d's block holds: slides */
        TL_CHECK(moved != NULL && moved < d && f.rec.n == 0u, "slide (%s): realloc slid the block down",
                 rt_index_name(idx[k]));
        rt_heap_free(h, d); /* the old pointer: stale */
        TL_CHECK(f.rec.n == 1u && rt_heap_check(h), "slide (%s): a stale free after the slide: %s",
                 rt_index_name(idx[k]), hq_seen(&f));
        rt_heap_free(h, moved);
        rt_heap_free(h, after);
        TL_CHECK(rt_heap_check(h), "slide (%s): check at the end", rt_index_name(idx[k]));
        hq_close(&f);
    }
}

int main(int argc, char **argv)
{
    uint64_t ops = TL_DEBUG_WALKS ? 50000u : 200000u, seed = 1;
    if ((argc > 1 && !tl_parse_u64(argv[1], &ops)) || (argc > 2 && !tl_parse_u64(argv[2], &seed)) || argc > 3) {
        fprintf(stderr, "usage: heap_quick [model ops [seed]]\n");
        return 2;
    }
    printf("heap_quick: W %zu, A %zu, smallest block %zu, largest cached block %zu, %zu lists, RT_HARDENING %d, "
           "RT_DEBUG %d\n",
           (size_t)HQ_W, (size_t)HQ_A, (size_t)BLK_MIN, (size_t)HQ_QMAX, (size_t)HQ_NCLASS, (int)RT_HARDENING,
           (int)RT_DEBUG);
    test_hit();
    test_classes();
    test_default_limits();
    test_limit();
    test_other_indexes();
    test_flush_on_failure();
    test_double_free();
    test_uaf_links();
    test_forged_links();
    test_flush_meets_damage();
    test_header_byte();
    test_overflow_into_cached();
    test_locks();
    test_stale_after_slide();
    test_share();
#if HQ_THREADS
    test_threads(20000ul);
#endif
    test_model(ops, seed);
    return tl_summary("heap_quick");
}
