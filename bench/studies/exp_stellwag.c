/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_stellwag.c -- experiment "stellwag": the multi-thread study of Stellwag, Krainz and
 * Schroeder-Preikschat 2010, section 3.5 (Figure 10), through the multi-thread driver (mt.h).
 *
 * The paper: 16 threads at the highest real-time priority on 16 idle cores, a 64 MiB heap, four
 * tests, each thread running the same sequence against one shared allocator:
 *   I    malloc(948) repeatedly, never freed; a thread stops at its first failure ("the test case
 *        terminates if no more memory is available").
 *   II   malloc(948) and free it at once, 20,000 times per thread (a failure is counted and the
 *        loop goes on).
 *   III  malloc of sizes growing from 10 bytes by x1.25 (s' = s + s/4 in integers: 10, 12, 15,
 *        18, 22, 27, ...), never freed; a thread stops at its first failure, as in I. There is no
 *        restart from 10: the paper's III "terminates, if no more memory is available", and its
 *        utilisation row (TLSF 98.99 %) is what T threads growing together reach when the first
 *        request that no longer fits ends each of them.
 *   IV   as III, each block freed at once; a thread stops at its first failure, so the test ends
 *        when no thread gets what it asks for. Only mallocs are in the paper's figures ("we
 *        measured only the time it takes to allocate"); frees are timed and shown apart.
 * Utilisation (I, III) = requested bytes of the blocks live when every thread has stopped /
 * 64 MiB; for the wait-free tree that is exactly the paper's 92.58 % in I (65,536 chunks of 15
 * nodes, 948 usable bytes each, in 2^20 - 1 nodes).
 *
 * Here: thread counts 1, 2 and 16 (--threads), pinned round-robin to the allowed CPUs (more
 * threads than CPUs is reported as oversubscribed: on a 2-CPU machine 16 threads are 8 per CPU,
 * exactly where a preempted lock holder stalls everyone else). Every call timed with the fenced
 * TSC; per test, allocator and thread count: min, median, p99, p99.9, max, mean, c_v of malloc
 * (and of free in II and IV) over all threads' calls, throughput (successful calls per second of
 * wall time, first thread's start to last thread's end), utilisation, and for allocators that
 * report per-call work (nodes visited, atomic read-modify-writes) their max, p99 and mean.
 *
 * Allocators: noop (the calibration row, always), every wait-free variant of the registry,
 * tlsf+mutex, aomalloc, glibc, jemalloc, mimalloc (mtpeers.h, peers.h). With --alloc, the named
 * ones among these ("tlsf" stands for tlsf+mutex); others are skipped with a note. Heaps over the
 * benchmark's 64 MiB arena (memset before each instance is created, so it is touched); the system
 * allocators (and noop, and aomalloc) have no 64 MiB limit: in I, III and IV the driver refuses
 * a malloc that would take the requested bytes live above 64 MiB (not called, not timed; a
 * failure) and their utilisation is by construction.
 *
 * --rt: after the normal pass, the whole study again with every thread SCHED_FIFO (where
 * permitted) and memory locked (mlockall); the tables say what was granted.
 *
 * Outputs: the tables on stdout beside the paper's Figure 10; stellwag.csv (one row per mode,
 * test, allocator, thread count) and stellwag_cdf.csv (quantiles of malloc and free cycles).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "metrics.h"
#include "mt.h"
#include "mtpeers.h"
#include "peers.h"

#if defined(__has_include)
#if __has_include("rtalloc/waitfree.h")
#include "rtalloc/waitfree.h"
#endif
#endif

enum {
    SW_HEAP_MIB = 64,
    SW_SIZE = 948,
    SW_II_REPS = 20000,
    SW_START = 10,
    SW_GROW_CAP = 128, /* III/IV: 10 * 1.25^k passes 64 MiB after 71 steps */
    SW_MAX_ALLOCS = 32,
    SW_NTESTS = 4,
};
#define SW_HEAP ((size_t)SW_HEAP_MIB << 20)

static const char *const test_name[SW_NTESTS] = {"I", "II", "III", "IV"};
static const char *const test_text[SW_NTESTS] = {
    "malloc(948) until out of memory, never freed",
    "malloc(948) + free at once, 20,000 times per thread",
    "malloc(10, x1.25 growing) until out of memory, never freed",
    "malloc(10, x1.25 growing) + free at once, until no thread gets its request",
};

/* Figure 10 of the paper (CPU cycles, 16 threads on a 16-core Xeon E7340 at 2.4 GHz): per test,
 * our (the wait-free tree), tlsf (under one lock), atops (AO_malloc). util < 0: "./." */
