/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_uniform.c -- experiments "churn" and "small" (and the TLSF targets on them).
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
static void loop_ns_per_op(drv_instance_t *in, drv_instance_t *ref, const wl_trace_t *t, progress_ctx_t *pc, double *ns,
                           double *ref_ns)
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
        fprintf(f, "%zu,%s,%u,%u,%u,%u,%u,", i, op->kind == WL_MALLOC ? "malloc" : "free", op->slot, op->size, c1[i], b,
                m);
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

/* The study's skeleton (bench/README.md, "Layout"): study_setup (trace, buffers, CSVs, glibc's
 * reference loop, table head), then per allocator study_measure (two timed runs, the whole loop),
 * study_summarize (its row, tlsf's targets) and study_write (its CSV rows), so that each row is
 * printed and written as soon as it is measured. */
typedef struct un_state {
    const wl_uniform_spec_t *spec;
    wl_trace_t t;
    uint32_t *c1, *c2, *p1, *p2, *ms, *fs, *sorted_m, *sorted_f;
    FILE *csv, *cdf;
    char path[1200], cdf_path[1200];
    drv_instance_t gin; /* glibc, the reference of every loop ratio */
    bool have_glibc;
    double glibc_ns;
    double tlsf_ratio;
    uint32_t tlsf_probes[2];
    bool tlsf_seen[2];
} un_state_t;

/* One allocator's figures. */
typedef struct un_result {
    size_t done, failures, differ, nm, nf;
    bool two, has_probes, interrupted;
    double loop, ref, ratio, pmean;
    uint32_t pmax;
    mt_summary_t sm, sf;
} un_result_t;

static void study_free(un_state_t *st)
{
    if (st->have_glibc) {
        drv_close(&st->gin);
    }
    wl_release(&st->t);
    free(st->c1), free(st->c2), free(st->p1), free(st->p2), free(st->ms), free(st->fs);
    free(st->sorted_m), free(st->sorted_f);
}

static void open_csvs(bench_ctx_t *ctx, un_state_t *st)
{
    char name[160];
    snprintf(name, sizeof name, "%s.csv", st->spec->name);
    st->csv = bench_csv_open(ctx, name, false, st->path, sizeof st->path);
    snprintf(name, sizeof name, "%s_cdf.csv", st->spec->name);
    st->cdf = bench_csv_open(ctx, name, false, st->cdf_path, sizeof st->cdf_path);
    if (st->csv != NULL) {
        fprintf(st->csv, "# workload: %s\n", st->t.params);
        fprintf(st->csv,
                "allocator,ops,mallocs,frees,failures,runs,"
                "malloc_median,malloc_p90,malloc_p99,malloc_p999,malloc_max,malloc_min,malloc_mean,malloc_sd,"
                "malloc_cv,free_median,free_p90,free_p99,free_p999,free_max,free_min,free_mean,free_sd,free_cv,"
                "loop_ns_per_op,glibc_ref_ns_per_op,loop_x_glibc,probes_max,probes_mean,probes_differ,"
                "interrupted\n");
    }
    if (st->cdf != NULL) {
        fprintf(st->cdf, "allocator,op,percentile,%s\n", ctx->clock.unit);
    }
}

static bool study_setup(bench_ctx_t *ctx, un_state_t *st, const wl_uniform_spec_t *spec)
{
    memset(st, 0, sizeof *st);
    st->spec = spec;
    st->tlsf_ratio = -1.0;
    /* quick: a tenth of the ops -- 1000 or 10000 slots are past their warm-up within the first
     * 20,000 ops, and the percentiles up to p99.9 still rest on 100 calls or more */
    size_t nops = ctx->ops != 0 ? ctx->ops : ctx->scale == BENCH_QUICK ? spec->default_ops / 10u : spec->default_ops;
    uint32_t **bufs[] = {&st->c1, &st->c2, &st->p1, &st->p2, &st->ms, &st->fs, &st->sorted_m, &st->sorted_f};
    bool ok = true;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        *bufs[i] = malloc(nops * sizeof **bufs[i]);
        ok = ok && *bufs[i] != NULL;
    }
    if (!ok || !wl_uniform(&st->t, spec, nops, ctx->seed)) {
        fprintf(stderr, "rtbench: out of memory for %s\n", spec->name);
        return false;
    }
    const char *unit = ctx->clock.unit;
    printf("\n== %s -- %s ==\n", spec->name, spec->description);
    printf("%zu ops (%zu malloc, %zu free), xorshift64* seed %llu; heaps over a %zu MiB arena touched before "
           "timing\n",
           st->t.nops, st->t.nmalloc, st->t.nfree, (unsigned long long)ctx->seed, ctx->arena_size >> 20);
    printf(
        "per call: raw %s of one call through the descriptor, %s; per-op minimum of 2 identical runs;\n"
        "nothing subtracted (empty timed region: median %llu). loop: the same ops untimed, ns/op, best of %d;\n"
        "glibc: glibc's loop replayed alternately with this allocator's (best of %d each); x glibc: the ratio of the\n"
        "two. probes: of each malloc.\n",
        unit, ctx->clock.source, (unsigned long long)ctx->clock.empty_median, LOOP_REPEATS, LOOP_REPEATS);
    open_csvs(ctx, st);
    st->have_glibc = drv_open(&st->gin, &bench_glibc, ctx->arena, ctx->arena_size, st->t.slots, false);
    if (st->have_glibc) {
        progress_ctx_t pc = {spec->name, "glibc", "whole loop"};
        double unused;
        loop_ns_per_op(&st->gin, NULL, &st->t, &pc, &st->glibc_ns, &unused);
    }
    printf("           %-31s %-32s %-23s %s\n", "malloc", "free", "loop", "probes");
    printf("%-10s %6s %6s %7s %9s  %6s %6s %7s %9s  %7s %7s %7s  %5s %7s\n", "allocator", "median", "p99", "p99.9",
           "max", "median", "p99", "p99.9", "max", "ns/op", "glibc", "x glibc", "max", "mean");
    print_rule();
    return true;
}

