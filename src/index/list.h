/*
 * list.h -- the doubly linked free list every index is built from: LIFO push, O(1) unlink.
 * Links live in the free block (rt_blk.next / .prev); a NULL prev marks the head.
 */
#ifndef RT_INDEX_LIST_H
#define RT_INDEX_LIST_H

#include "heap/block.h"

static inline void list_push(rt_blk **head, rt_blk *b)
{
    rt_blk *first = *head;
    b->next = first;
    b->prev = NULL;
    if (first != NULL) {
        first->prev = b;
    }
    *head = b;
}

/* Unlinks b from the list headed by *head; returns true iff the list is now empty. */
static inline bool list_unlink(rt_blk **head, rt_blk *b)
{
    rt_blk *next = b->next;
    rt_blk *prev = b->prev;
    if (next != NULL) {
        next->prev = prev;
    }
    if (prev != NULL) {
        prev->next = next;
        return false;
    }
    *head = next;
    return next == NULL;
}

/* Visits a list for the integrity check: every block plausible (visit) and back links
 * symmetric; `fits(b)` says whether b belongs on this list. */
static inline bool list_check(rt_blk *head, rt_idx_visit_fn visit, void *context,
                              bool (*fits)(const void *state, size_t size), const void *state)
{
    rt_blk *prev = NULL;
    for (rt_blk *b = head; b != NULL; prev = b, b = b->next) {
        if (!visit(context, b) || b->prev != prev || !fits(state, blk_size(b))) {
            return false;
        }
    }
    return true;
}

#endif /* RT_INDEX_LIST_H */