typedef struct sw_paper {
    double min, med, max, avg, cv, util;
} sw_paper_t;
static const char *const paper_who[3] = {"our (wait-free)", "tlsf (1 lock)", "atops (AO_malloc)"};
static const sw_paper_t paper[SW_NTESTS][3] = {
    {{5006, 19975, 29707, 20046, 0.15, 92.58},
     {6485, 14475, 6e5, 54301, 1.7, 97.92},
     {629, 13846, 367438, 48500, 1.4, 92.49}},
    {{2252, 27557, 37111, 27469, 0.14, -1}, {612, 19975, 3e5, 46791, 1.3, -1}, {901, 20799, 372699, 53998, 1.4, -1}},
    {{1114, 29444, 57264, 30551, 0.35, 66.79},
     {459, 30600, 536698, 74580, 1.3, 98.99},
     {629, 13642, 1.1e8, 777530, 8.5, 17.32}},
    {{467, 12019, 36788, 11662, 0.6, -1}, {416, 22788, 362585, 47387, 1.3, -1}, {246, 1802, 2.0e7, 131865, 9.3, -1}},
};

/* --- the four bodies ------------------------------------------------------------------------- */

static void body_i(mt_thread_t *th, void *arg)
{
    (void)arg;
    while (!mt_stop(th) && mt_malloc(th, SW_SIZE, true) != NULL) {
    }
}

static void body_ii(mt_thread_t *th, void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < SW_II_REPS && !mt_stop(th); i++) {
        void *p = mt_malloc(th, SW_SIZE, false);
        if (p != NULL) {
            mt_free(th, p, SW_SIZE);
        }
    }
}

static void body_iii(mt_thread_t *th, void *arg)
{
    (void)arg;
    for (size_t s = SW_START; s <= 2 * SW_HEAP && !mt_stop(th); s += s / 4) {
        if (mt_malloc(th, s, true) == NULL) {
            break;
        }
    }
}

static void body_iv(mt_thread_t *th, void *arg)
{
    (void)arg;
    for (size_t s = SW_START; s <= 2 * SW_HEAP && !mt_stop(th); s += s / 4) {
        void *p = mt_malloc(th, s, false);
        if (p == NULL) {
            break;
        }
        mt_free(th, p, s);
    }
}

static void (*const bodies[SW_NTESTS])(mt_thread_t *, void *) = {body_i, body_ii, body_iii, body_iv};

/* --- work counters --------------------------------------------------------------------------- */

/* The per-call work functions of an allocator that reports them (the descriptor's malloc_work and
 * free_work: the wait-free trees, with each call's stated bound); false otherwise. */
static bool work_fns(const rt_allocator_t *a, mt_malloc_work_fn *m, mt_free_work_fn *f)
{
    *m = a->malloc_work;
    *f = a->free_work;
    return *m != NULL && *f != NULL;
}

/* --- summaries ------------------------------------------------------------------------------- */

typedef struct sw_stats {
    mt_summary_t s;
    uint32_t nodes_max, nodes_p99, rmw_max, rmw_p99;
    double nodes_mean, rmw_mean;
    uint32_t nodes_bound_max, rmw_bound_max; /* the largest stated bound among the calls */
    size_t over_bound;                       /* calls above their own stated bound (nodes or RMW) */
    uint32_t cache_max;                      /* chunks moved onto or off a per-thread cache */
    double cache_mean;
    bool has_work;
} sw_stats_t;

static void summarize_work(const mt_work_t *w, size_t n, sw_stats_t *st, uint32_t *scratch)
{
    double sn = 0, sr = 0;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = w[i].nodes;
        sn += w[i].nodes;
    }
    mt_sort_u32(scratch, n);
    st->nodes_max = n ? scratch[n - 1] : 0;
    st->nodes_p99 = n ? mt_percentile(scratch, n, 99.0) : 0;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = w[i].rmw;
        sr += w[i].rmw;
    }
    mt_sort_u32(scratch, n);
    st->rmw_max = n ? scratch[n - 1] : 0;
    st->rmw_p99 = n ? mt_percentile(scratch, n, 99.0) : 0;
    for (size_t i = 0; i < n; i++) {
        st->nodes_bound_max = w[i].nodes_bound > st->nodes_bound_max ? w[i].nodes_bound : st->nodes_bound_max;
        st->rmw_bound_max = w[i].rmw_bound > st->rmw_bound_max ? w[i].rmw_bound : st->rmw_bound_max;
        if ((w[i].nodes_bound != 0 && w[i].nodes > w[i].nodes_bound) ||
            (w[i].rmw_bound != 0 && w[i].rmw > w[i].rmw_bound)) {
            st->over_bound++;
        }
    }
    st->nodes_mean = n ? sn / (double)n : 0;
    st->rmw_mean = n ? sr / (double)n : 0;
    double sc = 0;
    for (size_t i = 0; i < n; i++) {
        st->cache_max = w[i].cache_ops > st->cache_max ? w[i].cache_ops : st->cache_max;
        sc += w[i].cache_ops;
    }
    st->cache_mean = n ? sc / (double)n : 0;
    st->has_work = true;
}

/* Quantile levels of the CDF file: every 1 % and the tail in finer steps. */
static size_t cdf_levels(double *q, size_t cap)
{
    size_t n = 0;
    for (int i = 0; i <= 98 && n < cap; i++) {
        q[n++] = (double)i;
    }
    static const double tail[] = {99.0, 99.5, 99.9, 99.95, 99.99, 100.0};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0] && n < cap; i++) {
        q[n++] = tail[i];
    }
    return n;
}

