/* SPDX-License-Identifier: MIT */
/*
 * fma.c -- the Fast Memory Allocator and the BSD 4.4 baseline over one region (rtalloc/fma.h).
 *
 * Algorithm (Thomas 1998, "Fast Memory Allocation"; McKusick & Karels 1988): a region of pages;
 * a page is cut into blocks of one power-of-two size (16 .. page/2), or handed out whole, or, beyond
 * the article, as part of a run of pages. The page table (one 32-bit word per page) names each
 * page's size index and, for FMA, its entry block: the first free block of the page, which counts
 * the page's free blocks and links the page into its size's doubly linked list. FMA unites: when
 * every block of a page is free again, the page leaves its size's list and returns to the free
 * pages (the anchor list or, at the top, lastused), usable for any size. BSD 4.4 never does: a
 * page keeps its size and its blocks go on a plain per-size LIFO list.
 *
 * Invariants (rt_fma_check verifies all of them):
 *   - page pg < lastused is free iff its free-page bit is set iff it is on the anchor list (tag
 *     FREE); every page >= lastused is free (tag FREE) and unlisted; touched >= lastused.
 *   - a block of a cut page is handed out iff its bit in the allocated-block map is set; bits of
 *     pages that are not cut (and of BSD's free whole pages) are 0; a whole page in use has bit 0.
 *   - FMA cut page: free blocks = entry count = 1 + chain length + virgin, 0 < count < n; the entry
 *     block is on the list of its class; virgin > 0 only when the entry is block 0; no entry iff
 *     every block is handed out.
 *   - BSD: list `class` holds exactly the free blocks of the pages of that class.
 * Bounds: see the header.
 *
 * Interruption (RT_FMA_JOURNAL, fma_internal.h): every store to metadata is FM_SET (an undo
 * record first when a journal is kept), each operation ends with fm_commit, and the operations
 * on runs of pages are sequences of one-page steps that each leave every invariant above true.
 * Hardening (RT_HARDENING >= 1): see "validation of the links" below; checks precede the stores.
 *
 * Freestanding C11: no libc, no globals; every byte of state lives in the caller's buffer, and
 * every link in it is an offset from the control block.
 */
#include <stdatomic.h>

#include "fma/fma_internal.h"
#include "front/front.h"

#define FM_BITS ((unsigned)(8u * sizeof(size_t)))

_Static_assert(sizeof(fma_block_t) == RT_FMA_MIN_BLOCK, "an entry block is 16 bytes, the smallest block");
_Static_assert(RT_FMA_MIN_BLOCK == (1u << FMA_MIN_LOG2), "minimum block");
_Static_assert(RT_FMA_PAGE_LOG2_MAX - FMA_MIN_LOG2 < FMA_TAG_MULTI, "size indices must not reach the tags");
_Static_assert(RT_FMA_PAGE_LOG2_MAX - FMA_MIN_LOG2 + 1u <= FMA_HEADS, "one head per class and BSD's pages");
_Static_assert(RT_FMA_PAGE_LOG2_MIN > FMA_MIN_LOG2, "a page holds at least two smallest blocks");
_Static_assert(_Alignof(struct rt_fma) <= FMA_CTRL_ALIGN, "the control block is 16-aligned");
_Static_assert(sizeof(uintptr_t) == sizeof(size_t), "addresses and sizes have the same width");

/* --- bit and layout helpers ------------------------------------------------------------------ */

static inline size_t fm_pow2(unsigned k) { return (size_t)1 << (k & (FM_BITS - 1u)); }
static inline size_t fm_bit(unsigned k) { return (size_t)1 << (k & (FM_BITS - 1u)); }
static inline uintptr_t fm_align_up(uintptr_t x, size_t a) { return (x + (a - 1u)) & ~(uintptr_t)(a - 1u); }
static inline bool fm_bsd(const rt_fma_t *f) { return (f->flags & RT_FMA_BSD44) != 0u; }
static inline size_t fm_page(const rt_fma_t *f) { return fm_pow2(f->page_log2); }

static inline unsigned char *fm_base(const rt_fma_t *f) { return (unsigned char *)(uintptr_t)f; }
static inline void *fm_at(const rt_fma_t *f, uint32_t ref) { return fm_base(f) + ref; }
static inline fma_block_t *fm_blk(const rt_fma_t *f, uint32_t ref) { return (fma_block_t *)fm_at(f, ref); }
static inline uint32_t fm_ref(const rt_fma_t *f, uintptr_t p) { return (uint32_t)(p - (uintptr_t)f); }
static inline uint32_t *fm_table(const rt_fma_t *f) { return (uint32_t *)fm_at(f, f->table_off); }
static inline size_t *fm_freemap(const rt_fma_t *f) { return (size_t *)fm_at(f, f->freemap_off); }
static inline size_t *fm_blockmap(const rt_fma_t *f, uint32_t pg)
{
    return (size_t *)fm_at(f, f->blockmap_off) + (size_t)pg * f->words;
}
static inline uint32_t fm_page_ref(const rt_fma_t *f, uint32_t pg)
{
    return f->pages_off + (uint32_t)((size_t)pg << f->page_log2);
}
/* The back link of free page pg, in the metadata beside the page table (never in the page: a
 * free page is not written, so pages that were never handed out stay as the buffer gave them). */
static inline uint32_t *fm_back(const rt_fma_t *f, uint32_t pg) { return (uint32_t *)fm_at(f, f->back_off) + pg; }

static inline uint32_t fm_word(uint32_t part, unsigned tag) { return (part << 4) | tag; }
static inline unsigned fm_tag(uint32_t w) { return w & FMA_TAG_MASK; }
static inline uint32_t fm_part(uint32_t w) { return w >> 4; }

/* Blocks per page of class i, and the block size. */
static inline uint32_t fm_nblocks(const rt_fma_t *f, unsigned i)
{
    return (uint32_t)1 << (f->page_log2 - FMA_MIN_LOG2 - i);
}
static inline size_t fm_bsize(unsigned i) { return (size_t)RT_FMA_MIN_BLOCK << i; }

static inline bool fm_bit_get(const size_t *map, uint32_t j)
{
    return ((map[j / FM_BITS] >> (j % FM_BITS)) & 1u) != 0u;
}

/* --- the journal: every store to metadata goes through FM_SET ----------------------------------- */

static inline fma_journal_t *fm_journal(const rt_fma_t *f) { return (fma_journal_t *)fm_at(f, f->journal_off); }

/* Appends the undo record of the `len` bytes at p. The record is written, then counted, then the
 * caller stores: dying before the count leaves the record ignored and the bytes untouched; after
 * it, recovery restores the bytes (whether or not they were stored). The signal fences keep the
 * compiler from moving these stores across each other (a process is stopped at an instruction
 * boundary, so program order is what another process sees once it holds the lock). */
static void fm_log_slow(rt_fma_t *f, const void *p, size_t len)
{
    fma_journal_t *j = fm_journal(f);
    uint32_t n = j->count;
    if (n >= FMA_JOURNAL_CAP) { /* the bound of fm_log was wrong: never write past the journal */
        RT_ASSERT(n < FMA_JOURNAL_CAP);
        return;
    }
    fma_undo_t *u = &j->undo[n];
    u->off = fm_ref(f, (uintptr_t)p);
    u->len = (uint32_t)len;
    u->old = 0;
    __builtin_memcpy(&u->old, p, len);
    atomic_signal_fence(memory_order_seq_cst); /* the record before the count that validates it */
    RT_FMA_STEP(f);
    j->count = n + 1u;
    if (n + 1u > j->high) {
        j->high = n + 1u;
    }
    atomic_signal_fence(memory_order_seq_cst); /* the count before the store it covers */
}

/* Before a store of metadata. Without a journal: one predictable branch. Records per step
 * (largest steps, counted from the code below; tests/stress/fma_kill.c measures j->high):
 *   FMA malloc from a fresh page  page get 5 (anchor unlink 3 + map 1, or lastused 1) + counters
 *                                 2 + entry 3 + list push 2 + table 1 + free_small 1 + bit 1 +
 *                                 used 2 = 17
 *   FMA free emptying a page      chain 2 + count 1 + free_small 2 + bit 1 + list unlink 2 + page
 *                                 put (map 1, used_pages 1, lastused or anchor push 4, reset 3)
 *                                 + used 2 = 19
 *   a run of pages                one page per step: take 5 + table 2 + bit 1 + used 2 <= 10;
 *                                 drop: table 1 + bit 1 + used 2 + page put 9 <= 13
 *   BSD cut of a fresh page       page get 5 + table 1 + head 1 + free_small 2 + bit 1 + used 2
 *                                 = 12; the links written into the fresh page are not logged:
 *                                 rolled back, the page is free again and its links are
 *                                 garbage nobody reads (the anchor list's back links are
 *                                 metadata beside the page table, logged)
 * so at most 19 records; FMA_JOURNAL_CAP (40) leaves room. */
static inline void fm_log(rt_fma_t *f, const void *p, size_t len)
{
    if (f->journal_off != 0u) {
        fm_log_slow(f, p, len);
    }
    RT_FMA_STEP(f);
}

#define FM_SET(f, lv, v)                \
    do {                                \
        fm_log((f), &(lv), sizeof(lv)); \
        (lv) = (v);                     \
    } while (0)

/* A store into a page taken from the free pages in this very step, past its first word: not
 * logged (see fm_log), but still a step for the tests. */
#define FM_SET_FRESH(f, lv, v) \
    do {                       \
        RT_FMA_STEP(f);        \
        (lv) = (v);            \
    } while (0)

/* Ends a step: the region is consistent again. */
static inline void fm_commit(rt_fma_t *f)
{
    if (f->journal_off != 0u) {
        RT_FMA_STEP(f);
        atomic_signal_fence(memory_order_seq_cst); /* every store of the step before the commit */
        fm_journal(f)->count = 0;
        atomic_signal_fence(memory_order_seq_cst);
    }
}

/* Sets (op != NONE, between steps) or clears the intent of a multi-step operation. */
static void fm_intent(rt_fma_t *f, uint32_t op, uint32_t first, uint32_t pages)
{
    if (f->journal_off != 0u) {
        fma_journal_t *j = fm_journal(f);
        if (op != FMA_INTENT_NONE) { /* clearing leaves them: they are read until intent is 0 */
            j->first = first;
            j->pages = pages;
        }
        atomic_signal_fence(memory_order_seq_cst);
        RT_FMA_STEP(f);
        j->intent = op;
        atomic_signal_fence(memory_order_seq_cst);
    }
}

