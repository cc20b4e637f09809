/* SPDX-License-Identifier: MIT */
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
 *
 * Hardening (RT_HARDENING >= 1): every header word is tagged, and the tag is bound to three
 * things: the word's data (size | flags), the ADDRESS where the word stands, and the heap's key,
 * which each create draws anew (a new "generation", heap_common.c). So a header verifies only
 * where it was written, in the life of the heap that wrote it.
 *
 * The default 64-bit layout (D = RT_HEAP_MAX_BLOCK_LOG2 = 32, BLK_LINEAR_TAG): the word at
 * address a holding data d (< 2^32) is
 *     head = d * K1 + key + a * 2^29   (mod 2^64),   K1 = 1 + M * 2^32, M odd, key = k * 2^32,
 * i.e. low half = d, high half (the tag) = d * M + k + a / 8 (mod 2^32): header addresses are
 * multiples of 8, so a * 2^29 = (a / 8) * 2^32. K1 is odd, so decoding is one multiply:
 * d = (head - key - a * 2^29) * K1^-1, and a word is a header iff that is below 2^32.
 *   - Any change of the data alone changes the tag it must carry (d -> d * M is a bijection mod
 *     2^32); a change of the tag alone is seen at once; a change confined to one byte of the word
 *     passes only if delta * M^-1 were within one of 0 mod 2^32, impossible for a one-byte delta
 *     since M^-1 mod 2^32 = 0x0E8B2F51: every one-byte change is detected, deterministically.
 *   - A COPY: the word written at a' (any header of the heap, of any data d') and copied to
 *     a != a' decodes at a to d' + ((a' - a) / 8) * 2^32 (the K1^-1 factor keeps multiples of
 *     2^32 as they are): its high half is (a' - a) / 8 mod 2^32, nonzero unless a and a' are a
 *     multiple of 32 GiB apart. So a copy of any valid header to any other place of a heap
 *     smaller than 32 GiB is detected, deterministically, whatever the two data are.
 *   - A STALE header (written by an earlier create, key k0, over the same buffer) decodes under
 *     the new key k1 to d + (k0 - k1) * 2^32: detected iff k0 != k1, which create guarantees
 *     against the key the buffer held (and the keys of older lives differ with probability
 *     1 - 2^-31: they are drawn, rtalloc/common.h rt_set_entropy).
 *   - A flag set or cleared is one add of flag * K1 to the word (blk_set_flag): the address term
 *     does not change.
 * Other layouts (32-bit, D = 24 of W = 32 bits; 64-bit with another D): the word is
 *     head = d | (tag << D),   tag = fold_T(d) XOR key XOR (a / A)   (the low T = 8W - D bits)
 * where fold_T XORs the data's T-bit chunks together (linear; every byte of d lands in its own
 * byte of the tag, as T is a multiple of 8 and D <= 4T): every one-byte change of the data or of
 * the tag is detected, deterministically. A copy from a' to a passes iff the two words' tags
 * agree, i.e. iff a / A and a' / A agree in their low T bits: headers (which are A apart) less
 * than 2^T * A bytes apart never do -- 2 KiB on 32-bit (T = 8, A = 8) -- and copies from farther
 * away pass this check when the distance is a multiple of 2 KiB. No single word can do better:
 * 2^D data at P places need 2^D * P distinct words, so P <= 2^T. The successor's header and
 * the free lists' back links (heap_internal.h) must then also agree, which a copy of a block of
 * another size rarely does; RT_HEAP_MAX_BLOCK_LOG2 = 16 gives T = 16 (copies within 512 KiB).
 * The zero word decodes (64-bit) to size 0, which only a pool's sentinel may have.
 *
 * The footer is a plain size: it is trusted only through the header it leads to (the facade
 * reads it only to find a free predecessor, and then requires a tagged FREE header of exactly
 * that size at that place: a header bound to its address, so the footer must be the true
 * distance to a real free block ending here). The free lists' links (next, pprev) are plain
 * pointers, trusted only when they point back (heap_linked: the slot pprev names holds the block,
 * next's pprev names this block's next): a link copied from another block points back to that
 * block, not to this one. The quick lists' links carry a check word bound to their address
 * (heap_tlsfq.c).
 *
 * What no tag of one word sees: a header of an earlier MOMENT of the same block, in the same life,
 * written back to its own place (saved by a read past a block, restored by a later overflow): it
 * is the word that once stood there. The checks of the neighbours usually disagree with it; the
 * containment walk does not trust a free header whose extent holds another block's header
 * (heap_common.c, contain_spans_blocks).
 *
 * The tag is a check against accident (an overflow, a copy, a stale pointer), not a MAC: an
 * application that reads its headers can learn the key; the link checks of the facade still
 * keep such a forger's writes inside the heap. At RT_HARDENING 0 the tag is empty (T = 0 bits
 * used; key and address ignored) and the verbs are the plain ones.
 */
