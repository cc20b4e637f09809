/* SPDX-License-Identifier: MIT */
/*
 * fma_checks.c -- the FMA page allocator's safety checks one at a time (src/fma/fma.c, "validation
 * of the links kept in free blocks"): each case builds the one state a single check must refuse
 * -- every other check passing, seals and check words forged as the core writes them -- so that
 * removing the check (a mutant of tools/mutants.txt) makes the case fail. White-box
 * (src/fma/fma_internal.h; tests/CMakeLists.txt adds src/). Pages of 256 bytes: a page of class
 * 0 holds 16 blocks of 16 bytes, of class 2 four of 64.
 *
 *   anchor_back     a free page's back link names no page that links to it (NIL while it is not
 *                   the anchor, or a used page): a run of pages over it is refused
 *   entry_count     an entry block (sealed) counting every block of its page: malloc refused
 *   chain_live      an entry's chain (sealed) naming a live block dressed as a free one
 *   chain_stale     a chain member's link changed without its check word
 *   chain_other_page  an entry's chain (sealed) naming a free block of another page
 *   virgin_live     an entry whose virgin run (sealed) reaches back over a live block
 *   list_links      an entry's prev or next (sealed) naming an entry that does not link back to
 *                   it: the free that unites its page is refused
 *   head_prev       the list's head with a prev (sealed): a free that pushes a new head refused
 *   unite_map       an entry (sealed) counting all blocks but one free while two are live: the
 *                   free that would unite the page is refused
 *   bsd_live        BSD: a free block's link (check word forged) naming a live block
 *   bsd_middle      BSD: a free block's link naming the middle of a free block
 * Each refusal is one RT_ERR_CORRUPTED report and a failed call. The forged state is left as it
 * is (the region is dropped): the cases show what is refused, not a repair.
 */
#include "testlib.h"

#include "fma/fma_internal.h"
#include "rtalloc/fma.h"

#define FC_PAGE_LOG2 8u
#define FC_SIZE (64u << 10)

/* --- white-box views, and the core's seal and check word written as it writes them ------------ */

static uint32_t *fc_table(rt_fma_t *f) { return (uint32_t *)(void *)((unsigned char *)f + f->table_off); }
static unsigned char *fc_page(rt_fma_t *f, uint32_t pg)
{
    return (unsigned char *)f + f->pages_off + ((size_t)pg << f->page_log2);
}
static uint32_t fc_ref(rt_fma_t *f, const void *p) { return (uint32_t)((const unsigned char *)p - (unsigned char *)f); }
static fma_block_t *fc_blk(rt_fma_t *f, uint32_t ref) { return (fma_block_t *)(void *)((unsigned char *)f + ref); }
static uint32_t fc_block_ref(rt_fma_t *f, uint32_t pg, size_t bsize, uint32_t j)
{
    return fc_ref(f, fc_page(f, pg)) + (uint32_t)(j * bsize);
}
static uint32_t fc_entry(rt_fma_t *f, uint32_t pg) { return (fc_table(f)[pg] >> 4) << 4; }

/* The key, seal and check word of src/fma/fma.c (fm_key, fm_seal_sum, fm_link_check): the
 * test's own copy, proved against a genuine entry block (fc_replica_ok) before it is used. */
static uint32_t fc_key(const rt_fma_t *f) { return 0x5A17C0DEu ^ (f->pages_off * 0x9E3779B9u) ^ f->pages; }
static uint32_t fc_sum(const rt_fma_t *f, uint32_t e, const fma_block_t *b, uint32_t count, uint32_t virgin)
{
    uint32_t x = b->chain ^ b->prev ^ b->next ^ e ^ fc_key(f);
    x ^= x >> 16;
    x ^= x >> 8;
    return (x & 0xFFu) ^ (count & 0xFFu) ^ ((count >> 8) & 0xFu) ^ (virgin & 0xFFu) ^ (((virgin >> 8) & 0xFu) << 4);
}
static uint32_t fc_count(const fma_block_t *b) { return b->count & 0x0FFFu; }
static uint32_t fc_virgin(const fma_block_t *b) { return b->virgin & 0x0FFFu; }

