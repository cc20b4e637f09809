/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/wl_fma.c -- the benchmark's generator of the FMA article's test program (bench/wl_fma.c),
 * compiled in directly (no clock, no allocator):
 *   - same seed, same trace; another seed, another; a shorter run is a prefix of a longer one;
 *   - the trace is consistent with its table: a malloc fills an empty entry, a free empties a full
 *     one, never more than 5000 blocks tracked, exactly the run's number of mallocs;
 *   - an overflow is exactly 5000 frees in table order when the table is full, then a malloc, and
 *     their number is the info's; overflows happen in 60,000-allocation runs (the release model of
 *     wl_fma.h: a random index, nothing when empty), none in 1,000;
 *   - release by live block (the comparison reading): the same consistency, no overflow;
 *   - sizes: exact = the class sizes; uniform = within (previous class, class], every class used,
 *     the class frequencies of Table 1 within 1 percentage point over 60,000 requests;
 *   - the burst program (beyond the article; wl_fma_burst): same seed, same trace, another seed
 *     another, a shorter run a prefix of a longer one, exact and uniform the same ops, wl_fma with
 *     WL_FMA_BURST the same trace; the table's consistency as above; every phase as recorded: its
 *     mallocs exactly B (the last phase at most B) of its one class, B in [50, 500], E the blocks
 *     live when it began, its frees R (<= E) blocks allocated before it, none of its own; over
 *     20 seeds the phases' classes follow Table 1 (within 3 points), B covers [50, 500] (mean
 *     within 10 of 275).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "wl_fma.h"

static bool same_ops(const wl_trace_t *a, const wl_trace_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a->ops[i].kind != b->ops[i].kind || a->ops[i].slot != b->ops[i].slot || a->ops[i].size != b->ops[i].size) {
            return false;
        }
    }
    return true;
}

/* The Table 1 class a size falls in (its upper limit). */
static uint32_t class_of(uint32_t size)
{
    unsigned c = 0;
    while (c + 1u < WL_FMA_CLASSES && size > wl_fma_class_size[c]) {
        c++;
    }
    return wl_fma_class_size[c];
}

static bool test_determinism(void)
{
    wl_trace_t a, b, c, s;
    TL_REQUIRE(wl_fma(&a, 20000, WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX, 7, NULL) &&
                   wl_fma(&b, 20000, WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX, 7, NULL) &&
                   wl_fma(&c, 20000, WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX, 8, NULL) &&
                   wl_fma(&s, 1000, WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX, 7, NULL),
               "traces generated");
    TL_CHECK(a.nops == b.nops && same_ops(&a, &b, a.nops), "same seed, same trace");
    TL_CHECK(a.nops != c.nops || !same_ops(&a, &c, a.nops), "another seed, another trace");
    TL_CHECK(s.nops < a.nops && same_ops(&s, &a, s.nops), "the 1,000 run is a prefix of the 20,000 run");
    wl_trace_t e;
    TL_REQUIRE(wl_fma(&e, 20000, WL_FMA_EXACT, WL_FMA_RELEASE_INDEX, 7, NULL), "exact trace");
    bool same_but_sizes = e.nops == a.nops;
    for (size_t i = 0; same_but_sizes && i < a.nops; i++) {
        same_but_sizes = a.ops[i].kind == e.ops[i].kind && a.ops[i].slot == e.ops[i].slot &&
                         (a.ops[i].kind == WL_FREE || class_of(a.ops[i].size) == e.ops[i].size);
    }
    TL_CHECK(same_but_sizes, "exact and uniform sizes: the same ops, each exact size the class of the uniform one");
    wl_release(&e);
    wl_trace_t z;
    TL_CHECK(!wl_fma(&z, 0, WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX, 7, NULL), "0 allocations refused");
    wl_release(&a), wl_release(&b), wl_release(&c), wl_release(&s);
    return true;
}

