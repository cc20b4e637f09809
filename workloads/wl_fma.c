/* SPDX-License-Identifier: MIT */
/*
 * workloads/wl_fma.c -- the FMA article's test program as a trace generator (wl_fma.h).
 */
#include "wl_fma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint32_t wl_fma_class_size[WL_FMA_CLASSES] = {16, 32, 64, 128, 256, 512, 1024, 2048};
const uint32_t wl_fma_class_percent[WL_FMA_CLASSES] = {10, 30, 20, 15, 10, 7, 5, 3};

const char *wl_fma_release_name(wl_fma_release_t release)
{
    return release == WL_FMA_BURST ? "burst" : release == WL_FMA_RELEASE_LIVE ? "live" : "index";
}

const char *wl_fma_sizes_name(wl_fma_sizes_t sizes) { return sizes == WL_FMA_EXACT ? "exact" : "uniform"; }

/* A size class by Table 1's percentages (one draw). */
static unsigned draw_class(uint64_t *x)
{
    uint32_t r = (uint32_t)(wl_rand(x) % 100u);
    unsigned c = 0;
    uint32_t acc = wl_fma_class_percent[0];
    while (r >= acc && c + 1u < WL_FMA_CLASSES) {
        c++;
        acc += wl_fma_class_percent[c];
    }
    return c;
}

/* A request size of class c (one draw): the class size (exact) or a size uniform in
 * (previous class, class]. */
static uint32_t draw_in_class(uint64_t *x, wl_fma_sizes_t sizes, unsigned c)
{
    uint32_t hi = wl_fma_class_size[c];
    uint32_t lo = c == 0 ? 0u : wl_fma_class_size[c - 1u];
    /* drawn in both modes, so that exact and uniform runs share every other draw: the same classes,
     * the same releases, the same overflows */
    uint32_t uniform = lo + 1u + (uint32_t)(wl_rand(x) % (hi - lo));
    return sizes == WL_FMA_EXACT ? hi : uniform;
}

/* The table: sizes per entry (0: empty), a stack of empty entries and the live entries in an array
 * with each one's position (O(1) removal; the burst program keeps its earlier blocks in a prefix). */
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

/* Swaps positions i and j of the live array. */
static void table_swap(fma_table_t *tb, uint32_t i, uint32_t j)
{
    uint32_t a = tb->live[i], b = tb->live[j];
    tb->live[i] = b, tb->pos[b] = i;
    tb->live[j] = a, tb->pos[a] = j;
}

/* Every entry empty, entry 0 on top of the stack. */
static void table_clear(fma_table_t *tb)
{
    memset(tb->size, 0, WL_FMA_TABLE * sizeof *tb->size);
    tb->nlive = 0;
    tb->nempty = 0;
    for (uint32_t s = WL_FMA_TABLE; s-- > 0;) {
        tb->empty[tb->nempty++] = s;
    }
}

static void table_free(fma_table_t *tb) { free(tb->size), free(tb->empty), free(tb->live), free(tb->pos); }

/* The trace's ops (every free empties an entry some earlier malloc filled: at most one free per
 * malloc) and the table, empty; t zeroed. False when out of memory. */
/* Opens a trace of `allocations` mallocs (false, with *t empty, for 0 or out of memory) and its
 * table; zeroes *in. */
static bool trace_open(wl_trace_t *t, size_t allocations, uint64_t seed, fma_table_t *tb, wl_fma_info_t *in)
{
    memset(in, 0, sizeof *in);
    memset(t, 0, sizeof *t);
    if (allocations == 0) {
        return false;
    }
    t->ops = malloc(2u * allocations * sizeof *t->ops);
    *tb = (fma_table_t){calloc(WL_FMA_TABLE, sizeof(uint32_t)),
                        malloc(WL_FMA_TABLE * sizeof(uint32_t)),
                        malloc(WL_FMA_TABLE * sizeof(uint32_t)),
                        malloc(WL_FMA_TABLE * sizeof(uint32_t)),
                        0,
                        0};
    if (t->ops == NULL || tb->size == NULL || tb->empty == NULL || tb->live == NULL || tb->pos == NULL) {
        free(t->ops), table_free(tb);
        t->ops = NULL;
        return false;
    }
    t->seed = seed;
    t->slots = WL_FMA_TABLE;
    t->measured = SIZE_MAX;
    table_clear(tb);
    return true;
}

/* The table overflows: every tracked block freed first, in table order (frees in the trace, like
 * any other). */
static void table_overflow(wl_trace_t *t, fma_table_t *tb, wl_fma_info_t *in)
{
    in->overflows++;
    for (uint32_t s = 0; s < WL_FMA_TABLE; s++) {
        t->ops[t->nops++] = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
        t->nfree++;
        in->overflow_frees++;
    }
    table_clear(tb);
}

/* A malloc of sz bytes into the most recently emptied entry (the table is not full). */
static void emit_malloc(wl_trace_t *t, fma_table_t *tb, wl_fma_info_t *in, uint64_t *live_bytes, uint32_t sz,
                        unsigned cls)
{
    uint32_t s = tb->empty[--tb->nempty];
    t->ops[t->nops++] = (wl_op_t){.slot = s, .size = sz, .kind = WL_MALLOC};
    table_fill(tb, s, sz);
    *live_bytes += sz;
    t->peak_live = *live_bytes > t->peak_live ? *live_bytes : t->peak_live;
    t->nmalloc++;
    in->per_class[cls]++;
    in->max_live = tb->nlive > in->max_live ? tb->nlive : in->max_live;
}

