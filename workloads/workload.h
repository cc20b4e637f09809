/* SPDX-License-Identifier: MIT */
/*
 * workloads/workload.h -- deterministic, seeded generators of allocator operations.
 *
 * A workload is a trace: an array of operations "malloc(size) into slot s" / "free slot s",
 * generated once from a seed, so that every allocator replays exactly the same sequence (the
 * generator's own cost is outside every timed region). Slots are the live-set: a malloc always
 * targets an empty slot and a free an occupied one.
 *
 * Generators (the benchmark's targets; the VaiOS blog section 10):
 *   uniform   L slots, n operations; each op draws s = rand() % L; if slot s is occupied it is
 *             freed, else malloc(min + rand() % (max - min + 1)) -- churn: L = 1000, sizes
 *             16..4096; small: L = 10000, sizes 8..256; 2,000,000 operations, seed 42.
 *   mem_frag  N times { malloc(72); malloc(8) spacer }, then free every 72-byte block (none can
 *             coalesce: the spacers stay live), then one malloc(120) -- the measured operation.
 * rand() is xorshift64*: x ^= x >> 12; x ^= x << 25; x ^= x >> 27; return x * 0x2545F4914F6CDD1D.
 * Traces end with live blocks; the driver frees them (untimed) when it resets an instance.
 */
