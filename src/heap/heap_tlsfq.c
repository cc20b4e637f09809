/* SPDX-License-Identifier: MIT */
/*
 * heap_tlsfq.c -- rt_tlsfq: the TLSF heap behind quick lists for small blocks (rtalloc/heap.h,
 * RT_HEAP_QUICK_MAX_REQUEST), a layer over the facade: the facade is compiled here with the TLSF
 * index as for rt_tlsf, and the quick lists plug into its three hooks (facade.h):
 *   malloc (layer_take)      a block of a size the lists keep, from the head of its list (a hit:
 *                            no index, no split); else TLSF's malloc (heap_claim)
 *   free (layer_keep)        a small block the checker's first stage passed, while fewer than
 *                            `limit` are cached: its successor's header checked, pushed (no merge,
 *                            no index); else TLSF's free
 *   a failing malloc or memalign (layer_reclaim): every cached block back to the index, merged
 *                            with its neighbours (at most `limit` frees), and the search once more
 * The lists' state and the layout of a cached block are in heap/quick.h. Invariant: a block is
 * handed out only while its header says cached and its link's seal holds, and handing it out
 * clears that; so however a list is damaged, no block is handed out twice. Damage met on a list
 * is reported and fenced off (heap_contain, whose walk gives the cached blocks still intact back
 * to the index).
 */
#include "index/tlsf.h"
#include "heap/quick.h"

#define FACADE_LAYER 1
#define FACADE_LAYER_STATE rt_quick_t quick;
#define FACADE_NAME tlsfq_name
#define FACADE_LAYER_OPS                                                                         \
    .layer_reclaim = quick_reclaim_op, .layer_forget = quick_forget, .layer_holds = quick_holds, \
    .layer_init = quick_init
#define FACADE_MALLOC rt_tlsfq_malloc
#define FACADE_FREE rt_tlsfq_free
static const char *tlsfq_name(void) { return "tlsfq"; }
#include "heap/facade.h"

static inline rt_quick_t *heap_quick(rt_heap_t *h) { return &((heap_full *)(void *)h)->quick; }
/* Class size / A - BLK_MIN / A: written so, the compiler folds the subtraction into the address. */
static inline size_t quick_class(size_t size) { return size / BLK_A - BLK_MIN / BLK_A; }

/* True iff b, reached through a list of blocks of `size` bytes, may be taken: its payload lies in
 * a pool and is aligned (tested before b's words are read), its header is a cached block's of
 * exactly that size, and its link carries its seal. */
RT_HOT bool quick_ok(const rt_heap_t *h, rt_blk *b, size_t size)
{
    uintptr_t a = (uintptr_t)blk_payload(b);
    const rt_pool_t *pool = h->pools;
    if (__builtin_expect(a - pool->lo >= pool->span, 0) && heap_pool_rest(h, a) == NULL) {
        return false;
    }
    return (a & (BLK_A - 1u)) == 0u &&
           (blk_decode(h->key, b, b->head) | BLK_PREV_FREE) == (size | BLK_MARK | BLK_PREV_FREE) &&
           heap_quick_sealed(h, b);
}

/* b, reached on the list of blocks of `size` bytes through a verified link (the list's head, or a
 * sealed link), failed quick_ok (or is met by a containment walk). Mends what can be told apart:
 *   - a header that is no header at all (written over by the overflow of a neighbour) of a block
 *     whose link still carries its seal: written again, cached -- the seal, bound to b's address
 *     and this heap's key, says a push wrote it here, and the list led here;
 *   - the same with the link damaged too (a copy over several words), or a cached header whose
 *     link or seal is damaged (a use after free): fenced (dead) with its list's size -- the list
 *     led here, so it is a block the application freed;
 *   - any other header (a used or free block a link was aimed at): not the list's; left alone.
 * True iff b is a cached block again whose link may be followed. Cold. */
static bool quick_mend(rt_heap_t *h, rt_blk *b, size_t size)
{
    uintptr_t a = (uintptr_t)blk_payload(b);
    const rt_pool_t *pool = heap_pool_of(h, a);
    if (pool == NULL || (a & (BLK_A - 1u)) != 0u || size > (size_t)((char *)pool->end - (char *)b)) {
        return false;
    }
    size_t d = blk_decode(h->key, b, b->head);
    bool sealed = heap_quick_sealed(h, b);
    if (RT_HARDENING >= 1 && d > BLK_DATA_MASK) {
        blk_set_head(h->key, b, size | (sealed ? BLK_MARK : BLK_FENCE));
        return sealed;
    }
    if ((d | BLK_PREV_FREE) == (size | BLK_MARK | BLK_PREV_FREE)) {
        if (!sealed) {
            blk_set_head(h->key, b, size | BLK_FENCE | (d & BLK_PREV_FREE));
        }
        return sealed;
    }
    return false;
}

