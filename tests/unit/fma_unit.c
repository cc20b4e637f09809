/* SPDX-License-Identifier: MIT */
/*
 * fma_unit.c -- white-box tests of the FMA page allocator and its BSD 4.4 baseline (rtalloc/fma.h),
 * beyond the registry suites (contract, model, badinput):
 *
 *   random      seeded runs of malloc / calloc / memalign / realloc / free with rt_fma_check after
 *               EVERY operation, contents verified before each free, for FMA and BSD at pages of
 *               2^8, 2^12 and 2^16 bytes (`fma_unit random <seed>` replays one seed; `fma_unit --seeds N`
 *               runs N seeds, default 40, 4 with ASan or RT_DEBUG=2)
 *   figures     the article's Figure 5 (first 32-byte request: 128 blocks, count 127, entry block
 *               at the page start, the last block returned, page-table word), the block after the
 *               entry block next, the entry block handed out last (Figure 6's new page), a freed
 *               block becoming its page's entry block and the list's new head (Figure 8)
 *   reuse       a page whose blocks all came back serves a request of another size
 *   anchor      Figures 9/10: pages 0, 4, 2 released -> anchor 2 -> 0 -> -1, lastused lowered by
 *               one page; pages handed out again in that order; region reset when none is used
 *   multipage   runs of pages from the anchor list and above lastused, page-table words, aligned
 *               runs (memalign > page) listing the skipped pages, the reset after freeing
 *   badinput    every bad-input path with a counting handler: kind, refusal, check() afterwards
 *   bsd         BSD never reuses a page for another size: 4 pages (FMA) vs 8 (BSD) on a 32-then-64
 *               trace; on the article's size mix FMA never touches more pages (numbers printed)
 *   overflow    1..16 bytes past the end / before the start of every live block next to free
 *               blocks (bit flips, 0x00, 0xFF, random) of every class, FMA and BSD: reported,
 *               never an overlap or a write outside (RT_HARDENING >= 1)
 *   journal     RT_FMA_JOURNAL: empty between calls, its high water, a wild record refused
 *   misc        create_ex arguments, control_size, the clamp to 2^32 bytes (64-bit), lock hooks,
 *               walk, position independence (a region copied to another address keeps working)
 */
#include "testlib.h"

#include "fma/fma_internal.h"
#include "rtalloc/fma.h"

/* --- white-box views ------------------------------------------------------------------------- */

static uint32_t *table_of(rt_fma_t *f) { return (uint32_t *)(void *)((unsigned char *)f + f->table_off); }
static unsigned char *page_at(rt_fma_t *f, uint32_t pg)
{
    return (unsigned char *)f + f->pages_off + ((size_t)pg << f->page_log2);
}
static uint32_t ref_of(rt_fma_t *f, const void *p) { return (uint32_t)((const unsigned char *)p - (unsigned char *)f); }
static fma_block_t *block_at(rt_fma_t *f, uint32_t ref) { return (fma_block_t *)(void *)((unsigned char *)f + ref); }
static uint32_t tag_of(rt_fma_t *f, uint32_t pg) { return table_of(f)[pg] & 0xFu; }
static uint32_t part_of(rt_fma_t *f, uint32_t pg) { return table_of(f)[pg] >> 4; }

typedef struct region {
    tl_buffer_t buf;
    rt_fma_t *f;
    tl_recorder_t rec;
} region_t;

static bool open_region(region_t *r, size_t size, size_t mis, unsigned page_log2, unsigned flags)
{
    memset(r, 0, sizeof *r);
    TL_REQUIRE(tl_buffer_new(&r->buf, size, mis), "out of memory");
    r->f = rt_fma_create_ex(r->buf.mem, size, page_log2, flags);
    TL_REQUIRE(r->f != NULL, "create_ex(%zu, 2^%u, %u) failed", size, page_log2, flags);
    rt_fma_set_handler(r->f, tl_record, &r->rec);
    return true;
}

static void close_region(region_t *r)
{
    if (r->f != NULL) {
        TL_CHECK(rt_fma_check(r->f), "check at close");
    }
    tl_buffer_free(&r->buf);
    r->f = NULL;
}

/* --- random: check after every operation -------------------------------------------------------- */

#define RLIVE 96u

typedef struct rblock {
    unsigned char *p;
    size_t n;
    uint64_t id;
} rblock_t;

static bool random_run(unsigned page_log2, unsigned flags, uint64_t seed, unsigned ops)
{
    size_t page = (size_t)1 << page_log2;
    size_t size = page_log2 == 8u ? (64u << 10) : page_log2 == 12u ? (256u << 10) : (2u << 20);
    region_t r;
    if (!open_region(&r, size, (size_t)(seed % 16u), page_log2, flags)) {
        return false;
    }
    rt_fma_t *f = r.f;
    tl_rng_t g = tl_rng_seed(seed * 7919u + page_log2 + flags * 1000u);
    static rblock_t live[RLIVE];
    size_t nlive = 0;
    uint64_t next_id = 1;
    bool ok = true;
    const char *mode = flags != 0u ? "bsd44" : "fma";
    for (unsigned op = 0; ok && op < ops; op++) {
        unsigned k = (unsigned)tl_range(&g, 0, 99);
        size_t n;
        unsigned t = (unsigned)tl_range(&g, 0, 99);
        n = t < 70u   ? tl_range(&g, 1, page / 2u)
            : t < 85u ? tl_range(&g, page / 2u + 1u, page)
                      : tl_range(&g, page + 1u, 4u * page);
        if (nlive > 0u && (k < 40u || nlive == RLIVE)) {
            size_t i = tl_range(&g, 0, nlive - 1u);
            ok = TL_CHECK(tl_verify(live[i].p, live[i].n, live[i].id) == live[i].n,
                          "%s 2^%u seed %" PRIu64 " op %u: block corrupted", mode, page_log2, seed, op);
            if (k < 8u) {
                unsigned char *q = rt_fma_realloc(f, live[i].p, n);
                if (q != NULL) {
                    size_t keep = n < live[i].n ? n : live[i].n;
                    ok = ok && TL_CHECK(tl_verify(q, keep, live[i].id) == keep, "realloc lost the contents");
                    live[i].p = q;
                    live[i].n = n;
                    live[i].id = next_id++;
                    tl_fill(q, n, live[i].id);
                }
            } else {
                rt_fma_free(f, live[i].p);
                live[i] = live[--nlive];
            }
        } else {
            unsigned char *p;
            if (k < 55u) {
                size_t a = (size_t)1 << tl_range(&g, 0, page_log2 + 2u);
                p = rt_fma_memalign(f, a, n);
                ok = p == NULL || TL_CHECK(((uintptr_t)p & (a - 1u)) == 0u, "memalign(%zu) = %p", a, (void *)p);
            } else if (k < 62u) {
                p = rt_fma_calloc(f, 1, n);
                for (size_t j = 0; ok && p != NULL && j < n; j++) {
                    ok = TL_CHECK(p[j] == 0u, "calloc block not zero at %zu", j);
                }
            } else {
                p = rt_fma_malloc(f, n);
            }
            if (p != NULL) {
                size_t u = rt_fma_usable_size(f, p);
                size_t expect = n <= page / 2u
                                    ? (n <= 16u ? 16u : (size_t)1 << (64u - (unsigned)__builtin_clzll(n - 1u)))
                                    : (n + page - 1u) / page * page;
                ok = ok &&
                     TL_CHECK(u >= expect && u >= n && ((uintptr_t)p & ((u < page ? u : page) - 1u)) == 0u,
                              "%s: block %p of %zu bytes for %zu (expected >= %zu)", mode, (void *)p, u, n, expect);
                live[nlive].p = p;
                live[nlive].n = n;
                live[nlive].id = next_id++;
                tl_fill(p, n, live[nlive].id);
                nlive++;
            }
        }
        ok = ok && TL_CHECK(rt_fma_check(f),
                            "%s 2^%u seed %" PRIu64 " op %u: check failed (replay: fma_unit random %" PRIu64 ")", mode,
                            page_log2, seed, op, seed);
        rt_fma_pages_t pg;
        rt_fma_pages(f, &pg);
        ok = ok && TL_CHECK(pg.used <= pg.touched && pg.touched <= pg.total && pg.peak_used >= pg.used &&
                                pg.free_listed <= pg.touched - pg.used,
                            "%s op %u: pages used %zu touched %zu total %zu peak %zu listed %zu", mode, op, pg.used,
                            pg.touched, pg.total, pg.peak_used, pg.free_listed);
    }
    while (ok && nlive > 0u) {
        nlive--;
        ok = TL_CHECK(tl_verify(live[nlive].p, live[nlive].n, live[nlive].id) == live[nlive].n, "block corrupted");
        rt_fma_free(f, live[nlive].p);
        ok = ok && TL_CHECK(rt_fma_check(f), "%s: check failed while freeing all", mode);
    }
    rt_stats_t s;
    rt_fma_stats(f, &s);
    ok = ok && TL_CHECK(s.used_bytes == 0u && s.used_blocks == 0u && r.rec.count == 0u, "%s: used %zu, %lu reports",
                        mode, s.used_bytes, r.rec.count);
    if (flags == 0u) { /* FMA: every page back, region reset */
        ok = ok && TL_CHECK(f->used_pages == 0u && f->lastused == 0u && f->anchor == FMA_NIL &&
                                s.free_bytes == s.capacity && s.largest_free == s.capacity,
                            "fma: not reset after freeing all (lastused %u, anchor %#x)", f->lastused, f->anchor);
    }
    close_region(&r);
    return ok;
}

