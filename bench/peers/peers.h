/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/peers.h -- allocators the benchmark measures beside the library's own, behind the same
 * descriptor (rtalloc/registry.h):
 *   noop   the calibration row: malloc returns a static non-NULL block and free does nothing.
 *          Replayed through the same driver, it shows the floor of every figure (an indirect
 *          call, a return, the clock and the loop).
 *   glibc  the process's malloc/free (create is NULL; the handle is ignored). Its memory is not
 *          a pre-touched pool: the first touches of fresh pages land inside its timed calls
 *          during the first of the two runs (the per-op minimum of the two mostly removes them).
 *   jemalloc, mimalloc  Debian's libraries, dlopen()ed by bench_peers_init (RTLD_LOCAL; see the
 *          top of peers.c for how, the check that their pointers are theirs, and their memory
 *          figures). Same descriptor, same driver, same process.
 * The wrappers have the same shape as the library's descriptors (a jump to the real function),
 * so every allocator pays the same indirect call.
 */
#ifndef RTBENCH_PEERS_H
#define RTBENCH_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rtalloc/registry.h"

extern const rt_allocator_t bench_noop, bench_glibc, bench_jemalloc, bench_mimalloc;

/* Loads jemalloc and mimalloc (dlopen by soname) and checks that their pointers are theirs. Call
 * first thing in main, with main's argv: when Debian's jemalloc needs the static-TLS tunable, the
 * process re-executes itself once with GLIBC_TUNABLES set (peers.c). Idempotent. A peer that does
 * not load is left out of bench_allocators(). */
void bench_peers_init(char **argv);

/* The wait-free tree's node-size and descent variants of the paper's section 5 (wf32, wf128,
 * wf256, wf_ro, wf_lazy): measured by the stellwag study; elsewhere only when named with --alloc
 * (wf and wf_hint stand for the tree). */
bool bench_study_variant(const rt_allocator_t *a);

/* Why the peer `name` (jemalloc, mimalloc) is unavailable, or NULL (loaded, or not a peer). */
const char *bench_peer_unavailable(const char *name);

/* For `rtbench list`, after the allocators: a section "unavailable (not measured):" with one
 * line "  name  why" per peer that did not load; nothing when all loaded. */
void bench_peers_print_unavailable(FILE *f);

/* The loaded library's version ("5.3.0-0-g...", "2.0.9"), or NULL. */
const char *bench_peer_version(const rt_allocator_t *a);

/* System peers (glibc, jemalloc, mimalloc): their stats' watermark and peak_used are the highest
 * figures seen by stats calls since this call (peers.c); restarts them from the current ones. */
void bench_peer_reset_peak(const rt_allocator_t *a);

/* Fragmentation (Masmano's F) of jemalloc and mimalloc needs the peak of one run's memory, which
 * the process-wide figures cannot give (earlier runs' pages stay in them). This opens a private
 * instance of the peer a and fills *view with a descriptor for it (create set to a marker that is
 * never called, so frag.h reads its watermark; realloc, calloc, memalign, usable_size NULL):
 *   jemalloc  an arena of its own (arenas.create) with a thread cache of its own (tcache.create),
 *             through mallocx/dallocx with MALLOCX_ARENA and MALLOCX_TCACHE;
 *   mimalloc  a heap of its own (mi_heap_new), through mi_heap_malloc and mi_free.
 * watermark = the peak of that arena's or heap's memory: jemalloc its pages active + dirty + muzzy
 * (metadata left out), read when stats is called -- the arena's decay is set to -1 (never purge),
 * so that figure never decreases and is the peak so far (the default 10 s decay would return part
 * of the dirty pages to the OS during a long run); mimalloc the carved bytes of the heap's pages
 * (mi_heap_visit_blocks), sampled after every malloc. peak_used = the most bytes in live blocks
 * (usable sizes: size classes included), counted by the view's malloc and free. Only one private instance per peer at a time.
 * Returns false when a is not jemalloc or mimalloc, or the peer is unavailable. The caller frees
 * every block it holds, then calls bench_peer_private_close(*handle), which destroys the arena
 * (jemalloc: tcache.destroy, arena.<i>.destroy) or the heap (mi_heap_destroy). */
bool bench_peer_private_open(const rt_allocator_t *a, rt_allocator_t *view, void **handle);
void bench_peer_private_close(void *handle);

/* Under a table: the note that the system peers among allocs[0..n) are not pre-touched. */
void bench_peers_footnote(FILE *f, const rt_allocator_t *const *allocs, size_t n);

/* Every allocator the benchmark knows: the peers (noop first, then glibc, jemalloc, mimalloc when
 * loaded), then the library's
 * registry in its order. The array is static; *count receives its length. */
const rt_allocator_t *const *bench_allocators(size_t *count);

/* The allocator named `name` among bench_allocators(), or NULL. */
const rt_allocator_t *bench_find(const char *name);

/* True for allocators without create (system peers and noop): one process-wide instance. */
static inline int bench_is_system(const rt_allocator_t *a) { return a->create == NULL; }

#endif /* RTBENCH_PEERS_H */
