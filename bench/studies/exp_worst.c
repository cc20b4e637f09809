/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_worst.c -- experiment "worst": each allocator driven to its known worst or bad case
 * (workload.h, wl_worst), every measured call's instructions counted exactly (inscount.h: ptrace
 * single-stepping, stride 2 over the trace's layout, no budget: no sampling), beside Masmano et
 * al. 2006, Table 2 (worst-case instructions per malloc / free on their adversarial loads).
 *
 * Every scenario runs on every selected allocator, each on a fresh instance over the 64 MiB arena:
 *   memfrag N=1000 and N=10000 (first fit, best fit, seglist: a long list of fenced blocks too
 *   small for the request), cascade (binary buddy: split cascade from its largest order on a fresh
 *   heap, merge cascade on the free), consolidate N=4000 (glibc: fast-bin chunks merged by a large
 *   request, malloc_consolidate), splitmerge (TLSF / half-fit: a malloc that climbs octaves and
 *   splits, a free that merges both neighbours, emptying their lists), quickflush N=256 (tlsfq: a
 *   malloc the index cannot serve while 256 cached blocks wait, each merging both neighbours when
 *   given back).
 *
 * Outputs: the table on stdout; worst.csv (allocator, scenario, measured mallocs and frees, max
 * instructions per malloc and per free).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "inscount.h"
#include "workload.h"

typedef struct ws_scenario {
    const char *label;
    wl_worst_t which;
    uint32_t n;
    bool at_quick; /* measured at quick scale too */
} ws_scenario_t;

/* Quick scale leaves out memfrag N=10000: single-stepping its one malloc (320,000 instructions on
 * the list heaps, ~20 s each) is most of the experiment, and N=1000 shows the same linear walk. */
static const ws_scenario_t scenarios[] = {
    {"memfrag N=1000", WL_WORST_MEMFRAG, 1000, true}, {"memfrag N=10000", WL_WORST_MEMFRAG, 10000, false},
    {"cascade", WL_WORST_CASCADE, 1, true},           {"consolidate N=4000", WL_WORST_CONSOLIDATE, 4000, true},
    {"splitmerge", WL_WORST_SPLITMERGE, 1, true},     {"quickflush N=256", WL_WORST_QUICKFLUSH, 256, true},
};
enum { WS_N = sizeof scenarios / sizeof scenarios[0] };

/* Table 2 of the paper: worst-case instructions, malloc / free. */
typedef struct ws_paper {
    const char *ours, *name;
    unsigned m, f;
} ws_paper_t;

static const ws_paper_t paper[] = {
    {"firstfit", "First-Fit", 81995, 126}, {"bestfit", "Best-Fit", 98385, 126}, {"buddy", "Binary-Buddy", 1403, 1379},
    {"glibc", "DLmalloc", 721108, 83},     {"halffit", "Half-Fit", 136, 166},   {"tlsf", "TLSF", 170, 194},
};

static void on_progress(void *context, double done)
{
    bench_progress("worst", (const char *)context, "adversarial", done);
}

/* The study's skeleton (bench/README.md, "Layout": the same four functions in each study):
 * study_setup (workloads, CSV, table head), then per allocator study_measure (the counts),
 * study_summarize (its table row) and study_write (its CSV rows), so that each row is printed and
 * written as soon as it is measured; then the footnotes and the clean-up. */
typedef struct ws_state {
    wl_trace_t traces[WS_N];
    FILE *csv;
    char path[1200];
} ws_state_t;

/* One allocator's figures: the most instructions per malloc and per free of each scenario. */
typedef struct ws_result {
    bool ok[WS_N], skipped[WS_N];
    size_t nm[WS_N], nf[WS_N];
    uint32_t mm[WS_N], mf[WS_N];
    uint32_t wm, wf; /* the worst over the scenarios */
} ws_result_t;

static bool study_setup(bench_ctx_t *ctx, ws_state_t *st)
{
    printf("heap: the %zu MiB arena, a fresh instance per allocator and scenario (system allocators: the process\n"
           "heap of a forked child). Scenarios (bench/workload.h, wl_worst):\n",
           ctx->arena_size >> 20);
    for (size_t s = 0; s < WS_N; s++) {
        if (!wl_worst(&st->traces[s], scenarios[s].which, scenarios[s].n)) {
            for (size_t j = 0; j < s; j++) {
                wl_release(&st->traces[j]);
            }
            return false;
        }
        printf("  %-19s %s\n", scenarios[s].label, st->traces[s].params);
    }
    st->csv = bench_csv_open(ctx, "worst.csv", false, st->path, sizeof st->path);
    if (st->csv != NULL) {
        fprintf(st->csv, "allocator,scenario,mallocs,frees,max_malloc,max_free,error\n");
    }
    printf("max instructions per malloc / free:\n");
    printf("%-10s", "allocator");
    for (size_t s = 0; s < WS_N; s++) {
        printf(" %19s", scenarios[s].label);
    }
    printf(" %17s  %s\n", "worst", "paper (Table 2)");
    return true;
}

