/* SPDX-License-Identifier: MIT */
/*
 * wfcache.c -- per-thread caches over the wait-free buddy tree (rtalloc/wfcache.h).
 *
 * Layout. The control chunk of the tree (waitfree.c, wf_create_reserve) holds struct rt_wfc after
 * the tree's own control block: configuration and the slot table. Each cache is a record in a
 * chunk of its own (state RECORD: never handed out, never freed), claimed from the tree the first
 * time its context calls; its lists are threaded through the cached chunks: the first data word
 * of a cached chunk (its link) holds (next's first node + 1) xor a key of its own index and the
 * instance, the second (its mark) the cache's key xor the link xor a second key of its index. A
 * pop accepts a chunk only if its length word says "cached, this height" and its mark matches its
 * link there: a link is good only at the address, in the cache and in the generation (create: a
 * new key each time, never the buffer's previous one) that wrote it.
 *
 * The claim. A free takes a live chunk by one compare-and-swap of its length word from the live
 * tag its check read to "cached" (or, to the tree, "freed": waitfree.c) before the chunk is
 * pushed, flushed or released: of two frees of one chunk exactly one wins, however they
 * interleave; the other reports DOUBLE_FREE and changes nothing. Only the chunk's holder leaves
 * the cached state: a pop makes it live again with a release store (wf_tree.h, wf_len_live_at).
 *
 * Concurrency. A record is written only by its owner (the context whose token it holds); the
 * counts and statistics words are atomics read relaxed by stats/cached_bytes. The slot table is
 * written once per slot (a compare-and-swap from 0 to the record, release); readers load it with
 * acquire, so they see the record's owner field. Everything else is the tree's (waitfree.c),
 * whose entry points are wait-free.
 *
 * Freestanding C11 + <stdatomic.h>. The default token on a hosted build is the address of a
 * thread-local object (C11 _Thread_local; initial-exec where the compiler allows, so that a
 * preloaded malloc needs no TLS allocation); freestanding builds have none.
 */
#include <stdatomic.h>

#include "front/front.h"
#include "rtalloc/wfcache.h"
#include "waitfree/wf_tree.h"

/* RT_WF_STEP (wf_tree.h) codes of the cache's own shared steps, after the tree's 1-4: a slot read
 * of the probe, the compare-and-swap claiming a slot, the fetch-and-add taking an inline record
 * (node: the slot index). Nothing by default; tests/stress/wf_interleave.c schedules them. */
#define WFC_STEP_SLOT_READ 5
#define WFC_STEP_SLOT_CAS 6
#define WFC_STEP_INLINE 7

#define WFC_BUSY UINT32_MAX    /* never stored since slots go from 0 to a record at once; readers skip it */
#define WFC_INLINE 0x80000000u /* slot value of a record in the control chunk: WFC_INLINE | k */
#define WFC_LINE 64u           /* records are this far apart: one cache line each */

/* One cache: 48 bytes on 64-bit targets (32 on 32-bit), 8-aligned inside its chunk. */
typedef struct wfc_rec {
    uintptr_t owner;                   /* token */
    uint32_t head[RT_WFC_MAX_HEIGHTS]; /* first node + 1 of the list's top chunk; 0: empty */
    atomic_uint counts;                /* 8 bits per height: chunks in each list */
    uint32_t key;                      /* this cache's mark in the second word of its chunks */
    atomic_size_t dm;                  /* mallocs served here - chunks the tree counted for us */
    atomic_size_t df;                  /* frees taken here - chunks released to the tree */
} wfc_rec_t;

struct rt_wfc {
    rt_wf_t *w;
    uintptr_t base;    /* node 0 */
    size_t nodes;      /* N */
    size_t tree_bytes; /* N B */
    size_t node_size;
    unsigned log2; /* log2 B */
    unsigned heights, batch, capacity, caches;
    unsigned first_cached;         /* the smallest cached height: chunks need 8 data bytes (link, mark) */
    unsigned rec_height;           /* height of a record's chunk */
    size_t cached_min, cached_max; /* request sizes of the cached heights (1, 0: none) */
    uint32_t seed;
    uint32_t flip; /* live tag ^ flip = cached tag (wf_cached_flip) */
    rt_wfc_self_fn self;
    void *self_context;
    atomic_size_t reallocs, reallocs_in_place;
    uintptr_t inline_base; /* records in the control chunk's spare room (64-aligned) ... */
    unsigned inline_count; /* ... this many; later contexts' records are tree chunks */
    atomic_uint inline_next;
    atomic_uint slot[RT_WFC_MAX_CACHES]; /* a record: its first node + 1, or WFC_INLINE | k; 0 free;
                                            WFC_BUSY being set up */
};

/* --- the default token ------------------------------------------------------------------------ */

#define WFC_DEFAULT_SELF RT_DEFAULT_SELF /* base/hooks.h */

/* --- small helpers ----------------------------------------------------------------------------- */

static inline unsigned char *wfc_node(const rt_wfc_t *c, size_t i)
{
    return (unsigned char *)(c->base + (i << c->log2));
}
/* Node i's length word (the tree's, wf_tree.h: accessed by wf_len_*_at), by the cache's copy of
 * the tree's geometry. */
static inline atomic_uint *wfc_len(const rt_wfc_t *c, size_t i)
{
    RT_WF_TOUCH(c->w, i);
    return (atomic_uint *)(void *)wfc_node(c, i);
}
/* The words of a cached chunk the cache writes (its first node's second and third words) --
 * written and read by the holding cache only. */
static inline uint32_t *wfc_link(const rt_wfc_t *c, size_t i)
{
    RT_WF_TOUCH(c->w, i);
    return (uint32_t *)(void *)(wfc_node(c, i) + 4u);
}
static inline uint32_t *wfc_mark(const rt_wfc_t *c, size_t i)
{
    RT_WF_TOUCH(c->w, i);
    return (uint32_t *)(void *)(wfc_node(c, i) + 8u);
}
/* The link's key at chunk i, and the mark's: both of the index and the instance's key, the
 * second not a linear function of the first (a product), so that no two indices' keys differ by
 * the same amount in every generation. */
