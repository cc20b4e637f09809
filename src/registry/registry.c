/* SPDX-License-Identifier: MIT */
/*
 * registry.c -- descriptors of the library's own allocators (rtalloc/registry.h).
 *
 * The wrappers only convert the opaque handle; each calls the backend's direct function, so the
 * cost of reaching an allocator through its descriptor is one indirect call and one jump, the
 * same for every allocator (and for the benchmark's system peers). Every wrapper is written out
 * under its own name (grep and ctags find each; the macros below only fill in a descriptor from
 * names given to them), and the registry reaches the allocators through their public headers
 * (include/rtalloc/) alone, as a program would.
 */
#include "rtalloc/buddy.h"
#include "rtalloc/fma.h"
#include "rtalloc/heap.h"
#include "rtalloc/mcheap.h"
#include "rtalloc/registry.h"
#include "rtalloc/waitfree.h"
#include "rtalloc/wfcache.h"

/* --- the boundary-tag heaps, one descriptor per index --------------------------------------- */

static void heap_d_stats(void *h, rt_stats_t *s) { rt_heap_stats(h, s); }
static unsigned heap_d_probes(const void *h) { return rt_heap_last_probes(h); }
static bool heap_d_check(void *h) { return rt_heap_check(h); }
static void heap_d_walk(void *h, rt_walk_fn fn, void *c) { rt_heap_walk(h, fn, c); }
static size_t heap_d_usable(void *h, void *p) { return rt_heap_usable_size(h, p); }
static void heap_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_heap_set_handler(h, fn, c); }
static void heap_d_lock(void *h, rt_lock_fn l, rt_unlock_fn u, void *c) { rt_heap_set_lock(h, l, u, c); }
static size_t heap_d_max_request(void *h) { return rt_heap_max_request(h); }

/* The descriptor of one heap: the shared wrappers above, and the index's own (written out below,
 * one set per index, so that grep and ctags find each). */
#define HEAP_DESCRIPTOR(NAME, INDEX, MALLOC_BOUND, TEXT, CREATE, MIN_BUFFER, MALLOC, FREE, REALLOC, CALLOC, MEMALIGN) \
    {                                                                                                                 \
        .name = (NAME), .description = (TEXT), .malloc_bound = (MALLOC_BOUND), .free_bound = "O(1)",                  \
        .alignment = RT_HEAP_ALIGN, .create = (CREATE), .min_buffer = (MIN_BUFFER), .malloc = (MALLOC),               \
        .free = (FREE), .realloc = (REALLOC), .calloc = (CALLOC), .memalign = (MEMALIGN),                             \
        .usable_size = heap_d_usable, .stats = heap_d_stats, .last_probes = heap_d_probes, .check = heap_d_check,     \
        .walk = heap_d_walk, .set_handler = heap_d_handler, .set_lock = heap_d_lock,                                  \
        .block_overhead = RT_HEAP_OVERHEAD, .min_block = RT_HEAP_MIN_BLOCK, .max_request = heap_d_max_request,        \
        .caches_frees = (INDEX) == RT_INDEX_TLSFQ, .family = RT_FAMILY_HEAP, .thread_safe = false,                    \
    }

static void *tlsf_d_create(void *mem, size_t size) { return rt_tlsf_create(mem, size); }
static size_t tlsf_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_TLSF); }
static void *tlsf_d_malloc(void *h, size_t n) { return rt_tlsf_malloc(h, n); }
static void tlsf_d_free(void *h, void *p) { rt_tlsf_free(h, p); }
static void *tlsf_d_realloc(void *h, void *p, size_t n) { return rt_tlsf_realloc(h, p, n); }
static void *tlsf_d_calloc(void *h, size_t c, size_t n) { return rt_tlsf_calloc(h, c, n); }
static void *tlsf_d_memalign(void *h, size_t a, size_t n) { return rt_tlsf_memalign(h, a, n); }
static const rt_allocator_t tlsf_descriptor =
    HEAP_DESCRIPTOR("tlsf", RT_INDEX_TLSF, "O(1)", "boundary-tag heap, TLSF index (16 slots per octave)", tlsf_d_create,
                    tlsf_d_min_buffer, tlsf_d_malloc, tlsf_d_free, tlsf_d_realloc, tlsf_d_calloc, tlsf_d_memalign);

