/* SPDX-License-Identifier: MIT */
/*
 * wfc_unit.c -- white-box tests of the wait-free tree behind per-thread caches (rtalloc/wfcache.h),
 * one thread. The configuration's self hook returns the static `ctx`, so each case says which
 * "context" makes every call (a token; 0: no cache).
 *
 *   hits         after a warm-up a malloc or a free of a cached height is served by the cache:
 *                exactly 1 node, 0 RMW, 1 cache op, no descent, 1 slot read
 *   refill       the first malloc of height s claims 2^j chunks in one descent (the direct path's
 *                RMWs: the hints are exact), returns the lowest one, keeps the other 2^j - 1 (in
 *                rt_wfc_cached_bytes), which later mallocs pop in address order; the pieces lie
 *                where a claimed chunk of height s + j cuts them; every call within rt_wfc_bound
 *   bound        rt_wfc_bound is the header's table over the tree's rt_wf_bound, for every height
 *   flush        with capacity C the (C+1)-th free of one height into one cache releases C - C/2
 *                chunks (the ones pushed last) to the tree on that push, with their exact work
 *   failure      a malloc the tree cannot serve flushes the caller's own cache and retries (a
 *                request that needs the cached chunks coalesced, cached or uncached height, and
 *                memalign); memory in ANOTHER context's cache is not found (documented: not
 *                linearizable) until rt_wfc_flush_all
 *   remote       a chunk one context allocated and another frees lands in the freeing context's
 *                cache, the allocator's cache untouched
 *   records      the first contexts' records are lines of the control chunk (the tree untouched),
 *                later ones a leaf of the tree (found where the leftmost free leaf was); with
 *                every slot taken a context has no cache (a descent on every malloc, slot reads
 *                within the bound even when the tree is full); token 0 never has one; freeing a
 *                record's memory or any node of the control chunk is reported and harmless
 *   stats        used_bytes / used_blocks exclude cached chunks, mallocs / frees are the
 *                application's, stats flushes only the caller's cache, peak_used counts what
 *                caches held; the walk agrees
 *   bad input    double free of a cached chunk (it is not cached twice), realloc and usable_size of
 *                a cached chunk, interior and foreign pointers, a use-after-free write into a
 *                cached chunk's link (the pop that reaches it reports, the list is dropped, no
 *                pointer is handed out twice) or into its length word, a link copied from another
 *                cached chunk (of the list, of another cache), a link and a pointer a previous
 *                instance over the same buffer left there (a new create is a new generation,
 *                also with an entropy source that repeats itself),
 *                a canary overrun
 *   config       every invalid configuration refused (and min_buffer SIZE_MAX); min_buffer exact
 *                at misalignments, for every node size
 *   random       equation 3 (rt_wfc_check) through a random sequence switching between 3 tokens
 *                in several configurations (shadow set: no overlap, contents kept, every call
 *                within its bound); after rt_wfc_flush_all the tree's used_bytes is 0
 */
#include "testlib.h"

#include "rtalloc/waitfree.h"
#include "rtalloc/wfcache.h"

#define B 64u /* node size of most cases */

static unsigned char arena[1u << 18] __attribute__((aligned(4096)));

/* --- the calling context ---------------------------------------------------------------------------- */

static uintptr_t ctx; /* the token self returns: the "context" making the next call */

static uintptr_t self_hook(void *context) { return *(const uintptr_t *)context; }

/* Tokens whose slots differ with 64 slots (27, 54, 17) and with 2 slots A -> 1, B -> 0, C -> none. */
#define T_A ((uintptr_t)0x10000u)
#define T_B ((uintptr_t)0x20000u)
#define T_C ((uintptr_t)0x30000u)

/* --- reports counted per kind ------------------------------------------------------------------------ */

typedef struct kinds {
    unsigned long n[RT_ERR_BAD_HOOKS + 1];
    unsigned long total;
} kinds_t;

static kinds_t kinds;

static void on_error(void *context, const rt_error_t *e)
{
    kinds_t *k = context;
    if ((unsigned)e->kind <= (unsigned)RT_ERR_BAD_HOOKS) {
        k->n[e->kind]++;
    }
    k->total++;
}

static void kinds_reset(void) { memset(&kinds, 0, sizeof kinds); }

/* Exactly one report since the last reset, of `kind`; resets. */
static bool reported(rt_error_kind_t kind, const char *what)
{
    bool ok = TL_CHECK(kinds.total == 1u && kinds.n[kind] == 1u, "%s: %lu reports, expected one %s (%lu of them)", what,
                       kinds.total, tl_kind_name(kind), kinds.n[kind]);
    kinds_reset();
    return ok;
}

/* --- instances ---------------------------------------------------------------------------------------- */

static void config(rt_wfc_config_t *cfg)
{
    rt_wfc_default_config(cfg);
    cfg->self = self_hook;
    cfg->self_context = &ctx;
}

/* An instance over the first `bytes` of the arena (64-aligned: node 0 is the arena's start), with
 * the counting handler; the context is A. */
static rt_wfc_t *open_wfc(size_t bytes, const rt_wfc_config_t *cfg)
{
    memset(arena, 0x5A, bytes);
    rt_wfc_t *c = rt_wfc_create(arena, bytes, cfg);
    if (c != NULL) {
        rt_wfc_set_handler(c, on_error, &kinds);
    }
    kinds_reset();
    ctx = T_A;
    return c;
}

static size_t subtree(unsigned h) { return ((size_t)2 << h) - 1u; }
static size_t chunk_bytes(unsigned h) { return subtree(h) * B; }
/* The smallest request of height s (node size B). */
static size_t least(unsigned s) { return s == 0u ? 1u : rt_wf_usable(B, s - 1u) + 1u; }

/* Post-order index of the first node of the chunk whose data starts at p. */
static size_t node_of(const rt_wfc_t *c, const void *p)
{
    return (size_t)((const unsigned char *)p - arena - 4) / rt_wf_node_size(rt_wfc_tree(c));
}

/* The chunk whose first node is `first` is a whole subtree of height h (an aligned buddy). */
static bool aligned_subtree(const rt_wf_t *w, size_t first, unsigned h)
{
    size_t root = first + subtree(h) - 1u;
    for (size_t k = 0; k < ((size_t)1 << (rt_wf_height(w) - h)); k++) {
        if (rt_wf_index(w, h, k) == root) {
            return true;
        }
    }
    return false;
}

/* The chunk at p (height h) is a live chunk of the tree (allocated or cached). */
static bool is_chunk(const rt_wfc_t *c, const void *p, unsigned h)
{
    return rt_wf_is_chunk(rt_wfc_tree(c), node_of(c, p) + subtree(h) - 1u);
}

static rt_stats_t stats_of(rt_wfc_t *c)
{
    rt_stats_t s;
    rt_wfc_stats(c, &s);
    return s;
}

/* The tree's own used bytes (chunks the caches hold included). */
static size_t tree_used(rt_wfc_t *c)
{
    rt_stats_t s;
    rt_wf_stats(rt_wfc_tree(c), &s);
    return s.used_bytes;
}

#define TR_FMT "nodes %u rmw %u stat_rmw %u cache_ops %u descents %u releases %u probes %u height %u"
#define TR_ARGS(t) (t).nodes, (t).rmw, (t).stat_rmw, (t).cache_ops, (t).descents, (t).releases, (t).probes, (t).height

/* A malloc or free served by the cache: the chunk's length word, nothing else. */
static bool hit(const rt_wfc_trace_t *t, unsigned s, unsigned probes, const char *what)
{
    return TL_CHECK(t->nodes == 1u && t->rmw == 0u && t->stat_rmw == 0u && t->cache_ops == 1u && t->descents == 0u &&
                        t->releases == 0u && t->probes == probes && t->height == s,
                    "%s (height %u): " TR_FMT, what, s, TR_ARGS(*t));
}

static bool malloc_within(rt_wfc_t *c, size_t n, const rt_wfc_trace_t *t, const char *what)
{
    rt_wfc_bound_t b;
    if (!TL_CHECK(rt_wfc_bound(c, n, &b), "%s: no bound for %zu bytes", what, n)) {
        return false;
    }
    return TL_CHECK(t->nodes <= b.malloc_nodes && t->rmw <= b.malloc_rmw && t->probes <= b.probes,
                    "%s: malloc(%zu) " TR_FMT " beyond its bound (nodes %llu rmw %llu probes %u)", what, n, TR_ARGS(*t),
                    (unsigned long long)b.malloc_nodes, (unsigned long long)b.malloc_rmw, b.probes);
}

static bool free_within(rt_wfc_t *c, size_t n, const rt_wfc_trace_t *t, const char *what)
{
    rt_wfc_bound_t b;
    if (!TL_CHECK(rt_wfc_bound(c, n, &b), "%s: no bound for %zu bytes", what, n)) {
        return false;
    }
    return TL_CHECK(t->nodes <= b.free_nodes && t->rmw <= b.free_rmw && t->probes <= b.probes,
                    "%s: free of a %zu-byte block " TR_FMT " beyond its bound (nodes %llu rmw %llu probes %u)", what, n,
                    TR_ARGS(*t), (unsigned long long)b.free_nodes, (unsigned long long)b.free_rmw, b.probes);
}

/* --- 1, 2: refill and hits ------------------------------------------------------------------------ */

/* For every batch size j and cached height s, on one instance (the heights one after the other,
 * context A alone: its slot is its hash's, one read): the refill, the pops, the frees, a hit. */
