/* SPDX-License-Identifier: MIT */
/*
 * heap_checks.c -- the boundary-tag heap's safety checks one at a time, for every index and the
 * quick lists (rt_tlsfq): each case builds the one state a single check must refuse, so that
 * removing the check (a mutant of tools/mutants.txt) makes the case fail. White-box: the cases
 * forge headers that carry a valid tag, which only the heap's own verbs can write (hc_head,
 * hc_set and hc_quick_link below, the one place that knows how; tests/CMakeLists.txt adds src/
 * for this test).
 *
 *   prev_unlisted   a free predecessor with an exact free header and footer that is on no list:
 *                   free and realloc of the block after it are refused (CORRUPTED), no merge
 *   realloc_succ    realloc growing into a free successor whose own successor's header is
 *                   damaged, or valid but without PREV_FREE: refused (CORRUPTED), nothing moved
 *   footer_names_other  the footer before a block changed to name another free block, of another
 *                   size, on its list: the merge would swallow a live block; refused
 *   footer_misaligned  the footer names a "free block" forged inside a live block's payload at a
 *                   W-aligned place that is no block start, exact header, links that pass
 *                   membership: refused (a footer must be a multiple of A)
 *   walk_past_pool  a used header whose size runs past the pool: rt_heap_walk stops before it
 *   pool_overlaps   rt_heap_add_pool over the control structure, or over pool 0's guard: refused
 *   check_sees      rt_heap_check alone sees a PREV_FREE that disagrees with the predecessor (both
 *                   ways) and a free block's footer changed
 *   misaligned_pointer  a pointer one word into a live block, whose first word is made a valid
 *                   used header reaching the next block: free refused (BAD_POINTER)
 *   found_damaged   the one free block of an index, its header made a valid used header, or its
 *                   pprev aimed elsewhere: a malloc the index serves from its list refused
 *                   (CORRUPTED), nothing handed out
 *   next_past_pool  a free successor (the pool's tail) whose valid header runs one unit past the
 *                   sentinel: free and realloc of the block before it refused, nothing written
 *   link_into_guard a free block's pprev aimed at the word past the sentinel, which points back
 *                   at it: free of its neighbour refused, the guard not written
 *   size_past_pool  a used header whose (valid) size runs past its pool's end, onto a header of
 *                   the next pool, or one unit past the sentinel onto a header planted in the
 *                   guard: free refused, neither header nor guard written
 *   quick_past_pool rt_tlsfq's push of a small block whose size runs one unit past the sentinel
 *                   onto a header planted in the guard: refused, not cached
 *   flush_counted   rt_tlsfq: the last cached block's link aimed at a live block dressed as cached:
 *                   the flush gives back only the blocks counted and stops there (reported)
 *   walk_cut        seglist, firstfit, bestfit: a walk meets a listed block whose pprev changed,
 *                   behind a sound one: malloc refused, and both the damaged block and the one
 *                   whose link led to it are fenced (the link may be the damage)
 *   check_unlisted  rt_heap_check sees a free block its index no longer lists when a block forged
 *                   in a live block's payload is listed in its place (the counts agree)
 *   slide_recheck   realloc's slide copies with the lock released; another thread damages (or
 *                   frees and damages) the block after it meanwhile: the re-check after the copy
 *                   reports it, the slide stands
 *   fenced_again    a fenced live block whose header is damaged again: its free is refused once
 *                   (contained again), then accepted (affine tag only)
 *   quick_copied_link  rt_tlsfq: a cached block's link and seal copied onto another cached block:
 *                   refused at that block (the seal is bound to its address)
 *   quick_outside   rt_tlsfq: a sealed link to a block forged outside the heap: refused there, by
 *                   malloc and by check (whose containment mends no block outside a pool)
 *   quick_cycle     rt_tlsfq: a cycle of sealed links: rt_heap_check and the containment end it
 *   two_damaged     two damaged headers side by side, a free block's behind a live one's: the
 *                   extent is no one free block (the footer disagrees), fenced whole as dead
 *   replayed_header a block's own header of an earlier moment (free, the whole pool) written back:
 *                   containment does not trust a free header whose extent holds other blocks
 *   restored_in_fence  two damaged used headers fenced as one live block, then the second one's
 *                   header of before the damage written back: its free and its realloc are refused
 *                   (a header inside a fenced extent is no block)
 *   no_containment  rt_tlsfq: a double free and a foreign pointer are reported, and the quick
 *                   lists keep their blocks (no containment for the caller's own errors)
 *   chance_header   the folded tag only (heap_checks_fold on 64-bit): a used header damaged into
 *                   one that verifies, whose size lands on no header: free refused, and
 *                   containment fences that block alone instead of trusting its extent
 *
 * Every refused operation runs on a heap of its own, built and forged afresh by the case's
 * builder (a refused call contains the damage, src/heap/heap_common.h, so a second call on the
 * same heap would no longer meet it). After the refusal the case asserts the containment instead
 * of restoring what it forged (hc_contained): nothing written outside the heap, rt_heap_check
 * passes with no report, the damaged words lie in fenced blocks counted by
 * stats.quarantined_bytes (or, where the damage was a flag the walk rewrites, nothing is
 * fenced), nothing malloc hands out overlaps a live block or the damage, every live block of the
 * case frees without a report, and then check passes with no block used.
 *
 * Skipped at RT_HARDENING 0 (the papers' checks only).
 */
#include "testlib.h"

#include "rtalloc/heap.h"
/* White-box: the control structure and the header verbs (block.h). */
#include "heap/quick.h"

#define HC_HEAP (64u << 10)
#define HC_MARGIN 256u /* the test's own bytes before and after the heap's buffer */
#define HC_MARGIN_BYTE 0x3Cu
#define HC_LIVE 8u    /* at most this many live blocks named one by one (plus a range) */
#define HC_SWEEP 512u /* at most this many blocks handed out by the sweep after containment */

static const rt_index_t indexes[] = {RT_INDEX_TLSF,    RT_INDEX_TLSF32,  RT_INDEX_SEGLIST, RT_INDEX_FIRSTFIT,
                                     RT_INDEX_BESTFIT, RT_INDEX_HALFFIT, RT_INDEX_TLSFQ};

/* --- the one place that knows how a header word is made (src/block/block.h) ------------------ */

/* The size | flags of the header at `block`, or SIZE_MAX when the word there is no valid header. */
static size_t hc_head(const rt_heap_t *h, const void *block)
{
    size_t head = *(const size_t *)block;
    return blk_head_ok(h->key, block, head) ? blk_data(head) : SIZE_MAX;
}

/* Writes a valid header of size | flags at `block`, as the heap would. */
static void hc_set(const rt_heap_t *h, void *block, size_t data) { blk_set_head(h->key, blk_at(block), data); }

/* rt_tlsfq: points the quick-list link of cached block `block` at cached block `next` (NULL: the
 * end), encoded and sealed as the heap does it (src/heap/quick.h). */
static void hc_quick_link(const rt_heap_t *h, void *block, void *next)
{
    rt_blk *b = blk_at(block);
    uintptr_t link = (uintptr_t)next ^ h->key;
    *heap_quick_link(b) = link;
    *heap_quick_seal_word(b) = heap_quick_seal(h, b, link);
}

/* --- fixtures ---------------------------------------------------------------------------------- */

typedef struct hc {
    tl_buffer_t buf;        /* HC_MARGIN bytes, the region the heap may write, HC_MARGIN bytes */
    unsigned char *lo, *hi; /* that region */
    rt_heap_t *h;
    tl_recorder_t rec;
    const char *name;
} hc_t;

/* A heap of `index` over [lo + at, lo + at + size) in a region of `region` bytes (the rest of
 * the region is the test's, for pools added later), between margins the heap must never write. */
static bool hc_open_at(hc_t *f, rt_index_t index, size_t region, size_t at, size_t size)
{
    memset(f, 0, sizeof *f);
    f->name = rt_index_name(index);
    if (!TL_CHECK(tl_buffer_new(&f->buf, HC_MARGIN + region + HC_MARGIN, 0), "out of memory")) {
        return false;
    }
    memset(f->buf.mem, HC_MARGIN_BYTE, f->buf.size);
    f->lo = f->buf.mem + HC_MARGIN;
    f->hi = f->lo + region;
    f->h = rt_heap_create_with(f->lo + at, size, index);
    if (!TL_CHECK(f->h != NULL, "%s: create", f->name)) {
        tl_buffer_free(&f->buf);
        return false;
    }
    rt_heap_set_handler(f->h, tl_record, &f->rec);
    (void)rt_heap_set_quick_share(f->h, 0); /* tlsfq: cache a few blocks whatever is live */
    return true;
}

static bool hc_open(hc_t *f, rt_index_t index, size_t size) { return hc_open_at(f, index, size, 0, size); }