static void *tlsf32_d_create(void *mem, size_t size) { return rt_tlsf32_create(mem, size); }
static size_t tlsf32_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_TLSF32); }
static void *tlsf32_d_malloc(void *h, size_t n) { return rt_tlsf32_malloc(h, n); }
static void tlsf32_d_free(void *h, void *p) { rt_tlsf32_free(h, p); }
static void *tlsf32_d_realloc(void *h, void *p, size_t n) { return rt_tlsf32_realloc(h, p, n); }
static void *tlsf32_d_calloc(void *h, size_t c, size_t n) { return rt_tlsf32_calloc(h, c, n); }
static void *tlsf32_d_memalign(void *h, size_t a, size_t n) { return rt_tlsf32_memalign(h, a, n); }
static const rt_allocator_t tlsf32_descriptor = HEAP_DESCRIPTOR(
    "tlsf32", RT_INDEX_TLSF32, "O(1)", "boundary-tag heap, TLSF index (32 slots per octave)", tlsf32_d_create,
    tlsf32_d_min_buffer, tlsf32_d_malloc, tlsf32_d_free, tlsf32_d_realloc, tlsf32_d_calloc, tlsf32_d_memalign);

static void *seglist_d_create(void *mem, size_t size) { return rt_seglist_create(mem, size); }
static size_t seglist_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_SEGLIST); }
static void *seglist_d_malloc(void *h, size_t n) { return rt_seglist_malloc(h, n); }
static void seglist_d_free(void *h, void *p) { rt_seglist_free(h, p); }
static void *seglist_d_realloc(void *h, void *p, size_t n) { return rt_seglist_realloc(h, p, n); }
static void *seglist_d_calloc(void *h, size_t c, size_t n) { return rt_seglist_calloc(h, c, n); }
static void *seglist_d_memalign(void *h, size_t a, size_t n) { return rt_seglist_memalign(h, a, n); }
static const rt_allocator_t seglist_descriptor = HEAP_DESCRIPTOR(
    "seglist", RT_INDEX_SEGLIST, "O(free blocks)",
    "boundary-tag heap, 8 segregated lists, first fit within a class (VaiOS)", seglist_d_create, seglist_d_min_buffer,
    seglist_d_malloc, seglist_d_free, seglist_d_realloc, seglist_d_calloc, seglist_d_memalign);

static void *firstfit_d_create(void *mem, size_t size) { return rt_firstfit_create(mem, size); }
static size_t firstfit_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_FIRSTFIT); }
static void *firstfit_d_malloc(void *h, size_t n) { return rt_firstfit_malloc(h, n); }
static void firstfit_d_free(void *h, void *p) { rt_firstfit_free(h, p); }
static void *firstfit_d_realloc(void *h, void *p, size_t n) { return rt_firstfit_realloc(h, p, n); }
static void *firstfit_d_calloc(void *h, size_t c, size_t n) { return rt_firstfit_calloc(h, c, n); }
static void *firstfit_d_memalign(void *h, size_t a, size_t n) { return rt_firstfit_memalign(h, a, n); }
static const rt_allocator_t firstfit_descriptor =
    HEAP_DESCRIPTOR("firstfit", RT_INDEX_FIRSTFIT, "O(free blocks)", "boundary-tag heap, one LIFO free list, first fit",
                    firstfit_d_create, firstfit_d_min_buffer, firstfit_d_malloc, firstfit_d_free, firstfit_d_realloc,
                    firstfit_d_calloc, firstfit_d_memalign);

static void *bestfit_d_create(void *mem, size_t size) { return rt_bestfit_create(mem, size); }
static size_t bestfit_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_BESTFIT); }
static void *bestfit_d_malloc(void *h, size_t n) { return rt_bestfit_malloc(h, n); }
static void bestfit_d_free(void *h, void *p) { rt_bestfit_free(h, p); }
static void *bestfit_d_realloc(void *h, void *p, size_t n) { return rt_bestfit_realloc(h, p, n); }
static void *bestfit_d_calloc(void *h, size_t c, size_t n) { return rt_bestfit_calloc(h, c, n); }
static void *bestfit_d_memalign(void *h, size_t a, size_t n) { return rt_bestfit_memalign(h, a, n); }
static const rt_allocator_t bestfit_descriptor = HEAP_DESCRIPTOR(
    "bestfit", RT_INDEX_BESTFIT, "O(free blocks)", "boundary-tag heap, one free list, best fit", bestfit_d_create,
    bestfit_d_min_buffer, bestfit_d_malloc, bestfit_d_free, bestfit_d_realloc, bestfit_d_calloc, bestfit_d_memalign);

static void *halffit_d_create(void *mem, size_t size) { return rt_halffit_create(mem, size); }
static size_t halffit_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_HALFFIT); }
static void *halffit_d_malloc(void *h, size_t n) { return rt_halffit_malloc(h, n); }
static void halffit_d_free(void *h, void *p) { rt_halffit_free(h, p); }
static void *halffit_d_realloc(void *h, void *p, size_t n) { return rt_halffit_realloc(h, p, n); }
static void *halffit_d_calloc(void *h, size_t c, size_t n) { return rt_halffit_calloc(h, c, n); }
static void *halffit_d_memalign(void *h, size_t a, size_t n) { return rt_halffit_memalign(h, a, n); }
static const rt_allocator_t halffit_descriptor = HEAP_DESCRIPTOR(
    "halffit", RT_INDEX_HALFFIT, "O(1)", "boundary-tag heap, half-fit index (Ogasawara)", halffit_d_create,
    halffit_d_min_buffer, halffit_d_malloc, halffit_d_free, halffit_d_realloc, halffit_d_calloc, halffit_d_memalign);

