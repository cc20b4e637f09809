/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_paths.c -- experiment "paths": the exact instructions of each path of a
 * boundary-tag heap's malloc and free (doc/performance.md), and the worst over them.
 *
 * Scenarios (workload.h, wl_paths): for each path -- malloc exact fit, exact fit after climbing a
 * first-level row, split, split after a climb; free with no merge, merging the predecessor, the
 * successor, both -- a "kept" setup (the lists touched keep other blocks: no bitmap bit changes)
 * and a "lone" one (every list emptied, the insert into an empty list: the path at its most
 * expensive), and a split after a climb that cuts the rest of the buffer at a new high (watermark
 * and peak move: the dearest malloc met); each repeated for block sizes B = 64, 256, 1024, 4096.
 * Every measured call is counted exactly (inscount.h: ptrace single-stepping, stride 2 over
 * wl_worst's layout, no budget) and checked to be on its path (paths.h: free-block count, walk
 * and probes, looked at untraced before and after the call in the same run): a call off its path
 * is shown ("off path") and left out of the path's figures, never silently mixed in.
 *
 * Every boundary-tag heap among the selected allocators runs every scenario twice, each time on a
 * fresh instance: with one pool (the arena), and in the last of RT_HEAP_MAX_POOLS pools, the
 * arena and the pools before it filled (the validation of a pointer and of a link scans the
 * pools: the last one is its longest scan). The registry's descriptor cannot add pools, so the
 * second run adds them in the traced child before the replay (ic_plan_t.prepare), through
 * rt_heap_add_pool on the handle, which for a boundary-tag heap (RT_FAMILY_HEAP) is its rt_heap_t.
 *
 * Outputs: one table per allocator on stdout (per scenario and configuration: calls on path /
 * measured, min, mean, max instructions; per path over its scenarios; the worst malloc and free
 * over all); paths.csv (allocator, pools, scenario, path, op, measured, on_path, min, mean, max,
 * error; scenario "path:<name>" rows per path and "worst" rows).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "inscount.h"
#include "paths.h"
#include "rtalloc/heap.h"
#include "workload.h"

enum { PS_MAX = 32 };

typedef struct ps_fig {
    size_t n, on;      /* measured, on the path */
    uint32_t min, max; /* over the calls on the path */
    double sum;
    wl_path_t off; /* the path an off-path call took (the last one met) */
} ps_fig_t;

static void fig_add(ps_fig_t *f, uint32_t count)
{
    f->min = f->on == 0u || count < f->min ? count : f->min;
    f->max = count > f->max ? count : f->max;
    f->sum += count;
    f->on++;
}

static const char *op_of(wl_path_t p) { return p <= WL_PATH_M_SPLIT2 ? "malloc" : "free"; }

static void on_progress(void *context, double done)
{
    bench_progress("paths", (const char *)context, "scenarios", done);
}

/* The two heap configurations: one pool (the arena), and the scenario in the last of
 * RT_HEAP_MAX_POOLS pools, the others full (free's pool scan at its longest). */
enum { PS_CONFIGS = 2, PS_SMALL_POOL = 4096, PS_LAST_POOL = 8 << 20 };
static const char *const config_name[PS_CONFIGS] = {"1 pool", "last pool"};

/* Takes every free block of the heap (untraced, never freed): the pool(s) so far are full. */
static bool fill_heap(const rt_allocator_t *a, void *h)
{
    for (unsigned i = 0; i < 256u; i++) {
        rt_stats_t st;
        memset(&st, 0, sizeof st);
        a->stats(h, &st);
        if (st.free_blocks == 0u) {
            return true;
        }
        if (st.largest_free == 0u || a->malloc(h, st.largest_free) == NULL) {
            return false;
        }
    }
    return false;
}

/* ic_plan_t.prepare, in the child: pool 0 (the arena) filled, pools 1 .. MAX - 2 added small and
 * filled, the last pool added with room for every scenario: each scenario then runs in the last
 * pool, and the only free block at its start is that pool's rest. The handle of a boundary-tag
 * heap (RT_FAMILY_HEAP) is its rt_heap_t. The pools' memory comes from the child's libc and is
 * never freed (the child exits). */
static bool last_pool_prepare(const rt_allocator_t *a, void *handle, void *context)
{
    (void)context;
    if (a->family != RT_FAMILY_HEAP || !fill_heap(a, handle)) {
        return false;
    }
    for (unsigned k = 1; k < RT_HEAP_MAX_POOLS; k++) {
        bool last = k + 1u == RT_HEAP_MAX_POOLS;
        size_t size = last ? (size_t)PS_LAST_POOL : (size_t)PS_SMALL_POOL;
        void *mem = malloc(size);
        if (mem == NULL || !rt_heap_add_pool(handle, mem, size) || (!last && !fill_heap(a, handle))) {
            return false;
        }
    }
    return true;
}

