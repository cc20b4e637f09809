/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/workload.c -- the benchmark's Masmano workload generator (bench/workload.c) and the
 * fragmentation factor (bench/frag.c), compiled in directly:
 *   - same seed, same task set and same trace; another seed, another trace;
 *   - task-set parameters in the paper's ranges for Tests 1-3 (task count, periods, g, requests
 *     per period, holding bounds), request sizes near g / n, holding times in [30 .. h_i];
 *   - the trace is consistent: every free empties a live slot, live bytes match the sizes;
 *   - immediate deallocation frees each block exactly when its holding time ends; delayed
 *     deallocation frees only blocks past their holding time, only at multiples of the
 *     deallocation period, and all of them at the first such multiple;
 *   - F = 50 % on a constructed trace (peak live 1000 bytes) against a fake allocator whose
 *     watermark is 1500, and the system-peer approximation on a fake heap;
 *   - wl_paths (doc/performance.md): each scenario's measured ops lie at odd indices and only there carry
 *     an expected path, slots are used consistently, and replayed plainly on every boundary-tag
 *     heap of the registry each measured free takes its path (bench/harness/paths.c); each
 *     measured malloc too on tlsf with the 64-bit layout the sizes were chosen for (A = 16).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frag.h"
#include "paths.h"
#include "rtalloc/heap.h"
#include "rtalloc/registry.h"
#include "testlib.h"
#include "workload.h"

static bool same_trace(const wl_trace_t *a, const wl_trace_t *b)
{
    if (a->nops != b->nops || a->slots != b->slots || a->peak_live != b->peak_live) {
        return false;
    }
    for (size_t i = 0; i < a->nops; i++) {
        if (a->ops[i].kind != b->ops[i].kind || a->ops[i].slot != b->ops[i].slot || a->ops[i].size != b->ops[i].size ||
            a->time[i] != b->time[i] || a->live[i] != b->live[i]) {
            return false;
        }
    }
    return true;
}

static bool test_determinism(void)
{
    wl_mm_taskset_t s1, s2, s3;
    TL_REQUIRE(wl_mm_taskset(&s1, 3, 77) && wl_mm_taskset(&s2, 3, 77) && wl_mm_taskset(&s3, 3, 78), "task sets drawn");
    TL_CHECK(memcmp(&s1, &s2, sizeof s1) == 0, "same seed, same task set");
    TL_CHECK(memcmp(&s1.task, &s3.task, sizeof s1.task) != 0, "another seed, another task set");
    wl_trace_t a, b, c;
    TL_REQUIRE(wl_masmano(&a, &s1, 5000, 0, 5), "trace a");
    TL_REQUIRE(wl_masmano(&b, &s2, 5000, 0, 5), "trace b");
    TL_REQUIRE(wl_masmano(&c, &s1, 5000, 0, 6), "trace c");
    TL_CHECK(same_trace(&a, &b), "same seeds, identical trace (%zu ops)", a.nops);
    TL_CHECK(!same_trace(&a, &c), "another simulation seed, another trace");
    TL_CHECK(a.nmalloc == 5000, "stops after the mallocs asked for: %zu", a.nmalloc);
    wl_release(&a), wl_release(&b), wl_release(&c);
    uint64_t x = 9, y = 9;
    bool same = true;
    double sum = 0, sq = 0;
    for (int i = 0; i < 20000; i++) {
        double v = wl_normal(&x);
        same &= v == wl_normal(&y);
        TL_REQUIRE(v >= -6.0 && v <= 6.0, "normal variate in [-6, 6]: %g", v);
        sum += v, sq += v * v;
    }
    TL_CHECK(same, "wl_normal deterministic");
    double mean = sum / 20000.0, var = sq / 20000.0 - mean * mean;
    TL_CHECK(mean > -0.05 && mean < 0.05 && var > 0.9 && var < 1.1, "normal: mean %g, variance %g", mean, var);
    return true;
}

