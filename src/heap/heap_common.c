/* SPDX-License-Identifier: MIT */
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
/* Writes the guard bytes of [p, p + RT_HEAP_GUARD): a loop the compiler keeps (volatile), so that
 * the core calls no memset of its own and a firmware need not link one for it. */
static void guard_fill(uintptr_t p)
{
    /* one line, as tools/wcet.py reads a loop's bound from the comment just above it */
    /* clang-format off */
    /* wcet: <= RT_HEAP_GUARD; a byte at a time */
    for (volatile unsigned char *g = (volatile unsigned char *)p; g < (volatile unsigned char *)(p + RT_HEAP_GUARD); g++) {
        /* clang-format on */
        *g = RT_HEAP_GUARD_BYTE;
    }
}

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
    /* wcet: <= RT_HEAP_MAX_POOLS - 1; npools is below the max here (tested above) */
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
        guard_fill(lo);
        guard_fill(sentinel + BLK_W);
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

/* The header tags' key of a new heap at `address`: drawn (rt_entropy_draw: the user's entropy
 * source, or the core's counter) and mixed with the address and RT_HEAP_KEY_SEED, never equal
 * in its tag bits to `previous` -- the key the buffer held where the new control structure
 * stands, i.e. the key of the heap that lived there before -- so that no header, link or pointer
 * of that earlier life verifies in this one (block.h). With the affine tag of the default 64-bit
 * layout the key is an odd 32-bit number in the tag's half. */
static size_t heap_key(uintptr_t address, size_t previous)
{
#if RT_HARDENING < 1
    /* No tags to key: only the lists' links use it. A new value, no entropy drawn (so that a
     * level-0 firmware links no entropy source). */
    (void)address;
    return (previous + 2u) | 1u;
#else
    uint64_t x = rt_entropy_draw() ^ rt_mix64((uint64_t)address ^ (uint64_t)RT_HEAP_KEY_SEED);
#if BLK_LINEAR_TAG
    size_t key = (size_t)((x | 1u) & 0xFFFFFFFFu) << 32;
    if (key == previous) {
        key += (size_t)2 << 32; /* still odd in the tag's half */
    }
#elif RT_HARDENING >= 1
    size_t key = (size_t)x | 1u;
    if (((key ^ previous) & (~(size_t)0 >> BLK_DATA_BITS)) == 0u) { /* the tag's T bits */
        key ^= 2u;
    }
#else
    size_t key = (size_t)x | 1u;
    (void)previous;
#endif
    return key;
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
    size_t previous = *(volatile size_t *)&h->key; /* whatever the buffer held there */
    /* zeroed word by word (the size is a multiple of a word): through a volatile pointer, so that
     * the compiler makes no memset call of it -- a firmware need not link one for create */
    /* one line, as tools/wcet.py reads a loop's bound from the comment just above it */
    /* clang-format off */
    /* wcet: <= CONTROL_BYTES / sizeof(uintptr_t); a word at a time (ops->control_size bytes) */
    for (volatile uintptr_t *w = (volatile uintptr_t *)(void *)h; w < (volatile uintptr_t *)(void *)((char *)h + ops->control_size); w++) {
        /* clang-format on */
        *w = 0u;
    }
    h->self = (uintptr_t)0 - (uintptr_t)h;
    h->ops = ops;
    h->key = heap_key(base, previous);
    ops->reset(h);
    if (!pool_add(h, base + ops->control_size, start + size)) {
        return NULL;
    }
    if (ops->layer_init != NULL) {
        ops->layer_init(h);
    }
    return h;
}

bool rt_heap_add_pool(rt_heap_t *h, void *mem, size_t size)
{
    HEAP_REQUIRE(h, "add_pool", false);
    uintptr_t token = heap_lock(h);
    uintptr_t start = (uintptr_t)mem;
    bool ok = mem != NULL && size <= UINTPTR_MAX - start && pool_add(h, start, start + size);
    heap_unlock(h, token);
    if (!ok) {
        rt_heap_report(h, RT_ERR_BAD_POOL, "add_pool", mem, size);
    }
    return ok;
}

/* --- the checker's cold half: why a block is not live ---------------------------------------- */