static void study_measure(bench_ctx_t *ctx, ws_state_t *st, const rt_allocator_t *a, ws_result_t *res)
{
    memset(res, 0, sizeof *res);
    ic_plan_t plan = {.stride = 2, .step_budget = 0, .max_samples = 0};
    for (size_t s = 0; s < WS_N && !drv_stop; s++) {
        if (ctx->scale == BENCH_QUICK && !scenarios[s].at_quick) {
            res->skipped[s] = true;
            continue;
        }
        ic_result_t r;
        res->ok[s] = ic_count_trace(a, ctx->arena, ctx->arena_size, &st->traces[s], &plan, &r, on_progress,
                                    (void *)(uintptr_t)a->name);
        bench_progress_clear();
        for (size_t i = 0; i < r.n; i++) {
            if (r.samples[i].kind == WL_MALLOC) {
                res->nm[s]++;
                res->mm[s] = r.samples[i].count > res->mm[s] ? r.samples[i].count : res->mm[s];
            } else {
                res->nf[s]++;
                res->mf[s] = r.samples[i].count > res->mf[s] ? r.samples[i].count : res->mf[s];
            }
        }
        res->wm = res->mm[s] > res->wm ? res->mm[s] : res->wm;
        res->wf = res->mf[s] > res->wf ? res->mf[s] : res->wf;
        if (!res->ok[s]) {
            fprintf(stderr, "worst: %s, %s: %s\n", a->name, scenarios[s].label, r.error);
        }
        ic_result_free(&r);
    }
}

static void study_summarize(const rt_allocator_t *a, const ws_result_t *res)
{
    printf("%-10s", a->name);
    for (size_t s = 0; s < WS_N; s++) {
        char cell[40];
        if (res->skipped[s]) {
            snprintf(cell, sizeof cell, "(standard)");
        } else if (!res->ok[s]) {
            snprintf(cell, sizeof cell, "%s", drv_stop ? "-" : "failed");
        } else if (res->nf[s] == 0) {
            snprintf(cell, sizeof cell, "%u / -", res->mm[s]);
        } else {
            snprintf(cell, sizeof cell, "%u / %u", res->mm[s], res->mf[s]);
        }
        printf(" %19s", cell);
    }
    char worst[40];
    snprintf(worst, sizeof worst, "%u / %u", res->wm, res->wf);
    printf(" %17s", worst);
    for (size_t p = 0; p < sizeof paper / sizeof paper[0]; p++) {
        if (strcmp(paper[p].ours, a->name) == 0) {
            printf("  %s %u / %u", paper[p].name, paper[p].m, paper[p].f);
        }
    }
    printf("\n");
    fflush(stdout);
}

static void study_write(ws_state_t *st, const rt_allocator_t *a, const ws_result_t *res)
{
    if (st->csv == NULL) {
        return;
    }
    for (size_t s = 0; s < WS_N; s++) {
        if (!res->skipped[s]) {
            fprintf(st->csv, "%s,%s,%zu,%zu,%u,%u,%d\n", a->name, scenarios[s].label, res->nm[s], res->nf[s],
                    res->mm[s], res->mf[s], res->ok[s] ? 0 : 1);
        }
    }
    fprintf(st->csv, "%s,worst,0,0,%u,%u,0\n", a->name, res->wm, res->wf);
}

int exp_worst(bench_ctx_t *ctx)
{
    printf("\n== worst -- adversarial workloads, exact instructions of every measured call (Masmano Table 2) ==\n");
    if (!ic_supported()) {
        printf("not supported on this host (needs Linux on x86-64)\n");
        return 0;
    }
    static ws_state_t st;
    if (!study_setup(ctx, &st)) {
        return 1;
    }
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        ws_result_t res;
        study_measure(ctx, &st, ctx->allocs[k], &res);
        study_summarize(ctx->allocs[k], &res);
        study_write(&st, ctx->allocs[k], &res);
    }
    if (ctx->scale == BENCH_QUICK) {
        printf("(standard): left out at quick scale (--scale standard or paper counts it).\n");
    }
    printf("Counted from the entry of the descriptor's malloc/free to its return (ret included, kernel instructions\n"
           "not). The paper's Table 2: the worst cases its authors drove each allocator to (x86-32, DLmalloc 2.7.2\n"
           "for glibc), each on its own adversarial load; ours: every scenario on every allocator, the worst column\n"
           "the maximum over them.\n");
    fflush(stdout);
    bench_csv_close(st.csv, st.path);
    for (size_t s = 0; s < WS_N; s++) {
        wl_release(&st.traces[s]);
    }
    return drv_stop ? 130 : 0;
}