/* Ranges, for every test and a few seeds. */
static bool test_ranges(void)
{
    for (unsigned test = 1; test <= 4; test++) {
        uint32_t glo = 0, ghi = 0;
        TL_REQUIRE(wl_mm_grange(test, &glo, &ghi), "range of test %u", test);
        static const uint32_t paper_lo[] = {0, 2048, 8, 8, 8}, paper_hi[] = {0, 20480, 1024, 20480, 20480};
        TL_CHECK(glo == paper_lo[test] && ghi == paper_hi[test], "test %u: g in [%u..%u]", test, glo, ghi);
        uint32_t tmin = 99, tmax = 0, gseen_lo = UINT32_MAX, gseen_hi = 0;
        for (uint64_t seed = 1; seed <= 200; seed++) {
            wl_mm_taskset_t ts;
            TL_REQUIRE(wl_mm_taskset(&ts, test, seed), "task set");
            TL_CHECK(ts.ntasks >= 3 && ts.ntasks <= 10, "tasks %u", ts.ntasks);
            tmin = ts.ntasks < tmin ? ts.ntasks : tmin;
            tmax = ts.ntasks > tmax ? ts.ntasks : tmax;
            for (uint32_t i = 0; i < ts.ntasks; i++) {
                const wl_mm_task_t *k = &ts.task[i];
                TL_CHECK(k->period >= 10 && k->period <= 150, "period %u", k->period);
                TL_CHECK(k->gmax >= glo && k->gmax <= ghi, "test %u: g %u", test, k->gmax);
                TL_CHECK(k->nreq >= 2 && k->nreq <= 5, "requests %u", k->nreq);
                TL_CHECK(k->hmax >= 30 && k->hmax <= 50, "holding bound %u", k->hmax);
                TL_CHECK(k->period >= ts.pmin && k->period <= ts.pmax, "pmin/pmax");
                gseen_lo = k->gmax < gseen_lo ? k->gmax : gseen_lo;
                gseen_hi = k->gmax > gseen_hi ? k->gmax : gseen_hi;
            }
        }
        TL_CHECK(tmin == 3 && tmax == 10, "test %u: task counts cover 3..10: %u..%u", test, tmin, tmax);
        TL_CHECK(gseen_lo < glo + (ghi - glo) / 10u && gseen_hi > ghi - (ghi - glo) / 10u,
                 "test %u: g spreads over its range: %u..%u", test, gseen_lo, gseen_hi);
    }
    TL_CHECK(!wl_mm_grange(5, &(uint32_t){0}, &(uint32_t){0}), "no test 5");
    return true;
}

/* Replays the trace's bookkeeping: slots, live bytes, sizes, holding times. Immediate or delayed. */
static bool check_trace(const wl_trace_t *t, const wl_mm_taskset_t *ts)
{
    uint32_t *mal = malloc(t->slots * sizeof *mal); /* the malloc op of each live slot */
    unsigned char *used = calloc(t->slots, 1);
    TL_REQUIRE(mal != NULL && used != NULL, "memory");
    uint64_t live = 0, peak = 0;
    uint32_t P = t->dealloc_period;
    bool ok = true;
    for (size_t i = 0; i < t->nops && ok; i++) {
        const wl_op_t *op = &t->ops[i];
        ok &= TL_CHECK(op->slot < t->slots, "slot %u < %u", op->slot, t->slots);
        ok &= TL_CHECK(i == 0 || t->time[i] >= t->time[i - 1], "time never goes back");
        if (op->kind == WL_MALLOC) {
            ok &= TL_CHECK(!used[op->slot], "op %zu: malloc into an empty slot", i);
            used[op->slot] = 1;
            mal[op->slot] = (uint32_t)i;
            live += op->size;
            uint32_t hold = t->expire[i] - t->time[i];
            ok &= TL_CHECK(hold >= 30 && hold <= 50, "holding time %u", hold);
            /* the malloc belongs to a task released now whose size and holding bound fit */
            bool fits = false;
            for (uint32_t k = 0; k < ts->ntasks; k++) {
                const wl_mm_task_t *tk = &ts->task[k];
                double mean = (double)tk->gmax / tk->nreq;
                fits |= t->time[i] % tk->period == 0 && hold <= tk->hmax && op->size >= 1 && op->size <= tk->gmax &&
                        (double)op->size <= mean * 1.6 + 1.0 && (double)op->size >= mean * 0.4 - 1.0;
            }
            ok &= TL_CHECK(fits, "op %zu: malloc(%u) at t=%u held %u fits a released task", i, op->size, t->time[i],
                           hold);
        } else {
            ok &= TL_CHECK(used[op->slot], "op %zu: free of a live slot", i);
            used[op->slot] = 0;
            size_t m = mal[op->slot];
            live -= t->ops[m].size;
            uint32_t exp = t->expire[m], now = t->time[i];
            if (P == 0) {
                ok &= TL_CHECK(now == exp, "immediate: freed at %u, holding ends %u", now, exp);
            } else {
                ok &= TL_CHECK(now >= exp, "delayed: freed at %u before its holding ends (%u)", now, exp);
                ok &= TL_CHECK(now % P == 0, "delayed: freed at %u, not a multiple of %u", now, P);
                ok &= TL_CHECK(now - exp < P, "delayed: freed at %u, a period late (ends %u, P %u)", now, exp, P);
            }
        }
        ok &= TL_CHECK(t->live[i] == live, "op %zu: live %llu, expected %llu", i, (unsigned long long)t->live[i],
                       (unsigned long long)live);
        peak = live > peak ? live : peak;
    }
    TL_CHECK(peak == t->peak_live, "peak live %llu == %llu", (unsigned long long)peak,
             (unsigned long long)t->peak_live);
    if (P == 0) {
        TL_CHECK(t->peak_inuse == t->peak_live, "immediate: in use == held");
    } else {
        TL_CHECK(t->peak_inuse <= t->peak_live, "delayed: in use <= held");
    }
    /* blocks still live at the end: not yet past holding time + period */
    uint32_t end = t->nops != 0 ? t->time[t->nops - 1u] : 0;
    for (uint32_t s = 0; s < t->slots; s++) {
        if (used[s]) {
            uint32_t exp = t->expire[mal[s]];
            if (P == 0) {
                ok &= TL_CHECK(exp > end, "immediate: block past its holding time left live (%u <= %u)", exp, end);
            } else {
                ok &=
                    TL_CHECK(exp + P > end, "delayed: a marked block missed the deallocation task (%u, %u)", exp, end);
            }
        }
    }
    free(mal);
    free(used);
    return ok;
}