static void test_refill_hits(void)
{
    for (unsigned j = 0; j <= RT_WFC_MAX_BATCH; j++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        cfg.batch_log2 = j;
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        if (!TL_CHECK(c != NULL, "refill: create (batch %u)", j)) {
            continue;
        }
        rt_wf_t *w = rt_wfc_tree(c);
        unsigned n_pieces = 1u << j;
        unsigned long refills = 0, hits = 0;
        for (unsigned s = 0; s < RT_WFC_MAX_HEIGHTS; s++) {
            size_t n = least(s);
            rt_wfc_bound_t b;
            rt_wf_bound_t tb;
            memset(&b, 0, sizeof b);
            bool have = rt_wfc_bound(c, n, &b); /* before the check: its message reads b */
            TL_CHECK(have && b.cached && b.height == s && b.hit_nodes == 1u && b.probes == RT_WFC_MAX_CACHES,
                     "refill: rt_wfc_bound(%zu): cached %d height %u hit_nodes %u probes %u", n, (int)b.cached,
                     b.height, b.hit_nodes, b.probes);
            TL_CHECK(rt_wf_bound(w, rt_wf_usable(B, s + j), &tb), "refill: tree bound of height %u", s + j);
            size_t cached0 = rt_wfc_cached_bytes(c);
            unsigned char *p[1u << RT_WFC_MAX_BATCH];
            rt_wfc_trace_t t;
            p[0] = rt_wfc_malloc_ex(c, n, &t);
            refills++;
            /* one descent of height s + j along the direct path (exact hints: one decrement per
             * node), 2^j - 1 chunks pushed; A's record is a line of the control chunk (no descent) */
            if (!TL_CHECK(p[0] != NULL && t.descents == 1u && t.cache_ops == n_pieces - 1u && t.releases == 0u &&
                              t.rmw == tb.path && t.probes == 1u && t.height == s,
                          "refill: batch %u height %u: first malloc " TR_FMT " (path %u)", j, s, TR_ARGS(t), tb.path)) {
                continue;
            }
            malloc_within(c, n, &t, "refill");
            TL_CHECK(rt_wfc_cached_bytes(c) == cached0 + (n_pieces - 1u) * chunk_bytes(s),
                     "refill: batch %u height %u: %zu bytes cached, expected %zu", j, s, rt_wfc_cached_bytes(c),
                     cached0 + (n_pieces - 1u) * chunk_bytes(s));
            TL_CHECK(rt_wfc_check(c), "refill: check after the refill (batch %u height %u)", j, s);
            size_t first = node_of(c, p[0]);
            TL_CHECK(aligned_subtree(w, first, s + j), "refill: the claimed chunk is a subtree of height %u", s + j);
            /* the rest in address order, each the m-th subtree of height s inside the claimed one */
            for (unsigned m = 1; m < n_pieces; m++) {
                p[m] = rt_wfc_malloc_ex(c, n, &t);
                hits++;
                hit(&t, s, 1u, "refill: pop");
                size_t expect = first + ((size_t)m << (s + 1u)) - (size_t)__builtin_popcount(m);
                TL_CHECK(p[m] != NULL && node_of(c, p[m]) == expect && p[m] > p[m - 1u],
                         "refill: batch %u height %u: piece %u at node %zu, expected %zu", j, s, m,
                         p[m] != NULL ? node_of(c, p[m]) : (size_t)0, expect);
                TL_CHECK(rt_wfc_cached_bytes(c) == cached0 + (n_pieces - 1u - m) * chunk_bytes(s),
                         "refill: cached bytes after pop %u", m);
                TL_CHECK(rt_wfc_check(c), "refill: check after pop %u", m);
            }
            for (unsigned m = 0; m < n_pieces; m++) {
                TL_CHECK(is_chunk(c, p[m], s), "refill: piece %u is a live chunk of height %u", m, s);
                memset(p[m], 0xC3, rt_wf_usable(B, s)); /* the whole usable area is the caller's */
            }
            /* frees into a cache that is not full (2^j <= capacity) */
            for (unsigned m = 0; m < n_pieces; m++) {
                rt_wfc_free_ex(c, p[m], &t);
                hits++;
                hit(&t, s, 1u, "refill: free into the cache");
                free_within(c, n, &t, "refill: free");
                TL_CHECK(rt_wfc_cached_bytes(c) == cached0 + (m + 1u) * chunk_bytes(s),
                         "refill: cached bytes after free %u", m);
                TL_CHECK(rt_wfc_check(c), "refill: check after free %u", m);
            }
            /* warm: the last chunk freed comes back first (LIFO), zeroed by calloc */
            unsigned char *q = rt_wfc_malloc_ex(c, n, &t);
            hits++;
            hit(&t, s, 1u, "refill: warm malloc");
            malloc_within(c, n, &t, "refill: warm malloc");
            TL_CHECK(q == p[n_pieces - 1u], "refill: the warm malloc returns the last chunk freed");
            rt_wfc_free_ex(c, q, &t);
            hit(&t, s, 1u, "refill: warm free");
            unsigned char *z = rt_wfc_calloc(c, 1, n);
            size_t nonzero = 0;
            for (size_t k = 0; z != NULL && k < n; k++) {
                nonzero += z[k] != 0u;
            }
            TL_CHECK(z == q && nonzero == 0u, "refill: calloc from the cache is zeroed (%zu bytes not)", nonzero);
            rt_wfc_free(c, z);
            TL_CHECK(rt_wfc_cached_bytes(c) == cached0 + n_pieces * chunk_bytes(s), "refill: cached at the end");
        }
        TL_CHECK(kinds.total == 0u && rt_wfc_check(c), "refill: batch %u: %lu reports, check", j, kinds.total);
        rt_wfc_flush_all(c);
        TL_CHECK(rt_wfc_cached_bytes(c) == 0u && tree_used(c) == 0u, "refill: flush_all leaves the tree empty");
        printf("refill    batch %u: %lu refills, %lu hits\n", j, refills, hits);
    }
}

/* --- rt_wfc_bound: the header's table from the tree's bounds ------------------------------------------- *
 *
 * M(h), F(h): the tree's malloc and free bounds (rt_wf_bound) for height h; P slots, capacity C,
 * batch j, spill C - C/2; the flush: sum over cached heights of C x F(h); a record: one node
 * (64-byte nodes), M(0). Cached s: malloc <= M(0) + sum_{i=0..j} M(s+i) + 2^(j+1) - 2 + flush + M(s)
 * (RMW: without the cutting), free = M(0) + spill x F(s) + 1; uncached: malloc = 2 M(s) + flush,
 * free = F(s). */
static void test_bound_table(void)
{
    static const struct {
        unsigned heights, batch, capacity, caches;
    } cases[] = {{4, 2, 8, 64}, {2, 3, 7, 4}, {3, 0, 1, 1}, {4, 1, 255, 16}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        cfg.heights = cases[k].heights;
        cfg.batch_log2 = cases[k].batch;
        cfg.capacity = cases[k].capacity;
        cfg.caches = cases[k].caches;
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        if (!TL_CHECK(c != NULL, "bound: create (case %zu)", k)) {
            continue;
        }
        rt_wf_t *w = rt_wfc_tree(c);
        unsigned C = cfg.capacity, spill = C - C / 2u, j = cfg.batch_log2;
        rt_wf_bound_t rec, f;
        rt_wf_bound(w, 1, &rec);
        uint64_t flush_n = 0, flush_r = 0;
        for (unsigned h = 0; h < cfg.heights; h++) {
            rt_wf_bound(w, rt_wf_usable(B, h), &f);
            flush_n += (uint64_t)C * f.free_nodes;
            flush_r += (uint64_t)C * f.free_rmw;
        }
        unsigned long wrong = 0;
        unsigned top = rt_wf_height(w) - 1u; /* the largest chunk: the root's right half */
        for (unsigned s = 0; s <= top; s++) {
            size_t n = least(s);
            rt_wfc_bound_t b;
            rt_wf_bound_t tb, bi;
            if (!TL_CHECK(rt_wfc_bound(c, n, &b) && rt_wf_bound(w, n, &tb), "bound: height %u", s)) {
                continue;
            }
            bool cached = s < cfg.heights;
            bool ok = b.height == s && b.cached == cached && b.hit_nodes == 1u && b.probes == cfg.caches;
            if (cached) {
                uint64_t mn = rec.malloc_nodes + ((uint64_t)2 << j) - 2u, mr = rec.malloc_rmw;
                for (unsigned i = 0; i <= j; i++) {
                    rt_wf_bound(w, rt_wf_usable(B, s + i), &bi);
                    mn += bi.malloc_nodes;
                    mr += bi.malloc_rmw;
                }
                ok = ok && b.malloc_nodes >= mn + flush_n + tb.malloc_nodes &&
                     b.malloc_rmw == mr + flush_r + tb.malloc_rmw &&
                     b.free_nodes == rec.malloc_nodes + (uint64_t)spill * tb.free_nodes + 1u &&
                     b.free_rmw == rec.malloc_rmw + (uint64_t)spill * tb.free_rmw;
            } else {
                ok = ok && b.malloc_nodes == 2u * tb.malloc_nodes + flush_n &&
                     b.malloc_rmw == 2u * tb.malloc_rmw + flush_r && b.free_nodes == tb.free_nodes &&
                     b.free_rmw == tb.free_rmw;
            }
            if (!ok) {
                wrong++;
                TL_CHECK(false, "bound: case %zu height %u: malloc %llu/%llu free %llu/%llu probes %u", k, s,
                         (unsigned long long)b.malloc_nodes, (unsigned long long)b.malloc_rmw,
                         (unsigned long long)b.free_nodes, (unsigned long long)b.free_rmw, b.probes);
            }
        }
        rt_wfc_bound_t b;
        TL_CHECK(wrong == 0u && !rt_wfc_bound(c, rt_wfc_max_request(c) + 1u, &b) && !rt_wfc_bound(c, 0, &b),
                 "bound: case %zu: %lu heights off the table; no bound beyond max_request", k, wrong);
    }
}

/* --- 3: flush on full -------------------------------------------------------------------------------- */

