/* SPDX-License-Identifier: MIT */
/*
 * heap_internal.h -- the bottom of the heap: its control structure, the one checker every call
 * runs before it trusts a block (hardening), and the walk step. Self-contained over block/ and
 * base/: nothing here calls into heap_common.c (whose exports are declared in heap_common.h, one
 * step up), so the facade and heap_common.c both stand on this header.
 */
#ifndef RT_HEAP_INTERNAL_H
#define RT_HEAP_INTERNAL_H

#include "block/block.h"
#include "base/hooks.h"
#include "front/front.h"

/* What the generic entry points and heap_common.c need from a backend: its compiled facade
 * (for run-time dispatch) and the index functions used off the hot path. */
typedef struct rt_heap_ops {
    rt_index_t index;
    const char *(*name)(void);
    size_t control_size; /* sizeof the backend's whole control structure */
    /* Only what creating, malloc, free and containment need, so that a program calling only
     * those links nothing else (each backend's realloc, calloc, memalign and index check are
     * reached by index, from heap_select.c's tables, when the generic entry points are used). */
    void *(*malloc)(rt_heap_t *heap, size_t size);
    void (*free)(rt_heap_t *heap, void *ptr);
    void (*insert)(rt_heap_t *heap, rt_blk *b);
    void (*reset)(rt_heap_t *heap);
    /* The largest block size (header included) a request may need and still be served by a
     * free block of `size` bytes: size itself, except for TLSF (the start of size's slot, as the
     * search rounds up) and half-fit (the power of two below size). */
    size_t (*fit_limit)(size_t size);
    /* A layer over the facade that keeps freed blocks of its own (the quick lists of rt_tlsfq,
     * heap/quick.h; all NULL for the plain heaps). Its blocks are used blocks to the facade,
     * with MARK set in their headers ("held"). With the lock held:
     *   layer_reclaim  gives every held block back to the index (merging), `operation` naming
     *                  the call for the reports of damage it meets;
     *   layer_forget   before a containment walk (heap_contain): restores the header of each
     *                  held block it can still reach through verified links, fences each held
     *                  block whose own words are damaged, then forgets them all -- the walk
     *                  gives every held block back to the index;
     *   layer_holds    whether b is one of its blocks (a walk of its lists: diagnosis at level
     *                  0, where a header's MARK may be data);
     *   layer_init     sets its state up, once the heap and its first pool are (rt_heap_init).
     * (layer_check, the count of held blocks each verified, is reached by index: heap_select.c.) */
    void (*layer_reclaim)(rt_heap_t *heap, const char *operation);
    void (*layer_forget)(rt_heap_t *heap);
    bool (*layer_holds)(const rt_heap_t *heap, const rt_blk *b);
    void (*layer_init)(rt_heap_t *heap);
} rt_heap_ops_t;

typedef struct rt_pool {
    uintptr_t lo;    /* first + 1 and end - first - 1: a payload address a lies in the pool */
    uintptr_t span;  /* iff a - lo < span (one unsigned compare) */
    rt_blk *first;   /* header of the first block */
    rt_blk *end;     /* the sentinel header */
    uintptr_t words; /* (end - first) / W: a word at address a lies in [first, end] iff
                        rotr(a - first, log2 W) <= words (heap_word_ok) */
} rt_pool_t;

/* Hardening: bytes kept free of metadata before each pool's first block and after its sentinel
 * (filled with RT_HEAP_GUARD_BYTE, checked by rt_heap_check), so that a write of up to 32 bytes
 * before the first block's header or past the sentinel meets no metadata: neither the control
 * structure (whose last words are the index's list heads, read and written through by every
 * free) nor anything outside the buffer. 32, not 16: an overrun of up to 16 bytes that begins up
 * to 15 bytes before a block (the fuzzer's copy class) reaches 31 bytes before the payload. */
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

/* Containment (heap_contain, heap_common.c): damage a call detects is fenced off. A FENCED block
 * (header: FREE | MARK, tagged; blk_data_fenced) is never handed out, never indexed, and no merge
 * crosses it: to its neighbours it is a used block. A fenced block that was live -- a used block
 * whose header was damaged: its extent is where the next verified header stands, which cannot be
 * proven, so its memory never goes back to service -- stays the application's: a free of it is
 * accepted (counted, no report; the memory stays fenced). fenced[] remembers up to
 * RT_HEAP_FENCED fenced blocks, the live ones first (bit i of fenced_live: fenced[i] is live), so
 * that a later containment tells a fenced block whose header was damaged again from a live
 * block's; a free of a live fenced block beyond them is refused. */
