/* SPDX-License-Identifier: MIT */
/*
 * ports/libc/rtalloc_libc.c -- the C library's malloc family over one rtalloc TLSF heap
 * (newlib, newlib-nano, picolibc). What it defines, when it creates the heap and which lock it
 * takes: rtalloc_libc.h.
 *
 * Every entry point is a thin wrapper: find the heap (creating it on the very first call),
 * filter what a C library must answer without troubling the heap (size 0, sizes above the largest
 * request, calloc's overflow, bad alignments), call the rt_tlsf_* function, and translate NULL
 * into errno. The heap's own lock hooks do the locking; only creation takes the lock here.
 *
 * All of it is in this one file on purpose: linked from an archive, the reentrant entry points
 * newlib's stdio calls would be looked for after the archive was passed (rtalloc_libc.h).
 */
#define _DEFAULT_SOURCE 1 /* posix_memalign's and memalign's declarations */

#include "rtalloc_libc.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#if defined(__PICOLIBC__)
#define RTALLOC_LIBC_NEWLIB 0
#elif defined(_NEWLIB_VERSION)
#define RTALLOC_LIBC_NEWLIB 1
#include <reent.h>
#else
#define RTALLOC_LIBC_NEWLIB 0
#endif

/* ---- the lock ------------------------------------------------------------------------------- */

#ifndef RTALLOC_LIBC_LOCK
#define RTALLOC_LIBC_LOCK RTALLOC_LIBC_LOCK_IRQ
#endif
#ifndef RTALLOC_LIBC_BASEPRI
#define RTALLOC_LIBC_BASEPRI 0 /* 0: RT_CORTEX_M_BASEPRI_THRESHOLD */
#endif

#if RTALLOC_LIBC_LOCK == RTALLOC_LIBC_LOCK_IRQ
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#include <rtalloc/port/cortex_m.h>
#define LIBC_LOCK rt_cortex_m_primask_lock
#define LIBC_UNLOCK rt_cortex_m_primask_unlock
#elif defined(__riscv)
#include <rtalloc/port/riscv.h>
#define LIBC_LOCK rt_riscv_mie_lock
#define LIBC_UNLOCK rt_riscv_mie_unlock
#else
#error "RTALLOC_LIBC_LOCK_IRQ: no interrupt-masking lock for this target (use _USER or _NONE)"
#endif
#define LIBC_LOCK_CONTEXT NULL
#elif RTALLOC_LIBC_LOCK == RTALLOC_LIBC_LOCK_BASEPRI
#include <rtalloc/port/cortex_m.h>
#if !RT_CORTEX_M_HAVE_BASEPRI
#error "RTALLOC_LIBC_LOCK_BASEPRI: this core has no BASEPRI (Cortex-M0/M0+/M1/M23): use _IRQ"
#endif
#define LIBC_LOCK rt_cortex_m_basepri_lock
#define LIBC_UNLOCK rt_cortex_m_basepri_unlock
#define LIBC_LOCK_CONTEXT ((void *)(uintptr_t)(RTALLOC_LIBC_BASEPRI))
#elif RTALLOC_LIBC_LOCK == RTALLOC_LIBC_LOCK_USER
#define LIBC_LOCK rtalloc_libc_user_lock
#define LIBC_UNLOCK rtalloc_libc_user_unlock
#define LIBC_LOCK_CONTEXT NULL
#elif RTALLOC_LIBC_LOCK != RTALLOC_LIBC_LOCK_NONE
#error "RTALLOC_LIBC_LOCK: one of RTALLOC_LIBC_LOCK_IRQ, _BASEPRI, _USER, _NONE"
#endif

/* ---- the heap and its creation -------------------------------------------------------------- */

static rt_heap_t *libc_heap; /* written once, under the lock, after it is complete */
static size_t libc_pool_count;
static const char *libc_created_by;

/* Creates the heap over `regions` (caller holds the lock; libc_heap is NULL). */
static rt_heap_t *create_over(const rtalloc_libc_region_t *regions, size_t count)
{
    rt_heap_t *heap = NULL;
    size_t pools = 0;
    size_t min = rt_heap_min_buffer(RT_INDEX_TLSF);
    for (size_t i = 0; i < count && pools < RTALLOC_LIBC_MAX_REGIONS; i++) {
        if (regions[i].start == NULL || regions[i].size < min) {
            continue;
        }
        if (heap == NULL) {
            heap = rt_tlsf_create(regions[i].start, regions[i].size);
            pools = heap != NULL ? 1u : 0u;
        } else if (rt_heap_add_pool(heap, regions[i].start, regions[i].size)) {
            pools++;
        }
    }
    if (heap != NULL) {
#if RTALLOC_LIBC_LOCK != RTALLOC_LIBC_LOCK_NONE
        rt_heap_set_lock(heap, LIBC_LOCK, LIBC_UNLOCK, LIBC_LOCK_CONTEXT);
#endif
        libc_pool_count = pools;
        rtalloc_libc_on_create(heap);
    }
    return heap;
}