/* Replays t against a model of the table; checks every op and the overflows. */
static bool check_trace(const wl_trace_t *t, const wl_fma_info_t *info, size_t allocations, wl_fma_sizes_t sizes)
{
    uint32_t *size = calloc(WL_FMA_TABLE, sizeof *size);
    TL_REQUIRE(size != NULL, "memory");
    size_t live = 0, mallocs = 0, frees = 0, overflows = 0, bad = 0, bad_size = 0, max_live = 0;
    size_t per_class[WL_FMA_CLASSES] = {0};
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        if (op->slot >= WL_FMA_TABLE) {
            bad++;
            continue;
        }
        if (op->kind == WL_MALLOC) {
            bad += size[op->slot] != 0 || live == WL_FMA_TABLE;
            unsigned c = 0;
            while (c + 1u < WL_FMA_CLASSES && op->size > wl_fma_class_size[c]) {
                c++;
            }
            uint32_t lo = c == 0 ? 1u : wl_fma_class_size[c - 1u] + 1u;
            bad_size += sizes == WL_FMA_EXACT ? op->size != wl_fma_class_size[c]
                                              : op->size < lo || op->size > wl_fma_class_size[c];
            per_class[c]++;
            size[op->slot] = op->size;
            live++;
            mallocs++;
            max_live = live > max_live ? live : max_live;
            continue;
        }
        bad += size[op->slot] == 0;
        if (live == WL_FMA_TABLE && op->slot == 0) {
            /* an overflow: 5000 frees in table order, then a malloc */
            size_t j = 0;
            while (j < WL_FMA_TABLE && i + j < t->nops && t->ops[i + j].kind == WL_FREE &&
                   t->ops[i + j].slot == (uint32_t)j) {
                j++;
            }
            if (j == WL_FMA_TABLE) {
                overflows++;
                TL_CHECK(i + j < t->nops && t->ops[i + j].kind == WL_MALLOC, "an overflow ends with the malloc");
                memset(size, 0, WL_FMA_TABLE * sizeof *size);
                live = 0;
                frees += WL_FMA_TABLE;
                i += j - 1u;
                continue;
            }
        }
        size[op->slot] = 0;
        live--;
        frees++;
    }
    TL_CHECK(bad == 0, "%zu ops against the table's state", bad);
    TL_CHECK(bad_size == 0, "%zu sizes outside their class (%s)", bad_size, wl_fma_sizes_name(sizes));
    TL_CHECK(mallocs == allocations && t->nmalloc == allocations && info->allocations == allocations,
             "%zu mallocs for a run of %zu", mallocs, allocations);
    TL_CHECK(frees == t->nfree && mallocs + frees == t->nops, "op counts");
    TL_CHECK(overflows == info->overflows && info->overflow_frees == WL_FMA_TABLE * overflows,
             "overflows: %zu seen, %zu reported", overflows, info->overflows);
    TL_CHECK(max_live == info->max_live && max_live <= WL_FMA_TABLE, "max live %zu", max_live);
    for (unsigned c = 0; c < WL_FMA_CLASSES; c++) {
        TL_CHECK(per_class[c] == info->per_class[c], "class %u count", c);
    }
    free(size);
    return true;
}

static bool test_traces(void)
{
    static const size_t lengths[] = {1000, 60000};
    size_t overflows_60k = 0;
    for (int rel = 0; rel < 2; rel++) {
        for (int mode = 0; mode < 2; mode++) {
            for (size_t k = 0; k < 2; k++) {
                for (uint64_t seed = 1; seed <= 5; seed++) {
                    wl_trace_t t;
                    wl_fma_info_t info;
                    TL_REQUIRE(wl_fma(&t, lengths[k], (wl_fma_sizes_t)mode, (wl_fma_release_t)rel, seed, &info),
                               "trace");
                    check_trace(&t, &info, lengths[k], (wl_fma_sizes_t)mode);
                    if (lengths[k] == 1000 || rel == WL_FMA_RELEASE_LIVE) {
                        /* release by live block: a random walk of a few hundred blocks */
                        TL_CHECK(info.overflows == 0, "no overflow in %zu allocations (seed %llu, release by %s)",
                                 lengths[k], (unsigned long long)seed, wl_fma_release_name((wl_fma_release_t)rel));
                    } else {
                        overflows_60k += info.overflows;
                        TL_CHECK(info.overflows >= 1, "the table overflows in 60,000 allocations (seed %llu)",
                                 (unsigned long long)seed);
                    }
                    if (lengths[k] == 60000) {
                        /* Table 1's frequencies: within 1 percentage point (about 5 sd) */
                        for (unsigned c = 0; c < WL_FMA_CLASSES; c++) {
                            double pct = 100.0 * (double)info.per_class[c] / 60000.0;
                            double want = (double)wl_fma_class_percent[c];
                            TL_CHECK(pct > want - 1.0 && pct < want + 1.0,
                                     "class %u bytes: %.2f %% of requests, want %.0f", wl_fma_class_size[c], pct, want);
                        }
                    }
                    wl_release(&t);
                }
            }
        }
    }
    printf("overflows in 60,000 allocations, release by index, seeds 1..5, both size modes: %zu\n", overflows_60k);
    unsigned sum = 0;
    for (unsigned c = 0; c < WL_FMA_CLASSES; c++) {
        sum += wl_fma_class_percent[c];
        TL_CHECK(wl_fma_class_size[c] == 16u << c, "class %u is %u bytes", c, 16u << c);
    }
    TL_CHECK(sum == 100, "Table 1 sums to 100 %%");
    return true;
}