static inline uint32_t wfc_key(const rt_wfc_t *c, size_t i) { return ((uint32_t)i * 0x9E3779B1u) ^ c->seed; }
static inline uint32_t wfc_key2(const rt_wfc_t *c, size_t i) { return wfc_key(c, i) * 0x2545F491u; }
static inline wfc_rec_t *wfc_record(const rt_wfc_t *c, uint32_t slot)
{
    if ((slot & WFC_INLINE) != 0u) {
        return (wfc_rec_t *)(void *)(c->inline_base + (size_t)(slot & ~WFC_INLINE) * WFC_LINE);
    }
    return (wfc_rec_t *)(void *)(wfc_node(c, slot - 1u) + 8u);
}
static inline unsigned wfc_count(unsigned counts, unsigned h) { return (counts >> (8u * h)) & 0xFFu; }
static inline bool wfc_cached(const rt_wfc_t *c, unsigned h)
{
    return h - c->first_cached < c->heights - c->first_cached;
}

static inline void wfc_add(atomic_size_t *a, size_t v) /* owner-only counter: load + store */
{
    atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + v, memory_order_relaxed);
}

static inline void wfc_take(rt_wfc_trace_t *tr, const rt_wf_trace_t *t)
{
    tr->nodes += t->nodes;
    tr->rmw += t->rmw;
    tr->stat_rmw += t->stat_rmw;
}

static void *wfc_front_malloc(void *c, size_t size) { return rt_wfc_malloc(c, size); }
static void wfc_front_free(void *c, void *ptr) { rt_wfc_free(c, ptr); }
static void wfc_front_report(void *c, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                             size_t size)
{
    wf_report(((rt_wfc_t *)c)->w, refused, kind, operation, ptr, size);
}
static size_t wfc_front_max(const void *c) { return rt_wf_max_request(((const rt_wfc_t *)c)->w); }
static const rt_front_ops_t wfc_front = {wfc_front_malloc, wfc_front_free, wfc_front_report, wfc_front_max};

/* --- finding the caller's cache ------------------------------------------------------------------ */

static inline unsigned wfc_hash(const rt_wfc_t *c, uintptr_t token)
{
    uint32_t x = (uint32_t)(token >> 4) ^ (uint32_t)((uint64_t)token >> 32);
    return (unsigned)((x * 0x9E3779B1u) >> 16) & (c->caches - 1u);
}

/* The next inline record's number (may be past the last: then none is left). */
static inline uint32_t wfc_inline_take(rt_wfc_t *c, unsigned at)
{
    RT_WF_STEP(c->w, WFC_STEP_INLINE, at);
    return atomic_fetch_add_explicit(&c->inline_next, 1u, memory_order_relaxed);
}

/* The slow part of wfc_self: probing on from slot `at`, and claiming a slot and a record. */
static __attribute__((noinline)) wfc_rec_t *wfc_self_slow(rt_wfc_t *c, uintptr_t token, unsigned at, bool create,
                                                          rt_wfc_trace_t *tr)
{
    /* A record is taken (and initialised) before a slot is claimed, and a slot goes straight from
     * 0 to the record: a lookup never meets a slot that is being set up, and a slot, once taken,
     * is never given back (a lookup stops at the first 0; giving one back would hide the records
     * of contexts that probed past it). A record whose claimant then finds no free slot is lost
     * -- only when others filled the last slots meanwhile: at most one per context racing then. */
    uint32_t value = 0u;
    for (unsigned n = 0; n < c->caches; n++, at = (at + 1u) & (c->caches - 1u)) {
        tr->probes++;
        RT_WF_STEP(c->w, WFC_STEP_SLOT_READ, at);
        uint32_t v = atomic_load_explicit(&c->slot[at], memory_order_acquire);
        if (v == 0u) {
            if (!create) {
                return NULL;
            }
            if (value == 0u) {
                uint32_t k;
                if (atomic_load_explicit(&c->inline_next, memory_order_relaxed) < c->inline_count &&
                    (k = wfc_inline_take(c, at)) < c->inline_count) {
                    value = k | WFC_INLINE; /* a line of the control chunk */
                } else {
                    rt_wf_trace_t t = {0, 0, 0, 0, 0, 0};
                    size_t first = 0;
                    tr->descents++;
                    size_t got = wf_claim_pieces(c->w, c->rec_height, 0u, WF_ST_RECORD, &first, &t);
                    wfc_take(tr, &t);
                    if (got == 0u) {
                        return NULL; /* no memory for a record: no cache for now, nothing taken */
                    }
                    value = (uint32_t)first + 1u;
                }
                wfc_rec_t *r = wfc_record(c, value);
                __builtin_memset(r, 0, sizeof *r);
                r->owner = token;
                r->key = wf_mix(c->seed ^ value ^ 0x7F4A7C15u);
                atomic_init(&r->counts, 0u);
                atomic_init(&r->dm, 0u);
                atomic_init(&r->df, 0u);
            }
            uint32_t expected = 0u;
            RT_WF_STEP(c->w, WFC_STEP_SLOT_CAS, at);
            if (atomic_compare_exchange_strong_explicit(&c->slot[at], &expected, value, memory_order_release,
                                                        memory_order_acquire)) {
                return wfc_record(c, value);
            }
            v = expected; /* another context took it just now: not ours (our token is unique) */
        }
        if (v != WFC_BUSY && wfc_record(c, v)->owner == token) {
            return wfc_record(c, v);
        }
    }
    return NULL;
}

/* The caller's record when its token's own slot holds it (one slot read), else NULL. */
static inline wfc_rec_t *wfc_self_quick(rt_wfc_t *c)
{
    if (c->self == NULL) {
        return NULL;
    }
    uintptr_t token = c->self(c->self_context);
    uint32_t v = atomic_load_explicit(&c->slot[wfc_hash(c, token)], memory_order_acquire);
    if (token != 0u && v != 0u && v != WFC_BUSY && wfc_record(c, v)->owner == token) {
        return wfc_record(c, v);
    }
    return NULL;
}

static inline unsigned wfc_log2(size_t k) { return 8u * (unsigned)sizeof(size_t) - 1u - RT_CLZ(k); }

/* The caller's record, or NULL (no token, or none yet and `create` is false, or every slot taken,
 * or no memory for a record). At most `caches` slot reads; creating: one compare-and-swap and one
 * tree claim. The common case, inline: one slot read and the record's owner word. */
