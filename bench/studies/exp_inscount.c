/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_inscount.c -- experiment "inscount": exact instructions per call (inscount.h).
 *
 * What is counted: every instruction from the entry of the descriptor's malloc/free (what a
 * caller pays through rt_allocator_t; for the library's heaps a wrapper that jumps into
 * rt_<index>_malloc/free) to its return, ret included.
 *
 * Sample: churn and small are replayed exactly as in their timing experiments (same seed, same
 * ops); the call of every stride-th op is counted, stride = ops / S, so the sample spreads over
 * the whole run (quick: S = 2,000 ops, a budget of 500,000 single steps per allocator and
 * workload; full: S = 20,000, 5,000,000 steps). When the running mean predicts the budget would
 * run out, the stride widens (reported). mem_frag's malloc(120) is counted for every N = 1..256.
 * The counter is first checked on code of known length.
 *
 * For the boundary-tag heaps each sampled call of churn and small is also told by its path (paths.h:
 * exact fit or split, climb; merges of free), from untraced looks at the heap before and after it,
 * so the counts are the same as without; the sample is then shown per path.
 *
 * Outputs: the table on stdout; inscount.csv (per workload, allocator and op: calls, mean, min,
 * median, p99, max, sd), inscount_paths.csv (per workload, heap and path: calls, mean, min, max),
 * inscount_memfrag.csv (per allocator and N), inscount_selftest.csv.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "inscount.h"
#include "metrics.h"
#include "paths.h"
#include "workload.h"

typedef struct ic_progress {
    const char *workload;
    const char *allocator;
} ic_progress_t;

static void on_progress(void *context, double done)
{
    const ic_progress_t *p = context;
    bench_progress("inscount", p->allocator, p->workload, done);
}

/* The TLSF targets' reference: the most used public C TLSF on these workloads. */
typedef struct ic_reference {
    const char *workload;
    double malloc_mean, malloc_max, free_mean, free_max; /* 0: not given */
} ic_reference_t;

static const ic_reference_t references[] = {
    {"churn", 174, 208, 114, 192},
    {"small", 118, 0, 77, 0},
};

typedef struct ic_tlsf {
    bool seen;
    mt_summary_t m, f;
} ic_tlsf_t;

static void print_target(const char *what, double measured, double reference)
{
    if (reference <= 0.0) {
        return;
    }
    double limit = 0.8 * reference;
    printf("target: %-34s <= 0.8 x %.0f = %6.1f: %7.1f -- %s\n", what, reference, limit, measured,
           measured <= limit ? "met" : "NOT met");
}

/* One allocator on the trace t: its table row, its two rows of inscount.csv; tlsf's summaries into
 * tl. v: room for the counts of one op. */
/* The sampled calls of a boundary-tag heap grouped by the path each took (plan.classify, paths.h):
 * one line per path met on stdout, one row each in inscount_paths.csv (pcsv). */
static void print_paths(const wl_uniform_spec_t *spec, const rt_allocator_t *a, const ic_result_t *r, FILE *pcsv)
{
    size_t n[WL_PATH_COUNT] = {0};
    uint32_t lo[WL_PATH_COUNT] = {0}, hi[WL_PATH_COUNT] = {0};
    double sum[WL_PATH_COUNT] = {0};
    for (size_t i = 0; i < r->n; i++) {
        wl_path_t p = WL_EXPECT_PATH(r->samples[i].tag);
        uint32_t c = r->samples[i].count;
        lo[p] = n[p] == 0u || c < lo[p] ? c : lo[p];
        hi[p] = c > hi[p] ? c : hi[p];
        sum[p] += c;
        n[p]++;
    }
    size_t of_kind[2] = {0};
    for (size_t i = 0; i < r->n; i++) {
        of_kind[r->samples[i].kind == WL_MALLOC ? 0 : 1]++;
    }
    for (unsigned p = 0; p < WL_PATH_COUNT; p++) {
        if (n[p] == 0u) {
            continue;
        }
        const char *name = p == WL_PATH_NONE ? "not told" : wl_path_name((wl_path_t)p);
        size_t total = of_kind[p >= WL_PATH_F_NONE ? 1 : 0];
        printf("    %-26s %6zu calls (%5.1f %% of its op's)  mean %6.1f  min %4u  max %4u\n", name, n[p],
               total != 0u ? 100.0 * (double)n[p] / (double)total : 0.0, sum[p] / (double)n[p], lo[p], hi[p]);
        if (pcsv != NULL) {
            fprintf(pcsv, "%s,%s,", spec->name, a->name);
            bench_csv_field(pcsv, name);
            fprintf(pcsv, ",%s,%zu,%.3f,%u,%u\n", p >= WL_PATH_F_NONE ? "free" : "malloc", n[p], sum[p] / (double)n[p],
                    lo[p], hi[p]);
        }
    }
}

