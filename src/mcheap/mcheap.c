/* SPDX-License-Identifier: MIT */
/*
 * mcheap.c -- TLSF heaps per thread over wait-free trees (rtalloc/mcheap.h).
 *
 * Layout of the buffer: [rt_mc: slots, tree controls][map: one byte per node][claim bits]
 * [trees, B-aligned, one after another]. A buffer between two powers of two is covered by up to
 * MC_MAX_TREES trees of decreasing size (its binary digits), so the back end loses at most the
 * last, smallest piece -- one tree over the largest power of two would lose up to half.
 *
 * Concurrency. A slot's heap, span list and private inbox list are touched by its owner only (the
 * context whose token the slot holds, or the one that adopted it); other contexts touch a slot's
 * inbox (exchange) and token (load; compare-and-swap when claiming). The map entries of a span are
 * written by the owner before any block of it is handed out; a remote free reads them after its
 * claim (an acquire fetch-and on the bit the owner set with release after the map writes), so it
 * sees them. The trees are wait-free themselves.
 *
 * Freestanding C11 + <stdatomic.h>.
 */
#include <stdatomic.h>

#include "base/hooks.h"
#include "front/front.h"
#include "rtalloc/heap.h"
#include "rtalloc/mcheap.h"

/* RT_MC_STEP(mc, step, x): called before every step on state another context may touch at once
 * (a slot's token, a claim bit, the map, an inbox and its links). Nothing by default;
 * tests/stress/mc_interleave.c parks the calling operation there to force interleavings. */
#ifndef RT_MC_STEP
#define RT_MC_STEP(mc, step, x) ((void)(mc), (void)(x))
#endif
enum {
    MC_STEP_TOKEN = 1,
    MC_STEP_SLOT_CAS,
    MC_STEP_BIT_TAKE,
    MC_STEP_BIT_SET,
    MC_STEP_MAP,
    MC_STEP_PUSH_XCHG,
    MC_STEP_PUSH_LINK,
    MC_STEP_INBOX,
    MC_STEP_TAKE,
    MC_STEP_NEXT,
    MC_STEP_ORPHAN
};

#define MC_MAX_TREES 8u
#define MC_ORPHAN ((uintptr_t)1)               /* token of a slot left with live blocks by an exiting context */
#define MC_BUSY ((uintptr_t)2)                 /* an orphan held for one free by the context freeing into it */
#define MC_PENDING ((mc_link_t *)(uintptr_t)1) /* a push between its exchange and its link store */
#define MC_A ((size_t)RT_HEAP_ALIGN)
#define MC_MISS_DRAIN 16u
/* The thread heaps' index: TLSF behind its bounded quick lists (rtalloc/heap.h, rt_tlsfq): the
 * same fit within two points, a third fewer instructions on small blocks. */
#define MC_INDEX RT_INDEX_TLSFQ
#define MC_SPAN_FLOOR \
    ((size_t)8u       \
     << 10) /* the smallest default first span */ /* a miss takes back up to 16 k more inbox blocks before it grows */

typedef struct mc_link {
    _Atomic(struct mc_link *) next;
} mc_link_t;

/* One slot: two cache lines -- what its owner touches on every call (and the token every context
 * reads to find its slot), and the inbox other contexts write -- so that no two contexts write one
 * line on their fast paths. */
typedef struct mc_slot {
    _Alignas(64) atomic_uintptr_t token;     /* 0 free, MC_ORPHAN, or the owner's token */
    rt_heap_t *heap;                         /* owner: NULL until the first span */
    mc_link_t *local;                        /* owner: taken from the inbox, not yet freed */
    atomic_size_t mallocs, frees;            /* owner-written counts (one writer: a load and a store) */
    atomic_uint steps;                       /* owner: the work of its last malloc (rt_mc_last_probes) */
    _Alignas(64) _Atomic(mc_link_t *) inbox; /* pushed by any context */
    atomic_size_t held;                      /* free bytes of the heap (relaxed, for rt_mc_held_bytes) */
    void *span[RT_HEAP_MAX_POOLS];           /* owner: the spans (span[0] holds the heap's control) */
    size_t span_len[RT_HEAP_MAX_POOLS];
    unsigned nspans;
    size_t capacity;    /* owner: bytes of its spans */
    size_t live;        /* owner: live blocks of the heap (remote-freed ones count until
                                      taken back) */
    atomic_size_t errs; /* reports of the heap (its handler counts them here) */
    struct rt_mc *mc;
} mc_slot_t;

struct rt_mc {
    uint32_t magic;
    unsigned nslots, drain, ntrees, node_log2;
    size_t node_size, min_span, span_max, max_request;
    uintptr_t region;           /* node 0 of the first tree (B-aligned) */
    uintptr_t mem_lo;           /* the buffer's start (watermarks are measured from it) */
    size_t region_nodes;        /* map entries */
    _Atomic unsigned char *map; /* slot + 1 of the span holding the node; 0: none */
    atomic_uint *bits;          /* claim bits: one per MC_A bytes from `region` */
    rt_wf_t *tree[MC_MAX_TREES];
    uintptr_t tree_lo[MC_MAX_TREES], tree_hi[MC_MAX_TREES];
    rt_mc_self_fn self;
    void *self_context;
    rt_error_handler_t handler;
    void *handler_context;
    atomic_uint active; /* slots claimed */
    atomic_uint last_probes;
    atomic_size_t mallocs, frees, failures, errors, reallocs, reallocs_in_place;
    mc_slot_t slot[]; /* nslots of them */
};

#define MC_MAGIC 0x6D636870u

/* --- the default token -------------------------------------------------------------------- */

#define MC_DEFAULT_SELF RT_DEFAULT_SELF /* base/hooks.h */

/* --- reports ------------------------------------------------------------------------------------ */

static void mc_report(rt_mc_t *mc, bool refused, rt_error_kind_t kind, const char *op, const void *ptr, size_t size)
{
    atomic_fetch_add_explicit(&mc->errors, 1u, memory_order_relaxed);
    if (refused) {
        atomic_fetch_add_explicit(&mc->failures, 1u, memory_order_relaxed);
    }
    rt_error_deliver(mc->handler, mc->handler_context, kind, op, ptr, size);
}
static void mc_front_report(void *a, bool refused, rt_error_kind_t kind, const char *op, const void *ptr, size_t size)
{
    mc_report(a, refused, kind, op, ptr, size);
}
/* The heaps' and trees' reports go to the instance's handler (they count their own errors; the
 * instance counts them again so that its stats see them). */
static void mc_forward(void *context, const rt_error_t *e)
{
    rt_mc_t *mc = context;
    atomic_fetch_add_explicit(&mc->errors, 1u, memory_order_relaxed);
    rt_error_deliver(mc->handler, mc->handler_context, e->kind, e->operation, e->pointer, e->size);
}

/* The heaps' reports: counted per slot, so that a call sees whether its heap refused it. */
static void mc_heap_forward(void *context, const rt_error_t *e)
{
    mc_slot_t *s = context;
    atomic_fetch_add_explicit(&s->errs, 1u, memory_order_relaxed);
    mc_forward(s->mc, e);
}

/* rt_heap_free, and whether the heap took the block (a refused one is still live there). */
static bool mc_heap_free(mc_slot_t *s, void *ptr)
{
    size_t e = atomic_load_explicit(&s->errs, memory_order_relaxed);
    rt_heap_free(s->heap, ptr);
    return atomic_load_explicit(&s->errs, memory_order_relaxed) == e;
}

static size_t mc_front_max(const void *a) { return ((const rt_mc_t *)a)->max_request; }
static void mc_front_free(void *a, void *p) { rt_mc_free(a, p); }
static void *mc_front_malloc(void *a, size_t n) { return rt_mc_malloc(a, n); }
static const rt_front_ops_t mc_front = {mc_front_malloc, mc_front_free, mc_front_report, mc_front_max};