static void test_random(uint64_t first, uint64_t seeds)
{
    static const unsigned logs[3] = {8, 12, 16};
    unsigned ops = TL_DEBUG_WALKS || TL_ASAN ? 800u : 3000u;
    for (unsigned flags = 0; flags < 2u; flags++) {
        for (unsigned l = 0; l < 3u; l++) {
            uint64_t ran = 0;
            for (uint64_t seed = first; seed < first + seeds; seed++) {
                ran++;
                if (!random_run(logs[l], flags, seed, ops)) {
                    break;
                }
            }
            printf("random %-5s page 2^%-2u %" PRIu64 " seeds x %u ops, check after every op\n",
                   flags != 0u ? "bsd44" : "fma", logs[l], ran, ops);
        }
    }
}

/* --- the article's figures ------------------------------------------------------------------------ */

static void test_figures(void)
{
    region_t r;
    if (!open_region(&r, 64u << 10, 0, 12, 0)) {
        return;
    }
    rt_fma_t *f = r.f;
    unsigned char *page0 = page_at(f, 0);
    TL_CHECK(((uintptr_t)page0 & 4095u) == 0u, "page 0 not on a page boundary");
    /* Figure 5: the first 32-byte request */
    unsigned char *p = rt_fma_malloc(f, 32);
    fma_block_t *e = block_at(f, ref_of(f, page0));
    TL_CHECK(p == page0 + 4096u - 32u, "Figure 5: first block at page + %td, expected the last (4064)", p - page0);
    TL_CHECK((e->count & FMA_CV_MASK) == 127u && (e->virgin & FMA_CV_MASK) == 126u && e->chain == 0u && e->prev == 0u &&
                 e->next == 0u,
             "Figure 5: entry count %u virgin %u", (e->count & FMA_CV_MASK), (e->virgin & FMA_CV_MASK));
    TL_CHECK(f->freelist[1] == ref_of(f, page0), "Figure 5: freelist[1] is not the entry block at the page start");
    TL_CHECK(table_of(f)[0] == ((ref_of(f, page0) >> 4) << 4 | 1u), "Figure 5: page-table word %#x", table_of(f)[0]);
    TL_CHECK(f->lastused == 1u && f->anchor == FMA_NIL, "Figure 5: lastused %u", f->lastused);
    /* "returns the block following the entry block", count 126 */
    unsigned char *q = rt_fma_malloc(f, 20);
    TL_CHECK(q == page0 + 32u && (e->count & FMA_CV_MASK) == 126u, "second block at +%td, count %u", q - page0,
             (e->count & FMA_CV_MASK));
    /* the rest of the page: blocks 2 .. 126, then the entry block itself */
    static unsigned char *blocks[128];
    blocks[127] = p;
    blocks[1] = q;
    for (unsigned j = 2; j < 127u; j++) {
        blocks[j] = rt_fma_malloc(f, 32);
        TL_CHECK(blocks[j] == page0 + 32u * j, "block %u at +%td", j, blocks[j] - page0);
    }
    TL_CHECK((e->count & FMA_CV_MASK) == 1u && f->freelist[1] == ref_of(f, page0), "before the last: count %u",
             (e->count & FMA_CV_MASK));
    blocks[0] = rt_fma_malloc(f, 32);
    TL_CHECK(blocks[0] == page0, "the entry block is handed out last");
    TL_CHECK(f->freelist[1] == 0u && table_of(f)[0] == 1u,
             "count 0: freelist %#x, page-table word %#x (address part 0)", f->freelist[1], table_of(f)[0]);
    /* Figure 6: another 32-byte request cuts page 1 */
    unsigned char *p1 = rt_fma_malloc(f, 32);
    unsigned char *page1 = page_at(f, 1);
    TL_CHECK(p1 == page1 + 4064u && f->freelist[1] == ref_of(f, page1), "Figure 6: page 1 not cut");
    /* Figure 8: the first block returned becomes page 0's entry block and the list's new head */
    rt_fma_free(f, p);
    fma_block_t *e0 = block_at(f, ref_of(f, p));
    TL_CHECK(f->freelist[1] == ref_of(f, p) && (e0->count & FMA_CV_MASK) == 1u && e0->chain == 0u &&
                 e0->next == ref_of(f, page1) && block_at(f, ref_of(f, page1))->prev == ref_of(f, p) &&
                 table_of(f)[0] == ((ref_of(f, p) >> 4) << 4 | 1u),
             "Figure 8: the freed block is not the new entry block / list head");
    rt_fma_free(f, blocks[5]); /* appended after the entry block, count 2 */
    TL_CHECK((e0->count & FMA_CV_MASK) == 2u && e0->chain == ref_of(f, blocks[5]), "append: count %u",
             (e0->count & FMA_CV_MASK));
    TL_CHECK(rt_fma_malloc(f, 32) == blocks[5] && (e0->count & FMA_CV_MASK) == 1u,
             "the appended block comes back first");
    TL_CHECK(rt_fma_check(f) && r.rec.count == 0u, "check after the figures");
    rt_fma_free(f, blocks[5]);
    for (unsigned j = 0; j < 127u; j++) {
        rt_fma_free(f, blocks[j]);
    }
    rt_fma_free(f, p1);
    TL_CHECK(f->used_pages == 0u && f->lastused == 0u && f->freelist[1] == 0u, "all freed: region reset");
    close_region(&r);
}

/* --- page reuse --------------------------------------------------------------------------------- */

