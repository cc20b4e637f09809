/* SPDX-License-Identifier: MIT */
/*
 * facade.h -- the boundary-tag heap, compiled once per index with the index inlined.
 *
 * Include contract. Not a self-contained header: it defines the facade's functions (static or
 * static inline, so each translation unit has its own copy under the same written names, and
 * ctags, grep and editors see every one of them here). It is included exactly once, by one
 * heap_<name>.c, and by nothing else, in this order:
 *   1. one index header of src/index/ (tlsf.h, seglist.h, fitlist.h or halffit.h);
 *   2. FACADE_MALLOC and FACADE_FREE defined as that file's public malloc and free (rt_<name>_
 *      malloc, rt_<name>_free); a layer (below) also FACADE_LAYER, FACADE_LAYER_STATE,
 *      FACADE_LAYER_OPS and FACADE_NAME;
 *   3. this file; then the file's public entry points over facade_*, and its table (FACADE_OPS).
 *
 * The index header provides idx_t and the contract (doc/design.md, "The index contract")
 *     idx_reset, idx_insert, idx_remove, idx_find, idx_name      (+ idx_fit_limit, idx_check)
 * Dispatch to the index is thus a direct, inlinable call, and every public symbol is spelt out in
 * the including file, where grep and ctags find it.
 * facade_malloc and facade_free are always inlined into their one entry point, so the entry
 * point is the code (no extra jump); the slower paths here that need a malloc or free of the
 * same heap (realloc's move, memalign's small alignments, the front's calloc) call that entry
 * point directly instead of inlining a second copy.
 *
 * Linking: the table (FACADE_OPS) holds only what creating, malloc, free and containment need;
 * realloc, calloc, memalign, the index check and the statistics' head fit are the including
 * file's own functions, reached by name or through heap_select.c's tables. With one function per
 * section (-ffunction-sections, --gc-sections) a program that calls only create, malloc and free
 * links none of them.
 *
 * A layer over the facade (heap_tlsfq.c: the quick lists) defines FACADE_LAYER 1, its state's
 * member declaration as FACADE_LAYER_STATE, its name function as FACADE_NAME, and, after this
 * file, the hooks declared below: the facade sends malloc through the layer (layer_take), free
 * without lock hooks too (layer_free, which calls the facade's free for the blocks it does not
 * keep), offers the layer each block a locked free vetted (layer_keep), and asks it to give its
 * blocks back before a malloc or memalign fails (layer_reclaim).
 *
 * Merge cases of free (P = physical predecessor, N = successor, * = the block freed):
 *     [P used][* ][N used]  =>  [P][---free---][N]
 *     [P free][* ][N used]  =>  [----free-----][N]      P removed from the index, * goes stale
 *     [P used][* ][N free]  =>  [P][----free-----]      N removed from the index, N goes stale
 *     [P free][* ][N free]  =>  [-------free------]     both
 * A fenced neighbour (heap_internal.h, containment) is a used one here.
 */
#ifndef RT_HEAP_FACADE_H
#define RT_HEAP_FACADE_H

#ifndef RT_INDEX_LIST_H
#error "heap/facade.h: include one index header (src/index/) first"
#endif
#if !defined(FACADE_MALLOC) || !defined(FACADE_FREE)
#error "heap/facade.h: define FACADE_MALLOC and FACADE_FREE (the including file's entry points) first"
#endif

#include "heap/heap_common.h"

#define FACADE_ENTRY static inline __attribute__((always_inline))

/* An index whose find walks its lists (seglist, firstfit, bestfit) defines IDX_WALKS 1: its find
 * may return IDX_CORRUPT. The bitmap indexes never do, and their callers skip the test. */
#ifndef IDX_WALKS
#define IDX_WALKS 0
#endif
/* An index whose find may serve a request from the first block of a list below the request's
 * rounded slot (TLSF's good fit) defines IDX_GOOD_FIT 1 and idx_head_fit (the statistics'
 * largest_free counts it). */
#ifndef IDX_GOOD_FIT
#define IDX_GOOD_FIT 0
#endif

#ifndef FACADE_LAYER
#define FACADE_LAYER 0
#endif
/* Built for size (-Os), every free takes the locked, fully checked path (heap_free_locked, which
 * takes no lock without hooks): one copy of free's code instead of two. */
