/*
 * heap_internal.h -- the bottom of the heap: its control structure, the O(1) checks every call
 * makes before it trusts a word (hardening), pointer validation and the walk step. Self-contained
 * over block/ and base/: nothing here calls into heap_common.c (whose exports are declared in
 * heap_common.h, one step up), so the facade and heap_common.c both stand on this header.
 */
#ifndef RT_HEAP_INTERNAL_H
#define RT_HEAP_INTERNAL_H

#include "block/block.h"
#include "base/hooks.h"
#include "front/front.h"

/* What the generic entry points and heap_common.c need from a backend: its compiled facade
 * (for run-time dispatch) and three index functions used off the hot path. */
typedef struct rt_heap_ops {
    rt_index_t index;
    const char *(*name)(void);
    size_t control_size; /* sizeof the backend's whole control structure */
    void *(*malloc)(rt_heap_t *heap, size_t size);
    void (*free)(rt_heap_t *heap, void *ptr);
    void *(*realloc)(rt_heap_t *heap, void *ptr, size_t size);
    void *(*calloc)(rt_heap_t *heap, size_t count, size_t size);
    void *(*memalign)(rt_heap_t *heap, size_t alignment, size_t size);
    void (*insert)(rt_heap_t *heap, rt_blk *b);
    void (*reset)(rt_heap_t *heap);
    /* Visits every indexed block once and checks the index's own links, bitmaps and that each
     * block sits in the list its size maps to. */
    bool (*check_index)(rt_heap_t *heap, rt_idx_visit_fn visit, void *context);
    /* The largest block size (header included) a request may need and still be served by a
     * free block of `size` bytes: size itself, except for TLSF (the start of size's slot, as the
     * search rounds up) and half-fit (the power of two below size). */
    size_t (*fit_limit)(size_t size);
    /* The largest block size that a request may need and still be served by the first block of
     * a list, beyond fit_limit (TLSF's good fit within the slot); 0 when the index has none. */
    size_t (*head_fit)(rt_heap_t *heap);
    /* Quick lists (rt_tlsfq): the offset of the heap's rt_quick_t in its control structure (0:
     * the backend has none), and the function that gives every cached block back to the index
     * (called with the lock held). */
    size_t quick_offset;
    void (*quick_flush)(rt_heap_t *heap, const char *operation);
} rt_heap_ops_t;

typedef struct rt_pool {
    uintptr_t lo;   /* first + 1 and end - first - 1: a payload address a lies in the pool */
    uintptr_t span; /* iff a - lo < span (one unsigned compare) */
    rt_blk *first;  /* header of the first block */
    rt_blk *end;    /* the sentinel header */
    uintptr_t words; /* (end - first) / W: a word at address a lies in [first, end] iff
                        rotr(a - first, log2 W) <= words (heap_word_ok) */
} rt_pool_t;

/* Quick lists (RT_INDEX_TLSFQ, rtalloc/heap.h): a freed block of at most HEAP_QUICK_MAX_BLOCK
 * bytes waits, unmerged, on the LIFO list of its exact size, and a malloc of that size takes it
 * back without touching the index. A cached block keeps its used header with MARK set (so a
 * neighbour's free sees it as used and does not merge, and a second free of it is refused), and
 * holds the link to the next block of its list in its first payload word, XORed with the heap's
 * key. At most `limit` blocks are cached (rt_heap_set_quick_limit). */
#define HEAP_QUICK_MAX_BLOCK ((RT_HEAP_QUICK_MAX_REQUEST + BLK_W + BLK_A - 1u) & ~(BLK_A - 1u))
#define HEAP_QUICK_CLASSES ((HEAP_QUICK_MAX_BLOCK - BLK_MIN) / BLK_A + 1u)
_Static_assert(HEAP_QUICK_MAX_BLOCK >= BLK_MIN, "quick lists: the largest cached block");
typedef struct rt_quick {
    unsigned room;                     /* blocks that may still be cached: limit - cached */
    unsigned limit;                    /* the most that may be cached */
    rt_blk *head[HEAP_QUICK_CLASSES];  /* class c: blocks of BLK_MIN + c * A bytes */
} rt_quick_t;
static inline unsigned heap_quick_count(const rt_quick_t *q) { return q->limit - q->room; }

/* Hardening: bytes kept free of metadata before each pool's first block and after its sentinel
 * (filled with RT_HEAP_GUARD_BYTE, checked by rt_heap_check), so that a write of up to 16 bytes
 * before the first block or past the last one meets no metadata: neither the control structure
 * nor anything outside the buffer. */