static void test_reuse(void)
{
    region_t r;
    if (!open_region(&r, 64u << 10, 3, 12, 0)) {
        return;
    }
    rt_fma_t *f = r.f;
    unsigned char *a[32];
    for (unsigned j = 0; j < 32u; j++) {
        a[j] = rt_fma_malloc(f, 128); /* page 0: 32 blocks of 128 */
    }
    unsigned char *keep = rt_fma_malloc(f, 64); /* page 1, above it */
    TL_CHECK(a[0] != NULL && keep >= page_at(f, 1) && keep < page_at(f, 2), "setup");
    for (unsigned j = 0; j < 32u; j++) {
        rt_fma_free(f, a[j]);
        TL_CHECK(j == 31u || (tag_of(f, 0) == 3u && f->freelist[3] != 0u), "page 0 released before its last block");
    }
    TL_CHECK(tag_of(f, 0) == FMA_TAG_FREE && f->anchor == 0u && f->freelist[3] == 0u && f->free_listed == 1u,
             "page 0 not released to the anchor list (tag %u, anchor %u)", tag_of(f, 0), f->anchor);
    unsigned char *b = rt_fma_malloc(f, 1000); /* another size: gets page 0 */
    TL_CHECK(b >= page_at(f, 0) && b < page_at(f, 1) && tag_of(f, 0) == 6u, "the 1024-byte request did not get page 0");
    unsigned char *w = rt_fma_malloc(f, 4000); /* a whole page: page 2 (lastused) */
    TL_CHECK(w == page_at(f, 2) && tag_of(f, 2) == 8u, "whole page: size index 8");
    rt_fma_free(f, b);
    rt_fma_free(f, keep);
    rt_fma_free(f, w);
    TL_CHECK(rt_fma_check(f) && r.rec.count == 0u && f->lastused == 0u, "reuse: check, reset");
    close_region(&r);
}

/* --- anchor and lastused (Figures 9 and 10) ------------------------------------------------------- */

static void test_anchor(void)
{
    region_t r;
    if (!open_region(&r, 64u << 10, 0, 12, 0)) {
        return;
    }
    rt_fma_t *f = r.f;
    unsigned char *pg[5];
    for (unsigned j = 0; j < 5u; j++) {
        pg[j] = rt_fma_malloc(f, 4096);
        TL_CHECK(pg[j] == page_at(f, j), "whole page %u", j);
    }
    TL_CHECK(f->lastused == 5u && f->touched == 5u, "lastused %u", f->lastused);
    rt_fma_free(f, pg[0]);
    TL_CHECK(f->anchor == 0u && part_of(f, 0) == FMA_NIL && tag_of(f, 0) == FMA_TAG_FREE, "page 0 on the anchor");
    rt_fma_free(f, pg[4]);
    TL_CHECK(f->lastused == 4u && f->anchor == 0u, "page 4 (the last) lowers lastused: %u", f->lastused);
    rt_fma_free(f, pg[2]);
    TL_CHECK(f->anchor == 2u && part_of(f, 2) == 0u && part_of(f, 0) == FMA_NIL && f->free_listed == 2u,
             "Figure 10: anchor 2 -> 0 -> -1 (anchor %u, next of 2: %u)", f->anchor, part_of(f, 2));
    TL_CHECK(rt_fma_check(f), "check after Figure 10");
    rt_fma_pages_t pc;
    rt_fma_pages(f, &pc);
    TL_CHECK(pc.used == 2u && pc.touched == 5u && pc.peak_used == 5u && pc.free_listed == 2u && pc.total == f->pages,
             "pages: used %zu touched %zu peak %zu listed %zu", pc.used, pc.touched, pc.peak_used, pc.free_listed);
    rt_stats_t s;
    rt_fma_stats(f, &s);
    TL_CHECK(s.watermark == 5u * 4096u, "watermark %zu", s.watermark);
    /* handed out again: the anchor's pages first, head first, then lastused */
    TL_CHECK(rt_fma_malloc(f, 3000) == pg[2] && rt_fma_malloc(f, 4096) == pg[0] && rt_fma_malloc(f, 4096) == pg[4],
             "pages not handed out as 2, 0, then 4");
    TL_CHECK(f->anchor == FMA_NIL && f->lastused == 5u, "after: anchor %u lastused %u", f->anchor, f->lastused);
    /* the top page lowers lastused by one page only (the article), a listed page below stays */
    rt_fma_free(f, pg[3]);
    rt_fma_free(f, pg[4]);
    TL_CHECK(f->lastused == 4u && f->anchor == 3u, "free 3 then 4: lastused %u anchor %u", f->lastused, f->anchor);
    rt_fma_free(f, pg[0]);
    rt_fma_free(f, pg[1]);
    TL_CHECK(f->used_pages == 1u && f->lastused == 4u, "one page left");
    rt_fma_free(f, pg[2]);
    TL_CHECK(f->used_pages == 0u && f->lastused == 0u && f->anchor == FMA_NIL && f->free_listed == 0u,
             "no page used: region reset (lastused %u anchor %u)", f->lastused, f->anchor);
    TL_CHECK(rt_fma_malloc(f, 16) == page_at(f, 0) + 4096u - 16u, "after the reset the first page is page 0 again");
    TL_CHECK(rt_fma_check(f) && r.rec.count == 0u, "anchor: check");
    rt_fma_free(f, page_at(f, 0) + 4096u - 16u);
    close_region(&r);
}

/* --- multi-page blocks ------------------------------------------------------------------------------ */

