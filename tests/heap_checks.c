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
#include "heap/heap_internal.h"

#define HC_HEAP (64u << 10)

static const rt_index_t indexes[] = {RT_INDEX_TLSF,     RT_INDEX_TLSF32,  RT_INDEX_SEGLIST, RT_INDEX_FIRSTFIT,
                                     RT_INDEX_BESTFIT,  RT_INDEX_HALFFIT, RT_INDEX_TLSFQ};

/* --- the one place that knows how a header word is made (src/block/block.h) ------------------ */

/* The size | flags of the header at `block`, or SIZE_MAX when the word there is no valid header. */
static size_t hc_head(const rt_heap_t *h, const void *block)
{
    size_t head = *(const size_t *)block;
    return blk_head_ok(h->key, head) ? blk_data(head) : SIZE_MAX;
}

/* Writes a valid header of size | flags at `block`, as the heap would. */
static void hc_set(const rt_heap_t *h, void *block, size_t data) { blk_set_head(h->key, blk_at(block), data); }

/* --- fixtures ---------------------------------------------------------------------------------- */

typedef struct hc {
    tl_buffer_t buf;
    rt_heap_t *h;
    tl_recorder_t rec;
    const char *name;
} hc_t;

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
    rt_heap_set_handler(f->h, tl_record, &f->rec);
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
        rt_heap_set_handler(f.h, tl_record, &f.rec);
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
        size_past_pool(indexes[i], false);
        size_past_pool(indexes[i], true);
    }
    return tl_summary("heap_checks");
#endif
}