static void write_cdf(FILE *f, const char *mode, const char *test, const char *alloc, unsigned threads, const char *op,
                      const uint32_t *sorted, size_t n)
{
    if (f == NULL || n == 0) {
        return;
    }
    double q[128];
    size_t nq = cdf_levels(q, 128);
    for (size_t i = 0; i < nq; i++) {
        uint32_t v = q[i] <= 0.0 ? sorted[0] : mt_percentile(sorted, n, q[i]);
        fprintf(f, "%s,%s,%s,%u,%s,%.2f,%u\n", mode, test, alloc, threads, op, q[i], v);
    }
}

/* Pools every thread's records of one kind; returns the count. */
static size_t pool_cycles(const mt_run_t *run, bool frees, uint32_t *out)
{
    size_t n = 0;
    for (unsigned i = 0; i < run->cfg.threads; i++) {
        const mt_thread_t *th = &run->th[i];
        size_t k = frees ? th->nfree : th->nmalloc;
        memcpy(out + n, frees ? th->free_cycles : th->malloc_cycles, k * sizeof *out);
        n += k;
    }
    return n;
}

static size_t pool_work(const mt_run_t *run, bool frees, mt_work_t *out)
{
    size_t n = 0;
    for (unsigned i = 0; i < run->cfg.threads; i++) {
        const mt_thread_t *th = &run->th[i];
        const mt_work_t *w = frees ? th->free_work : th->malloc_work;
        size_t k = frees ? th->nfree : th->nmalloc;
        if (w != NULL) {
            memcpy(out + n, w, k * sizeof *out);
            n += k;
        }
    }
    return n;
}

static void human_rate(char *out, size_t size, double r)
{
    if (r >= 1e6) {
        snprintf(out, size, "%.2fM", r / 1e6);
    } else if (r >= 1e3) {
        snprintf(out, size, "%.1fk", r / 1e3);
    } else {
        snprintf(out, size, "%.0f", r);
    }
}

/* --- the study ------------------------------------------------------------------------------- */

typedef struct sw_entry {
    const rt_allocator_t *a;
    int paper_col; /* 0 our, 1 tlsf, 2 atops, -1 none */
} sw_entry_t;

typedef struct sw_progress {
    const char *alloc;
    char phase[96];
} sw_progress_t;

static void on_progress(void *context, double done)
{
    sw_progress_t *p = context;
    bench_progress("stellwag", p->alloc, p->phase, done);
}

/* The wait-free variant that is the paper's algorithm (its Figure 10 "our"). */
static bool is_baseline(const rt_allocator_t *a, const rt_allocator_t *first_wf)
{
#ifdef RT_WAITFREE_BASELINE_NAME
    (void)first_wf;
    return strcmp(a->name, RT_WAITFREE_BASELINE_NAME) == 0;
#else
    return a == first_wf;
#endif
}

/* Says which of the allocators selected by --alloc the study leaves out (out[0..n): taken; tm: tlsf
 * under a lock, standing for tlsf). */
static void note_skipped(const bench_ctx_t *ctx, const sw_entry_t *out, size_t n, const rt_allocator_t *tm, FILE *notes)
{
    char skipped[512] = "";
    size_t len = 0;
    if (ctx->allocs_explicit) {
        for (size_t i = 0; i < ctx->nallocs; i++) {
            const rt_allocator_t *a = ctx->allocs[i];
            bool taken = strcmp(a->name, "tlsf") == 0 && tm != NULL;
            for (size_t k = 0; k < n; k++) {
                taken = taken || out[k].a == a;
            }
            if (!taken) {
                int w = snprintf(skipped + len, sizeof skipped - len, "%s%s", len ? ", " : "", a->name);
                len += w > 0 && (size_t)w < sizeof skipped - len ? (size_t)w : 0;
            }
        }
    }
    if (len != 0) {
        fprintf(notes, "Not thread-safe, skipped: %s (only tlsf is measured under a lock, as in the paper).\n",
                skipped);
    }
}