#define RT_HEAP_FENCED 16u
_Static_assert(RT_HEAP_FENCED <= 32u, "fenced_live is a 32-bit mask");

struct rt_quick; /* heap/quick.h */

struct rt_heap {
    uintptr_t self; /* 0 - (the heap's address) once created: heap_created */
    const rt_heap_ops_t *ops;
    size_t key;           /* the header tags' key (block.h): a new one per create */
    uintptr_t span_lo;    /* the control structure and pool 0 (contiguous): a word at address a */
    uintptr_t span_words; /* lies in them iff rotr(a - span_lo, log2 W) < span_words */
    size_t max_request;   /* largest malloc that any pool could ever serve */
    size_t used;          /* bytes in used blocks (fenced ones excluded) */
    uintptr_t high;       /* highest block end ever handed out */
    unsigned last_probes;
    unsigned npools;
    rt_hooks_t hooks;
    size_t capacity;
    size_t peak_used;
    size_t max_block;       /* largest pool's block */
    struct rt_quick *quick; /* the quick lists, or NULL (every backend but rt_tlsfq) */
    unsigned npending;
    heap_pending_t pending[HEAP_PENDING];
    uint64_t mallocs, frees, reallocs, reallocs_in_place;
    /* containment: bytes fenced off; live blocks the walk found minus mallocs - frees (the
     * counters' view) at the last containment; the fenced blocks that are still live */
    size_t quarantined;
    uintptr_t gate; /* nonzero: every free takes the locked, fully checked path -- a lock
                             hook is set, or memory is fenced off (heap_regate) */
    int64_t live_adjust;
    rt_blk *fenced[RT_HEAP_FENCED];
    uint32_t fenced_live;
    rt_pool_t pools[RT_HEAP_MAX_POOLS];
    /* the backend's index state follows (see facade.h) */
};

/* True iff h is a created heap: not NULL (tested before any read), and its first word is what
 * rt_heap_init wrote there, the negated address (memory never created -- zeros, a vector table,
 * another object -- holds it by chance with probability 2^-w). O(1): a test, a load, a compare. */
static inline __attribute__((always_inline)) bool heap_created(const rt_heap_t *h)
{
    return __builtin_expect(h != NULL && h->self + (uintptr_t)h == 0u, 1);
}

/* The first statement of every entry point: a call on a heap pointer that is not a created heap
 * is reported (RT_ERR_BAD_HEAP, the default handler) and returns `result` (empty for void). */
#define HEAP_REQUIRE(h, operation, result)    \
    do {                                      \
        if (!heap_created(h)) {               \
            rt_report_bad_heap(operation, h); \
            return result;                    \
        }                                     \
    } while (0)

/* Live blocks, as the statistics count them. */
static inline uint64_t heap_live_blocks(const rt_heap_t *h) { return h->mallocs - h->frees + (uint64_t)h->live_adjust; }

/* Called whenever the lock hooks or the quarantine change. A heap that holds fenced memory frees
 * through the path that asks heap_fenced_holds (a header inside a fenced extent -- one of an
 * earlier moment written back there after the containment -- is no block), and so pays for the
 * question only while there is something fenced; the common free tests one word, as before. */
static inline void heap_regate(rt_heap_t *h)
{
    h->gate = (uintptr_t)(h->hooks.lock != NULL) | (uintptr_t)(h->quarantined != 0u);
}
/* True iff b lies inside (not at the start of) the extent of a fenced block that fenced[]
 * remembers (RT_HEAP_FENCED of them; a header restored inside a fenced block beyond them is not
 * seen). O(RT_HEAP_FENCED). heap_common.c. */
bool heap_fenced_holds(const rt_heap_t *h, const rt_blk *b);

static inline uintptr_t heap_lock(rt_heap_t *h) { return rt_hooks_lock(&h->hooks); }
static inline void heap_unlock(rt_heap_t *h, uintptr_t token) { rt_hooks_unlock(&h->hooks, token); }