#define RT_HEAP_GUARD RT_HEAP_POOL_GUARD
#define RT_HEAP_GUARD_BYTE 0xA5u

/* A report met while the heap's lock is held: the handler must run after the unlock (rtalloc/
 * common.h), so heap_defer counts it at once and keeps it here, and the public call that took the
 * lock delivers it once it has let go (heap_deliver). Up to HEAP_PENDING are kept per call (a
 * flush can meet several damaged lists); any more are counted only. */
#define HEAP_PENDING 4u
typedef struct heap_pending {
    const char *operation;
    const void *ptr;
    rt_error_kind_t kind;
} heap_pending_t;

struct rt_heap {
    const rt_heap_ops_t *ops;
    size_t key;          /* the header tags' key (block.h); nonzero in its low bits */
    uintptr_t span_lo;   /* the control structure and pool 0 (contiguous): a word at address a */
    uintptr_t span_words; /* lies in them iff rotr(a - span_lo, log2 W) < span_words */
    size_t max_request;  /* largest malloc that any pool could ever serve */
    size_t used;         /* bytes in used blocks (used blocks: mallocs - frees) */
    uintptr_t high;      /* highest block end ever handed out */
    unsigned last_probes;
    unsigned npools;
    rt_hooks_t hooks;
    size_t capacity;
    size_t peak_used;
    size_t max_block;    /* largest pool's block */
    rt_quick_t *quick;   /* the quick lists, or NULL (every backend but rt_tlsfq) */
    unsigned npending;
    heap_pending_t pending[HEAP_PENDING];
    uint64_t mallocs, frees, reallocs, reallocs_in_place;
    rt_pool_t pools[RT_HEAP_MAX_POOLS];
    /* the backend's index state follows (see facade.inc) */
};

/* The block after b on its quick list (NULL at the end): b's first payload word XOR the key. */
static inline rt_blk *heap_quick_next(const rt_heap_t *h, rt_blk *b)
{
    return (rt_blk *)(*(uintptr_t *)(void *)((char *)b + BLK_W) ^ h->key);
}

/* Successful mallocs and frees, as the statistics count them (a push is a free, a pop a malloc). */
static inline uint64_t heap_mallocs(const rt_heap_t *h) { return h->mallocs; }
static inline uint64_t heap_frees(const rt_heap_t *h) { return h->frees; }

static inline uintptr_t heap_lock(rt_heap_t *h) { return rt_hooks_lock(&h->hooks); }
static inline void heap_unlock(rt_heap_t *h, uintptr_t token) { rt_hooks_unlock(&h->hooks, token); }

/* Block size for a payload request; size must be <= RT_HEAP_MAX_REQUEST. */
static inline size_t heap_block_size(size_t size)
{
    size_t need = (size + BLK_W + BLK_A - 1u) & ~(BLK_A - 1u);
    return need < BLK_MIN ? BLK_MIN : need;
}

/* Books a block handed out. */
static inline void heap_account_alloc(rt_heap_t *h, rt_blk *b, size_t size)
{
    uintptr_t end = (uintptr_t)b + size;
    h->used += size;
    h->mallocs++;
    if (h->used > h->peak_used) {
        h->peak_used = h->used;
    }
    if (end > h->high) {
        h->high = end;
    }
}

/* The pool holding payload address a, or NULL: a must lie in (first, end). One unsigned compare
 * per pool, at most RT_HEAP_MAX_POOLS. */
RT_HOT const rt_pool_t *heap_pool_of(const rt_heap_t *h, uintptr_t a)
{
    const rt_pool_t *pool = h->pools; /* pool 0 always exists: test it before looping */
    if (a - pool->lo < pool->span) {
        return pool;
    }
    for (const rt_pool_t *last = pool + h->npools; ++pool < last;) {
        if (a - pool->lo < pool->span) {
            return pool;
        }
    }
    return NULL;
}

/* The block after x in a walk of pool, or NULL when x's size is not sane (a corrupted heap: the
 * walks stop there instead of running off the pool). */
static inline rt_blk *heap_walk_next(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *x)
{
    size_t size = blk_size(x);
    if (!blk_head_ok(h->key, x->head) || size < BLK_MIN || (size & (BLK_A - 1u)) != 0u || size > (size_t)((char *)pool->end - (char *)x)) {
        return NULL;
    }
    return blk_offset(x, size);
}

