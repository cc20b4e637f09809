/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_fma.c -- experiment "fma": the study of the FMA article (Dr. Dobb's 1998, "Performance
 * and Memory Utilization"; bench/README.md, "What is measured, and how far to trust it").
 *
 * Workload: the article's test program (wl_fma.h: random requests and releases, Table 1's size
 * distribution, a table of 5000 blocks all freed when it overflows), runs of 1,000, 5,000, 10,000,
 * 20,000, 30,000, 40,000, 50,000 and 60,000 allocations from one seed (each run a prefix of the
 * longer ones), with sizes uniform within each class (the main figures), again with the exact
 * class sizes, and again with the release of a random live block (fma_modes); and, beyond the
 * article, the burst program (wl_fma.h, WL_FMA_BURST: phases of B = 50..500 requests of one size
 * class while a random share of the earlier blocks is released -- the "burst requests and releases
 * of equal-sized memory blocks" FMA was built for; context, never judged). Allocators: noop
 * (the calibration row), fma, bsd44, tlsf, glibc; --alloc overrides. For every allocator, pass and
 * run length, on a fresh instance over the touched 64 MiB arena
 * (system allocators: the process heap):
 *   (1) the article's timing (its Table 2): the pre-computed sequence executed without heap calls
 *       (the same loop over the same trace and table, a dummy block instead of the call) and with
 *       them, each timed as a whole with CLOCK_MONOTONIC, alternately, best of R each (R from 3 to
 *       40 by run length, more at paper scale; a fresh instance before every run with calls); the
 *       difference, total ms and ns per call;
 *   (2) per call: raw cycles of the verified clock (clock.h), every call, the trace timed twice on
 *       fresh instances and the per-op minimum kept (Masmano 2006, as the rest of the benchmark);
 *       median, p99, max of malloc and of free apart; exact instructions per call (inscount.h,
 *       ptrace single-stepping): every call of the 1,000-allocation run (paper scale: also the
 *       5,000 run) and a sample of the 60,000 run (every (ops / 2000)-th op within 300,000 single
 *       steps; paper: ops / 20,000 within 3,000,000; RTBENCH_FMA_INSTR_ALL=1: every op of the 60,000
 *       run, many minutes), uniform sizes, the article's test and the burst pass;
 *   (3) memory: pages touched and the most pages in use at once (the article's Table 3 compares
 *       memory used). fma, bsd44: rt_fma_pages (touched = the high water of lastused, peak_used);
 *       other instances: the watermark (rt_stats_t.watermark, highest block end from the start of
 *       the managed memory) rounded up to 4 KiB pages, and the peak of the bytes in live blocks
 *       (rt_stats_t.peak_used) in pages -- a floor, not pages actually occupied; and the pages in use
 *       when the run ends (fma, bsd44: rt_fma_pages used; others: bytes in live blocks); glibc: as
 *       harness/glibcmem.h measures it -- the run replayed in a thread of its own on an arena of its
 *       own, from its lowest chunk to its highest chunk end, rounded up to pages, and the peak of
 *       live chunk bytes in pages; noop: none;
 *   (4) the table's overflows (the generator's count; the same trace for every allocator).
 * And two model computations over each trace, no allocator involved (fma_model), that say what the
 * article's "49.5 % less memory" can mean:
 *   the floor: at every step the sum over live blocks of their size rounded up to a power of two
 *       (16 bytes at least), in 4 KiB pages (rounded up), and its peak -- what any power-of-two
 *       allocator needs at its high-water mark, whatever it unites; each allocator's peak pages
 *       are printed against it;
 *   bsd44+hdr: the BSD 4.4 bucket policy on (request + 4-byte header), as 4.4BSD's C-library
 *       malloc lays out a block (the article describes the kernel's, which keeps sizes in the page
 *       table): bucket = the power of two >= n + 4 (16 at least); a bucket's blocks are cut from
 *       pages of their own and never returned, so each bucket holds the pages of its own most
 *       blocks live at once. A model, not an allocator: nothing of it is timed.
 *   Measured outside the project first: our bsd44 peaks only ~5 % above the floor on the article's
 *   test, so no reading of "memory" as peak pages gives 49.5 %; fma against bsd44+hdr on exact
 *   sizes gives 47-51 %. The study prints every reading and which one lands near 49.5 %.
 *
 * Outputs: the tables on stdout; fma.csv (one row per allocator, pass and run length), fma_floor.csv
 * (the same rows: the allocator's pages beside the floor and bsd44+hdr, fma_floor_header), fma_cdf.csv
 * (quantiles of malloc and free cycles of the 60,000 run, uniform sizes), fma_instr.csv (instruction
 * counts; column release: index, live or burst, the pass). The article's claims and the targets are printed with verdicts (never asserted).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "driver.h"
#include "glibcmem.h"
#include "inscount.h"
#include "metrics.h"
#include "peers.h"
#include "wl_fma.h"

/* The FMA and its BSD 4.4 baseline expose their page accounting (rtalloc/fma.h). bench/CMakeLists.txt
 * defines RTBENCH_HAVE_FMA when the library is built with src/fma; without it the experiment reads
 * their watermark like any other allocator's (and runs whatever the registry has). */
#if defined(RTBENCH_HAVE_FMA)
#include "rtalloc/fma.h"
#define FMA_HAVE_PAGES 1
#endif

static const size_t fma_lengths[] = {1000, 5000, 10000, 20000, 30000, 40000, 50000, 60000};
/* Size mode and release model of each pass: the article's reading first (its figures), the exact
 * class sizes, the release of a random live block (wl_fma.h) for comparison, and the burst program
 * (beyond the article; its rows carry release "burst"). The targets are judged on the first. */
typedef struct fma_mode {
    wl_fma_sizes_t sizes;
    wl_fma_release_t release;
} fma_mode_t;
static const fma_mode_t fma_modes[] = {{WL_FMA_UNIFORM, WL_FMA_RELEASE_INDEX},
                                       {WL_FMA_EXACT, WL_FMA_RELEASE_INDEX},
                                       {WL_FMA_UNIFORM, WL_FMA_RELEASE_LIVE},
                                       {WL_FMA_UNIFORM, WL_FMA_BURST}};
enum {
    FMA_MODE_LIVE = 2,  /* fma_modes' index of the release by live block */
    FMA_MODE_BURST = 3, /* and of the burst program */
    FMA_NLEN = sizeof fma_lengths / sizeof fma_lengths[0],
    FMA_NMODES = sizeof fma_modes / sizeof fma_modes[0],
    FMA_MAX_LEN = 60000
};
static const char *const fma_default[] = {"noop", "fma", "bsd44", "tlsf", "glibc"};

/* The article's figures (Dr. Dobb's 1998; PowerPC 603e, 166 MHz, AIX 4.1.4 single-user). */
#define FMA_PAPER_SAVING 49.5   /* % less memory than BSD 4.4, up to 60,000 allocations */
#define FMA_PAPER_SLOWER 40.0   /* % slower than BSD 4.4, on average */
#define FMA_PAPER_UB_FMA 4300.0 /* ns, upper bound of an allocation */
#define FMA_PAPER_UB_BSD 3400.0
/* The FMA targets (the report judges them, never asserted). */
#define FMA_TARGET_SAVING 45.0 /* % fewer pages than bsd44 at 60,000 allocations */
#define FMA_TARGET_WORST 2.0   /* worst-case cycles per call <= 2 x bsd44's */
/* A reading of "memory" reproduces the article's saving when within this many points of it (the
 * article's figure carries one decimal; its test's seed and sizes are not given). */
#define FMA_READING_NEAR 2.5

typedef struct fma_row {
    bool done, interrupted;
    size_t ops, failures, calls;
    unsigned repeats;
    double dry_ms, wet_ms;
    mt_summary_t m, f;
    bool mem_known;
    const char *mem_method;
    uint64_t touched, peak, end, watermark, peak_used; /* end: pages in use when the run ends */
} fma_row_t;

/* The model computations over one trace (the floor, bsd44+hdr: the file's head). */
typedef struct fma_model {
    uint64_t floor_bytes; /* the floor's peak, bytes */
    uint64_t floor_pages; /* and in pages: the peak over the steps of the pages each step needs */
    uint64_t hdr_pages;   /* bsd44+hdr: pages held at the end (never returned: also its peak) */
} fma_model_t;

typedef struct fma_state {
    bench_ctx_t *ctx;
    fma_model_t model[FMA_NMODES][FMA_NLEN];
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t n;
    wl_trace_t trace[FMA_NMODES][FMA_NLEN];
    wl_fma_info_t info[FMA_NMODES][FMA_NLEN];
    fma_row_t row[BENCH_MAX_SELECTED][FMA_NMODES][FMA_NLEN];
    uint32_t *c0, *c1, *ms, *fs, *sorted;
    void **dry_slots;
    FILE *csv, *cdf, *icsv, *fcsv; /* fma.csv, fma_cdf.csv, fma_instr.csv, fma_floor.csv */
    char path[1200], cdf_path[1200], ipath[1200], fpath[1200];
    double ghz;
} fma_state_t;

#ifdef FMA_HAVE_PAGES
static bool is_page_allocator(const rt_allocator_t *a)
{
    return strcmp(a->name, "fma") == 0 || strcmp(a->name, "bsd44") == 0;
}
#endif

static uint64_t pages_of(uint64_t bytes) { return (bytes + WL_FMA_PAGE - 1u) / WL_FMA_PAGE; }

/* --- the floor and bsd44+hdr: model computations over a trace ---------------------------------- */

enum { FMA_MIN_BLOCK = 16, FMA_HDR = 4, FMA_MODEL_CLASSES = 40 };

/* log2 of the power of two >= n, FMA_MIN_BLOCK at least. */
static unsigned pow2_class(uint64_t n)
{
    unsigned c = 4; /* 16 bytes */
    while (((uint64_t)1 << c) < n && c + 1u < FMA_MODEL_CLASSES) {
        c++;
    }
    return c;
}

static bool fma_model(const wl_trace_t *t, fma_model_t *m)
{
    memset(m, 0, sizeof *m);
    uint8_t *fl = calloc(t->slots, 1); /* per slot: the floor's class of the live block */
    uint8_t *hc = calloc(t->slots, 1); /* and its bsd44+hdr bucket */
    if (fl == NULL || hc == NULL) {
        free(fl), free(hc);
        return false;
    }
    uint64_t live = 0, live_n[FMA_MODEL_CLASSES] = {0}, peak_n[FMA_MODEL_CLASSES] = {0};
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        if (op->kind == WL_MALLOC) {
            fl[op->slot] = (uint8_t)pow2_class(op->size);
            hc[op->slot] = (uint8_t)pow2_class((uint64_t)op->size + FMA_HDR);
            live += (uint64_t)1 << fl[op->slot];
            unsigned c = hc[op->slot];
            live_n[c]++;
            peak_n[c] = live_n[c] > peak_n[c] ? live_n[c] : peak_n[c];
        } else if (fl[op->slot] != 0) {
            live -= (uint64_t)1 << fl[op->slot];
            live_n[hc[op->slot]]--;
            fl[op->slot] = 0;
        }
        m->floor_bytes = live > m->floor_bytes ? live : m->floor_bytes;
        uint64_t pages = pages_of(live);
        m->floor_pages = pages > m->floor_pages ? pages : m->floor_pages;
    }
    /* each bucket's pages hold its own most blocks at once (a block of a page or more: whole pages) */
    for (unsigned c = 0; c < FMA_MODEL_CLASSES; c++) {
        m->hdr_pages += pages_of(peak_n[c] << c);
    }
    free(fl), free(hc);
    return true;
}

