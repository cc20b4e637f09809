/* SPDX-License-Identifier: MIT */
/*
 * badinput.c -- doc/design.md, "Bad input and the handler", for every allocator of the registry,
 * and the exact boundaries.
 *
 * Each case installs a recording handler and asserts: the handler was called exactly once with
 * the expected kind, the operation was refused (NULL / 0 returned, nothing changed: used bytes and
 * blocks, mallocs, frees; failures + 1 exactly when a request returned NULL), stats.errors went up
 * by one, the integrity check passes afterwards, and the live blocks kept their contents.
 *
 *   free(NULL)                 no-op, no report
 *   foreign pointer            stack, static, another instance, past the buffer -> FOREIGN_POINTER
 *   interior pointer           p+16 (p+alignment), p+1 of a filled live block    -> BAD_POINTER
 *   double free                at once -> DOUBLE_FREE; after the neighbours merged -> DOUBLE_FREE
 *                              or BAD_POINTER
 *   corrupted header           (boundary-tag heaps, and the wait-free trees on 32-bit targets, where
 *                              their 4-byte length word is the whole word before p; buddy and the
 *                              page allocators (page_size != 0) keep their metadata out of band) the word
 *                              before p overwritten -> BAD_POINTER or CORRUPTED; then the
 *                              block frees: a boundary-tag heap has fenced the damaged block (its
 *                              free is accepted, its bytes stay quarantined), the others free it
 *                              once the header is restored. Not tested: a size that spans exactly the
 *                              following blocks (a header forged consistent with both neighbours,
 *                              which heap.h states no O(1) check can see)
 *   a pointer of an earlier life  the allocator created again over the same buffer (a system
 *                              that recovers by re-creating its heap), a block of the new life
 *                              spanning where the old blocks stood: free of an old pointer,
 *                              live or freed in the old life -> BAD_POINTER (buddy and page
 *                              allocators, metadata out of band: DOUBLE_FREE at a free block of
 *                              the new life), and no later malloc overlaps the new block
 *   set_lock of half a pair    -> BAD_HOOKS, the hooks unchanged
 *   calloc overflow            -> OVERFLOW;  bad alignment 0, 3, 24, SIZE_MAX -> BAD_ALIGNMENT
 *   larger than the heap       -> TOO_LARGE; realloc / usable_size of a bad pointer: reported
 *   boundaries                 SIZE_MAX and just below, SIZE_MAX/2, 0xFFFFFFFF: NULL, no wrap;
 *                              exactly largest_free succeeds and +1 fails (fresh and after churn);
 *                              create over exactly min_buffer at every misalignment 0..63 (page
 *                              allocators: 0 .. page + 63 past a page boundary, as their padding
 *                              depends on the address modulo the page)
 */
#include "testlib.h"

#include "rtalloc/registry.h"

#define HEAP (64u << 10)

static rt_stats_t snap(tl_inst_t *x)
{
    rt_stats_t s;
    x->d->stats(x->h, &s);
    tl_recorder_reset(&x->rec);
    return s;
}

typedef enum { RET_VOID, RET_NULL, RET_ZERO } ret_t;

/* The call just made was refused with kind k1 (or k2), reported exactly once, changed nothing
 * the application owns: the live blocks (their count, and their bytes -- a live block whose header
 * the case damaged may have been fenced off by the allocator's containment: its bytes then move
 * from used to quarantined), mallocs, frees. */
static bool refused(tl_inst_t *x, const rt_stats_t *b, rt_error_kind_t k1, rt_error_kind_t k2, ret_t ret,
                    const char *what)
{
    const char *n = x->d->name;
    rt_stats_t s;
    x->d->stats(x->h, &s);
    bool ok =
        TL_CHECK(x->rec.count == 1u && (x->rec.last == k1 || x->rec.last == k2),
                 "%s: %s: %lu reports, last %s; expected one %s%s%s", n, what, x->rec.count, tl_kind_name(x->rec.last),
                 tl_kind_name(k1), k2 != k1 ? " or " : "", k2 != k1 ? tl_kind_name(k2) : "");
    ok = TL_CHECK(s.errors == b->errors + 1u, "%s: %s: stats.errors %" PRIu64 " -> %" PRIu64, n, what, b->errors,
                  s.errors) &&
         ok;
    ok = TL_CHECK(s.used_bytes + s.quarantined_bytes == b->used_bytes + b->quarantined_bytes &&
                      s.used_blocks == b->used_blocks && s.mallocs == b->mallocs && s.frees == b->frees,
                  "%s: %s: not refused: used %zu -> %zu, blocks %zu -> %zu, mallocs %" PRIu64 " -> %" PRIu64
                  ", frees %" PRIu64 " -> %" PRIu64,
                  n, what, b->used_bytes, s.used_bytes, b->used_blocks, s.used_blocks, b->mallocs, s.mallocs, b->frees,
                  s.frees) &&
         ok;
    uint64_t failures = b->failures + (ret == RET_NULL ? 1u : 0u);
    ok = TL_CHECK(s.failures == failures, "%s: %s: failures %" PRIu64 " -> %" PRIu64 " (expected %" PRIu64 ")", n, what,
                  b->failures, s.failures, failures) &&
         ok;
    ok = TL_CHECK(x->d->check(x->h), "%s: %s: integrity check after the refusal", n, what) && ok;
    tl_recorder_reset(&x->rec);
    return ok;
}

