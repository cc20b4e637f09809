/*
 * bench/wl_fma.c -- the FMA article's test program as a trace generator (wl_fma.h).
 */
#include "wl_fma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint32_t wl_fma_class_size[WL_FMA_CLASSES] = {16, 32, 64, 128, 256, 512, 1024, 2048};
const uint32_t wl_fma_class_percent[WL_FMA_CLASSES] = {10, 30, 20, 15, 10, 7, 5, 3};

const char *wl_fma_sizes_name(wl_fma_sizes_t sizes)
{
    return sizes == WL_FMA_EXACT ? "exact" : "uniform";
}

/* One request size: a class by Table 1's percentages, then the class size (exact) or a size
 * uniform in (previous class, class]. */
static uint32_t draw_size(uint64_t *x, wl_fma_sizes_t sizes, unsigned *cls)
{
    uint32_t r = (uint32_t)(wl_rand(x) % 100u);
    unsigned c = 0;
    uint32_t acc = wl_fma_class_percent[0];
    while (r >= acc && c + 1u < WL_FMA_CLASSES) {
        c++;
        acc += wl_fma_class_percent[c];
    }
    *cls = c;
    uint32_t hi = wl_fma_class_size[c];
    if (sizes == WL_FMA_EXACT) {
        return hi;
    }
    uint32_t lo = c == 0 ? 0u : wl_fma_class_size[c - 1u];
    return lo + 1u + (uint32_t)(wl_rand(x) % (hi - lo));
}

bool wl_fma(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, uint64_t seed,
            wl_fma_info_t *info)
{
    wl_fma_info_t local;
    wl_fma_info_t *in = info != NULL ? info : &local;
    memset(in, 0, sizeof *in);
    memset(t, 0, sizeof *t);
    if (allocations == 0) {
        return false;
    }
    /* Every free empties an entry some earlier malloc filled: at most one free per malloc. */
    size_t cap = 2u * allocations;
    t->ops = malloc(cap * sizeof *t->ops);
    uint32_t *size = calloc(WL_FMA_TABLE, sizeof *size);    /* 0: the entry is empty */
    uint32_t *empty = malloc(WL_FMA_TABLE * sizeof *empty); /* stack of empty entries */
    if (t->ops == NULL || size == NULL || empty == NULL) {
        free(t->ops), free(size), free(empty);
        t->ops = NULL;
        return false;
    }
    snprintf(t->name, sizeof t->name, "fma");
    snprintf(t->params, sizeof t->params,
             "FMA 1998 test program: %zu allocations, table of %u, sizes %s, request 1/2, "
             "xorshift64* seed %llu",
             allocations, (unsigned)WL_FMA_TABLE, wl_fma_sizes_name(sizes),
             (unsigned long long)seed);
    t->seed = seed;
    t->slots = WL_FMA_TABLE;
    t->measured = SIZE_MAX;
    uint32_t nempty = 0;
    for (uint32_t s = WL_FMA_TABLE; s-- > 0;) {
        empty[nempty++] = s; /* entry 0 on top */
    }
    uint64_t x = seed != 0 ? seed : 1u;
    uint64_t live_bytes = 0;
    size_t n = 0;
    while (t->nmalloc < allocations) {
        bool request = (wl_rand(&x) >> 63) != 0;
        if (!request) {
            uint32_t s = (uint32_t)(wl_rand(&x) % WL_FMA_TABLE);
            if (size[s] == 0) {
                in->misses++;
                continue;
            }
            t->ops[n++] = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
            live_bytes -= size[s];
            size[s] = 0;
            empty[nempty++] = s;
            t->nfree++;
            in->releases++;
            continue;
        }
        if (nempty == 0) { /* the table overflows: free everything first, in table order */
            in->overflows++;
            for (uint32_t s = 0; s < WL_FMA_TABLE; s++) {
                t->ops[n++] = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
                size[s] = 0;
                t->nfree++;
                in->overflow_frees++;
            }
            live_bytes = 0;
            for (uint32_t s = WL_FMA_TABLE; s-- > 0;) {
                empty[nempty++] = s;
            }
        }
        unsigned cls = 0;
        uint32_t sz = draw_size(&x, sizes, &cls);
        uint32_t s = empty[--nempty];
        t->ops[n++] = (wl_op_t){.slot = s, .size = sz, .kind = WL_MALLOC};
        size[s] = sz;
        live_bytes += sz;
        t->peak_live = live_bytes > t->peak_live ? live_bytes : t->peak_live;
        t->nmalloc++;
        in->per_class[cls]++;
        size_t live = WL_FMA_TABLE - nempty;
        in->max_live = live > in->max_live ? live : in->max_live;
    }
    t->nops = n;
    t->peak_inuse = t->peak_live;
    in->allocations = t->nmalloc;
    free(size);
    free(empty);
    return true;
}
