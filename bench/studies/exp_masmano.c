/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_masmano.c -- experiment "masmano": Masmano et al. 2006, sections 3-4.
 *
 * The periodic task model of workload.h (wl_mm_taskset, wl_masmano), 10 seeds per test:
 *   - time runs, Tests 1-3: cycles per malloc and per free, each trace replayed twice on fresh
 *     instances and the per-op minimum kept (the driver's timed replay); Table 5 as avg / stdv /
 *     max / min over every call of the 10 seeds, beside the paper's;
 *   - fragmentation runs, Tests 1-3: F per seed (frag.h: the watermark). System peers, approximated:
 *     glibc replayed in a thread on an arena of its own, the span of its chunks; jemalloc and
 *     mimalloc in a private arena / heap, the peak of its pages sampled after every malloc
 *     (peers.h, bench_peer_private_open); noop left out;
 *     Table 7 as avg / stdv / max / min over the seeds, beside the paper's;
 *   - Test 4: one Test-3 task set (a Test-4 draw), delayed deallocation with the deallocation
 *     task's period swept geometrically from the shortest task period to 10x the longest; F is
 *     the allocator's peak over the peak of the bytes held (marked blocks included), averaged
 *     over seeds of the simulation (and, in the CSV, over the bytes within their holding time);
 *   - Figure 4's data: the first 1400 mallocs of Test 3's first fragmentation trace, live bytes
 *     and each allocator's peak memory after every malloc.
 * Scale (mallocs per trace; mm_quick, mm_standard, mm_full): quick 10,000 (time) and 100,000
 * (fragmentation), 3 seeds, Test 4 5 periods x 3 seeds x 50,000, no Table 6; standard 30,000 and
 * 300,000, 10 seeds, Test 4 8 periods x 10 seeds x 100,000; paper (--scale paper): the paper's
 * 300,000 and 1,500,000, Test 4 10 periods x 50 seeds x 300,000.
 *   - Table 6 and Figure 3: instructions per malloc and per free, counted exactly (inscount.h:
 *     ptrace single-stepping, from the entry of the descriptor's malloc/free to its return) on
 *     the first time trace of each test (seed 0), avg / stdv / max / min over the counted calls,
 *     beside the paper's Table 6; Figure 3's data: every counted malloc of Test 1 (its malloc
 *     index and count). Sample: every stride-th op; standard: the 30,000-malloc traces, stride =
 *     ops / 400 within a budget of 150,000 single steps per allocator and test (about a minute
 *     for all allocators); full: the 300,000-malloc traces, stride = ops / 20,000, budget
 *     2,000,000 steps. The paper counted every op of 300,000-malloc traces: RTBENCH_MM_INSTR_ALL=1
 *     counts every op (stride 1, no budget) at the chosen scale -- hours at paper scale (one single
 *     step takes ~20-40 us).
 *
 * Outputs: masmano_time.csv, masmano_frag.csv, masmano_test4.csv, masmano_fig4.csv,
 * masmano_instr.csv, masmano_fig3.csv.
 *
 * RTBENCH_MM_FRAG_ONLY=1 runs the fragmentation runs alone (Table 7, masmano_frag.csv and
 * masmano_fig4.csv): experiment "layout" (exp_layout.c) asks the layout siblings for F that way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "driver.h"
#include "frag.h"
#include "glibcmem.h"
#include "inscount.h"
#include "metrics.h"
#include "peers.h"
#include "workload.h"

enum { MM_TESTS = 3, MM_MAX_SEEDS = 64, MM_FIG4 = 1400, MM_MAX_PERIODS = 16 };

typedef struct mm_scale {
    size_t time_mallocs, frag_mallocs, t4_mallocs;
    unsigned seeds, t4_seeds, t4_periods;
} mm_scale_t;

/* quick: the headline (Table 7's F and F against the deallocation period) on fewer and shorter
 * runs; Table 5's cycles on 3 seeds; standard: the former default */
static const mm_scale_t mm_quick = {10000, 100000, 50000, 3, 3, 5};
static const mm_scale_t mm_standard = {30000, 300000, 100000, 10, 10, 8};
static const mm_scale_t mm_full = {300000, 1500000, 300000, 10, 50, 10};

/* Running avg / stdv / max / min. */
typedef struct mm_acc {
    double n, sum, sq, min, max;
} mm_acc_t;

static void acc_add(mm_acc_t *a, double v)
{
    if (a->n == 0.0 || v < a->min) {
        a->min = v;
    }
    if (a->n == 0.0 || v > a->max) {
        a->max = v;
    }
    a->n += 1.0;
    a->sum += v;
    a->sq += v * v;
}
static double acc_mean(const mm_acc_t *a) { return a->n > 0.0 ? a->sum / a->n : 0.0; }
static double acc_sd(const mm_acc_t *a)
{
    if (a->n <= 0.0) {
        return 0.0;
    }
    double m = acc_mean(a), v = a->sq / a->n - m * m;
    return v > 0.0 ? sqrt(v) : 0.0;
}

/* The paper's Tables 5 and 7 (Pentium 4; cycles, and F in %): avg, stdv, max, min per test. */
typedef struct mm_paper {
    const char *ours; /* our allocator standing for it */
    const char *name; /* the paper's */
    double malloc_cyc[MM_TESTS][4], free_cyc[MM_TESTS][4], frag[MM_TESTS][4];
} mm_paper_t;

static const mm_paper_t mm_paper[] = {
    {"firstfit",
     "First-fit",
     {{315, 239, 2185, 97}, {248, 243, 2274, 97}, {291, 279, 4758, 97}},
     {{163, 189, 1433, 84}, {148, 185, 1387, 84}, {176, 196, 1529, 85}},
     {{93.25, 3.99, 99.58, 87.57}, {83.21, 9.04, 98.17, 70.67}, {87.63, 4.41, 94.82, 70.76}}},
    {"bestfit",
     "Best-fit",
     {{511, 513, 2330, 112}, {347, 352, 2380, 95}, {1134, 1133, 6432, 107}},
     {{153, 189, 1420, 85}, {120, 212, 1292, 84}, {143, 178, 1448, 85}},
     {{10.26, 1.25, 14.23, 7.20}, {21.51, 2.73, 26.77, 17.17}, {11.76, 1.32, 14.14, 9.71}}},
    {"buddy",
     "Binary-buddy",
     {{170, 472, 5517, 143}, {157, 262, 7433, 105}, {161, 263, 5960, 121}},
     {{147, 285, 1728, 120}, {150, 287, 855, 120}, {153, 284, 1412, 120}},
     {{73.56, 6.36, 85.25, 66.61}, {61.97, 1.97, 65.06, 58.79}, {77.58, 5.39, 84.34, 64.88}}},
    {"glibc",
     "DLmalloc",
     {{342, 345, 5769, 114}, {249, 278, 5859, 79}, {292, 296, 6985, 83}},
     {{124, 198, 644, 85}, {99, 354, 425, 74}, {128, 181, 732, 75}},
     {{10.11, 1.55, 12.90, 7.39}, {17.13, 2.07, 21.75, 14.71}, {11.79, 1.39, 13.72, 9.90}}},
    {"halffit",
     "Half-fit",
     {{196, 332, 1237, 129}, {148, 569, 1269, 108}, {161, 520, 1491, 128}},
     {{184, 209, 1273, 104}, {173, 216, 1209, 104}, {186, 210, 1099, 110}},
     {{84.67, 3.02, 90.07, 80.40}, {71.50, 3.44, 75.45, 65.02}, {98.14, 3.12, 104.67, 94.21}}},
    {"tlsf",
     "TLSF",
     {{216, 274, 2017, 137}, {173, 257, 2056, 115}, {196, 230, 2473, 115}},
     {{201, 220, 1641, 118}, {170, 223, 741, 111}, {191, 217, 1095, 118}},
     {{10.49, 1.66, 11.79, 6.51}, {14.86, 2.15, 18.56, 9.86}, {11.15, 1.10, 13.91, 7.48}}},
};
enum { MM_NPAPER = sizeof mm_paper / sizeof mm_paper[0] };

static const mm_paper_t *paper_of(const char *name)
{
    for (size_t i = 0; i < MM_NPAPER; i++) {
        if (strcmp(mm_paper[i].ours, name) == 0) {
            return &mm_paper[i];
        }
    }
    return NULL;
}

/* Seeds: splitmix64 of (run seed, test, index), never 0. */
static uint64_t mm_seed(uint64_t base, unsigned test, unsigned index, unsigned what)
{
    uint64_t z = base * 0x9E3779B97F4A7C15ull + ((uint64_t)test << 40) + ((uint64_t)what << 32) + index + 1u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z != 0 ? z : 1u;
}

/* glibc's F: each glibc fragmentation run replays in a thread of its own, on an arena of its own,
 * through glibcmem.h's counting view: the watermark is the span from the lowest chunk the run was
 * given to the highest chunk end, peak_used the most bytes of live chunks (usable size + one size
 * word each). The thread frees its live blocks before it exits and malloc_trim(0) runs before the
 * next, so every run reuses the same, emptied arena. */
#if defined(__GLIBC__)
typedef struct gw_job {
    const rt_allocator_t *view;
    drv_instance_t *in;
    const wl_trace_t *t;
    uint64_t *series;
    size_t series_len;
    fr_result_t *r;
} gw_job_t;

static void gw_body(void *arg)
{
    gw_job_t *j = arg;
    fr_replay(j->view, NULL, j->in->slots, j->t, j->series, j->series_len, &drv_stop, j->r);
    for (uint32_t s = 0; s < j->in->nslots; s++) {
        if (j->in->slots[s] != NULL) {
            j->view->free(NULL, j->in->slots[s]);
            j->in->slots[s] = NULL;
        }
    }
}
#endif

/* True when F can be measured for a: a watermark (ours), glibc (above), jemalloc and mimalloc in a
 * private arena or heap (peers.h: bench_peer_private_open). */
static bool mm_has_frag(const rt_allocator_t *a)
{
    if (a->create != NULL) {
        return a->stats != NULL;
    }
    if (a == &bench_jemalloc || a == &bench_mimalloc) {
        return true;
    }
#if defined(__GLIBC__)
    return strcmp(a->name, "glibc") == 0 && gm_available();
#else
    return false;
#endif
}

/* fr_replay of t on the open instance in, glibc in a thread of its own (above). */
static void mm_replay(drv_instance_t *in, const wl_trace_t *t, uint64_t *series, size_t series_len, fr_result_t *r)
{
    const rt_allocator_t *a = in->a;
    if (a == &bench_jemalloc || a == &bench_mimalloc) {
        rt_allocator_t view;
        void *h = NULL;
        if (!bench_peer_private_open(a, &view, &h)) {
            memset(r, 0, sizeof *r);
            return;
        }
        fr_replay(&view, h, in->slots, t, series, series_len, &drv_stop, r);
        for (uint32_t s = 0; s < in->nslots; s++) {
            if (in->slots[s] != NULL) {
                view.free(h, in->slots[s]);
                in->slots[s] = NULL;
            }
        }
        bench_peer_private_close(h);
        r->approximated = true;
        return;
    }
#if defined(__GLIBC__)
    if (a->create == NULL && strcmp(a->name, "glibc") == 0) {
        rt_allocator_t view;
        gm_view(a, &view);
        gw_job_t job = {&view, in, t, series, series_len, r};
        gm_result_t g;
        if (!gm_run(gw_body, &job, false, &g)) {
            memset(r, 0, sizeof *r);
            return;
        }
        r->approximated = true;
        return;
    }
#endif
    fr_replay(a, in->handle, in->slots, t, series, series_len, &drv_stop, r);
}

typedef struct mm_state {
    bench_ctx_t *ctx;
    const mm_scale_t *sc;
    mm_acc_t cyc[BENCH_MAX_SELECTED][MM_TESTS][2]; /* [alloc][test][malloc, free] */
    double F[BENCH_MAX_SELECTED][MM_TESTS][MM_MAX_SEEDS];
    double Fu[BENCH_MAX_SELECTED][MM_TESTS][MM_MAX_SEEDS]; /* from peak_used */
    bool Fknown[BENCH_MAX_SELECTED], Fapprox[BENCH_MAX_SELECTED];
    size_t Ffail[BENCH_MAX_SELECTED][MM_TESTS], tfail[BENCH_MAX_SELECTED][MM_TESTS];
    unsigned nF[BENCH_MAX_SELECTED][MM_TESTS];
} mm_state_t;

/* The binary buddy splits its arena from the top down into blocks aligned to their sizes (buddy.c),
 * so over an arena whose start is not aligned the lowest block of a large order can lie far up,
 * and the watermark measures the arena's alignment rather than the allocator. It is therefore given
 * the largest power-of-two region that ends on a multiple of its size inside the benchmark's arena,
 * with room below for its header and table (one byte per unit): one block of that order at the top
 * and a remainder of a few units below it, as a buddy system over a power-of-two heap. */
static void mm_region(const bench_ctx_t *ctx, const rt_allocator_t *a, void **mem, size_t *size)
{
    *mem = ctx->arena;
    *size = ctx->arena_size;
    if (strcmp(a->name, "buddy") != 0) {
        return;
    }
    size_t unit = a->min_block != 0 ? a->min_block : 16u;
    uintptr_t x = (uintptr_t)ctx->arena, end = x + ctx->arena_size;
    for (unsigned k = 30; k >= 16; k--) {
        size_t blk = (size_t)1 << k;
        size_t need = blk + blk / unit + 4096u;
        uintptr_t top = end & ~(uintptr_t)(blk - 1u);
        if (blk < ctx->arena_size && top >= x + need) {
            *mem = (void *)(top - need);
            *size = need;
            return;
        }
    }
}

static bool mm_open(mm_state_t *st, drv_instance_t *in, const rt_allocator_t *a, uint32_t slots)
{
    void *mem = NULL;
    size_t size = 0;
    mm_region(st->ctx, a, &mem, &size);
    return drv_open(in, a, mem, size, slots, false);
}

/* Time runs: every test, every seed, every allocator. */
static bool mm_time(mm_state_t *st, FILE *csv)
{
    bench_ctx_t *ctx = st->ctx;
    size_t cap = 2u * st->sc->time_mallocs;
    uint32_t *c0 = malloc(cap * sizeof *c0), *c1 = malloc(cap * sizeof *c1);
    if (c0 == NULL || c1 == NULL) {
        free(c0), free(c1);
        return false;
    }
    for (unsigned test = 1; test <= MM_TESTS && !drv_stop; test++) {
        char phase[64];
        snprintf(phase, sizeof phase, "time runs, test %u", test);
        for (unsigned j = 0; j < st->sc->seeds && !drv_stop; j++) {
            wl_mm_taskset_t ts;
            wl_trace_t t;
            wl_mm_taskset(&ts, test, mm_seed(ctx->seed, test, j, 0));
            if (!wl_masmano(&t, &ts, st->sc->time_mallocs, 0, mm_seed(ctx->seed, test, j, 1))) {
                free(c0), free(c1);
                return false;
            }
            for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
                const rt_allocator_t *a = ctx->allocs[k];
                bench_progress("masmano", "all", phase,
                               ((double)j + (double)k / (double)ctx->nallocs) / (double)st->sc->seeds);
                drv_instance_t in;
                if (!mm_open(st, &in, a, t.slots)) {
                    continue;
                }
                bool ok = drv_reset(&in);
                drv_outcome_t o0 = drv_replay_timed(&in, &t, c0, NULL, NULL, NULL);
                ok = ok && drv_reset(&in);
                drv_outcome_t o1 = drv_replay_timed(&in, &t, c1, NULL, NULL, NULL);
                drv_close(&in);
                if (!ok || o0.interrupted || o1.interrupted) {
                    break;
                }
                mt_min_into(c0, c1, t.nops);
                st->tfail[k][test - 1u] += o0.failures;
                for (size_t i = 0; i < t.nops; i++) {
                    if (c0[i] != DRV_NOT_MEASURED) {
                        acc_add(&st->cyc[k][test - 1u][t.ops[i].kind == WL_MALLOC ? 0 : 1], (double)c0[i]);
                    }
                }
            }
            wl_release(&t);
        }
    }
    bench_progress_clear();
    free(c0), free(c1);
    if (csv != NULL) {
        for (size_t k = 0; k < ctx->nallocs; k++) {
            for (unsigned test = 1; test <= MM_TESTS; test++) {
                for (int op = 0; op < 2; op++) {
                    const mm_acc_t *a = &st->cyc[k][test - 1u][op];
                    fprintf(csv, "%s,%u,%s,%.0f,%.1f,%.1f,%.0f,%.0f,%zu\n", ctx->allocs[k]->name, test,
                            op == 0 ? "malloc" : "free", a->n, acc_mean(a), acc_sd(a), a->max, a->min,
                            st->tfail[k][test - 1u]);
                }
            }
        }
    }
    return true;
}

/* Fragmentation runs, Tests 1-3; Figure 4's series from Test 3, seed 0. */
/* Replays the fragmentation trace t (test, seed j; task set ts) on every allocator with a
 * fragmentation figure: F into st, masmano_frag.csv's rows, and when figure Figure 4's series. */
static void mm_frag_seed(mm_state_t *st, unsigned test, unsigned j, const wl_mm_taskset_t *ts, const wl_trace_t *t,
                         bool figure, uint64_t *series, const char *phase, FILE *csv, FILE *fig)
{
    bench_ctx_t *ctx = st->ctx;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        if (!mm_has_frag(a)) {
            continue;
        }
        bench_progress("masmano", "all", phase, ((double)j + (double)k / (double)ctx->nallocs) / (double)st->sc->seeds);
        drv_instance_t in;
        if (!mm_open(st, &in, a, t->slots)) {
            continue;
        }
        fr_result_t r;
        mm_replay(&in, t, figure ? series : NULL, MM_FIG4, &r);
        drv_close(&in);
        if (r.done < t->nops) {
            break;
        }
        st->Fknown[k] = r.known;
        st->Fapprox[k] = r.approximated;
        st->F[k][test - 1u][j] = r.factor;
        st->Fu[k][test - 1u][j] = r.factor_used;
        st->nF[k][test - 1u] = j + 1u;
        st->Ffail[k][test - 1u] += r.failures;
        if (csv != NULL) {
            fprintf(csv, "%s,%u,%u,%u,%zu,%llu,%llu,%.2f,%llu,%.2f,%d,%zu\n", a->name, test, j, ts->ntasks, t->nmalloc,
                    (unsigned long long)r.peak_live, (unsigned long long)r.peak_memory, r.factor,
                    (unsigned long long)r.peak_used, r.factor_used, r.approximated, r.failures);
        }
        if (figure && fig != NULL) {
            for (size_t m = 0; m < MM_FIG4 && m < t->nmalloc; m++) {
                fprintf(fig, "%s,%zu,%llu\n", a->name, m + 1u, (unsigned long long)series[m]);
            }
        }
    }
}