static void *tlsfq_d_create(void *mem, size_t size) { return rt_tlsfq_create(mem, size); }
static size_t tlsfq_d_min_buffer(void) { return rt_heap_min_buffer(RT_INDEX_TLSFQ); }
static void *tlsfq_d_malloc(void *h, size_t n) { return rt_tlsfq_malloc(h, n); }
static void tlsfq_d_free(void *h, void *p) { rt_tlsfq_free(h, p); }
static void *tlsfq_d_realloc(void *h, void *p, size_t n) { return rt_tlsfq_realloc(h, p, n); }
static void *tlsfq_d_calloc(void *h, size_t c, size_t n) { return rt_tlsfq_calloc(h, c, n); }
static void *tlsfq_d_memalign(void *h, size_t a, size_t n) { return rt_tlsfq_memalign(h, a, n); }
static const rt_allocator_t tlsfq_descriptor = HEAP_DESCRIPTOR(
    "tlsfq", RT_INDEX_TLSFQ, "O(1); a miss the index cannot serve first frees the <= limit cached blocks",
    "boundary-tag heap, TLSF index behind bounded quick lists for blocks up to 256 B", tlsfq_d_create,
    tlsfq_d_min_buffer, tlsfq_d_malloc, tlsfq_d_free, tlsfq_d_realloc, tlsfq_d_calloc, tlsfq_d_memalign);

/* --- binary buddy ---------------------------------------------------------------------------- */

static void *buddy_d_create(void *mem, size_t size) { return rt_buddy_create(mem, size); }
static void *buddy_d_malloc(void *h, size_t n) { return rt_buddy_malloc(h, n); }
static void buddy_d_free(void *h, void *p) { rt_buddy_free(h, p); }
static void *buddy_d_realloc(void *h, void *p, size_t n) { return rt_buddy_realloc(h, p, n); }
static void *buddy_d_calloc(void *h, size_t c, size_t n) { return rt_buddy_calloc(h, c, n); }
static void *buddy_d_memalign(void *h, size_t a, size_t n) { return rt_buddy_memalign(h, a, n); }
static size_t buddy_d_usable(void *h, void *p) { return rt_buddy_usable_size(h, p); }
static void buddy_d_stats(void *h, rt_stats_t *s) { rt_buddy_stats(h, s); }
static unsigned buddy_d_probes(const void *h) { return rt_buddy_last_probes(h); }
static bool buddy_d_check(void *h) { return rt_buddy_check(h); }
static void buddy_d_walk(void *h, rt_walk_fn fn, void *c) { rt_buddy_walk(h, fn, c); }
static void buddy_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_buddy_set_handler(h, fn, c); }
static void buddy_d_lock(void *h, rt_lock_fn l, rt_unlock_fn u, void *c) { rt_buddy_set_lock(h, l, u, c); }
static size_t buddy_d_max_request(void *h) { return rt_buddy_max_request(h); }

static const rt_allocator_t buddy_descriptor = {
    .name = "buddy",
    .description = "binary buddy, power-of-two blocks, out-of-band metadata",
    .malloc_bound = "O(log2(heap/min block))",
    .free_bound = "O(log2(heap/min block))",
    .alignment = RT_BUDDY_MIN_BLOCK,
    .create = buddy_d_create,
    .min_buffer = rt_buddy_min_buffer,
    .malloc = buddy_d_malloc,
    .free = buddy_d_free,
    .realloc = buddy_d_realloc,
    .calloc = buddy_d_calloc,
    .memalign = buddy_d_memalign,
    .usable_size = buddy_d_usable,
    .stats = buddy_d_stats,
    .last_probes = buddy_d_probes,
    .check = buddy_d_check,
    .walk = buddy_d_walk,
    .set_handler = buddy_d_handler,
    .set_lock = buddy_d_lock,
    .block_overhead = 0,
    .min_block = RT_BUDDY_MIN_BLOCK,
    .max_request = buddy_d_max_request,
    .family = RT_FAMILY_BUDDY,
    .thread_safe = false,
};

/* --- the wait-free buddy tree, one descriptor per variant (rtalloc/waitfree.h) ------------------
 * No set_lock: the tree takes no lock. H = tree height, s = request height; the bounds are node
 * visits (the header's table; rt_wf_bound gives the numbers for an instance). */