rt_error_kind_t heap_own_error(const rt_heap_t *h, const rt_pool_t *pool, void *p)
{
    rt_blk *b = blk_from_payload(p);
    size_t d = blk_decode(h->key, b, b->head);
    if (d > BLK_DATA_MASK || blk_data_fenced(d)) {
        return RT_ERR_BAD_POINTER; /* no header here (a pointer into a block, a damaged header) */
    }
    size_t size = blk_head_size(d);
    if ((d & BLK_FENCE) == BLK_MARK) {
        /* a block a layer holds (freed); at level 0 (no tag) only the layer can tell */
        return h->quick != NULL && (RT_HARDENING >= 1 || h->ops->layer_holds(h, b)) ? RT_ERR_DOUBLE_FREE
                                                                                    : RT_ERR_BAD_POINTER;
    }
    if ((d & BLK_FREE) != 0u) {
        /* A double free finds a genuine free header (size | FREE, its footer agreeing) or the
         * stale mark a merge left; anything else with FREE set is not a header at all. */
        size_t room = (size_t)((char *)pool->end - (char *)b);
        bool genuine =
            d == (size | BLK_FREE) && size >= BLK_MIN && size <= room && blk_prev_size(blk_offset(b, size)) == size;
        return genuine || d == BLK_STALE ? RT_ERR_DOUBLE_FREE : RT_ERR_BAD_POINTER;
    }
    return RT_ERR_BAD_POINTER; /* level 0: a used header with impossible bits */
}

/* --- generic entry points ------------------------------------------------------------------ */

void *rt_heap_malloc(rt_heap_t *h, size_t size)
{
    HEAP_REQUIRE(h, "malloc", NULL);
    return h->ops->malloc(h, size);
}
void rt_heap_free(rt_heap_t *h, void *ptr)
{
    HEAP_REQUIRE(h, "free", );
    h->ops->free(h, ptr);
}
/* rt_heap_realloc, rt_heap_calloc and rt_heap_memalign: heap_select.c. */

size_t rt_heap_live_size(const rt_heap_t *h, const void *ptr)
{
    HEAP_REQUIRE(h, "live_size", 0u);
    const rt_blk *b = (const rt_blk *)(const void *)((const char *)ptr - BLK_W);
    size_t head = __atomic_load_n(&b->head, __ATOMIC_RELAXED);
    if (!blk_head_ok(h->key, b, head)) {
        return 0;
    }
    size_t d = blk_decode(h->key, b, head);
    size_t size = d & ~BLK_FLAGS;
    return (d & BLK_FREE) != 0u || size < BLK_MIN ? 0u : size - BLK_W;
}

rt_error_kind_t rt_heap_vet(rt_heap_t *h, const void *ptr)
{
    HEAP_REQUIRE(h, "vet", RT_ERR_BAD_HEAP);
    uintptr_t token = heap_lock(h);
    blk_view v;
    rt_error_kind_t error =
        ptr == NULL ? RT_ERR_FOREIGN_POINTER : heap_vet(h, (void *)(uintptr_t)ptr, h->quick != NULL, &v);
    heap_unlock(h, token);
    return error;
}

size_t rt_heap_usable_size(rt_heap_t *h, void *ptr)
{
    HEAP_REQUIRE(h, "usable_size", 0u);
    uintptr_t token = heap_lock(h);
    blk_view v;
    rt_error_kind_t error = ptr == NULL ? RT_ERR_FOREIGN_POINTER : heap_vet(h, ptr, h->quick != NULL, &v);
    size_t size = error == RT_ERR_NONE ? blk_head_size(v.data) - BLK_W : 0u;
    if (error != RT_ERR_NONE) {
        heap_contain_after(h, error, ptr);
    }
    heap_unlock(h, token);
    if (error != RT_ERR_NONE) {
        rt_heap_report(h, error, "usable_size", ptr, 0);
    }
    return size;
}

size_t rt_heap_max_request(const rt_heap_t *h)
{
    HEAP_REQUIRE(h, "max_request", 0u);
    return h->max_request;
}

unsigned rt_heap_last_probes(const rt_heap_t *h)
{
    HEAP_REQUIRE(h, "last_probes", 0u);
    return h->last_probes;
}
rt_index_t rt_heap_index(const rt_heap_t *h)
{
    HEAP_REQUIRE(h, "index", RT_INDEX_COUNT);
    return h->ops->index;
}
const char *rt_heap_index_name(const rt_heap_t *h)
{
    HEAP_REQUIRE(h, "index_name", "unknown");
    return h->ops->name();
}

void rt_heap_set_handler(rt_heap_t *h, rt_error_handler_t handler, void *context)
{
    HEAP_REQUIRE(h, "set_handler", );
    rt_hooks_set_handler(&h->hooks, handler, context);
}