static inline wfc_rec_t *wfc_self(rt_wfc_t *c, bool create, rt_wfc_trace_t *tr)
{
    if (c->self == NULL) {
        return NULL;
    }
    uintptr_t token = c->self(c->self_context);
    if (token == 0u) {
        return NULL;
    }
    unsigned at = wfc_hash(c, token);
    uint32_t v = atomic_load_explicit(&c->slot[at], memory_order_acquire);
    if (v != 0u && v != WFC_BUSY && wfc_record(c, v)->owner == token) {
        tr->probes++;
        return wfc_record(c, v);
    }
    return wfc_self_slow(c, token, at, create, tr);
}

/* --- the lists ----------------------------------------------------------------------------------- */

/* A list whose top is not what it must be: reported, and the list dropped (its chunks stay live in
 * the tree: lost, never handed out twice). */
static void wfc_drop(rt_wfc_t *c, wfc_rec_t *r, unsigned h, const char *operation)
{
    unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
    r->head[h] = 0u;
    atomic_store_explicit(&r->counts, counts & ~(0xFFu << (8u * h)), memory_order_relaxed);
    wf_report(c->w, false, RT_ERR_CORRUPTED, operation, NULL, 0u);
}

/* The top chunk x of list h is sound: a node of the tree whose tag says "cached, height h" and
 * whose mark is this cache's key bound to the link stored beside it at x (a head or link
 * overwritten to name another cache's chunk, a link copied from another chunk, a link or mark
 * a previous instance over the buffer wrote: all fail). Its link in *link, its live tag in *live. */
static inline bool wfc_top_ok(const rt_wfc_t *c, const wfc_rec_t *r, unsigned h, size_t x, uint32_t *link,
                              uint32_t *live)
{
    *live = wf_tag(c->w, x, h, WF_ST_ALLOC);
    if (x >= c->nodes || atomic_load_explicit(wfc_len(c, x), memory_order_relaxed) != (*live ^ c->flip)) {
        return false;
    }
    *link = *wfc_link(c, x);
    return *wfc_mark(c, x) == (r->key ^ *link ^ wfc_key2(c, x));
}

/* Pops the top chunk of list h (count > 0): its first node, or SIZE_MAX when the list was
 * damaged (reported, dropped). The chunk's length word still says CACHED. */
static size_t wfc_pop(rt_wfc_t *c, wfc_rec_t *r, unsigned h, unsigned counts, const char *operation)
{
    size_t x = (size_t)r->head[h] - 1u;
    uint32_t link = 0, live = 0;
    if (r->head[h] == 0u || !wfc_top_ok(c, r, h, x, &link, &live)) {
        wfc_drop(c, r, h, operation);
        return SIZE_MAX;
    }
    r->head[h] = link ^ wfc_key(c, x);
    atomic_store_explicit(&r->counts, counts - (1u << (8u * h)), memory_order_relaxed);
    return x;
}

/* Releases up to n chunks of list h to the tree. False when it met damage (reported: a dropped
 * list, or a chunk kept out of the tree). */
static bool wfc_flush_list(rt_wfc_t *c, wfc_rec_t *r, unsigned h, unsigned n, rt_wfc_trace_t *tr)
{
    bool clean = true;
    for (unsigned k = 0; k < n; k++) { /* at most capacity */
        unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
        if (wfc_count(counts, h) == 0u) {
            break;
        }
        size_t x = wfc_pop(c, r, h, counts, "free");
        if (x == SIZE_MAX) {
            return false;
        }
        rt_wf_trace_t t = {0, 0, 0, 0, 0, 0};
        tr->cache_ops++;
        tr->releases++;
        if (wf_release_held(c->w, x, h, &t)) {
            wfc_add(&r->df, (size_t)0 - 1u);
        } else {
            clean = false;
        }
        wfc_take(tr, &t);
    }
    return clean;
}

static void wfc_flush_rec(rt_wfc_t *c, wfc_rec_t *r, rt_wfc_trace_t *tr)
{
    for (unsigned h = 0; h < c->heights; h++) {
        wfc_flush_list(c, r, h, c->capacity, tr);
    }
}

/* Pushes the chunk at first, which this cache holds (its length word says CACHED: claimed by a
 * free, or cut by a refill): its link and the mark bound to it. */
static void wfc_push(rt_wfc_t *c, wfc_rec_t *r, size_t first, unsigned h)
{
    unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
    uint32_t link = r->head[h] ^ wfc_key(c, first);
    *wfc_link(c, first) = link;
    *wfc_mark(c, first) = r->key ^ link ^ wfc_key2(c, first);
    r->head[h] = (uint32_t)first + 1u;
    atomic_store_explicit(&r->counts, counts + (1u << (8u * h)), memory_order_relaxed);
}

/* The claim of a free into a cache: the chunk's length word from the live tag the check read to
 * its cached tag (one compare-and-swap, wf_len_claim). False: another free took it first --
 * reported DOUBLE_FREE, nothing changed. */
static inline bool wfc_claim(rt_wfc_t *c, size_t first, uint32_t live, const void *ptr)
{
    if (wf_len_claim_at(c->w, first, wfc_len(c, first), live, live ^ c->flip)) {
        return true;
    }
    wf_report(c->w, false, RT_ERR_DOUBLE_FREE, "free", ptr, 0u);
    return false;
}

/* --- malloc -------------------------------------------------------------------------------------- */

/* One chunk of height s from the tree, cutting a batch of 2^j (j = batch .. 0) when r is a cache
 * to keep the rest. SIZE_MAX when none could be claimed. */
static size_t wfc_refill(rt_wfc_t *c, wfc_rec_t *r, unsigned s, rt_wfc_trace_t *tr)
{
    size_t firsts[1u << RT_WFC_MAX_BATCH];
    unsigned j = r != NULL ? c->batch : 0u;
    for (;;) { /* at most batch + 1 descents */
        rt_wf_trace_t t = {0, 0, 0, 0, 0, 0};
        tr->descents++;
        size_t n = wf_claim_pieces(c->w, s, j, WF_ST_CACHED, firsts, &t);
        wfc_take(tr, &t);
        if (n != 0u) {
            if (n > 1u) {
                /* the tree counted n mallocs; the caller gets firsts[0], the cache the rest */
                for (size_t m = n - 1u; m >= 1u; m--) {
                    wfc_push(c, r, firsts[m], s);
                }
                tr->cache_ops += (uint32_t)(n - 1u);
                wfc_add(&r->dm, (size_t)0 - (n - 1u));
            }
            return firsts[0]; /* live; the others cut as CACHED (wf_claim_pieces) */
        }
        if (j == 0u) {
            return SIZE_MAX;
        }
        j--;
    }
}

