/* SPDX-License-Identifier: MIT */
/*
 * heap_hardening.c -- the boundary-tag heap against an application that writes into its
 * metadata (doc/design.md, "Hardening model"), for all six indexes, white-box: the test knows
 * the layout (rtalloc/heap.h: the word before a payload is its header; a free block's next and
 * pprev follow its header, its size ends it) and attacks it the way a hostile or buggy program
 * would.
 *
 *   write-what-where  the FREE bit set in a used successor's header, its payload laid out as
 *                     links aimed at a word outside the heap: free and realloc of the block
 *                     before it are refused and reported, the target is never written
 *   forged tag        the same with the header's tag recomputed by an attacker who read a
 *                     header and knows the scheme: the unlink check still refuses links that
 *                     point outside the heap, and nothing outside the buffer is written
 *   off-by-one NUL    a zero byte over a free successor's header: free of the block before it,
 *                     and every malloc that would reach the free block, are refused; no block
 *                     handed out overlaps a live one
 *   links             every byte of a free block's next and pprev (non-canonical pointers,
 *                     pointers into live blocks): reported before any write, no fault
 *   footer            a free predecessor's footer changed: the free after it is refused
 *   walk              seglist / firstfit / bestfit walking a list whose middle link is bad:
 *                     the walk stops at it (no fault), malloc returns NULL and reports
 *   guards            16 bytes before the first block and past the sentinel are no metadata:
 *                     writing them changes no result, and rt_heap_check reports it
 * After every attack that is reported, the heap has fenced the damage off (containment,
 * src/heap/heap_common.h): the test shows rt_heap_check passes at once, every live block frees
 * (a live block whose header was damaged is fenced but its free is accepted), the damaged bytes
 * are counted in stats.quarantined_bytes and nothing handed out overlaps them.
 *
 * Skipped with RT_HARDENING 0 (the papers' checks only: these attacks are known to succeed).
 */
#include "testlib.h"

#include "rtalloc/heap.h"

#define HEAP (16u << 10)
#define W sizeof(size_t)
/* Stops the current case (a void function) at the first failure. */
#define REQUIRE(cond)                   \
    do {                                \
        if (!TL_CHECK(cond, "setup")) { \
            return;                     \
        }                               \
    } while (0)

static const rt_index_t indexes[] = {RT_INDEX_TLSF,     RT_INDEX_TLSF32,  RT_INDEX_SEGLIST,
                                     RT_INDEX_FIRSTFIT, RT_INDEX_BESTFIT, RT_INDEX_HALFFIT};

typedef struct fixture {
    unsigned char *mem; /* the heap buffer, with guard bytes of the test around it */
    size_t size;
    rt_heap_t *h;
    tl_recorder_t rec;
    const char *name;
} fixture_t;

#define OUTER 256u /* the test's own guard bytes around the heap buffer */
static unsigned char arena[OUTER + HEAP + OUTER] __attribute__((aligned(64)));

static bool open_heap(fixture_t *f, rt_index_t index)
{
    f->h = NULL;
    memset(arena, 0x5A, sizeof arena);
    f->mem = arena + OUTER;
    f->size = HEAP;
    memset(&f->rec, 0, sizeof f->rec);
    f->h = rt_heap_create_with(f->mem, f->size, index);
    f->name = rt_index_name(index);
    if (!TL_CHECK(f->h != NULL, "%s: create", f->name)) {
        return false;
    }
    rt_heap_set_handler(f->h, tl_record, &f->rec);
    return true;
}

/* The test's own guard bytes around the buffer are untouched. */
static bool outer_ok(void)
{
    for (size_t i = 0; i < OUTER; i++) {
        if (arena[i] != 0x5A || arena[OUTER + HEAP + i] != 0x5A) {
            return false;
        }
    }
    return true;
}

static size_t *header_of(void *p) { return (size_t *)(void *)((unsigned char *)p - W); }

/* An attacker's recomputation of a header word with new data, from the header it can read at the
 * same address: the scheme of src/block/block.h (the affine tag of the default 64-bit layout, or
 * tag = fold(data) ^ key ^ address / A in the bits above RT_HEAP_MAX_BLOCK_LOG2). */
static TL_UNUSED size_t shr(size_t x, unsigned n) { return n < 8u * W ? x >> n : 0u; }

