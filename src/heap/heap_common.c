/*
 * heap_common.c -- the parts of the boundary-tag heap that do not depend on the index and are
 * off the hot path: creation and pools, error reports, statistics, the integrity check, the walk,
 * and the generic entry points that dispatch through the heap's backend table.
 */
#include "heap/heap_common.h"

/* --- creation and pools -------------------------------------------------------------------- */

static bool ranges_overlap(uintptr_t a0, uintptr_t a1, uintptr_t b0, uintptr_t b1) { return a0 < b1 && b0 < a1; }

/* Lays a pool over [start, end): first block header at the first address congruent to -W mod A,
 * sentinel header W bytes below the last A boundary. Fails if the room is below one smallest
 * block, the heap's pools are full, or the range overlaps the heap. */
static bool pool_add(rt_heap_t *h, uintptr_t start, uintptr_t end)
{
    if (h->npools >= RT_HEAP_MAX_POOLS || end < start || start > UINTPTR_MAX - 2u * BLK_A - RT_HEAP_GUARD ||
        end - start <= 2u * RT_HEAP_GUARD) {
        return false;
    }
    uintptr_t first = rt_addr_align_up(start + RT_HEAP_GUARD + BLK_W, BLK_A) - BLK_W;
    uintptr_t aligned_end = (end - RT_HEAP_GUARD) & ~(uintptr_t)(BLK_A - 1u);
    if (aligned_end < first + BLK_W + BLK_MIN) {
        return false;
    }
    uintptr_t sentinel = aligned_end - BLK_W;
    if (sentinel - first > RT_HEAP_LARGEST_BLOCK) {
        sentinel = first + RT_HEAP_LARGEST_BLOCK;
    }
    uintptr_t lo = first - RT_HEAP_GUARD, hi = sentinel + BLK_W + RT_HEAP_GUARD;
    if (ranges_overlap(lo, hi, (uintptr_t)h, (uintptr_t)h + h->ops->control_size)) {
        return false;
    }
    for (unsigned i = 0; i < h->npools; i++) {
        const rt_pool_t *p = &h->pools[i];
        if (ranges_overlap(lo, hi, (uintptr_t)p->first - RT_HEAP_GUARD, (uintptr_t)p->end + BLK_W + RT_HEAP_GUARD)) {
            return false;
        }
    }
    size_t size = (size_t)(sentinel - first);
    rt_blk *b = blk_at((void *)first);
    rt_blk *s = blk_at((void *)sentinel);
    h->pools[h->npools].first = b;
    h->pools[h->npools].end = s;
    h->pools[h->npools].lo = first + 1u;
    h->pools[h->npools].span = sentinel - first - 1u;
    h->pools[h->npools].words = (sentinel - first) >> HEAP_W_LOG2;
    if (h->npools == 0u) { /* the control structure and pool 0 are one span (heap_word_ok) */
        h->span_lo = (uintptr_t)h;
        h->span_words = (sentinel + BLK_W - (uintptr_t)h) >> HEAP_W_LOG2;
    }
    h->npools++;
    if (RT_HARDENING >= 1) {
        __builtin_memset((void *)lo, RT_HEAP_GUARD_BYTE, RT_HEAP_GUARD);
        __builtin_memset((void *)(sentinel + BLK_W), RT_HEAP_GUARD_BYTE, RT_HEAP_GUARD);
    }
    blk_set_head(h->key, s, 0); /* size 0, used; blk_make_free sets its PREV_FREE */
    blk_make_free(h->key, b, size, true);
    h->ops->insert(h, b);
    h->capacity += size;
    if (size > h->max_block) {
        h->max_block = size;
        h->max_request = h->ops->fit_limit(size) - BLK_W;
    }
    return true;
}

/* The header tags' key of a heap at `address`: a mix of the address and RT_HEAP_KEY_SEED, odd
 * (so a zeroed header word never verifies); with the affine tag of the default 64-bit layout
 * (block.h) the key is that odd 32-bit number shifted to the tag's half. */