#ifdef __OPTIMIZE_SIZE__
#define HEAP_ONE_FREE_PATH 1
#else
#define HEAP_ONE_FREE_PATH 0
#endif
#ifndef FACADE_NAME
#define FACADE_NAME idx_name
#endif

/* The heap as the allocator front sees it (front/front.h): malloc and free through its table. */
static void *front_malloc(void *h, size_t size) { return FACADE_MALLOC((rt_heap_t *)h, size); }
static void front_free(void *h, void *ptr) { FACADE_FREE((rt_heap_t *)h, ptr); }
static const rt_front_ops_t heap_front = {front_malloc, front_free, heap_front_report, heap_front_max};

typedef struct heap_full {
    struct rt_heap base;
    idx_t idx;
#if FACADE_LAYER
    FACADE_LAYER_STATE
#endif
} heap_full;

static inline idx_t *heap_idx(rt_heap_t *h) { return &((heap_full *)(void *)h)->idx; }

#if FACADE_LAYER
/* The layer's hooks, all with the lock held (or no lock hooks):
 *   layer_take     malloc of a block of `need` bytes: one the layer holds (booked as a
 *                  malloc), else heap_claim's; NULL when neither can (or damage refused it);
 *   layer_keep     v: a block the checker's stage 1a passed (a live block of its pool); true iff
 *                  the layer took it (booked as a free) -- false sends it to the index;
 *   layer_free     free without lock hooks: the layer's own decision (from the checker's rank,
 *                  heap_own_rank), then heap_free_refuse or heap_free_index_out for the rest;
 *   layer_reclaim  gives every block the layer holds back to the index; true iff there were any
 *                  (the facade then tries its search once more). */
RT_HOT void *layer_take(rt_heap_t *h, size_t need);
RT_HOT bool layer_keep(rt_heap_t *h, const blk_view *v);
RT_HOT void layer_free(rt_heap_t *h, void *ptr);
static bool layer_reclaim(rt_heap_t *h, const char *operation);
#endif

/* What the walking indexes ask before they read a block (index/list.h): the heap's membership
 * check, inlined into their find. */
RT_HOT bool idx_member(const rt_heap_t *owner, const rt_blk *b, rt_blk *const *slot)
{
    return heap_member(owner, b, slot);
}
RT_HOT size_t idx_key(const rt_heap_t *owner) { return owner->key; }

/* b: a free block of `size` bytes already removed from the index, size >= need. Cuts it to
 * `need` (the tail, if at least a smallest block, becomes a free block: its neighbours are b and
 * b's successor, both used, so it needs no merging) and marks b used.
 *     [b free ..............][S]  =>  [b used][tail free][S]     (S keeps PREV_FREE)
 *     [b free ...][S]             =>  [b used ...][S]            (S's PREV_FREE cleared) */
RT_HOT void heap_carve(rt_heap_t *h, rt_blk *b, size_t size, size_t need)
{
    RT_INVARIANT(blk_size_ok(need), "heap: carving to a size that is no block size");
    RT_INVARIANT(size >= need, "heap: carving a block smaller than the request");
    size_t key = h->key;
    size_t rest = size - need;
    if (rest >= BLK_MIN) {
        rt_blk *tail = blk_offset(b, need);
        blk_set_head(key, b, need); /* used; a free block's predecessor is used: no PREV_FREE */
        blk_set_head(key, tail, rest | BLK_FREE);
        blk_set_footer(tail, rest);
        RT_INVARIANT(blk_placed_ok(tail) && blk_is_free_header(key, tail, rest),
                     "heap: a split's remainder goes to the index as a free block on the block grid");
        idx_insert(heap_idx(h), tail, rest);
        size = need;
    } else {
        blk_set_head(key, b, size);
        blk_clear_flag(key, blk_offset(b, size), BLK_PREV_FREE); /* it was set: b was free */
    }
    RT_INVARIANT(blk_decode(key, b, b->head) == size && ((uintptr_t)blk_payload(b) & (BLK_A - 1u)) == 0u,
                 "heap: a block handed out must be used (no flag), of the size booked, its payload A-aligned");
    heap_account_alloc(h, b, size);
}

/* b: a used block whose successor's decoded header is nd (used, fenced, or a free block the
 * caller proved: heap_vet_neighbours). Cuts b to `need` <= its size, giving the tail back
 * (merged with a free successor). Returns the bytes given back. */