static bool mc_valid(const rt_mc_t *mc, const char *op)
{
    if (mc == NULL || mc->magic != MC_MAGIC) {
        rt_report_bad_heap(op, mc);
        return false;
    }
    return true;
}

/* --- geometry ----------------------------------------------------------------------------------- */

static inline size_t mc_node_of(const rt_mc_t *mc, uintptr_t p) { return (p - mc->region) >> mc->node_log2; }
static inline bool mc_in_region(const rt_mc_t *mc, uintptr_t p)
{
    return p >= mc->region && mc_node_of(mc, p) < mc->region_nodes;
}
static inline unsigned mc_map_get(const rt_mc_t *mc, uintptr_t p)
{
    RT_MC_STEP(mc, MC_STEP_MAP, p);
    return atomic_load_explicit(&mc->map[mc_node_of(mc, p)], memory_order_relaxed);
}
static inline size_t mc_bit_of(const rt_mc_t *mc, uintptr_t p) { return (p - mc->region) / MC_A; }
static inline void mc_bit_set(rt_mc_t *mc, void *p)
{
    RT_MC_STEP(mc, MC_STEP_BIT_SET, p);
    size_t b = mc_bit_of(mc, (uintptr_t)p);
    atomic_fetch_or_explicit(&mc->bits[b / 32u], 1u << (b % 32u), memory_order_release);
}
static inline bool mc_bit_take(rt_mc_t *mc, uintptr_t p)
{
    RT_MC_STEP(mc, MC_STEP_BIT_TAKE, p);
    size_t b = mc_bit_of(mc, p);
    unsigned m = 1u << (b % 32u);
    return (atomic_fetch_and_explicit(&mc->bits[b / 32u], ~m, memory_order_acq_rel) & m) != 0u;
}
static inline bool mc_bit_peek(const rt_mc_t *mc, uintptr_t p)
{
    size_t b = mc_bit_of(mc, p);
    return (atomic_load_explicit(&mc->bits[b / 32u], memory_order_relaxed) >> (b % 32u) & 1u) != 0u;
}
static unsigned mc_tree_of(const rt_mc_t *mc, uintptr_t p)
{
    for (unsigned t = 0; t < mc->ntrees; t++) {
        if (p >= mc->tree_lo[t] && p < mc->tree_hi[t]) {
            return t;
        }
    }
    return MC_MAX_TREES;
}
static size_t mc_tree_free_bytes(const rt_mc_t *mc)
{
    size_t s = 0;
    for (unsigned t = 0; t < mc->ntrees; t++) {
        int c = rt_wf_counter(mc->tree[t], rt_wf_nodes(mc->tree[t]) - 1u);
        s += c > 0 ? (size_t)c * 2u * mc->node_size : 0u;
    }
    return s;
}

static void mc_map_write(rt_mc_t *mc, void *span, size_t len, unsigned char v, rt_mc_trace_t *tr)
{
    size_t a = mc_node_of(mc, (uintptr_t)span), b = mc_node_of(mc, (uintptr_t)span + len - 1u);
    for (size_t i = a; i <= b; i++) {
        atomic_store_explicit(&mc->map[i], v, memory_order_relaxed);
    }
    tr->steps += (uint32_t)(b - a + 1u);
}

/* Counts a malloc or free in the caller's slot (its owner is the only writer: no shared line
 * written), or in the instance's atomics for a call without a slot. */
static inline void mc_count(rt_mc_t *mc, mc_slot_t *s, bool malloc_call)
{
    if (s != NULL) {
        atomic_size_t *c = malloc_call ? &s->mallocs : &s->frees;
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1u, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(malloc_call ? &mc->mallocs : &mc->frees, 1u, memory_order_relaxed);
    }
}

/* --- finding the caller's slot ------------------------------------------------------------------ */

static inline unsigned mc_hash(uintptr_t t, unsigned n)
{
    uint32_t x = (uint32_t)t ^ (uint32_t)(t >> 16 >> 16); /* no 64-bit multiply on 32-bit targets */
    x = (x ^ (x >> 7)) * 0x9E3779B1u;
    return (unsigned)(x >> 20) & (n - 1u);
}

/* The caller's slot, or NULL (no token; every slot taken). create: claim one for a new token. */
static __attribute__((noinline)) mc_slot_t *mc_self_slow(rt_mc_t *mc, uintptr_t token, bool create, rt_mc_trace_t *tr)
{
    unsigned at = mc_hash(token, mc->nslots);
    for (unsigned i = 1; i < mc->nslots; i++) {
        mc_slot_t *s = &mc->slot[(at + i) & (mc->nslots - 1u)];
        tr->probes++;
        RT_MC_STEP(mc, MC_STEP_TOKEN, (uintptr_t)s);
        if (atomic_load_explicit(&s->token, memory_order_acquire) == token) {
            return s;
        }
    }
    if (!create) {
        return NULL;
    }
    for (unsigned i = 0; i < mc->nslots; i++) {
        mc_slot_t *s = &mc->slot[(at + i) & (mc->nslots - 1u)];
        RT_MC_STEP(mc, MC_STEP_SLOT_CAS, (uintptr_t)s);
        uintptr_t t = atomic_load_explicit(&s->token, memory_order_relaxed);
        if ((t == 0u || t == MC_ORPHAN) &&
            atomic_compare_exchange_strong_explicit(&s->token, &t, token, memory_order_acq_rel, memory_order_relaxed)) {
            tr->rmw++;
            atomic_fetch_add_explicit(&mc->active, 1u, memory_order_relaxed);
            return s;
        }
    }
    return NULL;
}

/* The fast path: the token's own slot is the one it hashes to (one read). */
static inline mc_slot_t *mc_self(rt_mc_t *mc, bool create, rt_mc_trace_t *tr)
{
    if (mc->self == NULL) {
        return NULL;
    }
    uintptr_t token = mc->self(mc->self_context);
    if (token <= MC_BUSY) {
        return NULL;
    }
    mc_slot_t *s = &mc->slot[mc_hash(token, mc->nslots)];
    tr->probes++;
    RT_MC_STEP(mc, MC_STEP_TOKEN, (uintptr_t)s);
    if (atomic_load_explicit(&s->token, memory_order_acquire) == token) {
        return s;
    }
    return mc_self_slow(mc, token, create, tr);
}

/* --- spans -------------------------------------------------------------------------------------- */

static void mc_update_held(mc_slot_t *s)
{
    size_t held = 0;
    if (s->heap != NULL) {
        rt_stats_t st;
        (void)st;
        held = s->capacity; /* refined by rt_mc_held_bytes at quiescence */
    }
    atomic_store_explicit(&s->held, held, memory_order_relaxed);
}

/* Gives every span of an empty heap back to the trees. */
static void mc_give_back(rt_mc_t *mc, mc_slot_t *s, rt_mc_trace_t *tr)
{
    for (unsigned i = s->nspans; i-- > 0u;) {
        mc_map_write(mc, s->span[i], s->span_len[i], 0u, tr);
        rt_wf_trace_t wt = {0};
        unsigned t = mc_tree_of(mc, (uintptr_t)s->span[i]);
        rt_wf_free_ex(mc->tree[t], s->span[i], &wt);
        tr->steps += wt.nodes;
        tr->rmw += wt.rmw;
        tr->spans++;
    }
    s->nspans = 0;
    s->heap = NULL;
    s->capacity = 0;
    mc_update_held(s);
}

/* A chunk of at least `need` bytes and at most `want` (rounded up to a height) from the trees:
 * the largest height first, over every tree (a small span thus comes from the smallest tree that
 * has one, which keeps the large trees whole); its length in *len. At most H + 1 heights x trees
 * descents. */
