/* SPDX-License-Identifier: MIT */
/*
 * front.h -- what every allocator of the core does the same way, written once: the refusal of a
 * call (reported through the instance's handler, counted, NULL), calloc's overflow check,
 * memalign's argument check, realloc's edges, and the copy of the statistics.
 *
 * An allocator describes itself to the front with one constant rt_front_ops_t (its own malloc,
 * free, report and largest request) and calls these functions from its public calloc, memalign,
 * realloc and stats. They are static inline over a constant table, so the compiler turns each
 * indirect call into a direct one; malloc and free do not go through the front at all (their
 * only front call, a refusal, is cold and out of line).
 *
 * The policy (doc/design.md, "Bad input and the handler"; every public header states it):
 *   refusal         the report names the operation the caller called ("calloc", "memalign",
 *                   "realloc"), is counted as an error and a failure, and the call returns NULL
 *   calloc(c, n)    c * n overflowing size_t: RT_ERR_OVERFLOW; c * n above the largest request:
 *                   RT_ERR_TOO_LARGE; c * n == 0: NULL, not reported (as malloc(0))
 *   memalign(a, n)  a zero or not a power of two: RT_ERR_BAD_ALIGNMENT (whatever n is);
 *                   n == 0: NULL, not reported; n above the largest request: RT_ERR_TOO_LARGE
 *   realloc(p, n)   n above the largest request: RT_ERR_TOO_LARGE, p kept as it was;
 *                   realloc(NULL, n) = malloc(n); realloc(p, 0) frees p and returns NULL
 * Each costs O(1) besides the malloc, free or memset it makes.
 */
#ifndef RT_FRONT_FRONT_H
#define RT_FRONT_FRONT_H

#include "base/hooks.h"

/* One allocator as the front sees it. `a` is the allocator's handle. */
typedef struct rt_front_ops {
    void *(*malloc)(void *a, size_t size);
    void (*free)(void *a, void *ptr);
    /* Counts the report (and, when `refused`, a failure) the way the allocator counts, then calls
     * its handler: rt_hooks_report for the locked allocators, atomics for the wait-free tree. */
    void (*report)(void *a, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr, size_t size);
    size_t (*max_request)(const void *a); /* the largest malloc that can ever succeed */
} rt_front_ops_t;

/* Reports a refused call and returns NULL, for allocation functions. Cold and out of line, so a
 * hot path that refuses in one branch makes a tail call there and keeps no stack frame (static,
 * not inline: one copy per translation unit that uses it). */
static void *__attribute__((noinline, cold, unused))
rt_front_refuse(const rt_front_ops_t *ops, void *a, rt_error_kind_t kind, const char *operation, const void *ptr,
                size_t size)
{
    ops->report(a, true, kind, operation, ptr, size);
    return NULL;
}

/* calloc: malloc(count * size) zeroed, after the overflow and size checks. */
static inline void *rt_front_calloc(const rt_front_ops_t *ops, void *a, size_t count, size_t size)
{
    if (size != 0u && count > SIZE_MAX / size) {
        return rt_front_refuse(ops, a, RT_ERR_OVERFLOW, "calloc", NULL, count);
    }
    size_t n = count * size;
    if (n > ops->max_request(a)) {
        return rt_front_refuse(ops, a, RT_ERR_TOO_LARGE, "calloc", NULL, n);
    }
    void *p = ops->malloc(a, n);
    if (p != NULL) {
        __builtin_memset(p, 0, n);
    }
    return p;
}

/* memalign's arguments: true when the allocator is to serve the request (alignment a power of
 * two, 1 <= size <= its largest request; limits that depend on the alignment remain its own);
 * false when the call is over and returns NULL (reported, unless size is 0). */
static inline bool rt_front_memalign_args(const rt_front_ops_t *ops, void *a, size_t alignment, size_t size)
{
    if (alignment == 0u || (alignment & (alignment - 1u)) != 0u) {
        (void)rt_front_refuse(ops, a, RT_ERR_BAD_ALIGNMENT, "memalign", NULL, alignment);
        return false;
    }
    if (size == 0u) {
        return false;
    }
    if (size > ops->max_request(a)) {
        (void)rt_front_refuse(ops, a, RT_ERR_TOO_LARGE, "memalign", NULL, size);
        return false;
    }
    return true;
}

/* realloc's edges: true when the front decided the call (*result is its return value): a size
 * above the largest request (refused, ptr kept), realloc(NULL, n) and realloc(p, 0). False: ptr
 * is not NULL and 1 <= size <= the largest request, for the allocator to resize. */
static inline bool rt_front_realloc_edge(const rt_front_ops_t *ops, void *a, void *ptr, size_t size, void **result)
{
    if (size > ops->max_request(a)) {
        *result = rt_front_refuse(ops, a, RT_ERR_TOO_LARGE, "realloc", ptr, size);
        return true;
    }
    if (ptr == NULL) {
        *result = ops->malloc(a, size);
        return true;
    }
    if (size == 0u) {
        ops->free(a, ptr);
        *result = NULL;
        return true;
    }
    return false;
}

/* The counters every allocator keeps, as rt_stats_t reports them. */
typedef struct rt_front_counts {
    uint64_t mallocs, frees, reallocs, reallocs_in_place, failures, errors;
} rt_front_counts_t;

/* Writes every field of *out: the allocator's own figures (capacity, used_bytes, largest_free,
 * peak_used, watermark, used_blocks, free_blocks, quarantined_bytes of `own`; its other fields are
 * ignored), free_bytes
 * derived from them, and the counters. */
static inline void rt_front_stats(rt_stats_t *out, const rt_stats_t *own, const rt_front_counts_t *counts)
{
    rt_stats_t s = *own;
    s.free_bytes = s.capacity - s.used_bytes - s.quarantined_bytes;
    s.mallocs = counts->mallocs;
    s.frees = counts->frees;
    s.reallocs = counts->reallocs;
    s.reallocs_in_place = counts->reallocs_in_place;
    s.failures = counts->failures;
    s.errors = counts->errors;
    *out = s;
}

#endif /* RT_FRONT_FRONT_H */
