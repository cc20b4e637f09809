/* SPDX-License-Identifier: MIT */
/*
 * wf_checks.c -- the wait-free tree's and its caches' safety checks one at a time (src/waitfree/):
 * each case builds the one state a single check must refuse, so that removing the check (a
 * mutant of tools/mutants.txt) makes the case fail. White-box: counters and keyed words are
 * written through src/waitfree/wf_tree.h (tests/CMakeLists.txt adds src/).
 *
 *   ancestor_over   the parent of a live chunk holds a counter one above its leaves (the largest
 *                   value no live counter can hold): free and realloc (which would move and free)
 *                   of the chunk are refused, CORRUPTED, the counter untouched, the chunk live
 *   offset_at_end   a memalign pointer whose offset word and record (keyed as the tree keys them)
 *                   say it lies exactly at the end of the chunk's usable bytes: refused
 *   cache_path      a chunk waiting in a per-thread cache whose parent's counter is damaged: the
 *                   flush that would give it back to the tree leaves the counter untouched
 *   cache_full      a free into a full cache list whose top was damaged (its length word): the
 *                   flush meets the damage, and the free is refused -- the chunk stays live
 *   cache_head_range  a cache record's list head damaged to name a node far outside the tree: the
 *                   pop reports and drops the list instead of reading there
 *   counter_copied  a free leaf's counter word copied over its live sibling's counter: the copy is
 *                   out of range at that node (the code binds a counter to its node), so no
 *                   malloc hands the live leaf out again
 *   counter_restored  a node's padding and counter (8 bytes) saved while its subtree is wholly
 *                   free and written back after a malloc below it: in range and at its place, so
 *                   the counter's code cannot tell; the claim of that subtree must not hand out
 *                   memory over the live chunk (wf_claim_sound), one case for each of its three
 *                   checks (the children's counters, the root's canary, the first length word)
 */
#include "testlib.h"

#include "rtalloc/waitfree.h"
#include "rtalloc/wfcache.h"
/* White-box: struct rt_wf, the counter code, keys, wf_validate. */
#include "waitfree/wf_tree.h"

#define WC_NODE 64u

static unsigned char control[1024] __attribute__((aligned(64)));
static unsigned char tree[64u * WC_NODE * 2u] __attribute__((aligned(4096)));
static unsigned char arena[1u << 18] __attribute__((aligned(4096)));

/* A tree of height 5 (63 nodes of 64 bytes) over `tree`, the control block apart. */
static rt_wf_t *wc_tree(tl_recorder_t *rec, unsigned flags)
{
    rt_wf_config_t cfg = {WC_NODE, flags};
    memset(tree, 0x5A, sizeof tree);
    rt_wf_t *w = rt_wf_create_split(control, tree, 63u * WC_NODE, &cfg);
    if (TL_CHECK(w != NULL, "create_split")) {
        memset(rec, 0, sizeof *rec);
        rt_wf_set_handler(w, tl_record, rec);
    }
    return w;
}

/* The index of the parent of the chunk ch (the step of wf_path_intact). */
static size_t wc_parent(const wf_chunk_t *ch)
{
    return (ch->k & 1u) != 0u ? ch->root + 1u : ch->root + wf_pow2(ch->h + 1u);
}

/* --- the cases ---------------------------------------------------------------------------------- */