/* O(blocks of the pool): for RT_DEBUG >= 2 only. */
static inline bool heap_is_block_start(const rt_heap_t *h, const rt_pool_t *pool, const rt_blk *b)
{
    for (rt_blk *x = pool->first; x != NULL && x < pool->end; x = heap_walk_next(h, pool, x)) {
        if (x == b) {
            return true;
        }
    }
    return false;
}

/* --- hardening: which words may be read, and list membership ------------------------------ */

static inline uintptr_t heap_rotr(uintptr_t x, unsigned k)
{
    return (x >> k) | (x << ((8u * sizeof(uintptr_t) - k) & (8u * sizeof(uintptr_t) - 1u)));
}
#define HEAP_W_LOG2 (sizeof(size_t) == 8u ? 3u : 2u)
_Static_assert(sizeof(size_t) == 4u || sizeof(size_t) == 8u, "word size");

/* True iff a is a word-aligned address of a word inside the heap: the control structure or a
 * pool (its sentinel included). One subtract, rotate and compare for pool 0 -- a misaligned a
 * rotates its low bits to the top and fails the same compare -- then one per further pool
 * (inline: a call here would cost every caller a stack frame). */
RT_HOT bool heap_word_ok(const rt_heap_t *h, uintptr_t a)
{
    if (__builtin_expect(heap_rotr(a - h->span_lo, HEAP_W_LOG2) < h->span_words, 1)) {
        return true;
    }
    for (unsigned i = 1; i < h->npools; i++) {
        if (heap_rotr(a - (uintptr_t)h->pools[i].first, HEAP_W_LOG2) <= h->pools[i].words) {
            return true;
        }
    }
    return false;
}

/* b: a block whose (verified) header says free. True iff it is a member of a list: its pprev is
 * a word of the heap that points at b, and its next is NULL or a block whose pprev points back
 * at b->next. Reads only words of the heap, writes nothing: the safe unlinking that lets no
 * forged link turn a later unlink into a write outside the heap. RT_HARDENING 0: true. */
RT_HOT bool heap_linked(const rt_heap_t *h, const rt_blk *b)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    rt_blk *next = b->next;
    rt_blk **pprev = b->pprev;
    if (!heap_word_ok(h, (uintptr_t)pprev) || *pprev != b) {
        return false;
    }
    return next == NULL ||
           (heap_word_ok(h, (uintptr_t)next + offsetof(rt_blk, pprev)) && next->pprev == &((rt_blk *)(uintptr_t)b)->next &&
            (RT_HARDENING < 2 || (blk_head_ok(h->key, next->head) && (next->head & BLK_FREE) != 0u)));
}

/* Level 2 (RT_HARDENING >= 2): a free block of `size` bytes also proves itself by its boundary
 * tags: its footer equals its size, and its successor's header is tagged and says PREV_FREE.
 * Three loads and compares more per free block a call acts on. */
RT_HOT bool heap_free_proven(const rt_heap_t *h, const rt_blk *b, size_t size)
{
    const rt_blk *succ = (const rt_blk *)(const void *)((const char *)b + size);
    if (!heap_word_ok(h, (uintptr_t)succ)) {
        return false;
    }
    size_t shead = succ->head;
    return blk_prev_size(succ) == size && blk_head_ok(h->key, shead) && (shead & BLK_PREV_FREE) != 0u;
}

/* n: a free block of `size` bytes that heap_validate proved. True iff its successor -- the block
 * a call that absorbs n will sit next to, and whose header it will read and change -- has a
 * tagged used header with PREV_FREE set (it lies in the pool: heap_validate bounded n's size). */
RT_HOT bool heap_succ_ok(const rt_heap_t *h, const rt_blk *n, size_t size)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    size_t shead = ((const rt_blk *)(const void *)((const char *)n + size))->head;
    return blk_head_ok(h->key, shead) && (shead & (BLK_FREE | BLK_PREV_FREE)) == BLK_PREV_FREE;
}

/* b: reached through `slot` while walking a list (slot = the head, or the previous block's
 * next). True iff b's fields lie in the heap, its header is a tagged free header and its pprev
 * is slot: the walk may read its size and follow its next. RT_HARDENING 0: true. */
RT_HOT bool heap_member(const rt_heap_t *h, const rt_blk *b, rt_blk *const *slot)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    return heap_word_ok(h, (uintptr_t)b + offsetof(rt_blk, pprev)) && heap_word_ok(h, (uintptr_t)b) &&
           blk_head_ok(h->key, b->head) && (b->head & BLK_FREE) != 0u && b->pprev == slot;
}