static void *mc_take_span(rt_mc_t *mc, size_t need, size_t want, size_t *len, rt_mc_trace_t *tr)
{
    unsigned lo = UINT32_MAX, hi = 0;
    for (unsigned t = 0; t < mc->ntrees; t++) {
        rt_wf_t *w = mc->tree[t];
        unsigned l = rt_wf_height_for(w, need);
        if (l == UINT32_MAX) {
            continue;
        }
        unsigned h = rt_wf_height_for(w, want < rt_wf_max_request(w) ? want : rt_wf_max_request(w));
        lo = l < lo ? l : lo;
        hi = h != UINT32_MAX && h > hi ? h : hi;
    }
    if (lo == UINT32_MAX) {
        return NULL;
    }
    hi = hi < lo ? lo : hi;
    for (unsigned h = hi + 1u; h-- > lo;) {
        for (unsigned t = mc->ntrees; t-- > 0u;) { /* smallest tree first */
            rt_wf_t *w = mc->tree[t];
            if (h > rt_wf_height(w) || rt_wf_usable(mc->node_size, h) > rt_wf_max_request(w)) {
                continue;
            }
            rt_wf_trace_t wt = {0};
            void *p = rt_wf_malloc_ex(w, rt_wf_usable(mc->node_size, h), &wt);
            tr->steps += wt.nodes;
            tr->rmw += wt.rmw;
            if (p != NULL) {
                *len = rt_wf_usable(mc->node_size, h);
                return p;
            }
        }
    }
    return NULL;
}

/* Room for a request of n bytes in a new pool: TLSF's rounding of the request to its class (at
 * most 1/16 more), the block's header, and a pool's fixed cost (control for the first). */
static size_t mc_need(size_t n, bool first)
{
    size_t fixed = rt_heap_min_buffer(MC_INDEX) + 4u * MC_A;
    if (!first) {
        fixed -= rt_heap_control_size(MC_INDEX);
    }
    size_t r = n + n / 16u + MC_A;
    return r > SIZE_MAX - fixed ? SIZE_MAX : r + fixed;
}

/* One more span for slot s so that a request of n bytes fits. */
static bool mc_grow(rt_mc_t *mc, mc_slot_t *s, size_t n, rt_mc_trace_t *tr)
{
    if (s->nspans >= RT_HEAP_MAX_POOLS) {
        return false;
    }
    bool first = s->heap == NULL;
    size_t need = mc_need(n, first);
    if (need < mc->min_span) {
        need = first ? mc->min_span : need;
    }
    if (need > mc->span_max) {
        return false;
    }
    size_t want = mc->min_span;
    unsigned act0 = atomic_load_explicit(&mc->active, memory_order_relaxed);
    if (first && act0 <= 1u) {
        want = mc_tree_free_bytes(mc) / 2u; /* the only context: half of everything at once */
    } else if (!first) {
        /* capacity doubles at least; a share of what is free; the last pool the heap can add
         * takes the largest chunk there is */
        unsigned act = atomic_load_explicit(&mc->active, memory_order_relaxed);
        size_t free_bytes = mc_tree_free_bytes(mc);
        size_t greedy = s->nspans + 1u == RT_HEAP_MAX_POOLS ? free_bytes : free_bytes / (2u * (act > 0u ? act : 1u));
        want = s->capacity > greedy ? s->capacity : greedy;
    }
    if (want < need) {
        want = need;
    }
    if (want > mc->span_max) {
        want = mc->span_max;
    }
    size_t len = 0;
    void *span = mc_take_span(mc, need, want, &len, tr);
    if (span == NULL) {
        return false;
    }
    unsigned char id = (unsigned char)(s - mc->slot + 1);
    mc_map_write(mc, span, len, id, tr);
    tr->steps++;
    tr->spans++;
    bool ok;
    if (first) {
        s->heap = rt_heap_create_with(span, len, MC_INDEX);
        ok = s->heap != NULL;
        if (ok) {
            rt_heap_set_handler(s->heap, mc_heap_forward, s);
        }
    } else {
        ok = rt_heap_add_pool(s->heap, span, len);
    }
    if (!ok) {
        mc_map_write(mc, span, len, 0u, tr);
        rt_wf_free(mc->tree[mc_tree_of(mc, (uintptr_t)span)], span);
        return false;
    }
    s->span[s->nspans] = span;
    s->span_len[s->nspans] = len;
    s->nspans++;
    s->capacity += len;
    mc_update_held(s);
    return true;
}

/* --- the inbox ---------------------------------------------------------------------------------- */

static void mc_push(mc_slot_t *s, void *ptr, rt_mc_trace_t *tr)
{
    mc_link_t *n = ptr;
    atomic_store_explicit(&n->next, MC_PENDING, memory_order_relaxed);
    RT_MC_STEP(s->mc, MC_STEP_PUSH_XCHG, ptr);
    mc_link_t *old = atomic_exchange_explicit(&s->inbox, n, memory_order_seq_cst); /* mc_orphan_work */
    RT_MC_STEP(s->mc, MC_STEP_PUSH_LINK, ptr);
    atomic_store_explicit(&n->next, old, memory_order_release);
    tr->rmw++;
}

static void mc_after_free(rt_mc_t *mc, mc_slot_t *s, rt_mc_trace_t *tr)
{
    if (s->live == 0u && s->local == NULL && s->nspans > 1u &&
        atomic_load_explicit(&s->inbox, memory_order_relaxed) == NULL) {
        mc_give_back(mc, s, tr);
    }
}

/* Takes back at most `k` blocks other contexts freed. */
static __attribute__((noinline)) void mc_drain_some(mc_slot_t *s, unsigned k, rt_mc_trace_t *tr)
{
    for (unsigned i = 0; i < k; i++) {
        if (s->local == NULL) {
            RT_MC_STEP(s->mc, MC_STEP_INBOX, (uintptr_t)s);
            if (atomic_load_explicit(&s->inbox, memory_order_relaxed) == NULL) {
                break;
            }
            RT_MC_STEP(s->mc, MC_STEP_TAKE, (uintptr_t)s);
            s->local = atomic_exchange_explicit(&s->inbox, NULL, memory_order_acquire);
            tr->rmw++;
        }
        mc_link_t *n = s->local;
        RT_MC_STEP(s->mc, MC_STEP_NEXT, n);
        mc_link_t *next = atomic_load_explicit(&n->next, memory_order_acquire);
        if (next == MC_PENDING) {
            break; /* its pusher is between its two steps: next call */
        }
        s->local = next;
        if (mc_heap_free(s, n)) {
            s->live--;
        } else {
            mc_bit_set(s->mc, n); /* refused (damage met, reported): still the application's */
        }
        tr->steps++;
        tr->drained++;
    }
}

/* The fast path: nothing waiting is one load of the slot's private list and one of its inbox. */
static inline void mc_drain(mc_slot_t *s, unsigned k, rt_mc_trace_t *tr)
{
    RT_MC_STEP(s->mc, MC_STEP_INBOX, (uintptr_t)s);
    if (s->local != NULL || atomic_load_explicit(&s->inbox, memory_order_relaxed) != NULL) {
        mc_drain_some(s, k, tr);
    }
}

/* Works on an exited owner's heap (token MC_ORPHAN) for one call: `ptr`, when not NULL, freed into
 * it, then its inbox taken back k at a time; the call that empties it gives its spans and the slot
 * back. The token goes ORPHAN -> BUSY (one compare-and-swap) -> ORPHAN or 0. A push is followed by
 * its pusher's look at the token, and every release of BUSY by a look at the inbox, each pair
 * sequentially consistent, so one of the two sees the other: a block pushed into an orphan is
 * never left behind with nobody to take it. At most 2 rounds. True when `ptr` was freed here. */
