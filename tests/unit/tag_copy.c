/* SPDX-License-Identifier: MIT */
/*
 * tag_copy.c -- the boundary-tag heap's metadata is bound to its place and its life
 * (src/block/block.h, top comment), tested exhaustively, white-box, for every heap index:
 *
 *   copy   a heap of many blocks (used, free, merged, and for tlsfq cached on its quick lists);
 *          every metadata word of the pools -- each header (the sentinels' too), each free
 *          block's footer, next and pprev, each cached block's link and seal -- is overwritten,
 *          one at a time on a fresh copy of the heap, by the value of every OTHER metadata word
 *          of the heap and of every word of its control structure (the list heads, the keys, the
 *          counters) whose value differs: rt_heap_check must fail every time. And for every
 *          header copied to another header's place, the tag itself must refuse it (blk_head_ok):
 *          always on the default 64-bit layout; on the folded layouts (32-bit) whenever the two
 *          places are not a multiple of 2^T * A apart (the 2 KiB window of block.h: pairs
 *          farther apart are counted, and left to the structural checks).
 *   life   the heap is created again over the same buffer and filled differently: every header
 *          of its earlier life verifies nowhere in the new one (at its own address included), and
 *          a free of a pointer of the earlier life that is no block of the new one is refused
 *          (RT_ERR_BAD_POINTER). (tests/contract/badinput.c does the same for every allocator of the
 *          registry through its descriptor.) Run twice: with the built-in entropy source, and
 *          with one that repeats itself (both lives draw the same key: create must still move
 *          the new key off the one the buffer held).
 *
 * Compiled against the core's private headers (src/); `tag_copy [seed]` replays.
 */
#include "testlib.h"

#include "rtalloc/heap.h"
#include "heap/quick.h"

#define TC_HEAP ((size_t)16u << 10)
#define TC_MAXWORDS 4096u
#define TC_BLOCKS 96u

static const rt_index_t indexes[] = {RT_INDEX_TLSF,    RT_INDEX_TLSF32,  RT_INDEX_SEGLIST, RT_INDEX_FIRSTFIT,
                                     RT_INDEX_BESTFIT, RT_INDEX_HALFFIT, RT_INDEX_TLSFQ};

typedef enum { W_HEADER, W_FOOTER, W_NEXT, W_PPREV, W_LINK, W_SEAL, W_CONTROL, W_KINDS } word_kind_t;
static const char *const kind_name[W_KINDS] = {"header",     "footer",     "next",   "pprev",
                                               "quick link", "quick seal", "control"};

typedef struct word {
    size_t *at;
    word_kind_t kind;
} word_t;

static word_t words[TC_MAXWORDS];
static size_t nwords;

static void add_word(size_t *at, word_kind_t kind)
{
    if (nwords < TC_MAXWORDS) {
        words[nwords].at = at;
        words[nwords].kind = kind;
        nwords++;
    }
}

/* The metadata words of every pool of h (white-box: the physical walk). */
static bool collect(rt_heap_t *h)
{
    nwords = 0;
    for (unsigned i = 0; i < h->npools; i++) {
        const rt_pool_t *pool = &h->pools[i];
        rt_blk *b = pool->first;
        while (b < pool->end) {
            size_t d = blk_decode(h->key, b, b->head);
            size_t size = blk_head_size(d);
            if (d > BLK_DATA_MASK || size < BLK_MIN) {
                return false;
            }
            add_word(&b->head, W_HEADER);
            if (blk_data_free(d)) {
                add_word((size_t *)(void *)&b->next, W_NEXT);
                add_word((size_t *)(void *)&b->pprev, W_PPREV);
                add_word((size_t *)(void *)blk_offset(b, size) - 1, W_FOOTER);
            } else if ((d & BLK_FENCE) == BLK_MARK) {
                add_word((size_t *)(void *)heap_quick_link(b), W_LINK);
                add_word((size_t *)(void *)heap_quick_seal_word(b), W_SEAL);
            }
            b = blk_offset(b, size);
        }
        add_word(&pool->end->head, W_HEADER);
    }
    return nwords < TC_MAXWORDS;
}

