/* SPDX-License-Identifier: MIT */
/*
 * trace/replay.c -- `rtbench trace replay` and `rtbench trace size` (trace.h), over the
 * shared parts of replay.h.
 *
 * Definitions (doc/traces.md says the same for a reader):
 *   live peak   the most requested bytes live at once in a stream (a realloc replaces its slot's
 *               size); what the program asked for, not what any allocator made of it.
 *   heap needed the smallest size passed to create on which the whole stream succeeds: every
 *               allocating call that got memory in the recording gets memory again (calls flagged
 *               WL_OP_FAILED are replayed but may fail). Found by bisection between a size that
 *               fails and one that fits, down to max(4 KiB, 0.5 % of the size) on the command
 *               line (rp_size_opts_t); the found size is replayed once more (verified), and a few
 *               sizes above it (+1 % steps) are replayed too: a failure there is a non-monotone
 *               case and is reported, never hidden.
 *   F           Masmano's fragmentation factor at the peak (frag.h): (the allocator's watermark
 *               after the replay / live peak - 1) x 100 %, the watermark being the highest byte
 *               it ever handed out from the start of its buffer (metadata at the start included).
 *               Measured on the smallest heap that fits (found by a bisection to 1 %, or the
 *               exact `size` result in the experiment): on a 64 MiB buffer the buddy and the trees
 *               place blocks anywhere in it and the watermark says more about the buffer than
 *               the trace. Not measured for the system peers (no watermark of their own; the
 *               bytes they report in use gave figures below the live peak).
 *   bound       buddy and the wait-free buddy trees (families buddy and tree): Knuth, TAOCP 2.5
 *               exercise 41 (the buddy system with block sizes 1..2^r units and at most N units
 *               requested at once, N a multiple of 2^r, never overflows (r + 1) N units), plus
 *               2 B for the two ends of a buffer that is not one aligned block (a free block
 *               whose buddy lies outside the buffer has no live unit to charge; at most one per
 *               order and end, so less than 2 B in all): bound = (r + 1) M + 2 B bytes of
 *               managed area (metadata not included), with B the largest block the stream uses,
 *               b the smallest, r = log2(B / b), and M the peak of the live blocks' sizes (each
 *               request rounded to its block, a realloc counting old and new block at its
 *               moment) rounded up to a multiple of B. For comparison, Robson (1971, 1974): no
 *               allocator at all can guarantee less than about M (1 + r / 2) for such sizes.
 *               TLSF, the fit lists and the page allocators (FMA, BSD 4.4): no bound defended
 *               here ("no bound").
 */
#include "replay.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "driver.h"
#include "frag.h"
#include "glibcmem.h"
#include "inscount.h"
#include "metrics.h"
#include "peers.h"

#ifndef RTBENCH_SOURCE_DIR
#define RTBENCH_SOURCE_DIR "." /* builds of this file outside rtbench (tests, fuzzers) */
#endif

const char *const rp_kind_name[RP_KINDS] = {"malloc", "free", "realloc", "calloc", "memalign"};

const char rp_kinds_header[] = "malloc_calls,malloc_mean,malloc_p99,malloc_max,free_calls,free_mean,free_p99,"
                               "free_max,realloc_calls,realloc_mean,realloc_p99,realloc_max,calloc_calls,"
                               "calloc_mean,calloc_p99,calloc_max,memalign_calls,memalign_mean,memalign_p99,"
                               "memalign_max";

void rp_write_kinds(FILE *csv, const rp_replay_t *r)
{
    for (unsigned k = 0; k < RP_KINDS; k++) {
        const rp_kind_stat_t *s = &r->kind[k];
        if (r->ic_ok && s->n != 0u) {
            fprintf(csv, "%zu,%.2f,%u,%u,", s->n, s->mean, s->p99, s->max);
        } else {
            fprintf(csv, ",,,,");
        }
    }
}

enum { RP_MIN_HEAP = 64u << 20 };

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static uint64_t sat_mul(uint64_t a, uint64_t b) { return a != 0u && b > UINT64_MAX / a ? UINT64_MAX : a * b; }

/* max(64 MiB, 8 x peak) rounded up to 1 MiB, saturating (at UINT64_MAX rounded down to 1 MiB). */
static uint64_t heap_for_peak(uint64_t peak)
{
    const uint64_t mib = (uint64_t)1 << 20;
    uint64_t want = sat_mul(peak, 8u);
    want = want < RP_MIN_HEAP ? RP_MIN_HEAP : want;
    return want > UINT64_MAX - (mib - 1u) ? UINT64_MAX & ~(mib - 1u) : (want + mib - 1u) & ~(mib - 1u);
}

size_t rp_replay_heap(const wl_trace_t *t)
{
    uint64_t heap = heap_for_peak(rp_peak_live(t));
    uint64_t most = (uint64_t)SIZE_MAX & ~(uint64_t)((1u << 20) - 1u);
    return (size_t)(heap < most ? heap : most);
}

void rp_need(const wl_trace_t *t, bool peers, rp_need_t *need)
{
    need->peak = rp_peak_live(t);
    need->largest = 0;
    for (size_t i = 0; i < t->nops; i++) {
        uint64_t sz = t->ops[i].size;
        need->largest = sz > need->largest ? sz : need->largest;
    }
    need->heap = heap_for_peak(need->peak);
    uint64_t blocks = sat_add(need->peak, need->largest);
    need->replay = sat_add(sat_mul(need->heap, 2u), peers ? blocks : 0u);
    need->size = sat_add(sat_mul(need->heap, 4u), blocks);
}

bool rp_parse_size(const char *s, uint64_t *bytes)
{
    uint64_t v = 0;
    const char *p = s;
    if (*p < '0' || *p > '9') {
        return false;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10u) {
            return false;
        }
        v = v * 10u + d;
    }
    unsigned shift = 0;
    switch (*p) {
    case '\0': break;
    case 'k':
    case 'K': shift = 10; break;
    case 'm':
    case 'M': shift = 20; break;
    case 'g':
    case 'G': shift = 30; break;
    case 't':
    case 'T': shift = 40; break;
    default: return false;
    }
    if (*p != '\0' && p[1] != '\0') {
        return false;
    }
    if (v == 0u || v > (UINT64_MAX >> shift)) {
        return false;
    }
    *bytes = v << shift;
    return true;
}

void rp_format_size(char *out, size_t len, uint64_t bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    double v = (double)bytes;
    while (v >= 1024.0 && u + 1u < sizeof unit / sizeof unit[0]) {
        v /= 1024.0;
        u++;
    }
    if (u == 0u) {
        snprintf(out, len, "%llu B", (unsigned long long)bytes);
    } else {
        snprintf(out, len, "%.1f %s", v, unit[u]);
    }
}

void rp_finish_trace(wl_trace_t *t)
{
    t->nmalloc = 0;
    t->nfree = 0;
    for (size_t i = 0; i < t->nops; i++) {
        if (WL_OP_KIND(&t->ops[i]) == WL_FREE) {
            t->nfree++;
        } else if ((t->ops[i].kind & WL_OP_FAILED) == 0u) {
            t->nmalloc++; /* as trace.c counts: allocating calls that got memory */
        }
    }
    t->measured = SIZE_MAX;
    t->peak_live = rp_peak_live(t);
    t->peak_inuse = t->peak_live;
}

uint64_t rp_peak_live(const wl_trace_t *t)
{
    uint32_t *size = calloc(t->slots != 0 ? t->slots : 1u, sizeof *size);
    if (size == NULL) {
        return t->peak_live;
    }
    uint64_t live = 0, peak = 0;
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        if ((op->kind & WL_OP_FAILED) != 0u) {
            continue; /* got nothing: the slot stays as it was */
        }
        live -= size[op->slot];
        size[op->slot] = WL_OP_KIND(op) == WL_FREE ? 0u : op->size;
        live += size[op->slot];
        peak = live > peak ? live : peak;
    }
    free(size);
    return peak;
}

bool rp_fits(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, size_t *fail_op)
{
    drv_instance_t in;
    if (fail_op != NULL) {
        *fail_op = SIZE_MAX;
    }
    if (!drv_open(&in, a, buffer, size, t->slots, false)) {
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < t->nops && ok; i++) {
        const wl_op_t *op = &t->ops[i];
        if ((i & 0xFFFFu) == 0 && drv_stop) {
            ok = false;
            break;
        }
        if (!drv_apply(&in, op, i) && (op->kind & WL_OP_FAILED) == 0u) {
            ok = false;
            if (fail_op != NULL) {
                *fail_op = i;
            }
        }
    }
    drv_close(&in);
    return ok;
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1u) / a * a; }

/* One replay of the bisection: opts->fits, or the single-threaded rp_fits. */
static bool size_fits(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t,
                      const rp_size_opts_t *opts)
{
    return opts->fits != NULL ? opts->fits(a, buffer, size, opts->fits_context) : rp_fits(a, buffer, size, t, NULL);
}