static void hc_drop(hc_t *f) { tl_buffer_free(&f->buf); }

/* A setup step failed: the case ends (the heap dropped). */
static bool hc_setup(hc_t *f, bool ok)
{
    if (!TL_CHECK(ok, "%s: setup", f->name)) {
        hc_drop(f);
        return false;
    }
    return true;
}

static unsigned char *hc_block(void *payload) { return (unsigned char *)payload - BLK_W; }
static size_t *hc_word(void *address) { return (size_t *)address; }

/* One report of `kind` since the last reset (any kind when kind is RT_ERR_NONE). */
static bool hc_one(const hc_t *f, rt_error_kind_t kind)
{
    return f->rec.count == 1u && (kind == RT_ERR_NONE || f->rec.last == kind);
}

/* The test's margins around the heap's region are untouched. */
static bool hc_outside_ok(const hc_t *f)
{
    for (size_t i = 0; i < HC_MARGIN; i++) {
        if (f->buf.mem[i] != HC_MARGIN_BYTE || f->hi[i] != HC_MARGIN_BYTE) {
            return false;
        }
    }
    return true;
}

/* True iff the word at `at` holds the guard bytes (RT_HEAP_GUARD_BYTE): a containment writes a
 * pool's guards back. */
static bool hc_guard_fill(const void *at)
{
    const unsigned char *b = at;
    for (size_t i = 0; i < sizeof(size_t); i++) {
        if (b[i] != RT_HEAP_GUARD_BYTE) {
            return false;
        }
    }
    return true;
}

/* A damaged span of the heap: containment must fence it. */
typedef struct hc_span {
    const unsigned char *lo, *hi;
} hc_span_t;

/* What a case expects of the containment after its refusal. */
typedef struct hc_expect {
    void *live[HC_LIVE]; /* the case's live blocks (NULL entries skipped) */
    void **more;         /* and these (a filled heap's blocks), `nmore` of them */
    size_t nmore;
    hc_span_t dmg[2]; /* the damaged words, each inside a fenced block; none: nothing fenced */
    size_t ndmg;
    size_t fenced; /* exactly this many bytes quarantined (0: at least the spans') */
    void *dead;    /* a pointer the application held into what is now a fenced dead block:
                             its free is refused (BAD_POINTER) -- no block of the application's */
} hc_expect_t;

static bool hc_overlap(uintptr_t a0, uintptr_t a1, uintptr_t b0, uintptr_t b1) { return a0 < b1 && b0 < a1; }

typedef struct hc_walk {
    const hc_expect_t *e;
    uintptr_t lo, hi; /* the region */
    size_t fenced;    /* quarantined bytes the walk shows */
    bool covered[2];  /* each damaged span inside a fenced block */
    bool inside;      /* every block inside the region */
    /* the footprint of each live block: [start, end) */
    uintptr_t live_lo[HC_LIVE], live_hi[HC_LIVE];
} hc_walk_t;

static void *hc_live_at(const hc_expect_t *e, size_t i) { return i < HC_LIVE ? e->live[i] : e->more[i - HC_LIVE]; }
static size_t hc_nlive(const hc_expect_t *e) { return HC_LIVE + e->nmore; }

static bool hc_walk_visit(void *context, const rt_block_info_t *info)
{
    hc_walk_t *w = context;
    uintptr_t b = (uintptr_t)info->pointer - BLK_W, end = b + info->footprint;
    w->inside = w->inside && b >= w->lo && end <= w->hi;
    if (info->quarantined) {
        w->fenced += info->footprint;
        for (size_t i = 0; i < w->e->ndmg && i < 2u; i++) {
            if ((uintptr_t)w->e->dmg[i].lo >= b && (uintptr_t)w->e->dmg[i].hi <= end) {
                w->covered[i] = true;
            }
        }
    }
    for (size_t i = 0; i < HC_LIVE; i++) {
        if (w->e->live[i] == info->pointer) {
            w->live_lo[i] = b;
            w->live_hi[i] = end;
        }
    }
    return true;
}

/* True iff [p - W, p + size) overlaps a live block (named ones: their footprints; the others:
 * their header and first `size` bytes at least) or a damaged span. */
static bool hc_hits(const hc_expect_t *e, const hc_walk_t *w, const unsigned char *p, size_t size)
{
    uintptr_t a0 = (uintptr_t)p - BLK_W, a1 = (uintptr_t)p + size;
    for (size_t i = 0; i < hc_nlive(e); i++) {
        const unsigned char *q = hc_live_at(e, i);
        if (q == NULL) {
            continue;
        }
        uintptr_t b0 = (uintptr_t)q - BLK_W, b1 = (uintptr_t)q + BLK_MIN - BLK_W;
        if (i < HC_LIVE && w->live_hi[i] != 0u) {
            b0 = w->live_lo[i];
            b1 = w->live_hi[i];
        }
        if (hc_overlap(a0, a1, b0, b1)) {
            return true;
        }
    }
    for (size_t i = 0; i < e->ndmg; i++) {
        if (hc_overlap(a0, a1, (uintptr_t)e->dmg[i].lo, (uintptr_t)e->dmg[i].hi)) {
            return true;
        }
    }
    return false;
}

/* The heap after a refused call (or a check that failed): the damage is contained. Nothing was
 * written outside the heap's region; rt_heap_check passes with no report; each damaged span lies
 * in a fenced block and stats.quarantined_bytes counts exactly the fenced blocks (at least the
 * spans, or e->fenced exactly; none with no span); malloc hands out nothing that overlaps a live
 * block or the damage (a sweep of the free memory, given back after); every live block frees
 * without a report, a pointer into a fenced dead block is refused; then check passes, no block is
 * used, and the quarantine stays. Drops the heap. */
static void hc_contained(hc_t *f, const hc_expect_t *e, const char *what)
{
    static void *sweep[HC_SWEEP];
    TL_CHECK(hc_outside_ok(f), "%s: %s: a byte outside the heap was written", f->name, what);
    tl_recorder_reset(&f->rec);
    TL_CHECK(rt_heap_check(f->h) && f->rec.count == 0u, "%s: %s: check fails after containment (%lu reports, last %s)",
             f->name, what, f->rec.count, tl_kind_name(f->rec.last));
    hc_walk_t w;
    memset(&w, 0, sizeof w);
    w.e = e;
    w.lo = (uintptr_t)f->lo;
    w.hi = (uintptr_t)f->hi;
    w.inside = true;
    rt_heap_walk(f->h, hc_walk_visit, &w);
    rt_stats_t s;
    rt_heap_stats(f->h, &s);
    TL_CHECK(w.inside, "%s: %s: the walk shows a block outside the heap", f->name, what);
    size_t spans = 0;
    for (size_t i = 0; i < e->ndmg; i++) {
        TL_CHECK(w.covered[i], "%s: %s: damaged span %zu not fenced", f->name, what, i);
        spans += (size_t)(e->dmg[i].hi - e->dmg[i].lo);
    }
    TL_CHECK(s.quarantined_bytes == w.fenced, "%s: %s: %zu bytes quarantined, the walk shows %zu fenced", f->name, what,
             s.quarantined_bytes, w.fenced);
    if (e->fenced != 0u) {
        TL_CHECK(s.quarantined_bytes == e->fenced, "%s: %s: %zu bytes quarantined, expected %zu", f->name, what,
                 s.quarantined_bytes, e->fenced);
    } else if (e->ndmg == 0u) {
        TL_CHECK(s.quarantined_bytes == 0u, "%s: %s: %zu bytes quarantined, none expected", f->name, what,
                 s.quarantined_bytes);
    } else {
        TL_CHECK(s.quarantined_bytes >= spans, "%s: %s: %zu bytes quarantined for %zu damaged", f->name, what,
                 s.quarantined_bytes, spans);
    }
    /* the sweep: the free memory handed out, in large blocks then small ones */
    size_t n = 0;
    bool clear = true;
    static const size_t sizes[] = {600, 40};
    for (size_t k = 0; k < 2u; k++) {
        void *p;
        while (n < HC_SWEEP && (p = rt_heap_malloc(f->h, sizes[k])) != NULL) {
            sweep[n++] = p;
            clear = clear && !hc_hits(e, &w, p, sizes[k]);
        }
    }
    TL_CHECK(clear && f->rec.count == 0u,
             "%s: %s: malloc after containment handed out a live block or the damage "
             "(%lu reports)",
             f->name, what, f->rec.count);
    for (size_t i = 0; i < n; i++) {
        rt_heap_free(f->h, sweep[i]);
    }
    TL_CHECK(f->rec.count == 0u, "%s: %s: the sweep's blocks do not free cleanly (%lu reports)", f->name, what,
             f->rec.count);
    for (size_t i = 0; i < hc_nlive(e); i++) {
        void *q = hc_live_at(e, i);
        if (q == NULL) {
            continue;
        }
        tl_recorder_reset(&f->rec);
        rt_heap_free(f->h, q);
        TL_CHECK(f->rec.count == 0u, "%s: %s: live block %zu does not free after containment (%lu reports, last %s)",
                 f->name, what, i, f->rec.count, tl_kind_name(f->rec.last));
    }
    if (e->dead != NULL) {
        tl_recorder_reset(&f->rec);
        rt_heap_free(f->h, e->dead);
        TL_CHECK(hc_one(f, RT_ERR_BAD_POINTER),
                 "%s: %s: free of a pointer into a fenced dead block: %lu reports, last %s", f->name, what,
                 f->rec.count, tl_kind_name(f->rec.last));
    }
    tl_recorder_reset(&f->rec);
    rt_stats_t end;
    bool ok = rt_heap_check(f->h);
    rt_heap_stats(f->h, &end);
    TL_CHECK(ok && f->rec.count == 0u && end.used_blocks == 0u && end.quarantined_bytes == s.quarantined_bytes,
             "%s: %s: after the frees: check %d, %lu reports, %zu used blocks, %zu quarantined (was %zu)", f->name,
             what, ok, f->rec.count, end.used_blocks, end.quarantined_bytes, s.quarantined_bytes);
    TL_CHECK(hc_outside_ok(f), "%s: %s: a byte outside the heap was written", f->name, what);
    hc_drop(f);
}