/* A free of entry s (live). */
static void emit_free(wl_trace_t *t, fma_table_t *tb, wl_fma_info_t *in, uint64_t *live_bytes, uint32_t s)
{
    t->ops[t->nops++] = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
    *live_bytes -= tb->size[s];
    table_empty(tb, s);
    t->nfree++;
    in->releases++;
}

static void trace_close(wl_trace_t *t, fma_table_t *tb, wl_fma_info_t *in)
{
    t->peak_inuse = t->peak_live;
    in->allocations = t->nmalloc;
    table_free(tb);
}

bool wl_fma(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, wl_fma_release_t release, uint64_t seed,
            wl_fma_info_t *info)
{
    if (release == WL_FMA_BURST) {
        return wl_fma_burst(t, allocations, sizes, seed, info, NULL, 0);
    }
    wl_fma_info_t local;
    wl_fma_info_t *in = info != NULL ? info : &local;
    fma_table_t tb;
    if (!trace_open(t, allocations, seed, &tb, in)) {
        return false;
    }
    snprintf(t->name, sizeof t->name, "fma");
    snprintf(t->params, sizeof t->params,
             "FMA 1998: %zu allocations, table %u, sizes %s, request 1/2, release by %s, "
             "xorshift64* seed %llu",
             allocations, (unsigned)WL_FMA_TABLE, wl_fma_sizes_name(sizes), wl_fma_release_name(release),
             (unsigned long long)seed);
    uint64_t x = seed != 0 ? seed : 1u;
    uint64_t live_bytes = 0;
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
            emit_free(t, &tb, in, &live_bytes, s);
            continue;
        }
        if (tb.nempty == 0) {
            table_overflow(t, &tb, in);
            live_bytes = 0;
        }
        unsigned cls = draw_class(&x);
        emit_malloc(t, &tb, in, &live_bytes, draw_in_class(&x, sizes, cls), cls);
    }
    trace_close(t, &tb, in);
    return true;
}

bool wl_fma_burst(wl_trace_t *t, size_t allocations, wl_fma_sizes_t sizes, uint64_t seed, wl_fma_info_t *info,
                  wl_fma_phase_t *phases, size_t cap)
{
    wl_fma_info_t local;
    wl_fma_info_t *in = info != NULL ? info : &local;
    fma_table_t tb;
    if (!trace_open(t, allocations, seed, &tb, in)) {
        return false;
    }
    snprintf(t->name, sizeof t->name, "fma-burst");
    snprintf(t->params, sizeof t->params,
             "FMA bursts: %zu allocations, table %u, B in [%u, %u], R in [0, E], sizes %s, "
             "xorshift64* seed %llu",
             allocations, (unsigned)WL_FMA_TABLE, (unsigned)WL_FMA_BURST_MIN, (unsigned)WL_FMA_BURST_MAX,
             wl_fma_sizes_name(sizes), (unsigned long long)seed);
    uint64_t x = seed != 0 ? seed : 1u;
    uint64_t live_bytes = 0;
    while (t->nmalloc < allocations) {
        unsigned cls = draw_class(&x);
        uint32_t b = WL_FMA_BURST_MIN + (uint32_t)(wl_rand(&x) % (uint32_t)(WL_FMA_BURST_MAX - WL_FMA_BURST_MIN + 1));
        /* Invariant of the phase: live[0 .. e) are its earlier blocks still live, its own after. */
        uint32_t e = tb.nlive;
        uint32_t r = (uint32_t)(wl_rand(&x) % ((uint64_t)e + 1u));
        if (phases != NULL && in->bursts < cap) {
            phases[in->bursts] = (wl_fma_phase_t){.op = t->nops, .cls = cls, .blocks = b, .earlier = e, .release = r};
        }
        in->bursts++;
        uint32_t owed = 0; /* releases made or missed so far */
        /* at most B requests, each followed by at most R releases in all: bounded by B + R */
        for (uint32_t i = 1; i <= b && t->nmalloc < allocations; i++) {
            if (tb.nempty == 0) {
                table_overflow(t, &tb, in);
                live_bytes = 0;
                e = 0;
            }
            emit_malloc(t, &tb, in, &live_bytes, draw_in_class(&x, sizes, cls), cls);
            uint32_t due = (uint32_t)((uint64_t)r * i / b);
            for (; owed < due; owed++) {
                if (e == 0) { /* an overflow freed them */
                    in->misses++;
                    continue;
                }
                /* an earlier block, moved to the prefix's end, then to the array's end, then out */
                uint32_t k = (uint32_t)(wl_rand(&x) % e);
                table_swap(&tb, k, e - 1u);
                table_swap(&tb, e - 1u, tb.nlive - 1u);
                e--;
                emit_free(t, &tb, in, &live_bytes, tb.live[tb.nlive - 1u]);
            }
        }
    }
    trace_close(t, &tb, in);
    return true;
}
