/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/buddy.h -- binary buddy allocator over a caller-supplied buffer (Knuth; Masmano 2006
 * section 2).
 *
 * Blocks are powers of two from 2^RT_BUDDY_MIN_LOG2 bytes up; a block of 2^k bytes is split
 * only into its two buddies and coalesced only with its buddy. Every block of 2^k bytes is
 * aligned to 2^k in the address space (the arena is laid on a virtual power-of-two grid; the
 * parts of the grid outside the buffer are never free), so any buffer size is used whole as a
 * binary decomposition of blocks, and memalign needs no slack.
 *
 * Metadata: one byte per smallest block (the order of a block and whether it is free, stored
 * at its first unit), out of band at the start of the buffer; and the free lists' two links,
 * in the first two words of each *free* block (a live block carries no metadata). A block's
 * payload is the whole block: malloc(n) takes the smallest 2^k >= max(n, 2^RT_BUDDY_MIN_LOG2).
 * Overhead: 1/2^RT_BUDDY_MIN_LOG2 of the buffer (1/32 by default) plus the control structure
 * (plus a 32-byte guard at RT_HARDENING >= 1); internal fragmentation up to 50% per block
 * (rounding to a power of two).
 *
 * Hardening (RT_HARDENING >= 1, the default): an application's write past the end of its block
 * (or before its start) into a free neighbour's links is detected when the allocator next reads
 * that link, or by rt_buddy_check: every link is checked against the out-of-band byte table
 * (it must name a free block of the list's order) and against its neighbours' back links before
 * it is followed or written through (safe unlinking over circular lists), and every link is
 * sealed to its own address and to a key each create draws anew, so a link copied from another
 * block (even one whose links name this block, which the back links alone cannot tell) or left
 * by an earlier allocator over the same buffer does not verify (src/buddy/buddy.c states the
 * exact guarantees). The damaged block is quarantined (never handed out, merged or linked
 * again); a list whose head is damaged is dropped (its other free blocks stay unlisted until a
 * merge reclaims them); RT_ERR_CORRUPTED is reported with the damaged block's address, and the
 * call is refused: malloc, calloc, memalign and realloc return NULL (realloc's old block as it
 * was), free leaves the block allocated (a retry succeeds: the damaged block is out of the
 * way). The allocator never writes outside its buffer or into a live block, never hands out
 * memory overlapping a live block and never faults, whatever the links hold. Cost: O(1) more
 * per link touched (a few loads and compares, and one multiply per block whose links are read
 * or written), so the bounds below keep their form; measured on x86-64 (exact instructions per
 * call, churn workload): malloc 81.5 at level 0 -> 126.1, free 102.8 -> 152.1. Memory as above,
 * plus one word (the key) in the control structure. RT_HARDENING 2 adds nothing here.
 * RT_HARDENING 0 keeps the original unchecked lists (an overflow into a free block's links can
 * then fault inside malloc or hand out a live block).
 *
 * Bounds (K = log2(largest block / smallest block) <= 8 * sizeof(size_t) - 1 - RT_BUDDY_MIN_LOG2,
 * i.e. 58 on 64-bit and 26 on 32-bit by default):
 *   malloc  one find-first-set over the non-empty-order bitmap, then at most K splits: O(K)
 *   free    O(1) validation (the metadata byte tells exactly whether p is a live block start),
 *           then at most K merges: O(K)
 * Bad input is detected exactly (not heuristically): a pointer outside the arena, not at a block
 * start, or of a free block is reported through the handler and ignored. check() is
 * O(n + free blocks) and reports damaged links, quarantined blocks and unlisted free blocks.
 * Thread/ISR safety: as for rtalloc/heap.h (lock hooks around every call).
 */
#ifndef RTALLOC_BUDDY_H
#define RTALLOC_BUDDY_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_buddy rt_buddy_t;

#define RT_BUDDY_MIN_BLOCK ((size_t)1 << RT_BUDDY_MIN_LOG2)

/* Bytes of the control structure (excluding the per-unit metadata table). Constant. */
size_t rt_buddy_control_size(void);
/* Smallest buffer rt_buddy_create accepts at any address. Constant. */
size_t rt_buddy_min_buffer(void);

/* Creates a buddy allocator in [mem, mem + size). Returns NULL iff mem is NULL or size is below
 * rt_buddy_min_buffer(). O(size / smallest block) to clear the metadata table. RT_HARDENING >= 1:
 * draws the links' key (rtalloc/common.h, rt_set_entropy), never the key the buffer held. */
rt_buddy_t *rt_buddy_create(void *mem, size_t size);

/* As rtalloc/heap.h: NULL iff size is 0, too large (reported RT_ERR_TOO_LARGE) or out of memory.
 * Alignment: the block size, at least RT_BUDDY_MIN_BLOCK. O(K). */
void *rt_buddy_malloc(rt_buddy_t *buddy, size_t size);
void rt_buddy_free(rt_buddy_t *buddy, void *ptr); /* O(K) */
/* realloc, calloc and memalign: edge cases and bad input as rtalloc/heap.h (realloc(NULL, n) =
 * malloc(n); realloc(p, 0) frees p and returns NULL). */
void *rt_buddy_realloc(rt_buddy_t *buddy, void *ptr, size_t size); /* in place if the order
                                                                          does not grow */
void *rt_buddy_calloc(rt_buddy_t *buddy, size_t count, size_t size);
void *rt_buddy_memalign(rt_buddy_t *buddy, size_t alignment, size_t size);
size_t rt_buddy_usable_size(rt_buddy_t *buddy, void *ptr);

/* The largest request that can ever succeed on this instance (its largest block, all free). O(1). */
size_t rt_buddy_max_request(const rt_buddy_t *buddy);

void rt_buddy_stats(rt_buddy_t *buddy, rt_stats_t *stats);
/* Probes of the last malloc: orders the search visited plus splits done (1 = direct hit). */
unsigned rt_buddy_last_probes(const rt_buddy_t *buddy);
bool rt_buddy_check(rt_buddy_t *buddy);
void rt_buddy_walk(rt_buddy_t *buddy, rt_walk_fn fn, void *context);
void rt_buddy_set_handler(rt_buddy_t *buddy, rt_error_handler_t handler, void *context);
void rt_buddy_set_lock(rt_buddy_t *buddy, rt_lock_fn lock, rt_unlock_fn unlock, void *context);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_BUDDY_H */