/* A damaged list met by malloc: reported, the damage fenced off (heap_contain; its walk gives
 * the blocks of every list back to the index), NULL. Cold. */
static void *__attribute__((noinline, cold)) quick_damaged(rt_heap_t *h, rt_quick_t *q, size_t c, rt_blk *b)
{
    heap_defer(h, true, RT_ERR_CORRUPTED, "malloc", b);
    if (RT_HARDENING < 1) { /* no containment at level 0: the list is dropped (its blocks lost) */
        q->head[c] = NULL;
    }
    heap_contain(h);
    if (h->hooks.lock == NULL) {
        heap_deliver(h);
    }
    return NULL;
}

/* malloc's hit: b, the head of class c's list, handed out as a block of `need` bytes. */
RT_HOT void *quick_pop(rt_heap_t *h, rt_quick_t *q, size_t c, rt_blk *b, size_t need)
{
    if (!quick_ok(h, b, need)) {
        return quick_damaged(h, q, c, b);
    }
    q->head[c] = heap_quick_next(h, b);
    q->room++;
    q->bytes -= need;
    blk_clear_flag(h->key, b, BLK_MARK);
    h->used += need; /* its end is below h->high already: it was handed out before */
    h->mallocs++;
    if (h->used > h->peak_used) {
        h->peak_used = h->used;
    }
    h->last_probes = 1;
    return blk_payload(b);
}

/* A miss: TLSF's malloc, out of line so that the hit needs no saved registers. */
static void *__attribute__((noinline)) quick_miss(rt_heap_t *h, size_t need) { return heap_claim(h, need); }

RT_HOT void *layer_take(rt_heap_t *h, size_t need)
{
    if (need <= HEAP_QUICK_MAX_BLOCK) {
        rt_quick_t *q = heap_quick(h);
        size_t c = quick_class(need);
        rt_blk *b = q->head[c];
        if (b != NULL) {
            return quick_pop(h, q, c, b, need);
        }
    }
    return quick_miss(h, need);
}

/* free's push: b, a vetted used block of `size` <= HEAP_QUICK_MAX_BLOCK bytes (class c), cached. */
RT_HOT void quick_push(rt_heap_t *h, rt_quick_t *q, rt_blk *b, size_t size, size_t c)
{
    uintptr_t link = (uintptr_t)q->head[c] ^ (uintptr_t)h->key;
    *heap_quick_link(b) = link;
    if (RT_HARDENING >= 1 && RT_HEAP_TAG_PLACE) {
        *heap_quick_seal_word(b) = heap_quick_seal(h, b, link);
    }
    blk_set_flag(h->key, b, BLK_MARK);
    q->head[c] = b;
    q->room--;
    q->bytes += size;
    h->used -= size;
    h->frees++;
}

/* The successor of b (a block of `size` bytes the checker's first stage passed): it lies in the
 * pool, and its header is tagged (an overflow of b into it is caught here: the index's free then
 * refuses b and reports it) -- at level 0 and in debug builds the whole of the checker's stage 1b. */
RT_HOT bool quick_succ_ok(const rt_heap_t *h, rt_blk *b, size_t size, size_t d, const rt_pool_t *pool)
{
    rt_blk *next = blk_offset(b, size);
    if (RT_HARDENING >= 1 && RT_DEBUG < 2) {
        return next <= pool->end && blk_head_ok(h->key, next, next->head);
    }
    blk_view w = {b, d, NULL, 0u, pool};
    return heap_vet_succ(h, &w) == RT_ERR_NONE;
}

/* free without lock hooks. One compare decides the push: the checker's rank of the header
 * (heap_own_rank: at most HEAP_RANK_MAX iff it is a live block no list holds) is size / A, and
 * the block is cached iff that lies in [BLK_MIN / A, HEAP_QUICK_MAX_BLOCK / A] and the lists
 * have room. At level 0 a block with PREV_FREE is not cached: with no tag, the flag may be damage
 * that only the index's free (which proves the predecessor) can see. */
RT_HOT void layer_free(rt_heap_t *h, void *ptr)
{
    const rt_pool_t *pool = heap_pool_aligned(h, ptr);
    if (pool == NULL) {
        heap_free_vet_refuse(h, ptr);
        return;
    }
    rt_blk *b = blk_from_payload(ptr);
    size_t d = blk_decode(h->key, b, b->head);
    size_t x = RT_HARDENING >= 1 ? heap_own_rank(d) : heap_rotr(d, HEAP_A_LOG2);
    rt_quick_t *q = heap_quick(h);
    if (x - BLK_MIN / BLK_A <= (HEAP_QUICK_MAX_BLOCK - BLK_MIN) / BLK_A && q->room != 0u) {
        size_t size = x << HEAP_A_LOG2;
        if (heap_quick_room(q, h->used, size) && quick_succ_ok(h, b, size, d, pool)) {
            quick_push(h, q, b, size, x - BLK_MIN / BLK_A); /* cached as it is: no merge, no index */
            HEAP_DEBUG_CHECK(h);
            return;
        }
    }
    if (heap_own_rank(d) > HEAP_RANK_MAX) {
        heap_free_vet_refuse(h, ptr);
        return;
    }
    heap_free_index_out(h, b, d, pool);
}

