/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/mcheap.h -- TLSF heaps per thread over a wait-free back end: ours, for multi-core use,
 * where one TLSF under a lock stops being real-time (a preempted lock holder stalls every other
 * thread) and the wait-free tree alone fits like a buddy system (power-of-two rounding).
 *
 * Each calling context (a thread; an interrupt level: the same token rule as rtalloc/wfcache.h)
 * owns one slot: a boundary-tag heap with the TLSF index (rtalloc/heap.h) over at most
 * RT_HEAP_MAX_POOLS spans, and an inbox. Spans are chunks of one wait-free buddy tree
 * (rtalloc/waitfree.h) over the whole buffer, so memory moves between threads in whole spans,
 * through wait-free calls:
 *   own malloc/free   the slot's TLSF heap, touched by its owner only: no lock, no shared line
 *                     but the block's claim word (below). TLSF's fit within a span.
 *   remote free       a block freed by another context is pushed onto its owner's inbox: one
 *                     atomic exchange and one store (wait-free); the owner takes back at most
 *                     `drain` (k) of them at the start of each of its calls (RT_MC_DRAIN = 4).
 *   growth            a heap that cannot serve a request takes one more span from the tree: the
 *                     largest of (the request's need, the heap's capacity so far, the tree's free
 *                     bytes / (2 x active slots); for the heap's last pool all of them), at most
 *                     `span_max`, at least `min_span`; when that chunk does not exist, the next
 *                     smaller height, down to the need (over every tree, the smallest first).
 *   giving back       a heap whose last block is freed (by its owner or through the inbox) and
 *                     that holds more than its first span gives every span back to the tree; a
 *                     context with no slot, a heap with RT_HEAP_MAX_POOLS spans that still
 *                     cannot serve, and requests no span could serve take a chunk of the tree
 *                     directly ("direct" blocks, the tree's fit). rt_mc_thread_exit drains the
 *                     inbox and gives the slot back: its spans when the heap is empty, else the
 *                     slot is left for the next new context to adopt (heap, spans and inbox).
 *
 * Which slot owns a block: a map of one byte per tree node (B bytes), written when a span is
 * taken or given back (span / B bytes). Racing frees: every
 * live block of a heap has a claim bit (one per RT_HEAP_ALIGN bytes of the tree, set by the
 * malloc that handed the block out); a free -- own or remote -- first clears it with one atomic
 * fetch-and: of two frees of one block, however they interleave on any contexts, exactly one
 * sees the bit set and frees; the other reports RT_ERR_DOUBLE_FREE and changes nothing. A pointer
 * whose bit is clear (a double free, an interior or forged pointer) is refused before anything
 * is written; the owner's heap checks every block it takes back (rtalloc/heap.h, hardening).
 *
 * Bounds (every call; P = slots, k = drain, H = tree height, M(h), F(h) the tree's malloc and free
 * bounds of height h (rtalloc/waitfree.h), S = min(span_max, size) / B; rt_mc_bound gives the numbers, the
 * descriptor's malloc_work / free_work report each call's work against them):
 *   finding the slot      1 slot read when the token's slot is its own; else <= P reads, and on a
 *                         context's first call one compare-and-swap per free slot tried
 *   malloc                <= k heap frees (the inbox) + 1 heap malloc (TLSF: O(1)), 1 RMW (the
 *                         claim bit); a miss adds: <= (H + 1) x trees tree mallocs (heights down)
 *                         (sum of M(h)) + S map writes + 1 heap create or add_pool + 1 heap malloc;
 *                         then <= 16 k heap frees (the inbox again) + 1 heap malloc; then one
 *                         direct tree memalign (M(H) + its own bound); a heap given back first
 *                         adds <= RT_HEAP_MAX_POOLS x (F(h) + S)
 *   free                  1 RMW (the claim) + 1 heap free (own), or + 1 exchange (remote);
 *                         into an exited owner's heap: + <= 2 x (1 CAS + 1 heap free + k inbox
 *                         frees + its give-back) (the pusher's look: no block is left behind);
 *                         the last block of a grown heap adds <= RT_HEAP_MAX_POOLS x (F(h) + S);
 *                         a direct block: the tree's free F(h)
 *   realloc, memalign     a malloc + a free + the copy (in place: one heap realloc)
 *   thread_exit           the inbox (at most the heap's live blocks) + the give-back above
 * No step waits for another context: a preempted or killed context delays nobody (at worst its
 * inbox keeps blocks until its slot is adopted, and a push interrupted between its two steps
 * hides the blocks pushed after it from the owner until it completes).
 *
 * Memory: the map (N bytes), the claim bits (tree bytes / (8 x RT_HEAP_ALIGN)) and the slots sit
 * before the tree; each heap's control (rt_heap_control_size) in its first span. A heap holds free
 * memory other contexts cannot use until it is given back: at most its spans (the first span when
 * empty). rt_mc_stats counts it as free; rt_mc_held_bytes says how much.
 *
 * Not for interrupt handlers unless their token is 0 (direct blocks only: the tree is ISR-safe).
 */
#ifndef RTALLOC_MCHEAP_H
#define RTALLOC_MCHEAP_H

#include "common.h"
#include "waitfree.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_mc rt_mc_t;

#define RT_MC_MAX_SLOTS 64u
#define RT_MC_DRAIN 4u

/* Token of the calling context (see rtalloc/wfcache.h); 0, 1 and 2: no slot (direct blocks only;
 * 1 and 2 mark slots left by an exiting context). */
typedef uintptr_t (*rt_mc_self_fn)(void *context);

typedef struct rt_mc_config {
    size_t node_size;   /* tree node B: a power of two 64 .. 4096; 0: by buffer (64 below 64 KiB ..
                         4096 from 4 MiB) */
    size_t min_span;    /* bytes of a heap's first span; 0: 1/16 of the buffer, 16 KiB .. 256 KiB */
    size_t span_max;    /* largest span; 0: no limit (the largest tree's root) */
    unsigned slots;     /* a power of two, 1 .. RT_MC_MAX_SLOTS; 0: 16 */
    unsigned drain;     /* k, 1 .. 64; 0: RT_MC_DRAIN */
    rt_mc_self_fn self; /* NULL: the thread-local default on hosted builds, none freestanding */
    void *self_context;
} rt_mc_config_t;

void rt_mc_default_config(rt_mc_config_t *config);

/* Work of one call, counted. */
typedef struct rt_mc_trace {
    uint32_t steps;   /* heap operations + blocks taken from the inbox + tree nodes + map writes */
    uint32_t rmw;     /* atomic read-modify-writes on shared words (claim bits, inbox, tree) */
    uint32_t drained; /* inbox blocks taken back */
    uint32_t spans;   /* spans taken (+) or given back */
    uint32_t probes;  /* slot reads */
    bool direct;      /* served by (or freed to) the tree directly */
    bool refused;     /* the heap met damage and refused the call (reported) */
} rt_mc_trace_t;

typedef struct rt_mc_bound {
    uint64_t malloc_steps, malloc_rmw; /* worst case of any malloc of this size */
    uint64_t free_steps, free_rmw;     /* worst case of any free of such a block */
} rt_mc_bound_t;

size_t rt_mc_min_buffer(const rt_mc_config_t *config);
/* NULL iff mem is NULL, the configuration is invalid or the buffer is below rt_mc_min_buffer.
 * O(size / B + size / 128): the map and the claim bits are read, and written only where not zero
 * (over a fresh mapping no page of them is dirtied); the trees start pristine (their roots alone
 * are written). */
rt_mc_t *rt_mc_create(void *mem, size_t size, const rt_mc_config_t *config);

void *rt_mc_malloc(rt_mc_t *mc, size_t size);
void *rt_mc_malloc_ex(rt_mc_t *mc, size_t size, rt_mc_trace_t *trace);
void rt_mc_free(rt_mc_t *mc, void *ptr);
void rt_mc_free_ex(rt_mc_t *mc, void *ptr, rt_mc_trace_t *trace);
void *rt_mc_realloc(rt_mc_t *mc, void *ptr, size_t size);
void *rt_mc_calloc(rt_mc_t *mc, size_t count, size_t size);
void *rt_mc_memalign(rt_mc_t *mc, size_t alignment, size_t size);
size_t rt_mc_usable_size(rt_mc_t *mc, void *ptr);
size_t rt_mc_max_request(const rt_mc_t *mc);
bool rt_mc_bound(const rt_mc_t *mc, size_t size, rt_mc_bound_t *bound);

/* Drains the caller's inbox, gives its spans back when its heap is empty, and frees its slot
 * (a heap still holding blocks is left for adoption). Call before a thread ends. */
void rt_mc_thread_exit(rt_mc_t *mc);
/* Bytes of free memory the heaps hold (relaxed reads; exact at quiescence). O(P). */
size_t rt_mc_held_bytes(const rt_mc_t *mc);
/* Application view, as rtalloc/wfcache.h: first the caller's inbox is drained and an empty heap
 * of the caller given back. Quiescent only. */
void rt_mc_stats(rt_mc_t *mc, rt_stats_t *stats);
/* The tree, every heap, every span's map entries, and the claim bits against the live blocks.
 * Quiescent only. */
bool rt_mc_check(rt_mc_t *mc);
/* Blocks in address order (the heaps' blocks inside their spans, the trees' other blocks); first,
 * as stats, the caller's inbox and empty heap are given back. Quiescent only. */
void rt_mc_walk(rt_mc_t *mc, rt_walk_fn fn, void *context);
void rt_mc_set_handler(rt_mc_t *mc, rt_error_handler_t handler, void *context);
unsigned rt_mc_last_probes(const rt_mc_t *mc);
rt_wf_t *rt_mc_tree(const rt_mc_t *mc);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_MCHEAP_H */
