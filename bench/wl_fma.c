/*
 * bench/wl_fma.c -- the FMA article's test program as a trace generator (wl_fma.h).
 */
#include "wl_fma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint32_t wl_fma_class_size[WL_FMA_CLASSES] = {16, 32, 64, 128, 256, 512, 1024, 2048};
const uint32_t wl_fma_class_percent[WL_FMA_CLASSES] = {10, 30, 20, 15, 10, 7, 5, 3};

const char *wl_fma_release_name(wl_fma_release_t release)
{
    return release == WL_FMA_RELEASE_LIVE ? "live" : "index";
}

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
    uint32_t lo = c == 0 ? 0u : wl_fma_class_size[c - 1u];
    /* drawn in both modes, so that exact and uniform runs share every other draw: the same classes,
     * the same releases, the same overflows */
    uint32_t uniform = lo + 1u + (uint32_t)(wl_rand(x) % (hi - lo));
    return sizes == WL_FMA_EXACT ? hi : uniform;
}

/* The table: sizes per entry (0: empty), a stack of empty entries and, for release by live block,
 * the live entries in an array with each one's position (O(1) removal). */
typedef struct fma_table {
    uint32_t *size, *empty, *live, *pos;
    uint32_t nempty, nlive;
} fma_table_t;

static void table_fill(fma_table_t *tb, uint32_t s, uint32_t sz)
{
    tb->size[s] = sz;
    tb->pos[s] = tb->nlive;
    tb->live[tb->nlive++] = s;
}

static void table_empty(fma_table_t *tb, uint32_t s)
{
    uint32_t k = tb->pos[s], last = tb->live[--tb->nlive];
    tb->live[k] = last;
    tb->pos[last] = k;
    tb->size[s] = 0;
    tb->empty[tb->nempty++] = s;
}

bool wl_fma(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, wl_fma_release_t release,
            uint64_t seed, wl_fma_info_t *info)
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
    fma_table_t tb = {calloc(WL_FMA_TABLE, sizeof(uint32_t)),
                      malloc(WL_FMA_TABLE * sizeof(uint32_t)),
                      malloc(WL_FMA_TABLE * sizeof(uint32_t)),
                      malloc(WL_FMA_TABLE * sizeof(uint32_t)),
                      0,
                      0};
    if (t->ops == NULL || tb.size == NULL || tb.empty == NULL || tb.live == NULL ||
        tb.pos == NULL) {
        free(t->ops), free(tb.size), free(tb.empty), free(tb.live), free(tb.pos);
        t->ops = NULL;
        return false;
    }
    snprintf(t->name, sizeof t->name, "fma");
    snprintf(t->params, sizeof t->params,
             "FMA 1998: %zu allocations, table %u, sizes %s, request 1/2, release by %s, "
             "xorshift64* seed %llu",
             allocations, (unsigned)WL_FMA_TABLE, wl_fma_sizes_name(sizes),
             wl_fma_release_name(release), (unsigned long long)seed);
    t->seed = seed;
    t->slots = WL_FMA_TABLE;
    t->measured = SIZE_MAX;
    for (uint32_t s = WL_FMA_TABLE; s-- > 0;) {
        tb.empty[tb.nempty++] = s; /* entry 0 on top */
    }
    uint64_t x = seed != 0 ? seed : 1u;
    uint64_t live_bytes = 0;
    size_t n = 0;
    while (t->nmalloc < allocations) {
        bool request = (wl_rand(&x) >> 63) != 0;
        if (!request) {
            uint32_t s = 0;
            if (release == WL_FMA_RELEASE_LIVE) {
                if (tb.nlive == 0) {
                    in->misses++;
                    continue;
                }
                s = tb.live[wl_rand(&x) % tb.nlive];
            } else {
                s = (uint32_t)(wl_rand(&x) % WL_FMA_TABLE);
                if (tb.size[s] == 0) {
                    in->misses++;
                    continue;
                }
            }
            t->ops[n++] = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
            live_bytes -= tb.size[s];
            table_empty(&tb, s);
            t->nfree++;
            in->releases++;
            continue;
        }
        if (tb.nempty == 0) { /* the table overflows: free everything first, in table order */
            in->overflows++;
            for (uint32_t s = 0; s < WL_FMA_TABLE; s++) {
                t->ops[n++] = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
                t->nfree++;
                in->overflow_frees++;
            }
            memset(tb.size, 0, WL_FMA_TABLE * sizeof *tb.size);
            tb.nlive = 0;
            live_bytes = 0;
            for (uint32_t s = WL_FMA_TABLE; s-- > 0;) {
                tb.empty[tb.nempty++] = s;
            }
        }
        unsigned cls = 0;
        uint32_t sz = draw_size(&x, sizes, &cls);
        uint32_t s = tb.empty[--tb.nempty];
        t->ops[n++] = (wl_op_t){.slot = s, .size = sz, .kind = WL_MALLOC};
        table_fill(&tb, s, sz);
        live_bytes += sz;
        t->peak_live = live_bytes > t->peak_live ? live_bytes : t->peak_live;
        t->nmalloc++;
        in->per_class[cls]++;
        in->max_live = tb.nlive > in->max_live ? tb.nlive : in->max_live;
    }
    t->nops = n;
    t->peak_inuse = t->peak_live;
    in->allocations = t->nmalloc;
    free(tb.size), free(tb.empty), free(tb.live), free(tb.pos);
    return true;
}