/* No report and nothing changed (free(NULL)). */
static bool silent(tl_inst_t *x, const rt_stats_t *b, const char *what)
{
    rt_stats_t s;
    x->d->stats(x->h, &s);
    bool ok = TL_CHECK(x->rec.count == 0u && s.errors == b->errors, "%s: %s: reported (%s)", x->d->name, what,
                       tl_kind_name(x->rec.last));
    ok = TL_CHECK(s.frees == b->frees && s.used_blocks == b->used_blocks && s.failures == b->failures,
                  "%s: %s changed the counters", x->d->name, what) &&
         ok;
    tl_recorder_reset(&x->rec);
    return ok;
}

static bool is_buddy(const rt_allocator_t *d) { return d->family == RT_FAMILY_BUDDY; }
static bool is_tree(const rt_allocator_t *d)
{
    return d->family == RT_FAMILY_TREE || d->family == RT_FAMILY_TREE_CACHED;
}

static char static_area[256];

/* --- pointers ---------------------------------------------------------------------------------- */

static void case_free_null(const rt_allocator_t *d)
{
    tl_inst_t x;
    if (tl_inst_open(&x, d, HEAP, 5)) {
        void *p = d->malloc(x.h, 64);
        rt_stats_t b = snap(&x);
        d->free(x.h, NULL);
        silent(&x, &b, "free(NULL)");
        d->free(x.h, p);
    }
    tl_inst_close(&x, true);
}

static void case_foreign(const rt_allocator_t *d)
{
    tl_inst_t x, y;
    if (!tl_inst_open(&x, d, HEAP, 5) || !tl_inst_open(&y, d, HEAP, 9)) {
        tl_inst_close(&x, false);
        return;
    }
    unsigned char *mine = d->malloc(x.h, 100);
    unsigned char *theirs = d->malloc(y.h, 100);
    TL_CHECK(mine != NULL && theirs != NULL, "%s: setup", d->name);
    tl_fill(mine, 100, 1);
    tl_fill(theirs, 100, 2);
    char stack_area[64];
    memset(stack_area, 0, sizeof stack_area);
    void *const foreign[] = {stack_area + 16, static_area + 64, theirs, x.buf.mem + x.buf.size + 16};
    const char *const names[] = {"free(stack address)", "free(static address)", "free(block of another instance)",
                                 "free(just past the buffer)"};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        rt_stats_t b = snap(&x);
        d->free(x.h, foreign[i]);
        refused(&x, &b, RT_ERR_FOREIGN_POINTER, RT_ERR_FOREIGN_POINTER, RET_VOID, names[i]);
    }
    rt_stats_t b = snap(&x);
    TL_CHECK(d->realloc(x.h, theirs, 200) == NULL, "%s: realloc(foreign) returned a block", d->name);
    refused(&x, &b, RT_ERR_FOREIGN_POINTER, RT_ERR_FOREIGN_POINTER, RET_NULL, "realloc(foreign)");
    b = snap(&x);
    TL_CHECK(d->usable_size(x.h, stack_area) == 0u, "%s: usable_size(stack) not 0", d->name);
    refused(&x, &b, RT_ERR_FOREIGN_POINTER, RT_ERR_FOREIGN_POINTER, RET_ZERO, "usable_size(stack address)");
    /* inside the buffer but not in the block area: the control structure / metadata at its start */
    void *const edges[] = {x.buf.mem + 64, x.buf.mem + 128};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        b = snap(&x);
        d->free(x.h, edges[i]);
        refused(&x, &b, RT_ERR_FOREIGN_POINTER, RT_ERR_BAD_POINTER, RET_VOID,
                "free(a pointer into the allocator's own control structure)");
    }
    TL_CHECK(tl_verify(mine, 100, 1) == 100u && tl_verify(theirs, 100, 2) == 100u, "%s: blocks touched", d->name);
    TL_CHECK(d->check(y.h) && y.rec.count == 0u, "%s: the other instance", d->name);
    d->free(x.h, mine);
    d->free(y.h, theirs);
    tl_inst_close(&y, true);
    tl_inst_close(&x, true);
}