static bool mc_orphan_work(rt_mc_t *mc, mc_slot_t *o, void *ptr, rt_mc_trace_t *tr)
{
    bool freed = false;
    for (unsigned round = 0; round < 2u; round++) {
        uintptr_t orphan = MC_ORPHAN;
        RT_MC_STEP(mc, MC_STEP_ORPHAN, (uintptr_t)o);
        if (atomic_load_explicit(&o->token, memory_order_seq_cst) != orphan ||
            !atomic_compare_exchange_strong_explicit(&o->token, &orphan, MC_BUSY, memory_order_seq_cst,
                                                     memory_order_relaxed)) {
            return freed;
        }
        tr->rmw++;
        if (ptr != NULL && !freed) {
            tr->steps++;
            if (mc_heap_free(o, ptr)) {
                o->live--;
            } else {
                mc_bit_set(mc, ptr);
            }
            freed = true;
        }
        mc_drain(o, mc->drain, tr);
        bool more = o->local != NULL;
        bool empty = o->live == 0u && !more && atomic_load_explicit(&o->inbox, memory_order_relaxed) == NULL;
        if (empty) {
            mc_give_back(mc, o, tr);
        }
        RT_MC_STEP(mc, MC_STEP_ORPHAN, (uintptr_t)o);
        atomic_store_explicit(&o->token, empty ? (uintptr_t)0 : MC_ORPHAN, memory_order_seq_cst);
        if (empty) {
            return freed;
        }
        RT_MC_STEP(mc, MC_STEP_INBOX, (uintptr_t)o);
        if (!more && atomic_load_explicit(&o->inbox, memory_order_seq_cst) == NULL) {
            return freed;
        }
    }
    return freed;
}

/* --- malloc ------------------------------------------------------------------------------------- */

static void *mc_direct(rt_mc_t *mc, size_t alignment, size_t size, rt_mc_trace_t *tr)
{
    for (unsigned t = 0; t < mc->ntrees; t++) {
        if (size > rt_wf_max_request(mc->tree[t]) - (alignment - RT_WF_ALIGN)) {
            continue;
        }
        void *p = rt_wf_memalign(mc->tree[t], alignment, size);
        tr->steps += rt_wf_last_probes(mc->tree[t]) + 1u;
        if (p != NULL) {
            mc_bit_set(mc, p); /* direct blocks are claimed like the heaps' */
            tr->rmw++;
            tr->direct = true;
            return p;
        }
    }
    return NULL;
}

static void *mc_heap_take(rt_mc_t *mc, mc_slot_t *s, size_t alignment, size_t n, rt_mc_trace_t *tr)
{
    if (s->heap == NULL) {
        return NULL;
    }
    size_t most = rt_heap_max_request(s->heap);
    if (n > most || (alignment > MC_A && (alignment > most || n + alignment + 4u * RT_HEAP_MIN_BLOCK > most))) {
        return NULL;
    }
    tr->steps++;
    size_t e = atomic_load_explicit(&s->errs, memory_order_relaxed);
    void *p = alignment > MC_A ? rt_heap_memalign(s->heap, alignment, n) : rt_heap_malloc(s->heap, n);
    if (p == NULL && atomic_load_explicit(&s->errs, memory_order_relaxed) != e) {
        tr->refused = true; /* damage met and reported: the call fails, as the heap's would */
    }
    if (p != NULL) {
        s->live++;
        mc_bit_set(mc, p);
        tr->rmw++;
    }
    return p;
}

static void *mc_alloc(rt_mc_t *mc, size_t alignment, size_t n, rt_mc_trace_t *tr)
{
    mc_slot_t *s = mc_self(mc, true, tr);
    void *p = NULL;
    if (s != NULL) {
        mc_drain(s, mc->drain, tr);
        p = mc_heap_take(mc, s, alignment, n, tr);
        if (tr->refused) {
            atomic_fetch_add_explicit(&mc->failures, 1u, memory_order_relaxed);
            return NULL;
        }
        if (p == NULL && mc_grow(mc, s, alignment > MC_A ? n + alignment : n, tr)) {
            p = mc_heap_take(mc, s, alignment, n, tr);
        }
        if (p == NULL && s->heap != NULL &&
            (s->local != NULL || atomic_load_explicit(&s->inbox, memory_order_relaxed) != NULL)) {
            mc_drain(s, MC_MISS_DRAIN * mc->drain, tr);
            p = mc_heap_take(mc, s, alignment, n, tr);
        }
    }
    if (p == NULL) {
        p = mc_direct(mc, alignment > MC_A ? alignment : MC_A, n, tr);
        if (p == NULL && s != NULL && s->heap != NULL && s->live == 0u && s->local == NULL &&
            atomic_load_explicit(&s->inbox, memory_order_relaxed) == NULL) {
            mc_give_back(mc, s, tr); /* our own empty heap may hold what the request needs */
            p = mc_direct(mc, alignment > MC_A ? alignment : MC_A, n, tr);
        }
    }
    if (p != NULL) {
        mc_count(mc, s, true);
    } else {
        atomic_fetch_add_explicit(&mc->failures, 1u, memory_order_relaxed);
    }
    if (s != NULL) {
        atomic_store_explicit(&s->steps, tr->steps, memory_order_relaxed);
    } else {
        atomic_store_explicit(&mc->last_probes, tr->steps, memory_order_relaxed);
    }
    return p;
}

void *rt_mc_malloc_ex(rt_mc_t *mc, size_t size, rt_mc_trace_t *trace)
{
    rt_mc_trace_t local = {0};
    rt_mc_trace_t *tr = trace != NULL ? trace : &local;
    *tr = (rt_mc_trace_t){0};
    if (!mc_valid(mc, "malloc")) {
        return NULL;
    }
    if (size - 1u >= mc->max_request) {
        return size == 0u ? NULL : rt_front_refuse(&mc_front, mc, RT_ERR_TOO_LARGE, "malloc", NULL, size);
    }
    return mc_alloc(mc, MC_A, size, tr);
}
void *rt_mc_malloc(rt_mc_t *mc, size_t size) { return rt_mc_malloc_ex(mc, size, NULL); }

/* --- free --------------------------------------------------------------------------------------- */

/* The owner's heap of a claimed block, by the map. */
static mc_slot_t *mc_owner(rt_mc_t *mc, uintptr_t p)
{
    unsigned id = atomic_load_explicit(&mc->map[mc_node_of(mc, p)], memory_order_acquire);
    return id != 0u && id <= mc->nslots ? &mc->slot[id - 1u] : NULL;
}

/* A pointer refused before its claim: classified by the owner's heap when the caller owns it (it
 * says double free, interior or foreign), else reported as not a live block. */
static void mc_refuse_free(rt_mc_t *mc, void *ptr, const char *op, rt_mc_trace_t *tr)
{
    mc_slot_t *own = mc_self(mc, false, tr);
    mc_slot_t *o = mc_owner(mc, (uintptr_t)ptr);
    rt_error_kind_t kind = ((uintptr_t)ptr & (MC_A - 1u)) != 0u ? RT_ERR_BAD_POINTER : RT_ERR_DOUBLE_FREE;
    if (own != NULL && own == o && own->heap != NULL) {
        /* The heap says what it is (a live block here has been claimed by another free: double) */
        rt_error_kind_t k = rt_heap_vet(own->heap, ptr);
        kind = k == RT_ERR_NONE || k == RT_ERR_CORRUPTED ? RT_ERR_DOUBLE_FREE : k;
    } else if (op[0] == 'u' || op[0] == 'r') {
        kind = RT_ERR_BAD_POINTER;
    } /* else: not a live block of ours, nothing more read (it may be another free's meanwhile) */
    mc_report(mc, op[0] == 'r', kind, op, ptr, 0);
}