static void ancestor_over(unsigned flags)
{
    tl_recorder_t rec;
    rt_wf_t *w = wc_tree(&rec, flags);
    if (w == NULL) {
        return;
    }
    unsigned char *a = rt_wf_malloc(w, 1), *b = rt_wf_malloc(w, 1);
    wf_chunk_t ch;
    if (!TL_CHECK(a != NULL && b != NULL && wf_validate(w, a, &ch) == RT_ERR_NONE, "ancestor_over: setup")) {
        return;
    }
    size_t parent = wc_parent(&ch);
    int over = wf_leaves(ch.h + 1u) + 1;
    wf_ctr_set(w, parent, over);
    uint32_t word = atomic_load_explicit(wf_counter(w, parent), memory_order_relaxed);
    tl_fill(a, 8, 21);
    /* realloc that cannot stay in place: a chunk of height 2, away from the damaged parent */
    tl_recorder_reset(&rec);
    void *q = rt_wf_realloc(w, a, 3u * WC_NODE);
    TL_CHECK(q == NULL && rec.count == 1u && rec.last == RT_ERR_CORRUPTED,
             "ancestor_over (flags %u): realloc under a counter above its leaves: %p, %lu reports, last %s", flags, q,
             rec.count, tl_kind_name(rec.last));
    tl_recorder_reset(&rec);
    rt_wf_free(w, a);
    TL_CHECK(rec.count == 1u && rec.last == RT_ERR_CORRUPTED,
             "ancestor_over (flags %u): free under a counter above its leaves: %lu reports, last %s", flags, rec.count,
             tl_kind_name(rec.last));
    TL_CHECK(atomic_load_explicit(wf_counter(w, parent), memory_order_relaxed) == word,
             "ancestor_over (flags %u): the refused calls changed the damaged counter", flags);
    tl_recorder_reset(&rec);
    TL_CHECK(rt_wf_usable_size(w, a) != 0u && rec.count == 0u && tl_verify(a, 8, 21) == 8u,
             "ancestor_over (flags %u): the chunk is no longer live (%lu reports)", flags, rec.count);
}

static void offset_at_end(void)
{
    tl_recorder_t rec;
    rt_wf_t *w = wc_tree(&rec, 0);
    if (w == NULL) {
        return;
    }
    unsigned char *m = rt_wf_memalign(w, 32, 40);
    if (!TL_CHECK(m != NULL, "offset_at_end: memalign")) {
        return;
    }
    size_t off = (size_t)((uintptr_t)m - w->base);
    size_t o = (size_t)(*(uint32_t *)(void *)(m - 4) ^ wf_offset_key(w, off));
    size_t data = off - o; /* the chunk's data start */
    size_t first = data >> w->node_log2;
    unsigned h = WF_LEN_HEIGHT(atomic_load_explicit(wf_len_word(w, first), memory_order_relaxed));
    size_t usable = rt_wf_usable(w->node_size, h);
    if (!TL_CHECK(o >= 4u && o < usable && (data & (w->node_size - 1u)) == 4u, "offset_at_end: layout")) {
        return;
    }
    size_t end = data + usable; /* the forged pointer: 8-aligned, the end of the usable bytes */
    uint32_t *record = (uint32_t *)(void *)(w->base + data);
    uint32_t *word = (uint32_t *)(void *)(w->base + end - 4u);
    uint32_t saved_record = *record, saved_word = *word;
    *record = (uint32_t)usable ^ wf_offset_key(w, data + 4u);
    *word = (uint32_t)usable ^ wf_offset_key(w, end);
    tl_recorder_reset(&rec);
    rt_wf_free(w, (void *)(w->base + end));
    TL_CHECK(rec.count == 1u && rec.last == RT_ERR_BAD_POINTER,
             "offset_at_end: free of a pointer at the end of the usable bytes: %lu reports, last %s", rec.count,
             tl_kind_name(rec.last));
    *record = saved_record;
    *word = saved_word;
    tl_recorder_reset(&rec);
    rt_wf_free(w, m);
    TL_CHECK(rec.count == 0u && rt_wf_check(w), "offset_at_end: the repaired chunk does not free cleanly");
}

/* A free leaf's counter word (a valid code word at its own node) copied over the counter of a live
 * leaf, its left sibling -- an overrun's memcpy from another block's end. The code binds a
 * counter to its node, so the copy is out of range there: no malloc hands the live leaf out
 * again (the descent reports the damage), although its parent says one leaf below it is free. */