static bool test_traces(void)
{
    for (unsigned test = 1; test <= 3; test++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            wl_mm_taskset_t ts;
            wl_trace_t t;
            TL_REQUIRE(wl_mm_taskset(&ts, test, seed * 31u + test), "task set");
            TL_REQUIRE(wl_masmano(&t, &ts, 3000, 0, seed), "trace");
            TL_CHECK(t.nmalloc == 3000 && t.dealloc_period == 0, "immediate trace");
            check_trace(&t, &ts);
            wl_release(&t);
        }
    }
    /* Test 4: one Test-3 task set, the deallocation period from the shortest task period to 10x
     * the longest; more memory is held the longer the period, never less in use. */
    wl_mm_taskset_t ts;
    TL_REQUIRE(wl_mm_taskset(&ts, 4, 4242), "task set 4");
    wl_trace_t ref;
    TL_REQUIRE(wl_masmano(&ref, &ts, 4000, 0, 17), "reference");
    const uint32_t periods[] = {ts.pmin, ts.pmax, 3u * ts.pmax, 10u * ts.pmax};
    uint64_t last = ref.peak_live;
    for (size_t i = 0; i < sizeof periods / sizeof periods[0]; i++) {
        wl_trace_t t;
        TL_REQUIRE(wl_masmano(&t, &ts, 4000, periods[i], 17), "delayed trace");
        TL_CHECK(t.dealloc_period == periods[i], "period recorded");
        check_trace(&t, &ts);
        TL_CHECK(t.peak_inuse == ref.peak_inuse, "P %u: the same blocks are in use as with immediate deallocation",
                 periods[i]);
        TL_CHECK(t.peak_live >= ref.peak_live, "P %u: delayed holds at least as much", periods[i]);
        TL_CHECK(i == 0 || t.peak_live + t.peak_live / 4u >= last, "P %u: held memory grows with the period",
                 periods[i]);
        bool mallocs_same = true;
        size_t j = 0;
        for (size_t k = 0; k < t.nops; k++) {
            if (t.ops[k].kind == WL_MALLOC) {
                while (ref.ops[j].kind != WL_MALLOC) {
                    j++;
                }
                mallocs_same &= ref.ops[j].size == t.ops[k].size && ref.time[j] == t.time[k];
                j++;
            }
        }
        TL_CHECK(mallocs_same, "P %u: the same mallocs at the same times as the reference", periods[i]);
        last = t.peak_live;
        wl_release(&t);
    }
    wl_release(&ref);
    return true;
}