RT_HOT size_t heap_trim(rt_heap_t *h, rt_blk *b, size_t need, size_t nd)
{
    size_t key = h->key;
    size_t size = blk_size(b);
    RT_INVARIANT(blk_size_ok(need) && need <= size, "heap: trimming a block to more than it holds");
    size_t rest = size - need;
    rt_blk *next = blk_offset(b, size);
    bool next_free = blk_data_free(nd);
    if (next_free) {
        idx_remove(heap_idx(h), next);
        rest += blk_head_size(nd);
        blk_make_stale(key, next);
    } else if (rest < BLK_MIN) {
        return 0;
    }
    RT_INVARIANT(rest >= BLK_MIN, "heap: a trimmed block's tail below the smallest block");
    blk_set_head(key, b, need | (b->head & BLK_PREV_FREE));
    rt_blk *tail = blk_offset(b, need);
    blk_make_free(key, tail, rest, !next_free); /* a merged next: its successor's PREV_FREE is set */
    idx_insert(heap_idx(h), tail, rest);
    return size - need;
}

/* Gives a vetted used block back, coalescing in both directions (the merge cases at the top of
 * this file). Everything the checker read is reused (*v): no header is loaded or decoded twice,
 * and the merged block's size goes to the index with it. */
RT_HOT void heap_release(rt_heap_t *h, const blk_view *v)
{
    size_t key = h->key;
    rt_blk *b = v->b;
    size_t used = blk_head_size(v->data);
    size_t size = used;
    RT_INVARIANT(blk_size_ok(used) && v->next == blk_offset(b, used),
                 "heap: releasing a block the checker did not size (stage 1b)");
    if ((v->data & BLK_PREV_FREE) != 0u) {
        size_t psize = blk_prev_size(b);
        rt_blk *prev = blk_at((char *)b - psize);
        RT_INVARIANT(blk_is_free_header(key, prev, psize),
                     "heap: merging backward into a predecessor that is not a free block of its footer's size");
        idx_remove(heap_idx(h), prev);
        size += psize;
        blk_make_stale(key, b);
        b = prev;
    }
    if (blk_data_free(v->next_data)) {
        RT_INVARIANT(blk_decode(key, v->next, v->next->head) == v->next_data,
                     "heap: the successor changed between the checker and the merge (the lock is held)");
        idx_remove(heap_idx(h), v->next);
        size += blk_head_size(v->next_data);
        blk_make_stale(key, v->next); /* its successor's PREV_FREE is set already */
    } else {
        blk_set_flag(key, v->next, BLK_PREV_FREE);
    }
    blk_set_footer(b, size);
    blk_set_head(key, b, size | BLK_FREE);
    RT_INVARIANT(blk_size_ok(size) && (char *)b + size <= (char *)v->pool->end,
                 "heap: a merged block must be a block size that ends at or before its pool's sentinel");
    idx_insert(heap_idx(h), b, size);
    h->used -= used;
    h->frees++;
}

/* Damage met by an allocation (lock held, or no lock hooks): counted as a failure and reported
 * (kept until the caller has let go of the lock, heap_defer), fenced off (heap_contain), NULL.
 * Cold. */
static void *__attribute__((noinline, cold)) heap_corrupt(rt_heap_t *h, const char *operation, const rt_blk *b)
{
    heap_defer(h, true, RT_ERR_CORRUPTED, operation, b);
    heap_contain(h);
    if (h->hooks.lock == NULL) {
        heap_deliver(h);
    }
    return NULL;
}

/* b = *slot: the block the index found for a request of `need` bytes. Before the facade claims
 * it, it must prove it is a free block of the index: its tagged header says free with no other
 * flag, its size fits, it points back at the slot that holds it, and its next (if any) lies in
 * the heap and points back at it. (b itself lies in the heap: a list head is read from the
 * control structure, which no overflow of 16 bytes reaches (the pool guard), and a walking
 * index checked every block it passed with heap_member.) */