static void print_fig(const ps_fig_t *f)
{
    if (f->on == 0u) {
        printf("  %4zu/%-4zu %5s %6s %5s", f->on, f->n, "-", "-", "-");
    } else {
        printf("  %4zu/%-4zu %5u %6.1f %5u", f->on, f->n, f->min, f->sum / (double)f->on, f->max);
    }
}

static void write_fig(FILE *csv, const char *alloc, unsigned pools, const char *scenario, wl_path_t path,
                      const ps_fig_t *f, int error)
{
    if (csv == NULL) {
        return;
    }
    fprintf(csv, "%s,%u,", alloc, pools);
    bench_csv_field(csv, scenario);
    fprintf(csv, ",");
    bench_csv_field(csv, wl_path_name(path));
    fprintf(csv, ",%s,%zu,%zu,%u,%.2f,%u,%d\n", op_of(path), f->n, f->on, f->min,
            f->on != 0u ? f->sum / (double)f->on : 0.0, f->max, error);
}

/* One allocator's figures. */
typedef struct ps_result {
    ps_fig_t scen[PS_CONFIGS][PS_MAX];
    wl_path_t want[PS_MAX];
    bool ok[PS_CONFIGS][PS_MAX];
    char note[PS_CONFIGS][PS_MAX][48];
    ps_fig_t path[PS_CONFIGS][WL_PATH_COUNT];
    uint32_t worst_m[PS_CONFIGS], worst_f[PS_CONFIGS];
} ps_result_t;

static void measure(bench_ctx_t *ctx, const rt_allocator_t *a, const wl_trace_t *traces, size_t ns, ps_result_t *res)
{
    memset(res, 0, sizeof *res);
    for (unsigned c = 0; c < PS_CONFIGS && !drv_stop; c++) {
        ic_plan_t plan = {.stride = 2,
                          .step_budget = 0,
                          .max_samples = 0,
                          .classify = true,
                          .prepare = c == 0 ? NULL : last_pool_prepare,
                          .prepare_context = NULL};
        for (size_t s = 0; s < ns && !drv_stop; s++) {
            const wl_trace_t *t = &traces[s];
            ic_result_t r;
            res->ok[c][s] =
                ic_count_trace(a, ctx->arena, ctx->arena_size, t, &plan, &r, on_progress, (void *)(uintptr_t)a->name);
            bench_progress_clear();
            ps_fig_t *f = &res->scen[c][s];
            wl_path_t off = WL_PATH_NONE;
            for (size_t i = 0; i < r.n; i++) {
                const ic_sample_t *x = &r.samples[i];
                uint32_t expect = x->op < t->nops ? t->expect[x->op] : 0u;
                if (expect == 0u) {
                    continue; /* not a measured op (cannot happen with stride 2) */
                }
                wl_path_t want = WL_EXPECT_PATH(expect);
                res->want[s] = want;
                f->n++;
                res->path[c][want].n++;
                uint32_t *worst = x->kind == WL_MALLOC ? &res->worst_m[c] : &res->worst_f[c];
                *worst = x->count > *worst ? x->count : *worst;
                if (x->tag == expect) {
                    fig_add(f, x->count);
                    fig_add(&res->path[c][want], x->count);
                } else {
                    off = WL_EXPECT_PATH(x->tag);
                }
            }
            if (!res->ok[c][s]) {
                snprintf(res->note[c][s], sizeof res->note[c][s], "%s: failed", config_name[c]);
                fprintf(stderr, "paths: %s, %s, %s: %s\n", a->name, config_name[c], wl_paths_name(s), r.error);
            } else if (f->on < f->n) {
                snprintf(res->note[c][s], sizeof res->note[c][s], "off path: %s",
                         off == WL_PATH_NONE ? "not told" : wl_path_name(off));
            }
            ic_result_free(&r);
        }
    }
}