static inline void fm_bit_set(rt_fma_t *f, size_t *map, uint32_t j)
{
    FM_SET(f, map[j / FM_BITS], map[j / FM_BITS] | fm_bit(j % FM_BITS));
}
static inline void fm_bit_clear(rt_fma_t *f, size_t *map, uint32_t j)
{
    FM_SET(f, map[j / FM_BITS], map[j / FM_BITS] & ~fm_bit(j % FM_BITS));
}

/* An error found under the lock (RT_ERR_CORRUPTED), reported by the public function after it. */
static void *fm_corrupt(rt_fma_t *f)
{
    f->pending = (uint32_t)RT_ERR_CORRUPTED;
    return NULL;
}

/* --- locking and errors --------------------------------------------------------------------- */

static inline uintptr_t fm_lock(rt_fma_t *f) { return rt_hooks_lock(&f->hooks); }
static inline void fm_unlock(rt_fma_t *f, uintptr_t token) { rt_hooks_unlock(&f->hooks, token); }

static bool fm_check_locked(rt_fma_t *f);

/* RT_DEBUG >= 2: the full check after every call, made under the lock (fm_debug_ok). A failure
 * is reported like any corruption (through the handler when there is one -- damage the
 * application wrote where no O(1) check has looked yet -- else RT_PANIC through rt_hooks_report),
 * not trapped on, once the lock is released (fm_debug_report): the report takes the lock itself,
 * and a lock hook need not nest. */
static inline bool fm_debug_ok(rt_fma_t *f) { return RT_DEBUG < 2 || fm_check_locked(f); }

static inline void fm_debug_report(rt_fma_t *f, bool ok)
{
    if (!ok) { /* "check", as the other allocators' walks report */
        rt_hooks_report(&f->hooks, false, RT_ERR_CORRUPTED, "check", NULL, 0u);
    }
}

/* --- the free-page map: bit set = page free (bits past P stay 0) ------------------------------- */

/* First free page >= from, or P. O(P/w). */
static uint32_t fm_next_free(const rt_fma_t *f, uint32_t from, unsigned *probes)
{
    const size_t *map = fm_freemap(f);
    size_t nwords = ((size_t)f->pages + FM_BITS - 1u) / FM_BITS;
    size_t i = from / FM_BITS;
    if (from >= f->pages) {
        return f->pages;
    }
    size_t w = map[i] & ~(fm_bit(from % FM_BITS) - 1u);
    while (w == 0u) {
        (*probes)++;
        if (++i >= nwords) {
            return f->pages;
        }
        w = map[i];
    }
    size_t pg = i * FM_BITS + RT_CTZ(w);
    return pg < f->pages ? (uint32_t)pg : f->pages;
}

/* First page >= from that is not free, or P. O(P/w). */
static uint32_t fm_next_used(const rt_fma_t *f, uint32_t from, unsigned *probes)
{
    const size_t *map = fm_freemap(f);
    size_t nwords = ((size_t)f->pages + FM_BITS - 1u) / FM_BITS;
    size_t i = from / FM_BITS;
    if (from >= f->pages) {
        return f->pages;
    }
    size_t w = ~map[i] & ~(fm_bit(from % FM_BITS) - 1u);
    while (w == 0u) {
        (*probes)++;
        if (++i >= nwords) {
            return f->pages;
        }
        w = ~map[i];
    }
    size_t pg = i * FM_BITS + RT_CTZ(w);
    return pg < f->pages ? (uint32_t)pg : f->pages;
}

/* First fit: the lowest page s with s = s0 (mod step) and [s, s + n) free, or P. Each round
 * passes one used page: O(P/w + R). */
static uint32_t fm_find_run(const rt_fma_t *f, uint32_t n, uint32_t s0, uint32_t step, unsigned *probes)
{
    uint32_t s = fm_next_free(f, 0, probes);
    while (s < f->pages) {
        (*probes)++;
        if (s < s0) {
            s = s0;
        } else if ((s - s0) % step != 0u) {
            uint32_t up = step - (s - s0) % step;
            if (up >= f->pages - s) {
                return f->pages;
            }
            s += up;
        }
        if (s >= f->pages || n > f->pages - s) {
            return f->pages;
        }
        uint32_t e = fm_next_used(f, s, probes);
        if (e - s >= n) {
            return s;
        }
        s = fm_next_free(f, e, probes);
    }
    return f->pages;
}

/* Pages of the longest run of free pages. O(P/w + R). */
static uint32_t fm_longest_run(const rt_fma_t *f)
{
    unsigned probes = 0;
    uint32_t best = 0;
    uint32_t s = fm_next_free(f, 0, &probes);
    while (s < f->pages) {
        uint32_t e = fm_next_used(f, s, &probes);
        if (e - s > best) {
            best = e - s;
        }
        s = fm_next_free(f, e, &probes);
    }
    return best;
}

/* --- free pages: the anchor list and lastused (the only code that touches them) ------------------ */

static inline void fm_anchor_push(rt_fma_t *f, uint32_t pg)
{
    uint32_t *table = fm_table(f);
    FM_SET(f, table[pg], fm_word(f->anchor, FMA_TAG_FREE));
    FM_SET(f, *fm_back(f, pg), FMA_NIL);
    if (f->anchor != FMA_NIL) {
        FM_SET(f, *fm_back(f, f->anchor), pg);
    }
    FM_SET(f, f->anchor, pg);
    FM_SET(f, f->free_listed, f->free_listed + 1u);
}

/* Whether free page pg (< lastused) may be unlinked: its back link names the page whose link
 * names pg (safe unlinking), or NIL when pg is the anchor. Both links are metadata, out of the
 * application's reach; the check keeps a torn or corrupted list from being followed. */
static inline bool fm_anchor_ok(const rt_fma_t *f, uint32_t pg)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    const uint32_t *table = fm_table(f);
    uint32_t prev = *fm_back(f, pg);
    if (prev == FMA_NIL) {
        return f->anchor == pg;
    }
    return prev < f->lastused && prev != pg && table[prev] == fm_word(pg, FMA_TAG_FREE);
}

/* Takes free page pg (< lastused) off the anchor list: O(1) through its back link. */
static inline void fm_anchor_unlink(rt_fma_t *f, uint32_t pg)
{
    uint32_t *table = fm_table(f);
    uint32_t next = fm_part(table[pg]);
    uint32_t prev = *fm_back(f, pg);
    if (prev == FMA_NIL) {
        FM_SET(f, f->anchor, next);
    } else {
        FM_SET(f, table[prev], fm_word(next, FMA_TAG_FREE));
    }
    if (next != FMA_NIL) {
        FM_SET(f, *fm_back(f, next), prev);
    }
    FM_SET(f, f->free_listed, f->free_listed - 1u);
}

/* Statistics only (not read by rt_fma_check beyond "peak >= now", which a roll-back keeps):
 * plain stores, not logged. */
static inline void fm_peaks(rt_fma_t *f)
{
    if (f->used_pages > f->peak_pages) {
        f->peak_pages = f->used_pages;
    }
    if (f->lastused > f->touched) {
        f->touched = f->lastused;
    }
}

/* Takes free page pg: off the anchor list below lastused, else pg == lastused, raised. */
static void fm_page_take(rt_fma_t *f, uint32_t pg)
{
    if (pg < f->lastused) {
        fm_anchor_unlink(f, pg);
    } else {
        FM_SET(f, f->lastused, pg + 1u);
    }
    fm_bit_clear(f, fm_freemap(f), pg);
    FM_SET(f, f->used_pages, f->used_pages + 1u);
    fm_peaks(f);
}

/* One free page: the anchor's head, else the page at lastused. FMA_NIL when none (and
 * f->pending set when the anchor's back link is corrupted). O(1). */
static uint32_t fm_page_get(rt_fma_t *f)
{
    uint32_t pg;
    if (f->anchor != FMA_NIL) {
        pg = f->anchor;
        if (!fm_anchor_ok(f, pg)) {
            (void)fm_corrupt(f);
            return FMA_NIL;
        }
    } else if (f->lastused < f->pages) {
        pg = f->lastused;
    } else {
        return FMA_NIL;
    }
    fm_page_take(f, pg);
    return pg;
}

/* Releases page pg (its blocks' bits already 0): the top page lowers lastused, any other goes
 * to the head of the anchor list; with no page in use the region resets. O(1). */
static void fm_page_put(rt_fma_t *f, uint32_t pg)
{
    fm_bit_set(f, fm_freemap(f), pg);
    FM_SET(f, f->used_pages, f->used_pages - 1u);
    if (pg + 1u == f->lastused) {
        FM_SET(f, f->lastused, pg);
        FM_SET(f, fm_table(f)[pg], fm_word(FMA_NIL, FMA_TAG_FREE));
    } else {
        fm_anchor_push(f, pg);
    }
    if (f->used_pages == 0u) { /* the article's reinitialisation */
        FM_SET(f, f->anchor, FMA_NIL);
        FM_SET(f, f->lastused, 0u);
        FM_SET(f, f->free_listed, 0u);
    }
}

/* --- sealed links (RT_HARDENING >= 1) ------------------------------------------------------------
 *
 * The checks below ("validation of the links") bound a link to blocks that are free and of the
 * right class and page, but a byte changed in a link may name ANOTHER such block. So every link
 * kept in a free block carries redundancy that detects any change of one byte deterministically,
 * checked before the link is followed or written through, and rewritten with it:
 *   - a free block that is not an entry block (an FMA chain member, a BSD list member) uses only
 *     `chain`; its `prev` word holds the check word ~chain ^ key ^ (the block's own offset);
 *   - an entry block uses all 16 bytes, but count and virgin are below 4096: the top 4 bits of
 *     each hold one half of an 8-bit check of the whole block (fm_seal_sum: the XOR of its bytes
 *     and the key, the data nibble next to each half folded into the OTHER half, so that a byte
 *     holding a half and a data nibble cannot change both consistently). Every store to an entry
 *     ends with fm_entry_cv, which writes count, virgin and the seal in one logged word.
 * The key mixes the region's layout (not a secret: the aim is detection, not hiding). */