RT_HOT bool heap_found_ok(const rt_heap_t *h, const rt_blk *b, rt_blk **slot, size_t need, size_t *size)
{
    if (RT_HARDENING < 1) {
        *size = blk_size(b);
        return true;
    }
    /* e = the decoded header without FREE: a header with exactly FREE set decodes to size | 1,
     * so e is the size, a multiple of 8 (as need is), <= BLK_DATA_MASK. e - need rotated right
     * by 3 exceeds BLK_DATA_MASK >> 3 when a flag other than FREE is set, FREE is clear, or
     * e < need (it wraps); e itself must be a header's data (a word that is no header decodes
     * above BLK_DATA_MASK). */
    size_t e = blk_decode(h->key, b, b->head) ^ BLK_FREE;
    rt_blk *next = b->next;
    *size = e;
    bool ok = heap_rotr(e - need, 3) <= (BLK_DATA_MASK >> 3) && e <= BLK_DATA_MASK && b->pprev == slot &&
              (next == NULL || (heap_word_ok(h, (uintptr_t)next + offsetof(rt_blk, pprev)) &&
                                next->pprev == &((rt_blk *)(uintptr_t)b)->next));
    if (RT_HARDENING >= 2 && ok) { /* level 2: the boundary tags too (heap_free_proven) */
        ok = heap_free_proven(h, b, e);
    }
    RT_INVARIANT(!ok || (*size >= need && *slot == b),
                 "heap: the found-block check passed a block too small, or not its slot's");
    return ok;
}

#if FACADE_LAYER
static void *__attribute__((noinline, cold)) heap_claim_again(rt_heap_t *h, size_t need);
#endif

/* Finds, claims and carves a block of at least `need` bytes; NULL when none fits. */
RT_HOT void *heap_claim(rt_heap_t *h, size_t need)
{
    unsigned probes = 0;
    rt_blk **slot = idx_find(h, heap_idx(h), &need, &probes);
    h->last_probes = probes;
    if (slot == NULL) {
#if FACADE_LAYER
        if (layer_reclaim(h, "malloc")) { /* blocks the layer held are back: once more */
            return heap_claim_again(h, need);
        }
#endif
        h->hooks.failures++;
        return NULL;
    }
    if (IDX_WALKS && RT_HARDENING >= 1 && slot == IDX_CORRUPT) {
        return heap_corrupt(h, "malloc", NULL);
    }
    rt_blk *b = *slot;
    size_t size;
    if (!heap_found_ok(h, b, slot, need, &size)) {
        return heap_corrupt(h, "malloc", b);
    }
    idx_remove(heap_idx(h), b);
    heap_carve(h, b, size, need);
    return blk_payload(b);
}

#if FACADE_LAYER
/* The layer held nothing more after layer_reclaim, so this is not reached twice. */
static void *heap_claim_again(rt_heap_t *h, size_t need) { return heap_claim(h, need); }
#endif

/* A malloc of a block of `need` bytes: through the layer (which serves it from the blocks it
 * holds, or calls heap_claim), else from the index. */
RT_HOT void *heap_take(rt_heap_t *h, size_t need)
{
#if FACADE_LAYER
    return layer_take(h, need);
#else
    return heap_claim(h, need);
#endif
}

/* Without lock hooks the hot paths make no call but tail calls, so they need no stack frame;
 * the hooked variants are kept out of line. */
static void *__attribute__((noinline)) heap_malloc_locked(rt_heap_t *h, size_t need)
{
    uintptr_t token = heap_lock(h);
    void *p = heap_take(h, need);
    heap_unlock(h, token);
    HEAP_DELIVER(h); /* damage met (and fenced), or a layer's report, kept while the lock was held */
    if (p != NULL) { /* a NULL (out of memory, or damage refused) changed nothing live */
        HEAP_DEBUG_CHECK(h);
    }
    return p;
}

FACADE_ENTRY void *facade_malloc(rt_heap_t *h, size_t size)
{
    HEAP_REQUIRE(h, "malloc", NULL);
    if (size - 1u >= h->max_request) { /* 0 wraps around: one compare for both cases */
        return size == 0u ? NULL : rt_front_refuse(&heap_front, h, RT_ERR_TOO_LARGE, "malloc", NULL, size);
    }
    size_t need = heap_block_size(size);
    if (h->hooks.lock != NULL) {
        return heap_malloc_locked(h, need);
    }
    void *p = heap_take(h, need);
    if (p != NULL) {
        HEAP_DEBUG_CHECK(h);
    }
    return p;
}

/* --- free ------------------------------------------------------------------------------------ */

/* A free the checker refused (`kind`), with the lock held or no lock hooks: free(NULL) (NULL lies
 * in no pool, so the hot path needs no test of its own for it) and a free of a fenced live block
 * (heap_free_fenced) are accepted: true. Damage is fenced off (heap_contain_after). False: the
 * caller reports `kind` once the lock is released. Cold. */
