/* SPDX-License-Identifier: MIT */
/*
 * heap_select.c -- choosing an index at run time (rt_heap_create_with and the queries by index).
 * Kept apart from heap_common.c and heap_dispatch.c: its table names every backend, so only a
 * program that chooses its index at run time links them all.
 */
#include "heap/heap_common.h"

static const rt_heap_ops_t *const backends[RT_INDEX_COUNT] = {
    [RT_INDEX_TLSF] = &rt_heap_ops_tlsf,       [RT_INDEX_TLSF32] = &rt_heap_ops_tlsf32,
    [RT_INDEX_SEGLIST] = &rt_heap_ops_seglist, [RT_INDEX_FIRSTFIT] = &rt_heap_ops_firstfit,
    [RT_INDEX_BESTFIT] = &rt_heap_ops_bestfit, [RT_INDEX_HALFFIT] = &rt_heap_ops_halffit,
    [RT_INDEX_TLSFQ] = &rt_heap_ops_tlsfq,
};

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
    return control == 0u ? 0u
                         : BLK_A - 1u + rt_align_up(control + RT_HEAP_GUARD + BLK_W, BLK_A) + BLK_MIN + RT_HEAP_GUARD;
}

const char *rt_index_name(rt_index_t index)
{
    return (unsigned)index < (unsigned)RT_INDEX_COUNT ? backends[index]->name() : "unknown";
}