static void test_multipage(unsigned flags)
{
    region_t r;
    if (!open_region(&r, 64u << 10, 5, 12, flags)) {
        return;
    }
    rt_fma_t *f = r.f;
    const char *mode = flags != 0u ? "bsd44" : "fma";
    unsigned char *m = rt_fma_malloc(f, 3u * 4096u - 5u);
    TL_CHECK(m == page_at(f, 0) && tag_of(f, 0) == FMA_TAG_MULTI && part_of(f, 0) == 3u &&
                 tag_of(f, 1) == FMA_TAG_CONT && part_of(f, 1) == 1u && tag_of(f, 2) == FMA_TAG_CONT &&
                 part_of(f, 2) == 2u && f->lastused == 3u,
             "%s: 3-page block: page-table words", mode);
    TL_CHECK(rt_fma_usable_size(f, m) == 3u * 4096u, "%s: usable %zu", mode, rt_fma_usable_size(f, m));
    rt_fma_free(f, m);
    TL_CHECK(f->used_pages == 0u && f->lastused == 0u, "%s: 3-page block freed: reset", mode);
    /* a run over listed pages: pages 0..5 whole, free 1, 2, 3 (listed), take 3 pages there */
    unsigned char *w[6];
    for (unsigned j = 0; j < 6u; j++) {
        w[j] = rt_fma_malloc(f, flags != 0u ? 8192u : 4096u); /* BSD keeps whole pages: use 2-page blocks */
    }
    if (flags != 0u) {
        for (unsigned j = 0; j < 6u; j++) {
            TL_CHECK(w[j] == page_at(f, 2u * j), "bsd: 2-page block %u", j);
        }
        rt_fma_free(f, w[1]); /* pages 2, 3 */
        rt_fma_free(f, w[2]); /* pages 4, 5 */
        TL_CHECK(f->free_listed == 4u && f->lastused == 12u, "bsd: runs returned to the free pages");
        unsigned char *big = rt_fma_malloc(f, 4u * 4096u);
        TL_CHECK(big == page_at(f, 2) && f->free_listed == 0u && f->anchor == FMA_NIL,
                 "bsd: a 4-page run over listed pages");
        rt_fma_free(f, big);
        rt_fma_free(f, w[0]);
        rt_fma_free(f, w[3]);
        rt_fma_free(f, w[4]);
        rt_fma_free(f, w[5]);
    } else {
        rt_fma_free(f, w[1]);
        rt_fma_free(f, w[3]);
        rt_fma_free(f, w[2]);
        TL_CHECK(f->anchor == 2u && f->free_listed == 3u, "fma: pages 1..3 listed");
        unsigned char *big = rt_fma_malloc(f, 3u * 4096u);
        TL_CHECK(big == page_at(f, 1) && f->anchor == FMA_NIL && f->free_listed == 0u && f->lastused == 6u,
                 "fma: a 3-page run over listed pages (anchor %u)", f->anchor);
        /* a run that does not fit below lastused goes above it */
        rt_fma_free(f, w[4]); /* listed */
        unsigned char *big2 = rt_fma_malloc(f, 2u * 4096u);
        TL_CHECK(big2 == page_at(f, 6) && f->lastused == 8u && f->anchor == 4u, "fma: 2 pages above lastused");
        /* a run that straddles lastused: free the top block, then page 5's neighbourhood */
        rt_fma_free(f, big2);
        TL_CHECK(f->lastused == 6u, "fma: freeing the top run lowers lastused by its pages: %u", f->lastused);
        rt_fma_free(f, w[5]);
        TL_CHECK(f->lastused == 5u && f->anchor == 4u, "fma: lastused 5, page 4 listed");
        unsigned char *big3 = rt_fma_malloc(f, 3u * 4096u); /* pages 4 (listed), 5, 6 (above) */
        TL_CHECK(big3 == page_at(f, 4) && f->lastused == 7u && f->anchor == FMA_NIL, "fma: a run across lastused");
        TL_CHECK(rt_fma_check(f), "fma: check");
        /* memalign beyond a page: an aligned run; the pages skipped above lastused are listed */
        uintptr_t a = 8u * 4096u;
        unsigned char *al = rt_fma_memalign(f, a, 4096);
        TL_CHECK(al != NULL && ((uintptr_t)al & (a - 1u)) == 0u &&
                     tag_of(f, (uint32_t)((al - page_at(f, 0)) >> 12)) == 8u,
                 "fma: memalign(32 KiB, 4 KiB): a whole page aligned to 32 KiB");
        TL_CHECK(rt_fma_check(f), "fma: check after the aligned run (listed the skipped pages)");
        rt_fma_free(f, al);
        rt_fma_free(f, big3);
        rt_fma_free(f, big);
        rt_fma_free(f, w[0]);
    }
    TL_CHECK(rt_fma_check(f) && r.rec.count == 0u, "%s: multipage check", mode);
    rt_fma_pages_t pc;
    rt_fma_pages(f, &pc);
    TL_CHECK(pc.used == 0u, "%s: %zu pages still used", mode, pc.used);
    /* the largest request: all pages, exactly; one byte more is TOO_LARGE */
    unsigned char *all = rt_fma_malloc(f, rt_fma_max_request(f));
    TL_CHECK(all == page_at(f, 0) && f->used_pages == f->pages, "%s: malloc(max_request)", mode);
    rt_fma_free(f, all);
    TL_CHECK(rt_fma_malloc(f, rt_fma_max_request(f) + 1u) == NULL && r.rec.count == 1u &&
                 r.rec.last == RT_ERR_TOO_LARGE,
             "%s: max_request + 1", mode);
    tl_recorder_reset(&r.rec);
    close_region(&r);
}

/* --- bad input ------------------------------------------------------------------------------------ */

static bool expect_report(region_t *r, rt_error_kind_t kind, const char *what)
{
    bool ok = TL_CHECK(r->rec.count == 1u && r->rec.last == kind, "%s: %lu reports, last %s, expected %s", what,
                       r->rec.count, tl_kind_name(r->rec.last), tl_kind_name(kind));
    ok = TL_CHECK(rt_fma_check(r->f), "%s: check after the refusal", what) && ok;
    tl_recorder_reset(&r->rec);
    return ok;
}

static void test_badinput(unsigned flags)
{
    region_t r;
    if (!open_region(&r, 64u << 10, 0, 12, flags)) {
        return;
    }
    rt_fma_t *f = r.f;
    const char *mode = flags != 0u ? "bsd44" : "fma";
    unsigned char *a = rt_fma_malloc(f, 100), *b = rt_fma_malloc(f, 100), *c = rt_fma_malloc(f, 100);
    unsigned char *whole = rt_fma_malloc(f, 4096), *multi = rt_fma_malloc(f, 3u * 4096u);
    TL_CHECK(a != NULL && b != NULL && c != NULL && whole != NULL && multi != NULL, "%s: setup", mode);
    tl_fill(a, 100, 1);
    tl_fill(c, 100, 3);
    rt_stats_t s0, s1;
    rt_fma_stats(f, &s0);
    static unsigned char outside[64];
    rt_fma_free(f, outside);
    expect_report(&r, RT_ERR_FOREIGN_POINTER, "free(static)");
    rt_fma_free(f, (unsigned char *)f + 32); /* the control block */
    expect_report(&r, RT_ERR_FOREIGN_POINTER, "free(control block)");
    rt_fma_free(f, page_at(f, f->pages)); /* one past the last page */
    expect_report(&r, RT_ERR_FOREIGN_POINTER, "free(past the pages)");
    rt_fma_free(f, page_at(f, 0) - 16);
    expect_report(&r, RT_ERR_FOREIGN_POINTER, "free(just below the pages)");
    rt_fma_free(f, b + 16);
    expect_report(&r, RT_ERR_BAD_POINTER, "free(not on a block boundary of its page's size)");
    rt_fma_free(f, b + 1);
    expect_report(&r, RT_ERR_BAD_POINTER, "free(b + 1)");
    rt_fma_free(f, whole + 2048);
    expect_report(&r, RT_ERR_BAD_POINTER, "free(inside a whole page)");
    rt_fma_free(f, multi + 4096);
    expect_report(&r, RT_ERR_BAD_POINTER, "free(second page of a multi-page block)");
    rt_fma_free(f, multi + 16);
    expect_report(&r, RT_ERR_BAD_POINTER, "free(inside the first page of a multi-page block)");
    TL_CHECK(rt_fma_usable_size(f, b + 32) == 0u, "usable_size(interior)");
    expect_report(&r, RT_ERR_BAD_POINTER, "usable_size(interior)");
    TL_CHECK(rt_fma_realloc(f, b + 32, 10) == NULL, "realloc(interior)");
    expect_report(&r, RT_ERR_BAD_POINTER, "realloc(interior)");
    /* in a free page: refused exactly */
    unsigned char *freepage = page_at(f, f->pages - 1u);
    rt_fma_free(f, freepage);
    expect_report(&r, RT_ERR_DOUBLE_FREE, "free(start of a free page)");
    rt_fma_free(f, freepage + 40);
    expect_report(&r, RT_ERR_BAD_POINTER, "free(unaligned, in a free page)");
    rt_fma_stats(f, &s1);
    TL_CHECK(s1.used_blocks == s0.used_blocks && s1.frees == s0.frees && s1.errors == s0.errors + 13u,
             "%s: refusals changed the counters", mode);
    /* double frees */
    rt_fma_free(f, b);
    rt_fma_free(f, b);
    expect_report(&r, RT_ERR_DOUBLE_FREE, "double free in a cut page");
    TL_CHECK(rt_fma_realloc(f, b, 50) == NULL, "realloc(freed)");
    expect_report(&r, RT_ERR_DOUBLE_FREE, "realloc of a freed block");
    rt_fma_free(f, whole);
    rt_fma_free(f, whole);
    expect_report(&r, RT_ERR_DOUBLE_FREE, "double free of a whole page");
    rt_fma_free(f, multi);
    rt_fma_free(f, multi);
    expect_report(&r, RT_ERR_DOUBLE_FREE, "double free of a multi-page block");
    rt_fma_free(f, multi + 4096);
    expect_report(&r, RT_ERR_DOUBLE_FREE, "free(a page of a freed multi-page block)");
    /* sizes and alignments */
    TL_CHECK(rt_fma_calloc(f, SIZE_MAX / 2u + 1u, 2) == NULL, "calloc overflow");
    expect_report(&r, RT_ERR_OVERFLOW, "calloc overflow");
    TL_CHECK(rt_fma_memalign(f, 24, 10) == NULL && rt_fma_memalign(f, 0, 10) == NULL, "bad alignment");
    TL_CHECK(r.rec.count == 2u && r.rec.last == RT_ERR_BAD_ALIGNMENT, "bad alignment: %lu reports", r.rec.count);
    tl_recorder_reset(&r.rec);
    TL_CHECK(rt_fma_malloc(f, SIZE_MAX) == NULL, "malloc(SIZE_MAX)");
    expect_report(&r, RT_ERR_TOO_LARGE, "malloc(SIZE_MAX)");
    TL_CHECK(rt_fma_memalign(f, (size_t)1 << 30, 16) == NULL, "memalign(1 GiB)");
    expect_report(&r, RT_ERR_TOO_LARGE, "memalign(1 GiB alignment)");
    TL_CHECK(rt_fma_malloc(f, 0) == NULL && rt_fma_calloc(f, 0, 5) == NULL && r.rec.count == 0u, "size 0");
    rt_fma_free(f, NULL);
    TL_CHECK(r.rec.count == 0u, "free(NULL) reported");
    TL_CHECK(tl_verify(a, 100, 1) == 100u && tl_verify(c, 100, 3) == 100u, "%s: live blocks changed", mode);
    rt_fma_free(f, a);
    rt_fma_free(f, c);
    if (flags == 0u) { /* FMA: the 128-byte page is released; its former blocks are in a free page */
        TL_CHECK(f->used_pages == 0u, "fma: not all pages back");
        rt_fma_free(f, c);
        TL_CHECK(r.rec.count == 1u && (r.rec.last == RT_ERR_DOUBLE_FREE || r.rec.last == RT_ERR_BAD_POINTER),
                 "fma: double free into a released page: %s", tl_kind_name(r.rec.last));
        tl_recorder_reset(&r.rec);
    }
    /* without a handler: counted only (RT_DEBUG 0) */
    if (RT_DEBUG == 0) {
        rt_fma_set_handler(f, NULL, NULL);
        rt_fma_stats(f, &s0);
        rt_fma_free(f, outside);
        rt_fma_stats(f, &s1);
        TL_CHECK(s1.errors == s0.errors + 1u, "no handler: error not counted");
    }
    TL_CHECK(rt_fma_check(f), "%s: bad input: check at the end", mode);
    close_region(&r);
}