static bool __attribute__((noinline, cold)) heap_free_refused(rt_heap_t *h, void *ptr, rt_error_kind_t kind)
{
    if (ptr == NULL || heap_free_fenced(h, ptr)) {
        return true;
    }
    heap_contain_after(h, kind, ptr);
    return false;
}

/* The same without lock hooks, with the report. Cold. */
static void __attribute__((noinline, cold)) heap_free_refuse(rt_heap_t *h, void *ptr, rt_error_kind_t kind)
{
    if (!heap_free_refused(h, ptr, kind)) {
        rt_heap_report(h, kind, "free", ptr, 0);
    }
}

static void __attribute__((noinline)) heap_free_locked(rt_heap_t *h, void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    uintptr_t token = heap_lock(h);
    blk_view v;
    rt_error_kind_t kind = heap_vet_own(h, ptr, FACADE_LAYER, &v);
    if (RT_HARDENING >= 1 && kind == RT_ERR_NONE && h->quarantined != 0u && heap_fenced_holds(h, v.b)) {
        kind = RT_ERR_BAD_POINTER;
    }
#if FACADE_LAYER
    if (kind == RT_ERR_NONE && layer_keep(h, &v)) {
        heap_unlock(h, token);
        HEAP_DEBUG_CHECK(h);
        return;
    }
#endif
    if (kind == RT_ERR_NONE) {
        kind = heap_vet_succ(h, &v);
    }
    if (kind == RT_ERR_NONE) {
        kind = heap_vet_neighbours(h, &v);
    }
    bool done = kind == RT_ERR_NONE;
    if (done) {
        heap_release(h, &v);
    } else {
        done = heap_free_refused(h, ptr, kind);
    }
    heap_unlock(h, token);
    if (!done) {
        rt_heap_report(h, kind, "free", ptr, 0);
        return; /* a refused call changed nothing live: no check (the caller may have corrupted it) */
    }
    HEAP_DEBUG_CHECK(h);
}

/* A free whose block has a free (or fenced) neighbour (stage 1 passed): the neighbours' checks
 * and the merge, out of line so that the no-merge path needs no saved registers. */
static void __attribute__((noinline))
heap_free_merge(rt_heap_t *h, rt_blk *b, size_t data, rt_blk *next, size_t next_data, const rt_pool_t *pool)
{
    blk_view v = {b, data, next, next_data, pool};
    rt_error_kind_t kind = heap_vet_neighbours(h, &v);
    if (kind != RT_ERR_NONE) {
        heap_free_refuse(h, blk_payload(b), kind);
        return;
    }
    heap_release(h, &v);
    HEAP_DEBUG_CHECK(h);
}

_Static_assert(BLK_FREE == 1u && BLK_PREV_FREE == 2u, "heap_free_index tests both flags with one shift");

/* free, from stage 1b on (stage 1a passed: v->b, v->data, v->pool): the successor's check, then
 * the merge or the plain insertion. */
RT_HOT void heap_free_index(rt_heap_t *h, blk_view *v)
{
    rt_error_kind_t kind = heap_vet_succ(h, v);
    if (kind != RT_ERR_NONE) {
        heap_free_refuse(h, blk_payload(v->b), kind);
        return;
    }
    if ((((v->data >> 1) | v->next_data) & 1u) != 0u) { /* PREV_FREE here or FREE there */
        heap_free_merge(h, v->b, v->data, v->next, v->next_data, v->pool);
        return;
    }
    /* [P used][* ][N used]  =>  [P][---free---][N] */
    size_t key = h->key;
    size_t size = blk_head_size(v->data);
    RT_INVARIANT(blk_size_ok(size) && v->next == blk_offset(v->b, size),
                 "heap: freeing a block the checker did not size (stage 1b)");
    blk_set_flag(key, v->next, BLK_PREV_FREE);
    blk_set_footer(v->b, size);
    blk_set_head(key, v->b, size | BLK_FREE);
    idx_insert(heap_idx(h), v->b, size);
    h->used -= size;
    h->frees++;
    HEAP_DEBUG_CHECK(h);
}

#if FACADE_LAYER
/* A freed block the layer did not take: out of line, so that the layer's path needs no saved
 * registers. */
