/*
 * heap_checks.c -- the boundary-tag heap's safety checks one at a time, for every index and the
 * quick lists (rt_tlsfq): each case builds the one state a single check must refuse, so that
 * removing the check (a mutant of tools/mutants.txt) makes the case fail. White-box: the cases
 * forge headers that carry a valid tag, which only the heap's own verbs can write (hc_head and
 * hc_set below, the one place that knows how; tests/CMakeLists.txt adds src/ for this test).
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
 *   found_used_header  the one free block of an index, its header made a valid used header: a
 *                   malloc the index serves from its list refused (CORRUPTED), nothing handed out
 *   next_past_pool  a free successor (the pool's tail) whose valid header runs one unit past the
 *                   sentinel: free and realloc of the block before it refused, nothing written
 *   link_into_guard a free block's pprev aimed at the word past the sentinel, which points back
 *                   at it: free of its neighbour refused, the guard not written
 *   flush_counted   rt_tlsfq: the last cached block's link aimed at a live block dressed as cached:
 *                   the flush gives back only the blocks counted and stops there (reported)
 *   seglist_emptied_class  segregated fit: a class emptied by cutting off its damaged head leaves
 *                   the map (a later find of a lower class takes a class that holds a block)
 *   quick_past_pool rt_tlsfq's push of a small block whose size runs one unit past the sentinel
 *                   onto a header planted in the guard: refused, not cached
 *   size_past_pool  a used header whose (valid) size runs past its pool's end, onto a header of
 *                   the next pool, or one unit past the sentinel onto a header planted in the
 *                   guard: free refused, neither header nor guard written
 *
 * After each case the test restores what it forged and shows the heap frees cleanly. Skipped at
 * RT_HARDENING 0 (the papers' checks only).
 */
#include "testlib.h"

#include "rtalloc/heap.h"
/* White-box: the control structure and the header verbs (block.h). */
#include "heap/quick.h"

#define HC_HEAP (64u << 10)

static const rt_index_t indexes[] = {RT_INDEX_TLSF,     RT_INDEX_TLSF32,  RT_INDEX_SEGLIST, RT_INDEX_FIRSTFIT,
                                     RT_INDEX_BESTFIT,  RT_INDEX_HALFFIT, RT_INDEX_TLSFQ};

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
    tl_buffer_t buf;
    rt_heap_t *h;
    tl_recorder_t rec;
    unsigned long checks; /* of rec.count, rt_heap_check's own reports (RT_DEBUG 2 makes them) */
    const char *name;
} hc_t;

static void hc_record(void *context, const rt_error_t *error)
{
    hc_t *f = context;
    tl_record(&f->rec, error);
    if (error->operation != NULL && strcmp(error->operation, "check") == 0) {
        f->checks++;
    }
}

static bool hc_open(hc_t *f, rt_index_t index, size_t size)
{
    memset(f, 0, sizeof *f);
    f->name = rt_index_name(index);
    if (!TL_CHECK(tl_buffer_new(&f->buf, size, 0), "out of memory")) {
        return false;
    }
    f->h = rt_heap_create_with(f->buf.mem, size, index);
    if (!TL_CHECK(f->h != NULL, "%s: create", f->name)) {
        tl_buffer_free(&f->buf);
        return false;
    }
    rt_heap_set_handler(f->h, hc_record, f);
    return true;
}

/* Frees the blocks, then requires a clean heap: no report, rt_heap_check true. */
static void hc_close(hc_t *f, void **blocks, size_t n, const char *what)
{
    tl_recorder_reset(&f->rec);
    for (size_t i = 0; i < n; i++) {
        rt_heap_free(f->h, blocks[i]);
    }
    TL_CHECK(f->rec.count == 0u && rt_heap_check(f->h), "%s: %s: the restored heap does not free cleanly (%lu reports)",
             f->name, what, f->rec.count);
    tl_buffer_free(&f->buf);
}

static unsigned char *hc_block(void *payload) { return (unsigned char *)payload - BLK_W; }
static size_t *hc_word(void *address) { return (size_t *)address; }

/* One report of `kind` since the last reset (any kind when kind is RT_ERR_NONE). */
static bool hc_one(const hc_t *f, rt_error_kind_t kind)
{
    return f->rec.count == 1u && (kind == RT_ERR_NONE || f->rec.last == kind);
}

