/* SPDX-License-Identifier: MIT */
/*
 * ports/libc/rtalloc_libc.h -- rtalloc's TLSF heap as the C library's malloc, on bare metal.
 *
 * Compile ports/libc/rtalloc_libc.c into the firmware (as an object file, not from an archive:
 * below) and link it with the core (librtalloc). It defines the C library's allocator:
 *
 *   every C library   malloc, free, realloc, calloc, memalign, aligned_alloc, posix_memalign,
 *                     malloc_usable_size
 *   newlib            also the reentrant entry points newlib's own code calls (stdio, __sinit,
 *                     strdup, ...): _malloc_r, _free_r, _realloc_r, _calloc_r, _memalign_r,
 *                     _malloc_usable_size_r; their failures set the errno of the struct _reent
 *                     they are given
 *   picolibc          nothing more: picolibc calls the plain names
 *
 * so the C library's own heap (newlib's nano-mallocr and _sbrk, picolibc's nano-malloc and sbrk)
 * is not linked at all: the link map shows it (examples/firmware/check-map.sh). The C library is
 * recognised from its headers (__PICOLIBC__, else _NEWLIB_VERSION); another one gets the plain
 * names only.
 *
 * Link it as an object. A linker takes an archive member only for a symbol that is undefined when
 * it reaches the archive; the C library's stdio asks for _malloc_r after the archives given
 * before it were searched, and would get the C library's own malloc. (Or wrap the archive in
 * -Wl,--whole-archive ... -Wl,--no-whole-archive.) A call that pulls in some other part of the
 * C library's allocator -- mallinfo, malloc_stats; newlib's mallopt, picolibc's cfree -- fails to
 * link with "multiple definition of `_malloc_r'" (or of `malloc'): those are not provided. The
 * C libraries' wrappers over these calls (valloc, pvalloc, reallocf, reallocarray) work.
 *
 * Behaviour, the same for every C library:
 *   - Failure returns NULL with errno = ENOMEM: no region was usable, or no free block fits, or the
 *     request can never fit, or calloc's count * size overflows. Requests above
 *     RT_HEAP_MAX_REQUEST and calloc's overflow are refused here, unreported; one below that but
 *     above the heap's capacity reaches the heap, which reports it (RT_ERR_TOO_LARGE) to its
 *     error handler: a handler should not take that kind for damage.
 *   - memalign and aligned_alloc with an alignment that is not a power of two: NULL, errno =
 *     EINVAL. posix_memalign returns EINVAL for such an alignment or one below sizeof(void *),
 *     ENOMEM when the block cannot be had, and leaves errno alone.
 *   - malloc(0), calloc with a zero product and the aligned calls of size 0 return a smallest
 *     block (a unique pointer, as newlib's and picolibc's mallocs do); realloc(p, 0) frees p and
 *     returns NULL; realloc(NULL, n) is malloc(n); free(NULL) does nothing.
 *   - A pointer that is not a live block of the heap (free, realloc, malloc_usable_size) is
 *     reported through the heap's error handler (install one in rtalloc_libc_on_create) and the
 *     call is refused: nothing is freed, realloc returns NULL. free of a non-NULL pointer before
 *     the heap exists is ignored: it cannot be one of its blocks.
 *   - Every pointer is aligned to RT_HEAP_ALIGN (8 on 32-bit targets, like the C libraries').
 *   - Time: the TLSF bounds of rtalloc/heap.h, plus, on the one call that creates the heap lazily,
 *     its creation (below). calloc adds a memset of the block, realloc a copy when it moves.
 *
 * Creation. The heap is created once, by whichever comes first:
 *   1. rtalloc_libc_init(regions, count), called by the reset handler after .data and .bss are
 *      set up and before the C library is initialised (newlib allocates before main:
 *      initialise_monitor_handles -> __sinit -> _malloc_r);
 *   2. the first allocator call (lazy creation): the regions then come from
 *      rtalloc_libc_regions(), a weak function the application may override. Its default takes
 *      the linker symbols __rtalloc_heap_start/__rtalloc_heap_end and, as a second pool,
 *      __rtalloc_heap2_start/__rtalloc_heap2_end (each pair optional); when neither pair is
 *      defined, picolibc's __heap_start/__heap_end (its picolibc.ld defines them).
 * Each region becomes a pool of the one heap (rt_tlsf_create for the first usable one,
 * rt_heap_add_pool for the others, at most RTALLOC_LIBC_MAX_REGIONS): SRAM and CCM, or two SRAM
 * banks, serve one malloc. A region too small to hold a heap (rt_heap_min_buffer) is skipped.
 * Creation runs under the lock (so an interrupt's first malloc cannot race main's): it costs the
 * TLSF table's clearing, rt_tlsf_create's bound, plus one rt_heap_add_pool per extra region,
 * with interrupts masked, once. Then rtalloc_libc_on_create(heap) (weak, default: nothing) runs,
 * still before any other call can see the heap: install an error handler there.
 *
 * The lock. Chosen when the shim is compiled, -DRTALLOC_LIBC_LOCK=<one of>:
 *   RTALLOC_LIBC_LOCK_IRQ      (default) mask every interrupt: PRIMASK on Cortex-M, mstatus.MIE
 *                              on RISC-V (rtalloc/port/cortex_m.h, rtalloc/port/riscv.h).
 *                              malloc and free may then be called from any interrupt handler.
 *   RTALLOC_LIBC_LOCK_BASEPRI  Cortex-M3/M4/M7/M33...: mask interrupts of priority value >=
 *                              RTALLOC_LIBC_BASEPRI (0: rtalloc/port/cortex_m.h's default);
 *                              more urgent ones stay live and must not call the allocator.
 *   RTALLOC_LIBC_LOCK_USER     the application defines rtalloc_libc_user_lock/_unlock (types
 *                              rt_lock_fn / rt_unlock_fn), e.g. an RTOS's scheduler lock.
 *   RTALLOC_LIBC_LOCK_NONE     no lock: one thread, and no interrupt handler may allocate.
 * The sections nest (each lock returns the previous mask), so an allocation from an interrupt
 * handler, or inside a section the application masked itself, is safe. With IRQ or BASEPRI, what
 * runs masked is the heap's bounded path only (rtalloc/heap.h; tools/wcet.py bounds it):
 * calloc's memset and realloc's copy run unmasked. After creation the lock may be replaced with
 * rt_heap_set_lock(rtalloc_libc_heap(), ...) before the heap is shared.
 */