/* Writes count and virgin of entry block e, sealed over its links as they are now. */
static void fc_seal(rt_fma_t *f, uint32_t e, uint32_t count, uint32_t virgin)
{
    fma_block_t *b = fc_blk(f, e);
    uint32_t sum = fc_sum(f, e, b, count, virgin);
    b->count = (uint16_t)(count | (sum >> 4) << 12);
    b->virgin = (uint16_t)(virgin | (sum & 0xFu) << 12);
}
static void fc_reseal(rt_fma_t *f, uint32_t e) { fc_seal(f, e, fc_count(fc_blk(f, e)), fc_virgin(fc_blk(f, e))); }

/* Sets the chain link of a free (non-entry) block and its check word. */
static void fc_link(rt_fma_t *f, uint32_t ref, uint32_t link)
{
    fc_blk(f, ref)->chain = link;
    fc_blk(f, ref)->prev = ~link ^ fc_key(f) ^ ref;
}

/* The copy above seals e exactly as the core did (the core's scheme changed: update the copy). */
static bool fc_replica_ok(rt_fma_t *f, uint32_t e)
{
    fma_block_t *b = fc_blk(f, e);
    uint32_t stored = ((uint32_t)(b->count >> 12) << 4) | (uint32_t)(b->virgin >> 12);
    return TL_CHECK(RT_HARDENING < 1 || stored == fc_sum(f, e, b, fc_count(b), fc_virgin(b)),
                    "fma_checks' copy of the entry seal (fm_seal_sum) no longer matches src/fma/fma.c");
}

typedef struct fc {
    tl_buffer_t buf;
    rt_fma_t *f;
    tl_recorder_t rec;
} fc_t;

/* The handler: every report but rt_fma_check's own (RT_DEBUG 2 checks after every call, and
 * reports the damage the case left there: not the call's refusal). */
static void fc_record(void *context, const rt_error_t *error)
{
    if (error->operation == NULL || strcmp(error->operation, "check") != 0) {
        tl_record(context, error);
    }
}

static bool fc_open(fc_t *r, unsigned flags)
{
    memset(r, 0, sizeof *r);
    TL_REQUIRE(tl_buffer_new(&r->buf, FC_SIZE, 0), "out of memory");
    r->f = rt_fma_create_ex(r->buf.mem, FC_SIZE, FC_PAGE_LOG2, flags);
    TL_REQUIRE(r->f != NULL, "create");
    rt_fma_set_handler(r->f, fc_record, &r->rec);
    return true;
}

/* The call just made was refused: one CORRUPTED report. */
static bool fc_refused(fc_t *r, const char *what)
{
    bool ok = TL_CHECK(r->rec.count == 1u && r->rec.last == RT_ERR_CORRUPTED, "%s: %lu reports, last %s", what,
                       r->rec.count, tl_kind_name(r->rec.last));
    tl_recorder_reset(&r->rec);
    return ok;
}

static void fc_close(fc_t *r) { tl_buffer_free(&r->buf); }

/* n blocks of `size` bytes, in order; false if one fails. */
static bool fc_fill(fc_t *r, size_t size, unsigned char **out, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        out[i] = rt_fma_malloc(r->f, size);
        TL_REQUIRE(out[i] != NULL, "setup: malloc(%zu) #%u", size, i);
    }
    return true;
}

/* --- the cases ---------------------------------------------------------------------------------- */

/* Whole pages 0..3 used, 1 and 2 freed (anchor 2 -> 1); page 1's back link (metadata beside the
 * page table, out of an overflow's reach: a torn list or a stray write) then names `back` -- FMA_NIL while 1 is not the anchor, or page 0, which is used. A run of two pages,
 * which first fit lays over 1 and 2, is refused before its first step. */
static void anchor_back(uint32_t back)
{
    fc_t r;
    unsigned char *p[4];
    if (!fc_open(&r, 0) || !fc_fill(&r, 1u << FC_PAGE_LOG2, p, 4)) {
        fc_close(&r);
        return;
    }
    rt_fma_free(r.f, p[1]);
    rt_fma_free(r.f, p[2]);
    uint32_t *link = (uint32_t *)(void *)((unsigned char *)r.f + r.f->back_off) + 1;
    if (!TL_CHECK(r.f->anchor == 2u && *link == 2u, "anchor_back: setup (anchor %u, back link %u)", r.f->anchor,
                  *link)) {
        fc_close(&r);
        return;
    }
    *link = back;
    tl_recorder_reset(&r.rec);
    void *q = rt_fma_malloc(r.f, 2u << FC_PAGE_LOG2);
    TL_CHECK(q == NULL, "anchor_back %u: a run over a page whose back link is damaged", back);
    fc_refused(&r, back == FMA_NIL ? "anchor_back (NIL, not the anchor)" : "anchor_back (a used page)");
    fc_close(&r);
}