/* Not itself locked: call before sharing the heap. */
void rt_heap_set_lock(rt_heap_t *h, rt_lock_fn lock, rt_unlock_fn unlock, void *context)
{
    HEAP_REQUIRE(h, "set_lock", );
    rt_hooks_set_lock(&h->hooks, lock, unlock, context);
    heap_regate(h);
}

void heap_deliver(rt_heap_t *h)
{
    uintptr_t token = heap_lock(h);
    heap_pending_t p[HEAP_PENDING];
    unsigned n = h->npending;
    /* wcet: <= HEAP_PENDING; heap_defer keeps npending <= HEAP_PENDING */
    for (unsigned i = 0; i < n; i++) {
        p[i] = h->pending[i];
    }
    h->npending = 0;
    rt_error_handler_t handler = h->hooks.handler;
    void *context = h->hooks.handler_context;
    heap_unlock(h, token);
    /* wcet: <= HEAP_PENDING; the reports kept */
    for (unsigned i = 0; i < n; i++) {
        rt_error_deliver(handler, context, p[i].kind, p[i].operation, p[i].ptr, 0);
    }
}

void rt_heap_flush(rt_heap_t *h)
{
    HEAP_REQUIRE(h, "flush", );
    if (h->ops->layer_reclaim == NULL) {
        return;
    }
    uintptr_t token = heap_lock(h);
    h->ops->layer_reclaim(h, "flush");
    heap_unlock(h, token);
    HEAP_DELIVER(h);
}

/* --- containment --------------------------------------------------------------------------- */

/* The slot of fenced[] that holds b, or RT_HEAP_FENCED. */
static unsigned fenced_slot(const rt_heap_t *h, const rt_blk *b)
{
    unsigned i = 0;
    /* wcet: <= RT_HEAP_FENCED; the slots of fenced[] */
    while (i < RT_HEAP_FENCED && h->fenced[i] != b) {
        i++;
    }
    return i;
}

/* True iff b is a fenced block remembered as live. */
static bool fenced_is_live(const rt_heap_t *h, const rt_blk *b)
{
    unsigned i = fenced_slot(h, b);
    return i < RT_HEAP_FENCED && ((h->fenced_live >> i) & 1u) != 0u;
}

bool heap_fenced_holds(const rt_heap_t *h, const rt_blk *b)
{
    /* wcet: <= RT_HEAP_FENCED; the slots of fenced[] */
    for (unsigned i = 0; i < RT_HEAP_FENCED; i++) {
        const rt_blk *f = h->fenced[i];
        if (f == NULL) {
            continue;
        }
        size_t d = blk_decode(h->key, f, f->head);
        if (d <= BLK_DATA_MASK && blk_data_fenced(d) && b > f &&
            (size_t)((const char *)b - (const char *)f) < blk_head_size(d)) {
            return true;
        }
    }
    return false;
}

bool heap_free_fenced(rt_heap_t *h, void *ptr)
{
    if (RT_HARDENING < 1) {
        return false; /* no containment, nothing fenced */
    }
    rt_blk *b = blk_from_payload(ptr);
    unsigned i = b != NULL ? fenced_slot(h, b) : RT_HEAP_FENCED;
    if (i == RT_HEAP_FENCED || ((h->fenced_live >> i) & 1u) == 0u || !blk_data_fenced(blk_decode(h->key, b, b->head))) {
        return false;
    }
    h->fenced_live &= ~((uint32_t)1 << i); /* remembered still, as dead: the memory stays fenced */
    h->frees++;
    return true;
}

/* True iff the header at s, in pool, is verified and sane, and leads through its size to `depth`
 * more such headers or to the pool's end: a place where the blocks resume. A word of data passes
 * one header check with probability 2^-T (T = 32 on the default 64-bit layout, 8 on 32-bit), and
 * no header of this heap verifies at another place (block.h); CONTAIN_DEPTH more headers make a
 * false start at most 2^-32 likely. The fewer the better: a chain through the next blocks breaks
 * at a second damaged header, and the extent would then swallow the live blocks before it. */