void *rt_wfc_malloc_ex(rt_wfc_t *c, size_t size, rt_wfc_trace_t *trace)
{
    rt_wfc_trace_t local;
    rt_wfc_trace_t *tr = trace != NULL ? trace : &local;
    __builtin_memset(tr, 0, sizeof *tr);
    if (size == 0u) {
        return NULL;
    }
    if (size > rt_wf_max_request(c->w)) {
        return rt_front_refuse(&wfc_front, c, RT_ERR_TOO_LARGE, "malloc", NULL, size);
    }
    unsigned s = wf_height_for(c->w, size);
    tr->height = s;
    wfc_rec_t *r = NULL;
    if (wfc_cached(c, s)) {
        r = wfc_self(c, true, tr);
        if (r != NULL) {
            unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
            if (wfc_count(counts, s) != 0u) {
                size_t x = wfc_pop(c, r, s, counts, "malloc");
                if (x != SIZE_MAX) {
                    wf_len_live(c->w, x, wf_tag(c->w, x, s, WF_ST_ALLOC)); /* checked cached by the pop */
                    wfc_add(&r->dm, 1u);
                    tr->cache_ops++;
                    tr->nodes++;
                    return wfc_node(c, x) + 4u;
                }
            }
        }
    }
    size_t x = wfc_refill(c, r, s, tr);
    if (x == SIZE_MAX) {
        /* the tree has none: give back what this context's cache holds, then once more (a cached
         * height already looked for the cache: NULL stays NULL, and a second look would read up to
         * `caches` slots again, beyond the bound) */
        if (r == NULL && !wfc_cached(c, s)) {
            r = wfc_self(c, false, tr);
        }
        if (r != NULL && atomic_load_explicit(&r->counts, memory_order_relaxed) != 0u) {
            wfc_flush_rec(c, r, tr);
            x = wfc_refill(c, NULL, s, tr);
        }
    }
    if (x == SIZE_MAX) {
        wf_count_failure(c->w);
        return NULL;
    }
    return wfc_node(c, x) + 4u;
}

/* The common call without a trace: a hit on the token's own slot, else rt_wfc_malloc_ex (which
 * looks again: one slot read more than the counted path, within the header's P + 1). */
void *rt_wfc_malloc(rt_wfc_t *c, size_t size)
{
    if (size - c->cached_min < c->cached_max - c->cached_min + 1u) { /* 0 wraps around */
        unsigned s = wfc_log2((size + RT_WF_OVERHEAD + c->node_size - 1u) >> c->log2);
        wfc_rec_t *r = wfc_self_quick(c);
        if (r != NULL) {
            unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
            size_t x = (size_t)r->head[s] - 1u;
            uint32_t link = 0, live = 0;
            if (wfc_count(counts, s) != 0u && r->head[s] != 0u && wfc_top_ok(c, r, s, x, &link, &live)) {
                r->head[s] = link ^ wfc_key(c, x);
                atomic_store_explicit(&r->counts, counts - (1u << (8u * s)), memory_order_relaxed);
                wf_len_live_at(c->w, x, wfc_len(c, x), live);
                wfc_add(&r->dm, 1u);
                return wfc_node(c, x) + 4u;
            }
        }
    }
    return rt_wfc_malloc_ex(c, size, NULL);
}

/* The words that make node x's chunk, handed out WFC_A16 bytes past its data start, an aligned
 * chunk of the tree (waitfree.c, rt_wf_memalign): the record at the data start and the offset word
 * before the pointer, both keyed by their place. */
#define WFC_A16 12u /* data start (node + 4) to the pointer (node + 16) */
static inline uint32_t *wfc_a16_word(const rt_wfc_t *c, size_t x, size_t at)
{
    return (uint32_t *)(void *)(wfc_node(c, x) + at);
}
static inline bool wfc_a16_ok(const rt_wfc_t *c) { return (c->base & 15u) == 0u && c->node_size >= 32u; }

/* memalign(16): a cached chunk of the height of size + 12, handed out as an aligned chunk of the
 * tree at node + 16 -- so the drop-in's 16-byte malloc goes through the caches. NULL when the
 * height is not cached or no chunk could be had (the caller goes to the tree). */
static void *wfc_malloc_a16(rt_wfc_t *c, size_t size)
{
    if (!wfc_a16_ok(c) || size > rt_wf_max_request(c->w) - WFC_A16) {
        return NULL;
    }
    unsigned s = wf_height_for(c->w, size + WFC_A16);
    if (!wfc_cached(c, s)) {
        return NULL;
    }
    rt_wfc_trace_t tr;
    __builtin_memset(&tr, 0, sizeof tr);
    wfc_rec_t *r = wfc_self(c, true, &tr);
    if (r == NULL) {
        return NULL;
    }
    uint32_t aligned = 0;
    size_t x = SIZE_MAX;
    unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
    if (wfc_count(counts, s) != 0u) {
        x = wfc_pop(c, r, s, counts, "memalign"); /* its tag still says cached: nobody can claim it */
    }
    bool from_tree = x == SIZE_MAX;
    if (from_tree) {
        x = wfc_refill(c, r, s, &tr); /* handed over live (ALLOC) */
        if (x == SIZE_MAX) {
            return NULL;
        }
    }
    aligned = wf_tag(c->w, x, s, WF_ST_ALIGNED);
    size_t at = (x << c->log2) + 4u; /* the data start, from node 0 */
    *wfc_a16_word(c, x, 4u) = WFC_A16 ^ wf_offset_key(c->w, at + 4u);
    *wfc_a16_word(c, x, 12u) = WFC_A16 ^ wf_offset_key(c->w, at + WFC_A16);
    if (from_tree) {
        /* live since the refill: a stale free of its data start may have claimed it meanwhile */
        if (!wf_len_claim_at(c->w, x, wfc_len(c, x), wf_tag(c->w, x, s, WF_ST_ALLOC), aligned)) {
            return NULL;
        }
    } else {
        wf_len_live_at(c->w, x, wfc_len(c, x), aligned);
        wfc_add(&r->dm, 1u); /* served here (a refill's chunk the tree counted itself) */
    }
    return wfc_node(c, x) + 16u;
}