static void counter_copied(unsigned flags)
{
    tl_recorder_t rec;
    rt_wf_t *w = wc_tree(&rec, flags);
    if (w == NULL) {
        return;
    }
    unsigned char *a = rt_wf_malloc(w, 1), *b = rt_wf_malloc(w, 1);
    wf_chunk_t ca, cb;
    if (!TL_CHECK(a != NULL && b != NULL && wf_validate(w, a, &ca) == RT_ERR_NONE &&
                      wf_validate(w, b, &cb) == RT_ERR_NONE && ca.h == 0u && cb.h == 0u && (ca.k & 1u) == 0u &&
                      cb.k == ca.k + 1u,
                  "counter_copied: two sibling leaves")) {
        return;
    }
    /* the code itself: a counter word of any value a node of this tree can hold, copied to any
     * other node, decodes out of even the widest range (the root's) there -- the place term; the
     * claim's check (counter_restored) would catch the copy below too, later */
    unsigned out = 0, pairs = 0;
    for (size_t j = 0; j < 63u; j++) {
        for (size_t i = 0; i < 63u; i++) {
            for (int v = -2; v <= 32 && i != j; v += 17) {
                pairs++;
                out += wf_ctr_ok(wf_dec(i, wf_enc(j, v)), 5u) ? 0u : 1u;
            }
        }
    }
    TL_CHECK(out == pairs, "counter_copied: %u of %u counter words copied to another node decode in range there",
             pairs - out, pairs);
    rt_wf_free(w, b);
    uint32_t word = atomic_load_explicit(wf_counter(w, cb.root), memory_order_relaxed);
    atomic_store_explicit(wf_counter(w, ca.root), word, memory_order_relaxed);
    tl_recorder_reset(&rec);
    bool again = false;
    for (unsigned i = 0; i < 64u; i++) {
        unsigned char *p = rt_wf_malloc(w, 1);
        again = again || p == a;
    }
    /* (the hint and lazy variants' descent may pass the leaf by, guided by its parent's padding) */
    bool seen = flags != 0u || (rec.count >= 1u && rec.last == RT_ERR_CORRUPTED);
    TL_CHECK(!again && seen,
             "counter_copied (flags %u): a live leaf whose counter is a copy of its free sibling's was %s "
             "(%lu reports, last %s)",
             flags, again ? "handed out again" : "kept", rec.count, tl_kind_name(rec.last));
}

/* Saves node i's padding and counter, the two words of its last 8 bytes. */
static void wc_save(rt_wf_t *w, size_t i, uint32_t out[2])
{
    out[0] = atomic_load_explicit(wf_pad(w, i), memory_order_relaxed);
    out[1] = atomic_load_explicit(wf_counter(w, i), memory_order_relaxed);
}
static void wc_restore(rt_wf_t *w, size_t i, const uint32_t in[2])
{
    atomic_store_explicit(wf_pad(w, i), in[0], memory_order_relaxed);
    atomic_store_explicit(wf_counter(w, i), in[1], memory_order_relaxed);
}

/* The leftmost pair of leaves (nodes 0, 1) under their parent (node 2), each check alone:
 * kind 0: leaf 1 live, leaf 0 free, the parent's words restored to "wholly free" (only its
 *         children's counters disagree);
 * kind 1: leaf 0 live, its counter restored to "free" and its length word scribbled over (only its
 *         canary, still in its padding, disagrees);
 * kind 2: leaf 0 live, the parent's words restored and both leaves' counters set "free" (only the
 *         first node's length word, a live tag, disagrees).
 * The words are saved after one allocation cycle of both leaves, so that the parent is no longer
 * pristine in the lazy variants (a pristine node's counters below are stale and not compared; see
 * rtalloc/waitfree.h). */
