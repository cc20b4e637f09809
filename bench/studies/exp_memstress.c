/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_memstress.c -- experiment "memstress": the VaiOS blog's mem_stress (sections 7-9).
 *
 * A bounded live set of at most 48 blocks churned for 1,200 operations by a deterministic PRNG
 * (xorshift64*, the run's seed, the same trace for every backend): each operation allocates when
 * the live set is empty or (when not full) with probability 52 %, else frees a live block chosen
 * at random. Sizes are mostly small (70 %: 8..64 bytes), some medium (25 %: 65..256), a few large
 * (5 %: 257..1024). Each allocator runs on a 32 KiB heap, like a microcontroller's.
 *
 * Every operation becomes one row in the blog's format,
 *     @MS,<seq>,<A|F|O>,<size>,<cycles>,<probes>,<live>,<bytes_in_use>
 * (O: out of memory) -- cycles are the per-op minimum of two identical timed runs on fresh
 * instances, probes those of the malloc (0 for a free), live the blocks live after the op and
 * bytes_in_use the allocator's used_bytes (header and rounding included) after the op, or the
 * requested bytes live for an allocator without statistics. The counts of A/F/O are printed per
 * allocator: the op sequence is identical for all, so they differ only where one runs out.
 *
 * Outputs: the table on stdout (median / p99 / worst probes and cycles of malloc, beside the
 * blog's), memstress.ms (all @MS rows, one "# allocator NAME" line before each allocator's),
 * memstress.csv (the summary) and memstress_bins.csv (mean cycles of malloc binned by probes).
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "driver.h"
#include "metrics.h"
#include "workload.h"

enum { MS_OPS = WL_MEMSTRESS_OPS, MS_SLOTS = WL_MEMSTRESS_SLOTS, MS_HEAP = 32 * 1024, MS_MAX_BIN = 16 };

/* The blog's figures (section 8: probes; section 9: DWT cycles on a Cortex-M4 board). */
static const struct {
    const char *name;
    unsigned probes[3]; /* median, p99, worst */
    unsigned cycles[2]; /* median, p99 */
} blog[] = {{"seglist", {1, 6, 8}, {415, 490}}, {"tlsf", {1, 2, 2}, {422, 468}}};

/* The study's skeleton (bench/README.md, "Layout"): study_setup (trace, buffers, CSVs, table
 * head), then per allocator study_measure (two timed runs, an untimed pass for the bytes in use),
 * study_summarize (its row) and study_write (its @MS rows, CSV row and bins). */
typedef struct ms_state {
    wl_trace_t t;
    uint32_t *c0, *c1, *prb, *sorted, *mc, *mp;
    size_t *bytes;
    char kinds[MS_OPS];
    uint32_t lives[MS_OPS];
    FILE *csv, *ms, *bins;
    char path[1200], mspath[1200], binpath[1200];
} ms_state_t;

/* One allocator's figures. */
typedef struct ms_result {
    uint32_t na, nf, no;
    bool has_probes;
    double sum[MS_MAX_BIN + 1]; /* cycles of the mallocs binned by probes */
    size_t cnt[MS_MAX_BIN + 1];
    mt_summary_t sc, sp; /* malloc cycles, probes */
} ms_result_t;

static void study_free(ms_state_t *st)
{
    free(st->c0), free(st->c1), free(st->prb), free(st->sorted), free(st->mc), free(st->mp), free(st->bytes);
    wl_release(&st->t);
}

static bool study_setup(bench_ctx_t *ctx, ms_state_t *st)
{
    memset(st, 0, sizeof *st);
    if (!wl_memstress(&st->t, ctx->seed)) {
        return false;
    }
    st->c0 = malloc(MS_OPS * sizeof *st->c0), st->c1 = malloc(MS_OPS * sizeof *st->c1);
    st->prb = malloc(MS_OPS * sizeof *st->prb), st->sorted = malloc(MS_OPS * sizeof *st->sorted);
    st->mc = malloc(MS_OPS * sizeof *st->mc), st->mp = malloc(MS_OPS * sizeof *st->mp);
    st->bytes = malloc(MS_OPS * sizeof *st->bytes);
    if (!st->c0 || !st->c1 || !st->prb || !st->sorted || !st->mc || !st->mp || !st->bytes) {
        return false;
    }
    const wl_trace_t *t = &st->t;
    printf("\n== memstress -- the VaiOS blog's mem_stress (sections 7-9) ==\n");
    printf("%s; seed %llu; a %u KiB heap per allocator; %s: per-op minimum of 2 identical runs.\n", t->params,
           (unsigned long long)t->seed, MS_HEAP / 1024u, ctx->clock.unit);
    printf("Trace: %zu mallocs, %zu frees (the same for every backend; A/F/O below count what happened).\n", t->nmalloc,
           t->nfree);
    st->csv = bench_csv_open(ctx, "memstress.csv", false, st->path, sizeof st->path);
    st->ms = bench_csv_open(ctx, "memstress.ms", false, st->mspath, sizeof st->mspath);
    st->bins = bench_csv_open(ctx, "memstress_bins.csv", false, st->binpath, sizeof st->binpath);
    if (st->csv != NULL) {
        fprintf(st->csv, "allocator,allocs,frees,oom,probes_median,probes_p99,probes_max,cycles_median,cycles_p99,"
                         "cycles_max,blog_probes_median,blog_probes_p99,blog_probes_max,blog_cycles_median,"
                         "blog_cycles_p99\n");
    }
    if (st->bins != NULL) {
        fprintf(st->bins, "allocator,probes,mallocs,cycles_mean\n");
    }
    printf("%-10s %5s %5s %3s  %-19s  %-22s  %s\n", "", "", "", "", "malloc probes", "malloc cycles", "blog");
    printf("%-10s %5s %5s %3s  %5s %5s %7s  %6s %6s %8s  %s\n", "allocator", "A", "F", "O", "med", "p99", "worst",
           "med", "p99", "worst", "probes med/p99/worst, DWT cycles med/p99");
    printf("---------- ----- ----- ---  ----- ----- -------  ------ ------ --------  ----------------------------\n");
    return true;
}

/* An untimed pass that reads the allocator's own bytes in use after every op (the requested
 * bytes live for an allocator without statistics), and counts A / F / O. */
static void replay_bytes(ms_state_t *st, drv_instance_t *in, ms_result_t *res)
{
    const rt_allocator_t *a = in->a;
    const wl_trace_t *t = &st->t;
    size_t requested = 0;
    uint32_t live = 0;
    for (size_t i = 0; i < MS_OPS; i++) {
        const wl_op_t *op = &t->ops[i];
        void *old = in->slots[op->slot];
        bool got = drv_apply(in, op, i);
        if (op->kind == WL_MALLOC) {
            if (got) {
                st->kinds[i] = 'A', res->na++, live++, requested += op->size;
            } else {
                st->kinds[i] = 'O', res->no++;
            }
        } else {
            st->kinds[i] = 'F', res->nf++;
            if (old != NULL) {
                live--;
                /* the size freed is the one its malloc requested: find it backwards */
                for (size_t j = i; j-- > 0;) {
                    if (t->ops[j].slot == op->slot && t->ops[j].kind == WL_MALLOC) {
                        requested -= t->ops[j].size;
                        break;
                    }
                }
            }
        }
        st->lives[i] = live;
        if (a->stats != NULL && a->create != NULL) {
            rt_stats_t s;
            a->stats(in->handle, &s);
            st->bytes[i] = s.used_bytes;
        } else {
            st->bytes[i] = requested;
        }
    }
}

/* Cycles: the per-op minimum of the two runs; probes: those of a malloc, 0 otherwise. */
static uint32_t op_cycles(const ms_state_t *st, size_t i) { return st->c0[i] < st->c1[i] ? st->c0[i] : st->c1[i]; }

static uint32_t op_probes(const ms_state_t *st, const ms_result_t *res, size_t i)
{
    return st->t.ops[i].kind == WL_MALLOC && res->has_probes && st->prb[i] != DRV_NO_PROBES ? st->prb[i] : 0u;
}

/* 0, -1 when the allocator cannot be created, 130 when interrupted, 1 on failure. */
static int study_measure(bench_ctx_t *ctx, ms_state_t *st, const rt_allocator_t *a, ms_result_t *res)
{
    memset(res, 0, sizeof *res);
    drv_instance_t in;
    size_t heap = a->create != NULL ? MS_HEAP : ctx->arena_size;
    if (!drv_open(&in, a, ctx->arena, heap, MS_SLOTS, true)) {
        printf("%-10s could not be created over %u KiB\n", a->name, MS_HEAP / 1024u);
        return -1;
    }
    bench_progress("memstress", a->name, "2 timed runs", 0.0);
    drv_outcome_t o0 = drv_replay_timed(&in, &st->t, st->c0, st->prb, NULL, NULL);
    bool ok = !o0.interrupted && drv_reset(&in);
    drv_outcome_t o1 = ok ? drv_replay_timed(&in, &st->t, st->c1, NULL, NULL, NULL) : o0;
    ok = ok && !o1.interrupted && drv_reset(&in);
    if (ok) {
        replay_bytes(st, &in, res);
    }
    drv_close(&in);
    bench_progress_clear();
    if (!ok) {
        return drv_stop ? 130 : 1;
    }
    res->has_probes = a->last_probes != NULL;
    size_t nm = 0;
    for (size_t i = 0; i < MS_OPS; i++) {
        if (st->kinds[i] == 'A') {
            uint32_t cyc = op_cycles(st, i), p = op_probes(st, res, i);
            st->mc[nm] = cyc;
            st->mp[nm] = p;
            nm++;
            unsigned b = p < MS_MAX_BIN ? p : MS_MAX_BIN;
            res->sum[b] += cyc;
            res->cnt[b]++;
        }
    }
    mt_summarize_u32(st->mc, nm, &res->sc, st->sorted);
    mt_summarize_u32(st->mp, nm, &res->sp, st->sorted);
    return 0;
}

static void study_summarize(const rt_allocator_t *a, const ms_result_t *r)
{
    char blogtxt[64] = "";
    for (size_t b = 0; b < sizeof blog / sizeof blog[0]; b++) {
        if (strcmp(blog[b].name, a->name) == 0) {
            snprintf(blogtxt, sizeof blogtxt, "%u/%u/%u, %u/%u", blog[b].probes[0], blog[b].probes[1],
                     blog[b].probes[2], blog[b].cycles[0], blog[b].cycles[1]);
        }
    }
    if (r->has_probes) {
        printf("%-10s %5u %5u %3u  %5llu %5llu %7llu  %6llu %6llu %8llu  %s\n", a->name, r->na, r->nf, r->no,
               (unsigned long long)r->sp.median, (unsigned long long)r->sp.p99, (unsigned long long)r->sp.max,
               (unsigned long long)r->sc.median, (unsigned long long)r->sc.p99, (unsigned long long)r->sc.max, blogtxt);
    } else {
        printf("%-10s %5u %5u %3u  %5s %5s %7s  %6llu %6llu %8llu  %s\n", a->name, r->na, r->nf, r->no, "n/a", "n/a",
               "n/a", (unsigned long long)r->sc.median, (unsigned long long)r->sc.p99, (unsigned long long)r->sc.max,
               blogtxt);
    }
}

static void write_csv_row(FILE *csv, const rt_allocator_t *a, const ms_result_t *r)
{
    fprintf(csv, "%s,%u,%u,%u,", a->name, r->na, r->nf, r->no);
    if (r->has_probes) {
        fprintf(csv, "%llu,%llu,%llu,", (unsigned long long)r->sp.median, (unsigned long long)r->sp.p99,
                (unsigned long long)r->sp.max);
    } else {
        fprintf(csv, ",,,");
    }
    fprintf(csv, "%llu,%llu,%llu,", (unsigned long long)r->sc.median, (unsigned long long)r->sc.p99,
            (unsigned long long)r->sc.max);
    bool found = false;
    for (size_t b = 0; b < sizeof blog / sizeof blog[0]; b++) {
        if (strcmp(blog[b].name, a->name) == 0) {
            fprintf(csv, "%u,%u,%u,%u,%u\n", blog[b].probes[0], blog[b].probes[1], blog[b].probes[2], blog[b].cycles[0],
                    blog[b].cycles[1]);
            found = true;
        }
    }
    if (!found) {
        fprintf(csv, ",,,,\n");
    }
}

static void study_write(ms_state_t *st, const rt_allocator_t *a, const ms_result_t *r)
{
    if (st->ms != NULL) {
        fprintf(st->ms, "# allocator %s\n", a->name);
        for (size_t i = 0; i < MS_OPS; i++) {
            const wl_op_t *op = &st->t.ops[i];
            uint32_t cyc = op_cycles(st, i);
            fprintf(st->ms, "@MS,%zu,%c,%u,%u,%u,%u,%zu\n", i, st->kinds[i], op->kind == WL_MALLOC ? op->size : 0u,
                    cyc == DRV_NOT_MEASURED ? 0u : cyc, op_probes(st, r, i), st->lives[i], st->bytes[i]);
        }
    }
    if (st->csv != NULL) {
        write_csv_row(st->csv, a, r);
    }
    if (st->bins != NULL && r->has_probes) {
        for (unsigned b = 0; b <= MS_MAX_BIN; b++) {
            if (r->cnt[b] != 0u) {
                fprintf(st->bins, "%s,%u,%zu,%.1f\n", a->name, b, r->cnt[b], r->sum[b] / (double)r->cnt[b]);
            }
        }
    }
}

int exp_memstress(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    static ms_state_t st;
    if (!study_setup(ctx, &st)) {
        study_free(&st);
        return 1;
    }
    int rc = 0;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop && rc == 0; k++) {
        ms_result_t r;
        int m = study_measure(ctx, &st, ctx->allocs[k], &r);
        if (m == 0) {
            study_summarize(ctx->allocs[k], &r);
            study_write(&st, ctx->allocs[k], &r);
        } else if (m > 0) {
            rc = m;
        }
    }
    printf("(blog: 617 A, 583 F, 0 O on its own trace; its cycles are DWT cycles on a Cortex-M4 board, ours\n"
           " are this host's %s -- compare shapes, not values. The cycles column of memstress.ms holds the same.)\n",
           ctx->clock.unit);
    bench_csv_close(st.csv, st.path);
    bench_csv_close(st.ms, st.mspath);
    bench_csv_close(st.bins, st.binpath);
    study_free(&st);
    return rc;
}