/* A free of such a pointer: node + 16 of a chunk tagged aligned, of a cached height, with both
 * keyed words saying offset 12 and its root intact. */
static bool wfc_a16_cacheable(const rt_wfc_t *c, const void *ptr, size_t *first, unsigned *h, uint32_t *len)
{
    size_t off = (size_t)((uintptr_t)ptr - c->base);
    if (!wfc_a16_ok(c) || off >= c->tree_bytes || (off & (c->node_size - 1u)) != 16u) {
        return false;
    }
    size_t x = off >> c->log2;
    uint32_t l = wf_len_check_at(c->w, x, wfc_len(c, x));
    unsigned hh = WF_LEN_HEIGHT(l);
    size_t root = x + wf_subtree(hh) - 1u;
    size_t at = (x << c->log2) + 4u;
    if (!wfc_cached(c, hh) || root >= c->nodes || l != wf_tag(c->w, x, hh, WF_ST_ALIGNED) ||
        *wfc_a16_word(c, x, 4u) != (WFC_A16 ^ wf_offset_key(c->w, at + 4u)) ||
        *wfc_a16_word(c, x, 12u) != (WFC_A16 ^ wf_offset_key(c->w, at + WFC_A16))) {
        return false;
    }
    int v = wf_ctr_peek(c->w, root);
    if (!(v <= 0 && wf_ctr_ok(v, hh) &&
          atomic_load_explicit(wf_pad(c->w, root), memory_order_relaxed) == wf_canary(c->w, root))) {
        return false;
    }
    *first = x;
    *h = hh;
    *len = l;
    return true;
}

/* --- free ---------------------------------------------------------------------------------------- */

/* The tree's own checks of a free (waitfree.c, wf_validate) before a chunk may be cached: ptr is a
 * chunk's data start, its tag says live and of a cached height, its root's counter and canary are
 * intact. Its first node, height and live tag (what the claim expects) in *first, *h, *len.
 * Anything else goes the tree's way (which reports the bad pointers). A check only: the chunk is
 * the caller's once its claim (wfc_claim) succeeds. */
static inline bool wfc_cacheable(const rt_wfc_t *c, const void *ptr, size_t *first, unsigned *h, uint32_t *len)
{
    size_t off = (size_t)((uintptr_t)ptr - c->base); /* wraps above the tree when below it */
    if (off >= c->tree_bytes || (off & (c->node_size - 1u)) != 4u) {
        return false;
    }
    *first = off >> c->log2;
    *len = wf_len_check_at(c->w, *first, wfc_len(c, *first));
    *h = WF_LEN_HEIGHT(*len);
    size_t root = *first + wf_subtree(*h) - 1u;
    if (!wfc_cached(c, *h) || root >= c->nodes || *len != wf_tag(c->w, *first, *h, WF_ST_ALLOC)) {
        return false;
    }
    RT_WF_STEP(c->w, WF_STEP_READ, root);
    int x = wf_ctr_peek(c->w, root);
    return x <= 0 && wf_ctr_ok(x, *h) &&
           atomic_load_explicit(wf_pad(c->w, root), memory_order_relaxed) == wf_canary(c->w, root);
}

/* A free into cache r of the chunk at `first` (height h) whose check read tag `len`. */
static void wfc_free_cached(rt_wfc_t *c, wfc_rec_t *r, size_t first, unsigned h, uint32_t len, bool a16,
                            const void *ptr, rt_wfc_trace_t *tr)
{
    tr->height = h;
    if (a16) {
        if (!wf_len_claim_at(c->w, first, wfc_len(c, first), len, wf_tag(c->w, first, h, WF_ST_ALLOC) ^ c->flip)) {
            wf_report(c->w, false, RT_ERR_DOUBLE_FREE, "free", ptr, 0u);
            return;
        }
    } else if (!wfc_claim(c, first, len, ptr)) {
        return;
    }
    tr->nodes++;
    unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
    if (wfc_count(counts, h) >= c->capacity && !wfc_flush_list(c, r, h, c->capacity - c->capacity / 2u, tr)) {
        /* the flush met damage in other cached chunks and reported it: this free is refused too, so
         * that a free that reports has changed nothing of its block (doc/design.md, "Bad input and the
         * handler": refused, never corrupting; on a damaged heap the block stays allocated): live again,
         * as it was */
        wf_len_live(c->w, first, len);
        tr->nodes--;
        return;
    }
    wfc_push(c, r, first, h);
    wfc_add(&r->df, 1u);
    tr->cache_ops++;
}

void rt_wfc_free_ex(rt_wfc_t *c, void *ptr, rt_wfc_trace_t *trace)
{
    rt_wfc_trace_t local;
    rt_wfc_trace_t *tr = trace != NULL ? trace : &local;
    __builtin_memset(tr, 0, sizeof *tr);
    if (ptr == NULL) {
        return;
    }
    size_t first = 0;
    unsigned h = 0;
    uint32_t len = 0;
    /* an aligned chunk a cache handed out (memalign 16), claimed from its aligned tag; or a plain
     * one, claimed from its live tag -- either way into the freeing context's cache */
    bool a16 = wfc_a16_cacheable(c, ptr, &first, &h, &len);
    if (a16 || wfc_cacheable(c, ptr, &first, &h, &len)) {
        wfc_rec_t *r = wfc_self(c, true, tr);
        if (r != NULL) {
            wfc_free_cached(c, r, first, h, len, a16, ptr, tr);
            return;
        }
    }
    /* everything else -- uncached heights, memalign pointers, no cache, and every kind of bad
     * pointer (reported as the tree reports it) */
    rt_wf_trace_t t = {0, 0, 0, 0, 0, 0};
    rt_wf_free_ex(c->w, ptr, &t);
    tr->height = t.height;
    tr->releases += t.rmw != 0u ? 1u : 0u;
    wfc_take(tr, &t);
}

/* The common call without a trace: a checked chunk of a cached height into the token's own cache
 * when its list has room, else rt_wfc_free_ex (which checks again). */