/* Creates the heap unless it exists; regions NULL: rtalloc_libc_regions(). Returns true iff
 * this call created it. */
static bool create_once(const char *by, const rtalloc_libc_region_t *regions, size_t count)
{
    rtalloc_libc_region_t found[RTALLOC_LIBC_MAX_REGIONS];
    bool created = false;
#if RTALLOC_LIBC_LOCK != RTALLOC_LIBC_LOCK_NONE
    uintptr_t token = LIBC_LOCK(LIBC_LOCK_CONTEXT);
#endif
    if (libc_heap == NULL) {
        if (regions == NULL) {
            count = rtalloc_libc_regions(found, RTALLOC_LIBC_MAX_REGIONS);
            if (count > RTALLOC_LIBC_MAX_REGIONS) {
                count = RTALLOC_LIBC_MAX_REGIONS;
            }
            regions = found;
        }
        rt_heap_t *heap = create_over(regions, count);
        if (heap != NULL) {
            libc_created_by = by;
            libc_heap = heap; /* last: a call that sees it sees a complete heap */
            created = true;
        }
    }
#if RTALLOC_LIBC_LOCK != RTALLOC_LIBC_LOCK_NONE
    LIBC_UNLOCK(LIBC_LOCK_CONTEXT, token);
#endif
    return created;
}

/* The heap, created on the first call; NULL iff no region is usable. */
static rt_heap_t *heap_for(const char *op)
{
    if (libc_heap == NULL) {
        (void)create_once(op, NULL, 0);
    }
    return libc_heap;
}

bool rtalloc_libc_init(const rtalloc_libc_region_t *regions, size_t count)
{
    if (regions == NULL) {
        return false;
    }
    return create_once("rtalloc_libc_init", regions, count);
}

/* The default regions: linker symbols, weak so that a script without them still links (their
 * address is then 0). */
extern char __rtalloc_heap_start[] __attribute__((weak));
extern char __rtalloc_heap_end[] __attribute__((weak));
extern char __rtalloc_heap2_start[] __attribute__((weak));
extern char __rtalloc_heap2_end[] __attribute__((weak));
extern char __heap_start[] __attribute__((weak));
extern char __heap_end[] __attribute__((weak));

static size_t add_region(rtalloc_libc_region_t *regions, size_t n, size_t max, char *start, char *end)
{
    if (n < max && start != NULL && end != NULL && end > start) {
        regions[n].start = start;
        regions[n].size = (size_t)(end - start);
        n++;
    }
    return n;
}

__attribute__((weak)) size_t rtalloc_libc_regions(rtalloc_libc_region_t *regions, size_t max)
{
    size_t n = 0;
    n = add_region(regions, n, max, __rtalloc_heap_start, __rtalloc_heap_end);
    n = add_region(regions, n, max, __rtalloc_heap2_start, __rtalloc_heap2_end);
    if (n == 0) {
        n = add_region(regions, n, max, __heap_start, __heap_end);
    }
    return n;
}

__attribute__((weak)) void rtalloc_libc_on_create(rt_heap_t *heap) { (void)heap; }

rt_heap_t *rtalloc_libc_heap(void) { return libc_heap; }

size_t rtalloc_libc_pools(void) { return libc_heap != NULL ? libc_pool_count : 0u; }

const char *rtalloc_libc_creator(void) { return libc_heap != NULL ? libc_created_by : NULL; }

/* ---- the operations, C library independent ----------------------------------------------- *
 * Each returns NULL on failure and says through *err which errno the C library wants (0: none,
 * as for realloc(p, 0)). */

static bool power_of_two(size_t x) { return x != 0u && (x & (x - 1u)) == 0u; }

static void *op_malloc(const char *op, size_t size, int *err)
{
    rt_heap_t *heap = heap_for(op);
    void *p = NULL;
    if (heap != NULL && size <= RT_HEAP_MAX_REQUEST) {
        p = rt_tlsf_malloc(heap, size == 0u ? 1u : size);
    }
    *err = p == NULL ? ENOMEM : 0;
    return p;
}

static void op_free(void *ptr)
{
    rt_heap_t *heap = libc_heap; /* never created by a free: no pointer can be its block yet */
    if (ptr != NULL && heap != NULL) {
        rt_tlsf_free(heap, ptr);
    }
}

static void *op_realloc(const char *op, void *ptr, size_t size, int *err)
{
    if (ptr == NULL) {
        return op_malloc(op, size, err);
    }
    rt_heap_t *heap = heap_for(op);
    void *p = NULL;
    *err = 0;
    if (heap == NULL) {
        *err = ENOMEM;
    } else if (size == 0u) {
        rt_tlsf_free(heap, ptr);
    } else if (size <= RT_HEAP_MAX_REQUEST) {
        p = rt_tlsf_realloc(heap, ptr, size);
        *err = p == NULL ? ENOMEM : 0;
    } else {
        *err = ENOMEM;
    }
    return p;
}