static void test_flush_on_full(void)
{
    static const struct {
        unsigned batch, capacity, s;
    } cases[] = {{2, 8, 1}, {2, 8, 0}, {2, 5, 2}, {0, 1, 1}, {3, 7, 0}, {2, 255, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        unsigned C = cases[k].capacity, s = cases[k].s;
        rt_wfc_config_t cfg;
        config(&cfg);
        cfg.batch_log2 = cases[k].batch;
        cfg.capacity = C;
        rt_wfc_t *c = open_wfc(1u << 18, &cfg);
        if (!TL_CHECK(c != NULL, "flush: create (capacity %u)", C)) {
            continue;
        }
        unsigned H = rt_wf_height(rt_wfc_tree(c));
        static unsigned char *p[260];
        /* B allocates C + 2 chunks (its cache keeps the rest of its last batch) */
        ctx = T_B;
        for (unsigned i = 0; i < C + 2u; i++) {
            p[i] = rt_wfc_malloc(c, least(s));
            if (!TL_CHECK(p[i] != NULL, "flush: malloc %u", i)) {
                return;
            }
        }
        size_t base = rt_wfc_cached_bytes(c); /* B's */
        /* A frees them: C pushes, then the push that finds the list full */
        ctx = T_A;
        rt_wfc_trace_t t;
        unsigned long bad = 0;
        for (unsigned i = 0; i < C; i++) {
            rt_wfc_free_ex(c, p[i], &t);
            bad += t.releases != 0u || t.cache_ops != 1u || t.rmw != 0u ||
                   rt_wfc_cached_bytes(c) != base + (i + 1u) * chunk_bytes(s);
        }
        TL_CHECK(bad == 0u, "flush: capacity %u: %lu of the first %u frees not plain pushes", C, bad, C);
        unsigned spill = C - C / 2u;
        rt_wfc_free_ex(c, p[C], &t);
        /* spill releases of height s: each H - s + 1 increments, H - s + 1 nodes (+ the chunk's
         * first node when s > 0: lazy re-initialisation marks it), then the push */
        uint32_t rel_nodes = (H - s + 1u) + (s > 0u ? 1u : 0u);
        TL_CHECK(t.releases == spill && t.rmw == spill * (H - s + 1u) && t.nodes == spill * rel_nodes + 1u &&
                     t.descents == 0u,
                 "flush: capacity %u height %u: the full push " TR_FMT ", expected %u releases", C, s, TR_ARGS(t),
                 spill);
        free_within(c, least(s), &t, "flush: the full push");
        TL_CHECK(rt_wfc_cached_bytes(c) == base + (C / 2u + 1u) * chunk_bytes(s),
                 "flush: capacity %u: %zu bytes cached, expected %zu", C, rt_wfc_cached_bytes(c),
                 base + (C / 2u + 1u) * chunk_bytes(s));
        /* the chunks released are the last ones pushed: p[C - spill .. C - 1] */
        size_t wrong = 0;
        for (unsigned i = 0; i <= C; i++) {
            bool released = i >= C - spill && i < C;
            wrong += is_chunk(c, p[i], s) == released;
        }
        TL_CHECK(wrong == 0u, "flush: capacity %u: %zu chunks released or kept wrongly", C, wrong);
        TL_CHECK(rt_wfc_check(c), "flush: check after the flush (capacity %u)", C);
        /* the next free is a plain push again */
        rt_wfc_free_ex(c, p[C + 1u], &t);
        TL_CHECK(C == 1u ? t.releases == 1u : (t.releases == 0u && t.cache_ops == 1u && t.rmw == 0u),
                 "flush: capacity %u: the free after the flush " TR_FMT, C, TR_ARGS(t));
        rt_wfc_flush_all(c);
        TL_CHECK(kinds.total == 0u && rt_wfc_check(c) && tree_used(c) == 0u && rt_wfc_cached_bytes(c) == 0u,
                 "flush: capacity %u: clean at the end (%lu reports)", C, kinds.total);
    }
}

/* --- 4: the failure path ----------------------------------------------------------------------------- */

/* A tree of height 6 (64 leaves, the control chunk 8 of them) filled by A with one-leaf chunks:
 * returns how many (every free leaf; A's cache is empty when its malloc fails). */
static size_t fill_leaves(rt_wfc_t *c, unsigned char **p, size_t max)
{
    size_t n = 0;
    ctx = T_A;
    for (;;) {
        rt_wfc_trace_t t;
        unsigned char *q = rt_wfc_malloc_ex(c, 1, &t);
        if (q == NULL) {
            rt_wfc_config_t cfg;
            rt_wfc_get_config(c, &cfg);
            TL_CHECK(t.descents == cfg.batch_log2 + 1u && t.releases == 0u,
                     "failure: the malloc that found the tree full " TR_FMT, TR_ARGS(t));
            malloc_within(c, 1, &t, "failure: full");
            return n;
        }
        if (n == max) {
            return n;
        }
        p[n++] = q;
    }
}

static void test_failure_path(void)
{
    const size_t bytes = 128u * B; /* height 6 */
    unsigned char *p[64];
    rt_wfc_trace_t t;
    size_t s2 = least(2); /* needs 4 leaves coalesced */

    /* (a) the caller's own cache, a cached height: flushed, the request served from its chunks */
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(bytes, &cfg);
    if (!TL_CHECK(c != NULL, "failure: create")) {
        return;
    }
    rt_wf_t *w = rt_wfc_tree(c);
    TL_CHECK(rt_wf_height(w) == 6u, "failure: height %u", rt_wf_height(w));
    size_t n = fill_leaves(c, p, 64);
    TL_CHECK(n == 56u && rt_wfc_cached_bytes(c) == 0u, "failure: %zu leaves, expected 56", n);
    TL_CHECK(node_of(c, p[0]) == rt_wf_index(w, 0, 8) && aligned_subtree(w, node_of(c, p[0]), 2),
             "failure: the first batch starts at leaf 8");
    for (unsigned i = 0; i < 4u; i++) {
        rt_wfc_free(c, p[i]);
    }
    TL_CHECK(rt_wfc_cached_bytes(c) == 4u * B, "failure: A holds 4 leaves");
    unsigned char *q = rt_wfc_malloc_ex(c, s2, &t);
    /* batch 2: descents of heights 4, 3, 2 fail, the flush releases 4, one descent of height 2 */
    TL_CHECK(q == p[0] && t.releases == 4u && t.descents == 4u && t.height == 2u,
             "failure: own cache flushed and the request served from it: %p (%p) " TR_FMT, (void *)q, (void *)p[0],
             TR_ARGS(t));
    malloc_within(c, s2, &t, "failure: own cache");
    TL_CHECK(rt_wfc_cached_bytes(c) == 0u && rt_wfc_check(c) && kinds.total == 0u,
             "failure: own cache: nothing cached, intact, no report");
    /* memalign through the tree: also flushes the caller's cache when it fails */
    rt_wfc_free(c, q); /* into A's list of height 2 */
    TL_CHECK(rt_wfc_cached_bytes(c) == chunk_bytes(2), "failure: A holds the chunk of height 2");
    unsigned char *m = rt_wfc_memalign(c, 256, 100); /* 352 bytes: height 2 */
    TL_CHECK(m != NULL && ((uintptr_t)m & 255u) == 0u && m > p[0] && m < p[0] + chunk_bytes(2) &&
                 rt_wfc_cached_bytes(c) == 0u,
             "failure: memalign flushed A's cache and got its chunk");
    rt_wfc_free(c, m);
    TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "failure: memalign: intact");

    /* (b) an uncached height (heights 2): the tree first, then the caller's cache, then the tree */
    config(&cfg);
    cfg.heights = 2;
    c = open_wfc(bytes, &cfg);
    n = fill_leaves(c, p, 64);
    TL_CHECK(n == 56u, "failure (uncached): %zu leaves", n);
    for (unsigned i = 0; i < 4u; i++) {
        rt_wfc_free(c, p[i]);
    }
    q = rt_wfc_malloc_ex(c, s2, &t);
    TL_CHECK(q == p[0] && t.releases == 4u && t.descents == 2u && t.cache_ops == 4u,
             "failure (uncached): own cache flushed (each release a cache operation): " TR_FMT, TR_ARGS(t));
    malloc_within(c, s2, &t, "failure (uncached)");
    TL_CHECK(rt_wfc_cached_bytes(c) == 0u && rt_wfc_check(c) && kinds.total == 0u, "failure (uncached): intact");

    /* (c) the memory in another context's cache: the request fails (not linearizable, as the
     * header says), and succeeds after rt_wfc_flush_all */
    config(&cfg);
    c = open_wfc(bytes, &cfg);
    n = fill_leaves(c, p, 64);
    TL_CHECK(n == 56u, "failure (other cache): %zu leaves", n);
    ctx = T_B;
    for (unsigned i = 0; i < 4u; i++) {
        rt_wfc_free_ex(c, p[i], &t);
        TL_CHECK(t.cache_ops == 1u && t.releases == 0u, "failure (other cache): B caches leaf %u: " TR_FMT, i,
                 TR_ARGS(t));
    }
    ctx = T_C; /* a context with no record: its stats flush nothing */
    rt_stats_t before = stats_of(c);
    ctx = T_A;
    q = rt_wfc_malloc_ex(c, s2, &t);
    TL_CHECK(q == NULL && t.releases == 0u && kinds.total == 0u,
             "failure (other cache): A's request fails, unreported: %p " TR_FMT, (void *)q, TR_ARGS(t));
    malloc_within(c, s2, &t, "failure (other cache)");
    ctx = T_C;
    rt_stats_t after = stats_of(c);
    TL_CHECK(after.failures == before.failures + 1u && after.errors == before.errors,
             "failure (other cache): counted as one failure, no error");
    TL_CHECK(rt_wfc_cached_bytes(c) == 4u * B, "failure (other cache): B's cache untouched");
    rt_wfc_flush_all(c);
    TL_CHECK(rt_wfc_cached_bytes(c) == 0u, "failure (other cache): flush_all empties every cache");
    ctx = T_A;
    q = rt_wfc_malloc_ex(c, s2, &t);
    TL_CHECK(q == p[0] && t.releases == 0u, "failure (other cache): after flush_all A's request succeeds");
    TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "failure (other cache): intact");
}

/* --- 5: remote free ---------------------------------------------------------------------------------- */

static void test_remote_free(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    if (!TL_CHECK(c != NULL, "remote: create")) {
        return;
    }
    rt_wfc_trace_t t;
    size_t n = least(1), cb = chunk_bytes(1);
    ctx = T_A;
    unsigned char *p0 = rt_wfc_malloc(c, n); /* A keeps p1, p2, p3 */
    TL_CHECK(p0 != NULL && rt_wfc_cached_bytes(c) == 3u * cb, "remote: A's refill");
    tl_fill(p0, n, 7);
    ctx = T_B;
    rt_wfc_free_ex(c, p0, &t); /* B's first call: its record, a line of the control chunk */
    hit(&t, 1, 1u, "remote: B frees A's chunk");
    TL_CHECK(rt_wfc_cached_bytes(c) == 4u * cb && rt_wfc_check(c), "remote: the chunk is in B's cache");
    ctx = T_A;
    unsigned char *a1 = rt_wfc_malloc_ex(c, n, &t);
    hit(&t, 1, 1u, "remote: A's next malloc");
    TL_CHECK(a1 != NULL && a1 != p0 && node_of(c, a1) == node_of(c, p0) + 3u,
             "remote: A's cache untouched: its next chunk is the second piece of its batch");
    ctx = T_B;
    unsigned char *b1 = rt_wfc_malloc_ex(c, n, &t);
    hit(&t, 1, 1u, "remote: B's malloc");
    TL_CHECK(b1 == p0, "remote: B's next malloc returns the chunk it freed");
    TL_CHECK(rt_wfc_cached_bytes(c) == 2u * cb && rt_wfc_check(c), "remote: A holds 2, B none");
    ctx = T_A;
    rt_wfc_flush(c);
    TL_CHECK(rt_wfc_cached_bytes(c) == 0u, "remote: A's flush releases exactly A's 2 chunks");
    /* A frees B's block, B frees A's: each into its own cache */
    rt_wfc_free_ex(c, b1, &t);
    hit(&t, 1, 1u, "remote: A frees B's chunk");
    ctx = T_B;
    rt_wfc_free_ex(c, a1, &t);
    hit(&t, 1, 1u, "remote: B frees A's chunk");
    TL_CHECK(rt_wfc_cached_bytes(c) == 2u * cb && rt_wfc_check(c) && kinds.total == 0u, "remote: intact");
    rt_wfc_flush_all(c);
    TL_CHECK(tree_used(c) == 0u, "remote: flush_all empties the tree");
}

/* --- 5b: 16-byte alignment through the caches (the drop-in's malloc) ----------------------------------
 * memalign(16) pops a cached chunk of the height of size + 12 and hands it out at node + 16 as an
 * aligned chunk of the tree; its free goes back into the freeing context's cache. What the tree
 * accepts of an aligned chunk is unchanged: exactly that pointer. */
static void test_align16(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    if (!TL_CHECK(c != NULL, "align16: create")) {
        return;
    }
    ctx = T_A;
    size_t n = least(1) - 12u; /* with the 12 bytes of the shift: height 1 */
    unsigned char *p = rt_wfc_memalign(c, 16, n);
    TL_CHECK(p != NULL && ((uintptr_t)p & 15u) == 0u, "align16: %p is 16-aligned", (void *)p);
    size_t cached = rt_wfc_cached_bytes(c);
    TL_CHECK(cached == 3u * chunk_bytes(1), "align16: served from a refill of 4 (%zu bytes cached)", cached);
    TL_CHECK(rt_wfc_usable_size(c, p) >= n && kinds.total == 0u, "align16: usable %zu", rt_wfc_usable_size(c, p));
    tl_fill(p, n, 3);
    unsigned char *q = rt_wfc_memalign(c, 16, n); /* a hit: popped from A's cache */
    TL_CHECK(q != NULL && ((uintptr_t)q & 15u) == 0u && rt_wfc_cached_bytes(c) == cached - chunk_bytes(1),
             "align16: the second from the cache");
    TL_CHECK(tl_verify(p, n, 3) == n, "align16: the first kept its contents");
    /* interior pointers of an aligned chunk are refused, nothing changes */
    rt_wfc_free(c, p - 12);
    rt_wfc_free(c, p + 16);
    TL_CHECK(kinds.total == 2u && rt_wfc_check(c), "align16: interior frees refused (%lu reports)", kinds.total);
    memset(&kinds, 0, sizeof kinds);
    /* the free of the aligned pointer goes into the freeing context's cache, B's */
    ctx = T_B;
    rt_wfc_trace_t t;
    rt_wfc_free_ex(c, p, &t);
    TL_CHECK(t.cache_ops == 1u && t.releases == 0u && kinds.total == 0u, "align16: B's free cached it");
    rt_wfc_free(c, p); /* a double free: its tag says cached now */
    TL_CHECK(kinds.total == 1u && kinds.n[RT_ERR_DOUBLE_FREE] == 1u, "align16: double free reported");
    memset(&kinds, 0, sizeof kinds);
    unsigned char *r = rt_wfc_malloc(c, least(1)); /* B's cache: the same chunk, as a plain one */
    TL_CHECK(r != NULL && r + 12 == p, "align16: B's next malloc of that height is the chunk (%p, %p)", (void *)r,
             (void *)p);
    unsigned char *g = rt_wfc_realloc(c, q, 2u * n); /* a realloc of an aligned pointer moves it */
    TL_CHECK(g != NULL && kinds.total == 0u, "align16: realloc");
    rt_wfc_free(c, g);
    rt_wfc_free(c, r);
    ctx = T_A;
    rt_wfc_flush_all(c);
    TL_CHECK(kinds.total == 0u && rt_wfc_check(c) && tree_used(c) == 0u, "align16: all back");
}