/* A heap of TC_BLOCKS blocks of mixed sizes, about a third freed (some merging), the rest live. */
static rt_heap_t *build(unsigned char *mem, rt_index_t index, tl_rng_t *r)
{
    rt_heap_t *h = index == RT_INDEX_TLSFQ ? rt_tlsfq_create(mem, TC_HEAP) : rt_heap_create_with(mem, TC_HEAP, index);
    if (h == NULL) {
        return NULL;
    }
    if (index == RT_INDEX_TLSFQ) {
        rt_heap_set_quick_limit(h, 64);
    }
    void *p[TC_BLOCKS];
    size_t n = 0;
    for (; n < TC_BLOCKS; n++) {
        size_t s = tl_chance(r, 50) ? tl_range(r, 1, 64) : tl_range(r, 65, TC_HEAP / 64u);
        p[n] = rt_heap_malloc(h, s);
        if (p[n] == NULL) {
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (tl_chance(r, 40)) {
            rt_heap_free(h, p[i]);
        }
    }
    return h;
}

static unsigned char *mem, *saved, *mem2;

static void test_copy(rt_index_t index, uint64_t seed)
{
    const char *name = rt_index_name(index);
    tl_rng_t r = tl_rng_seed(seed);
    rt_heap_t *h = build(mem, index, &r);
    if (!TL_CHECK(h != NULL && collect(h) && rt_heap_check(h), "%s: build", name)) {
        return;
    }
    tl_recorder_t rec;
    memset(&rec, 0, sizeof rec);             /* (print off: tl_recorder_reset leaves it) */
    rt_heap_set_handler(h, tl_record, &rec); /* each failing check reports: recorded, not fatal */
    /* sources: the pools' metadata and every word of the control structure */
    size_t nmeta = nwords;
    for (size_t *w = (size_t *)(void *)h; (unsigned char *)(w + 1) <= (unsigned char *)h + rt_heap_control_size(index);
         w++) {
        add_word(w, W_CONTROL);
    }
    memcpy(saved, mem, TC_HEAP);
    unsigned long pairs = 0, missed = 0, tag_pairs = 0, tag_passed = 0, window = 0;
    unsigned long per_kind[W_KINDS] = {0};
    for (size_t di = 0; di < nmeta; di++) {
        size_t *dst = words[di].at;
        for (size_t si = 0; si < nwords; si++) {
            size_t value = *words[si].at;
            if (si == di || value == *dst) {
                continue;
            }
            if (words[di].kind == W_HEADER && words[si].kind == W_HEADER) {
                /* the tag alone: a header is no header at another place */
                uintptr_t dist = (uintptr_t)dst > (uintptr_t)words[si].at ? (uintptr_t)dst - (uintptr_t)words[si].at
                                                                          : (uintptr_t)words[si].at - (uintptr_t)dst;
                bool in_window =
                    BLK_LINEAR_TAG || RT_HARDENING < 1 || ((dist / BLK_A) & (~(size_t)0 >> BLK_DATA_BITS)) != 0u;
                tag_pairs++;
                window += in_window;
                if (in_window && blk_head_ok(h->key, dst, value)) {
                    tag_passed++;
                    if (tag_passed <= 3u) {
                        printf("  %s: the header at +%zu verifies at +%zu\n", name,
                               (size_t)((unsigned char *)words[si].at - mem), (size_t)((unsigned char *)dst - mem));
                    }
                }
            }
            size_t old = *dst;
            *dst = value;
            pairs++;
            per_kind[words[di].kind]++;
            if (rt_heap_check(h)) {
                missed++;
                if (missed <= 5u) {
                    printf("  %s: the %s at +%zu copied over the %s at +%zu: rt_heap_check passed\n", name,
                           kind_name[words[si].kind], (size_t)((unsigned char *)words[si].at - mem),
                           kind_name[words[di].kind], (size_t)((unsigned char *)dst - mem));
                }
                *dst = old;
            } else {
                memcpy(mem, saved, TC_HEAP); /* the check fenced the damage off: back to the copy */
            }
        }
    }
    printf(
        "%-9s %4zu metadata words (%lu headers to check by tag), %lu copies: check missed %lu; tag passed %lu of %lu "
        "(%lu in the window)\n",
        name, nmeta, tag_pairs, pairs, missed, tag_passed, tag_pairs, window);
    TL_CHECK(pairs > 1000u && missed == 0u, "%s: %lu of %lu copies passed rt_heap_check", name, missed, pairs);
    TL_CHECK(RT_HARDENING < 1 || tag_passed == 0u, "%s: %lu headers verified at another place", name, tag_passed);
    TL_CHECK(per_kind[W_HEADER] > 0u && per_kind[W_FOOTER] > 0u && per_kind[W_NEXT] > 0u &&
                 (index != RT_INDEX_TLSFQ || per_kind[W_LINK] > 0u),
             "%s: every kind of metadata word was a destination", name);
}

/* A second life over the same buffer: nothing of the first verifies. */
static void test_life(rt_index_t index, uint64_t seed)
{
    const char *name = rt_index_name(index);
    tl_rng_t r = tl_rng_seed(seed);
    rt_heap_t *h = build(mem, index, &r);
    if (!TL_CHECK(h != NULL && collect(h), "%s: life 1", name)) {
        return;
    }
    size_t key1 = h->key;
    /* the live blocks of life 1 (payload addresses) and its headers */
    static void *live[TC_BLOCKS];
    size_t nlive = 0;
    for (size_t i = 0; i < nwords; i++) {
        if (words[i].kind == W_HEADER) {
            rt_blk *b = blk_at(words[i].at);
            size_t d = blk_decode(h->key, b, b->head);
            if ((d & BLK_FENCE) == 0u && blk_head_size(d) >= BLK_MIN && nlive < TC_BLOCKS) {
                live[nlive++] = blk_payload(b);
            }
        }
    }
    memcpy(mem2, mem, TC_HEAP); /* life 1 as it was */
    size_t nold = nwords;
    static word_t old[TC_MAXWORDS];
    memcpy(old, words, nwords * sizeof old[0]);
    tl_rng_t r2 = tl_rng_seed(seed ^ 0x5A5Au);
    rt_heap_t *h2 = build(mem, index, &r2); /* the same buffer, other sizes */
    if (!TL_CHECK(h2 == h && h2->key != key1, "%s: life 2 over the same buffer has a new key", name)) {
        return;
    }
    tl_recorder_t rec;
    memset(&rec, 0, sizeof rec); /* (print off: tl_recorder_reset leaves it) */
    rt_heap_set_handler(h2, tl_record, &rec);
    unsigned long stale = 0;
    for (size_t i = 0; i < nold; i++) {
        if (old[i].kind == W_HEADER) {
            size_t value = *(size_t *)(void *)(mem2 + ((unsigned char *)old[i].at - mem));
            stale += blk_head_ok(h2->key, old[i].at, value);
        }
    }
    TL_CHECK(RT_HARDENING < 1 || stale == 0u, "%s: %lu headers of life 1 verify in life 2", name, stale);
    /* free each pointer of life 1 that is no live block of life 2: refused, BAD_POINTER */
    TL_CHECK(collect(h2), "%s: life 2's words", name);
    unsigned long refused = 0, tried = 0;
    for (size_t i = 0; i < nlive; i++) {
        rt_blk *b = blk_from_payload(live[i]);
        bool block_now = false;
        for (size_t k = 0; k < nwords; k++) {
            block_now |= words[k].kind == W_HEADER && words[k].at == &b->head;
        }
        if (block_now) {
            continue;
        }
        /* the free would read b's header: make it life 1's header again (a stale pointer whose
         * header the new life never wrote over) */
        size_t saved_head = b->head;
        b->head = *(size_t *)(void *)(mem2 + ((unsigned char *)&b->head - mem));
        rt_stats_t before, after;
        rt_heap_stats(h2, &before); /* (a report of its own when an earlier free's containment met the
                                       header put back below: not this free's) */
        tl_recorder_reset(&rec);
        rt_heap_free(h2, live[i]);
        rt_heap_stats(h2, &after);
        tried++;
        refused += rec.count == 1u && rec.last == RT_ERR_BAD_POINTER && after.frees == before.frees;
        b->head = saved_head;
    }
    TL_CHECK(RT_HARDENING < 1 || (tried > 0u && refused == tried), "%s: %lu of %lu stale frees refused", name, refused,
             tried);
}

int main(int argc, char **argv)
{
    uint64_t seed = 2401;
    if (argc > 1 && !tl_parse_u64(argv[1], &seed)) {
        fprintf(stderr, "usage: tag_copy [seed]\n");
        return 2;
    }
    printf("tag_copy: seed %" PRIu64 ", heap %zu bytes, W %zu, A %zu, %s tag\n", seed, TC_HEAP, sizeof(size_t),
           (size_t)BLK_A, BLK_LINEAR_TAG ? "affine" : "folded");
    mem = aligned_alloc(64, TC_HEAP);
    saved = malloc(TC_HEAP);
    mem2 = malloc(TC_HEAP);
    if (!TL_CHECK(mem != NULL && saved != NULL && mem2 != NULL, "out of memory")) {
        return tl_summary("tag_copy");
    }
#if RT_HARDENING < 1
    tl_skip("tag_copy: RT_HARDENING 0 has no tags");
#else
    for (size_t i = 0; i < sizeof indexes / sizeof indexes[0]; i++) {
        test_copy(indexes[i], seed + i);
        test_life(indexes[i], seed + 100u + i);
    }
    /* an entropy source that repeats itself: both lives draw the same key, and create must still
     * move the second off the key the buffer held */
    rt_set_entropy(tl_entropy_constant, NULL);
    for (size_t i = 0; i < sizeof indexes / sizeof indexes[0]; i++) {
        test_life(indexes[i], seed + 200u + i);
    }
    rt_set_entropy(NULL, NULL);
#endif
    free(mem);
    free(saved);
    free(mem2);
    return tl_summary("tag_copy");
}