void rt_wfc_free(rt_wfc_t *c, void *ptr)
{
    size_t first = 0;
    unsigned h = 0;
    uint32_t len = 0;
    wfc_rec_t *r;
    if (wfc_cacheable(c, ptr, &first, &h, &len) && (r = wfc_self_quick(c)) != NULL &&
        wfc_count(atomic_load_explicit(&r->counts, memory_order_relaxed), h) < c->capacity) {
        if (wfc_claim(c, first, len, ptr)) {
            wfc_push(c, r, first, h);
            wfc_add(&r->df, 1u);
        }
        return;
    }
    rt_wfc_free_ex(c, ptr, NULL);
}

/* --- realloc, calloc, memalign, usable_size -------------------------------------------------------- */

void *rt_wfc_realloc(rt_wfc_t *c, void *ptr, size_t size)
{
    void *edge;
    if (rt_front_realloc_edge(&wfc_front, c, ptr, size, &edge)) {
        return edge;
    }
    wf_chunk_t ch;
    rt_error_kind_t error = wf_validate(c->w, ptr, &ch);
    if (error != RT_ERR_NONE) {
        return rt_front_refuse(&wfc_front, c, error, "realloc", ptr, size);
    }
    size_t usable = rt_wf_usable(c->node_size, ch.h) - ch.offset;
    if (size <= usable) {
        atomic_fetch_add_explicit(&c->reallocs, 1u, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->reallocs_in_place, 1u, memory_order_relaxed);
        return ptr;
    }
    /* a move frees the old chunk: claimed first, as a free claims it (a racing free or realloc of
     * the same pointer gets DOUBLE_FREE), and held (CACHED, in no list) while the bytes move; live
     * again, untouched, if no new chunk is found */
    if (!wf_len_claim(c->w, ch.first, ch.tag, wf_tag(c->w, ch.first, ch.h, WF_ST_CACHED))) {
        return rt_front_refuse(&wfc_front, c, RT_ERR_DOUBLE_FREE, "realloc", ptr, size);
    }
    void *moved = rt_wfc_malloc(c, size);
    if (moved == NULL) {
        wf_len_live(c->w, ch.first, ch.tag);
        return NULL;
    }
    __builtin_memcpy(moved, ptr, usable);
    /* into the caller's cache when it is a cacheable chunk and its list has room, else to the
     * tree (F(s); a damaged chunk or path is reported and kept out of it) */
    wfc_rec_t *r = ch.offset == 0u && wfc_cached(c, ch.h) ? wfc_self_quick(c) : NULL;
    if (r != NULL && wfc_count(atomic_load_explicit(&r->counts, memory_order_relaxed), ch.h) < c->capacity) {
        wfc_push(c, r, ch.first, ch.h);
        wfc_add(&r->df, 1u);
    } else {
        rt_wf_trace_t t = {0, 0, 0, 0, 0, 0};
        (void)wf_release_held(c->w, ch.first, ch.h, &t);
    }
    atomic_fetch_add_explicit(&c->reallocs, 1u, memory_order_relaxed);
    return moved;
}

void *rt_wfc_calloc(rt_wfc_t *c, size_t count, size_t size) { return rt_front_calloc(&wfc_front, c, count, size); }

void *rt_wfc_memalign(rt_wfc_t *c, size_t alignment, size_t size)
{
    if (alignment <= RT_WF_ALIGN) {
        return rt_front_memalign_args(&wfc_front, c, alignment, size) ? rt_wfc_malloc(c, size) : NULL;
    }
    if (alignment <= 16u && size != 0u && (alignment & (alignment - 1u)) == 0u) {
        void *q = wfc_malloc_a16(c, size);
        if (q != NULL) {
            return q;
        }
    }
    void *p = rt_wf_memalign(c->w, alignment, size);
    if (p == NULL && alignment > RT_WF_ALIGN && size != 0u && size <= rt_wf_max_request(c->w) &&
        (alignment & (alignment - 1u)) == 0u) {
        rt_wfc_trace_t tr;
        __builtin_memset(&tr, 0, sizeof tr);
        wfc_rec_t *r = wfc_self(c, false, &tr);
        if (r != NULL && atomic_load_explicit(&r->counts, memory_order_relaxed) != 0u) {
            wfc_flush_rec(c, r, &tr);
            p = rt_wf_memalign(c->w, alignment, size);
        }
    }
    return p;
}

size_t rt_wfc_usable_size(rt_wfc_t *c, void *ptr) { return rt_wf_usable_size(c->w, ptr); }

/* --- flush, inspection --------------------------------------------------------------------------- */

void rt_wfc_flush(rt_wfc_t *c)
{
    rt_wfc_trace_t tr;
    __builtin_memset(&tr, 0, sizeof tr);
    wfc_rec_t *r = wfc_self(c, false, &tr);
    if (r != NULL) {
        wfc_flush_rec(c, r, &tr);
    }
}

void rt_wfc_flush_all(rt_wfc_t *c)
{
    rt_wfc_trace_t tr;
    __builtin_memset(&tr, 0, sizeof tr);
    for (unsigned i = 0; i < c->caches; i++) {
        uint32_t v = atomic_load_explicit(&c->slot[i], memory_order_acquire);
        if (v != 0u && v != WFC_BUSY) {
            wfc_flush_rec(c, wfc_record(c, v), &tr);
        }
    }
}

static size_t wfc_rec_nodes(const rt_wfc_t *c, const wfc_rec_t *r)
{
    unsigned counts = atomic_load_explicit(&((wfc_rec_t *)(uintptr_t)r)->counts, memory_order_relaxed);
    size_t nodes = 0;
    for (unsigned h = 0; h < c->heights; h++) {
        nodes += wfc_count(counts, h) * wf_subtree(h);
    }
    return nodes;
}

size_t rt_wfc_cached_bytes(const rt_wfc_t *c)
{
    size_t nodes = 0;
    for (unsigned i = 0; i < c->caches; i++) {
        uint32_t v = atomic_load_explicit(&((rt_wfc_t *)(uintptr_t)c)->slot[i], memory_order_acquire);
        if (v != 0u && v != WFC_BUSY) {
            nodes += wfc_rec_nodes(c, wfc_record(c, v));
        }
    }
    return nodes << c->log2;
}