static size_t select_allocators(const bench_ctx_t *ctx, sw_entry_t *out, FILE *notes)
{
    size_t n = 0;
    out[n++] = (sw_entry_t){&bench_noop, -1};
    size_t nall = 0;
    const rt_allocator_t *const *all = bench_allocators(&nall);
    const rt_allocator_t *first_wf = NULL;
    for (size_t i = 0; i < nall; i++) {
        if (bench_mt_is_waitfree(all[i])) {
            first_wf = first_wf != NULL ? first_wf : all[i];
        }
    }
    /* wait-free variants, in registry order */
    for (size_t i = 0; i < nall && n < SW_MAX_ALLOCS; i++) {
        if (bench_mt_is_waitfree(all[i]) && (!ctx->allocs_explicit || bench_selected(ctx, all[i]->name))) {
            out[n++] = (sw_entry_t){all[i], is_baseline(all[i], first_wf) ? 0 : -1};
        }
    }
    const rt_allocator_t *tm = bench_mt_tlsf_mutex();
    if (tm != NULL && (!ctx->allocs_explicit || bench_selected(ctx, "tlsf") || bench_selected(ctx, tm->name))) {
        out[n++] = (sw_entry_t){tm, 1};
    }
    const rt_allocator_t *pi = bench_mt_tlsf_pi();
    if (pi != NULL && (!ctx->allocs_explicit || bench_selected(ctx, pi->name))) {
        out[n++] = (sw_entry_t){pi, -1};
    }
    const rt_allocator_t *ao = bench_mt_aomalloc();
    if (ao != NULL && (!ctx->allocs_explicit || bench_selected(ctx, ao->name))) {
        out[n++] = (sw_entry_t){ao, 2};
    }
    static const char *const sys[] = {"glibc", "jemalloc", "mimalloc"};
    for (size_t k = 0; k < sizeof sys / sizeof sys[0] && n < SW_MAX_ALLOCS; k++) {
        const rt_allocator_t *a = bench_find(sys[k]);
        if (a != NULL && (!ctx->allocs_explicit || bench_selected(ctx, sys[k]))) {
            out[n++] = (sw_entry_t){a, -1};
        }
    }
    note_skipped(ctx, out, n, tm, notes);
    if (first_wf == NULL) {
        fprintf(notes, "No wait-free allocator in the registry yet: the study runs its peers only.\n");
    }
    if (ao == NULL) {
        fprintf(notes, "aomalloc unavailable: %s.\n", bench_mt_aomalloc_unavailable());
    }
    return n;
}

typedef struct sw_buffers {
    uint32_t *cycles, *sorted, *scratch;
    mt_work_t *work;
    size_t cap;
} sw_buffers_t;

static void print_table_head(int test)
{
    printf("\n-- Test %s: %s --\n", test_name[test], test_text[test]);
    printf("%-12s %3s %5s %7s %6s  %6s %7s %7s %8s %10s %9s %6s  %8s %7s", "allocator", "T", "over", "mallocs", "fail",
           "min", "median", "p99", "p99.9", "max", "mean", "c_v", "ops/s", "util");
    if (test == 1 || test == 3) {
        printf("  %-24s", "free median/p99/max");
    }
    printf("\n");
}

static void print_paper(int test)
{
    printf("  paper, Figure 10 (16 threads on 16 cores, Xeon E7340 2.4 GHz; cycles):\n");
    for (int c = 0; c < 3; c++) {
        const sw_paper_t *p = &paper[test][c];
        char util[16];
        if (p->util < 0) {
            snprintf(util, sizeof util, "./.");
        } else {
            snprintf(util, sizeof util, "%.2f %%", p->util);
        }
        printf("  %-18s min %.0f  median %.0f  max %.0f  avg %.0f  c_v %.2f  util %s\n", paper_who[c], p->min, p->med,
               p->max, p->avg, p->cv, util);
    }
}

/* What one run measured. */
typedef struct sw_result {
    bool ok, interrupted;
    unsigned cpus, pinned;
    bool oversubscribed, rt_granted, capped;
    size_t nm, nf, fails, refused;
    uint32_t fail_max;
    mt_work_t fail_work;
    uint64_t live, wall_ns;
    double rate, util;
    sw_stats_t ms, fs;
} sw_result_t;

static bool grow(sw_buffers_t *buf, size_t need)
{
    if (need <= buf->cap) {
        return true;
    }
    free(buf->cycles), free(buf->sorted), free(buf->scratch), free(buf->work);
    buf->cap = need;
    buf->cycles = malloc(need * sizeof *buf->cycles);
    buf->sorted = malloc(need * sizeof *buf->sorted);
    buf->scratch = malloc(need * sizeof *buf->scratch);
    buf->work = malloc(need * sizeof *buf->work);
    if (!buf->cycles || !buf->sorted || !buf->scratch || !buf->work) {
        free(buf->cycles), free(buf->sorted), free(buf->scratch), free(buf->work);
        memset(buf, 0, sizeof *buf);
        return false;
    }
    return true;
}

/* The multi-thread driver's configuration for `test` on a (the allocator's instance or NULL). */
static void sw_config(mt_config_t *cfg, const rt_allocator_t *a, void *handle, int test, unsigned threads, bool rt)
{
    bool never_freed = test == 0 || test == 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->a = a;
    cfg->handle = handle;
    cfg->threads = threads;
    cfg->malloc_cap = test == 0 ? SW_HEAP / SW_SIZE + 64 : test == 1 ? SW_II_REPS : SW_GROW_CAP;
    cfg->free_cap = test == 1 ? SW_II_REPS : test == 3 ? SW_GROW_CAP : 1;
    cfg->live_cap = never_freed ? cfg->malloc_cap : 1;
    cfg->budget = a->create == NULL && test != 1 ? SW_HEAP : 0;
    cfg->free_at_end = a->create == NULL;
    cfg->rt = rt;
    cfg->expected_ops = test == 0 ? SW_HEAP / SW_SIZE / threads : test == 1 ? 2u * SW_II_REPS : 2u * 72u;
    cfg->body = bodies[test];
}

