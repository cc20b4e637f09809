/* The heap with the TLSF index (16 slots per octave) behind quick lists for small blocks. See
 * rtalloc/heap.h (RT_HEAP_QUICK_MAX_REQUEST) and facade.inc ("quick lists"). */
#include "index/tlsf.h"
#define FACADE_QUICK 1
#define FACADE_NAME tlsfq_name
static const char *tlsfq_name(void) { return "tlsfq"; }
#include "heap/facade.inc"

void *rt_tlsfq_malloc(rt_heap_t *h, size_t size) { return facade_malloc(h, size); }
void rt_tlsfq_free(rt_heap_t *h, void *ptr) { facade_free(h, ptr); }
void *rt_tlsfq_realloc(rt_heap_t *h, void *ptr, size_t size) { return facade_realloc(h, ptr, size); }
void *rt_tlsfq_calloc(rt_heap_t *h, size_t count, size_t size) { return facade_calloc(h, count, size); }
void *rt_tlsfq_memalign(rt_heap_t *h, size_t alignment, size_t size) { return facade_memalign(h, alignment, size); }

const rt_heap_ops_t rt_heap_ops_tlsfq =
    FACADE_OPS(RT_INDEX_TLSFQ, rt_tlsfq_malloc, rt_tlsfq_free, rt_tlsfq_realloc, rt_tlsfq_calloc, rt_tlsfq_memalign);

rt_heap_t *rt_tlsfq_create(void *mem, size_t size) { return rt_heap_init(mem, size, &rt_heap_ops_tlsfq); }
