/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_memfrag.c -- experiment "memfrag": the VaiOS blog's mem_frag ramp (section 10).
 *
 * For N = 1..256, on a fresh instance: N x {malloc(72); malloc(8) spacer}, free every 72-byte
 * block (the live spacers keep them from coalescing), then malloc(120), whose probes and cycles
 * are recorded. Each N is replayed 2R times on fresh instances (R = 25 quick, 101 full); the
 * figure for N is the median over R pairs of the per-pair minimum (Masmano's minimum of two
 * identical runs), with their mean and the overall min and max beside it. The mean resolves
 * differences finer than the clock's step (21 ticks on this project's VM), which the median
 * cannot: flatness is printed for both. glibc cannot be re-created: its live blocks are
 * freed between replays, so it runs on a warm, not a fresh, heap (its probes are n/a).
 *
 * Outputs: the summary on stdout; memfrag.csv (one row per allocator and N).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "driver.h"
#include "metrics.h"
#include "peers.h"
#include "workload.h"

enum { MEMFRAG_NMAX = 256, MEMFRAG_MAX_PAIRS = 128 };

typedef struct mf_point {
    uint32_t probes; /* DRV_NO_PROBES when n/a */
    uint32_t median, min, max;
    double mean;
    bool probes_vary;
    bool measured;
} mf_point_t;

/* The N measured: every N = 1..256; quick, N = 1..16 and every 16th up to 256 (31 points, the
 * table's columns among them): the wait-free trees' instance over 64 MiB is re-created for every
 * run, about 10 ms each, which made N = 1..256 half a minute per tree. */
static bool mf_measured(const bench_ctx_t *ctx, uint32_t n)
{
    return ctx->scale != BENCH_QUICK || n <= 16u || n % 16u == 0u;
}

/* Least-squares slope of y over xs. */
static double slope(const double *xs, const double *y, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double x = xs[i];
        sx += x;
        sy += y[i];
        sxx += x * x;
        sxy += x * y[i];
    }
    double d = (double)n * sxx - sx * sx;
    return d != 0.0 ? ((double)n * sxy - sx * sy) / d : 0.0;
}

/* The study's skeleton (bench/README.md, "Layout"): study_setup (traces, buffers, CSV, table
 * head), then per allocator study_measure (every N), study_summarize (its row, and tlsf's
 * targets) and study_write (its CSV rows), so that rows print as each allocator finishes. */
typedef struct mf_state {
    unsigned pairs;
    uint32_t *cyc, *prb;
    mf_point_t *pt;
    wl_trace_t *traces;
    uint32_t done_n; /* the last N measured for the current allocator */
    FILE *csv;
    char path[1200];
    bool tlsf_done;
    double tlsf_flat, tlsf_flat_mean;
    uint32_t tlsf_pmax;
} mf_state_t;

static const char mf_rule[] = "---------- -----------------------------------------  ---------------------------  "
                              "------------- --------";
static const uint32_t mf_show[] = {1, 2, 16, 64, 128, 256};

static void study_free(mf_state_t *st)
{
    if (st->traces != NULL) {
        for (uint32_t n = 1; n <= MEMFRAG_NMAX; n++) {
            wl_release(&st->traces[n]);
        }
    }
    free(st->cyc), free(st->prb), free(st->pt), free(st->traces);
}

static bool study_setup(bench_ctx_t *ctx, mf_state_t *st)
{
    memset(st, 0, sizeof *st);
    /* quick: 5 pairs -- the median of 5 minima still drops a preempted pair -- and fewer N
     * (mf_measured) */
    st->pairs = ctx->scale == BENCH_FULL ? 101u : ctx->scale == BENCH_STANDARD ? 25u : 5u;
    const uint32_t nmax = MEMFRAG_NMAX;
    size_t cap = 3u * nmax + 1u;
    st->cyc = malloc(cap * sizeof *st->cyc);
    st->prb = malloc(cap * sizeof *st->prb);
    st->pt = malloc((nmax + 1u) * sizeof *st->pt);
    st->traces = calloc(nmax + 1u, sizeof *st->traces);
    if (!st->cyc || !st->prb || !st->pt || !st->traces) {
        return false;
    }
    for (uint32_t n = 1; n <= nmax; n++) {
        if (!wl_memfrag(&st->traces[n], n)) {
            return false;
        }
    }
    printf("\n== memfrag -- the VaiOS blog's mem_frag (section 10) ==\n");
    printf("N x {malloc(72); malloc(8)}, free the 72s (fenced: cannot coalesce), then malloc(120): its probes and\n"
           "%s; N = 1..%u, fresh instance each; %s = median over %u pairs of the minimum of 2 identical runs.\n",
           ctx->clock.unit, nmax, ctx->clock.unit, st->pairs);
    st->csv = bench_csv_open(ctx, "memfrag.csv", false, st->path, sizeof st->path);
    if (st->csv != NULL) {
        fprintf(st->csv, "allocator,n,probes,cycles_median,cycles_mean,cycles_min,cycles_max,pairs,probes_vary\n");
    }
    printf("%-10s %-41s  %-27s  %-13s %s\n", "", "probes of malloc(120) at N =", "median cycles at N =", "max/min",
           "slope");
    printf("%-10s %5u %5u %5u %5u %5u %5u %6s  %6u %6u %6u %6u  %6s %6s %8s\n", "allocator", mf_show[0], mf_show[1],
           mf_show[2], mf_show[3], mf_show[4], mf_show[5], "slope", 1u, 16u, 64u, 256u, "median", "mean", "cycles/N");
    printf("%s\n", mf_rule);
    return true;
}