/* Header bits that must be clear in a used block's header, beyond FREE: MARK and the size bits
 * below A (A >= 8, so bits 0-2 are the flags). */
#define BLK_BAD_BITS (BLK_MARK | ((BLK_A - 1u) & ~BLK_FLAGS))

/* What validation learnt about a live block, reused by free so nothing is loaded twice. */
typedef struct blk_view {
    rt_blk *b;
    size_t data;      /* b's size | flags (PREV_FREE kept: release needs it) */
    rt_blk *next;
    size_t next_data; /* the successor's size | flags */
} blk_view;

/* True iff d, a decoded header (blk_decode), is a valid header with FREE clear: one rotate and
 * one compare -- FREE (bit 0) rotates to the top, and a word that is no header decodes above
 * BLK_DATA_MASK. */
static inline bool heap_used_data_ok(size_t d) { return heap_rotr(d, 1) <= (BLK_DATA_MASK >> 1); }

/* The pool of payload address a when a is not in pool 0 (cold: pool 0 is tested inline). */
static inline const rt_pool_t *heap_pool_rest(const rt_heap_t *h, uintptr_t a)
{
    for (const rt_pool_t *pool = h->pools + 1, *last = h->pools + h->npools; pool < last; pool++) {
        if (a - pool->lo < pool->span) {
            return pool;
        }
    }
    return NULL;
}

/* Decides in O(1) whether p is a live block of h that free may give back, in two stages.
 * Stage 1 (heap_validate_head): the pool, the header's tag, flags and size, and the successor's
 * tag -- an overflow of p's block into it is caught here. Each costs one compare where it can:
 * the pool one, the block's own header (tag and FREE) one, the successor's header one. True and
 * *v, *pool filled if they hold; false says nothing of why (heap_diagnose, cold, tells).
 * quick: a header with MARK is refused too (a block waiting on a quick list). Only a heap with
 * quick lists can hold one outside rt_heap_check, so the others pass false and save the test. In two halves: heap_validate_own (the pool and
 * the block's own header) and heap_validate_succ (its size and its successor's header), so that
 * the quick lists' free can decide between its two paths in between. */
/* The pool of payload address p, when p is an A-aligned address inside one (else NULL). */
RT_HOT const rt_pool_t *heap_pool_aligned(const rt_heap_t *h, void *p)
{
    uintptr_t a = (uintptr_t)p;
    const rt_pool_t *pool = h->pools;
    if (__builtin_expect(a - pool->lo >= pool->span, 0)) {
        pool = heap_pool_rest(h, a);
        if (pool == NULL) {
            return NULL;
        }
    }
    return (a & (BLK_A - 1u)) == 0u ? pool : NULL;
}

/* True iff d, a block's decoded header, is a used header free may take (see below). */
static inline bool heap_own_ok(size_t d, bool quick)
{
    return quick ? d <= BLK_DATA_MASK && (d & (RT_HARDENING < 1 ? BLK_BAD_BITS | BLK_FREE : BLK_FREE | BLK_MARK)) == 0u
                 : heap_used_data_ok(d) && (RT_HARDENING >= 1 || (d & BLK_BAD_BITS) == 0u);
}

RT_HOT bool heap_validate_own(const rt_heap_t *h, void *p, bool quick, const rt_pool_t **pool_out, size_t *d_out)
{
    const rt_pool_t *pool = heap_pool_aligned(h, p);
    if (pool == NULL) {
        return false;
    }
    size_t d = blk_decode(h->key, blk_from_payload(p)->head);
    if (!heap_own_ok(d, quick)) {
        return false; /* no header, FREE, or (quick) MARK: a block waiting on a quick list */
    }
    *pool_out = pool;
    *d_out = d;
    return true;
}

/* The second half of stage 1, for b whose own header (decoded: d) passed heap_validate_own: its
 * size fits the pool, and its successor's header is tagged. Fills *v. */
RT_HOT bool heap_validate_succ(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *b, size_t d, blk_view *v)
{
    size_t size = blk_head_size(d);
    size_t room = (size_t)((char *)pool->end - (char *)b);
    if (size < BLK_MIN || size > room) {
        return false;
    }
    rt_blk *next = blk_offset(b, size);
    size_t nd = blk_decode(h->key, next->head);
    if (nd > BLK_DATA_MASK) { /* not a header: a corrupted size, or an overflow into it */
        return false;
    }
    if (RT_HARDENING < 1) { /* level 0 has no tag: the successor's plausibility stands in for it */
        size_t nsize = blk_head_size(nd);
        if ((nd & ((BLK_BAD_BITS & ~BLK_MARK) | BLK_PREV_FREE)) != 0u || nsize > room - size ||
            (nsize < BLK_MIN && next != pool->end)) {
            return false;
        }
    }
    if (RT_DEBUG >= 2 && !heap_is_block_start(h, pool, b)) {
        return false;
    }
    v->b = b;
    v->data = d;
    v->next = next;
    v->next_data = nd;
    return true;
}

