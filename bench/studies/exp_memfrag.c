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
    uint32_t probes;       /* DRV_NO_PROBES when n/a */
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

int exp_memfrag(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    /* quick: 5 pairs -- the median of 5 minima still drops a preempted pair; every N is kept
     * (the slope over N = 1..256 is the headline) */
    const unsigned pairs = ctx->scale == BENCH_FULL ? 101u : ctx->scale == BENCH_STANDARD ? 25u : 5u;
    /* quick: fewer N as well (mf_measured) */
    const uint32_t nmax = MEMFRAG_NMAX;
    size_t cap = 3u * nmax + 1u;
    uint32_t *cyc = malloc(cap * sizeof *cyc);
    uint32_t *prb = malloc(cap * sizeof *prb);
    mf_point_t *pt = malloc((nmax + 1u) * sizeof *pt);
    wl_trace_t *traces = calloc(nmax + 1u, sizeof *traces);
    if (!cyc || !prb || !pt || !traces) {
        free(cyc), free(prb), free(pt), free(traces);
        return 1;
    }
    for (uint32_t n = 1; n <= nmax; n++) {
        if (!wl_memfrag(&traces[n], n)) {
            return 1;
        }
    }
    printf("\n== memfrag -- the VaiOS blog's mem_frag (section 10) ==\n");
    printf("N x {malloc(72); malloc(8)}, free the 72s (fenced: cannot coalesce), then malloc(120): its probes and\n"
           "%s; N = 1..%u, fresh instance each; %s = median over %u pairs of the minimum of 2 identical runs.\n",
           ctx->clock.unit, nmax, ctx->clock.unit, pairs);
    char path[1200];
    FILE *csv = bench_csv_open(ctx, "memfrag.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "allocator,n,probes,cycles_median,cycles_mean,cycles_min,cycles_max,pairs,probes_vary\n");
    }
    const uint32_t show[] = {1, 2, 16, 64, 128, 256};
    static const char rule[] = "---------- -----------------------------------------  ---------------------------  "
                               "------------- --------";
    printf("%-10s %-41s  %-27s  %-13s %s\n", "", "probes of malloc(120) at N =", "median cycles at N =", "max/min",
           "slope");
    printf("%-10s %5u %5u %5u %5u %5u %5u %6s  %6u %6u %6u %6u  %6s %6s %8s\n", "allocator", show[0], show[1],
           show[2], show[3], show[4], show[5], "slope", 1u, 16u, 64u, 256u, "median", "mean", "cycles/N");
    printf("%s\n", rule);

    int rc = 0;
    bool tlsf_done = false;
    double tlsf_flat = 0.0, tlsf_flat_mean = 0.0;
    uint32_t tlsf_pmax = 0;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        drv_instance_t in;
        if (!drv_open(&in, a, ctx->arena, ctx->arena_size, 2u * nmax + 1u, true)) {
            printf("%-10s could not be created over the arena\n", a->name);
            continue;
        }
        uint32_t done_n = 0;
        for (uint32_t n = 1; n <= nmax && !drv_stop; n++) {
            pt[n].measured = false;
            if (!mf_measured(ctx, n)) {
                continue;
            }
            const wl_trace_t *t = &traces[n];
            uint32_t runs[2u * MEMFRAG_MAX_PAIRS];
            uint32_t mins[MEMFRAG_MAX_PAIRS];
            uint32_t p0 = DRV_NO_PROBES;
            bool vary = false;
            bool ok = true;
            for (unsigned r = 0; r < 2u * pairs && ok; r++) {
                ok = drv_reset(&in);
                drv_outcome_t o = drv_replay_timed(&in, t, cyc, prb, NULL, NULL);
                ok = ok && !o.interrupted;
                runs[r] = cyc[t->measured];
                if (r == 0) {
                    p0 = prb[t->measured];
                } else {
                    vary |= prb[t->measured] != p0;
                }
            }
            if (!ok) {
                break;
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
            pt[n] = (mf_point_t){.probes = a->last_probes != NULL ? p0 : DRV_NO_PROBES,
                                 .median = mt_percentile(mins, pairs, 50.0),
                                 .mean = msum / pairs,
                                 .min = lo,
                                 .max = hi,
                                 .probes_vary = vary,
                                 .measured = true};
            done_n = n;
            bench_progress("memfrag", a->name, "N = 1..256", (double)n / nmax);
        }
        drv_close(&in);
        bench_progress_clear();

        char pr[6][12];
        for (int i = 0; i < 6; i++) {
            if (show[i] > done_n || pt[show[i]].probes == DRV_NO_PROBES) {
                snprintf(pr[i], sizeof pr[i], "%s", show[i] > done_n ? "-" : "n/a");
            } else {
                snprintf(pr[i], sizeof pr[i], "%u", pt[show[i]].probes);
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
        printf("%-10s %5s %5s %5s %5s %5s %5s %6s  %6s %6s %6s %6s  %6.2f %6.2f %8.2f", a->name, pr[0], pr[1], pr[2],
               pr[3], pr[4], pr[5], pslope, cy[0], cy[1], cy[2], cy[3], flat, flat_mean,
               np > 1 ? slope(x, yc, np) : 0.0);
        if (done_n < nmax) {
            printf("  (interrupted at N = %u)", done_n);
        }
        printf("\n");
        fflush(stdout);
        if (csv != NULL) {
            for (uint32_t n = 1; n <= done_n; n++) {
                if (!pt[n].measured) {
                    continue;
                }
                fprintf(csv, "%s,%u,", a->name, n);
                if (pt[n].probes == DRV_NO_PROBES) {
                    fprintf(csv, ",");
                } else {
                    fprintf(csv, "%u,", pt[n].probes);
                }
                fprintf(csv, "%u,%.2f,%u,%u,%u,%d\n", pt[n].median, pt[n].mean, pt[n].min, pt[n].max, pairs,
                        pt[n].probes_vary);
            }
            fflush(csv);
        }
        if (done_n == nmax && strcmp(a->name, "tlsf") == 0) {
            tlsf_done = true;
            tlsf_flat = flat;
            tlsf_flat_mean = flat_mean;
            for (uint32_t n = 1; n <= nmax; n++) {
                tlsf_pmax = pt[n].measured && pt[n].probes > tlsf_pmax ? pt[n].probes : tlsf_pmax;
            }
        }
    }
    printf("%s\n", rule);
    bench_peers_footnote(stdout, ctx->allocs, ctx->nallocs);
    if (ctx->scale == BENCH_QUICK) {
        printf("quick scale: N = 1..16 and every 16th N up to 256 measured (--scale standard: every N).\n");
    }
    printf("max/min: of the per-N figures over N = 1..256 (median; mean of the pair minima). slope: least-squares\n"
           "growth per unit of N (probes/N; mean cycles/N). The blog: seglist probes = N + 3, TLSF flat at 2.\n");
    if (tlsf_done) {
        printf("target: tlsf flat in N, max/min of the per-N medians < 1.2: %.2f -- %s (of the means: %.2f; the\n"
               "        clock's step is %llu ticks, so a median moves by whole steps)\n",
               tlsf_flat, tlsf_flat < 1.2 ? "met" : "NOT met", tlsf_flat_mean, (unsigned long long)ctx->clock.resolution);
        printf("target: tlsf at most 2 probes: max %u -- %s\n", tlsf_pmax, tlsf_pmax <= 2 ? "met" : "NOT met");
    }
    if (drv_stop) {
        rc = 130;
    }
    fflush(stdout);
    bench_csv_close(csv, path);
    for (uint32_t n = 1; n <= nmax; n++) {
        wl_release(&traces[n]);
    }
    free(cyc), free(prb), free(pt), free(traces);
    return rc;
}