#if BLK_LINEAR_TAG
#define CONTAIN_DEPTH 0u
#elif RT_HARDENING >= 1
#define CONTAIN_DEPTH ((32u + BLK_TAG_BITS - 1u) / BLK_TAG_BITS - 1u)
#else
#define CONTAIN_DEPTH 0u
#endif
static bool contain_resumes(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *s, unsigned depth)
{
    /* wcet: <= CONTAIN_DEPTH + 1; k runs 0 .. depth, and depth is 0 or CONTAIN_DEPTH */
    for (unsigned k = 0; k <= depth && s != pool->end; k++) {
        size_t d = blk_decode(h->key, s, s->head);
        size_t size = blk_head_size(d);
        if (d > BLK_DATA_MASK || size < BLK_MIN || (size & (BLK_A - 1u)) != 0u ||
            size > (size_t)((char *)pool->end - (char *)s) || (d & BLK_FLAGS & ~(BLK_FENCE | BLK_PREV_FREE)) != 0u) {
            return false;
        }
        s = blk_offset(s, size);
    }
    return true;
}

/* True iff the walk may follow the header at b: it is verified and sane, and -- where a word of
 * data passes the tag with more than 2^-32 (the folded layouts, CONTAIN_DEPTH > 0) -- either the
 * header after it verifies too, or the blocks do not resume anywhere inside the extent b's header
 * claims: a header damaged into one that verifies by chance claims a size that lands on no
 * header, while the blocks it would swallow resume before that. (A sound block before a damaged
 * one passes: no chain of verified headers starts inside its payload.) O(1) when the next header
 * verifies, else O(its size / A). */
static bool contain_trusted(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *b)
{
    if (!contain_resumes(h, pool, b, 0u)) {
        return false;
    }
    if (CONTAIN_DEPTH == 0u) {
        return true;
    }
    rt_blk *n = blk_offset(b, blk_size(b));
    if (contain_resumes(h, pool, n, 0u)) {
        return true;
    }
    /* wcet: total <= 2 * HEAP_BYTES / BLK_A per heap_contain; the walks of both passes move on
     * past every place this scans (to the first resumption it meets, or to n), so its steps in a
     * pass are at most the pools' bytes / A */
    for (rt_blk *s = blk_offset(b, BLK_MIN); s < n; s = blk_offset(s, BLK_A)) {
        if (contain_resumes(h, pool, s, CONTAIN_DEPTH)) {
            return false;
        }
    }
    return true;
}

/* The extent of a block whose header at b is damaged: the first place after it (a smallest block
 * on, in steps of A) where the blocks resume, or the pool's end. O(extent / A). */
static rt_blk *contain_extent(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *b)
{
    /* wcet: total <= 2 * HEAP_BYTES / BLK_A per heap_contain; the walk of each pass resumes where
     * this stops, so its steps in a pass are at most the pools' bytes / A */
    for (rt_blk *s = blk_offset(b, BLK_MIN); s < pool->end; s = blk_offset(s, BLK_A)) {
        if (contain_resumes(h, pool, s, CONTAIN_DEPTH)) {
            return s;
        }
    }
    return pool->end;
}

typedef struct contain_acc {
    size_t used, quarantined;
    uint64_t live;
    unsigned nlive, ndead; /* fenced blocks found, live and dead (up to RT_HEAP_FENCED of each) */
    rt_blk *fenced_live[RT_HEAP_FENCED], *fenced_dead[RT_HEAP_FENCED];
} contain_acc;

enum { C_FREE, C_LIVE, C_DEAD, C_FENCED_LIVE };

/* A dead block of `size` bytes at b whose damage lies in its first (head) or last words: only a
 * smallest block at that end is fenced -- it holds every word an overflow of up to 16 bytes, or a
 * copy of two words, can reach -- and the rest becomes a free block, so a damaged free block
 * costs BLK_MIN bytes, not its size (the whole block when it is too small to split). Returns the
 * fenced piece. */
static rt_blk *contain_trim_dead(size_t key, rt_blk *b, size_t size, bool head)
{
    if (size < 2u * BLK_MIN) {
        blk_set_head(key, b, size | BLK_FENCE);
        return b;
    }
    rt_blk *fence = head ? b : blk_offset(b, size - BLK_MIN);
    rt_blk *rest = head ? blk_offset(b, BLK_MIN) : b;
    blk_set_head(key, rest, (size - BLK_MIN) | BLK_FREE);
    blk_set_footer(rest, size - BLK_MIN);
    blk_set_head(key, fence, BLK_MIN | BLK_FENCE);
    return fence;
}

/* True iff the blocks resume somewhere inside [b + BLK_MIN, b + size): the extent b's header
 * claims holds the header of another block. A free block never does (the headers a merge
 * swallows are stale, size 0); a header that does is no true one -- e.g. a block's own header of
 * an earlier moment copied back to its place, which its tag cannot tell from a current one.
 * O(size / A). */
