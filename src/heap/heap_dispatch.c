/* SPDX-License-Identifier: MIT */
/*
 * heap_dispatch.c -- the generic entry points that need more than a heap's table (rt_heap_realloc,
 * rt_heap_calloc, rt_heap_memalign; the index check and head fit of rt_heap_check and
 * rt_heap_stats). Kept apart from heap_common.c and heap_select.c so that a firmware calling only
 * rt_tlsf_create, rt_tlsf_malloc and rt_tlsf_free links only those: each table below is its own
 * section (-fdata-sections) and names one function per index, weakly, so a caller of
 * rt_heap_realloc links the realloc of each index whose heap it creates, and a program that calls
 * none links none.
 */
#include "heap/heap_common.h"

/* Weak references: a program linking the library as an archive pulls in no backend for these
 * tables. A heap of index i exists only if rt_<i>_create (or rt_heap_create_with, which names
 * every backend's table) was linked, and that links the backend's object, so the entry for a heap
 * that exists is always defined. Through --gc-sections a defined entry keeps its function. */
#define HEAP_WEAK __attribute__((weak))
HEAP_WEAK void *rt_tlsf_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_tlsf_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_tlsf_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_tlsf_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_tlsf_head_fit(rt_heap_t *h);
HEAP_WEAK void *rt_tlsf32_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_tlsf32_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_tlsf32_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_tlsf32_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_tlsf32_head_fit(rt_heap_t *h);
HEAP_WEAK void *rt_seglist_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_seglist_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_seglist_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_seglist_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_seglist_head_fit(rt_heap_t *h);
HEAP_WEAK void *rt_firstfit_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_firstfit_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_firstfit_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_firstfit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_firstfit_head_fit(rt_heap_t *h);
HEAP_WEAK void *rt_bestfit_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_bestfit_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_bestfit_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_bestfit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_bestfit_head_fit(rt_heap_t *h);
HEAP_WEAK void *rt_halffit_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_halffit_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_halffit_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_halffit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_halffit_head_fit(rt_heap_t *h);
HEAP_WEAK void *rt_tlsfq_realloc(rt_heap_t *h, void *ptr, size_t size);
HEAP_WEAK void *rt_tlsfq_calloc(rt_heap_t *h, size_t count, size_t size);
HEAP_WEAK void *rt_tlsfq_memalign(rt_heap_t *h, size_t alignment, size_t size);
HEAP_WEAK bool heap_tlsfq_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
HEAP_WEAK size_t heap_tlsfq_head_fit(rt_heap_t *h);
HEAP_WEAK size_t heap_tlsfq_layer_check(rt_heap_t *h);

typedef void *(*realloc_fn)(rt_heap_t *h, void *ptr, size_t size);
typedef void *(*calloc_fn)(rt_heap_t *h, size_t count, size_t size);
typedef void *(*memalign_fn)(rt_heap_t *h, size_t alignment, size_t size);
typedef bool (*check_fn)(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
typedef size_t (*head_fit_fn)(rt_heap_t *h);

static const realloc_fn reallocs[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = rt_tlsf_realloc,       [RT_INDEX_TLSF32] = rt_tlsf32_realloc,
    [RT_INDEX_SEGLIST] = rt_seglist_realloc, [RT_INDEX_FIRSTFIT] = rt_firstfit_realloc,
    [RT_INDEX_BESTFIT] = rt_bestfit_realloc, [RT_INDEX_HALFFIT] = rt_halffit_realloc,
    [RT_INDEX_TLSFQ] = rt_tlsfq_realloc,
};
static const calloc_fn callocs[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = rt_tlsf_calloc,       [RT_INDEX_TLSF32] = rt_tlsf32_calloc,
    [RT_INDEX_SEGLIST] = rt_seglist_calloc, [RT_INDEX_FIRSTFIT] = rt_firstfit_calloc,
    [RT_INDEX_BESTFIT] = rt_bestfit_calloc, [RT_INDEX_HALFFIT] = rt_halffit_calloc,
    [RT_INDEX_TLSFQ] = rt_tlsfq_calloc,
};
static const memalign_fn memaligns[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = rt_tlsf_memalign,       [RT_INDEX_TLSF32] = rt_tlsf32_memalign,
    [RT_INDEX_SEGLIST] = rt_seglist_memalign, [RT_INDEX_FIRSTFIT] = rt_firstfit_memalign,
    [RT_INDEX_BESTFIT] = rt_bestfit_memalign, [RT_INDEX_HALFFIT] = rt_halffit_memalign,
    [RT_INDEX_TLSFQ] = rt_tlsfq_memalign,
};
static const check_fn checks[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = heap_tlsf_check_index,       [RT_INDEX_TLSF32] = heap_tlsf32_check_index,
    [RT_INDEX_SEGLIST] = heap_seglist_check_index, [RT_INDEX_FIRSTFIT] = heap_firstfit_check_index,
    [RT_INDEX_BESTFIT] = heap_bestfit_check_index, [RT_INDEX_HALFFIT] = heap_halffit_check_index,
    [RT_INDEX_TLSFQ] = heap_tlsfq_check_index,
};
static const head_fit_fn head_fits[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = heap_tlsf_head_fit,       [RT_INDEX_TLSF32] = heap_tlsf32_head_fit,
    [RT_INDEX_SEGLIST] = heap_seglist_head_fit, [RT_INDEX_FIRSTFIT] = heap_firstfit_head_fit,
    [RT_INDEX_BESTFIT] = heap_bestfit_head_fit, [RT_INDEX_HALFFIT] = heap_halffit_head_fit,
    [RT_INDEX_TLSFQ] = heap_tlsfq_head_fit,
};

void *rt_heap_realloc(rt_heap_t *h, void *ptr, size_t size)
{
    HEAP_REQUIRE(h, "realloc", NULL);
    return reallocs[h->ops->index](h, ptr, size);
}
void *rt_heap_calloc(rt_heap_t *h, size_t count, size_t size)
{
    HEAP_REQUIRE(h, "calloc", NULL);
    return callocs[h->ops->index](h, count, size);
}
void *rt_heap_memalign(rt_heap_t *h, size_t alignment, size_t size)
{
    HEAP_REQUIRE(h, "memalign", NULL);
    return memaligns[h->ops->index](h, alignment, size);
}

bool heap_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only)
{
    return checks[h->ops->index](h, visit, context, head_only);
}
size_t heap_head_fit(rt_heap_t *h) { return head_fits[h->ops->index](h); }
size_t heap_layer_check(rt_heap_t *h) { return h->ops->index == RT_INDEX_TLSFQ ? heap_tlsfq_layer_check(h) : 0u; }
