/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/fma.h -- the Fast Memory Allocator, a power-of-two page allocator (Thomas, "Fast Memory
 * Allocation", Dr. Dobb's Journal 1998; doc/allocators.md, "FMA"), and its comparison point, the
 * BSD 4.4 (McKusick-Karels) allocator, over one caller-supplied region.
 *
 * Size classes. A request of n <= page/2 bytes takes a block of the smallest power of two
 * 2^k >= max(n, 16): class index k - 4 (0 .. page_log2 - 5; 0..7 for 4 KiB pages). A request of
 * page/2 < n <= page takes a whole page (size index page_log2 - 4, i.e. 8 for 4 KiB pages). A
 * larger request takes ceil(n / page) contiguous pages (beyond the article, below).
 *
 * Layout of the region (everything is at the start of the caller's buffer; P = pages):
 *
 *   [pad < 16][control: freelist heads, anchor, lastused, counters][page table: P x 32 bits]
 *   [free-page map: P bits][allocated-block map: P x max(1, page/16/w) words][pad < page][P pages]
 *
 * (w = bits of a size_t.) The pages start at the first page-aligned address after the metadata.
 *
 * The page-table word of a page (one uint32_t per page, as in the article):
 *
 *   bits 31..4  the entry block's offset >> 4 (0: the page has no entry block)     for a cut page,
 *               the page count                                  for the first page of a multi-page block,
 *               the distance to that first page                 for its other pages,
 *               the next page of the anchor list (0x0FFFFFFF: none, the article's -1) for a free page
 *   bits  3..0  the size index: 0 .. page_log2 - 5 = block class; page_log2 - 4 = whole page;
 *               13 = first page of a multi-page block, 14 = its other pages, 15 = free page.
 *
 * Addressing (32- and 64-bit alike): every link stored in the region -- page-table words, freelist
 * heads, entry-block links, block chains -- is a 32-bit OFFSET from the control block (the
 * region's base), not an address. The control block is 16-aligned and lies below every block, so
 * block offsets are multiples of 16 and never 0: 0 means "none", as the article's null pointer.
 * Consequences: the region is position-independent (it may be mapped at any address, in several
 * processes, as long as the hooks below are not shared), and a region spans at most 2^32 - 1
 * bytes from its control block: rt_fma_create_ex CLAMPS a larger buffer to that span (the rest
 * of the buffer is not used). 4 bits of size index bound the page size to 2^16.
 *
 * Entry blocks (FMA): the first free block of a page that has free blocks is its entry block; it
 * holds, in 16 bytes: the count of free blocks of the page (itself included), the number of
 * "virgin" blocks, the chain link (offset of the next free block of the page; freed blocks are
 * appended right after the entry block), and the prev/next offsets of the doubly linked list of
 * entry blocks of its size, whose head is freelist[class]. Beyond the article, cutting a page is
 * O(1): instead of chaining all blocks at once, the blocks never handed out since the page was
 * cut are "virgin", the run of blocks 1 .. n-2 just below the last one; alloc takes the chain
 * first, then the lowest virgin block -- the same order as the article's full chain (the block
 * after the entry block), so the article's figures hold exactly: the first 32-byte request of a
 * 4 KiB page leaves count 127 in an entry block at the page start and returns the last block.
 *
 * Free pages: the `anchor` list is threaded through the page-table words of the free pages below
 * `lastused` (the page index one past the highest page handed out since the last reset). Beyond
 * the article, each free page on it also has a back link, kept in a word per page beside the page
 * table (never in the page itself), so a page can be taken off the list in O(1) (for multi-page
 * requests). The allocator writes nothing into a free page or a block of pages it hands out: a
 * page never handed out keeps the bytes the buffer had (calloc relies on it, RT_FMA_ZEROED). Releasing the page just below
 * `lastused` lowers `lastused` by one page (as the article) instead of listing it; when no page
 * is in use the region is reset (anchor empty, lastused 0), in O(1).
 *
 * Multi-page requests (the article suggests bitmaps): a free-page map of one bit per page is
 * searched first fit for a run of free pages; pages of the run below lastused are unlinked from
 * the anchor list (O(1) each), lastused is raised past the run. Freed, the pages are released one
 * by one from the top down, exactly as single pages.
 *
 * Bounds (P = pages, w = bits of size_t, n = pages of a multi-page block, W = max(1, page/16/w)):
 *   FMA malloc/calloc/memalign up to a page   O(1): one list head, at most one page from the
 *                                             anchor or lastused, no loop (+ calloc's memset)
 *   FMA free of a block up to a page          O(1): one page-table word, one bit, at most one
 *                                             list unlink and one page release
 *   BSD malloc up to a page                   O(1), but O(page/block) = up to page/16 link writes
 *                                             (256 for 4 KiB pages) when it cuts a fresh page,
 *                                             faithful to 4.4BSD, which links the whole page
 *   BSD free up to a page                     O(1): one push
 *   malloc of n >= 2 pages (both)             O(P/w + R + n): a word-wise scan of the free-page
 *                                             map that steps over R runs of free pages too short
 *                                             (R <= P/2), then n unlinks
 *   free of n >= 2 pages (both)               O(n)
 *   memalign with alignment > page            as n pages, the scan stepping over aligned starts
 *   realloc                                   O(1) in place when the new size fits the block
 *                                             (blocks never shrink); else malloc + copy + free
 *   usable_size, max_request, last_probes     O(1)
 *   stats                                     O(P/w + R) (largest_free scans the free-page map)
 *   create                                    O(P/w + P) to clear the maps and page table
 *   check, walk                               O(P * W + blocks)
 *
 * Overhead: 4 bytes of page table per page (the article's 0.1 % at 4 KiB pages) + 1 bit per page
 * + W words per page for the allocated-block map (page/128 bytes, 0.8 %, for pages of 512 bytes
 * and more: 32 bytes per 4 KiB page) + the control block + < page of alignment. Internal
 * fragmentation: up to 50 % per block (power-of-two rounding), up to a page - 1 byte per
 * multi-page block. Blocks carry no header: usable_size is the whole block.
 *
 * Alignment: a block of 2^k <= page bytes is aligned to 2^k; pages and multi-page blocks to the
 * page. memalign(a, n) takes a block of max(class(n), a) up to a page; a > page asks the
 * free-page map for an a-aligned run.
 *
 * BSD 4.4 (flag RT_FMA_BSD44): the same classes and page table (no entry blocks: the address part
 * is 0), one singly linked LIFO freelist per size, the head in freelist[class]. A fresh page is
 * linked whole from its last block down, the last block handed out first (as 4.4BSD's
 * kern_malloc.c, and the article's Figure 3). Freed blocks are never united and a page once cut
 * for a size keeps that size for ever. Whole-page requests are a bucket too (freelist[page_log2 -
 * 4]): a freed page stays a whole-page block. Requests of two pages and more bypass the buckets
 * and are returned to the free pages on free (4.4BSD sent requests above MAXALLOCSAVE = 2 pages
 * straight to kmem_malloc and kmem_free; we bucket only one page so both allocators keep the same
 * size indices). So after free(everything) a BSD region is not as fresh: a request of another
 * size may fail although every byte is free.
 *
 * Bad input (doc/design.md, "Bad input and the handler"; reported through the handler, the call
 * refused, the region unchanged) is detected EXACTLY, in O(1), by the allocated-block map (one bit
 * per 16 bytes of each cut page)
 * and the page table: a pointer outside the pages is RT_ERR_FOREIGN_POINTER; one not on a block
 * boundary of its page's size, or inside a multi-page block, RT_ERR_BAD_POINTER; a free block of
 * a cut page RT_ERR_DOUBLE_FREE. A pointer into a free page is refused exactly too; it is
 * classified RT_ERR_DOUBLE_FREE when 16-aligned (it may have been a block there) and
 * RT_ERR_BAD_POINTER otherwise -- the classification, not the detection, is a guess.
 * calloc overflow: RT_ERR_OVERFLOW; memalign's alignment zero or not a power of two:
 * RT_ERR_BAD_ALIGNMENT; a request above max_request: RT_ERR_TOO_LARGE. Out of memory returns NULL
 * without a report.
 *
 * Overflows into the allocator's in-band metadata (doc/design.md, "Hardening model";
 * RT_HARDENING >= 1, the default): the links an FMA entry block or a BSD free block keeps (count,
 * virgin, chain, prev, next) sit next to live blocks. Every such value is checked against the
 * out-of-band
 * page table, allocated-block map and list heads before it is followed, written through or acted
 * on (fma.c, "validation of the links"): a link must name a free block of the right class (and
 * page), an unlinked entry's neighbours must link back to it, a page is united only when the map
 * says all its blocks are free. A failed check refuses the call with RT_ERR_CORRUPTED before any
 * store: never an access outside the region, never a block handed out twice. Cost: a few
 * compares per malloc and free, O(W) map words when a page fills or empties. RT_HARDENING 0: the
 * article's code, which trusts the links.
 *
 * Death of the caller (process-shared regions, rtalloc/hosted/fma_region.h): created with
 * RT_FMA_JOURNAL, the instance logs each store to its metadata in an undo journal after the control block (672
 * bytes) before making it, and commits each operation with one store; rt_fma_recover undoes an
 * interrupted one. Runs of pages are taken and freed one page per committed step. Without the
 * flag, the cost is one predictable branch per store.
 *
 * Thread/ISR safety: none by itself; rt_fma_set_lock installs hooks called around every call (a
 * mutex, or an interrupt mask on a microcontroller). The hooks and the handler are the only
 * pointers to outside the region stored in it: a region shared between processes must leave
 * them unset and lock around the calls itself.
 *
 * Freestanding C11: no libc, no global state.
 */
#ifndef RTALLOC_FMA_H
#define RTALLOC_FMA_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_fma rt_fma_t;

#define RT_FMA_BSD44 1u /* flag: the BSD 4.4 baseline (no uniting, pages never returned) */
#define RT_FMA_JOURNAL \
    2u /* flag: keep an undo journal so that an operation interrupted by the
                             death of its process can be rolled back (rt_fma_recover) */
#define RT_FMA_ZEROED \
    4u /* flag: every byte of the buffer is zero (a fresh mapping): calloc of a
                            page or more clears only the pages handed out before (FMA; the
                            BSD baseline clears every block) */

#define RT_FMA_MIN_BLOCK 16u     /* smallest block, and the alignment of every block */
#define RT_FMA_PAGE_LOG2 12u     /* default page: 4 KiB */
#define RT_FMA_PAGE_LOG2_MIN 5u  /* pages of 32 bytes up to ... */
#define RT_FMA_PAGE_LOG2_MAX 16u /* ... 64 KiB (the size index has 4 bits) */

/* Smallest buffer rt_fma_create accepts at any address (4 KiB pages): the metadata of one page,
 * the worst-case alignment padding, and the page. Constant. */
size_t rt_fma_min_buffer(void);

/* Bytes of the control block, page table and both maps for the pages that a page-aligned buffer
 * of `size` bytes holds with pages of 2^page_log2 (padding to the first page not included).
 * 0 if page_log2 is out of range. O(1). */
size_t rt_fma_control_size(size_t size, unsigned page_log2);

/* FMA with 4 KiB pages: rt_fma_create_ex(mem, size, RT_FMA_PAGE_LOG2, 0). */
rt_fma_t *rt_fma_create(void *mem, size_t size);

/* Creates an FMA (flags 0) or BSD 4.4 (flags RT_FMA_BSD44) region with pages of 2^page_log2
 * bytes over [mem, mem + size) (clamped to 2^32 - 1 bytes from the control block). Returns NULL
 * iff mem is NULL, page_log2 is outside [RT_FMA_PAGE_LOG2_MIN, RT_FMA_PAGE_LOG2_MAX], flags has
 * another bit, or the buffer cannot hold the metadata and one page. O(P/w + P). */
rt_fma_t *rt_fma_create_ex(void *mem, size_t size, unsigned page_log2, unsigned flags);

/* NULL iff size is 0, larger than max_request (reported RT_ERR_TOO_LARGE) or out of memory.
 * Alignment: the block size up to a page (at least 16). Bounds above. */
void *rt_fma_malloc(rt_fma_t *f, size_t size);
/* free(NULL) is a no-op; bad pointers are reported and ignored. */
void rt_fma_free(rt_fma_t *f, void *p);
/* realloc(NULL, n) = malloc(n); realloc(p, 0) frees and returns NULL; in place when n fits the
 * block; else moves (NULL, the block untouched, when out of memory). */
void *rt_fma_realloc(rt_fma_t *f, void *p, size_t size);
void *rt_fma_calloc(rt_fma_t *f, size_t n, size_t size);
/* blocks are aligned to their size up to a page; pages to the page */
void *rt_fma_memalign(rt_fma_t *f, size_t alignment, size_t size);
/* The block's size (no header: all of it is usable); 0 and a report for a bad pointer. */
size_t rt_fma_usable_size(rt_fma_t *f, void *p);
/* All pages: the largest request that can ever succeed on this region. O(1). */
size_t rt_fma_max_request(const rt_fma_t *f);

/* capacity = pages; used_bytes = live blocks (whole blocks); free_blocks counts free blocks of
 * cut pages (and BSD's free whole pages) plus one per free page; largest_free = max(longest run
 * of free pages, largest class with a free block); watermark = highest page end ever used (the
 * high water of lastused) in bytes from the first page. */
void rt_fma_stats(rt_fma_t *f, rt_stats_t *s);
/* Probes of the last malloc: 1 from a list, 2 when a page was taken, 2 + words scanned for a
 * multi-page search. */
unsigned rt_fma_last_probes(const rt_fma_t *f);
/* White-box: page table, chain counts, list links, page accounting, free-page list. Reports
 * RT_ERR_CORRUPTED when false. O(P * W + blocks). */
bool rt_fma_check(rt_fma_t *f);
/* After the death of a process inside a call on this instance (a process-shared region whose
 * lock was found abandoned): rolls the interrupted operation back (or, for the free of a run of
 * pages, forward) from the instance's undo journal (RT_FMA_JOURNAL), then checks the instance.
 * Returns true iff the instance is consistent; false (reported RT_ERR_CORRUPTED) when the journal
 * or the instance is damaged beyond what an interrupted operation leaves: corruption. Every
 * block handed out before the interrupted operation stays handed out and intact; the block the
 * interrupted malloc was taking stays free; the block the interrupted free was giving back is
 * free or (interrupted before its first store) still handed out. Without a journal: rt_fma_check.
 * O(FMA_JOURNAL_CAP + n) for the interrupted operation (n: pages of a run), then check's bound. */
bool rt_fma_recover(rt_fma_t *f);
/* Blocks in address order: each free page one free block, each multi-page block one block,
 * each block of a cut page. Under the lock: fn must not call the allocator. */
void rt_fma_walk(rt_fma_t *f, rt_walk_fn fn, void *ctx);
void rt_fma_set_handler(rt_fma_t *f, rt_error_handler_t h, void *ctx);
/* Not itself locked: call before sharing the region. */
void rt_fma_set_lock(rt_fma_t *f, rt_lock_fn lock, rt_unlock_fn unlock, void *ctx);

/* Page accounting for the benchmark (pages, not bytes). */
typedef struct rt_fma_page_counts { /* (not rt_fma_pages: C++ would see the function hide it) */
    size_t total;                   /* pages of the region */
    size_t used;                    /* pages in use now (cut, whole or part of a multi-page block) */
    size_t touched;                 /* high water of lastused: pages ever handed out */
    size_t peak_used;               /* most pages in use at once */
    size_t free_listed;             /* free pages on the anchor list now */
} rt_fma_pages_t;
/* O(1). */
void rt_fma_pages(const rt_fma_t *f, rt_fma_pages_t *out);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_FMA_H */
