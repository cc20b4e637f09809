/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/frag.c -- the fragmentation factor (frag.h).
 */
#include "frag.h"

#include <stdlib.h>
#include <string.h>

double fr_factor(uint64_t peak_memory, uint64_t peak_live)
{
    if (peak_live == 0) {
        return 0.0;
    }
    return ((double)peak_memory / (double)peak_live - 1.0) * 100.0;
}

/* The allocator's peak so far: the watermark (instances) or used bytes - base (system). */
static uint64_t fr_peak_now(const rt_allocator_t *a, void *handle, uint64_t base)
{
    rt_stats_t s;
    memset(&s, 0, sizeof s);
    a->stats(handle, &s);
    if (a->create != NULL) {
        return s.watermark;
    }
    return s.used_bytes > base ? (uint64_t)s.used_bytes - base : 0u;
}

void fr_replay(const rt_allocator_t *a, void *handle, void **slots, const wl_trace_t *t, uint64_t *series,
               size_t series_len, const volatile sig_atomic_t *stop, fr_result_t *out)
{
    memset(out, 0, sizeof *out);
    out->known = a->stats != NULL;
    out->approximated = a->stats != NULL && a->create == NULL;
    uint32_t *size = calloc(t->slots != 0 ? t->slots : 1u, sizeof *size);
    uint64_t base = 0;
    if (out->approximated) {
        rt_stats_t s;
        memset(&s, 0, sizeof s);
        a->stats(handle, &s);
        base = s.used_bytes;
    }
    uint64_t live = 0, peak = 0;
    size_t k = 0;
    for (size_t i = 0; i < t->nops; i++) {
        if ((i & 0xFFFFu) == 0 && stop != NULL && *stop) {
            break;
        }
        const wl_op_t *op = &t->ops[i];
        if (op->kind == WL_MALLOC) {
            void *p = a->malloc(handle, op->size);
            if (p != NULL) {
                *(volatile unsigned char *)p = (unsigned char)i;
            } else {
                out->failures++;
            }
            slots[op->slot] = p;
            if (size != NULL) {
                size[op->slot] = op->size;
            }
            live += op->size;
            out->peak_live = live > out->peak_live ? live : out->peak_live;
            bool want_series = series != NULL && k < series_len;
            if (out->known && (out->approximated || want_series)) {
                uint64_t m = fr_peak_now(a, handle, base);
                peak = m > peak ? m : peak;
            }
            if (want_series) {
                series[k] = peak;
            }
            k++;
        } else {
            void *p = slots[op->slot];
            slots[op->slot] = NULL;
            if (p != NULL) {
                a->free(handle, p);
            }
            live -= size != NULL ? size[op->slot] : 0u;
        }
        out->done = i + 1u;
    }
    if (out->known && !out->approximated) {
        rt_stats_t s;
        memset(&s, 0, sizeof s);
        a->stats(handle, &s);
        peak = s.watermark > peak ? s.watermark : peak;
        out->peak_used = s.peak_used;
    }
    if (out->approximated) {
        out->peak_used = peak;
    }
    free(size);
    if (size == NULL) {
        out->peak_live = t->peak_live; /* no table: trust the generator's figure */
    }
    out->peak_memory = out->known ? peak : 0u;
    out->factor = out->known ? fr_factor(out->peak_memory, out->peak_live) : 0.0;
    out->factor_used = out->known ? fr_factor(out->peak_used, out->peak_live) : 0.0;
}