/* fma_floor.csv: one row per allocator, pass and run length. */
static const char fma_floor_header[] =
    "allocator,sizes,release,allocations,pages_touched,pages_peak,floor_bytes,floor_pages,"
    "peak_over_floor_pct,bsd44hdr_pages,touched_saving_vs_bsd44hdr_pct,peak_saving_vs_bsd44hdr_pct\n";

static void fma_floor_row(FILE *csv, const char *alloc, int mode, size_t li, const fma_row_t *r, const fma_model_t *m)
{
    if (csv == NULL || !r->mem_known) {
        return;
    }
    fprintf(csv, "%s,%s,%s,%zu,%llu,%llu,%llu,%llu,%.2f,%llu,%.2f,%.2f\n", alloc,
            wl_fma_sizes_name(fma_modes[mode].sizes), wl_fma_release_name(fma_modes[mode].release), fma_lengths[li],
            (unsigned long long)r->touched, (unsigned long long)r->peak, (unsigned long long)m->floor_bytes,
            (unsigned long long)m->floor_pages,
            m->floor_pages ? 100.0 * ((double)r->peak / (double)m->floor_pages - 1.0) : 0.0,
            (unsigned long long)m->hdr_pages,
            m->hdr_pages ? 100.0 * (1.0 - (double)r->touched / (double)m->hdr_pages) : 0.0,
            m->hdr_pages ? 100.0 * (1.0 - (double)r->peak / (double)m->hdr_pages) : 0.0);
}

/* --- (1) the article's timing: the same loop without and with the heap calls ------------------- */

static unsigned char fma_dummy[4096];

/* One pass over the trace, timed as a whole (ns). calls: the allocator's malloc/free; else the
 * same loop, table and byte write with a dummy block and no call. */