static bool test_burst_determinism(void)
{
    wl_trace_t a, b, c, s, e, w;
    TL_REQUIRE(wl_fma_burst(&a, 20000, WL_FMA_UNIFORM, 7, NULL, NULL, 0) &&
                   wl_fma_burst(&b, 20000, WL_FMA_UNIFORM, 7, NULL, NULL, 0) &&
                   wl_fma_burst(&c, 20000, WL_FMA_UNIFORM, 8, NULL, NULL, 0) &&
                   wl_fma_burst(&s, 1000, WL_FMA_UNIFORM, 7, NULL, NULL, 0) &&
                   wl_fma_burst(&e, 20000, WL_FMA_EXACT, 7, NULL, NULL, 0) &&
                   wl_fma(&w, 20000, WL_FMA_UNIFORM, WL_FMA_BURST, 7, NULL),
               "burst traces generated");
    TL_CHECK(a.nops == b.nops && same_ops(&a, &b, a.nops), "bursts: same seed, same trace");
    TL_CHECK(a.nops != c.nops || !same_ops(&a, &c, a.nops), "bursts: another seed, another trace");
    TL_CHECK(s.nops < a.nops && same_ops(&s, &a, s.nops), "bursts: the 1,000 run is a prefix of the 20,000 run");
    TL_CHECK(w.nops == a.nops && same_ops(&w, &a, a.nops), "bursts: wl_fma(WL_FMA_BURST) is wl_fma_burst");
    bool same_but_sizes = e.nops == a.nops;
    for (size_t i = 0; same_but_sizes && i < a.nops; i++) {
        same_but_sizes = a.ops[i].kind == e.ops[i].kind && a.ops[i].slot == e.ops[i].slot &&
                         (a.ops[i].kind == WL_FREE || class_of(a.ops[i].size) == e.ops[i].size);
    }
    TL_CHECK(same_but_sizes, "bursts: exact and uniform sizes, the same ops");
    wl_trace_t z;
    TL_CHECK(!wl_fma_burst(&z, 0, WL_FMA_UNIFORM, 7, NULL, NULL, 0), "bursts: 0 allocations refused");
    wl_release(&a), wl_release(&b), wl_release(&c), wl_release(&s), wl_release(&e), wl_release(&w);
    return true;
}

/* Every phase of a burst trace against its record: the mallocs between its first op and the next
 * phase's are B (the last phase: at most B) of its class; its frees are of blocks allocated before
 * it began, R of them unless an overflow took the earlier blocks (then R - misses). */