RT_HOT bool heap_validate_head(const rt_heap_t *h, void *p, blk_view *v, const rt_pool_t **pool_out, bool quick)
{
    size_t d;
    return heap_validate_own(h, p, quick, pool_out, &d) && heap_validate_succ(h, *pool_out, blk_from_payload(p), d, v);
}

/* Stage 2, for a block that passed stage 1: the neighbours a call will absorb. A free successor
 * proves its size and its membership of its list (safe unlinking; its footer is not read -- the
 * merged block's footer is written over it -- but level 2 checks it, heap_free_proven). When
 * the header says the predecessor is free, its footer (read to find it), its header and its
 * membership. Nothing is written before both stages pass. */
RT_HOT bool heap_validate_neighbours(const rt_heap_t *h, const rt_pool_t *pool, const blk_view *v)
{
    rt_blk *b = v->b;
    if ((v->next_data & BLK_FREE) != 0u) {
        size_t nsize = blk_head_size(v->next_data);
        size_t room = (size_t)((char *)pool->end - (char *)v->next);
        if (nsize < BLK_MIN || nsize > room || !heap_linked(h, v->next) ||
            (RT_HARDENING >= 2 && !heap_free_proven(h, v->next, nsize))) {
            return false;
        }
    }
    if ((v->data & BLK_PREV_FREE) != 0u) {
        size_t psize = blk_prev_size(b); /* a raw word: check its alignment before using it */
        if (psize < BLK_MIN || (psize & (BLK_A - 1u)) != 0u || psize > (size_t)((char *)b - (char *)pool->first)) {
            return false;
        }
        rt_blk *prev = blk_prev(b);
        if (!blk_is_free_header(h->key, prev, psize) || !heap_linked(h, prev) ||
            (RT_HARDENING >= 2 && !heap_free_proven(h, prev, psize))) {
            return false;
        }
    }
    return true;
}

/* Both stages: true iff p is a live block of h whose neighbours a free or realloc may absorb. */
RT_HOT bool heap_validate_fast(const rt_heap_t *h, void *p, blk_view *v, bool quick)
{
    const rt_pool_t *pool;
    return heap_validate_head(h, p, v, &pool, quick) && heap_validate_neighbours(h, pool, v);
}

/* With RT_DEBUG >= 2 every operation ends with a full integrity check (rt_heap_check, public).
 * A failure is reported like any corruption (RT_ERR_CORRUPTED): through the handler when there
 * is one -- an application that wrote into metadata no O(1) check has met yet learns it at once
 * -- else RT_PANIC. */
#define HEAP_DEBUG_CHECK(h) ((RT_DEBUG >= 2) ? (void)rt_heap_check(h) : (void)0)

/* A report that refuses nothing (free, usable_size, check). Cold. */
static inline void rt_heap_report(rt_heap_t *h, rt_error_kind_t kind, const char *operation, const void *ptr,
                                  size_t size)
{
    rt_hooks_report(&h->hooks, false, kind, operation, ptr, size);
}

/* A report made with the lock held (or in the middle of a change): counted now (as a failure too
 * when `refused`), delivered by heap_deliver after the unlock. */
static inline void heap_defer(rt_heap_t *h, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr)
{
    h->hooks.errors++;
    if (refused) {
        h->hooks.failures++;
    }
    if (h->npending < HEAP_PENDING) {
        h->pending[h->npending++] = (heap_pending_t){operation, ptr, kind};
    }
}

/* What the allocator front (front/front.h) needs of every backend alike; the facade adds its
 * malloc and free. */
static inline void heap_front_report(void *h, bool refused, rt_error_kind_t kind, const char *operation,
                                     const void *ptr, size_t size)
{
    rt_hooks_report(&((rt_heap_t *)h)->hooks, refused, kind, operation, ptr, size);
}
static inline size_t heap_front_max(const void *h) { return ((const rt_heap_t *)h)->max_request; }

#endif /* RT_HEAP_INTERNAL_H */