static bool mm_frag(mm_state_t *st, FILE *csv, FILE *fig)
{
    bench_ctx_t *ctx = st->ctx;
    uint64_t *series = malloc(MM_FIG4 * sizeof *series);
    if (series == NULL) {
        return false;
    }
    for (unsigned test = 1; test <= MM_TESTS && !drv_stop; test++) {
        char phase[64];
        snprintf(phase, sizeof phase, "fragmentation runs, test %u", test);
        for (unsigned j = 0; j < st->sc->seeds && !drv_stop; j++) {
            wl_mm_taskset_t ts;
            wl_trace_t t;
            wl_mm_taskset(&ts, test, mm_seed(ctx->seed, test, j, 0));
            if (!wl_masmano(&t, &ts, st->sc->frag_mallocs, 0, mm_seed(ctx->seed, test, j, 1))) {
                free(series);
                return false;
            }
            bool figure = test == 3 && j == 0;
            if (figure && fig != NULL) {
                size_t m = 0;
                for (size_t i = 0; i < t.nops && m < MM_FIG4; i++) {
                    if (t.ops[i].kind == WL_MALLOC) {
                        fprintf(fig, "live,%zu,%llu\n", ++m, (unsigned long long)t.live[i]);
                    }
                }
            }
            mm_frag_seed(st, test, j, &ts, &t, figure, series, phase, csv, fig);
            wl_release(&t);
        }
    }
    bench_progress_clear();
    free(series);
    return true;
}