void rt_mc_free_ex(rt_mc_t *mc, void *ptr, rt_mc_trace_t *trace)
{
    rt_mc_trace_t local = {0};
    rt_mc_trace_t *tr = trace != NULL ? trace : &local;
    *tr = (rt_mc_trace_t){0};
    if (ptr == NULL || !mc_valid(mc, "free")) {
        return;
    }
    uintptr_t p = (uintptr_t)ptr;
    if (!mc_in_region(mc, p)) {
        mc_report(mc, false, RT_ERR_FOREIGN_POINTER, "free", ptr, 0);
        return;
    }
    /* The claim first, before anything else is read: of two frees of one block only the winner
     * reads or writes more than the claim word (a racing loser never reads what the winner may be
     * giving back). */
    if ((p & (MC_A - 1u)) != 0u || !mc_bit_take(mc, p)) {
        tr->rmw++;
        mc_refuse_free(mc, ptr, "free", tr);
        return;
    }
    tr->rmw++;
    if (mc_map_get(mc, p) == 0u) { /* a direct block */
        rt_wf_trace_t wt = {0};
        rt_wf_free_ex(mc->tree[mc_tree_of(mc, p)], ptr, &wt);
        tr->steps += wt.nodes;
        tr->rmw += wt.rmw;
        tr->direct = true;
        atomic_fetch_add_explicit(&mc->frees, 1u, memory_order_relaxed);
        return;
    }
    mc_slot_t *o = mc_owner(mc, p);
    if (o == NULL) { /* a map entry no slot has: the map was written over */
        mc_bit_set(mc, ptr);
        mc_report(mc, false, RT_ERR_CORRUPTED, "free", ptr, 0);
        return;
    }
    mc_slot_t *s = mc_self(mc, false, tr);
    if (o == s && s != NULL) {
        tr->steps++;
        if (!mc_heap_free(s, ptr)) {
            mc_bit_set(mc, ptr); /* refused (damage met, reported): the block is still the
                                    application's, and the heap takes its free later */
            return;
        }
        s->live--;
        mc_count(mc, s, false);
        mc_drain(s, mc->drain, tr);
        mc_after_free(mc, s, tr);
        return;
    }
    if (!mc_orphan_work(mc, o, ptr, tr)) {
        mc_push(o, ptr, tr);
        (void)mc_orphan_work(mc, o, NULL, tr); /* the pusher's look: its owner may have gone */
    }
    mc_count(mc, s, false);
}
void rt_mc_free(rt_mc_t *mc, void *ptr) { rt_mc_free_ex(mc, ptr, NULL); }

/* --- realloc, calloc, memalign, usable_size ----------------------------------------------------- */

size_t rt_mc_usable_size(rt_mc_t *mc, void *ptr)
{
    if (ptr == NULL || !mc_valid(mc, "usable_size")) {
        return 0;
    }
    uintptr_t p = (uintptr_t)ptr;
    if (!mc_in_region(mc, p)) {
        mc_report(mc, false, RT_ERR_FOREIGN_POINTER, "usable_size", ptr, 0);
        return 0;
    }
    if ((p & (MC_A - 1u)) != 0u || !mc_bit_peek(mc, p)) {
        rt_mc_trace_t tr = {0};
        mc_refuse_free(mc, ptr, "usable_size", &tr);
        return 0;
    }
    mc_slot_t *o = mc_owner(mc, p);
    if (o == NULL || o->heap == NULL) {
        unsigned t = mc_tree_of(mc, p);
        return t == MC_MAX_TREES ? 0u : rt_wf_usable_size(mc->tree[t], ptr);
    }
    return o == mc_self(mc, false, &(rt_mc_trace_t){0}) ? rt_heap_usable_size(o->heap, ptr)
                                                        : rt_heap_live_size(o->heap, ptr);
}

void *rt_mc_calloc(rt_mc_t *mc, size_t count, size_t size)
{
    if (!mc_valid(mc, "calloc")) {
        return NULL;
    }
    return rt_front_calloc(&mc_front, mc, count, size);
}

void *rt_mc_memalign(rt_mc_t *mc, size_t alignment, size_t size)
{
    if (!mc_valid(mc, "memalign") || !rt_front_memalign_args(&mc_front, mc, alignment, size)) {
        return NULL;
    }
    if (alignment <= MC_A) {
        return rt_mc_malloc(mc, size);
    }
    if (alignment > mc->max_request - size) {
        return rt_front_refuse(&mc_front, mc, RT_ERR_TOO_LARGE, "memalign", NULL, size);
    }
    rt_mc_trace_t tr = {0};
    return mc_alloc(mc, alignment, size, &tr);
}

void *rt_mc_realloc(rt_mc_t *mc, void *ptr, size_t size)
{
    if (!mc_valid(mc, "realloc")) {
        return NULL;
    }
    void *r;
    if (rt_front_realloc_edge(&mc_front, mc, ptr, size, &r)) {
        return r;
    }
    uintptr_t p = (uintptr_t)ptr;
    rt_mc_trace_t tr = {0};
    if (!mc_in_region(mc, p)) {
        mc_report(mc, true, RT_ERR_FOREIGN_POINTER, "realloc", ptr, 0);
        return NULL;
    }
    if ((p & (MC_A - 1u)) != 0u || !mc_bit_take(mc, p)) {
        mc_refuse_free(mc, ptr, "realloc", &tr);
        return NULL;
    }
    if (mc_map_get(mc, p) == 0u) { /* a direct block: in place when it holds size */
        size_t have = rt_wf_usable_size(mc->tree[mc_tree_of(mc, p)], ptr);
        if (size <= have) {
            mc_bit_set(mc, ptr);
            atomic_fetch_add_explicit(&mc->reallocs, 1u, memory_order_relaxed);
            atomic_fetch_add_explicit(&mc->reallocs_in_place, 1u, memory_order_relaxed);
            return ptr;
        }
        void *q = mc_alloc(mc, MC_A, size, &tr);
        if (q == NULL) {
            mc_bit_set(mc, ptr);
            return NULL;
        }
        __builtin_memcpy(q, ptr, have);
        rt_wf_free(mc->tree[mc_tree_of(mc, p)], ptr);
        atomic_fetch_add_explicit(&mc->reallocs, 1u, memory_order_relaxed);
        atomic_fetch_add_explicit(&mc->frees, 1u, memory_order_relaxed);
        return q;
    }
    mc_slot_t *o = mc_owner(mc, p);
    if (o == NULL || o->heap == NULL) { /* a map entry no slot has: the map was written over */
        mc_bit_set(mc, ptr);
        mc_report(mc, true, RT_ERR_CORRUPTED, "realloc", ptr, 0);
        return NULL;
    }
    mc_slot_t *s = mc_self(mc, false, &tr);
    void *q;
    if (o == s && s != NULL) {
        size_t e = atomic_load_explicit(&s->errs, memory_order_relaxed);
        q = size <= rt_heap_max_request(s->heap) ? rt_heap_realloc(s->heap, ptr, size) : NULL;
        if (q == NULL && atomic_load_explicit(&s->errs, memory_order_relaxed) != e) {
            mc_bit_set(mc, ptr); /* refused by the heap (reported): untouched */
            atomic_fetch_add_explicit(&mc->failures, 1u, memory_order_relaxed);
            return NULL;
        }
        if (q != NULL) {
            mc_bit_set(mc, q);
            atomic_fetch_add_explicit(&mc->reallocs, 1u, memory_order_relaxed);
            if (q == ptr) {
                atomic_fetch_add_explicit(&mc->reallocs_in_place, 1u, memory_order_relaxed);
            } else {
                atomic_fetch_add_explicit(&mc->mallocs, 1u, memory_order_relaxed);
                atomic_fetch_add_explicit(&mc->frees, 1u, memory_order_relaxed);
            }
            return q;
        }
    }
    /* Another heap's block (or our heap cannot hold it): move. The block is claimed: nobody else
     * frees it meanwhile, and its owner does not change its size. */
    size_t have = o == s ? rt_heap_usable_size(o->heap, ptr) : rt_heap_live_size(o->heap, ptr);
    q = mc_alloc(mc, MC_A, size, &tr);
    if (q == NULL) {
        mc_bit_set(mc, ptr); /* unclaimed again: untouched */
        return NULL;
    }
    __builtin_memcpy(q, ptr, have < size ? have : size);
    atomic_fetch_add_explicit(&mc->reallocs, 1u, memory_order_relaxed);
    atomic_fetch_add_explicit(&mc->frees, 1u, memory_order_relaxed);
    if (o == s) {
        if (mc_heap_free(s, ptr)) {
            s->live--;
        }
        mc_after_free(mc, s, &tr);
    } else if (!mc_orphan_work(mc, o, ptr, &tr)) {
        mc_push(o, ptr, &tr);
        (void)mc_orphan_work(mc, o, NULL, &tr);
    }
    return q;
}