void rp_size(const rt_allocator_t *a, void *buffer, const wl_trace_t *t, const rp_size_opts_t *opts, rp_size_t *out)
{
    memset(out, 0, sizeof *out);
    if (a->create == NULL) {
        return;
    }
    size_t min = a->min_buffer != NULL ? a->min_buffer() : 0u;
    uint64_t peak = rp_peak_live(t);
    size_t lo = min > 0u ? min - 1u : 0u; /* create refuses anything below min_buffer */
    size_t hi = 0;
    size_t s = align_up((size_t)(peak + peak / 8u) + 4096u, 64u);
    s = s > min ? s : min;
    for (;;) {
        if (s > opts->cap) {
            s = opts->cap;
        }
        out->replays++;
        if (size_fits(a, buffer, s, t, opts)) {
            hi = s;
            break;
        }
        if (drv_stop) {
            out->interrupted = true;
            return;
        }
        lo = s > lo ? s : lo;
        if (s == opts->cap) {
            return; /* does not fit even in the whole buffer */
        }
        s *= 2u;
    }
    out->found = true;
    for (;;) {
        double rel = (double)hi * opts->res_rel;
        size_t step = rel > (double)opts->res_abs ? (size_t)rel : opts->res_abs;
        if (step == 0u) {
            step = 1u;
        }
        if (hi - lo <= step || drv_stop) {
            break;
        }
        size_t mid = lo + (hi - lo) / 2u;
        out->replays++;
        if (size_fits(a, buffer, mid, t, opts)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    out->heap = hi;
    out->below = lo;
    out->resolution = hi - lo;
    out->replays++;
    out->verified = size_fits(a, buffer, hi, t, opts);
    size_t step = hi / 100u > out->resolution ? hi / 100u : out->resolution;
    step = step != 0u ? step : 1u;
    for (unsigned k = 1; k <= opts->checks && !drv_stop; k++) {
        size_t above = hi + k * step;
        if (above > opts->cap) {
            break;
        }
        out->replays++;
        if (!size_fits(a, buffer, above, t, opts)) {
            if (out->nonmono++ == 0u) {
                out->nonmono_at = above;
            }
        }
    }
    out->interrupted = drv_stop != 0;
}

static uint64_t pow2ceil(uint64_t v)
{
    uint64_t p = 1;
    while (p < v) {
        p <<= 1;
    }
    return p;
}

bool rp_bound(const rt_allocator_t *a, const wl_trace_t *t, double *bytes, char *formula, size_t len)
{
    if (a->family != RT_FAMILY_BUDDY && a->family != RT_FAMILY_TREE && a->family != RT_FAMILY_TREE_CACHED) {
        snprintf(formula, len, "no bound");
        return false;
    }
    uint64_t *blk = calloc(t->slots != 0 ? t->slots : 1u, sizeof *blk);
    if (blk == NULL) {
        snprintf(formula, len, "no bound (out of memory)");
        return false;
    }
    uint64_t minb = a->min_block != 0u ? a->min_block : 1u;
    uint64_t live = 0, peak = 0, bmax = 0, bmin = UINT64_MAX;
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        if ((op->kind & WL_OP_FAILED) != 0u) {
            continue;
        }
        uint64_t nb = 0;
        if (WL_OP_KIND(op) != WL_FREE) {
            uint64_t need = (uint64_t)op->size + a->block_overhead;
            nb = pow2ceil(need > minb ? need : minb);
            bmax = nb > bmax ? nb : bmax;
            bmin = nb < bmin ? nb : bmin;
            uint64_t both = live + nb; /* a realloc holds the old and the new block at once */
            peak = both > peak ? both : peak;
        }
        live = live - blk[op->slot] + nb;
        blk[op->slot] = nb;
        peak = live > peak ? live : peak;
    }
    free(blk);
    if (bmax == 0u) {
        snprintf(formula, len, "no allocations");
        return false;
    }
    unsigned r = 0;
    while ((bmin << r) < bmax) {
        r++;
    }
    uint64_t m = (peak + bmax - 1u) / bmax * bmax;
    *bytes = (double)(r + 1u) * (double)m + 2.0 * (double)bmax;
    snprintf(formula, len, "(r+1)M+2B; r=log2(B/b)=%u, b=%llu, B=%llu, M=%llu", r, (unsigned long long)bmin,
             (unsigned long long)bmax, (unsigned long long)m);
    return true;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static void kind_stat(uint32_t *v, size_t n, rp_kind_stat_t *s)
{
    memset(s, 0, sizeof *s);
    if (n == 0) {
        return;
    }
    qsort(v, n, sizeof *v, cmp_u32);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
    }
    s->n = n;
    s->mean = sum / (double)n;
    s->p99 = mt_percentile(v, n, 99.0);
    s->max = v[n - 1u];
}

size_t rp_sample_stride(const wl_trace_t *t, size_t sample)
{
    return sample == 0u || t->nops <= sample ? 1u : t->nops / sample;
}

bool rp_percentile_ok(size_t n, double p) { return (double)n * (100.0 - p) / 100.0 >= 10.0; }

void rp_count(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, size_t sample, rp_replay_t *r,
              void (*progress)(void *, double), void *context)
{
    r->ic_ok = false;
    if (!ic_supported()) {
        return;
    }
    /* no step budget: the sample is fixed, so every allocator counts the same calls */
    ic_plan_t plan = {.stride = rp_sample_stride(t, sample), .step_budget = 0, .max_samples = 0};
    ic_result_t res;
    if (!ic_count_trace(a, buffer, size, t, &plan, &res, progress, context)) {
        r->interrupted = res.interrupted;
        ic_result_free(&res);
        return;
    }
    uint32_t *all = malloc((res.n != 0 ? res.n : 1u) * sizeof *all);
    uint32_t *per = malloc((res.n != 0 ? res.n : 1u) * sizeof *per);
    if (all == NULL || per == NULL) {
        free(all), free(per);
        ic_result_free(&res);
        return;
    }
    r->worst_count = 0;
    for (size_t i = 0; i < res.n; i++) {
        all[i] = res.samples[i].count;
        if (i == 0 || res.samples[i].count > r->worst_count) {
            const wl_op_t *op = &t->ops[res.samples[i].op];
            r->worst_count = res.samples[i].count;
            r->worst_op = res.samples[i].op;
            r->worst_kind = WL_OP_KIND(op);
            r->worst_size = op->size;
        }
    }
    kind_stat(all, res.n, &r->all);
    for (unsigned k = 0; k < RP_KINDS; k++) {
        size_t n = 0;
        for (size_t i = 0; i < res.n; i++) {
            if (res.samples[i].kind == k) {
                per[n++] = res.samples[i].count;
            }
        }
        kind_stat(per, n, &r->kind[k]);
    }
    r->ic_stride = plan.stride;
    r->ic_ok = res.n > 0;
    free(all), free(per);
    ic_result_free(&res);
}

void rp_frag(const rt_allocator_t *a, const rp_size_t *s, const wl_trace_t *t, rp_replay_t *r)
{
    r->f_known = false;
    r->f_approx = false;
    r->flagged = 0;
    for (size_t i = 0; i < t->nops; i++) {
        r->flagged += (t->ops[i].kind & WL_OP_FAILED) != 0u;
    }
    uint64_t peak = rp_peak_live(t);
    if (a->create == NULL || s == NULL || !s->found || peak == 0u) {
        return; /* the system peers have no heap of their own to size */
    }
    r->peak_memory = s->heap;
    r->f = fr_factor(s->heap, peak);
    r->f_known = true;
}

/* --- worker processes ------------------------------------------------------------------------- */

unsigned rp_workers(uint64_t need, uint64_t max_memory, unsigned requested)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t w = requested != 0u ? requested : cpus > 0 ? (uint64_t)cpus : 1u;
    uint64_t fit = need != 0u ? max_memory / need : w;
    w = w < fit ? w : fit;
    return w != 0u ? (unsigned)w : 1u;
}

typedef struct rp_jobs_shared {
    volatile double progress[BENCH_MAX_SELECTED];
} rp_jobs_shared_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void jobs_progress(const char *what, size_t n, size_t done, const bool *running, const rp_jobs_shared_t *sh,
                          double started)
{
    double share = (double)done;
    unsigned run = 0;
    for (size_t k = 0; k < n; k++) {
        if (running[k]) {
            double p = sh->progress[k];
            share += p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
            run++;
        }
    }
    share /= (double)n;
    double el = now_s() - started;
    char who[96], left[48] = "time left: estimating";
    snprintf(who, sizeof who, "%zu of %zu done, %u running", done, n, run);
    if (share > 0.02 && el > 2.0) {
        snprintf(left, sizeof left, "about %.0f s left", el * (1.0 - share) / share);
    }
    char phase[64];
    snprintf(phase, sizeof phase, "%s", left);
    bench_progress(what, who, phase, share);
}