/* --- BSD 4.4: pages never change size; FMA uses fewer pages on the same trace ---------------------- */

typedef struct trace_result {
    size_t touched, peak, failures;
} trace_result_t;

/* The article's study in small: sizes 16 B 10 %, 32 B 30 %, 64 B 20 %, 128 B 15 %, 256 B 10 %,
 * 512 B 7 %, 1024 B 5 %, 2048 B 3 %; up to `track` live blocks, all freed when the table is full. */
static trace_result_t article_trace(unsigned flags, uint64_t seed, unsigned allocations, unsigned track)
{
    static const unsigned pct[8] = {10, 30, 20, 15, 10, 7, 5, 3};
    static void *live[5000];
    trace_result_t res = {0, 0, 0};
    region_t r;
    if (!open_region(&r, 2u << 20, 0, 12, flags)) { /* 512 pages: the trace peaks below 300 */
        return res;
    }
    tl_rng_t g = tl_rng_seed(seed);
    size_t nlive = 0;
    for (unsigned k = 0; k < allocations; k++) {
        if (nlive == track) {
            while (nlive > 0u) {
                rt_fma_free(r.f, live[--nlive]);
            }
        }
        if (nlive > 0u && tl_chance(&g, 30)) { /* the live set grows: the table overflows */
            size_t i = tl_range(&g, 0, nlive - 1u);
            rt_fma_free(r.f, live[i]);
            live[i] = live[--nlive];
        }
        unsigned x = (unsigned)tl_range(&g, 0, 99), c = 0;
        while (x >= pct[c]) {
            x -= pct[c++];
        }
        void *p = rt_fma_malloc(r.f, (size_t)16 << c);
        if (p == NULL) {
            res.failures++;
        } else {
            live[nlive++] = p;
        }
    }
    rt_fma_pages_t pc;
    rt_fma_pages(r.f, &pc);
    res.touched = pc.touched;
    res.peak = pc.peak_used;
    TL_CHECK(rt_fma_check(r.f), "article trace: check");
    while (nlive > 0u) {
        rt_fma_free(r.f, live[--nlive]);
    }
    close_region(&r);
    return res;
}

static void test_bsd(void)
{
    /* a page once cut for 32-byte blocks stays so: 64-byte blocks need pages of their own */
    region_t rf, rb;
    if (!open_region(&rf, 256u << 10, 0, 12, 0) || !open_region(&rb, 256u << 10, 0, 12, RT_FMA_BSD44)) {
        return;
    }
    static void *blk[1024];
    rt_fma_t *both[2] = {rf.f, rb.f};
    size_t touched[2];
    for (unsigned k = 0; k < 2u; k++) {
        rt_fma_t *f = both[k];
        for (unsigned j = 0; j < 512u; j++) {
            blk[j] = rt_fma_malloc(f, 32); /* 4 pages */
        }
        if (k == 1u) { /* 4.4BSD's cut: the page's last block first, then downwards */
            TL_CHECK(blk[0] == page_at(f, 0) + 4064u && blk[1] == page_at(f, 0) + 4032u, "bsd: cut order");
        }
        for (unsigned j = 0; j < 512u; j++) {
            rt_fma_free(f, blk[j]);
        }
        for (unsigned j = 0; j < 256u; j++) {
            blk[j] = rt_fma_malloc(f, 64); /* 4 pages */
        }
        for (unsigned j = 0; j < 4u; j++) {
            TL_CHECK(tag_of(f, j) == (k == 0u ? 2u : 1u), "%s: page %u has size index %u", k == 0u ? "fma" : "bsd44", j,
                     tag_of(f, j));
        }
        rt_fma_pages_t pc;
        rt_fma_pages(f, &pc);
        touched[k] = pc.touched;
        TL_CHECK(rt_fma_check(f), "check");
        for (unsigned j = 0; j < 256u; j++) {
            rt_fma_free(f, blk[j]);
        }
        TL_CHECK(rt_fma_check(f), "check after freeing");
    }
    TL_CHECK(touched[0] == 4u && touched[1] == 8u, "32 then 64 bytes: fma %zu pages, bsd44 %zu (expected 4, 8)",
             touched[0], touched[1]);
    rt_fma_pages_t pc;
    rt_fma_pages(rb.f, &pc);
    TL_CHECK(pc.used == 8u && rb.f->freelist[1] != 0u && rb.f->freelist[2] != 0u, "bsd44: pages stay cut after free");
    close_region(&rf);
    close_region(&rb);
    /* the article's distribution (a stationary mix): FMA never touches more pages than BSD; how
     * many fewer is the benchmark's question (bench/), printed here only */
    static const unsigned runs[3] = {10000, 30000, 60000};
    unsigned lengths = TL_DEBUG_WALKS ? 1u : 3u; /* RT_DEBUG >= 2 checks the region after every call */
    for (unsigned k = 0; k < lengths; k++) {
        trace_result_t tf = article_trace(0, 42u + k, runs[k], 5000);
        trace_result_t tb = article_trace(RT_FMA_BSD44, 42u + k, runs[k], 5000);
        TL_CHECK(tf.failures == 0u && tb.failures == 0u && tf.touched <= tb.touched && tf.peak <= tb.peak,
                 "article trace of %u: fma touched %zu peak %zu, bsd44 touched %zu peak %zu", runs[k], tf.touched,
                 tf.peak, tb.touched, tb.peak);
        printf("article trace, %5u allocations: pages touched fma %zu, bsd44 %zu (%.1f %% fewer)\n", runs[k],
               tf.touched, tb.touched, 100.0 * (double)(tb.touched - tf.touched) / (double)tb.touched);
    }
}