static bool contain_spans_blocks(const rt_heap_t *h, const rt_pool_t *pool, rt_blk *b, size_t size)
{
    rt_blk *n = blk_offset(b, size);
    /* wcet: total <= HEAP_BYTES / BLK_A per heap_contain; pass 1 then moves on to the first
     * resumption this meets (contain_extent), or past n */
    for (rt_blk *s = blk_offset(b, BLK_MIN); s < n; s = blk_offset(s, BLK_A)) {
        if (contain_resumes(h, pool, s, CONTAIN_DEPTH)) {
            return true;
        }
    }
    return false;
}

/* Pass 1, before the index is touched (its links are what is checked): fences each free block
 * whose header, footer or own links are damaged -- a damaged link fences the block that holds it
 * and the block it names or that names it (heap_linked; the rebuild writes every link anew) --
 * the damaged end only (contain_trim_dead), stepping over damaged headers. A free header whose
 * extent holds another block's header is made a damaged one (pass 2 then finds its extent), so
 * that nothing is written inside an extent no verified header vouches for. Writes headers (and
 * the footer of a trimmed rest) only. */
static void contain_links(rt_heap_t *h, const rt_pool_t *pool)
{
    size_t key = h->key;
    /* wcet: total <= HEAP_BYTES / BLK_MIN per heap_contain; each step moves b on by a block or an
     * extent, at least BLK_MIN, through the pools */
    for (rt_blk *b = pool->first; b < pool->end;) {
        size_t d = blk_decode(key, b, b->head);
        size_t size = blk_head_size(d);
        if (!contain_trusted(h, pool, b)) { /* damaged (or verified only by chance) */
            b = contain_extent(h, pool, b);
            continue;
        }
        if (blk_data_free(d)) {
            bool head_ok = d == (size | BLK_FREE) && heap_linked(h, b);
            bool foot_ok = blk_prev_size(blk_offset(b, size)) == size;
            if ((!head_ok || !foot_ok) && contain_spans_blocks(h, pool, b, size)) {
                b->head = blk_enc(key, b, BLK_STALE) ^ ((size_t)1 << (BLK_WORD_BITS - 1u)); /* no header */
                b = contain_extent(h, pool, b);
                continue;
            }
            if (!head_ok || !foot_ok) {
                (void)contain_trim_dead(key, b, size, !head_ok);
            }
        }
        b = blk_offset(b, size);
    }
}

/* Pass 2, the index reset: classifies each block, merges free runs into one free block each
 * (indexed), writes every header whose flags the walk changes. */