bool rp_run_jobs(size_t n, size_t result_size, unsigned workers, rp_job_fn job, rp_row_fn row, void *context,
                 const char *what)
{
    if (n == 0u) {
        return true;
    }
    n = n < BENCH_MAX_SELECTED ? n : BENCH_MAX_SELECTED;
    size_t bytes = sizeof(rp_jobs_shared_t) + n * result_size;
    rp_jobs_shared_t *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        return false;
    }
    unsigned char *results = (unsigned char *)(sh + 1);
    pid_t pid[BENCH_MAX_SELECTED] = {0};
    bool running[BENCH_MAX_SELECTED] = {false}, finished[BENCH_MAX_SELECTED] = {false},
         crashed[BENCH_MAX_SELECTED] = {false};
    size_t next = 0, done = 0, shown = 0;
    unsigned active = 0;
    double started = now_s(), last = 0.0;
    workers = workers != 0u ? workers : 1u;
    while (done < n) {
        while (!drv_stop && next < n && active < workers) {
            fflush(stdout);
            fflush(stderr);
            pid_t p = fork();
            if (p == 0) {
                job(next, results + next * result_size, &sh->progress[next], context);
                fflush(stdout);
                _exit(drv_stop ? 130 : 0);
            }
            if (p < 0) { /* no worker: run it here */
                job(next, results + next * result_size, &sh->progress[next], context);
                finished[next] = true;
                done++;
            } else {
                pid[next] = p;
                running[next] = true;
                active++;
            }
            next++;
        }
        if (drv_stop) {
            for (size_t k = 0; k < n; k++) {
                if (running[k]) {
                    kill(pid[k], SIGKILL);
                }
            }
        }
        int status;
        pid_t w = waitpid(-1, &status, drv_stop ? 0 : WNOHANG);
        if (w > 0) {
            for (size_t k = 0; k < n; k++) {
                if (running[k] && pid[k] == w) {
                    running[k] = false;
                    finished[k] = true;
                    crashed[k] = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                    active--;
                    done++;
                }
            }
        } else if (w < 0 && errno == ECHILD) {
            break;
        } else if (!drv_stop) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (drv_stop && active == 0u) {
            break;
        }
        while (shown < n && finished[shown]) {
            bench_progress_clear();
            row(shown, results + shown * result_size, crashed[shown], context);
            fflush(stdout);
            shown++;
        }
        double t = now_s();
        if (t - last >= 1.0 && done < n) {
            jobs_progress(what, n, done, running, sh, started);
            last = t;
        }
    }
    bench_progress_clear();
    munmap(sh, bytes);
    return !drv_stop;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void rp_time(const rt_allocator_t *const *allocs, size_t n, void *buffer, size_t size, const wl_trace_t *t,
             unsigned reps, double *ns, size_t *failures, void (*progress)(void *, double), void *context)
{
    reps = reps != 0u ? reps : 1u;
    double *v = calloc(n * reps + 1u, sizeof *v);
    for (size_t k = 0; k < n; k++) {
        ns[k] = 0.0;
        failures[k] = 0;
    }
    if (v == NULL || t->nops == 0) {
        free(v);
        return;
    }
    bool *bad = calloc(n + 1u, sizeof *bad);
    for (unsigned rep = 0; rep < reps && !drv_stop; rep++) {
        for (size_t j = 0; j < n && !drv_stop; j++) {
            /* the order rotates each repetition: what one allocator leaves behind (caches, a
             * peer's background work) does not always fall on the same next one */
            size_t k = (j + rep) % n;
            drv_instance_t in;
            if (bad[k] || !drv_open(&in, allocs[k], buffer, size, t->slots, false)) {
                bad[k] = true;
                continue;
            }
            uint64_t el = 0;
            drv_outcome_t o = drv_replay_untimed(&in, t, &el);
            drv_close(&in);
            if (o.interrupted) {
                break;
            }
            if (rep == 0) {
                failures[k] = o.failures;
            }
            v[k * reps + rep] = (double)el / (double)t->nops;
            if (progress != NULL) {
                progress(context, (double)(rep * n + j + 1u) / (double)(reps * n));
            }
        }
    }
    if (!drv_stop) {
        for (size_t k = 0; k < n; k++) {
            if (!bad[k]) {
                qsort(v + k * reps, reps, sizeof *v, cmp_double);
                ns[k] = v[k * reps + reps / 2u];
            }
        }
    }
    free(bad);
    free(v);
}

/* --- synthetic traces ----------------------------------------------------------------------- */

/* The file and its one stream, named and described, with no ops yet. False when out of memory. */
static bool synth_header(tr_file_t *f, uint64_t seed, size_t nops, uint32_t slots)
{
    memset(f, 0, sizeof *f);
    f->streams = calloc(1, sizeof *f->streams);
    if (f->streams == NULL) {
        return false;
    }
    f->nstreams = 1;
    snprintf(f->command, sizeof f->command, "synthetic seed=%llu ops=%zu", (unsigned long long)seed, nops);
    tr_stream_t *st = &f->streams[0];
    wl_trace_t *t = &st->trace;
    snprintf(t->name, sizeof t->name, "synthetic");
    snprintf(t->params, sizeof t->params, "realloc-heavy synthetic trace, %zu ops over %u slots", nops, slots);
    snprintf(st->command, sizeof st->command, "%s", f->command);
    st->pid = 1;
    st->threads = 1;
    t->seed = seed != 0u ? seed : 1u;
    t->slots = slots + 1u;
    return true;
}

/* The op on a slot in use (its size *sz): a realloc that grows or shrinks it (45 %), or its free. */
static void synth_used(wl_op_t *op, uint64_t *x, uint32_t roll, uint8_t *used, uint32_t *sz)
{
    if (roll < 45) {
        uint32_t grow = *sz + *sz / 2u + (uint32_t)(wl_rand(x) % 64u) + 1u;
        uint32_t nsize = roll < 30 ? (grow > 65536u ? 16u : grow) : *sz / 2u + 1u;
        op->kind = WL_REALLOC;
        op->size = nsize;
        *sz = nsize;
    } else {
        op->kind = WL_FREE;
        op->size = 0;
        *used = 0;
        *sz = 0;
    }
}

/* The op on a free slot: malloc, calloc, memalign or realloc(NULL) of 16 .. 4096 bytes. */
static void synth_fresh(wl_op_t *op, uint64_t *x, uint32_t roll, uint8_t *used, uint32_t *sz)
{
    uint32_t size = 16u + (uint32_t)(wl_rand(x) % 4081u);
    if (roll < 50) {
        op->kind = WL_MALLOC;
    } else if (roll < 70) {
        op->kind = WL_CALLOC;
    } else if (roll < 85) {
        unsigned lg = 4u + (unsigned)(wl_rand(x) % 9u); /* 16 .. 4096 */
        op->kind = WL_MEMALIGN | (lg << 8);
    } else {
        op->kind = WL_REALLOC; /* realloc(NULL, size) */
    }
    op->size = size;
    *used = 1;
    *sz = size;
}

bool rp_synth(tr_file_t *f, uint64_t seed, size_t nops, uint32_t slots)
{
    if (!synth_header(f, seed, nops, slots)) {
        return false;
    }
    tr_stream_t *st = &f->streams[0];
    wl_trace_t *t = &st->trace;
    t->ops = calloc(nops != 0 ? nops : 1u, sizeof *t->ops);
    uint8_t *used = calloc(slots + 1u, 1);
    uint32_t *sz = calloc(slots + 1u, sizeof *sz);
    if (t->ops == NULL || used == NULL || sz == NULL) {
        free(used), free(sz);
        return false;
    }
    uint64_t x = t->seed;
    size_t n = 0;
    while (n < nops) {
        uint32_t s = (uint32_t)(wl_rand(&x) % slots);
        uint32_t roll = (uint32_t)(wl_rand(&x) % 100u);
        wl_op_t *op = &t->ops[n];
        op->slot = s;
        if (n == nops / 2u && !used[slots]) {
            /* one call that got nothing in the "recording": replayed, never required to fit */
            *op = (wl_op_t){.slot = slots, .size = 3u << 30, .kind = WL_MALLOC | WL_OP_FAILED};
        } else if (used[s]) {
            synth_used(op, &x, roll, &used[s], &sz[s]);
        } else {
            synth_fresh(op, &x, roll, &used[s], &sz[s]);
        }
        n++;
    }
    t->nops = n;
    free(used), free(sz);
    rp_finish_trace(t);
    st->failed = 1;
    return true;
}

/* --- the command line -------------------------------------------------------------------------- */

typedef struct rp_cli {
    const char *file;
    const char *alloc_names;
    const char *csv_dir;
    size_t sample; /* --sample: calls counted per allocator (0: all) */
    unsigned jobs; /* --jobs: worker processes (0: the CPUs, within --max-memory) */
    unsigned reps;
    uint64_t max_memory; /* --max-memory, or the default (tr_default_max_memory) */
    bool max_memory_set;
} rp_cli_t;

static void cli_usage(FILE *out, const char *what)
{
    bool replay = strcmp(what, "replay") == 0;
    char def[32];
    rp_format_size(def, sizeof def, tr_default_max_memory());
    fprintf(out,
            "usage: rtbench trace %s FILE [--alloc LIST] [--csv DIR] [--max-memory SIZE] [--jobs N]%s\n"
            "  --max-memory SIZE  refuse, before mapping anything, a trace whose %s may take more\n"
            "                     memory than SIZE: bytes, or with K, M, G or T (powers of 1024);\n"
            "                     default half of physical memory (here %s). A stream takes\n"
            "%s"
            "                     heap = max(64 MiB, 8 x the stream's live peak) (doc/traces.md)\n",
            what, replay ? " [--sample N] [--reps N]" : "", replay ? "replay" : "sizing", def,
            replay ? "                     2 x heap, plus live peak + largest request when a system\n"
                     "                     peer (glibc, jemalloc, mimalloc) replays it;\n"
                   : "                     4 x heap + live peak + largest request;\n");
    fprintf(out, "  --jobs N           allocators measured at once, each in a process of its own (default:\n"
                 "                     the CPUs online, fewer when --max-memory cannot hold them)\n");
    if (replay) {
        fprintf(out, "  --sample N         calls whose instructions are counted per allocator, spread evenly\n"
                     "                     over the stream, the same calls for every allocator (default 1000;\n"
                     "                     0: every call, slow: ptrace single-steps each instruction)\n"
                     "  --reps N           untimed whole-stream replays per allocator for ns/call (default 5)\n");
    }
}