/* Interior pointers into a live block filled with three kinds of content. */
static void case_interior(const rt_allocator_t *d)
{
    for (unsigned fill = 0; fill < 3u; fill++) {
        tl_inst_t x;
        if (!tl_inst_open(&x, d, HEAP, 3)) {
            tl_inst_close(&x, false);
            return;
        }
        unsigned char *before = d->malloc(x.h, 64);
        unsigned char *p = d->malloc(x.h, 200);
        unsigned char *after = d->malloc(x.h, 64);
        if (!TL_CHECK(before != NULL && p != NULL && after != NULL, "%s: setup", d->name)) {
            tl_inst_close(&x, false);
            return;
        }
        static const char *const fills[] = {"pattern", "zeros", "0xFF"};
        if (fill == 0u) {
            tl_fill(p, 200, 9);
        } else {
            memset(p, fill == 1u ? 0x00 : 0xFF, 200);
        }
        unsigned char saved[200];
        memcpy(saved, p, 200);
        static const size_t offsets[] = {16, 1, 8, 32, 48};
        for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
            char what[96];
            snprintf(what, sizeof what, "free(p + %zu) into a live block of %s", offsets[i], fills[fill]);
            rt_stats_t b = snap(&x);
            d->free(x.h, p + offsets[i]);
            refused(&x, &b, RT_ERR_BAD_POINTER, RT_ERR_BAD_POINTER, RET_VOID, what);
            snprintf(what, sizeof what, "realloc(p + %zu) into a live block of %s", offsets[i], fills[fill]);
            b = snap(&x);
            TL_CHECK(d->realloc(x.h, p + offsets[i], 10) == NULL, "%s: %s returned a block", d->name, what);
            refused(&x, &b, RT_ERR_BAD_POINTER, RT_ERR_BAD_POINTER, RET_NULL, what);
            snprintf(what, sizeof what, "usable_size(p + %zu) into a live block of %s", offsets[i], fills[fill]);
            b = snap(&x);
            TL_CHECK(d->usable_size(x.h, p + offsets[i]) == 0u, "%s: %s not 0", d->name, what);
            refused(&x, &b, RT_ERR_BAD_POINTER, RT_ERR_BAD_POINTER, RET_ZERO, what);
        }
        TL_CHECK(memcmp(saved, p, 200) == 0, "%s: the live block changed", d->name);
        d->free(x.h, before);
        d->free(x.h, p);
        d->free(x.h, after);
        tl_inst_close(&x, true);
    }
}

/* After double frees: the space reused with another layout (zero-filled, as calloc would), then
 * stale pointers c and b freed, and pointers into a free block that once held data. */
static void stale_pointers(tl_inst_t *x, unsigned char *c, unsigned char *b)
{
    rt_stats_t s;
    /* (the sizes are capped by the largest free block: a buddy's largest block in a 64 KiB
     * buffer depends on the buffer's address modulo its size) */
    rt_stats_t free_now = snap(x);
    size_t big_size = free_now.largest_free < 30000u ? free_now.largest_free : 30000u;
    size_t wide_size = free_now.largest_free < 20000u ? free_now.largest_free : 20000u;
    unsigned char *big = x->d->calloc(x->h, 1, big_size);
    if (TL_CHECK(big != NULL, "%s: calloc after double frees", x->d->name)) {
        unsigned char *const stale[] = {c, b};
        for (size_t i = 0; i < 2u; i++) {
            if (stale[i] == big) {
                continue; /* the new block starts there: freeing it would be legal */
            }
            s = snap(x);
            x->d->free(x->h, stale[i]);
            refused(x, &s, RT_ERR_DOUBLE_FREE, RT_ERR_BAD_POINTER, RET_VOID,
                    "free of a stale pointer inside a live block");
        }
        x->d->free(x->h, big);
    }
    /* a pointer into the middle of a large free block that once held data */
    unsigned char *wide = x->d->malloc(x->h, wide_size);
    if (TL_CHECK(wide != NULL && wide_size > 10000u, "%s: malloc(%zu)", x->d->name, wide_size)) {
        tl_fill(wide, wide_size, 6);
        x->d->free(x->h, wide);
        static const size_t offsets[] = {4096, 10000, 512};
        for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
            s = snap(x);
            x->d->free(x->h, wide + offsets[i]);
            refused(x, &s, RT_ERR_BAD_POINTER, RT_ERR_DOUBLE_FREE, RET_VOID, "free(a pointer inside a free block)");
        }
    }
}

/* The instance still serves ten blocks after the refusals. */
static void still_works(tl_inst_t *x)
{
    void *ps[10];
    for (size_t i = 0; i < 10u; i++) {
        ps[i] = x->d->malloc(x->h, 1000);
        TL_CHECK(ps[i] != NULL, "%s: malloc after the double frees failed", x->d->name);
    }
    for (size_t i = 0; i < 10u; i++) {
        x->d->free(x->h, ps[i]);
    }
}

