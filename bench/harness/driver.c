/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/driver.c -- replay of workload traces through the descriptor (driver.h).
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

volatile sig_atomic_t drv_stop;

/* Operations between two checks of drv_stop and two progress reports. */
enum { DRV_CHUNK = 1u << 16 };

static void release_live(drv_instance_t *in)
{
    for (uint32_t s = 0; s < in->nslots; s++) {
        if (in->slots[s] != NULL) {
            if (in->a->create == NULL) {
                in->a->free(in->handle, in->slots[s]);
            }
            in->slots[s] = NULL;
        }
    }
}

bool drv_open(drv_instance_t *in, const rt_allocator_t *a, void *buffer, size_t size, uint32_t nslots, bool touch)
{
    memset(in, 0, sizeof *in);
    in->a = a;
    in->buffer = buffer;
    in->size = size;
    in->nslots = nslots;
    in->slots = calloc(nslots != 0 ? nslots : 1u, sizeof *in->slots);
    if (in->slots == NULL) {
        return false;
    }
    if (a->create != NULL) {
        if (touch) {
            memset(buffer, 0xA5, size);
        }
        in->handle = a->create(buffer, size);
        if (in->handle == NULL) {
            free(in->slots);
            in->slots = NULL;
            return false;
        }
    }
    return true;
}

bool drv_reset(drv_instance_t *in)
{
    release_live(in);
    if (in->a->create != NULL) {
        in->handle = in->a->create(in->buffer, in->size);
        return in->handle != NULL;
    }
    return true;
}

/* realloc, or malloc, copy-free and free of the old block where the allocator has no realloc:
 * NULL on failure, the old block then still live. */
static void *apply_realloc(const rt_allocator_t *a, void *h, void *old, size_t size)
{
    if (a->realloc != NULL) {
        return a->realloc(h, old, size);
    }
    void *p = a->malloc(h, size);
    if (p != NULL && old != NULL) {
        a->free(h, old);
    }
    return p;
}

/* calloc of one element, or malloc and a memset where the allocator has no calloc. */
static void *apply_calloc(const rt_allocator_t *a, void *h, size_t size)
{
    if (a->calloc != NULL) {
        return a->calloc(h, 1, size);
    }
    void *p = a->malloc(h, size);
    if (p != NULL) {
        memset(p, 0, size);
    }
    return p;
}

/* memalign, or malloc where the allocator has none and its own alignment is enough; else NULL. */
static void *apply_memalign(const rt_allocator_t *a, void *h, const wl_op_t *op)
{
    if (a->memalign != NULL) {
        return a->memalign(h, WL_OP_ALIGN(op), op->size);
    }
    if (WL_OP_ALIGN(op) <= a->alignment) {
        return a->malloc(h, op->size);
    }
    return NULL;
}

bool drv_apply_ext(drv_instance_t *in, const wl_op_t *op, size_t i)
{
    const rt_allocator_t *a = in->a;
    void *h = in->handle;
    void *old = in->slots[op->slot];
    size_t size = op->size;
    void *p = NULL;
    switch (WL_OP_KIND(op)) {
    case WL_FREE:
        in->slots[op->slot] = NULL;
        if (old != NULL) {
            a->free(h, old);
        }
        return true;
    case WL_MALLOC: p = a->malloc(h, size); break;
    case WL_REALLOC:
        p = apply_realloc(a, h, old, size);
        if (p == NULL) {
            return false; /* the old block stays in its slot */
        }
        *(volatile unsigned char *)p = (unsigned char)i;
        in->slots[op->slot] = p;
        return true;
    case WL_CALLOC: p = apply_calloc(a, h, size); break;
    case WL_MEMALIGN: p = apply_memalign(a, h, op); break;
    default: return false;
    }
    if (p != NULL && (op->kind & WL_OP_FAILED) != 0u) {
        a->free(h, p); /* the recording got none: keep the slot empty, as it was */
        return true;
    }
    if (p != NULL) {
        *(volatile unsigned char *)p = (unsigned char)i;
    }
    in->slots[op->slot] = p;
    return p != NULL;
}

void drv_close(drv_instance_t *in)
{
    if (in->slots != NULL) {
        release_live(in);
        free(in->slots);
    }
    in->slots = NULL;
    in->handle = NULL;
}