static inline uint32_t fm_key(const rt_fma_t *f) { return 0x5A17C0DEu ^ (f->pages_off * 0x9E3779B9u) ^ f->pages; }
static inline uint32_t fm_fold8(uint32_t x)
{
    x ^= x >> 16;
    x ^= x >> 8;
    return x & 0xFFu;
}
static inline uint32_t fm_count(const fma_block_t *b) { return b->count & FMA_CV_MASK; }
static inline uint32_t fm_virgin(const fma_block_t *b) { return b->virgin & FMA_CV_MASK; }

static inline uint32_t fm_seal_sum(const rt_fma_t *f, uint32_t e, const fma_block_t *b, uint32_t count, uint32_t virgin)
{
    return fm_fold8(b->chain ^ b->prev ^ b->next ^ e ^ fm_key(f)) ^ (count & 0xFFu) ^ ((count >> 8) & 0xFu) ^
           (virgin & 0xFFu) ^ (((virgin >> 8) & 0xFu) << 4);
}

/* Entry block e (a block boundary inside the region) carries its seal. */
static inline bool fm_sealed(const rt_fma_t *f, uint32_t e)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    const fma_block_t *b = fm_blk(f, e);
    uint32_t stored = ((uint32_t)(b->count >> 12) << 4) | (uint32_t)(b->virgin >> 12);
    return stored == fm_seal_sum(f, e, b, fm_count(b), fm_virgin(b));
}

/* RT_HARDENING >= 1: stores count and virgin of entry block e, sealed over its links (stored
 * before). One undo record. */
static inline void fm_entry_cv(rt_fma_t *f, uint32_t e, uint32_t count, uint32_t virgin)
{
    fma_block_t *b = fm_blk(f, e);
    fma_block_t t;
    uint32_t sum = fm_seal_sum(f, e, b, count, virgin);
    t.count = (uint16_t)(count | (sum >> 4) << 12);
    t.virgin = (uint16_t)(virgin | (sum & 0xFu) << 12);
    FM_SET(f, b->cv, t.cv);
}

/* After a store to a link of entry block e. */
static inline void fm_reseal(rt_fma_t *f, uint32_t e)
{
    if (RT_HARDENING >= 1) {
        const fma_block_t *b = fm_blk(f, e);
        fm_entry_cv(f, e, fm_count(b), fm_virgin(b));
    }
}

static inline uint32_t fm_link_check(const rt_fma_t *f, uint32_t ref, uint32_t link) { return ~link ^ fm_key(f) ^ ref; }

/* Free block ref (not an entry block): its chain link agrees with its check word. */
static inline bool fm_link_ok(const rt_fma_t *f, uint32_t ref)
{
    const fma_block_t *b = fm_blk(f, ref);
    return RT_HARDENING < 1 || b->prev == fm_link_check(f, ref, b->chain);
}

/* Stores the chain link of free block ref (not an entry block), and its check word. */
static inline void fm_link_set(rt_fma_t *f, uint32_t ref, uint32_t link)
{
    fma_block_t *b = fm_blk(f, ref);
    FM_SET(f, b->chain, link);
    if (RT_HARDENING >= 1) {
        FM_SET(f, b->prev, fm_link_check(f, ref, link));
    }
}

/* The same in a page taken in this very step (see FM_SET_FRESH). */
static inline void fm_link_fresh(rt_fma_t *f, uint32_t ref, uint32_t link)
{
    fma_block_t *b = fm_blk(f, ref);
    FM_SET_FRESH(f, b->chain, link);
    if (RT_HARDENING >= 1) {
        FM_SET_FRESH(f, b->prev, fm_link_check(f, ref, link));
    }
}

/* --- FMA's lists of entry blocks --------------------------------------------------------------- */

static inline void fm_list_push(rt_fma_t *f, unsigned i, uint32_t e)
{
    fma_block_t *b = fm_blk(f, e);
    uint32_t next = f->freelist[i];
    FM_SET(f, b->prev, 0u);
    FM_SET(f, b->next, next);
    if (next != 0u) {
        FM_SET(f, fm_blk(f, next)->prev, e);
        fm_reseal(f, next);
    }
    FM_SET(f, f->freelist[i], e);
}

static inline void fm_list_unlink(rt_fma_t *f, unsigned i, uint32_t e)
{
    fma_block_t *b = fm_blk(f, e);
    uint32_t prev = b->prev, next = b->next;
    if (prev != 0u) {
        FM_SET(f, fm_blk(f, prev)->next, next);
        fm_reseal(f, prev);
    } else {
        FM_SET(f, f->freelist[i], next);
    }
    if (next != 0u) {
        FM_SET(f, fm_blk(f, next)->prev, prev);
        fm_reseal(f, next);
    }
}

static inline uint32_t fm_page_of(const rt_fma_t *f, uint32_t ref) { return (ref - f->pages_off) >> f->page_log2; }
static inline uint32_t fm_index_in_page(const rt_fma_t *f, uint32_t ref, unsigned i)
{
    return ((ref - f->pages_off) & (uint32_t)(fm_page(f) - 1u)) >> (FMA_MIN_LOG2 + i);
}

/* --- validation of the links kept in free blocks (RT_HARDENING >= 1) ---------------------------
 *
 * A free block's links (FMA's entry block: count, virgin, chain, prev, next; another free block
 * of an FMA page or of a BSD list: chain) lie right next to live blocks, in reach of an application's overflow. Each value read from there is checked against
 * what the application cannot reach -- the page table, the allocated-block map and the list
 * heads -- before it is followed, written through or acted on; a failed check refuses the call
 * with RT_ERR_CORRUPTED before any store. What the checks guarantee, whatever the bytes:
 *   - a link followed names a block boundary of a page of the right class (and, for an FMA
 *     chain, of the same page), inside the region: no access outside it;
 *   - a block handed out has its bit clear in the allocated-block map: never an overlap (a
 *     corrupted chain that loops or repeats reaches a block handed out already, and stops there);
 *   - an entry block is the one its page-table word names, with count and virgin in range and
 *     consistent with each other, and is unlinked only when both neighbours link back to it;
 *   - a page is united (released) only when the map says every block of it is free, and its
 *     entry block handed out last only when the map says every other block is taken: a count
 *     off by any amount is caught before it frees or leaks a page;
 *   - a free page is unlinked only when the page its back link names links to it (the links are
 *     out of band: this guards against a torn list, not an overflow).
 * Cost: a few compares per malloc and free, O(W) map words when a page fills or empties. */

static inline bool fm_in_class(const rt_fma_t *f, uint32_t ref, unsigned i)
{
    size_t bytes = i == f->classes ? fm_page(f) : fm_bsize(i);
    return ref >= f->pages_off && (size_t)(ref - f->pages_off) < ((size_t)f->pages << f->page_log2) &&
           ((ref - f->pages_off) & (bytes - 1u)) == 0u;
}

static inline bool fm_block_free(const rt_fma_t *f, uint32_t ref, unsigned i)
{
    return !fm_bit_get(fm_blockmap(f, fm_page_of(f, ref)), i == f->classes ? 0u : fm_index_in_page(f, ref, i));
}

/* e is the entry block of a page of class i (the page-table word names it). */
static inline bool fm_is_entry(const rt_fma_t *f, uint32_t e, unsigned i)
{
    return fm_in_class(f, e, i) && fm_table(f)[fm_page_of(f, e)] == fm_word(e >> 4, i);
}

/* The entry block e of class i, and its count and virgin run. */
static bool fm_entry_ok(const rt_fma_t *f, uint32_t e, unsigned i)
{
    if (!fm_is_entry(f, e, i) || !fm_block_free(f, e, i) || !fm_sealed(f, e)) {
        return false;
    }
    const fma_block_t *b = fm_blk(f, e);
    uint32_t n = fm_nblocks(f, i);
    uint32_t count = fm_count(b), virgin = fm_virgin(b);
    bool first = ((e - f->pages_off) & (uint32_t)(fm_page(f) - 1u)) == 0u;
    return count >= 1u && count < n && virgin <= n - 2u && (virgin == 0u || first) &&
           count >= 1u + virgin + (b->chain != 0u ? 1u : 0u);
}

/* ref, read from a chain of page pg with entry e, is another free, non-virgin block of it. */
static bool fm_chain_ok(const rt_fma_t *f, uint32_t ref, unsigned i, uint32_t pg, uint32_t e)
{
    if (ref == e || !fm_in_class(f, ref, i) || fm_page_of(f, ref) != pg || !fm_block_free(f, ref, i)) {
        return false;
    }
    uint32_t n = fm_nblocks(f, i);
    uint32_t j = fm_index_in_page(f, ref, i);
    return (j < n - 1u - fm_virgin(fm_blk(f, e)) || j == n - 1u) && fm_link_ok(f, ref);
}

/* Safe unlinking: e's neighbours on the list of class i are entry blocks of class i that link
 * back to e (or e is the head). */
static bool fm_list_ok(const rt_fma_t *f, unsigned i, uint32_t e)
{
    const fma_block_t *b = fm_blk(f, e);
    uint32_t prev = b->prev, next = b->next;
    if (prev == 0u ? f->freelist[i] != e
                   : prev == e || !fm_is_entry(f, prev, i) || !fm_sealed(f, prev) || fm_blk(f, prev)->next != e) {
        return false;
    }
    return next == 0u || (next != e && fm_is_entry(f, next, i) && fm_sealed(f, next) && fm_blk(f, next)->prev == e);
}

/* The head of the list of class i may be pushed down (its prev link written): an entry block of
 * class i, sealed, first. */
static bool fm_head_ok(const rt_fma_t *f, unsigned i)
{
    uint32_t h = f->freelist[i];
    return RT_HARDENING < 1 || h == 0u || (fm_is_entry(f, h, i) && fm_sealed(f, h) && fm_blk(f, h)->prev == 0u);
}

/* Bits j of word k of a page's map with lo <= j < hi. */
static size_t fm_word_mask(uint32_t k, uint32_t lo, uint32_t hi)
{
    uint32_t first = k * FM_BITS;
    size_t mask = ~(size_t)0;
    if (lo > first) {
        mask &= lo - first >= FM_BITS ? 0u : ~(fm_bit(lo - first) - 1u);
    }
    if (hi < first + FM_BITS) {
        mask &= hi <= first ? 0u : fm_bit(hi - first) - 1u;
    }
    return mask;
}