static void *wf_d_realloc(void *h, void *p, size_t n) { return rt_wf_realloc(h, p, n); }
static void *wf_d_calloc(void *h, size_t c, size_t n) { return rt_wf_calloc(h, c, n); }
static void *wf_d_memalign(void *h, size_t a, size_t n) { return rt_wf_memalign(h, a, n); }
static size_t wf_d_usable(void *h, void *p) { return rt_wf_usable_size(h, p); }
static void wf_d_stats(void *h, rt_stats_t *s) { rt_wf_stats(h, s); }
static unsigned wf_d_probes(const void *h) { return rt_wf_last_probes(h); }
static bool wf_d_check(void *h) { return rt_wf_check(h); }
static void wf_d_walk(void *h, rt_walk_fn fn, void *c) { rt_wf_walk(h, fn, c); }
static void wf_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_wf_set_handler(h, fn, c); }
static size_t wf_d_max_request(void *h) { return rt_wf_max_request(h); }
static uint32_t clip32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* rt_wf_malloc_ex / rt_wf_free_ex with each call's stated bound (rt_wf_bound): tree-counter RMWs
 * only (the statistics add 2 to 4 per call, rt_wf_trace_t.stat_rmw). */
static void *wf_d_malloc_work(void *h, size_t n, rt_work_t *w)
{
    rt_wf_trace_t t;
    void *p = rt_wf_malloc_ex(h, n, &t);
    rt_wf_bound_t b;
    *w = (rt_work_t){t.nodes, t.rmw, 0u, 0u, 0u};
    if (rt_wf_bound(h, n, &b)) {
        w->nodes_bound = clip32(b.malloc_nodes);
        w->rmw_bound = clip32(b.malloc_rmw);
    }
    return p;
}

static void wf_d_free_work(void *h, void *p, rt_work_t *w)
{
    rt_wf_trace_t t;
    rt_wf_free_ex(h, p, &t);
    rt_wf_bound_t b;
    *w = (rt_work_t){t.nodes, t.rmw, 0u, 0u, 0u};
    if (t.height != 0u || t.nodes != 0u) {
        if (rt_wf_bound(h, rt_wf_usable(rt_wf_node_size(h), t.height), &b)) {
            w->nodes_bound = clip32(b.free_nodes);
            w->rmw_bound = clip32(b.free_rmw);
        }
    }
}

/* The descriptor of one variant of the tree: the shared wrappers above, and the variant's own
 * (written out below, one set per variant, so that grep and ctags find each). */
#define WF_DESCRIPTOR(NAME, NODE, MALLOC_BOUND, FREE_BOUND, TEXT, CREATE, MIN_BUFFER, MALLOC, FREE)                   \
    {                                                                                                                 \
        .name = (NAME), .description = (TEXT), .malloc_bound = (MALLOC_BOUND), .free_bound = (FREE_BOUND),            \
        .alignment = RT_WF_ALIGN, .create = (CREATE), .min_buffer = (MIN_BUFFER), .malloc = (MALLOC), .free = (FREE), \
        .realloc = wf_d_realloc, .calloc = wf_d_calloc, .memalign = wf_d_memalign, .usable_size = wf_d_usable,        \
        .stats = wf_d_stats, .last_probes = wf_d_probes, .check = wf_d_check, .walk = wf_d_walk,                      \
        .set_handler = wf_d_handler, .set_lock = NULL, .block_overhead = RT_WF_OVERHEAD, .min_block = (NODE),         \
        .max_request = wf_d_max_request, .family = RT_FAMILY_TREE, .thread_safe = true,                               \
        .malloc_work = wf_d_malloc_work, .free_work = wf_d_free_work,                                                 \
    }

#define WF_PAPER_MALLOC "O(2^(H-s+1)): <= 2^(H-s+1)-1 nodes, each of height >= s at most once"
#define WF_EAGER_FREE "O(2^(s+1) + H-s): 2^(s+1)-1 nodes re-initialised + H-s ancestors"
#define WF_LAZY_FREE "O(H-s): <= H-s+2 nodes"

static const rt_wf_config_t wf_config = {64u, 0u};
static void *wf_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf_config); }
static size_t wf_d_min_buffer(void) { return rt_wf_min_buffer(&wf_config); }
static void *wf_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf_descriptor =
    WF_DESCRIPTOR("wf", 64u, WF_PAPER_MALLOC, WF_EAGER_FREE,
                  "wait-free buddy tree (Stellwag 2010), 64-byte nodes, depth-first try_allocate, eager re-init",
                  wf_d_create, wf_d_min_buffer, wf_d_malloc, wf_d_free);

static const rt_wf_config_t wf32_config = {32u, 0u};
static void *wf32_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf32_config); }
static size_t wf32_d_min_buffer(void) { return rt_wf_min_buffer(&wf32_config); }
static void *wf32_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf32_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf32_descriptor =
    WF_DESCRIPTOR("wf32", 32u, WF_PAPER_MALLOC, WF_EAGER_FREE, "wait-free buddy tree, 32-byte nodes (paper 5)",
                  wf32_d_create, wf32_d_min_buffer, wf32_d_malloc, wf32_d_free);