/* One damaged span: the `words` words at `at`. */
static void hc_damage(hc_expect_t *e, const void *at, size_t words)
{
    if (e->ndmg < 2u) {
        e->dmg[e->ndmg].lo = at;
        e->dmg[e->ndmg].hi = (const unsigned char *)at + words * BLK_W;
        e->ndmg++;
    }
}

typedef struct hc_range {
    uintptr_t lo, hi; /* a part of the buffer */
    uintptr_t first;  /* the lowest block header in it (UINTPTR_MAX: none) */
    uintptr_t end;    /* the highest block end in it: its pool's sentinel */
} hc_range_t;

static bool hc_range_visit(void *context, const rt_block_info_t *info)
{
    hc_range_t *r = context;
    uintptr_t head = (uintptr_t)info->pointer - BLK_W, end = head + info->footprint;
    if ((uintptr_t)info->pointer >= r->lo && (uintptr_t)info->pointer < r->hi) {
        r->first = head < r->first ? head : r->first;
        r->end = end > r->end ? end : r->end;
    }
    return true;
}

static hc_range_t hc_range(rt_heap_t *h, unsigned char *lo, unsigned char *hi)
{
    hc_range_t r = {(uintptr_t)lo, (uintptr_t)hi, UINTPTR_MAX, 0};
    rt_heap_walk(h, hc_range_visit, &r);
    return r;
}

/* --- the cases --------------------------------------------------------------------------------- */

/* [a used][p "free": exact free header and footer, on no list][b used, PREV_FREE][c used]. Blocks
 * above the quick lists' largest, so that rt_tlsfq's free goes the index's way. p's links: next
 * NULL, pprev aimed at p's own next (a word of the heap that holds NULL, not p): harmless if
 * unlinked, and no list's member. Its header and links are fenced; b stays live. */
typedef struct prev_unlisted_st {
    void *blk[4];
} prev_unlisted_st;

static bool prev_unlisted_build(hc_t *f, rt_index_t index, prev_unlisted_st *s, hc_expect_t *e)
{
    if (!hc_open(f, index, HC_HEAP)) {
        return false;
    }
    void **blk = s->blk;
    blk[0] = rt_heap_malloc(f->h, 64);
    blk[1] = rt_heap_malloc(f->h, 600);
    blk[2] = rt_heap_malloc(f->h, 600);
    blk[3] = rt_heap_malloc(f->h, 64);
    if (!hc_setup(f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return false;
    }
    unsigned char *p = hc_block(blk[1]), *b = hc_block(blk[2]);
    size_t psize = hc_head(f->h, p) & ~BLK_FLAGS, bdata = hc_head(f->h, b);
    tl_fill(blk[2], 64, 7);
    hc_set(f->h, p, psize | BLK_FREE);
    *hc_word(p + BLK_W) = 0u;
    *hc_word(p + 2u * BLK_W) = (size_t)(uintptr_t)(p + BLK_W);
    *hc_word(p + psize - BLK_W) = psize; /* the footer: the word before b's header */
    hc_set(f->h, b, (bdata & ~BLK_FLAGS) | BLK_PREV_FREE);
    *e = (hc_expect_t){{blk[0], blk[2], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, 0, blk[1]};
    hc_damage(e, p, 3);
    return true;
}

static void prev_unlisted(rt_index_t index)
{
    for (unsigned op = 0; op < 2u; op++) {
        hc_t f;
        prev_unlisted_st s;
        hc_expect_t e;
        if (!prev_unlisted_build(&f, index, &s, &e)) {
            return;
        }
        tl_recorder_reset(&f.rec);
        if (op == 0u) {
            rt_heap_free(f.h, s.blk[2]);
            TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free after an unlisted free predecessor: %lu reports, last %s",
                     f.name, f.rec.count, tl_kind_name(f.rec.last));
        } else {
            void *q = rt_heap_realloc(f.h, s.blk[2], 2000);
            TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
                     "%s: realloc after an unlisted free predecessor: %p, %lu reports", f.name, q, f.rec.count);
        }
        TL_CHECK(tl_verify(s.blk[2], 64, 7) == 64u, "%s: b's contents changed", f.name);
        hc_contained(&f, &e, op == 0u ? "prev_unlisted (free)" : "prev_unlisted (realloc)");
    }
}

/* [b used][n free][s used][g]: realloc(b) growing into n must first see s sound. damage 0: s's
 * header a valid used header without PREV_FREE (the containment's walk sets it again: nothing
 * fenced); 1..: one byte of it changed (s fenced, live: its free is accepted). */
static void realloc_succ(rt_index_t index, unsigned damage)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600),
                    rt_heap_malloc(f.h, 64)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return;
    }
    rt_heap_free(f.h, blk[1]);
    unsigned char *s = hc_block(blk[2]);
    size_t sdata = hc_head(f.h, s);
    TL_CHECK((sdata & BLK_PREV_FREE) != 0u, "%s: s does not say its predecessor is free", f.name);
    if (damage == 0u) {
        hc_set(f.h, s, sdata & ~BLK_PREV_FREE);
    } else {
        unsigned char *byte = s + (damage - 1u) % BLK_W;
        *byte = (unsigned char)(*byte ^ (1u << (damage % 8u)));
    }
    tl_fill(blk[0], 600, 11);
    tl_recorder_reset(&f.rec);
    void *q = rt_heap_realloc(f.h, blk[0], 1000);
    TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: realloc into a free block whose successor is %s: %p, %lu reports, last %s", f.name,
             damage == 0u ? "without PREV_FREE" : "damaged", q, f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(tl_verify(blk[0], 600, 11) == 600u, "%s: b's contents changed", f.name);
    hc_expect_t e = {{blk[0], blk[2], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    if (damage != 0u) {
        hc_damage(&e, s, 1);
    }
    hc_contained(&f, &e, "realloc_succ");
}

/* [f free][l used][p free][b used]: the footer before b (p's last word) changed to name f, a
 * free block of another size that is on its list. The backward merge would swallow l, a live
 * block: free and realloc of b are refused, because f's header does not say free with exactly
 * the footer's size. p's end, with the footer, is fenced. */
static void footer_names_other(rt_index_t index)
{
    for (unsigned op = 0; op < 2u; op++) {
        hc_t f;
        if (!hc_open(&f, index, HC_HEAP)) {
            return;
        }
        void *blk[5] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 900),
                        rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 64)};
        if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL && blk[4] != NULL)) {
            return;
        }
        rt_heap_free(f.h, blk[0]);
        rt_heap_free(f.h, blk[2]);
        unsigned char *fb = hc_block(blk[0]), *b = hc_block(blk[3]);
        *hc_word(b - BLK_W) = (size_t)(b - fb);
        tl_fill(blk[1], 600, 5);
        tl_recorder_reset(&f.rec);
        if (op == 0u) {
            rt_heap_free(f.h, blk[3]);
            TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED),
                     "%s: free after a footer naming another free block: %lu reports, last %s", f.name, f.rec.count,
                     tl_kind_name(f.rec.last));
        } else {
            void *q = rt_heap_realloc(f.h, blk[3], 3000);
            TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
                     "%s: realloc after a footer naming another free block: %p, %lu reports", f.name, q, f.rec.count);
        }
        TL_CHECK(tl_verify(blk[1], 600, 5) == 600u, "%s: l's contents changed", f.name);
        hc_expect_t e = {{blk[1], blk[3], blk[4]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
        hc_damage(&e, b - BLK_W, 1);
        hc_contained(&f, &e, op == 0u ? "footer_names_other (free)" : "footer_names_other (realloc)");
    }
}