static void case_double_free(const rt_allocator_t *d)
{
    tl_inst_t x;
    if (!tl_inst_open(&x, d, HEAP, 7)) {
        tl_inst_close(&x, false);
        return;
    }
    unsigned char *a = d->malloc(x.h, 100), *b = d->malloc(x.h, 100), *c = d->malloc(x.h, 100);
    unsigned char *fence = d->malloc(x.h, 100);
    if (!TL_CHECK(a != NULL && b != NULL && c != NULL && fence != NULL, "%s: setup", d->name)) {
        tl_inst_close(&x, false);
        return;
    }
    tl_fill(fence, 100, 4);
    d->free(x.h, b);
    rt_stats_t s = snap(&x);
    d->free(x.h, b);
    refused(&x, &s, RT_ERR_DOUBLE_FREE, RT_ERR_DOUBLE_FREE, RET_VOID, "double free, at once");
    d->free(x.h, a); /* a and b merge (a heap); b's header is swallowed */
    s = snap(&x);
    d->free(x.h, a);
    refused(&x, &s, RT_ERR_DOUBLE_FREE, RT_ERR_DOUBLE_FREE, RET_VOID, "double free of a merged block's head");
    s = snap(&x);
    d->free(x.h, b);
    refused(&x, &s, RT_ERR_DOUBLE_FREE, RT_ERR_BAD_POINTER, RET_VOID, "double free after the predecessor merged");
    d->free(x.h, c); /* [a b c] one free block */
    unsigned char *const again[] = {c, b, a};
    for (size_t i = 0; i < 3u; i++) {
        s = snap(&x);
        d->free(x.h, again[i]);
        refused(&x, &s, RT_ERR_DOUBLE_FREE, RT_ERR_BAD_POINTER, RET_VOID, "double free after both neighbours merged");
    }
    s = snap(&x);
    TL_CHECK(d->realloc(x.h, b, 50) == NULL, "%s: realloc of a freed block returned a block", d->name);
    refused(&x, &s, RT_ERR_DOUBLE_FREE, RT_ERR_BAD_POINTER, RET_NULL, "realloc of a freed block");
    TL_CHECK(tl_verify(fence, 100, 4) == 100u, "%s: the live block changed", d->name);
    d->free(x.h, fence); /* everything merged now */
    stale_pointers(&x, c, b);
    still_works(&x);
    rt_stats_t end = snap(&x);
    TL_CHECK(end.used_blocks == 0u && end.used_bytes == 0u, "%s: used %zu after all freed", d->name, end.used_bytes);
    tl_inst_close(&x, true);
}

/* The word before p overwritten (an overrun of the predecessor), for the boundary-tag heaps. */
static void case_corrupted_header(const rt_allocator_t *d)
{
    if (is_buddy(d) || d->page_size != 0u) {
        tl_skip("%s: corrupted header: metadata is out of band (no header in front of a block)", d->name);
        return;
    }
    if (is_tree(d) && sizeof(size_t) > 4u) {
        /* the wait-free tree's header is one 32-bit length word: on 64-bit the lower half of the
         * word this case overwrites is the previous node's counter, another chunk's metadata */
        tl_skip("%s: corrupted header: the header is 4 bytes, the word before p spans the previous node", d->name);
        return;
    }
    if (TL_DEBUG_WALKS) {
        /* the integrity walk the library runs after every operation (even a refused one) would
         * trap on the heap this case corrupts on purpose */
        tl_skip("%s: corrupted header: RT_DEBUG >= 2 traps on the deliberately corrupted heap", d->name);
        return;
    }
    const size_t W = sizeof(size_t), A = d->alignment;
    for (unsigned variant = 0; variant < 9u; variant++) {
        for (unsigned zero = 0; zero < 2u; zero++) {
            tl_inst_t x;
            if (!tl_inst_open(&x, d, HEAP, 1)) {
                tl_inst_close(&x, false);
                return;
            }
            unsigned char *a = d->malloc(x.h, 200), *p = d->malloc(x.h, 200), *c = d->malloc(x.h, 200);
            if (!TL_CHECK(a != NULL && p != NULL && c != NULL, "%s: setup", d->name)) {
                tl_inst_close(&x, false);
                return;
            }
            if (zero != 0u) {
                memset(a, 0, 200);
                memset(p, 0, 200);
                memset(c, 0, 200);
            } else {
                tl_fill(a, 200, 11);
                tl_fill(p, 200, 12);
                tl_fill(c, 200, 13);
            }
            size_t *hp = (size_t *)(void *)(p - W);
            size_t saved = *hp;
            size_t v;
            const char *what;
            switch (variant) {
            case 0:
                v = 0;
                what = "header zeroed";
                break;
            case 1:
                v = ~(size_t)0;
                what = "header all ones";
                break;
            case 2:
                v = saved + A;
                what = "size one alignment unit larger";
                break;
            case 3:
                v = saved - A;
                what = "size one alignment unit smaller";
                break;
            case 4:
                v = saved | 2u;
                what = "predecessor-free flag set";
                break;
            case 5:
                v = saved ^ ((size_t)1 << (8u * W - 2u));
                what = "a high size bit flipped";
                break;
            case 6:
                v = saved + 2u * A;
                what = "size two alignment units larger";
                break;
            case 7:
                v = (size_t)0x4141414141414141ull;
                what = "overrun by ASCII text";
                break;
            default:
                v = saved | 4u;
                what = "a reserved flag bit set";
                break;
            }
            char label[128];
            snprintf(label, sizeof label, "free with corrupted header (%s, payloads %s)", what,
                     zero != 0u ? "zero" : "patterned");
            rt_stats_t s = snap(&x); /* before the corruption: stats walks the blocks */
            *hp = v;
            d->free(x.h, p);
            bool detected = x.rec.count > 0u;
            if (!detected) {
                TL_CHECK(false, "%s: %s: accepted, heap now corrupted", d->name, label);
                *hp = saved;
                tl_inst_close(&x, false);
                continue;
            }
            /* A boundary-tag heap fences the damage off (containment): p stays the application's
             * block and frees -- its memory stays fenced. The other allocators refuse p while its
             * header is damaged: check would rightly fail then, so the header is restored first. */
            bool contains = (d->family == RT_FAMILY_HEAP || d->family == RT_FAMILY_THREAD_HEAPS) && RT_HARDENING >= 1;
            if (!contains) {
                *hp = saved;
            }
            refused(&x, &s, RT_ERR_BAD_POINTER, RT_ERR_CORRUPTED, RET_VOID, label);
            if (zero == 0u) {
                TL_CHECK(tl_verify(a, 200, 11) == 200u && tl_verify(p, 200, 12) == 200u &&
                             tl_verify(c, 200, 13) == 200u,
                         "%s: %s: live blocks changed", d->name, label);
            }
            s = snap(&x);
            d->free(x.h, p);
            TL_CHECK(x.rec.count == 0u, "%s: free after %s reported %s", d->name,
                     contains ? "the containment" : "restoring the header", tl_kind_name(x.rec.last));
            rt_stats_t t = snap(&x);
            TL_CHECK(t.frees == s.frees + 1u && d->check(x.h), "%s: free after %s", d->name,
                     contains ? "the containment" : "restoring the header");
            d->free(x.h, a);
            d->free(x.h, c);
            tl_inst_close(&x, true);
        }
    }
}