/* --- thread exit, statistics, check, walk ------------------------------------------------------- */

void rt_mc_thread_exit(rt_mc_t *mc)
{
    if (!mc_valid(mc, "thread_exit")) {
        return;
    }
    rt_mc_trace_t tr = {0};
    mc_slot_t *s = mc_self(mc, false, &tr);
    if (s == NULL) {
        return;
    }
    if (s->heap != NULL) {
        for (;;) { /* at most the heap's live blocks */
            unsigned before = tr.drained;
            mc_drain(s, 64u, &tr);
            if (tr.drained == before) {
                break;
            }
        }
        if (s->live == 0u && s->local == NULL && atomic_load_explicit(&s->inbox, memory_order_relaxed) == NULL) {
            mc_give_back(mc, s, &tr);
        }
    }
    atomic_fetch_sub_explicit(&mc->active, 1u, memory_order_relaxed);
    RT_MC_STEP(mc, MC_STEP_ORPHAN, (uintptr_t)s);
    atomic_store_explicit(&s->token, s->heap != NULL ? MC_ORPHAN : (uintptr_t)0, memory_order_release);
}

size_t rt_mc_held_bytes(const rt_mc_t *mc)
{
    size_t s = 0;
    for (unsigned i = 0; i < mc->nslots; i++) {
        s += atomic_load_explicit(&mc->slot[i].held, memory_order_relaxed);
    }
    return s;
}

/* What stats and walk do first: the caller's inbox taken back, and its heap given back when
 * empty (the caller's memory then counts as what any context can get). Quiescent only. */
static mc_slot_t *mc_settle(rt_mc_t *mc)
{
    rt_mc_trace_t tr = {0};
    mc_slot_t *me = mc_self(mc, false, &tr);
    if (me != NULL && me->heap != NULL) {
        while (me->local != NULL || atomic_load_explicit(&me->inbox, memory_order_relaxed) != NULL) {
            unsigned before = tr.drained;
            mc_drain(me, 64u, &tr);
            if (tr.drained == before) {
                break;
            }
        }
        if (me->live == 0u && me->local == NULL) {
            mc_give_back(mc, me, &tr);
        }
    }
    return me;
}

void rt_mc_stats(rt_mc_t *mc, rt_stats_t *stats)
{
    if (stats == NULL || !mc_valid(mc, "stats")) {
        return;
    }
    mc_slot_t *me = mc_settle(mc);
    rt_stats_t own = {0};
    size_t span_bytes = 0, spans = 0, peak = 0;
    for (unsigned t = 0; t < mc->ntrees; t++) {
        rt_stats_t ts;
        rt_wf_stats(mc->tree[t], &ts);
        own.capacity += ts.capacity;
        own.used_bytes += ts.used_bytes;
        own.used_blocks += ts.used_blocks;
        own.free_blocks += ts.free_blocks;
        size_t lf = ts.largest_free > MC_A - RT_WF_ALIGN ? ts.largest_free - (MC_A - RT_WF_ALIGN) : 0u;
        own.largest_free = lf > own.largest_free ? lf : own.largest_free;
        peak += ts.peak_used;
        size_t wm = ts.watermark == 0u ? 0u : mc->tree_lo[t] - mc->region + ts.watermark;
        own.watermark = wm > own.watermark ? wm : own.watermark;
    }
    /* A span is a used chunk of a tree; in its place count the heap's blocks (its control and
     * guards are neither: capacity is what blocks can use). */
    for (unsigned i = 0; i < mc->nslots; i++) {
        mc_slot_t *s = &mc->slot[i];
        if (s->heap == NULL) {
            continue;
        }
        rt_stats_t hs;
        rt_heap_stats(s->heap, &hs);
        spans += s->nspans;
        span_bytes += s->capacity + s->nspans * RT_WF_OVERHEAD;
        own.capacity += hs.capacity;
        own.used_bytes += hs.used_bytes;
        own.used_blocks += hs.used_blocks;
        own.free_blocks += hs.free_blocks;
        own.quarantined_bytes += hs.quarantined_bytes;
        /* Blocks waiting in the inbox are freed for the application, still used in the heap. */
        size_t pend_bytes = 0;
        for (unsigned l = 0; l < 2u; l++) {
            mc_link_t *n = l == 0u ? s->local : atomic_load_explicit(&s->inbox, memory_order_relaxed);
            for (; n != NULL && n != MC_PENDING; n = atomic_load_explicit(&n->next, memory_order_relaxed)) {
                size_t b = rt_heap_live_size(s->heap, n);
                pend_bytes += b != 0u ? b + RT_HEAP_OVERHEAD : 0u;
                own.used_blocks -= b != 0u ? 1u : 0u;
            }
        }
        own.used_bytes -= pend_bytes;
        atomic_store_explicit(&s->held, hs.free_bytes + pend_bytes, memory_order_relaxed);
        if (s == me && hs.largest_free > own.largest_free) {
            own.largest_free = hs.largest_free;
        }
    }
    own.capacity -= span_bytes;
    own.used_bytes -= span_bytes;
    own.used_blocks -= spans;
    /* The trees' peak counts whole spans: an upper bound of the application's peak (an exact one
     * would need a shared write on every call). */
    own.peak_used = peak > own.used_bytes ? peak : own.used_bytes;
    size_t mallocs = atomic_load_explicit(&mc->mallocs, memory_order_relaxed);
    size_t frees = atomic_load_explicit(&mc->frees, memory_order_relaxed);
    for (unsigned i = 0; i < mc->nslots; i++) {
        mallocs += atomic_load_explicit(&mc->slot[i].mallocs, memory_order_relaxed);
        frees += atomic_load_explicit(&mc->slot[i].frees, memory_order_relaxed);
    }
    rt_front_counts_t c = {
        mallocs,
        frees,
        atomic_load_explicit(&mc->reallocs, memory_order_relaxed),
        atomic_load_explicit(&mc->reallocs_in_place, memory_order_relaxed),
        atomic_load_explicit(&mc->failures, memory_order_relaxed),
        atomic_load_explicit(&mc->errors, memory_order_relaxed),
    };
    rt_front_stats(stats, &own, &c);
}

typedef struct mc_walk_ctx {
    rt_mc_t *mc;
    rt_walk_fn fn;
    void *context;
    uintptr_t lo, hi; /* the span being walked */
    bool stop;
    size_t live_heap_blocks;
} mc_walk_ctx_t;

static bool mc_walk_span_block(void *context, const rt_block_info_t *b)
{
    mc_walk_ctx_t *w = context;
    uintptr_t p = (uintptr_t)b->pointer;
    if (p < w->lo || p >= w->hi) {
        return true;
    }
    if (w->fn != NULL && !w->fn(w->context, b)) {
        w->stop = true;
        return false;
    }
    return true;
}

static bool mc_walk_tree_block(void *context, const rt_block_info_t *b)
{
    mc_walk_ctx_t *w = context;
    uintptr_t p = (uintptr_t)b->pointer;
    mc_slot_t *o = b->used && mc_in_region(w->mc, p) ? mc_owner(w->mc, p) : NULL;
    if (o == NULL || o->heap == NULL) {
        if (!w->fn(w->context, b)) {
            w->stop = true;
            return false;
        }
        return true;
    }
    w->lo = p;
    w->hi = p + b->size;
    rt_heap_walk(o->heap, mc_walk_span_block, w);
    return !w->stop;
}