/* [l used][b used, PREV_FREE]: the footer before b (l's last word) names a "free block" forged in
 * l's payload at a word that is no block start (W-aligned, not at a header's place modulo A),
 * with an exact free header for that size and links that pass membership (a list of itself).
 * free of b is refused: a footer must be a multiple of A. (Only where A > W.) The forged words
 * are l's data; b's PREV_FREE is set right by the containment's walk: nothing fenced. */
static void footer_misaligned(rt_index_t index)
{
    if (BLK_A <= BLK_W) {
        return;
    }
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[3] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 64)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL)) {
        return;
    }
    unsigned char *l = hc_block(blk[0]), *b = hc_block(blk[1]);
    unsigned char *fake = (unsigned char *)blk[0] + BLK_A; /* A-aligned: never a header's place */
    size_t psize = (size_t)(b - fake);
    size_t ldata = hc_head(f.h, l);
    hc_set(f.h, fake, psize | BLK_FREE);
    *hc_word(fake + BLK_W) = (size_t)(uintptr_t)fake;                /* next: itself */
    *hc_word(fake + 2u * BLK_W) = (size_t)(uintptr_t)(fake + BLK_W); /* pprev: its own next */
    *hc_word(b - BLK_W) = psize;
    hc_set(f.h, b, (hc_head(f.h, b) & ~BLK_FLAGS) | BLK_PREV_FREE);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[1]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free after a misaligned footer: %lu reports, last %s", f.name,
             f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(hc_head(f.h, l) == ldata, "%s: l's header changed", f.name);
    hc_expect_t e = {{blk[0], blk[1], blk[2]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, "footer_misaligned");
}

/* x, the first block of pool 0, with a valid used header whose size runs past the pool's end:
 * past_guard false: onto the first block of pool 1 (laid right after pool 0 in one region),
 * whose header is valid (free and listed); true: exactly one unit past the sentinel, onto a valid
 * header planted in the guard after it. free(x) is refused either way, and writes nothing there
 * (the containment that follows writes the guards back: the planted header or the guard bytes);
 * x is fenced (live: its free is then accepted). */
static void size_past_pool(rt_index_t index, bool past_guard)
{
    hc_t f;
    size_t half = HC_HEAP / 2u;
    if (!hc_open_at(&f, index, 2u * half, 0, half)) {
        return;
    }
    unsigned char *mid = f.lo + half;
    void *blk[1] = {rt_heap_malloc(f.h, 64)};
    if (!hc_setup(&f, blk[0] != NULL && rt_heap_add_pool(f.h, mid, half))) {
        return;
    }
    hc_range_t pool0 = hc_range(f.h, f.lo, mid), pool1 = hc_range(f.h, mid, mid + half);
    unsigned char *x = hc_block(blk[0]);
    unsigned char *target = past_guard ? (unsigned char *)pool0.end + BLK_A /* in the guard after the sentinel */
                                       : (unsigned char *)pool1.first;
    if (!hc_setup(&f, pool0.end != 0u && pool1.first != UINTPTR_MAX && target > (unsigned char *)pool0.end)) {
        return;
    }
    if (past_guard) {
        hc_set(f.h, target, 64u); /* a plausible used header where no block is */
    }
    size_t planted = *hc_word(target);
    TL_CHECK(hc_head(f.h, target) != SIZE_MAX, "%s: no valid header past the pool", f.name);
    hc_set(f.h, x, (size_t)(target - x));
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[0]);
    TL_CHECK(hc_one(&f, RT_ERR_NONE), "%s: free of a block whose size runs %s: %lu reports", f.name,
             past_guard ? "one unit past its pool's sentinel" : "into the next pool", f.rec.count);
    TL_CHECK(*hc_word(target) == planted || (past_guard && hc_guard_fill(target)),
             "%s: the refused free wrote the header %s", f.name,
             past_guard ? "planted in the guard" : "of the next pool's first block");
    hc_expect_t e = {{blk[0]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, x, 1);
    hc_contained(&f, &e, past_guard ? "size_past_pool (guard)" : "size_past_pool");
}

/* [x used][t free, the rest of the pool][sentinel]: t's header (valid tag) says it runs one unit
 * past the sentinel. free and realloc of x, which would absorb t, are refused: a free successor's
 * size must end inside the pool. Nothing past the pool is written; t's head is fenced. */
static void next_past_pool(rt_index_t index)
{
    for (unsigned op = 0; op < 2u; op++) {
        hc_t f;
        if (!hc_open(&f, index, HC_HEAP)) {
            return;
        }
        void *blk[1] = {rt_heap_malloc(f.h, 600)};
        if (!hc_setup(&f, blk[0] != NULL)) {
            return;
        }
        hc_range_t pool = hc_range(f.h, f.lo, f.hi);
        unsigned char *x = hc_block(blk[0]);
        unsigned char *t = x + (hc_head(f.h, x) & ~BLK_FLAGS), *end = (unsigned char *)pool.end;
        size_t tdata = hc_head(f.h, t);
        if (!hc_setup(&f, tdata != SIZE_MAX && (tdata & BLK_FREE) != 0u && t + (tdata & ~BLK_FLAGS) == end)) {
            return;
        }
        size_t past[3];
        memcpy(past, end + BLK_W, sizeof past); /* the words after the sentinel */
        hc_set(f.h, t, ((size_t)(end - t) + BLK_A) | BLK_FREE);
        tl_recorder_reset(&f.rec);
        if (op == 0u) {
            rt_heap_free(f.h, blk[0]);
            TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED),
                     "%s: free before a free block running past the pool: %lu reports, last %s", f.name, f.rec.count,
                     tl_kind_name(f.rec.last));
        } else {
            void *q = rt_heap_realloc(f.h, blk[0], 1000);
            TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
                     "%s: realloc into a free block running past the pool: %p, %lu reports", f.name, q, f.rec.count);
        }
        TL_CHECK(memcmp(past, end + BLK_W, sizeof past) == 0 && hc_head(f.h, end) != SIZE_MAX,
                 "%s: the sentinel or the guard after it was written", f.name);
        hc_expect_t e = {{blk[0]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
        hc_damage(&e, t, 1);
        hc_contained(&f, &e, op == 0u ? "next_past_pool (free)" : "next_past_pool (realloc)");
    }
}

/* [a used][n free][c used] ... [sentinel][guard]: n's pprev aimed at the first word past the
 * sentinel (the guard), which is made to hold n's address -- a link "back" that lies one word
 * outside the heap. free of a, which would unlink n, is refused, and the guard not written (the
 * containment writes the guards back: n's address or the guard bytes); n's head is fenced. */
static void link_into_guard(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[3] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL)) {
        return;
    }
    rt_heap_free(f.h, blk[1]);
    hc_range_t pool = hc_range(f.h, f.lo, f.hi);
    unsigned char *n = hc_block(blk[1]);
    size_t *guard = hc_word((unsigned char *)pool.end + BLK_W);
    *guard = (size_t)(uintptr_t)n;
    *hc_word(n + BLK_W) = 0u;                            /* next: none */
    *hc_word(n + 2u * BLK_W) = (size_t)(uintptr_t)guard; /* pprev: the guard, which points at n */
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[0]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free before a free block linked from the guard: %lu reports, last %s",
             f.name, f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(*guard == (size_t)(uintptr_t)n || hc_guard_fill(guard), "%s: the guard past the sentinel was written",
             f.name);
    hc_expect_t e = {{blk[0], blk[2]}, NULL, 0, {{NULL, NULL}}, 0, 0, blk[1]};
    hc_damage(&e, n + BLK_W, 2);
    hc_contained(&f, &e, "link_into_guard");
}

/* [x used][y used]: x's first payload word holds what would be a valid used header of a block
 * reaching exactly to y, so that x + W, a pointer that is no payload (misaligned: only where
 * A > W), looks like a live block with a sound successor. free of it is refused as a bad
 * pointer; the forged word is x's data (nothing fenced). */
static void misaligned_pointer(rt_index_t index)
{
    if (BLK_A <= BLK_W) {
        return;
    }
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[2] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 64)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL)) {
        return;
    }
    unsigned char *x = hc_block(blk[0]);
    size_t xsize = hc_head(f.h, x) & ~BLK_FLAGS;
    unsigned char *p = (unsigned char *)blk[0] + BLK_W;
    hc_set(f.h, blk[0], xsize - BLK_W); /* "header" of a block at x + W that ends where y begins */
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, p);
    TL_CHECK(hc_one(&f, RT_ERR_BAD_POINTER), "%s: free of a misaligned pointer: %lu reports, last %s", f.name,
             f.rec.count, tl_kind_name(f.rec.last));
    hc_expect_t e = {{blk[0], blk[1]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, "misaligned_pointer");
}