static void count_uniform_one(bench_ctx_t *ctx, const wl_uniform_spec_t *spec, const rt_allocator_t *a,
                              const wl_trace_t *t, const ic_plan_t *plan, uint32_t *v, FILE *csv, ic_tlsf_t *tl,
                              FILE *pcsv)
{
    ic_progress_t pc = {spec->name, a->name};
    ic_result_t r;
    bool ok = ic_count_trace(a, ctx->arena, ctx->arena_size, t, plan, &r, on_progress, &pc);
    bench_progress_clear();
    mt_summary_t s[2];
    for (uint32_t kind = 0; kind < 2; kind++) {
        size_t n = 0;
        for (size_t i = 0; i < r.n; i++) {
            if (r.samples[i].kind == kind) {
                v[n++] = r.samples[i].count;
            }
        }
        mt_summarize_u32(v, n, &s[kind], NULL);
    }
    printf("%-8s %-10s %7zu %8.1f %6llu %6llu  %7zu %8.1f %6llu %6llu  %6zu%s", spec->name, a->name, s[0].n, s[0].mean,
           (unsigned long long)s[0].min, (unsigned long long)s[0].max, s[1].n, s[1].mean, (unsigned long long)s[1].min,
           (unsigned long long)s[1].max, r.final_stride, r.widened ? " (widened)" : "");
    if (!ok) {
        printf("  (%s)", r.error);
    }
    printf("\n");
    if (ok && plan->classify && hp_supported(a)) {
        print_paths(spec, a, &r, pcsv);
    }
    fflush(stdout);
    if (csv != NULL) {
        for (int kind = 0; kind < 2; kind++) {
            fprintf(csv, "%s,%s,%s,%zu,%.3f,%llu,%llu,%llu,%llu,%.3f,%zu,%zu,%d,%llu,%d\n", spec->name, a->name,
                    kind == 0 ? "malloc" : "free", s[kind].n, s[kind].mean, (unsigned long long)s[kind].min,
                    (unsigned long long)s[kind].median, (unsigned long long)s[kind].p99,
                    (unsigned long long)s[kind].max, s[kind].sd, plan->stride, r.final_stride, r.widened ? 1 : 0,
                    (unsigned long long)r.steps, ok ? 0 : 1);
        }
        fflush(csv);
    }
    if (ok && strcmp(a->name, "tlsf") == 0) {
        tl->seen = true;
        tl->m = s[0];
        tl->f = s[1];
    }
    ic_result_free(&r);
}

static int count_uniform(bench_ctx_t *ctx, const wl_uniform_spec_t *spec, FILE *csv, ic_tlsf_t *tl, FILE *pcsv)
{
    size_t nops = ctx->ops != 0 ? ctx->ops : spec->default_ops;
    /* quick: 500 calls within 100,000 steps -- the mean within a few instructions of callgrind's */
    size_t samples = ctx->scale == BENCH_FULL ? 20000u : ctx->scale == BENCH_STANDARD ? 2000u : 500u;
    ic_plan_t plan = {
        .stride = nops / samples != 0 ? nops / samples : 1u,
        .step_budget = ctx->scale == BENCH_FULL       ? 5000000u
                       : ctx->scale == BENCH_STANDARD ? 500000u
                                                      : 100000u,
        .max_samples = 0,
        .classify = true, /* untraced looks before and after a call: the counts are unchanged */
    };
    wl_trace_t t;
    if (!wl_uniform(&t, spec, nops, ctx->seed)) {
        return 1;
    }
    uint32_t *v = malloc((t.nops / plan.stride + 2u) * sizeof *v);
    if (v == NULL) {
        wl_release(&t);
        return 1;
    }
    printf("%s: %zu ops, seed %llu; every %zu-th op counted (budget %llu single steps per allocator)\n", spec->name,
           t.nops, (unsigned long long)ctx->seed, plan.stride, (unsigned long long)plan.step_budget);
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        count_uniform_one(ctx, spec, ctx->allocs[k], &t, &plan, v, csv, tl, pcsv);
    }
    free(v);
    wl_release(&t);
    return drv_stop ? 130 : 0;
}

/* The counter's check on code of known length: printed and written to inscount_selftest.csv. */
static void check_counter(bench_ctx_t *ctx)
{
    ic_selftest_t st;
    ic_selftest(&st);
    printf("counted from the entry of the descriptor's malloc/free to its return (wrapper jump and ret included).\n");
    printf("counter self-check: a %u-instruction function counted %u, a %u-instruction loop counted %u -- %s\n",
           st.expect5, st.known5, st.expect_loop, st.loop1000, st.ok ? "exact" : "WRONG");
    char path[1200];
    FILE *f = bench_csv_open(ctx, "inscount_selftest.csv", false, path, sizeof path);
    if (f != NULL) {
        fprintf(f, "function,expected,counted\nknown5,%u,%u\nloop1000,%u,%u\n", st.expect5, st.known5, st.expect_loop,
                st.loop1000);
        bench_csv_close(f, path);
    }
}

/* mem_frag's malloc(120) for N = 1..256 for one allocator: its table row, its rows of
 * inscount_memfrag.csv (mcsv) and its summary row of inscount.csv (csv). */
