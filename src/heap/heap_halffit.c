/* SPDX-License-Identifier: MIT */
/* The heap with the half-fit index. See index/halffit.h. */
#include "index/halffit.h"
#define FACADE_MALLOC rt_halffit_malloc
#define FACADE_FREE rt_halffit_free
#include "heap/facade.h"

void *rt_halffit_malloc(rt_heap_t *h, size_t size) { return facade_malloc(h, size); }
void rt_halffit_free(rt_heap_t *h, void *ptr) { facade_free(h, ptr); }
void *rt_halffit_realloc(rt_heap_t *h, void *ptr, size_t size) { return facade_realloc(h, ptr, size); }
void *rt_halffit_calloc(rt_heap_t *h, size_t count, size_t size) { return facade_calloc(h, count, size); }
void *rt_halffit_memalign(rt_heap_t *h, size_t alignment, size_t size) { return facade_memalign(h, alignment, size); }

bool heap_halffit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only)
{
    return facade_check_index(h, visit, context, head_only);
}
size_t heap_halffit_head_fit(rt_heap_t *h) { return facade_head_fit(h); }

const rt_heap_ops_t rt_heap_ops_halffit = FACADE_OPS(RT_INDEX_HALFFIT);

rt_heap_t *rt_halffit_create(void *mem, size_t size) { return rt_heap_init(mem, size, &rt_heap_ops_halffit); }
