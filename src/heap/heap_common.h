/*
 * heap_common.h -- what heap_common.c gives the index-specific code above it: creation over a
 * buffer through a backend's table, and the tables themselves (one per heap_<index>.c), which
 * heap_select.c and the registry reach by index.
 *
 * Kept apart from heap_internal.h so that nothing inline there calls into heap_common.c: the
 * control structure, the O(1) checks and the walk step are the bottom of the heap (including
 * only block/ and base/); heap_common.c and the facade stand on them, never the other way round.
 */
#ifndef RT_HEAP_COMMON_H
#define RT_HEAP_COMMON_H

#include "heap/heap_internal.h"

/* Lays the control structure and pool 0 over [mem, mem + size) for the backend `ops`. NULL when
 * the buffer is too small for the control structure and one smallest block. O(1) plus the
 * backend's index reset. */
rt_heap_t *rt_heap_init(void *mem, size_t size, const rt_heap_ops_t *ops);

extern const rt_heap_ops_t rt_heap_ops_tlsf, rt_heap_ops_tlsf32, rt_heap_ops_seglist, rt_heap_ops_firstfit,
    rt_heap_ops_bestfit, rt_heap_ops_halffit;

#endif /* RT_HEAP_COMMON_H */
