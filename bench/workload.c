/*
 * bench/workload.c -- the generators of workload.h.
 */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const wl_uniform_spec_t wl_churn = {
    .name = "churn",
    .description = "uniform churn: 1000 live slots, sizes 16..4096",
    .slots = 1000,
    .min_size = 16,
    .max_size = 4096,
    .default_ops = 2000000,
};

const wl_uniform_spec_t wl_small = {
    .name = "small",
    .description = "small-block churn: 10000 live slots, sizes 8..256",
    .slots = 10000,
    .min_size = 8,
    .max_size = 256,
    .default_ops = 2000000,
};

static bool trace_alloc(wl_trace_t *t, size_t nops, uint32_t slots)
{
    memset(t, 0, sizeof *t);
    t->ops = malloc((nops != 0 ? nops : 1u) * sizeof *t->ops);
    t->nops = nops;
    t->slots = slots;
    t->measured = SIZE_MAX;
    return t->ops != NULL;
}

bool wl_uniform(wl_trace_t *t, const wl_uniform_spec_t *spec, size_t nops, uint64_t seed)
{
    if (!trace_alloc(t, nops, spec->slots)) {
        return false;
    }
    unsigned char *live = calloc(spec->slots, 1);
    if (live == NULL) {
        wl_release(t);
        return false;
    }
    snprintf(t->name, sizeof t->name, "%s", spec->name);
    snprintf(t->params, sizeof t->params, "%u slots, sizes %u..%u, %zu ops, xorshift64* seed %llu",
             spec->slots, spec->min_size, spec->max_size, nops, (unsigned long long)seed);
    t->seed = seed;
    uint64_t x = seed != 0 ? seed : 1u;
    uint64_t span = (uint64_t)spec->max_size - spec->min_size + 1u;
    for (size_t i = 0; i < nops; i++) {
        uint32_t s = (uint32_t)(wl_rand(&x) % spec->slots);
        wl_op_t *op = &t->ops[i];
        op->slot = s;
        if (live[s]) {
            op->kind = WL_FREE;
            op->size = 0;
            live[s] = 0;
            t->nfree++;
        } else {
            op->kind = WL_MALLOC;
            op->size = spec->min_size + (uint32_t)(wl_rand(&x) % span);
            live[s] = 1;
            t->nmalloc++;
        }
    }
    free(live);
    return true;
}

bool wl_memfrag(wl_trace_t *t, uint32_t n)
{
    size_t nops = 3u * (size_t)n + 1u;
    if (n == 0 || !trace_alloc(t, nops, 2u * n + 1u)) {
        return false;
    }
    snprintf(t->name, sizeof t->name, "memfrag");
    snprintf(t->params, sizeof t->params, "N=%u: N x {malloc(72); malloc(8)}, free the 72s, malloc(120)", n);
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        t->ops[k++] = (wl_op_t){.slot = 2u * i, .size = 72, .kind = WL_MALLOC};
        t->ops[k++] = (wl_op_t){.slot = 2u * i + 1u, .size = 8, .kind = WL_MALLOC};
    }
    for (uint32_t i = 0; i < n; i++) {
        t->ops[k++] = (wl_op_t){.slot = 2u * i, .size = 0, .kind = WL_FREE};
    }
    t->measured = k;
    t->ops[k++] = (wl_op_t){.slot = 2u * n, .size = 120, .kind = WL_MALLOC};
    t->nmalloc = 2u * (size_t)n + 1u;
    t->nfree = n;
    return true;
}

void wl_release(wl_trace_t *t)
{
    free(t->ops);
    t->ops = NULL;
    t->nops = 0;
}
