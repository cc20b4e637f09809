/*
 * bench/studies/exp_uniform.c -- experiments "churn" and "small" (issue 2, item 6 and "Targets").
 *
 * Per allocator: a fresh instance over the touched 64 MiB arena (system peers: the process
 * heap); the trace replayed twice with per-op timing (the instance re-created in between), the
 * per-op minimum of the two runs kept (Masmano 2006); probes after every malloc; then the same
 * trace replayed without per-op timing, timed as a whole: three times, alternating with three
 * replays on glibc, and the best of each kept. The ratio to glibc is that pair's: on a shared
 * machine whose load drifts, a reference measured minutes apart would not be comparable. The
 * glibc row's own loop is the best of three replays measured before the table.
 *
 * Outputs: the table on stdout; NAME.csv (one row per allocator), NAME_cdf.csv (quantiles of
 * malloc and free cycles, for the CDF plots); with --raw, raw/NAME_ALLOC.csv (one row per op).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "driver.h"
#include "metrics.h"
#include "peers.h"
#include "workload.h"

enum { LOOP_REPEATS = 3 };

typedef struct progress_ctx {
    const char *experiment;
    const char *allocator;
    const char *phase;
} progress_ctx_t;

static void on_progress(void *context, double done)
{
    const progress_ctx_t *p = context;
    bench_progress(p->experiment, p->allocator, p->phase, done);
}

/* One untimed replay on a fresh instance: ns, or 0 when interrupted or create fails. */
static uint64_t loop_once(drv_instance_t *in, const wl_trace_t *t)
{
    uint64_t ns = 0;
    if (!drv_reset(in)) {
        return 0;
    }
    drv_outcome_t o = drv_replay_untimed(in, t, &ns);
    return o.interrupted ? 0 : ns;
}

/* Best of LOOP_REPEATS untimed replays of `in`, alternating with replays of `ref` when ref is
 * not NULL. Stores ns per op (0 when interrupted) in *ns and *ref_ns. */
static void loop_ns_per_op(drv_instance_t *in, drv_instance_t *ref, const wl_trace_t *t, progress_ctx_t *pc,
                           double *ns, double *ref_ns)
{
    uint64_t best = UINT64_MAX, ref_best = UINT64_MAX;
    char phase[32];
    *ns = 0.0;
    *ref_ns = 0.0;
    for (int r = 0; r < LOOP_REPEATS; r++) {
        snprintf(phase, sizeof phase, "whole loop %d/%d", r + 1, LOOP_REPEATS);
        pc->phase = phase;
        on_progress(pc, (double)r / LOOP_REPEATS);
        if (ref != NULL) {
            uint64_t g = loop_once(ref, t);
            if (g == 0) {
                return;
            }
            ref_best = g < ref_best ? g : ref_best;
        }
        uint64_t a = loop_once(in, t);
        if (a == 0) {
            return;
        }
        best = a < best ? a : best;
    }
    *ns = (double)best / (double)t->nops;
    *ref_ns = ref != NULL ? (double)ref_best / (double)t->nops : 0.0;
}

static void write_raw(const bench_ctx_t *ctx, const wl_trace_t *t, const char *alloc, const uint32_t *c1,
                      const uint32_t *c2, const uint32_t *p, size_t done, bool two_runs)
{
    char name[160];
    char path[1200];
    snprintf(name, sizeof name, "%s_%s.csv", t->name, alloc);
    FILE *f = bench_csv_open(ctx, name, true, path, sizeof path);
    if (f == NULL) {
        return;
    }
    fprintf(f, "op,kind,slot,size,cycles_run1,cycles_run2,cycles_min,probes\n");
    for (size_t i = 0; i < done; i++) {
        const wl_op_t *op = &t->ops[i];
        uint32_t b = two_runs ? c2[i] : c1[i];
        uint32_t m = c1[i] < b ? c1[i] : b;
        fprintf(f, "%zu,%s,%u,%u,%u,%u,%u,", i, op->kind == WL_MALLOC ? "malloc" : "free", op->slot, op->size,
                c1[i], b, m);
        if (p[i] == DRV_NO_PROBES) {
            fprintf(f, "\n");
        } else {
            fprintf(f, "%u\n", p[i]);
        }
    }
    bench_csv_close(f, path);
}