static void summarize(const rt_allocator_t *a, const ps_result_t *res, size_t ns)
{
    printf("\n%s: instructions per call (calls on the path / measured; min, mean, max over those "
           "on it)\n",
           a->name);
    printf("  %-28s  %-26s  %-26s\n", "", "one pool", "the last of RT_HEAP_MAX_POOLS");
    printf("  %-28s  %9s %5s %6s %5s  %9s %5s %6s %5s\n", "scenario", "on/all", "min", "mean", "max", "on/all", "min",
           "mean", "max");
    for (size_t s = 0; s < ns; s++) {
        printf("  %-28s", wl_paths_name(s));
        print_fig(&res->scen[0][s]);
        print_fig(&res->scen[1][s]);
        const char *note = res->note[0][s][0] != '\0' ? res->note[0][s] : res->note[1][s];
        printf("  %s\n", note);
    }
    printf("  per path, over its scenarios' calls on the path:\n");
    for (unsigned p = 1; p < WL_PATH_COUNT; p++) {
        printf("  %-28s", wl_path_name((wl_path_t)p));
        print_fig(&res->path[0][p]);
        print_fig(&res->path[1][p]);
        printf("\n");
    }
    printf("  worst single call over every measured call: malloc %u, free %u (one pool); malloc "
           "%u, free %u (last "
           "pool)\n",
           res->worst_m[0], res->worst_f[0], res->worst_m[1], res->worst_f[1]);
    fflush(stdout);
}

static void write_rows(FILE *csv, const rt_allocator_t *a, const ps_result_t *res, size_t ns)
{
    if (csv == NULL) {
        return;
    }
    for (unsigned c = 0; c < PS_CONFIGS; c++) {
        unsigned pools = c == 0 ? 1u : (unsigned)RT_HEAP_MAX_POOLS;
        for (size_t s = 0; s < ns; s++) {
            write_fig(csv, a->name, pools, wl_paths_name(s), res->want[s], &res->scen[c][s], res->ok[c][s] ? 0 : 1);
        }
        for (unsigned p = 1; p < WL_PATH_COUNT; p++) {
            char label[64];
            snprintf(label, sizeof label, "path:%s", wl_path_name((wl_path_t)p));
            write_fig(csv, a->name, pools, label, (wl_path_t)p, &res->path[c][p], 0);
        }
        fprintf(csv, "%s,%u,worst,-,malloc,0,0,%u,0,%u,0\n", a->name, pools, res->worst_m[c], res->worst_m[c]);
        fprintf(csv, "%s,%u,worst,-,free,0,0,%u,0,%u,0\n", a->name, pools, res->worst_f[c], res->worst_f[c]);
    }
    fflush(csv);
}

int exp_paths(bench_ctx_t *ctx)
{
    printf("\n== paths -- exact instructions per path of the boundary-tag heaps' malloc and free "
           "==\n");
    if (!ic_supported()) {
        printf("not supported on this host (needs Linux on x86-64)\n");
        return 0;
    }
    size_t ns = wl_paths_count();
    if (ns > PS_MAX) {
        return 1;
    }
    static wl_trace_t traces[PS_MAX];
    printf("heap: a fresh instance per allocator, scenario and configuration: one pool (the %zu "
           "MiB arena), or the\n"
           "scenario in the last of RT_HEAP_MAX_POOLS = %u pools (the arena and the pools before "
           "it filled, the last\n"
           "one %u MiB). Scenarios (workload.h, wl_paths; s = 32-byte spacer, W = the pool's rest, "
           "each repeated for\n"
           "B = 64, 256, 1024, 4096 bytes of block):\n",
           ctx->arena_size >> 20, (unsigned)RT_HEAP_MAX_POOLS, (unsigned)(PS_LAST_POOL >> 20));
    for (size_t s = 0; s < ns; s++) {
        if (!wl_paths(&traces[s], s)) {
            for (size_t j = 0; j < s; j++) {
                wl_release(&traces[j]);
            }
            return 1;
        }
        printf("  %s\n", traces[s].params);
    }
    char path[1200];
    FILE *csv = bench_csv_open(ctx, "paths.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "allocator,pools,scenario,path,op,measured,on_path,min,mean,max,error\n");
    }
    static ps_result_t res;
    size_t measured_allocs = 0;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        if (!hp_supported(a)) {
            continue;
        }
        measured_allocs++;
        measure(ctx, a, traces, ns, &res);
        summarize(a, &res, ns);
        write_rows(csv, a, &res, ns);
    }
    if (measured_allocs == 0) {
        printf("no boundary-tag heap among the selected allocators (tlsf, tlsf32, halffit, "
               "seglist, firstfit, "
               "bestfit)\n");
    }
    printf("\nCounted from the entry of the descriptor's malloc/free to its return (ret included). "
           "A call is on its\n"
           "path when the heap's free-block count, the walk before a free and last_probes after a "
           "malloc say so\n"
           "(bench/harness/paths.h); half-fit never climbs (one probe), tlsf32's first row reaches "
           "512 bytes and the\n"
           "walking indexes have no climb, so their climb scenarios land off path.\n");
    fflush(stdout);
    bench_csv_close(csv, path);
    for (size_t s = 0; s < ns; s++) {
        wl_release(&traces[s]);
    }
    return drv_stop ? 130 : 0;
}