/* --- the cases --------------------------------------------------------------------------------- */

/* [a used][p "free": exact free header and footer, on no list][b used, PREV_FREE][c used]. Blocks
 * above the quick lists' largest, so that rt_tlsfq's free goes the index's way. */
static void prev_unlisted(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 64), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600),
                    rt_heap_malloc(f.h, 64)};
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    unsigned char *p = hc_block(blk[1]), *b = hc_block(blk[2]);
    size_t pdata = hc_head(f.h, p), bdata = hc_head(f.h, b);
    size_t psize = pdata & ~BLK_FLAGS;
    size_t saved[4] = {*hc_word(p), *hc_word(p + BLK_W), *hc_word(p + 2u * BLK_W), *hc_word(p + psize - BLK_W)};
    size_t saved_b = *hc_word(b);
    tl_fill(blk[2], 64, 7);
    /* p's links: next NULL, pprev aimed at p's own next (a word of the heap that holds NULL, not
     * p): harmless if unlinked, and no list's member */
    hc_set(f.h, p, psize | BLK_FREE);
    *hc_word(p + BLK_W) = 0u;
    *hc_word(p + 2u * BLK_W) = (size_t)(uintptr_t)(p + BLK_W);
    *hc_word(p + psize - BLK_W) = psize; /* the footer: the word before b's header */
    hc_set(f.h, b, (bdata & ~BLK_FLAGS) | BLK_PREV_FREE);
    size_t forged_b = *hc_word(b);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[2]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free after an unlisted free predecessor: %lu reports, last %s", f.name,
             f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(*hc_word(b) == forged_b, "%s: the refused free changed b's header", f.name);
    tl_recorder_reset(&f.rec);
    TL_CHECK(rt_heap_realloc(f.h, blk[2], 2000) == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: realloc after an unlisted free predecessor: %lu reports", f.name, f.rec.count);
    TL_CHECK(tl_verify(blk[2], 64, 7) == 64u, "%s: b's contents changed", f.name);
    *hc_word(p) = saved[0];
    *hc_word(p + BLK_W) = saved[1];
    *hc_word(p + 2u * BLK_W) = saved[2];
    *hc_word(p + psize - BLK_W) = saved[3];
    *hc_word(b) = saved_b;
    hc_close(&f, blk, 4, "prev_unlisted");
}

/* [b used][n free][s used][g]: realloc(b) growing into n must first see s sound. damage 0: s's
 * header a valid used header without PREV_FREE; 1..: one byte of it changed. */
static void realloc_succ(rt_index_t index, unsigned damage)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[4] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600),
                    rt_heap_malloc(f.h, 64)};
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    rt_heap_free(f.h, blk[1]);
    unsigned char *s = hc_block(blk[2]);
    size_t saved = *hc_word(s);
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
    *hc_word(s) = saved;
    tl_recorder_reset(&f.rec);
    q = rt_heap_realloc(f.h, blk[0], 1000);
    TL_CHECK(q == blk[0] && f.rec.count == 0u, "%s: realloc in place after the repair: %p (b %p)", f.name, q, blk[0]);
    if (q != NULL) {
        blk[0] = q;
    }
    blk[1] = NULL;
    hc_close(&f, blk, 4, "realloc_succ");
}

/* [f free][l used][p free][b used]: the footer before b (p's last word) changed to name f, a
 * free block of another size that is on its list. The backward merge would swallow l, a live
 * block: free and realloc of b are refused, because f's header does not say free with exactly
 * the footer's size. */