/* Test 4: F against the deallocation task's period. */
/* Test 4's accumulators, per allocator and deallocation period: F, F from the bytes in use,
 * failed mallocs. */
typedef struct mm_t4 {
    mm_acc_t acc[BENCH_MAX_SELECTED][MM_MAX_PERIODS + 1u], accu[BENCH_MAX_SELECTED][MM_MAX_PERIODS + 1u];
    size_t fails[BENCH_MAX_SELECTED][MM_MAX_PERIODS + 1u];
} mm_t4_t;

/* Replays Test 4's task set at every period (periods[0..np]) and seed on every allocator with a
 * fragmentation figure, into t4. False when a trace cannot be made. */
static bool mm_test4_replay(mm_state_t *st, const wl_mm_taskset_t *ts, const uint32_t *periods, unsigned np,
                            mm_t4_t *t4)
{
    bench_ctx_t *ctx = st->ctx;
    for (unsigned p = 0; p <= np && !drv_stop; p++) {
        for (unsigned j = 0; j < st->sc->t4_seeds && !drv_stop; j++) {
            wl_trace_t t;
            if (!wl_masmano(&t, ts, st->sc->t4_mallocs, periods[p], mm_seed(ctx->seed, 4, j, 1))) {
                return false;
            }
            for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
                const rt_allocator_t *a = ctx->allocs[k];
                if (!mm_has_frag(a)) {
                    continue;
                }
                bench_progress("masmano", "all", "test 4",
                               ((double)p * st->sc->t4_seeds + j + (double)k / (double)ctx->nallocs) /
                                   ((double)(np + 1u) * st->sc->t4_seeds));
                drv_instance_t in;
                if (!mm_open(st, &in, a, t.slots)) {
                    continue;
                }
                fr_result_t r;
                mm_replay(&in, &t, NULL, 0, &r);
                drv_close(&in);
                if (r.done < t.nops) {
                    break;
                }
                acc_add(&t4->acc[k][p], r.factor);
                acc_add(&t4->accu[k][p], fr_factor(r.peak_memory, t.peak_inuse));
                t4->fails[k][p] += r.failures;
            }
            wl_release(&t);
        }
    }
    return true;
}