/* The map of page pg (n blocks) is all `set` except block x, which is !set. O(W). */
static bool fm_map_all_but(const rt_fma_t *f, uint32_t pg, uint32_t n, uint32_t x, bool set)
{
    const size_t *bits = fm_blockmap(f, pg);
    for (uint32_t k = 0; k < f->words; k++) {
        size_t mask = fm_word_mask(k, 0u, n);
        size_t want = set ? mask : 0u;
        if (x / FM_BITS == k) {
            want ^= fm_bit(x % FM_BITS);
        }
        if ((bits[k] & mask) != want) {
            return false;
        }
    }
    return true;
}

/* BSD: ref, the head of list i or read from a free block's link, is a free block of a page
 * of class i. */
static inline bool fm_bsd_ok(const rt_fma_t *f, uint32_t ref, unsigned i)
{
    return fm_in_class(f, ref, i) && fm_table(f)[fm_page_of(f, ref)] == fm_word(0u, i) && fm_block_free(f, ref, i);
}

/* --- allocation (under the lock) ----------------------------------------------------------------- */

static inline void *fm_handed(rt_fma_t *f, uint32_t ref, size_t bytes)
{
    FM_SET(f, f->used_bytes, f->used_bytes + bytes);
    FM_SET(f, f->used_blocks, f->used_blocks + 1u);
    f->mallocs++;
    if (f->used_bytes > f->peak_used) {
        f->peak_used = f->used_bytes;
    }
    return fm_at(f, ref);
}

static void *fm_fail(rt_fma_t *f)
{
    f->hooks.failures++;
    return NULL;
}

/* FMA, class i: the block after the entry block (the chain, then the virgin run), the entry block
 * itself when it is the last, or a fresh page cut in O(1). */
static void *fm_fma_small(rt_fma_t *f, unsigned i)
{
    uint32_t n = fm_nblocks(f, i);
    uint32_t e = f->freelist[i];
    uint32_t ref;
    f->last_probes = 1u;
    if (e != 0u) {
        if (RT_HARDENING >= 1 && !fm_entry_ok(f, e, i)) {
            return fm_corrupt(f);
        }
        fma_block_t *entry = fm_blk(f, e);
        uint32_t pg = fm_page_of(f, e);
        uint32_t count = fm_count(entry), virgin = fm_virgin(entry);
        if (count > 1u) {
            if (entry->chain != 0u) {
                ref = entry->chain;
                if (RT_HARDENING >= 1 && !fm_chain_ok(f, ref, i, pg, e)) { /* its check word too */
                    return fm_corrupt(f);
                }
                uint32_t next = fm_blk(f, ref)->chain;
                if (RT_HARDENING >= 1 && next != 0u && (next == ref || !fm_chain_ok(f, next, i, pg, e))) {
                    return fm_corrupt(f);
                }
                FM_SET(f, entry->chain, next);
            } else { /* the lowest virgin block: n - 1 - virgin (entry_ok: virgin > 0 here) */
                ref = fm_page_ref(f, pg) + (uint32_t)((size_t)(n - 1u - virgin) << (FMA_MIN_LOG2 + i));
                if (RT_HARDENING >= 1 && !fm_block_free(f, ref, i)) {
                    return fm_corrupt(f);
                }
                virgin--;
                if (RT_HARDENING < 1) {
                    FM_SET(f, entry->virgin, (uint16_t)virgin);
                }
            }
            if (RT_HARDENING >= 1) {
                fm_entry_cv(f, e, count - 1u, virgin);
            } else {
                FM_SET(f, entry->count, (uint16_t)(count - 1u));
            }
        } else { /* the entry block is the page's last free block: hand it out */
            if (RT_HARDENING >= 1 &&
                (!fm_map_all_but(f, pg, n, fm_index_in_page(f, e, i), true) || !fm_list_ok(f, i, e))) {
                return fm_corrupt(f);
            }
            ref = e;
            fm_list_unlink(f, i, e);
            FM_SET(f, fm_table(f)[pg], fm_word(0u, i));
        }
        FM_SET(f, f->free_small, f->free_small - 1u);
    } else {
        uint32_t pg = fm_page_get(f);
        f->last_probes = 2u;
        if (pg == FMA_NIL) {
            return f->pending != 0u ? NULL : fm_fail(f);
        }
        /*  [entry: count n-1, virgin n-2][virgin 1] ... [virgin n-2][returned]  */
        uint32_t page = fm_page_ref(f, pg);
        fma_block_t *entry = fm_blk(f, page);
        if (RT_HARDENING >= 1) { /* the list is empty: nothing to check before the push */
            FM_SET_FRESH(f, entry->chain, 0u);
            fm_list_push(f, i, page);
            fm_entry_cv(f, page, n - 1u, n - 2u);
        } else {
            FM_SET(f, entry->count, (uint16_t)(n - 1u));
            FM_SET(f, entry->virgin, (uint16_t)(n - 2u));
            FM_SET_FRESH(f, entry->chain, 0u);
            fm_list_push(f, i, page);
        }
        FM_SET(f, fm_table(f)[pg], fm_word(page >> 4, i));
        ref = page + (uint32_t)((size_t)(n - 1u) << (FMA_MIN_LOG2 + i));
        FM_SET(f, f->free_small, f->free_small + (n - 1u));
    }
    fm_bit_set(f, fm_blockmap(f, fm_page_of(f, ref)), fm_index_in_page(f, ref, i));
    return fm_handed(f, ref, fm_bsize(i));
}

/* BSD 4.4, class i (or i = classes: whole pages): pop the size's list; when empty, link a fresh
 * page whole, from its last block down to the first (kern_malloc.c), and pop its last block. */
static void *fm_bsd_bucket(rt_fma_t *f, unsigned i)
{
    f->last_probes = 1u;
    if (f->freelist[i] == 0u) {
        uint32_t pg = fm_page_get(f);
        f->last_probes = 2u;
        if (pg == FMA_NIL) {
            return f->pending != 0u ? NULL : fm_fail(f);
        }
        uint32_t page = fm_page_ref(f, pg);
        FM_SET(f, fm_table(f)[pg], fm_word(0u, i));
        if (i == f->classes) {
            fm_link_fresh(f, page, 0u);
            FM_SET(f, f->freelist[i], page);
            FM_SET(f, f->free_small, f->free_small + 1u);
        } else {
            uint32_t n = fm_nblocks(f, i);
            uint32_t size = (uint32_t)fm_bsize(i);
            uint32_t next = 0;                 /* the list is empty: the first block links to nothing */
            for (uint32_t j = 0; j < n; j++) { /* O(page / block): 4.4BSD's cut */
                fm_link_fresh(f, page + j * size, next);
                next = page + j * size;
            }
            FM_SET(f, f->freelist[i], next);
            FM_SET(f, f->free_small, f->free_small + n);
        }
    }
    uint32_t ref = f->freelist[i];
    if (RT_HARDENING >= 1 && (!fm_bsd_ok(f, ref, i) || !fm_link_ok(f, ref))) {
        return fm_corrupt(f);
    }
    uint32_t next = fm_blk(f, ref)->chain;
    if (RT_HARDENING >= 1 && next != 0u && (next == ref || !fm_bsd_ok(f, next, i))) {
        return fm_corrupt(f);
    }
    FM_SET(f, f->freelist[i], next);
    FM_SET(f, f->free_small, f->free_small - 1u);
    uint32_t pg = fm_page_of(f, ref);
    fm_bit_set(f, fm_blockmap(f, pg), i == f->classes ? 0u : fm_index_in_page(f, ref, i));
    return fm_handed(f, ref, i == f->classes ? fm_page(f) : fm_bsize(i));
}

/* --- runs of pages: steps that each leave the region consistent ------------------------------------
 *
 * A run grows one page per step ([s, s+j) -> [s, s+j+1): one page is a whole page, two and more a
 * multi-page block) and is freed one page per step from the top, so that the journal holds one
 * page's records, whatever the run's length; an intent record names the run (see
 * fma_internal.h). Without a journal the steps are the same code, uncommitted. */

static void fm_run_grow(rt_fma_t *f, uint32_t s, uint32_t j)
{
    uint32_t *table = fm_table(f);
    fm_page_take(f, s + j);
    if (j == 0u) {
        FM_SET(f, table[s], fm_word(0u, f->classes));
        fm_bit_set(f, fm_blockmap(f, s), 0u);
        FM_SET(f, f->used_blocks, f->used_blocks + 1u);
    } else {
        FM_SET(f, table[s + j], fm_word(j, FMA_TAG_CONT));
        FM_SET(f, table[s], fm_word(j + 1u, FMA_TAG_MULTI));
        if (j == 1u) {
            fm_bit_clear(f, fm_blockmap(f, s), 0u);
        }
    }
    FM_SET(f, f->used_bytes, f->used_bytes + fm_page(f));
    if (f->used_bytes > f->peak_used) {
        f->peak_used = f->used_bytes;
    }
}

/* [s, s+k) -> [s, s+k-1): its top page is released. */
static void fm_run_shrink(rt_fma_t *f, uint32_t s, uint32_t k)
{
    uint32_t *table = fm_table(f);
    if (k >= 2u) {
        if (k == 2u) {
            FM_SET(f, table[s], fm_word(0u, f->classes));
            fm_bit_set(f, fm_blockmap(f, s), 0u);
        } else {
            FM_SET(f, table[s], fm_word(k - 1u, FMA_TAG_MULTI));
        }
    } else {
        fm_bit_clear(f, fm_blockmap(f, s), 0u);
        FM_SET(f, f->used_blocks, f->used_blocks - 1u);
    }
    FM_SET(f, f->used_bytes, f->used_bytes - fm_page(f));
    fm_page_put(f, s + k - 1u);
}

/* Pages of the run at page s (0: s is free), UINT32_MAX when s is no run's first page. */
static uint32_t fm_run_pages(const rt_fma_t *f, uint32_t s)
{
    uint32_t w = fm_table(f)[s];
    if (fm_tag(w) == FMA_TAG_FREE) {
        return 0u;
    }
    if (w == fm_word(0u, f->classes) && fm_bit_get(fm_blockmap(f, s), 0u)) {
        return 1u;
    }
    if (fm_tag(w) == FMA_TAG_MULTI && fm_part(w) >= 2u && fm_part(w) <= f->lastused - s && s < f->lastused) {
        return fm_part(w);
    }
    return UINT32_MAX;
}