/* The heap used up but for one free block f of its index. what 0: f's header then says used (a
 * valid used header of its size; its links intact); 1: f's pprev names another word than the slot
 * that holds it (its header intact). A malloc the index serves from f's list must not take it:
 * refused (CORRUPTED), f not handed out. 0: a valid used header is a live block to the
 * containment's walk (nothing fenced): f's pointer then frees it like the other blocks; 1: f's
 * head is fenced (its links do not point back), its rest free again. */
static void found_damaged(rt_index_t index, unsigned what)
{
    static void *blk[4096];
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    size_t n = 0;
    void *fp = rt_heap_malloc(f.h, 600);
    for (size_t size = (size_t)1 << 15; size >= 16u; size /= 2u) { /* the rest of the heap */
        while (n < sizeof blk / sizeof blk[0] && (blk[n] = rt_heap_malloc(f.h, size)) != NULL) {
            n++;
        }
    }
    if (!hc_setup(&f, fp != NULL && n > 0u && n < sizeof blk / sizeof blk[0])) {
        return;
    }
    rt_heap_flush(f.h); /* rt_tlsfq: nothing cached, the index alone serves */
    rt_heap_free(f.h, fp);
    rt_heap_flush(f.h);
    unsigned char *b = hc_block(fp);
    size_t data = hc_head(f.h, b);
    TL_CHECK(data != SIZE_MAX && (data & BLK_FREE) != 0u, "%s: f is not free", f.name);
    if (what == 0u) {
        hc_set(f.h, b, data & ~BLK_FLAGS);
    } else {
        *hc_word(b + 2u * BLK_W) ^= BLK_A;
    }
    tl_recorder_reset(&f.rec);
    void *q = rt_heap_malloc(f.h, 64);
    TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: malloc served from a listed block whose %s: %p (f %p), %lu reports, last %s", f.name,
             what == 0u ? "header says used" : "pprev names another slot", q, fp, f.rec.count,
             tl_kind_name(f.rec.last));
    if (q != NULL) {
        blk[n++] = q;
    }
    hc_expect_t e = {{what == 0u ? fp : NULL}, blk, n, {{NULL, NULL}}, 0, 0, what == 0u ? NULL : fp};
    if (what != 0u) {
        hc_damage(&e, b + 2u * BLK_W, 1);
    }
    hc_contained(&f, &e, what == 0u ? "found_used_header" : "found_pprev");
}

/* rt_tlsfq's own free of a small block (the push onto a quick list): x, the last block of a heap
 * filled with small blocks, its valid header made to say it runs one unit past the sentinel, onto
 * a valid header planted in the guard -- a size the quick lists keep. free(x) is refused, not
 * cached: a cached block must end inside its pool. x is fenced (live); the containment writes the
 * guards back. */
static void quick_past_pool(void)
{
    static void *blk[2048];
    hc_t f;
    if (!hc_open(&f, RT_INDEX_TLSFQ, HC_HEAP / 4u)) {
        return;
    }
    size_t n = 0;
    while (n < sizeof blk / sizeof blk[0] && (blk[n] = rt_heap_malloc(f.h, 48)) != NULL) {
        n++;
    }
    hc_range_t pool = hc_range(f.h, f.lo, f.hi);
    unsigned char *x = NULL;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) { /* the highest block */
        if (x == NULL || hc_block(blk[i]) > x) {
            x = hc_block(blk[i]);
            last = i;
        }
    }
    unsigned char *target = (unsigned char *)pool.end + BLK_A;
    size_t size = x != NULL ? (size_t)(target - x) : 0u;
    if (!hc_setup(&f, n > 0u && n < sizeof blk / sizeof blk[0] && size <= HEAP_QUICK_MAX_BLOCK)) {
        return;
    }
    hc_set(f.h, target, 64u);
    size_t planted = *hc_word(target);
    hc_set(f.h, x, size);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[last]);
    TL_CHECK(hc_one(&f, RT_ERR_NONE), "tlsfq: free of a small block running one unit past the pool: %lu reports",
             f.rec.count);
    TL_CHECK(*hc_word(target) == planted || hc_guard_fill(target),
             "tlsfq: the refused free wrote the header planted in the guard");
    hc_expect_t e = {{NULL}, blk, n, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, x, 1);
    hc_contained(&f, &e, "quick_past_pool");
}

/* rt_heap_add_pool of a range that overlaps the heap's control structure (and no pool), or the
 * guard after pool 0 (and not the control structure): refused (BAD_POOL), nothing written. The
 * heap lies in the middle of the test's region, so both ranges are the test's memory. */
static void pool_overlaps(rt_index_t index)
{
    hc_t f;
    size_t quarter = HC_HEAP / 4u;
    if (!hc_open_at(&f, index, 4u * quarter, quarter, 2u * quarter)) { /* the heap: [mem, mem + 2 quarter) */
        return;
    }
    unsigned char *mem = f.lo + quarter;
    memset(f.lo, 0x3C, quarter);
    memset(mem + 2u * quarter, 0x3C, quarter);
    /* below the heap, reaching 64 bytes into its control structure (its guard too) */
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_add_pool(f.h, f.lo, quarter + 64u) && hc_one(&f, RT_ERR_BAD_POOL),
             "%s: a pool over the control structure: %lu reports", f.name, f.rec.count);
    /* above the heap, starting 8 bytes before its end (in the guard after pool 0's sentinel) */
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_add_pool(f.h, mem + 2u * quarter - 8u, quarter) && hc_one(&f, RT_ERR_BAD_POOL),
             "%s: a pool over pool 0's guard: %lu reports", f.name, f.rec.count);
    bool untouched = true;
    for (size_t i = 0; i < quarter; i++) {
        untouched = untouched && f.lo[i] == 0x3C && mem[2u * quarter + i] == 0x3C;
    }
    TL_CHECK(untouched, "%s: a refused pool was written", f.name);
    hc_expect_t e = {{NULL}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, "pool_overlaps");
}

/* rt_heap_check sees each disagreement alone, reports it and contains it: a used block's
 * PREV_FREE set while its predecessor is used (valid tag), or clear while it is free (flags the
 * containment's walk sets right: nothing fenced); a free block's footer changed (its end fenced). */
static void check_sees(rt_index_t index)
{
    for (unsigned what = 0; what < 3u; what++) {
        hc_t f;
        if (!hc_open(&f, index, HC_HEAP)) {
            return;
        }
        void *blk[3] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
        if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL)) {
            return;
        }
        if (what != 0u) {
            rt_heap_free(f.h, blk[0]); /* [a free][b used, PREV_FREE] */
        }
        unsigned char *b = hc_block(blk[1]);
        if (what == 2u) {
            *hc_word(b - BLK_W) += BLK_A; /* a's footer */
        } else {
            hc_set(f.h, b, hc_head(f.h, b) ^ BLK_PREV_FREE);
        }
        tl_recorder_reset(&f.rec);
        static const char *const names[] = {"PREV_FREE set after a used block", "PREV_FREE clear after a free block",
                                            "a free block's footer changed"};
        TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED), "%s: rt_heap_check missed %s", f.name,
                 names[what]);
        hc_expect_t e = {{what == 0u ? blk[0] : NULL, blk[1], blk[2]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
        if (what == 2u) {
            hc_damage(&e, b - BLK_W, 1);
        }
        hc_contained(&f, &e, names[what]);
    }
}

/* seglist, firstfit, bestfit (the indexes whose find walks a list): [x free][s1][y free][s2][z
 * free][s3], freed z, x, y: the walk for 400 bytes meets y and x, both too small, then z, which
 * fits. x's pprev no longer names y's next. malloc is refused (CORRUPTED) at x -- a walk follows a
 * block only if its pprev is the slot that led to it, so z, behind it, is not handed out -- and
 * the walk cuts the list before y: the link that led to x may be the damage, so neither is
 * trusted. The containment fences the head of both (exactly two smallest blocks); z and the rest
 * of x and y are free again. */
static void walk_cut(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[6] = {rt_heap_malloc(f.h, 300), rt_heap_malloc(f.h, 64),  rt_heap_malloc(f.h, 300),
                    rt_heap_malloc(f.h, 64),  rt_heap_malloc(f.h, 500), rt_heap_malloc(f.h, 64)};
    bool ok = true;
    for (size_t i = 0; i < 6u; i++) {
        ok = ok && blk[i] != NULL;
    }
    if (!hc_setup(&f, ok)) {
        return;
    }
    rt_heap_free(f.h, blk[4]);
    rt_heap_free(f.h, blk[0]);
    rt_heap_free(f.h, blk[2]);
    unsigned char *x = hc_block(blk[0]), *y = hc_block(blk[2]);
    *hc_word(x + 2u * BLK_W) ^= BLK_A; /* x's pprev: no longer y's next */
    tl_recorder_reset(&f.rec);
    void *q = rt_heap_malloc(f.h, 400);
    TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: malloc meeting a damaged block behind a sound one: %p "
             "(z %p), %lu reports",
             f.name, q, blk[4], f.rec.count);
    hc_expect_t e = {{blk[1], blk[3], blk[5]}, NULL, 0, {{NULL, NULL}}, 0, 2u * BLK_MIN, blk[2]};
    hc_damage(&e, x, 3);
    hc_damage(&e, y, 3);
    hc_contained(&f, &e, "walk_cut");
}

