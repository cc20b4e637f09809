/* SPDX-License-Identifier: MIT */
/*
 * fma_internal.h -- the FMA / BSD 4.4 region's layout (rtalloc/fma.h), shared by fma.c and the
 * white-box test tests/unit/fma_unit.c. Not a public header: nothing here is stable.
 */
#ifndef RT_FMA_INTERNAL_H
#define RT_FMA_INTERNAL_H

#include "base/hooks.h"
#include "rtalloc/fma.h"

#define FMA_MIN_LOG2 4u     /* 16-byte blocks */
#define FMA_HEADS 13u       /* classes of 64 KiB pages (12) + BSD's whole-page bucket */
#define FMA_NIL 0x0FFFFFFFu /* "-1" of the anchor list, in the 28-bit address part */
#define FMA_TAG_MULTI 13u   /* first page of a multi-page block; address part: pages */
#define FMA_TAG_CONT 14u    /* other page of it; address part: distance to the first */
#define FMA_TAG_FREE 15u    /* free page; address part: next page of the anchor list */
#define FMA_TAG_MASK 0xFu
#define FMA_CTRL_ALIGN 16u                    /* the control block: its offsets of blocks are x16 */
#define FMA_SPAN_MAX ((uintptr_t)0xFFFFFFFFu) /* bytes from the control block to the region end */

/* Step hook (tests only): called before every store the core makes to region metadata, between
 * an undo record and the count that makes it valid, and before every commit -- i.e. at every
 * point where the death of the calling process leaves a different state. Empty by default; a
 * test rebuilds the core with RT_CONFIG_HEADER defining it (tests/common/fma_step_config.h). */
#ifndef RT_FMA_STEP
#define RT_FMA_STEP(f) ((void)(f))
#endif

/* The undo journal of an instance created with RT_FMA_JOURNAL (process-shared regions): before a
 * store to metadata the core appends (offset, bytes, old value) and counts it; a step ends with
 * the one store `count = 0` (commit). Recovery (rt_fma_recover) restores the counted records in
 * reverse, which is idempotent, so a recoverer may die too. Operations on a run of pages (whose
 * stores grow with the run) are made of steps that each leave the region consistent, under an
 * intent record that recovery completes: a run being taken is given back (rolled back), a run
 * being freed is freed to its end (rolled forward). FMA_JOURNAL_CAP bounds the records of one
 * step (the largest step is counted in fma.c, at fm_log, and measured by tests/stress/fma_kill.c). */
#define FMA_JOURNAL_CAP 40u
#define FMA_INTENT_NONE 0u
#define FMA_INTENT_TAKE 1u /* a run of `pages` pages from `first` is being taken: roll back */
#define FMA_INTENT_DROP 2u /* the run at `first` is being freed: roll forward */

typedef struct fma_undo {
    uint32_t off; /* from the control block */
    uint32_t len; /* 2, 4 or 8 bytes */
    uint64_t old;
} fma_undo_t;

typedef struct fma_journal {
    uint32_t count;     /* valid undo records of the step in progress; 0: committed */
    uint32_t intent;    /* FMA_INTENT_* */
    uint32_t first;     /* the intent's first page */
    uint32_t pages;     /* the intent's pages (TAKE) */
    uint32_t high;      /* most records a step has used (for the tests) */
    uint32_t recovered; /* steps rolled back by rt_fma_recover */
    uint32_t pad[2];
    fma_undo_t undo[FMA_JOURNAL_CAP];
} fma_journal_t;

/* A free block of a cut page. FMA's entry block uses every field; another free block of an FMA
 * page only `chain`; a free block of a BSD page only `chain` (its freelist link). Offsets from
 * the control block, 0 = none. */
typedef struct fma_block {
    union {
        struct {
            uint16_t count;  /* entry: free blocks of the page on its chain, itself and virgins included */
            uint16_t virgin; /* entry: blocks n-1-virgin .. n-2 have never been handed out since the cut */
        };
        uint32_t cv; /* both, stored at once (one undo record) */
    };
    uint32_t chain; /* next free block of the page (FMA) / of the size (BSD) */
    uint32_t prev;  /* entry: neighbours on the size's list of entry blocks; other free blocks
                     * (RT_HARDENING >= 1): the check word of `chain` (fm_link_check) */
    uint32_t next;
} fma_block_t;

/* RT_HARDENING >= 1: an entry block is sealed. count and virgin are below 4096 (pages of at most
 * 64 KiB), so the top 4 bits of each hold half of an 8-bit check of the whole block (fma.c,
 * fm_seal): any change of one byte of an entry block is detected. */
#define FMA_CV_MASK (RT_HARDENING >= 1 ? 0x0FFFu : 0xFFFFu)

struct rt_fma {
    uint32_t page_log2;
    uint32_t flags;     /* RT_FMA_BSD44, RT_FMA_ZEROED */
    uint32_t classes;   /* block classes 16 .. page/2: page_log2 - 4; also the whole-page index */
    uint32_t words;     /* W: size_t words of the allocated-block map per page */
    uint32_t pages;     /* P */
    uint32_t table_off; /* offsets from the control block */
    uint32_t back_off;  /* the free pages' back links, one word per page */
    uint32_t freemap_off;
    uint32_t blockmap_off;
    uint32_t pages_off;
    uint32_t journal_off; /* 0: no journal (private instances) */
    uint32_t pending;     /* an error found under the lock, reported after it (rt_error_kind_t) */
    uint32_t anchor;      /* first page of the free-page list, FMA_NIL when empty */
    uint32_t lastused;    /* pages [lastused, P) are free and unlisted */
    uint32_t touched;     /* high water of lastused */
    uint32_t used_pages;
    uint32_t peak_pages;
    uint32_t free_listed;
    uint32_t freelist[FMA_HEADS]; /* FMA: head entry block per class; BSD: head free block */
    unsigned last_probes;
    size_t used_bytes;
    size_t peak_used;
    size_t used_blocks;
    size_t free_small; /* free blocks of cut pages (+ BSD's free whole pages) */
    uint64_t mallocs, frees, reallocs, reallocs_in_place;
    rt_hooks_t hooks;
};

#endif /* RT_FMA_INTERNAL_H */