RT_HOT bool layer_keep(rt_heap_t *h, const blk_view *v)
{
    rt_quick_t *q = heap_quick(h);
    size_t size = blk_head_size(v->data);
    /* At level 0 a block with PREV_FREE is not cached: with no tag, the flag may be damage that
     * only the index's free (which proves the predecessor) can see. */
    if (size > HEAP_QUICK_MAX_BLOCK || q->room == 0u || !heap_quick_room(q, h->used, size) ||
        (RT_HARDENING < 1 && (v->data & BLK_PREV_FREE) != 0u)) {
        return false;
    }
    if (!quick_succ_ok(h, v->b, size, v->data, v->pool)) {
        return false;
    }
    quick_push(h, q, v->b, size, quick_class(size));
    return true;
}

/* Gives every cached block back to the index, merging it with its free neighbours (heap_release),
 * list by list. A block that is no cached block of its list, or whose neighbours fail the
 * checker, is reported (RT_ERR_CORRUPTED, `operation`; kept by heap_defer: delivered at once
 * without lock hooks, else by the caller once the lock is released) and the damage fenced off
 * (heap_contain, which gives the other cached blocks back). O(cached blocks) frees; the lock is
 * held. True iff blocks were given back and no damage was met: a malloc or memalign then tries
 * its search once more (one that met damage is refused: it reported). */
static bool layer_reclaim(rt_heap_t *h, const char *operation)
{
    rt_quick_t *q = heap_quick(h);
    unsigned counted = heap_quick_count(q), n = 0;
    if (counted == 0u) {
        return false;
    }
    bool damaged = false;
    for (size_t c = 0; c < HEAP_QUICK_CLASSES && !damaged; c++) {
        size_t size = BLK_MIN + c * BLK_A;
        rt_blk *b = q->head[c];
        for (; b != NULL && !damaged; n++) {
            if (n >= counted || !quick_ok(h, b, size)) {
                heap_defer(h, false, RT_ERR_CORRUPTED, operation, b);
                damaged = true;
                break;
            }
            rt_blk *next = heap_quick_next(h, b);
            blk_clear_flag(h->key, b, BLK_MARK);
            blk_view v;
            rt_error_kind_t kind = heap_vet(h, blk_payload(b), false, &v);
            if (kind != RT_ERR_NONE) { /* its neighbours: still cached, the walk will see to it */
                blk_set_flag(h->key, b, BLK_MARK);
                heap_defer(h, false, RT_ERR_CORRUPTED, operation, b);
                damaged = true;
                break;
            }
            q->head[c] = next;
            q->room++;
            q->bytes -= size;
            h->used += size; /* live again for a moment: heap_release books the free */
            h->frees--;
            heap_release(h, &v);
            b = next;
        }
    }
    if (damaged) {
        heap_contain(h); /* forgets the lists: every intact cached block goes back to the index */
        if (h->hooks.lock == NULL) {
            heap_deliver(h);
        }
    }
    return !damaged;
}

static void quick_reclaim_op(rt_heap_t *h, const char *operation) { (void)layer_reclaim(h, operation); }

/* Every block listed lies in a pool, is aligned, has a tagged cached header (MARK, not FREE) of
 * its list's size and a sealed link; no more blocks than counted (which ends a cycle). Returns
 * the blocks listed, or SIZE_MAX on a failure. */
static size_t quick_check(rt_heap_t *h)
{
    const rt_quick_t *q = heap_quick(h);
    size_t n = 0, bytes = 0;
    for (size_t c = 0; c < HEAP_QUICK_CLASSES; c++) {
        size_t size = BLK_MIN + c * BLK_A;
        for (rt_blk *b = q->head[c]; b != NULL; b = heap_quick_next(h, b)) {
            if (n >= heap_quick_count(q) || !quick_ok(h, b, size)) {
                return SIZE_MAX;
            }
            n++;
            bytes += size;
        }
    }
    return n == heap_quick_count(q) && bytes == q->bytes ? n : SIZE_MAX;
}

/* Before a containment walk: follows each list through verified links as long as the blocks are
 * cached blocks of its size, or can be mended (quick_mend); then empties every list. The walk
 * then gives every block whose header says cached back to the index. O(limit). */
