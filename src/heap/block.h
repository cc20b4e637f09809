/*
 * block.h -- the block verbs of the boundary-tag heap. No other file touches a header bit.
 *
 * W = sizeof(size_t), A = RT_HEAP_ALIGN. A block starts at its header word; its payload starts
 * one word later and is A-aligned, so every header address is congruent to -W modulo A and every
 * block size is a multiple of A.
 *
 *   used block:  [size|flags][payload ..................................]
 *   free block:  [size|FREE ][next][pprev] ........................ [size]
 *                                                                    ^ footer = last word
 *
 * The footer of a free block is the word just before the next block's header: the next block
 * reads its physical predecessor's size there when its PREV_FREE flag is set. A used block's last
 * word is payload, so a used block costs exactly one word. Invariants (checked by
 * rt_heap_check): a free block's predecessor is used (no two adjacent free blocks), so a free
 * block never carries PREV_FREE; each pool ends with a sentinel header of size 0 that is "used".
 *
 * Flags live in the low bits of the size (sizes are multiples of A >= 8):
 *   bit 0 FREE       this block is free
 *   bit 1 PREV_FREE  the physical predecessor is free (its footer is valid)
 *   bit 2 MARK       set only transiently by the integrity check
 * A header that coalescing swallowed is overwritten with STALE (FREE, size 0), so a later free
 * of that pointer is recognised as a double free rather than trusted.
 */
#ifndef RT_HEAP_BLOCK_H
#define RT_HEAP_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtalloc/heap.h"

typedef struct rt_blk {
    size_t head;           /* size | flags */
    struct rt_blk *next;   /* free blocks only: index links. next: the next block of the list; */
    struct rt_blk **pprev; /* pprev: the slot that points to this block (a list head, or the
                              previous block's next), so unlinking needs no size mapping */
} rt_blk;

#define BLK_W RT_HEAP_WORD
#define BLK_A ((size_t)RT_HEAP_ALIGN)
#define BLK_MIN RT_HEAP_MIN_BLOCK
#define BLK_FREE ((size_t)1)
#define BLK_PREV_FREE ((size_t)2)
#define BLK_MARK ((size_t)4)
#define BLK_FLAGS ((size_t)7)
#define BLK_STALE BLK_FREE

_Static_assert(sizeof(size_t) == sizeof(void *), "a header word must hold a pointer");
_Static_assert((RT_HEAP_ALIGN & (RT_HEAP_ALIGN - 1)) == 0, "RT_HEAP_ALIGN must be a power of two");
_Static_assert(RT_HEAP_ALIGN >= 8 && RT_HEAP_ALIGN >= sizeof(size_t), "RT_HEAP_ALIGN too small");
_Static_assert(RT_HEAP_MIN_BLOCK >= 4 * sizeof(size_t), "free block must hold head, links, footer");
_Static_assert(RT_HEAP_MAX_BLOCK_LOG2 >= 12 && RT_HEAP_MAX_BLOCK_LOG2 <= 8 * sizeof(size_t) - 1,
               "RT_HEAP_MAX_BLOCK_LOG2 out of range");

/* The hot-path helpers are inlined whatever the compiler's size heuristics say when optimising
 * for speed; at -Os (firmware) the compiler chooses, and code size wins. */
#if defined(__OPTIMIZE_SIZE__)
#define RT_HOT static inline
#else
#define RT_HOT static inline __attribute__((always_inline))
#endif

static inline rt_blk *blk_at(void *address) { return (rt_blk *)address; }
static inline rt_blk *blk_offset(rt_blk *b, size_t bytes) { return blk_at((char *)b + bytes); }
static inline size_t blk_size(const rt_blk *b) { return b->head & ~BLK_FLAGS; }
static inline bool blk_is_free(const rt_blk *b) { return (b->head & BLK_FREE) != 0; }
static inline bool blk_prev_is_free(const rt_blk *b) { return (b->head & BLK_PREV_FREE) != 0; }
static inline rt_blk *blk_next(rt_blk *b) { return blk_offset(b, blk_size(b)); }
static inline void *blk_payload(rt_blk *b) { return (char *)b + BLK_W; }
static inline rt_blk *blk_from_payload(void *p) { return blk_at((char *)p - BLK_W); }

/* The footer of the physical predecessor: valid only when blk_prev_is_free(b). */
static inline size_t blk_prev_size(const rt_blk *b) { return ((const size_t *)(const void *)b)[-1]; }
static inline rt_blk *blk_prev(rt_blk *b) { return blk_at((char *)b - blk_prev_size(b)); }

static inline void blk_set_footer(rt_blk *b, size_t size)
{
    ((size_t *)(void *)((char *)b + size))[-1] = size;
}

/* Turns [b, b + size) into one free block: header, footer, and the successor's PREV_FREE.
 * The predecessor must be used (the caller has merged it otherwise). */
static inline void blk_make_free(rt_blk *b, size_t size)
{
    blk_offset(b, size)->head |= BLK_PREV_FREE;
    blk_set_footer(b, size);
    b->head = size | BLK_FREE; /* last, so the index's read of the size is forwarded */
}

/* Marks a header swallowed by a merge, so that a second free of it is caught. */
static inline void blk_make_stale(rt_blk *b) { b->head = BLK_STALE; }

/* The header a free block must have exactly (no PREV_FREE, no MARK). */
static inline bool blk_is_free_header(const rt_blk *b, size_t size) { return b->head == (size | BLK_FREE); }

static inline size_t rt_align_up(size_t x, size_t a) { return (x + a - 1u) & ~(a - 1u); }
static inline uintptr_t rt_addr_align_up(uintptr_t x, uintptr_t a) { return (x + a - 1u) & ~(a - 1u); }

/* floor(log2(x)) for x > 0. */
static inline unsigned rt_log2(size_t x) { return (unsigned)(8u * sizeof(size_t) - 1u) - RT_CLZ(x); }

/* 1 << n for n < bit width; 0 otherwise (no undefined shift). */
static inline size_t rt_bit(unsigned n) { return n < 8u * sizeof(size_t) ? (size_t)1 << n : 0u; }
/* All bits at positions >= n. */
static inline size_t rt_bits_from(unsigned n) { return n < 8u * sizeof(size_t) ? ~(size_t)0 << n : 0u; }

/* The index contract's visitor, used by the integrity check: returns false if b is not a
 * plausible free block of the heap (the index then stops and reports failure). */
typedef bool (*rt_idx_visit_fn)(void *context, rt_blk *b);

#endif /* RT_HEAP_BLOCK_H */