/* --- 6: records ---------------------------------------------------------------------------------------- */

/* Where the record of `token` is: the first 4-aligned place in [lo, hi) that holds the token (a
 * record's first field is its owner). */
static const unsigned char *find_owner(const unsigned char *lo, const unsigned char *hi, uintptr_t token)
{
    for (const unsigned char *at = lo; at + sizeof token <= hi; at += 4) {
        uintptr_t v;
        memcpy(&v, at, sizeof v);
        if (v == token) {
            return at;
        }
    }
    return NULL;
}

typedef struct walk_sum {
    size_t footprint, used, used_bytes;
} walk_sum_t;

static bool walk_add(void *context, const rt_block_info_t *b)
{
    walk_sum_t *s = context;
    s->footprint += b->footprint;
    if (b->used) {
        s->used++;
        s->used_bytes += b->footprint;
    }
    return true;
}

static void test_records(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    if (!TL_CHECK(c != NULL, "records: create")) {
        return;
    }
    rt_wf_t *w = rt_wfc_tree(c);
    size_t root = rt_wf_nodes(w) - 1u;
    rt_wfc_trace_t t;
    ctx = 0; /* no cache: the tree */
    size_t capacity0 = stats_of(c).capacity;
    unsigned char *p = rt_wfc_malloc_ex(c, 1, &t);
    TL_CHECK(p != NULL && t.probes == 0u && t.descents == 1u && t.cache_ops == 0u && rt_wfc_cached_bytes(c) == 0u,
             "records: token 0 mallocs from the tree: " TR_FMT, TR_ARGS(t));
    const unsigned char *ctrl_end = p - 4; /* the first leaf after the control chunk */
#define NCTX 16u
    unsigned inline_count = 0, tree_records = 0;
    unsigned char *rec_chunk = NULL; /* the first tree record's chunk (as malloc would return it) */
    uintptr_t rec_owner = 0;
    for (unsigned k = 1; k <= NCTX; k++) {
        uintptr_t token = (uintptr_t)k << 16;
        /* the leftmost free leaf, where a record of the tree would go */
        ctx = 0;
        unsigned char *leaf = rt_wfc_malloc(c, 1);
        rt_wfc_free(c, leaf);
        int rc = rt_wf_counter(w, root);
        ctx = token;
        rt_wfc_free_ex(c, p, &t); /* the context's first call: its record, then p into its cache */
        bool in_tree = t.descents == 1u;
        TL_CHECK(t.cache_ops == 1u && t.descents <= 1u && t.releases == 0u, "records: context %u's first free " TR_FMT,
                 k, TR_ARGS(t));
        TL_CHECK(rt_wf_counter(w, root) == rc - (in_tree ? 1 : 0),
                 "records: context %u: root counter %d, was %d (record %s)", k, rt_wf_counter(w, root), rc,
                 in_tree ? "in the tree" : "inline");
        if (in_tree) {
            tree_records++;
            TL_CHECK(rt_wf_counter(w, node_of(c, leaf)) == 0 && find_owner(leaf, leaf + B - 8u, token) == leaf + 4,
                     "records: context %u's record is the leftmost free leaf", k);
            if (rec_chunk == NULL) {
                rec_chunk = leaf;
                rec_owner = token;
            }
        } else {
            TL_CHECK(tree_records == 0u, "records: context %u inline after a tree record", k);
            const unsigned char *at = find_owner(arena, ctrl_end, token);
            TL_CHECK(at != NULL && ((uintptr_t)at & 63u) == 0u,
                     "records: context %u's record is a line of the control chunk", k);
            inline_count++;
        }
        unsigned char *again = rt_wfc_malloc_ex(c, 1, &t);
        TL_CHECK(again == p && t.descents == 0u && t.cache_ops == 1u, "records: context %u's malloc hits", k);
    }
    printf("records   %u records in the control chunk, then %u in the tree\n", inline_count, tree_records);
    TL_CHECK(inline_count >= 1u && tree_records >= 1u, "records: %u inline, %u in the tree", inline_count,
             tree_records);
    TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "records: check");
    ctx = 0;
    rt_stats_t s = stats_of(c);
    TL_CHECK(s.capacity == capacity0 - tree_records * B, "records: capacity %zu, expected %zu", s.capacity,
             capacity0 - tree_records * B);
    walk_sum_t ws = {0, 0, 0};
    rt_wfc_walk(c, walk_add, &ws);
    TL_CHECK(ws.footprint == s.capacity && ws.used == s.used_blocks && ws.used_bytes == s.used_bytes,
             "records: the walk (records not reported) covers %zu of %zu bytes, %zu used blocks (%zu)", ws.footprint,
             s.capacity, ws.used, s.used_blocks);

    /* a record's memory is not a block: reported, nothing changes */
    ctx = T_A;
    if (rec_chunk != NULL) {
        rt_wfc_free(c, rec_chunk);
        reported(RT_ERR_BAD_POINTER, "records: free(a tree record's chunk)");
        rt_wfc_free(c, rec_chunk + 4);
        reported(RT_ERR_BAD_POINTER, "records: free(a tree record)");
        TL_CHECK(rt_wfc_realloc(c, rec_chunk, 8) == NULL, "records: realloc of a record");
        reported(RT_ERR_BAD_POINTER, "records: realloc(a tree record's chunk)");
        TL_CHECK(rt_wfc_usable_size(c, rec_chunk) == 0u, "records: usable_size of a record");
        reported(RT_ERR_BAD_POINTER, "records: usable_size(a tree record's chunk)");
        TL_CHECK(find_owner(rec_chunk, rec_chunk + B - 8u, rec_owner) == rec_chunk + 4, "records: record intact");
    }
    /* every node of the control chunk (its handle, the slot table, the inline records) */
    size_t ctrl_nodes = (size_t)(ctrl_end - arena) / B;
    unsigned long missed = 0;
    for (size_t i = 0; i < ctrl_nodes; i++) {
        static const size_t offs[] = {4, 8, 0};
        for (size_t o = 0; o < 3u; o++) {
            if (i == 0u && offs[o] == 0u) {
                continue; /* before the tree's first word: not a pointer into a node */
            }
            kinds_reset();
            rt_wfc_free(c, arena + i * B + offs[o]);
            missed += !(kinds.total == 1u && kinds.n[RT_ERR_BAD_POINTER] == 1u);
        }
    }
    kinds_reset();
    rt_wfc_free(c, c);
    missed += !(kinds.total == 1u && kinds.n[RT_ERR_BAD_POINTER] == 1u);
    kinds_reset();
    TL_CHECK(missed == 0u, "records: %lu frees into the control chunk not reported as BAD_POINTER", missed);
    TL_CHECK(rt_wfc_check(c), "records: intact after the frees of records");
    unsigned long broken = 0;
    for (unsigned k = 1; k <= NCTX; k++) { /* every context still has its cache */
        ctx = (uintptr_t)k << 16;
        unsigned char *q = rt_wfc_malloc(c, 1);
        rt_wfc_free_ex(c, q, &t);
        broken += q == NULL || t.cache_ops != 1u;
    }
    TL_CHECK(broken == 0u && kinds.total == 0u && rt_wfc_check(c), "records: %lu contexts lost their cache", broken);

    /* two slots: the third context has no cache */
    config(&cfg);
    cfg.caches = 2;
    c = open_wfc(1u << 16, &cfg);
    unsigned H = rt_wf_height(rt_wfc_tree(c));
    ctx = T_A;
    unsigned char *a = rt_wfc_malloc_ex(c, 1, &t);
    TL_CHECK(a != NULL && t.descents == 1u && t.cache_ops == 3u, "records (2 slots): A's cache");
    ctx = T_B;
    unsigned char *b = rt_wfc_malloc_ex(c, 1, &t);
    TL_CHECK(b != NULL && t.descents == 1u && t.cache_ops == 3u, "records (2 slots): B's cache");
    size_t cached = rt_wfc_cached_bytes(c);
    ctx = T_C;
    unsigned char *cc[4];
    for (unsigned i = 0; i < 4u; i++) {
        cc[i] = rt_wfc_malloc_ex(c, 1, &t);
        TL_CHECK(cc[i] != NULL && t.descents == 1u && t.cache_ops == 0u && t.probes == 2u,
                 "records (2 slots): C's malloc %u goes to the tree: " TR_FMT, i, TR_ARGS(t));
        malloc_within(c, 1, &t, "records (2 slots): C's malloc");
    }
    rt_wfc_free_ex(c, cc[0], &t);
    TL_CHECK(t.releases == 1u && t.cache_ops == 0u && t.rmw == H + 1u && t.probes == 2u,
             "records (2 slots): C's free goes to the tree: " TR_FMT, TR_ARGS(t));
    free_within(c, 1, &t, "records (2 slots): C's free");
    rt_wfc_free_ex(c, a, &t); /* C frees A's block: to the tree */
    TL_CHECK(t.releases == 1u && rt_wfc_cached_bytes(c) == cached, "records (2 slots): nothing cached for C");
    ctx = T_A;
    rt_wfc_free_ex(c, cc[1], &t); /* A frees C's block: into A's cache */
    hit(&t, 0, 1u, "records (2 slots): A frees C's block");
    ctx = T_B;
    rt_wfc_free(c, cc[2]);
    rt_wfc_free(c, b);
    ctx = T_C;
    rt_wfc_free(c, cc[3]);
    TL_CHECK(rt_wfc_cached_bytes(c) == cached + 3u * B && rt_wfc_check(c) && kinds.total == 0u,
             "records (2 slots): intact");
    /* the tree full: C's failing malloc reads at most rt_wfc_bound's probes slots in all (the
     * header: finding the cache <= P slot reads), though it looks for a cache to flush again */
    rt_wfc_flush_all(c);
    config(&cfg);
    cfg.caches = 2;
    c = open_wfc(128u * B, &cfg);
    ctx = T_B;
    rt_wfc_free(c, rt_wfc_malloc(c, 1)); /* B takes the other slot */
    rt_wfc_flush(c);
    unsigned char *leaves[64];
    size_t nl = fill_leaves(c, leaves, 64); /* A: every leaf */
    TL_CHECK(nl == 56u, "records (2 slots, full): %zu leaves", nl);
    ctx = T_C;
    TL_CHECK(rt_wfc_malloc_ex(c, 1, &t) == NULL, "records (2 slots, full): C's malloc fails");
    malloc_within(c, 1, &t, "records (2 slots, full): C's failing malloc");
    TL_CHECK(t.probes == 2u, "records (2 slots, full): C's failing malloc read %u slots (2 slots)", t.probes);
    rt_wfc_bound_t bd;
    rt_wfc_bound(c, 2000, &bd);
    unsigned char *big = rt_wfc_malloc_ex(c, 2000, &t);
    TL_CHECK(big == NULL && t.probes <= bd.probes,
             "records (2 slots, full): C's failing malloc of an uncached height read %u slots", t.probes);

    /* token 0: never a cache, never a record */
    config(&cfg);
    c = open_wfc(1u << 16, &cfg);
    H = rt_wf_height(rt_wfc_tree(c));
    ctx = 0;
    int rc0 = rt_wf_counter(rt_wfc_tree(c), rt_wf_nodes(rt_wfc_tree(c)) - 1u);
    for (unsigned i = 0; i < 3u; i++) {
        unsigned char *z = rt_wfc_malloc_ex(c, 40, &t);
        TL_CHECK(z != NULL && t.probes == 0u && t.descents == 1u && t.cache_ops == 0u,
                 "records: token 0 malloc " TR_FMT, TR_ARGS(t));
        rt_wfc_free_ex(c, z, &t);
        TL_CHECK(t.probes == 0u && t.releases == 1u && t.cache_ops == 0u && t.rmw == H + 1u,
                 "records: token 0 free " TR_FMT, TR_ARGS(t));
    }
    TL_CHECK(rt_wf_counter(rt_wfc_tree(c), rt_wf_nodes(rt_wfc_tree(c)) - 1u) == rc0 && rt_wfc_cached_bytes(c) == 0u,
             "records: token 0 left nothing in the tree and nothing cached");
    TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "records: token 0: intact");
}

