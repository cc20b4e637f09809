/*
 * fma_internal.h -- the FMA / BSD 4.4 region's layout (rtalloc/fma.h), shared by fma.c and the
 * white-box test tests/fma_unit.c. Not a public header: nothing here is stable.
 */
#ifndef RT_FMA_INTERNAL_H
#define RT_FMA_INTERNAL_H

#include "core/hooks.h"
#include "rtalloc/fma.h"

#define FMA_MIN_LOG2 4u                 /* 16-byte blocks */
#define FMA_HEADS 13u                   /* classes of 64 KiB pages (12) + BSD's whole-page bucket */
#define FMA_NIL 0x0FFFFFFFu             /* "-1" of the anchor list, in the 28-bit address part */
#define FMA_TAG_MULTI 13u               /* first page of a multi-page block; address part: pages */
#define FMA_TAG_CONT 14u                /* other page of it; address part: distance to the first */
#define FMA_TAG_FREE 15u                /* free page; address part: next page of the anchor list */
#define FMA_TAG_MASK 0xFu
#define FMA_CTRL_ALIGN 16u              /* the control block: its offsets of blocks are x16 */
#define FMA_SPAN_MAX ((uintptr_t)0xFFFFFFFFu) /* bytes from the control block to the region end */

/* A free block of a cut page. FMA's entry block uses every field; another free block of an FMA
 * page only `chain`; a free block of a BSD page only `chain` (its freelist link). Offsets from
 * the control block, 0 = none. */
typedef struct fma_block {
    uint16_t count;  /* entry: free blocks of the page on its chain, itself and virgins included */
    uint16_t virgin; /* entry: blocks n-1-virgin .. n-2 have never been handed out since the cut */
    uint32_t chain;  /* next free block of the page (FMA) / of the size (BSD) */
    uint32_t prev;   /* entry: neighbours on the size's list of entry blocks */
    uint32_t next;
} fma_block_t;

struct rt_fma {
    uint32_t page_log2;
    uint32_t flags;      /* RT_FMA_BSD44 or 0 */
    uint32_t classes;    /* block classes 16 .. page/2: page_log2 - 4; also the whole-page index */
    uint32_t words;      /* W: size_t words of the allocated-block map per page */
    uint32_t pages;      /* P */
    uint32_t table_off;  /* offsets from the control block */
    uint32_t freemap_off;
    uint32_t blockmap_off;
    uint32_t pages_off;
    uint32_t anchor;     /* first page of the free-page list, FMA_NIL when empty */
    uint32_t lastused;   /* pages [lastused, P) are free and unlisted */
    uint32_t touched;    /* high water of lastused */
    uint32_t used_pages;
    uint32_t peak_pages;
    uint32_t free_listed;
    uint32_t freelist[FMA_HEADS]; /* FMA: head entry block per class; BSD: head free block */
    unsigned last_probes;
    size_t used_bytes;
    size_t peak_used;
    size_t used_blocks;
    size_t free_small;   /* free blocks of cut pages (+ BSD's free whole pages) */
    uint64_t mallocs, frees, reallocs, reallocs_in_place;
    rt_hooks_t hooks;
};

#endif /* RT_FMA_INTERNAL_H */