/* --- miscellany --------------------------------------------------------------------------------------- */

static unsigned long locks, unlocks;
static uintptr_t count_lock(void *ctx)
{
    (void)ctx;
    locks++;
    return 7u;
}
static void count_unlock(void *ctx, uintptr_t token)
{
    (void)ctx;
    unlocks += token == 7u ? 1u : 1000u;
}

typedef struct walk_sum {
    size_t used, free, bytes;
    uintptr_t last;
    bool ordered;
} walk_sum_t;

static bool sum_walk(void *ctx, const rt_block_info_t *b)
{
    walk_sum_t *w = ctx;
    w->ordered = w->ordered && (uintptr_t)b->pointer > w->last;
    w->last = (uintptr_t)b->pointer;
    w->bytes += b->footprint;
    if (b->used) {
        w->used++;
    } else {
        w->free++;
    }
    return true;
}

/* create and create_ex: bad arguments, every page size, the 2^32 clamp, the overhead */
static bool misc_create(void)
{
    unsigned char dummy[64];
    TL_CHECK(rt_fma_create(NULL, 1u << 20) == NULL && rt_fma_create(dummy, sizeof dummy) == NULL, "create: NULL, tiny");
    tl_buffer_t b;
    if (!TL_CHECK(tl_buffer_new(&b, 1u << 20, 0), "out of memory")) {
        return false;
    }
    TL_CHECK(rt_fma_create_ex(b.mem, b.size, 4, 0) == NULL && rt_fma_create_ex(b.mem, b.size, 17, 0) == NULL &&
                 rt_fma_create_ex(b.mem, b.size, 12, 8) == NULL,
             "create_ex: bad page size or flags accepted");
    for (unsigned l = RT_FMA_PAGE_LOG2_MIN; l <= RT_FMA_PAGE_LOG2_MAX; l++) {
        rt_fma_t *f = rt_fma_create_ex(b.mem, b.size, l, 0);
        size_t ctl = rt_fma_control_size(b.size, l);
        TL_CHECK(f != NULL && rt_fma_check(f) && ctl > 0u && ctl <= f->pages_off + ((size_t)1 << l) &&
                     f->pages_off + ((size_t)f->pages << l) <= b.size &&
                     b.size - f->pages_off - ((size_t)f->pages << l) < ((size_t)2 << l),
                 "page 2^%u: %u pages, control %zu, pages at %u", l, f != NULL ? f->pages : 0u, ctl,
                 f != NULL ? f->pages_off : 0u);
        void *p = f != NULL ? rt_fma_malloc(f, 16) : NULL;
        TL_CHECK(p != NULL && rt_fma_check(f), "page 2^%u: malloc(16)", l);
        if (p != NULL) {
            rt_fma_free(f, p);
        }
    }
    TL_CHECK(rt_fma_control_size(b.size, 3) == 0u, "control_size of a bad page size");
#if SIZE_MAX > 0xFFFFFFFFu
    {
        /* a buffer beyond 2^32 bytes is clamped to the span of 32-bit offsets. create writes only
         * the metadata at the start (~37 MiB for 4 KiB pages), so a 5 GiB claim over 48 MiB of
         * real memory is enough to see it; no page is touched */
        size_t claim = (size_t)5u << 30;
        unsigned char *big = malloc(48u << 20);
        if (TL_CHECK(big != NULL, "out of memory")) {
            rt_fma_t *f = rt_fma_create(big, claim);
            TL_CHECK(f != NULL && rt_fma_max_request(f) < ((size_t)1 << 32) &&
                         (size_t)((unsigned char *)f - big) + f->pages_off + rt_fma_max_request(f) <=
                             ((size_t)1 << 32) + 16u &&
                         rt_fma_max_request(f) > ((size_t)1 << 32) - (48u << 20) && rt_fma_check(f),
                     "5 GiB: not clamped to 2^32 bytes (max_request %zu)", f != NULL ? rt_fma_max_request(f) : 0u);
            TL_CHECK(rt_fma_control_size(claim, 12) == rt_fma_control_size((size_t)1 << 32, 12),
                     "control_size beyond 2^32");
            free(big);
        }
    }
#endif
    /* overhead at 4 KiB pages: 4 bytes of page table + 1 bit + 32 bytes of block map per page */
    size_t ctl = rt_fma_control_size(256u << 20, 12);
    TL_CHECK(ctl < (256u << 20) / 100u, "control of 256 MiB: %zu bytes (> 1 %%)", ctl);
    printf("control + page table + maps for 256 MiB of 4 KiB pages: %zu bytes (%.2f %%)\n", ctl,
           100.0 * (double)ctl / (double)(256u << 20));
    tl_buffer_free(&b);
    return true;
}

/* lock hooks around every call; walk */
static void misc_locks_walk(region_t *r)
{
    rt_fma_set_lock(r->f, count_lock, count_unlock, NULL);
    void *p = rt_fma_malloc(r->f, 100), *q = rt_fma_malloc(r->f, 9000), *w = rt_fma_malloc(r->f, 4000);
    rt_fma_free(r->f, q);
    q = rt_fma_realloc(r->f, p, 300);
    TL_CHECK(locks > 0u && locks == unlocks, "lock hooks: %lu locks, %lu unlocks", locks, unlocks);
    walk_sum_t ws = {0, 0, 0, 0, true};
    rt_fma_walk(r->f, sum_walk, &ws);
    rt_stats_t s;
    rt_fma_stats(r->f, &s);
    TL_CHECK(ws.ordered && ws.used == 2u && ws.free == s.free_blocks && ws.bytes == s.capacity,
             "walk: %zu used %zu free", ws.used, ws.free);
    rt_fma_set_lock(r->f, NULL, NULL, NULL);
    rt_fma_free(r->f, q);
    rt_fma_free(r->f, w);
}

/* position independence: copy the region (same address modulo the page) and go on there */
static void misc_moved(region_t *r)
{
    unsigned char *x = rt_fma_malloc(r->f, 64), *y = rt_fma_malloc(r->f, 5000);
    tl_fill(x, 64, 9);
    tl_fill(y, 5000, 10);
    tl_buffer_t copy;
    if (TL_CHECK(tl_buffer_new(&copy, r->buf.size + 8192u, 0), "out of memory")) {
        unsigned char *src = r->buf.mem;
        uintptr_t want = ((uintptr_t)copy.mem + 4095u) & ~(uintptr_t)4095u;
        unsigned char *dst = (unsigned char *)want + ((uintptr_t)src & 4095u);
        memcpy(dst, src, r->buf.size);
        memset(src, 0xEE, r->buf.size); /* the original is gone */
        rt_fma_t *g = (rt_fma_t *)(void *)(dst + ((unsigned char *)r->f - src));
        unsigned char *x2 = dst + (x - src), *y2 = dst + (y - src);
        TL_CHECK(rt_fma_check(g) && tl_verify(x2, 64, 9) == 64u && tl_verify(y2, 5000, 10) == 5000u,
                 "moved region: check / contents");
        rt_fma_set_handler(g, tl_record, &r->rec);
        rt_fma_free(g, x2);
        rt_fma_free(g, y2);
        TL_CHECK(rt_fma_check(g) && g->used_pages == 0u && r->rec.count == 0u, "moved region: frees");
        tl_buffer_free(&copy);
    }
}