static size_t forge(size_t known_head, size_t data)
{
#if RT_HARDENING >= 1 && RT_HEAP_MAX_BLOCK_LOG2 == 32 && SIZE_MAX > 0xFFFFFFFFu
    /* tag = data * M + (key + address / 8) mod 2^32: from a header read at the same address,
     * the per-address key is known_tag - known_data * M */
    const uint32_t m = 0x9E3779B1u;
    uint32_t key = (uint32_t)(known_head >> 32) - (uint32_t)known_head * m;
    return data | ((size_t)(uint32_t)((uint32_t)data * m + key) << 32);
#elif RT_HARDENING >= 1
    const unsigned d = RT_HEAP_MAX_BLOCK_LOG2, t = (unsigned)(8u * W) - d;
    size_t mask = ((size_t)1 << d) - 1u;
    size_t known = known_head & mask;
    size_t fk = known, fd = data;
    if (d > 2u * t) {
        fk ^= shr(fk, 2u * t);
        fd ^= shr(fd, 2u * t);
    }
    if (d > t) {
        fk ^= shr(fk, t);
        fd ^= shr(fd, t);
    }
    size_t key = (known_head >> d) ^ fk;
    return data | ((fd ^ key) << d);
#else
    (void)known_head;
    return data;
#endif
}

static size_t target_word = 0x1234; /* outside every heap: an attacker's target */

/* The heap after a reported attack: check passes (the damage is fenced), every block in `live`
 * frees without a report except `refused` (a block the attack made unfreeable -- fenced as dead,
 * no longer counted live: reported once), and then check passes, no block is used and `fenced`
 * bytes are quarantined (SIZE_MAX: any). */
static void after_containment(fixture_t *f, unsigned char *const *live, size_t n, const unsigned char *refused,
                              size_t fenced)
{
    tl_recorder_reset(&f->rec);
    TL_CHECK(rt_heap_check(f->h) && f->rec.count == 0u, "%s: after containment: check fails (%lu reports)", f->name,
             f->rec.count);
    for (size_t i = 0; i < n; i++) {
        tl_recorder_reset(&f->rec);
        rt_stats_t before, after;
        rt_heap_stats(f->h, &before);
        rt_heap_free(f->h, live[i]);
        rt_heap_stats(f->h, &after);
        if (live[i] == refused) {
            TL_CHECK(f->rec.count == 1u && after.frees == before.frees, "%s: free of the forged block: %lu reports",
                     f->name, f->rec.count);
        } else {
            TL_CHECK(f->rec.count == 0u && after.frees == before.frees + 1u,
                     "%s: after containment: live block %zu not freeable (%lu reports, last %s)", f->name, i,
                     f->rec.count, tl_kind_name(f->rec.last));
        }
    }
    tl_recorder_reset(&f->rec);
    rt_stats_t s;
    rt_heap_stats(f->h, &s);
    TL_CHECK(rt_heap_check(f->h) && f->rec.count == 0u && s.used_blocks == 0u,
             "%s: after containment and the frees: check %lu reports, %zu used blocks", f->name, f->rec.count,
             s.used_blocks);
    TL_CHECK(fenced == SIZE_MAX ? s.quarantined_bytes > 0u : s.quarantined_bytes == fenced,
             "%s: %zu bytes quarantined, expected %zu", f->name, s.quarantined_bytes, fenced);
    TL_CHECK(s.free_bytes == s.capacity - s.quarantined_bytes - s.used_bytes, "%s: free bytes", f->name);
}

/* Class 1: [a used][b used] -- the FREE bit set in b's header, b's payload laid out as free
 * links aimed at target_word. free(a) is refused before any write and the damage fenced: b's
 * header fails its tag (its extent is found from c's header, which says b was used: b is fenced
 * whole, live) -- or, with the tag forged, b passes for a free block whose links fail (its head
 * fenced, its rest free again: a forger loses its block). realloc and usable_size of a then work,
 * the target is never written. */