/* Frees the first k pages of the run at s, top down, one committed step each. */
static void fm_run_drop(rt_fma_t *f, uint32_t s, uint32_t k)
{
    for (; k > 0u; k--) {
        fm_run_shrink(f, s, k);
        fm_commit(f);
    }
}

/* n pages, aligned to step pages from page s0 (step 1: any). One page is a whole page. */
static void *fm_run(rt_fma_t *f, uint32_t n, uint32_t s0, uint32_t step)
{
    unsigned probes = 2u;
    uint32_t s = fm_find_run(f, n, s0, step, &probes);
    f->last_probes = probes;
    if (s >= f->pages) {
        return fm_fail(f);
    }
    if (RT_HARDENING >= 1) { /* every back link first: no step is taken on a corrupted list */
        for (uint32_t pg = s; pg < s + n && pg < f->lastused; pg++) {
            if (!fm_anchor_ok(f, pg)) {
                return fm_corrupt(f);
            }
        }
    }
    while (f->lastused < s) { /* only when an aligned run skipped free pages above lastused */
        fm_anchor_push(f, f->lastused);
        FM_SET(f, f->lastused, f->lastused + 1u);
        fm_peaks(f);
        fm_commit(f);
    }
    if (n > 1u) {
        fm_intent(f, FMA_INTENT_TAKE, s, n);
    }
    for (uint32_t j = 0; j < n; j++) {
        fm_run_grow(f, s, j);
        fm_commit(f);
    }
    if (n > 1u) {
        fm_intent(f, FMA_INTENT_NONE, 0u, 0u);
    }
    f->mallocs++;
    return fm_at(f, fm_page_ref(f, s));
}

/* Class of a request of 1 .. page/2 bytes. */
static inline unsigned fm_class(size_t size)
{
    return size <= RT_FMA_MIN_BLOCK ? 0u : FM_BITS - RT_CLZ(size - 1u) - FMA_MIN_LOG2;
}

/* 0 < size <= max_request. */
static void *fm_alloc(rt_fma_t *f, size_t size)
{
    size_t page = fm_page(f);
    if (size <= page / 2u) {
        unsigned i = fm_class(size);
        return fm_bsd(f) ? fm_bsd_bucket(f, i) : fm_fma_small(f, i);
    }
    if (size <= page) {
        if (fm_bsd(f)) {
            return fm_bsd_bucket(f, f->classes);
        }
        f->last_probes = 2u;
        uint32_t pg = fm_page_get(f);
        if (pg == FMA_NIL) {
            return f->pending != 0u ? NULL : fm_fail(f);
        }
        FM_SET(f, fm_table(f)[pg], fm_word(0u, f->classes));
        fm_bit_set(f, fm_blockmap(f, pg), 0u);
        return fm_handed(f, fm_page_ref(f, pg), page);
    }
    return fm_run(f, (uint32_t)((size + page - 1u) >> f->page_log2), 0u, 1u);
}

/* --- validation and release (under the lock) ---------------------------------------------------- */

typedef struct fm_loc {
    uint32_t ref;  /* the block */
    uint32_t page; /* its (first) page */
    unsigned tag;  /* class, whole page (classes) or FMA_TAG_MULTI */
    size_t size;   /* its bytes */
} fm_loc_t;

/* RT_ERR_NONE iff p is a block handed out and not freed. Exact, O(1). */
static rt_error_kind_t fm_locate(const rt_fma_t *f, const void *p, fm_loc_t *loc)
{
    uintptr_t a = (uintptr_t)p;
    uintptr_t first = (uintptr_t)fm_at(f, f->pages_off);
    if (a < first || a - first >= ((size_t)f->pages << f->page_log2)) {
        return RT_ERR_FOREIGN_POINTER;
    }
    uint32_t ref = fm_ref(f, a);
    uint32_t pg = fm_page_of(f, ref);
    uint32_t off = (ref - f->pages_off) & (uint32_t)(fm_page(f) - 1u);
    uint32_t w = fm_table(f)[pg];
    unsigned tag = fm_tag(w);
    loc->ref = ref;
    loc->page = pg;
    loc->tag = tag;
    if (tag == FMA_TAG_FREE) { /* refused exactly; a 16-aligned pointer may have been a block */
        return (off & (RT_FMA_MIN_BLOCK - 1u)) == 0u ? RT_ERR_DOUBLE_FREE : RT_ERR_BAD_POINTER;
    }
    if (tag == FMA_TAG_CONT) {
        return RT_ERR_BAD_POINTER;
    }
    if (tag == FMA_TAG_MULTI) {
        loc->size = (size_t)fm_part(w) << f->page_log2;
        return off == 0u ? RT_ERR_NONE : RT_ERR_BAD_POINTER;
    }
    if (tag == f->classes) {
        loc->size = fm_page(f);
        if (off != 0u) {
            return RT_ERR_BAD_POINTER;
        }
        return fm_bit_get(fm_blockmap(f, pg), 0u) ? RT_ERR_NONE : RT_ERR_DOUBLE_FREE;
    }
    if (tag > f->classes) {
        return RT_ERR_CORRUPTED;
    }
    loc->size = fm_bsize(tag);
    if ((off & (loc->size - 1u)) != 0u) {
        return RT_ERR_BAD_POINTER;
    }
    return fm_bit_get(fm_blockmap(f, pg), off >> (FMA_MIN_LOG2 + tag)) ? RT_ERR_NONE : RT_ERR_DOUBLE_FREE;
}

/* FMA: append to the entry block (count++), or become the entry block and the head of the size's
 * list; a page whose blocks are all free leaves the list and is released. O(1). Every check
 * comes before the first store. */
static rt_error_kind_t fm_fma_free_check(const rt_fma_t *f, const fm_loc_t *loc)
{
    if (RT_HARDENING < 1) {
        return RT_ERR_NONE;
    }
    unsigned i = loc->tag;
    uint32_t n = fm_nblocks(f, i);
    uint32_t e = fm_part(fm_table(f)[loc->page]) << 4;
    if (e == 0u) {
        return fm_head_ok(f, i) ? RT_ERR_NONE : RT_ERR_CORRUPTED; /* the head's prev is written */
    }
    if (!fm_entry_ok(f, e, i) || fm_page_of(f, e) != loc->page) {
        return RT_ERR_CORRUPTED;
    }
    if (fm_count(fm_blk(f, e)) + 1u == n &&
        (!fm_map_all_but(f, loc->page, n, fm_index_in_page(f, loc->ref, i), false) || !fm_list_ok(f, i, e))) {
        return RT_ERR_CORRUPTED; /* about to unite the page: the map must agree */
    }
    return RT_ERR_NONE;
}

static rt_error_kind_t fm_fma_small_free(rt_fma_t *f, const fm_loc_t *loc)
{
    if (fm_fma_free_check(f, loc) != RT_ERR_NONE) {
        return RT_ERR_CORRUPTED;
    }
    unsigned i = loc->tag;
    uint32_t n = fm_nblocks(f, i);
    uint32_t *word = &fm_table(f)[loc->page];
    uint32_t e = fm_part(*word) << 4;
    uint32_t x = fm_index_in_page(f, loc->ref, i);
    size_t *bits = fm_blockmap(f, loc->page);
    fma_block_t *b = fm_blk(f, loc->ref);
    if (e != 0u) {
        fma_block_t *entry = fm_blk(f, e);
        uint32_t count = fm_count(entry) + 1u;
        fm_bit_clear(f, bits, x);
        fm_link_set(f, loc->ref, entry->chain);
        FM_SET(f, entry->chain, loc->ref);
        if (RT_HARDENING >= 1) {
            if (count != n) { /* a united page's entry block is read no more */
                fm_entry_cv(f, e, count, fm_virgin(entry));
            }
        } else {
            FM_SET(f, entry->count, (uint16_t)count);
        }
        FM_SET(f, f->free_small, f->free_small + 1u);
        if (count == n) { /* every block free: the page is united */
            fm_list_unlink(f, i, e);
            FM_SET(f, f->free_small, f->free_small - (size_t)n);
            fm_page_put(f, loc->page);
        }
    } else if (RT_HARDENING >= 1) {
        fm_bit_clear(f, bits, x);
        FM_SET(f, b->chain, 0u);
        fm_list_push(f, i, loc->ref);
        fm_entry_cv(f, loc->ref, 1u, 0u);
        FM_SET(f, *word, fm_word(loc->ref >> 4, i));
        FM_SET(f, f->free_small, f->free_small + 1u);
    } else {
        fm_bit_clear(f, bits, x);
        FM_SET(f, b->count, (uint16_t)1u);
        FM_SET(f, b->virgin, (uint16_t)0u);
        FM_SET(f, b->chain, 0u);
        fm_list_push(f, i, loc->ref);
        FM_SET(f, *word, fm_word(loc->ref >> 4, i));
        FM_SET(f, f->free_small, f->free_small + 1u);
    }
    return RT_ERR_NONE;
}

/* Releases the located block (RT_ERR_CORRUPTED: refused, nothing changed). */
static rt_error_kind_t fm_release(rt_fma_t *f, const fm_loc_t *loc)
{
    if (loc->tag == FMA_TAG_MULTI) { /* a run: one page per step, rolled forward if interrupted */
        uint32_t n = (uint32_t)(loc->size >> f->page_log2);
        fm_intent(f, FMA_INTENT_DROP, loc->page, n);
        fm_run_drop(f, loc->page, n);
        fm_intent(f, FMA_INTENT_NONE, 0u, 0u);
        f->frees++;
        return RT_ERR_NONE;
    }
    size_t *bits = fm_blockmap(f, loc->page);
    if (loc->tag == f->classes) {
        fm_bit_clear(f, bits, 0u);
        if (fm_bsd(f)) {
            fm_link_set(f, loc->ref, f->freelist[loc->tag]);
            FM_SET(f, f->freelist[loc->tag], loc->ref);
            FM_SET(f, f->free_small, f->free_small + 1u);
        } else {
            fm_page_put(f, loc->page);
        }
    } else if (fm_bsd(f)) {
        fm_bit_clear(f, bits, fm_index_in_page(f, loc->ref, loc->tag));
        fm_link_set(f, loc->ref, f->freelist[loc->tag]);
        FM_SET(f, f->freelist[loc->tag], loc->ref);
        FM_SET(f, f->free_small, f->free_small + 1u);
    } else {
        rt_error_kind_t error = fm_fma_small_free(f, loc);
        if (error != RT_ERR_NONE) {
            return error;
        }
    }
    FM_SET(f, f->used_bytes, f->used_bytes - loc->size);
    FM_SET(f, f->used_blocks, f->used_blocks - 1u);
    f->frees++;
    return RT_ERR_NONE;
}

