/* SPDX-License-Identifier: MIT */
/*
 * hooks.c -- error messages and reporting shared by every allocator of the core.
 */
#include "base/hooks.h"

const char *rt_error_message(rt_error_kind_t kind)
{
#if !RT_ERROR_TEXT
    (void)kind;
    return "";
#else
    switch (kind) {
    case RT_ERR_FOREIGN_POINTER: return "pointer does not belong to this allocator";
    case RT_ERR_BAD_POINTER: return "pointer is not a live block (interior, misaligned or corrupted header)";
    case RT_ERR_DOUBLE_FREE: return "block is already free (double free)";
    case RT_ERR_CORRUPTED: return "allocator metadata is inconsistent (integrity check failed)";
    case RT_ERR_OVERFLOW: return "count * size overflows";
    case RT_ERR_BAD_ALIGNMENT: return "alignment is not a power of two";
    case RT_ERR_TOO_LARGE: return "request is larger than the allocator's largest block";
    case RT_ERR_BAD_POOL: return "buffer too small, overlapping, or no pool slot left";
    case RT_ERR_BAD_HOOKS: return "a lock hook needs its unlock hook (both or neither)";
    case RT_ERR_BAD_HEAP: return "the allocator pointer is NULL or not a created allocator";
    case RT_ERR_NONE: break;
    }
    return "no error";
#endif
}

static rt_error_handler_t default_handler;
static void *default_context;

void rt_set_default_handler(rt_error_handler_t handler, void *context)
{
    default_handler = handler;
    default_context = context;
}

void rt_report_bad_heap(const char *operation, const void *heap)
{
    rt_error_deliver(default_handler, default_context, RT_ERR_BAD_HEAP, operation, heap, 0);
}

void rt_hooks_report(rt_hooks_t *k, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                     size_t size)
{
    uintptr_t token = rt_hooks_lock(k);
    k->errors++;
    if (refused) {
        k->failures++;
    }
    rt_error_handler_t handler = k->handler;
    void *context = k->handler_context;
    rt_hooks_unlock(k, token);
    rt_error_deliver(handler, context, kind, operation, ptr, size);
}

void rt_error_deliver(rt_error_handler_t handler, void *context, rt_error_kind_t kind, const char *operation,
                      const void *ptr, size_t size)
{
    if (handler != NULL) {
        rt_error_t error = {kind, operation, rt_error_message(kind), ptr, size};
        handler(context, &error);
    } else if (RT_DEBUG >= 1 && rt_error_is_misuse(kind)) {
        RT_PANIC(rt_error_message(kind));
    }
}

void rt_hooks_set_handler(rt_hooks_t *k, rt_error_handler_t handler, void *context)
{
    uintptr_t token = rt_hooks_lock(k);
    k->handler = handler;
    k->handler_context = context;
    rt_hooks_unlock(k, token);
}

void rt_hooks_set_lock(rt_hooks_t *k, rt_lock_fn lock, rt_unlock_fn unlock, void *context)
{
    /* Both or neither: a lock without its unlock would leave the allocator locked (interrupts
     * masked) for ever, and every masked stretch ends at the unlock hook by construction. */
    if ((lock == NULL) != (unlock == NULL)) {
        rt_hooks_report(k, false, RT_ERR_BAD_HOOKS, "set_lock", NULL, 0);
        return;
    }
    k->lock = lock;
    k->unlock = unlock;
    k->lock_context = context;
}

/* --- entropy for the tags' keys (rtalloc/common.h) ------------------------------------------ */

static rt_entropy_fn entropy_fn;
static void *entropy_context;
/* Each draw's counter is new (a word, read and written atomically on every target; it repeats
 * after 2^32 creates on a 32-bit one, when the keys still differ by the heaps' addresses). */
static uintptr_t entropy_draws;

void rt_set_entropy(rt_entropy_fn fn, void *context)
{
    entropy_fn = fn;
    entropy_context = context;
}

uint64_t rt_entropy_draw(void)
{
    /* The installed source alone (a test that installs a constant source gets the same keys in
     * every run); without one, a counter that never repeats within the process. A race of two
     * creates on two threads may read the same count (below). */
    if (entropy_fn != NULL) {
        return rt_mix64(entropy_fn(entropy_context));
    }
    /* a load and a store, each atomic (creates on several threads are no data race, and no
     * retry loop: two racing creates may read the same count, and their keys then still differ
     * by the heaps' addresses and the buffers' old keys) */
    uint64_t n = (uint64_t)__atomic_load_n(&entropy_draws, __ATOMIC_RELAXED) + 1u;
    __atomic_store_n(&entropy_draws, (uintptr_t)n, __ATOMIC_RELAXED);
    return rt_mix64(n * 0x9E3779B97F4A7C15ull ^ (uint64_t)RT_HEAP_KEY_SEED);
}

#if defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 1 && !defined(__STDC_NO_THREADS__)
#if defined(__GNUC__) || defined(__clang__)
#define RT_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define RT_TLS_MODEL
#endif
static _Thread_local char thread_anchor RT_TLS_MODEL;
uintptr_t rt_thread_token(void *context)
{
    (void)context;
    return (uintptr_t)&thread_anchor;
}
#endif
