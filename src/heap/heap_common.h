/* SPDX-License-Identifier: MIT */
/*
 * heap_common.h -- what heap_common.c gives the index-specific code above it: creation over a
 * buffer through a backend's table, the delivery of deferred reports, containment, and the
 * tables themselves (one per heap_<index>.c), which heap_select.c and the registry reach by index.
 *
 * Kept apart from heap_internal.h so that nothing inline there calls into heap_common.c: the
 * control structure, the checker and the walk step are the bottom of the heap (including only
 * block/ and base/); heap_common.c and the facade stand on them, never the other way round.
 */
#ifndef RT_HEAP_COMMON_H
#define RT_HEAP_COMMON_H

#include "heap/heap_internal.h"

/* Lays the control structure and pool 0 over [mem, mem + size) for the backend `ops`, with a
 * key of a new generation (never the key the buffer held). NULL when the buffer is too small for
 * the control structure and one smallest block. O(1) plus the backend's index reset. */
rt_heap_t *rt_heap_init(void *mem, size_t size, const rt_heap_ops_t *ops);

/* Delivers the reports heap_defer kept (to the handler, or RT_PANIC as rt_hooks_report does), in
 * order, the lock released: call it after heap_unlock through HEAP_DELIVER, which tests first. */
void heap_deliver(rt_heap_t *h) __attribute__((cold, noinline));
#define HEAP_DELIVER(h) ((h)->npending != 0u ? heap_deliver(h) : (void)0)

/* Containment, with the lock held, by a call that met damage (after counting its report): every
 * damaged place of the heap is fenced off and the index rebuilt from the blocks that remain free,
 * so that rt_heap_check passes again, live blocks free and merge normally and the rest of the
 * heap serves. One walk of every pool, checking each block as rt_heap_check does:
 *   - a header that does not verify: the block's extent runs to the next place where the blocks
 *     resume (a verified header; on the folded layouts one that leads to more); it was one free
 *     block when that header says PREV_FREE and its footer agrees (its damaged head fenced, the
 *     rest free), else it is fenced whole as live (remembered: its free is accepted, its memory
 *     never reused; several damaged headers side by side make one such region);
 *   - a free block whose footer, or whose own links, are damaged: fenced;
 *   - blocks a layer held (layer_forget first) and free blocks: merged runs, indexed anew;
 *   - the counters of used bytes and live blocks set to what the walk found.
 * O(blocks + damaged bytes / A): the cost of an error path, paid once per damage. Level 0 (no
 * tags): nothing (damage there cannot be told from data). */
void heap_contain(rt_heap_t *h) __attribute__((cold, noinline));

/* Contains (heap_contain) after a call refused `ptr` with `kind` when that may be damage: a
 * corruption met, or a pointer inside a pool whose header is no live block's (a wild pointer --
 * the walk then finds nothing -- or a block whose own header was overwritten, which the walk
 * fences: its free is accepted afterwards). A double free or a foreign pointer is the caller's
 * error alone. Lock held. */
void heap_contain_after(rt_heap_t *h, rt_error_kind_t kind, const void *ptr) __attribute__((cold, noinline));

/* True iff ptr is the payload of a fenced live block (heap_internal.h, fenced[]): then its
 * free is accepted -- counted, the memory stays fenced -- and it is forgotten. Lock held. */
bool heap_free_fenced(rt_heap_t *h, void *ptr) __attribute__((cold, noinline));

/* What each backend's heap_<name>.c gives heap_select.c besides its table and public entry
 * points: the index check (rt_heap_check) and the statistics' head fit; tlsfq its layer's check. */
bool heap_tlsf_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_tlsf_head_fit(rt_heap_t *h);
bool heap_tlsf32_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_tlsf32_head_fit(rt_heap_t *h);
bool heap_seglist_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_seglist_head_fit(rt_heap_t *h);
bool heap_firstfit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_firstfit_head_fit(rt_heap_t *h);
bool heap_bestfit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_bestfit_head_fit(rt_heap_t *h);
bool heap_halffit_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_halffit_head_fit(rt_heap_t *h);
bool heap_tlsfq_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_tlsfq_head_fit(rt_heap_t *h);
size_t heap_tlsfq_layer_check(rt_heap_t *h);

/* The same for the heap h, by its index (heap_select.c: linked only by their callers, the check
 * and the statistics, so a program that calls neither links none of them). */
bool heap_check_index(rt_heap_t *h, rt_idx_visit_fn visit, void *context, bool head_only);
size_t heap_head_fit(rt_heap_t *h);
size_t heap_layer_check(rt_heap_t *h); /* 0 without a layer */

extern const rt_heap_ops_t rt_heap_ops_tlsf, rt_heap_ops_tlsf32, rt_heap_ops_seglist, rt_heap_ops_firstfit,
    rt_heap_ops_bestfit, rt_heap_ops_halffit, rt_heap_ops_tlsfq;

#endif /* RT_HEAP_COMMON_H */