/* Rolls back the step the journal holds (restoring its records in reverse: idempotent, so a
 * recoverer may die too), then completes the intent: a run being taken is given back, a run
 * being freed is freed. False when the journal itself is not what the core writes. */
static bool fm_recover_locked(rt_fma_t *f)
{
    if (f->journal_off == 0u) {
        return true;
    }
    fma_journal_t *j = fm_journal(f);
    uint32_t n = j->count;
    size_t span = f->pages_off + ((size_t)f->pages << f->page_log2);
    if (n > FMA_JOURNAL_CAP) {
        return false;
    }
    for (uint32_t k = n; k-- > 0u;) {
        const fma_undo_t *u = &j->undo[k];
        uint32_t len = u->len;
        if ((len != 2u && len != 4u && len != 8u) || (u->off & (len - 1u)) != 0u || (size_t)u->off + len > span ||
            ((size_t)u->off + len > f->journal_off && u->off < f->journal_off + sizeof(fma_journal_t))) {
            return false;
        }
        __builtin_memcpy(fm_at(f, u->off), &u->old, len);
    }
    atomic_signal_fence(memory_order_seq_cst);
    j->count = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (n != 0u) {
        j->recovered++;
    }
    f->pending = 0;
    if (j->intent != FMA_INTENT_NONE) {
        if (j->intent > FMA_INTENT_DROP || j->first >= f->pages) {
            return false;
        }
        uint32_t k = fm_run_pages(f, j->first);
        if (k == UINT32_MAX) {
            return false;
        }
        fm_run_drop(f, j->first, k);
        fm_intent(f, FMA_INTENT_NONE, 0u, 0u);
    }
    return true;
}

/* --- creation ------------------------------------------------------------------------------------ */

typedef struct fm_layout {
    uint32_t table_off, back_off, freemap_off, blockmap_off, meta_end;
    uint32_t words;
} fm_layout_t;

static inline size_t fm_ctrl_size(void) { return fm_align_up(sizeof(struct rt_fma), FMA_CTRL_ALIGN); }

static inline size_t fm_journal_size(bool journal)
{
    return journal ? fm_align_up(sizeof(fma_journal_t), FMA_CTRL_ALIGN) : 0u;
}

/* Offsets (from a 16-aligned control block) of the metadata for P pages. P < 2^27. The journal,
 * when kept, follows the control block. */
static fm_layout_t fm_layout(uint32_t pages, unsigned page_log2, bool journal)
{
    fm_layout_t l;
    size_t bits_per_page = fm_pow2(page_log2 - FMA_MIN_LOG2);
    l.words = (uint32_t)((bits_per_page + FM_BITS - 1u) / FM_BITS);
    l.table_off = (uint32_t)(fm_ctrl_size() + fm_journal_size(journal));
    l.back_off = (uint32_t)(l.table_off + (size_t)pages * 4u);
    size_t at = fm_align_up(l.back_off + (size_t)pages * 4u, sizeof(size_t));
    l.freemap_off = (uint32_t)at;
    at += ((size_t)pages + FM_BITS - 1u) / FM_BITS * sizeof(size_t);
    l.blockmap_off = (uint32_t)at;
    at += (size_t)pages * l.words * sizeof(size_t);
    l.meta_end = (uint32_t)at;
    return l;
}

static size_t fm_min_buffer_for(unsigned page_log2)
{
    size_t page = fm_pow2(page_log2);
    size_t meta = fm_layout(1u, page_log2, false).meta_end;
    /* the control block lands on a multiple of 16, so control + meta ends at a residue = meta
     * (mod 16) of the page: the worst padding to the next page is page - that residue (or
     * page - 16 when it is 0), after up to 15 bytes to align the control block */
    size_t r = meta % FMA_CTRL_ALIGN;
    return (FMA_CTRL_ALIGN - 1u) + meta + (page - (r != 0u ? r : FMA_CTRL_ALIGN)) + page;
}

size_t rt_fma_min_buffer(void) { return fm_min_buffer_for(RT_FMA_PAGE_LOG2); }

/* The most pages (and their layout) that fit between a 16-aligned control block at `ctrl` and
 * `end` (end - ctrl <= FMA_SPAN_MAX). 0 when not even one. An estimate from above (ignoring the
 * control block, the alignment and the free-page map's rounding), then down one page at a time:
 * a few steps, as the padding is < a page. */
static uint32_t fm_fit(uintptr_t ctrl, uintptr_t end, unsigned page_log2, bool journal, fm_layout_t *l)
{
    size_t page = fm_pow2(page_log2);
    size_t span = (size_t)(end - ctrl);
    size_t per_page8 = 8u * (page + 8u + (size_t)fm_layout(1u, page_log2, false).words * sizeof(size_t)) + 1u;
    size_t pages = span / per_page8 * 8u + (span % per_page8) * 8u / per_page8;
    if (pages >= FMA_NIL) {
        pages = FMA_NIL - 1u;
    }
    for (; pages > 0u; pages--) {
        *l = fm_layout((uint32_t)pages, page_log2, journal);
        uintptr_t first = fm_align_up(ctrl + l->meta_end, page);
        if (first > ctrl && first <= end && (size_t)(end - first) >> page_log2 >= pages) {
            break;
        }
    }
    return (uint32_t)pages;
}

size_t rt_fma_control_size(size_t size, unsigned page_log2)
{
    if (page_log2 < RT_FMA_PAGE_LOG2_MIN || page_log2 > RT_FMA_PAGE_LOG2_MAX) {
        return 0;
    }
    fm_layout_t l;
    uint32_t pages = fm_fit(0u, size > FMA_SPAN_MAX ? FMA_SPAN_MAX : (uintptr_t)size, page_log2, false, &l);
    return fm_layout(pages, page_log2, false).meta_end;
}

rt_fma_t *rt_fma_create(void *mem, size_t size) { return rt_fma_create_ex(mem, size, RT_FMA_PAGE_LOG2, 0u); }

rt_fma_t *rt_fma_create_ex(void *mem, size_t size, unsigned page_log2, unsigned flags)
{
    if (mem == NULL || page_log2 < RT_FMA_PAGE_LOG2_MIN || page_log2 > RT_FMA_PAGE_LOG2_MAX ||
        (flags & ~(RT_FMA_BSD44 | RT_FMA_JOURNAL | RT_FMA_ZEROED)) != 0u) {
        return NULL;
    }
    size_t page = fm_pow2(page_log2);
    uintptr_t start = (uintptr_t)mem;
    uintptr_t end = size > UINTPTR_MAX - start ? UINTPTR_MAX : start + size;
    uintptr_t ctrl = fm_align_up(start, FMA_CTRL_ALIGN);
    if (ctrl < start || ctrl >= end) {
        return NULL;
    }
    if (end - ctrl > FMA_SPAN_MAX) {
        end = ctrl + FMA_SPAN_MAX; /* offsets are 32 bits: clamp */
    }
    fm_layout_t l;
    bool journal = (flags & RT_FMA_JOURNAL) != 0u;
    uint32_t pages = fm_fit(ctrl, end, page_log2, journal, &l);
    if (pages == 0u) {
        return NULL;
    }
    rt_fma_t *f = (rt_fma_t *)ctrl;
    __builtin_memset(f, 0, sizeof *f);
    f->page_log2 = page_log2;
    f->flags = flags & (RT_FMA_BSD44 | RT_FMA_ZEROED);
    f->classes = page_log2 - FMA_MIN_LOG2;
    f->words = l.words;
    f->pages = pages;
    f->table_off = l.table_off;
    f->back_off = l.back_off;
    f->freemap_off = l.freemap_off;
    f->blockmap_off = l.blockmap_off;
    f->pages_off = (uint32_t)(fm_align_up(ctrl + l.meta_end, page) - ctrl);
    f->anchor = FMA_NIL;
    if (journal) {
        f->journal_off = (uint32_t)fm_ctrl_size();
        __builtin_memset(fm_journal(f), 0, sizeof(fma_journal_t));
    }
    uint32_t *table = fm_table(f);
    for (uint32_t pg = 0; pg < f->pages; pg++) {
        table[pg] = fm_word(FMA_NIL, FMA_TAG_FREE);
    }
    size_t *map = fm_freemap(f);
    size_t nwords = ((size_t)pages + FM_BITS - 1u) / FM_BITS;
    for (size_t i = 0; i < nwords; i++) {
        map[i] = ~(size_t)0;
    }
    if (pages % FM_BITS != 0u) {
        map[nwords - 1u] = fm_bit((unsigned)(pages % FM_BITS)) - 1u;
    }
    __builtin_memset(fm_blockmap(f, 0), 0, (size_t)pages * l.words * sizeof(size_t));
    fm_debug_report(f, fm_debug_ok(f)); /* no lock: the instance is not shared yet */
    return f;
}

/* --- the public operations ------------------------------------------------------------------------ */

static void fm_report(rt_fma_t *f, rt_error_kind_t kind, const char *operation, const void *ptr, size_t size)
{
    rt_hooks_report(&f->hooks, false, kind, operation, ptr, size);
}

/* The FMA as the allocator front sees it (front/front.h). */
static void *fm_front_malloc(void *f, size_t size) { return rt_fma_malloc(f, size); }
static void fm_front_free(void *f, void *p) { rt_fma_free(f, p); }
static void fm_front_report(void *f, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                            size_t size)
{
    rt_hooks_report(&((rt_fma_t *)f)->hooks, refused, kind, operation, ptr, size);
}
static size_t fm_front_max(const void *f) { return rt_fma_max_request(f); }
static const rt_front_ops_t fm_front = {fm_front_malloc, fm_front_free, fm_front_report, fm_front_max};

