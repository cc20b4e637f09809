/*
 * bench/peers.h -- allocators the benchmark measures beside the library's own, behind the same
 * descriptor (rtalloc/registry.h):
 *   noop   the calibration row: malloc returns a static non-NULL block and free does nothing.
 *          Replayed through the same driver, it shows the floor of every figure (an indirect
 *          call, a return, the clock and the loop).
 *   glibc  the process's malloc/free (create is NULL; the handle is ignored). Its memory is not
 *          a pre-touched pool: the first touches of fresh pages land inside its timed calls
 *          during the first of the two runs (the per-op minimum of the two mostly removes them).
 * The wrappers have the same shape as the library's descriptors (a jump to the real function),
 * so every allocator pays the same indirect call.
 */
#ifndef RTBENCH_PEERS_H
#define RTBENCH_PEERS_H

#include <stddef.h>

#include "rtalloc/registry.h"

extern const rt_allocator_t bench_noop, bench_glibc;

/* Every allocator the benchmark knows: the peers (noop first, then glibc), then the library's
 * registry in its order. The array is static; *count receives its length. */
const rt_allocator_t *const *bench_allocators(size_t *count);

/* The allocator named `name` among bench_allocators(), or NULL. */
const rt_allocator_t *bench_find(const char *name);

/* True for allocators without create (system peers and noop): one process-wide instance. */
static inline int bench_is_system(const rt_allocator_t *a) { return a->create == NULL; }

#endif /* RTBENCH_PEERS_H */