#ifndef RT_BLOCK_BLOCK_H
#define RT_BLOCK_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bits.h"
#include "base/invariant.h"
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

/* --- tagged header words (see the top of this file) ------------------------------------------ */
#if SIZE_MAX > 0xFFFFFFFFu
#define BLK_WORD_BITS 64
#else
#define BLK_WORD_BITS 32
#endif
_Static_assert(BLK_WORD_BITS == 8 * sizeof(size_t), "size_t's width");
#if RT_HARDENING >= 1
#define BLK_DATA_BITS (RT_HEAP_MAX_BLOCK_LOG2)
#define BLK_TAG_BITS (BLK_WORD_BITS - BLK_DATA_BITS)
#define BLK_DATA_MASK ((((size_t)1) << BLK_DATA_BITS) - 1u)
_Static_assert(RT_HEAP_MAX_BLOCK_LOG2 % 8 == 0 && RT_HEAP_MAX_BLOCK_LOG2 >= 16 &&
                   RT_HEAP_MAX_BLOCK_LOG2 <= 8 * sizeof(size_t) - 8 &&
                   RT_HEAP_MAX_BLOCK_LOG2 <= 4 * (8 * sizeof(size_t) - RT_HEAP_MAX_BLOCK_LOG2),
               "RT_HARDENING >= 1: RT_HEAP_MAX_BLOCK_LOG2 must be a multiple of 8 in [16, 24] on 32-bit, "
               "[16, 48] on 64-bit (the header's tag takes the bits above it)");
/* XOR of the T-bit chunks of x < 2^D, in the low T bits (higher bits: don't care). */
static inline size_t blk_fold(size_t x)
{
#if BLK_DATA_BITS > 2u * BLK_TAG_BITS
    x ^= x >> (2 * BLK_TAG_BITS);
#endif
#if BLK_DATA_BITS > BLK_TAG_BITS
    x ^= x >> BLK_TAG_BITS;
#endif
    return x;
}
#if BLK_DATA_BITS == 32 && BLK_WORD_BITS == 64
/* The default 64-bit layout: the affine tag bound to the word's address (top of this file). */
#define BLK_LINEAR_TAG 1
#define BLK_TAG_MUL 0x9E3779B1u
#define BLK_K1 ((size_t)1 + ((size_t)BLK_TAG_MUL << 32))
#define BLK_K1_INV ((size_t)0x61C8864F00000001ull) /* BLK_K1 * BLK_K1_INV = 1 mod 2^64 */
_Static_assert((size_t)(BLK_K1 *BLK_K1_INV) == 1u, "K1's inverse");
/* The key of the word at address `at`: the heap's key plus (at / 8) * 2^32. */
static inline size_t blk_key_at(size_t key, const void *at)
{
    return RT_HEAP_TAG_PLACE ? key + ((size_t)(uintptr_t)at << 29) : ((void)at, key);
}
static inline size_t blk_enc(size_t key, const void *at, size_t data) { return data * BLK_K1 + blk_key_at(key, at); }
/* The data of the header word at `at`, or a value >= 2^32 when the word is not one. */
static inline size_t blk_decode(size_t key, const void *at, size_t head)
{
    return (head - blk_key_at(key, at)) * BLK_K1_INV;
}
static inline bool blk_head_ok(size_t key, const void *at, size_t head)
{
    return (blk_decode(key, at, head) >> 32) == 0u;
}
#else
#define BLK_A_LOG2 ((unsigned)__builtin_ctz((unsigned)RT_HEAP_ALIGN))
/* The key of the word at address `at` (only its low T bits matter): the heap's XOR at / A. */
static inline size_t blk_key_at(size_t key, const void *at)
{
    return RT_HEAP_TAG_PLACE ? key ^ ((uintptr_t)at >> BLK_A_LOG2) : ((void)at, key);
}
/* The header word for `data` (size | flags) at `at`. */
static inline size_t blk_enc(size_t key, const void *at, size_t data)
{
    return data | ((blk_fold(data) ^ blk_key_at(key, at)) << BLK_DATA_BITS);
}
/* True iff `head`, read at `at`, carries the tag of its data there. */
static inline bool blk_head_ok(size_t key, const void *at, size_t head)
{
    return (((head >> BLK_DATA_BITS) ^ blk_fold(head & BLK_DATA_MASK) ^ blk_key_at(key, at)) &
            (~(size_t)0 >> BLK_DATA_BITS)) == 0u;
}
static inline size_t blk_decode(size_t key, const void *at, size_t head)
{
    return blk_head_ok(key, at, head) ? head & BLK_DATA_MASK : ~(size_t)0;
}
#endif
#else
#define BLK_DATA_MASK (~(size_t)0)
static inline size_t blk_key_at(size_t key, const void *at) { return (void)at, key; }
static inline size_t blk_enc(size_t key, const void *at, size_t data) { return (void)key, (void)at, data; }
static inline bool blk_head_ok(size_t key, const void *at, size_t head)
{
    return (void)key, (void)at, (void)head, true;
}
static inline size_t blk_decode(size_t key, const void *at, size_t head) { return (void)key, (void)at, head; }
#endif
#ifndef BLK_LINEAR_TAG
#define BLK_LINEAR_TAG 0
#endif