/* Test 4's table (one row per allocator measured) and masmano_test4.csv's rows. */
static void mm_test4_table(const mm_state_t *st, const mm_t4_t *t4, const uint32_t *periods, unsigned np, FILE *csv)
{
    const bench_ctx_t *ctx = st->ctx;
    for (size_t k = 0; k < ctx->nallocs; k++) {
        if (t4->acc[k][0].n == 0.0) {
            continue;
        }
        printf("%-10s", ctx->allocs[k]->name);
        for (unsigned p = 0; p <= np; p++) {
            const mm_acc_t *acc = &t4->acc[k][p];
            printf(" %7.2f%s", acc_mean(acc), t4->fails[k][p] != 0 ? "!" : " ");
            if (csv != NULL && acc->n > 0.0) {
                fprintf(csv, "%s,%u,%.0f,%.2f,%.2f,%.2f,%.2f,%.2f,%zu\n", ctx->allocs[k]->name, periods[p], acc->n,
                        acc_mean(acc), acc_sd(acc), acc->max, acc->min, acc_mean(&t4->accu[k][p]), t4->fails[k][p]);
            }
        }
        printf("%s\n", st->Fapprox[k] ? "  (approx.)" : "");
    }
}

static bool mm_test4(mm_state_t *st, FILE *csv)
{
    bench_ctx_t *ctx = st->ctx;
    wl_mm_taskset_t ts;
    wl_mm_taskset(&ts, 4, mm_seed(ctx->seed, 4, 0, 0));
    unsigned np = st->sc->t4_periods;
    uint32_t periods[MM_MAX_PERIODS + 1u];
    periods[0] = 0; /* the reference: immediate deallocation */
    double lo = ts.pmin, hi = 10.0 * ts.pmax;
    for (unsigned i = 0; i < np; i++) {
        periods[i + 1u] = (uint32_t)(lo * pow(hi / lo, np > 1 ? (double)i / (double)(np - 1u) : 0.0) + 0.5);
    }
    printf("\nTest 4 (Figure 5): F %% vs the deallocation task's period P_d; a task set of %u tasks (periods %u..%u),\n"
           "delayed deallocation, %u seeds x %zu mallocs per period.\n",
           ts.ntasks, ts.pmin, ts.pmax, st->sc->t4_seeds, st->sc->t4_mallocs);
    printf("%-10s", "P_d:");
    for (unsigned i = 0; i <= np; i++) {
        if (i == 0) {
            printf(" %8s", "immed.");
        } else {
            printf(" %8u", periods[i]);
        }
    }
    printf("\n");
    static mm_t4_t t4;
    memset(&t4, 0, sizeof t4);
    if (!mm_test4_replay(st, &ts, periods, np, &t4)) {
        return false;
    }
    bench_progress_clear();
    mm_test4_table(st, &t4, periods, np, csv);
    printf("F: the allocator's peak against the peak of the bytes the program holds (marked blocks included), as\n"
           "the paper's Figure 5 reads (TLSF, DLmalloc and best fit from about 7 %% to 45 %% over P_d = 45..1400).\n"
           "P_d = 0 (immed.): the reference task set, immediate deallocation. '!': mallocs failed (heap exhausted).\n"
           "masmano_test4.csv also has F_inuse: the peak against the bytes within their holding time (the\n"
           "reference live memory): the memory cost of delaying the frees.\n");
    return true;
}

