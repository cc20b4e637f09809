/*
 * bench/wl_fma.h -- the test program of the FMA article (Dr. Dobb's 1998, "Performance and Memory
 * Utilization"; SPEC section 2, FMA 1998), as a seeded trace generator (workload.h's wl_trace_t).
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
 */
#ifndef RTBENCH_WL_FMA_H
#define RTBENCH_WL_FMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

enum { WL_FMA_TABLE = 5000, WL_FMA_CLASSES = 8, WL_FMA_PAGE = 4096 };

typedef enum wl_fma_sizes { WL_FMA_UNIFORM = 0, WL_FMA_EXACT = 1 } wl_fma_sizes_t;
typedef enum wl_fma_release { WL_FMA_RELEASE_INDEX = 0, WL_FMA_RELEASE_LIVE = 1 } wl_fma_release_t;

/* Table 1: the class limits (bytes) and the percentage of requests of each. */
extern const uint32_t wl_fma_class_size[WL_FMA_CLASSES];
extern const uint32_t wl_fma_class_percent[WL_FMA_CLASSES];

/* "uniform" or "exact"; "index" or "live". */
const char *wl_fma_sizes_name(wl_fma_sizes_t sizes);
const char *wl_fma_release_name(wl_fma_release_t release);

typedef struct wl_fma_info {
    size_t allocations;    /* mallocs in the trace (== the run length asked for) */
    size_t releases;       /* frees drawn at random (overflow frees not included) */
    size_t misses;         /* release draws that released nothing (empty entry; none live) */
    size_t overflows;      /* times the table was full at a request (Table 2's "table overflow") */
    size_t overflow_frees; /* frees made by those overflows */
    size_t max_live;       /* most blocks tracked at once (<= WL_FMA_TABLE) */
    size_t per_class[WL_FMA_CLASSES]; /* mallocs per size class */
} wl_fma_info_t;

/* The article's run of `allocations` allocations (>= 1) from `seed` (0 is replaced by 1), blocks
 * released as `release` says. Fills t (t->peak_live: the most requested bytes live at once) and,
 * when info is not NULL, *info. Returns false when out of memory or allocations is 0. */
bool wl_fma(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, wl_fma_release_t release,
            uint64_t seed, wl_fma_info_t *info);

#endif /* RTBENCH_WL_FMA_H */