static void contain_pool(rt_heap_t *h, const rt_pool_t *pool, contain_acc *a)
{
    size_t key = h->key;
    rt_blk *end = pool->end;
    rt_blk *run = NULL; /* the start of the free run being merged */
    size_t run_size = 0;
    /* wcet: total <= HEAP_BYTES / BLK_MIN per heap_contain; each step moves b on by a block, an
     * extent or a fenced head, at least BLK_MIN, through the pools */
    for (rt_blk *b = pool->first; b < end;) {
        size_t d = blk_decode(key, b, b->head);
        size_t size = blk_head_size(d);
        int state;
        if (!contain_trusted(h, pool, b)) {
            rt_blk *s = contain_extent(h, pool, b);
            size = (size_t)((char *)s - (char *)b);
            /* The header where the blocks resume (the sentinel's too) says whether the block
             * before it was free. Free and its footer agrees: one free block, free memory -- its
             * damaged head fenced, the rest free again. Free but the footer disagrees: a free
             * block damaged whole (a smallest block can be), or a damaged free block after other
             * damaged headers: fenced whole as dead, nothing written inside it. Not free (or no
             * verified header to say): a live block, fenced whole as live -- nothing written
             * inside it, a free of b accepted. (A used block's last word may hold the footer of
             * the free block it was cut from: the footer alone proves nothing.) */
            size_t sd = blk_decode(key, s, s->head);
            bool was_free = sd <= BLK_DATA_MASK && (sd & BLK_PREV_FREE) != 0u;
            unsigned slot = fenced_slot(h, b);
            if (slot < RT_HEAP_FENCED) { /* a fenced block damaged again: as it was */
                state = ((h->fenced_live >> slot) & 1u) != 0u ? C_FENCED_LIVE : C_DEAD;
            } else if (was_free) {
                state = C_DEAD;
                if (blk_prev_size(s) == size) {
                    size = blk_size(contain_trim_dead(key, b, size, true));
                }
            } else {
                state = C_FENCED_LIVE;
            }
        } else if (blk_data_fenced(d)) {
            state = fenced_is_live(h, b) ? C_FENCED_LIVE : C_DEAD;
        } else if ((d & BLK_MARK) != 0u || (d & BLK_FREE) != 0u) {
            state = C_FREE; /* free (sound: pass 1), or held by a layer that has forgotten it */
        } else {
            state = C_LIVE;
        }
        if (state == C_FREE) {
            if (run == NULL) {
                run = b;
                run_size = size;
            } else {
                blk_make_stale(key, b);
                run_size += size;
            }
        } else {
            size_t prev_free = run != NULL ? BLK_PREV_FREE : 0u;
            if (run != NULL) {
                blk_set_head(key, run, run_size | BLK_FREE);
                blk_set_footer(run, run_size);
                h->ops->insert(h, run);
                run = NULL;
            }
            if (state == C_LIVE) {
                blk_set_head(key, b, size | prev_free);
                a->used += size;
                a->live++;
            } else {
                blk_set_head(key, b, size | BLK_FENCE | prev_free);
                a->quarantined += size;
                if (state == C_FENCED_LIVE && a->nlive < RT_HEAP_FENCED) {
                    a->fenced_live[a->nlive++] = b;
                    a->live++;
                } else if (state == C_DEAD && a->ndead < RT_HEAP_FENCED) {
                    a->fenced_dead[a->ndead++] = b;
                }
            }
        }
        b = blk_offset(b, size);
    }
    if (run != NULL) {
        blk_set_head(key, run, run_size | BLK_FREE);
        blk_set_footer(run, run_size);
        h->ops->insert(h, run);
    }
    blk_set_head(key, end, run != NULL ? BLK_PREV_FREE : 0u);
}

void heap_contain_after(rt_heap_t *h, rt_error_kind_t kind, const void *ptr)
{
    if (kind == RT_ERR_CORRUPTED || (kind == RT_ERR_BAD_POINTER && heap_pool_of(h, (uintptr_t)ptr) != NULL)) {
        heap_contain(h);
    }
}

void heap_contain(rt_heap_t *h)
{
    if (RT_HARDENING < 1) {
        return;
    }
    if (h->ops->layer_forget != NULL) {
        h->ops->layer_forget(h);
    }
    /* wcet: <= RT_HEAP_MAX_POOLS; the pools */
    for (unsigned i = 0; i < h->npools; i++) {
        const rt_pool_t *pool = &h->pools[i];
        contain_links(h, pool);
        /* the guards are the heap's: written back (an overflow there damaged no block) */
        guard_fill((uintptr_t)pool->first - RT_HEAP_GUARD);
        guard_fill((uintptr_t)pool->end + BLK_W);
    }
    h->ops->reset(h);
    /* the counts alone are set: the lists are read only below them, and a whole initialiser
     * would be a memset call of 2 RT_HEAP_FENCED pointers with the lock held */
    contain_acc a;
    a.used = 0;
    a.quarantined = 0;
    a.live = 0;
    a.nlive = 0;
    a.ndead = 0;
    /* wcet: <= RT_HEAP_MAX_POOLS; the pools */
    for (unsigned i = 0; i < h->npools; i++) {
        contain_pool(h, &h->pools[i], &a);
    }
    h->fenced_live = 0;
    /* wcet: <= RT_HEAP_FENCED; the slots of fenced[], the live ones first */
    for (unsigned i = 0; i < RT_HEAP_FENCED; i++) {
        if (i < a.nlive) {
            h->fenced[i] = a.fenced_live[i];
            h->fenced_live |= (uint32_t)1 << i;
        } else {
            h->fenced[i] = i - a.nlive < a.ndead ? a.fenced_dead[i - a.nlive] : NULL;
        }
    }
    h->used = a.used;
    h->quarantined = a.quarantined;
    heap_regate(h);
    h->live_adjust = (int64_t)(a.live - (h->mallocs - h->frees));
}

/* --- walk, statistics, check --------------------------------------------------------------- */

