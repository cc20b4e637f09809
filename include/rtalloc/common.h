/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/common.h -- types shared by every allocator of the library: statistics, the error
 * handler for bad input (doc/design.md, "Bad input and the handler"), lock hooks, and the block
 * walk.
 *
 * Freestanding C11: needs nothing but <stddef.h>, <stdint.h> and <stdbool.h>.
 */
#ifndef RTALLOC_COMMON_H
#define RTALLOC_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What went wrong. The first group is misuse by the caller (the operation is refused and
 * nothing is changed); the second group are requests that cannot be met (NULL is returned). */
typedef enum rt_error_kind {
    RT_ERR_NONE = 0,
    RT_ERR_FOREIGN_POINTER, /* free/realloc/usable_size of a pointer outside every pool */
    RT_ERR_BAD_POINTER,     /* inside a pool but not a live block: interior, misaligned, or
                               its header is corrupted */
    RT_ERR_DOUBLE_FREE,     /* the block is already free */
    RT_ERR_CORRUPTED,       /* heap metadata found inconsistent (overrun of a neighbour) */
    RT_ERR_OVERFLOW,        /* calloc: count * size overflows size_t */
    RT_ERR_BAD_ALIGNMENT,   /* aligned allocation: alignment is zero or not a power of two */
    RT_ERR_TOO_LARGE,       /* the request can never fit: larger than the heap's largest block */
    RT_ERR_BAD_POOL,        /* create/add_pool: buffer too small, too many pools, or overlapping */
    RT_ERR_BAD_HOOKS,       /* set_lock: a lock hook without its unlock hook, or the reverse */
    RT_ERR_BAD_HEAP         /* misuse: the allocator pointer is NULL or not a created one (reported
                               to the default handler, rt_set_default_handler) */
} rt_error_kind_t;

/* True for the kinds that are the caller's misuse (RT_DEBUG >= 1 traps on them without a handler). */
static inline bool rt_error_is_misuse(rt_error_kind_t kind)
{
    return (kind != RT_ERR_NONE && kind <= RT_ERR_CORRUPTED) || kind == RT_ERR_BAD_HEAP;
}

/* One report. `message` is a static English sentence (empty when built with RT_ERROR_TEXT 0); `pointer` the argument at fault (or
 * NULL); `size` the size argument at fault (or 0). */
typedef struct rt_error {
    rt_error_kind_t kind;
    const char *operation; /* "malloc", "free", "realloc", "calloc", "memalign", ... */
    const char *message;
    const void *pointer;
    size_t size;
} rt_error_t;

/* A static English sentence describing `kind` (the `message` of its reports); "" for every kind
 * when the library is built with RT_ERROR_TEXT 0 (rtalloc/config.h). */
const char *rt_error_message(rt_error_kind_t kind);

/* The handler is called after the allocator has refused the operation and released its lock,
 * so it may log, count, abort, or even call the allocator again. When no handler is installed
 * the error is only counted (stats.errors); with RT_DEBUG >= 1 misuse errors (the first group)
 * call RT_PANIC(message) instead (config.h: traps unless the platform makes it print). The
 * hosted driver rt_error_print_abort (rtalloc/hosted/drivers.h) prints the message and aborts:
 * the usual choice for debug builds of applications. */
typedef void (*rt_error_handler_t)(void *context, const rt_error_t *error);

/* The handler of reports that have no allocator to go to: a call whose allocator pointer is NULL
 * or does not point at a created allocator (RT_ERR_BAD_HEAP, pointer = that argument). Such a
 * call is refused in O(1): it returns NULL (or 0, false, nothing) and never reads through a NULL
 * pointer. Without a default handler the report is dropped (RT_DEBUG >= 1: RT_PANIC). Not
 * locked: install it before the allocators are shared. */
void rt_set_default_handler(rt_error_handler_t handler, void *context);

/* Lock hooks, called around every operation that reads or writes the allocator's state.
 * `lock` returns a token handed back to `unlock`: an interrupt-masking hook returns the
 * previous mask (PRIMASK, mstatus.MIE) so critical sections nest; a mutex returns 0. */
typedef uintptr_t (*rt_lock_fn)(void *context);
typedef void (*rt_unlock_fn)(void *context, uintptr_t token);

/* Statistics. Counters are exact; byte figures count whole blocks (header included) unless
 * named otherwise. */
typedef struct rt_stats {
    size_t capacity;     /* bytes the allocator manages for blocks (all pools) */
    size_t used_bytes;   /* bytes in live blocks, headers and rounding included */
    size_t free_bytes;   /* capacity - used_bytes - quarantined_bytes */
    size_t largest_free; /* the largest single request that would succeed now (payload bytes) */
    size_t peak_used;    /* highest used_bytes ever */
    size_t watermark;    /* highest address ever handed out (end of a live block), as bytes
                             from the start of the managed memory: the allocator's peak memory
                             in the sense of Masmano's fragmentation factor */
    size_t used_blocks;
    size_t free_blocks;
    uint64_t mallocs;           /* successful allocations (malloc, calloc, memalign, realloc's moves) */
    uint64_t frees;             /* successful frees */
    uint64_t reallocs;          /* successful reallocs, of which ... */
    uint64_t reallocs_in_place; /* ... were done without moving */
    uint64_t failures;          /* requests that returned NULL (out of memory or refused) */
    uint64_t errors;            /* reports to the error handler */
    size_t quarantined_bytes;   /* bytes fenced off after detected damage: never handed out again
                                 (0 for allocators without containment) */
} rt_stats_t;

/* One block as seen by a walk. */
typedef struct rt_block_info {
    void *pointer;    /* the payload (what malloc returned, for a used block) */
    size_t size;      /* usable bytes of the payload */
    size_t footprint; /* bytes the block occupies, header included */
    bool used;
    bool quarantined; /* damaged memory fenced off by the allocator (never used, never free) */
} rt_block_info_t;

/* Walk callback: return false to stop the walk. */
typedef bool (*rt_walk_fn)(void *context, const rt_block_info_t *block);

/* Entropy for the keys of the allocators' tags. Every create draws a new key (a new
 * "generation"), so metadata and pointers left in a buffer by an earlier heap over the same
 * memory never verify in the new one. rt_set_entropy installs the source every later create
 * draws from (NULL: the built-in one, a counter of the core's that never repeats within a
 * process, mixed with the heap's address). Whatever the source, a new key always differs from
 * the key the buffer's previous control structure held (the life just before), so a stale
 * pointer of that life is refused deterministically; keys of older lives differ with the
 * source's unpredictability. The built-in source is predictable to one who knows the build:
 * hosted programs should install an OS source (rt_entropy_os, rtalloc/hosted/drivers.h:
 * getrandom); a test may install a constant one to make its runs repeatable. Not locked: call
 * before creating allocators from several threads. */
typedef uint64_t (*rt_entropy_fn)(void *context);
void rt_set_entropy(rt_entropy_fn fn, void *context);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_COMMON_H */