/* Class 2 (n = 4): a fresh page, entry block 0 (count 3, virgin 2), block 3 handed out. The
 * entry's count raised to 4 = n, sealed. */
static void entry_count(void)
{
    fc_t r;
    unsigned char *p[1];
    if (!fc_open(&r, 0) || !fc_fill(&r, 64, p, 1)) {
        fc_close(&r);
        return;
    }
    uint32_t e = fc_entry(r.f, 0);
    if (!fc_replica_ok(r.f, e)) {
        fc_close(&r);
        return;
    }
    fc_seal(r.f, e, 4, fc_virgin(fc_blk(r.f, e)));
    tl_recorder_reset(&r.rec);
    TL_CHECK(rt_fma_malloc(r.f, 64) == NULL, "entry_count: malloc from an entry counting every block");
    fc_refused(&r, "entry_count");
    fc_close(&r);
}

/* Class 0 (n = 16): blocks 15, 1 .. 5 handed out (virgin run 6 .. 14), then `freed` of them given
 * back, chained from the entry block 0 in the reverse order. */
static bool chain_setup(fc_t *r, unsigned char **p, const unsigned *freed, unsigned nfreed)
{
    if (!fc_open(r, 0) || !fc_fill(r, 16, p, 6)) {
        return false;
    }
    for (unsigned i = 0; i < nfreed; i++) {
        rt_fma_free(r->f, p[freed[i]]);
    }
    return fc_replica_ok(r->f, fc_entry(r->f, 0));
}

/* The entry's chain names block 2, which is live, dressed as a free chain member (chain 0 and its
 * check word); sealed. */
static void chain_live(void)
{
    fc_t r;
    unsigned char *p[6]; /* p[0] = block 15, p[k] = block k */
    static const unsigned freed[] = {1};
    if (!chain_setup(&r, p, freed, 1)) {
        fc_close(&r);
        return;
    }
    uint32_t e = fc_entry(r.f, 0), live = fc_ref(r.f, p[2]);
    fc_link(r.f, live, 0);
    fc_blk(r.f, e)->chain = live;
    fc_reseal(r.f, e);
    tl_recorder_reset(&r.rec);
    void *q = rt_fma_malloc(r.f, 16);
    TL_CHECK(q == NULL, "chain_live: malloc handed out %p (the live block is %p)", q, (void *)p[2]);
    fc_refused(&r, "chain_live");
    fc_close(&r);
}

/* Chain 0 -> 1 -> 2 -> 3; block 1's link changed to name 3 (a valid member), its check word left
 * as it was: malloc, which takes block 1 and makes its link the chain, is refused. */
static void chain_stale(void)
{
    fc_t r;
    unsigned char *p[6];
    static const unsigned freed[] = {3, 2, 1};
    if (!chain_setup(&r, p, freed, 3)) {
        fc_close(&r);
        return;
    }
    uint32_t one = fc_ref(r.f, p[1]);
    if (!TL_CHECK(fc_blk(r.f, fc_entry(r.f, 0))->chain == one && fc_blk(r.f, one)->chain == fc_ref(r.f, p[2]),
                  "chain_stale: setup")) {
        fc_close(&r);
        return;
    }
    fc_blk(r.f, one)->chain = fc_ref(r.f, p[3]);
    tl_recorder_reset(&r.rec);
    TL_CHECK(rt_fma_malloc(r.f, 16) == NULL, "chain_stale: malloc through a link without its check word");
    fc_refused(&r, "chain_stale");
    fc_close(&r);
}

/* Class 0: page 0 filled, page 1 cut (its entry on the list, blocks 1 .. 14 virgin), then blocks
 * 1 and 2 of page 0 freed: page 0's entry (block 1, the list's head) chains block 2. The chain
 * changed (sealed) to name block 5 of page 1 -- free in its page's map, dressed as a chain
 * member: malloc, which would take it, is refused. */
