/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/registry.h -- one descriptor for every allocator, and the registry of the library's own.
 *
 * Tests and the benchmark reach every allocator -- ours and, in the benchmark, the system peers --
 * through this descriptor only: a new allocator joins by adding a descriptor, never by copying
 * tests. Each descriptor is the "plain trio" (create over a buffer returning a handle,
 * malloc(handle, size), free(handle, pointer)) plus optional extras; an optional function that an
 * allocator lacks is NULL.
 */
#ifndef RTALLOC_REGISTRY_H
#define RTALLOC_REGISTRY_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an allocator is, as a property: code never decides by a name prefix. */
typedef enum rt_family {
    RT_FAMILY_SYSTEM = 0,  /* a system peer (glibc, jemalloc, ...): no buffer, no handle */
    RT_FAMILY_HEAP,        /* boundary-tag heap over a free-block index (rtalloc/heap.h) */
    RT_FAMILY_BUDDY,       /* binary buddy, out-of-band metadata (rtalloc/buddy.h) */
    RT_FAMILY_TREE,        /* wait-free buddy tree, post-order subtrees (rtalloc/waitfree.h) */
    RT_FAMILY_PAGES,       /* power-of-two blocks cut from pages: FMA, BSD 4.4 (rtalloc/fma.h) */
    RT_FAMILY_TREE_CACHED, /* the wait-free tree behind per-thread caches (rtalloc/wfcache.h): the
                             tree's geometry; a freed block may wait in the freeing thread's cache */
    RT_FAMILY_THREAD_HEAPS /* boundary-tag heaps per thread over spans of wait-free trees
                              (rtalloc/mcheap.h): a heap's geometry inside a span; a block freed by
                              another thread waits in its owner's inbox */
} rt_family_t;

/* Work of one call, counted (no clock): what an allocator that reports it did, and its stated
 * worst case for that call (0: none stated). */
typedef struct rt_work {
    uint32_t nodes;       /* nodes (or blocks) visited */
    uint32_t rmw;         /* atomic read-modify-writes on shared allocator state */
    uint32_t cache_ops;   /* chunks moved onto or off a per-thread cache */
    uint32_t nodes_bound; /* the stated worst case of nodes for this call */
    uint32_t rmw_bound;
} rt_work_t;

typedef struct rt_allocator {
    const char *name;        /* short, unique: "tlsf", "seglist", "buddy", "glibc", ... */
    const char *description; /* one line */
    /* Time bound of malloc and free, as written in the allocator's header, e.g. "O(1)". */
    const char *malloc_bound;
    const char *free_bound;
    size_t alignment; /* every pointer returned is a multiple of this */
    /* Creates an instance over [mem, mem + size); NULL when the buffer is too small. NULL for a
     * system allocator, which then ignores the handle (pass NULL). */
    void *(*create)(void *mem, size_t size);
    size_t (*min_buffer)(void); /* smallest buffer create accepts at any address (NULL for
                                   system allocators) */
    void *(*malloc)(void *handle, size_t size);
    void (*free)(void *handle, void *ptr);
    /* Optional (NULL if absent). */
    void *(*realloc)(void *handle, void *ptr, size_t size);
    void *(*calloc)(void *handle, size_t count, size_t size);
    void *(*memalign)(void *handle, size_t alignment, size_t size);
    size_t (*usable_size)(void *handle, void *ptr);
    void (*stats)(void *handle, rt_stats_t *stats);
    unsigned (*last_probes)(const void *handle);
    bool (*check)(void *handle);
    void (*walk)(void *handle, rt_walk_fn fn, void *context);
    void (*set_handler)(void *handle, rt_error_handler_t handler, void *context);
    void (*set_lock)(void *handle, rt_lock_fn lock, rt_unlock_fn unlock, void *context);
    /* Bytes of overhead a used block costs (header), and the smallest block it hands out. */
    size_t block_overhead;
    size_t min_block;
    /* Largest single request that can ever succeed on an instance over `size` bytes: lets tests
     * probe the exact boundary. NULL for system allocators. */
    size_t (*max_request)(void *handle);
    /* Geometry the contract tests must know, as properties (never by name). Both 0 for every
     * allocator but the page allocators (rtalloc/fma.h).
     * page_size: blocks up to half a page are cut from pages of this many bytes, one size per
     * page, aligned to their size; blocks unite only as a whole page, once all of its blocks are
     * free (so a request spanning two neighbours needs their whole page free).
     * never_unites: freed blocks are never united and a page keeps the size it was first cut for
     * (BSD 4.4): after free(everything) the instance is not as fresh, and a request of another
     * size can fail although every byte is free. */
    size_t page_size;
    bool never_unites;
    /* A freed block may wait, unmerged, on a bounded list of its size before it is merged (the
     * heap's quick lists, rt_tlsfq): the physical state after a free is not the merged one until
     * stats (which gives the cached blocks back first) or a malloc the index cannot serve. */
    bool caches_frees;
    rt_family_t family;
    /* Safe to call from several threads at once with no lock set (the wait-free trees, the system
     * peers); the others are safe once set_lock has installed a lock. */
    bool thread_safe;
    /* Optional: malloc and free that also report the call's work and its stated bound (the
     * wait-free trees). */
    void *(*malloc_work)(void *handle, size_t size, rt_work_t *work);
    void (*free_work)(void *handle, void *ptr, rt_work_t *work);
    /* Optional: create over a buffer whose every byte is zero (a fresh mapping), so that calloc
     * may leave what was never handed out uncleared (the FMA: large blocks stay untouched). */
    void *(*create_zeroed)(void *mem, size_t size);
    /* Optional: the calling thread is about to end -- what the allocator keeps for it (a cache, a
     * heap) goes back, so nothing is stranded (the tree's caches, the thread heaps). */
    void (*thread_exit)(void *handle);
} rt_allocator_t;

/* The library's own allocators: the seven heap indexes (six, and TLSF behind quick lists), the binary buddy, the variants of the
 * wait-free buddy tree, and the FMA page allocator with its BSD 4.4 baseline. Returns the array
 * and stores its length in *count. */
const rt_allocator_t *const *rt_registry(size_t *count);

/* The allocator named `name`, or NULL. */
const rt_allocator_t *rt_registry_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_REGISTRY_H */
