/*
 * bench/workload.h -- deterministic, seeded generators of allocator operations.
 *
 * A workload is a trace: an array of operations "malloc(size) into slot s" / "free slot s",
 * generated once from a seed, so that every allocator replays exactly the same sequence (the
 * generator's own cost is outside every timed region). Slots are the live-set: a malloc always
 * targets an empty slot and a free an occupied one.
 *
 * Generators (issue 2, "Targets"; the VaiOS blog section 10):
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

typedef enum wl_kind { WL_MALLOC = 0, WL_FREE = 1 } wl_kind_t;

typedef struct wl_op {
    uint32_t slot;
    uint32_t size; /* WL_MALLOC: bytes requested; WL_FREE: 0 */
    uint32_t kind; /* wl_kind_t */
} wl_op_t;

typedef struct wl_trace {
    char name[32];
    char params[128];  /* the generator's parameters, in words, for report headers */
    uint64_t seed;
    uint32_t slots;    /* size of the live-set table the replay needs */
    size_t nops;
    size_t nmalloc, nfree;
    size_t measured;   /* the op of interest (mem_frag's malloc(120)); SIZE_MAX if none */
    wl_op_t *ops;
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

void wl_release(wl_trace_t *t);

#endif /* RTBENCH_WORKLOAD_H */