static void chain_other_page(void)
{
    fc_t r;
    unsigned char *p[17];
    if (!fc_open(&r, 0) || !fc_fill(&r, 16, p, 17)) {
        fc_close(&r);
        return;
    }
    rt_fma_free(r.f, p[1]); /* page 0, block 1 */
    rt_fma_free(r.f, p[2]); /* page 0, block 2 */
    uint32_t e = r.f->freelist[0], other = fc_block_ref(r.f, 1, 16, 5);
    if (!TL_CHECK(e == fc_entry(r.f, 0) && e == fc_ref(r.f, p[1]) && fc_blk(r.f, e)->chain == fc_ref(r.f, p[2]),
                  "chain_other_page: setup") ||
        !fc_replica_ok(r.f, e)) {
        fc_close(&r);
        return;
    }
    fc_link(r.f, other, 0);
    fc_blk(r.f, e)->chain = other;
    fc_reseal(r.f, e);
    tl_recorder_reset(&r.rec);
    void *q = rt_fma_malloc(r.f, 16);
    TL_CHECK(q == NULL, "chain_other_page: malloc handed out %p from another page's chain", q);
    fc_refused(&r, "chain_other_page");
    fc_close(&r);
}

/* Class 0: blocks 15, 1, 2 handed out (count 13, virgin 12: blocks 3 .. 14); the entry's virgin
 * run raised to 14 (blocks 1 .. 14) and its count to 15, sealed: the lowest "virgin" block is
 * the live block 1. */
static void virgin_live(void)
{
    fc_t r;
    unsigned char *p[3];
    if (!fc_open(&r, 0) || !fc_fill(&r, 16, p, 3)) {
        fc_close(&r);
        return;
    }
    uint32_t e = fc_entry(r.f, 0);
    if (!fc_replica_ok(r.f, e)) {
        fc_close(&r);
        return;
    }
    fc_seal(r.f, e, 15, 14);
    tl_recorder_reset(&r.rec);
    void *q = rt_fma_malloc(r.f, 16);
    TL_CHECK(q == NULL, "virgin_live: malloc handed out %p (block 1 is %p)", q, (void *)p[1]);
    fc_refused(&r, "virgin_live");
    fc_close(&r);
}

/* Class 2 (n = 4): pages 0, 1, 2 filled (blocks 3, 1, 2, 0 each), block 1 of each freed (the list
 * of entry blocks: e2 -> e1 -> e0), then blocks 0 and 2 of page 1: page 1 keeps one live block,
 * whose free would unite it (unlinking e1). p[4 * pg + k]: the k-th block handed out of page pg. */
static bool list_setup(fc_t *r, unsigned char **p, uint32_t *e)
{
    if (!fc_open(r, 0) || !fc_fill(r, 64, p, 12)) {
        return false;
    }
    for (uint32_t pg = 0; pg < 3u; pg++) {
        rt_fma_free(r->f, p[4u * pg + 1u]); /* block 1 */
    }
    rt_fma_free(r->f, p[4u + 3u]); /* page 1: block 0 (handed out last) */
    rt_fma_free(r->f, p[4u + 2u]); /* and block 2 */
    for (uint32_t pg = 0; pg < 3u; pg++) {
        e[pg] = fc_entry(r->f, pg);
    }
    return TL_CHECK(r->f->freelist[2] == e[2] && fc_blk(r->f, e[2])->next == e[1] && fc_blk(r->f, e[1])->next == e[0] &&
                        fc_count(fc_blk(r->f, e[1])) == 3u,
                    "list: setup") &&
           fc_replica_ok(r->f, e[1]);
}

/* e1's prev (prev_side) or next changed to name an entry of the class that does not link back to
 * e1 (e0, whose next is 0; e2, whose prev is 0), sealed. */
static void list_links(bool prev_side)
{
    fc_t r;
    unsigned char *p[12];
    uint32_t e[3];
    if (!list_setup(&r, p, e)) {
        fc_close(&r);
        return;
    }
    if (prev_side) {
        fc_blk(r.f, e[1])->prev = e[0];
    } else {
        fc_blk(r.f, e[1])->next = e[2];
    }
    fc_reseal(r.f, e[1]);
    tl_recorder_reset(&r.rec);
    rt_fma_free(r.f, p[4u + 0u]); /* page 1's last live block: the page unites */
    fc_refused(&r, prev_side ? "list_links (prev)" : "list_links (next)");
    fc_close(&r);
}

