/* SPDX-License-Identifier: MIT */
/*
 * trace/threads_cli.c -- `rtbench trace threads FILE`: each stream recorded with more than
 * one thread replayed with one thread per recorded thread against the thread-safe allocators,
 * heap needed and ns per call (threads.h).
 */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* MAP_NORESERVE */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "clock.h"
#include "driver.h"
#include "mtpeers.h"
#include "peers.h"
#include "replay.h"
#include "threads.h"

/* ---- rtbench trace threads ------------------------------------------------------------------- */

/* threads.h */
const char rp_threads_default[] = "glibc,tlsf+mutex,tlsf+pi,aomalloc,wfc,tlsfmc";
const char rp_threads_csv_header[] = "program,stream,allocator,threads,ops,cross_frees,live_peak,heap_needed,ratio,"
                                     "verified,ns_per_call,p99_" CLK_UNIT ",max_" CLK_UNIT ",wall_ns,failures";

typedef struct thr_cli {
    const char *file, *allocs, *csv_dir;
    unsigned reps;
    uint64_t max_memory;
} thr_cli_t;

static void thr_usage(FILE *out)
{
    fprintf(out,
            "usage: rtbench trace threads FILE [--alloc LIST] [--csv DIR] [--reps N] [--max-memory SIZE]\n"
            "  Replays each stream recorded with more than one thread with one thread per recorded thread,\n"
            "  cross-thread frees made by the thread that made them, against thread-safe allocators\n"
            "  (default %s; any other by --alloc):\n"
            "  heap needed  the smallest buffer on which every call that got memory in the recording gets it\n"
            "               again, the calls in their recorded order (a baton passed between the threads)\n"
            "  ns/call      the threads run at once, each call waiting only for the earlier calls on its\n"
            "               block; each call timed with the benchmark's clock; median of --reps runs (3)\n"
            "  --max-memory SIZE: a stream whose buffers would take more is refused (default half of RAM)\n",
            rp_threads_default);
}

static int thr_parse(int argc, char **argv, thr_cli_t *c)
{
    memset(c, 0, sizeof *c);
    c->allocs = rp_threads_default;
    c->reps = 3;
    c->max_memory = tr_default_max_memory();
    for (int i = 0; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            thr_usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--alloc") == 0 && val != NULL) {
            c->allocs = val, i++;
        } else if (strcmp(argv[i], "--csv") == 0 && val != NULL) {
            c->csv_dir = strcmp(val, "-") == 0 ? NULL : val, i++;
        } else if (strcmp(argv[i], "--reps") == 0 && val != NULL && atoi(val) > 0) {
            c->reps = (unsigned)atoi(val), i++;
        } else if (strcmp(argv[i], "--max-memory") == 0 && val != NULL && rp_parse_size(val, &c->max_memory)) {
            i++;
        } else if (argv[i][0] != '-' && c->file == NULL) {
            c->file = argv[i];
        } else {
            fprintf(stderr, "rtbench trace threads: bad argument '%s'\n", argv[i]);
            thr_usage(stderr);
            return 2;
        }
    }
    if (c->file == NULL) {
        thr_usage(stderr);
        return 2;
    }
    return -1;
}

/* threads.h */
size_t rp_threads_pick(const char *names, const rt_allocator_t **out, size_t cap)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", names);
    size_t k = 0;
    for (char *tok = strtok(buf, ","); tok != NULL && k < cap; tok = strtok(NULL, ",")) {
        const rt_allocator_t *a = bench_find(tok);
        a = a != NULL ? a : bench_mt_find(tok); /* tlsf+mutex, tlsf+pi, aomalloc */
        if (a == NULL) {
            const char *why = bench_peer_unavailable(tok);
            if (why != NULL) {
                fprintf(stderr, "rtbench trace threads: '%s' is unavailable, left out: %s\n", tok, why);
                continue;
            }
            fprintf(stderr, "rtbench trace threads: allocator '%s' is unknown (see rtbench list)\n", tok);
            return 0;
        }
        if (!a->thread_safe) {
            fprintf(stderr, "rtbench trace threads: '%s' is not thread-safe; left out\n", tok);
            continue;
        }
        out[k++] = a;
    }
    return k;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One allocator's row. */
