/* SPDX-License-Identifier: MIT */
/*
 * workloads/wl_fma.h -- the test program of the FMA article (Dr. Dobb's 1998, "Performance and Memory
 * Utilization"; its study: bench/README.md), as a seeded trace generator (workload.h's wl_trace_t).
 *
 * The article: "randomly requests and releases previously allocated blocks"; sizes drawn within
 * the limits of its Table 1 -- 16 B 10 %, 32 B 30 %, 64 B 20 %, 128 B 15 %, 256 B 10 %, 512 B 7 %,
 * 1024 B 5 %, 2048 B 3 % of the calls, never more than a page; a table of up to 5000 allocated
 * blocks; "If the table overflows instead of randomly releasing blocks (which can happen due to the
 * way blocks are selected for release), all allocated blocks are freed before the next block is
 * allocated"; runs of 1,000 .. 60,000 allocations; Table 2 counts the overflows.
 *
 * What the article leaves open, and what is chosen here:
 *   - Request or release: each step is a request with probability 1/2, else a release (one bit of
 *     xorshift64*). The article gives no ratio; 1/2 is the plain "randomly requests and releases".
 *   - Which block is released (WL_FMA_RELEASE_INDEX, the main reading): a table index drawn
 *     uniformly from all WL_FMA_TABLE entries; an empty entry releases nothing (a miss: no call,
 *     nothing in the trace). This is the reading under which "the way blocks are selected for
 *     release" can make the table overflow: a release succeeds with probability live / 5000, so the
 *     table fills towards 5000 (time constant ~10,000 steps) and overflows from about 25,000
 *     allocations on -- the article's "the percentage of memory savings decreases as the number of
 *     blocks allocated increases ... the test program only keeps track of 5000 allocated blocks".
 *     WL_FMA_RELEASE_LIVE (for comparison): a release frees a block drawn uniformly among the live
 *     ones (nothing when none is live); the live count is then a random walk of a few hundred blocks
 *     and the table never overflows in 60,000 allocations.
 *   - Overflow: a request finding the table full first frees every tracked block, in table order
 *     (frees in the trace, like any other), then allocates; each such event counts one overflow.
 *   - Sizes within a class: WL_FMA_UNIFORM draws uniformly within (previous class, class] -- 1..16,
 *     17..32, ..., 1025..2048 -- the article's "determined randomly, within the following limits"
 *     (Table 1's sizes are limits, and the allocators round up); it exercises the rounding of every
 *     allocator and gives TLSF and glibc their real request sizes. WL_FMA_EXACT requests the class
 *     size itself (the table read literally). The FMA and BSD 4.4 round both to the same power of
 *     two, so their pages are identical under the two (both modes make the same draws: the same
 *     classes, releases and overflows); the difference shows in TLSF's and glibc's.
 *   - Run lengths: the trace stops after the given number of allocations (a run of n allocations
 *     with a seed is a prefix of the longer runs with that seed: the curves over n are one run
 *     watched at several points, as one program run with a growing count would be).
 * The slots of the trace are the table's entries (WL_FMA_TABLE of them); a malloc takes the most
 * recently emptied one (LIFO), which does not matter: releases draw indexes uniformly.
 *
 * Beyond the article: the burst program (WL_FMA_BURST, wl_fma_burst). The article's test keeps one
 * steady size mix, under which BSD 4.4's per-size free lists keep up and FMA gains only when whole
 * pages happen to empty; the mechanism FMA was built for is "burst requests and releases of
 * equal-sized memory blocks" (pages emptied by one size and reused for another). The burst program
 * is a sequence of phases; each phase draws
 *   - a size class by Table 1's percentages (the same draw as a request of the article's test),
 *   - a burst length B uniform in [WL_FMA_BURST_MIN, WL_FMA_BURST_MAX],
 *   - a release count R uniform in [0, E], E the blocks live when the phase begins ("earlier"),
 * then requests B blocks of that class (each size drawn as `sizes` says, within the class) and,
 * spread evenly among them, releases R of the earlier blocks, each drawn uniformly among the earlier
 * ones still live: after the i-th request of the phase (i = 1..B) the releases made reach
 * floor(R * i / B). Phase blocks are never released in their own phase. The live set is bounded by
 * the same table: a request finding it full frees every tracked block in table order first (an
 * overflow, as in the article); the earlier blocks are then gone, and releases the phase still owes
 * are misses. The live count is a random walk around B / E[R / E] ~ 2 x 275 blocks; the table rarely
 * fills. Runs stop after the given number of allocations, mid-phase if need be (a run is a prefix of
 * the longer runs with its seed, as in the article's program).
 */
