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

int exp_memstress(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    wl_trace_t t;
    if (!wl_memstress(&t, ctx->seed)) {
        return 1;
    }
    uint32_t *c0 = malloc(MS_OPS * sizeof *c0), *c1 = malloc(MS_OPS * sizeof *c1);
    uint32_t *prb = malloc(MS_OPS * sizeof *prb), *sorted = malloc(MS_OPS * sizeof *sorted);
    uint32_t *mc = malloc(MS_OPS * sizeof *mc), *mp = malloc(MS_OPS * sizeof *mp);
    size_t *bytes = malloc(MS_OPS * sizeof *bytes);
    if (!c0 || !c1 || !prb || !sorted || !mc || !mp || !bytes) {
        free(c0), free(c1), free(prb), free(sorted), free(mc), free(mp), free(bytes);
        wl_release(&t);
        return 1;
    }
    printf("\n== memstress -- the VaiOS blog's mem_stress (sections 7-9) ==\n");
    printf("%s; seed %llu; a %u KiB heap per allocator; %s: per-op minimum of 2 identical runs.\n", t.params,
           (unsigned long long)t.seed, MS_HEAP / 1024u, ctx->clock.unit);
    printf("Trace: %zu mallocs, %zu frees (the same for every backend; A/F/O below count what happened).\n",
           t.nmalloc, t.nfree);
    char path[1200], mspath[1200], binpath[1200];
    FILE *csv = bench_csv_open(ctx, "memstress.csv", false, path, sizeof path);
    FILE *ms = bench_csv_open(ctx, "memstress.ms", false, mspath, sizeof mspath);
    FILE *bins = bench_csv_open(ctx, "memstress_bins.csv", false, binpath, sizeof binpath);
    if (csv != NULL) {
        fprintf(csv, "allocator,allocs,frees,oom,probes_median,probes_p99,probes_max,cycles_median,cycles_p99,"
                     "cycles_max,blog_probes_median,blog_probes_p99,blog_probes_max,blog_cycles_median,"
                     "blog_cycles_p99\n");
    }
    if (bins != NULL) {
        fprintf(bins, "allocator,probes,mallocs,cycles_mean\n");
    }
    printf("%-10s %5s %5s %3s  %-19s  %-22s  %s\n", "", "", "", "", "malloc probes", "malloc cycles", "blog");
    printf("%-10s %5s %5s %3s  %5s %5s %7s  %6s %6s %8s  %s\n", "allocator", "A", "F", "O", "med", "p99", "worst",
           "med", "p99", "worst", "probes med/p99/worst, DWT cycles med/p99");
    printf("---------- ----- ----- ---  ----- ----- -------  ------ ------ --------  ----------------------------\n");

    int rc = 0;
    for (size_t k = 0; k < ctx->nallocs && !drv_stop; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        drv_instance_t in;
        size_t heap = a->create != NULL ? MS_HEAP : ctx->arena_size;
        if (!drv_open(&in, a, ctx->arena, heap, MS_SLOTS, true)) {
            printf("%-10s could not be created over %u KiB\n", a->name, MS_HEAP / 1024u);
            continue;
        }
        bench_progress("memstress", a->name, "2 timed runs", 0.0);
        drv_outcome_t o0 = drv_replay_timed(&in, &t, c0, prb, NULL, NULL);
        bool ok = !o0.interrupted && drv_reset(&in);
        drv_outcome_t o1 = ok ? drv_replay_timed(&in, &t, c1, NULL, NULL, NULL) : o0;
        ok = ok && !o1.interrupted && drv_reset(&in);
        /* An untimed third pass reads the allocator's own bytes in use after every op. */
        size_t requested = 0;
        uint32_t live = 0, na = 0, nf = 0, no = 0;
        char kinds[MS_OPS];
        uint32_t lives[MS_OPS];
        for (size_t i = 0; ok && i < MS_OPS; i++) {
            const wl_op_t *op = &t.ops[i];
            void *old = in.slots[op->slot];
            bool got = drv_apply(&in, op, i);
            if (op->kind == WL_MALLOC) {
                if (got) {
                    kinds[i] = 'A', na++, live++, requested += op->size;
                } else {
                    kinds[i] = 'O', no++;
                }
            } else {
                kinds[i] = 'F', nf++;
                if (old != NULL) {
                    live--;
                    /* the size freed is the one its malloc requested: find it backwards */
                    for (size_t j = i; j-- > 0;) {
                        if (t.ops[j].slot == op->slot && t.ops[j].kind == WL_MALLOC) {
                            requested -= t.ops[j].size;
                            break;
                        }
                    }
                }
            }
            lives[i] = live;
            if (a->stats != NULL && a->create != NULL) {
                rt_stats_t s;
                a->stats(in.handle, &s);
                bytes[i] = s.used_bytes;
            } else {
                bytes[i] = requested;
            }
        }
        drv_close(&in);
        bench_progress_clear();
        if (!ok) {
            rc = drv_stop ? 130 : 1;
            break;
        }
        size_t nm = 0;
        double sum[MS_MAX_BIN + 1] = {0};
        size_t cnt[MS_MAX_BIN + 1] = {0};
        bool has_probes = a->last_probes != NULL;
        if (ms != NULL) {
            fprintf(ms, "# allocator %s\n", a->name);
        }
        for (size_t i = 0; i < MS_OPS; i++) {
            uint32_t cyc = c0[i] < c1[i] ? c0[i] : c1[i];
            const wl_op_t *op = &t.ops[i];
            uint32_t p = op->kind == WL_MALLOC && has_probes && prb[i] != DRV_NO_PROBES ? prb[i] : 0u;
            if (ms != NULL) {
                fprintf(ms, "@MS,%zu,%c,%u,%u,%u,%u,%zu\n", i, kinds[i], op->kind == WL_MALLOC ? op->size : 0u,
                        cyc == DRV_NOT_MEASURED ? 0u : cyc, p, lives[i], bytes[i]);
            }
            if (kinds[i] == 'A') {
                mc[nm] = cyc;
                mp[nm] = p;
                nm++;
                unsigned b = p < MS_MAX_BIN ? p : MS_MAX_BIN;
                sum[b] += cyc;
                cnt[b]++;
            }
        }
        mt_summary_t sc, sp;
        mt_summarize_u32(mc, nm, &sc, sorted);
        mt_summarize_u32(mp, nm, &sp, sorted);
        char blogtxt[64] = "";
        for (size_t b = 0; b < sizeof blog / sizeof blog[0]; b++) {
            if (strcmp(blog[b].name, a->name) == 0) {
                snprintf(blogtxt, sizeof blogtxt, "%u/%u/%u, %u/%u", blog[b].probes[0], blog[b].probes[1],
                         blog[b].probes[2], blog[b].cycles[0], blog[b].cycles[1]);
            }
        }
        if (has_probes) {
            printf("%-10s %5u %5u %3u  %5llu %5llu %7llu  %6llu %6llu %8llu  %s\n", a->name, na, nf, no,
                   (unsigned long long)sp.median, (unsigned long long)sp.p99, (unsigned long long)sp.max,
                   (unsigned long long)sc.median, (unsigned long long)sc.p99, (unsigned long long)sc.max, blogtxt);
        } else {
            printf("%-10s %5u %5u %3u  %5s %5s %7s  %6llu %6llu %8llu  %s\n", a->name, na, nf, no, "n/a", "n/a",
                   "n/a", (unsigned long long)sc.median, (unsigned long long)sc.p99, (unsigned long long)sc.max,
                   blogtxt);
        }
        if (csv != NULL) {
            fprintf(csv, "%s,%u,%u,%u,", a->name, na, nf, no);
            if (has_probes) {
                fprintf(csv, "%llu,%llu,%llu,", (unsigned long long)sp.median, (unsigned long long)sp.p99,
                        (unsigned long long)sp.max);
            } else {
                fprintf(csv, ",,,");
            }
            fprintf(csv, "%llu,%llu,%llu,", (unsigned long long)sc.median, (unsigned long long)sc.p99,
                    (unsigned long long)sc.max);
            bool found = false;
            for (size_t b = 0; b < sizeof blog / sizeof blog[0]; b++) {
                if (strcmp(blog[b].name, a->name) == 0) {
                    fprintf(csv, "%u,%u,%u,%u,%u\n", blog[b].probes[0], blog[b].probes[1], blog[b].probes[2],
                            blog[b].cycles[0], blog[b].cycles[1]);
                    found = true;
                }
            }
            if (!found) {
                fprintf(csv, ",,,,\n");
            }
        }
        if (bins != NULL && has_probes) {
            for (unsigned b = 0; b <= MS_MAX_BIN; b++) {
                if (cnt[b] != 0u) {
                    fprintf(bins, "%s,%u,%zu,%.1f\n", a->name, b, cnt[b], sum[b] / (double)cnt[b]);
                }
            }
        }
    }
    printf("(blog: 617 A, 583 F, 0 O on its own trace; its cycles are DWT cycles on a Cortex-M4 board, ours\n"
           " are this host's %s -- compare shapes, not values. The cycles column of memstress.ms holds the same.)\n",
           ctx->clock.unit);
    bench_csv_close(csv, path);
    bench_csv_close(ms, mspath);
    bench_csv_close(bins, binpath);
    free(c0), free(c1), free(prb), free(sorted), free(mc), free(mp), free(bytes);
    wl_release(&t);
    return rc;
}