typedef struct thr_row {
    rp_size_t size;     /* heap needed (allocators with create) */
    rp_thr_run_t run;   /* the median run's figures */
    double ns_per_call; /* median over the reps: mean clock per call / ticks per ns */
    size_t failures;    /* the most of any timed run */
    bool timed;
} thr_row_t;

static void thr_measure(const rt_allocator_t *a, const rp_plan_t *p, size_t heap, void *buf, unsigned reps,
                        thr_row_t *row)
{
    memset(row, 0, sizeof *row);
    if (a->create != NULL) {
        rp_size_opts_t so = {4096u, 0.005, heap, 2, rp_threaded_fits, p};
        rp_size(a, buf, &p->trace, &so, &row->size);
    }
    double *ns = calloc(reps, sizeof *ns);
    rp_thr_run_t *runs = calloc(reps, sizeof *runs);
    unsigned done = 0;
    for (unsigned r = 0; ns != NULL && runs != NULL && r < reps && !drv_stop; r++) {
        if (!rp_threaded(a, buf, heap, p, RP_CONCURRENT, true, &runs[r]) || runs[r].interrupted) {
            break;
        }
        ns[r] = runs[r].mean / runs[r].ticks_per_ns;
        row->failures = runs[r].failures > row->failures ? runs[r].failures : row->failures;
        done++;
    }
    if (done > 0u) {
        double *sorted = malloc(done * sizeof *sorted);
        if (sorted != NULL) {
            memcpy(sorted, ns, done * sizeof *ns);
            qsort(sorted, done, sizeof *sorted, cmp_double);
            row->ns_per_call = sorted[done / 2u];
            for (unsigned r = 0; r < done; r++) {
                if (ns[r] == row->ns_per_call) {
                    row->run = runs[r];
                }
            }
            row->timed = true;
            free(sorted);
        }
    }
    free(ns);
    free(runs);
}

static void thr_print(const char *name, const thr_row_t *row, const rp_plan_t *p, const rp_thr_opts_t *o, FILE *csv,
                      size_t si)
{
    uint64_t peak = p->peak;
    char hv[32] = "-", rv[16] = "-", nv[16] = "-", p99[16] = "-", mx[16] = "-";
    if (row->size.found) {
        snprintf(hv, sizeof hv, "%zu", row->size.heap);
        snprintf(rv, sizeof rv, "%.3f", peak ? (double)row->size.heap / (double)peak : 0.0);
    }
    if (row->timed) {
        snprintf(nv, sizeof nv, "%.1f", row->ns_per_call);
        snprintf(p99, sizeof p99, "%u", (unsigned)row->run.p99);
        snprintf(mx, sizeof mx, "%u", (unsigned)row->run.max);
    }
    printf("  %-11s %12s %7s %9s %10s %12s %8zu%s\n", name, hv, rv, nv, p99, mx, row->failures,
           row->size.found && !row->size.verified ? "  (heap NOT verified)" : "");
    if (csv != NULL) {
        bench_csv_field(csv, o->program);
        fprintf(csv, ",%zu,%s,%u,%zu,%llu,%llu,", si, name, (unsigned)p->nthreads, p->trace.nops,
                (unsigned long long)p->cross, (unsigned long long)peak);
        if (row->size.found) {
            fprintf(csv, "%zu,%.4f,%d,", row->size.heap, peak ? (double)row->size.heap / (double)peak : 0.0,
                    row->size.verified ? 1 : 0);
        } else {
            fprintf(csv, ",,,");
        }
        if (row->timed) {
            fprintf(csv, "%.2f,%u,%u,%.1f,%zu\n", row->ns_per_call, (unsigned)row->run.p99, (unsigned)row->run.max,
                    row->run.wall_ns, row->failures);
        } else {
            fprintf(csv, ",,,,\n");
        }
    }
}

