/* SPDX-License-Identifier: MIT */
/* The heap with the TLSF index, 32 slots per octave. See index/tlsf.h. */
#define TLSF_SL_LOG2 5
#include "index/tlsf.h"
#define FACADE_MALLOC rt_tlsf32_malloc
#define FACADE_FREE rt_tlsf32_free
#include "heap/facade.h"

void *rt_tlsf32_malloc(rt_heap_t *h, size_t size) { return facade_malloc(h, size); }
void rt_tlsf32_free(rt_heap_t *h, void *ptr) { facade_free(h, ptr); }
void *rt_tlsf32_realloc(rt_heap_t *h, void *ptr, size_t size) { return facade_realloc(h, ptr, size); }
void *rt_tlsf32_calloc(rt_heap_t *h, size_t count, size_t size) { return facade_calloc(h, count, size); }
void *rt_tlsf32_memalign(rt_heap_t *h, size_t alignment, size_t size) { return facade_memalign(h, alignment, size); }

bool heap_tlsf32_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only)
{
    return facade_check_index(h, visit, context, head_only);
}
size_t heap_tlsf32_head_fit(rt_heap_t *h) { return facade_head_fit(h); }

const rt_heap_ops_t rt_heap_ops_tlsf32 = FACADE_OPS(RT_INDEX_TLSF32);

rt_heap_t *rt_tlsf32_create(void *mem, size_t size) { return rt_heap_init(mem, size, &rt_heap_ops_tlsf32); }