static uint64_t fma_loop(const rt_allocator_t *a, void *h, void **slots, const wl_trace_t *t, bool calls,
                         size_t *failures)
{
    void *(*const a_malloc)(void *, size_t) = a->malloc;
    void (*const a_free)(void *, void *) = a->free;
    const wl_op_t *const ops = t->ops;
    const size_t n = t->nops;
    size_t fail = 0;
    uint64_t t0 = clk_now_ns();
    for (size_t i = 0; i < n; i++) {
        const wl_op_t *op = &ops[i];
        if (op->kind == WL_MALLOC) {
            void *p = calls ? a_malloc(h, op->size) : (void *)fma_dummy;
            if (p != NULL) {
                *(volatile unsigned char *)p = (unsigned char)i;
            } else {
                fail++;
            }
            slots[op->slot] = p;
        } else {
            void *p = slots[op->slot];
            slots[op->slot] = NULL;
            if (p != NULL && calls) {
                a_free(h, p);
            }
        }
    }
    uint64_t ns = clk_now_ns() - t0;
    *failures = fail;
    return ns;
}

static unsigned loop_repeats(const bench_ctx_t *ctx, size_t nops)
{
    /* quick: about a sixth of the standard loop time, 2..8 repeats (best of 2 still drops one
     * preempted pass) */
    bool full = ctx->scale == BENCH_FULL, quick = ctx->scale == BENCH_QUICK;
    size_t want = (full ? 2400000u : quick ? 100000u : 600000u) / (nops != 0 ? nops : 1u);
    size_t lo = full ? 5u : quick ? 2u : 3u, hi = full ? 100u : quick ? 8u : 40u;
    return (unsigned)(want < lo ? lo : want > hi ? hi : want);
}

/* --- (3) memory ---------------------------------------------------------------------------------- */

/* The memory of a heap over the arena (a->create): replays t untimed on a reset instance, then
 * reads its pages (the page allocators) or its statistics' watermark into row. */
static void fma_memory_heap(drv_instance_t *in, const wl_trace_t *t, fma_row_t *row)
{
    const rt_allocator_t *a = in->a;
    uint64_t ns = 0;
    if (!drv_reset(in)) {
        return;
    }
    drv_outcome_t o = drv_replay_untimed(in, t, &ns);
    if (o.interrupted) {
        return;
    }
    rt_stats_t s;
    memset(&s, 0, sizeof s);
    if (a->stats != NULL) {
        a->stats(in->handle, &s);
    }
    row->watermark = s.watermark;
    row->peak_used = s.peak_used;
#ifdef FMA_HAVE_PAGES
    if (is_page_allocator(a)) {
        rt_fma_pages_t p;
        memset(&p, 0, sizeof p);
        rt_fma_pages(in->handle, &p);
        row->touched = p.touched;
        row->peak = p.peak_used;
        row->end = p.used;
        row->mem_known = true;
        row->mem_method = "pages";
        return;
    }
#endif
    if (a->stats != NULL) {
        row->touched = pages_of(s.watermark);
        row->peak = pages_of(s.peak_used);
        row->end = pages_of(s.used_bytes);
        row->mem_known = true;
        row->mem_method = "watermark";
    }
}

#if defined(__GLIBC__)
/* glibc's memory: t replayed in a thread of its own, on an arena of its own (glibcmem.h), from the
 * lowest chunk it got to the highest chunk end. */
static void fma_memory_glibc(fma_state_t *st, const rt_allocator_t *a, const wl_trace_t *t, fma_row_t *row)
{
    gm_result_t g;
    if (!gm_replay(a, t, st->dry_slots, false, &g)) {
        return;
    }
    row->watermark = g.span;
    row->peak_used = g.peak_used;
    row->touched = pages_of(row->watermark);
    row->peak = pages_of(row->peak_used);
    row->end = pages_of(g.end_used);
    row->mem_known = true;
    row->mem_method = "glibc-span";
}
#endif

static void fma_memory(fma_state_t *st, drv_instance_t *in, const wl_trace_t *t, fma_row_t *row)
{
    const rt_allocator_t *a = in->a;
    row->mem_known = false;
    row->mem_method = "none";
    if (a->create != NULL) {
        fma_memory_heap(in, t, row);
        return;
    }
#if defined(__GLIBC__)
    if (strcmp(a->name, "glibc") == 0) {
        fma_memory_glibc(st, a, t, row);
    }
#else
    (void)st;
#endif
}

/* --- one allocator, one size mode, one run length ----------------------------------------------- */

typedef struct fma_progress {
    const char *alloc;
    char phase[64];
} fma_progress_t;

static void on_progress(void *context, double done)
{
    const fma_progress_t *p = context;
    bench_progress("fma", p->alloc, p->phase, done);
}

/* Splits the measured per-op cycles in st->c0 into st->ms (mallocs) and st->fs (frees). */
static void split_cycles(fma_state_t *st, const wl_trace_t *t, size_t *nm, size_t *nf)
{
    *nm = 0;
    *nf = 0;
    for (size_t i = 0; i < t->nops; i++) {
        if (st->c0[i] == DRV_NOT_MEASURED) {
            continue;
        }
        if (t->ops[i].kind == WL_MALLOC) {
            st->ms[(*nm)++] = st->c0[i];
        } else {
            st->fs[(*nf)++] = st->c0[i];
        }
    }
}

static void fma_measure(fma_state_t *st, drv_instance_t *in, int mode, size_t li, fma_row_t *row, double base,
                        double span)
{
    bench_ctx_t *ctx = st->ctx;
    const wl_trace_t *t = &st->trace[mode][li];
    fma_progress_t pc = {in->a->name, ""};
    snprintf(pc.phase, sizeof pc.phase, "%s sizes, release by %s", wl_fma_sizes_name(fma_modes[mode].sizes),
             wl_fma_release_name(fma_modes[mode].release));
    memset(row, 0, sizeof *row);
    row->ops = t->nops;
    on_progress(&pc, base);

    /* (2) per call, twice, per-op minimum */
    bool ok = drv_reset(in);
    drv_outcome_t o0 = drv_replay_timed(in, t, st->c0, NULL, NULL, NULL);
    ok = ok && !o0.interrupted && drv_reset(in);
    drv_outcome_t o1 = drv_replay_timed(in, t, st->c1, NULL, NULL, NULL);
    if (!ok || o1.interrupted) {
        row->interrupted = true;
        return;
    }
    mt_min_into(st->c0, st->c1, t->nops);
    row->failures = o0.failures > o1.failures ? o0.failures : o1.failures;
    size_t nm, nf;
    split_cycles(st, t, &nm, &nf);
    row->calls = nm + nf;
    mt_summarize_u32(st->ms, nm, &row->m, NULL);
    mt_summarize_u32(st->fs, nf, &row->f, NULL);
    on_progress(&pc, base + span * 0.3);

    /* (1) without and with the heap calls, alternately, best of R */
    unsigned reps = loop_repeats(ctx, t->nops);
    uint64_t dry = UINT64_MAX, wet = UINT64_MAX;
    for (unsigned r = 0; r < reps && !drv_stop; r++) {
        size_t fail = 0;
        memset(st->dry_slots, 0, WL_FMA_TABLE * sizeof *st->dry_slots);
        uint64_t d = fma_loop(in->a, NULL, st->dry_slots, t, false, &fail);
        dry = d < dry ? d : dry;
        if (!drv_reset(in)) {
            row->interrupted = true;
            return;
        }
        uint64_t w = fma_loop(in->a, in->handle, in->slots, t, true, &fail);
        wet = w < wet ? w : wet;
        row->failures = fail > row->failures ? fail : row->failures;
        on_progress(&pc, base + span * (0.3 + 0.6 * (double)(r + 1u) / (double)reps));
    }
    memset(st->dry_slots, 0, WL_FMA_TABLE * sizeof *st->dry_slots);
    if (drv_stop) {
        row->interrupted = true;
        return;
    }
    row->repeats = reps;
    row->dry_ms = (double)dry / 1e6;
    row->wet_ms = (double)wet / 1e6;

    /* (3) memory */
    fma_memory(st, in, t, row);
    row->done = !drv_stop;
    row->interrupted = drv_stop != 0;
}