/* A stale pointer across a re-create: the old headers (and for the trees and the buddy their
 * tags) still sit in the buffer, inside a block of the new life that the application has not
 * written yet. Every allocator draws a new key per create (or keeps its metadata out of band),
 * so none of them verifies. */
static void case_stale_life(const rt_allocator_t *d)
{
    tl_inst_t x;
    if (!tl_inst_open(&x, d, HEAP, 1)) {
        tl_inst_close(&x, false);
        return;
    }
    enum { N = 6 };
    static const size_t sizes[N] = {24, 200, 40, 1000, 72, 300};
    unsigned char *old[N];
    for (int i = 0; i < N; i++) {
        old[i] = d->malloc(x.h, sizes[i]);
        if (!TL_CHECK(old[i] != NULL, "%s: life 1: malloc", d->name)) {
            tl_inst_close(&x, false);
            return;
        }
    }
    d->free(x.h, old[2]); /* one pointer freed in the first life, the others still live there */
    d->free(x.h, old[4]);
    /* life 2 over the same buffer: the recorder and the handler are set again */
    x.h = d->create(x.buf.mem, HEAP);
    if (!TL_CHECK(x.h != NULL, "%s: life 2: create", d->name)) {
        tl_inst_close(&x, false);
        return;
    }
    d->set_handler(x.h, tl_record, &x.rec);
    unsigned char *big = d->malloc(x.h, 4096); /* where the old blocks stood (not written) */
    if (!TL_CHECK(big != NULL, "%s: life 2: malloc", d->name)) {
        tl_inst_close(&x, false);
        return;
    }
    size_t ubig = d->usable_size(x.h, big);
    for (int i = 1; i < N; i++) {
        if (old[i] == big) {
            continue; /* a block of the new life starts there: its free would be legitimate */
        }
        char label[96];
        snprintf(label, sizeof label, "free of a pointer of the first life (%s there)",
                 i == 2 || i == 4 ? "freed" : "live");
        rt_stats_t s = snap(&x);
        d->free(x.h, old[i]);
        /* the buddy and the page allocators keep no metadata at the block: an old pointer at a
         * free block of the new life is a double free to them (one inside a live block a bad
         * pointer); the allocators with headers (tagged with the life's key) say bad pointer */
        bool out_of_band = is_buddy(d) || d->page_size != 0u;
        refused(&x, &s, RT_ERR_BAD_POINTER, out_of_band ? RT_ERR_DOUBLE_FREE : RT_ERR_BAD_POINTER, RET_VOID, label);
    }
    for (int i = 0; i < 8; i++) {
        unsigned char *q = d->malloc(x.h, 24);
        TL_CHECK(q == NULL || q + 24 <= big || q >= big + ubig,
                 "%s: a malloc of the second life overlaps its live block", d->name);
    }
    TL_CHECK(d->check(x.h) && x.rec.count == 0u, "%s: check after the stale frees", d->name);
    tl_inst_close(&x, false);
}

/* --- sizes and alignments ---------------------------------------------------------------------- */

static void case_calloc_overflow(const rt_allocator_t *d)
{
    tl_inst_t x;
    if (!tl_inst_open(&x, d, HEAP, 0)) {
        tl_inst_close(&x, false);
        return;
    }
    static const size_t pairs[][2] = {
        {SIZE_MAX / 2u + 1u, 2},
        {2, SIZE_MAX / 2u + 1u},
        {SIZE_MAX, SIZE_MAX},
        {SIZE_MAX, 2},
        {(size_t)1 << (4u * sizeof(size_t)), (size_t)1 << (4u * sizeof(size_t))},
        {SIZE_MAX / 3u + 1u, 3},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "calloc(%#zx, %#zx)", pairs[i][0], pairs[i][1]);
        rt_stats_t s = snap(&x);
        TL_CHECK(d->calloc(x.h, pairs[i][0], pairs[i][1]) == NULL, "%s: %s returned a block", d->name, what);
        refused(&x, &s, RT_ERR_OVERFLOW, RT_ERR_OVERFLOW, RET_NULL, what);
    }
    /* a zero product is not an overflow: as malloc(0), NULL without a report */
    rt_stats_t s = snap(&x);
    TL_CHECK(d->calloc(x.h, 0, SIZE_MAX) == NULL && d->calloc(x.h, SIZE_MAX, 0) == NULL,
             "%s: calloc with a zero factor returned a block", d->name);
    TL_CHECK(x.rec.count == 0u, "%s: calloc(0, SIZE_MAX) reported %s", d->name, tl_kind_name(x.rec.last));
    tl_recorder_reset(&x.rec);
    (void)s;
    tl_inst_close(&x, true);
}