static void print_rule(void)
{
    printf("---------- ------------------------------- -------------------------------- --------------- "
           "-------------\n");
}

static int run_uniform(bench_ctx_t *ctx, const wl_uniform_spec_t *spec)
{
    bench_ensure_clock(ctx);
    /* quick: a tenth of the ops -- 1000 or 10000 slots are past their warm-up within the first
     * 20,000 ops, and the percentiles up to p99.9 still rest on 100 calls or more */
    size_t nops = ctx->ops != 0                ? ctx->ops
                  : ctx->scale == BENCH_QUICK ? spec->default_ops / 10u
                                              : spec->default_ops;
    wl_trace_t t;
    uint32_t *c1 = malloc(nops * sizeof *c1);
    uint32_t *c2 = malloc(nops * sizeof *c2);
    uint32_t *p1 = malloc(nops * sizeof *p1);
    uint32_t *p2 = malloc(nops * sizeof *p2);
    uint32_t *ms = malloc(nops * sizeof *ms);
    uint32_t *fs = malloc(nops * sizeof *fs);
    uint32_t *sorted = malloc(nops * sizeof *sorted);
    if (!wl_uniform(&t, spec, nops, ctx->seed) || !c1 || !c2 || !p1 || !p2 || !ms || !fs || !sorted) {
        fprintf(stderr, "rtbench: out of memory for %s\n", spec->name);
        free(c1), free(c2), free(p1), free(p2), free(ms), free(fs), free(sorted);
        return 1;
    }
    const char *unit = ctx->clock.unit;
    printf("\n== %s -- %s ==\n", spec->name, spec->description);
    printf("%zu ops (%zu malloc, %zu free), xorshift64* seed %llu; heaps over a %zu MiB arena touched before "
           "timing\n",
           t.nops, t.nmalloc, t.nfree, (unsigned long long)ctx->seed, ctx->arena_size >> 20);
    printf("per call: raw %s of one call through the descriptor, %s; per-op minimum of 2 identical runs;\n"
           "nothing subtracted (empty timed region: median %llu). loop: the same ops untimed, ns/op, best of %d;\n"
           "glibc: glibc's loop replayed alternately with this allocator's (best of %d each); x glibc: the ratio of the\n"
           "two. probes: of each malloc.\n",
           unit, ctx->clock.source, (unsigned long long)ctx->clock.empty_median, LOOP_REPEATS, LOOP_REPEATS);

    char path[1200], cdf_path[1200], name[160];
    snprintf(name, sizeof name, "%s.csv", spec->name);
    FILE *csv = bench_csv_open(ctx, name, false, path, sizeof path);
    snprintf(name, sizeof name, "%s_cdf.csv", spec->name);
    FILE *cdf = bench_csv_open(ctx, name, false, cdf_path, sizeof cdf_path);
    if (csv != NULL) {
        fprintf(csv, "# workload: %s\n", t.params);
        fprintf(csv, "allocator,ops,mallocs,frees,failures,runs,"
                     "malloc_median,malloc_p90,malloc_p99,malloc_p999,malloc_max,malloc_min,malloc_mean,malloc_sd,"
                     "malloc_cv,free_median,free_p90,free_p99,free_p999,free_max,free_min,free_mean,free_sd,free_cv,"
                     "loop_ns_per_op,glibc_ref_ns_per_op,loop_x_glibc,probes_max,probes_mean,probes_differ,"
                     "interrupted\n");
    }
    if (cdf != NULL) {
        fprintf(cdf, "allocator,op,percentile,%s\n", unit);
    }

    int rc = 0;
    double glibc_ns = 0.0;
    drv_instance_t gin; /* glibc, the reference of every loop ratio */
    bool have_glibc = drv_open(&gin, &bench_glibc, ctx->arena, ctx->arena_size, t.slots, false);
    if (have_glibc) {
        progress_ctx_t pc = {spec->name, "glibc", "whole loop"};
        double unused;
        loop_ns_per_op(&gin, NULL, &t, &pc, &glibc_ns, &unused);
    }

    printf("           %-31s %-32s %-23s %s\n", "malloc", "free", "loop", "probes");
    printf("%-10s %6s %6s %7s %9s  %6s %6s %7s %9s  %7s %7s %7s  %5s %7s\n", "allocator", "median", "p99", "p99.9",
           "max", "median", "p99", "p99.9", "max", "ns/op", "glibc", "x glibc", "max", "mean");
    print_rule();

    double tlsf_ratio = -1.0;
    uint32_t tlsf_probes[2] = {0, 0};
    bool tlsf_seen[2] = {false, false};
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        progress_ctx_t pc = {spec->name, a->name, "timed run 1/2"};
        drv_instance_t in;
        if (!drv_open(&in, a, ctx->arena, ctx->arena_size, t.slots, true)) {
            printf("%-10s could not be created over the arena\n", a->name);
            continue;
        }
        drv_outcome_t o1 = drv_replay_timed(&in, &t, c1, p1, on_progress, &pc);
        size_t done = o1.done;
        bool two = false;
        size_t failures = o1.failures;
        size_t differ = 0;
        double loop = 0.0, ref = 0.0;
        if (!o1.interrupted && drv_reset(&in)) {
            pc.phase = "timed run 2/2";
            drv_outcome_t o2 = drv_replay_timed(&in, &t, c2, p2, on_progress, &pc);
            if (!o2.interrupted) {
                two = true;
                failures = o2.failures > failures ? o2.failures : failures;
                for (size_t i = 0; i < done; i++) {
                    differ += p1[i] != p2[i];
                }
                if (strcmp(a->name, "glibc") == 0) {
                    loop = ref = glibc_ns;
                } else {
                    loop_ns_per_op(&in, have_glibc ? &gin : NULL, &t, &pc, &loop, &ref);
                }
            }
        }
        drv_close(&in);
        bench_progress_clear();
        if (ctx->raw) {
            write_raw(ctx, &t, a->name, c1, c2, p1, done, two);
        }
        if (two) {
            mt_min_into(c1, c2, done);
        }
        size_t nm = 0, nf = 0;
        uint32_t pmax = 0;
        double psum = 0.0;
        bool has_probes = a->last_probes != NULL;
        for (size_t i = 0; i < done; i++) {
            if (c1[i] == DRV_NOT_MEASURED) {
                continue;
            }
            if (t.ops[i].kind == WL_MALLOC) {
                ms[nm++] = c1[i];
                if (has_probes) {
                    pmax = p1[i] > pmax ? p1[i] : pmax;
                    psum += p1[i];
                }
            } else {
                fs[nf++] = c1[i];
            }
        }
        double pmean = nm != 0 ? psum / (double)nm : 0.0;
        mt_summary_t sm, sf;
        mt_summarize_u32(ms, nm, &sm, sorted);
        mt_write_cdf(cdf, a->name, "malloc", sorted, nm);
        mt_summarize_u32(fs, nf, &sf, sorted);
        mt_write_cdf(cdf, a->name, "free", sorted, nf);
        bool interrupted = !two || loop == 0.0;
        double ratio = ref > 0.0 && loop > 0.0 ? loop / ref : 0.0;

        char probes_max[16] = "n/a", probes_mean[16] = "n/a", loop_s[16] = "-", ratio_s[16] = "-", ref_s[16] = "-";
        if (has_probes) {
            snprintf(probes_max, sizeof probes_max, "%u", pmax);
            snprintf(probes_mean, sizeof probes_mean, "%.2f", pmean);
        }
        if (loop > 0.0) {
            snprintf(loop_s, sizeof loop_s, "%.1f", loop);
        }
        if (ratio > 0.0) {
            snprintf(ratio_s, sizeof ratio_s, "%.2f", ratio);
            snprintf(ref_s, sizeof ref_s, "%.1f", ref);
        }
        printf("%-10s %6llu %6llu %7llu %9llu  %6llu %6llu %7llu %9llu  %7s %7s %7s  %5s %7s", a->name,
               (unsigned long long)sm.median, (unsigned long long)sm.p99, (unsigned long long)sm.p999,
               (unsigned long long)sm.max, (unsigned long long)sf.median, (unsigned long long)sf.p99,
               (unsigned long long)sf.p999, (unsigned long long)sf.max, loop_s, ref_s, ratio_s, probes_max, probes_mean);
        if (failures != 0) {
            printf("  (%zu mallocs failed)", failures);
        }
        if (differ != 0) {
            printf("  (probes differ between runs at %zu ops)", differ);
        }
        if (interrupted) {
            printf("  (interrupted after %zu ops, %s)", done, two ? "2 runs" : "1 run");
        }
        printf("\n");
        fflush(stdout);
        if (csv != NULL) {
            fprintf(csv,
                    "%s,%zu,%zu,%zu,%zu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%.2f,%.2f,%.4f,"
                    "%llu,%llu,%llu,%llu,%llu,%llu,%.2f,%.2f,%.4f,%.3f,%.3f,%.4f,%s,%s,%zu,%d\n",
                    a->name, done, nm, nf, failures, two ? 2 : 1, (unsigned long long)sm.median,
                    (unsigned long long)sm.p90, (unsigned long long)sm.p99, (unsigned long long)sm.p999,
                    (unsigned long long)sm.max, (unsigned long long)sm.min, sm.mean, sm.sd, sm.cv,
                    (unsigned long long)sf.median, (unsigned long long)sf.p90, (unsigned long long)sf.p99,
                    (unsigned long long)sf.p999, (unsigned long long)sf.max, (unsigned long long)sf.min, sf.mean,
                    sf.sd, sf.cv, loop, ref, ratio, has_probes ? probes_max : "", has_probes ? probes_mean : "", differ,
                    interrupted ? 1 : 0);
            fflush(csv);
        }
        if (!interrupted && strcmp(a->name, "tlsf") == 0) {
            tlsf_ratio = ratio;
        }
        for (int j = 0; j < 2; j++) {
            if (strcmp(a->name, j == 0 ? "tlsf" : "tlsf32") == 0 && has_probes) {
                tlsf_seen[j] = true;
                tlsf_probes[j] = pmax;
            }
        }
    }
    if (drv_stop) {
        rc = 130;
    }
    print_rule();
    bench_peers_footnote(stdout, ctx->allocs, ctx->nallocs);
    double ratio_target = strcmp(spec->name, "churn") == 0 ? 0.85 : 1.00;
    if (tlsf_ratio > 0.0) {
        printf("target: tlsf loop <= %.2f x glibc: %.2f x -- %s\n", ratio_target, tlsf_ratio,
               tlsf_ratio <= ratio_target ? "met" : "NOT met");
    }
    for (int j = 0; j < 2; j++) {
        if (tlsf_seen[j]) {
            printf("target: %s at most 2 probes per malloc: max %u -- %s\n", j == 0 ? "tlsf" : "tlsf32",
                   tlsf_probes[j], tlsf_probes[j] <= 2 ? "met" : "NOT met");
        }
    }
    fflush(stdout);
    if (have_glibc) {
        drv_close(&gin);
    }
    bench_csv_close(csv, path);
    bench_csv_close(cdf, cdf_path);
    wl_release(&t);
    free(c1), free(c2), free(p1), free(p2), free(ms), free(fs), free(sorted);
    return rc;
}

int exp_churn(bench_ctx_t *ctx) { return run_uniform(ctx, &wl_churn); }
int exp_small(bench_ctx_t *ctx) { return run_uniform(ctx, &wl_small); }