static size_t heap_key(uintptr_t address)
{
    uint64_t x = (uint64_t)address ^ (uint64_t)RT_HEAP_KEY_SEED;
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
#if BLK_LINEAR_TAG
    return (size_t)((x | 1u) & 0xFFFFFFFFu) << 32;
#else
    return (size_t)x | 1u;
#endif
}

rt_heap_t *rt_heap_init(void *mem, size_t size, const rt_heap_ops_t *ops)
{
    if (mem == NULL) {
        return NULL;
    }
    uintptr_t start = (uintptr_t)mem;
    uintptr_t base = rt_addr_align_up(start, BLK_A);
    if (base < start || size < (size_t)(base - start) + ops->control_size ||
        size - (size_t)(base - start) > UINTPTR_MAX - base) {
        return NULL;
    }
    rt_heap_t *h = (rt_heap_t *)(void *)base;
    __builtin_memset(h, 0, ops->control_size);
    h->ops = ops;
    h->key = heap_key(base);
    ops->reset(h);
    if (!pool_add(h, base + ops->control_size, start + size)) {
        return NULL;
    }
    if (ops->quick_offset != 0u) { /* one cached block at most per 4 KiB of capacity */
        h->quick = (rt_quick_t *)(void *)((char *)h + ops->quick_offset);
        size_t per_kib = h->capacity / 4096u;
        h->quick->limit = per_kib < RT_HEAP_QUICK_BLOCKS ? (unsigned)per_kib : RT_HEAP_QUICK_BLOCKS;
        h->quick->room = h->quick->limit;
    }
    return h;
}

bool rt_heap_add_pool(rt_heap_t *h, void *mem, size_t size)
{
    uintptr_t token = heap_lock(h);
    uintptr_t start = (uintptr_t)mem;
    bool ok = mem != NULL && size <= UINTPTR_MAX - start && pool_add(h, start, start + size);
    heap_unlock(h, token);
    if (!ok) {
        rt_heap_report(h, RT_ERR_BAD_POOL, "add_pool", mem, size);
    }
    return ok;
}

/* True iff b is on the quick list of blocks of `size` bytes: a walk of at most the cached count,
 * each link checked before it is followed. O(limit); for diagnosis only. */