/* The run's facts and its threads' counts, summed (maxima for the failures' figures), into r. */
static void sw_collect(sw_result_t *r, const mt_run_t *run, const mt_config_t *cfg, unsigned threads)
{
    r->cpus = run->cpus;
    r->pinned = run->pinned;
    r->oversubscribed = run->oversubscribed;
    r->rt_granted = run->rt_granted;
    r->capped = cfg->budget != 0;
    r->interrupted = run->interrupted;
    r->wall_ns = run->wall_ns;
    for (unsigned i = 0; i < threads; i++) {
        const mt_thread_t *th = &run->th[i];
        r->nm += th->nmalloc;
        r->nf += th->nfree;
        r->fails += th->failures;
        r->refused += th->refused;
        r->live += th->bytes_obtained - th->bytes_freed;
        r->fail_max = th->fail_max > r->fail_max ? th->fail_max : r->fail_max;
        r->fail_work.nodes =
            th->fail_work_max.nodes > r->fail_work.nodes ? th->fail_work_max.nodes : r->fail_work.nodes;
        r->fail_work.rmw = th->fail_work_max.rmw > r->fail_work.rmw ? th->fail_work_max.rmw : r->fail_work.rmw;
    }
}

/* One run of `test` on a fresh instance. work: through the allocator's counting entry points
 * (work_fns), for the work figures only; otherwise the descriptor's own malloc and free, for the
 * cycles (and their quantiles go to cdf). */
static void measure(bench_ctx_t *ctx, const rt_allocator_t *a, int test, unsigned threads, bool rt, bool work,
                    const char *mode, sw_buffers_t *buf, FILE *cdf, sw_result_t *r)
{
    memset(r, 0, sizeof *r);
    void *handle = NULL;
    if (a->create != NULL) {
        memset(ctx->arena, 0xA5, SW_HEAP); /* pre-touched, as every heap of the benchmark */
        handle = a->create(ctx->arena, SW_HEAP);
        if (handle == NULL) {
            return;
        }
    }
    mt_config_t cfg;
    sw_config(&cfg, a, handle, test, threads, rt);
    if (work && !work_fns(a, &cfg.malloc_work, &cfg.free_work)) {
        return;
    }
    sw_progress_t pc;
    pc.alloc = a->name;
    snprintf(pc.phase, sizeof pc.phase, "%stest %s, %u thread%s%s", rt ? "rt, " : "", test_name[test], threads,
             threads == 1 ? "" : "s", work ? ", work counters" : "");
    bench_progress("stellwag", a->name, pc.phase, 0.0);
    mt_run_t run;
    bool started = mt_run(&run, &cfg, on_progress, &pc);
    bench_progress_clear();
    if (!started) {
        return;
    }
    sw_collect(r, &run, &cfg, threads);
    if (!grow(buf, r->nm > r->nf ? r->nm : r->nf)) {
        mt_release(&run);
        return;
    }
    for (int op = 0; op < 2; op++) {
        sw_stats_t *st = op == 0 ? &r->ms : &r->fs;
        const char *opname = op == 0 ? "malloc" : "free";
        size_t k = pool_cycles(&run, op == 1, buf->cycles);
        mt_summarize_u32(buf->cycles, k, &st->s, buf->sorted);
        if (work) {
            size_t w = pool_work(&run, op == 1, buf->work);
            summarize_work(buf->work, w, st, buf->scratch);
        } else {
            write_cdf(cdf, mode, test_name[test], a->name, threads, opname, buf->sorted, k);
        }
    }
    double secs = (double)run.wall_ns / 1e9;
    r->rate = secs > 0 ? (double)(r->nm + r->nf) / secs : 0.0;
    r->util = 100.0 * (double)r->live / (double)SW_HEAP;
    r->ok = true;
    mt_release(&run);
}

static void csv_work(FILE *csv, const sw_stats_t *w)
{
    if (w->has_work) {
        fprintf(csv, "%u,%u,%.2f,%u,%u,%.2f,%u,%u,%zu,", w->nodes_max, w->nodes_p99, w->nodes_mean, w->rmw_max,
                w->rmw_p99, w->rmw_mean, w->nodes_bound_max, w->rmw_bound_max, w->over_bound);
    } else {
        fprintf(csv, ",,,,,,,,,");
    }
}