static void quick_forget(rt_heap_t *h)
{
    rt_quick_t *q = heap_quick(h);
    unsigned counted = heap_quick_count(q), n = 0;
    for (size_t c = 0; c < HEAP_QUICK_CLASSES; c++) {
        size_t size = BLK_MIN + c * BLK_A;
        for (rt_blk *b = q->head[c]; b != NULL && n < counted; n++) {
            if (!quick_ok(h, b, size) && !quick_mend(h, b, size)) {
                break;
            }
            b = heap_quick_next(h, b);
        }
        q->head[c] = NULL;
    }
    q->room = q->limit;
    q->bytes = 0;
}

/* True iff b is on the quick list of its header's size: a walk of at most the cached count, each
 * link checked before it is followed. O(limit); for diagnosis only. */
static bool quick_holds(const rt_heap_t *h, const rt_blk *b)
{
    const rt_quick_t *q = &((const heap_full *)(const void *)h)->quick;
    size_t size = blk_size(b);
    if (size < BLK_MIN || size > HEAP_QUICK_MAX_BLOCK || (size & (BLK_A - 1u)) != 0u) {
        return false;
    }
    rt_blk *x = q->head[quick_class(size)];
    for (unsigned n = 0; x != NULL && n < heap_quick_count(q); n++) {
        uintptr_t a = (uintptr_t)blk_payload(x);
        if (x == b) {
            return true;
        }
        if (heap_pool_of(h, a) == NULL || (a & (BLK_A - 1u)) != 0u) {
            return false;
        }
        x = heap_quick_next(h, x);
    }
    return false;
}

/* The lists' limit: one cached block at most per 4 KiB of capacity, RT_HEAP_QUICK_BLOCKS at most. */
static void quick_init(rt_heap_t *h)
{
    rt_quick_t *q = heap_quick(h);
    size_t per_kib = h->capacity / 4096u;
    q->limit = per_kib < RT_HEAP_QUICK_BLOCKS ? (unsigned)per_kib : RT_HEAP_QUICK_BLOCKS;
    q->room = q->limit;
    q->bytes = 0;
    q->share = RT_HEAP_QUICK_SHARE_LOG2;
    h->quick = q;
}

void *rt_tlsfq_malloc(rt_heap_t *h, size_t size) { return facade_malloc(h, size); }
void rt_tlsfq_free(rt_heap_t *h, void *ptr) { facade_free(h, ptr); }
void *rt_tlsfq_realloc(rt_heap_t *h, void *ptr, size_t size) { return facade_realloc(h, ptr, size); }
void *rt_tlsfq_calloc(rt_heap_t *h, size_t count, size_t size) { return facade_calloc(h, count, size); }
void *rt_tlsfq_memalign(rt_heap_t *h, size_t alignment, size_t size) { return facade_memalign(h, alignment, size); }

bool heap_tlsfq_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only)
{
    return facade_check_index(h, visit, context, head_only);
}
size_t heap_tlsfq_head_fit(rt_heap_t *h) { return facade_head_fit(h); }
size_t heap_tlsfq_layer_check(rt_heap_t *h) { return quick_check(h); }

const rt_heap_ops_t rt_heap_ops_tlsfq = FACADE_OPS(RT_INDEX_TLSFQ);

rt_heap_t *rt_tlsfq_create(void *mem, size_t size) { return rt_heap_init(mem, size, &rt_heap_ops_tlsfq); }

unsigned rt_heap_set_quick_limit(rt_heap_t *h, unsigned blocks)
{
    HEAP_REQUIRE(h, "set_quick_limit", 0u);
    if (h->quick == NULL) {
        return 0;
    }
    rt_quick_t *q = heap_quick(h);
    uintptr_t token = heap_lock(h);
    blocks = blocks < RT_HEAP_QUICK_MAX_LIMIT ? blocks : RT_HEAP_QUICK_MAX_LIMIT;
    if (heap_quick_count(q) > blocks) {
        (void)layer_reclaim(h, "set_quick_limit");
    }
    q->room = blocks - heap_quick_count(q);
    q->limit = blocks;
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    return blocks;
}

unsigned rt_heap_set_quick_share(rt_heap_t *h, unsigned log2)
{
    HEAP_REQUIRE(h, "set_quick_share", 0u);
    if (h->quick == NULL) {
        return 0;
    }
    rt_quick_t *q = heap_quick(h);
    uintptr_t token = heap_lock(h);
    unsigned old = q->share;
    q->share = log2 < sizeof(size_t) * 8u ? log2 : (unsigned)(sizeof(size_t) * 8u - 1u);
    if (q->share != 0u && q->bytes > h->used >> q->share) {
        (void)layer_reclaim(h, "set_quick_share");
    }
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    return old;
}