/* rt_tlsfq: k blocks of one size cached, the last one's link aimed at a live block l of that size
 * whose header says "cached" (valid tag, MARK) and whose own link ends the list. The flush gives
 * back exactly the k blocks counted and stops at l (reported: a list longer than its count). The
 * containment's walk then takes l for the block a list held that its header says it is: l goes
 * back to the index with the others (nothing fenced). */
static void flush_counted(void)
{
    hc_t f;
    if (!hc_open(&f, RT_INDEX_TLSFQ, HC_HEAP)) {
        return;
    }
    enum { K = 3 };
    void *blk[2 * K + 2];
    bool ok = true;
    for (size_t i = 0; i < 2u * K + 2u; i++) {
        blk[i] = rt_heap_malloc(f.h, 48);
        ok = ok && blk[i] != NULL;
    }
    if (!hc_setup(&f, ok)) {
        return;
    }
    for (size_t i = 0; i < K; i++) {
        rt_heap_free(f.h, blk[2u * i]); /* cached: blocks 0, 2, 4 (apart, so none merges) */
    }
    unsigned char *l = hc_block(blk[2u * K]);
    hc_set(f.h, l, hc_head(f.h, l) | BLK_MARK);
    hc_quick_link(f.h, l, NULL);
    hc_quick_link(f.h, hc_block(blk[0]), l); /* the first freed: the list's last */
    tl_recorder_reset(&f.rec);
    rt_heap_flush(f.h);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "tlsfq: a flush meeting a list longer than counted: %lu reports, last %s",
             f.rec.count, tl_kind_name(f.rec.last));
    hc_expect_t e = {{blk[1], blk[3], blk[5], blk[7]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, "flush_counted");
}

/* The folded tag only (src/block/block.h; tests/unit/heap_checks_fold.c builds it on 64-bit): a word
 * of data passes a header check by chance with more than 2^-32, so containment trusts a verified
 * header only where the blocks agree with it (heap_common.c, contain_trusted). [b][c][d][e] used:
 * b's header becomes a valid used header (a chance acceptance) whose size lands inside d's
 * payload, on a word that is no header. free(b) is refused (CORRUPTED: b's "successor" is no
 * header), and containment must not take b's claimed extent, which would swallow c and d: the
 * blocks resume at c, so b alone is fenced (live: its free is accepted), and c, d, e free
 * normally. */
static void chance_header(rt_index_t index)
{
#if !BLK_LINEAR_TAG
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 64), rt_heap_malloc(f.h, 64), rt_heap_malloc(f.h, 600),
                    rt_heap_malloc(f.h, 600)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return;
    }
    unsigned char *b = hc_block(blk[0]), *d = hc_block(blk[2]);
    unsigned char *land = d + 2u * BLK_A; /* a header's place inside d's payload */
    size_t size = (size_t)(land - b);
    tl_fill(blk[2], 600, 3);
    for (unsigned i = 0; i < 64u && hc_head(f.h, land) != SIZE_MAX; i++) {
        *hc_word(land) ^= (size_t)1 << (i % (8u * BLK_W)); /* no header there, by chance either */
    }
    if (!hc_setup(&f, hc_head(f.h, land) == SIZE_MAX && size > (hc_head(f.h, b) & ~BLK_FLAGS))) {
        return;
    }
    hc_set(f.h, b, size);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[0]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free of a block whose header verified by chance: %lu reports, last %s",
             f.name, f.rec.count, tl_kind_name(f.rec.last));
    hc_expect_t e = {{blk[0], blk[1], blk[2], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, b, 1);
    hc_contained(&f, &e, "chance_header");
#else
    (void)index;
#endif
}

/* A free block F that its index no longer lists: the slot that held it (and the block after it
 * on the list) now name a block X forged in a live block's payload -- an exact free header of F's
 * size, a footer, links that point back. The index's own check passes (X is a plausible free
 * block where it lists it), and as many blocks are listed as the walk finds free: rt_heap_check
 * sees F alone by its footer, which no visit of the index marked. Reported and contained: F's
 * head fenced (its links no longer point back), X is the live block's data. */
static void check_unlisted(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 1000), rt_heap_malloc(f.h, 300), rt_heap_malloc(f.h, 64),
                    rt_heap_malloc(f.h, 64)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return;
    }
    rt_heap_free(f.h, blk[1]); /* F: between two live blocks, above the quick lists' largest */
    rt_blk *fb = blk_at(hc_block(blk[1]));
    size_t fsize = hc_head(f.h, fb) & ~BLK_FLAGS;
    rt_blk *x = blk_at((unsigned char *)blk[0] + BLK_A - BLK_W); /* a header's place in L's payload */
    if (!hc_setup(&f, (hc_head(f.h, fb) & BLK_FREE) != 0u && BLK_A + fsize < 1000u)) {
        return;
    }
    hc_set(f.h, x, fsize | BLK_FREE);
    *hc_word((unsigned char *)x + fsize - BLK_W) = fsize;
    x->next = fb->next;
    x->pprev = fb->pprev;
    *fb->pprev = x;
    if (fb->next != NULL) {
        fb->next->pprev = &x->next;
    }
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: rt_heap_check missed a free block its index does not list (%lu reports)", f.name, f.rec.count);
    hc_expect_t e = {{blk[0], blk[2], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, fb, 3);
    hc_contained(&f, &e, "check_unlisted");
}

/* Lock hooks that act once, at a given call: another thread's doing, between realloc's slide
 * letting the lock go for its copy and taking it again (src/heap/facade.h, heap_slide). */
typedef struct hc_lock {
    unsigned calls, at; /* lock calls so far; the call that acts (0: none) */
    rt_heap_t *h;
    void *s;          /* the block after the one realloc moves */
    unsigned variant; /* 0: s's header damaged; 1: s freed, then its pprev damaged */
} hc_lock_t;

static uintptr_t hc_lock(void *context)
{
    hc_lock_t *k = context;
    if (++k->calls == k->at) {
        k->at = 0;
        unsigned char *s = hc_block(k->s);
        if (k->variant == 0u) {
            s[1] ^= 0x10u; /* one byte of its header */
        } else {
            rt_heap_free(k->h, k->s); /* (its own lock call: no action) */
            *hc_word(s + 2u * BLK_W) ^= BLK_A;
        }
    }
    return 1u;
}

static void hc_unlock(void *context, uintptr_t token)
{
    (void)context;
    (void)token;
}

/* [p free][b used][s used][t used]: realloc(b) larger than b and s's room but within p's, so b
 * slides down into p (src/heap/facade.h, heap_slide), copying with the lock released. Meanwhile another
 * thread damages s's header (variant 0), or frees s and damages its pprev (1). When realloc takes
 * the lock again it checks s before it gives the tail back next to it: the slide stands (the
 * moved block, its contents), the damage is reported (CORRUPTED) and contained. */