void rt_heap_walk(rt_heap_t *h, rt_walk_fn fn, void *context)
{
    HEAP_REQUIRE(h, "walk", );
    uintptr_t token = heap_lock(h);
    if (h->ops->layer_reclaim != NULL) { /* the merged state: the held blocks back first */
        h->ops->layer_reclaim(h, "walk");
    }
    for (unsigned i = 0; i < h->npools; i++) {
        const rt_pool_t *pool = &h->pools[i];
        for (rt_blk *b = pool->first; b < pool->end; b = heap_walk_next(h, pool, b)) {
            size_t size = blk_size(b);
            size_t d = blk_data(b->head);
            bool fenced = blk_data_fenced(d);
            rt_block_info_t info = {blk_payload(b), size - BLK_W, size,
                                    fenced ? fenced_is_live(h, b) : (d & BLK_FENCE) == 0u, fenced};
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
    if (!heap_created(h)) {
        __builtin_memset(s, 0, sizeof *s);
        rt_report_bad_heap("stats", h);
        return;
    }
    uintptr_t token = heap_lock(h);
    if (h->ops->layer_reclaim != NULL) { /* exact figures: the held blocks back first */
        h->ops->layer_reclaim(h, "stats");
    }
    rt_stats_t own = {
        .capacity = h->capacity,
        .used_bytes = h->used,
        .peak_used = h->peak_used,
        .used_blocks = (size_t)heap_live_blocks(h),
        .quarantined_bytes = h->quarantined,
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
            if (blk_data_free(blk_data(b->head)) &&
                heap_walk_next(h, pool, b) != NULL) { /* (a damaged header ends the walk) */
                size_t fit = h->ops->fit_limit(blk_size(b)) - BLK_W;
                own.free_blocks++;
                if (fit > own.largest_free) {
                    own.largest_free = fit;
                }
            }
        }
    }
    size_t head = heap_head_fit(h);
    if (head > BLK_W && head - BLK_W > own.largest_free) {
        own.largest_free = head - BLK_W < h->max_request ? head - BLK_W : h->max_request;
    }
    rt_front_counts_t counts = {h->mallocs,           h->frees,          h->reallocs,
                                h->reallocs_in_place, h->hooks.failures, h->hooks.errors};
    heap_unlock(h, token);
    HEAP_DELIVER(h);
    rt_front_stats(s, &own, &counts);
}

/* The integrity check marks each free block the index lists by setting bit 0 of its footer (a
 * multiple of A otherwise), and the physical walk requires the mark on every free block and
 * clears it. */
typedef struct check_ctx {
    rt_heap_t *heap;
    size_t indexed;
} check_ctx;

/* Index visitor: b must be an A-aligned free block inside a pool, with a footer that agrees,
 * not seen before (unmarked); marks it. */
static bool check_visit(void *context, rt_blk *b)
{
    check_ctx *c = context;
    const rt_pool_t *pool = heap_pool_of(c->heap, (uintptr_t)b + BLK_W);
    if (pool == NULL || (((uintptr_t)b + BLK_W) & (BLK_A - 1u)) != 0u || !blk_head_ok(c->heap->key, b, b->head) ||
        (b->head & (BLK_FREE | BLK_PREV_FREE | BLK_MARK)) != BLK_FREE) {
        return false;
    }
    size_t size = blk_size(b);
    if (size < BLK_MIN || size > (size_t)((char *)pool->end - (char *)b) ||
        blk_prev_size(blk_offset(b, size)) != size) {
        return false;
    }
    ((size_t *)(void *)blk_offset(b, size))[-1] = size | 1u;
    c->indexed++;
    return true;
}

/* Index visitor after a failed walk: clears the marks check_visit set on blocks the walk did
 * not reach. Stops at the first block it cannot trust. */
static bool unmark_visit(void *context, rt_blk *b)
{
    check_ctx *c = context;
    const rt_pool_t *pool = heap_pool_of(c->heap, (uintptr_t)b + BLK_W);
    if (pool == NULL || (((uintptr_t)b + BLK_W) & (BLK_A - 1u)) != 0u || !blk_head_ok(c->heap->key, b, b->head)) {
        return false;
    }
    size_t size = blk_size(b);
    if (size < BLK_MIN || size > (size_t)((char *)pool->end - (char *)b)) {
        return false;
    }
    if (blk_prev_size(blk_offset(b, size)) == (size | 1u)) {
        blk_set_footer(b, size);
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

bool rt_heap_check(rt_heap_t *h)
{
    HEAP_REQUIRE(h, "check", false);
    uintptr_t token = heap_lock(h);
    check_ctx c = {h, 0};
    size_t listed = heap_layer_check(h), held = 0;
    bool ok = listed != SIZE_MAX && heap_check_index(h, check_visit, &c, false);
    size_t free_blocks = 0, used = 0, capacity = 0, quarantined = 0;
    uint64_t live = 0;
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
            size_t d = blk_data(head);
            size_t size = blk_head_size(head);
            bool is_free = blk_data_free(d);
            if (!blk_head_ok(h->key, b, head) || size < BLK_MIN || (size & (BLK_A - 1u)) != 0u ||
                size > (size_t)((char *)end - (char *)b) ||
                (RT_HARDENING < 1 && (d & (BLK_A - 1u) & ~BLK_FLAGS) != 0u)) {
                ok = false;
                broken = true;
                break;
            }
            if (((d & BLK_PREV_FREE) != 0u) != prev_free) {
                ok = false;
            }
            if (blk_data_fenced(d)) {
                quarantined += size;
                live += fenced_is_live(h, b);
            } else if ((d & BLK_MARK) != 0u) {
                held++; /* held by a layer (MARK, not FREE) */
            } else if (is_free) {
                size_t *footer = (size_t *)(void *)((char *)b + size) - 1;
                if (prev_free || *footer != (size | 1u)) {
                    ok = false; /* adjacent free blocks, bad footer, or not indexed */
                } else {
                    *footer = size;
                }
                free_blocks++;
            } else {
                live++;
                used += size;
            }
            prev_free = is_free;
            b = blk_offset(b, size);
        }
        if (b != end || end->head != blk_enc(h->key, end, prev_free ? BLK_PREV_FREE : 0u)) {
            ok = false;
        }
        capacity += (size_t)((char *)end - (char *)h->pools[i].first);
    }
    if (broken) { /* blocks past a broken header were not walked: clear their marks */
        (void)heap_check_index(h, unmark_visit, &c, false);
    }
    if (free_blocks != c.indexed || used != h->used || live != heap_live_blocks(h) || capacity != h->capacity ||
        quarantined != h->quarantined || held != listed) {
        ok = false;
    }
    if (!ok) { /* the damage found is fenced off, and reported */
        heap_contain(h);
    }
    heap_unlock(h, token);
    if (!ok) {
        rt_heap_report(h, RT_ERR_CORRUPTED, "check", NULL, 0);
    }
    return ok;
}

/* Index visitor of rt_heap_check_fast: the head b of a list is an A-aligned free block inside a
 * pool, its tag verified, its footer agreeing, its size within the pool. O(1), nothing written. */
static bool fast_visit(void *context, rt_blk *b)
{
    const rt_heap_t *h = context;
    const rt_pool_t *pool = heap_pool_of(h, (uintptr_t)b + BLK_W);
    if (pool == NULL || (((uintptr_t)b + BLK_W) & (BLK_A - 1u)) != 0u || !blk_head_ok(h->key, b, b->head) ||
        (b->head & (BLK_FREE | BLK_PREV_FREE | BLK_MARK)) != BLK_FREE) {
        return false;
    }
    size_t size = blk_size(b);
    return size >= BLK_MIN && size <= (size_t)((char *)pool->end - (char *)b) &&
           blk_prev_size(blk_offset(b, size)) == size;
}

bool rt_heap_check_fast(rt_heap_t *h)
{
    HEAP_REQUIRE(h, "check_fast", false);
    uintptr_t token = heap_lock(h);
    bool ok = h->npools >= 1u && h->npools <= RT_HEAP_MAX_POOLS && h->used <= h->capacity &&
              h->quarantined <= h->capacity - h->used && heap_check_index(h, fast_visit, h, true);
    size_t capacity = 0;
    for (unsigned i = 0; ok && i < h->npools; i++) { /* npools <= RT_HEAP_MAX_POOLS */
        const rt_pool_t *pool = &h->pools[i];
        rt_blk *end = pool->end;
        ok = pool->first < end && guards_ok(pool) &&
             (end->head == blk_enc(h->key, end, 0u) || end->head == blk_enc(h->key, end, BLK_PREV_FREE)) &&
             blk_head_ok(h->key, pool->first, pool->first->head);
        capacity += (size_t)((char *)end - (char *)pool->first);
    }
    ok = ok && capacity == h->capacity;
    if (!ok) { /* as rt_heap_check: the damage found is fenced off, and reported */
        heap_contain(h);
    }
    heap_unlock(h, token);
    if (!ok) {
        rt_heap_report(h, RT_ERR_CORRUPTED, "check_fast", NULL, 0);
    }
    return ok;
}