static int parse_cli(int argc, char **argv, rp_cli_t *cli, const char *what)
{
    memset(cli, 0, sizeof *cli);
    cli->sample = 1000;
    cli->jobs = 0;
    cli->reps = 5;
    cli->max_memory = tr_default_max_memory();
    for (int i = 0; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_usage(stdout, what);
            cli->file = NULL;
            return 0;
        }
        if (strcmp(argv[i], "--max-memory") == 0) {
            if (val == NULL || !rp_parse_size(val, &cli->max_memory)) {
                fprintf(stderr, "rtbench trace %s: --max-memory needs a size above 0 such as 512M or 8G, not '%s'\n",
                        what, val != NULL ? val : "");
                cli->file = NULL;
                return 2;
            }
            cli->max_memory_set = true, i++;
        } else if (strcmp(argv[i], "--alloc") == 0 && val != NULL) {
            cli->alloc_names = val, i++;
        } else if (strcmp(argv[i], "--csv") == 0 && val != NULL) {
            cli->csv_dir = strcmp(val, "-") == 0 ? NULL : val, i++;
        } else if (strcmp(argv[i], "--sample") == 0 && val != NULL && val[0] >= '0' && val[0] <= '9') {
            cli->sample = (size_t)strtoull(val, NULL, 10), i++;
        } else if (strcmp(argv[i], "--jobs") == 0 && val != NULL && atoi(val) > 0) {
            cli->jobs = (unsigned)atoi(val), i++;
        } else if (strcmp(argv[i], "--reps") == 0 && val != NULL && atoi(val) > 0) {
            cli->reps = (unsigned)atoi(val), i++;
        } else if (argv[i][0] != '-' && cli->file == NULL) {
            cli->file = argv[i];
        } else {
            fprintf(stderr, "rtbench trace %s: bad argument '%s'\n", what, argv[i]);
            cli->file = NULL;
            return 2;
        }
    }
    if (cli->file == NULL) {
        cli_usage(stderr, what);
        return 2;
    }
    if ((uint64_t)SIZE_MAX < cli->max_memory) {
        cli->max_memory = SIZE_MAX; /* no mapping is larger than the address space */
    }
    return -1;
}

/* The allocators of --alloc (default: every registry allocator and the system peers, noop
 * left out -- it has no memory to measure -- and the tree's study variants, bench_study_variant;
 * "all" takes those too). `size` keeps only those with create. */
static size_t pick_allocators(const char *names, bool need_create, const rt_allocator_t **out, size_t cap)
{
    size_t n = 0, k = 0;
    const rt_allocator_t *const *all = bench_allocators(&n);
    if (names == NULL || strcmp(names, "all") == 0) {
        for (size_t i = 0; i < n && k < cap; i++) {
            if (strcmp(all[i]->name, "noop") != 0 && (!need_create || all[i]->create != NULL) &&
                (names != NULL || !bench_study_variant(all[i]))) {
                out[k++] = all[i];
            }
        }
        return k;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *tok = strtok(buf, ","); tok != NULL && k < cap; tok = strtok(NULL, ",")) {
        const rt_allocator_t *a = bench_find(tok);
        if (a == NULL) {
            const char *why = bench_peer_unavailable(tok);
            fprintf(stderr, "rtbench: allocator '%s' %s%s\n", tok, why ? "is unavailable: " : "is unknown",
                    why ? why : " (see rtbench list)");
            return 0;
        }
        if (need_create && a->create == NULL) {
            fprintf(stderr, "rtbench trace size: '%s' has no heap of its own to size; left out\n", tok);
            continue;
        }
        out[k++] = a;
    }
    return k;
}

static void cli_ctx(bench_ctx_t *ctx, const char *csv_dir)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->seed = 0;
    ctx->scale = BENCH_STANDARD;
    ctx->csv_dir = csv_dir;
    bench_meta_init(&ctx->meta);
}