static void slide_recheck(rt_index_t index, unsigned variant)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600),
                    rt_heap_malloc(f.h, 64)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return;
    }
    rt_heap_free(f.h, blk[0]);
    tl_fill(blk[1], 600, 9);
    hc_lock_t k = {0, 2, f.h, blk[2], variant}; /* call 1: realloc's; call 2: after the copy */
    rt_heap_set_lock(f.h, hc_lock, hc_unlock, &k);
    tl_recorder_reset(&f.rec);
    void *q = rt_heap_realloc(f.h, blk[1], 900);
    TL_CHECK(q == blk[0] && k.at == 0u && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: slide meeting a %s neighbour after its copy: %p (expected %p), %lu reports, last %s", f.name,
             variant == 0u ? "damaged" : "freed and damaged", q, blk[0], f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(q == NULL || tl_verify(q, 600, 9) == 600u, "%s: the slid block's contents changed", f.name);
    hc_expect_t e = {{q, variant == 0u ? blk[2] : NULL, blk[3]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, hc_block(blk[2]), variant == 0u ? 1u : 3u);
    hc_contained(&f, &e, variant == 0u ? "slide_recheck (damaged)" : "slide_recheck (freed)");
}

/* rt_tlsfq: c -> b -> a cached (one size; a the first freed, the list's end). */
typedef struct hc_quick3 {
    void *blk[6]; /* a, g0, b, g1, c, g2: the g's live, apart so that nothing merges */
    unsigned char *a, *b, *c;
} hc_quick3_t;

static bool hc_quick3(hc_t *f, hc_quick3_t *s)
{
    if (!hc_open(f, RT_INDEX_TLSFQ, HC_HEAP)) {
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < 6u; i++) {
        s->blk[i] = rt_heap_malloc(f->h, 48);
        ok = ok && s->blk[i] != NULL;
    }
    if (!hc_setup(f, ok)) {
        return false;
    }
    rt_heap_free(f->h, s->blk[0]);
    rt_heap_free(f->h, s->blk[2]);
    rt_heap_free(f->h, s->blk[4]);
    s->a = hc_block(s->blk[0]);
    s->b = hc_block(s->blk[2]);
    s->c = hc_block(s->blk[4]);
    return hc_setup(f, heap_quick_count(f->h->quick) == 3u);
}

/* rt_tlsfq: c's link and seal (naming b) copied onto b -- an overrun's memcpy from another cached
 * block. The seal is bound to its block's address, so the copy fails at b: the first malloc pops
 * c, the second is refused (CORRUPTED) instead of handing b out with a link to itself. b is fenced
 * (a cached block whose link was damaged); a goes back to the index. */
static void quick_copied_link(void)
{
    hc_t f;
    hc_quick3_t s;
    if (!hc_quick3(&f, &s)) {
        return;
    }
    memcpy(s.b + BLK_W, s.c + BLK_W, 2u * BLK_W);
    tl_recorder_reset(&f.rec);
    void *p = rt_heap_malloc(f.h, 48), *q = rt_heap_malloc(f.h, 48);
    /* (RT_DEBUG 2: the integrity check after the first malloc finds b and contains it; the second
     * malloc is then served from the rebuilt heap -- never with b) */
    bool refused = RT_DEBUG >= 2 ? q != s.blk[2] : q == NULL;
    TL_CHECK(p == s.blk[4] && refused && hc_one(&f, RT_ERR_CORRUPTED),
             "tlsfq: the pop of a block holding a copied link and seal: %p, %p (b %p), %lu reports, last %s", p, q,
             s.blk[2], f.rec.count, tl_kind_name(f.rec.last));
    hc_expect_t e = {{p, q, s.blk[1], s.blk[3], s.blk[5]}, NULL, 0, {{NULL, NULL}}, 0, 0, s.blk[2]};
    hc_damage(&e, s.b + BLK_W, 2);
    hc_contained(&f, &e, "quick_copied_link");
}

/* rt_tlsfq: a link aimed (sealed, as one who knows the key would) at a block forged outside the
 * heap. variant 0: a's link, and x a cached header of the list's size bound to its address with a
 * sealed end of list: the pops hand out c, b and a, and then refuse (CORRUPTED) -- a quick-list
 * link is followed only into a pool. 1: b's link, x's header no header at all but its link
 * sealed: rt_heap_check fails at x, and the containment's walk of the lists, which mends a cached
 * block whose header was overwritten, mends none outside a pool. Nothing outside the heap is
 * handed out or written. */
static void quick_outside(unsigned variant)
{
    static size_t outside[32] __attribute__((aligned(64)));
    hc_t f;
    hc_quick3_t s;
    if (!hc_quick3(&f, &s)) {
        return;
    }
    memset(outside, 0x3C, sizeof outside);
    unsigned char *x = (unsigned char *)outside + 2u * BLK_A - BLK_W; /* a header's place */
    if (variant == 0u) {
        hc_set(f.h, x, hc_head(f.h, s.a));
    }
    hc_quick_link(f.h, x, NULL);
    hc_quick_link(f.h, variant == 0u ? s.a : s.b, x);
    size_t before[32];
    memcpy(before, outside, sizeof before);
    tl_recorder_reset(&f.rec);
    void *p[4] = {NULL, NULL, NULL, NULL};
    bool inside = true;
    if (variant == 0u) {
        for (size_t i = 0; i < 4u; i++) {
            p[i] = rt_heap_malloc(f.h, 48);
            inside = inside && (p[i] == NULL || ((unsigned char *)p[i] >= f.lo && (unsigned char *)p[i] < f.hi));
        }
        /* (RT_DEBUG 2: the integrity check after the first malloc meets x and contains it) */
        inside = inside && (RT_DEBUG >= 2 || (p[0] == s.blk[4] && p[1] == s.blk[2])) && f.rec.count >= 1u &&
                 f.rec.last == RT_ERR_CORRUPTED;
    } else {
        inside = !rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED);
    }
    TL_CHECK(inside && memcmp(before, outside, sizeof before) == 0,
             "tlsfq: a quick-list link out of the heap (%s): %p %p %p %p (x %p), %lu reports, last %s",
             variant == 0u ? "malloc" : "check", p[0], p[1], p[2], p[3], (void *)(x + BLK_W), f.rec.count,
             tl_kind_name(f.rec.last));
    hc_expect_t e = {{p[0], p[1], p[2], p[3], s.blk[1], s.blk[3], s.blk[5]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, variant == 0u ? "quick_outside (malloc)" : "quick_outside (check)");
}

/* rt_tlsfq: b's link aimed (sealed) back at c: a cycle c -> b -> c. rt_heap_check ends its walk
 * of the list after the cached count, reports it, and the containment (whose walk of the lists
 * ends there too) gives the blocks back. */
static void quick_cycle(void)
{
    hc_t f;
    hc_quick3_t s;
    if (!hc_quick3(&f, &s)) {
        return;
    }
    hc_quick_link(f.h, s.b, s.c);
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED), "tlsfq: check missed a cycle of quick-list links");
    hc_expect_t e = {{s.blk[1], s.blk[3], s.blk[5]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, "quick_cycle");
}

/* rt_tlsfq: a double free of a cached block and a free of a pointer outside the heap are the
 * caller's errors alone -- reported, and no containment: the quick lists keep their blocks
 * (a containment would give every cached block back to the index). */
static void no_containment(void)
{
    hc_t f;
    if (!hc_open(&f, RT_INDEX_TLSFQ, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 48), rt_heap_malloc(f.h, 48), rt_heap_malloc(f.h, 48), rt_heap_malloc(f.h, 48)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return;
    }
    rt_heap_free(f.h, blk[0]);
    rt_heap_free(f.h, blk[2]);
    const rt_quick_t *q = f.h->quick;
    TL_CHECK(heap_quick_count(q) == 2u, "tlsfq: two blocks cached");
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[0]);
    TL_CHECK(hc_one(&f, RT_ERR_DOUBLE_FREE) && heap_quick_count(q) == 2u,
             "tlsfq: a double free of a cached block: %lu reports, last %s, %u cached", f.rec.count,
             tl_kind_name(f.rec.last), heap_quick_count(q));
    static size_t outside[4];
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, &outside[2]);
    TL_CHECK(hc_one(&f, RT_ERR_FOREIGN_POINTER) && heap_quick_count(q) == 2u,
             "tlsfq: a free of a foreign pointer: %lu reports, last %s, %u cached", f.rec.count,
             tl_kind_name(f.rec.last), heap_quick_count(q));
    hc_expect_t e = {{blk[1], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_contained(&f, &e, "no_containment");
}

/* [a][x][c] used: x's header damaged, rt_heap_check contains it (x fenced, live). Then x's fenced
 * header is damaged again, in its MARK bit: the free of x is refused (BAD_POINTER: the header no
 * longer says fenced) and contained again (x fenced once more, still live: its fenced[] entry
 * remembers it); a second free of x is then accepted. (Affine tag only: a folded header that
 * fails its tag decodes to all ones, which heap_free_fenced takes for fenced.) */
static void fenced_again(rt_index_t index)
{
#if BLK_LINEAR_TAG
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[3] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL)) {
        return;
    }
    unsigned char *x = hc_block(blk[1]);
    x[2] ^= 0x01u;
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED), "%s: check missed a damaged header", f.name);
    size_t d = hc_head(f.h, x);
    TL_CHECK(d != SIZE_MAX && (d & (BLK_FREE | BLK_MARK)) == (BLK_FREE | BLK_MARK), "%s: x not fenced", f.name);
    x[0] ^= (unsigned char)BLK_MARK;
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[1]);
    TL_CHECK(hc_one(&f, RT_ERR_BAD_POINTER),
             "%s: free of a fenced block whose header was damaged again: %lu reports, "
             "last %s",
             f.name, f.rec.count, tl_kind_name(f.rec.last));
    tl_recorder_reset(&f.rec);
    TL_CHECK(rt_heap_check(f.h) && f.rec.count == 0u, "%s: check after the second containment (%lu reports)", f.name,
             f.rec.count);
    rt_heap_free(f.h, blk[1]);
    TL_CHECK(f.rec.count == 0u, "%s: the free of x, fenced live again: %lu reports, last %s", f.name, f.rec.count,
             tl_kind_name(f.rec.last));
    hc_expect_t e = {{blk[0], blk[2]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, x, 1);
    hc_contained(&f, &e, "fenced_again");
#else
    (void)index;
#endif
}