/* The per-op cycles of the last timed pair are still in c0: the CDF of the 60,000 run. */
static void fma_cdf_rows(fma_state_t *st, FILE *cdf, const char *alloc, const wl_trace_t *t)
{
    size_t nm, nf;
    split_cycles(st, t, &nm, &nf);
    mt_sort_u32(st->ms, nm);
    mt_write_cdf(cdf, alloc, "malloc", st->ms, nm);
    mt_sort_u32(st->fs, nf);
    mt_write_cdf(cdf, alloc, "free", st->fs, nf);
}

/* --- (2b) instructions per call --------------------------------------------------------------------- */

typedef struct fma_icount {
    bool ok, widened;
    size_t counted[2];
    uint32_t max[2], p99[2];
    double mean[2];
    size_t stride, final_stride;
    char error[160];
} fma_icount_t;

static void on_ic_progress(void *context, double done)
{
    bench_progress("fma", (const char *)context, "instructions", done);
}

static void fma_count(fma_state_t *st, const rt_allocator_t *a, const wl_trace_t *t, const ic_plan_t *plan,
                      fma_icount_t *out)
{
    memset(out, 0, sizeof *out);
    ic_result_t r;
    out->ok =
        ic_count_trace(a, st->ctx->arena, st->ctx->arena_size, t, plan, &r, on_ic_progress, (void *)(uintptr_t)a->name);
    bench_progress_clear();
    out->stride = plan->stride;
    out->final_stride = r.final_stride;
    out->widened = r.widened;
    snprintf(out->error, sizeof out->error, "%s", out->ok ? "" : r.error);
    for (int k = 0; k < 2; k++) {
        size_t n = 0;
        for (size_t i = 0; i < r.n; i++) {
            if ((r.samples[i].kind == WL_MALLOC) == (k == 0)) {
                st->ms[n++] = r.samples[i].count;
            }
        }
        mt_summary_t s;
        mt_summarize_u32(st->ms, n, &s, NULL);
        out->counted[k] = n;
        out->max[k] = (uint32_t)s.max;
        out->p99[k] = (uint32_t)s.p99;
        out->mean[k] = s.mean;
    }
    ic_result_free(&r);
}

/* One count's table row and its two rows of fma_instr.csv: allocator a, mode, run length li. */
static void fma_instr_row(const rt_allocator_t *a, int mode, size_t li, const ic_plan_t *plan, const fma_icount_t *c,
                          FILE *csv)
{
    const char *rel = wl_fma_release_name(fma_modes[mode].release);
    char how[32];
    if (plan->stride == 1 && !c->widened) {
        snprintf(how, sizeof how, "every call");
    } else {
        snprintf(how, sizeof how, "1/%zu%s", c->final_stride, c->widened ? "*" : "");
    }
    printf("%-10s %-7s %10zu %-12s %8zu %8u %8u %8.1f  %8zu %8u %8u %8.1f%s\n", a->name, rel, fma_lengths[li], how,
           c->counted[0], c->max[0], c->p99[0], c->mean[0], c->counted[1], c->max[1], c->p99[1], c->mean[1],
           c->ok ? "" : "  (counting failed)");
    if (!c->ok) {
        fprintf(stderr, "fma: instructions of %s: %s\n", a->name, c->error);
    }
    if (csv != NULL) {
        for (int op = 0; op < 2; op++) {
            fprintf(csv, "%s,%s,%s,%zu,%s,%s,%zu,%u,%u,%.2f,%zu,%zu,%d,%d\n", a->name,
                    wl_fma_sizes_name(fma_modes[mode].sizes), rel, fma_lengths[li], op == 0 ? "malloc" : "free",
                    plan->stride == 1 && !c->widened ? "all" : "sample", c->counted[op], c->max[op], c->p99[op],
                    c->mean[op], plan->stride, c->final_stride, c->widened ? 1 : 0, c->ok ? 0 : 1);
        }
        fflush(csv);
    }
}

static void fma_instructions(fma_state_t *st, FILE *csv)
{
    bench_ctx_t *ctx = st->ctx;
    printf("\nInstructions per call (exact: ptrace single-stepping from the entry of the "
           "descriptor's malloc/free\n"
           "to its return; uniform sizes; the article's test, then the burst program beyond it):\n");
    if (!ic_supported()) {
        printf("  not counted: instruction counting needs Linux on x86-64\n");
        return;
    }
    const char *all_env = getenv("RTBENCH_FMA_INSTR_ALL");
    bool all = all_env != NULL && all_env[0] == '1';
    bool full = ctx->scale == BENCH_FULL;
    bool quick = ctx->scale == BENCH_QUICK;
    /* every call of the short runs; a sample (or everything) of the 60,000 run; quick: the sample
     * alone (every call of the 1,000 run is ~500,000 single steps, over a minute, per allocator) */
    size_t exhaustive = full ? 2u : quick ? 0u : 1u; /* 1,000 (and 5,000) */
    const wl_trace_t *longest = &st->trace[WL_FMA_UNIFORM][FMA_NLEN - 1u];
    size_t samples = full ? 20000u : quick ? 500u : 2000u;
    ic_plan_t sample_plan = {
        .stride = all ? 1u : (longest->nops / samples != 0 ? longest->nops / samples : 1u),
        .step_budget = all ? 0u
                           : (full    ? 3000000u
                              : quick ? 60000u
                                      : 300000u),
        .max_samples = 0,
    };
    ic_plan_t every = {.stride = 1, .step_budget = 0, .max_samples = 0};
    printf("%-10s %-7s %10s %-12s %8s %8s %8s %8s  %8s %8s %8s %8s\n", "allocator", "release", "allocs", "counted",
           "malloc n", "max", "p99", "mean", "free n", "max", "p99", "mean");
    /* the passes counted: the article's (judged) and the burst program (context) */
    static const int counted_modes[] = {0, FMA_MODE_BURST};
    for (size_t k = 0; k < st->n && !drv_stop; k++) {
        const rt_allocator_t *a = st->allocs[k];
        for (size_t j = 0; j < 2u * (exhaustive + 1u) && !drv_stop; j++) {
            int mode = counted_modes[j / (exhaustive + 1u)];
            size_t jj = j % (exhaustive + 1u);
            bool is_sample = jj == exhaustive;
            size_t li = is_sample ? FMA_NLEN - 1u : jj;
            const wl_trace_t *t = &st->trace[mode][li];
            const ic_plan_t *plan = is_sample ? &sample_plan : &every;
            fma_icount_t c;
            fma_count(st, a, t, plan, &c);
            if (drv_stop) {
                break;
            }
            fma_instr_row(a, mode, li, plan, &c, csv);
        }
    }
    printf("every call: all calls of the run; 1/N: every N-th op (* widened where the step budget "
           "ran short).\n");
    fflush(stdout);
}

