/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/waitfree.h -- the wait-free buddy tree of Stellwag, Krainz and Schroeder-Preikschat
 * (2010, "A wait-free dynamic storage allocator by adopting the helping queue pattern";
 * doc/allocators.md, "Wait-free buddy tree"), the improvements its section 5 proposes, and one of
 * our own.
 *
 * The memory is a complete binary tree of N = 2^(H+1) - 1 nodes of B bytes (B = 64 by default)
 * stored in post-order (left subtree, right subtree, root), so every subtree is one contiguous
 * slice. A chunk is a whole subtree: a request of height s takes 2^(s+1) - 1 nodes. Each node is
 *
 *     [ length (u32) | data ... | padding (u32) | counter (i32) ]
 *
 * A chunk uses the `length` of its first node (a tagged word: height, state, check bits), and the
 * `padding` (overrun canary) and `counter` of its last node, the subtree's root; everything in
 * between is the caller's. Usable bytes of a chunk of k = 2^(s+1) - 1 nodes: k * B - 12, on 32-
 * and 64-bit targets alike (the three words are 32-bit everywhere; the paper's 948-byte requests
 * fit 15 nodes of 64 bytes on both). malloc returns the first node + 4: pointers are aligned to 4
 * (RT_WF_ALIGN), not to 8 or 16 -- the paper's layout, kept so its test figures hold.
 *
 * Every node's counter is the number of free leaves below it minus the sizes of the requests
 * passing through it (the paper's equation 3). malloc of s descends from the root decrementing
 * each counter it passes by S = 2^s (the "conditional decrement": one fetch-and-add of -S, and a
 * second fetch-and-add of +S if the old value was below S -- never a compare-and-swap loop); the
 * node of height s whose counter it took from 2^s to 0 is its chunk. free re-initialises the
 * counters inside the chunk and adds S to every counter from the chunk's root to the tree's root.
 * No locks, no system calls, no thread-local state: every call may run on any thread and in an
 * interrupt or signal handler, concurrently with any other call on the same instance.
 *
 * Weak guarantee, not linearizable (paper 3.4.2, Fig. 9): a malloc can fail while memory for it
 * exists, when it overlaps another call that holds a decrement on a counter it needs. Failures
 * happen only under overlap; a sequential history never fails while a fitting chunk exists, and
 * no two live chunks ever overlap.
 *
 * Variants (rt_wf_config_t.flags; any combination):
 *   0                        the paper: recursive depth-first try_allocate (Fig. 3), eager
 *                            re-initialisation on free (Fig. 4)
 *   RT_WF_READONLY_DESCENT   section 5: find a candidate by reading counters only, then claim it
 *                            by decrementing along the direct path from the root (a failed claim
 *                            is undone and the search goes on where it stopped)
 *   RT_WF_LAZY_REINIT        section 5: free marks the chunk's root "pristine" instead of
 *                            re-initialising its subtree; a malloc that must descend into a
 *                            pristine node initialises its two children if its decrement found
 *                            the node untouched (no other request inside), else backs out of it
 *   RT_WF_HINTS              ours: the padding word of every free node holds, per side, 1 + the
 *                            height of the largest wholly free subtree below (0: none). malloc
 *                            tries first the side that holds a fitting free subtree (the left one
 *                            when both do), so it places every chunk where the paper's search does
 *                            -- the leftmost free one -- but walks only the direct path instead of
 *                            probing full or fragmented subtrees; a counter that visibly lacks S
 *                            is passed with one load instead of the two fetch-and-adds of a failed
 *                            decrement (which would also dip it for others). Hints are only an
 *                            order: when they are stale (overlapping calls) the other side is
 *                            still tried, so correctness and the worst-case bound are the paper's
 * and the node size B (16 .. 4096, a power of two; the paper suggests other sizes in section 5).
 *
 * Bounds (H = tree height, s = request height, S = 2^s, k = 2^(s+1) - 1; "nodes" = node visits,
 * a node counted each time the algorithm arrives at it; RMW = atomic read-modify-writes on the
 * tree's counters; rt_wf_bound() returns these numbers for an instance):
 *   malloc, paper and RT_WF_HINTS    nodes <= 2^(H-s+1) - 1    (each node of height >= s at most
 *                                    once: the paper's O(heap / B)); RMW <= 3 per node
 *                                    RT_WF_HINTS with exact hints (no overlapping call since the
 *                                    hints on the path were written) and a fitting free subtree:
 *                                    nodes = RMW = H - s + 1, the direct path (+ 2 nodes per
 *                                    pristine node initialised with RT_WF_LAZY_REINIT)
 *   malloc, RT_WF_READONLY_DESCENT   nodes <= (2^(H-s+1) - 1) + 2^(H-s) (H-s+1)  (reads, then one
 *                                    claim walk per candidate); RMW <= 3 * 2^(H-s) (H-s+1);
 *                                    RT_HARDENING >= 1: + one more walk (H-s+1 nodes, 3 (H-s+1)
 *                                    RMW) that verifies the first counter read out of range
 *   malloc, RT_WF_LAZY_REINIT        the variant's bound + per pristine node passed: its 2
 *                                    children written (nodes at most x3; no extra RMW)
 *   free                             nodes = k + H - s, RMW = H - s + 1 (eager re-initialisation)
 *   free, RT_WF_LAZY_REINIT          nodes = H - s + 2 at most, RMW = H - s + 1
 *   + RT_HARDENING >= 1: the claimed chunk's check (its first node's length word, its root's
 *   padding and, for s >= 1, the counters of its root's two children: 2 nodes not counted in
 *   trace.nodes) -- a counter restored from an earlier moment cannot hand out a live chunk;
 *   not seen: with RT_WF_LAZY_REINIT, a pristine node's padding restored together with its
 *   counter (8 adjacent bytes of a moment the subtree was wholly free; its counters below are
 *   stale by design, so there is nothing to compare)
 *   + every free (and moving realloc): the claim, ONE compare-and-swap of the chunk's length word
 *   (not counted in trace.rmw, which counts the tree's counters), never retried -- its failure
 *   means another call freed the chunk first (see "Racing frees" below)
 *   + statistics (trace.stat_rmw): 2 fetch-and-adds and at most 4 compare-and-swaps (peak and
 *   watermark, two attempts each) per malloc, 2 fetch-and-adds per free
 *   realloc  malloc + copy + free at worst; calloc  malloc + memset; memalign  malloc of
 *   size + alignment - 4; usable_size, max_request, last_probes O(1) + O(H) pointer validation
 *   stats, walk O(blocks * H); check O(N)
 * Pointer validation (free, realloc, usable_size) is O(H) arithmetic and at most five word reads
 * (length word, root counter and canary; offset word and record of a memalign pointer), the
 * length word and these read once more when the chunk changed under the check (racing frees). At
 * RT_HARDENING >= 1 free (and a moving realloc) first reads the counter -- with RT_WF_HINTS also
 * the padding -- of each of the H - s ancestors it will increment (the nodes the release visits
 * anyway; not counted again in trace.nodes).
 * Stack: the paper's try_allocate recurses H - s + 1 deep (RT_WF_READONLY_DESCENT is iterative
 * with two arrays of RT_WF_MAX_HEIGHT + 2 entries); release re-initialises recursively, s deep.
 *
 * Counters are 32-bit words (atomic_uint; lock-free on Cortex-M3/M4, RV32A, x86): a tree has at
 * most 2^RT_WF_MAX_HEIGHT leaves, and (calls inside the allocator at once) * 2^(H-1) must stay
 * below 2^31 (a failed decrement subtracts for a moment; H = 19, a 64 MiB tree of 64-byte nodes,
 * allows 4095 concurrent calls). At RT_HARDENING >= 1 a counter of height h is trusted only in
 * [-2^(h+10), 2^h], so at most 1024 calls may be failing a decrement at one node at once (more
 * would be reported as damage).
 *
 * Racing frees (an application's double free on two threads, or a free racing a realloc of the
 * same pointer): a free first checks the chunk (reads only), then claims it -- one compare-and-swap
 * of its length word from the live tag it checked to "freed" -- and only the claimant releases it.
 * Of any number of frees of one chunk, however they interleave, exactly one claims it; each other
 * reports DOUBLE_FREE and changes nothing (a check that meets the chunk being released reads its
 * length word again: changed, it is the double free, not damage). A free whose claim comes after
 * the chunk was released and handed out again (the same chunk, the same pointer) frees that new
 * block: no allocator can tell it from a free of it. A moving realloc claims the old chunk before
 * it allocates, and gives it back untouched when no new chunk is found. Every call stays
 * wait-free: one claim attempt, at most two checks.
 *
 * Generations: each create draws a new key (rtalloc/common.h, rt_set_entropy) for the tags,
 * canaries, paddings and offset words, never the one the buffer's previous control block held
 * there (in the buffer for rt_wf_create, the control buffer for rt_wf_create_split): a pointer, a
 * tag or a canary a previous instance left in the buffer does not verify in the new one
 * (BAD_POINTER; up to the check bits of each word).
 *
 * Bad input (doc/design.md, "Bad input and the handler") through the error handler, the operation
 * refused and the tree untouched: a pointer outside the tree (FOREIGN_POINTER); a pointer that is
 * not the one malloc or memalign
 * returned for a live chunk -- not at a chunk's data start, a length word whose check bits do not
 * match, the data start of a memalign chunk, a memalign pointer whose offset word and the
 * chunk's record of it disagree (BAD_POINTER); a chunk whose length word says freed
 * (DOUBLE_FREE); a live chunk whose canary or counter is wrong (CORRUPTED: an overrun of the
 * chunk's last bytes; refused, the chunk stays allocated). A stale pointer into memory that a
 * later chunk reuses is caught by the check bits and the record unless the caller's data forges
 * them. So each block is identified by the pointer it was handed out at, in O(1).
 *
 * Overflows into the metadata (RT_HARDENING >= 1, the default; doc/design.md, "Hardening model").
 * Within 16 bytes of a block lie its length word, its root's canary and counter, the previous
 * node's counter and
 * padding, and the next node's length word. Every counter word holds an arithmetic code of its
 * value and of its node's place, and every free node's padding a keyed copy of its payload,
 * checked by every call that acts on them: any one-byte change of such a word, of any value, is
 * detected (several bytes of any value, or another node's valid word copied over it: all but
 * about 2^(h+1) / 2^32 of them, h the node's height); length words and canaries (keyed by their
 * place too) are checked by free as above. A malloc that meets damaged metadata gives back what it
 * holds and is refused (CORRUPTED); a free or realloc whose chunk or ancestors are damaged is
 * refused before it changes anything. Nothing is acted on before it is checked, so an overflow
 * never makes the tree hand out memory that overlaps a live block, write outside the tree, or
 * fault; the damaged subtree may be lost to later requests (rt_wf_check reports it). Usable
 * sizes, the node layout and the step bounds are the same at every level (the only extra step:
 * the read-only descent's verification walk above). RT_HARDENING 0: the paper's counters and
 * paddings (a write into a counter can make the tree hand out a live block again).
 *
 * RT_DEBUG >= 1 adds internal assertions; unlike the locked allocators there is no full check
 * after every call at RT_DEBUG >= 2 (other calls may be half-way through: only rt_wf_check at a
 * quiescent point can check equation 3).
 *
 * Sizing: a buffer of 2^(H+1) * B bytes (plus min(B, 64) - 1 when it is not aligned to min(B, 64))
 * gives a tree of height H; the control block lives in the tree's leftmost chunk
 * (rt_wf_create) or in a separate buffer (rt_wf_create_split). A buffer between two powers of two
 * uses the largest tree that fits.
 */
#ifndef RTALLOC_WAITFREE_H
#define RTALLOC_WAITFREE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_wf rt_wf_t;

/* Bytes of a chunk that are not the caller's: length (4), padding (4) and counter (4). */
#define RT_WF_OVERHEAD 12u
/* Alignment of every pointer malloc returns (the node start + 4). */
#define RT_WF_ALIGN 4u
/* Default node size (the paper's 512 bits). */
#define RT_WF_NODE_SIZE 64u

/* Largest tree height (the root has 2^RT_WF_MAX_HEIGHT leaves). Larger buffers use the first
 * 2^(RT_WF_MAX_HEIGHT + 1) - 1 nodes. At most 28 (counters are 32-bit). */
#ifndef RT_WF_MAX_HEIGHT
#define RT_WF_MAX_HEIGHT 24
#endif

#define RT_WF_READONLY_DESCENT 0x1u
#define RT_WF_LAZY_REINIT 0x2u
#define RT_WF_HINTS 0x4u
/* With RT_WF_LAZY_REINIT only: create initialises the root alone, marked pristine (the lazy
 * variant's flag), instead of every node -- O(1), one node touched; the first descents below
 * initialise what they enter. For trees over large fresh mappings (rtalloc/mcheap.h). */
#define RT_WF_LAZY_CREATE 0x8u

typedef struct rt_wf_config {
    size_t node_size; /* power of two in [16, 4096]; 0 means RT_WF_NODE_SIZE */
    unsigned flags;   /* RT_WF_* variant flags */
} rt_wf_config_t;

/* Work of one call, the paper's WCET argument made countable (no clock involved). */
typedef struct rt_wf_trace {
    uint32_t nodes;    /* node visits: arrivals at a node whose metadata the call read or wrote */
    uint32_t rmw;      /* atomic read-modify-writes on tree counters */
    uint32_t stat_rmw; /* atomic read-modify-writes on the statistics counters */
    uint32_t claims;   /* read-only descent: claim walks started */
    uint32_t inits;    /* lazy re-initialisation: pristine nodes initialised (2 children each) */
    uint32_t height;   /* the request's height s (malloc) or the chunk's (free); 0 on refusal */
} rt_wf_trace_t;

/* Bound of one malloc and one free of a size on an instance (see the table above). */
typedef struct rt_wf_bound {
    uint32_t height;       /* s */
    uint64_t malloc_nodes; /* worst case of trace.nodes for malloc */
    uint64_t malloc_rmw;
    uint64_t free_nodes;
    uint64_t free_rmw;
    uint32_t path; /* H - s + 1: the nodes of the direct path */
} rt_wf_bound_t;

/* Usable bytes of a chunk of height s for node size B: (2^(s+1) - 1) * B - 12. */
size_t rt_wf_usable(size_t node_size, unsigned height);

/* Bytes of the control block (rt_wf_create_split). Constant. */
size_t rt_wf_control_size(void);
/* Alignment the control block of rt_wf_create_split needs. */
size_t rt_wf_control_align(void);

/* Smallest buffer rt_wf_create accepts at any address for this configuration (NULL: defaults). */
size_t rt_wf_min_buffer(const rt_wf_config_t *config);

/* Creates a tree over [mem, mem + size) with its control block in the tree's leftmost chunk (so a
 * buffer of exactly 2^(H+1) * B bytes keeps the full height H; the largest request is then the
 * root's right half). NULL iff mem is NULL, the configuration is invalid or the buffer is below
 * rt_wf_min_buffer. O(N) to initialise every counter. Not thread-safe (nothing can use the
 * instance yet). */
rt_wf_t *rt_wf_create(void *mem, size_t size, const rt_wf_config_t *config);

/* As rt_wf_create, with the control block in [control, control + rt_wf_control_size()) (aligned
 * to rt_wf_control_align()) and the whole tree available: the paper's Fig. 1 exactly. NULL iff
 * a pointer is NULL or misaligned, the configuration is invalid or the tree buffer holds fewer
 * than 3 nodes. */
rt_wf_t *rt_wf_create_split(void *control, void *tree, size_t tree_size, const rt_wf_config_t *config);

/* NULL iff size is 0, larger than rt_wf_max_request (reported TOO_LARGE), or no chunk could be
 * claimed (out of memory, or the weak guarantee's transient failure under overlap). Wait-free:
 * see the bounds above. Thread- and ISR-safe. Alignment RT_WF_ALIGN. */
void *rt_wf_malloc(rt_wf_t *wf, size_t size);
/* As rt_wf_malloc; when trace is not NULL it receives the call's work. */
void *rt_wf_malloc_ex(rt_wf_t *wf, size_t size, rt_wf_trace_t *trace);

/* Frees a chunk; NULL is a no-op; bad input is reported and refused. Wait-free. */
void rt_wf_free(rt_wf_t *wf, void *ptr);
void rt_wf_free_ex(rt_wf_t *wf, void *ptr, rt_wf_trace_t *trace);

/* In place when the new size needs no larger chunk (the chunk is kept as it is); otherwise
 * malloc, copy, free. NULL (the old block untouched) when out of memory. realloc(NULL, n) =
 * malloc(n); realloc(p, 0) frees p and returns NULL. Bad input, calloc, memalign: as
 * rtalloc/heap.h (the same allocator front, src/front/front.h). */
void *rt_wf_realloc(rt_wf_t *wf, void *ptr, size_t size);
void *rt_wf_calloc(rt_wf_t *wf, size_t count, size_t size);
/* alignment <= 4: malloc. Larger: a chunk of size + alignment - 4 bytes, the pointer moved to the
 * alignment inside it; a keyed offset word before the pointer leads free back to the chunk, whose
 * length word is marked "aligned" and whose data-start word records the offset: free, realloc and
 * usable_size then accept exactly this pointer (never the chunk's data start). */
void *rt_wf_memalign(rt_wf_t *wf, size_t alignment, size_t size);
/* Usable bytes from ptr to the end of its chunk's data; 0 (reported) for a bad pointer. */
size_t rt_wf_usable_size(rt_wf_t *wf, void *ptr);

/* The largest request that can ever succeed on this instance. O(1). */
size_t rt_wf_max_request(const rt_wf_t *wf);
/* Tree height H, node count N, node size B. O(1). */
unsigned rt_wf_height(const rt_wf_t *wf);
size_t rt_wf_nodes(const rt_wf_t *wf);
size_t rt_wf_node_size(const rt_wf_t *wf);
unsigned rt_wf_flags(const rt_wf_t *wf);
/* Height of the chunk a request of `size` bytes takes; UINT32_MAX when it can never fit. */
unsigned rt_wf_height_for(const rt_wf_t *wf, size_t size);
/* The bounds above for a request of `size` bytes; false when it can never fit. */
bool rt_wf_bound(const rt_wf_t *wf, size_t size, rt_wf_bound_t *bound);

/* Statistics. The counts (mallocs, frees, failures, errors, used and peak bytes) are atomic
 * counters, exact whenever no call is in progress; peak_used and watermark take at most two
 * compare-and-swap attempts per call, so under overlap they can miss a raise. largest_free and
 * free_blocks walk the tree (O(blocks * H)): call stats when no other call is in progress.
 * Free blocks are the wholly free subtrees and the internal nodes above used chunks (size 0:
 * never allocatable on their own). */
void rt_wf_stats(rt_wf_t *wf, rt_stats_t *stats);
/* Node visits of the last malloc by any thread (a relaxed store per malloc). */
unsigned rt_wf_last_probes(const rt_wf_t *wf);

/* The paper's equation 3 at quiescence: every counter outside live chunks equals the free leaves
 * below it, every live chunk's root counter is 0 and its length word and canary are intact,
 * pristine subtrees (lazy) read as wholly free. Reports CORRUPTED and returns false otherwise.
 * O(N). Only when no other call is in progress. */
bool rt_wf_check(rt_wf_t *wf);
/* As rt_wf_check; with RT_WF_CHECK_HINTS also every hint equals the tree it describes (exact
 * after calls that did not overlap). */
#define RT_WF_CHECK_HINTS 0x1u
bool rt_wf_check_ex(rt_wf_t *wf, unsigned what);

/* Blocks in address order: used chunks, wholly free subtrees and the free internal nodes between
 * them; the control chunk is not reported. O(blocks * H). Only when no other call is in
 * progress. fn may call the allocator. */
void rt_wf_walk(rt_wf_t *wf, rt_walk_fn fn, void *context);

/* Not itself synchronised: install before sharing the instance. */
void rt_wf_set_handler(rt_wf_t *wf, rt_error_handler_t handler, void *context);

/* White-box inspection for tests and tools: the counter of the node at post-order index i, and
 * whether node i is the root of a live chunk. O(1). */
int rt_wf_counter(const rt_wf_t *wf, size_t index);
bool rt_wf_is_chunk(const rt_wf_t *wf, size_t index);
/* Post-order index of node (height h, k-th from the left at that height). */
size_t rt_wf_index(const rt_wf_t *wf, unsigned h, size_t k);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_WAITFREE_H */
