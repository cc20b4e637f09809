/* SPDX-License-Identifier: MIT */
/*
 * list.h -- the doubly linked free list every index is built from: LIFO push, O(1) unlink.
 *
 * Links live in the free block: next, and pprev = the address of the slot that points to the
 * block (the list head, or the previous block's next field). Unlinking is then the same two
 * stores for a head and for an inner block, and needs neither the list's identity nor a size
 * mapping; an index learns that a list became empty when the slot list_unlink returns lies in
 * its own array of heads (list_head_index).
 */
#ifndef RT_INDEX_LIST_H
#define RT_INDEX_LIST_H

#include "block/block.h"

/* The index contract's find returns the slot that holds the block it found (a list head, or the
 * previous block's next), NULL when none fits, or IDX_CORRUPT when a walking index met a block
 * of its list that fails idx_member. */
#define IDX_CORRUPT ((rt_blk **)(uintptr_t)BLK_A)

/* Count hook (tests only): RT_IDX_COUNT(event) is called where an index reads its lists -- each
 * list head and each block a find reads (IDX_EV_HEAD, IDX_EV_BLOCK), each bitmap word it
 * searches (IDX_EV_MAP), each find (IDX_EV_FIND) -- and at each insert and remove (list_push,
 * list_unlink: IDX_EV_INSERT, IDX_EV_REMOVE). Empty by default; a test rebuilds the heaps with
 * RT_CONFIG_HEADER defining it (tests/common/idx_count_config.h), so that its bounds are checked on
 * counts taken where the reads are, not on a figure the code under test reports. */
#ifndef RT_IDX_COUNT
#define RT_IDX_COUNT(event) ((void)0)
#endif
#define IDX_EV_FIND 0
#define IDX_EV_HEAD 1
#define IDX_EV_BLOCK 2
#define IDX_EV_MAP 3
#define IDX_EV_INSERT 4
#define IDX_EV_REMOVE 5

/* What a walking index asks of the allocator that owns the blocks before it reads a block's size
 * or follows its next: true iff b, reached through `slot` (a head, or the previous block's next),
 * lies in the owner's memory and is a tagged free block whose pprev is slot. The index knows
 * blocks only through block/; the owner (the heap's facade, heap/facade.h) defines this in
 * the same translation unit, so the call inlines as if it were written here. */
RT_HOT bool idx_member(const rt_heap_t *owner, const rt_blk *b, rt_blk *const *slot);

/* The key of the owner's header tags (block.h), for an index that reads a block's size before
 * the facade has verified it (TLSF's good fit). Defined beside idx_member. */
RT_HOT size_t idx_key(const rt_heap_t *owner);

/* Pushes b; returns the list's former first block (NULL: the list was empty). The stores are in
 * this order so that the compiler keeps them four plain stores (the head's store may alias
 * b->next, which keeps it from pairing the two link stores into a vector store). */
static inline rt_blk *list_push(rt_blk **head, rt_blk *b)
{
    RT_IDX_COUNT(IDX_EV_INSERT);
    RT_INVARIANT(b != NULL && blk_placed_ok(b), "list: pushing a block off the block grid");
    rt_blk *first = *head;
    b->pprev = head;
    *head = b;
    b->next = first;
    if (first != NULL) {
        first->pprev = &b->next;
    }
    RT_INVARIANT(*head == b && b->pprev == head && (first == NULL || first->pprev == &b->next),
                 "list: a list's first block must be its head's, its pprev the head (no NULL back link)");
    return first;
}

/* Unlinks b. Returns the slot that pointed to b when b was the last block of its list (that slot
 * now holds NULL: a list head if b was alone, else the previous block's next), otherwise NULL. */
static inline rt_blk **list_unlink(rt_blk *b)
{
    RT_IDX_COUNT(IDX_EV_REMOVE);
    rt_blk *next = b->next;
    rt_blk **pprev = b->pprev;
    /* The owner unlinks only a block it proved linked (heap_found_ok, heap_linked: safe
     * unlinking); at RT_HARDENING 0 nothing is proved, and nothing is stated. */
    RT_INVARIANT(RT_HARDENING < 1 || (*pprev == b && (next == NULL || next->pprev == &b->next)),
                 "list: unlinking a block its neighbours do not point at");
    *pprev = next;
    if (next != NULL) {
        next->pprev = pprev;
        return NULL;
    }
    return pprev;
}

/* The position of `slot` in heads[0 .. count), or count if it is not one of them. */
static inline size_t list_head_index(rt_blk *const *heads, size_t count, rt_blk *const *slot)
{
    size_t i = (size_t)((uintptr_t)slot - (uintptr_t)heads) / sizeof(rt_blk *);
    return i < count ? i : count;
}

/* A walk met a block that fails idx_member through `slot` (a list head, or the next of the
 * checked block before it, whose own slot is `before`; NULL when slot is the head). Cuts the list
 * so that neither that block nor the one whose link led to it (the link may be the damage) is
 * followed or handed out again: the slot before both is cleared (only checked blocks' fields and
 * the head are written). Returns the slot cleared. The blocks cut off stay marked free; their
 * physical neighbours' frees then refuse to merge with them (membership fails): memory lost to
 * the damage, never corruption. */
static inline rt_blk **list_quarantine(rt_blk **slot, rt_blk **before)
{
    rt_blk **cut = before != NULL ? before : slot;
    *cut = NULL;
    return cut;
}

/* Visits a list for the integrity check: every block plausible (visit), back links symmetric,
 * and `fits(state, size)` true for each block (it belongs on this list); with head_only, the
 * first block alone. */
static inline bool list_check(rt_blk **head, rt_idx_visit_fn visit, void *context,
                              bool (*fits)(const void *state, size_t size), const void *state, bool head_only)
{
    rt_blk **slot = head;
    for (rt_blk *b = *head; b != NULL; slot = &b->next, b = b->next) {
        if (!visit(context, b) || b->pprev != slot || !fits(state, blk_size(b))) {
            return false;
        }
        if (head_only) { /* the list's first block alone (rt_heap_check_fast) */
            break;
        }
    }
    return true;
}

#endif /* RT_INDEX_LIST_H */