static void __attribute__((noinline)) heap_free_index_out(rt_heap_t *h, rt_blk *b, size_t data, const rt_pool_t *pool)
{
    blk_view v = {b, data, NULL, 0u, pool};
    heap_free_index(h, &v);
}

/* A free the layer's own decision refused: the checker's verdict, reported. Cold. */
static void __attribute__((noinline, cold)) heap_free_vet_refuse(rt_heap_t *h, void *ptr)
{
    blk_view v;
    heap_free_refuse(h, ptr, ptr == NULL ? RT_ERR_FOREIGN_POINTER : heap_vet_own(h, ptr, true, &v));
}
#endif

FACADE_ENTRY void facade_free(rt_heap_t *h, void *ptr)
{
    HEAP_REQUIRE(h, "free", );
    if (HEAP_ONE_FREE_PATH || h->gate != 0u) { /* a lock hook, or fenced memory (heap_regate) */
        heap_free_locked(h, ptr);
        return;
    }
#if FACADE_LAYER
    layer_free(h, ptr);
#else
    blk_view v;
    rt_error_kind_t kind = heap_vet_own(h, ptr, false, &v);
    if (kind != RT_ERR_NONE) {
        heap_free_refuse(h, ptr, kind);
        return;
    }
    heap_free_index(h, &v);
#endif
}

/* --- realloc ------------------------------------------------------------------------------- */

/* A realloc the checker (or a later check) refused, the lock held: damage fenced off, the lock
 * released, the report delivered, NULL. Cold. */
static void *__attribute__((noinline, cold))
heap_realloc_refuse(rt_heap_t *h, uintptr_t token, rt_error_kind_t kind, void *ptr, size_t size)
{
    heap_contain_after(h, kind, ptr);
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    return rt_front_refuse(&heap_front, h, kind, "realloc", ptr, size);
}

/* realloc's slide: [prev free][b used][next?] => [moved down ........][tail free]. The payload is
 * moved into the free predecessor (absorbing a free successor too) instead of allocating
 * elsewhere. The copy is made with the lock RELEASED, so no lock-held stretch grows with the
 * block: first (lock held, on entry) the whole span becomes one used block -- the predecessor and
 * the successor leave the index, b's header goes stale, so a racing stale free of ptr is a double
 * free -- then the lock is let go for the copy, then taken again to give the tail back (its new
 * neighbour re-checked: another thread may have freed it meanwhile). Returns the new payload;
 * the lock is released on return. */
static void *__attribute__((noinline)) heap_slide(rt_heap_t *h, uintptr_t token, const blk_view *v, size_t need)
{
    size_t key = h->key;
    rt_blk *b = v->b;
    size_t old = blk_head_size(v->data);
    rt_blk *prev = blk_prev(b);
    size_t total = blk_prev_size(b) + old;
    RT_INVARIANT(blk_is_free_header(key, prev, blk_prev_size(b)),
                 "heap: sliding into a predecessor that is not a free block of its footer's size");
    idx_remove(heap_idx(h), prev);
    if (blk_data_free(v->next_data)) {
        idx_remove(heap_idx(h), v->next);
        total += blk_head_size(v->next_data);
        blk_make_stale(key, v->next);
        blk_clear_flag(key, blk_offset(prev, total), BLK_PREV_FREE); /* next was free */
    }
    RT_INVARIANT(total >= need && blk_size_ok(total), "heap: realloc's slide into a span smaller than the request");
    blk_make_stale(key, b);
    blk_set_head(key, prev, total); /* used; a free block's predecessor is used */
    h->used += total - old;
    heap_unlock(h, token);

    __builtin_memmove(blk_payload(prev), blk_payload(b), old - BLK_W);

    token = heap_lock(h);
    rt_blk *s = blk_offset(prev, total);
    size_t sd = blk_decode(key, s, s->head);
    bool s_ok = sd <= BLK_DATA_MASK && (!blk_data_free(sd) || (blk_head_size(sd) >= BLK_MIN && heap_linked(h, s) &&
                                                               heap_succ_ok(h, s, blk_head_size(sd))));
    if (s_ok) {
        h->used -= heap_trim(h, prev, need, sd);
    } else { /* damage at the new neighbour: the block stays whole, the damage is fenced off */
        heap_defer(h, false, RT_ERR_CORRUPTED, "realloc", blk_payload(prev));
        heap_contain(h);
    }
    uintptr_t end = (uintptr_t)prev + blk_size(prev);
    if (end > h->high) {
        h->high = end;
    }
    if (h->used > h->peak_used) {
        h->peak_used = h->used;
    }
    h->reallocs++;
    h->mallocs++; /* it moved (without a second block): counted as a malloc and a free */
    h->frees++;
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    HEAP_DEBUG_CHECK(h);
    return blk_payload(prev);
}