static const rt_wf_config_t wf128_config = {128u, 0u};
static void *wf128_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf128_config); }
static size_t wf128_d_min_buffer(void) { return rt_wf_min_buffer(&wf128_config); }
static void *wf128_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf128_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf128_descriptor =
    WF_DESCRIPTOR("wf128", 128u, WF_PAPER_MALLOC, WF_EAGER_FREE, "wait-free buddy tree, 128-byte nodes (paper 5)",
                  wf128_d_create, wf128_d_min_buffer, wf128_d_malloc, wf128_d_free);

static const rt_wf_config_t wf256_config = {256u, 0u};
static void *wf256_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf256_config); }
static size_t wf256_d_min_buffer(void) { return rt_wf_min_buffer(&wf256_config); }
static void *wf256_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf256_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf256_descriptor =
    WF_DESCRIPTOR("wf256", 256u, WF_PAPER_MALLOC, WF_EAGER_FREE, "wait-free buddy tree, 256-byte nodes (paper 5)",
                  wf256_d_create, wf256_d_min_buffer, wf256_d_malloc, wf256_d_free);
#if RT_HARDENING >= 1 /* a damaged-looking counter is verified by one walk before it is reported */
#define WF_RO_VERIFY " + one verifying walk of H-s+1"
#else
#define WF_RO_VERIFY ""
#endif

static const rt_wf_config_t wf_ro_config = {64u, RT_WF_READONLY_DESCENT};
static void *wf_ro_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf_ro_config); }
static size_t wf_ro_d_min_buffer(void) { return rt_wf_min_buffer(&wf_ro_config); }
static void *wf_ro_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf_ro_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf_ro_descriptor = WF_DESCRIPTOR(
    "wf_ro", 64u, "O(2^(H-s) (H-s+1)): <= 2^(H-s+1)-1 reads + one claim walk of H-s+1 per candidate" WF_RO_VERIFY,
    WF_EAGER_FREE, "wait-free buddy tree, read-only descent then a claim along the direct path (paper 5)",
    wf_ro_d_create, wf_ro_d_min_buffer, wf_ro_d_malloc, wf_ro_d_free);

static const rt_wf_config_t wf_lazy_config = {64u, RT_WF_LAZY_REINIT};
static void *wf_lazy_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf_lazy_config); }
static size_t wf_lazy_d_min_buffer(void) { return rt_wf_min_buffer(&wf_lazy_config); }
static void *wf_lazy_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf_lazy_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf_lazy_descriptor =
    WF_DESCRIPTOR("wf_lazy", 64u, "O(2^(H-s+1)): <= 3 (2^(H-s+1)-1) nodes (2 children per pristine node)", WF_LAZY_FREE,
                  "wait-free buddy tree, lazy re-initialisation on free (paper 5)", wf_lazy_d_create,
                  wf_lazy_d_min_buffer, wf_lazy_d_malloc, wf_lazy_d_free);

static const rt_wf_config_t wf_hint_config = {64u, RT_WF_HINTS | RT_WF_LAZY_REINIT};
static void *wf_hint_d_create(void *mem, size_t size) { return rt_wf_create(mem, size, &wf_hint_config); }
static size_t wf_hint_d_min_buffer(void) { return rt_wf_min_buffer(&wf_hint_config); }
static void *wf_hint_d_malloc(void *h, size_t n) { return rt_wf_malloc(h, n); }
static void wf_hint_d_free(void *h, void *p) { rt_wf_free(h, p); }
static const rt_allocator_t wf_hint_descriptor = WF_DESCRIPTOR(
    "wf_hint", 64u, "O(2^(H-s+1)) as the paper; H-s+1 nodes when the hints on the path are exact", WF_LAZY_FREE,
    "wait-free buddy tree, per-node hints of the largest free subtree per side (the direct path) + lazy re-init",
    wf_hint_d_create, wf_hint_d_min_buffer, wf_hint_d_malloc, wf_hint_d_free);

/* --- the tree behind per-thread caches (rtalloc/wfcache.h) -----------------------------------------
 * The library's defaults; on a freestanding build (no threads to tell apart) the descriptor gives
 * every call one token, so the caches work for the single context a bare-metal test runs in --
 * a system with threads or interrupts that allocate creates its instance with its own hook. */

#if !(defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 1)
static uintptr_t wfc_d_one_context(void *context)
{
    (void)context;
    return 1u;
}
#endif