static void write_what_where(rt_index_t index, bool forged_tag)
{
    fixture_t f;
    if (!open_heap(&f, index)) {
        return;
    }
    unsigned char *a = rt_heap_malloc(f.h, 40), *b = rt_heap_malloc(f.h, 200), *c = rt_heap_malloc(f.h, 40);
    REQUIRE(a != NULL && b != NULL && c != NULL);
    size_t *bh = header_of(b);
    size_t saved = *bh;
    size_t bsize = (saved & (((size_t)1 << RT_HEAP_MAX_BLOCK_LOG2) - 1u)) & ~(size_t)7u;
    /* the links the unlink would write through: *pprev = next; next->pprev = pprev */
    size_t *links = (size_t *)(void *)b;
    links[0] = (size_t)(uintptr_t)&target_word - 2u * W; /* next: next->pprev is target_word */
    links[1] = (size_t)(uintptr_t)&target_word;          /* pprev */
    ((size_t *)(void *)(b - W + bsize))[-1] = bsize;     /* a footer that agrees */
    *bh = forged_tag ? forge(saved, bsize | 1u) : (saved | 1u);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, a);
    TL_CHECK(f.rec.count == 1u && f.rec.last == RT_ERR_CORRUPTED, "%s%s: free: %lu reports, last %s", f.name,
             forged_tag ? " (forged tag)" : "", f.rec.count, tl_kind_name(f.rec.last));
    TL_CHECK(target_word == 0x1234, "%s%s: free wrote outside the heap (target %zx)", f.name,
             forged_tag ? " (forged tag)" : "", target_word);
    tl_recorder_reset(&f.rec);
    unsigned char *a2 = rt_heap_realloc(f.h, a, 100);
    /* b, live, fenced whole; forged, b passed for free memory: only its damaged head is fenced,
     * and its rest may serve a -- the forger's block is no longer the forger's */
    size_t fenced = forged_tag ? (size_t)RT_HEAP_MIN_BLOCK : bsize;
    TL_CHECK(a2 != NULL && f.rec.count == 0u && (a2 + 100 <= b - W || a2 >= b - W + fenced),
             "%s: realloc of a after containment (%lu reports)", f.name, f.rec.count);
    a = a2 != NULL ? a2 : a;
    TL_CHECK(rt_heap_usable_size(f.h, a) >= 100u && f.rec.count == 0u, "%s: usable_size after containment", f.name);
    TL_CHECK(target_word == 0x1234 && outer_ok(), "%s: bytes outside the heap changed", f.name);
    unsigned char *live[3] = {a, c, b}; /* forged: b is no longer counted live */
    after_containment(&f, live, forged_tag ? 2u : 3u, NULL, fenced);
}
/* Class 2: [a used][b free][c used]: one zero byte just past a, over b's header. */
static void off_by_one_nul(rt_index_t index)
{
    fixture_t f;
    if (!open_heap(&f, index)) {
        return;
    }
    unsigned char *a = rt_heap_malloc(f.h, 40), *b = rt_heap_malloc(f.h, 72), *c = rt_heap_malloc(f.h, 40);
    REQUIRE(a != NULL && b != NULL && c != NULL);
    rt_heap_free(f.h, b);
    const size_t bsize = RT_HEAP_MIN_BLOCK; /* its damaged head is fenced, its rest free again */
    size_t us = rt_heap_usable_size(f.h, a);
    unsigned char *x = a + us; /* first byte of b's header */
    *x = 0;
    tl_fill(c, 40, 3);
    tl_recorder_reset(&f.rec);
    rt_heap_free(f.h, a);
    TL_CHECK(f.rec.count == 1u && f.rec.last == RT_ERR_CORRUPTED, "%s: free before a NUL-ed free header: %lu reports",
             f.name, f.rec.count);
    /* mallocs that would take b: served, never overlapping c, a or the damaged head of b */
    unsigned char *got[8];
    size_t ngot = 0;
    for (size_t n = 8; n <= 64; n += 8) {
        unsigned char *p = rt_heap_malloc(f.h, n);
        if (p != NULL) {
            TL_CHECK(p + n <= a || p >= a + us, "%s: malloc(%zu) overlaps live a", f.name, n);
            TL_CHECK(p + n <= c || p >= c + 40, "%s: malloc(%zu) overlaps live c", f.name, n);
            TL_CHECK(p + n <= b - W || p >= b - W + bsize, "%s: malloc(%zu) handed out the damaged block", f.name, n);
            got[ngot++] = p;
        }
    }
    TL_CHECK(ngot == 8u, "%s: after containment only %zu of 8 mallocs served", f.name, ngot);
    TL_CHECK(tl_verify(c, 40, 3) == 40u, "%s: c's contents changed", f.name);
    TL_CHECK(outer_ok(), "%s: bytes around the buffer changed", f.name);
    unsigned char *live[10] = {a, c};
    for (size_t i = 0; i < ngot; i++) {
        live[2 + i] = got[i];
    }
    after_containment(&f, live, 2 + ngot, NULL, bsize);
}