/* The table's row of the timed run r (and of the counted run wr's interruption). */
static void print_row(const rt_allocator_t *a, int test, unsigned threads, bool rt, const sw_result_t *r,
                      const sw_result_t *wr)
{
    bool never_freed = test == 0 || test == 2;
    char over[16] = "-", rtxt[16], utxt[16] = "./.";
    if (r->oversubscribed) {
        snprintf(over, sizeof over, "%ux", (threads + r->cpus - 1) / r->cpus);
    }
    human_rate(rtxt, sizeof rtxt, r->rate);
    if (never_freed) {
        snprintf(utxt, sizeof utxt, "%.2f%s", r->util, r->capped ? "*" : "");
    }
    const mt_summary_t *ms = &r->ms.s, *fs = &r->fs.s;
    printf("%-12s %3u %5s %7zu %6zu  %6llu %7llu %7llu %8llu %10llu %9.0f %6.2f  %8s %7s", a->name, threads, over,
           r->nm, r->fails, (unsigned long long)ms->min, (unsigned long long)ms->median, (unsigned long long)ms->p99,
           (unsigned long long)ms->p999, (unsigned long long)ms->max, ms->mean, ms->cv, rtxt, utxt);
    if (test == 1 || test == 3) {
        printf("  %llu/%llu/%llu", (unsigned long long)fs->median, (unsigned long long)fs->p99,
               (unsigned long long)fs->max);
    }
    if (r->pinned < threads) {
        printf("  (%u of %u threads unpinned)", threads - r->pinned, threads);
    }
    if (rt && !r->rt_granted) {
        printf("  (not SCHED_FIFO)");
    }
    if (r->interrupted || wr->interrupted) {
        printf("  (interrupted%s)", r->interrupted ? "" : " in the work-counter run");
    }
    printf("\n");
    fflush(stdout);
}

/* stellwag.csv's row of the timed run r and the counted run wr (has_work: wr counted). */
static void write_row(FILE *csv, const char *mode, const rt_allocator_t *a, int test, unsigned threads,
                      const sw_result_t *r, const sw_result_t *wr, bool has_work)
{
    bool never_freed = test == 0 || test == 2;
    fprintf(csv, "%s,%s,%s,%u,%u,%u,%d,%d,%d,%zu,%zu,%zu,%u,", mode, test_name[test], a->name, threads, r->cpus,
            r->pinned, r->oversubscribed ? 1 : 0, r->rt_granted ? 1 : 0, r->capped ? 1 : 0, r->nm, r->fails, r->refused,
            r->fail_max);
    const mt_summary_t *ss[2] = {&r->ms.s, &r->fs.s};
    for (int j = 0; j < 2; j++) {
        fprintf(csv, "%zu,%llu,%llu,%llu,%llu,%llu,%.1f,%.4f,", ss[j]->n, (unsigned long long)ss[j]->min,
                (unsigned long long)ss[j]->median, (unsigned long long)ss[j]->p99, (unsigned long long)ss[j]->p999,
                (unsigned long long)ss[j]->max, ss[j]->mean, ss[j]->cv);
    }
    fprintf(csv, "%llu,%.0f,%llu,", (unsigned long long)r->wall_ns, r->rate, (unsigned long long)r->live);
    if (never_freed) {
        fprintf(csv, "%.4f,", r->util);
    } else {
        fprintf(csv, ",");
    }
    csv_work(csv, &wr->ms);
    csv_work(csv, &wr->fs);
    if (has_work) {
        fprintf(csv, "%zu,%u,%u,", wr->fails, wr->fail_work.nodes, wr->fail_work.rmw);
    } else {
        fprintf(csv, ",,,");
    }
    fputc('"', csv);
    for (const char *c = a->malloc_bound != NULL ? a->malloc_bound : ""; *c != '\0'; c++) {
        fputc(*c == '"' ? '\'' : *c, csv);
    }
    fprintf(csv, "\",%d,", r->interrupted || wr->interrupted ? 1 : 0);
    for (int j = 0; j < 2; j++) {
        const sw_stats_t *w = j == 0 ? &wr->ms : &wr->fs;
        if (w->has_work) {
            fprintf(csv, "%u,%.3f%s", w->cache_max, w->cache_mean, j == 0 ? "," : "\n");
        } else {
            fprintf(csv, ",%s", j == 0 ? "," : "\n");
        }
    }
}

/* One table row and CSV row: the timed run, and for allocators with work counters a second,
 * counted run. Returns false when interrupted. */
static bool run_one(bench_ctx_t *ctx, const sw_entry_t *e, int test, unsigned threads, bool rt, const char *mode,
                    sw_buffers_t *buf, FILE *csv, FILE *cdf, sw_stats_t work_out[2], mt_work_t *fail_work_out)
{
    const rt_allocator_t *a = e->a;
    sw_result_t r, wr;
    measure(ctx, a, test, threads, rt, false, mode, buf, cdf, &r);
    memset(&wr, 0, sizeof wr);
    mt_malloc_work_fn mw;
    mt_free_work_fn fw;
    bool has_work = work_fns(a, &mw, &fw);
    if (r.ok && !r.interrupted && has_work) {
        measure(ctx, a, test, threads, rt, true, mode, buf, NULL, &wr);
        has_work = wr.ok && !wr.interrupted;
    }
    if (!r.ok) {
        printf("%-12s %3u  %s\n", a->name, threads,
               drv_stop            ? "interrupted"
               : a->create != NULL ? "could not be created over 64 MiB"
                                   : "could not start");
        return !drv_stop;
    }
    work_out[0] = wr.ms;
    work_out[1] = wr.fs;
    *fail_work_out = wr.fail_work;
    print_row(a, test, threads, rt, &r, &wr);
    if (csv != NULL) {
        write_row(csv, mode, a, test, threads, &r, &wr, has_work);
    }
    return !(r.interrupted || wr.interrupted);
}