static void counter_restored(unsigned flags, unsigned kind)
{
    tl_recorder_t rec;
    rt_wf_t *w = wc_tree(&rec, flags);
    if (w == NULL) {
        return;
    }
    unsigned char *a = rt_wf_malloc(w, 1), *b = rt_wf_malloc(w, 1);
    rt_wf_free(w, a);
    rt_wf_free(w, b);
    uint32_t parent[2], leaf[2];
    wc_save(w, 2u, parent);
    wc_save(w, 0u, leaf);
    a = rt_wf_malloc(w, 1);
    b = rt_wf_malloc(w, 1);
    wf_chunk_t ca, cb;
    if (!TL_CHECK(a != NULL && b != NULL && wf_validate(w, a, &ca) == RT_ERR_NONE && ca.root == 0u &&
                      wf_validate(w, b, &cb) == RT_ERR_NONE && cb.root == 1u,
                  "counter_restored: the first two leaves")) {
        return;
    }
    unsigned char *live = kind == 0u ? b : a;
    rt_wf_free(w, kind == 0u ? a : b);
    if (kind == 0u || kind == 2u) {
        wc_restore(w, 2u, parent);
    }
    if (kind == 1u) {
        atomic_store_explicit(wf_counter(w, 0u), leaf[1], memory_order_relaxed);
        atomic_store_explicit(wf_len_word(w, 0u), 0x41414141u, memory_order_relaxed);
    }
    if (kind == 2u) {
        wf_ctr_set(w, 0u, wf_leaves(0u));
        wf_ctr_set(w, 1u, wf_leaves(0u));
    }
    tl_recorder_reset(&rec);
    unsigned s = kind == 1u ? 0u : 1u;
    size_t usable = rt_wf_usable(WC_NODE, s);
    bool overlap = false;
    for (unsigned i = 0; i < 40u; i++) {
        unsigned char *p = rt_wf_malloc(w, usable);
        overlap = overlap || (p != NULL && p <= live && live < p + usable);
    }
    /* (the hint variants go right first, guided by the ancestors' padding; the honest parent of
     * the restored node then has no room left for it: nothing to see, nothing handed out) */
    bool seen = (flags & RT_WF_HINTS) != 0u || (rec.count >= 1u && rec.last == RT_ERR_CORRUPTED);
    TL_CHECK(!overlap && seen,
             "counter_restored (flags %u, kind %u): a live chunk under a restored counter was %s (%lu reports, last "
             "%s)",
             flags, kind, overlap ? "handed out again" : "kept", rec.count, tl_kind_name(rec.last));
}

/* A cache instance over `arena` with the default configuration (one thread: one cache). */
static rt_wfc_t *wc_cache(tl_recorder_t *rec)
{
    memset(arena, 0x5A, sizeof arena);
    rt_wfc_t *c = rt_wfc_create(arena, sizeof arena, NULL);
    if (TL_CHECK(c != NULL, "wfc create")) {
        memset(rec, 0, sizeof *rec);
        rt_wfc_set_handler(c, tl_record, rec);
    }
    return c;
}

static void cache_path(void)
{
    tl_recorder_t rec;
    rt_wfc_t *c = wc_cache(&rec);
    if (c == NULL) {
        return;
    }
    rt_wf_t *w = rt_wfc_tree(c);
    unsigned char *x = rt_wfc_malloc(c, 1);
    wf_chunk_t ch;
    if (!TL_CHECK(x != NULL && wf_validate(w, x, &ch) == RT_ERR_NONE, "cache_path: setup")) {
        return;
    }
    rt_wfc_free(c, x); /* cached: live for the tree */
    size_t parent = wc_parent(&ch);
    wf_ctr_set(w, parent, wf_leaves(ch.h + 1u) + 5);
    uint32_t word = atomic_load_explicit(wf_counter(w, parent), memory_order_relaxed);
    tl_recorder_reset(&rec);
    rt_wfc_flush(c);
    TL_CHECK(rec.count >= 1u && rec.last == RT_ERR_CORRUPTED, "cache_path: the flush reported %lu, last %s", rec.count,
             tl_kind_name(rec.last));
    TL_CHECK(atomic_load_explicit(wf_counter(w, parent), memory_order_relaxed) == word,
             "cache_path: a chunk released under a damaged parent (its counter changed)");
}

static void cache_full(void)
{
    static unsigned char *p[64];
    tl_recorder_t rec;
    rt_wfc_t *c = wc_cache(&rec);
    if (c == NULL) {
        return;
    }
    rt_wfc_config_t cfg;
    rt_wfc_get_config(c, &cfg);
    unsigned n = cfg.capacity + 1u;
    for (unsigned i = 0; i < n; i++) {
        p[i] = rt_wfc_malloc(c, 1);
        if (!TL_CHECK(p[i] != NULL, "cache_full: setup")) {
            return;
        }
    }
    rt_wfc_flush(c); /* the refills' leftovers back: the list of height 0 empty */
    for (unsigned i = 0; i + 1u < n; i++) {
        rt_wfc_free(c, p[i]); /* the list of height 0 full */
    }
    uint32_t *len = (uint32_t *)(void *)(p[n - 2u] - 4); /* the top's length word: a use after free */
    *len ^= 0x100u;
    tl_recorder_reset(&rec);
    rt_wfc_free(c, p[n - 1u]);
    TL_CHECK(rec.count >= 1u && rec.last == RT_ERR_CORRUPTED, "cache_full: the flush reported %lu, last %s", rec.count,
             tl_kind_name(rec.last));
    tl_recorder_reset(&rec);
    TL_CHECK(rt_wfc_usable_size(c, p[n - 1u]) != 0u && rec.count == 0u,
             "cache_full: a free whose flush met damage was not refused (%lu reports, last %s)", rec.count,
             tl_kind_name(rec.last));
}