static void footer_names_other(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[5] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 900),
                    rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 64)};
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL && blk[2] != NULL && blk[3] != NULL && blk[4] != NULL,
                  "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    rt_heap_free(f.h, blk[0]);
    rt_heap_free(f.h, blk[2]);
    unsigned char *fb = hc_block(blk[0]), *b = hc_block(blk[3]);
    size_t *footer = hc_word(b - BLK_W);
    size_t saved = *footer;
    *footer = (size_t)(b - fb);
    tl_fill(blk[1], 600, 5);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[3]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free after a footer naming another free block: %lu reports, last %s",
             f.name, f.rec.count, tl_kind_name(f.rec.last));
    tl_recorder_reset(&f.rec);
    TL_CHECK(rt_heap_realloc(f.h, blk[3], 3000) == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: realloc after a footer naming another free block: %lu reports", f.name, f.rec.count);
    void *q = rt_heap_malloc(f.h, 1200); /* a merged block would be that large: none may overlap l */
    TL_CHECK(q == NULL || (unsigned char *)q >= (unsigned char *)blk[1] + 600 ||
                 (unsigned char *)q + 1200 <= (unsigned char *)blk[1],
             "%s: a block handed out over the live l", f.name);
    TL_CHECK(tl_verify(blk[1], 600, 5) == 600u, "%s: l's contents changed", f.name);
    rt_heap_free(f.h, q);
    *footer = saved;
    blk[0] = blk[2] = NULL;
    hc_close(&f, blk, 5, "footer_names_other");
}

/* [l used][b used, PREV_FREE]: the footer before b (l's last word) names a "free block" forged in
 * l's payload at a word that is no block start (W-aligned, not at a header's place modulo A),
 * with an exact free header for that size and links that pass membership (a list of itself).
 * free of b is refused: a footer must be a multiple of A. (Only where A > W.) */
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
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL && blk[2] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    unsigned char *l = hc_block(blk[0]), *b = hc_block(blk[1]);
    unsigned char *fake = (unsigned char *)blk[0] + BLK_A; /* A-aligned: never a header's place */
    size_t psize = (size_t)(b - fake);
    size_t saved_l[4], saved_b = *hc_word(b), saved_footer = *hc_word(b - BLK_W);
    memcpy(saved_l, fake, sizeof saved_l);
    hc_set(f.h, fake, psize | BLK_FREE);
    *hc_word(fake + BLK_W) = (size_t)(uintptr_t)fake;          /* next: itself */
    *hc_word(fake + 2u * BLK_W) = (size_t)(uintptr_t)(fake + BLK_W); /* pprev: its own next */
    *hc_word(b - BLK_W) = psize;
    hc_set(f.h, b, (hc_head(f.h, b) & ~BLK_FLAGS) | BLK_PREV_FREE);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[1]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free after a misaligned footer: %lu reports, last %s", f.name,
             f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(hc_head(f.h, l) != SIZE_MAX && (hc_head(f.h, l) & BLK_FREE) == 0u, "%s: l's header changed", f.name);
    memcpy(fake, saved_l, sizeof saved_l);
    *hc_word(b - BLK_W) = saved_footer;
    *hc_word(b) = saved_b;
    hc_close(&f, blk, 3, "footer_misaligned");
}

