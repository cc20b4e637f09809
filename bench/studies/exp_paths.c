/*
 * bench/studies/exp_paths.c -- experiment "paths": the exact instructions of each path of a
 * boundary-tag heap's malloc and free (issue 15, "Per-path worst case"), and the worst over them.
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
 * Every boundary-tag heap among the selected allocators runs every scenario, each on a fresh
 * instance over the arena with one pool: the registry's descriptor cannot add pools
 * (rt_heap_add_pool is not in rt_allocator_t), so free's pool scan is measured with one pool, not
 * RT_HEAP_MAX_POOLS.
 *
 * Outputs: one table per allocator on stdout (per scenario: calls on path / measured, min, mean,
 * max instructions; per path over its scenarios; the worst malloc and free over all); paths.csv
 * (allocator, scenario, path, op, measured, on_path, min, mean, max, error; scenario "path:<name>"
 * rows per path and "worst" rows).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "inscount.h"
#include "paths.h"
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

static void print_fig(const char *label, const ps_fig_t *f, const char *note)
{
    if (f->on == 0u) {
        printf("  %-26s %4zu/%-4zu %6s %7s %6s  %s\n", label, f->on, f->n, "-", "-", "-", note);
    } else {
        printf("  %-26s %4zu/%-4zu %6u %7.1f %6u  %s\n", label, f->on, f->n, f->min,
               f->sum / (double)f->on, f->max, note);
    }
}

static void write_fig(FILE *csv, const char *alloc, const char *scenario, wl_path_t path,
                      const ps_fig_t *f, int error)
{
    if (csv == NULL) {
        return;
    }
    fprintf(csv, "%s,", alloc);
    bench_csv_field(csv, scenario);
    fprintf(csv, ",");
    bench_csv_field(csv, wl_path_name(path));
    fprintf(csv, ",%s,%zu,%zu,%u,%.2f,%u,%d\n", op_of(path), f->n, f->on, f->min,
            f->on != 0u ? f->sum / (double)f->on : 0.0, f->max, error);
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
    printf("heap: the %zu MiB arena, one pool, a fresh instance per allocator and scenario. "
           "Scenarios (workload.h,\n"
           "wl_paths; s = 32-byte spacer, each repeated for B = 64, 256, 1024, 4096 bytes of "
           "block):\n",
           ctx->arena_size >> 20);
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
        fprintf(csv, "allocator,scenario,path,op,measured,on_path,min,mean,max,error\n");
    }
    ic_plan_t plan = {.stride = 2, .step_budget = 0, .max_samples = 0, .classify = true};
    size_t measured_allocs = 0;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        if (!hp_supported(a)) {
            continue;
        }
        measured_allocs++;
        printf("\n%s: instructions per call (calls on the path / measured; min, mean, max over "
               "those on it)\n",
               a->name);
        printf("  %-26s %9s %6s %7s %6s\n", "scenario", "on/all", "min", "mean", "max");
        ps_fig_t per_path[WL_PATH_COUNT];
        memset(per_path, 0, sizeof per_path);
        uint32_t worst_m = 0, worst_f = 0;
        for (size_t s = 0; s < ns && !drv_stop; s++) {
            const wl_trace_t *t = &traces[s];
            ic_result_t r;
            bool ok = ic_count_trace(a, ctx->arena, ctx->arena_size, t, &plan, &r, on_progress,
                                     (void *)(uintptr_t)a->name);
            bench_progress_clear();
            ps_fig_t f;
            memset(&f, 0, sizeof f);
            wl_path_t want = WL_PATH_NONE;
            for (size_t i = 0; i < r.n; i++) {
                const ic_sample_t *x = &r.samples[i];
                uint32_t expect = x->op < t->nops ? t->expect[x->op] : 0u;
                if (expect == 0u) {
                    continue; /* not a measured op (cannot happen with stride 2) */
                }
                want = WL_EXPECT_PATH(expect);
                f.n++;
                per_path[want].n++;
                if (x->kind == WL_MALLOC) {
                    worst_m = x->count > worst_m ? x->count : worst_m;
                } else {
                    worst_f = x->count > worst_f ? x->count : worst_f;
                }
                if (x->tag == expect) {
                    fig_add(&f, x->count);
                    fig_add(&per_path[want], x->count);
                } else {
                    f.off = WL_EXPECT_PATH(x->tag);
                }
            }
            char note[200] = "";
            if (!ok) {
                snprintf(note, sizeof note, "failed: %s", r.error);
                fprintf(stderr, "paths: %s, %s: %s\n", a->name, wl_paths_name(s), r.error);
            } else if (f.on < f.n) {
                snprintf(note, sizeof note, "off path: %s",
                         f.off == WL_PATH_NONE ? "not told" : wl_path_name(f.off));
            }
            print_fig(wl_paths_name(s), &f, note);
            write_fig(csv, a->name, wl_paths_name(s), want, &f, ok ? 0 : 1);
            ic_result_free(&r);
        }
        printf("  per path, over its scenarios' calls on the path:\n");
        for (unsigned p = 1; p < WL_PATH_COUNT; p++) {
            print_fig(wl_path_name((wl_path_t)p), &per_path[p], "");
            char label[64];
            snprintf(label, sizeof label, "path:%s", wl_path_name((wl_path_t)p));
            write_fig(csv, a->name, label, (wl_path_t)p, &per_path[p], 0);
        }
        printf("  worst single call over every measured call: malloc %u, free %u\n", worst_m,
               worst_f);
        if (csv != NULL) {
            fprintf(csv, "%s,worst,-,malloc,0,0,%u,0,%u,0\n", a->name, worst_m, worst_m);
            fprintf(csv, "%s,worst,-,free,0,0,%u,0,%u,0\n", a->name, worst_f, worst_f);
        }
        fflush(stdout);
    }
    if (measured_allocs == 0) {
        printf("no boundary-tag heap among the selected allocators (tlsf, tlsf32, halffit, "
               "seglist, firstfit, bestfit)\n");
    }
    printf("\nCounted from the entry of the descriptor's malloc/free to its return (ret included). "
           "A call is on its\n"
           "path when the heap's free-block count, the walk before a free and last_probes after a "
           "malloc say so\n"
           "(bench/harness/paths.h); half-fit never climbs (one probe), so its climb scenarios "
           "land off path.\n"
           "One pool: the descriptor cannot add pools, so free's pool scan is at its shortest.\n");
    fflush(stdout);
    bench_csv_close(csv, path);
    for (size_t s = 0; s < ns; s++) {
        wl_release(&traces[s]);
    }
    return drv_stop ? 130 : 0;
}