/* The per-op minimum of the two runs split into mallocs and frees, summarized; probes of mallocs. */
static void summarize_calls(un_state_t *st, const rt_allocator_t *a, un_result_t *res)
{
    const wl_trace_t *t = &st->t;
    double psum = 0.0;
    res->has_probes = a->last_probes != NULL;
    for (size_t i = 0; i < res->done; i++) {
        if (st->c1[i] == DRV_NOT_MEASURED) {
            continue;
        }
        if (t->ops[i].kind == WL_MALLOC) {
            st->ms[res->nm++] = st->c1[i];
            if (res->has_probes) {
                res->pmax = st->p1[i] > res->pmax ? st->p1[i] : res->pmax;
                psum += st->p1[i];
            }
        } else {
            st->fs[res->nf++] = st->c1[i];
        }
    }
    res->pmean = res->nm != 0 ? psum / (double)res->nm : 0.0;
    mt_summarize_u32(st->ms, res->nm, &res->sm, st->sorted_m);
    mt_summarize_u32(st->fs, res->nf, &res->sf, st->sorted_f);
}

/* Two timed runs, then the whole loop against glibc's; false when it cannot be created. */
static bool study_measure(bench_ctx_t *ctx, un_state_t *st, const rt_allocator_t *a, un_result_t *res)
{
    memset(res, 0, sizeof *res);
    progress_ctx_t pc = {st->spec->name, a->name, "timed run 1/2"};
    drv_instance_t in;
    if (!drv_open(&in, a, ctx->arena, ctx->arena_size, st->t.slots, true)) {
        printf("%-10s could not be created over the arena\n", a->name);
        return false;
    }
    drv_outcome_t o1 = drv_replay_timed(&in, &st->t, st->c1, st->p1, on_progress, &pc);
    res->done = o1.done;
    res->failures = o1.failures;
    if (!o1.interrupted && drv_reset(&in)) {
        pc.phase = "timed run 2/2";
        drv_outcome_t o2 = drv_replay_timed(&in, &st->t, st->c2, st->p2, on_progress, &pc);
        if (!o2.interrupted) {
            res->two = true;
            res->failures = o2.failures > res->failures ? o2.failures : res->failures;
            for (size_t i = 0; i < res->done; i++) {
                res->differ += st->p1[i] != st->p2[i];
            }
            if (strcmp(a->name, "glibc") == 0) {
                res->loop = res->ref = st->glibc_ns;
            } else {
                loop_ns_per_op(&in, st->have_glibc ? &st->gin : NULL, &st->t, &pc, &res->loop, &res->ref);
            }
        }
    }
    drv_close(&in);
    bench_progress_clear();
    if (ctx->raw) {
        write_raw(ctx, &st->t, a->name, st->c1, st->c2, st->p1, res->done, res->two);
    }
    if (res->two) {
        mt_min_into(st->c1, st->c2, res->done);
    }
    summarize_calls(st, a, res);
    res->interrupted = !res->two || res->loop == 0.0;
    res->ratio = res->ref > 0.0 && res->loop > 0.0 ? res->loop / res->ref : 0.0;
    return true;
}