/* Block size for a payload request; size must be <= RT_HEAP_MAX_REQUEST (the callers refuse a
 * larger one first: rt_front_realloc_edge, rt_front_memalign_args, facade_malloc). */
static inline size_t heap_block_size(size_t size)
{
    RT_INVARIANT(size <= RT_HEAP_MAX_REQUEST, "heap: a request above RT_HEAP_MAX_REQUEST wraps its block size");
    size_t need = (size + BLK_W + BLK_A - 1u) & ~(BLK_A - 1u);
    RT_INVARIANT(need - BLK_W >= size && blk_size_ok(need < BLK_MIN ? BLK_MIN : need),
                 "heap: a request's block must be a block size that holds the payload after its header");
    return need < BLK_MIN ? BLK_MIN : need;
}

/* Books a block handed out. */
static inline void heap_account_alloc(rt_heap_t *h, rt_blk *b, size_t size)
{
    RT_INVARIANT(blk_size_ok(size), "heap: a block handed out is a multiple of A, at least the smallest block");
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

/* The fenced-block header's flags (containment): a FREE block with MARK. */
#define BLK_FENCE (BLK_FREE | BLK_MARK)
/* d: a decoded header. True iff it is a free block's (FREE without MARK: not fenced). */
static inline bool blk_data_free(size_t d) { return (d & BLK_FENCE) == BLK_FREE; }
static inline bool blk_data_fenced(size_t d) { return (d & BLK_FENCE) == BLK_FENCE; }

/* The pool holding payload address a when a is not in pool 0 (cold: pool 0 is tested inline). */
static inline const rt_pool_t *heap_pool_rest(const rt_heap_t *h, uintptr_t a)
{
    /* wcet: <= RT_HEAP_MAX_POOLS - 1; the pools after pool 0 (pool_add keeps npools <= the max) */
    for (const rt_pool_t *pool = h->pools + 1, *last = h->pools + h->npools; pool < last; pool++) {
        if (a - pool->lo < pool->span) {
            return pool;
        }
    }
    return NULL;
}

/* The pool holding payload address a, or NULL: a must lie in (first, end). One unsigned compare
 * per pool, at most RT_HEAP_MAX_POOLS. */
RT_HOT const rt_pool_t *heap_pool_of(const rt_heap_t *h, uintptr_t a)
{
    const rt_pool_t *pool = h->pools; /* pool 0 always exists: test it before looping */
    return a - pool->lo < pool->span ? pool : heap_pool_rest(h, a);
}

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

/* The block after x in a walk of pool, or NULL when x's header is not sane (a corrupted heap:
 * the walks stop there instead of running off the pool). */
static inline rt_blk *heap_walk_next(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *x)
{
    size_t size = blk_size(x);
    if (!blk_head_ok(h->key, x, x->head) || size < BLK_MIN || (size & (BLK_A - 1u)) != 0u ||
        size > (size_t)((char *)pool->end - (char *)x)) {
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
    /* wcet: <= RT_HEAP_MAX_POOLS - 1; the pools after pool 0 */
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
           (heap_word_ok(h, (uintptr_t)next + offsetof(rt_blk, pprev)) &&
            next->pprev == &((rt_blk *)(uintptr_t)b)->next &&
            (RT_HARDENING < 2 || (blk_head_ok(h->key, next, next->head) && blk_data_free(blk_data(next->head)))));
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
    return blk_prev_size(succ) == size && blk_head_ok(h->key, succ, shead) && (shead & BLK_PREV_FREE) != 0u;
}

/* n: a free block of `size` bytes that the checker proved. True iff its successor -- the block
 * a call that absorbs n will sit next to, and whose header it will read and change -- has a
 * tagged header (used or fenced) with PREV_FREE set (it lies in the pool: the checker bounded
 * n's size). */
RT_HOT bool heap_succ_ok(const rt_heap_t *h, const rt_blk *n, size_t size)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    const rt_blk *s = (const rt_blk *)(const void *)((const char *)n + size);
    size_t d = blk_decode(h->key, s, s->head);
    return d <= BLK_DATA_MASK && !blk_data_free(d) && (d & BLK_PREV_FREE) != 0u;
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
           blk_head_ok(h->key, b, b->head) && blk_data_free(blk_data(b->head)) && b->pprev == slot;
}

/* --- the checker: is p a live block a call may act on? ------------------------------------- */

/* Header bits that must be clear in a used block's header, beyond FREE: MARK and the size bits
 * below A (A >= 8, so bits 0-2 are the flags). */
#define BLK_BAD_BITS (BLK_MARK | ((BLK_A - 1u) & ~BLK_FLAGS))

/* What the checker learnt about a live block, reused by the call so nothing is loaded twice. */
typedef struct blk_view {
    rt_blk *b;
    size_t data; /* b's size | flags (PREV_FREE kept: release needs it) */
    rt_blk *next;
    size_t next_data; /* the successor's size | flags */
    const rt_pool_t *pool;
} blk_view;

/* True iff d, a decoded header (blk_decode), is a valid header with FREE clear: one rotate and
 * one compare -- FREE (bit 0) rotates to the top, and a word that is no header decodes above
 * BLK_DATA_MASK. */
static inline bool heap_used_data_ok(size_t d) { return heap_rotr(d, 1) <= (BLK_DATA_MASK >> 1); }

#define HEAP_A_LOG2 ((unsigned)__builtin_ctz((unsigned)BLK_A))
/* The rank of a decoded header d: d without PREV_FREE, rotated right by log2 A. The flags FREE and
 * MARK and the size bits below A rotate to the top, and a word that is no header decodes at or
 * above 2^D and stays above: so d is the header of a live block no layer holds iff its rank is at
 * most HEAP_RANK_MAX, and the rank is then size / A (a layer decides with the same compare
 * whether it keeps the block). */
#define HEAP_RANK_MAX (BLK_DATA_MASK >> HEAP_A_LOG2)
static inline size_t heap_own_rank(size_t d) { return heap_rotr(d & ~BLK_PREV_FREE, HEAP_A_LOG2); }

/* True iff d, a block's decoded header, is a live block's the call may take. held: the heap
 * has a layer whose held blocks carry MARK (rt_tlsfq), refused too (heap_own_rank); the plain
 * heaps never write MARK into a used header outside rt_heap_check, so at level >= 1 (where a
 * header's flags cannot change unseen) they test FREE and the tag alone. */
static inline bool heap_own_ok(size_t d, bool held)
{
    return held ? heap_own_rank(d) <= HEAP_RANK_MAX
                : heap_used_data_ok(d) && (RT_HARDENING >= 1 || (d & BLK_BAD_BITS) == 0u);
}

/* Why the block at payload p, inside an A-aligned place of `pool`, is not live: its header is
 * no header (a pointer into a block, or a damaged header: RT_ERR_BAD_POINTER), or the header of
 * a free block (genuine -- a footer that agrees -- or the stale mark a merge left), or of a
 * block a layer holds: RT_ERR_DOUBLE_FREE. Cold: only a refused call comes here. */
rt_error_kind_t heap_own_error(const rt_heap_t *h, const rt_pool_t *pool, void *p) __attribute__((cold, noinline));

/* The checker, stage 1a: p is an A-aligned payload address inside a pool, and its header a live
 * block's (heap_own_ok). RT_ERR_NONE and v->b, v->data, v->pool filled, or the error
 * (RT_ERR_FOREIGN_POINTER, _BAD_POINTER, _DOUBLE_FREE; worked out on the cold path). */
RT_HOT rt_error_kind_t heap_vet_own(const rt_heap_t *h, void *p, bool held, blk_view *v)
{
    const rt_pool_t *pool = heap_pool_aligned(h, p);
    if (__builtin_expect(pool == NULL, 0)) {
        return heap_pool_of(h, (uintptr_t)p) == NULL ? RT_ERR_FOREIGN_POINTER : RT_ERR_BAD_POINTER;
    }
    rt_blk *b = blk_from_payload(p);
    size_t d = blk_decode(h->key, b, b->head);
    if (__builtin_expect(!heap_own_ok(d, held), 0)) {
        rt_error_kind_t kind = heap_own_error(h, pool, p);
        if (kind == RT_ERR_NONE) {
            __builtin_unreachable(); /* it never says "none" */
        }
        return kind;
    }
    v->b = b;
    v->data = d;
    v->pool = pool;
    return RT_ERR_NONE;
}

/* Stage 1b, after stage 1a: the block's size fits its pool, and its successor's header is
 * tagged -- an overflow of the block into it is caught here (RT_ERR_CORRUPTED). At level 0 (no
 * tag) the successor's plausibility stands in for it. Fills v->next, v->next_data. */
RT_HOT rt_error_kind_t heap_vet_succ(const rt_heap_t *h, blk_view *v)
{
    const rt_pool_t *pool = v->pool;
    rt_blk *b = v->b;
    size_t size = blk_head_size(v->data);
    size_t room = (size_t)((char *)pool->end - (char *)b);
    if (__builtin_expect(size < BLK_MIN || size > room, 0)) {
        return RT_ERR_BAD_POINTER; /* a size no block of this place can have */
    }
    rt_blk *next = blk_offset(b, size);
    size_t nd = blk_decode(h->key, next, next->head);
    if (__builtin_expect(nd > BLK_DATA_MASK, 0)) {
        return RT_ERR_CORRUPTED; /* not a header: an overflow into it (or a forged size) */
    }
    if (RT_HARDENING < 1) {
        size_t nsize = blk_head_size(nd);
        if ((nd & ((BLK_BAD_BITS & ~BLK_MARK) | BLK_PREV_FREE)) != 0u || nsize > room - size ||
            (nsize < BLK_MIN && next != pool->end)) {
            return RT_ERR_BAD_POINTER;
        }
    }
    if (RT_DEBUG >= 2 && !heap_is_block_start(h, pool, b)) {
        return RT_ERR_BAD_POINTER;
    }
    v->next = next;
    v->next_data = nd;
    return RT_ERR_NONE;
}

/* Stage 2, after stage 1: the neighbours a call will absorb. A free successor proves its size
 * and its membership of its list (safe unlinking; its footer is not read -- the merged block's
 * footer is written over it -- but level 2 checks it, heap_free_proven); a fenced successor is
 * not absorbed and needs nothing. When the header says the predecessor is free: its footer (read
 * to find it), its header -- a tagged free header of exactly that size at that place, which binds
 * the footer -- and its membership. Nothing is written before both stages pass. */
RT_HOT rt_error_kind_t heap_vet_neighbours(const rt_heap_t *h, const blk_view *v)
{
    const rt_pool_t *pool = v->pool;
    rt_blk *b = v->b;
    if (blk_data_free(v->next_data)) {
        size_t nsize = blk_head_size(v->next_data);
        size_t room = (size_t)((char *)pool->end - (char *)v->next);
        if (nsize < BLK_MIN || nsize > room || !heap_linked(h, v->next) ||
            (RT_HARDENING >= 2 && !heap_free_proven(h, v->next, nsize))) {
            return RT_ERR_CORRUPTED;
        }
    }
    if ((v->data & BLK_PREV_FREE) != 0u) {
        size_t psize = blk_prev_size(b); /* a raw word: check its alignment before using it */
        if (psize < BLK_MIN || (psize & (BLK_A - 1u)) != 0u || psize > (size_t)((char *)b - (char *)pool->first)) {
            return RT_HARDENING >= 1 ? RT_ERR_CORRUPTED : RT_ERR_BAD_POINTER;
        }
        rt_blk *prev = blk_prev(b);
        if (!blk_is_free_header(h->key, prev, psize) || !heap_linked(h, prev) ||
            (RT_HARDENING >= 2 && !heap_free_proven(h, prev, psize))) {
            return RT_HARDENING >= 1 ? RT_ERR_CORRUPTED : RT_ERR_BAD_POINTER;
        }
    }
    return RT_ERR_NONE;
}

/* The whole checker: RT_ERR_NONE and *v filled iff p is a live block of h whose neighbours a
 * free or realloc may absorb; else why not. */
RT_HOT rt_error_kind_t heap_vet(const rt_heap_t *h, void *p, bool held, blk_view *v)
{
    rt_error_kind_t kind = heap_vet_own(h, p, held, v);
    if (RT_HARDENING >= 1 && kind == RT_ERR_NONE && h->quarantined != 0u && heap_fenced_holds(h, v->b)) {
        kind = RT_ERR_BAD_POINTER;
    }
    if (kind == RT_ERR_NONE) {
        kind = heap_vet_succ(h, v);
    }
    if (kind == RT_ERR_NONE) {
        kind = heap_vet_neighbours(h, v);
    }
    return kind;
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