static void *map_buffer(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void fmt_or_dash(char *out, size_t len, bool known, const char *fmt, double v)
{
    if (known) {
        snprintf(out, len, fmt, v);
    } else {
        snprintf(out, len, "-");
    }
}

typedef struct rp_progress_ctx {
    const char *experiment;
    char who[96];
    const char *phase;
} rp_progress_ctx_t;

static void rp_progress_cb(void *context, double done)
{
    rp_progress_ctx_t *p = context;
    bench_progress(p->experiment, p->who, p->phase, done);
}

/* --- what replay and size share: the trace, the allocators, the CSV ---------------------------- */

/* One of the two commands: its name, which allocators it takes and its CSV file. */
typedef struct rp_command {
    const char *what; /* "replay" or "size", as on the command line */
    bool need_create; /* only allocators with a heap of their own (size) */
    const char *csv_name;
    const char *csv_head; /* the CSV header up to the per-kind columns, or all of it */
    const char *csv_tail; /* the header after the per-kind columns; NULL: no such columns */
} rp_command_t;

/* A command's state between session_open and session_close. */
typedef struct rp_session {
    rp_cli_t cli;
    tr_file_t f;
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t na;
    FILE *csv; /* NULL: no --csv */
    char path[1200];
    bool failed; /* a stream could not be replayed (its buffer not mapped) */
} rp_session_t;

/* Whether every stream of the loaded trace fits the command's memory limit (rp_need). If not,
 * prints the one-line refusal for the first stream that does not. */
static bool session_fits(const rp_session_t *s, const rp_command_t *cmd)
{
    bool peers = false;
    for (size_t k = 0; k < s->na; k++) {
        peers = peers || s->allocs[k]->create == NULL;
    }
    for (size_t si = 0; si < s->f.nstreams; si++) {
        rp_need_t n;
        rp_need(&s->f.streams[si].trace, peers, &n);
        uint64_t need = strcmp(cmd->what, "replay") == 0 ? n.replay : n.size;
        if (need > s->cli.max_memory) {
            char nd[32], pk[32], lg[32], hp[32], lim[32];
            rp_format_size(nd, sizeof nd, need);
            rp_format_size(pk, sizeof pk, n.peak);
            rp_format_size(lg, sizeof lg, n.largest);
            rp_format_size(hp, sizeof hp, n.heap);
            rp_format_size(lim, sizeof lim, s->cli.max_memory);
            fprintf(stderr,
                    "rtbench trace %s: %s: stream %zu would need %s (live peak %s, largest request %s, heap %s), "
                    "more than --max-memory %s%s; refused\n",
                    cmd->what, s->cli.file, si, nd, pk, lg, hp, lim,
                    s->cli.max_memory_set ? "" : " (default: half of physical memory)");
            return false;
        }
    }
    return true;
}

/* Parses the command line, loads the trace, picks the allocators, opens the CSV with its header
 * and prints the trace's first line. -1 when the command goes on, else its exit status. */
static int session_open(rp_session_t *s, int argc, char **argv, const rp_command_t *cmd)
{
    int rc = parse_cli(argc, argv, &s->cli, cmd->what);
    if (rc >= 0) {
        return rc;
    }
    s->failed = false;
    char err[512];
    if (!tr_load_max(s->cli.file, s->cli.max_memory, &s->f, err, sizeof err)) {
        /* err names the file; one line */
        fprintf(stderr, "rtbench trace %s: %s%s\n", cmd->what, err,
                strstr(err, "memory limit") != NULL ? " (--max-memory)" : "");
        return 1;
    }
    tr_zero_as_one(&s->f);
    s->na = pick_allocators(s->cli.alloc_names, cmd->need_create, s->allocs, BENCH_MAX_SELECTED);
    if (s->na == 0) {
        tr_release(&s->f);
        return 2;
    }
    if (!session_fits(s, cmd)) {
        tr_release(&s->f);
        return 1;
    }
    static bench_ctx_t ctx;
    cli_ctx(&ctx, s->cli.csv_dir);
    s->csv = bench_csv_open(&ctx, cmd->csv_name, false, s->path, sizeof s->path);
    if (s->csv != NULL) {
        fprintf(s->csv, "%s%s%s\n", cmd->csv_head, cmd->csv_tail != NULL ? rp_kinds_header : "",
                cmd->csv_tail != NULL ? cmd->csv_tail : "");
    }
    printf("trace %s: %s (%zu stream%s)\n", s->cli.file, s->f.command, s->f.nstreams, s->f.nstreams == 1 ? "" : "s");
    return -1;
}

/* Closes the CSV, releases the trace; the command's exit status (130 when interrupted, 1 when a
 * stream could not be replayed). */
static int session_close(rp_session_t *s)
{
    bench_csv_close(s->csv, s->path);
    tr_release(&s->f);
    return drv_stop ? 130 : s->failed ? 1 : 0;
}

/* --- trace replay ------------------------------------------------------------------------------ */

static const rp_command_t replay_command = {
    "replay", false, "trace_replay.csv",
    "program,stream,allocator,ops,failures,flagged,ic_stride,ins_mean,ins_p99,ins_max,",
    ",ns_per_call,ns_ratio_glibc,f_percent,f_approx,worst_op,worst_kind,worst_size,worst_ins"};

/* What a worker measures of one allocator on one stream: instructions of the fixed sample, and
 * the smallest heap that runs the stream (to the same precision as `trace size`), whence F. */
typedef struct replay_result {
    rp_replay_t r;
    rp_size_t sz;
} replay_result_t;

typedef struct replay_job_ctx {
    const rp_session_t *s;
    size_t si;
    size_t heap;
    const double *ns;
    const size_t *fails;
    double glibc_ns;
} replay_job_ctx_t;

static void job_progress(void *context, double done) { *(volatile double *)context = 0.2 + 0.8 * done; }

static void replay_job(size_t k, void *result, volatile double *progress, void *context)
{
    const replay_job_ctx_t *c = context;
    replay_result_t *out = result;
    const rt_allocator_t *a = c->s->allocs[k];
    const wl_trace_t *t = &c->s->f.streams[c->si].trace;
    void *buf = map_buffer(c->heap);
    if (buf == NULL) {
        return;
    }
    if (a->create != NULL) {
        rp_size_opts_t so = {4096u, 0.005, c->heap, 0, NULL, NULL};
        rp_size(a, buf, t, &so, &out->sz);
    }
    *progress = 0.2;
    /* counted on twice the heap it needs (the trees write their whole buffer at create) */
    size_t heap = out->sz.found && out->sz.heap <= c->heap / 2u ? out->sz.heap * 2u : c->heap;
    if (!drv_stop) {
        rp_count(a, buf, heap, t, c->s->cli.sample, &out->r, job_progress, (void *)progress);
    }
    rp_frag(a, &out->sz, t, &out->r);
    *progress = 1.0;
}

/* One row of the replay table on stdout. */
static void replay_print_row(const char *name, const rp_replay_t *r, double ns)
{
    char n[24], im[24], ip[24], ix[24], nsv[24], fv[24];
    fmt_or_dash(n, sizeof n, r->ic_ok, "%.0f", (double)r->all.n);
    fmt_or_dash(im, sizeof im, r->ic_ok, "%.1f", r->all.mean);
    fmt_or_dash(ip, sizeof ip, r->ic_ok && rp_percentile_ok(r->all.n, 99.0), "%.0f", r->all.p99);
    fmt_or_dash(ix, sizeof ix, r->ic_ok, "%.0f", r->all.max);
    fmt_or_dash(nsv, sizeof nsv, ns > 0.0, "%.1f", ns);
    fmt_or_dash(fv, sizeof fv, r->f_known, "%.1f", r->f);
    printf("%-10s %6zu %6s %8s %8s %8s %8s %7s", name, r->failures, n, im, ip, ix, nsv, fv);
    if (r->ic_ok) {
        printf(" op %zu %s %u: %u", r->worst_op, rp_kind_name[r->worst_kind % RP_KINDS], r->worst_size, r->worst_count);
    }
    printf("\n");
}

/* The measured columns of trace_replay.csv and of the experiment's trace.csv, from the stride to
 * the worst call, the row's end included (an empty field where a figure is unknown). */
void rp_csv_measures(FILE *csv, const rp_replay_t *r, double ns, double glibc_ns, int ratio_digits)
{
    if (r->ic_ok) {
        fprintf(csv, "%zu,%.2f,%u,%u,", r->ic_stride, r->all.mean, r->all.p99, r->all.max);
    } else {
        fprintf(csv, ",,,,");
    }
    rp_write_kinds(csv, r);
    if (ns > 0.0) {
        fprintf(csv, "%.2f,", ns);
    } else {
        fprintf(csv, ",");
    }
    if (ns > 0.0 && glibc_ns > 0.0) {
        fprintf(csv, "%.*f,", ratio_digits, ns / glibc_ns);
    } else {
        fprintf(csv, ",");
    }
    if (r->f_known) {
        fprintf(csv, "%.2f,%d,", r->f, r->f_approx ? 1 : 0);
    } else {
        fprintf(csv, ",,");
    }
    if (r->ic_ok) {
        fprintf(csv, "%zu,%s,%u,%u\n", r->worst_op, rp_kind_name[r->worst_kind % RP_KINDS], r->worst_size,
                r->worst_count);
    } else {
        fprintf(csv, ",,,\n");
    }
}

/* One row of trace_replay.csv (an empty field where a figure is unknown). */
static void replay_csv_row(FILE *csv, size_t si, const char *name, size_t nops, const rp_replay_t *r, double ns,
                           double glibc_ns)
{
    fprintf(csv, "%s,%zu,%s,%zu,%zu,%zu,", "-", si, name, nops, r->failures, r->flagged);
    rp_csv_measures(csv, r, ns, glibc_ns, 3);
}

/* glibc's ns per call among the timed allocators; 0 when glibc is not among them. */
static double glibc_ns_of(const rt_allocator_t *const *allocs, size_t na, const double *ns)
{
    double glibc_ns = 0.0;
    for (size_t k = 0; k < na; k++) {
        if (strcmp(allocs[k]->name, "glibc") == 0) {
            glibc_ns = ns[k];
        }
    }
    return glibc_ns;
}

static void replay_row(size_t k, const void *result, bool crashed, void *context)
{
    const replay_job_ctx_t *c = context;
    replay_result_t r = *(const replay_result_t *)result;
    r.r.failures = c->fails[k];
    const char *name = c->s->allocs[k]->name;
    replay_print_row(name, &r.r, c->ns[k]);
    if (crashed) {
        printf("           (%s: its measuring process died; figures missing)\n", name);
    }
    if (c->s->csv != NULL) {
        replay_csv_row(c->s->csv, c->si, name, c->s->f.streams[c->si].trace.nops, &r.r, c->ns[k], c->glibc_ns);
    }
}

/* Stream si against every allocator: timed all together (one process, allocators interleaved),
 * then counted and sized in worker processes, one per allocator. False when its buffer cannot be
 * mapped (the command stops there). */
static bool replay_stream(rp_session_t *s, size_t si)
{
    const tr_stream_t *st = &s->f.streams[si];
    const wl_trace_t *t = &st->trace;
    size_t heap = rp_replay_heap(t);
    void *buf = map_buffer(heap);
    if (buf == NULL) {
        fprintf(stderr, "rtbench trace replay: cannot map %zu MiB\n", heap >> 20);
        return false;
    }
    memset(buf, 0xA5, heap);
    printf("\nstream %zu: pid %u, %zu ops (%zu allocating, %zu frees), live peak %llu bytes, heap %zu MiB: %s\n", si,
           st->pid, t->nops, t->nmalloc, t->nfree, (unsigned long long)rp_peak_live(t), heap >> 20, st->command);
    double ns[BENCH_MAX_SELECTED];
    size_t fails[BENCH_MAX_SELECTED];
    rp_progress_ctx_t pc = {"trace", "", "time"};
    snprintf(pc.who, sizeof pc.who, "stream %zu", si);
    rp_time(s->allocs, s->na, buf, heap, t, s->cli.reps, ns, fails, rp_progress_cb, &pc);
    bench_progress_clear();
    munmap(buf, heap);
    printf("%-10s %6s %6s %8s %8s %8s %8s %7s %s\n", "allocator", "fail", "calls", "ins mean", "p99", "max", "ns/call",
           "F %", "worst call counted (op kind size: instructions)");
    rp_need_t need;
    rp_need(t, false, &need);
    replay_job_ctx_t c = {s, si, heap, ns, fails, glibc_ns_of(s->allocs, s->na, ns)};
    char what[80];
    snprintf(what, sizeof what, "trace stream %zu: count and size", si);
    rp_run_jobs(s->na, sizeof(replay_result_t), rp_workers(need.replay, s->cli.max_memory, s->cli.jobs), replay_job,
                replay_row, &c, what);
    return true;
}

int trace_replay(int argc, char **argv)
{
    rp_session_t s;
    int rc = session_open(&s, argc, argv, &replay_command);
    if (rc >= 0) {
        return rc;
    }
    printf("calls: the calls whose instructions were counted (ptrace single-stepping), %s, the same calls for "
           "every allocator; ins mean, max: over them; p99 shown when at least 10 calls lie above it (1,000 calls or "
           "more)\n"
           "ns/call: median of %u untimed whole-stream replays, allocators interleaved -- a clock: on a loaded "
           "machine it is noise (instruction counts are not)\n"
           "F %%: (the smallest heap that runs the stream / its live peak - 1) x 100, the heap found by bisection "
           "to max(4 KiB, 0.5 %%) as `trace size` does (its ratio is 1 + F/100); it counts everything the "
           "allocator needs beyond the bytes live: headers, rounding, metadata in the buffer and the holes between "
           "blocks. The buddy and the wait-free trees round every block to a power of two and keep their tree in "
           "the buffer: their F of 100-200 %% is that rounding, not scattered blocks. Not known for the system "
           "peers (no heap of their own)\n",
           s.cli.sample != 0u ? "a fixed sample spread evenly over the stream (--sample)" : "every call", s.cli.reps);
    for (size_t si = 0; si < s.f.nstreams && !drv_stop; si++) {
        if (!replay_stream(&s, si)) {
            s.failed = true;
            break;
        }
    }
    return session_close(&s);
}

/* --- trace size -------------------------------------------------------------------------------- */

static const rp_command_t size_command = {
    "size", true, "trace_size.csv",
    "program,stream,allocator,live_peak,heap_needed,ratio,resolution,verified,nonmonotone,nonmonotone_at,bound,"
    "bound_formula",
    NULL};

/* One allocator on one stream: the heap it needs and the bound defended for it. */
typedef struct size_row {
    rp_size_t s;
    double ratio; /* heap needed / live peak; 0 when not found */
    bool hb;      /* a bound is defended: bound and formula hold it */
    double bound;
    char formula[160];
} size_row_t;

/* Per allocator, the largest heap needed of any stream, with its stream and ratio. */
typedef struct size_max {
    size_t heap[BENCH_MAX_SELECTED];
    double ratio[BENCH_MAX_SELECTED];
    size_t stream[BENCH_MAX_SELECTED];
} size_max_t;

typedef struct size_job_ctx {
    const rp_session_t *s;
    size_t si;
    uint64_t peak;
    const rp_size_opts_t *opts;
    size_max_t *max;
} size_job_ctx_t;

/* Sizes allocator k on the stream (its own buffer of opts->cap bytes) and works out its bound. */
static void size_job(size_t k, void *result, volatile double *progress, void *context)
{
    const size_job_ctx_t *c = context;
    size_row_t *row = result;
    const rt_allocator_t *a = c->s->allocs[k];
    const wl_trace_t *t = &c->s->f.streams[c->si].trace;
    void *buf = map_buffer(c->opts->cap);
    if (buf != NULL) {
        rp_size(a, buf, t, c->opts, &row->s);
    }
    row->bound = 0.0;
    row->hb = rp_bound(a, t, &row->bound, row->formula, sizeof row->formula);
    row->ratio = row->s.found && c->peak != 0u ? (double)row->s.heap / (double)c->peak : 0.0;
    *progress = 1.0;
}

/* One row of the size table on stdout. */
static void size_print_row(const char *name, const size_row_t *row)
{
    const rp_size_t *s = &row->s;
    char hv[32], bv[32];
    fmt_or_dash(hv, sizeof hv, s->found, "%.0f", (double)s->heap);
    fmt_or_dash(bv, sizeof bv, row->hb, "%.0f", row->bound);
    char fv[24];
    fmt_or_dash(fv, sizeof fv, s->found, "%.1f", (row->ratio - 1.0) * 100.0);
    printf("%-10s %12s %7.3f %7s %10s %s%s%s", name, hv, row->ratio, fv, bv, row->hb ? row->formula : "no bound",
           s->found && !s->verified ? "; NOT verified" : "", s->found ? "" : "; does not fit in the buffer");
    if (s->nonmono != 0u) {
        printf("; non-monotone: %zu bytes does not fit", s->nonmono_at);
    }
    printf("\n");
}

/* One row of trace_size.csv (an empty field where a figure is unknown). */
static void size_csv_row(FILE *csv, size_t si, const char *name, uint64_t peak, const size_row_t *row)
{
    const rp_size_t *s = &row->s;
    fprintf(csv, "-,%zu,%s,%llu,", si, name, (unsigned long long)peak);
    if (s->found) {
        fprintf(csv, "%zu,%.4f,%zu,%d,%u,%zu,", s->heap, row->ratio, s->resolution, s->verified ? 1 : 0, s->nonmono,
                s->nonmono_at);
    } else {
        fprintf(csv, ",,,,,,");
    }
    if (row->hb) {
        fprintf(csv, "%.0f,", row->bound);
    } else {
        fprintf(csv, ",");
    }
    bench_csv_field(csv, row->hb ? row->formula : "no bound");
    fprintf(csv, "\n");
}

static void size_row(size_t k, const void *result, bool crashed, void *context)
{
    const size_job_ctx_t *c = context;
    const size_row_t *row = result;
    const char *name = c->s->allocs[k]->name;
    if (row->s.found && row->s.heap > c->max->heap[k]) {
        c->max->heap[k] = row->s.heap, c->max->ratio[k] = row->ratio, c->max->stream[k] = c->si;
    }
    size_print_row(name, row);
    if (crashed) {
        printf("           (%s: its sizing process died; figures missing)\n", name);
    }
    if (c->s->csv != NULL) {
        size_csv_row(c->s->csv, c->si, name, c->peak, row);
    }
}

/* Stream si against every allocator (worker processes, each with its own buffer), its largest
 * heaps kept in max. */
static bool size_stream(const rp_session_t *s, size_t si, rp_size_opts_t *opts, size_max_t *max)
{
    const wl_trace_t *t = &s->f.streams[si].trace;
    uint64_t peak = rp_peak_live(t);
    opts->cap = rp_replay_heap(t) * 4u;
    void *probe = map_buffer(opts->cap); /* each worker maps its own: fail here, once, if none can */
    if (probe == NULL) {
        fprintf(stderr, "rtbench trace size: cannot map %zu MiB\n", opts->cap >> 20);
        return false;
    }
    munmap(probe, opts->cap);
    printf("\nstream %zu: %zu ops, live peak %llu bytes\n", si, t->nops, (unsigned long long)peak);
    gm_result_t g;
    if (gm_replay(&bench_glibc, t, NULL, true, &g) && peak != 0u) {
        printf("glibc footprint %llu bytes, %.3f x the live peak (peak of mallinfo2 arena + hblkhd, a process of "
               "its own, %s arena)\n",
               (unsigned long long)g.footprint, (double)g.footprint / (double)peak, g.fresh ? "new" : "REUSED");
    }
    printf("%-10s %12s %7s %7s %10s %s\n", "allocator", "heap needed", "ratio", "F %", "bound", "notes");
    rp_need_t need;
    rp_need(t, false, &need);
    size_job_ctx_t c = {s, si, peak, opts, max};
    char what[80];
    snprintf(what, sizeof what, "trace stream %zu: size", si);
    rp_run_jobs(s->na, sizeof(size_row_t), rp_workers(need.size, s->cli.max_memory, s->cli.jobs), size_job, size_row,
                &c, what);
    return true;
}

int trace_size(int argc, char **argv)
{
    rp_session_t s;
    int rc = session_open(&s, argc, argv, &size_command);
    if (rc >= 0) {
        return rc;
    }
    rp_size_opts_t opts = {4096u, 0.005, 0, 3, NULL, NULL};
    printf("heap needed: the smallest size passed to create on which every call that got memory in the recording "
           "gets it again; bisection to max(4 KiB, 0.5 %%), verified by one more replay, 3 sizes above checked\n"
           "ratio: heap needed / the live peak (the most bytes the program held at once); F %%: (ratio - 1) x 100, "
           "as `trace replay` and the studies give it: headers, rounding, metadata in the buffer and holes. The buddy "
           "and the wait-free trees round every block to a power of two and keep their tree in the buffer: their "
           "F of 100-200 %% is that rounding\n"
           "bound: the most memory the allocator can need for any program with this live peak and these block "
           "sizes (the buddy and the trees: Knuth's buddy bound, doc/traces.md); \"no bound\": none is proven for "
           "it, the heap needed is what this recording needed\n");
    size_max_t max = {{0}, {0}, {0}};
    for (size_t si = 0; si < s.f.nstreams && !drv_stop; si++) {
        if (!size_stream(&s, si, &opts, &max)) {
            s.failed = true;
            break;
        }
    }
    if (s.f.nstreams > 1) {
        /* the largest stream decides the heap a system hosting the program needs; a tiny stream's
         * ratio says more about the allocator's smallest buffer than about the program */
        printf("\nthe largest heap needed over the streams (its stream, its ratio to that stream's live peak):\n");
        for (size_t k = 0; k < s.na; k++) {
            printf("  %-10s %zu bytes (stream %zu, %.3f)\n", s.allocs[k]->name, max.heap[k], max.stream[k],
                   max.ratio[k]);
        }
    }
    return session_close(&s);
}

/* --- trace advise ------------------------------------------------------------------------------ */

/* What one allocator did on one stream (a worker's result). */
typedef struct advise_result {
    rp_replay_t r;
    rp_size_t sz;
    bool hb;
    double bound;
    size_t fail_op; /* no heap found: the first op that failed on the largest buffer */
} advise_result_t;

/* One allocator over every stream of every file. */
typedef struct advise_sum {
    bool ok;              /* ran every stream without a failure */
    size_t heap;          /* the largest heap needed over the streams (0: none found) */
    double bound;         /* the largest bound (0: none) */
    double ins_sum;       /* instructions over the counted calls */
    size_t calls;         /* counted calls */
    uint32_t worst;       /* the most instructions of one counted call */
    char worst_where[96]; /* which call */
    size_t flash;         /* Cortex-M4 code bytes (footprint CSV); 0 unknown */
} advise_sum_t;

typedef struct advise_ctx {
    advise_result_t res[BENCH_MAX_SELECTED]; /* the stream's, kept until every allocator is done */
    bool crashed[BENCH_MAX_SELECTED];
    size_t excluded; /* streams no allocator with a heap could run */
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t na;
    const wl_trace_t *t;
    size_t sample;
    size_t heap;
    advise_sum_t sum[BENCH_MAX_SELECTED];
    const char *file;
    size_t si;
} advise_ctx_t;

static void advise_job(size_t k, void *result, volatile double *progress, void *context)
{
    const advise_ctx_t *c = context;
    advise_result_t *out = result;
    const rt_allocator_t *a = c->allocs[k];
    void *buf = map_buffer(c->heap * 4u);
    if (buf == NULL) {
        return;
    }
    if (a->create != NULL) {
        rp_size_opts_t so = {4096u, 0.005, c->heap * 4u, 0, NULL, NULL};
        rp_size(a, buf, c->t, &so, &out->sz);
        if (!out->sz.found && !drv_stop) {
            (void)rp_fits(a, buf, c->heap * 4u, c->t, &out->fail_op);
        }
    }
    *progress = 0.2;
    /* counted on twice the heap it needs (the trees write their whole buffer at create) */
    size_t heap = out->sz.found && out->sz.heap <= c->heap * 2u ? out->sz.heap * 2u : c->heap;
    if (!drv_stop) {
        rp_count(a, buf, heap, c->t, c->sample, &out->r, job_progress, (void *)progress);
    }
    out->hb = rp_bound(a, c->t, &out->bound, (char[160]){0}, 160);
    *progress = 1.0;
}

static void advise_row(size_t k, const void *result, bool crashed, void *context)
{
    advise_ctx_t *c = context;
    c->res[k] = *(const advise_result_t *)result;
    c->crashed[k] = crashed;
}

/* Adds the stream's results to the sums; a stream that no allocator with a heap can run (a call
 * that got memory when recorded gets none from any of them) is left out, and said why. */
static void advise_stream_done(advise_ctx_t *c)
{
    bool any = false, heaps = false;
    size_t fail = SIZE_MAX;
    for (size_t k = 0; k < c->na; k++) {
        if (c->allocs[k]->create != NULL) {
            heaps = true;
            any = any || (!c->crashed[k] && c->res[k].sz.found);
            if (!c->res[k].sz.found && c->res[k].fail_op < fail) {
                fail = c->res[k].fail_op;
            }
        }
    }
    if (heaps && !any) {
        const wl_op_t *op = fail < c->t->nops ? &c->t->ops[fail] : NULL;
        printf("note: %s stream %zu left out: no allocator here runs it", c->file, c->si);
        if (op != NULL) {
            printf(" (op %zu, %s of %u B, got memory when recorded and none here)", fail,
                   rp_kind_name[WL_OP_KIND(op) % RP_KINDS], op->size);
        }
        printf("\n");
        c->excluded++;
        return;
    }
    for (size_t k = 0; k < c->na; k++) {
        const advise_result_t *r = &c->res[k];
        advise_sum_t *s = &c->sum[k];
        const rt_allocator_t *a = c->allocs[k];
        if (c->crashed[k] || (a->create != NULL && !r->sz.found)) {
            s->ok = false; /* it cannot run this stream: out of every need */
            continue;
        }
        if (r->sz.found && r->sz.heap > s->heap) {
            s->heap = r->sz.heap;
        }
        if (r->hb && r->bound > s->bound) {
            s->bound = r->bound;
        }
        if (r->r.ic_ok) {
            s->ins_sum += r->r.all.mean * (double)r->r.all.n;
            s->calls += r->r.all.n;
            if (r->r.worst_count > s->worst) {
                s->worst = r->r.worst_count;
                snprintf(s->worst_where, sizeof s->worst_where, "%s stream %zu op %zu, %s of %u B", c->file, c->si,
                         r->r.worst_op, rp_kind_name[r->r.worst_kind % RP_KINDS], r->r.worst_size);
            }
        }
    }
}

/* Cortex-M4 code bytes per allocator from tools/footprint.sh's footprint_alloc.csv (columns
 * target,allocator,...,text,...). False when the file cannot be read. */
static bool advise_flash(const char *path, advise_ctx_t *c)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    char line[512];
    int text_col = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#') {
            continue;
        }
        char *save = NULL, *cols[16];
        int n = 0;
        for (char *tok = strtok_r(line, ",\n", &save); tok != NULL && n < 16; tok = strtok_r(NULL, ",\n", &save)) {
            cols[n++] = tok;
        }
        if (text_col < 0) {
            for (int i = 0; i < n; i++) {
                text_col = strcmp(cols[i], "text") == 0 ? i : text_col;
            }
            continue;
        }
        if (n <= text_col || strcmp(cols[0], "cortex-m4") != 0) {
            continue;
        }
        for (size_t k = 0; k < c->na; k++) {
            if (strcmp(c->allocs[k]->name, cols[1]) == 0) {
                c->sum[k].flash = (size_t)strtoull(cols[text_col], NULL, 10);
            }
        }
    }
    fclose(f);
    return text_col >= 0;
}