/* Every byte of a free block's links, each value: free of its used predecessor must be refused
 * with a report before any write, or succeed with the links intact (a byte value equal to the
 * original). No fault, nothing written outside the buffer. */
static void links(rt_index_t index)
{
    static const unsigned char values[] = {0x00, 0xFF, 0x01, 0x80, 0x7F, 0x10};
    unsigned long cases = 0, reported = 0;
    const char *name = rt_index_name(index);
    for (size_t byte = 0; byte < 2u * W; byte++) {
        for (size_t v = 0; v < sizeof values + 8u; v++) {
            fixture_t f;
            if (!open_heap(&f, index)) {
                return;
            }
            unsigned char *a = rt_heap_malloc(f.h, 40), *b = rt_heap_malloc(f.h, 72), *c = rt_heap_malloc(f.h, 40);
            unsigned char *d = rt_heap_malloc(f.h, 72), *e = rt_heap_malloc(f.h, 40);
            REQUIRE(a != NULL && b != NULL && c != NULL && d != NULL && e != NULL);
            rt_heap_free(f.h, d);
            rt_heap_free(f.h, b); /* b's links: b -> d (same list) or its own list */
            unsigned char *x = b + byte;
            unsigned char old = *x;
            unsigned flip = 1u << (unsigned)(v < sizeof values ? 0u : v - sizeof values);
            unsigned char nv = v < sizeof values ? values[v] : (unsigned char)(((unsigned)old ^ flip) & 0xFFu);
            if (nv == old) {
                continue;
            }
            *x = nv;
            cases++;
            tl_recorder_reset(&f.rec);
            rt_heap_free(f.h, a);
            if (f.rec.count == 1u && f.rec.last == RT_ERR_CORRUPTED) {
                reported++;
            } else {
                TL_CHECK(false, "%s: link byte %zu = %02x: free of the predecessor not refused (%lu reports)", f.name,
                         byte, nv, f.rec.count);
            }
            /* malloc that reaches b through its list: served, never from b's damaged head */
            unsigned char *p = rt_heap_malloc(f.h, 60);
            /* b's damaged head is fenced (one smallest block), its rest may serve */
            TL_CHECK(p != NULL && (p + 60 <= b - W || p >= b - W + RT_HEAP_MIN_BLOCK),
                     "%s: link byte %zu: the damaged head of the block handed out", f.name, byte);
            TL_CHECK(outer_ok(), "%s: link byte %zu = %02x: bytes around the buffer changed", f.name, byte, nv);
            unsigned char *live[] = {a, c, e, p};
            after_containment(&f, live, p != NULL ? 4u : 3u, NULL, SIZE_MAX);
        }
    }
    TL_CHECK(cases > 0u && reported == cases, "%s: links: %lu of %lu reported", name, reported, cases);
}

/* A free predecessor's footer changed: free of the block after it is refused, and the
 * predecessor fenced (its footer is damaged); the block after it then frees. */
static void footer(rt_index_t index)
{
    for (size_t byte = 0; byte < W; byte++) {
        fixture_t f;
        if (!open_heap(&f, index)) {
            return;
        }
        unsigned char *a = rt_heap_malloc(f.h, 72), *b = rt_heap_malloc(f.h, 40), *c = rt_heap_malloc(f.h, 40);
        REQUIRE(a != NULL && b != NULL && c != NULL);
        rt_heap_free(f.h, a);
        unsigned char *x = b - 2u * W + byte; /* a's footer: the word before b's header */
        unsigned char old = *x;
        *x = (unsigned char)(old ^ 0x40u);
        tl_recorder_reset(&f.rec);
        rt_heap_free(f.h, b);
        TL_CHECK(f.rec.count == 1u && f.rec.last == RT_ERR_CORRUPTED, "%s: footer byte %zu: %lu reports, last %s",
                 f.name, byte, f.rec.count, tl_kind_name(f.rec.last));
        unsigned char *live[] = {b, c};
        after_containment(&f, live, 2, NULL, SIZE_MAX);
    }
}