static void test_misc(void)
{
    if (!misc_create()) {
        return;
    }
    region_t r;
    if (!open_region(&r, 128u << 10, 1, 12, 0)) {
        return;
    }
    misc_locks_walk(&r);
    misc_moved(&r);
    tl_buffer_free(&r.buf); /* the original was overwritten: no check */
}

/* --- overflows into the metadata of free blocks (doc/hardening.md; RT_HARDENING >= 1) ---------
 *
 * Layout of each case, 4 KiB pages: page 0 a live whole page, page 1 cut for `size` (half its
 * first blocks live, every other one freed: live blocks next to the entry block, to chained free
 * blocks and to virgin blocks), page 2 a free page (FMA: on the anchor list, its back link in its
 * first word; BSD: on the whole-page list, its link at +4), page 3 a live whole page. The region
 * lies between two guard zones. For every live block of page 1, 1..16 bytes past its end or
 * before its start are overwritten (each bit of the farthest byte flipped; the run set to 0x00,
 * 0xFF, or random bytes twice), then malloc / free of every block / malloc / check run. Pass:
 * no fault, no block outside the pages, no two live blocks overlapping (shadow), guards intact,
 * and every corruption that rt_fma_check sees is reported RT_ERR_CORRUPTED; none that it does
 * not see is. */

#define OV_GUARD 4096u
#define OV_REGION (80u * 1024u)
#define OV_MAX 64u

typedef struct ov_block {
    unsigned char *p;
    size_t n;
} ov_block_t;

typedef struct ov_state {
    ov_block_t live[OV_MAX];
    unsigned count;
    const unsigned char *lo, *hi; /* the pages */
    bool bad;
} ov_state_t;

static unsigned long ov_cases, ov_damaged, ov_by_op, ov_by_check, ov_healed;

static void ov_add(ov_state_t *st, void *p, size_t n, const char *what)
{
    if (p == NULL) {
        return;
    }
    const unsigned char *c = p;
    if (c < st->lo || c + n > st->hi) {
        st->bad = !TL_CHECK(false, "%s: block %p outside the pages", what, p);
        return;
    }
    for (unsigned i = 0; i < st->count; i++) {
        if (c < st->live[i].p + st->live[i].n && st->live[i].p < c + n) {
            st->bad = !TL_CHECK(false, "%s: block %p (%zu) overlaps live %p (%zu)", what, p, n, (void *)st->live[i].p,
                                st->live[i].n);
            return;
        }
    }
    if (st->count < OV_MAX) {
        st->live[st->count++] = (ov_block_t){(unsigned char *)p, n};
    }
}

static void ov_case(unsigned flags, size_t size, unsigned target, bool after, unsigned off, unsigned pattern)
{
    char what[128];
    (void)snprintf(what, sizeof what, "%s size %zu target %u %s %u pattern %u", flags != 0u ? "bsd44" : "fma", size,
                   target, after ? "past the end +" : "before the start -", off, pattern);
    tl_buffer_t b;
    if (!TL_CHECK(tl_buffer_new(&b, OV_REGION + 2u * OV_GUARD, 0), "out of memory")) {
        return;
    }
    memset(b.mem, 0xA5, OV_GUARD);
    memset(b.mem + OV_GUARD + OV_REGION, 0x5A, OV_GUARD);
    rt_fma_t *f = rt_fma_create_ex(b.mem + OV_GUARD, OV_REGION, 12, flags);
    tl_recorder_t rec = {0};
    static ov_state_t st;
    memset(&st, 0, sizeof st);
    if (!TL_CHECK(f != NULL, "%s: create", what)) {
        tl_buffer_free(&b);
        return;
    }
    rt_fma_set_handler(f, tl_record, &rec);
    st.lo = (const unsigned char *)f + f->pages_off;
    st.hi = st.lo + ((size_t)f->pages << f->page_log2);
    ov_add(&st, rt_fma_malloc(f, 4096), 4096, what); /* page 0 */
    unsigned n = 4096u / (unsigned)size < 8u ? 4096u / (unsigned)size : 8u;
    ov_block_t cut[8];
    for (unsigned k = 0; k < n; k++) { /* page 1 */
        cut[k] = (ov_block_t){rt_fma_malloc(f, size), size};
    }
    void *q = rt_fma_malloc(f, 4096);                /* page 2 */
    ov_add(&st, rt_fma_malloc(f, 4096), 4096, what); /* page 3 */
    rt_fma_free(f, q);
    unsigned targets = 0;
    ov_block_t t = {NULL, 0};
    for (unsigned k = 0; k < n; k++) {
        if (k % 2u == 1u || n == 1u) {
            rt_fma_free(f, cut[k].p);
        } else {
            ov_add(&st, cut[k].p, size, what);
            if (targets++ == target) {
                t = cut[k];
            }
        }
    }
    if (t.p == NULL || !TL_CHECK(rec.count == 0u && rt_fma_check(f), "%s: setup", what)) {
        tl_buffer_free(&b);
        return;
    }
    /* the overwrite */
    unsigned char *at = after ? t.p + t.n : t.p - off;
    unsigned char *far = after ? at + off - 1u : at;
    tl_rng_t g = tl_rng_seed(((uint64_t)off << 32) ^ (uint64_t)pattern ^ ((uint64_t)size << 8) ^ target);
    if (pattern < 8u) {
        *far ^= (unsigned char)(1u << pattern);
    } else {
        for (unsigned k = 0; k < off; k++) {
            at[k] = pattern == 8u ? 0x00u : pattern == 9u ? 0xFFu : (unsigned char)tl_next(&g);
        }
    }
    ov_cases++;
    rt_fma_set_handler(f, NULL, NULL);
    bool damaged = !rt_fma_check(f); /* the oracle: does the overwrite change what the metadata says? */
    rt_fma_set_handler(f, tl_record, &rec);
    ov_damaged += damaged ? 1u : 0u;
    /* drive the operations that read the neighbours' links */
    for (unsigned round = 0; round < 2u && !st.bad; round++) {
        for (unsigned k = 0; k < n + 2u && !st.bad; k++) {
            ov_add(&st, rt_fma_malloc(f, size), size, what);
        }
        for (unsigned i = st.count; i-- > 0u && !st.bad;) {
            unsigned long before = rec.count;
            rt_fma_free(f, st.live[i].p);
            if (rec.count == before) { /* freed (a refused free leaves the block handed out) */
                st.live[i] = st.live[--st.count];
            }
        }
        ov_add(&st, rt_fma_malloc(f, 4096), 4096, what);
        ov_add(&st, rt_fma_malloc(f, 2u * 4096u), 2u * 4096u, what);
    }
    bool by_op = rec.count != 0u;
    bool ok = rt_fma_check(f);
    bool reported = rec.count != 0u;
    ov_by_op += damaged && by_op ? 1u : 0u;
    ov_by_check += damaged && !by_op && reported ? 1u : 0u;
    ov_healed += damaged && !reported ? 1u : 0u;
    /* a changed link is reported, or was overwritten by the allocator before anything read it
     * (e.g. the back link of a page that was pushed under it): then the region is consistent */
    TL_CHECK(!damaged || (reported && rec.last == RT_ERR_CORRUPTED) || ok,
             "%s: corruption not reported (%lu reports, last %s)", what, rec.count, tl_kind_name(rec.last));
    TL_CHECK(damaged || (!reported && ok), "%s: reported (%s) but the metadata was intact", what,
             tl_kind_name(rec.last));
    bool guards = true;
    for (size_t k = 0; k < OV_GUARD; k++) {
        guards = guards && b.mem[k] == 0xA5u && b.mem[OV_GUARD + OV_REGION + k] == 0x5Au;
    }
    TL_CHECK(guards, "%s: guard zones intact", what);
    tl_buffer_free(&b);
}