typedef struct sw_work_row {
    const rt_allocator_t *a;
    int test;
    unsigned threads;
    sw_stats_t st[2];
    mt_work_t fail;
} sw_work_row_t;

/* --rt: asks for SCHED_FIFO and locks memory, and says what was granted. Returns false when
 * neither is permitted (the rt tables would repeat the normal ones). */
static bool rt_prepare(void)
{
    int perm = mt_rt_permitted();
    int lock = mt_lock_memory();
    printf("\n== stellwag --rt: the same study with SCHED_FIFO and locked memory ==\n");
    printf("SCHED_FIFO (priority max - 1): %s; mlockall(MCL_CURRENT | MCL_FUTURE%s): %s.\n",
           perm == 0       ? "granted"
           : perm == EPERM ? "NOT permitted here (EPERM): threads run SCHED_OTHER"
                           : strerror(perm),
#ifdef MCL_ONFAULT
           " | MCL_ONFAULT",
#else
           "",
#endif
           lock == 0 ? "done" : strerror(lock));
    if (perm != 0 && lock != 0) {
        printf("Neither is permitted: the rt tables would repeat the normal ones; skipped.\n");
        return false;
    }
    return true;
}

/* The notes under the tables: the columns, the budget-capped allocators, aomalloc's state. */
static void print_notes(unsigned cpus)
{
    printf("T: threads (pinned round-robin to %u CPU%s); over: threads per CPU when oversubscribed. Cycles: fenced\n"
           "rdtsc around each call, raw; all threads' calls pooled. ops/s: successful mallocs and frees per second\n"
           "of wall time. util: requested bytes live when every thread stopped / 64 MiB (I, III). fail: failed or\n"
           "refused mallocs (the one that ends each thread in I, III, IV).\n"
           "* budget-capped (noop, aomalloc, glibc, jemalloc, mimalloc): no 64 MiB limit of their own; the driver\n"
           "  refuses (untimed) a malloc beyond 64 MiB of requested bytes live, so their utilisation is by\n"
           "  construction. Their memory is not pre-touched (page faults fall inside their calls).\n",
           cpus, cpus == 1 ? "" : "s");
    const char *aop = bench_mt_aomalloc_progress();
    if (aop != NULL) {
        printf("aomalloc: %s.\n", aop);
    }
    if (bench_mt_aomalloc_band() != NULL) {
        printf("aomalloc: %s (its III and IV threads end there).\n", bench_mt_aomalloc_band());
    }
}

/* The work-per-call table: one row per counted run (wrows[0..nw)). */
static void print_work_table(const sw_work_row_t *wrows, size_t nw)
{
    printf("\nWork per call (clock-free), a second run of the same test through the counting entry points\n"
           "(rt_wf_malloc_ex / rt_wf_free_ex): nodes visited and atomic read-modify-writes on tree counters\n"
           "(statistics counters add 2-4 per call), max / p99 / mean over every thread's calls; [bound] the\n"
           "largest stated worst case among the calls (rt_wf_bound, waitfree.h); over: calls above their own\n"
           "bound; failed: the most nodes of a malloc that failed.\n");
    printf("%-8s %-4s %3s  %-28s %-26s  %-24s %-18s %5s %7s\n", "", "test", "T", "malloc nodes [bound]",
           "malloc RMWs [bound]", "free nodes [bound]", "free RMWs", "over", "failed");
    for (size_t i = 0; i < nw; i++) {
        const sw_work_row_t *r = &wrows[i];
        char b[4][48];
        for (int j = 0; j < 2; j++) {
            const sw_stats_t *w = &r->st[j];
            snprintf(b[2 * j], sizeof b[0], "%u / %u / %.1f [%u]", w->nodes_max, w->nodes_p99, w->nodes_mean,
                     w->nodes_bound_max);
            if (j == 0) {
                snprintf(b[1], sizeof b[0], "%u / %u / %.1f [%u]", w->rmw_max, w->rmw_p99, w->rmw_mean,
                         w->rmw_bound_max);
            } else {
                snprintf(b[3], sizeof b[0], "%u / %u / %.1f", w->rmw_max, w->rmw_p99, w->rmw_mean);
            }
        }
        printf("%-8s %-4s %3u  %-28s %-26s  %-24s %-18s %5zu %7u\n", r->a->name, test_name[r->test], r->threads, b[0],
               b[1], r->st[1].s.n ? b[2] : "-", r->st[1].s.n ? b[3] : "-", r->st[0].over_bound + r->st[1].over_bound,
               r->fail.nodes);
    }
}