void rt_wfc_stats(rt_wfc_t *c, rt_stats_t *s)
{
    rt_wfc_flush(c); /* the caller's cache first: the figures describe the shared tree */
    rt_wf_stats(c->w, s);
    size_t dm = 0, df = 0, cached = 0, records = 0;
    for (unsigned i = 0; i < c->caches; i++) {
        uint32_t v = atomic_load_explicit(&c->slot[i], memory_order_acquire);
        if (v != 0u && v != WFC_BUSY) {
            wfc_rec_t *r = wfc_record(c, v);
            dm += atomic_load_explicit(&r->dm, memory_order_relaxed);
            df += atomic_load_explicit(&r->df, memory_order_relaxed);
            cached += wfc_rec_nodes(c, r);
            records += (v & WFC_INLINE) != 0u ? 0u : wf_subtree(c->rec_height);
        }
    }
    s->mallocs += (uint64_t)dm; /* modular: dm and df are differences */
    s->frees += (uint64_t)df;
    if (sizeof(size_t) < sizeof(uint64_t)) { /* 32-bit: keep the sums modulo 2^32 consistent */
        s->mallocs = (uint64_t)(size_t)s->mallocs;
        s->frees = (uint64_t)(size_t)s->frees;
    }
    s->used_blocks = (size_t)(s->mallocs - s->frees);
    s->used_bytes -= cached << c->log2;
    s->capacity -= records << c->log2;
    s->free_bytes = s->capacity - s->used_bytes;
    s->reallocs = atomic_load_explicit(&c->reallocs, memory_order_relaxed);
    s->reallocs_in_place = atomic_load_explicit(&c->reallocs_in_place, memory_order_relaxed);
}

bool rt_wfc_check(rt_wfc_t *c)
{
    bool tree_ok = rt_wf_check(c->w); /* reports what it finds itself */
    bool ok = tree_ok;
    for (unsigned i = 0; i < c->caches && ok; i++) {
        uint32_t v = atomic_load_explicit(&c->slot[i], memory_order_acquire);
        if (v == 0u || v == WFC_BUSY) {
            continue;
        }
        if ((v & WFC_INLINE) != 0u
                ? (v & ~WFC_INLINE) >= c->inline_count
                : (size_t)v - 1u >= c->nodes ||
                      wf_len_peek(c->w, v - 1u) != wf_tag(c->w, v - 1u, c->rec_height, WF_ST_RECORD)) {
            ok = false;
            break;
        }
        wfc_rec_t *r = wfc_record(c, v);
        unsigned counts = atomic_load_explicit(&r->counts, memory_order_relaxed);
        for (unsigned h = 0; h < RT_WFC_MAX_HEIGHTS && ok; h++) {
            unsigned n = wfc_count(counts, h);
            uint32_t at = r->head[h];
            if (!wfc_cached(c, h) && (n != 0u || at != 0u)) {
                ok = false;
            }
            for (unsigned k = 0; k < n && ok; k++) { /* n <= capacity */
                size_t x = (size_t)at - 1u;
                uint32_t link = 0, live = 0;
                if (at == 0u || !wfc_top_ok(c, r, h, x, &link, &live)) {
                    ok = false;
                    break;
                }
                at = link ^ wfc_key(c, x);
            }
            /* the list ends after n: whatever the last link holds is never followed */
        }
    }
    if (!ok && tree_ok) {
        wf_report(c->w, false, RT_ERR_CORRUPTED, "check", NULL, 0u);
    }
    return ok;
}

void rt_wfc_walk(rt_wfc_t *c, rt_walk_fn fn, void *context)
{
    rt_wfc_flush(c); /* as rt_wfc_stats: the caller's cache first */
    rt_wf_walk(c->w, fn, context);
}
void rt_wfc_set_handler(rt_wfc_t *c, rt_error_handler_t handler, void *context)
{
    rt_wf_set_handler(c->w, handler, context);
}
unsigned rt_wfc_last_probes(const rt_wfc_t *c) { return rt_wf_last_probes(c->w); }
rt_wf_t *rt_wfc_tree(const rt_wfc_t *c) { return c->w; }
size_t rt_wfc_max_request(const rt_wfc_t *c) { return rt_wf_max_request(c->w); }

void rt_wfc_get_config(const rt_wfc_t *c, rt_wfc_config_t *config)
{
    config->node_size = c->node_size;
    config->tree_flags = rt_wf_flags(c->w);
    config->heights = c->heights;
    config->batch_log2 = c->batch;
    config->capacity = c->capacity;
    config->caches = c->caches;
    config->self = c->self;
    config->self_context = c->self_context;
}

bool rt_wfc_bound(const rt_wfc_t *c, size_t size, rt_wfc_bound_t *b)
{
    rt_wf_bound_t tb;
    if (!rt_wf_bound(c->w, size, &tb)) {
        return false;
    }
    unsigned s = tb.height;
    __builtin_memset(b, 0, sizeof *b);
    b->height = s;
    b->cached = wfc_cached(c, s);
    b->hit_nodes = 1u;
    b->probes = c->caches;
    /* the tree's bounds per height */
    rt_wf_bound_t bh[RT_WFC_MAX_HEIGHTS + RT_WFC_MAX_BATCH + 1u];
    /* the heights whose bounds are needed: the flush's (< heights) and a cached refill's (s .. s + j) */
    unsigned top = c->heights > 0u ? c->heights - 1u : 0u;
    if (b->cached && s + c->batch > top) {
        top = s + c->batch;
    }
    for (unsigned h = 0; h <= top && h < sizeof bh / sizeof bh[0]; h++) {
        if (!rt_wf_bound(c->w, rt_wf_usable(c->node_size, h), &bh[h])) {
            bh[h] = bh[h > 0u ? h - 1u : 0u]; /* a height the tree never serves: its claims fail fast */
        }
    }
    rt_wf_bound_t rec;
    (void)rt_wf_bound(c->w, rt_wf_usable(c->node_size, c->rec_height), &rec);
    uint64_t flush_nodes = 0, flush_rmw = 0;
    for (unsigned h = 0; h < c->heights; h++) {
        flush_nodes += (uint64_t)c->capacity * bh[h].free_nodes;
        flush_rmw += (uint64_t)c->capacity * bh[h].free_rmw;
    }
    RT_ASSERT(top < sizeof bh / sizeof bh[0]);
    if (!b->cached) {
        b->malloc_nodes = 2u * tb.malloc_nodes + flush_nodes;
        b->malloc_rmw = 2u * tb.malloc_rmw + flush_rmw;
        b->free_nodes = tb.free_nodes;
        b->free_rmw = tb.free_rmw;
        return true;
    }
    uint64_t mn = rec.malloc_nodes, mr = rec.malloc_rmw;
    for (unsigned i = 0; i <= c->batch; i++) {
        mn += bh[s + i].malloc_nodes + ((uint64_t)2 << i) - 2u;
        mr += bh[s + i].malloc_rmw;
    }
    b->malloc_nodes = mn + flush_nodes + tb.malloc_nodes;
    b->malloc_rmw = mr + flush_rmw + tb.malloc_rmw;
    unsigned spill = c->capacity - c->capacity / 2u;
    b->free_nodes = rec.malloc_nodes + (uint64_t)spill * tb.free_nodes + 1u;
    b->free_rmw = rec.malloc_rmw + (uint64_t)spill * tb.free_rmw;
    return true;
}