static void *thr_map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* threads.h */
bool rp_threads_stream(const tr_stream_t *st, size_t si, const rp_thr_opts_t *o, const rt_allocator_t *const *allocs,
                       size_t na, FILE *csv)
{
    tr_stream_t view = *st; /* the ops and threads are shared, not copied */
    if (o->max_ops != 0u && view.trace.nops > o->max_ops) {
        view.trace.nops = o->max_ops; /* a prefix of a valid order is one */
        rp_finish_trace(&view.trace);
    }
    rp_plan_t p;
    if (!rp_plan_make(&view, &p)) {
        fprintf(stderr,
                "rtbench trace threads: stream %zu cannot be replayed: more than %d threads made calls, or out of "
                "memory\n",
                si, RP_MAX_THREADS);
        return false;
    }
    size_t heap = rp_replay_heap(&view.trace);
    void *buf = heap <= o->max_memory ? thr_map(heap) : NULL;
    if (buf == NULL) {
        fprintf(stderr, "rtbench trace threads: stream %zu: cannot map a %zu-byte heap (--max-memory)\n", si, heap);
        rp_plan_free(&p);
        return false;
    }
    printf("\nstream %zu: %s: %u threads, %zu ops%s, %llu cross-thread frees and reallocs, live peak %llu bytes\n", si,
           st->command, (unsigned)st->threads, view.trace.nops,
           view.trace.nops < st->trace.nops ? " (the first of the stream's)" : "", (unsigned long long)p.cross,
           (unsigned long long)p.peak);
    printf("  %-11s %12s %7s %9s %10s %12s %8s\n", "allocator", "heap needed", "ratio", "ns/call", "p99 " CLK_UNIT,
           "max " CLK_UNIT, "failures");
    for (size_t k = 0; k < na && !drv_stop; k++) {
        bench_progress("trace threads", allocs[k]->name, o->program, (double)k / (double)na);
        thr_row_t row;
        thr_measure(allocs[k], &p, heap, buf, o->reps, &row);
        thr_print(allocs[k]->name, &row, &p, o, csv, si);
    }
    bench_progress_clear();
    munmap(buf, heap);
    rp_plan_free(&p);
    return true;
}

int trace_threads(int argc, char **argv)
{
    thr_cli_t c;
    int rc = thr_parse(argc, argv, &c);
    if (rc >= 0) {
        return rc;
    }
    tr_file_t f;
    char err[512];
    if (!tr_load_max(c.file, c.max_memory, &f, err, sizeof err)) {
        fprintf(stderr, "rtbench trace threads: %s\n", err);
        return 1;
    }
    tr_zero_as_one(&f);
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t na = rp_threads_pick(c.allocs, allocs, BENCH_MAX_SELECTED);
    if (na == 0) {
        tr_release(&f);
        return 2;
    }
    bench_ctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.scale = BENCH_STANDARD;
    ctx.csv_dir = c.csv_dir;
    bench_meta_init(&ctx.meta);
    char path[1200];
    FILE *csv = bench_csv_open(&ctx, "trace_threads.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "%s\n", rp_threads_csv_header);
    }
    printf("trace threads %s: %s (%zu stream%s)\n"
           "heap needed: bisection to max(4 KiB, 0.5 %%), the calls in recorded order, each by its own thread; "
           "ratio: heap needed / live peak\n"
           "ns/call: every thread at once, each call waiting only for the earlier calls on its block; the mean of "
           "every call's clock reading, median of %u runs; p99, max: per call, in %s\n",
           c.file, f.command, f.nstreams, f.nstreams == 1 ? "" : "s", c.reps, CLK_UNIT);
    size_t threaded = 0;
    bool failed = false;
    for (size_t si = 0; si < f.nstreams && !drv_stop && !failed; si++) {
        const tr_stream_t *st = &f.streams[si];
        if (st->threads < 2u || st->thread == NULL) {
            continue;
        }
        threaded++;
        rp_thr_opts_t o = {c.reps, 0, c.max_memory, "-"};
        failed = !rp_threads_stream(st, si, &o, allocs, na, csv);
    }
    if (threaded == 0u) {
        printf("no stream of this trace was recorded with more than one thread%s\n",
               f.nstreams > 0 && f.streams[0].threads > 1u ? " (a format version 1 file: no thread per call)" : "");
    }
    bench_csv_close(csv, path);
    tr_release(&f);
    return drv_stop ? 130 : failed ? 1 : 0;
}