/* The hot-path helpers are inlined whatever the compiler's size heuristics say when optimising
 * for speed; at -Os (firmware) the compiler chooses, and code size wins. */
#if defined(__OPTIMIZE_SIZE__)
#define RT_HOT static inline
#else
#define RT_HOT static inline __attribute__((always_inline))
#endif

/* The two shape invariants of the top of this file, for RT_INVARIANT: a block's size is a
 * multiple of A and at least the smallest block (which holds head, links and footer), and fits
 * the header's data field; a header stands one word before an A-aligned payload. */
static inline bool blk_size_ok(size_t size)
{
    return size >= BLK_MIN && (size & (BLK_A - 1u)) == 0u && size <= (BLK_DATA_MASK & ~BLK_FLAGS);
}
static inline bool blk_placed_ok(const rt_blk *b) { return (((uintptr_t)b + BLK_W) & (BLK_A - 1u)) == 0u; }

static inline rt_blk *blk_at(void *address) { return (rt_blk *)address; }
static inline rt_blk *blk_offset(rt_blk *b, size_t bytes) { return blk_at((char *)b + bytes); }
/* Size and flags of a header word (its tag stripped). */
static inline size_t blk_data(size_t head) { return head & BLK_DATA_MASK; }
static inline size_t blk_head_size(size_t head) { return head & BLK_DATA_MASK & ~BLK_FLAGS; }
static inline size_t blk_size(const rt_blk *b) { return blk_head_size(b->head); }
static inline bool blk_is_free(const rt_blk *b) { return (b->head & BLK_FREE) != 0; }
static inline bool blk_prev_is_free(const rt_blk *b) { return (b->head & BLK_PREV_FREE) != 0; }
static inline rt_blk *blk_next(rt_blk *b) { return blk_offset(b, blk_size(b)); }
static inline void *blk_payload(rt_blk *b) { return (char *)b + BLK_W; }
static inline rt_blk *blk_from_payload(void *p) { return blk_at((char *)p - BLK_W); }

/* The footer of the physical predecessor: valid only when blk_prev_is_free(b). */
static inline size_t blk_prev_size(const rt_blk *b) { return ((const size_t *)(const void *)b)[-1]; }
static inline rt_blk *blk_prev(rt_blk *b) { return blk_at((char *)b - blk_prev_size(b)); }