/* --- tables, claims, targets ----------------------------------------------------------------------- */

static const fma_row_t *row_of(const fma_state_t *st, const char *name, int mode, size_t li)
{
    for (size_t k = 0; k < st->n; k++) {
        if (strcmp(st->allocs[k]->name, name) == 0) {
            const fma_row_t *r = &st->row[k][mode][li];
            return r->done ? r : NULL;
        }
    }
    return NULL;
}

static double ns_of(const bench_ctx_t *ctx, uint64_t ticks)
{
    bool cycles = strcmp(ctx->clock.unit, "cycles") == 0 && ctx->clock.ticks_per_ns > 0.0;
    return cycles ? (double)ticks / ctx->clock.ticks_per_ns : (double)ticks;
}

/* Beyond the article: the burst mode's pages touched, and its time with calls minus without. */
static void fma_summary_bursts(const fma_state_t *st, size_t last)
{
    const fma_row_t *fb = row_of(st, "fma", FMA_MODE_BURST, last), *bb = row_of(st, "bsd44", FMA_MODE_BURST, last);
    if (fb != NULL && bb != NULL && fb->mem_known && bb->mem_known && bb->touched > 0) {
        double ft = 0.0, bt = 0.0; /* time with calls minus without, over the run lengths */
        for (size_t li = 0; li < FMA_NLEN; li++) {
            const fma_row_t *fr = row_of(st, "fma", FMA_MODE_BURST, li), *br = row_of(st, "bsd44", FMA_MODE_BURST, li);
            if (fr != NULL && br != NULL) {
                ft += fr->wet_ms - fr->dry_ms;
                bt += br->wet_ms - br->dry_ms;
            }
        }
        printf("  beyond the article, bursts of one size class: fma %llu pages touched, bsd44 "
               "%llu: %.1f %% fewer;\n"
               "    time with calls minus without, summed over the run lengths: fma %+.0f %% "
               "(context, not judged)\n",
               (unsigned long long)fb->touched, (unsigned long long)bb->touched,
               100.0 * (1.0 - (double)fb->touched / (double)bb->touched), bt > 0.0 ? 100.0 * (ft / bt - 1.0) : 0.0);
    }
}

/* The article's memory claim: pages of fma (f) against bsd44 (b) at the longest run, by the
 * uniform mode, then the live and burst modes, and the target. */
static void fma_summary_memory(const fma_state_t *st, const fma_row_t *f, const fma_row_t *b, size_t last)
{
    double saving = 100.0 * (1.0 - (double)f->touched / (double)b->touched);
    double saving_peak = 100.0 * (1.0 - (double)f->peak / (double)b->peak);
    printf("  memory at %zu allocations: fma %llu pages touched (peak %llu in use), bsd44 %llu "
           "(%llu): fma uses\n"
           "    %.1f %% fewer pages touched, %.1f %% fewer at peak (article: ~%.1f %% less "
           "memory)\n",
           fma_lengths[last], (unsigned long long)f->touched, (unsigned long long)f->peak,
           (unsigned long long)b->touched, (unsigned long long)b->peak, saving, saving_peak, FMA_PAPER_SAVING);
    if (b->end > 0) {
        printf("  pages in use when the run ends: fma %llu, bsd44 %llu: %.1f %% fewer\n", (unsigned long long)f->end,
               (unsigned long long)b->end, 100.0 * (1.0 - (double)f->end / (double)b->end));
    }
    const fma_row_t *fl = row_of(st, "fma", FMA_MODE_LIVE, last), *bl = row_of(st, "bsd44", FMA_MODE_LIVE, last);
    if (fl != NULL && bl != NULL && fl->mem_known && bl->mem_known && bl->touched > 0) {
        printf("  release by live block instead: fma %llu pages touched, bsd44 %llu: %.1f %% "
               "fewer\n",
               (unsigned long long)fl->touched, (unsigned long long)bl->touched,
               100.0 * (1.0 - (double)fl->touched / (double)bl->touched));
    }
    fma_summary_bursts(st, last);
    printf("  target: fma >= %.0f %% fewer pages than bsd44 at %zu allocations: %.1f %% -- %s\n", FMA_TARGET_SAVING,
           fma_lengths[last], saving, saving >= FMA_TARGET_SAVING ? "met" : "NOT met");
}

/* The article's time claims: the uniform mode's time with calls minus without over the run
 * lengths, the worst malloc of fma (f) and bsd44 (b), and the worst-call target. */
static void fma_summary_time(const fma_state_t *st, const fma_row_t *f, const fma_row_t *b, size_t last)
{
    const bench_ctx_t *ctx = st->ctx;
    double fs = 0.0, bs = 0.0;
    size_t nl = 0;
    for (size_t li = 0; li < FMA_NLEN; li++) {
        const fma_row_t *fl = row_of(st, "fma", WL_FMA_UNIFORM, li), *bl = row_of(st, "bsd44", WL_FMA_UNIFORM, li);
        if (fl != NULL && bl != NULL) {
            fs += fl->wet_ms - fl->dry_ms;
            bs += bl->wet_ms - bl->dry_ms;
            nl++;
        }
    }
    if (nl > 0 && bs > 0.0) {
        printf("  time with heap calls minus without, summed over the %zu run lengths: fma %.3f "
               "ms, bsd44 %.3f ms: fma\n"
               "    %+.0f %% (article: ~%.0f %% slower on average)\n",
               nl, fs, bs, 100.0 * (fs / bs - 1.0), FMA_PAPER_SLOWER);
    }
    printf("  worst malloc: fma %.0f ns, bsd44 %.0f ns (article's upper bounds: %.0f ns, %.0f ns "
           "at 166 MHz)\n",
           ns_of(ctx, f->m.max), ns_of(ctx, b->m.max), FMA_PAPER_UB_FMA, FMA_PAPER_UB_BSD);
    uint64_t fw = f->m.max > f->f.max ? f->m.max : f->f.max, bw = b->m.max > b->f.max ? b->m.max : b->f.max;
    if (bw > 0) {
        double x = (double)fw / (double)bw;
        printf("  target: worst %s per fma call <= %.0fx bsd44's (%zu run): %llu vs %llu = %.2fx "
               "-- %s\n",
               ctx->clock.unit, FMA_TARGET_WORST, fma_lengths[last], (unsigned long long)fw, (unsigned long long)bw, x,
               x <= FMA_TARGET_WORST ? "met" : "NOT met");
    }
}