void rt_mc_walk(rt_mc_t *mc, rt_walk_fn fn, void *context)
{
    if (fn == NULL || !mc_valid(mc, "walk")) {
        return;
    }
    (void)mc_settle(mc);
    mc_walk_ctx_t w = {mc, fn, context, 0, 0, false, 0};
    for (unsigned t = 0; t < mc->ntrees && !w.stop; t++) {
        rt_wf_walk(mc->tree[t], mc_walk_tree_block, &w);
    }
}

static bool mc_count_used(void *context, const rt_block_info_t *b)
{
    mc_walk_ctx_t *w = context;
    if (b->quarantined) { /* fenced damage: blocks inside may keep their bits */
        uintptr_t a = ((uintptr_t)b->pointer & ~(uintptr_t)(MC_A - 1u));
        for (uintptr_t p = a; p < (uintptr_t)b->pointer + b->footprint; p += MC_A) {
            w->hi += mc_in_region(w->mc, p) && mc_bit_peek(w->mc, p) ? 1u : 0u;
        }
        return true;
    }
    if (b->used && !b->quarantined) {
        w->live_heap_blocks++;
        if (mc_bit_peek(w->mc, (uintptr_t)b->pointer)) {
            w->lo++; /* blocks with their claim bit */
        }
    }
    return true;
}

/* Claim bits inside the trees' used chunks that are not spans (the direct blocks'). */
static bool mc_count_direct(void *context, const rt_block_info_t *b)
{
    mc_walk_ctx_t *w = context;
    uintptr_t p = (uintptr_t)b->pointer;
    if (b->used && mc_in_region(w->mc, p) && mc_map_get(w->mc, p) == 0u) {
        for (uintptr_t q = (p + MC_A - 1u) & ~(uintptr_t)(MC_A - 1u); q < p + b->size; q += MC_A) {
            w->hi += mc_bit_peek(w->mc, q) ? 1u : 0u;
        }
        w->lo++;
    }
    return true;
}

bool rt_mc_check(rt_mc_t *mc)
{
    if (!mc_valid(mc, "check")) {
        return false;
    }
    bool ok = true;
    for (unsigned t = 0; t < mc->ntrees; t++) {
        ok = rt_wf_check(mc->tree[t]) && ok;
    }
    size_t bits_expected = 0;
    for (unsigned t = 0; t < mc->ntrees; t++) {
        mc_walk_ctx_t w = {mc, NULL, NULL, 0, 0, false, 0};
        rt_wf_walk(mc->tree[t], mc_count_direct, &w);
        bits_expected += w.hi;
        if (w.hi > w.lo) {
            ok = false; /* at most one bit per direct block */
        }
    }
    for (unsigned i = 0; i < mc->nslots; i++) {
        mc_slot_t *s = &mc->slot[i];
        if (s->heap == NULL) {
            continue;
        }
        ok = rt_heap_check(s->heap) && ok;
        for (unsigned k = 0; k < s->nspans; k++) {
            uintptr_t a = (uintptr_t)s->span[k];
            for (size_t n = mc_node_of(mc, a); n <= mc_node_of(mc, a + s->span_len[k] - 1u); n++) {
                if (atomic_load_explicit(&mc->map[n], memory_order_relaxed) != i + 1u) {
                    ok = false;
                }
            }
        }
        /* Blocks waiting in the inbox are live in the heap with their bit cleared. */
        size_t pending = 0;
        for (mc_link_t *n = s->local; n != NULL && n != MC_PENDING;
             n = atomic_load_explicit(&n->next, memory_order_relaxed)) {
            pending++;
        }
        for (mc_link_t *n = atomic_load_explicit(&s->inbox, memory_order_relaxed); n != NULL && n != MC_PENDING;
             n = atomic_load_explicit(&n->next, memory_order_relaxed)) {
            pending++;
        }
        mc_walk_ctx_t w = {mc, NULL, NULL, 0, 0, false, 0};
        rt_heap_walk(s->heap, mc_count_used, &w);
        /* Every live block has its bit but those waiting in the inbox; a block whose free met
         * damage is fenced (not live in the walk) and keeps neither. */
        if (w.live_heap_blocks > s->live || w.lo + pending != w.live_heap_blocks) {
            ok = false;
        }
        bits_expected += w.lo + w.hi;
    }
    size_t bits = 0;
    size_t words = (mc->region_nodes << mc->node_log2) / MC_A / 32u + 1u;
    for (size_t i = 0; i < words; i++) {
        for (unsigned v = atomic_load_explicit(&mc->bits[i], memory_order_relaxed); v != 0u; v &= v - 1u) {
            bits++;
        }
    }
    if (bits != bits_expected) {
        ok = false;
    }
    if (!ok) {
        mc_report(mc, false, RT_ERR_CORRUPTED, "check", NULL, 0);
    }
    return ok;
}

void rt_mc_set_handler(rt_mc_t *mc, rt_error_handler_t handler, void *context)
{
    if (!mc_valid(mc, "set_handler")) {
        return;
    }
    mc->handler = handler;
    mc->handler_context = context;
}

unsigned rt_mc_last_probes(const rt_mc_t *mc)
{
    rt_mc_trace_t tr = {0};
    mc_slot_t *s = mc_self((rt_mc_t *)(uintptr_t)mc, false, &tr);
    return atomic_load_explicit(s != NULL ? &s->steps : &mc->last_probes, memory_order_relaxed);
}
rt_wf_t *rt_mc_tree(const rt_mc_t *mc) { return mc->tree[0]; }
size_t rt_mc_max_request(const rt_mc_t *mc) { return mc->max_request; }

bool rt_mc_bound(const rt_mc_t *mc, size_t size, rt_mc_bound_t *b)
{
    if (mc == NULL || b == NULL || size == 0u || size > mc->max_request) {
        return false;
    }
    uint64_t span_nodes = mc->span_max >> mc->node_log2;
    span_nodes = span_nodes < mc->region_nodes ? span_nodes : mc->region_nodes;
    uint64_t grow = 0, grow_rmw = 0, give = 0, give_rmw = 0, direct = 0, direct_rmw = 0;
    for (unsigned t = 0; t < mc->ntrees; t++) {
        rt_wf_t *w = mc->tree[t];
        grow += 1u; /* the root counter read of the free bytes */
        for (unsigned h = 0; h <= rt_wf_height(w); h++) {
            rt_wf_bound_t wb;
            if (rt_wf_bound(w, rt_wf_usable(mc->node_size, h), &wb)) {
                grow += wb.malloc_nodes;
                grow_rmw += wb.malloc_rmw;
                give = wb.free_nodes > give ? wb.free_nodes : give;
                give_rmw = wb.free_rmw > give_rmw ? wb.free_rmw : give_rmw;
            }
        }
        rt_wf_bound_t db;
        if (rt_wf_bound(w, size + MC_A, &db)) {
            direct += db.malloc_nodes + 1u;
            direct_rmw += db.malloc_rmw;
        }
    }
    uint64_t probes = mc->nslots;
    uint64_t giveback = (uint64_t)RT_HEAP_MAX_POOLS * (give + span_nodes);
    uint64_t giveback_rmw = (uint64_t)RT_HEAP_MAX_POOLS * give_rmw;
    b->malloc_steps = mc->drain + 1u + grow + span_nodes + 1u + 1u + (uint64_t)MC_MISS_DRAIN * mc->drain + 1u +
                      2u * direct + giveback;
    b->malloc_rmw =
        1u + mc->drain + grow_rmw + 2u + MC_MISS_DRAIN * mc->drain + 2u * direct_rmw + giveback_rmw + probes;
    /* own: the claim, the heap free, a drain, the give-back; remote: the claim, the exchange, and
     * into an exited owner's heap two rounds of (CAS, heap free, drain), one give-back */
    b->free_steps = 1u + 2u * (2u + mc->drain) + giveback + give;
    b->free_rmw = 4u + 2u * (1u + mc->drain) + giveback_rmw + give_rmw;
    return true;
}

