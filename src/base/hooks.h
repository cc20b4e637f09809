/* SPDX-License-Identifier: MIT */
/*
 * hooks.h -- what every allocator of the core shares around its algorithm: the caller's lock
 * hooks, the error handler, and the reporting of bad input (doc/design.md, "Bad input and the
 * handler"). An allocator embeds one rt_hooks_t in its control structure.
 */
#ifndef RT_BASE_HOOKS_H
#define RT_BASE_HOOKS_H

#include "rtalloc/common.h"

typedef struct rt_hooks {
    rt_lock_fn lock; /* NULL: no locking */
    rt_unlock_fn unlock;
    void *lock_context;
    rt_error_handler_t handler; /* NULL: count only (trap on misuse when RT_DEBUG >= 1) */
    void *handler_context;
    uint64_t failures; /* requests that returned NULL */
    uint64_t errors;   /* reports */
} rt_hooks_t;

static inline __attribute__((always_inline)) uintptr_t rt_hooks_lock(rt_hooks_t *k)
{
    return k->lock != NULL ? k->lock(k->lock_context) : 0u;
}

static inline __attribute__((always_inline)) void rt_hooks_unlock(rt_hooks_t *k, uintptr_t token)
{
    if (k->unlock != NULL) {
        k->unlock(k->lock_context, token);
    }
}

/* Counts the report (and, when `refused`, a failed request) under the lock, then calls the
 * handler outside it, so the handler may call the allocator. Without a handler, misuse errors
 * (RT_ERR_FOREIGN_POINTER .. RT_ERR_CORRUPTED) trap when RT_DEBUG >= 1. Off the hot path. */
void rt_hooks_report(rt_hooks_t *k, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                     size_t size);

/* The part of a report that needs no state: calls `handler` with an rt_error_t, or, without a
 * handler, calls RT_PANIC(message) for misuse errors when RT_DEBUG >= 1. For allocators whose
 * counters are their own (the wait-free tree counts with atomics and takes no lock). */
void rt_error_deliver(rt_error_handler_t handler, void *context, rt_error_kind_t kind, const char *operation,
                      const void *ptr, size_t size);

/* 64 bits for a new key (rtalloc/common.h, rt_set_entropy): the installed source's, mixed; without
 * a source, a mix of a counter of the core's, so that two draws of one process never return the
 * same value. (Every allocator also makes its new key differ from the one its buffer held.) O(1)
 * plus the source. */
uint64_t rt_entropy_draw(void);

/* A bijective mix of 64 bits (splitmix64's finaliser): equal outputs mean equal inputs. */
static inline uint64_t rt_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* Reports RT_ERR_BAD_HEAP for `operation` called on `heap` (NULL or not a created allocator) to
 * the default handler (rt_set_default_handler). Cold. */
void rt_report_bad_heap(const char *operation, const void *heap) __attribute__((cold, noinline));

/* The default token of the calling context for the allocators that keep something per thread
 * (rtalloc/wfcache.h, rtalloc/mcheap.h): on a hosted build the address of a thread-local object
 * (initial-exec where the compiler allows, so that a preloaded malloc needs no TLS allocation);
 * freestanding builds have none (RT_DEFAULT_SELF is NULL: an RTOS passes its task id). */
#if defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 1 && !defined(__STDC_NO_THREADS__)
uintptr_t rt_thread_token(void *context);
#define RT_DEFAULT_SELF rt_thread_token
#else
#define RT_DEFAULT_SELF NULL
#endif

void rt_hooks_set_handler(rt_hooks_t *k, rt_error_handler_t handler, void *context);
void rt_hooks_set_lock(rt_hooks_t *k, rt_lock_fn lock, rt_unlock_fn unlock, void *context);

#endif /* RT_BASE_HOOKS_H */