/* The error a NULL result of an allocation hides (RT_ERR_NONE: out of memory), cleared. */
static inline rt_error_kind_t fm_take_pending(rt_fma_t *f, const void *p)
{
    if (p != NULL || f->pending == 0u) {
        return RT_ERR_NONE;
    }
    rt_error_kind_t error = (rt_error_kind_t)f->pending;
    f->pending = 0;
    return error;
}

/* malloc under the lock; *fresh (may be NULL) receives the first page never handed out before
 * the call (every page from it on holds what the buffer held at create). */
static void *fm_malloc_op(rt_fma_t *f, size_t size, const char *operation, uint32_t *fresh)
{
    if (size > rt_fma_max_request(f)) {
        return rt_front_refuse(&fm_front, f, RT_ERR_TOO_LARGE, operation, NULL, size);
    }
    uintptr_t token = fm_lock(f);
    if (fresh != NULL) {
        *fresh = f->touched;
    }
    void *p = fm_alloc(f, size);
    fm_commit(f);
    bool ok = fm_debug_ok(f);
    rt_error_kind_t error = fm_take_pending(f, p);
    fm_unlock(f, token);
    fm_debug_report(f, ok);
    return error == RT_ERR_NONE ? p : rt_front_refuse(&fm_front, f, error, operation, NULL, size);
}

void *rt_fma_malloc(rt_fma_t *f, size_t size) { return size == 0u ? NULL : fm_malloc_op(f, size, "malloc", NULL); }

/* calloc: a block of a page or more is cleared only below the first page never handed out when
 * the buffer was zero at create (RT_FMA_ZEROED): the allocator writes nothing into such pages, so
 * a large calloc on a fresh mapping touches none of them. Smaller blocks, and every block of the
 * BSD baseline (whose buckets link a fresh whole page), are cleared whole. */
void *rt_fma_calloc(rt_fma_t *f, size_t count, size_t size)
{
    if ((f->flags & RT_FMA_ZEROED) == 0u || fm_bsd(f)) { /* BSD links a fresh whole page */
        return rt_front_calloc(&fm_front, f, count, size);
    }
    if (size != 0u && count > SIZE_MAX / size) {
        return rt_front_refuse(&fm_front, f, RT_ERR_OVERFLOW, "calloc", NULL, count);
    }
    size_t n = count * size;
    uint32_t fresh = 0;
    unsigned char *p = n == 0u ? NULL : fm_malloc_op(f, n, "calloc", &fresh);
    if (p == NULL) {
        return NULL;
    }
    size_t clear = n;
    if (n > fm_page(f) / 2u) { /* a whole page or a run: the pages from `fresh` on are zero */
        uint32_t pg = fm_page_of(f, fm_ref(f, (uintptr_t)p));
        size_t dirty = pg >= fresh ? 0u : (size_t)(fresh - pg) << f->page_log2;
        clear = dirty < n ? dirty : n;
    }
    __builtin_memset(p, 0, clear);
    return p;
}

void rt_fma_free(rt_fma_t *f, void *p)
{
    if (p == NULL) {
        return;
    }
    fm_loc_t loc;
    bool ok = true;
    uintptr_t token = fm_lock(f);
    rt_error_kind_t error = fm_locate(f, p, &loc);
    if (error == RT_ERR_NONE) {
        error = fm_release(f, &loc);
        fm_commit(f);
        ok = fm_debug_ok(f);
    }
    fm_unlock(f, token);
    fm_debug_report(f, ok);
    if (error != RT_ERR_NONE) {
        fm_report(f, error, "free", p, 0u);
    }
}

void *rt_fma_realloc(rt_fma_t *f, void *p, size_t size)
{
    void *edge;
    if (rt_front_realloc_edge(&fm_front, f, p, size, &edge)) {
        return edge;
    }
    fm_loc_t loc;
    uintptr_t token = fm_lock(f);
    rt_error_kind_t error = fm_locate(f, p, &loc);
    if (error != RT_ERR_NONE) {
        fm_unlock(f, token);
        return rt_front_refuse(&fm_front, f, error, "realloc", p, size);
    }
    if (size <= loc.size) { /* fits: in place (blocks never shrink) */
        f->reallocs++;
        f->reallocs_in_place++;
        fm_unlock(f, token);
        return p;
    }
    if (!fm_bsd(f) && loc.tag < f->classes) { /* refused before the move, not after it */
        error = fm_fma_free_check(f, &loc);
        if (error != RT_ERR_NONE) {
            fm_unlock(f, token);
            return rt_front_refuse(&fm_front, f, error, "realloc", p, size);
        }
    }
    void *moved = fm_alloc(f, size);
    fm_commit(f);
    error = fm_take_pending(f, moved);
    fm_unlock(f, token);
    if (moved == NULL) { /* out of memory (or corrupted): the old block is untouched */
        return error == RT_ERR_NONE ? NULL : rt_front_refuse(&fm_front, f, error, "realloc", p, size);
    }
    __builtin_memcpy(moved, p, loc.size); /* outside the lock: the caller still owns p */
    token = fm_lock(f);
    /* p's links live out of band, in the page table and map: relocated for the release, and if
     * another thread freed p meanwhile (its bug), refused as a double free */
    error = fm_locate(f, p, &loc);
    if (error == RT_ERR_NONE) {
        error = fm_release(f, &loc);
        fm_commit(f);
    }
    f->reallocs++;
    bool ok = fm_debug_ok(f);
    fm_unlock(f, token);
    fm_debug_report(f, ok);
    if (error != RT_ERR_NONE) {
        fm_report(f, error, "realloc", p, size);
    }
    return moved;
}

void *rt_fma_memalign(rt_fma_t *f, size_t alignment, size_t size)
{
    if (!rt_front_memalign_args(&fm_front, f, alignment, size)) {
        return NULL;
    }
    if (alignment > rt_fma_max_request(f)) {
        return rt_front_refuse(&fm_front, f, RT_ERR_TOO_LARGE, "memalign", NULL, size);
    }
    size_t page = fm_page(f);
    uintptr_t token = fm_lock(f);
    void *p;
    if (alignment <= page) { /* a block of 2^k <= page is aligned to 2^k */
        p = fm_alloc(f, size > alignment ? size : alignment);
    } else {
        uintptr_t first = (uintptr_t)fm_at(f, f->pages_off);
        uint32_t s0 = (uint32_t)((((alignment - first % alignment) % alignment)) >> f->page_log2);
        uint32_t step = (uint32_t)(alignment >> f->page_log2);
        p = fm_run(f, (uint32_t)((size + page - 1u) >> f->page_log2), s0, step);
    }
    fm_commit(f);
    bool ok = fm_debug_ok(f);
    rt_error_kind_t error = fm_take_pending(f, p);
    fm_unlock(f, token);
    fm_debug_report(f, ok);
    return error == RT_ERR_NONE ? p : rt_front_refuse(&fm_front, f, error, "memalign", NULL, size);
}

size_t rt_fma_usable_size(rt_fma_t *f, void *p)
{
    fm_loc_t loc;
    uintptr_t token = fm_lock(f);
    rt_error_kind_t error = p == NULL ? RT_ERR_FOREIGN_POINTER : fm_locate(f, p, &loc);
    fm_unlock(f, token);
    if (error != RT_ERR_NONE) {
        fm_report(f, error, "usable_size", p, 0u);
        return 0u;
    }
    return loc.size;
}

size_t rt_fma_max_request(const rt_fma_t *f) { return (size_t)f->pages << f->page_log2; }

void rt_fma_stats(rt_fma_t *f, rt_stats_t *s)
{
    uintptr_t token = fm_lock(f);
    size_t largest = (size_t)fm_longest_run(f) << f->page_log2;
    for (unsigned i = 0; i <= f->classes; i++) {
        size_t bytes = i == f->classes ? fm_page(f) : fm_bsize(i);
        if (f->freelist[i] != 0u && bytes > largest) {
            largest = bytes;
        }
    }
    rt_stats_t own = {
        .capacity = rt_fma_max_request(f),
        .used_bytes = f->used_bytes,
        .largest_free = largest,
        .peak_used = f->peak_used,
        .watermark = (size_t)f->touched << f->page_log2,
        .used_blocks = f->used_blocks,
        .free_blocks = f->free_small + (f->pages - f->used_pages),
    };
    rt_front_counts_t counts = {f->mallocs,           f->frees,          f->reallocs,
                                f->reallocs_in_place, f->hooks.failures, f->hooks.errors};
    fm_unlock(f, token);
    rt_front_stats(s, &own, &counts);
}

unsigned rt_fma_last_probes(const rt_fma_t *f) { return f->last_probes; }

void rt_fma_pages(const rt_fma_t *f, rt_fma_pages_t *out)
{
    out->total = f->pages;
    out->used = f->used_pages;
    out->touched = f->touched;
    out->peak_used = f->peak_pages;
    out->free_listed = f->free_listed;
}

/* --- integrity ------------------------------------------------------------------------------------ */

/* Walks a chain or list from `ref` (read only: rt_fma_check may be interrupted like any call):
 * every member must be a free block of class i in a page of class i (and, when `page` !=
 * FMA_NIL, in that page, not in its virgin run [vlo, n-1)). Returns the members, or UINT32_MAX
 * when one is invalid or the walk passes `limit` members. A chain that ends within the limit has
 * no member twice: each block has one link, so a repeated member would repeat for ever. */
static uint32_t fm_walk_chain(const rt_fma_t *f, uint32_t ref, unsigned i, uint32_t page, uint32_t vlo, uint32_t limit)
{
    uint32_t count = 0;
    const uint32_t *table = fm_table(f);
    uint32_t n = i == f->classes ? 1u : fm_nblocks(f, i);
    while (ref != 0u) {
        if (count == limit || !fm_in_class(f, ref, i)) {
            return UINT32_MAX;
        }
        uint32_t pg = fm_page_of(f, ref);
        uint32_t j = i == f->classes ? 0u : fm_index_in_page(f, ref, i);
        if (fm_tag(table[pg]) != i || (page != FMA_NIL && (pg != page || (j >= vlo && j < n - 1u))) ||
            fm_bit_get(fm_blockmap(f, pg), j) || ((page == FMA_NIL || count > 0u) && !fm_link_ok(f, ref))) {
            return UINT32_MAX; /* (an FMA chain starts at its entry block, which is sealed) */
        }
        count++;
        ref = fm_blk(f, ref)->chain;
    }
    return count;
}