/* --- F on a constructed trace ------------------------------------------------------------------ */

typedef struct fake {
    unsigned char mem[4096];
    size_t top;
    size_t capacity; /* system-style: what stats reports */
    size_t used;
} fake_t;

static fake_t fake_heap;

static void *fake_create(void *mem, size_t size)
{
    (void)size;
    memset(&fake_heap, 0, sizeof fake_heap);
    return mem;
}
static void *fake_malloc(void *h, size_t size)
{
    (void)h;
    if (fake_heap.top + size > sizeof fake_heap.mem) {
        return NULL;
    }
    void *p = fake_heap.mem + fake_heap.top;
    fake_heap.top += size;
    return p;
}
static void fake_free(void *h, void *p) { (void)h, (void)p; }
/* Instance style: the watermark is always 1500. */
static void fake_stats(void *h, rt_stats_t *s)
{
    (void)h;
    memset(s, 0, sizeof *s);
    s->watermark = 1500;
    s->peak_used = 1100;
}
/* System style: 200 bytes in use before the replay; 1700 after the second malloc, then 900. */
static void sys_stats(void *h, rt_stats_t *s)
{
    (void)h;
    memset(s, 0, sizeof *s);
    s->capacity = 1u << 20;
    s->used_bytes = fake_heap.top == 0 ? 200 : fake_heap.top <= 600 ? 900 : fake_heap.top <= 1000 ? 1700 : 900;
}

static bool test_factor(void)
{
    TL_CHECK(fr_factor(1500, 1000) == 50.0, "F(1500, 1000) = 50 %%: %g", fr_factor(1500, 1000));
    TL_CHECK(fr_factor(1000, 1000) == 0.0, "F(1000, 1000) = 0");
    TL_CHECK(fr_factor(5, 0) == 0.0, "F with no live memory: 0");

    /* malloc 600 (s0), malloc 400 (s1): live 1000; free s0: 400; malloc 300 (s0): 700; free s1. */
    wl_op_t ops[] = {
        {.slot = 0, .size = 600, .kind = WL_MALLOC}, {.slot = 1, .size = 400, .kind = WL_MALLOC},
        {.slot = 0, .size = 0, .kind = WL_FREE},     {.slot = 0, .size = 300, .kind = WL_MALLOC},
        {.slot = 1, .size = 0, .kind = WL_FREE},
    };
    wl_trace_t t;
    memset(&t, 0, sizeof t);
    t.ops = ops;
    t.nops = sizeof ops / sizeof ops[0];
    t.slots = 2;
    rt_allocator_t fake = {
        .name = "fake", .create = fake_create, .malloc = fake_malloc, .free = fake_free, .stats = fake_stats};
    static unsigned char buffer[64];
    void *h = fake.create(buffer, sizeof buffer);
    void *slots[2] = {NULL, NULL};
    uint64_t series[3] = {0, 0, 0};
    fr_result_t r;
    fr_replay(&fake, h, slots, &t, series, 3, NULL, &r);
    TL_CHECK(r.known && !r.approximated, "watermark known");
    TL_CHECK(r.peak_live == 1000, "peak live 1000: %llu", (unsigned long long)r.peak_live);
    TL_CHECK(r.peak_memory == 1500, "peak memory 1500: %llu", (unsigned long long)r.peak_memory);
    TL_CHECK(r.factor == 50.0, "F = 50 %%: %g", r.factor);
    TL_CHECK(r.done == 5 && r.failures == 0, "replayed");
    TL_CHECK(series[0] == 1500 && series[2] == 1500, "series");
    TL_CHECK(r.peak_used == 1100 && r.factor_used > 9.99 && r.factor_used < 10.01, "F from peak_used: %g",
             r.factor_used);

    /* Without stats: unknown. */
    rt_allocator_t blind = fake;
    blind.stats = NULL;
    h = blind.create(buffer, sizeof buffer);
    slots[0] = slots[1] = NULL;
    fr_replay(&blind, h, slots, &t, NULL, 0, NULL, &r);
    TL_CHECK(!r.known && r.factor == 0.0 && r.peak_live == 1000, "no stats: F unknown");

    /* System style: peak span 1700 - 200 in use before = 1500 -> 50 %. */
    rt_allocator_t sys = fake;
    sys.create = NULL;
    sys.stats = sys_stats;
    fake_create(NULL, 0);
    slots[0] = slots[1] = NULL;
    fr_replay(&sys, NULL, slots, &t, NULL, 0, NULL, &r);
    TL_CHECK(r.known && r.approximated, "system: approximated");
    TL_CHECK(r.peak_memory == 1500 && r.factor == 50.0, "system: peak %llu, F %g", (unsigned long long)r.peak_memory,
             r.factor);
    TL_CHECK(r.peak_used == 1500 && r.factor_used == 50.0, "system: peak used is the peak");
    return true;
}