/* One N: 2 x pairs runs on fresh instances; false when interrupted. */
static bool measure_n(mf_state_t *st, drv_instance_t *in, uint32_t n)
{
    const wl_trace_t *t = &st->traces[n];
    uint32_t runs[2u * MEMFRAG_MAX_PAIRS];
    uint32_t mins[MEMFRAG_MAX_PAIRS];
    uint32_t p0 = DRV_NO_PROBES;
    bool vary = false;
    bool ok = true;
    const unsigned pairs = st->pairs;
    for (unsigned r = 0; r < 2u * pairs && ok; r++) {
        ok = drv_reset(in);
        drv_outcome_t o = drv_replay_timed(in, t, st->cyc, st->prb, NULL, NULL);
        ok = ok && !o.interrupted;
        runs[r] = st->cyc[t->measured];
        if (r == 0) {
            p0 = st->prb[t->measured];
        } else {
            vary |= st->prb[t->measured] != p0;
        }
    }
    if (!ok) {
        return false;
    }
    uint32_t lo = UINT32_MAX, hi = 0;
    for (unsigned j = 0; j < pairs; j++) {
        uint32_t x = runs[2u * j], y = runs[2u * j + 1u];
        mins[j] = x < y ? x : y;
        lo = mins[j] < lo ? mins[j] : lo;
        hi = x > hi ? x : hi;
        hi = y > hi ? y : hi;
    }
    double msum = 0.0;
    for (unsigned j = 0; j < pairs; j++) {
        msum += mins[j];
    }
    mt_sort_u32(mins, pairs);
    st->pt[n] = (mf_point_t){.probes = in->a->last_probes != NULL ? p0 : DRV_NO_PROBES,
                             .median = mt_percentile(mins, pairs, 50.0),
                             .mean = msum / pairs,
                             .min = lo,
                             .max = hi,
                             .probes_vary = vary,
                             .measured = true};
    return true;
}

/* Every N of one allocator; false when it cannot be created. */
static bool study_measure(bench_ctx_t *ctx, mf_state_t *st, const rt_allocator_t *a)
{
    drv_instance_t in;
    st->done_n = 0;
    if (!drv_open(&in, a, ctx->arena, ctx->arena_size, 2u * MEMFRAG_NMAX + 1u, true)) {
        printf("%-10s could not be created over the arena\n", a->name);
        return false;
    }
    for (uint32_t n = 1; n <= MEMFRAG_NMAX && !drv_stop; n++) {
        st->pt[n].measured = false;
        if (!mf_measured(ctx, n)) {
            continue;
        }
        if (!measure_n(st, &in, n)) {
            break;
        }
        st->done_n = n;
        bench_progress("memfrag", a->name, "N = 1..256", (double)n / MEMFRAG_NMAX);
    }
    drv_close(&in);
    bench_progress_clear();
    return true;
}

