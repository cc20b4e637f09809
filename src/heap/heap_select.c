/*
 * heap_select.c -- choosing an index at run time, and the generic entry points that need more
 * than a heap's table. Kept apart from heap_common.c so that a firmware calling only
 * rt_tlsf_create, rt_tlsf_malloc and rt_tlsf_free links only those: each table below is its own
 * section (-fdata-sections) and names one function per index, so a caller of rt_heap_realloc
 * links every index's realloc, and a program that calls none links none.
 */
#include "heap/heap_common.h"

static const rt_heap_ops_t *const backends[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = &rt_heap_ops_tlsf,         [RT_INDEX_TLSF32] = &rt_heap_ops_tlsf32,
    [RT_INDEX_SEGLIST] = &rt_heap_ops_seglist,   [RT_INDEX_FIRSTFIT] = &rt_heap_ops_firstfit,
    [RT_INDEX_BESTFIT] = &rt_heap_ops_bestfit,   [RT_INDEX_HALFFIT] = &rt_heap_ops_halffit,
    [RT_INDEX_TLSFQ] = &rt_heap_ops_tlsfq,
};

typedef void *(*realloc_fn)(rt_heap_t *h, void *ptr, size_t size);
typedef void *(*calloc_fn)(rt_heap_t *h, size_t count, size_t size);
typedef void *(*memalign_fn)(rt_heap_t *h, size_t alignment, size_t size);
typedef bool (*check_fn)(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
typedef size_t (*head_fit_fn)(rt_heap_t *h);

static const realloc_fn reallocs[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = rt_tlsf_realloc,         [RT_INDEX_TLSF32] = rt_tlsf32_realloc,
    [RT_INDEX_SEGLIST] = rt_seglist_realloc,   [RT_INDEX_FIRSTFIT] = rt_firstfit_realloc,
    [RT_INDEX_BESTFIT] = rt_bestfit_realloc,   [RT_INDEX_HALFFIT] = rt_halffit_realloc,
    [RT_INDEX_TLSFQ] = rt_tlsfq_realloc,
};
static const calloc_fn callocs[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = rt_tlsf_calloc,         [RT_INDEX_TLSF32] = rt_tlsf32_calloc,
    [RT_INDEX_SEGLIST] = rt_seglist_calloc,   [RT_INDEX_FIRSTFIT] = rt_firstfit_calloc,
    [RT_INDEX_BESTFIT] = rt_bestfit_calloc,   [RT_INDEX_HALFFIT] = rt_halffit_calloc,
    [RT_INDEX_TLSFQ] = rt_tlsfq_calloc,
};
static const memalign_fn memaligns[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = rt_tlsf_memalign,         [RT_INDEX_TLSF32] = rt_tlsf32_memalign,
    [RT_INDEX_SEGLIST] = rt_seglist_memalign,   [RT_INDEX_FIRSTFIT] = rt_firstfit_memalign,
    [RT_INDEX_BESTFIT] = rt_bestfit_memalign,   [RT_INDEX_HALFFIT] = rt_halffit_memalign,
    [RT_INDEX_TLSFQ] = rt_tlsfq_memalign,
};
static const check_fn checks[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = heap_tlsf_check_index,         [RT_INDEX_TLSF32] = heap_tlsf32_check_index,
    [RT_INDEX_SEGLIST] = heap_seglist_check_index,   [RT_INDEX_FIRSTFIT] = heap_firstfit_check_index,
    [RT_INDEX_BESTFIT] = heap_bestfit_check_index,   [RT_INDEX_HALFFIT] = heap_halffit_check_index,
    [RT_INDEX_TLSFQ] = heap_tlsfq_check_index,
};
static const head_fit_fn head_fits[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = heap_tlsf_head_fit,         [RT_INDEX_TLSF32] = heap_tlsf32_head_fit,
    [RT_INDEX_SEGLIST] = heap_seglist_head_fit,   [RT_INDEX_FIRSTFIT] = heap_firstfit_head_fit,
    [RT_INDEX_BESTFIT] = heap_bestfit_head_fit,   [RT_INDEX_HALFFIT] = heap_halffit_head_fit,
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

rt_heap_t *rt_heap_create_with(void *mem, size_t size, rt_index_t index)
{
    if ((unsigned)index >= (unsigned)RT_INDEX_COUNT) {
        return NULL;
    }
    return rt_heap_init(mem, size, backends[index]);
}

size_t rt_heap_control_size(rt_index_t index)
{
    return (unsigned)index < (unsigned)RT_INDEX_COUNT ? backends[index]->control_size : 0u;
}

/* Worst case over buffer addresses (one byte past an A boundary): A - 1 bytes of slack, the
 * control structure padded so the first header is at -W mod A, one smallest block, the sentinel
 * word (which the padding's last word provides on the far side). */
size_t rt_heap_min_buffer(rt_index_t index)
{
    size_t control = rt_heap_control_size(index);
    return control == 0u ? 0u : BLK_A - 1u + rt_align_up(control + RT_HEAP_GUARD + BLK_W, BLK_A) + BLK_MIN + RT_HEAP_GUARD;
}

const char *rt_index_name(rt_index_t index)
{
    return (unsigned)index < (unsigned)RT_INDEX_COUNT ? backends[index]->name() : "unknown";
}