static void print_row4(const double v[4], const char *fmt)
{
    for (int i = 0; i < 4; i++) {
        printf(fmt, v[i]);
    }
    printf(" |");
}

/* Table 7 (used: from peak_used instead of the watermark), beside the paper's. */
static void mm_table7(const mm_state_t *st, bool used)
{
    const bench_ctx_t *ctx = st->ctx;
    printf("%-13s|%-29s|%-29s|%-29s|\n", "", "  Test 1", "  Test 2", "  Test 3");
    for (size_t k = 0; k < ctx->nallocs; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        if (!st->Fknown[k]) {
            printf("%-13s| no watermark: left out\n", a->name);
            continue;
        }
        printf("%-13s|", a->name);
        bool failed = false;
        for (int test = 0; test < MM_TESTS; test++) {
            mm_acc_t acc = {0, 0, 0, 0, 0};
            for (unsigned j = 0; j < st->nF[k][test]; j++) {
                acc_add(&acc, used ? st->Fu[k][test][j] : st->F[k][test][j]);
            }
            double v[4] = {acc_mean(&acc), acc_sd(&acc), acc.max, acc.min};
            print_row4(v, " %6.2f");
            failed |= st->Ffail[k][test] != 0;
        }
        printf("%s%s\n", st->Fapprox[k] ? " approx." : "", failed ? " (mallocs failed!)" : "");
        const mm_paper_t *pp = used ? NULL : paper_of(a->name);
        if (pp != NULL) {
            printf("  %-11s|", pp->name);
            for (int test = 0; test < MM_TESTS; test++) {
                print_row4(pp->frag[test], " %6.2f");
            }
            printf(" (paper)\n");
        }
    }
}

/* The paper's Table 6 (instructions per call): avg, stdv, max, min per test. */
typedef struct mm_paper6 {
    const char *ours;
    double m[MM_TESTS][4], f[MM_TESTS][4];
} mm_paper6_t;