#ifndef RTBENCH_WL_FMA_H
#define RTBENCH_WL_FMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

enum { WL_FMA_TABLE = 5000, WL_FMA_CLASSES = 8, WL_FMA_PAGE = 4096 };
/* The burst program's burst length B, uniform in [MIN, MAX] blocks. */
enum { WL_FMA_BURST_MIN = 50, WL_FMA_BURST_MAX = 500 };

typedef enum wl_fma_sizes { WL_FMA_UNIFORM = 0, WL_FMA_EXACT = 1 } wl_fma_sizes_t;
/* How blocks are released: the article's test (by index, by live block) or the burst program. */
typedef enum wl_fma_release { WL_FMA_RELEASE_INDEX = 0, WL_FMA_RELEASE_LIVE = 1, WL_FMA_BURST = 2 } wl_fma_release_t;

/* Table 1: the class limits (bytes) and the percentage of requests of each. */
extern const uint32_t wl_fma_class_size[WL_FMA_CLASSES];
extern const uint32_t wl_fma_class_percent[WL_FMA_CLASSES];

/* "uniform" or "exact"; "index", "live" or "burst". */
const char *wl_fma_sizes_name(wl_fma_sizes_t sizes);
const char *wl_fma_release_name(wl_fma_release_t release);

typedef struct wl_fma_info {
    size_t allocations;               /* mallocs in the trace (== the run length asked for) */
    size_t releases;                  /* frees drawn at random (overflow frees not included) */
    size_t misses;                    /* release draws that released nothing (empty entry; none live) */
    size_t overflows;                 /* times the table was full at a request (Table 2's "table overflow") */
    size_t overflow_frees;            /* frees made by those overflows */
    size_t max_live;                  /* most blocks tracked at once (<= WL_FMA_TABLE) */
    size_t per_class[WL_FMA_CLASSES]; /* mallocs per size class */
    size_t bursts;                    /* burst program: phases begun (the last one may be cut short) */
} wl_fma_info_t;

/* One phase of the burst program, as drawn (wl_fma_burst's record). */
typedef struct wl_fma_phase {
    size_t op;        /* index in t->ops of the phase's first op (its first malloc or overflow) */
    uint32_t cls;     /* the size class (index into wl_fma_class_size) */
    uint32_t blocks;  /* B, the burst length drawn (the run may stop before B are requested) */
    uint32_t earlier; /* E, blocks live when the phase began */
    uint32_t release; /* R, earlier blocks to release during the phase (<= E) */
} wl_fma_phase_t;

/* The article's run of `allocations` allocations (>= 1) from `seed` (0 is replaced by 1), blocks
 * released as `release` says (WL_FMA_BURST: the burst program, as wl_fma_burst without a record).
 * Fills t (t->peak_live: the most requested bytes live at once) and, when info is not NULL, *info.
 * Returns false when out of memory or allocations is 0. */
bool wl_fma(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, wl_fma_release_t release, uint64_t seed,
            wl_fma_info_t *info);

/* The burst program (beyond the article; above): as wl_fma, and the first `cap` phases recorded in
 * phases[] when phases is not NULL (info->bursts says how many there were). */
bool wl_fma_burst(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, uint64_t seed, wl_fma_info_t *info,
                  wl_fma_phase_t *phases, size_t cap);

#endif /* RTBENCH_WL_FMA_H */