typedef struct hc_range {
    uintptr_t lo, hi;  /* a part of the buffer */
    uintptr_t first;   /* the lowest block header in it (UINTPTR_MAX: none) */
    uintptr_t end;     /* the highest block end in it: its pool's sentinel */
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

/* x, the first block of pool 0, with a valid used header whose size runs past the pool's end:
 * past_guard false: onto the first block of pool 1 (laid right after pool 0 in one buffer),
 * whose header is valid (free and listed); true: exactly one unit past the sentinel, onto a valid
 * header planted in the guard after it. free(x) is refused either way, and writes nothing there. */
static void size_past_pool(rt_index_t index, bool past_guard)
{
    hc_t f;
    size_t half = HC_HEAP / 2u;
    memset(&f, 0, sizeof f);
    f.name = rt_index_name(index);
    if (!TL_CHECK(tl_buffer_new(&f.buf, 2u * half, 0), "out of memory")) {
        return;
    }
    unsigned char *mid = f.buf.mem + half;
    void *blk[1] = {NULL};
    f.h = rt_heap_create_with(f.buf.mem, half, index);
    if (f.h != NULL) {
        rt_heap_set_handler(f.h, hc_record, &f);
    }
    if (!TL_CHECK(f.h != NULL && (blk[0] = rt_heap_malloc(f.h, 64)) != NULL, "%s: x in pool 0", f.name) ||
        !TL_CHECK(rt_heap_add_pool(f.h, mid, half), "%s: two pools", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    hc_range_t pool0 = hc_range(f.h, f.buf.mem, mid), pool1 = hc_range(f.h, mid, mid + half);
    unsigned char *x = hc_block(blk[0]);
    unsigned char *target = past_guard ? (unsigned char *)pool0.end + BLK_A /* in the guard after the sentinel */
                                       : (unsigned char *)pool1.first;
    if (!TL_CHECK(pool0.end != 0u && pool1.first != UINTPTR_MAX && target > (unsigned char *)pool0.end,
                  "%s: layout", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    size_t saved_x = *hc_word(x), saved_t = *hc_word(target);
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
    TL_CHECK(*hc_word(target) == planted, "%s: the refused free wrote the header %s", f.name,
             past_guard ? "planted in the guard" : "of the next pool's first block");
    *hc_word(target) = saved_t;
    *hc_word(x) = saved_x;
    hc_close(&f, blk, 1, past_guard ? "size_past_pool (guard)" : "size_past_pool");
}

/* [x used][t free, the rest of the pool][sentinel]: t's header (valid tag) says it runs one unit
 * past the sentinel. free and realloc of x, which would absorb t, are refused: a free successor's
 * size must end inside the pool. Nothing past the pool is written. */
static void next_past_pool(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[1] = {rt_heap_malloc(f.h, 600)};
    if (!TL_CHECK(blk[0] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    hc_range_t pool = hc_range(f.h, f.buf.mem, f.buf.mem + f.buf.size);
    unsigned char *x = hc_block(blk[0]);
    unsigned char *t = x + (hc_head(f.h, x) & ~BLK_FLAGS), *end = (unsigned char *)pool.end;
    size_t tdata = hc_head(f.h, t);
    if (!TL_CHECK(tdata != SIZE_MAX && (tdata & BLK_FREE) != 0u && t + (tdata & ~BLK_FLAGS) == end,
                  "%s: the free tail", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    size_t saved_t = *hc_word(t), past[4];
    memcpy(past, end, sizeof past);
    hc_set(f.h, t, ((size_t)(end - t) + BLK_A) | BLK_FREE);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[0]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free before a free block running past the pool: %lu reports, last %s",
             f.name, f.rec.count, tl_kind_name(f.rec.last));
    tl_recorder_reset(&f.rec);
    TL_CHECK(rt_heap_realloc(f.h, blk[0], 1000) == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: realloc into a free block running past the pool: %lu reports", f.name, f.rec.count);
    TL_CHECK(memcmp(past, end, sizeof past) == 0, "%s: the sentinel or the guard after it was written", f.name);
    memcpy(end, past, sizeof past);
    *hc_word(t) = saved_t;
    hc_close(&f, blk, 1, "next_past_pool");
}

/* [a used][n free][c used] ... [sentinel][guard]: n's pprev aimed at the first word past the
 * sentinel (the guard), which is made to hold n's address -- a link "back" that lies one word
 * outside the heap. free of a, which would unlink n, is refused, and the guard not written. */
static void link_into_guard(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[3] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL && blk[2] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    rt_heap_free(f.h, blk[1]);
    hc_range_t pool = hc_range(f.h, f.buf.mem, f.buf.mem + f.buf.size);
    unsigned char *n = hc_block(blk[1]);
    size_t *guard = hc_word((unsigned char *)pool.end + BLK_W);
    size_t saved_guard = *guard, saved_links[2] = {*hc_word(n + BLK_W), *hc_word(n + 2u * BLK_W)};
    *guard = (size_t)(uintptr_t)n;
    *hc_word(n + BLK_W) = 0u;                          /* next: none */
    *hc_word(n + 2u * BLK_W) = (size_t)(uintptr_t)guard; /* pprev: the guard, which points at n */
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[0]);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "%s: free before a free block linked from the guard: %lu reports, last %s",
             f.name, f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(*guard == (size_t)(uintptr_t)n, "%s: the guard past the sentinel was written", f.name);
    *guard = saved_guard;
    *hc_word(n + BLK_W) = saved_links[0];
    *hc_word(n + 2u * BLK_W) = saved_links[1];
    blk[1] = NULL;
    hc_close(&f, blk, 3, "link_into_guard");
}

/* [x used][y used]: x's first payload word holds what would be a valid used header of a block
 * reaching exactly to y, so that x + W, a pointer that is no payload (misaligned: only where
 * A > W), looks like a live block with a sound successor. free of it is refused as a bad
 * pointer. */
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
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    unsigned char *x = hc_block(blk[0]);
    size_t xsize = hc_head(f.h, x) & ~BLK_FLAGS;
    unsigned char *p = (unsigned char *)blk[0] + BLK_W;
    size_t saved = *hc_word(blk[0]);
    hc_set(f.h, blk[0], xsize - BLK_W); /* "header" of a block at x + W that ends where y begins */
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, p);
    TL_CHECK(hc_one(&f, RT_ERR_BAD_POINTER), "%s: free of a misaligned pointer: %lu reports, last %s", f.name,
             f.rec.count, tl_kind_name(f.rec.last));
    *hc_word(blk[0]) = saved;
    hc_close(&f, blk, 2, "misaligned_pointer");
}

/* The heap used up but for one free block f of its index, whose header then says used (a valid
 * used header of its size; its links intact). A malloc the index serves from f's list must not
 * take it: refused (CORRUPTED), f not handed out. */
static void found_used_header(rt_index_t index)
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
    if (!TL_CHECK(fp != NULL && n > 0u && n < sizeof blk / sizeof blk[0], "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    rt_heap_flush(f.h); /* rt_tlsfq: nothing cached, the index alone serves */
    rt_heap_free(f.h, fp);
    rt_heap_flush(f.h);
    unsigned char *b = hc_block(fp);
    size_t saved = *hc_word(b);
    size_t data = hc_head(f.h, b);
    TL_CHECK(data != SIZE_MAX && (data & BLK_FREE) != 0u, "%s: f is not free", f.name);
    hc_set(f.h, b, data & ~BLK_FLAGS);
    tl_recorder_reset(&f.rec);
    void *q = rt_heap_malloc(f.h, 64);
    TL_CHECK(q == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "%s: malloc served from a listed block whose header says used: %p (f %p), %lu reports, last %s", f.name,
             q, fp, f.rec.count, tl_kind_name(f.rec.last));
    *hc_word(b) = saved;
    if (q != NULL) {
        blk[n++] = q;
    }
    /* (a walking index cut f's list off, list_quarantine: f is lost, and a free of its neighbour
     * may be refused for it; the heap is dropped without the final check) */
    tl_buffer_free(&f.buf);
}

/* rt_tlsfq's own free of a small block (the push onto a quick list): x, the last block of a heap
 * filled with small blocks, its valid header made to say it runs one unit past the sentinel, onto
 * a valid header planted in the guard -- a size the quick lists keep. free(x) is refused, not
 * cached: a cached block must end inside its pool. */
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
    hc_range_t pool = hc_range(f.h, f.buf.mem, f.buf.mem + f.buf.size);
    unsigned char *x = NULL;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) { /* the highest block */
        if (x == NULL || hc_block(blk[i]) > x) {
            x = hc_block(blk[i]);
            last = i;
        }
    }
    unsigned char *target = (unsigned char *)pool.end + BLK_A;
    size_t size = (size_t)(target - x);
    if (!TL_CHECK(n > 0u && n < sizeof blk / sizeof blk[0] && size <= HEAP_QUICK_MAX_BLOCK, "tlsfq: quick setup")) {
        tl_buffer_free(&f.buf);
        return;
    }
    size_t saved_x = *hc_word(x), saved_t = *hc_word(target);
    hc_set(f.h, target, 64u);
    size_t planted = *hc_word(target);
    hc_set(f.h, x, size);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, blk[last]);
    TL_CHECK(hc_one(&f, RT_ERR_NONE), "tlsfq: free of a small block running one unit past the pool: %lu reports",
             f.rec.count);
    TL_CHECK(*hc_word(target) == planted, "tlsfq: the refused free wrote the header planted in the guard");
    *hc_word(target) = saved_t;
    *hc_word(x) = saved_x;
    hc_close(&f, blk, n, "quick_past_pool");
}

/* rt_heap_add_pool of a range that overlaps the heap's control structure (and no pool), or the
 * guard after pool 0 (and not the control structure): refused (BAD_POOL), nothing written. The
 * heap lies in the middle of the test's buffer, so both ranges are the test's memory. */
static void pool_overlaps(rt_index_t index)
{
    hc_t f;
    size_t quarter = HC_HEAP / 4u;
    memset(&f, 0, sizeof f);
    f.name = rt_index_name(index);
    if (!TL_CHECK(tl_buffer_new(&f.buf, 4u * quarter, 0), "out of memory")) {
        return;
    }
    unsigned char *mem = f.buf.mem + quarter; /* the heap: [mem, mem + 2 quarter) */
    f.h = rt_heap_create_with(mem, 2u * quarter, index);
    if (!TL_CHECK(f.h != NULL, "%s: create", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    rt_heap_set_handler(f.h, hc_record, &f);
    memset(f.buf.mem, 0x3C, quarter);
    memset(mem + 2u * quarter, 0x3C, quarter);
    /* below the heap, reaching 64 bytes into its control structure (its guard too) */
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_add_pool(f.h, f.buf.mem, quarter + 64u) && hc_one(&f, RT_ERR_BAD_POOL),
             "%s: a pool over the control structure: %lu reports", f.name, f.rec.count);
    /* above the heap, starting 8 bytes before its end (in the guard after pool 0's sentinel) */
    tl_recorder_reset(&f.rec);
    TL_CHECK(!rt_heap_add_pool(f.h, mem + 2u * quarter - 8u, quarter) && hc_one(&f, RT_ERR_BAD_POOL),
             "%s: a pool over pool 0's guard: %lu reports", f.name, f.rec.count);
    bool untouched = true;
    for (size_t i = 0; i < quarter; i++) {
        untouched = untouched && f.buf.mem[i] == 0x3C && mem[2u * quarter + i] == 0x3C;
    }
    TL_CHECK(untouched, "%s: a refused pool was written", f.name);
    hc_close(&f, NULL, 0, "pool_overlaps");
}

/* rt_heap_check sees each disagreement alone: a used block's PREV_FREE set while its predecessor
 * is used (valid tag), or clear while it is free; a free block's footer changed. */
static void check_sees(rt_index_t index)
{
    for (unsigned what = 0; what < 3u; what++) {
        hc_t f;
        if (!hc_open(&f, index, HC_HEAP)) {
            return;
        }
        void *blk[3] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
        if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL && blk[2] != NULL, "%s: setup", f.name)) {
            tl_buffer_free(&f.buf);
            return;
        }
        if (what != 0u) {
            rt_heap_free(f.h, blk[0]); /* [a free][b used, PREV_FREE] */
        }
        unsigned char *b = hc_block(blk[1]);
        size_t *word = what == 2u ? hc_word(b - BLK_W) : hc_word(b); /* a's footer, or b's header */
        size_t saved = *word;
        if (what == 2u) {
            *word += BLK_A;
        } else {
            hc_set(f.h, b, hc_head(f.h, b) ^ BLK_PREV_FREE);
        }
        tl_recorder_reset(&f.rec);
        static const char *const names[] = {"PREV_FREE set after a used block", "PREV_FREE clear after a free block",
                                            "a free block's footer changed"};
        TL_CHECK(!rt_heap_check(f.h) && hc_one(&f, RT_ERR_CORRUPTED), "%s: rt_heap_check missed %s", f.name,
                 names[what]);
        *word = saved;
        if (what != 0u) {
            blk[0] = NULL;
        }
        hc_close(&f, blk, 3, names[what]);
    }
}

/* Segregated fit: a class whose only block (its list's head) fails membership (its pprev
 * changed) is cut off by the malloc that meets it, and leaves the map: a later malloc of a lower
 * class, whose own list is empty, takes the head of the next class that holds a block, not the
 * emptied one. */
static void seglist_emptied_class(void)
{
    hc_t f;
    if (!hc_open(&f, RT_INDEX_SEGLIST, HC_HEAP)) {
        return;
    }
    void *a = rt_heap_malloc(f.h, 200), *s = rt_heap_malloc(f.h, 8);
    if (!TL_CHECK(a != NULL && s != NULL, "seglist: setup")) {
        tl_buffer_free(&f.buf);
        return;
    }
    rt_heap_free(f.h, a); /* the only block of the class of 200-byte payloads */
    unsigned char *b = hc_block(a);
    *hc_word(b + 2u * BLK_W) ^= BLK_A; /* its pprev: no longer the class's head */
    tl_recorder_reset(&f.rec);
    TL_CHECK(rt_heap_malloc(f.h, 200) == NULL && hc_one(&f, RT_ERR_CORRUPTED),
             "seglist: malloc meeting a damaged head: %lu reports", f.rec.count);
    tl_recorder_reset(&f.rec);
    f.checks = 0;
    void *q = rt_heap_malloc(f.h, 20);
    /* (RT_DEBUG 2: the check after the call reports the block cut off; nothing else may) */
    TL_CHECK(q != NULL && f.rec.count == f.checks, "seglist: malloc(20) after a class was cut off: %p, %lu reports",
             q, f.rec.count);
    tl_buffer_free(&f.buf); /* the block cut off stays lost: no final check */
}

/* rt_tlsfq: k blocks of one size cached, the last one's link aimed at a live block l of that size
 * whose header says "cached" (valid tag, MARK) and whose own link ends the list. The flush gives
 * back exactly the k blocks counted, stops at l (reported), and leaves l as it is. */
static void flush_counted(void)
{
    hc_t f;
    if (!hc_open(&f, RT_INDEX_TLSFQ, HC_HEAP)) {
        return;
    }
    enum { K = 3 };
    void *blk[2 * K + 2];
    for (size_t i = 0; i < 2u * K + 2u; i++) {
        blk[i] = rt_heap_malloc(f.h, 48);
        if (!TL_CHECK(blk[i] != NULL, "tlsfq: setup")) {
            tl_buffer_free(&f.buf);
            return;
        }
    }
    for (size_t i = 0; i < K; i++) {
        rt_heap_free(f.h, blk[2u * i]); /* cached: blocks 0, 2, 4 (apart, so none merges) */
    }
    unsigned char *l = hc_block(blk[2u * K]);
    size_t saved_head = *hc_word(l), saved_link = *hc_word(l + BLK_W);
    hc_set(f.h, l, hc_head(f.h, l) | BLK_MARK);
    hc_quick_link(f.h, l, NULL);
    hc_quick_link(f.h, hc_block(blk[0]), l); /* the first freed: the list's last */
    size_t forged = *hc_word(l);
    tl_recorder_reset(&f.rec);
    rt_heap_flush(f.h);
    TL_CHECK(hc_one(&f, RT_ERR_CORRUPTED), "tlsfq: a flush meeting a list longer than counted: %lu reports, last %s",
             f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(*hc_word(l) == forged, "tlsfq: the flush gave back a live block past the cached count");
    *hc_word(l) = saved_head;
    *hc_word(l + BLK_W) = saved_link;
    for (size_t i = 0; i < K; i++) {
        blk[2u * i] = NULL;
    }
    hc_close(&f, blk, 2u * K + 2u, "flush_counted");
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
 * it and never shows a block beyond the pool. */
static void walk_past_pool(rt_index_t index)
{
    hc_t f;
    if (!hc_open(&f, index, HC_HEAP)) {
        return;
    }
    void *blk[2] = {rt_heap_malloc(f.h, 600), rt_heap_malloc(f.h, 600)};
    if (!TL_CHECK(blk[0] != NULL && blk[1] != NULL, "%s: setup", f.name)) {
        tl_buffer_free(&f.buf);
        return;
    }
    hc_range_t pool = hc_range(f.h, f.buf.mem, f.buf.mem + f.buf.size);
    unsigned char *x = hc_block(blk[1]);
    size_t saved = *hc_word(x);
    hc_set(f.h, x, (size_t)((unsigned char *)pool.end - x) + 4u * BLK_A);
    hc_walked_t w = {pool.first, pool.end, true};
    rt_heap_walk(f.h, hc_walk_inside, &w);
    TL_CHECK(w.inside, "%s: rt_heap_walk showed a block running past the pool", f.name);
    *hc_word(x) = saved;
    hc_close(&f, blk, 2, "walk_past_pool");
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
        found_used_header(indexes[i]);
        next_past_pool(indexes[i]);
        link_into_guard(indexes[i]);
        size_past_pool(indexes[i], false);
        size_past_pool(indexes[i], true);
    }
    quick_past_pool();
    flush_counted();
    seglist_emptied_class();
    return tl_summary("heap_checks");
#endif
}