static bool check_phases(const wl_trace_t *t, const wl_fma_info_t *info, const wl_fma_phase_t *ph, size_t nph)
{
    /* born[s]: the phase that allocated the block in entry s, + 1 (0: empty) */
    size_t *born = calloc(WL_FMA_TABLE, sizeof *born);
    TL_REQUIRE(born != NULL, "memory");
    size_t live = 0, bad_class = 0, bad_len = 0, bad_free = 0, bad_earlier = 0, bad_count = 0;
    size_t overflow_frees = 0;
    for (size_t p = 0; p < nph; p++) {
        size_t end = p + 1u < nph ? ph[p + 1u].op : t->nops;
        bad_earlier += ph[p].earlier != live;
        bad_len += ph[p].blocks < WL_FMA_BURST_MIN || ph[p].blocks > WL_FMA_BURST_MAX;
        bad_count += ph[p].release > ph[p].earlier;
        size_t mallocs = 0, frees = 0;
        for (size_t i = ph[p].op; i < end; i++) {
            const wl_op_t *op = &t->ops[i];
            if (op->kind == WL_MALLOC) {
                bad_class += class_of(op->size) != wl_fma_class_size[ph[p].cls];
                born[op->slot] = p + 1u;
                live++;
                mallocs++;
            } else if (live == WL_FMA_TABLE && op->slot == 0 && i + WL_FMA_TABLE <= end) {
                /* an overflow (check_trace checks its shape): the table emptied */
                memset(born, 0, WL_FMA_TABLE * sizeof *born);
                overflow_frees += WL_FMA_TABLE;
                live = 0;
                i += WL_FMA_TABLE - 1u;
            } else {
                bad_free += born[op->slot] == 0 || born[op->slot] == p + 1u;
                born[op->slot] = 0;
                live--;
                frees++;
            }
        }
        bool last = p + 1u == nph;
        bad_len += last ? mallocs > ph[p].blocks : mallocs != ph[p].blocks;
        bad_count += !last && info->overflows == 0 && frees != ph[p].release;
    }
    TL_CHECK(bad_len == 0, "%zu phases whose burst length is off (B in [%d, %d])", bad_len, WL_FMA_BURST_MIN,
             WL_FMA_BURST_MAX);
    TL_CHECK(bad_class == 0, "%zu mallocs outside their phase's class", bad_class);
    TL_CHECK(bad_free == 0, "%zu frees of a block not allocated before the phase", bad_free);
    TL_CHECK(bad_earlier == 0, "%zu phases whose E is not the live count", bad_earlier);
    TL_CHECK(bad_count == 0, "%zu phases whose release count is off", bad_count);
    TL_CHECK(overflow_frees == info->overflow_frees, "bursts: overflow frees");
    free(born);
    return true;
}

static bool test_bursts(void)
{
    static const size_t lengths[] = {1000, 60000};
    enum { CAP = 2000 };
    wl_fma_phase_t *ph = malloc(CAP * sizeof *ph);
    TL_REQUIRE(ph != NULL, "memory");
    size_t phases = 0, per_class[WL_FMA_CLASSES] = {0}, max_live = 0;
    uint32_t bmin = UINT32_MAX, bmax = 0;
    double bsum = 0.0;
    for (int mode = 0; mode < 2; mode++) {
        for (size_t k = 0; k < 2; k++) {
            for (uint64_t seed = 1; seed <= 20; seed++) {
                wl_trace_t t;
                wl_fma_info_t info;
                TL_REQUIRE(wl_fma_burst(&t, lengths[k], (wl_fma_sizes_t)mode, seed, &info, ph, CAP), "burst trace");
                TL_REQUIRE(info.bursts <= CAP, "phases recorded");
                check_trace(&t, &info, lengths[k], (wl_fma_sizes_t)mode);
                check_phases(&t, &info, ph, info.bursts);
                max_live = info.max_live > max_live ? info.max_live : max_live;
                if (lengths[k] == 60000 && mode == WL_FMA_UNIFORM) {
                    for (size_t p = 0; p + 1u < info.bursts; p++) { /* the last may be cut short */
                        per_class[ph[p].cls]++;
                        bmin = ph[p].blocks < bmin ? ph[p].blocks : bmin;
                        bmax = ph[p].blocks > bmax ? ph[p].blocks : bmax;
                        bsum += ph[p].blocks;
                        phases++;
                    }
                }
                wl_release(&t);
            }
        }
    }
    TL_REQUIRE(phases > 1000, "%zu phases", phases);
    double mean = bsum / (double)phases;
    TL_CHECK(bmin < WL_FMA_BURST_MIN + 10 && bmax > WL_FMA_BURST_MAX - 10 && mean > 265.0 && mean < 285.0,
             "burst lengths %u..%u, mean %.1f, want [50, 500], mean 275", bmin, bmax, mean);
    for (unsigned c = 0; c < WL_FMA_CLASSES; c++) {
        double pct = 100.0 * (double)per_class[c] / (double)phases;
        double want = (double)wl_fma_class_percent[c];
        TL_CHECK(pct > want - 3.0 && pct < want + 3.0, "bursts of %u bytes: %.2f %% of phases, want %.0f",
                 wl_fma_class_size[c], pct, want);
    }
    printf("bursts, 60,000 allocations, seeds 1..20: %zu phases, B %u..%u (mean %.1f), most live "
           "%zu\n",
           phases, bmin, bmax, mean, max_live);
    free(ph);
    return true;
}

int main(void)
{
    test_determinism();
    test_traces();
    test_burst_determinism();
    test_bursts();
    return tl_summary("wl_fma");
}