static void fma_summary(const fma_state_t *st)
{
    const size_t last = FMA_NLEN - 1u;
    const fma_row_t *f = row_of(st, "fma", WL_FMA_UNIFORM, last), *b = row_of(st, "bsd44", WL_FMA_UNIFORM, last);
    printf("\nThe article's claims beside ours (uniform sizes; the article: PowerPC 603e 166 MHz, "
           "AIX 4.1.4):\n");
    if (f == NULL || b == NULL) {
        printf("  fma and bsd44 both needed: %s%s not measured\n", f == NULL ? "fma " : "", b == NULL ? "bsd44" : "");
        return;
    }
    if (f->mem_known && b->mem_known && b->touched > 0 && b->peak > 0) {
        fma_summary_memory(st, f, b, last);
    }
    fma_summary_time(st, f, b, last);
}

/* One reading of the article's "memory": fma's saving against a baseline's pages. */
typedef struct fma_reading {
    const char *what;
    int mode;
    double saving;
} fma_reading_t;

/* Which reading of "memory" gives the article's 49.5 %: the passes released by index (the
 * article's), uniform and exact sizes, at the longest run; fma against bsd44 (pages touched, peak
 * pages) and against the bsd44+hdr model, each beside the floor. */
/* Per size mode: the floor, bsd44's and fma's pages, the model's, printed; the four readings of
 * the saving into rd. Returns how many. */
static size_t fma_readings_collect(const fma_state_t *st, size_t last, fma_reading_t rd[8])
{
    size_t n = 0;
    for (int mode = 0; mode < 2; mode++) {
        const fma_row_t *f = row_of(st, "fma", mode, last), *b = row_of(st, "bsd44", mode, last);
        const fma_model_t *m = &st->model[mode][last];
        if (f == NULL || b == NULL || !f->mem_known || !b->mem_known || m->floor_pages == 0) {
            continue;
        }
        const char *sz = wl_fma_sizes_name(fma_modes[mode].sizes);
        printf("  %-7s floor %5llu; bsd44 peak %5llu (%+.1f %% over the floor), touched %5llu; fma "
               "peak %5llu (%+.1f %%),\n"
               "          touched %5llu; bsd44+hdr %5llu: the most any reading of peak pages lets fma "
               "save on bsd44 is %.1f %%\n",
               sz, (unsigned long long)m->floor_pages, (unsigned long long)b->peak,
               100.0 * ((double)b->peak / (double)m->floor_pages - 1.0), (unsigned long long)b->touched,
               (unsigned long long)f->peak, 100.0 * ((double)f->peak / (double)m->floor_pages - 1.0),
               (unsigned long long)f->touched, (unsigned long long)m->hdr_pages,
               100.0 * (1.0 - (double)m->floor_pages / (double)b->peak));
        if (b->touched > 0 && b->peak > 0 && m->hdr_pages > 0) {
            rd[n++] = (fma_reading_t){"fma touched vs bsd44 touched", mode,
                                      100.0 * (1.0 - (double)f->touched / (double)b->touched)};
            rd[n++] =
                (fma_reading_t){"fma peak vs bsd44 peak", mode, 100.0 * (1.0 - (double)f->peak / (double)b->peak)};
            rd[n++] = (fma_reading_t){"fma touched vs bsd44+hdr", mode,
                                      100.0 * (1.0 - (double)f->touched / (double)m->hdr_pages)};
            rd[n++] =
                (fma_reading_t){"fma peak vs bsd44+hdr", mode, 100.0 * (1.0 - (double)f->peak / (double)m->hdr_pages)};
        }
    }
    return n;
}

static void fma_readings(const fma_state_t *st)
{
    const size_t last = FMA_NLEN - 1u;
    fma_reading_t rd[8];
    printf("\nWhat the article's %.1f %% can mean (%zu allocations; pages of 4 KiB; floor: the most "
           "pages the live\n"
           "blocks need at once, each rounded up to a power of two; bsd44+hdr: a model of BSD 4.4's "
           "buckets on\n"
           "request + 4-byte header, buckets never returned -- computed, not run):\n",
           FMA_PAPER_SAVING, fma_lengths[last]);
    size_t n = fma_readings_collect(st, last, rd);
    if (n == 0) {
        printf("  fma and bsd44 both needed, with their pages: not measured\n");
        return;
    }
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        double d = rd[i].saving - FMA_PAPER_SAVING, db = rd[best].saving - FMA_PAPER_SAVING;
        best = d * d < db * db ? i : best;
        printf("  %-30s %-7s fma saves %5.1f %%%s\n", rd[i].what, wl_fma_sizes_name(fma_modes[rd[i].mode].sizes),
               rd[i].saving, d >= -FMA_READING_NEAR && d <= FMA_READING_NEAR ? "  <- within the article's range" : "");
    }
    double d = rd[best].saving - FMA_PAPER_SAVING;
    bool near = d >= -FMA_READING_NEAR && d <= FMA_READING_NEAR;
    printf("  verdict: the reading nearest the article's %.1f %% is \"%s\", %s sizes: %.1f %% -- %s\n",
           FMA_PAPER_SAVING, rd[best].what, wl_fma_sizes_name(fma_modes[rd[best].mode].sizes), rd[best].saving,
           near ? "reproduces it: the article's baseline reads as a BSD whose blocks carry a 4-byte header"
                : "none reproduces it (within 2.5 points)");
    /* what that reading credits to FMA: our bsd44 (no header, never unites) against the same model */
    const fma_row_t *b = row_of(st, "bsd44", rd[best].mode, last);
    const fma_model_t *m = &st->model[rd[best].mode][last];
    if (near && b != NULL && b->mem_known && m->hdr_pages > 0) {
        double bs = 100.0 * (1.0 - (double)b->touched / (double)m->hdr_pages);
        printf("  but our bsd44 -- no header, pages never united -- saves %.1f %% against the same model: the\n"
               "  figure measures the header pushing each power-of-two request into the next bucket, not FMA's\n"
               "  reuse of pages (%.1f points of it are FMA's).\n",
               bs, rd[best].saving - bs);
    }
}

static void print_rule(void)
{
    printf("---------- ------ --- -------------------------------- ---------------------- "
           "---------------------- "
           "-------------\n");
}

/* --- the study's skeleton (bench/README.md, "Layout"): study_setup, then per pass and allocator
 * study_measure (every run length) with study_summarize_row and study_write_row as each row is
 * measured, then study_summarize (the claims, the readings of 49.5 %, the instructions) -------- */

