/*
 * bench/trace/replay.c -- `rtbench trace replay` and `rtbench trace size` (trace.h), over the
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "driver.h"
#include "frag.h"
#include "glibcmem.h"
#include "inscount.h"
#include "metrics.h"
#include "peers.h"

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

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return a != 0u && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

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
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    case 't':
    case 'T':
        shift = 40;
        break;
    default:
        return false;
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

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1u) / a * a;
}

void rp_size(const rt_allocator_t *a, void *buffer, const wl_trace_t *t, const rp_size_opts_t *opts,
             rp_size_t *out)
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
        if (rp_fits(a, buffer, s, t, NULL)) {
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
        if (rp_fits(a, buffer, mid, t, NULL)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    out->heap = hi;
    out->below = lo;
    out->resolution = hi - lo;
    out->replays++;
    out->verified = rp_fits(a, buffer, hi, t, NULL);
    size_t step = hi / 100u > out->resolution ? hi / 100u : out->resolution;
    step = step != 0u ? step : 1u;
    for (unsigned k = 1; k <= opts->checks && !drv_stop; k++) {
        size_t above = hi + k * step;
        if (above > opts->cap) {
            break;
        }
        out->replays++;
        if (!rp_fits(a, buffer, above, t, NULL)) {
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

void rp_count(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, size_t stride,
              uint64_t step_budget, rp_replay_t *r)
{
    r->ic_ok = false;
    if (!ic_supported()) {
        return;
    }
    ic_plan_t plan = {.stride = stride != 0 ? stride : 1u, .step_budget = step_budget, .max_samples = 0};
    ic_result_t res;
    if (!ic_count_trace(a, buffer, size, t, &plan, &res, NULL, NULL)) {
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
    r->ic_stride = res.final_stride;
    r->ic_ok = res.n > 0;
    free(all), free(per);
    ic_result_free(&res);
}

void rp_frag(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, rp_replay_t *r)
{
    r->f_known = false;
    r->f_approx = false;
    r->flagged = 0;
    for (size_t i = 0; i < t->nops; i++) {
        r->flagged += (t->ops[i].kind & WL_OP_FAILED) != 0u;
    }
    /* System peers: no watermark of their own, and the bytes they report in use, sampled, gave
     * figures below the live peak (jemalloc's thread cache, glibc's sampling): not measured. */
    if (a->stats == NULL || a->create == NULL) {
        return;
    }
    drv_instance_t in;
    if (!drv_open(&in, a, buffer, size, t->slots, false)) {
        return;
    }
    for (size_t i = 0; i < t->nops; i++) {
        if ((i & 0xFFFFu) == 0 && drv_stop) {
            r->interrupted = true;
            break;
        }
        drv_apply(&in, &t->ops[i], i);
    }
    rt_stats_t s;
    memset(&s, 0, sizeof s);
    a->stats(in.handle, &s);
    drv_close(&in);
    r->peak_memory = s.watermark;
    r->f = fr_factor(s.watermark, rp_peak_live(t));
    r->f_known = !r->interrupted;
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
    size_t stride;
    uint64_t budget;
    unsigned reps;
    uint64_t max_memory;  /* --max-memory, or the default (tr_default_max_memory) */
    bool max_memory_set;
} rp_cli_t;

static void cli_usage(FILE *out, const char *what)
{
    bool replay = strcmp(what, "replay") == 0;
    char def[32];
    rp_format_size(def, sizeof def, tr_default_max_memory());
    fprintf(out,
            "usage: rtbench trace %s FILE [--alloc LIST] [--csv DIR] [--max-memory SIZE]%s\n"
            "  --max-memory SIZE  refuse, before mapping anything, a trace whose %s may take more\n"
            "                     memory than SIZE: bytes, or with K, M, G or T (powers of 1024);\n"
            "                     default half of physical memory (here %s). A stream takes\n"
            "%s"
            "                     heap = max(64 MiB, 8 x the stream's live peak) (doc/traces.md)\n",
            what, replay ? " [--stride N] [--budget STEPS] [--reps N]" : "", replay ? "replay" : "sizing", def,
            replay ? "                     2 x heap, plus live peak + largest request when a system\n"
                     "                     peer (glibc, jemalloc, mimalloc) replays it;\n"
                   : "                     4 x heap + live peak + largest request;\n");
}