static const mm_paper6_t mm_paper6[] = {
    {"firstfit",
     {{204, 21, 478, 71}, {201, 17, 818, 70}, {203, 23, 957, 70}},
     {{93, 96, 128, 59}, {90, 92, 128, 57}, {92, 95, 128, 57}}},
    {"bestfit",
     {{582, 69, 798, 76}, {442, 130, 1006, 76}, {805, 179, 1539, 76}},
     {{91, 115, 126, 57}, {69, 148, 126, 57}, {79, 198, 128, 57}}},
    {"buddy",
     {{169, 17, 843, 157}, {136, 22, 1113, 95}, {153, 24, 1113, 95}},
     {{68, 70, 225, 65}, {68, 72, 277, 65}, {69, 73, 228, 65}}},
    {"glibc",
     {{279, 107, 921, 64}, {161, 126, 933, 49}, {232, 152, 1277, 57}},
     {{70, 128, 77, 53}, {59, 177, 77, 39}, {67, 168, 77, 39}}},
    {"halffit",
     {{118, 1, 123, 115}, {116, 7, 123, 76}, {118, 1, 123, 82}},
     {{117, 117, 167, 73}, {115, 116, 165, 76}, {117, 117, 167, 76}}},
    {"tlsf",
     {{147, 13, 164, 104}, {118, 25, 164, 84}, {133, 22, 164, 84}},
     {{140, 140, 217, 91}, {107, 110, 216, 87}, {120, 122, 217, 87}}},
};

static const mm_paper6_t *paper6_of(const char *name)
{
    for (size_t i = 0; i < sizeof mm_paper6 / sizeof mm_paper6[0]; i++) {
        if (strcmp(mm_paper6[i].ours, name) == 0) {
            return &mm_paper6[i];
        }
    }
    return NULL;
}

static void mm_instr_progress(void *context, double done)
{
    bench_progress("masmano", (const char *)context, "instructions (Table 6)", done);
}

/* Table 6's counts: per allocator and test, the counted calls' instructions (malloc, free), the
 * stride the step budget left, whether it widened it and whether counting failed. */
typedef struct mm_instr {
    mm_acc_t acc[BENCH_MAX_SELECTED][MM_TESTS][2];
    size_t stride_end[BENCH_MAX_SELECTED][MM_TESTS];
    bool failed[BENCH_MAX_SELECTED][MM_TESTS], widened[BENCH_MAX_SELECTED][MM_TESTS];
    size_t nops_seen, stride0;
    uint64_t budget;
} mm_instr_t;

/* Counts every allocator's calls on the trace of one test (into ins); Figure 3's rows to fig
 * (mindex: the malloc index of each op, or NULL). */
static void mm_instr_test(mm_state_t *st, mm_instr_t *ins, unsigned test, const wl_trace_t *t, const ic_plan_t *plan,
                          const uint32_t *mindex, FILE *fig)
{
    bench_ctx_t *ctx = st->ctx;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        void *mem = NULL;
        size_t size = 0;
        mm_region(ctx, a, &mem, &size);
        ic_result_t r;
        bool ok = ic_count_trace(a, mem, size, t, plan, &r, mm_instr_progress, (void *)(uintptr_t)a->name);
        ins->failed[k][test - 1u] = !ok;
        ins->stride_end[k][test - 1u] = r.final_stride;
        ins->widened[k][test - 1u] = r.widened;
        for (size_t i = 0; i < r.n; i++) {
            const ic_sample_t *s = &r.samples[i];
            acc_add(&ins->acc[k][test - 1u][s->kind == WL_MALLOC ? 0 : 1], (double)s->count);
            if (fig != NULL && mindex != NULL && s->kind == WL_MALLOC) {
                fprintf(fig, "%s,%u,%u\n", a->name, mindex[s->op], s->count);
            }
        }
        if (!ok) {
            fprintf(stderr, "masmano: instructions of %s, test %u: %s\n", a->name, test, r.error);
        }
        ic_result_free(&r);
    }
}

/* Counts the first time trace of each test (seed 0); false when a trace cannot be made. */
static bool mm_instr_count(mm_state_t *st, mm_instr_t *ins, bool all, size_t samples, FILE *fig)
{
    bench_ctx_t *ctx = st->ctx;
    for (unsigned test = 1; test <= MM_TESTS && !drv_stop; test++) {
        wl_mm_taskset_t ts;
        wl_trace_t t;
        wl_mm_taskset(&ts, test, mm_seed(ctx->seed, test, 0, 0));
        if (!wl_masmano(&t, &ts, st->sc->time_mallocs, 0, mm_seed(ctx->seed, test, 0, 1))) {
            return false;
        }
        /* malloc index of each op, for Figure 3 */
        uint32_t *mindex = NULL;
        if (test == 1) {
            mindex = malloc(t.nops * sizeof *mindex);
            uint32_t m = 0;
            for (size_t i = 0; mindex != NULL && i < t.nops; i++) {
                mindex[i] = t.ops[i].kind == WL_MALLOC ? ++m : m;
            }
        }
        ins->nops_seen = t.nops;
        ic_plan_t plan = {
            .stride = all ? 1u : (t.nops / samples != 0 ? t.nops / samples : 1u),
            .step_budget = ins->budget,
            .max_samples = 0,
        };
        ins->stride0 = plan.stride;
        mm_instr_test(st, ins, test, &t, &plan, mindex, fig);
        free(mindex);
        wl_release(&t);
    }
    return true;
}