static void wfc_d_config(rt_wfc_config_t *cfg)
{
    rt_wfc_default_config(cfg); /* hosted: one cache per thread */
#if !(defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 1)
    cfg->self = wfc_d_one_context;
#endif
}
static void *wfc_d_create(void *mem, size_t size)
{
    rt_wfc_config_t cfg;
    wfc_d_config(&cfg);
    return rt_wfc_create(mem, size, &cfg);
}
static size_t wfc_d_min_buffer(void)
{
    rt_wfc_config_t cfg;
    wfc_d_config(&cfg);
    return rt_wfc_min_buffer(&cfg);
}
static void *wfc_d_malloc(void *h, size_t n) { return rt_wfc_malloc(h, n); }
static void wfc_d_free(void *h, void *p) { rt_wfc_free(h, p); }
static void wfc_d_thread_exit(void *h) { rt_wfc_flush(h); }
static void *wfc_d_realloc(void *h, void *p, size_t n) { return rt_wfc_realloc(h, p, n); }
static void *wfc_d_calloc(void *h, size_t c, size_t n) { return rt_wfc_calloc(h, c, n); }
static void *wfc_d_memalign(void *h, size_t a, size_t n) { return rt_wfc_memalign(h, a, n); }
static size_t wfc_d_usable(void *h, void *p) { return rt_wfc_usable_size(h, p); }
static void wfc_d_stats(void *h, rt_stats_t *s) { rt_wfc_stats(h, s); }
static unsigned wfc_d_probes(const void *h) { return rt_wfc_last_probes(h); }
static bool wfc_d_check(void *h) { return rt_wfc_check(h); }
static void wfc_d_walk(void *h, rt_walk_fn fn, void *c) { rt_wfc_walk(h, fn, c); }
static void wfc_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_wfc_set_handler(h, fn, c); }
static size_t wfc_d_max_request(void *h) { return rt_wfc_max_request(h); }

static void *wfc_d_malloc_work(void *h, size_t n, rt_work_t *w)
{
    rt_wfc_trace_t t;
    void *p = rt_wfc_malloc_ex(h, n, &t);
    rt_wfc_bound_t b;
    *w = (rt_work_t){t.nodes, t.rmw, t.cache_ops, 0u, 0u};
    if (rt_wfc_bound(h, n, &b)) {
        w->nodes_bound = clip32(b.malloc_nodes);
        w->rmw_bound = clip32(b.malloc_rmw);
    }
    return p;
}

static void wfc_d_free_work(void *h, void *p, rt_work_t *w)
{
    rt_wfc_trace_t t;
    rt_wfc_free_ex(h, p, &t);
    rt_wfc_bound_t b;
    *w = (rt_work_t){t.nodes, t.rmw, t.cache_ops, 0u, 0u};
    if ((t.height != 0u || t.nodes != 0u) &&
        rt_wfc_bound(h, rt_wf_usable(rt_wf_node_size(rt_wfc_tree(h)), t.height), &b)) {
        w->nodes_bound = clip32(b.free_nodes);
        w->rmw_bound = clip32(b.free_rmw);
    }
}

static const rt_allocator_t wfc_descriptor = {
    .name = "wfc",
    .description = "wait-free buddy tree (hints + lazy) behind per-thread caches: batches of 4, 8 chunks per size",
    .malloc_bound = "O(1) from the cache (1 node, no RMW); a miss: <= 3 descents + flush (rt_wfc_bound)",
    .free_bound = "O(1) into the cache (1 node, no RMW); full: 4 releases of H-s+2 nodes",
    .alignment = RT_WF_ALIGN,
    .create = wfc_d_create,
    .min_buffer = wfc_d_min_buffer,
    .malloc = wfc_d_malloc,
    .free = wfc_d_free,
    .realloc = wfc_d_realloc,
    .calloc = wfc_d_calloc,
    .memalign = wfc_d_memalign,
    .usable_size = wfc_d_usable,
    .stats = wfc_d_stats,
    .last_probes = wfc_d_probes,
    .check = wfc_d_check,
    .walk = wfc_d_walk,
    .set_handler = wfc_d_handler,
    .set_lock = NULL,
    .block_overhead = RT_WF_OVERHEAD,
    .min_block = RT_WF_NODE_SIZE,
    .max_request = wfc_d_max_request,
    .family = RT_FAMILY_TREE_CACHED,
    .thread_safe = true,
    .malloc_work = wfc_d_malloc_work,
    .free_work = wfc_d_free_work,
    .thread_exit = wfc_d_thread_exit,
};

/* --- TLSF heaps per thread over wait-free trees (rtalloc/mcheap.h) -------------------------------
 * As wfc: hosted builds give each thread its heap; freestanding, every call has one token. */