/* Class 2: pages 0 and 1 filled, block 1 of page 0 freed (its entry the list's only member, the
 * head); the head's prev made nonzero, sealed. A free in the full page 1 makes its block the new
 * head, writing the old head's prev: refused. */
static void head_prev(void)
{
    fc_t r;
    unsigned char *p[8];
    if (!fc_open(&r, 0) || !fc_fill(&r, 64, p, 8)) {
        fc_close(&r);
        return;
    }
    rt_fma_free(r.f, p[1]);
    uint32_t h = r.f->freelist[2];
    if (!TL_CHECK(h == fc_entry(r.f, 0) && fc_blk(r.f, h)->prev == 0u, "head_prev: setup") || !fc_replica_ok(r.f, h)) {
        fc_close(&r);
        return;
    }
    fc_blk(r.f, h)->prev = fc_ref(r.f, p[4]);
    fc_reseal(r.f, h);
    tl_recorder_reset(&r.rec);
    rt_fma_free(r.f, p[5]);
    fc_refused(&r, "head_prev");
    fc_close(&r);
}

/* Class 2: blocks 3, 1, 2 handed out of a fresh page (the entry block 0 alone free: count 1); the
 * count raised to 3, sealed. The free of block 3 would unite the page while 1 and 2 are live. */
static void unite_map(void)
{
    fc_t r;
    unsigned char *p[3];
    if (!fc_open(&r, 0) || !fc_fill(&r, 64, p, 3)) {
        fc_close(&r);
        return;
    }
    uint32_t e = fc_entry(r.f, 0);
    if (!TL_CHECK(fc_count(fc_blk(r.f, e)) == 1u, "unite_map: setup") || !fc_replica_ok(r.f, e)) {
        fc_close(&r);
        return;
    }
    fc_seal(r.f, e, 3, 0);
    tl_recorder_reset(&r.rec);
    rt_fma_free(r.f, p[0]);
    fc_refused(&r, "unite_map");
    TL_CHECK(r.f->used_pages == 1u, "unite_map: the page was released with live blocks");
    fc_close(&r);
}

/* BSD, class `cls` (blocks of 16 << cls bytes, n of them): one malloc cuts a page (block n-1
 * handed out, list n-2 -> ... -> 0). Block n-2's link is made to name `target` (its check word
 * forged): the malloc that takes block n-2 is refused. */
static void bsd_link(unsigned cls, bool live)
{
    fc_t r;
    size_t bsize = (size_t)16u << cls;
    uint32_t n = (uint32_t)((1u << FC_PAGE_LOG2) / bsize);
    unsigned char *p[1];
    if (!fc_open(&r, RT_FMA_BSD44) || !fc_fill(&r, bsize, p, 1)) {
        fc_close(&r);
        return;
    }
    uint32_t head = r.f->freelist[cls];
    if (!TL_CHECK(fc_ref(r.f, p[0]) == fc_block_ref(r.f, 0, bsize, n - 1u) &&
                      head == fc_block_ref(r.f, 0, bsize, n - 2u),
                  "bsd: setup")) {
        fc_close(&r);
        return;
    }
    /* live: block n-1, handed out; else the middle of block n-3, which is free */
    uint32_t target = live ? fc_ref(r.f, p[0]) : fc_block_ref(r.f, 0, bsize, n - 3u) + 16u;
    fc_link(r.f, head, target);
    tl_recorder_reset(&r.rec);
    void *q = rt_fma_malloc(r.f, bsize);
    TL_CHECK(q == NULL, "bsd_%s: malloc succeeded with a link to %s", live ? "live" : "middle",
             live ? "a live block" : "the middle of a block");
    fc_refused(&r, live ? "bsd_live" : "bsd_middle");
    fc_close(&r);
}

int main(void)
{
#if RT_HARDENING < 1
    tl_skip("fma_checks: RT_HARDENING 0");
    return tl_summary("fma_checks");
#else
    anchor_back(FMA_NIL);
    anchor_back(0);
    entry_count();
    chain_live();
    chain_stale();
    chain_other_page();
    virgin_live();
    list_links(true);
    list_links(false);
    head_prev();
    unite_map();
    bsd_link(2, true);
    bsd_link(1, false);
    return tl_summary("fma_checks");
#endif
}
