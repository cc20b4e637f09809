/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/mtpeers.h -- the allocators of the multi-thread study (exp_stellwag.c), behind the same
 * descriptor as every other (rtalloc/registry.h):
 *
 *   tlsf+mutex  the library's TLSF heap with ONE global pthread mutex through the heap's lock
 *               hooks (rt_heap_set_lock with rt_pthread_lock / rt_pthread_unlock of
 *               rtalloc/drivers.h): the paper's "TLSF under one global lock".
 *   aomalloc    AO_malloc / AO_free of libatomic_ops (Debian's libatomic-ops-dev, the static
 *               libatomic_ops_gpl.a linked when CMake finds it), AO_malloc_enable_mmap() called
 *               first so that 64 MiB can be reached; a system allocator (no create, no own 64 MiB
 *               limit). Lock-free only when its stack has a double-width CAS; otherwise Debian's
 *               build uses the "almost lock-free" stack (a black list of in-progress pops: 1-lock-
 *               free, may spin) -- bench_mt_aomalloc_progress() says which the linked library is.
 *
 * Neither is in bench_allocators() (the single-thread experiments do not measure them unless
 * named with --alloc): bench_mt_find finds them by name.
 *
 * Which allocators may be shared by threads without a lock: the system peers (glibc, jemalloc,
 * mimalloc, aomalloc, and the noop), tlsf+mutex, and every registry allocator that declares
 * itself wait-free (bench_mt_is_waitfree).
 */
#ifndef RTBENCH_MTPEERS_H
#define RTBENCH_MTPEERS_H

#include <stdbool.h>
#include <stdio.h>

#include "rtalloc/registry.h"

/* tlsf+mutex, or NULL when the registry has no "tlsf". */
const rt_allocator_t *bench_mt_tlsf_mutex(void);
/* TLSF under one priority-inheritance mutex (PTHREAD_PRIO_INHERIT); NULL where unsupported. */
const rt_allocator_t *bench_mt_tlsf_pi(void);

/* aomalloc (AO_malloc with mmap enabled), or NULL when rtbench was built without
 * libatomic_ops_gpl.a; then bench_mt_aomalloc_unavailable() says why. */
const rt_allocator_t *bench_mt_aomalloc(void);
const char *bench_mt_aomalloc_unavailable(void);

/* What the linked AO_malloc guarantees, in words (lock-free with a double-width CAS, or the
 * almost-lock-free stack), and whether the headers see AO_HAVE_compare_double_and_swap_double
 * with rtbench's flags. NULL without AO_malloc. */
const char *bench_mt_aomalloc_progress(void);

/* When the linked AO_malloc cannot serve 32,761..65,528-byte requests (libatomic_ops 7.6: it maps
 * and drops 64 KiB chunks until mmap fails -- hours; probed at start in a child process), a line
 * that says so: the aomalloc descriptor then returns NULL for that band at once. NULL otherwise. */
const char *bench_mt_aomalloc_band(void);

/* tlsf+mutex or aomalloc by name, or NULL. */
const rt_allocator_t *bench_mt_find(const char *name);

/* A registry allocator that is safe to share between threads without a lock (the wait-free
 * buddy-tree variants). */
bool bench_mt_is_waitfree(const rt_allocator_t *a);

/* Safe to share between threads as it is (see above). */
bool bench_mt_thread_safe(const rt_allocator_t *a);

/* For `rtbench list`: the study's own peers, or why they are unavailable. */
void bench_mt_print_peers(FILE *f);

#endif /* RTBENCH_MTPEERS_H */