/* One scenario replayed on a through the descriptor: every measured op classified (paths.h) and
 * checked, all of them when check_malloc, else the frees. */
static bool replay_paths(const rt_allocator_t *a, const wl_trace_t *t, size_t i, bool check_malloc)
{
    static unsigned char buffer[4u << 20];
    static void *slots[64];
    TL_REQUIRE(t->slots <= 64u, "paths %zu: %u slots", i, t->slots);
    memset(slots, 0, sizeof slots);
    void *h = a->create(buffer, sizeof buffer);
    TL_REQUIRE(h != NULL, "%s: create", a->name);
    for (size_t k = 0; k < t->nops; k++) {
        const wl_op_t *op = &t->ops[k];
        void *ptr = slots[op->slot];
        hp_pre_t pre;
        if (t->expect[k] != 0u) {
            hp_before(a, h, op, ptr, &pre);
        }
        if (op->kind == WL_MALLOC) {
            slots[op->slot] = a->malloc(h, op->size);
            TL_REQUIRE(slots[op->slot] != NULL, "%s, paths %zu op %zu: malloc(%u) failed", a->name, i, k, op->size);
        } else if (ptr != NULL) {
            a->free(h, ptr);
            slots[op->slot] = NULL;
        }
        if (t->expect[k] != 0u && (op->kind == WL_FREE || check_malloc)) {
            uint32_t got = hp_after(a, h, op, slots[op->slot], &pre);
            TL_CHECK(got == t->expect[k], "%s, %s, op %zu: expected %s with %u free blocks, got %s with %u", a->name,
                     wl_paths_name(i), k, wl_path_name(WL_EXPECT_PATH(t->expect[k])), WL_EXPECT_FREE(t->expect[k]),
                     wl_path_name(WL_EXPECT_PATH(got)), WL_EXPECT_FREE(got));
        }
    }
    return true;
}

static bool test_paths(void)
{
    TL_REQUIRE(wl_paths_count() > 0u && !wl_paths(&(wl_trace_t){0}, wl_paths_count()), "wl_paths: range");
    size_t nheaps = 0;
    const rt_allocator_t *const *all = rt_registry(&nheaps);
    for (size_t i = 0; i < wl_paths_count(); i++) {
        wl_trace_t t;
        TL_REQUIRE(wl_paths(&t, i), "wl_paths(%zu)", i);
        size_t measured = 0;
        bool layout = true;
        unsigned char live[64] = {0};
        for (size_t k = 0; k < t.nops; k++) {
            const wl_op_t *op = &t.ops[k];
            if (t.expect[k] != 0u) {
                measured++;
                layout = layout && (k & 1u) == 1u;
            }
            if (op->slot == t.slots - 1u) {
                layout = layout && op->kind == WL_FREE; /* the pad: never allocated */
                continue;
            }
            layout = layout && op->slot < 64u && (op->kind == WL_MALLOC) == (live[op->slot] == 0u);
            live[op->slot & 63u] = op->kind == WL_MALLOC;
        }
        TL_CHECK(layout, "paths %zu: measured ops at odd indices, slots consistent", i);
        TL_CHECK(measured == WL_PATHS_REPS, "paths %zu: %zu measured ops", i, measured);
        for (size_t k = 0; k < nheaps; k++) {
            if (hp_supported(all[k])) {
                bool malloc_too = RT_HEAP_ALIGN == 16u && sizeof(size_t) == 8u && strcmp(all[k]->name, "tlsf") == 0;
                replay_paths(all[k], &t, i, malloc_too);
            }
        }
        wl_release(&t);
    }
    return true;
}

int main(void)
{
    test_determinism();
    test_ranges();
    test_traces();
    test_factor();
    test_paths();
    return tl_summary("workload");
}