/* Whether the allocator's stated bound holds whatever the heap holds (not "unbounded", not a
 * walk over free blocks). */
static bool advise_bounded(const rt_allocator_t *a)
{
    return a->create != NULL && strstr(a->malloc_bound, "unbounded") == NULL &&
           strstr(a->malloc_bound, "free blocks") == NULL && strstr(a->free_bound, "unbounded") == NULL &&
           strstr(a->free_bound, "free blocks") == NULL;
}

typedef enum { NEED_BOUNDED, NEED_BOUNDED_MT, NEED_SMALLEST, NEED_FASTEST, NEED_FLASH, NEEDS } advise_need_t;

static const char *const need_name[NEEDS] = {"bounded worst case", "bounded, thread-safe", "smallest heap",
                                             "fastest (instructions)", "least flash / budget"};

/* Whether allocator k qualifies for need n, and its score (lower is better). */
static bool advise_score(const advise_ctx_t *c, size_t k, advise_need_t n, size_t flash_budget, double *score)
{
    const rt_allocator_t *a = c->allocs[k];
    const advise_sum_t *s = &c->sum[k];
    if (!s->ok || s->calls == 0u) {
        return false;
    }
    double mean = s->ins_sum / (double)s->calls;
    switch (n) {
    case NEED_BOUNDED: *score = (double)s->worst * 1e12 + (double)s->heap; return advise_bounded(a);
    case NEED_BOUNDED_MT:
        *score = (double)s->worst * 1e12 + (double)s->heap;
        return advise_bounded(a) && a->thread_safe;
    case NEED_SMALLEST: *score = (double)s->heap * 1e6 + (double)s->worst; return a->create != NULL && s->heap != 0u;
    case NEED_FASTEST: *score = mean; return true;
    case NEED_FLASH:
        /* no budget: the least code; within a budget: the bounded ones first, then the smallest heap */
        *score = flash_budget == 0u ? (double)s->flash * 1e12 + (double)s->heap
                                    : (advise_bounded(a) ? 0.0 : 1e30) + (double)s->heap * 1e6 + (double)s->flash;
        return a->create != NULL && s->flash != 0u && (flash_budget == 0u || s->flash <= flash_budget);
    case NEEDS: break;
    }
    return false;
}