static void study_free(fma_state_t *st)
{
    for (int mode = 0; mode < FMA_NMODES; mode++) {
        for (size_t li = 0; li < FMA_NLEN; li++) {
            wl_release(&st->trace[mode][li]);
        }
    }
    free(st->c0), free(st->c1), free(st->ms), free(st->fs), free(st->dry_slots), free(st);
}

/* The allocators: the default set, those of it that exist; or --alloc. */
static void choose_allocators(fma_state_t *st)
{
    const bench_ctx_t *ctx = st->ctx;
    if (ctx->allocs_explicit) {
        for (size_t k = 0; k < ctx->nallocs; k++) {
            st->allocs[st->n++] = ctx->allocs[k];
        }
        return;
    }
    for (size_t k = 0; k < sizeof fma_default / sizeof fma_default[0]; k++) {
        const rt_allocator_t *a = bench_find(fma_default[k]);
        if (a != NULL) {
            st->allocs[st->n++] = a;
        } else {
            printf("%s: not in this build (not registered): left out\n", fma_default[k]);
        }
    }
}

/* Buffers, the traces of every pass and length and their models. */
static bool make_traces(fma_state_t *st)
{
    size_t cap = 2u * FMA_MAX_LEN;
    st->c0 = malloc(cap * sizeof *st->c0);
    st->c1 = malloc(cap * sizeof *st->c1);
    st->ms = malloc(cap * sizeof *st->ms);
    st->fs = malloc(cap * sizeof *st->fs);
    st->dry_slots = calloc(WL_FMA_TABLE, sizeof *st->dry_slots);
    bool ok = st->c0 && st->c1 && st->ms && st->fs && st->dry_slots;
    for (int mode = 0; ok && mode < FMA_NMODES; mode++) {
        for (size_t li = 0; ok && li < FMA_NLEN; li++) {
            ok = wl_fma(&st->trace[mode][li], fma_lengths[li], fma_modes[mode].sizes, fma_modes[mode].release,
                        st->ctx->seed, &st->info[mode][li]);
            ok = ok && fma_model(&st->trace[mode][li], &st->model[mode][li]);
        }
    }
    return ok;
}

static void open_csvs(fma_state_t *st)
{
    bench_ctx_t *ctx = st->ctx;
    st->csv = bench_csv_open(ctx, "fma.csv", false, st->path, sizeof st->path);
    st->fcsv = bench_csv_open(ctx, "fma_floor.csv", false, st->fpath, sizeof st->fpath);
    st->cdf = bench_csv_open(ctx, "fma_cdf.csv", false, st->cdf_path, sizeof st->cdf_path);
    st->icsv = bench_csv_open(ctx, "fma_instr.csv", false, st->ipath, sizeof st->ipath);
    if (st->csv != NULL) {
        fprintf(st->csv, "# workload: %s\n", st->trace[0][FMA_NLEN - 1u].params);
        fprintf(st->csv, "allocator,sizes,release,allocations,ops,mallocs,frees,overflows,misses,max_live,"
                         "peak_live_bytes,failures,repeats,dry_ms,wet_ms,diff_ms,diff_ns_per_call,calls,"
                         "malloc_median,malloc_p99,malloc_max,malloc_mean,free_median,free_p99,free_max,"
                         "free_mean,clock_ghz,pages_touched,pages_peak,pages_end,pages_method,"
                         "watermark_bytes,peak_used_bytes\n");
    }
    if (st->fcsv != NULL) {
        fprintf(st->fcsv,
                "# floor: power-of-two blocks (>= %d B) of the live set, pages of %d B; bsd44+hdr: a model "
                "(request + %d B, power-of-two buckets never returned)\n%s",
                FMA_MIN_BLOCK, WL_FMA_PAGE, FMA_HDR, fma_floor_header);
    }
    if (st->cdf != NULL) {
        fprintf(st->cdf, "allocator,op,percentile,%s\n", ctx->clock.unit);
    }
    if (st->icsv != NULL) {
        fprintf(st->icsv, "allocator,sizes,release,allocations,op,counted,n,max,p99,mean,stride,"
                          "final_stride,widened,error\n");
    }
}

static fma_state_t *study_setup(bench_ctx_t *ctx)
{
    fma_state_t *st = calloc(1, sizeof *st);
    if (st == NULL) {
        return NULL;
    }
    st->ctx = ctx;
    printf("\n== fma -- the FMA article (Dr. Dobb's 1998): random requests and releases, Table 1's "
           "sizes, a table of\n"
           "   5000 blocks freed when it overflows, runs of 1,000 .. 60,000 allocations ==\n");
    choose_allocators(st);
    if (!make_traces(st)) {
        fprintf(stderr, "rtbench: out of memory for fma\n");
        study_free(st);
        return NULL;
    }
    printf("%s (each run length a prefix of the longest)\n", st->trace[0][FMA_NLEN - 1u].params);
    printf("Table 1: 16 B 10 %%, 32 B 30 %%, 64 B 20 %%, 128 B 15 %%, 256 B 10 %%, 512 B 7 %%, "
           "1024 B 5 %%, 2048 B 3 %%;\n"
           "uniform: sizes uniform within (previous class, class]; exact: the class size. A step "
           "requests with\n"
           "probability 1/2, else releases the block at a random table index (none when the entry "
           "is empty).\n"
           "loop: the pre-computed sequence without heap calls (dry) and with them (wet), each "
           "timed as a whole,\n"
           "alternately, best of R (fresh instance before every wet run); diff = wet - dry, per "
           "call = diff / calls.\n"
           "per call: raw %s (%s), per-op minimum of 2 runs; nothing subtracted (empty timed "
           "region: median\n"
           "%llu). pages: 4 KiB; touched = high water, peak = most in use at once (fma, bsd44: "
           "rt_fma_pages; others\n"
           "with a watermark: watermark and peak bytes in live blocks rounded up; glibc: the span "
           "of a fresh arena).\n",
           ctx->clock.unit, ctx->clock.source, (unsigned long long)ctx->clock.empty_median);
    memset(ctx->arena, 0xA5, ctx->arena_size); /* touched once: no first-touch faults in timed calls */
    open_csvs(st);
    st->ghz = strcmp(ctx->clock.unit, "cycles") == 0 ? ctx->clock.ticks_per_ns : 1.0;
    return st;
}