/* The layout of two_damaged and restored_in_fence: [x 600][y 600][z 600][w 64] on a heap of its
 * own (y freed first when free_y), the second byte of x's and y's headers flipped (one overrun
 * across both), and rt_heap_check, which must report it and fence the damage. *ysaved receives
 * y's header before the damage. False when the setup failed (the heap dropped). */
static bool hc_two_damaged(hc_t *f, rt_index_t index, bool free_y, void *blk[4], size_t *ysaved)
{
    if (!hc_open(f, index, HC_HEAP)) {
        return false;
    }
    blk[0] = rt_heap_malloc(f->h, 600);
    blk[1] = rt_heap_malloc(f->h, 600);
    blk[2] = rt_heap_malloc(f->h, 600);
    blk[3] = rt_heap_malloc(f->h, 64);
    if (!hc_setup(f, blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL)) {
        return false;
    }
    if (free_y) {
        rt_heap_free(f->h, blk[1]);
    }
    unsigned char *x = hc_block(blk[0]), *y = hc_block(blk[1]);
    *ysaved = *hc_word(y);
    x[1] ^= 0x40u;
    y[1] ^= 0x40u;
    tl_recorder_reset(&f->rec);
    TL_CHECK(!rt_heap_check(f->h) && hc_one(f, RT_ERR_CORRUPTED), "%s: check missed two damaged headers", f->name);
    return true;
}

/* [x used][y free][z used, PREV_FREE][w used]: the headers of x and y both damaged (one overrun
 * across them). rt_heap_check reports it; the containment's walk finds the blocks resuming only at
 * z, which says the block before it was free -- but the footer before z is y's size, not the
 * extent's: no one free block, so the extent is fenced whole as dead and nothing inside it is
 * written or freed (a trimmed head would give x's live bytes back). x's pointer is then no block
 * of the application's. */
static void two_damaged(rt_index_t index)
{
    hc_t f;
    void *blk[4];
    size_t ysaved;
    if (!hc_two_damaged(&f, index, true, blk, &ysaved)) {
        return;
    }
    unsigned char *x = hc_block(blk[0]), *y = hc_block(blk[1]), *z = hc_block(blk[2]);
    hc_expect_t e = {{blk[2], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, (size_t)(z - x), blk[0]};
    hc_damage(&e, x, 1);
    hc_damage(&e, y, 1);
    hc_contained(&f, &e, "two_damaged");
}

/* [x used][y used][the rest free]: x's header of an earlier moment written back to its place --
 * the header x had when it was the pool's one free block, saved by a read past a block and
 * restored by a later overflow. The tag cannot tell it from a current one (the same word at the
 * same place, in the same life). rt_heap_check reports it; the containment does not trust a free
 * header whose extent holds other blocks' headers: x is fenced as a damaged header (live: its
 * blocks resume at y, which says x was used), y stays live, nothing is freed over them. */
static void replayed_header(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    hc_range_t pool = hc_range(f.h, f.lo, f.hi);
    unsigned char *first = (unsigned char *)pool.first;
    size_t old = *hc_word(first); /* the pool's one free block */
    void *blk[2] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL && hc_block(blk[0]) == first &&
                          (hc_head(f.h, first) & BLK_FREE) == 0u)) {
        return;
    }
    tl_fill(blk[0], 600, 13);
    *hc_word(first) = old;
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED), "%s: check missed a header of an earlier moment",
             f.name);
    hc_expect_t e = {{blk[0], blk[1]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, first, 1);
    hc_contained(&f, &e, "replayed_header");
}

/* [x used][y used][z used][w used]: the headers of x and y both damaged (one overrun across
 * them); rt_heap_check fences [x, z) as one live block (z says the block before it was used). Then
 * y's header of before the damage is written back to its place (a restore the tag cannot tell,
 * as in replayed_header): y's header verifies again, inside the fenced extent. Its free (variant
 * 0) or realloc (1) is refused -- BAD_POINTER, nothing freed into the fence -- and everything else
 * frees as after any containment. */
static void restored_in_fence(rt_index_t index, unsigned variant)
{
    hc_t f;
    void *blk[4];
    size_t ysaved;
    if (!hc_two_damaged(&f, index, false, blk, &ysaved)) {
        return;
    }
    unsigned char *x = hc_block(blk[0]), *z = hc_block(blk[2]);
    *hc_word(hc_block(blk[1])) = ysaved;
    tl_recorder_reset(&f.rec);
    if (variant == 0u) {
        rt_heap_free(f.h, blk[1]);
    } else {
        TL_CHECK(rt_heap_realloc(f.h, blk[1], 700) == NULL, "%s: realloc inside a fenced block moved it", f.name);
    }
    TL_CHECK(hc_one(&f, RT_ERR_BAD_POINTER), "%s: %s of a restored header inside a fenced block: %lu reports, last %s",
             f.name, variant == 0u ? "free" : "realloc", f.rec.count, tl_kind_name(f.rec.last));
    hc_expect_t e = {{blk[0], blk[2], blk[3]}, NULL, 0, {{NULL, NULL}}, 0, (size_t)(z - x), blk[1]};
    hc_damage(&e, x, 1);
    hc_contained(&f, &e, "restored_in_fence");
}

typedef struct hc_walked {
    uintptr_t lo, hi;
    bool inside;
} hc_walked_t;

static bool hc_walk_inside(void *context, const rt_block_info_t *info)
{
    hc_walked_t *w = context;
    uintptr_t head = (uintptr_t)info->pointer - BLK_W;
    w->inside = w->inside && head >= w->lo && head + info->footprint <= w->hi;
    return true;
}

/* A used block's header (valid tag) says it runs past the pool's end: rt_heap_walk stops before
 * it and never shows a block beyond the pool. rt_heap_check then reports it and contains it (the
 * block fenced, live). */
static void walk_past_pool(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[2] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
    if (!hc_setup(&f, blk[0] != NULL && blk[1] != NULL)) {
        return;
    }
    hc_range_t pool = hc_range(f.h, f.lo, f.hi);
    unsigned char *x = hc_block(blk[1]);
    hc_set(f.h, x, (size_t)((unsigned char *)pool.end - x) + 4u * BLK_A);
    hc_walked_t w = {pool.first, pool.end, true};
    tl_recorder_reset(&f.rec);
    rt_heap_walk(f.h, hc_walk_inside, &w);
    TL_CHECK(w.inside && f.rec.count == 0u, "%s: rt_heap_walk showed a block running past the pool", f.name);
    TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED), "%s: rt_heap_check missed a size past the pool",
             f.name);
    hc_expect_t e = {{blk[0], blk[1]}, NULL, 0, {{NULL, NULL}}, 0, 0, NULL};
    hc_damage(&e, x, 1);
    hc_contained(&f, &e, "walk_past_pool");
}

int main(void)
{
#if RT_HARDENING < 1
    tl_skip("heap_checks: RT_HARDENING 0");
    return tl_summary("heap_checks");
#else
    for (size_t i = 0; i < sizeof indexes / sizeof indexes[0]; i++) {
        prev_unlisted(indexes[i]);
        for (unsigned damage = 0; damage <= 8u; damage++) {
            realloc_succ(indexes[i], damage);
        }
        footer_names_other(indexes[i]);
        footer_misaligned(indexes[i]);
        walk_past_pool(indexes[i]);
        pool_overlaps(indexes[i]);
        check_sees(indexes[i]);
        misaligned_pointer(indexes[i]);
        found_damaged(indexes[i], 0);
        found_damaged(indexes[i], 1);
        next_past_pool(indexes[i]);
        link_into_guard(indexes[i]);
        size_past_pool(indexes[i], false);
        size_past_pool(indexes[i], true);
        chance_header(indexes[i]);
        check_unlisted(indexes[i]);
        slide_recheck(indexes[i], 0);
        slide_recheck(indexes[i], 1);
        fenced_again(indexes[i]);
        two_damaged(indexes[i]);
        replayed_header(indexes[i]);
        restored_in_fence(indexes[i], 0);
        restored_in_fence(indexes[i], 1);
    }
    walk_cut(RT_INDEX_SEGLIST);
    walk_cut(RT_INDEX_FIRSTFIT);
    walk_cut(RT_INDEX_BESTFIT);
    quick_past_pool();
    flush_counted();
    no_containment();
    quick_copied_link();
    quick_outside(0);
    quick_outside(1);
    quick_cycle();
    return tl_summary("heap_checks");
#endif
}