drv_outcome_t drv_replay_timed(drv_instance_t *in, const wl_trace_t *t, uint32_t *cycles, uint32_t *probes,
                               drv_progress_fn progress, void *context)
{
    drv_outcome_t out = {0, 0, false};
    void *(*const a_malloc)(void *, size_t) = in->a->malloc;
    void (*const a_free)(void *, void *) = in->a->free;
    unsigned (*const a_probes)(const void *) = in->a->last_probes;
    void *const h = in->handle;
    void **const slots = in->slots;
    const wl_op_t *const ops = t->ops;
    const size_t n = t->nops;

    for (size_t base = 0; base < n; base += DRV_CHUNK) {
        if (drv_stop) {
            out.interrupted = true;
            break;
        }
        size_t end = n - base > DRV_CHUNK ? base + DRV_CHUNK : n;
        for (size_t i = base; i < end; i++) {
            const wl_op_t *op = &ops[i];
            if (op->kind == WL_MALLOC) {
                size_t size = op->size;
                uint64_t t0 = clk_start();
                void *p = a_malloc(h, size);
                uint64_t t1 = clk_end();
                uint64_t d = t1 - t0;
                cycles[i] = d >= DRV_NOT_MEASURED ? DRV_NOT_MEASURED - 1u : (uint32_t)d;
                if (p != NULL) {
                    *(volatile unsigned char *)p = (unsigned char)i;
                } else {
                    out.failures++;
                }
                slots[op->slot] = p;
                if (probes != NULL) {
                    probes[i] = a_probes != NULL ? a_probes(h) : DRV_NO_PROBES;
                }
            } else if (op->kind != WL_FREE) {
                uint64_t t0 = clk_start();
                bool got = drv_apply_ext(in, op, i);
                uint64_t t1 = clk_end();
                uint64_t d = t1 - t0;
                cycles[i] = d >= DRV_NOT_MEASURED ? DRV_NOT_MEASURED - 1u : (uint32_t)d;
                out.failures += !got && (op->kind & WL_OP_FAILED) == 0u;
                if (probes != NULL) {
                    probes[i] = DRV_NO_PROBES;
                }
            } else {
                void *p = slots[op->slot];
                slots[op->slot] = NULL;
                if (probes != NULL) {
                    probes[i] = DRV_NO_PROBES;
                }
                if (p == NULL) {
                    cycles[i] = DRV_NOT_MEASURED;
                    continue;
                }
                uint64_t t0 = clk_start();
                a_free(h, p);
                uint64_t t1 = clk_end();
                uint64_t d = t1 - t0;
                cycles[i] = d >= DRV_NOT_MEASURED ? DRV_NOT_MEASURED - 1u : (uint32_t)d;
            }
        }
        out.done = end;
        if (progress != NULL) {
            progress(context, (double)end / (double)n);
        }
    }
    return out;
}

drv_outcome_t drv_replay_untimed(drv_instance_t *in, const wl_trace_t *t, uint64_t *elapsed_ns)
{
    drv_outcome_t out = {0, 0, false};
    void *(*const a_malloc)(void *, size_t) = in->a->malloc;
    void (*const a_free)(void *, void *) = in->a->free;
    void *const h = in->handle;
    void **const slots = in->slots;
    const wl_op_t *const ops = t->ops;
    const size_t n = t->nops;

    uint64_t t0 = clk_now_ns();
    for (size_t base = 0; base < n; base += DRV_CHUNK) {
        if (drv_stop) {
            out.interrupted = true;
            break;
        }
        size_t end = n - base > DRV_CHUNK ? base + DRV_CHUNK : n;
        for (size_t i = base; i < end; i++) {
            const wl_op_t *op = &ops[i];
            if (op->kind == WL_MALLOC) {
                void *p = a_malloc(h, op->size);
                if (p != NULL) {
                    *(volatile unsigned char *)p = (unsigned char)i;
                } else {
                    out.failures++;
                }
                slots[op->slot] = p;
            } else if (op->kind != WL_FREE) {
                bool got = drv_apply_ext(in, op, i);
                out.failures += !got && (op->kind & WL_OP_FAILED) == 0u;
            } else {
                void *p = slots[op->slot];
                slots[op->slot] = NULL;
                if (p != NULL) {
                    a_free(h, p);
                }
            }
        }
        out.done = end;
    }
    *elapsed_ns = clk_now_ns() - t0;
    return out;
}