static inline void *facade_realloc(rt_heap_t *h, void *ptr, size_t size)
{
    HEAP_REQUIRE(h, "realloc", NULL);
    void *edge;
    if (rt_front_realloc_edge(&heap_front, h, ptr, size, &edge)) {
        return edge;
    }
    size_t need = heap_block_size(size);
    uintptr_t token = heap_lock(h);
    blk_view v;
    rt_error_kind_t kind = heap_vet(h, ptr, FACADE_LAYER, &v);
    if (kind != RT_ERR_NONE) {
        return heap_realloc_refuse(h, token, kind, ptr, size);
    }
    rt_blk *b = v.b;
    size_t old = blk_head_size(v.data);
    rt_blk *next = v.next;
    bool next_free = blk_data_free(v.next_data);
    size_t nsize = next_free ? blk_head_size(v.next_data) : 0u;
    /* Absorbing a free next makes its successor ours to read and change: it must be sound. */
    if (next_free && !heap_succ_ok(h, next, nsize)) {
        return heap_realloc_refuse(h, token, RT_ERR_CORRUPTED, ptr, size);
    }
    if (need > old && next_free && old + nsize >= need) {
        /* [b used][next free] => [b grown][tail free]: absorb next whole, then trim. Its
         * successor is not free (two free blocks are never adjacent). */
        size_t total = old + nsize;
        RT_INVARIANT(total >= need && blk_size_ok(total),
                     "heap: realloc absorbs a successor too small for the request");
        idx_remove(heap_idx(h), next);
        blk_make_stale(h->key, next);
        blk_set_head(h->key, b, total | (v.data & BLK_PREV_FREE));
        blk_clear_flag(h->key, blk_offset(b, total), BLK_PREV_FREE); /* next was free */
        h->used += total - old;
        h->used -= heap_trim(h, b, need, 0u);
    } else if (need <= old) {
        h->used -= heap_trim(h, b, need, v.next_data);
    } else if ((v.data & BLK_PREV_FREE) != 0u && blk_prev_size(b) + old + nsize >= need) {
        return heap_slide(h, token, &v, need);
    } else {
        heap_unlock(h, token);
        void *moved = FACADE_MALLOC(h, size);
        if (moved != NULL) {
            __builtin_memcpy(moved, ptr, old - BLK_W);
            FACADE_FREE(h, ptr);
            token = heap_lock(h);
            h->reallocs++;
            heap_unlock(h, token);
        }
        return moved;
    }
    uintptr_t end = (uintptr_t)b + blk_size(b);
    if (end > h->high) {
        h->high = end;
    }
    if (h->used > h->peak_used) {
        h->peak_used = h->used;
    }
    h->reallocs++;
    h->reallocs_in_place++;
    heap_unlock(h, token);
    HEAP_DEBUG_CHECK(h);
    return ptr;
}

static inline void *facade_calloc(rt_heap_t *h, size_t count, size_t size)
{
    HEAP_REQUIRE(h, "calloc", NULL);
    return rt_front_calloc(&heap_front, h, count, size);
}

/* --- memalign ------------------------------------------------------------------------------ */