static void study_summarize(un_state_t *st, const rt_allocator_t *a, const un_result_t *r)
{
    char probes_max[16] = "n/a", probes_mean[16] = "n/a", loop_s[16] = "-", ratio_s[16] = "-", ref_s[16] = "-";
    if (r->has_probes) {
        snprintf(probes_max, sizeof probes_max, "%u", r->pmax);
        snprintf(probes_mean, sizeof probes_mean, "%.2f", r->pmean);
    }
    if (r->loop > 0.0) {
        snprintf(loop_s, sizeof loop_s, "%.1f", r->loop);
    }
    if (r->ratio > 0.0) {
        snprintf(ratio_s, sizeof ratio_s, "%.2f", r->ratio);
        snprintf(ref_s, sizeof ref_s, "%.1f", r->ref);
    }
    printf("%-10s %6llu %6llu %7llu %9llu  %6llu %6llu %7llu %9llu  %7s %7s %7s  %5s %7s", a->name,
           (unsigned long long)r->sm.median, (unsigned long long)r->sm.p99, (unsigned long long)r->sm.p999,
           (unsigned long long)r->sm.max, (unsigned long long)r->sf.median, (unsigned long long)r->sf.p99,
           (unsigned long long)r->sf.p999, (unsigned long long)r->sf.max, loop_s, ref_s, ratio_s, probes_max,
           probes_mean);
    if (r->failures != 0) {
        printf("  (%zu mallocs failed)", r->failures);
    }
    if (r->differ != 0) {
        printf("  (probes differ between runs at %zu ops)", r->differ);
    }
    if (r->interrupted) {
        printf("  (interrupted after %zu ops, %s)", r->done, r->two ? "2 runs" : "1 run");
    }
    printf("\n");
    fflush(stdout);
    if (!r->interrupted && strcmp(a->name, "tlsf") == 0) {
        st->tlsf_ratio = r->ratio;
    }
    for (int j = 0; j < 2; j++) {
        if (strcmp(a->name, j == 0 ? "tlsf" : "tlsf32") == 0 && r->has_probes) {
            st->tlsf_seen[j] = true;
            st->tlsf_probes[j] = r->pmax;
        }
    }
}

static void study_write(un_state_t *st, const rt_allocator_t *a, const un_result_t *r)
{
    mt_write_cdf(st->cdf, a->name, "malloc", st->sorted_m, r->nm);
    mt_write_cdf(st->cdf, a->name, "free", st->sorted_f, r->nf);
    if (st->csv == NULL) {
        return;
    }
    char probes_max[16] = "", probes_mean[16] = "";
    if (r->has_probes) {
        snprintf(probes_max, sizeof probes_max, "%u", r->pmax);
        snprintf(probes_mean, sizeof probes_mean, "%.2f", r->pmean);
    }
    const mt_summary_t *sm = &r->sm, *sf = &r->sf;
    fprintf(st->csv,
            "%s,%zu,%zu,%zu,%zu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%.2f,%.2f,%.4f,"
            "%llu,%llu,%llu,%llu,%llu,%llu,%.2f,%.2f,%.4f,%.3f,%.3f,%.4f,%s,%s,%zu,%d\n",
            a->name, r->done, r->nm, r->nf, r->failures, r->two ? 2 : 1, (unsigned long long)sm->median,
            (unsigned long long)sm->p90, (unsigned long long)sm->p99, (unsigned long long)sm->p999,
            (unsigned long long)sm->max, (unsigned long long)sm->min, sm->mean, sm->sd, sm->cv,
            (unsigned long long)sf->median, (unsigned long long)sf->p90, (unsigned long long)sf->p99,
            (unsigned long long)sf->p999, (unsigned long long)sf->max, (unsigned long long)sf->min, sf->mean, sf->sd,
            sf->cv, r->loop, r->ref, r->ratio, probes_max, probes_mean, r->differ, r->interrupted ? 1 : 0);
    fflush(st->csv);
}

static int run_uniform(bench_ctx_t *ctx, const wl_uniform_spec_t *spec)
{
    bench_ensure_clock(ctx);
    static un_state_t st;
    if (!study_setup(ctx, &st, spec)) {
        study_free(&st);
        return 1;
    }
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        un_result_t r;
        if (study_measure(ctx, &st, ctx->allocs[k], &r)) {
            study_summarize(&st, ctx->allocs[k], &r);
            study_write(&st, ctx->allocs[k], &r);
        }
    }
    print_rule();
    bench_peers_footnote(stdout, ctx->allocs, ctx->nallocs);
    double ratio_target = strcmp(spec->name, "churn") == 0 ? 0.85 : 1.00;
    if (st.tlsf_ratio > 0.0) {
        printf("target: tlsf loop <= %.2f x glibc: %.2f x -- %s\n", ratio_target, st.tlsf_ratio,
               st.tlsf_ratio <= ratio_target ? "met" : "NOT met");
    }
    for (int j = 0; j < 2; j++) {
        if (st.tlsf_seen[j]) {
            printf("target: %s at most 2 probes per malloc: max %u -- %s\n", j == 0 ? "tlsf" : "tlsf32",
                   st.tlsf_probes[j], st.tlsf_probes[j] <= 2 ? "met" : "NOT met");
        }
    }
    fflush(stdout);
    bench_csv_close(st.csv, st.path);
    bench_csv_close(st.cdf, st.cdf_path);
    study_free(&st);
    return drv_stop ? 130 : 0;
}

int exp_churn(bench_ctx_t *ctx) { return run_uniform(ctx, &wl_churn); }
int exp_small(bench_ctx_t *ctx) { return run_uniform(ctx, &wl_small); }
