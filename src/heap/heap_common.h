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

/* Delivers the reports heap_defer kept (to the handler, or RT_PANIC as rt_hooks_report does), in
 * order, the lock released: call it after heap_unlock through HEAP_DELIVER, which tests first. */
void heap_deliver(rt_heap_t *h) __attribute__((cold, noinline));
#define HEAP_DELIVER(h) ((h)->npending != 0u ? heap_deliver(h) : (void)0)

/* Why p is not a block free may give back (heap_validate_fast refused it). Cold. */
rt_error_kind_t heap_diagnose(const rt_heap_t *h, void *p) __attribute__((cold, noinline));

/* RT_ERR_NONE and *v filled iff p is a live block of h (heap_validate_fast; quick: h has quick
 * lists, whose cached blocks are refused); else the error. */
RT_HOT rt_error_kind_t heap_validate(const rt_heap_t *h, void *p, blk_view *v, bool quick)
{
    if (__builtin_expect(heap_validate_fast(h, p, v, quick), 1)) {
        return RT_ERR_NONE;
    }
    rt_error_kind_t kind = heap_diagnose(h, p);
    return kind != RT_ERR_NONE ? kind : RT_ERR_CORRUPTED;
}

extern const rt_heap_ops_t rt_heap_ops_tlsf, rt_heap_ops_tlsf32, rt_heap_ops_seglist, rt_heap_ops_firstfit,
    rt_heap_ops_bestfit, rt_heap_ops_halffit, rt_heap_ops_tlsfq;

#endif /* RT_HEAP_COMMON_H */
