/*
 * tests/wl_fma.c -- the benchmark's generator of the FMA article's test program (bench/wl_fma.c),
 * compiled in directly (issue 5 item 7; no clock, no allocator):
 *   - same seed, same trace; another seed, another; a shorter run is a prefix of a longer one;
 *   - the trace is consistent with its table: a malloc fills an empty entry, a free empties a full
 *     one, never more than 5000 blocks tracked, exactly the run's number of mallocs;
 *   - an overflow is exactly 5000 frees in table order when the table is full, then a malloc, and
 *     their number is the info's; overflows happen in 60,000-allocation runs (the release model of
 *     wl_fma.h: a random index, nothing when empty), none in 1,000;
 *   - release by live block (the comparison reading): the same consistency, no overflow;
 *   - sizes: exact = the class sizes; uniform = within (previous class, class], every class used,
 *     the class frequencies of Table 1 within 1 percentage point over 60,000 requests.
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
        if (a->ops[i].kind != b->ops[i].kind || a->ops[i].slot != b->ops[i].slot ||
            a->ops[i].size != b->ops[i].size) {
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
    TL_CHECK(s.nops < a.nops && same_ops(&s, &a, s.nops),
             "the 1,000 run is a prefix of the 20,000 run");
    wl_trace_t e;
    TL_REQUIRE(wl_fma(&e, 20000, WL_FMA_EXACT, WL_FMA_RELEASE_INDEX, 7, NULL), "exact trace");
    bool same_but_sizes = e.nops == a.nops;
    for (size_t i = 0; same_but_sizes && i < a.nops; i++) {
        same_but_sizes = a.ops[i].kind == e.ops[i].kind && a.ops[i].slot == e.ops[i].slot &&
                         (a.ops[i].kind == WL_FREE || class_of(a.ops[i].size) == e.ops[i].size);
    }
    TL_CHECK(same_but_sizes,
             "exact and uniform sizes: the same ops, each exact size the class of the uniform one");
    wl_release(&e);
    wl_trace_t z;
    TL_CHECK(!wl_fma(&z, 0, WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX, 7, NULL),
             "0 allocations refused");
    wl_release(&a), wl_release(&b), wl_release(&c), wl_release(&s);
    return true;
}

/* Replays t against a model of the table; checks every op and the overflows. */
static bool check_trace(const wl_trace_t *t, const wl_fma_info_t *info, size_t allocations,
                        wl_fma_sizes_t sizes)
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
                TL_CHECK(i + j < t->nops && t->ops[i + j].kind == WL_MALLOC,
                         "an overflow ends with the malloc");
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
    TL_CHECK(bad_size == 0, "%zu sizes outside their class (%s)", bad_size,
             wl_fma_sizes_name(sizes));
    TL_CHECK(mallocs == allocations && t->nmalloc == allocations &&
                 info->allocations == allocations,
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
                    TL_REQUIRE(wl_fma(&t, lengths[k], (wl_fma_sizes_t)mode, (wl_fma_release_t)rel,
                                      seed, &info),
                               "trace");
                    check_trace(&t, &info, lengths[k], (wl_fma_sizes_t)mode);
                    if (lengths[k] == 1000 || rel == WL_FMA_RELEASE_LIVE) {
                        /* release by live block: a random walk of a few hundred blocks */
                        TL_CHECK(info.overflows == 0,
                                 "no overflow in %zu allocations (seed %llu, release by %s)",
                                 lengths[k], (unsigned long long)seed,
                                 wl_fma_release_name((wl_fma_release_t)rel));
                    } else {
                        overflows_60k += info.overflows;
                        TL_CHECK(info.overflows >= 1,
                                 "the table overflows in 60,000 allocations (seed %llu)",
                                 (unsigned long long)seed);
                    }
                    if (lengths[k] == 60000) {
                        /* Table 1's frequencies: within 1 percentage point (about 5 sd) */
                        for (unsigned c = 0; c < WL_FMA_CLASSES; c++) {
                            double pct = 100.0 * (double)info.per_class[c] / 60000.0;
                            double want = (double)wl_fma_class_percent[c];
                            TL_CHECK(pct > want - 1.0 && pct < want + 1.0,
                                     "class %u bytes: %.2f %% of requests, want %.0f",
                                     wl_fma_class_size[c], pct, want);
                        }
                    }
                    wl_release(&t);
                }
            }
        }
    }
    printf("overflows in 60,000 allocations, release by index, seeds 1..5, both size modes: %zu\n",
           overflows_60k);
    unsigned sum = 0;
    for (unsigned c = 0; c < WL_FMA_CLASSES; c++) {
        sum += wl_fma_class_percent[c];
        TL_CHECK(wl_fma_class_size[c] == 16u << c, "class %u is %u bytes", c, 16u << c);
    }
    TL_CHECK(sum == 100, "Table 1 sums to 100 %%");
    return true;
}

int main(void)
{
    test_determinism();
    test_traces();
    return tl_summary("wl_fma");
}