static void test_overflow(void)
{
    if (RT_HARDENING < 1) {
        tl_skip("overflow: RT_HARDENING 0 keeps the papers' checks only");
        return;
    }
    if (RT_DEBUG >= 2) { /* the full check after every call asserts: it traps on the overwrite */
        tl_skip("overflow: RT_DEBUG >= 2 asserts integrity after every call");
        return;
    }
    static const size_t sizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
    for (unsigned bsd = 0; bsd < 2u; bsd++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            unsigned n = 4096u / (unsigned)sizes[s] < 8u ? 4096u / (unsigned)sizes[s] : 8u;
            unsigned targets = n == 1u ? 1u : (n + 1u) / 2u;
            for (unsigned t = 0; t < targets; t++) {
                for (unsigned dir = 0; dir < 2u; dir++) {
                    for (unsigned off = 1; off <= 16u; off++) {
                        for (unsigned pat = 0; pat < 12u; pat++) {
                            ov_case(bsd != 0u ? RT_FMA_BSD44 : 0u, sizes[s], t, dir == 0u, off, pat);
                        }
                    }
                }
            }
        }
    }
    printf("overflow: %lu cases, %lu changed metadata: %lu reported by an operation, %lu by the final check "
           "(never read before), %lu overwritten unread by the allocator; no overlap, no write outside\n",
           ov_cases, ov_damaged, ov_by_op, ov_by_check, ov_healed);
}

/* A journal that is not what the core writes (a wild store into it) cannot be undone: recover
 * refuses and reports it; an intact empty journal recovers to a consistent region. */
static void test_journal(void)
{
    region_t r;
    if (!open_region(&r, 64u * 1024u, 0, 12, RT_FMA_JOURNAL)) {
        return;
    }
    void *p = rt_fma_malloc(r.f, 100);
    void *q = rt_fma_malloc(r.f, 3u * 4096u);
    TL_CHECK(p != NULL && q != NULL && r.f->journal_off != 0u && rt_fma_recover(r.f) && r.rec.count == 0u,
             "journal: recover of a committed region is a no-op");
    fma_journal_t *j = (fma_journal_t *)(void *)((unsigned char *)r.f + r.f->journal_off);
    TL_CHECK(j->count == 0u && j->intent == FMA_INTENT_NONE && j->high > 0u && j->high <= 19u,
             "journal: empty between calls, high water %u <= 19", j->high);
    j->count = 1;
    j->undo[0] = (fma_undo_t){r.f->journal_off, 4u, 0u}; /* aims at the journal itself */
    TL_CHECK(!rt_fma_recover(r.f) && r.rec.last == RT_ERR_CORRUPTED, "journal: a wild record is refused");
    j->count = 0;
    tl_recorder_reset(&r.rec);
    rt_fma_free(r.f, p);
    rt_fma_free(r.f, q);
    close_region(&r);
}

/* --- RT_FMA_ZEROED: calloc clears what was handed out before, and nothing else ----------------- */

/* Whether n bytes at p all equal v. */
static bool all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != v) {
            return false;
        }
    }
    return true;
}

/* The buffer is zeroed, created with RT_FMA_ZEROED, and then -- against the flag's promise, to see
 * what calloc writes -- the pages beyond the metadata are filled with 0x5A. A run of 3 pages is
 * taken, dirtied and freed; calloc of 5 pages over it must clear the 3 pages handed out before
 * and leave the 2 never handed out as they are (0x5A: not written); a large malloc never writes
 * its pages; a calloc below half a page is cleared whole; the BSD baseline clears every block. */
static void test_zeroed(void)
{
    const size_t size = 256u << 10;
    for (unsigned bsd = 0; bsd < 2u; bsd++) {
        region_t r;
        tl_buffer_t b;
        if (!TL_CHECK(tl_buffer_new(&b, size, 0), "out of memory")) {
            return;
        }
        memset(b.mem, 0, size);
        memset(&r, 0, sizeof r);
        r.buf = b;
        r.f = rt_fma_create_ex(b.mem, size, 12, RT_FMA_ZEROED | (bsd ? RT_FMA_BSD44 : 0u));
        if (!TL_CHECK(r.f != NULL, "zeroed: create_ex")) {
            tl_buffer_free(&b);
            return;
        }
        rt_fma_set_handler(r.f, tl_record, &r.rec);
        unsigned char *pages = page_at(r.f, 0);
        size_t span = (size_t)((b.mem + size) - pages);
        memset(pages, 0x5A, span);
        unsigned char *run = rt_fma_malloc(r.f, 3u * 4096u);
        TL_CHECK(run == pages && all_bytes(run, 3u * 4096u, 0x5A), "zeroed %u: malloc of 3 pages wrote into them", bsd);
        memset(run, 0xEE, 3u * 4096u);
        rt_fma_free(r.f, run);
        unsigned char *c = rt_fma_calloc(r.f, 5u, 4096u);
        if (bsd) { /* BSD: the freed 3-page run is not reused for 5 pages; every byte cleared */
            TL_CHECK(c != NULL && all_bytes(c, 5u * 4096u, 0), "bsd zeroed: calloc of 5 pages not cleared whole");
        } else {
            TL_CHECK(c == pages && all_bytes(c, 3u * 4096u, 0) && all_bytes(c + 3u * 4096u, 2u * 4096u, 0x5A),
                     "fma zeroed: calloc of 5 pages: the 3 used pages cleared, the 2 fresh ones untouched");
        }
        unsigned char *s = rt_fma_calloc(r.f, 1u, 100u);
        TL_CHECK(s != NULL && all_bytes(s, 100u, 0), "zeroed %u: small calloc cleared", bsd);
        unsigned char *z = rt_fma_calloc(r.f, 0u, 4096u);
        TL_CHECK(z == NULL && r.rec.count == 0u, "zeroed %u: calloc of 0 bytes: NULL, no report", bsd);
        TL_CHECK(rt_fma_calloc(r.f, SIZE_MAX / 2u, 4u) == NULL && r.rec.count == 1u && r.rec.last == RT_ERR_OVERFLOW,
                 "zeroed %u: calloc overflow reported", bsd);
        TL_CHECK(rt_fma_calloc(r.f, 1u, size) == NULL && r.rec.count == 2u && r.rec.last == RT_ERR_TOO_LARGE,
                 "zeroed %u: calloc above the largest request reported", bsd);
        close_region(&r);
    }
}

int main(int argc, char **argv)
{
    /* seeds of the random pass: ctest asks for fewer in sanitizer and emulated builds */
    uint64_t seeds = TL_DEBUG_WALKS || TL_ASAN ? 4u : 40u;
    if (argc > 2 && strcmp(argv[1], "random") == 0) {
        uint64_t seed = 0;
        if (!tl_parse_u64(argv[2], &seed)) {
            fprintf(stderr, "usage: fma_unit [random <seed> | --seeds N]\n");
            return 2;
        }
        test_random(seed, 1);
        return tl_summary("fma_unit");
    }
    if (argc > 2 && strcmp(argv[1], "--seeds") == 0) {
        uint64_t n = 0;
        if (!tl_parse_u64(argv[2], &n) || n == 0u) {
            fprintf(stderr, "usage: fma_unit [random <seed> | --seeds N]\n");
            return 2;
        }
        seeds = n;
    }
    test_figures();
    test_reuse();
    test_anchor();
    test_multipage(0);
    test_multipage(RT_FMA_BSD44);
    test_badinput(0);
    test_badinput(RT_FMA_BSD44);
    test_bsd();
    test_misc();
    test_journal();
    test_zeroed();
    test_overflow();
    test_random(1, seeds);
    return tl_summary("fma_unit");
}
