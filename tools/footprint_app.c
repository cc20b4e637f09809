/* SPDX-License-Identifier: MIT */
/*
 * footprint_app.c -- the firmware tools/footprint.sh links to measure what rtalloc's TLSF heap
 * adds to a program's flash: a heap over a static 64 KiB buffer, the calls FP_CALLS names, the
 * results kept in a volatile so none is optimised away. FP_CALLS 0 is the baseline (the same
 * entry, no heap); the figure is (.text + .rodata + .data) of a program minus the baseline's.
 *   bit 0  rt_tlsf_create + rt_tlsf_malloc + rt_tlsf_free
 *   bit 1  + rt_tlsf_realloc    bit 2  + rt_tlsf_calloc    bit 3  + rt_tlsf_memalign
 *   bit 4  + rt_heap_check      bit 5  + rt_heap_check_fast
 */
#include "rtalloc/heap.h"

#ifndef FP_CALLS
#define FP_CALLS 0
#endif

static unsigned char arena[65536] __attribute__((aligned(8)));
volatile size_t fp_size = 100;
void *volatile fp_sink;
volatile int fp_ok;

void _start(void);
void _start(void)
{
#if FP_CALLS & 1
    rt_heap_t *h = rt_tlsf_create(arena, sizeof arena);
    void *p = rt_tlsf_malloc(h, fp_size);
#if FP_CALLS & 2
    p = rt_tlsf_realloc(h, p, fp_size * 2u);
#endif
#if FP_CALLS & 4
    fp_sink = rt_tlsf_calloc(h, fp_size, 2u);
#endif
#if FP_CALLS & 8
    fp_sink = rt_tlsf_memalign(h, 64u, fp_size);
#endif
#if FP_CALLS & 16
    fp_ok = rt_heap_check(h);
#endif
#if FP_CALLS & 32
    fp_ok = rt_heap_check_fast(h);
#endif
    fp_sink = p;
    rt_tlsf_free(h, p);
#else
    fp_sink = arena;
#endif
    for (;;) {
    }
}