static int parse_cli(int argc, char **argv, rp_cli_t *cli, const char *what)
{
    memset(cli, 0, sizeof *cli);
    cli->stride = 100;
    cli->budget = 2000000u;
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
        } else if (strcmp(argv[i], "--stride") == 0 && val != NULL && atol(val) > 0) {
            cli->stride = (size_t)atol(val), i++;
        } else if (strcmp(argv[i], "--budget") == 0 && val != NULL) {
            cli->budget = strtoull(val, NULL, 10), i++;
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
 * left out: it has no memory to measure). `size` keeps only those with create. */
static size_t pick_allocators(const char *names, bool need_create, const rt_allocator_t **out, size_t cap)
{
    size_t n = 0, k = 0;
    const rt_allocator_t *const *all = bench_allocators(&n);
    if (names == NULL) {
        for (size_t i = 0; i < n && k < cap; i++) {
            if (strcmp(all[i]->name, "noop") != 0 && (!need_create || all[i]->create != NULL)) {
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
    const char *what;       /* "replay" or "size", as on the command line */
    bool need_create;       /* only allocators with a heap of their own (size) */
    const char *csv_name;
    const char *csv_head;   /* the CSV header up to the per-kind columns, or all of it */
    const char *csv_tail;   /* the header after the per-kind columns; NULL: no such columns */
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

/* Instructions and F of allocator k on one stream (F on the smallest heap that fits, when sized). */
static void replay_measure(const rp_session_t *s, size_t si, size_t k, void *buf, size_t heap, rp_replay_t *r)
{
    const rt_allocator_t *a = s->allocs[k];
    const wl_trace_t *t = &s->f.streams[si].trace;
    memset(r, 0, sizeof *r);
    rp_progress_ctx_t pc = {"trace", "", "count"};
    snprintf(pc.who, sizeof pc.who, "stream %zu %s", si, a->name);
    rp_progress_cb(&pc, 0.0);
    rp_count(a, buf, heap, t, s->cli.stride, s->cli.budget, r);
    size_t fheap = heap;
    if (a->create != NULL) {
        rp_size_opts_t so = {16384u, 0.01, heap, 0};
        rp_size_t sz;
        rp_size(a, buf, t, &so, &sz);
        fheap = sz.found ? sz.heap : heap;
    }
    rp_frag(a, buf, fheap, t, r);
    bench_progress_clear();
}

/* One row of the replay table on stdout. */
static void replay_print_row(const char *name, const rp_replay_t *r, double ns)
{
    char im[24], ip[24], ix[24], nsv[24], fv[24];
    fmt_or_dash(im, sizeof im, r->ic_ok, "%.1f", r->all.mean);
    fmt_or_dash(ip, sizeof ip, r->ic_ok, "%.0f", r->all.p99);
    fmt_or_dash(ix, sizeof ix, r->ic_ok, "%.0f", r->all.max);
    fmt_or_dash(nsv, sizeof nsv, ns > 0.0, "%.1f", ns);
    fmt_or_dash(fv, sizeof fv, r->f_known, "%.1f", r->f);
    printf("%-10s %6zu %8s %8s %8s %8s %7s", name, r->failures, im, ip, ix, nsv, fv);
    if (r->ic_ok) {
        printf(" op %zu %s %u: %u", r->worst_op, rp_kind_name[r->worst_kind % RP_KINDS], r->worst_size,
               r->worst_count);
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

/* Stream si against every allocator: timed all together, then counted and measured one by one.
 * False when its buffer cannot be mapped (the command stops there). */
static bool replay_stream(const rp_session_t *s, size_t si)
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
    double glibc_ns = glibc_ns_of(s->allocs, s->na, ns);
    printf("%-10s %6s %8s %8s %8s %8s %7s %s\n", "allocator", "fail", "ins mean", "p99", "max", "ns/call", "F %",
           "worst call (op kind size: instructions)");
    for (size_t k = 0; k < s->na && !drv_stop; k++) {
        rp_replay_t r;
        replay_measure(s, si, k, buf, heap, &r);
        r.failures = fails[k];
        replay_print_row(s->allocs[k]->name, &r, ns[k]);
        if (s->csv != NULL) {
            replay_csv_row(s->csv, si, s->allocs[k]->name, t->nops, &r, ns[k], glibc_ns);
        }
    }
    munmap(buf, heap);
    return true;
}

int trace_replay(int argc, char **argv)
{
    rp_session_t s;
    int rc = session_open(&s, argc, argv, &replay_command);
    if (rc >= 0) {
        return rc;
    }
    printf("instructions: every %zu-th op within %llu single steps per allocator (the stride widens to stay "
           "in budget); ns/call: median of %u untimed replays, allocators interleaved; the machine may be loaded\n",
           s.cli.stride, (unsigned long long)s.cli.budget, s.cli.reps);
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

/* Sizes allocator a on stream si of trace t (live peak `peak`) and works out its bound. */
static void size_measure(const rt_allocator_t *a, size_t si, void *buf, const wl_trace_t *t, uint64_t peak,
                         const rp_size_opts_t *opts, size_row_t *row)
{
    rp_progress_ctx_t pc = {"trace", "", "size"};
    snprintf(pc.who, sizeof pc.who, "stream %zu %s", si, a->name);
    rp_progress_cb(&pc, 0.0);
    rp_size(a, buf, t, opts, &row->s);
    bench_progress_clear();
    row->bound = 0.0;
    row->hb = rp_bound(a, t, &row->bound, row->formula, sizeof row->formula);
    row->ratio = row->s.found && peak != 0u ? (double)row->s.heap / (double)peak : 0.0;
}

/* One row of the size table on stdout. */
static void size_print_row(const char *name, const size_row_t *row)
{
    const rp_size_t *s = &row->s;
    char hv[32], bv[32];
    fmt_or_dash(hv, sizeof hv, s->found, "%.0f", (double)s->heap);
    fmt_or_dash(bv, sizeof bv, row->hb, "%.0f", row->bound);
    printf("%-10s %12s %7.3f %10s %s%s%s", name, hv, row->ratio, bv, row->hb ? row->formula : "no bound",
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

/* Stream si against every allocator, its largest heaps kept in max. False when its buffer cannot
 * be mapped (the command stops there). */
static bool size_stream(const rp_session_t *s, size_t si, rp_size_opts_t *opts, size_max_t *max)
{
    const wl_trace_t *t = &s->f.streams[si].trace;
    uint64_t peak = rp_peak_live(t);
    opts->cap = rp_replay_heap(t) * 4u;
    void *buf = map_buffer(opts->cap);
    if (buf == NULL) {
        fprintf(stderr, "rtbench trace size: cannot map %zu MiB\n", opts->cap >> 20);
        return false;
    }
    printf("\nstream %zu: %zu ops, live peak %llu bytes\n", si, t->nops, (unsigned long long)peak);
    gm_result_t g;
    if (gm_replay(&bench_glibc, t, NULL, true, &g) && peak != 0u) {
        printf("glibc footprint %llu bytes, %.3f x the live peak (peak of mallinfo2 arena + hblkhd, a process of "
               "its own, %s arena)\n",
               (unsigned long long)g.footprint, (double)g.footprint / (double)peak, g.fresh ? "new" : "REUSED");
    }
    printf("%-10s %12s %7s %10s %s\n", "allocator", "heap needed", "ratio", "bound", "notes");
    for (size_t k = 0; k < s->na && !drv_stop; k++) {
        size_row_t row;
        size_measure(s->allocs[k], si, buf, t, peak, opts, &row);
        if (row.s.found && row.s.heap > max->heap[k]) {
            max->heap[k] = row.s.heap, max->ratio[k] = row.ratio, max->stream[k] = si;
        }
        size_print_row(s->allocs[k]->name, &row);
        if (s->csv != NULL) {
            size_csv_row(s->csv, si, s->allocs[k]->name, peak, &row);
        }
    }
    munmap(buf, opts->cap);
    return true;
}

int trace_size(int argc, char **argv)
{
    rp_session_t s;
    int rc = session_open(&s, argc, argv, &size_command);
    if (rc >= 0) {
        return rc;
    }
    rp_size_opts_t opts = {4096u, 0.005, 0, 3};
    printf("heap needed: the smallest size passed to create on which every call that got memory in the recording "
           "gets it again; bisection to max(4 KiB, 0.5 %%), verified by one more replay, 3 sizes above checked\n");
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