static void *op_calloc(const char *op, size_t count, size_t size, int *err)
{
    rt_heap_t *heap = heap_for(op);
    void *p = NULL;
    if (heap != NULL && (size == 0u || count <= RT_HEAP_MAX_REQUEST / size)) {
        if (count == 0u || size == 0u) {
            count = 1u;
            size = 1u;
        }
        p = rt_tlsf_calloc(heap, count, size);
    }
    *err = p == NULL ? ENOMEM : 0;
    return p;
}

static void *op_memalign(const char *op, size_t alignment, size_t size, int *err)
{
    if (!power_of_two(alignment)) {
        *err = EINVAL;
        return NULL;
    }
    rt_heap_t *heap = heap_for(op);
    void *p = NULL;
    if (heap != NULL && size <= RT_HEAP_MAX_REQUEST) {
        p = rt_tlsf_memalign(heap, alignment, size == 0u ? 1u : size);
    }
    *err = p == NULL ? ENOMEM : 0;
    return p;
}

static size_t op_usable_size(void *ptr)
{
    rt_heap_t *heap = libc_heap;
    return ptr != NULL && heap != NULL ? rt_heap_usable_size(heap, ptr) : 0u;
}

/* ---- the plain names (every C library) ---------------------------------------------------- */

static void *set_errno(void *p, int err)
{
    if (err != 0) {
        errno = err;
    }
    return p;
}

void *malloc(size_t size)
{
    int err;
    void *p = op_malloc("malloc", size, &err);
    return set_errno(p, err);
}

void free(void *ptr) { op_free(ptr); }

void *realloc(void *ptr, size_t size)
{
    int err;
    void *p = op_realloc("realloc", ptr, size, &err);
    return set_errno(p, err);
}

void *calloc(size_t count, size_t size)
{
    int err;
    void *p = op_calloc("calloc", count, size, &err);
    return set_errno(p, err);
}

void *memalign(size_t alignment, size_t size)
{
    int err;
    void *p = op_memalign("memalign", alignment, size, &err);
    return set_errno(p, err);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    int err;
    void *p = op_memalign("aligned_alloc", alignment, size, &err);
    return set_errno(p, err);
}

int posix_memalign(void **memptr, size_t alignment, size_t size)
{
    int err;
    if (alignment < sizeof(void *)) {
        return EINVAL;
    }
    void *p = op_memalign("posix_memalign", alignment, size, &err);
    if (p != NULL) {
        *memptr = p;
    }
    return err;
}

size_t malloc_usable_size(void *ptr) { return op_usable_size(ptr); }

/* ---- newlib's reentrant entry points ------------------------------------------------------ */

#if RTALLOC_LIBC_NEWLIB

static void *set_errno_r(struct _reent *r, void *p, int err)
{
    if (err != 0 && r != NULL) {
        r->_errno = err;
    }
    return p;
}

void *_malloc_r(struct _reent *r, size_t size)
{
    int err;
    void *p = op_malloc("_malloc_r", size, &err);
    return set_errno_r(r, p, err);
}

void _free_r(struct _reent *r, void *ptr)
{
    (void)r;
    op_free(ptr);
}

void *_realloc_r(struct _reent *r, void *ptr, size_t size)
{
    int err;
    void *p = op_realloc("_realloc_r", ptr, size, &err);
    return set_errno_r(r, p, err);
}

void *_calloc_r(struct _reent *r, size_t count, size_t size)
{
    int err;
    void *p = op_calloc("_calloc_r", count, size, &err);
    return set_errno_r(r, p, err);
}

void *_memalign_r(struct _reent *r, size_t alignment, size_t size)
{
    int err;
    void *p = op_memalign("_memalign_r", alignment, size, &err);
    return set_errno_r(r, p, err);
}

size_t _malloc_usable_size_r(struct _reent *r, void *ptr)
{
    (void)r;
    return op_usable_size(ptr);
}

/* newlib's libgloss (rdimon, nosys) has an _sbrk that hands out memory from the linker symbol
 * `end` up: most likely the very memory the heap manages. With newlib's malloc gone nothing of
 * the C library calls it; this one makes any other caller fail (ENOMEM) instead of sharing the
 * heap's memory. Weak, like libgloss's (ours comes first in the link): an application's own
 * _sbrk wins -- its region must then not overlap the heap's. */
void *_sbrk(ptrdiff_t increment); /* newlib declares it only for its own build */
__attribute__((weak)) void *_sbrk(ptrdiff_t increment)
{
    (void)increment;
    errno = ENOMEM;
    return (void *)(intptr_t)-1;
}

#endif /* RTALLOC_LIBC_NEWLIB */