static void study_summarize(mf_state_t *st, const rt_allocator_t *a)
{
    const mf_point_t *pt = st->pt;
    const uint32_t done_n = st->done_n;
    char pr[6][12];
    for (int i = 0; i < 6; i++) {
        if (mf_show[i] > done_n || pt[mf_show[i]].probes == DRV_NO_PROBES) {
            snprintf(pr[i], sizeof pr[i], "%s", mf_show[i] > done_n ? "-" : "n/a");
        } else {
            snprintf(pr[i], sizeof pr[i], "%u", pt[mf_show[i]].probes);
        }
    }
    double x[MEMFRAG_NMAX], y[MEMFRAG_NMAX], yc[MEMFRAG_NMAX];
    uint32_t med_lo = UINT32_MAX, med_hi = 0;
    double mean_lo = 1e300, mean_hi = 0.0;
    size_t np = 0;
    for (uint32_t n = 1; n <= done_n; n++) {
        if (!pt[n].measured) {
            continue;
        }
        x[np] = (double)n;
        y[np] = pt[n].probes == DRV_NO_PROBES ? 0.0 : (double)pt[n].probes;
        yc[np++] = pt[n].mean;
        med_lo = pt[n].median < med_lo ? pt[n].median : med_lo;
        med_hi = pt[n].median > med_hi ? pt[n].median : med_hi;
        mean_lo = pt[n].mean < mean_lo ? pt[n].mean : mean_lo;
        mean_hi = pt[n].mean > mean_hi ? pt[n].mean : mean_hi;
    }
    char pslope[16] = "n/a";
    if (a->last_probes != NULL && np > 1) {
        snprintf(pslope, sizeof pslope, "%.2f", slope(x, y, np));
    }
    const uint32_t cshow[] = {1, 16, 64, 256};
    char cy[4][16];
    for (int i = 0; i < 4; i++) {
        if (cshow[i] > done_n) {
            snprintf(cy[i], sizeof cy[i], "-");
        } else {
            snprintf(cy[i], sizeof cy[i], "%u", pt[cshow[i]].median);
        }
    }
    double flat = med_lo > 0 && done_n > 0 ? (double)med_hi / (double)med_lo : 0.0;
    double flat_mean = mean_lo > 0.0 && done_n > 0 ? mean_hi / mean_lo : 0.0;
    printf("%-10s %5s %5s %5s %5s %5s %5s %6s  %6s %6s %6s %6s  %6.2f %6.2f %8.2f", a->name, pr[0], pr[1], pr[2], pr[3],
           pr[4], pr[5], pslope, cy[0], cy[1], cy[2], cy[3], flat, flat_mean, np > 1 ? slope(x, yc, np) : 0.0);
    if (done_n < MEMFRAG_NMAX) {
        printf("  (interrupted at N = %u)", done_n);
    }
    printf("\n");
    fflush(stdout);
    if (done_n == MEMFRAG_NMAX && strcmp(a->name, "tlsf") == 0) {
        st->tlsf_done = true;
        st->tlsf_flat = flat;
        st->tlsf_flat_mean = flat_mean;
        for (uint32_t n = 1; n <= MEMFRAG_NMAX; n++) {
            st->tlsf_pmax = pt[n].measured && pt[n].probes > st->tlsf_pmax ? pt[n].probes : st->tlsf_pmax;
        }
    }
}

static void study_write(mf_state_t *st, const rt_allocator_t *a)
{
    if (st->csv == NULL) {
        return;
    }
    for (uint32_t n = 1; n <= st->done_n; n++) {
        const mf_point_t *p = &st->pt[n];
        if (!p->measured) {
            continue;
        }
        fprintf(st->csv, "%s,%u,", a->name, n);
        if (p->probes == DRV_NO_PROBES) {
            fprintf(st->csv, ",");
        } else {
            fprintf(st->csv, "%u,", p->probes);
        }
        fprintf(st->csv, "%u,%.2f,%u,%u,%u,%d\n", p->median, p->mean, p->min, p->max, st->pairs, p->probes_vary);
    }
    fflush(st->csv);
}

int exp_memfrag(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    static mf_state_t st;
    if (!study_setup(ctx, &st)) {
        study_free(&st);
        return 1;
    }
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        if (study_measure(ctx, &st, a)) {
            study_summarize(&st, a);
            study_write(&st, a);
        }
    }
    printf("%s\n", mf_rule);
    bench_peers_footnote(stdout, ctx->allocs, ctx->nallocs);
    if (ctx->scale == BENCH_QUICK) {
        printf("quick scale: N = 1..16 and every 16th N up to 256 measured (--scale standard: every N).\n");
    }
    printf("max/min: of the per-N figures over N = 1..256 (median; mean of the pair minima). slope: least-squares\n"
           "growth per unit of N (probes/N; mean cycles/N). The blog: seglist probes = N + 3, TLSF flat at 2.\n");
    if (st.tlsf_done) {
        printf("target: tlsf flat in N, max/min of the per-N medians < 1.2: %.2f -- %s (of the means: %.2f; the\n"
               "        clock's step is %llu ticks, so a median moves by whole steps)\n",
               st.tlsf_flat, st.tlsf_flat < 1.2 ? "met" : "NOT met", st.tlsf_flat_mean,
               (unsigned long long)ctx->clock.resolution);
        printf("target: tlsf at most 2 probes: max %u -- %s\n", st.tlsf_pmax, st.tlsf_pmax <= 2 ? "met" : "NOT met");
    }
    fflush(stdout);
    bench_csv_close(st.csv, st.path);
    study_free(&st);
    return drv_stop ? 130 : 0;
}