#if !(defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 1)
static uintptr_t tlsfmc_d_one_context(void *context)
{
    (void)context;
    return 16u; /* any token above the ones the instance reserves (0, 1, 2) */
}
#endif
static void tlsfmc_d_config(rt_mc_config_t *cfg)
{
    rt_mc_default_config(cfg);
#if !(defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 1)
    cfg->self = tlsfmc_d_one_context;
#endif
}
static void *tlsfmc_d_create(void *mem, size_t size)
{
    rt_mc_config_t cfg;
    tlsfmc_d_config(&cfg);
    return rt_mc_create(mem, size, &cfg);
}
static size_t tlsfmc_d_min_buffer(void)
{
    rt_mc_config_t cfg;
    tlsfmc_d_config(&cfg);
    return rt_mc_min_buffer(&cfg);
}
static void tlsfmc_d_thread_exit(void *h) { rt_mc_thread_exit(h); }
static void *tlsfmc_d_malloc(void *h, size_t n) { return rt_mc_malloc(h, n); }
static void tlsfmc_d_free(void *h, void *p) { rt_mc_free(h, p); }
static void *tlsfmc_d_realloc(void *h, void *p, size_t n) { return rt_mc_realloc(h, p, n); }
static void *tlsfmc_d_calloc(void *h, size_t c, size_t n) { return rt_mc_calloc(h, c, n); }
static void *tlsfmc_d_memalign(void *h, size_t a, size_t n) { return rt_mc_memalign(h, a, n); }
static size_t tlsfmc_d_usable(void *h, void *p) { return rt_mc_usable_size(h, p); }
static void tlsfmc_d_stats(void *h, rt_stats_t *s) { rt_mc_stats(h, s); }
static unsigned tlsfmc_d_probes(const void *h) { return rt_mc_last_probes(h); }
static bool tlsfmc_d_check(void *h) { return rt_mc_check(h); }
static void tlsfmc_d_walk(void *h, rt_walk_fn fn, void *c) { rt_mc_walk(h, fn, c); }
static void tlsfmc_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_mc_set_handler(h, fn, c); }
static size_t tlsfmc_d_max_request(void *h) { return rt_mc_max_request(h); }
static void *tlsfmc_d_malloc_work(void *h, size_t n, rt_work_t *w)
{
    rt_mc_trace_t t;
    void *p = rt_mc_malloc_ex(h, n, &t);
    rt_mc_bound_t b;
    *w = (rt_work_t){t.steps, t.rmw, t.drained, 0, 0};
    if (rt_mc_bound(h, n, &b)) {
        w->nodes_bound = clip32(b.malloc_steps);
        w->rmw_bound = clip32(b.malloc_rmw);
    }
    return p;
}
static void tlsfmc_d_free_work(void *h, void *p, rt_work_t *w)
{
    rt_mc_trace_t t;
    rt_mc_free_ex(h, p, &t);
    rt_mc_bound_t b;
    *w = (rt_work_t){t.steps, t.rmw, t.drained, 0, 0};
    if (rt_mc_bound(h, 1u, &b)) {
        w->nodes_bound = clip32(b.free_steps);
        w->rmw_bound = clip32(b.free_rmw);
    }
}

static const rt_allocator_t tlsfmc_descriptor = {
    .name = "tlsfmc",
    .description = "TLSF heap per thread over spans of wait-free trees; remote frees pushed to the owner, k = 4 taken "
                   "back per call",
    .malloc_bound = "O(1): <= k inbox frees + 1 TLSF malloc; a miss: <= H+1 tree descents + span map (rt_mc_bound)",
    .free_bound = "O(1): 1 claim + 1 TLSF free or 1 exchange; a heap's last block: its spans back (rt_mc_bound)",
    .alignment = RT_HEAP_ALIGN,
    .create = tlsfmc_d_create,
    .min_buffer = tlsfmc_d_min_buffer,
    .malloc = tlsfmc_d_malloc,
    .free = tlsfmc_d_free,
    .realloc = tlsfmc_d_realloc,
    .calloc = tlsfmc_d_calloc,
    .memalign = tlsfmc_d_memalign,
    .usable_size = tlsfmc_d_usable,
    .stats = tlsfmc_d_stats,
    .last_probes = tlsfmc_d_probes,
    .check = tlsfmc_d_check,
    .walk = tlsfmc_d_walk,
    .set_handler = tlsfmc_d_handler,
    .set_lock = NULL,
    .block_overhead = RT_HEAP_OVERHEAD,
    .min_block = RT_HEAP_MIN_BLOCK,
    .max_request = tlsfmc_d_max_request,
    .family = RT_FAMILY_THREAD_HEAPS,
    .thread_safe = true,
    .malloc_work = tlsfmc_d_malloc_work,
    .free_work = tlsfmc_d_free_work,
    .thread_exit = tlsfmc_d_thread_exit,
};

/* --- the FMA page allocator and the BSD 4.4 baseline (rtalloc/fma.h), 4 KiB pages ----------------- */