/* The test's own token for the cache's self hook: a value the test can find in memory. */
#define WC_TOKEN ((uintptr_t)0x5EC0FFE0u)
static uintptr_t wc_token(void *context)
{
    (void)context;
    return WC_TOKEN;
}

/* A cache's record (in the control chunk or a chunk of its own) whose list head is damaged -- an
 * overrun into the record -- to name a node far outside the tree. The pop reads a top only inside
 * the tree: it reports the list (CORRUPTED), drops it and refills; nothing outside the tree is
 * read or handed out. White-box: the record is found by its owner word (the test's token), and
 * its head of height 0 checked to name the cached chunk on top before it is changed. */
static void cache_head_range(void)
{
    rt_wfc_config_t cfg;
    rt_wfc_default_config(&cfg);
    cfg.self = wc_token;
    memset(arena, 0x5A, sizeof arena);
    rt_wfc_t *c = rt_wfc_create(arena, sizeof arena, &cfg);
    tl_recorder_t rec;
    memset(&rec, 0, sizeof rec);
    if (!TL_CHECK(c != NULL, "cache_head_range: create")) {
        return;
    }
    rt_wfc_set_handler(c, tl_record, &rec);
    rt_wf_t *w = rt_wfc_tree(c);
    unsigned char *p = rt_wfc_malloc(c, 1); /* a refill: the rest of its batch cached */
    uint32_t *head = NULL;
    unsigned found = 0;
    for (size_t off = 0; off + sizeof(uintptr_t) + 4u <= sizeof arena; off += sizeof(uintptr_t)) {
        uintptr_t v;
        memcpy(&v, arena + off, sizeof v);
        if (v == WC_TOKEN) {
            head = (uint32_t *)(void *)(arena + off + sizeof(uintptr_t));
            found++;
        }
    }
    size_t top = head != NULL ? (size_t)*head - 1u : 0u;
    if (!TL_CHECK(p != NULL && found == 1u && head != NULL && *head != 0u &&
                      wf_len_peek(w, top) == wf_tag(w, top, 0, WF_ST_CACHED),
                  "cache_head_range: the record (%u found) and its list of height 0", found)) {
        return;
    }
    *head = 0xFFFFFFF0u;
    tl_recorder_reset(&rec);
    unsigned char *q = rt_wfc_malloc(c, 1);
    bool inside = q != NULL && (uintptr_t)q >= w->base && (uintptr_t)q < w->base + (w->nodes << w->node_log2);
    TL_CHECK(inside && rec.count == 1u && rec.last == RT_ERR_CORRUPTED,
             "cache_head_range: a pop whose list head names a node outside the tree: %p, %lu reports, last %s",
             (void *)q, rec.count, tl_kind_name(rec.last));
    tl_recorder_reset(&rec);
    TL_CHECK(rt_wfc_check(c) && rec.count == 0u, "cache_head_range: check after the drop (%lu reports)", rec.count);
}

int main(void)
{
#if RT_HARDENING < 1
    tl_skip("wf_checks: RT_HARDENING 0");
    return tl_summary("wf_checks");
#else
    static const unsigned variants[] = {0, RT_WF_HINTS, RT_WF_LAZY_REINIT, RT_WF_HINTS | RT_WF_LAZY_REINIT};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        ancestor_over(variants[i]);
        counter_copied(variants[i]);
        for (unsigned kind = 0; kind < 3u; kind++) {
            counter_restored(variants[i], kind);
        }
    }
    offset_at_end();
    cache_path();
    cache_full();
    cache_head_range();
    return tl_summary("wf_checks");
#endif
}