static void case_bad_alignment(const rt_allocator_t *d)
{
    tl_inst_t x;
    if (!tl_inst_open(&x, d, HEAP, 0)) {
        tl_inst_close(&x, false);
        return;
    }
    static const size_t bad[] = {0, 3, 24, SIZE_MAX, 48, 4097, SIZE_MAX / 2u + 2u, 6};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "memalign(%#zx, 64)", bad[i]);
        rt_stats_t s = snap(&x);
        TL_CHECK(d->memalign(x.h, bad[i], 64) == NULL, "%s: %s returned a block", d->name, what);
        refused(&x, &s, RT_ERR_BAD_ALIGNMENT, RT_ERR_BAD_ALIGNMENT, RET_NULL, what);
    }
    /* valid but impossible alignments: NULL, at most a TOO_LARGE report */
    static const size_t huge[] = {SIZE_MAX / 2u + 1u, (size_t)1 << 30, HEAP};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        rt_stats_t s = snap(&x);
        TL_CHECK(d->memalign(x.h, huge[i], 16) == NULL, "%s: memalign(%#zx, 16) returned a block", d->name, huge[i]);
        rt_stats_t t;
        d->stats(x.h, &t);
        TL_CHECK(x.rec.count == 0u || (x.rec.count == 1u && x.rec.last == RT_ERR_TOO_LARGE),
                 "%s: memalign(%#zx, 16): %lu reports, last %s", d->name, huge[i], x.rec.count,
                 tl_kind_name(x.rec.last));
        TL_CHECK(t.failures == s.failures + 1u && t.used_blocks == s.used_blocks && d->check(x.h),
                 "%s: memalign(%#zx, 16) not refused cleanly", d->name, huge[i]);
        tl_recorder_reset(&x.rec);
    }
    tl_inst_close(&x, true);
}

/* Requests that can never fit: NULL and exactly one TOO_LARGE, never a wrapped small block. */
static void case_too_large(const rt_allocator_t *d)
{
    tl_inst_t x;
    if (!tl_inst_open(&x, d, HEAP, 0)) {
        tl_inst_close(&x, false);
        return;
    }
    unsigned char *live = d->malloc(x.h, 300);
    if (!TL_CHECK(live != NULL, "%s: setup", d->name)) {
        tl_inst_close(&x, false);
        return;
    }
    tl_fill(live, 300, 3);
    const size_t W = sizeof(size_t);
    const size_t sizes[] = {
        SIZE_MAX,
        SIZE_MAX - 1u,
        SIZE_MAX - (W - 1u),
        SIZE_MAX - W,
        SIZE_MAX - 15u,
        SIZE_MAX - 16u,
        SIZE_MAX - 31u,
        SIZE_MAX - 32u,
        SIZE_MAX - 64u,
        SIZE_MAX - 4096u,
        SIZE_MAX / 2u + 1u,
        SIZE_MAX / 2u,
        SIZE_MAX / 2u - 1u,
        SIZE_MAX / 4u,
        (size_t)0xFFFFFFFFu,
        (size_t)0xFFFFFFFFu - 3u,
        (size_t)0xFFFFFFF0u,
        (size_t)0x80000000u,
        2u * HEAP,
        HEAP + 1u,
        HEAP,
        d->max_request(x.h) + 1u,
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        char what[64];
        snprintf(what, sizeof what, "malloc(%#zx)", n);
        rt_stats_t s = snap(&x);
        void *p = d->malloc(x.h, n);
        TL_CHECK(p == NULL, "%s: %s returned %p (wrapped?)", d->name, what, p);
        if (p != NULL) {
            continue; /* do not free: the heap may be corrupt */
        }
        refused(&x, &s, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE, RET_NULL, what);
        snprintf(what, sizeof what, "calloc(1, %#zx)", n);
        s = snap(&x);
        TL_CHECK(d->calloc(x.h, 1, n) == NULL, "%s: %s returned a block", d->name, what);
        refused(&x, &s, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE, RET_NULL, what);
        snprintf(what, sizeof what, "realloc(p, %#zx)", n);
        s = snap(&x);
        TL_CHECK(d->realloc(x.h, live, n) == NULL, "%s: %s returned a block", d->name, what);
        refused(&x, &s, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE, RET_NULL, what);
        snprintf(what, sizeof what, "memalign(64, %#zx)", n);
        s = snap(&x);
        TL_CHECK(d->memalign(x.h, 64, n) == NULL, "%s: %s returned a block", d->name, what);
        refused(&x, &s, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE, RET_NULL, what);
    }
    TL_CHECK(tl_verify(live, 300, 3) == 300u, "%s: the live block changed", d->name);
    d->free(x.h, live);
    tl_inst_close(&x, true);
}