/* One allocator's rows of Table 6 for op (0 malloc, 1 free): ours, the paper's, and the CSV's. */
static void mm_instr_row(const mm_state_t *st, const mm_instr_t *ins, size_t k, int op, FILE *csv)
{
    const bench_ctx_t *ctx = st->ctx;
    printf("%-13s|", ctx->allocs[k]->name);
    bool bad = false, cut = false;
    size_t widest = 0;
    for (int test = 0; test < MM_TESTS; test++) {
        const mm_acc_t *a = &ins->acc[k][test][op];
        double v[4] = {acc_mean(a), acc_sd(a), a->max, a->min};
        print_row4(v, " %5.0f");
        bad |= ins->failed[k][test];
        cut |= ins->widened[k][test];
        widest = ins->stride_end[k][test] > widest ? ins->stride_end[k][test] : widest;
    }
    if (op == 0 && cut) {
        printf(" budget: stride %zu", widest);
    }
    printf("%s\n", bad ? " (counting failed)" : "");
    const mm_paper6_t *pp = paper6_of(ctx->allocs[k]->name);
    const mm_paper_t *pn = paper_of(ctx->allocs[k]->name);
    if (pp != NULL) {
        printf("  %-11s|", pn != NULL ? pn->name : pp->ours);
        for (int test = 0; test < MM_TESTS; test++) {
            print_row4(op == 0 ? pp->m[test] : pp->f[test], " %5.0f");
        }
        printf("  (paper)\n");
    }
    if (csv != NULL) {
        for (int test = 0; test < MM_TESTS; test++) {
            const mm_acc_t *a = &ins->acc[k][test][op];
            fprintf(csv, "%s,%d,%s,%.0f,%.1f,%.1f,%.0f,%.0f,%zu,%zu,%d,%d\n", ctx->allocs[k]->name, test + 1,
                    op == 0 ? "malloc" : "free", a->n, acc_mean(a), acc_sd(a), a->max, a->min, ins->stride0,
                    ins->stride_end[k][test], ins->widened[k][test] ? 1 : 0, ins->failed[k][test] ? 1 : 0);
        }
    }
}

/* Table 6 and Figure 3's data: instructions per call on the first time trace of each test. */
static bool mm_instr(mm_state_t *st, FILE *csv, FILE *fig)
{
    bench_ctx_t *ctx = st->ctx;
    if (!ic_supported()) {
        printf("\nTable 6: not produced (instruction counting needs Linux on x86-64)\n");
        return true;
    }
    const char *all_env = getenv("RTBENCH_MM_INSTR_ALL");
    bool all = all_env != NULL && all_env[0] == '1';
    bool full = ctx->scale == BENCH_FULL;
    size_t samples = full ? 20000u : 400u;
    static mm_instr_t ins;
    memset(&ins, 0, sizeof ins);
    ins.budget = all ? 0u : (full ? 2000000u : 150000u);
    ins.stride0 = 1;
    if (!mm_instr_count(st, &ins, all, samples, fig)) {
        return false;
    }
    bench_progress_clear();
    if (drv_stop) {
        return false;
    }
    for (int op = 0; op < 2; op++) {
        printf("\nTable 6(%c): %s, instructions per call (avg / stdv / max / min over the counted calls of seed 0;\n"
               "every %zu-th op of %zu%s)\n",
               op == 0 ? 'a' : 'b', op == 0 ? "malloc" : "free", ins.stride0, ins.nops_seen,
               ins.budget != 0 ? ", widened where the step budget ran short" : "");
        printf("%-13s|%-25s|%-25s|%-25s|\n", "", "  Test 1", "  Test 2", "  Test 3");
        for (size_t k = 0; k < ctx->nallocs; k++) {
            mm_instr_row(st, &ins, k, op, csv);
        }
    }
    printf(
        "Counted: every instruction from the entry of the descriptor's malloc/free to its return (ret included;\n"
        "for the library's heaps a wrapper jump; kernel instructions not counted). The paper's rows: Pentium 4\n"
        "(x86-32), every op of 300,000-malloc traces, DLmalloc 2.7.2 for glibc. 'budget: stride N': the step budget\n"
        "widened the stride (or ended the sample early; masmano_instr.csv has the calls counted).\n");
    fflush(stdout);
    return true;
}

/* The CSVs, each with its header (masmano_instr.csv and masmano_fig3.csv only with Table 6). */
typedef struct mm_csvs {
    FILE *ct, *cf, *c4, *cg, *ci, *c3;
    char p1[1200], p2[1200], p3[1200], p4[1200], p5[1200], p6[1200];
} mm_csvs_t;

static void mm_csvs_open(bench_ctx_t *ctx, mm_csvs_t *c, bool table6)
{
    c->ci = table6 ? bench_csv_open(ctx, "masmano_instr.csv", false, c->p5, sizeof c->p5) : NULL;
    c->c3 = table6 ? bench_csv_open(ctx, "masmano_fig3.csv", false, c->p6, sizeof c->p6) : NULL;
    if (c->ci != NULL) {
        fprintf(c->ci, "allocator,test,op,n,avg,stdv,max,min,stride,final_stride,widened,error\n");
    }
    if (c->c3 != NULL) {
        fprintf(c->c3, "allocator,malloc,instructions\n");
    }
    c->ct = bench_csv_open(ctx, "masmano_time.csv", false, c->p1, sizeof c->p1);
    c->cf = bench_csv_open(ctx, "masmano_frag.csv", false, c->p2, sizeof c->p2);
    c->c4 = bench_csv_open(ctx, "masmano_test4.csv", false, c->p3, sizeof c->p3);
    c->cg = bench_csv_open(ctx, "masmano_fig4.csv", false, c->p4, sizeof c->p4);
    if (c->ct != NULL) {
        fprintf(c->ct, "allocator,test,op,n,avg,stdv,max,min,failures\n");
    }
    if (c->cf != NULL) {
        fprintf(c->cf,
                "allocator,test,seed,tasks,mallocs,peak_live,peak_memory,F,peak_used,F_used,approximated,failures\n");
    }
    if (c->c4 != NULL) {
        fprintf(c->c4, "allocator,period,seeds,F_avg,F_stdv,F_max,F_min,F_inuse_avg,failures\n");
    }
    if (c->cg != NULL) {
        fprintf(c->cg, "series,malloc,bytes\n");
    }
}

