/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/heap.h -- the boundary-tag heap: one facade, six interchangeable free-block indexes.
 *
 * A heap manages memory the caller hands it (any alignment: the facade aligns). The facade owns
 * the block header and boundary tag, alignment, splitting, coalescing in both directions,
 * statistics, the watermark, probe accounting, the integrity check, the lock hooks and the error
 * handler. An index owns only the set of free blocks, behind five functions (reset, insert,
 * remove, find, name); see doc/design.md, "The index contract".
 *
 * Indexes (Masmano 2006 section 2; the VaiOS blog):
 *   index      malloc                        free    probes per malloc
 *   tlsf       O(1)                          O(1)    1 or 2 (bitmap look-ups; never a walk)
 *   tlsf32     O(1) (32 slots per octave)    O(1)    1 or 2
 *   halffit    O(1)                          O(1)    1
 *   tlsfq      O(1) (quick lists, then TLSF) O(1)    1 on a quick-list hit, else as TLSF
 *   seglist    O(free blocks) (8 classes)    O(1)    blocks inspected by the first-fit walk
 *   firstfit   O(free blocks)                O(1)    blocks inspected
 *   bestfit    O(free blocks)                O(1)    blocks inspected
 * "O(1)" is a constant independent of the heap's size and state: the TLSF malloc is one size
 * mapping, one look at the first block of the request's own slot (good fit), two find-first-set
 * operations, one list removal and at most one split; its free is a validation, at most two
 * neighbour removals and one insertion. realloc adds one copy of the old payload when it must
 * move (never with the lock held); calloc adds one memset. Validation of a freed pointer scans the pools (at most
 * RT_HEAP_MAX_POOLS), and so does each range check of a list link outside pool 0.
 *
 * The constants, in exact instructions per call from the descriptor's entry to its return, for
 * TLSF on x86-64 (gcc 12 -O2, RT_HARDENING 1, the default layout), per path, the largest over
 * the benchmark's adversarial scenarios (`rtbench run paths`: each list emptied or kept, block
 * sizes 64 B..4 KiB; "pool 4": the blocks in the last of RT_HEAP_MAX_POOLS = 4 pools, so every
 * range check of a link scans them all):
 *     malloc  exact fit 120 (pool 4: 130)   climbing a row 128 (138)
 *             split 160 (160)               split after a climb 170 (169)
 *     free    no merge 100 (126)            merge with the predecessor 190 (218)
 *             merge with the successor 183 (211)   with both 243 (306)
 * The three pools scanned before the last cost a free up to 85 more (its pointer and the four
 * links it checks when it merges both sides), a malloc up to 17. A call that meets damage adds the
 * containment walk (below). realloc that slides a block into its free predecessor copies the
 * payload with the lock released (the span is one used block meanwhile): the lock-held stretches
 * of every call are constants independent of the block's size (tools/target-bench.sh measures
 * the interrupts-masked stretches on Cortex-M4 and RV32).
 * Layout (W = sizeof(size_t), A = RT_HEAP_ALIGN):
 *                                   32-bit (W=4, A=8)   64-bit (W=8, A=16)
 *   overhead of a used block        4 bytes (one word)  8 bytes (one word)
 *   smallest block (header incl.)   16 bytes            32 bytes
 *   alignment of every pointer      8                   16
 *   block sizes                     multiples of A (with RT_TLSF_CUT_AT_SLOT 1, TLSF and tlsf32
 *                                   round the request up to the start of its second-level slot:
 *                                   < 1/16 resp. 1/32; by default they cut at the request)
 *   largest block (default)         2^24 - 8            2^32 - 16   (RT_HEAP_MAX_BLOCK_LOG2;
 *                                   with RT_HARDENING 0: 2^31 - 8 and 2^40 - 16)
 *   largest request                 largest block - W for seglist, firstfit, bestfit; for
 *                                   tlsf/tlsf32 the start of the largest block's slot - W (the
 *                                   search rounds up), for halffit the power of two <= the
 *                                   largest block, - W. rt_heap_stats().largest_free and the
 *                                   registry's max_request give the exact figure of a heap.
 * A used block is [size|flags][payload...]. A free block is [size|flags][next][prev]...[size]:
 * its size is repeated in its last word, which is where the next block looks for its physical
 * predecessor -- the "prev" link lives in the free predecessor, so used blocks pay one word.
 *
 * Sizing rule: a buffer of B bytes holds the control structure (rt_heap_control_size), up to
 * A - 1 bytes of alignment slack, one word of end sentinel, the pool's guard zones
 * (2 * RT_HEAP_POOL_GUARD bytes: 64 with RT_HARDENING >= 1, else 0), and blocks. n live requests of
 * payload s_i fit in the worst case of fragmentation only if the heap is larger than their sum;
 * a practical rule: B >= control + 2 * sum(round_up(s_i + W, A)) for the O(1) indexes
 * (Masmano 2006, Table 7: TLSF's fragmentation factor F 10-15 % on average over its three task
 * sets, 18.6 % at most; doc/allocators.md, "Sizing rule").
 *
 * Thread and interrupt safety: every function that reads or writes a heap runs between the
 * heap's lock hooks (rt_heap_set_lock); without hooks a heap must be used by one thread, and not
 * from an interrupt that can preempt a heap call.
 *
 * Bad input: free(NULL) is a no-op. A pointer that is not a live block of this heap, a double
 * free or a corrupted header is detected in O(1) by the checker (src/heap/heap_internal.h: the
 * block's own header and its successor's, then the neighbours a call will absorb), reported
 * through the heap's error handler, and the call is refused. (A block header forged exactly by
 * user data, consistent with both neighbours, is the one case the O(1) check cannot see;
 * RT_DEBUG >= 2 adds an exact O(blocks) membership check.)
 *
 * Hardening (RT_HARDENING, rtalloc/config.h; default 1). An application's write past the end or
 * before the start of its block lands in metadata: the next block's header, a free neighbour's
 * links or footer, its own header. At level 1 none of it is acted on unverified:
 *   - every header word carries a tag bound to its size and flags, to the ADDRESS where it
 *     stands and to a key each create draws anew (src/block/block.h, which proves what it
 *     detects): a change of any one byte of a header, of any value, is detected
 *     deterministically; on 64-bit so is a valid header copied to any other place of a heap under
 *     32 GiB, and a header left by an earlier life of the heap over the same buffer (a create
 *     never reuses the key the buffer held: a stale pointer is RT_ERR_BAD_POINTER). On 32-bit the
 *     tag has T = 8 bits: headers copied from under 2 KiB away are detected deterministically,
 *     other words pass with probability 2^-8 (RT_HEAP_MAX_BLOCK_LOG2 16 gives T = 16);
 *   - a block the facade will treat as free proves it: tagged free header and membership of its
 *     list (its pprev slot points at it, its next points back): safe unlinking, so no link is
 *     written through before both are verified, and no link is followed that does not lie inside
 *     the heap; a free predecessor, found through its footer, must have a tagged free header of
 *     exactly that size at that place; the walking indexes check each block before reading it;
 *   - a quick list's link (rt_tlsfq) carries a seal bound to its block's address and the key;
 *   - each pool is fenced by RT_HEAP_POOL_GUARD bytes on both sides (checked by rt_heap_check):
 *     a write of up to 32 bytes before the first block's header or past the sentinel (an
 *     underrun of the first block's payload reaching 40 bytes before it on 64-bit) meets no
 *     metadata -- neither the control structure (the index's list heads) nor anything outside.
 * Containment. A call that meets damage (RT_ERR_CORRUPTED, or RT_ERR_BAD_POINTER for a pointer
 * inside a pool, which may be a block whose own header was overwritten) reports it, is refused
 * (free changes nothing the application owns; malloc, realloc and memalign return NULL) and fences
 * the damage off before it returns: one walk of the heap checks every block, fences each damaged
 * one -- a free block whose header, links or footer are damaged loses one smallest block, the rest
 * is free again; a live block whose header was damaged is fenced whole (its extent is where the
 * next verified header stands) and stays the application's: its free is accepted, its memory
 * never reused; when the headers of adjacent blocks are all damaged, nothing says where the later
 * ones start: they are fenced with the first as one region, whose free is accepted and theirs
 * refused (even when such a header is later written back valid: while a heap holds fenced
 * memory, free and realloc refuse a block inside a fenced extent -- up to 16 fenced blocks are
 * remembered, O(16) on that path only) -- and rebuilds the index from the free blocks.
 * Afterwards rt_heap_check passes, live blocks free and merge normally, no merge crosses a fenced block, and
 * rt_stats_t.quarantined_bytes counts the fenced bytes. The walk costs O(blocks + damaged bytes /
 * A) once per damage, with the lock held: the error path's bound. rt_heap_check fences what it
 * finds the same way (it still returns false and reports). Level 2 adds the boundary tags to every
 * free block a call acts on (its footer equals its size, its successor's tagged header says
 * PREV_FREE) and checks the tagged header of each list neighbour before an unlink. Level 0: the
 * checks above the hardening paragraph only, no containment.
 */
#ifndef RTALLOC_HEAP_H
#define RTALLOC_HEAP_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_heap rt_heap_t;

typedef enum rt_index {
    RT_INDEX_TLSF = 0, /* two-level segregated fit, 16 slots per octave */
    RT_INDEX_TLSF32,   /* two-level segregated fit, 32 slots per octave */
    RT_INDEX_SEGLIST,  /* the VaiOS blog's 8 size classes, first fit within a class */
    RT_INDEX_FIRSTFIT, /* one LIFO free list, first block that fits */
    RT_INDEX_BESTFIT,  /* one free list, smallest block that fits */
    RT_INDEX_HALFFIT,  /* Ogasawara 1995: lists by floor(log2 size), bitmap search */
    RT_INDEX_TLSFQ,    /* TLSF (16 slots per octave) behind quick lists for small blocks */
    RT_INDEX_COUNT
} rt_index_t;

#define RT_HEAP_WORD ((size_t)sizeof(size_t))
#if RT_HARDENING >= 1
#define RT_HEAP_POOL_GUARD ((size_t)32u) /* bytes fenced off before and after each pool */
#else
#define RT_HEAP_POOL_GUARD ((size_t)0u)
#endif
#define RT_HEAP_OVERHEAD RT_HEAP_WORD
#define RT_HEAP_MIN_BLOCK ((4u * RT_HEAP_WORD + RT_HEAP_ALIGN - 1u) & ~((size_t)RT_HEAP_ALIGN - 1u))
#define RT_HEAP_LARGEST_BLOCK (((size_t)1 << RT_HEAP_MAX_BLOCK_LOG2) - (size_t)RT_HEAP_ALIGN)
#define RT_HEAP_MAX_REQUEST (RT_HEAP_LARGEST_BLOCK - RT_HEAP_WORD)

/* Quick lists (rt_tlsfq only). A freed block of a request up to RT_HEAP_QUICK_MAX_REQUEST bytes
 * waits, unmerged, on a LIFO list of its exact size, and the next malloc of that size takes it
 * back without touching the index (glibc's tcache and Weinstock's QuickFit do the same; here it
 * is bounded and checked):
 *   malloc  a hit: one list pop, the block's tagged header checked (it must be a cached block of
 *           exactly that size, inside a pool) -- no index, no split. A miss: TLSF's malloc. A
 *           malloc TLSF cannot serve first gives every cached block back to the index (merging
 *           each with its free neighbours) and tries once more: at most `limit` frees more, so
 *           the bound of that path is TLSF's malloc twice plus `limit` TLSF frees.
 *   free    the same validation as TLSF's (the block's header and its successor's); then, if the
 *           block is small, fewer than `limit` blocks are cached and the cached bytes, it included,
 *           stay within 1/64 of the bytes in use at that free (RT_HEAP_QUICK_SHARE_LOG2,
 *           rt_heap_set_quick_share), one
 *           list push (its header keeps the used tag with a "cached" flag, so a second free is
 *           RT_ERR_DOUBLE_FREE); else TLSF's free. O(1) either way.
 *   memory  at most `limit` blocks of at most RT_HEAP_QUICK_MAX_REQUEST + W bytes wait, and a
 *           block is cached only while all that waits stays within 1/64 of the bytes in use: the
 *           lists hold back memory in proportion to the live set, so the fit stays TLSF's (Masmano Tests 1-3 and the recorded programs: F within
 *           2 points of rt_tlsf's; `rtbench run masmano`, `rtbench run trace`). Cached blocks
 *           count as free: rt_heap_stats and rt_heap_walk give them back first (so
 *           largest_free, free_blocks and the walk show the merged heap), and rt_heap_check
 *           checks them.
 * The quick lists are a layer over the TLSF facade (src/heap/heap_tlsfq.c): a cached block keeps
 * its tagged header with a "cached" flag and, in its first two payload words, its link and a seal
 * bound to its address and the heap's key (src/heap/quick.h). Exact means on the small workload
 * (x86-64, gcc 12 -O2, RT_HARDENING 1; bench/callgrind_check.sh -w small tlsf tlsfq): 78.7 per
 * malloc and 87.0 per free (rt_tlsf: 113.2 and 101.3), the seal and the address-bound tag
 * included. The failing malloc that gives `limit` cached blocks back, each merging both
 * neighbours, is the layer's longest path (`rtbench run worst`, scenario quickflush): a heap sized
 * so tightly that mallocs fail in normal running should lower the limit or use rt_tlsf.
 * The default limit is RT_HEAP_QUICK_BLOCKS, fewer on a heap below 1 MiB (one block per 4 KiB
 * of capacity); rt_heap_set_quick_limit changes it, rt_heap_flush empties the lists.
 * Bad input: a cached block is checked when it is taken (its header must be a cached block's of
 * the list's size, inside a pool, and its link must carry its seal); damage met on a list is
 * reported (RT_ERR_CORRUPTED), the call refused, and contained like any other: a cached block whose
 * own words were written over after its free is fenced, the others go back to the index. None is
 * handed out twice. */
#ifndef RT_HEAP_QUICK_MAX_REQUEST
#define RT_HEAP_QUICK_MAX_REQUEST 256u
#endif
#ifndef RT_HEAP_QUICK_BLOCKS
#define RT_HEAP_QUICK_BLOCKS 256u
#endif
#define RT_HEAP_QUICK_MAX_LIMIT 1024u /* the largest limit rt_heap_set_quick_limit accepts */
#ifndef RT_HEAP_QUICK_SHARE_LOG2
#define RT_HEAP_QUICK_SHARE_LOG2 6u /* the cached bytes stay within 1/64 of the bytes in use */
#endif

/* Bytes at the start of the buffer that hold the heap's control structure. Constant. */
size_t rt_heap_control_size(rt_index_t index);

/* The smallest buffer size rt_heap_create_with accepts for any buffer address. Constant. */
size_t rt_heap_min_buffer(rt_index_t index);

/* Creates a heap in [mem, mem + size) using `index`. Returns the handle (which lies inside the
 * buffer; the heap owns the whole buffer until the caller stops using the handle), or NULL iff
 * mem is NULL, index is out of range, or the buffer is smaller than rt_heap_min_buffer(index).
 * A buffer larger than the largest block plus control is used up to that size. O(1) (TLSF and
 * half-fit clear their tables: O(table size)). The heap starts with no lock hooks and no handler. */
rt_heap_t *rt_heap_create_with(void *mem, size_t size, rt_index_t index);

/* Creates a heap with the default index (RT_HEAP_DEFAULT_INDEX; TLSF unless configured). Only
 * that backend is linked. */
rt_heap_t *rt_tlsf_create(void *mem, size_t size);
rt_heap_t *rt_tlsf32_create(void *mem, size_t size);
rt_heap_t *rt_seglist_create(void *mem, size_t size);
rt_heap_t *rt_firstfit_create(void *mem, size_t size);
rt_heap_t *rt_bestfit_create(void *mem, size_t size);
rt_heap_t *rt_halffit_create(void *mem, size_t size);
rt_heap_t *rt_tlsfq_create(void *mem, size_t size);
static inline rt_heap_t *rt_heap_create(void *mem, size_t size)
{
    switch (RT_HEAP_DEFAULT_INDEX) {
    case RT_INDEX_TLSF32: return rt_tlsf32_create(mem, size);
    case RT_INDEX_SEGLIST: return rt_seglist_create(mem, size);
    case RT_INDEX_FIRSTFIT: return rt_firstfit_create(mem, size);
    case RT_INDEX_BESTFIT: return rt_bestfit_create(mem, size);
    case RT_INDEX_HALFFIT: return rt_halffit_create(mem, size);
    case RT_INDEX_TLSFQ: return rt_tlsfq_create(mem, size);
    default: return rt_tlsf_create(mem, size);
    }
}

/* Adds [mem, mem + size) as one more pool. Returns false (and reports RT_ERR_BAD_POOL) iff the
 * heap already has RT_HEAP_MAX_POOLS pools, the buffer is too small for one smallest block, or it
 * overlaps a pool of the heap. O(1). */
bool rt_heap_add_pool(rt_heap_t *heap, void *mem, size_t size);

/* --- Allocation. The generic functions below dispatch through the heap's backend table (one
 * indirect call); the rt_<index>_* functions of each backend are the same code called directly,
 * with the index inlined: use them on the hot path when the backend is known. --------------- */

/* Returns a block of at least `size` bytes aligned to RT_HEAP_ALIGN, or NULL iff size is 0, no
 * free block fits (out of memory; the heap is unchanged), or size > RT_HEAP_MAX_REQUEST /
 * the heap's capacity (also reported as RT_ERR_TOO_LARGE). Time: see the table above. */
void *rt_heap_malloc(rt_heap_t *heap, size_t size);

/* Returns the block to the heap, coalescing with free neighbours. NULL is a no-op. A pointer
 * that is not a live block of this heap is reported (RT_ERR_FOREIGN_POINTER, _BAD_POINTER,
 * _DOUBLE_FREE) and ignored; damage met (RT_ERR_CORRUPTED) is reported and fenced off
 * (containment, above). The free of a live block the heap fenced is accepted (its memory stays
 * fenced). O(1) for every index; a call that meets damage adds the containment walk. */
void rt_heap_free(rt_heap_t *heap, void *ptr);

/* Resizes in place when the block itself or its free successor allows (shrinking always does),
 * else allocates, copies and frees. realloc(NULL, n) = malloc(n); realloc(p, 0) frees p and
 * returns NULL. Returns NULL iff the request fails; then p is untouched. Bad p: reported as for
 * free, returns NULL; a size above the largest request: reported (RT_ERR_TOO_LARGE, operation
 * "realloc"), returns NULL, p untouched. Time: a malloc plus a free plus a copy of the old payload;
 * the copy (a move, or the slide into a free predecessor) runs with the lock released, so the
 * time the lock is held does not grow with the block. */
void *rt_heap_realloc(rt_heap_t *heap, void *ptr, size_t size);

/* malloc(count * size) zero-filled. Returns NULL (and reports RT_ERR_OVERFLOW) iff the product
 * overflows; otherwise as malloc (a product above the largest request is reported as
 * RT_ERR_TOO_LARGE with operation "calloc"). Time: malloc plus a memset of the block, which runs
 * after the malloc has released the lock (the lock-held time is malloc's). */
void *rt_heap_calloc(rt_heap_t *heap, size_t count, size_t size);

/* Returns a block of at least `size` bytes whose address is a multiple of `alignment`, or NULL
 * iff alignment is 0 or not a power of two (reported, RT_ERR_BAD_ALIGNMENT, whatever size is), or
 * as malloc (size 0: NULL, not reported; too large: RT_ERR_TOO_LARGE with operation "memalign").
 * Alignments up to RT_HEAP_ALIGN cost nothing extra; larger ones search for size + alignment +
 * one smallest block and give the slack back as a free block. Same time bound as malloc; nothing
 * is cleared. */
void *rt_heap_memalign(rt_heap_t *heap, size_t alignment, size_t size);

/* Usable bytes of a live block (>= the size requested). Bad pointer: reported, returns 0. O(1). */
size_t rt_heap_usable_size(rt_heap_t *heap, void *ptr);
/* What `ptr` is to the heap, as free would judge it, without reporting or changing anything:
 * RT_ERR_NONE for a live block, else the kind free would report (a block free would find damaged
 * says RT_ERR_CORRUPTED; containment is left to the call that meets it). O(1) + the pool scan. */
rt_error_kind_t rt_heap_vet(rt_heap_t *heap, const void *ptr);
/* Usable bytes of a live block, from its header word alone (one relaxed atomic load): callable
 * from another thread while the heap's owner works on it, by a caller that holds the block (no
 * call can free it meanwhile). Checks the word's tag, not the neighbours; 0 when the word is not
 * a used block's header. O(1). */
size_t rt_heap_live_size(const rt_heap_t *heap, const void *ptr);
/* The largest request any pool of the heap could ever serve (grows with add_pool). O(1). */
size_t rt_heap_max_request(const rt_heap_t *heap);

/* The same five calls, per index, written out so that grep and ctags find them: rt_<index>_malloc,
 * _free, _realloc, _calloc, _memalign for tlsf, tlsf32, seglist, firstfit, bestfit, halffit, tlsfq. Each
 * is the generic call with its index inlined (no dispatch). Passing a heap of another index is
 * undefined. Linking: a program that calls only rt_<index>_create, _malloc and _free links only
 * those (with -ffunction-sections and --gc-sections; tools/footprint.sh measures it); the generic
 * rt_heap_realloc, _calloc and _memalign link the version of each index the program creates. */

void *rt_tlsf_malloc(rt_heap_t *heap, size_t size);
void rt_tlsf_free(rt_heap_t *heap, void *ptr);
void *rt_tlsf_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_tlsf_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_tlsf_memalign(rt_heap_t *heap, size_t alignment, size_t size);

void *rt_tlsf32_malloc(rt_heap_t *heap, size_t size);
void rt_tlsf32_free(rt_heap_t *heap, void *ptr);
void *rt_tlsf32_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_tlsf32_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_tlsf32_memalign(rt_heap_t *heap, size_t alignment, size_t size);

void *rt_seglist_malloc(rt_heap_t *heap, size_t size);
void rt_seglist_free(rt_heap_t *heap, void *ptr);
void *rt_seglist_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_seglist_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_seglist_memalign(rt_heap_t *heap, size_t alignment, size_t size);

void *rt_firstfit_malloc(rt_heap_t *heap, size_t size);
void rt_firstfit_free(rt_heap_t *heap, void *ptr);
void *rt_firstfit_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_firstfit_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_firstfit_memalign(rt_heap_t *heap, size_t alignment, size_t size);

void *rt_bestfit_malloc(rt_heap_t *heap, size_t size);
void rt_bestfit_free(rt_heap_t *heap, void *ptr);
void *rt_bestfit_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_bestfit_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_bestfit_memalign(rt_heap_t *heap, size_t alignment, size_t size);

void *rt_halffit_malloc(rt_heap_t *heap, size_t size);
void rt_halffit_free(rt_heap_t *heap, void *ptr);
void *rt_halffit_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_halffit_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_halffit_memalign(rt_heap_t *heap, size_t alignment, size_t size);

void *rt_tlsfq_malloc(rt_heap_t *heap, size_t size);
void rt_tlsfq_free(rt_heap_t *heap, void *ptr);
void *rt_tlsfq_realloc(rt_heap_t *heap, void *ptr, size_t size);
void *rt_tlsfq_calloc(rt_heap_t *heap, size_t count, size_t size);
void *rt_tlsfq_memalign(rt_heap_t *heap, size_t alignment, size_t size);

/* --- Inspection and configuration. --------------------------------------------------------- */

/* Fills *stats. O(1) for the counters; largest_free and free_blocks walk the blocks:
 * O(blocks). Runs under the lock. A heap with quick lists gives its cached blocks back first
 * (rt_heap_flush). */
void rt_heap_stats(rt_heap_t *heap, rt_stats_t *stats);

/* Probes of the last malloc-family call: free blocks the index inspected (list walks) or
 * bitmap look-ups (TLSF: 1 for a direct hit, 2 when it climbs to a higher octave). */
unsigned rt_heap_last_probes(const rt_heap_t *heap);

/* Full integrity check: every header and boundary tag consistent, no two adjacent free blocks,
 * the sizes add up to each pool, every free block indexed exactly once in the list its size
 * maps to, the index's own links and bitmaps consistent, the counters right (fenced blocks
 * counted apart). Returns true iff all hold; on a failure reports RT_ERR_CORRUPTED, fences the
 * damage off (containment, above: a later check passes) and returns false. O(blocks) (plus the
 * containment walk after a failure). */
bool rt_heap_check(rt_heap_t *heap);

/* The periodic self-test's check, in O(1) of the heap's contents: the counters against the
 * pools' capacity, every pool's guard bytes and sentinel and first header, the index's bitmaps
 * against its list heads, and each list's first block (in a pool, aligned, its tag verified, free,
 * its footer agreeing). Work bounded by the index's table (RT_HEAP_MAX_BLOCK_LOG2 x the slots per
 * octave lists for TLSF) and RT_HEAP_MAX_POOLS, whatever the number of blocks. What it does not
 * see: damage to blocks that are no list's first (rt_heap_check sees those) and rt_tlsfq's quick
 * lists. A failure is reported and contained as rt_heap_check's. */
bool rt_heap_check_fast(rt_heap_t *heap);

/* Calls fn for every block of every pool in address order until fn returns false. The heap
 * must not be modified from fn. O(blocks). Runs under the lock. A heap with quick lists gives
 * its cached blocks back first (rt_heap_flush). */
void rt_heap_walk(rt_heap_t *heap, rt_walk_fn fn, void *context);

/* Installs the error handler (NULL: count only). */
void rt_heap_set_handler(rt_heap_t *heap, rt_error_handler_t handler, void *context);

/* Installs lock hooks (both NULL: no locking). A lock without its unlock, or the reverse, is
 * refused (RT_ERR_BAD_HOOKS; the hooks stay as they were). Not itself locked: call before
 * sharing the heap. */
void rt_heap_set_lock(rt_heap_t *heap, rt_lock_fn lock, rt_unlock_fn unlock, void *context);

/* Quick lists (rt_tlsfq; see RT_HEAP_QUICK_MAX_REQUEST above). rt_heap_set_quick_limit sets how
 * many blocks may wait on them (at most RT_HEAP_QUICK_MAX_LIMIT; 0 turns them off), giving back
 * the blocks above the new limit, and returns the limit now in force (0 for a heap without quick
 * lists, which it leaves unchanged). rt_heap_flush gives every cached block back to the index,
 * merging each with its free neighbours: O(cached blocks) frees. Both run under the lock. */
unsigned rt_heap_set_quick_limit(rt_heap_t *heap, unsigned blocks);
/* rt_heap_set_quick_share: a free caches its block only while the cached bytes, it included,
 * stay within (bytes in use) >> log2 (default
 * RT_HEAP_QUICK_SHARE_LOG2: 1/64 of the live set, so the lists cost the fit at most about that
 * much); 0 lifts the bound in bytes (only the limit in blocks holds). Gives every cached block
 * back when the lists hold more than the new bound. Returns the previous setting (0 for a heap
 * without quick lists, which it leaves unchanged). Under the lock. */
unsigned rt_heap_set_quick_share(rt_heap_t *heap, unsigned log2);
void rt_heap_flush(rt_heap_t *heap);

rt_index_t rt_heap_index(const rt_heap_t *heap);
const char *rt_heap_index_name(const rt_heap_t *heap);
const char *rt_index_name(rt_index_t index);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_HEAP_H */