static void count_memfrag_one(bench_ctx_t *ctx, const rt_allocator_t *a, FILE *csv, FILE *mcsv)
{
    ic_progress_t pc = {"memfrag", a->name};
    ic_result_t r;
    bool ok = ic_count_memfrag(a, ctx->arena, ctx->arena_size, 256, &r, on_progress, &pc);
    bench_progress_clear();
    uint32_t *v = malloc((r.n + 1u) * sizeof *v);
    mt_summary_t s;
    memset(&s, 0, sizeof s);
    if (v != NULL) {
        for (size_t i = 0; i < r.n; i++) {
            v[i] = r.samples[i].count;
        }
        mt_summarize_u32(v, r.n, &s, NULL);
        free(v);
    }
    printf("%-8s %-10s %7zu %8.1f %6llu %6llu  %8u %8u", "memfrag", a->name, s.n, s.mean, (unsigned long long)s.min,
           (unsigned long long)s.max, r.n > 0 ? r.samples[0].count : 0u, r.n >= 256 ? r.samples[255].count : 0u);
    if (!ok) {
        printf("  (%s)", r.error);
    }
    printf("\n");
    fflush(stdout);
    if (mcsv != NULL) {
        for (size_t i = 0; i < r.n; i++) {
            fprintf(mcsv, "%s,%u,%u\n", a->name, r.samples[i].tag, r.samples[i].count);
        }
    }
    if (csv != NULL) {
        fprintf(csv, "memfrag,%s,malloc,%zu,%.3f,%llu,%llu,%llu,%llu,%.3f,1,1,0,%llu,%d\n", a->name, s.n, s.mean,
                (unsigned long long)s.min, (unsigned long long)s.median, (unsigned long long)s.p99,
                (unsigned long long)s.max, s.sd, (unsigned long long)r.steps, ok ? 0 : 1);
    }
    ic_result_free(&r);
}

static void count_memfrag(bench_ctx_t *ctx, FILE *csv)
{
    char mpath[1200];
    FILE *mcsv = bench_csv_open(ctx, "inscount_memfrag.csv", false, mpath, sizeof mpath);
    if (mcsv != NULL) {
        fprintf(mcsv, "allocator,n,instructions\n");
    }
    printf("memfrag: malloc(120) after N fenced free 72-byte blocks, every N = 1..256 counted\n");
    printf("%-8s %-10s %7s %8s %6s %6s  %8s %8s\n", "workload", "allocator", "mallocs", "mean", "min", "max", "at N=1",
           "at N=256");
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        count_memfrag_one(ctx, ctx->allocs[k], csv, mcsv);
    }
    bench_csv_close(mcsv, mpath);
}

/* tlsf's means and sampled maxima against the TLSF targets. */
static void print_targets(const ic_tlsf_t tl[2])
{
    for (int w = 0; w < 2; w++) {
        if (!tl[w].seen) {
            continue;
        }
        const ic_reference_t *ref = &references[w];
        char what[64];
        snprintf(what, sizeof what, "tlsf %s malloc mean", ref->workload);
        print_target(what, tl[w].m.mean, ref->malloc_mean);
        snprintf(what, sizeof what, "tlsf %s malloc max (sampled)", ref->workload);
        print_target(what, (double)tl[w].m.max, ref->malloc_max);
        snprintf(what, sizeof what, "tlsf %s free mean", ref->workload);
        print_target(what, tl[w].f.mean, ref->free_mean);
        snprintf(what, sizeof what, "tlsf %s free max (sampled)", ref->workload);
        print_target(what, (double)tl[w].f.max, ref->free_max);
    }
}

int exp_inscount(bench_ctx_t *ctx)
{
    printf("\n== inscount -- instructions per call, exact (ptrace single-stepping) ==\n");
    if (!ic_supported()) {
        printf("not supported on this host (needs Linux on x86-64)\n");
        return 0;
    }
    check_counter(ctx);

    char path[1200];
    FILE *csv = bench_csv_open(ctx, "inscount.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "workload,allocator,op,calls,mean,min,median,p99,max,sd,stride,final_stride,widened,steps,"
                     "error\n");
    }
    printf("%-8s %-10s %7s %8s %6s %6s  %7s %8s %6s %6s  %6s\n", "workload", "allocator", "mallocs", "mean", "min",
           "max", "frees", "mean", "min", "max", "stride");
    printf("-------- ---------- ------------------------------  ------------------------------  ------\n");
    char ppath[1200];
    FILE *pcsv = bench_csv_open(ctx, "inscount_paths.csv", false, ppath, sizeof ppath);
    if (pcsv != NULL) {
        fprintf(pcsv, "workload,allocator,path,op,calls,mean,min,max\n");
    }
    ic_tlsf_t tl[2];
    memset(tl, 0, sizeof tl);
    int rc = count_uniform(ctx, &wl_churn, csv, &tl[0], pcsv);
    if (rc == 0) {
        rc = count_uniform(ctx, &wl_small, csv, &tl[1], pcsv);
    }
    bench_csv_close(pcsv, ppath);
    if (rc == 0) {
        count_memfrag(ctx, csv);
    }
    printf("-------- ---------- ------------------------------  ------------------------------  ------\n");
    print_targets(tl);
    fflush(stdout);
    bench_csv_close(csv, path);
    return drv_stop ? 130 : rc;
}