/* Exactly stats.largest_free succeeds, one byte more fails: fresh and after churn. */
static void case_largest_free(const rt_allocator_t *d)
{
    for (uint64_t seed = 0; seed <= 30u; seed++) {
        tl_inst_t x;
        if (!tl_inst_open(&x, d, HEAP, (size_t)(seed % 16u))) {
            tl_inst_close(&x, false);
            return;
        }
        static void *live[256];
        size_t nlive = 0;
        tl_rng_t r = tl_rng_seed(seed + 1000u);
        unsigned ops = seed == 0u ? 0u : (unsigned)tl_range(&r, 10, 400);
        for (unsigned op = 0; op < ops; op++) {
            if (nlive > 0u && (tl_chance(&r, 40) || nlive == 256u)) {
                size_t i = tl_range(&r, 0, nlive - 1u);
                d->free(x.h, live[i]);
                live[i] = live[--nlive];
            } else {
                void *p = d->malloc(x.h, tl_chance(&r, 80) ? tl_range(&r, 1, 600) : tl_range(&r, 600, 9000));
                if (p != NULL) {
                    live[nlive++] = p;
                }
            }
        }
        rt_stats_t s = snap(&x);
        size_t lf = s.largest_free;
        if (lf > 0u) {
            void *p = d->malloc(x.h, lf + 1u);
            TL_CHECK(p == NULL, "%s: seed %" PRIu64 ": malloc(largest_free + 1 = %zu) succeeded", d->name, seed,
                     lf + 1u);
            TL_CHECK(x.rec.count == 0u || (x.rec.count == 1u && x.rec.last == RT_ERR_TOO_LARGE),
                     "%s: malloc(largest_free + 1) reported %s", d->name, tl_kind_name(x.rec.last));
            tl_recorder_reset(&x.rec);
            if (p != NULL) {
                d->free(x.h, p);
            }
            p = d->malloc(x.h, lf);
            TL_CHECK(p != NULL, "%s: seed %" PRIu64 " (%u ops of churn): malloc(largest_free = %zu) failed", d->name,
                     seed, ops, lf);
            if (p != NULL) {
                memset(p, 0x5A, lf);
                TL_CHECK(d->check(x.h), "%s: check after malloc(largest_free)", d->name);
                d->free(x.h, p);
            }
        }
        while (nlive > 0u) {
            d->free(x.h, live[--nlive]);
        }
        s = snap(&x);
        TL_CHECK(seed != 0u || s.free_bytes == s.capacity, "%s: fresh free_bytes", d->name);
        tl_inst_close(&x, true);
    }
}

/* tl_buffer_new, or for a page allocator a buffer at exactly `mis` bytes past a page boundary
 * (its padding depends on the address modulo the page: every residue must be tried, whatever
 * addresses malloc hands out). */
static bool buffer_at(tl_buffer_t *b, size_t size, size_t mis, size_t page)
{
    if (page == 0u) {
        return tl_buffer_new(b, size, mis);
    }
    b->raw = malloc(size + page + mis);
    if (b->raw == NULL) {
        b->mem = NULL;
        b->size = 0;
        return false;
    }
    uintptr_t at = ((uintptr_t)b->raw + page - 1u) & ~(uintptr_t)(page - 1u);
    b->mem = b->raw + (size_t)(at - (uintptr_t)b->raw) + mis;
    b->size = size;
    return true;
}

/* Exactly min_buffer works at every address; one byte less fails at some address. */
/* --- lock hooks ------------------------------------------------------------------------------- */

static unsigned long hook_locks, hook_unlocks;
static uintptr_t count_lock(void *context)
{
    (void)context;
    hook_locks++;
    return 0;
}
static void count_unlock(void *context, uintptr_t token)
{
    (void)context;
    (void)token;
    hook_unlocks++;
}

/* set_lock with a lock and no unlock (or the reverse) -> BAD_HOOKS, and the hooks stay as they
 * were: none, then the full pair. */