/* --- creation ------------------------------------------------------------------------------------ */

void rt_wfc_default_config(rt_wfc_config_t *config)
{
    __builtin_memset(config, 0, sizeof *config);
    config->node_size = RT_WF_NODE_SIZE;
    config->tree_flags = RT_WF_HINTS | RT_WF_LAZY_REINIT;
    config->heights = RT_WFC_MAX_HEIGHTS;
    config->batch_log2 = 2u;
    config->capacity = 8u;
    config->caches = RT_WFC_MAX_CACHES;
    config->self = WFC_DEFAULT_SELF;
}

static bool wfc_config_ok(const rt_wfc_config_t *cfg)
{
    return cfg->heights <= RT_WFC_MAX_HEIGHTS && cfg->batch_log2 <= RT_WFC_MAX_BATCH && cfg->capacity <= 255u &&
           cfg->capacity + 1u >= (1u << cfg->batch_log2) && cfg->capacity >= 1u && cfg->caches >= 1u &&
           cfg->caches <= RT_WFC_MAX_CACHES && (cfg->caches & (cfg->caches - 1u)) == 0u;
}

static void wfc_resolve(const rt_wfc_config_t *in, rt_wfc_config_t *out, rt_wf_config_t *tree)
{
    if (in == NULL) {
        rt_wfc_default_config(out);
    } else {
        *out = *in;
        if (out->self == NULL) {
            out->self = WFC_DEFAULT_SELF;
        }
    }
    tree->node_size = out->node_size;
    tree->flags = out->tree_flags;
}

size_t rt_wfc_min_buffer(const rt_wfc_config_t *config)
{
    rt_wfc_config_t cfg;
    rt_wf_config_t tree;
    wfc_resolve(config, &cfg, &tree);
    if (!wfc_config_ok(&cfg)) {
        return SIZE_MAX;
    }
    return wf_min_buffer_reserve(&tree, sizeof(struct rt_wfc));
}

rt_wfc_t *rt_wfc_create(void *mem, size_t size, const rt_wfc_config_t *config)
{
    rt_wfc_config_t cfg;
    rt_wf_config_t tree;
    wfc_resolve(config, &cfg, &tree);
    if (mem == NULL || !wfc_config_ok(&cfg)) {
        return NULL;
    }
    void *extra = NULL;
    size_t room = 0;
    uint32_t old_seed = 0;
    rt_wf_t *w = wf_create_reserve(mem, size, &tree, sizeof(struct rt_wfc), &extra, &room,
                                   offsetof(struct rt_wfc, seed), &old_seed);
    if (w == NULL) {
        return NULL;
    }
    rt_wfc_t *c = extra;
    /* the control chunk's spare lines hold the first contexts' records (so a fresh tree stays
     * as rt_wf_create leaves it for as many contexts) */
    c->inline_base = ((uintptr_t)extra + sizeof *c + WFC_LINE - 1u) & ~(uintptr_t)(WFC_LINE - 1u);
    size_t spare = (uintptr_t)extra + room > c->inline_base ? (size_t)((uintptr_t)extra + room - c->inline_base) : 0u;
    /* a record needs sizeof(wfc_rec_t) bytes of its line (the last one may end at the room's end) */
    c->inline_count = spare >= sizeof(wfc_rec_t) ? (unsigned)((spare - sizeof(wfc_rec_t)) / WFC_LINE + 1u) : 0u;
    if (c->inline_count > RT_WFC_MAX_CACHES) {
        c->inline_count = RT_WFC_MAX_CACHES;
    }
    atomic_init(&c->inline_next, 0u);
    c->w = w;
    c->node_size = rt_wf_node_size(w);
    c->log2 = 0;
    while (((size_t)1 << c->log2) < c->node_size) {
        c->log2++;
    }
    c->nodes = rt_wf_nodes(w);
    c->tree_bytes = c->nodes << c->log2;
    c->base = w->base;
    c->heights = cfg.heights;
    c->batch = cfg.batch_log2;
    c->capacity = cfg.capacity;
    c->caches = cfg.caches;
    c->self = cfg.heights != 0u ? cfg.self : NULL;
    c->self_context = cfg.self_context;
    c->first_cached = rt_wf_usable(c->node_size, 0u) >= 8u ? 0u : 1u;
    c->cached_min = c->first_cached == 0u ? 1u : rt_wf_usable(c->node_size, c->first_cached - 1u) + 1u;
    c->cached_max = cfg.heights != 0u ? rt_wf_usable(c->node_size, cfg.heights - 1u) : 0u;
    if (c->cached_max > rt_wf_max_request(w)) {
        c->cached_max = rt_wf_max_request(w);
    }
    if (cfg.heights <= c->first_cached) { /* nothing cached */
        c->first_cached = cfg.heights;
        c->cached_min = 1u;
        c->cached_max = 0u;
    }
    c->rec_height = 0;
    while (rt_wf_usable(c->node_size, c->rec_height) < 4u + sizeof(wfc_rec_t)) {
        c->rec_height++;
    }
    c->seed = wf_new_seed(old_seed); /* the links' and records' keys: a new generation's */
    c->flip = wf_cached_flip(w->seed);
    atomic_init(&c->reallocs, 0u);
    atomic_init(&c->reallocs_in_place, 0u);
    for (unsigned i = 0; i < RT_WFC_MAX_CACHES; i++) {
        atomic_init(&c->slot[i], 0u);
    }
    atomic_thread_fence(memory_order_release);
    return c;
}