static void print_pass_head(const fma_state_t *st, int mode)
{
    if (fma_modes[mode].release == WL_FMA_BURST) {
        printf("\n-- beyond the article: bursts, sizes %s (phases of %u..%u requests of one "
               "class drawn by Table 1,\n"
               "   a random share of the earlier blocks released among them; %s) --\n",
               wl_fma_sizes_name(fma_modes[mode].sizes), (unsigned)WL_FMA_BURST_MIN, (unsigned)WL_FMA_BURST_MAX,
               st->trace[mode][FMA_NLEN - 1u].params);
    } else {
        printf("\n-- sizes %s, release by %s --\n", wl_fma_sizes_name(fma_modes[mode].sizes),
               wl_fma_release_name(fma_modes[mode].release));
    }
    printf("%-10s %6s %3s %-32s %-22s %-22s %s\n", "", "", "", "  loop (ms; ns per call)", "  malloc (" CLK_UNIT ")",
           "  free (" CLK_UNIT ")", "pages");
    printf("%-10s %6s %3s %7s %7s %7s %8s %7s %6s %7s %7s %6s %7s %6s %6s %6s\n", "allocator", "allocs", "ovf", "dry",
           "wet", "diff", "per call", "median", "p99", "max", "median", "p99", "max", "touched", "peak", "end");
    print_rule();
}

/* The row of one allocator, pass and run length: the table's line. */
static void study_summarize_row(const fma_state_t *st, const rt_allocator_t *a, const fma_row_t *r, int mode, size_t li)
{
    const wl_fma_info_t *info = &st->info[mode][li];
    double diff = r->wet_ms - r->dry_ms;
    double per_call = r->calls != 0 ? diff * 1e6 / (double)r->calls : 0.0;
    char tp[24] = "n/a", pp[24] = "n/a", ep[24] = "n/a";
    if (r->mem_known) {
        snprintf(tp, sizeof tp, "%llu", (unsigned long long)r->touched);
        snprintf(pp, sizeof pp, "%llu", (unsigned long long)r->peak);
        snprintf(ep, sizeof ep, "%llu", (unsigned long long)r->end);
    }
    bench_progress_clear();
    printf("%-10s %6zu %3zu %7.3f %7.3f %7.3f %8.1f %7llu %6llu %7llu %7llu %6llu "
           "%7llu %6s %6s %6s%s\n",
           a->name, fma_lengths[li], info->overflows, r->dry_ms, r->wet_ms, diff, per_call,
           (unsigned long long)r->m.median, (unsigned long long)r->m.p99, (unsigned long long)r->m.max,
           (unsigned long long)r->f.median, (unsigned long long)r->f.p99, (unsigned long long)r->f.max, tp, pp, ep,
           r->failures != 0 ? "  (mallocs failed!)" : "");
    fflush(stdout);
}

/* The same row in fma.csv and fma_floor.csv (and the 60,000 run's quantiles in fma_cdf.csv). */
static void study_write_row(fma_state_t *st, const rt_allocator_t *a, const fma_row_t *r, int mode, size_t li)
{
    const wl_fma_info_t *info = &st->info[mode][li];
    const wl_trace_t *t = &st->trace[mode][li];
    if (st->csv != NULL) {
        double diff = r->wet_ms - r->dry_ms;
        double per_call = r->calls != 0 ? diff * 1e6 / (double)r->calls : 0.0;
        char tp[24] = "", pp[24] = "", ep[24] = "";
        if (r->mem_known) {
            snprintf(tp, sizeof tp, "%llu", (unsigned long long)r->touched);
            snprintf(pp, sizeof pp, "%llu", (unsigned long long)r->peak);
            snprintf(ep, sizeof ep, "%llu", (unsigned long long)r->end);
        }
        fprintf(st->csv,
                "%s,%s,%s,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%llu,%zu,%u,%.4f,%.4f,%.4f,%.2f,%zu,"
                "%llu,%llu,%llu,%.2f,%llu,%llu,%llu,%.2f,%.4f,%s,%s,%s,%s,%llu,%llu\n",
                a->name, wl_fma_sizes_name(fma_modes[mode].sizes), wl_fma_release_name(fma_modes[mode].release),
                fma_lengths[li], t->nops, t->nmalloc, t->nfree, info->overflows, info->misses, info->max_live,
                (unsigned long long)t->peak_live, r->failures, r->repeats, r->dry_ms, r->wet_ms, diff, per_call,
                r->calls, (unsigned long long)r->m.median, (unsigned long long)r->m.p99, (unsigned long long)r->m.max,
                r->m.mean, (unsigned long long)r->f.median, (unsigned long long)r->f.p99, (unsigned long long)r->f.max,
                r->f.mean, st->ghz, tp, pp, ep, r->mem_method, (unsigned long long)r->watermark,
                (unsigned long long)r->peak_used);
        fflush(st->csv);
    }
    fma_floor_row(st->fcsv, a->name, mode, li, r, &st->model[mode][li]);
    if (mode == 0 && li == FMA_NLEN - 1u) {
        /* the last timed pair of this run left its per-op minimum in c0 */
        fma_cdf_rows(st, st->cdf, a->name, t);
    }
}

/* Every run length of one allocator in one pass, each row printed and written once measured. */
static void study_measure(fma_state_t *st, size_t k, int mode)
{
    bench_ctx_t *ctx = st->ctx;
    const rt_allocator_t *a = st->allocs[k];
    drv_instance_t in;
    if (!drv_open(&in, a, ctx->arena, ctx->arena_size, WL_FMA_TABLE, false)) {
        printf("%-10s could not be created over the arena\n", a->name);
        return;
    }
    for (size_t li = 0; li < FMA_NLEN && !drv_stop; li++) {
        fma_row_t *r = &st->row[k][mode][li];
        double span = 1.0 / (double)FMA_NLEN;
        fma_measure(st, &in, mode, li, r, (double)li * span, span);
        if (!r->done) {
            bench_progress_clear();
            printf("%-10s %6zu interrupted\n", a->name, fma_lengths[li]);
            break;
        }
        study_summarize_row(st, a, r, mode, li);
        study_write_row(st, a, r, mode, li);
    }
    drv_close(&in);
}

/* The article's claims, what its 49.5 % can mean, then the instructions (written as counted). */
static void study_summarize(fma_state_t *st)
{
    bench_progress_clear();
    bench_peers_footnote(stdout, st->allocs, st->n);
    printf("ovf: table overflows (every tracked block freed before the next allocation; the "
           "article's Table 2).\n");
    if (!drv_stop) {
        fma_summary(st);
        fma_readings(st);
        fflush(stdout);
        fma_instructions(st, st->icsv);
    }
}

int exp_fma(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    fma_state_t *st = study_setup(ctx);
    if (st == NULL) {
        return 1;
    }
    for (int mode = 0; mode < FMA_NMODES && !drv_stop; mode++) {
        print_pass_head(st, mode);
        for (size_t k = 0; k < st->n && !drv_stop; k++) {
            study_measure(st, k, mode);
        }
        print_rule();
    }
    study_summarize(st);
    bench_csv_close(st->csv, st->path);
    bench_csv_close(st->fcsv, st->fpath);
    bench_csv_close(st->cdf, st->cdf_path);
    bench_csv_close(st->icsv, st->ipath);
    study_free(st);
    return drv_stop ? 130 : 0;
}