/* --- 7: statistics ------------------------------------------------------------------------------------- */

typedef struct live {
    unsigned char *p;
    size_t bytes; /* chunk bytes */
} live_t;

/* The application's view at any point, read by a context without a cache (C: its stats flush
 * nothing): used_bytes and used_blocks are the live blocks only, not what caches hold; mallocs and
 * frees are the calls the application made; free_bytes = capacity - used_bytes. */
static bool app_view(rt_wfc_t *c, const live_t *l, size_t nl, uint64_t mallocs, uint64_t frees, size_t *highest,
                     const char *what)
{
    uintptr_t keep = ctx;
    ctx = T_C;
    size_t cached = rt_wfc_cached_bytes(c);
    rt_stats_t s = stats_of(c);
    ctx = keep;
    size_t used = 0;
    for (size_t i = 0; i < nl; i++) {
        used += l[i].bytes;
    }
    *highest = used > *highest ? used : *highest;
    return TL_CHECK(
        s.used_bytes == used && s.used_blocks == nl && s.mallocs == mallocs && s.frees == frees &&
            s.free_bytes == s.capacity - s.used_bytes && s.peak_used >= *highest && rt_wfc_cached_bytes(c) == cached,
        "stats %s: used %zu (%zu) blocks %zu (%zu) mallocs %llu (%llu) frees %llu (%llu) peak %zu "
        "(>= %zu), cached %zu -> %zu",
        what, s.used_bytes, used, s.used_blocks, nl, (unsigned long long)s.mallocs, (unsigned long long)mallocs,
        (unsigned long long)s.frees, (unsigned long long)frees, s.peak_used, *highest, cached, rt_wfc_cached_bytes(c));
}

static void test_stats(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 18, &cfg);
    if (!TL_CHECK(c != NULL, "stats: create")) {
        return;
    }
    live_t l[64];
    size_t nl = 0, highest = 0;
    uint64_t mallocs = 0, frees = 0;
    ctx = T_C;
    rt_stats_t s0 = stats_of(c);
    TL_CHECK(s0.used_bytes == 0u && s0.used_blocks == 0u && s0.mallocs == 0u && s0.peak_used == 0u,
             "stats: a fresh instance");
    ctx = T_A;
    l[nl++] = (live_t){rt_wfc_malloc(c, 1), B};
    mallocs++;
    /* the tree counted A's whole batch (4 leaves): A's cache holds 3, the application 1 */
    app_view(c, l, nl, mallocs, frees, &highest, "after A's first malloc");
    rt_stats_t s = stats_of(c); /* A's stats flush A's own cache first */
    TL_CHECK(rt_wfc_cached_bytes(c) == 0u && s.used_bytes == B && s.used_blocks == 1u && s.mallocs == 1u &&
                 s.peak_used == 4u * B && s.capacity == s0.capacity,
             "stats: A's stats: A's cache flushed (%zu cached), used %zu, peak %zu (the batch of 4)",
             rt_wfc_cached_bytes(c), s.used_bytes, s.peak_used);
    highest = 4u * B; /* the peak counts what A's cache held */
    /* B: a batch of height 2 (4 x 7 nodes) */
    ctx = T_B;
    l[nl++] = (live_t){rt_wfc_malloc(c, least(2)), chunk_bytes(2)};
    mallocs++;
    app_view(c, l, nl, mallocs, frees, &highest, "after B's malloc");
    TL_CHECK(rt_wfc_cached_bytes(c) == 3u * chunk_bytes(2), "stats: B holds 3 chunks; C's stats left them");
    /* A frees B's block, B frees A's */
    ctx = T_A;
    rt_wfc_free(c, l[1].p);
    frees++;
    ctx = T_B;
    rt_wfc_free(c, l[0].p);
    frees++;
    nl = 0;
    app_view(c, l, nl, mallocs, frees, &highest, "after both frees");
    /* a short sequence: every step as the application sees it */
    tl_rng_t r = tl_rng_seed(5);
    static const uintptr_t tokens[2] = {T_A, T_B};
    for (unsigned op = 0; op < 400u; op++) {
        ctx = tokens[tl_range(&r, 0, 1)];
        if (nl > 0u && (nl == 64u || tl_chance(&r, 45))) {
            size_t i = tl_range(&r, 0, nl - 1u);
            rt_wfc_free(c, l[i].p);
            frees++;
            l[i] = l[--nl];
        } else {
            unsigned h = (unsigned)tl_range(&r, 0, 4);
            unsigned char *p = rt_wfc_malloc(c, least(h));
            if (!TL_CHECK(p != NULL, "stats: malloc of height %u", h)) {
                break;
            }
            l[nl++] = (live_t){p, chunk_bytes(h)};
            mallocs++;
        }
        if (!app_view(c, l, nl, mallocs, frees, &highest, "sequence")) {
            break;
        }
    }
    walk_sum_t ws = {0, 0, 0};
    ctx = T_C;
    rt_wfc_walk(c, walk_add, &ws); /* cached chunks are free blocks there */
    s = stats_of(c);
    TL_CHECK(ws.used == nl && ws.used_bytes == s.used_bytes && ws.footprint == s.capacity,
             "stats: the walk: %zu used blocks (%zu), %zu used bytes (%zu)", ws.used, nl, ws.used_bytes, s.used_bytes);
    TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "stats: intact");
}

/* --- 8: bad input ------------------------------------------------------------------------------------- */

/* Live pointers handed out, to catch one handed out twice. */
typedef struct handed {
    unsigned char *p[256];
    size_t n;
    unsigned long twice;
} handed_t;

static void handed_add(handed_t *h, unsigned char *p)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < h->n; i++) {
        if (h->p[i] == p) {
            h->twice++;
            return;
        }
    }
    if (h->n < 256u) {
        h->p[h->n++] = p;
    }
}

static void handed_remove(handed_t *h, const unsigned char *p)
{
    for (size_t i = 0; i < h->n; i++) {
        if (h->p[i] == p) {
            h->p[i] = h->p[--h->n];
            return;
        }
    }
}

static void bad_double_free(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    ctx = T_A;
    unsigned char *p = rt_wfc_malloc(c, 40); /* A keeps 3 */
    rt_wfc_free(c, p);                       /* p on top of A's list */
    size_t cb = rt_wfc_cached_bytes(c);
    TL_CHECK(cb == 4u * B, "double free: 4 cached");
    rt_wfc_trace_t t;
    rt_wfc_free_ex(c, p, &t);
    reported(RT_ERR_DOUBLE_FREE, "double free of a cached chunk");
    TL_CHECK(t.cache_ops == 0u && rt_wfc_cached_bytes(c) == cb, "double free: not cached twice");
    ctx = T_B;
    rt_wfc_free(c, p);
    reported(RT_ERR_DOUBLE_FREE, "double free of a chunk cached by another context");
    TL_CHECK(rt_wfc_cached_bytes(c) == cb, "double free by B: not cached");
    ctx = T_A;
    TL_CHECK(rt_wfc_realloc(c, p, 10) == NULL, "realloc of a cached chunk (in place)");
    reported(RT_ERR_DOUBLE_FREE, "realloc(cached chunk, 10)");
    TL_CHECK(rt_wfc_realloc(c, p, 1000) == NULL, "realloc of a cached chunk (moving)");
    reported(RT_ERR_DOUBLE_FREE, "realloc(cached chunk, 1000)");
    TL_CHECK(rt_wfc_usable_size(c, p) == 0u, "usable_size of a cached chunk");
    reported(RT_ERR_DOUBLE_FREE, "usable_size(cached chunk)");
    TL_CHECK(rt_wfc_cached_bytes(c) == cb && rt_wfc_check(c), "double free: the cache as it was");
    unsigned char *q1 = rt_wfc_malloc(c, 40), *q2 = rt_wfc_malloc(c, 40);
    TL_CHECK(q1 == p && q2 != NULL && q2 != p, "double free: two mallocs return different chunks");
    TL_CHECK(rt_wfc_usable_size(c, q1) == rt_wf_usable(B, 0) && kinds.total == 0u, "double free: p live again");
    /* after the chunk went back to the tree (flushed): still refused */
    rt_wfc_free(c, q1);
    rt_wfc_flush(c);
    rt_wfc_free(c, q1);
    reported(RT_ERR_DOUBLE_FREE, "double free of a chunk flushed to the tree");
    TL_CHECK(rt_wfc_check(c), "double free: intact");
}

static void bad_pointers(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    ctx = T_A;
    size_t nb = 400; /* height 2 */
    unsigned char *big = rt_wfc_malloc(c, nb);
    unsigned char *small = rt_wfc_malloc(c, 40);
    tl_fill(big, nb, 11);
    tl_fill(small, 40, 12);
    size_t cb = rt_wfc_cached_bytes(c);
    static const size_t interior[] = {1, 2, 4, 8, 12, 60, 64, 68, 128, 132, 196, 260, 392};
    for (size_t i = 0; i < sizeof interior / sizeof interior[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "free(p + %zu)", interior[i]);
        rt_wfc_free(c, big + interior[i]);
        reported(RT_ERR_BAD_POINTER, what);
    }
    rt_wfc_free(c, small + 4);
    reported(RT_ERR_BAD_POINTER, "free(small + 4)");
    TL_CHECK(rt_wfc_realloc(c, big + 64, 10) == NULL, "realloc of an interior pointer");
    reported(RT_ERR_BAD_POINTER, "realloc(p + 64)");
    char local[16];
    static char other[64];
    void *const foreign[] = {local + 4, other + 4, arena + (1u << 16) + 4u, arena + (1u << 17) + 68u};
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        rt_wfc_free(c, foreign[i]);
        reported(RT_ERR_FOREIGN_POINTER, "free(foreign)");
    }
    TL_CHECK(rt_wfc_usable_size(c, other + 4) == 0u, "usable_size(foreign)");
    reported(RT_ERR_FOREIGN_POINTER, "usable_size(foreign)");
    TL_CHECK(rt_wfc_cached_bytes(c) == cb && rt_wfc_check(c), "bad pointers: nothing cached, intact");
    TL_CHECK(tl_verify(big, nb, 11) == nb && tl_verify(small, 40, 12) == 40u, "bad pointers: the blocks untouched");
    rt_wfc_free(c, big);
    rt_wfc_free(c, small);
    TL_CHECK(kinds.total == 0u && rt_wfc_check(c), "bad pointers: the blocks free normally");
}