/* --- create ------------------------------------------------------------------------------------- */

static size_t mc_pow2_floor(size_t x)
{
    size_t p = 1;
    while (p <= x / 2u) {
        p *= 2u;
    }
    return p;
}

void rt_mc_default_config(rt_mc_config_t *config)
{
    *config = (rt_mc_config_t){0};
    config->slots = 16u;
    config->drain = RT_MC_DRAIN;
    config->self = MC_DEFAULT_SELF;
}

/* The configuration with every 0 replaced for a buffer of `size` bytes; false when invalid. */
static bool mc_resolve(const rt_mc_config_t *in, size_t size, rt_mc_config_t *out)
{
    if (in == NULL) {
        rt_mc_default_config(out);
    } else {
        *out = *in;
        if (out->self == NULL) {
            out->self = MC_DEFAULT_SELF;
        }
    }
    if (out->node_size == 0u) {
        size_t b = mc_pow2_floor(size / 1024u + 1u);
        out->node_size = b < 64u ? 64u : b > 4096u ? 4096u : b;
    }
    if (out->slots == 0u) {
        out->slots = 16u;
    }
    if (out->drain == 0u) {
        out->drain = RT_MC_DRAIN;
    }
    if (out->min_span == 0u) {
        size_t m = size / 16u;
        out->min_span = m < MC_SPAN_FLOOR ? MC_SPAN_FLOOR : m > (256u << 10) ? (256u << 10) : m;
    }
    if (out->span_max == 0u) {
        out->span_max = SIZE_MAX; /* the largest tree's root */
    }
    size_t b = out->node_size;
    return (b & (b - 1u)) == 0u && b >= 64u && b <= 4096u && (out->slots & (out->slots - 1u)) == 0u &&
           out->slots <= RT_MC_MAX_SLOTS && out->drain <= 64u && out->span_max >= out->min_span;
}

size_t rt_mc_min_buffer(const rt_mc_config_t *config)
{
    rt_mc_config_t c;
    if (!mc_resolve(config, 64u << 10, &c)) {
        return SIZE_MAX;
    }
    /* Control with its slots, the trees' controls, a tree that holds a first span of
     * MC_SPAN_FLOOR (at most twice its usable bytes: the next height), map and bits for it, the
     * alignments. */
    size_t span = 2u * MC_SPAN_FLOOR + 2u * c.node_size;
    return sizeof(struct rt_mc) + c.slots * sizeof(mc_slot_t) + 64u +
           MC_MAX_TREES * (rt_wf_control_size() + rt_wf_control_align()) + span + span / c.node_size +
           span / (8u * MC_A) + 2u * c.node_size + 64u;
}

rt_mc_t *rt_mc_create(void *mem, size_t size, const rt_mc_config_t *config)
{
    rt_mc_config_t c;
    if (mem == NULL || !mc_resolve(config, size, &c) || size < rt_mc_min_buffer(config)) {
        return NULL;
    }
    uintptr_t lo = (uintptr_t)mem, hi = lo + size;
    uintptr_t at = (lo + _Alignof(struct rt_mc) - 1u) & ~(uintptr_t)(_Alignof(struct rt_mc) - 1u);
    rt_mc_t *mc = (rt_mc_t *)at;
    uint32_t old_magic = mc->magic;
    (void)old_magic;
    __builtin_memset(mc, 0, sizeof *mc + c.slots * sizeof(mc_slot_t));
    at += sizeof *mc + c.slots * sizeof(mc_slot_t);
    size_t ca = rt_wf_control_align();
    void *ctrl[MC_MAX_TREES];
    for (unsigned t = 0; t < MC_MAX_TREES; t++) {
        at = (at + ca - 1u) & ~(uintptr_t)(ca - 1u);
        ctrl[t] = (void *)at;
        at += rt_wf_control_size();
    }
    /* The region the map and bits describe: everything after them, B-aligned. The map and the
     * bits are sized for the whole rest (a slight over-estimate). */
    size_t b = c.node_size;
    size_t rest = hi > at ? hi - at : 0u;
    size_t map_bytes = rest / b + 1u;
    size_t bit_words = rest / MC_A / 32u + 2u;
    uintptr_t map_at = at;
    uintptr_t bits_at = (map_at + map_bytes + 3u) & ~(uintptr_t)3u;
    uintptr_t region = (bits_at + bit_words * 4u + b - 1u) & ~(uintptr_t)(b - 1u);
    if (region >= hi) {
        return NULL;
    }
    mc->map = (_Atomic unsigned char *)map_at;
    mc->bits = (atomic_uint *)bits_at;
    /* Only what is not zero is written: over a fresh mapping (reads of untouched pages map the
     * zero page) create then dirties no page of the map or the bits. */
    for (size_t i = 0; i < map_bytes; i++) {
        if (((const unsigned char *)map_at)[i] != 0u) {
            atomic_init(&mc->map[i], 0u);
        }
    }
    for (size_t i = 0; i < bit_words; i++) {
        if (((const unsigned *)bits_at)[i] != 0u) {
            atomic_init(&mc->bits[i], 0u);
        }
    }
    mc->region = region;
    mc->mem_lo = lo;
    mc->node_size = b;
    mc->node_log2 = 0;
    while (((size_t)1 << mc->node_log2) < b) {
        mc->node_log2++;
    }
    /* Trees over the binary digits of the region's node count: each 2^(H+1) - 1 nodes. */
    size_t nodes = (hi - region) / b;
    mc->region_nodes = nodes;
    rt_wf_config_t wc = {b, RT_WF_HINTS | RT_WF_LAZY_REINIT | RT_WF_LAZY_CREATE};
    uintptr_t t_at = region;
    size_t left = nodes;
    for (unsigned t = 0; t < MC_MAX_TREES && left >= 3u; t++) {
        size_t n = mc_pow2_floor(left + 1u) - 1u;
        if (t > 0u && n * b < c.min_span) {
            break;
        }
        rt_wf_t *w = rt_wf_create_split(ctrl[t], (void *)t_at, n * b, &wc);
        if (w == NULL) {
            break;
        }
        rt_wf_set_handler(w, mc_forward, mc);
        mc->tree[t] = w;
        mc->tree_lo[t] = t_at;
        mc->tree_hi[t] = t_at + n * b;
        mc->ntrees++;
        size_t mr = rt_wf_max_request(w) - (MC_A - RT_WF_ALIGN);
        mc->max_request = mr > mc->max_request ? mr : mc->max_request;
        t_at += n * b;
        left -= n;
    }
    if (mc->ntrees == 0u) {
        return NULL;
    }
    if (c.min_span > rt_wf_max_request(mc->tree[0])) {
        c.min_span = rt_wf_max_request(mc->tree[0]);
    }
    if (c.min_span < rt_heap_min_buffer(MC_INDEX) + 1024u) {
        return NULL;
    }
    mc->nslots = c.slots;
    mc->drain = c.drain;
    mc->min_span = c.min_span;
    mc->span_max = c.span_max;
    mc->self = c.self;
    mc->self_context = c.self_context;
    for (unsigned i = 0; i < mc->nslots; i++) {
        mc->slot[i].mc = mc;
        atomic_init(&mc->slot[i].mallocs, 0u);
        atomic_init(&mc->slot[i].frees, 0u);
        atomic_init(&mc->slot[i].steps, 0u);
        atomic_init(&mc->slot[i].errs, 0u);
        atomic_init(&mc->slot[i].token, 0u);
        atomic_init(&mc->slot[i].inbox, NULL);
        atomic_init(&mc->slot[i].held, 0u);
    }
    atomic_init(&mc->active, 0u);
    mc->magic = MC_MAGIC;
    return mc;
}
