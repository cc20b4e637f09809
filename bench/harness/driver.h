/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/driver.h -- replays a workload trace against any allocator through its descriptor.
 *
 * An instance is one allocator plus its live-set table. Allocators with `create` run over the
 * caller's buffer (the benchmark's 64 MiB arena, touched with memset when the instance is
 * opened, before any timing); system peers (create == NULL) run on the process heap.
 *
 * Two replays of the same trace:
 *   - timed: every call between clk_start() and clk_end() (clock.h), one record per op:
 *     cycles (raw, nothing subtracted) and, after a malloc, the allocator's probes of that call
 *     (desc->last_probes, read outside the timed region). The byte write into a fresh block
 *     comes after the timed region.
 *   - untimed: the same loop without per-op clocks, timed as a whole with CLOCK_MONOTONIC.
 * Both check drv_stop (set by a SIGINT handler) between chunks of operations, never inside the
 * timed region, and stop early when it is set.
 */
#ifndef RTBENCH_DRIVER_H
#define RTBENCH_DRIVER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtalloc/registry.h"
#include "workload.h"

/* Set asynchronously (SIGINT): replays stop at the next chunk boundary. */
extern volatile sig_atomic_t drv_stop;

/* Per-op record values that are not measurements. */
#define DRV_NOT_MEASURED UINT32_MAX /* cycles of an op skipped (free of a slot whose malloc failed) */
#define DRV_NO_PROBES UINT32_MAX    /* probes: free ops, or an allocator without last_probes */

typedef struct drv_instance {
    const rt_allocator_t *a;
    void *buffer; /* arena for allocators with create */
    size_t size;
    void *handle; /* what create returned; NULL for system allocators */
    void **slots; /* the live-set: slots[s] is the block in slot s, or NULL */
    uint32_t nslots;
} drv_instance_t;

/* Opens an instance with room for `nslots` live blocks: for allocators with create, touches the
 * buffer when `touch` and creates the allocator over it. Returns false when create fails or
 * memory for the slot table is lacking. */
bool drv_open(drv_instance_t *in, const rt_allocator_t *a, void *buffer, size_t size, uint32_t nslots, bool touch);

/* Back to a fresh state: frees every live block (system allocators) or re-creates the instance
 * over the same buffer (without touching it again). Untimed. Returns false if create fails. */
bool drv_reset(drv_instance_t *in);

/* Frees the live blocks of a system allocator and the slot table. */
void drv_close(drv_instance_t *in);

/* Progress callback: fraction of the replay done, in [0, 1]. */
typedef void (*drv_progress_fn)(void *context, double done);

typedef struct drv_outcome {
    size_t done;     /* ops replayed (== nops unless interrupted) */
    size_t failures; /* allocating calls that returned NULL, those flagged WL_OP_FAILED left out */
    bool interrupted;
} drv_outcome_t;

/* Timed replay of t (on the instance's current state). cycles[i] and, if probes is not NULL,
 * probes[i] receive op i's record. */
drv_outcome_t drv_replay_timed(drv_instance_t *in, const wl_trace_t *t, uint32_t *cycles, uint32_t *probes,
                               drv_progress_fn progress, void *context);

/* Untimed replay of t; *elapsed_ns receives the wall time of the whole loop. */
drv_outcome_t drv_replay_untimed(drv_instance_t *in, const wl_trace_t *t, uint64_t *elapsed_ns);

/* The ops other than a plain malloc or free (driver.c): realloc through desc->realloc, calloc
 * through desc->calloc (count 1), memalign through desc->memalign, and mallocs flagged
 * WL_OP_FAILED. Where an allocator lacks one of those (noop), realloc is malloc then free of the
 * old block (no copy), calloc a malloc and memset, memalign a malloc when the alignment is at most
 * the allocator's and a failure otherwise. A realloc that fails leaves the old block in its slot.
 * An op flagged WL_OP_FAILED (NULL in the recorded run) is replayed too; when it gets memory where
 * the recording got none, a fresh block is freed at once and a realloc keeps the new block, so the
 * slots stay as the recording had them. Returns whether the call got memory (true for a free). */
bool drv_apply_ext(drv_instance_t *in, const wl_op_t *op, size_t i);

/* One operation, untimed (for harnesses such as the instruction counter). Returns false when an
 * allocating call (malloc, realloc, calloc, memalign) returned NULL. */
static inline bool drv_apply(drv_instance_t *in, const wl_op_t *op, size_t i)
{
    if (op->kind == WL_MALLOC) {
        void *p = in->a->malloc(in->handle, op->size);
        if (p != NULL) {
            *(volatile unsigned char *)p = (unsigned char)i;
        }
        in->slots[op->slot] = p;
        return p != NULL;
    }
    if (op->kind == WL_FREE) {
        void *p = in->slots[op->slot];
        in->slots[op->slot] = NULL;
        if (p != NULL) {
            in->a->free(in->handle, p);
        }
        return true;
    }
    return drv_apply_ext(in, op, i);
}

#endif /* RTBENCH_DRIVER_H */