/* Bits set in x (Kernighan: one round per set bit; no library call). */
static unsigned fm_bitcount(size_t x)
{
    unsigned c = 0;
    for (; x != 0u; x &= x - 1u) { /* at most w rounds; check only */
        c++;
    }
    return c;
}

/* Bits set among bits 0 .. n-1 of a page's allocated-block map. O(W). */
static uint32_t fm_popcount(const rt_fma_t *f, uint32_t pg, uint32_t n)
{
    const size_t *bits = fm_blockmap(f, pg);
    uint32_t c = 0;
    for (uint32_t k = 0; k < f->words; k++) {
        c += fm_bitcount(bits[k] & fm_word_mask(k, 0u, n));
    }
    return c;
}

/* No bit set from bit `from` on. O(W). */
static bool fm_bits_zero_from(const rt_fma_t *f, uint32_t pg, uint32_t from)
{
    const size_t *bits = fm_blockmap(f, pg);
    for (uint32_t k = 0; k < f->words; k++) {
        if ((bits[k] & fm_word_mask(k, from, f->words * FM_BITS)) != 0u) {
            return false;
        }
    }
    return true;
}

/* The whole invariant (see the top of the file). O(P * W + blocks). */
static bool fm_check_locked(rt_fma_t *f)
{
    const uint32_t *table = fm_table(f);
    const size_t *freemap = fm_freemap(f);
    bool bsd = fm_bsd(f);
    if (f->classes != f->page_log2 - FMA_MIN_LOG2 || f->lastused > f->pages || f->touched < f->lastused ||
        f->touched > f->pages || f->used_pages > f->lastused || f->peak_pages < f->used_pages ||
        (((uintptr_t)f + f->pages_off) & (fm_page(f) - 1u)) != 0u) {
        return false;
    }
    size_t used_bytes = 0, used_blocks = 0, free_small = 0;
    uint32_t used_pages = 0, free_below = 0, entries[FMA_HEADS] = {0}, bsd_free[FMA_HEADS] = {0};
    for (uint32_t pg = 0; pg < f->pages; pg++) {
        uint32_t w = table[pg];
        unsigned tag = fm_tag(w);
        bool is_free = fm_bit_get(freemap, pg);
        if (tag == FMA_TAG_FREE) {
            if (!is_free || !fm_bits_zero_from(f, pg, 0u)) {
                return false;
            }
            free_below += pg < f->lastused ? 1u : 0u;
            continue;
        }
        if (is_free || pg >= f->lastused) {
            return false;
        }
        used_pages++;
        if (tag == FMA_TAG_MULTI) {
            uint32_t n = fm_part(w);
            if (n < 2u || n > f->lastused - pg || !fm_bits_zero_from(f, pg, 0u)) {
                return false;
            }
            for (uint32_t k = 1; k < n; k++) {
                if (table[pg + k] != fm_word(k, FMA_TAG_CONT) || fm_bit_get(freemap, pg + k) ||
                    !fm_bits_zero_from(f, pg + k, 0u)) {
                    return false;
                }
            }
            used_pages += n - 1u;
            used_blocks++;
            used_bytes += (size_t)n << f->page_log2;
            pg += n - 1u;
            continue;
        }
        if (tag > f->classes || (bsd && fm_part(w) != 0u)) { /* CONT without its first page, or junk */
            return false;
        }
        if (tag == f->classes) {
            if (fm_part(w) != 0u || !fm_bits_zero_from(f, pg, 1u)) {
                return false;
            }
            if (fm_bit_get(fm_blockmap(f, pg), 0u)) {
                used_blocks++;
                used_bytes += fm_page(f);
            } else if (!bsd) {
                return false; /* an FMA whole page is released when freed */
            } else {
                bsd_free[tag]++;
                free_small++;
            }
            continue;
        }
        uint32_t n = fm_nblocks(f, tag);
        uint32_t allocated = fm_popcount(f, pg, n);
        if (!fm_bits_zero_from(f, pg, n)) {
            return false;
        }
        used_blocks += allocated;
        used_bytes += (size_t)allocated * fm_bsize(tag);
        free_small += n - allocated;
        if (bsd) {
            bsd_free[tag] += n - allocated;
            continue;
        }
        uint32_t e = fm_part(w) << 4;
        if (e == 0u) {
            if (allocated != n) {
                return false; /* free blocks but no entry block */
            }
            continue;
        }
        if (e < fm_page_ref(f, pg) || e - fm_page_ref(f, pg) >= fm_page(f) ||
            ((e - f->pages_off) & (fm_bsize(tag) - 1u)) != 0u) {
            return false;
        }
        const fma_block_t *entry = fm_blk(f, e);
        uint32_t v = fm_virgin(entry), count = fm_count(entry);
        if (!fm_sealed(f, e) || count == 0u || count >= n || count != n - allocated || v > n - 2u ||
            (v != 0u && e != fm_page_ref(f, pg))) {
            return false;
        }
        /* the chain: the entry block, then its members, distinct free blocks of this page
         * outside the virgin run; the virgins free; together exactly the free blocks */
        uint32_t chain = fm_walk_chain(f, e, tag, pg, n - 1u - v, count);
        bool ok = chain != UINT32_MAX && chain + v == count;
        for (uint32_t j = n - 1u - v; ok && j < n - 1u; j++) {
            ok = !fm_bit_get(fm_blockmap(f, pg), j);
        }
        if (!ok) {
            return false;
        }
        entries[tag]++;
    }
    /* FMA: each list holds exactly the entry blocks of its class, links symmetric */
    for (unsigned i = 0; i <= f->classes; i++) {
        if (bsd) {
            uint32_t count = fm_walk_chain(f, f->freelist[i], i, FMA_NIL, 0u, bsd_free[i]);
            if (count != bsd_free[i]) {
                return false;
            }
            continue;
        }
        uint32_t prev = 0, members = 0;
        for (uint32_t e = f->freelist[i]; e != 0u; e = fm_blk(f, e)->next) {
            if (i == f->classes || members == entries[i] || e < f->pages_off ||
                e - f->pages_off >= ((size_t)f->pages << f->page_log2)) {
                return false;
            }
            uint32_t pg = fm_page_of(f, e);
            if (table[pg] != fm_word(e >> 4, i) || fm_blk(f, e)->prev != prev) {
                return false;
            }
            prev = e;
            members++;
        }
        if (members != entries[i]) {
            return false;
        }
    }
    for (unsigned i = f->classes + 1u; i < FMA_HEADS; i++) {
        if (f->freelist[i] != 0u) {
            return false;
        }
    }
    /* the anchor list: exactly the free pages below lastused, back links symmetric */
    uint32_t listed = 0, prev = FMA_NIL;
    for (uint32_t pg = f->anchor; pg != FMA_NIL; pg = fm_part(table[pg])) {
        if (listed == free_below || pg >= f->lastused || fm_tag(table[pg]) != FMA_TAG_FREE || *fm_back(f, pg) != prev) {
            return false;
        }
        prev = pg;
        listed++;
    }
    return listed == free_below && listed == f->free_listed && used_pages == f->used_pages &&
           used_blocks == f->used_blocks && used_bytes == f->used_bytes && free_small == f->free_small &&
           f->peak_used >= f->used_bytes && (f->used_pages != 0u || (f->lastused == 0u && f->anchor == FMA_NIL));
}

bool rt_fma_check(rt_fma_t *f)
{
    uintptr_t token = fm_lock(f);
    bool ok = fm_check_locked(f);
    fm_unlock(f, token);
    if (!ok) {
        fm_report(f, RT_ERR_CORRUPTED, "check", NULL, 0u);
    }
    return ok;
}

bool rt_fma_recover(rt_fma_t *f)
{
    uintptr_t token = fm_lock(f);
    bool ok = fm_recover_locked(f) && fm_check_locked(f);
    fm_unlock(f, token);
    if (!ok) {
        fm_report(f, RT_ERR_CORRUPTED, "recover", NULL, 0u);
    }
    return ok;
}

void rt_fma_walk(rt_fma_t *f, rt_walk_fn fn, void *ctx)
{
    uintptr_t token = fm_lock(f);
    const uint32_t *table = fm_table(f);
    size_t page = fm_page(f);
    bool go = true;
    for (uint32_t pg = 0; go && pg < f->pages; pg++) {
        uint32_t w = table[pg];
        unsigned tag = fm_tag(w);
        unsigned char *at = fm_at(f, fm_page_ref(f, pg));
        if (tag == FMA_TAG_FREE) {
            rt_block_info_t info = {at, page, page, false, false};
            go = fn(ctx, &info);
        } else if (tag == FMA_TAG_MULTI) {
            uint32_t n = fm_part(w);
            if (n < 2u || n > f->pages - pg) {
                break; /* corrupted: rt_fma_check reports it */
            }
            rt_block_info_t info = {at, (size_t)n << f->page_log2, (size_t)n << f->page_log2, true, false};
            go = fn(ctx, &info);
            pg += n - 1u;
        } else if (tag == f->classes) {
            rt_block_info_t info = {at, page, page, fm_bit_get(fm_blockmap(f, pg), 0u), false};
            go = fn(ctx, &info);
        } else if (tag < f->classes) {
            uint32_t n = fm_nblocks(f, tag);
            size_t bytes = fm_bsize(tag);
            for (uint32_t j = 0; go && j < n; j++) {
                rt_block_info_t info = {at + j * bytes, bytes, bytes, fm_bit_get(fm_blockmap(f, pg), j), false};
                go = fn(ctx, &info);
            }
        } else {
            break;
        }
    }
    fm_unlock(f, token);
}

void rt_fma_set_handler(rt_fma_t *f, rt_error_handler_t h, void *ctx) { rt_hooks_set_handler(&f->hooks, h, ctx); }

void rt_fma_set_lock(rt_fma_t *f, rt_lock_fn lock, rt_unlock_fn unlock, void *ctx)
{
    rt_hooks_set_lock(&f->hooks, lock, unlock, ctx);
}