static void advise_size(char *out, size_t len, double bytes)
{
    rp_format_size(out, len, bytes > 0.0 ? (uint64_t)bytes : 0u);
}

/* The heap to configure: heap needed + margin %, rounded up to 4 KiB. */
static size_t advise_heap(size_t needed, unsigned margin)
{
    uint64_t h = (uint64_t)needed + (uint64_t)needed * margin / 100u;
    return (size_t)((h + 4095u) & ~(uint64_t)4095u);
}

static void advise_why(const advise_ctx_t *c, size_t win, size_t k, advise_need_t n, char *out, size_t len)
{
    const advise_sum_t *w = &c->sum[win], *s = &c->sum[k];
    char a[32], b[32];
    switch (n) {
    case NEED_BOUNDED:
    case NEED_BOUNDED_MT:
        if (s->worst != w->worst) {
            snprintf(out, len, "worst call %u instructions against %u", s->worst, w->worst);
        } else {
            advise_size(a, sizeof a, (double)s->heap), advise_size(b, sizeof b, (double)w->heap);
            snprintf(out, len, "the same worst call, a larger heap: %s against %s", a, b);
        }
        return;
    case NEED_SMALLEST:
    case NEED_FLASH:
        if (n == NEED_FLASH && s->flash != w->flash) {
            snprintf(out, len, "%zu B of code against %zu B", s->flash, w->flash);
            return;
        }
        if (s->heap == w->heap) {
            snprintf(out, len, "the same heap, worst call %u instructions against %u", s->worst, w->worst);
            return;
        }
        advise_size(a, sizeof a, (double)s->heap), advise_size(b, sizeof b, (double)w->heap);
        if (strcmp(a, b) == 0) { /* the same to a tenth: bytes */
            snprintf(a, sizeof a, "%zu B", s->heap), snprintf(b, sizeof b, "%zu B", w->heap);
        }
        snprintf(out, len, "needs %s against %s", a, b);
        return;
    case NEED_FASTEST:
        snprintf(out, len, "%.1f instructions a call against %.1f", s->ins_sum / (double)s->calls,
                 w->ins_sum / (double)w->calls);
        return;
    case NEEDS: break;
    }
    out[0] = '\0';
}