static bool quick_listed(const rt_heap_t *h, const rt_blk *b, size_t size)
{
    const rt_quick_t *q = h->quick;
    if (size < BLK_MIN || size > HEAP_QUICK_MAX_BLOCK || (size & (BLK_A - 1u)) != 0u) {
        return false;
    }
    rt_blk *x = q->head[(size - BLK_MIN) / BLK_A];
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

/* --- bad pointers: which error -------------------------------------------------------------- */

/* Why heap_validate_fast refused p: the same checks, one at a time, each with the error it
 * means. Off the hot path (only a refused call comes here). */
rt_error_kind_t heap_diagnose(const rt_heap_t *h, void *p)
{
    const rt_pool_t *pool = heap_pool_of(h, (uintptr_t)p);
    if (pool == NULL) {
        return RT_ERR_FOREIGN_POINTER;
    }
    if (((uintptr_t)p & (BLK_A - 1u)) != 0u) {
        return RT_ERR_BAD_POINTER;
    }
    rt_blk *b = blk_from_payload(p);
    size_t key = h->key;
    size_t head = b->head;
    size_t size = blk_head_size(head);
    size_t room = (size_t)((char *)pool->end - (char *)b);
    if (!blk_head_ok(key, head)) { /* not a header: a bad pointer, or a header overwritten */
        return RT_ERR_BAD_POINTER;
    }
    if ((head & (BLK_FREE | BLK_MARK)) == BLK_MARK && h->quick != NULL) {
        /* a block waiting on a quick list; at level 0 (no tag) only if it is on its list */
        return RT_HARDENING >= 1 || quick_listed(h, b, size) ? RT_ERR_DOUBLE_FREE : RT_ERR_BAD_POINTER;
    }
    if ((head & BLK_FREE) != 0u) {
        /* A double free finds a genuine free header (size | FREE, its footer agreeing) or the
         * stale mark a merge left; anything else with bit 0 set is not a header at all. */
        bool genuine = blk_data(head) == (size | BLK_FREE) && size >= BLK_MIN && size <= room &&
                       blk_prev_size(blk_offset(b, size)) == size;
        return genuine || blk_data(head) == BLK_STALE ? RT_ERR_DOUBLE_FREE : RT_ERR_BAD_POINTER;
    }
    if ((RT_HARDENING < 1 && (head & BLK_BAD_BITS) != 0u) || size < BLK_MIN || size > room) {
        return RT_ERR_BAD_POINTER;
    }
    rt_blk *next = blk_offset(b, size);
    size_t nhead = next->head;
    size_t nsize = blk_head_size(nhead);
    /* The successor must be a header too (a corrupted size lands in payload): tagged (an
     * overflow of p's block into it is caught here), flags clean, and a size that fits the
     * pool -- unless it is the pool's sentinel. */
    if (!blk_head_ok(key, nhead)) {
        return RT_ERR_CORRUPTED;
    }
    if ((RT_HARDENING < 1 && (nhead & ((BLK_BAD_BITS & ~BLK_MARK) | BLK_PREV_FREE)) != 0u) || nsize > room - size ||
        (nsize < BLK_MIN && next != pool->end)) {
        return RT_HARDENING >= 1 ? RT_ERR_CORRUPTED : RT_ERR_BAD_POINTER;
    }
    /* A successor the facade will treat as free must prove it: its footer, and its membership
     * of the index (safe unlinking) -- before free or realloc writes anything. */
    if (RT_HARDENING >= 1 && (nhead & BLK_FREE) != 0u &&
        (nsize < BLK_MIN || blk_prev_size(blk_offset(next, nsize)) != nsize || !heap_linked(h, next) ||
         (RT_HARDENING >= 2 && !heap_free_proven(h, next, nsize)))) {
        return RT_ERR_CORRUPTED;
    }
    if ((head & BLK_PREV_FREE) != 0u) {
        size_t psize = blk_prev_size(b); /* a raw word: check its alignment before using it */
        if (psize < BLK_MIN || (psize & (BLK_A - 1u)) != 0u || psize > (size_t)((char *)b - (char *)pool->first) ||
            !blk_is_free_header(key, blk_prev(b), psize) || !heap_linked(h, blk_prev(b)) ||
            (RT_HARDENING >= 2 && !heap_free_proven(h, blk_prev(b), psize))) {
            return RT_HARDENING >= 1 ? RT_ERR_CORRUPTED : RT_ERR_BAD_POINTER;
        }
    }
    if (RT_DEBUG >= 2 && !heap_is_block_start(h, pool, b)) {
        return RT_ERR_BAD_POINTER;
    }
    return RT_ERR_NONE; /* the fast check is stricter: heap_validate reports this as corrupted */
}


/* --- generic entry points ------------------------------------------------------------------ */

void *rt_heap_malloc(rt_heap_t *h, size_t size) { return h->ops->malloc(h, size); }
void rt_heap_free(rt_heap_t *h, void *ptr) { h->ops->free(h, ptr); }
void *rt_heap_realloc(rt_heap_t *h, void *ptr, size_t size) { return h->ops->realloc(h, ptr, size); }
void *rt_heap_calloc(rt_heap_t *h, size_t count, size_t size) { return h->ops->calloc(h, count, size); }
void *rt_heap_memalign(rt_heap_t *h, size_t alignment, size_t size)
{
    return h->ops->memalign(h, alignment, size);
}

size_t rt_heap_usable_size(rt_heap_t *h, void *ptr)
{
    uintptr_t token = heap_lock(h);
    blk_view v;
    rt_error_kind_t error = ptr == NULL ? RT_ERR_FOREIGN_POINTER : heap_validate(h, ptr, &v, h->quick != NULL);
    size_t size = error == RT_ERR_NONE ? blk_size(blk_from_payload(ptr)) - BLK_W : 0u;
    heap_unlock(h, token);
    if (error != RT_ERR_NONE) {
        rt_heap_report(h, error, "usable_size", ptr, 0);
    }
    return size;
}

unsigned rt_heap_last_probes(const rt_heap_t *h) { return h->last_probes; }
rt_index_t rt_heap_index(const rt_heap_t *h) { return h->ops->index; }
const char *rt_heap_index_name(const rt_heap_t *h) { return h->ops->name(); }

void rt_heap_set_handler(rt_heap_t *h, rt_error_handler_t handler, void *context)
{
    rt_hooks_set_handler(&h->hooks, handler, context);
}

/* Not itself locked: call before sharing the heap. */
void rt_heap_set_lock(rt_heap_t *h, rt_lock_fn lock, rt_unlock_fn unlock, void *context)
{
    rt_hooks_set_lock(&h->hooks, lock, unlock, context);
}

void heap_deliver(rt_heap_t *h)
{
    uintptr_t token = heap_lock(h);
    heap_pending_t p[HEAP_PENDING];
    unsigned n = h->npending;
    for (unsigned i = 0; i < n; i++) {
        p[i] = h->pending[i];
    }
    h->npending = 0;
    rt_error_handler_t handler = h->hooks.handler;
    void *context = h->hooks.handler_context;
    heap_unlock(h, token);
    for (unsigned i = 0; i < n; i++) {
        rt_error_deliver(handler, context, p[i].kind, p[i].operation, p[i].ptr, 0);
    }
}

/* --- quick lists ----------------------------------------------------------------------------- */

unsigned rt_heap_set_quick_limit(rt_heap_t *h, unsigned blocks)
{
    if (h->quick == NULL) {
        return 0;
    }
    uintptr_t token = heap_lock(h);
    blocks = blocks < RT_HEAP_QUICK_MAX_LIMIT ? blocks : RT_HEAP_QUICK_MAX_LIMIT;
    if (heap_quick_count(h->quick) > blocks) {
        h->ops->quick_flush(h, "set_quick_limit");
    }
    h->quick->room = blocks - heap_quick_count(h->quick);
    h->quick->limit = blocks;
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    return blocks;
}

void rt_heap_flush(rt_heap_t *h)
{
    if (h->quick == NULL) {
        return;
    }
    uintptr_t token = heap_lock(h);
    if (heap_quick_count(h->quick) != 0u) {
        h->ops->quick_flush(h, "flush");
    }
    heap_unlock(h, token);
    HEAP_DELIVER(h);
}

/* --- walk, statistics, check --------------------------------------------------------------- */

void rt_heap_walk(rt_heap_t *h, rt_walk_fn fn, void *context)
{
    uintptr_t token = heap_lock(h);
    if (h->quick != NULL && heap_quick_count(h->quick) != 0u) { /* the merged state: the cached blocks back first */
        h->ops->quick_flush(h, "walk");
    }
    for (unsigned i = 0; i < h->npools; i++) {
        const rt_pool_t *pool = &h->pools[i];
        for (rt_blk *b = pool->first; b < pool->end; b = heap_walk_next(h, pool, b)) {
            size_t size = blk_size(b);
            /* a block on a quick list (MARK outside rt_heap_check) is not used */
            rt_block_info_t info = {blk_payload(b), size - BLK_W, size, (b->head & (BLK_FREE | BLK_MARK)) == 0u, false};
            if (heap_walk_next(h, pool, b) == NULL || !fn(context, &info)) {
                heap_unlock(h, token);
                HEAP_DELIVER(h);
                return;
            }
        }
    }
    heap_unlock(h, token);
    HEAP_DELIVER(h);
}

void rt_heap_stats(rt_heap_t *h, rt_stats_t *s)
{
    uintptr_t token = heap_lock(h);
    if (h->quick != NULL && heap_quick_count(h->quick) != 0u) { /* exact figures: the cached blocks back first */
        h->ops->quick_flush(h, "stats");
    }
    rt_stats_t own = {
        .capacity = h->capacity,
        .used_bytes = h->used,
        .peak_used = h->peak_used,
        .used_blocks = (size_t)(heap_mallocs(h) - heap_frees(h)),
    }; /* watermark, free_blocks and largest_free: summed over the pools below */
    for (unsigned i = 0; i < h->npools; i++) {
        const rt_pool_t *pool = &h->pools[i];
        uintptr_t first = (uintptr_t)pool->first;
        uintptr_t end = (uintptr_t)pool->end;
        if (h->high >= end) {
            own.watermark += (size_t)(end - first);
        } else if (h->high > first) {
            own.watermark += (size_t)(h->high - first);
        }
        for (rt_blk *b = pool->first; b != NULL && b < pool->end; b = heap_walk_next(h, pool, b)) {
            if (blk_is_free(b) && heap_walk_next(h, pool, b) != NULL) { /* (a damaged header ends the walk) */
                size_t fit = h->ops->fit_limit(blk_size(b)) - BLK_W;
                own.free_blocks++;
                if (fit > own.largest_free) {
                    own.largest_free = fit;
                }
            }
        }
    }
    size_t head = h->ops->head_fit(h);
    if (head > BLK_W && head - BLK_W > own.largest_free) {
        own.largest_free = head - BLK_W < h->max_request ? head - BLK_W : h->max_request;
    }
    rt_front_counts_t counts = {heap_mallocs(h), heap_frees(h), h->reallocs, h->reallocs_in_place, h->hooks.failures,
                                h->hooks.errors};
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    rt_front_stats(s, &own, &counts);
}

typedef struct check_ctx {
    rt_heap_t *heap;
    size_t indexed;
} check_ctx;

/* Index visitor: b must be an A-aligned free block inside a pool, not seen before; marks it. */
static bool check_visit(void *context, rt_blk *b)
{
    check_ctx *c = context;
    const rt_pool_t *pool = heap_pool_of(c->heap, (uintptr_t)b + BLK_W);
    if (pool == NULL || (((uintptr_t)b + BLK_W) & (BLK_A - 1u)) != 0u || !blk_head_ok(c->heap->key, b->head) ||
        (b->head & (BLK_FREE | BLK_PREV_FREE | BLK_MARK)) != BLK_FREE) {
        return false;
    }
    size_t size = blk_size(b);
    if (size < BLK_MIN || size > (size_t)((char *)pool->end - (char *)b)) {
        return false;
    }
    blk_set_flag(c->heap->key, b, BLK_MARK);
    c->indexed++;
    return true;
}

/* Index visitor after a failed walk: clears the marks check_visit set on blocks the walk did
 * not reach. Stops at the first block it cannot trust. */
static bool unmark_visit(void *context, rt_blk *b)
{
    check_ctx *c = context;
    if (heap_pool_of(c->heap, (uintptr_t)b + BLK_W) == NULL || (((uintptr_t)b + BLK_W) & (BLK_A - 1u)) != 0u ||
        !blk_head_ok(c->heap->key, b->head)) {
        return false;
    }
    if ((b->head & BLK_MARK) != 0u) {
        blk_clear_flag(c->heap->key, b, BLK_MARK);
    }
    return true;
}

/* The guard bytes around a pool (RT_HEAP_GUARD) are intact. */
static bool guards_ok(const rt_pool_t *pool)
{
#if RT_HARDENING >= 1
    const unsigned char *lo = (const unsigned char *)pool->first - RT_HEAP_GUARD;
    const unsigned char *hi = (const unsigned char *)pool->end + BLK_W;
    for (unsigned i = 0; i < RT_HEAP_GUARD; i++) {
        if (lo[i] != RT_HEAP_GUARD_BYTE || hi[i] != RT_HEAP_GUARD_BYTE) {
            return false;
        }
    }
#else
    (void)pool;
#endif
    return true;
}

/* The quick lists (rt_tlsfq): every block listed lies in a pool, is aligned, has a tagged
 * cached header (MARK, not FREE) of its list's size; no more blocks than counted (which ends a
 * cycle). Returns the blocks listed, or SIZE_MAX on a failure. */
static size_t check_quick(const rt_heap_t *h)
{
    const rt_quick_t *q = h->quick;
    size_t n = 0;
    for (size_t c = 0; c < HEAP_QUICK_CLASSES; c++) {
        size_t size = BLK_MIN + c * BLK_A;
        for (rt_blk *b = q->head[c]; b != NULL; b = heap_quick_next(h, b)) {
            uintptr_t a = (uintptr_t)blk_payload(b);
            if (n >= heap_quick_count(q) || heap_pool_of(h, a) == NULL || (a & (BLK_A - 1u)) != 0u ||
                !blk_head_ok(h->key, b->head) || (blk_data(b->head) | BLK_PREV_FREE) != (size | BLK_MARK | BLK_PREV_FREE)) {
                return SIZE_MAX;
            }
            n++;
        }
    }
    return n;
}

bool rt_heap_check(rt_heap_t *h)
{
    uintptr_t token = heap_lock(h);
    check_ctx c = {h, 0};
    size_t listed = h->quick != NULL ? check_quick(h) : 0u, cached = 0;
    bool ok = listed != SIZE_MAX && h->ops->check_index(h, check_visit, &c);
    size_t free_blocks = 0, used_blocks = 0, used = 0, capacity = 0;
    bool broken = false;
    /* The physical walk runs even after a failure so that it clears every mark. */
    for (unsigned i = 0; i < h->npools; i++) {
        rt_blk *end = h->pools[i].end;
        rt_blk *b = h->pools[i].first;
        bool prev_free = false;
        if (!guards_ok(&h->pools[i])) {
            ok = false;
        }
        while (b < end) {
            size_t head = b->head;
            size_t size = blk_head_size(head);
            bool is_free = (head & BLK_FREE) != 0u;
            if (!blk_head_ok(h->key, head) || size < BLK_MIN || (size & (BLK_A - 1u)) != 0u ||
                size > (size_t)((char *)end - (char *)b)) {
                ok = false;
                broken = true;
                break;
            }
            if ((head & BLK_MARK) != 0u && is_free) { /* a used one with MARK waits on a quick list */
                blk_clear_flag(h->key, b, BLK_MARK);
            }
            if (((head & BLK_PREV_FREE) != 0u) != prev_free) {
                ok = false;
            }
            if ((head & (BLK_FREE | BLK_MARK)) == BLK_MARK) {
                cached++;
            } else if (is_free) {
                bool footer_ok = ((size_t *)(void *)((char *)b + size))[-1] == size;
                if (prev_free || !footer_ok || (head & BLK_MARK) == 0u) {
                    ok = false; /* adjacent free blocks, bad tag, or not indexed */
                }
                free_blocks++;
            } else {
                used_blocks++;
                used += size;
            }
            prev_free = is_free;
            b = blk_offset(b, size);
        }
        if (b != end || end->head != blk_enc(h->key, prev_free ? BLK_PREV_FREE : 0u)) {
            ok = false;
        }
        capacity += (size_t)((char *)end - (char *)h->pools[i].first);
    }
    if (broken) { /* blocks past a broken header were not walked: clear their marks */
        (void)h->ops->check_index(h, unmark_visit, &c);
    }
    if (free_blocks != c.indexed || used != h->used || used_blocks != (size_t)(heap_mallocs(h) - heap_frees(h)) ||
        capacity != h->capacity || cached != listed || (h->quick != NULL && listed != heap_quick_count(h->quick))) {
        ok = false;
    }
    heap_unlock(h, token);
    if (!ok) {
        rt_heap_report(h, RT_ERR_CORRUPTED, "check", NULL, 0);
    }
    return ok;
}