#ifndef RTBENCH_WORKLOAD_H
#define RTBENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The generators above emit WL_MALLOC and WL_FREE only. Traces recorded from real programs
 * (trace/trace.h) use the rest of the family too:
 *   WL_REALLOC   realloc(slot's block, size): the slot keeps the (moved) block; an empty slot
 *                means realloc(NULL, size); size 0 is never recorded as realloc (it is a free);
 *   WL_CALLOC    calloc(1, size) into an empty slot (the product, checked when recorded);
 *   WL_MEMALIGN  memalign(WL_OP_ALIGN(op), size) into an empty slot (posix_memalign,
 *                aligned_alloc, valloc and pvalloc are recorded as this).
 * kind holds the wl_kind_t in its low 8 bits, log2 of the alignment (WL_MEMALIGN) in bits 8..15
 * and flags above: WL_OP_FAILED marks a call that returned NULL in the recorded run. */
typedef enum wl_kind { WL_MALLOC = 0, WL_FREE = 1, WL_REALLOC = 2, WL_CALLOC = 3, WL_MEMALIGN = 4 } wl_kind_t;
#define WL_OP_KIND(op) ((wl_kind_t)((op)->kind & 0xffu))
#define WL_OP_ALIGN(op) ((size_t)1 << (((op)->kind >> 8) & 0xffu))
#define WL_OP_FAILED 0x10000u

typedef struct wl_op {
    uint32_t slot;
    uint32_t size; /* WL_MALLOC: bytes requested; WL_FREE: 0 */
    uint32_t kind; /* wl_kind_t */
} wl_op_t;

typedef struct wl_trace {
    char name[32];
    char params[128]; /* the generator's parameters, in words, for report headers */
    uint64_t seed;
    uint32_t slots; /* size of the live-set table the replay needs */
    size_t nops;
    size_t nmalloc, nfree;
    size_t measured; /* the op of interest (mem_frag's malloc(120)); SIZE_MAX if none */
    wl_op_t *ops;
    /* Masmano traces only (NULL / 0 otherwise), one entry per op: */
    uint64_t *live;          /* requested bytes not yet freed after op i (marked blocks included) */
    uint32_t *time;          /* the time unit of op i */
    uint32_t *expire;        /* WL_MALLOC: the time unit its holding time ends; WL_FREE: 0 */
    uint64_t peak_live;      /* max of live[] */
    uint64_t peak_inuse;     /* max requested bytes in use (within their holding time): the reference
                            live memory of Test 4; == peak_live under immediate deallocation */
    uint32_t dealloc_period; /* 0: immediate deallocation; else the deallocation task's period */
    /* wl_paths traces only (NULL otherwise), one entry per op: 0 for an op not measured, else the
     * path it is built to take, WL_PATH_* | (free blocks in the heap before it << 8). */
    uint32_t *expect;
} wl_trace_t;

/* One step of xorshift64* (state must be nonzero). */
static inline uint64_t wl_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* A named uniform workload: the "churn" and "small". */
typedef struct wl_uniform_spec {
    const char *name;
    const char *description;
    uint32_t slots;
    uint32_t min_size, max_size;
    size_t default_ops;
} wl_uniform_spec_t;

extern const wl_uniform_spec_t wl_churn, wl_small;

/* Generates the uniform workload of `spec` with `nops` operations from `seed` (0 is replaced by
 * 1: xorshift needs a nonzero state). Returns false when out of memory. */
bool wl_uniform(wl_trace_t *t, const wl_uniform_spec_t *spec, size_t nops, uint64_t seed);

/* mem_frag with n holes (n >= 1): 3n + 1 operations, the last one measured. */
bool wl_memfrag(wl_trace_t *t, uint32_t n);

/* --- Masmano 2006, section 3: the periodic task model ---------------------------------------------
 *
 * A task set is 3..10 tasks T_i = (p_i, g_i, n_i, h_i), each drawn uniformly: period p_i in
 * [10..150] time units, g_i (bytes per period) in the test's range, n_i requests per period in
 * [2..5], holding bound h_i in [30..50]. At each release (t = 0, p_i, 2 p_i, ...) task i issues n_i
 * mallocs of size ~ Normal(g_i / n_i, sd = WL_MM_SD_PERCENT % of that mean), rounded, clamped to
 * [1 .. g_i]; each block's holding time is uniform in [30..h_i] (so within [30..50] and <= h_i).
 * Tests: 1 big blocks g in [2048..20480]; 2 small g in [8..1024]; 3 and 4 mixed g in [8..20480].
 *
 * The simulation advances in time units; within a unit: (1) blocks whose holding time ends at t
 * are freed (immediate deallocation) or only marked (delayed); (2) delayed: when t is a positive
 * multiple of the deallocation period P_d, the deallocation task frees every marked block, in
 * marking order; (3) releases, task by task. It stops after `nmalloc` mallocs. Normal variates are
 * the sum of 12 uniforms minus 6 (Irwin-Hall; exact integer arithmetic, no libm), all from the
 * xorshift64* stream. sd = 10 % of the mean: the paper says "a constant factor" and its Tables 3
 * and 4 show sd between 1.5 % and 3 % of Gavg for big blocks and more for small ones.
 */
enum {
    WL_MM_MAX_TASKS = 10,
    WL_MM_MIN_TASKS = 3,
    WL_MM_PERIOD_MIN = 10,
    WL_MM_PERIOD_MAX = 150,
    WL_MM_REQ_MIN = 2,
    WL_MM_REQ_MAX = 5,
    WL_MM_HOLD_MIN = 30,
    WL_MM_HOLD_MAX = 50,
    WL_MM_SD_PERCENT = 10
};

typedef struct wl_mm_task {
    uint32_t period; /* p_i */
    uint32_t gmax;   /* g_i: bytes per period (the normal's mean is gmax / nreq) */
    uint32_t nreq;   /* requests per period */
    uint32_t hmax;   /* h_i: the longest holding time */
} wl_mm_task_t;

typedef struct wl_mm_taskset {
    unsigned test; /* 1..4 */
    uint64_t seed;
    uint32_t ntasks;
    uint32_t pmin, pmax; /* shortest and longest period */
    wl_mm_task_t task[WL_MM_MAX_TASKS];
} wl_mm_taskset_t;

/* The range of g_i for test 1..4 (Test 4 uses Test 3's). False for another test number. */
bool wl_mm_grange(unsigned test, uint32_t *lo, uint32_t *hi);

/* Draws the task set of `test` (1..4) from `seed`. False for a bad test number. */
bool wl_mm_taskset(wl_mm_taskset_t *ts, unsigned test, uint64_t seed);

/* Simulates ts for `nmalloc` mallocs (>= 1) from `seed` (sizes and holding times): immediate
 * deallocation when dealloc_period == 0, else delayed with that period. Fills t->live, time,
 * expire, peak_live, peak_inuse. False when out of memory. */
bool wl_masmano(wl_trace_t *t, const wl_mm_taskset_t *ts, size_t nmalloc, uint32_t dealloc_period, uint64_t seed);

/* One normal variate, mean 0, sd 1 (sum of 12 uniforms minus 6; within [-6, 6]). */
double wl_normal(uint64_t *state);

/* The VaiOS blog's mem_stress (sections 7-9): WL_MEMSTRESS_OPS operations on a live set of at most
 * WL_MEMSTRESS_SLOTS blocks; each op allocates when the live set is empty or (not full) with
 * probability 52 %, else frees a random live block; sizes 70 % 8..64, 25 % 65..256, 5 % 257..1024. */
enum { WL_MEMSTRESS_OPS = 1200, WL_MEMSTRESS_SLOTS = 48 };
bool wl_memstress(wl_trace_t *t, uint64_t seed);

/* --- Adversarial workloads: each allocator's worst or bad case (Masmano 2006, Table 2) ------------
 *
 * The trace is laid out for the instruction counter's stride 2: every measured op lies at an odd
 * index, every other op at an even one, and the odd places in between hold frees of slot
 * t->slots - 1, which is never allocated (no call: nothing to count). Counting every 2nd op
 * (ic_plan_t.stride = 2, no budget) therefore counts exactly the measured calls.
 *   WL_WORST_MEMFRAG: N x {malloc(72); malloc(8)}, free the 72s, malloc(120) measured: a free list
 *     of N fenced blocks too small for the request (first fit, best fit, seglist; the blog's mem_frag);
 *   WL_WORST_CASCADE: on a fresh heap malloc(1), then its free, both measured: the binary buddy's
 *     split cascade from its largest order down to the smallest, and the merge cascade back;
 *   WL_WORST_CONSOLIDATE: N x malloc(24), all freed (adjacent: glibc keeps them unmerged in its
 *     fast bins), then malloc(65536) and its free measured: glibc's malloc_consolidate;
 *   WL_WORST_SPLITMERGE: malloc(100000) and a spacer, its free; malloc(24) measured (the search
 *     climbs from 24's class to the big block's octave and splits it); then A = malloc(40),
 *     B = malloc(200), C = malloc(3000), a spacer; free A, free C, free B measured (B merges both
 *     neighbours, each the only block of its list: TLSF's bad case of free);
 *   WL_WORST_QUICKFLUSH: malloc(32 MiB) kept; N x {malloc(40) A; malloc(200) B; malloc(40) C; a
 *     spacer}; free every B, then every A and C; malloc(40 MiB) measured, which no free block of
 *     the 64 MiB arena can serve: rt_tlsfq first gives back its N cached B blocks (N = its limit,
 *     256 on this arena), each merging both neighbours, and tries again (its worst case: the
 *     flush); it still fails there. */
typedef enum wl_worst {
    WL_WORST_MEMFRAG = 0,
    WL_WORST_CASCADE,
    WL_WORST_CONSOLIDATE,
    WL_WORST_SPLITMERGE,
    WL_WORST_QUICKFLUSH,
} wl_worst_t;

bool wl_worst(wl_trace_t *t, wl_worst_t which, uint32_t n);

/* --- Per-path scenarios of the boundary-tag heap (doc/performance.md) ----------------------------
 *
 * Each scenario is a trace whose measured calls each take one known path of malloc or free of a
 * boundary-tag heap (rtalloc/heap.h), laid out for stride 2 like wl_worst. A scenario repeats one
 * setup, measured call and teardown for WL_PATHS_REPS block sizes B (64, 256, 1024, 4096 bytes,
 * header included: the request is B - 8); every rep starts from a heap whose only free block is
 * the rest of the buffer ("the wilderness", W), builds its blocks from W's start and frees them
 * all at its end, so W is whole again. s = a 32-byte used spacer. Paths (malloc: the found block
 * is cut exactly or split, found with one bitmap probe or two, i.e. climbing to a higher
 * first-level row; free: which physical neighbours are free):
 *   code                  malloc / free                      free blocks before: the setup
 *   WL_PATH_M_EXACT       cut whole, remainder < smallest block, one probe
 *   WL_PATH_M_EXACT2      cut whole after climbing a row (two probes)
 *   WL_PATH_M_SPLIT       remainder becomes a free block, one probe
 *   WL_PATH_M_SPLIT2      split after climbing a row
 *   WL_PATH_F_NONE        both neighbours used: one insert
 *   WL_PATH_F_PREV        predecessor free: its removal, one insert
 *   WL_PATH_F_NEXT        successor free: its removal, one insert
 *   WL_PATH_F_BOTH        both free: two removals, one insert
 * Each path has a "kept" scenario (every list it touches keeps other blocks: no bitmap bit
 * changes) and a "lone" one (every list it removes from becomes empty, clearing its bits, and the
 * list it inserts into was empty: the path at its most expensive); and "malloc split climb, new
 * peak": W itself cut, each rep's block kept, so the call also moves the heap's watermark and peak
 * (the heap growing: the dearest malloc met). The setups are in workload.c;
 * the expected count of free blocks before each measured call lets the caller verify the heap's
 * state (bench/harness/paths.h). */
typedef enum wl_path {
    WL_PATH_NONE = 0,
    WL_PATH_M_EXACT,
    WL_PATH_M_EXACT2,
    WL_PATH_M_SPLIT,
    WL_PATH_M_SPLIT2,
    WL_PATH_F_NONE,
    WL_PATH_F_PREV,
    WL_PATH_F_NEXT,
    WL_PATH_F_BOTH,
    WL_PATH_COUNT
} wl_path_t;
enum { WL_PATHS_REPS = 4 };
/* clang-format reads (e) & 0xffu as a cast of &0xffu */
/* clang-format off */
#define WL_EXPECT_PATH(e) ((wl_path_t)((e) & 0xffu))
/* clang-format on */
#define WL_EXPECT_FREE(e) ((e) >> 8)

/* The path's name, e.g. "malloc exact fit". */
const char *wl_path_name(wl_path_t path);

/* The scenarios: how many, and scenario i (0 <= i < wl_paths_count()) generated into t. */
size_t wl_paths_count(void);
bool wl_paths(wl_trace_t *t, size_t i);
const char *wl_paths_name(size_t i);

void wl_release(wl_trace_t *t);

#endif /* RTBENCH_WORKLOAD_H */