/* A use-after-free write of 4 bytes into the data of a cached chunk (its link); then of its length
 * word. The pop of the damaged chunk reports (its mark is bound to the link written beside it)
 * and drops the list: its chunks stay live in the tree (lost), so rt_wfc_check passes again once
 * the list is dropped. */
static void bad_use_after_free(void)
{
    tl_rng_t r = tl_rng_seed(0xBADu);
    unsigned long cases = 0;
    for (unsigned round = 0; round < 8u; round++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        static handed_t h;
        memset(&h, 0, sizeof h);
        ctx = T_A;
        unsigned char *p0 = rt_wfc_malloc(c, 1);                          /* A keeps p1, p2, p3 */
        unsigned char *p1 = p0 + B, *p2 = p0 + 3u * B, *p3 = p0 + 4u * B; /* leaves 15, 16, 18, 19 */
        rt_wfc_free(c, p0);                                               /* list: p0 p1 p2 p3 */
        /* 4 arbitrary bytes into p1's first data word, its link (the mark, the next word, is
         * bad_mark's) */
        unsigned char was[4], now[4];
        memcpy(was, p1, 4);
        uint32_t x = (uint32_t)tl_next(&r);
        memcpy(now, &x, 4);
        if (memcmp(was, now, 4) == 0) {
            continue;
        }
        cases++;
        memcpy(p1, now, 4);
        TL_CHECK(!rt_wfc_check(c), "use after free: check walks the damaged list");
        reported(RT_ERR_CORRUPTED, "use after free: check");
        rt_wfc_trace_t t;
        unsigned char *a = rt_wfc_malloc(c, 1);
        TL_CHECK(a == p0 && kinds.total == 0u, "use after free: the chunk above the damage pops");
        handed_add(&h, a);
        unsigned char *d = rt_wfc_malloc_ex(c, 1, &t); /* reaches the damaged link */
        reported(RT_ERR_CORRUPTED, "use after free: the pop that reaches the damage");
        TL_CHECK(d != NULL && d != p1 && d != p2 && d != p3 && t.descents == 1u,
                 "use after free: the list dropped, a fresh batch: " TR_FMT, TR_ARGS(t));
        handed_add(&h, d);
        TL_CHECK(rt_wfc_cached_bytes(c) == 3u * B, "use after free: p1, p2, p3 no longer counted as cached");
        TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "use after free: check passes after the drop");
        /* the lost chunks are never handed out; freeing them is a double free */
        rt_wfc_free(c, p2);
        reported(RT_ERR_DOUBLE_FREE, "use after free: free of a dropped chunk");
        for (unsigned op = 0; op < 300u; op++) {
            ctx = tl_chance(&r, 50) ? T_A : T_B;
            if (h.n > 0u && tl_chance(&r, 45)) {
                size_t i = tl_range(&r, 0, h.n - 1u);
                unsigned char *q = h.p[i];
                handed_remove(&h, q);
                rt_wfc_free(c, q);
            } else {
                unsigned char *q = rt_wfc_malloc(c, 1);
                h.twice += q == p1 || q == p2 || q == p3;
                handed_add(&h, q);
            }
        }
        TL_CHECK(h.twice == 0u, "use after free: %lu pointers handed out twice", h.twice);
        while (h.n > 0u) {
            unsigned char *q = h.p[0];
            handed_remove(&h, q);
            rt_wfc_free(c, q);
        }
        rt_wfc_flush_all(c);
        TL_CHECK(kinds.total == 0u && rt_wfc_check(c) && tree_used(c) == 3u * B,
                 "use after free: at the end only p1, p2 and p3 are lost (%zu bytes used, %lu reports)", tree_used(c),
                 kinds.total);
    }
    TL_CHECK(cases > 0u, "use after free: no case ran");

    /* the length word of the chunk on top of the list (an underrun of the chunk before it) */
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    ctx = T_A;
    unsigned char *x0 = rt_wfc_malloc(c, 1);
    rt_wfc_free(c, x0); /* list: x0 x1 x2 x3 */
    uint32_t len;
    memcpy(&len, x0 - 4, 4);
    uint32_t bad = len ^ 0x00010000u;
    memcpy(x0 - 4, &bad, 4);
    unsigned char *y = rt_wfc_malloc(c, 1);
    reported(RT_ERR_CORRUPTED, "length word of a cached chunk");
    TL_CHECK(y != NULL && (y < x0 || y > x0 + 4u * B), "length word: none of the dropped list handed out");
    TL_CHECK(!rt_wfc_check(c), "length word: check sees the damaged word (a live chunk's)");
    kinds_reset();
    rt_wfc_free(c, x0);
    reported(RT_ERR_BAD_POINTER, "length word: free of the chunk");
    memcpy(x0 - 4, &len, 4);
    TL_CHECK(rt_wfc_check(c), "length word restored: intact (the dropped chunks stay live)");
    rt_wfc_free(c, x0);
    reported(RT_ERR_DOUBLE_FREE, "length word restored: the chunk is still marked cached");
    rt_wfc_free(c, y);
    rt_wfc_flush_all(c);
    TL_CHECK(tree_used(c) == 4u * B && kinds.total == 0u, "length word: the 4 chunks of the list lost");
}

/* A write into a cached chunk's second data word (its cache's mark), or a list head redirected to
 * a chunk another cache holds: the pop of that very chunk reports CORRUPTED and drops the list;
 * the chunk is never handed out twice. */
static void bad_mark(void)
{
    tl_rng_t r = tl_rng_seed(0x3A4Bu);
    for (unsigned round = 0; round < 8u; round++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        ctx = T_A;
        unsigned char *p0 = rt_wfc_malloc(c, 1); /* A's list: p1 p2 p3 */
        unsigned char *p1 = p0 + B;
        uint32_t was = 0, now = (uint32_t)tl_next(&r);
        memcpy(&was, p1 + 4, 4);
        if (was == now) {
            continue;
        }
        memcpy(p1 + 4, &now, 4);
        rt_wfc_trace_t t;
        unsigned char *a = rt_wfc_malloc_ex(c, 1, &t);
        reported(RT_ERR_CORRUPTED, "mark: the pop of the marked chunk");
        TL_CHECK(a != NULL && a != p1 && t.descents == 1u, "mark: dropped, a fresh batch: " TR_FMT, TR_ARGS(t));
        TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "mark: check passes after the drop");
        rt_wfc_free(c, a);
        rt_wfc_free(c, p0);
        rt_wfc_flush_all(c);
        TL_CHECK(tree_used(c) == 3u * B, "mark: p1, p2, p3 lost (%zu bytes used)", tree_used(c));
    }
    /* B's head redirected to a chunk A holds in its cache: refused, never handed out twice */
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    ctx = T_A;
    unsigned char *pa = rt_wfc_malloc(c, 1); /* A caches 3 */
    ctx = T_B;
    unsigned char *pb = rt_wfc_malloc(c, 1); /* B caches 3 */
    (void)pb;
    /* both caches hold chunks of height 0; A's second chunk is pa + B: swap it in as B's top by
     * a forged free of the same memory through B (a double free: refused) */
    rt_wfc_free(c, pa + B);
    reported(RT_ERR_DOUBLE_FREE, "mark: a chunk A caches, freed by B");
    TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "mark: both caches intact");
}

/* A cached chunk's link (and its mark) copied into another cached chunk -- of the same list, or of
 * another cache's: the link verifies only where it was written, so the pop of the chunk holding
 * the copy reports CORRUPTED and drops the list (the chunks above it pop as before); nothing is
 * handed out twice. With links keyed by their chunk alone the copy would pop, and the list go on
 * where the copied link leads. */
static void bad_copied_link(void)
{
    static const struct {
        unsigned bytes; /* 4: the link; 8: the link and its mark */
        bool other;     /* copied from a chunk of B's cache, else from p2 of the same list */
    } cases[] = {{4, false}, {8, false}, {4, true}, {8, true}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        ctx = T_B;
        unsigned char *b0 = rt_wfc_malloc(c, 1); /* B's list: b1 b2 b3 */
        ctx = T_A;
        unsigned char *p0 = rt_wfc_malloc(c, 1); /* A keeps p1 p2 p3 */
        unsigned char *p1 = p0 + B, *p2 = p0 + 3u * B;
        rt_wfc_free(c, p0); /* A's list: p0 p1 p2 p3 */
        const unsigned char *from = cases[k].other ? b0 + B : p2;
        memcpy(p1, from, cases[k].bytes);
        TL_CHECK(!rt_wfc_check(c), "copied link %zu: check walks the list to it", k);
        reported(RT_ERR_CORRUPTED, "copied link: check");
        static handed_t h;
        memset(&h, 0, sizeof h);
        rt_wfc_trace_t t;
        unsigned char *a = rt_wfc_malloc(c, 1);
        TL_CHECK(a == p0 && kinds.total == 0u, "copied link %zu: the chunk above it pops", k);
        handed_add(&h, a);
        unsigned char *d = rt_wfc_malloc_ex(c, 1, &t);
        reported(RT_ERR_CORRUPTED, "copied link: the pop of the chunk holding the copy");
        TL_CHECK(d != NULL && d != p1 && d != p2 && d != p0 + 4u * B && t.descents == 1u,
                 "copied link %zu: the list dropped, a fresh batch: " TR_FMT, k, TR_ARGS(t));
        handed_add(&h, d);
        for (unsigned op = 0; op < 64u; op++) {
            handed_add(&h, rt_wfc_malloc(c, 1));
        }
        TL_CHECK(h.twice == 0u, "copied link %zu: %lu pointers handed out twice", k, h.twice);
        for (size_t i = 0; i < h.n; i++) {
            TL_CHECK(h.p[i] != p1 && h.p[i] != p2 && h.p[i] != p0 + 4u * B && (h.p[i] < b0 || h.p[i] > b0 + 4u * B),
                     "copied link %zu: %p handed out from a dropped or another cache's list", k, (void *)h.p[i]);
            rt_wfc_free(c, h.p[i]);
        }
        TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "copied link %zu: intact after the drop", k);
    }
}

/* Two instances over one buffer, one after the other (a new create: a new generation). What the
 * first left in memory must not verify in the second, although it lies where the second puts the
 * same structures: (1) the link and mark of a cached chunk, written back into the chunk at the
 * same place in the same list of the second instance -- the pop reports CORRUPTED; (2) a pointer
 * of the first instance into memory the second hands out as part of a larger block, whose bytes
 * (the application's data) still hold the old chunk's length word, counter and canary -- its free
 * is BAD_POINTER and changes nothing. Both would verify if a create over the same buffer reused
 * the previous key. */