static inline void *facade_memalign(rt_heap_t *h, size_t alignment, size_t size)
{
    HEAP_REQUIRE(h, "memalign", NULL);
    if (!rt_front_memalign_args(&heap_front, h, alignment, size)) {
        return NULL;
    }
    if (alignment <= BLK_A) {
        return FACADE_MALLOC(h, size);
    }
    /* The gap in front of the aligned payload is 0 or at least one smallest block, and smaller
     * than alignment + BLK_MIN: a gap below BLK_MIN grows by alignment until it holds one (once
     * when A is two words, as alignment > A >= BLK_MIN / 2; twice at most with A = 8 on 64-bit). */
    if (alignment > h->max_request - size || heap_block_size(size) + alignment + BLK_MIN > h->max_block) {
        return rt_front_refuse(&heap_front, h, RT_ERR_TOO_LARGE, "memalign", NULL, size);
    }
    size_t need = heap_block_size(size);
    size_t search = need + alignment + BLK_MIN;
    uintptr_t token = heap_lock(h);
    unsigned probes = 0;
    rt_blk **slot = idx_find(h, heap_idx(h), &search, &probes);
#if FACADE_LAYER
    if (slot == NULL && layer_reclaim(h, "memalign")) { /* as malloc: the held blocks back, once more */
        search = need + alignment + BLK_MIN;
        slot = idx_find(h, heap_idx(h), &search, &probes);
    }
#endif
    h->last_probes = probes;
    if (slot == NULL) {
        h->hooks.failures++;
        heap_unlock(h, token);
        HEAP_DELIVER(h); /* a layer's report */
        return NULL;
    }
    rt_blk *b = IDX_WALKS && RT_HARDENING >= 1 && slot == IDX_CORRUPT ? NULL : *slot;
    size_t found;
    if (b == NULL || !heap_found_ok(h, b, slot, search, &found)) {
        heap_defer(h, true, RT_ERR_CORRUPTED, "memalign", b);
        heap_contain(h);
        heap_unlock(h, token);
        HEAP_DELIVER(h);
        return NULL;
    }
    idx_remove(heap_idx(h), b);
    uintptr_t payload = (uintptr_t)blk_payload(b);
    uintptr_t aligned = rt_addr_align_up(payload, alignment);
    if (aligned != payload) {
        size_t gap = (size_t)(aligned - payload);
        /* wcet: <= (BLK_MIN + 2 * BLK_A - 1) / (2 * BLK_A); alignment > A is at least 2 A */
        while (gap < BLK_MIN) {
            gap += alignment;
        }
        /* [b free .........] => [gap free][b2 .....]: b's predecessor is used. */
        size_t size2 = found - gap;
        rt_blk *b2 = blk_offset(b, gap);
        RT_INVARIANT(blk_size_ok(gap) && gap < alignment + BLK_MIN && size2 >= need,
                     "memalign: the gap before the aligned block must be a free block, and leave room");
        blk_set_head(h->key, b, gap | BLK_FREE);
        blk_set_footer(b, gap);
        idx_insert(heap_idx(h), b, gap);
        heap_carve(h, b2, size2, need);
        blk_set_flag(h->key, b2, BLK_PREV_FREE); /* carve wrote b2's header without it */
        b = b2;
    } else {
        heap_carve(h, b, found, need);
    }
    RT_INVARIANT(((uintptr_t)blk_payload(b) & (alignment - 1u)) == 0u,
                 "memalign: the block handed out is not aligned as asked");
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    HEAP_DEBUG_CHECK(h);
    return blk_payload(b);
}

static void ops_insert(rt_heap_t *h, rt_blk *b)
{
    RT_INVARIANT(blk_is_free_header(h->key, b, blk_size(b)), "heap: the index gets a block whose header is not free");
    idx_insert(heap_idx(h), b, blk_size(b));
}
static void ops_reset(rt_heap_t *h) { idx_reset(heap_idx(h)); }
static size_t ops_fit_limit(size_t size) { return idx_fit_limit(size); }

/* The index check and the head fit, for the including file's heap_<name>_check_index and
 * heap_<name>_head_fit (heap_select.c reaches them by index). */
static inline bool facade_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only)
{
    return idx_check(heap_idx(h), visit, context, head_only);
}
static inline size_t facade_head_fit(rt_heap_t *h)
{
#if IDX_GOOD_FIT
    return idx_head_fit(heap_idx(h), h->key);
#else
    (void)h;
    return 0;
#endif
}

#if !FACADE_LAYER
#define FACADE_LAYER_OPS .layer_reclaim = NULL, .layer_forget = NULL, .layer_holds = NULL, .layer_init = NULL
#endif

/* The backend's table (rt_heap_init, rt_heap_malloc, rt_heap_free, containment), over the entry
 * points its heap_<name>.c writes out. A layer defines FACADE_LAYER_OPS (its functions). */
#define FACADE_OPS(INDEX)                                                                                            \
    {                                                                                                                \
        .index = (INDEX), .name = FACADE_NAME, .control_size = sizeof(heap_full), .malloc = FACADE_MALLOC,           \
        .free = FACADE_FREE, .insert = ops_insert, .reset = ops_reset, .fit_limit = ops_fit_limit, FACADE_LAYER_OPS, \
    }

#endif /* RT_HEAP_FACADE_H */
