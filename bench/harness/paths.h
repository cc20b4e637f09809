/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/paths.h -- which path of a boundary-tag heap (rtalloc/heap.h) one malloc or free
 * took, decided from the heap's state through the descriptor only (stats, walk, last_probes).
 *
 * malloc: the found block was cut whole (exact fit) when the heap has one free block fewer after
 * the call, split when it has as many; it climbed a first-level row when last_probes is 2 (for
 * the O(1) indexes, whose probes are bitmap look-ups).
 * free: which physical neighbours of the block were free, read from a walk before the call (the
 * blocks adjacent to it in address order), and checked against the change of the free-block
 * count after it (+1 no merge, 0 one merge, -1 both).
 *
 * Cost: a stats call (a walk of the heap) before and after, and a walk before a free: O(blocks),
 * run untraced between counted calls (inscount.h's plan.classify), so the counts are not changed.
 */
#ifndef RTBENCH_PATHS_H
#define RTBENCH_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtalloc/registry.h"
#include "workload.h"

typedef struct hp_pre {
    size_t free_blocks; /* before the call */
    bool found;         /* free: the block was met by the walk */
    bool prev_free, next_free;
} hp_pre_t;

/* Whether paths of `a` can be told: a boundary-tag heap with stats, walk and last_probes. */
bool hp_supported(const rt_allocator_t *a);

/* Before op (malloc, or free of ptr) on handle h: the state the path is decided from. */
void hp_before(const rt_allocator_t *a, void *h, const wl_op_t *op, void *ptr, hp_pre_t *pre);

/* After it (result: malloc's pointer): WL_PATH_* | (free blocks before << 8), as wl_trace_t.expect
 * writes it; WL_PATH_NONE when the path cannot be told (a failed call, an inconsistent state). */
uint32_t hp_after(const rt_allocator_t *a, void *h, const wl_op_t *op, void *result, const hp_pre_t *pre);

#endif /* RTBENCH_PATHS_H */
