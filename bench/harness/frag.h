/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/frag.h -- Masmano's fragmentation factor F (section 4, Table 7).
 *
 *   F = (peak memory of the allocator / peak live memory - 1) x 100 %
 *
 * Peak live memory: the most requested bytes held at once by the trace (its mallocs' sizes, not
 * the allocator's blocks). Peak memory of the allocator: its watermark, the highest address it
 * ever handed out, from the start of its memory (rt_stats_t.watermark through desc->stats).
 *   - Allocators with create (ours): the watermark read after the replay (it never decreases);
 *     after every malloc as well when a per-malloc series is asked for (Figure 4).
 *   - System allocators (create == NULL) with stats: approximated. A process heap has no
 *     watermark of the run's own, and its span (capacity) carries whatever earlier work left in
 *     it, so the peak taken is that of the bytes the allocator reports in use (rt_stats_t.used_bytes:
 *     for glibc mallinfo2's uordblks + hblkhd, chunks with their headers and rounding), sampled
 *     after every malloc, minus the bytes in use before the run. That sees internal fragmentation
 *     (headers, rounding to size classes) but not the free holes between live blocks: a lower
 *     estimate of F.
 *   - Without stats (noop): unknown.
 */
#ifndef RTBENCH_FRAG_H
#define RTBENCH_FRAG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtalloc/registry.h"
#include "workload.h"

typedef struct fr_result {
    uint64_t peak_live;   /* from the trace */
    uint64_t peak_memory; /* the allocator's peak (0 when unknown) */
    double factor;        /* F in %, 0 when unknown */
    uint64_t peak_used;   /* the most bytes in live blocks, headers and rounding included
                             (rt_stats_t.peak_used; for system allocators == peak_memory) */
    double factor_used;   /* F from peak_used: internal fragmentation only */
    size_t done;          /* ops replayed */
    size_t failures;      /* mallocs that returned NULL */
    bool known;           /* peak_memory measured */
    bool approximated;    /* system allocator: peak bytes in use, not a watermark */
} fr_result_t;

/* F in % from the two peaks; 0 when peak_live is 0. */
double fr_factor(uint64_t peak_memory, uint64_t peak_live);

/* Replays t untimed through a (handle: what create returned, NULL for a system allocator) with
 * the live-set table slots[0 .. t->slots) (all NULL on entry; the live blocks are left in it),
 * and measures F. If series is not NULL, series[k] receives the allocator's peak memory after
 * malloc k, for k < series_len (0 when unknown). Stops early when *stop becomes nonzero (stop may
 * be NULL). */
void fr_replay(const rt_allocator_t *a, void *handle, void **slots, const wl_trace_t *t, uint64_t *series,
               size_t series_len, const volatile sig_atomic_t *stop, fr_result_t *out);

#endif /* RTBENCH_FRAG_H */