#ifndef RTALLOC_LIBC_H
#define RTALLOC_LIBC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rtalloc/heap.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTALLOC_LIBC_LOCK_NONE 0
#define RTALLOC_LIBC_LOCK_IRQ 1
#define RTALLOC_LIBC_LOCK_BASEPRI 2
#define RTALLOC_LIBC_LOCK_USER 3

/* At most this many regions become pools (one heap holds RT_HEAP_MAX_POOLS). */
#define RTALLOC_LIBC_MAX_REGIONS RT_HEAP_MAX_POOLS

/* One memory region for the heap: [start, start + size). Any alignment. */
typedef struct rtalloc_libc_region {
    void *start;
    size_t size;
} rtalloc_libc_region_t;

/* The creation hook: creates the heap over `regions` now, with the configured lock installed.
 * Call it from the reset handler once .data and .bss are initialised, before the C library's
 * initialisation and constructors. Returns true iff it created the heap; false, changing
 * nothing, iff the heap already exists (created by an earlier call or lazily) or no region is
 * usable (too small, NULL, or size 0). Regions after the first usable one that the heap
 * refuses as pools (overlapping, too many) are skipped. Time: as creation, above. */
bool rtalloc_libc_init(const rtalloc_libc_region_t *regions, size_t count);

/* Weak; override to give lazy creation its regions. Writes at most `max` regions and returns
 * how many. Called once, with interrupts masked (under the lock), by the first allocator call
 * when rtalloc_libc_init was not called. Default: the linker symbols named above. */
size_t rtalloc_libc_regions(rtalloc_libc_region_t *regions, size_t max);

/* Weak; override to configure the heap when it is created (rt_heap_set_handler, a lock of your
 * own with rt_heap_set_lock). Called once, under the lock, before any allocation is served. */
void rtalloc_libc_on_create(rt_heap_t *heap);

/* The heap (NULL until it is created): for rt_heap_stats, rt_heap_check, rt_heap_walk. */
rt_heap_t *rtalloc_libc_heap(void);

/* How many regions became pools (0 until the heap is created). */
size_t rtalloc_libc_pools(void);

/* Who created the heap: "rtalloc_libc_init", or the entry point whose call created it lazily
 * ("_malloc_r", "malloc", "calloc", ...). NULL until it is created. */
const char *rtalloc_libc_creator(void);

#if defined(RTALLOC_LIBC_LOCK) && RTALLOC_LIBC_LOCK == RTALLOC_LIBC_LOCK_USER
/* RTALLOC_LIBC_LOCK_USER: the application's lock, as rt_lock_fn / rt_unlock_fn (context NULL). */
uintptr_t rtalloc_libc_user_lock(void *context);
void rtalloc_libc_user_unlock(void *context, uintptr_t token);
#endif

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_LIBC_H */