static void bad_stale_generation(void)
{
    /* (1) the stale link */
    for (unsigned gen = 0; gen < 4u; gen++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        ctx = T_A;
        unsigned char *p0 = rt_wfc_malloc(c, 1); /* A's list: p1 p2 p3 */
        unsigned char *p1 = p0 + B;
        unsigned char old[8];
        memcpy(old, p1, sizeof old);              /* p1's link (to p2) and mark */
        c = rt_wfc_create(arena, 1u << 16, &cfg); /* a new generation, without wiping the buffer */
        rt_wfc_set_handler(c, on_error, &kinds);
        unsigned char *q0 = rt_wfc_malloc(c, 1);
        TL_CHECK(q0 == p0 && rt_wfc_check(c) && kinds.total == 0u, "stale link: the same placement again");
        TL_CHECK(memcmp(p1, old, sizeof old) != 0,
                 "stale link (round %u): the new instance wrote the same link and "
                 "mark at p1 as the previous one (the same key)",
                 gen);
        memcpy(p1, old, sizeof old);
        rt_wfc_trace_t t;
        unsigned char *d = rt_wfc_malloc_ex(c, 1, &t);
        reported(RT_ERR_CORRUPTED, "stale link: the pop of the chunk holding it");
        TL_CHECK(d != NULL && d != p1 && d != p0 + 3u * B && d != p0 + 4u * B && t.descents == 1u,
                 "stale link: the list dropped, a fresh batch: " TR_FMT, TR_ARGS(t));
        TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "stale link: intact after the drop");
    }
    /* (2) the stale pointer: refills of one chunk (batch 0) so that the second instance's 948-byte
     * block (height 3) covers the first instance's leaves; every height is a cached one */
    for (unsigned gen = 0; gen < 4u; gen++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        cfg.batch_log2 = 0;
        rt_wfc_t *c = open_wfc(1u << 16, &cfg);
        ctx = T_A;
        unsigned char *a = rt_wfc_malloc(c, 1), *b = rt_wfc_malloc(c, 1);
        TL_CHECK(a != NULL && b == a + B, "stale pointer: two leaves side by side");
        unsigned char old[B];
        memcpy(old, b - 4, sizeof old); /* b's node: its length word, data, canary, counter */
        c = rt_wfc_create(arena, 1u << 16, &cfg);
        rt_wfc_set_handler(c, on_error, &kinds);
        unsigned char *q = rt_wfc_malloc(c, rt_wf_usable(B, 3));
        TL_CHECK(q == a, "stale pointer: the new block %p starts where the old leaf %p did", (void *)q, (void *)a);
        memcpy(b - 4, old, sizeof old); /* the application's data: a copy of old memory */
        size_t cb = rt_wfc_cached_bytes(c), used = tree_used(c);
        rt_wfc_trace_t t;
        rt_wfc_free_ex(c, b, &t);
        reported(RT_ERR_BAD_POINTER, "stale pointer: free of a pointer of the previous instance");
        TL_CHECK(t.cache_ops == 0u && t.releases == 0u && rt_wfc_cached_bytes(c) == cb && tree_used(c) == used &&
                     rt_wfc_check(c) && kinds.total == 0u,
                 "stale pointer (round %u): the free changed something: " TR_FMT, gen, TR_ARGS(t));
        ctx = T_B;
        rt_wfc_free(c, b);
        reported(RT_ERR_BAD_POINTER, "stale pointer: freed by another context");
        ctx = T_A;
        for (unsigned n = 0; n < 32u; n++) {
            unsigned char *x = rt_wfc_malloc(c, 1);
            TL_CHECK(x == NULL || x < q - 4 || x >= q - 4 + chunk_bytes(3), "stale pointer: %p inside the live block",
                     (void *)x);
        }
        rt_wfc_free(c, q);
        TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "stale pointer: intact");
    }
}

/* An overrun of a live chunk into its canary: free refuses (the chunk is not cached), realloc and
 * usable_size too; restored, it frees into the cache. */
static void bad_overrun(void)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    rt_wfc_t *c = open_wfc(1u << 16, &cfg);
    for (unsigned s = 0; s < 3u; s++) {
        ctx = T_A;
        unsigned char *v = rt_wfc_malloc(c, least(s));
        size_t u = rt_wfc_usable_size(c, v);
        TL_CHECK(u == rt_wf_usable(B, s), "overrun: usable %zu", u);
        unsigned char keep = v[u];
        v[u] = (unsigned char)(keep ^ 0x80u);
        size_t cb = rt_wfc_cached_bytes(c);
        rt_wfc_trace_t t;
        rt_wfc_free_ex(c, v, &t);
        reported(RT_ERR_CORRUPTED, "overrun: free");
        TL_CHECK(t.cache_ops == 0u && t.releases == 0u && rt_wfc_cached_bytes(c) == cb && is_chunk(c, v, s),
                 "overrun: the chunk is neither cached nor released");
        ctx = T_B; /* another context's free: refused as well */
        rt_wfc_free(c, v);
        reported(RT_ERR_CORRUPTED, "overrun: free by another context");
        TL_CHECK(rt_wfc_realloc(c, v, 2000) == NULL, "overrun: realloc");
        reported(RT_ERR_CORRUPTED, "overrun: realloc");
        TL_CHECK(rt_wfc_usable_size(c, v) == 0u, "overrun: usable_size");
        reported(RT_ERR_CORRUPTED, "overrun: usable_size");
        TL_CHECK(!rt_wfc_check(c), "overrun: check sees the canary");
        reported(RT_ERR_CORRUPTED, "overrun: check");
        v[u] = keep;
        rt_wfc_free_ex(c, v, &t);
        TL_CHECK(kinds.total == 0u && t.cache_ops == 1u && rt_wfc_cached_bytes(c) == cb + chunk_bytes(s),
                 "overrun: restored, the chunk frees into B's cache");
        TL_CHECK(rt_wfc_check(c), "overrun: intact");
    }
}

static void test_bad_input(void)
{
    bad_double_free();
    bad_pointers();
    bad_use_after_free();
    bad_mark();
    bad_copied_link();
    bad_stale_generation();
    rt_set_entropy(tl_entropy_constant, NULL); /* both lives draw the same key: create moves it */
    bad_stale_generation();
    rt_set_entropy(NULL, NULL);
    bad_overrun();
    kinds_reset();
}

/* --- 9: configuration --------------------------------------------------------------------------------- */

static void test_config(void)
{
    rt_wfc_config_t def;
    rt_wfc_default_config(&def);
    TL_CHECK(def.node_size == RT_WF_NODE_SIZE && def.tree_flags == (RT_WF_HINTS | RT_WF_LAZY_REINIT) &&
                 def.heights == RT_WFC_MAX_HEIGHTS && def.batch_log2 == 2u && def.capacity == 8u &&
                 def.caches == RT_WFC_MAX_CACHES,
             "config: the documented defaults");
    typedef struct bad_cfg {
        const char *what;
        unsigned heights, batch, capacity, caches;
        size_t node;
        unsigned flags;
    } bad_cfg_t;
    static const bad_cfg_t bad[] = {
        {"heights 5", RT_WFC_MAX_HEIGHTS + 1u, 2, 8, 64, 64, 0},
        {"heights 31", 31, 2, 8, 64, 64, 0},
        {"batch 4", 4, RT_WFC_MAX_BATCH + 1u, 255, 64, 64, 0},
        {"capacity 0", 4, 0, 0, 64, 64, 0},
        {"capacity 256", 4, 2, 256, 64, 64, 0},
        {"capacity 2 < 2^2 - 1", 4, 2, 2, 64, 64, 0},
        {"capacity 6 < 2^3 - 1", 4, 3, 6, 64, 64, 0},
        {"capacity 0, batch 1", 4, 1, 0, 64, 64, 0},
        {"caches 0", 4, 2, 8, 0, 64, 0},
        {"caches 3", 4, 2, 8, 3, 64, 0},
        {"caches 48", 4, 2, 8, 48, 64, 0},
        {"caches 128", 4, 2, 8, RT_WFC_MAX_CACHES * 2u, 64, 0},
        {"node size 48", 4, 2, 8, 64, 48, 0},
        {"node size 8", 4, 2, 8, 64, 8, 0},
        {"node size 8192", 4, 2, 8, 64, 8192, 0},
        {"tree flags 0x80", 4, 2, 8, 64, 64, 0x80u},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        cfg.heights = bad[i].heights;
        cfg.batch_log2 = bad[i].batch;
        cfg.capacity = bad[i].capacity;
        cfg.caches = bad[i].caches;
        cfg.node_size = bad[i].node;
        cfg.tree_flags = bad[i].flags;
        TL_CHECK(rt_wfc_create(arena, sizeof arena, &cfg) == NULL, "config: %s accepted", bad[i].what);
        TL_CHECK(rt_wfc_min_buffer(&cfg) == SIZE_MAX, "config: min_buffer of %s", bad[i].what);
    }
    static const bad_cfg_t good[] = {
        {"defaults", 4, 2, 8, 64, 64, RT_WF_HINTS | RT_WF_LAZY_REINIT},
        {"no cached heights", 0, 2, 8, 64, 64, 0},
        {"capacity 3 = 2^2 - 1", 4, 2, 3, 64, 64, RT_WF_HINTS},
        {"capacity 7, batch 3", 4, 3, 7, 1, 64, RT_WF_READONLY_DESCENT},
        {"capacity 1, batch 1", 2, 1, 1, 2, 64, RT_WF_LAZY_REINIT},
        {"capacity 1, batch 0", 1, 0, 1, 64, 64, 0},
        {"capacity 255", 4, 3, 255, 32, 64, RT_WF_HINTS | RT_WF_LAZY_REINIT},
        {"node size 16", 4, 2, 8, 64, 16, RT_WF_HINTS | RT_WF_LAZY_REINIT},
        {"node size 32", 4, 2, 8, 64, 32, RT_WF_HINTS | RT_WF_LAZY_REINIT},
        {"node size 128", 4, 2, 8, 64, 128, RT_WF_HINTS | RT_WF_LAZY_REINIT},
        {"node size 1024", 4, 2, 8, 64, 1024, 0},
        {"node size 4096", 4, 2, 8, 64, 4096, RT_WF_HINTS | RT_WF_LAZY_REINIT},
    };
    static const size_t mis[] = {0, 1, 4, 8, 33, 63};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        rt_wfc_config_t cfg;
        config(&cfg);
        cfg.heights = good[i].heights;
        cfg.batch_log2 = good[i].batch;
        cfg.capacity = good[i].capacity;
        cfg.caches = good[i].caches;
        cfg.node_size = good[i].node;
        cfg.tree_flags = good[i].flags;
        size_t min = rt_wfc_min_buffer(&cfg);
        if (!TL_CHECK(min != SIZE_MAX && min + 64u <= sizeof arena, "config: %s: min_buffer %zu", good[i].what, min)) {
            continue;
        }
        for (size_t m = 0; m < sizeof mis / sizeof mis[0]; m++) {
            memset(arena, 0xA5, min + 64u);
            rt_wfc_t *c = rt_wfc_create(arena + mis[m], min, &cfg);
            if (!TL_CHECK(c != NULL, "config: %s: create over min_buffer (%zu) at +%zu", good[i].what, min, mis[m])) {
                continue;
            }
            rt_wfc_set_handler(c, on_error, &kinds);
            kinds_reset();
            rt_wfc_config_t got;
            rt_wfc_get_config(c, &got);
            TL_CHECK(got.node_size == good[i].node && got.tree_flags == good[i].flags &&
                         got.heights == good[i].heights && got.batch_log2 == good[i].batch &&
                         got.capacity == good[i].capacity && got.caches == good[i].caches &&
                         got.self == (good[i].heights != 0u ? self_hook : NULL) && got.self_context == (void *)&ctx,
                     "config: %s: get_config", good[i].what);
            /* the smallest tree works: the smallest and the largest block, from two contexts one
             * after the other (each gives its cache back: the tree has room for one batch) */
            size_t maxr = rt_wfc_max_request(c);
            bool got_both = maxr == rt_wf_max_request(rt_wfc_tree(c));
            for (unsigned k = 0; k < 2u; k++) {
                ctx = k == 0u ? T_A : T_B;
                size_t n = k == 0u ? 1u : maxr;
                unsigned char *p = rt_wfc_malloc(c, n);
                got_both = got_both && p != NULL;
                if (p != NULL) {
                    memset(p, 0x33, n);
                }
                rt_wfc_free(c, p);
                rt_wfc_flush(c);
            }
            TL_CHECK(got_both, "config: %s at +%zu: malloc(1) and malloc(max_request %zu)", good[i].what, mis[m], maxr);
            TL_CHECK(rt_wfc_malloc(c, maxr + 1u) == NULL, "config: malloc(max_request + 1)");
            reported(RT_ERR_TOO_LARGE, "config: malloc(max_request + 1)");
            TL_CHECK(rt_wfc_check(c) && kinds.total == 0u, "config: %s at +%zu: check", good[i].what, mis[m]);
            rt_wfc_flush_all(c);
            TL_CHECK(tree_used(c) == 0u, "config: %s: empty after flush_all", good[i].what);
        }
        /* exact: one byte less does not fit at the worst misalignment (1 past the alignment) */
        TL_CHECK(rt_wfc_create(arena + 1, min - 1u, &cfg) == NULL, "config: %s: min_buffer - 1 at +1 accepted",
                 good[i].what);
    }
    TL_CHECK(rt_wfc_min_buffer(NULL) == rt_wfc_min_buffer(&def), "config: min_buffer(NULL) is the defaults'");
    TL_CHECK(rt_wfc_create(NULL, sizeof arena, NULL) == NULL, "config: NULL memory");
    rt_wfc_t *c = rt_wfc_create(arena, sizeof arena, NULL);
    rt_wfc_config_t got;
    if (TL_CHECK(c != NULL, "config: create with the NULL configuration")) {
        rt_wfc_get_config(c, &got);
        TL_CHECK(got.caches == def.caches && got.capacity == def.capacity && got.self == def.self,
                 "config: NULL configuration = defaults");
    }
}

