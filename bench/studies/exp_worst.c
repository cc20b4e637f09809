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
 *   splits, a free that merges both neighbours, emptying their lists).
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
    {"memfrag N=1000", WL_WORST_MEMFRAG, 1000, true},
    {"memfrag N=10000", WL_WORST_MEMFRAG, 10000, false},
    {"cascade", WL_WORST_CASCADE, 1, true},
    {"consolidate N=4000", WL_WORST_CONSOLIDATE, 4000, true},
    {"splitmerge", WL_WORST_SPLITMERGE, 1, true},
};
enum { WS_N = sizeof scenarios / sizeof scenarios[0] };

/* Table 2 of the paper: worst-case instructions, malloc / free. */
typedef struct ws_paper {
    const char *ours, *name;
    unsigned m, f;
} ws_paper_t;

static const ws_paper_t paper[] = {
    {"firstfit", "First-Fit", 81995, 126}, {"bestfit", "Best-Fit", 98385, 126},
    {"buddy", "Binary-Buddy", 1403, 1379}, {"glibc", "DLmalloc", 721108, 83},
    {"halffit", "Half-Fit", 136, 166},     {"tlsf", "TLSF", 170, 194},
};

static void on_progress(void *context, double done)
{
    bench_progress("worst", (const char *)context, "adversarial", done);
}

int exp_worst(bench_ctx_t *ctx)
{
    printf("\n== worst -- adversarial workloads, exact instructions of every measured call (Masmano Table 2) ==\n");
    if (!ic_supported()) {
        printf("not supported on this host (needs Linux on x86-64)\n");
        return 0;
    }
    printf("heap: the %zu MiB arena, a fresh instance per allocator and scenario (system allocators: the process\n"
           "heap of a forked child). Scenarios (bench/workload.h, wl_worst):\n", ctx->arena_size >> 20);
    wl_trace_t traces[WS_N];
    for (size_t s = 0; s < WS_N; s++) {
        if (!wl_worst(&traces[s], scenarios[s].which, scenarios[s].n)) {
            for (size_t j = 0; j < s; j++) {
                wl_release(&traces[j]);
            }
            return 1;
        }
        printf("  %-19s %s\n", scenarios[s].label, traces[s].params);
    }
    char path[1200];
    FILE *csv = bench_csv_open(ctx, "worst.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "allocator,scenario,mallocs,frees,max_malloc,max_free,error\n");
    }
    printf("max instructions per malloc / free:\n");
    printf("%-10s", "allocator");
    for (size_t s = 0; s < WS_N; s++) {
        printf(" %19s", scenarios[s].label);
    }
    printf(" %17s  %s\n", "worst", "paper (Table 2)");
    ic_plan_t plan = {.stride = 2, .step_budget = 0, .max_samples = 0};
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        printf("%-10s", a->name);
        fflush(stdout);
        uint32_t wm = 0, wf = 0;
        for (size_t s = 0; s < WS_N && !drv_stop; s++) {
            if (ctx->scale == BENCH_QUICK && !scenarios[s].at_quick) {
                printf(" %19s", "(standard)");
                continue;
            }
            ic_result_t r;
            bool ok = ic_count_trace(a, ctx->arena, ctx->arena_size, &traces[s], &plan, &r, on_progress,
                                     (void *)(uintptr_t)a->name);
            bench_progress_clear();
            uint32_t mm = 0, mf = 0;
            size_t nm = 0, nf = 0;
            for (size_t i = 0; i < r.n; i++) {
                if (r.samples[i].kind == WL_MALLOC) {
                    nm++;
                    mm = r.samples[i].count > mm ? r.samples[i].count : mm;
                } else {
                    nf++;
                    mf = r.samples[i].count > mf ? r.samples[i].count : mf;
                }
            }
            wm = mm > wm ? mm : wm;
            wf = mf > wf ? mf : wf;
            char cell[40];
            if (!ok) {
                snprintf(cell, sizeof cell, "failed");
                fprintf(stderr, "worst: %s, %s: %s\n", a->name, scenarios[s].label, r.error);
            } else if (nf == 0) {
                snprintf(cell, sizeof cell, "%u / -", mm);
            } else {
                snprintf(cell, sizeof cell, "%u / %u", mm, mf);
            }
            printf(" %19s", cell);
            fflush(stdout);
            if (csv != NULL) {
                fprintf(csv, "%s,%s,%zu,%zu,%u,%u,%d\n", a->name, scenarios[s].label, nm, nf, mm, mf, ok ? 0 : 1);
            }
            ic_result_free(&r);
        }
        char worst[40];
        snprintf(worst, sizeof worst, "%u / %u", wm, wf);
        printf(" %17s", worst);
        for (size_t p = 0; p < sizeof paper / sizeof paper[0]; p++) {
            if (strcmp(paper[p].ours, a->name) == 0) {
                printf("  %s %u / %u", paper[p].name, paper[p].m, paper[p].f);
            }
        }
        printf("\n");
        if (csv != NULL) {
            fprintf(csv, "%s,worst,0,0,%u,%u,0\n", a->name, wm, wf);
        }
    }
    if (ctx->scale == BENCH_QUICK) {
        printf("(standard): left out at quick scale (--scale standard or paper counts it).\n");
    }
    printf("Counted from the entry of the descriptor's malloc/free to its return (ret included, kernel instructions\n"
           "not). The paper's Table 2: the worst cases its authors drove each allocator to (x86-32, DLmalloc 2.7.2\n"
           "for glibc), each on its own adversarial load; ours: every scenario on every allocator, the worst column\n"
           "the maximum over them.\n");
    fflush(stdout);
    bench_csv_close(csv, path);
    for (size_t s = 0; s < WS_N; s++) {
        wl_release(&traces[s]);
    }
    return drv_stop ? 130 : 0;
}