/* Table 5: time per call, ours beside the paper's. */
static void mm_table5(const mm_state_t *st)
{
    const bench_ctx_t *ctx = st->ctx;
    for (int op = 0; op < 2; op++) {
        printf(
            "\nTable 5(%c): %s, %s per call (avg / stdv / max / min over every call of %u seeds; minimum of 2 runs)\n",
            op == 0 ? 'a' : 'b', op == 0 ? "malloc" : "free", ctx->clock.unit, st->sc->seeds);
        printf("%-13s|%-25s|%-25s|%-25s|\n", "", "  Test 1", "  Test 2", "  Test 3");
        for (size_t k = 0; k < ctx->nallocs; k++) {
            printf("%-13s|", ctx->allocs[k]->name);
            for (int test = 0; test < MM_TESTS; test++) {
                const mm_acc_t *a = &st->cyc[k][test][op];
                double v[4] = {acc_mean(a), acc_sd(a), a->max, a->min};
                print_row4(v, " %5.0f");
            }
            printf("\n");
            const mm_paper_t *pp = paper_of(ctx->allocs[k]->name);
            if (pp != NULL) {
                printf("  %-11s|", pp->name);
                for (int test = 0; test < MM_TESTS; test++) {
                    print_row4(op == 0 ? pp->malloc_cyc[test] : pp->free_cyc[test], " %5.0f");
                }
                printf("  (paper)\n");
            }
        }
    }
}

/* Table 7 from the watermark and from peak_used, with their notes. */
static void mm_table7_both(const mm_state_t *st)
{
    const mm_scale_t *sc = st->sc;
    printf("\nTable 7: fragmentation factor F %% (avg / stdv / max / min over %u seeds, %zu mallocs each)\n", sc->seeds,
           sc->frag_mallocs);
    mm_table7(st, false);
    printf("F = (peak memory / peak live - 1) x 100 %%: the watermark (highest address handed out) against the\n"
           "most requested bytes live at once. glibc (approx.): each run in a thread of its own, on an arena of its\n"
           "own: from its lowest chunk to its highest chunk end. jemalloc, mimalloc (approx.): each run in an arena\n"
           "(jemalloc: arenas.create + its own tcache) or heap (mimalloc: mi_heap_new) of its own, the peak of its\n"
           "pages sampled after every malloc (jemalloc: active + dirty + muzzy pages; mimalloc: carved bytes of its\n"
           "pages); metadata left out. noop: no memory, left out.\n"
           "buddy runs over a power-of-two region aligned to its size (exp_masmano.c).\n");
    printf(
        "\nTable 7, internal fragmentation only: F from the peak of the bytes in live blocks (rt_stats_t.peak_used:\n"
        "headers and rounding) instead of the watermark; no paper column.\n");
    mm_table7(st, true);
    fflush(stdout);
}

int exp_masmano(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    mm_state_t *st = calloc(1, sizeof *st);
    if (st == NULL) {
        return 1;
    }
    st->ctx = ctx;
    st->sc = ctx->scale == BENCH_FULL ? &mm_full : ctx->scale == BENCH_STANDARD ? &mm_standard : &mm_quick;
    memset(ctx->arena, 0xA5, ctx->arena_size); /* touched once: no first-touch faults in timed calls */
    const mm_scale_t *sc = st->sc;
    printf("\n== masmano -- Masmano et al. 2006, sections 3-4: the periodic task model, Tests 1-4 ==\n");
    printf(
        "3..10 tasks, periods 10..150, g per period: Test 1 2048..20480, Test 2 8..1024, Test 3 8..20480; 2..5\n"
        "requests per period of Normal(g/n, sd %d %% of it); holding time 30..50. %u seeds per test; %zu mallocs per\n"
        "time run, %zu per fragmentation run (the paper: 300,000 and 1,500,000).\n",
        WL_MM_SD_PERCENT, sc->seeds, sc->time_mallocs, sc->frag_mallocs);

    static mm_csvs_t c;
    /* quick: no Table 6 (a sample of single-stepped calls is over a minute; the instructions'
     * headline at quick is the worst experiment's) and so no masmano_instr.csv, masmano_fig3.csv */
    bool table6 = ctx->scale != BENCH_QUICK;
    mm_csvs_open(ctx, &c, table6);

    const char *only = getenv("RTBENCH_MM_FRAG_ONLY");
    bool frag_only = only != NULL && strcmp(only, "1") == 0;
    bool ok = true;
    if (frag_only) {
        printf("RTBENCH_MM_FRAG_ONLY=1: the fragmentation runs alone (no Tables 5 and 6, no Test 4)\n");
    } else {
        ok = mm_time(st, c.ct);
        if (ok) {
            mm_table5(st);
        }
        printf("The paper's rows: Pentium 4 cycles, interrupts off; ours: %s through the descriptor (the noop row is "
               "the\nfloor). Columns: avg stdv max min.\n",
               ctx->clock.unit);
        fflush(stdout);
        if (!table6) {
            printf("\nTable 6 (instructions): left out at quick scale (--scale standard counts a sample).\n");
        }
    }
    ok = ok && !drv_stop && (!table6 || frag_only || mm_instr(st, c.ci, c.c3));
    bench_csv_close(c.ci, c.p5);
    bench_csv_close(c.c3, c.p6);

    ok = ok && !drv_stop && mm_frag(st, c.cf, c.cg);
    if (ok) {
        mm_table7_both(st);
    }
    ok = ok && !drv_stop && (frag_only || mm_test4(st, c.c4));
    fflush(stdout);
    bench_csv_close(c.ct, c.p1);
    bench_csv_close(c.cf, c.p2);
    bench_csv_close(c.c4, c.p3);
    bench_csv_close(c.cg, c.p4);
    free(st);
    if (drv_stop) {
        return 130;
    }
    return ok ? 0 : 1;
}