/* Only a free block has a footer: its size is a block's. */
static inline void blk_set_footer(rt_blk *b, size_t size)
{
    RT_INVARIANT(blk_size_ok(size), "block: a footer written for a size no free block has");
    ((size_t *)(void *)((char *)b + size))[-1] = size;
}

/* Writes b's header: size | flags, tagged. The data must fit its field (BLK_DATA_MASK): a wider
 * one would run into the tag, and decode as another. */
static inline void blk_set_head(size_t key, rt_blk *b, size_t data)
{
    RT_INVARIANT(data <= BLK_DATA_MASK, "block: header data wider than its field would run into the tag");
    b->head = blk_enc(key, b, data);
}

/* Sets / clears a flag known to be clear / set in b's header. The change is linear in the word,
 * so it keeps a valid header valid and a damaged one damaged (a flag update never launders a
 * header nobody verified, e.g. a free block's successor): with the affine tag one add of flag * K1
 * (the address term does not change); with the folded tag the flag's bit and its image in the tag
 * (fold maps data bit i < T to tag bit i) are toggled together. */
/* These are the only writes to the header of a block that may be live (the successor of a block
 * freed or taken): stored as one relaxed atomic word (a plain store on every target), so that
 * another thread holding the block may read its size meanwhile (rt_heap_live_size). */
static inline void blk_set_flag(size_t key, rt_blk *b, size_t flag)
{
    (void)key;
#if BLK_LINEAR_TAG
    __atomic_store_n(&b->head, b->head + flag * BLK_K1, __ATOMIC_RELAXED);
#elif RT_HARDENING >= 1
    __atomic_store_n(&b->head, b->head ^ (flag | (flag << BLK_DATA_BITS)), __ATOMIC_RELAXED);
#else
    __atomic_store_n(&b->head, b->head | flag, __ATOMIC_RELAXED);
#endif
}
static inline void blk_clear_flag(size_t key, rt_blk *b, size_t flag)
{
    (void)key;
#if BLK_LINEAR_TAG
    __atomic_store_n(&b->head, b->head - flag * BLK_K1, __ATOMIC_RELAXED);
#elif RT_HARDENING >= 1
    __atomic_store_n(&b->head, b->head ^ (flag | (flag << BLK_DATA_BITS)), __ATOMIC_RELAXED);
#else
    __atomic_store_n(&b->head, b->head & ~flag, __ATOMIC_RELAXED);
#endif
}

/* The header a free block of `size` bytes must have exactly (tag, no PREV_FREE, no MARK). */
static inline bool blk_is_free_header(size_t key, const rt_blk *b, size_t size)
{
    return b->head == blk_enc(key, b, size | BLK_FREE);
}

/* Turns [b, b + size) into one free block: header and footer; and, when set_next is true, sets
 * the successor's PREV_FREE (false: the successor's PREV_FREE is set already, because a free
 * block preceded it and was merged into b). The predecessor must be used. */
static inline void blk_make_free(size_t key, rt_blk *b, size_t size, bool set_next)
{
    RT_INVARIANT(blk_size_ok(size), "block: a free block is a multiple of A, at least the smallest block");
    RT_INVARIANT(blk_placed_ok(b), "block: a free block's header off the block grid (payload not A-aligned)");
    if (set_next) {
        blk_set_flag(key, blk_offset(b, size), BLK_PREV_FREE);
    }
    blk_set_footer(b, size);
    blk_set_head(key, b, size | BLK_FREE); /* last, so the index's read of the size is forwarded */
    RT_INVARIANT(blk_is_free_header(key, b, size) && blk_prev_size(blk_offset(b, size)) == size,
                 "block: a block made free must read back as free, its footer its size");
}

/* Marks a header swallowed by a merge, so that a second free of it is caught. */
static inline void blk_make_stale(size_t key, rt_blk *b) { blk_set_head(key, b, BLK_STALE); }

/* The index contract's visitor, used by the integrity check: returns false if b is not a
 * plausible free block of the heap (the index then stops and reports failure). */
typedef bool (*rt_idx_visit_fn)(void *context, rt_blk *b);

#endif /* RT_BLOCK_BLOCK_H */
