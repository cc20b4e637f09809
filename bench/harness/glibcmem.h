/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/glibcmem.h -- glibc's memory over one replay, the part that experiments masmano
 * (F), fma (memory) and trace (footprint) share.
 *
 * The process heap has no watermark of one run, and glibc's statistics count the blocks in its
 * thread cache as in use, so each replay runs in a thread of its own: glibc gives it a non-main
 * arena, a heap of its own mmapped at a multiple of HEAP_MAX_SIZE (64 MiB on 64-bit). Through a
 * view of glibc whose malloc, free, realloc, calloc and memalign keep count (gm_view), it measures:
 *   span       from the lowest chunk the run was given to the highest chunk end (pointer +
 *              malloc_usable_size) in that heap (the arena's header, the thread cache's and the
 *              harness's tables lie below it): the "watermark" of masmano's F and fma's memory;
 *   peak_used  the most bytes in live chunks (usable size + one size word each);
 *   footprint  the peak, over the replay, of the bytes glibc holds from the system --
 *              mallinfo2().arena + hblkhd: arena bytes obtained, free chunks and top included,
 *              plus mmapped chunks -- less their value when the thread started (before its first
 *              allocation), sampled after every call that can grow it (malloc, realloc, calloc,
 *              memalign; a free never grows it). mallinfo2 sums every arena; the other threads
 *              are blocked meanwhile, so the difference is the run's arena and its mmapped
 *              chunks. It is glibc's whole cost only when the run's arena is new (fresh): an
 *              arena reused from an earlier thread keeps what it held from the system before.
 *              gm_replay's `own_process` makes it new: the replay runs in a forked child whose
 *              arenas inherited from rtbench are first taken by idle threads (gm_replay below).
 * The thread frees its live blocks before it exits (its thread cache goes back to the arena), and
 * malloc_trim(0) runs before each run in the calling process.
 */
#ifndef RTBENCH_GLIBCMEM_H
#define RTBENCH_GLIBCMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtalloc/registry.h"
#include "workload.h"

typedef struct gm_result {
    bool ok;            /* measured (glibc, the thread ran) */
    bool fresh;         /* the run's arena was new: footprint is glibc's whole cost */
    size_t failures;    /* allocating calls that returned NULL (ops flagged WL_OP_FAILED not replayed) */
    uint64_t span;      /* lowest chunk to highest chunk end in the run's first heap */
    uint64_t peak_used; /* most bytes in live chunks */
    uint64_t end_used;  /* bytes in live chunks when the replay ended */
    uint64_t footprint; /* peak of mallinfo2 arena + hblkhd over the replay, less its value at the start */
} gm_result_t;

/* Whether glibcmem can measure here (glibc's malloc with mallinfo2). */
bool gm_available(void);

/* The counting view of glibc: a copy of its descriptor (peers.h: bench_glibc) whose malloc, free,
 * realloc, calloc and memalign keep count; create is a stub that marks it as an allocator with a
 * watermark (never called) and stats gives span as the watermark and peak_used. Use it only
 * inside gm_run's body. */
void gm_view(const rt_allocator_t *glibc, rt_allocator_t *view);

/* Runs body(arg) in a thread of its own with the counts reset (the footprint's base read in the
 * thread before the body), after malloc_trim(0); out receives the counts (footprint and fresh only
 * when `footprint`: mallinfo2 walks every bin, so sampling it costs). False when the thread could
 * not start or glibc is not the malloc here. */
bool gm_run(void (*body)(void *arg), void *arg, bool footprint, gm_result_t *out);

/* t replayed (every kind, driver.h's drv_apply; the ops flagged WL_OP_FAILED, NULL when recorded,
 * left out) on the view by gm_run, its live blocks freed at
 * the end; slots (t->slots entries, NULL: allocated here) is left all NULL. own_process: in a
 * forked child (a process of its own; see the top), with the footprint sampled (out->fresh says
 * whether its arena was new); else span and used only. driver.h's drv_stop interrupts the replay (out->ok false). */
bool gm_replay(const rt_allocator_t *glibc, const wl_trace_t *t, void **slots, bool own_process, gm_result_t *out);

#endif /* RTBENCH_GLIBCMEM_H */