static int study(bench_ctx_t *ctx, bool rt, const sw_entry_t *allocs, size_t nallocs, FILE *csv, FILE *cdf)
{
    const char *mode = rt ? "rt" : "normal";
    unsigned cpus = mt_cpus();
    if (rt && !rt_prepare()) {
        return 0;
    }
    sw_buffers_t buf;
    memset(&buf, 0, sizeof buf);
    sw_work_row_t *wrows = calloc(SW_NTESTS * BENCH_MAX_THREADS * SW_MAX_ALLOCS, sizeof *wrows);
    size_t nw = 0;
    int rc = 0;
    for (int test = 0; test < SW_NTESTS && rc == 0; test++) {
        if (ctx->scale == BENCH_QUICK && test == 3) {
            continue; /* quick: I-III (II the paper's timing test; I and III its utilisation) */
        }
        print_table_head(test);
        for (size_t k = 0; k < nallocs && rc == 0; k++) {
            for (size_t t = 0; t < ctx->nthreads && rc == 0; t++) {
                sw_stats_t st[2];
                memset(st, 0, sizeof st);
                mt_work_t fail = {0};
                if (!run_one(ctx, &allocs[k], test, ctx->threads[t], rt, mode, &buf, csv, cdf, st, &fail)) {
                    rc = drv_stop ? 130 : 1;
                }
                if (st[0].has_work && wrows != NULL) {
                    wrows[nw++] = (sw_work_row_t){allocs[k].a, test, ctx->threads[t], {st[0], st[1]}, fail};
                }
            }
        }
        print_paper(test);
    }
    print_notes(cpus);
    if (nw != 0) {
        print_work_table(wrows, nw);
    }
    free(wrows);
    free(buf.cycles), free(buf.sorted), free(buf.scratch), free(buf.work);
    if (rt) {
        mt_unlock_memory();
    }
    return rc;
}

int exp_stellwag(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    if (ctx->arena_size < SW_HEAP) {
        fprintf(stderr, "stellwag: the arena is smaller than %d MiB\n", SW_HEAP_MIB);
        return 1;
    }
    static const unsigned default_threads[] = {1, 2, 16};
    if (ctx->nthreads == 0) {
        size_t n = sizeof default_threads / sizeof default_threads[0];
        for (size_t i = 0; i < n; i++) {
            ctx->threads[ctx->nthreads++] = default_threads[i];
        }
    }
    unsigned cpus = mt_cpus();
    printf("\n== stellwag -- Stellwag et al. 2010, section 3.5: tests I-IV, T threads on one shared allocator ==\n");
    printf("Heap %d MiB (heaps over the benchmark's arena, touched before each instance); threads", SW_HEAP_MIB);
    for (size_t t = 0; t < ctx->nthreads; t++) {
        printf("%s %u%s", t ? "," : "", ctx->threads[t], ctx->threads[t] > cpus ? " (oversubscribed)" : "");
    }
    printf(" on %u CPU%s; %s per call.\n", cpus, cpus == 1 ? "" : "s", ctx->clock.unit);
    printf("The paper: 16 threads at the highest real-time priority on 16 idle cores of a Xeon E7340.\n");
    sw_entry_t allocs[SW_MAX_ALLOCS];
    size_t nallocs = select_allocators(ctx, allocs, stdout);
    printf("Allocators:");
    for (size_t k = 0; k < nallocs; k++) {
        printf(" %s%s", allocs[k].a->name, allocs[k].paper_col == 0 ? " (the paper's algorithm)" : "");
    }
    printf("\n");

    char path[1200], cdfpath[1200];
    FILE *csv = bench_csv_open(ctx, "stellwag.csv", false, path, sizeof path);
    FILE *cdf = bench_csv_open(ctx, "stellwag_cdf.csv", false, cdfpath, sizeof cdfpath);
    if (csv != NULL) {
        fprintf(csv, "# cpus: %u\n", cpus);
        fprintf(csv, "mode,test,allocator,threads,cpus,pinned,oversubscribed,rt_granted,budget_capped,mallocs,"
                     "failures,refused,fail_max,"
                     "malloc_n,malloc_min,malloc_median,malloc_p99,malloc_p999,malloc_max,malloc_mean,malloc_cv,"
                     "free_n,free_min,free_median,free_p99,free_p999,free_max,free_mean,free_cv,"
                     "wall_ns,ops_per_s,bytes_live,util_pct,"
                     "malloc_nodes_max,malloc_nodes_p99,malloc_nodes_mean,malloc_rmw_max,malloc_rmw_p99,"
                     "malloc_rmw_mean,malloc_nodes_bound,malloc_rmw_bound,malloc_over_bound,"
                     "free_nodes_max,free_nodes_p99,free_nodes_mean,free_rmw_max,free_rmw_p99,"
                     "free_rmw_mean,free_nodes_bound,free_rmw_bound,free_over_bound,"
                     "work_failures,fail_nodes_max,fail_rmw_max,malloc_bound,interrupted,"
                     "malloc_cache_max,malloc_cache_mean,free_cache_max,free_cache_mean\n");
    }
    if (cdf != NULL) {
        fprintf(cdf, "mode,test,allocator,threads,op,percentile,%s\n", ctx->clock.unit);
    }
    int rc = study(ctx, false, allocs, nallocs, csv, cdf);
    if (rc == 0 && ctx->rt) {
        rc = study(ctx, true, allocs, nallocs, csv, cdf);
    }
    bench_csv_close(csv, path);
    bench_csv_close(cdf, cdfpath);
    return rc;
}