/* Walking indexes: a list of several free blocks of one class, the middle one's next aimed
 * outside the heap (non-canonical on 64-bit). malloc walks, meets it, stops and reports. */
static void walk(rt_index_t index)
{
    fixture_t f;
    if (!open_heap(&f, index)) {
        return;
    }
    unsigned char *p[13];
    for (int i = 0; i < 13; i++) {
        p[i] = rt_heap_malloc(f.h, 40);
        REQUIRE(p[i] != NULL);
    }
    for (int i = 1; i < 12; i += 2) {
        rt_heap_free(f.h, p[i]); /* 6 free blocks of 48 bytes, fenced by used ones */
    }
    size_t *link = (size_t *)(void *)p[5];
    size_t saved = *link;
    *link = saved ^ ((size_t)0x80u << (8u * (W - 1u)));
    tl_recorder_reset(&f.rec);
    /* a request of the same seglist class that none of the small blocks fits: the walk passes
     * all of them */
    unsigned char *q = rt_heap_malloc(f.h, 50);
    bool walked = f.rec.count == 1u && f.rec.last == RT_ERR_CORRUPTED && q == NULL;
    /* TLSF and half-fit never walk: they take a list head, so the bad link is met at unlink */
    TL_CHECK(walked || (index != RT_INDEX_SEGLIST && index != RT_INDEX_FIRSTFIT && index != RT_INDEX_BESTFIT),
             "%s: walk over a bad link: %lu reports, q %p", f.name, f.rec.count, (void *)q);
    /* The walking indexes cut the damaged part of the list off (list_quarantine): the same walk
     * again passes what is left and meets no damage (before, every later walk reported it and
     * failed). It serves, or fails silently; a block served may be followed by RT_DEBUG=2's
     * integrity check reporting the free blocks cut off, which is not the walk. */
    tl_recorder_reset(&f.rec);
    unsigned char *q2 = rt_heap_malloc(f.h, 50);
    TL_CHECK(!walked || q2 != NULL || f.rec.count == 0u, "%s: the walk met the cut-off damage again (%lu reports)",
             f.name, f.rec.count);
    if (q2 != NULL) {
        rt_heap_free(f.h, q2);
    }
    for (int i = 0; i < 6; i++) {
        unsigned char *r = rt_heap_malloc(f.h, 40); /* reaches the damaged block sooner or later */
        TL_CHECK(r == NULL || (r + 40 <= p[5] - W || r >= p[5] + 40), "%s: damaged block handed out", f.name);
    }
    TL_CHECK(outer_ok(), "%s: bytes around the buffer changed", f.name);
    (void)saved;
}

/* 16 bytes before the first block and after the sentinel are guards: no result changes, check
 * reports them. */
static void guards(rt_index_t index)
{
    fixture_t f;
    if (!open_heap(&f, index)) {
        return;
    }
    unsigned char *a = rt_heap_malloc(f.h, 40);
    REQUIRE(a != NULL);
    for (size_t k = W + 1u; k <= 16u; k++) { /* past the header: the guard before the first block */
        unsigned char *x = a - k, old = *x;
        *x = (unsigned char)~old;
        tl_recorder_reset(&f.rec);
        TL_CHECK(!rt_heap_check(f.h) && f.rec.count == 1u && f.rec.last == RT_ERR_CORRUPTED,
                 "%s: guard byte %zu before the first block not reported by check", f.name, k);
        *x = old;
        tl_recorder_reset(&f.rec);
        TL_CHECK(rt_heap_check(f.h) && f.rec.count == 0u, "%s: restored guard", f.name);
    }
    rt_heap_free(f.h, a);
}

int main(void)
{
#if RT_HARDENING < 1
    tl_skip("heap_hardening: RT_HARDENING 0");
    return tl_summary("heap_hardening");
#else
    for (size_t i = 0; i < sizeof indexes / sizeof indexes[0]; i++) {
        write_what_where(indexes[i], false);
        write_what_where(indexes[i], true);
        off_by_one_nul(indexes[i]);
        links(indexes[i]);
        footer(indexes[i]);
        walk(indexes[i]);
        guards(indexes[i]);
    }
    return tl_summary("heap_hardening");
#endif
}