static void advise_print(const advise_ctx_t *c, unsigned margin, size_t flash_budget, bool have_flash)
{
    printf("\n%-22s %-9s %-34s %-12s %s\n", "need", "use", "heap to configure", "worst call",
           "runner-up, and why it lost");
    for (int n = 0; n < NEEDS; n++) {
        size_t best = SIZE_MAX, second = SIZE_MAX;
        double bs = 0.0, ss = 0.0;
        for (size_t k = 0; k < c->na; k++) {
            double sc;
            if (!advise_score(c, k, (advise_need_t)n, flash_budget, &sc)) {
                continue;
            }
            if (best == SIZE_MAX || sc < bs) {
                second = best, ss = bs;
                best = k, bs = sc;
            } else if (second == SIZE_MAX || sc < ss) {
                second = k, ss = sc;
            }
        }
        if (best == SIZE_MAX) {
            printf("%-22s %s\n", need_name[n],
                   n == NEED_FLASH && !have_flash ? "no flash figures: run tools/footprint.sh (footprint_alloc.csv), "
                                                    "or give --footprint FILE"
                   : n == NEED_FLASH              ? "none fits the flash budget"
                                                  : "none of the allocators measured qualifies");
            continue;
        }
        const advise_sum_t *s = &c->sum[best];
        char heap[128] = "its own (a system allocator)", need[32], why[256] = "-", worst[24];
        if (c->allocs[best]->create != NULL) {
            advise_size(need, sizeof need, (double)s->heap);
            char cfg[32];
            advise_size(cfg, sizeof cfg, (double)advise_heap(s->heap, margin));
            snprintf(heap, sizeof heap, "%s (needed %s + %u %%)", cfg, need, margin);
        }
        snprintf(worst, sizeof worst, "%u ins", s->worst);
        if (second != SIZE_MAX) {
            char w[160];
            advise_why(c, best, second, (advise_need_t)n, w, sizeof w);
            snprintf(why, sizeof why, "%s: %s", c->allocs[second]->name, w);
        }
        printf("%-22s %-9s %-34s %-12s %s\n", need_name[n], c->allocs[best]->name, heap, worst, why);
        if (n == NEED_FLASH) {
            printf("%-22s   flash: %zu B of Cortex-M4 code (tools/footprint.sh, objects at -O2)%s\n", "", s->flash,
                   flash_budget != 0u ? "; within --flash: bounded ones first, then the smallest heap"
                                      : "; no budget given (--flash BYTES): the least code");
        }
        if (s->bound > 0.0) {
            char b[32];
            advise_size(b, sizeof b, s->bound);
            printf("%-22s   guaranteed: %s suffices for any program with this live peak and these block sizes "
                   "(Knuth's buddy bound)\n",
                   "", b);
        } else if (c->allocs[best]->create != NULL && n != NEED_FASTEST) {
            printf("%-22s   no proven bound for other orders of the same calls: the margin covers runs like "
                   "those recorded\n",
                   "");
        }
    }
}

static void advise_usage(FILE *out)
{
    fprintf(out, "usage: rtbench trace advise FILE... [--alloc LIST] [--margin PCT] [--flash BYTES] [--footprint CSV]\n"
                 "                            [--sample N] [--jobs N] [--max-memory SIZE]\n"
                 "  which allocator to use for the program(s) recorded in FILE (one or several traces: the heap\n"
                 "  must run every stream of every file), for each need: bounded worst case; bounded and\n"
                 "  thread-safe; smallest heap; fastest (exact instructions, not time); a flash budget. Each\n"
                 "  answer gives the heap to configure (the smallest that runs every stream, found by bisection\n"
                 "  to 0.5 %%, plus --margin, default 20 %%), the guaranteed bound where one is proven, the worst\n"
                 "  call counted (--sample calls per stream, default 1000) and the runner-up with why it lost.\n"
                 "  --flash BYTES: the most code the firmware can give the allocator (Cortex-M4 text of\n"
                 "  --footprint CSV, default results/latest/footprint_alloc.csv of tools/footprint.sh)\n");
}

int trace_advise(int argc, char **argv)
{
    const char *files[32];
    size_t nfiles = 0, sample = 1000;
    const char *names = NULL, *footprint = RTBENCH_SOURCE_DIR "/results/latest/footprint_alloc.csv";
    unsigned margin = 20, jobs = 0;
    uint64_t flash = 0, max_memory = tr_default_max_memory();
    for (int i = 0; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            advise_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--alloc") == 0 && v != NULL) {
            names = v, i++;
        } else if (strcmp(argv[i], "--margin") == 0 && v != NULL && v[0] >= '0' && v[0] <= '9') {
            margin = (unsigned)atoi(v), i++;
        } else if (strcmp(argv[i], "--flash") == 0 && v != NULL && rp_parse_size(v, &flash)) {
            i++;
        } else if (strcmp(argv[i], "--footprint") == 0 && v != NULL) {
            footprint = v, i++;
        } else if (strcmp(argv[i], "--sample") == 0 && v != NULL && v[0] >= '0' && v[0] <= '9') {
            sample = (size_t)strtoull(v, NULL, 10), i++;
        } else if (strcmp(argv[i], "--jobs") == 0 && v != NULL && atoi(v) > 0) {
            jobs = (unsigned)atoi(v), i++;
        } else if (strcmp(argv[i], "--max-memory") == 0 && v != NULL && rp_parse_size(v, &max_memory)) {
            i++;
        } else if (argv[i][0] != '-' && nfiles < sizeof files / sizeof files[0]) {
            files[nfiles++] = argv[i];
        } else {
            fprintf(stderr, "rtbench trace advise: bad argument '%s' (rtbench trace advise --help)\n", argv[i]);
            return 2;
        }
    }
    if (nfiles == 0) {
        advise_usage(stderr);
        return 2;
    }
    static advise_ctx_t c;
    memset(&c, 0, sizeof c);
    c.na = pick_allocators(names, false, c.allocs, BENCH_MAX_SELECTED);
    if (c.na == 0) {
        return 2;
    }
    for (size_t k = 0; k < c.na; k++) {
        c.sum[k].ok = true;
    }
    bool have_flash = advise_flash(footprint, &c);
    /* the sample is the program's: `sample` calls over all streams of all files, each stream's
     * share in proportion to its calls (at least one), so a program of many small processes costs
     * what one of their size would */
    size_t total = 0;
    for (size_t fi = 0; fi < nfiles; fi++) {
        tr_file_t f;
        char err[512];
        if (!tr_load_max(files[fi], max_memory, &f, err, sizeof err)) {
            fprintf(stderr, "rtbench trace advise: %s\n", err);
            return 1;
        }
        for (size_t si = 0; si < f.nstreams; si++) {
            total += f.streams[si].trace.nmalloc != 0u ? f.streams[si].trace.nops : 0u;
        }
        tr_release(&f);
    }
    size_t streams = 0, ops = 0;
    uint64_t peak = 0;
    for (size_t fi = 0; fi < nfiles && !drv_stop; fi++) {
        tr_file_t f;
        char err[512];
        if (!tr_load_max(files[fi], max_memory, &f, err, sizeof err)) {
            fprintf(stderr, "rtbench trace advise: %s\n", err);
            return 1;
        }
        c.file = files[fi];
        tr_zero_as_one(&f);
        for (size_t si = 0; si < f.nstreams && !drv_stop; si++) {
            const wl_trace_t *t = &f.streams[si].trace;
            if (t->nmalloc == 0u) {
                continue;
            }
            rp_need_t need;
            rp_need(t, true, &need);
            if (need.size > max_memory) {
                fprintf(stderr, "rtbench trace advise: %s stream %zu would need more than --max-memory; refused\n",
                        files[fi], si);
                tr_release(&f);
                return 1;
            }
            c.t = t, c.si = si, c.heap = rp_replay_heap(t);
            if (sample == 0u) {
                c.sample = 0; /* every call */
            } else {
                double share = (double)sample * (double)t->nops / (double)(total != 0u ? total : 1u);
                c.sample = share < 1.0 ? 1u : (size_t)(share + 0.5);
            }
            uint64_t p = rp_peak_live(t);
            peak = p > peak ? p : peak;
            streams++, ops += t->nops;
            char what[96];
            snprintf(what, sizeof what, "advise %s stream %zu", files[fi], si);
            memset(c.res, 0, sizeof c.res);
            memset(c.crashed, 0, sizeof c.crashed);
            if (rp_run_jobs(c.na, sizeof(advise_result_t), rp_workers(need.size, max_memory, jobs), advise_job,
                            advise_row, &c, what)) {
                advise_stream_done(&c);
            }
        }
        tr_release(&f);
    }
    if (drv_stop) {
        return 130;
    }
    if (streams == 0) {
        fprintf(stderr, "rtbench trace advise: no allocation in %s: nothing to advise on\n",
                nfiles == 1 ? files[0] : "these traces");
        return 1;
    }
    char pk[32];
    rp_format_size(pk, sizeof pk, peak);
    if (c.excluded == streams) {
        fprintf(stderr,
                "rtbench trace advise: no allocator here runs any stream of %s (the notes above say which "
                "call fails)\n",
                nfiles == 1 ? files[0] : "these traces");
        return 1;
    }
    printf("advice from %zu trace%s, %zu stream%s (%zu left out, see the notes), %zu calls, largest live peak %s; "
           "instructions: about %zu calls "
           "counted per allocator, spread over the streams by their calls, the same calls for each (exact, "
           "ptrace); heap: the smallest that runs every stream, by bisection to 0.5 %%\n",
           nfiles, nfiles == 1 ? "" : "s", streams, streams == 1 ? "" : "s", c.excluded, ops, pk, sample);
    advise_print(&c, margin, (size_t)flash, have_flash);
    return 0;
}
