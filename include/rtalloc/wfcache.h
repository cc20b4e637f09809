/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/wfcache.h -- the wait-free buddy tree (rtalloc/waitfree.h) with bounded per-thread
 * caches in front: ours, for multi-core use, where the paper's tree walks ~H nodes with atomic
 * read-modify-writes on lines every thread shares on every call.
 *
 * Each calling context (a thread; an interrupt level) owns one cache: per cached height s
 * (requests of at most (2^(s+1) - 1) B - 12 bytes, s < heights) a LIFO list of at most `capacity`
 * chunks, linked through the chunks themselves. A malloc of a cached height pops its list; a free
 * of such a chunk pushes it onto the freeing context's list -- whoever allocated it (remote frees
 * need no queue: a chunk is a chunk of the tree wherever it is freed). Neither touches a line
 * another context writes. Only a miss goes to the tree:
 *   refill   one descent claims a chunk of height s + j (j = batch_log2) and cuts it into 2^j
 *            live chunks of height s: one is returned, the rest fill the list. When no chunk of
 *            height s + j exists the descent is retried with j - 1, ..., 0.
 *   flush    a push onto a full list first releases capacity - capacity / 2 chunks to the tree
 *            (each an ordinary free of the tree: H - s + 1 increments).
 *   failure  a malloc the tree cannot serve releases everything its own cache holds and tries
 *            once more (so a single thread never fails while its cache holds the memory).
 * memalign(16) (the drop-in's every malloc) is served by the caches too: a chunk of the height of
 * size + 12, handed out 12 bytes past its data start as an aligned chunk of the tree (its record
 * and offset word written, rtalloc/waitfree.h), and its free goes back into the freeing
 * context's cache. Requests of larger heights, larger alignments and realloc moves go to the tree
 * directly.
 * Cached chunks stay live chunks of the tree (length word "cached", canary and counters intact):
 * rt_wfc_check checks equation 3 with them, a double free of a cached chunk is reported, and a
 * chunk cut from a batch can be freed by any context.
 *
 * Finding the caller's cache: self(context) returns a token for the calling context, never the
 * same for two contexts that can run at once (two threads, or a thread and an interrupt that can
 * preempt it); 0 means "no cache" (the call goes to the tree: always safe, e.g. from an ISR).
 * The token is hashed into a table of `caches` slots, probed linearly (at most `caches` reads); a
 * new token claims a free slot (one compare-and-swap) and a record of one tree chunk (a node of
 * B >= 64 bytes: one cache line, written only by its owner). Records are never freed: a token
 * that comes back (a thread created where a finished one was) finds its old cache; with every
 * slot taken, further contexts use the tree directly. Default hook (config->self NULL): on a
 * hosted build (__STDC_HOSTED__), the address of a thread-local object (one cache per thread);
 * freestanding, none (every call to the tree) -- an RTOS supplies its task id, masking-aware.
 *
 * Memory a cache can hold: at most capacity chunks of each cached height, sum over s < heights of
 * capacity (2^(s+1) - 1) B bytes (defaults, B = 64: 8 x (1 + 3 + 7 + 15) x 64 = 13,312 bytes),
 * plus its record (one chunk of the smallest height holding 48 bytes: one node for B >= 64).
 * rt_wfc_stats counts what caches hold as free (not in used_bytes); rt_wfc_cached_bytes says how
 * much. A thread that ends without rt_wfc_flush leaves its cache's chunks there until its token
 * returns or rt_wfc_flush_all runs at a quiescent point.
 *
 * Bounds (nodes = tree node visits, RMW = atomic read-modify-writes on tree counters; M(h), F(h):
 * the tree's malloc and free bounds for height h, rtalloc/waitfree.h; P = caches; rt_wfc_bound
 * returns the numbers for an instance and a size):
 *   finding the cache             1 slot read when the token's slot is its own; else <= P + 2
 *                                 (the untraced fast path's read, then the probe: trace.probes <= P)
 *   malloc, hit                   1 node (the chunk's length word, link and mark), 0 RMW
 *   free, cache not full          1 node (+ the chunk's root: canary, counter), 0 RMW on the tree,
 *                                 1 compare-and-swap of the chunk's own length word (the claim,
 *                                 one attempt: its failure is a double free, reported)
 *   free, cache full              + (capacity - capacity/2) x F(s)
 *   malloc, miss                  sum_{i=0..j} (M(s+i) + 2^(i+1) - 2) (each descent and the cutting
 *                                 of what it claimed, batch j first, then j - 1 ... 0); if all fail:
 *                                 + sum_{h < heights} capacity x F(h) (the flush) + M(s)
 *   first call of a context       + M(record height) (claiming its record)
 *   malloc, uncached height       M(s); if it fails: + the flush + M(s)
 *   free, uncached or memalign    F(s) (rt_wf_free)
 * Each bound holds whatever other contexts do (wait-free): no step waits for or retries because
 * of another call. Atomics on shared state: none on a malloc hit (the slot read is a load of a
 * word that changes only when a context first arrives); a free's one compare-and-swap on the freed
 * chunk's length word (a line the freeing context has usually just written).
 *
 * Bad input (doc/design.md, "Bad input and the handler"): as rtalloc/waitfree.h -- every free is
 * checked as the tree checks it (length tag, canary and counter of the chunk), then claims the
 * chunk (one compare-and-swap of
 * its length word from the live tag to "cached") before the chunk enters a cache, is flushed or
 * released: of two frees of one chunk, on any two contexts and however they interleave, exactly
 * one wins; the other reports DOUBLE_FREE and changes nothing (rtalloc/waitfree.h, "Racing
 * frees"). A double free of a cached chunk is DOUBLE_FREE. A list link is keyed by its chunk's
 * index and the instance, and the chunk's second data word carries its cache's key bound to that
 * link at that place; every popped chunk's length word must say "cached, height s" and its mark
 * match its link: a write into a cached chunk's first words (use after free), a link copied from
 * another cached chunk, a link or mark a previous instance over the buffer left there (each
 * create draws new keys, never the buffer's previous ones) or a record damaged (a list head
 * redirected to a chunk another cache holds) is detected when the list reaches that chunk
 * (CORRUPTED; the rest of that list is dropped -- lost to the heap, never handed out twice).
 *
 * Not linearizable, like the tree: a malloc can fail while another context's cache holds the
 * memory (at most P x the per-cache amount above) or under the tree's overlap (waitfree.h).
 */
#ifndef RTALLOC_WFCACHE_H
#define RTALLOC_WFCACHE_H

#include "common.h"
#include "waitfree.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_wfc rt_wfc_t;

/* Largest number of cached heights, of slots, and of log2 chunks per refill. */
#define RT_WFC_MAX_HEIGHTS 4u
#define RT_WFC_MAX_CACHES 64u
#define RT_WFC_MAX_BATCH 3u

/* Token of the calling context (see above); 0: no cache. */
typedef uintptr_t (*rt_wfc_self_fn)(void *context);

typedef struct rt_wfc_config {
    size_t node_size;    /* 0: RT_WF_NODE_SIZE */
    unsigned tree_flags; /* RT_WF_* variant of the tree (default RT_WF_HINTS | RT_WF_LAZY_REINIT) */
    unsigned heights;    /* cached heights 0 .. heights - 1 (<= RT_WFC_MAX_HEIGHTS; 0: none) */
    unsigned batch_log2; /* j: a refill claims 2^j chunks (<= RT_WFC_MAX_BATCH) */
    unsigned capacity;   /* chunks per cached height per cache (2^j - 1 .. 255) */
    unsigned caches;     /* slots: a power of two, 1 .. RT_WFC_MAX_CACHES */
    rt_wfc_self_fn self; /* NULL: the default hook above */
    void *self_context;
} rt_wfc_config_t;

/* The defaults rt_wfc_create uses for a NULL config: 64-byte nodes, hints + lazy tree, 4 cached
 * heights (up to 948-byte requests), batches of 4, capacity 8, 64 slots, default hook. */
void rt_wfc_default_config(rt_wfc_config_t *config);

/* Per-call work (clock-free), for the benchmark and the tests. */
typedef struct rt_wfc_trace {
    uint32_t nodes;     /* tree nodes visited or written (descents, cutting, releases, the chunk) */
    uint32_t rmw;       /* atomic read-modify-writes on tree counters */
    uint32_t stat_rmw;  /* atomic read-modify-writes on the tree's statistics */
    uint32_t cache_ops; /* chunks popped from or pushed onto the caller's cache */
    uint32_t descents;  /* tree descents (claims) */
    uint32_t releases;  /* chunks released to the tree */
    uint32_t probes;    /* slot-table reads to find the caller's cache */
    uint32_t height;    /* the request's height (malloc) or the chunk's (free) */
} rt_wfc_trace_t;

typedef struct rt_wfc_bound {
    uint32_t height;                   /* s */
    bool cached;                       /* s < heights */
    uint32_t hit_nodes;                /* a malloc or free served by the cache (no RMW) */
    uint32_t probes;                   /* slot reads, at most */
    uint64_t malloc_nodes, malloc_rmw; /* worst case of any malloc of this size */
    uint64_t free_nodes, free_rmw;     /* worst case of any free of such a chunk */
} rt_wfc_bound_t;

/* Smallest buffer rt_wfc_create accepts at any address for this configuration (NULL: defaults);
 * SIZE_MAX when the configuration is invalid. */
size_t rt_wfc_min_buffer(const rt_wfc_config_t *config);

/* A tree over [mem, mem + size) whose control chunk also holds the slot table (a chunk of height
 * 3 for 64-byte nodes: the paper's Test I loses no 948-byte chunk to it). NULL iff mem is NULL,
 * the configuration is invalid or the buffer is below rt_wfc_min_buffer. O(N). */
rt_wfc_t *rt_wfc_create(void *mem, size_t size, const rt_wfc_config_t *config);

void *rt_wfc_malloc(rt_wfc_t *c, size_t size);
void *rt_wfc_malloc_ex(rt_wfc_t *c, size_t size, rt_wfc_trace_t *trace);
void rt_wfc_free(rt_wfc_t *c, void *ptr);
void rt_wfc_free_ex(rt_wfc_t *c, void *ptr, rt_wfc_trace_t *trace);
/* In place when the chunk holds size; else malloc, copy, free (rtalloc/heap.h's edge cases). */
void *rt_wfc_realloc(rt_wfc_t *c, void *ptr, size_t size);
void *rt_wfc_calloc(rt_wfc_t *c, size_t count, size_t size);
/* alignment <= RT_WF_ALIGN: malloc; <= 16: from the cache as a malloc of size + 12 (same bounds,
 * + 2 words written; its free: the cached free + 2 words read) when that height is cached and the
 * nodes are 16-aligned (B >= 32); larger: the tree's memalign (never cached). */
void *rt_wfc_memalign(rt_wfc_t *c, size_t alignment, size_t size);
size_t rt_wfc_usable_size(rt_wfc_t *c, void *ptr);

/* Releases the calling context's cache to the tree (e.g. before a thread ends). Bounded by the
 * flush above. */
void rt_wfc_flush(rt_wfc_t *c);
/* Releases every cache. Only when no other call is in progress. O(P x cache). */
void rt_wfc_flush_all(rt_wfc_t *c);
/* Bytes of chunks the caches hold now (relaxed reads; exact at quiescence). O(P). */
size_t rt_wfc_cached_bytes(const rt_wfc_t *c);

/* The tree underneath (for inspection: rt_wf_height, rt_wf_counter, ...; never free through it). */
rt_wf_t *rt_wfc_tree(const rt_wfc_t *c);
size_t rt_wfc_max_request(const rt_wfc_t *c);
bool rt_wfc_bound(const rt_wfc_t *c, size_t size, rt_wfc_bound_t *bound);
void rt_wfc_get_config(const rt_wfc_t *c, rt_wfc_config_t *config);

/* Application view. First gives the caller's cache back to the tree (rt_wfc_flush), so that
 * largest_free and free_blocks describe what any context can get; chunks other caches hold are
 * free (not in used_bytes or used_blocks) but not in largest_free. peak_used and watermark are the
 * tree's: what caches held at the time is included (an exact peak of the application's bytes
 * would need a shared write on every call), so peak_used >= the highest used_bytes. Walks the
 * tree: call when no other call is in progress. */
void rt_wfc_stats(rt_wfc_t *c, rt_stats_t *stats);
/* Equation 3 of the tree (cached chunks are live chunks there) and every cache's lists: each
 * entry a chunk of its height marked cached, as many as counted. Quiescent only. O(N + P x cache). */
bool rt_wfc_check(rt_wfc_t *c);
/* Blocks in address order; cached chunks are reported free, records not at all. Quiescent only. */
void rt_wfc_walk(rt_wfc_t *c, rt_walk_fn fn, void *context);
void rt_wfc_set_handler(rt_wfc_t *c, rt_error_handler_t handler, void *context);
unsigned rt_wfc_last_probes(const rt_wfc_t *c);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_WFCACHE_H */
