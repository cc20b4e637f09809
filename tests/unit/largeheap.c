/* SPDX-License-Identifier: MIT */
/*
 * largeheap.c -- heaps well beyond 4 GiB (64-bit only): a TLSF heap over a 6 GiB mapping serves
 * malloc(5 GiB), writable at both ends, and frees it; the integrity check passes. Where the
 * largest block is smaller (RT_HARDENING >= 1: 4 GiB - 16 by default), the heap's pool is
 * clamped to it, a block of 7/8 of it is served, and a second pool over the rest of the mapping
 * serves a block beyond the first 4 GiB. The mapping is
 * MAP_NORESERVE and only a few pages are touched, so it costs no real memory.
 *
 * Skipped (printed SKIP, exit 77: ctest shows it as not run) on 32-bit, under AddressSanitizer
 * (its shadow of a 6 GiB mapping is heavy), or when the mapping is refused (ulimit -v, overcommit policy).
 */
#define _DEFAULT_SOURCE

#include <sys/mman.h>

#include "testlib.h"

#include "rtalloc/heap.h"

#if UINTPTR_MAX > 0xFFFFFFFFu

#define GIB ((size_t)1 << 30)

static void big_heap(const char *name, rt_heap_t *(*create)(void *, size_t), void *mem, size_t size)
{
    rt_heap_t *h = create(mem, size);
    if (!TL_CHECK(h != NULL, "%s: create over 6 GiB failed", name)) {
        return;
    }
    tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, true};
    rt_heap_set_handler(h, tl_record, &rec);
    rt_stats_t s;
    rt_heap_stats(h, &s);
    size_t largest = (size_t)RT_HEAP_LARGEST_BLOCK;
    size_t n = largest > 5u * GIB ? 5u * GIB : largest / 8u * 7u;
    TL_CHECK(s.capacity > n && s.largest_free > n && s.capacity <= largest, "%s: capacity %zu, largest_free %zu", name,
             s.capacity, s.largest_free);
    unsigned char *p = rt_heap_malloc(h, n);
    if (TL_CHECK(p != NULL, "%s: malloc(5 GiB) failed", name)) {
        TL_CHECK((unsigned char *)p >= (unsigned char *)mem && p + n <= (unsigned char *)mem + size,
                 "%s: block outside the mapping", name);
        p[0] = 0xA1;
        p[n / 2u] = 0xB2;
        p[n - 1u] = 0xC3;
        TL_CHECK(p[0] == 0xA1 && p[n - 1u] == 0xC3, "%s: ends not writable", name);
        TL_CHECK(rt_heap_usable_size(h, p) >= n, "%s: usable_size %zu", name, rt_heap_usable_size(h, p));
        unsigned char *q = rt_heap_malloc(h, 100);
        TL_CHECK(q != NULL, "%s: small block beside the 5 GiB one", name);
        TL_CHECK(rt_heap_malloc(h, s.capacity - n + (64u << 20)) == NULL, "%s: more than what is left fit", name);
        TL_CHECK(rt_heap_check(h), "%s: check with a 5 GiB block live", name);
        rt_heap_free(h, p);
        rt_heap_free(h, q);
        rt_heap_stats(h, &s);
        TL_CHECK(s.used_bytes == 0u && s.watermark > n, "%s: used %zu, watermark %zu after freeing", name, s.used_bytes,
                 s.watermark);
        /* the space coalesced: two blocks of half the size fit */
        void *a = rt_heap_malloc(h, n / 2u), *b = rt_heap_malloc(h, n / 2u);
        TL_CHECK(a != NULL && b != NULL, "%s: two halves after freeing the big block", name);
        rt_heap_free(h, a);
        rt_heap_free(h, b);
    }
    if (size - s.capacity > 1u * GIB) { /* the pool was clamped: the rest of the mapping as a second pool */
        unsigned char *rest = (unsigned char *)mem + s.capacity + (1u << 20);
        size_t rest_size = size - s.capacity - (1u << 20);
        if (TL_CHECK(rt_heap_add_pool(h, rest, rest_size), "%s: add_pool over the rest of the mapping", name)) {
            unsigned char *r = rt_heap_malloc(h, rest_size / 2u);
            if (TL_CHECK(r != NULL && r >= rest && r + rest_size / 2u <= rest + rest_size,
                         "%s: a block from the second pool", name)) {
                r[0] = 1;
                r[rest_size / 2u - 1u] = 2;
                TL_CHECK(rt_heap_check(h), "%s: check with a block in the second pool", name);
                rt_heap_free(h, r);
            }
        }
    }
    TL_CHECK(rt_heap_check(h) && rec.count == 0u, "%s: check / reports at the end", name);
}

int main(void)
{
    if (TL_ASAN) {
        tl_skip("largeheap: built with AddressSanitizer");
        return tl_summary("largeheap");
    }
    size_t size = 6u * GIB;
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        tl_skip("largeheap: mmap of 6 GiB refused");
        return tl_summary("largeheap");
    }
    big_heap("tlsf", rt_tlsf_create, mem, size);
    big_heap("bestfit", rt_bestfit_create, mem, size);
    /* (not the buddy: its metadata table is 1/32 of the arena and clearing it would touch 192 MiB) */
    munmap(mem, size);
    return tl_summary("largeheap");
}

#else

int main(void)
{
    tl_skip("largeheap: 32-bit target");
    return tl_summary("largeheap");
}

#endif