static void *fma_d_create(void *mem, size_t size) { return rt_fma_create(mem, size); }
static void *fma_d_create_zeroed(void *mem, size_t size)
{
    return rt_fma_create_ex(mem, size, RT_FMA_PAGE_LOG2, RT_FMA_ZEROED);
}
static void *bsd44_d_create(void *mem, size_t size)
{
    return rt_fma_create_ex(mem, size, RT_FMA_PAGE_LOG2, RT_FMA_BSD44);
}
static void *fma_d_realloc(void *h, void *p, size_t n) { return rt_fma_realloc(h, p, n); }
static void *fma_d_calloc(void *h, size_t c, size_t n) { return rt_fma_calloc(h, c, n); }
static void *fma_d_memalign(void *h, size_t a, size_t n) { return rt_fma_memalign(h, a, n); }
static size_t fma_d_usable(void *h, void *p) { return rt_fma_usable_size(h, p); }
static void fma_d_stats(void *h, rt_stats_t *s) { rt_fma_stats(h, s); }
static unsigned fma_d_probes(const void *h) { return rt_fma_last_probes(h); }
static bool fma_d_check(void *h) { return rt_fma_check(h); }
static void fma_d_walk(void *h, rt_walk_fn fn, void *c) { rt_fma_walk(h, fn, c); }
static void fma_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_fma_set_handler(h, fn, c); }
static void fma_d_lock(void *h, rt_lock_fn l, rt_unlock_fn u, void *c) { rt_fma_set_lock(h, l, u, c); }
static size_t fma_d_max_request(void *h) { return rt_fma_max_request(h); }

/* The descriptor of one of the two: the shared wrappers above, and its own malloc and free
 * (written out below), not shared: tools that count calls by symbol (callgrind in
 * inscount_test) tell the two allocators apart by them. */
#define FMA_DESCRIPTOR(NAME, CREATE, ZEROED, MALLOC_BOUND, FREE_BOUND, NEVER_UNITES, TEXT, MALLOC, FREE)             \
    {                                                                                                                \
        .name = (NAME), .description = (TEXT), .malloc_bound = (MALLOC_BOUND), .free_bound = (FREE_BOUND),           \
        .alignment = RT_FMA_MIN_BLOCK, .create = (CREATE), .min_buffer = rt_fma_min_buffer, .malloc = (MALLOC),      \
        .free = (FREE), .realloc = fma_d_realloc, .calloc = fma_d_calloc, .memalign = fma_d_memalign,                \
        .usable_size = fma_d_usable, .stats = fma_d_stats, .last_probes = fma_d_probes, .check = fma_d_check,        \
        .walk = fma_d_walk, .set_handler = fma_d_handler, .set_lock = fma_d_lock, .block_overhead = 0,               \
        .min_block = RT_FMA_MIN_BLOCK, .max_request = fma_d_max_request, .page_size = (size_t)1 << RT_FMA_PAGE_LOG2, \
        .never_unites = (NEVER_UNITES), .family = RT_FAMILY_PAGES, .thread_safe = false, .create_zeroed = (ZEROED),  \
    }

static void *fma_d_malloc(void *h, size_t n) { return rt_fma_malloc(h, n); }
static void fma_d_free(void *h, void *p) { rt_fma_free(h, p); }
static const rt_allocator_t fma_descriptor = FMA_DESCRIPTOR(
    "fma", fma_d_create, fma_d_create_zeroed, "O(1) up to a page; O(pages/w + free runs) for several pages",
    "O(1) up to a page; O(pages of the block) for several", false,
    "FMA (Thomas 1998): power-of-two blocks in 4 KiB pages, entry blocks, pages united and reused", fma_d_malloc,
    fma_d_free);

static void *bsd44_d_malloc(void *h, size_t n) { return rt_fma_malloc(h, n); }
static void bsd44_d_free(void *h, void *p) { rt_fma_free(h, p); }
static const rt_allocator_t bsd44_descriptor = FMA_DESCRIPTOR(
    "bsd44", bsd44_d_create, NULL, "O(1), O(page/16) when it cuts a page; O(pages/w + free runs) for several pages",
    "O(1); O(pages of the block) for several", true,
    "BSD 4.4 (McKusick-Karels): power-of-two buckets in 4 KiB pages, never united", bsd44_d_malloc, bsd44_d_free);

static const rt_allocator_t *const registry[] = {
    &tlsf_descriptor,    &tlsf32_descriptor, &seglist_descriptor, &firstfit_descriptor, &bestfit_descriptor,
    &halffit_descriptor, &buddy_descriptor,  &wf_descriptor,      &wf32_descriptor,     &wf128_descriptor,
    &wf256_descriptor,   &wf_ro_descriptor,  &wf_lazy_descriptor, &wf_hint_descriptor,  &fma_descriptor,
    &bsd44_descriptor,   &wfc_descriptor,    &tlsfq_descriptor,   &tlsfmc_descriptor,
};

const rt_allocator_t *const *rt_registry(size_t *count)
{
    *count = sizeof registry / sizeof registry[0];
    return registry;
}

static bool same_name(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

const rt_allocator_t *rt_registry_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        if (same_name(registry[i]->name, name)) {
            return registry[i];
        }
    }
    return NULL;
}