static void case_half_hooks(const rt_allocator_t *d)
{
    if (d->set_lock == NULL) {
        return; /* lock-free allocators take no hooks */
    }
    tl_inst_t x;
    if (!tl_inst_open(&x, d, HEAP, 0)) {
        tl_inst_close(&x, false);
        return;
    }
    rt_stats_t s = snap(&x);
    d->set_lock(x.h, count_lock, NULL, NULL);
    refused(&x, &s, RT_ERR_BAD_HOOKS, RT_ERR_BAD_HOOKS, RET_VOID, "set_lock(lock, NULL)");
    s = snap(&x);
    d->set_lock(x.h, NULL, count_unlock, NULL);
    refused(&x, &s, RT_ERR_BAD_HOOKS, RT_ERR_BAD_HOOKS, RET_VOID, "set_lock(NULL, unlock)");
    hook_locks = hook_unlocks = 0;
    d->free(x.h, d->malloc(x.h, 64));
    TL_CHECK(hook_locks == 0u && hook_unlocks == 0u, "%s: a refused half pair was installed (%lu locks, %lu unlocks)",
             d->name, hook_locks, hook_unlocks);
    d->set_lock(x.h, count_lock, count_unlock, NULL);
    d->free(x.h, d->malloc(x.h, 64));
    TL_CHECK(hook_locks >= 2u && hook_locks == hook_unlocks, "%s: the full pair: %lu locks, %lu unlocks", d->name,
             hook_locks, hook_unlocks);
    s = snap(&x);
    d->set_lock(x.h, count_lock, NULL, NULL);
    refused(&x, &s, RT_ERR_BAD_HOOKS, RT_ERR_BAD_HOOKS, RET_VOID, "set_lock(lock, NULL) over a pair");
    unsigned long locks = hook_locks;
    d->free(x.h, d->malloc(x.h, 64));
    TL_CHECK(hook_locks > locks && hook_locks == hook_unlocks, "%s: the pair was not kept after a refused half",
             d->name);
    d->set_lock(x.h, NULL, NULL, NULL);
    tl_inst_close(&x, true);
}

static void case_min_buffer(const rt_allocator_t *d)
{
    if (!TL_CHECK(d->min_buffer != NULL, "%s: no min_buffer", d->name)) {
        return;
    }
    size_t min = d->min_buffer();
    unsigned refusals = 0;
    size_t tries = 64u + d->page_size; /* a page allocator's padding depends on the address mod page */
    for (size_t mis = 0; mis < tries; mis++) {
        tl_buffer_t b;
        if (!TL_CHECK(buffer_at(&b, min, mis, d->page_size), "out of memory")) {
            return;
        }
        void *h = d->create(b.mem, min);
        if (TL_CHECK(h != NULL, "%s: create over exactly min_buffer = %zu bytes at +%zu failed", d->name, min, mis)) {
            tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
            d->set_handler(h, tl_record, &rec);
            unsigned char *p = d->malloc(h, 1);
            if (TL_CHECK(p != NULL, "%s: malloc(1) over min_buffer at +%zu failed", d->name, mis)) {
                TL_CHECK(tl_inside(p, 1, &b), "%s: block outside the buffer", d->name);
                *p = 1;
                TL_CHECK(d->check(h), "%s: check over min_buffer at +%zu", d->name, mis);
                d->free(h, p);
            }
            TL_CHECK(d->check(h) && rec.count == 0u, "%s: min_buffer at +%zu: check / reports", d->name, mis);
        }
        tl_buffer_free(&b);
        if (!TL_CHECK(buffer_at(&b, min - 1u, mis, d->page_size), "out of memory")) {
            return;
        }
        h = d->create(b.mem, min - 1u);
        if (h == NULL) {
            refusals++;
        } else {
            unsigned char *p = d->malloc(h, 1);
            if (p != NULL) {
                TL_CHECK(tl_inside(p, 1, &b), "%s: block outside the buffer of min_buffer - 1", d->name);
                *p = 1;
                d->free(h, p);
            }
            TL_CHECK(d->check(h), "%s: check over min_buffer - 1 at +%zu", d->name, mis);
        }
        tl_buffer_free(&b);
    }
    TL_CHECK(refusals > 0u,
             "%s: create over min_buffer - 1 = %zu bytes succeeded at every address (min_buffer not minimal)", d->name,
             min - 1u);
    unsigned char dummy[16];
    TL_CHECK(d->create(NULL, 1u << 20) == NULL, "%s: create(NULL) returned a handle", d->name);
    TL_CHECK(d->create(dummy, 0) == NULL && d->create(dummy, sizeof dummy) == NULL,
             "%s: create over 0 / 16 bytes returned a handle", d->name);
    printf("%-9s min_buffer %zu: accepted at all %zu misalignments; min_buffer - 1 refused at %u of %zu\n", d->name,
           min, tries, refusals, tries);
}

int main(int argc, char **argv)
{
    size_t n = 0;
    const rt_allocator_t *const *all = rt_registry(&n);
    (void)tl_check_registry(n);
    for (size_t i = 0; i < n; i++) {
        const rt_allocator_t *d = all[i];
        if (argc > 1 && strcmp(argv[1], d->name) != 0) {
            continue;
        }
        if (d->set_handler == NULL || d->stats == NULL || d->check == NULL || d->realloc == NULL || d->calloc == NULL ||
            d->memalign == NULL || d->usable_size == NULL || d->max_request == NULL) {
            tl_skip("%s: lacks handler, stats, check or an allocation function this test needs", d->name);
            continue;
        }
        unsigned long failed = tl_state.failed;
        case_free_null(d);
        case_foreign(d);
        case_interior(d);
        case_double_free(d);
        case_corrupted_header(d);
        case_stale_life(d);
        case_calloc_overflow(d);
        case_bad_alignment(d);
        case_too_large(d);
        case_largest_free(d);
        case_min_buffer(d);
        case_half_hooks(d);
        printf("%-9s %s\n", d->name, tl_state.failed > failed ? "FAILED" : "ok");
    }
    return tl_summary("badinput");
}