/* --- 10: a random sequence ------------------------------------------------------------------------------ */

#define RMAX 200u

typedef struct rblock {
    unsigned char *p;
    size_t n;     /* bytes requested (filled with the block's pattern) */
    size_t hsize; /* a size whose height is the chunk's (the free's bound) */
    uint64_t id;
} rblock_t;

typedef struct rstate {
    rt_wfc_t *c;
    unsigned char *lo, *hi;
    rblock_t b[RMAX];
    size_t n;
    uint64_t next_id, mallocs, frees;
    unsigned long overlaps, outside, damaged, beyond, not_zero;
} rstate_t;

static void r_add(rstate_t *st, unsigned char *p, size_t n, size_t hsize, bool zero)
{
    if (p < st->lo || p + n > st->hi) {
        st->outside++;
        return;
    }
    for (size_t i = 0; i < st->n; i++) {
        if (p < st->b[i].p + st->b[i].n && st->b[i].p < p + n) {
            st->overlaps++;
            return;
        }
    }
    if (zero) {
        for (size_t k = 0; k < n; k++) {
            st->not_zero += p[k] != 0u;
        }
    }
    rblock_t *b = &st->b[st->n++];
    *b = (rblock_t){p, n, hsize, st->next_id++};
    tl_fill(p, n, b->id);
}

typedef struct rvariant {
    const char *name;
    size_t node;
    unsigned flags, heights, batch, capacity, caches;
    bool token0; /* the third context is token 0 */
} rvariant_t;

static void random_run(const rvariant_t *v, uint64_t seed)
{
    rt_wfc_config_t cfg;
    config(&cfg);
    cfg.node_size = v->node;
    cfg.tree_flags = v->flags;
    cfg.heights = v->heights;
    cfg.batch_log2 = v->batch;
    cfg.capacity = v->capacity;
    cfg.caches = v->caches;
    static rstate_t st;
    memset(&st, 0, sizeof st);
    size_t bytes = v->node << 12; /* height 11 (10 for 128-byte nodes) */
    if (bytes > sizeof arena) {
        bytes = sizeof arena;
    }
    st.c = open_wfc(bytes, &cfg);
    if (!TL_CHECK(st.c != NULL, "random %s: create", v->name)) {
        return;
    }
    rt_wfc_t *c = st.c;
    st.lo = arena;
    st.hi = arena + bytes;
    st.next_id = 1;
    const uintptr_t tokens[3] = {T_A, T_B, v->token0 ? 0u : T_C};
    tl_rng_t r = tl_rng_seed(seed);
    size_t maxr = rt_wfc_max_request(c);
    size_t top = rt_wf_usable(v->node, 3); /* the largest default cached height */
    unsigned long checks_failed = 0, nulls = 0;
    unsigned ops = 3000;
    for (unsigned op = 0; op < ops; op++) {
        if (tl_chance(&r, 20)) {
            ctx = tokens[tl_range(&r, 0, 2)];
        }
        unsigned pick = (unsigned)tl_range(&r, 0, 99);
        rt_wfc_trace_t t;
        if (st.n > 0u && (st.n == RMAX || pick < 36u)) {
            size_t i = tl_range(&r, 0, st.n - 1u);
            rblock_t blk = st.b[i];
            st.damaged += tl_verify(blk.p, blk.n, blk.id) != blk.n;
            rt_wfc_free_ex(c, blk.p, &t);
            rt_wfc_bound_t bd;
            rt_wfc_bound(c, blk.hsize, &bd);
            st.beyond += t.nodes > bd.free_nodes || t.rmw > bd.free_rmw || t.probes > bd.probes;
            st.frees++;
            st.b[i] = st.b[--st.n];
        } else if (pick < 80u) {
            size_t n = tl_chance(&r, 80) ? tl_range(&r, 1, top) : tl_range(&r, top + 1u, maxr / 16u);
            unsigned char *p = rt_wfc_malloc_ex(c, n, &t);
            rt_wfc_bound_t bd;
            rt_wfc_bound(c, n, &bd);
            st.beyond += t.nodes > bd.malloc_nodes || t.rmw > bd.malloc_rmw || t.probes > bd.probes;
            if (p != NULL) {
                st.mallocs++;
                r_add(&st, p, n, n, false);
            } else {
                nulls++;
            }
        } else if (pick < 88u) {
            if (st.n == 0u) {
                continue;
            }
            size_t i = tl_range(&r, 0, st.n - 1u);
            rblock_t blk = st.b[i];
            size_t n = tl_chance(&r, 50) ? tl_range(&r, 1, blk.n) : tl_range(&r, blk.n, 2u * blk.n + 100u);
            n = n > maxr ? maxr : n;
            st.damaged += tl_verify(blk.p, blk.n, blk.id) != blk.n;
            unsigned char *q = rt_wfc_realloc(c, blk.p, n);
            if (q == NULL) {
                nulls++;
                continue; /* the old block stays */
            }
            size_t keep = blk.n < n ? blk.n : n;
            st.damaged += tl_verify(q, keep, blk.id) != keep;
            st.b[i] = st.b[--st.n];
            if (q != blk.p) {
                st.mallocs++;
                st.frees++;
            }
            r_add(&st, q, n, q != blk.p ? n : blk.hsize, false);
        } else if (pick < 93u) {
            size_t n = tl_range(&r, 1, top);
            unsigned char *p = rt_wfc_calloc(c, 1, n);
            if (p != NULL) {
                st.mallocs++;
                r_add(&st, p, n, n, true);
            } else {
                nulls++;
            }
        } else if (pick < 97u) {
            size_t a = (size_t)8 << tl_range(&r, 0, 5);
            size_t n = tl_range(&r, 1, top);
            unsigned char *p = rt_wfc_memalign(c, a, n);
            if (p != NULL) {
                st.outside += ((uintptr_t)p & (a - 1u)) != 0u;
                st.mallocs++;
                r_add(&st, p, n, n + a - 4u, false);
            } else {
                nulls++;
            }
        } else if (pick < 99u) {
            rt_wfc_flush(c);
        } else {
            rt_stats_t s = stats_of(c); /* flushes the caller's cache */
            checks_failed += s.mallocs != st.mallocs || s.frees != st.frees || s.used_blocks != st.n;
        }
        if (op % 20u == 0u) {
            checks_failed += !rt_wfc_check(c);
        }
    }
    checks_failed += !rt_wfc_check(c);
    size_t cached = rt_wfc_cached_bytes(c);
    while (st.n > 0u) {
        rblock_t blk = st.b[--st.n];
        st.damaged += tl_verify(blk.p, blk.n, blk.id) != blk.n;
        rt_wfc_free(c, blk.p);
        st.frees++;
    }
    checks_failed += !rt_wfc_check(c);
    rt_wfc_flush_all(c);
    ctx = T_C;
    rt_stats_t s = stats_of(c);
    TL_CHECK(st.overlaps == 0u && st.outside == 0u && st.damaged == 0u && st.not_zero == 0u,
             "random %s: %lu overlaps, %lu outside or misaligned, %lu damaged, %lu calloc bytes not zero", v->name,
             st.overlaps, st.outside, st.damaged, st.not_zero);
    TL_CHECK(st.beyond == 0u, "random %s: %lu calls beyond their bound", v->name, st.beyond);
    TL_CHECK(checks_failed == 0u && kinds.total == 0u, "random %s: %lu checks failed, %lu reports", v->name,
             checks_failed, kinds.total);
    TL_CHECK(rt_wfc_check(c) && rt_wfc_cached_bytes(c) == 0u && tree_used(c) == 0u && s.used_bytes == 0u &&
                 s.used_blocks == 0u && s.mallocs == st.mallocs && s.frees == st.frees,
             "random %s: after flush_all: tree used %zu, used %zu, mallocs %llu (%llu), frees %llu (%llu)", v->name,
             tree_used(c), s.used_bytes, (unsigned long long)s.mallocs, (unsigned long long)st.mallocs,
             (unsigned long long)s.frees, (unsigned long long)st.frees);
    printf("random    %-22s %llu mallocs, %lu NULL, %zu bytes cached before the end\n", v->name,
           (unsigned long long)st.mallocs, nulls, cached);
}

static void test_random(void)
{
    static const rvariant_t variants[] = {
        {"defaults", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT, 4, 2, 8, 64, false},
        {"paper tree", 64, 0, 4, 2, 8, 64, false},
        {"read-only lazy", 64, RT_WF_READONLY_DESCENT | RT_WF_LAZY_REINIT, 4, 2, 8, 64, false},
        {"2 slots", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT, 4, 2, 8, 2, false},
        {"batch 8, 2 heights", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT, 2, 3, 7, 64, false},
        {"capacity 1, 32 B", 32, RT_WF_HINTS, 4, 0, 1, 4, false},
        {"128 B, token 0", 128, RT_WF_LAZY_REINIT, 3, 1, 3, 8, true},
        {"no cached heights", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT, 0, 2, 8, 64, false},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        random_run(&variants[v], 1000u + v);
    }
}

int main(void)
{
    test_refill_hits();
    test_bound_table();
    test_flush_on_full();
    test_failure_path();
    test_remote_free();
    test_align16();
    test_records();
    test_stats();
    test_bad_input();
    test_config();
    test_random();
    return tl_summary("wfc_unit");
}
