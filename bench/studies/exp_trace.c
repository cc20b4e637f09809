/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_trace.c -- experiment "trace" (doc/traces.md): three real programs, recorded with
 * `rtbench trace record`, then replayed and sized against every selected allocator.
 *
 *   sqlite3 :memory: ".read workloads/programs/workload.sql"
 *   lua5.4 workloads/programs/workload.lua
 *   PYTHONHASHSEED=0 /usr/bin/python3 workloads/programs/workload.py
 *
 * Each program is recorded once (rtbench re-executes itself: `trace record -o FILE -- CMD`, from
 * the source tree's root, the program's stdout discarded), and every stream of the trace file is
 * replayed (trace/replay.h): heap needed by bisection (library allocators), the bound
 * where one is defended, instructions per call (a ptrace sample), ns per call (median of untimed
 * replays, allocators interleaved, glibc always among them so that the ratio to glibc is of
 * the same run), F at the peak, the worst counted call, and glibc's footprint: the peak, over a
 * replay of the stream, of the bytes glibc holds from the system (mallinfo2 arena + hblkhd: arena
 * bytes obtained, free chunks and top included, plus mmapped chunks), the replay in a forked
 * child of its own, on a new arena (harness/glibcmem.h), so that rtbench's own allocations do
 * not count; over the live peak, it stands beside the heap-needed ratios (the layout target:
 * tlsf's heap needed <= glibc's footprint). A program that is not installed, or
 * whose recording fails, is "not run" with the reason, in the table and in trace_programs.csv.
 *
 * Scale: quick replays the first 100,000 ops of each stream (the recording is whole), counts
 * every 1000th op within 3,000 single steps per allocator, times 9 repetitions, bisects to
 * max(16 KiB, 2 %) and checks one size above, and leaves the wait-free trees out (a replay of
 * theirs costs ~100 of TLSF's: tens of seconds per program); standard replays whole streams,
 * every 100th op within 200,000 steps, 7 repetitions, max(4 KiB, 0.5 %), three sizes above,
 * with wf and wf_hint (the other tree variants only when named with --alloc).
 *
 * Then the threaded program, PYTHONMALLOC=malloc /usr/bin/python3 workloads/programs/
 * workload_threads.py (4 producer threads, one consumer: most frees are another thread's), is
 * recorded and each of its streams of more than one thread replayed with one thread per recorded
 * thread (trace/threads.h) against the thread-safe allocators (glibc, tlsf+mutex, tlsf+pi,
 * aomalloc, wfc, tlsfmc; within --alloc when given): heap needed (ordered replay, bisection) and
 * ns per call (concurrent replay, every call timed). Quick: the first 300,000 ops, 3 timed runs;
 * standard: the whole stream, 5 runs. Output trace_threads.csv.
 *
 * Outputs: trace.csv (one row per program, stream and allocator; glibc_footprint,
 * glibc_footprint_ratio and glibc_fresh -- the arena was new -- are the stream's, on every row of
 * it), trace_programs.csv (program,
 * status, streams, ops, live peak, command), the trace files themselves (trace_<program>.rtt)
 * beside the CSVs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "driver.h"
#include "glibcmem.h"
#include "peers.h"
#include "clock.h"
#include "replay.h"
#include "threads.h"
#include "trace.h"

#ifndef RTBENCH_SOURCE_DIR
#define RTBENCH_SOURCE_DIR "."
#endif

typedef struct tp_program {
    const char *name;
    const char *exe;
    const char *args[3];
    const char *script; /* relative to the source tree; must exist */
    const char *env;    /* NAME=VALUE set for the recording, or NULL */
} tp_program_t;

static const tp_program_t programs[] = {
    {"sqlite3",
     "sqlite3",
     {":memory:", ".read workloads/programs/workload.sql", NULL},
     "workloads/programs/workload.sql",
     NULL},
    {"lua5.4", "lua5.4", {"workloads/programs/workload.lua", NULL, NULL}, "workloads/programs/workload.lua", NULL},
    {"python3",
     "/usr/bin/python3",
     {"workloads/programs/workload.py", NULL, NULL},
     "workloads/programs/workload.py",
     NULL},
};

/* The threaded program: 4 producer threads hand objects to a consumer thread, so most frees are
 * another thread's; PYTHONMALLOC=malloc makes every object a malloc. Replayed with one thread per
 * recorded thread (trace/threads.h). */
static const tp_program_t threaded_program = {"python3-threads",
                                              "/usr/bin/python3",
                                              {"workloads/programs/workload_threads.py", NULL, NULL},
                                              "workloads/programs/workload_threads.py",
                                              "PYTHONMALLOC=malloc"};
enum { TP_NPROGRAMS = sizeof programs / sizeof programs[0] };

typedef struct tp_params {
    size_t max_ops; /* replay only the first max_ops ops of a stream (0: all) */
    bool trees;     /* the wait-free trees (family tree) measured */
    size_t sample;  /* calls counted per allocator (rp_count) */
    unsigned reps;
    rp_size_opts_t size;
    size_t thr_max_ops; /* the threaded program: the first ops of its stream replayed (0: all) */
    unsigned thr_reps;  /* its timed concurrent runs */
} tp_params_t;

static bool on_path(const char *exe)
{
    if (strchr(exe, '/') != NULL) {
        return access(exe, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path != NULL ? path : "/usr/bin:/bin");
    for (char *dir = strtok(buf, ":"); dir != NULL; dir = strtok(NULL, ":")) {
        char full[4200];
        snprintf(full, sizeof full, "%s/%s", dir, exe);
        if (access(full, X_OK) == 0) {
            return true;
        }
    }
    return false;
}

/* Records program p into `out` with this very binary (`trace record`). False with the reason. */
static bool record(const tp_program_t *p, const char *out, char *why, size_t len)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1u);
    if (n <= 0) {
        snprintf(why, len, "cannot find rtbench itself (/proc/self/exe)");
        return false;
    }
    self[n] = '\0';
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "fork: %s", strerror(errno));
        return false;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        if (chdir(RTBENCH_SOURCE_DIR) != 0) {
            _exit(126);
        }
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
        }
        setenv("PYTHONHASHSEED", "0", 1);
        if (p->env != NULL) {
            char name[64];
            const char *eq = strchr(p->env, '=');
            if (eq != NULL && (size_t)(eq - p->env) < sizeof name) {
                snprintf(name, sizeof name, "%.*s", (int)(eq - p->env), p->env);
                setenv(name, eq + 1, 1);
            }
        }
        char *argv[12];
        int k = 0;
        argv[k++] = self;
        argv[k++] = (char *)"trace";
        argv[k++] = (char *)"record";
        argv[k++] = (char *)"-o";
        argv[k++] = (char *)out;
        argv[k++] = (char *)"--";
        argv[k++] = (char *)p->exe;
        for (int i = 0; i < 3 && p->args[i] != NULL; i++) {
            argv[k++] = (char *)p->args[i];
        }
        argv[k] = NULL;
        execv(self, argv);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, len, "waitpid: %s", strerror(errno));
            return false;
        }
        if (drv_stop) {
            kill(pid, SIGKILL);
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, len, "recording failed (%s %d)", WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return false;
    }
    return true;
}

static void tp_progress(void *context, double done)
{
    const char *who = context;
    bench_progress("trace", who, "time", done);
}

static void write_row(FILE *csv, const char *prog, size_t si, const rt_allocator_t *a, const wl_trace_t *t,
                      uint64_t peak, const rp_size_t *s, bool hb, double bound, const char *formula,
                      const gm_result_t *g, const rp_replay_t *r, double ns, double glibc_ns)
{
    fprintf(csv, "%s,%zu,%s,%zu,%llu,%zu,", prog, si, a->name, t->nops, (unsigned long long)peak, r->failures);
    if (s->found) {
        fprintf(csv, "%zu,%.4f,%zu,%d,%u,", s->heap, peak ? (double)s->heap / (double)peak : 0.0, s->resolution,
                s->verified ? 1 : 0, s->nonmono);
    } else if (a->create != NULL) {
        fprintf(csv, "-1,,,,,"); /* sized, and did not fit in the largest buffer tried */
    } else {
        fprintf(csv, ",,,,,");
    }
    if (hb) {
        fprintf(csv, "%.0f,", bound);
    } else {
        fprintf(csv, ",");
    }
    bench_csv_field(csv, formula);
    fprintf(csv, ",");
    if (g->ok && peak != 0u) {
        fprintf(csv, "%llu,%.4f,%d,", (unsigned long long)g->footprint, (double)g->footprint / (double)peak,
                g->fresh ? 1 : 0);
    } else {
        fprintf(csv, ",,,");
    }
    rp_csv_measures(csv, r, ns, glibc_ns, 4);
}

/* One stream of one program against every selected allocator. */
static int run_stream(bench_ctx_t *ctx, const tp_params_t *pp, const char *prog, size_t si, const wl_trace_t *t,
                      FILE *csv)
{
    uint64_t peak = rp_peak_live(t);
    size_t heap = rp_replay_heap(t);
    size_t cap = heap * 4u;
    void *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (buf == MAP_FAILED) {
        printf("%s stream %zu: cannot map %zu MiB\n", prog, si, cap >> 20);
        return 1;
    }
    memset(buf, 0xA5, heap);
    printf("\n%s, stream %zu: %zu ops (%zu allocating, %zu frees), live peak %llu bytes; replay heap %zu MiB\n", prog,
           si, t->nops, t->nmalloc, t->nfree, (unsigned long long)peak, heap >> 20);
    /* time: the selected allocators plus glibc (the ratio's reference), interleaved */
    const rt_allocator_t *timed[BENCH_MAX_SELECTED + 1];
    size_t nt = 0;
    bool have_glibc = false;
    for (size_t k = 0; k < ctx->nallocs; k++) {
        const rt_allocator_t *a = ctx->allocs[k];
        bool tree_variant =
            a->family == RT_FAMILY_TREE && strcmp(a->name, "wf") != 0 && strcmp(a->name, "wf_hint") != 0;
        if ((a->family == RT_FAMILY_TREE && !pp->trees) || (tree_variant && !ctx->allocs_explicit)) {
            continue; /* see the scale notes at the top */
        }
        if (strcmp(ctx->allocs[k]->name, "noop") != 0) {
            timed[nt++] = ctx->allocs[k];
            have_glibc = have_glibc || strcmp(ctx->allocs[k]->name, "glibc") == 0;
        }
    }
    if (!have_glibc) {
        timed[nt++] = &bench_glibc;
    }
    double ns[BENCH_MAX_SELECTED + 1];
    size_t fails[BENCH_MAX_SELECTED + 1];
    char who[96];
    snprintf(who, sizeof who, "%s all", prog);
    rp_time(timed, nt, buf, heap, t, pp->reps, ns, fails, tp_progress, who);
    double glibc_ns = 0.0;
    for (size_t k = 0; k < nt; k++) {
        if (timed[k] == &bench_glibc || strcmp(timed[k]->name, "glibc") == 0) {
            glibc_ns = ns[k];
        }
    }
    /* glibc's footprint: the stream in a process of its own, on a new arena (glibcmem.h) */
    gm_result_t g;
    bench_progress("trace", who, "glibc footprint", 0.0);
    gm_replay(&bench_glibc, t, NULL, true, &g);
    bench_progress_clear();
    char gfp[16] = "-";
    if (g.ok && peak != 0u) {
        snprintf(gfp, sizeof gfp, "%.3f", (double)g.footprint / (double)peak);
        printf("glibc footprint: %llu bytes, %s x the live peak (peak of mallinfo2 arena + hblkhd, own process, "
               "%s arena)\n",
               (unsigned long long)g.footprint, gfp, g.fresh ? "new" : "REUSED");
    } else {
        printf("glibc footprint: not measured (not glibc >= 2.33, or the child failed)\n");
    }
    printf("%-10s %6s %11s %7s %8s %8s %9s %7s %7s %s\n", "allocator", "fail", "heap needed", "/peak", "glibc fp",
           "ins mean", "p99/max", "ns/glibc", "F %", "worst call");
    for (size_t k = 0; k < nt && !drv_stop; k++) {
        const rt_allocator_t *a = timed[k];
        if (!have_glibc && k == nt - 1u) {
            break; /* glibc only timed, not selected */
        }
        rp_replay_t r;
        memset(&r, 0, sizeof r);
        rp_size_t s;
        memset(&s, 0, sizeof s);
        char phase_who[96];
        snprintf(phase_who, sizeof phase_who, "%s %s", prog, a->name);
        if (a->create != NULL) {
            bench_progress("trace", phase_who, "size", 0.0);
            rp_size_opts_t so = pp->size;
            so.cap = cap;
            rp_size(a, buf, t, &so, &s);
        }
        bench_progress("trace", phase_who, "count", 0.4);
        rp_count(a, buf, heap, t, pp->sample, &r, NULL, NULL);
        bench_progress("trace", phase_who, "frag", 0.9);
        rp_frag(a, &s, t, &r);
        bench_progress_clear();
        r.failures = fails[k];
        double bound = 0.0;
        char formula[160];
        bool hb = rp_bound(a, t, &bound, formula, sizeof formula);
        char hv[24] = "-", rv[16] = "-", im[16] = "-", px[24] = "-", nr[16] = "-", fv[16] = "-", wc[64] = "";
        if (s.found) {
            snprintf(hv, sizeof hv, "%zu", s.heap);
            snprintf(rv, sizeof rv, "%.3f", peak ? (double)s.heap / (double)peak : 0.0);
        } else if (a->create != NULL) {
            snprintf(hv, sizeof hv, "> %zu", cap);
        }
        if (r.ic_ok) {
            snprintf(im, sizeof im, "%.1f", r.all.mean);
            if (rp_percentile_ok(r.all.n, 99.0)) {
                snprintf(px, sizeof px, "%u/%u", r.all.p99, r.all.max);
            } else {
                snprintf(px, sizeof px, "-/%u", r.all.max);
            }
            snprintf(wc, sizeof wc, "op %zu %s(%u): %u", r.worst_op, rp_kind_name[r.worst_kind % RP_KINDS],
                     r.worst_size, r.worst_count);
        }
        if (ns[k] > 0.0 && glibc_ns > 0.0) {
            snprintf(nr, sizeof nr, "%.2f", ns[k] / glibc_ns);
        }
        if (r.f_known) {
            snprintf(fv, sizeof fv, r.f_approx ? "~%.1f" : "%.1f", r.f);
        }
        printf("%-10s %6zu %11s %7s %8s %8s %9s %7s %7s %s%s%s\n", a->name, r.failures, hv, rv, gfp, im, px, nr, fv, wc,
               s.found && s.nonmono ? " [size non-monotone]" : "", s.found && !s.verified ? " [NOT verified]" : "");
        if (csv != NULL) {
            write_row(csv, prog, si, a, t, peak, &s, hb, bound, formula, &g, &r, ns[k], glibc_ns);
        }
    }
    munmap(buf, cap);
    return drv_stop ? 130 : 0;
}

/* The scale's parameters: quick or standard (see the top), the trees also when --alloc names them. */
static tp_params_t trace_params(const bench_ctx_t *ctx)
{
    tp_params_t pp;
    if (ctx->scale == BENCH_QUICK) {
        pp = (tp_params_t){100000, false, 1000, 9, {4096u, 0.005, 0, 1, NULL, NULL}, 300000, 3};
    } else {
        pp = (tp_params_t){0, true, 1000, 7, {4096u, 0.005, 0, 3, NULL, NULL}, 0, 5};
    }
    pp.trees = pp.trees || ctx->allocs_explicit;
    return pp;
}

/* The experiment's heading: what each column means, with this scale's figures. */
static void print_intro(const tp_params_t *pp)
{
    printf("\n== trace -- real programs recorded and replayed ==\n");
    printf("heap needed: smallest size passed to create on which every call that got memory when recorded gets it "
           "again\n(bisection to max(%zu B, %.1f %%), verified, %u size(s) above checked); bound: buddy and trees "
           "(r+1)M+2B\n(Knuth 2.5 ex. 41); instructions: %zu calls spread evenly over the stream, the same for every "
           "allocator\n(p99 shown from 1,000 calls); ns: median of %u untimed replays, interleaved with glibc (a "
           "clock: noise on a\nloaded machine); F: heap needed / live peak - 1 (as `trace size`: the trees' 100-200 "
           "%% is power-of-two rounding);\nglibc fp: glibc's footprint / live peak -- the peak of mallinfo2 arena + "
           "hblkhd "
           "(bytes held from the system,\nfree chunks and top included) over a replay in a process of its own, "
           "on a new arena\n",
           pp->size.res_abs, pp->size.res_rel * 100.0, pp->size.checks, pp->sample, pp->reps);
}

/* trace.csv and trace_programs.csv, opened with their headers (NULL without --csv). */
static void open_csvs(const bench_ctx_t *ctx, FILE **csv, char *path, FILE **pcsv, char *ppath, size_t len)
{
    *csv = bench_csv_open(ctx, "trace.csv", false, path, len);
    *pcsv = bench_csv_open(ctx, "trace_programs.csv", false, ppath, len);
    if (*csv != NULL) {
        fprintf(*csv,
                "program,stream,allocator,ops,live_peak,failures,heap_needed,ratio,resolution,verified,"
                "nonmonotone,bound,bound_formula,glibc_footprint,glibc_footprint_ratio,glibc_fresh,ic_stride,ins_mean,"
                "ins_p99,ins_max,%s,ns_per_call,"
                "ns_ratio_glibc,f_percent,f_approx,worst_op,worst_kind,worst_size,worst_ins\n",
                rp_kinds_header);
    }
    if (*pcsv != NULL) {
        fprintf(*pcsv, "program,status,streams,ops,live_peak,command\n");
    }
}

/* Where prog's trace file goes: beside the CSVs (kept), else a temporary file in /tmp. */
static void trace_file_name(const bench_ctx_t *ctx, const tp_program_t *prog, char *file, size_t len)
{
    if (ctx->csv_dir != NULL) {
        snprintf(file, len, "%s/trace_%s.rtt", ctx->csv_dir, prog->name);
    } else {
        snprintf(file, len, "/tmp/rtbench-trace-%ld-%s.rtt", (long)getpid(), prog->name);
    }
}

/* Records prog into file; why says why it did not run (empty when it did). */
static void record_program(const tp_program_t *prog, const char *file, char *why, size_t len)
{
    char script[2048];
    snprintf(script, sizeof script, "%s/%s", RTBENCH_SOURCE_DIR, prog->script);
    why[0] = '\0';
    if (!on_path(prog->exe)) {
        snprintf(why, len, "not run: %s not installed", prog->exe);
    } else if (access(script, R_OK) != 0) {
        snprintf(why, len, "not run: %s missing", prog->script);
    } else {
        bench_progress("trace", prog->name, "record", 0.0);
        char r[200];
        if (!record(prog, file, r, sizeof r)) {
            snprintf(why, len, "not run: %s", r);
        }
        bench_progress_clear();
    }
}

/* Records prog into file and loads it into f; why says why it did not run (empty when it did). */
static void record_and_load(const tp_program_t *prog, const char *file, tr_file_t *f, char *why, size_t len)
{
    record_program(prog, file, why, len);
    memset(f, 0, sizeof *f);
    char err[256];
    if (why[0] == '\0' && !tr_load(file, f, err, sizeof err)) {
        snprintf(why, len, "not run: %s", err);
    } else if (why[0] == '\0') {
        tr_zero_as_one(f);
    }
}

/* Every stream of prog's trace (the first max_ops ops of each at quick scale); the first failure. */
static int replay_streams(bench_ctx_t *ctx, const tp_params_t *pp, const char *prog, const tr_file_t *f, FILE *csv)
{
    int rc = 0;
    for (size_t si = 0; si < f->nstreams && rc == 0 && !drv_stop; si++) {
        wl_trace_t view = f->streams[si].trace; /* the ops are shared, not copied */
        if (pp->max_ops != 0u && view.nops > pp->max_ops) {
            view.nops = pp->max_ops;
            rp_finish_trace(&view);
            printf("\n%s, stream %zu: the first %zu of %zu ops replayed (quick scale)\n", prog, si, view.nops,
                   f->streams[si].trace.nops);
        }
        if (view.nops != 0u) {
            rc = run_stream(ctx, pp, prog, si, &view, csv);
        }
    }
    return rc;
}

/* prog's row of trace_programs.csv once it ran: its streams, all their ops, the largest live peak. */
static void program_row(FILE *pcsv, const char *prog, const tr_file_t *f)
{
    size_t ops = 0;
    uint64_t peak = 0;
    for (size_t si = 0; si < f->nstreams; si++) {
        ops += f->streams[si].trace.nops;
        uint64_t pk = rp_peak_live(&f->streams[si].trace);
        peak = pk > peak ? pk : peak;
    }
    fprintf(pcsv, "%s,%s,%zu,%zu,%llu,", prog, drv_stop ? "interrupted" : "complete", f->nstreams, ops,
            (unsigned long long)peak);
    bench_csv_field(pcsv, f->command);
    fprintf(pcsv, "\n");
}

/* One program: recorded, replayed, its row written; "not run" with the reason when it cannot be. */
static int run_program(bench_ctx_t *ctx, const tp_params_t *pp, const tp_program_t *prog, FILE *csv, FILE *pcsv)
{
    char file[1200];
    trace_file_name(ctx, prog, file, sizeof file);
    tr_file_t f;
    char why[512];
    record_and_load(prog, file, &f, why, sizeof why);
    if (why[0] != '\0') {
        printf("\n%s: %s\n", prog->name, why);
        if (pcsv != NULL) {
            fprintf(pcsv, "%s,", prog->name);
            bench_csv_field(pcsv, why);
            fprintf(pcsv, ",,,,\n");
        }
        return 0;
    }
    int rc = replay_streams(ctx, pp, prog->name, &f, csv);
    if (pcsv != NULL) {
        program_row(pcsv, prog->name, &f);
    }
    tr_release(&f);
    if (ctx->csv_dir == NULL) {
        unlink(file);
    }
    return rc;
}

/* The threaded program: recorded, then each stream of more than one thread replayed with one
 * thread per recorded thread against the thread-safe allocators (trace_threads.csv). */
static int run_threaded(bench_ctx_t *ctx, const tp_params_t *pp, FILE *pcsv)
{
    const tp_program_t *prog = &threaded_program;
    printf("\n== trace, threaded: %s replayed with one thread per recorded thread ==\n"
           "heap needed: bisection to max(4 KiB, 0.5 %%), the calls in recorded order, each by its own thread; "
           "ns/call: every thread at once,\neach call waiting only for the earlier calls on its block, each call "
           "timed; the median of %u runs; p99, max per call in %s\n",
           prog->name, pp->thr_reps, CLK_UNIT);
    /* the thread-safe allocators a user compares, within --alloc when given */
    const rt_allocator_t *all[BENCH_MAX_SELECTED], *allocs[BENCH_MAX_SELECTED];
    size_t n = rp_threads_pick(rp_threads_default, all, BENCH_MAX_SELECTED), na = 0;
    for (size_t k = 0; k < n; k++) {
        if (!ctx->allocs_explicit || bench_selected(ctx, all[k]->name)) {
            allocs[na++] = all[k];
        }
    }
    if (na == 0u) {
        printf("no thread-safe allocator selected\n");
        return 0;
    }
    char file[1200];
    trace_file_name(ctx, prog, file, sizeof file);
    tr_file_t f;
    char why[512];
    record_and_load(prog, file, &f, why, sizeof why);
    if (why[0] != '\0') {
        printf("%s: %s\n", prog->name, why);
        if (pcsv != NULL) {
            fprintf(pcsv, "%s,", prog->name);
            bench_csv_field(pcsv, why);
            fprintf(pcsv, ",,,,\n");
        }
        return 0;
    }
    char path[1200];
    FILE *csv = bench_csv_open(ctx, "trace_threads.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "%s\n", rp_threads_csv_header);
    }
    rp_thr_opts_t o = {pp->thr_reps, pp->thr_max_ops, tr_default_max_memory(), prog->name};
    size_t threaded = 0;
    for (size_t si = 0; si < f.nstreams && !drv_stop; si++) {
        if (f.streams[si].threads > 1u && f.streams[si].thread != NULL) {
            threaded++;
            (void)rp_threads_stream(&f.streams[si], si, &o, allocs, na, csv);
        }
    }
    if (threaded == 0u) {
        printf("%s: no stream was recorded with more than one thread\n", prog->name);
    }
    bench_csv_close(csv, path);
    if (pcsv != NULL) {
        program_row(pcsv, prog->name, &f);
    }
    tr_release(&f);
    if (ctx->csv_dir == NULL) {
        unlink(file);
    }
    return 0;
}

int exp_trace(bench_ctx_t *ctx)
{
    tp_params_t pp = trace_params(ctx);
    print_intro(&pp);
    char path[1200], ppath[1200];
    FILE *csv, *pcsv;
    open_csvs(ctx, &csv, path, &pcsv, ppath, sizeof path);
    int rc = 0;
    for (size_t p = 0; p < TP_NPROGRAMS && rc == 0 && !drv_stop; p++) {
        rc = run_program(ctx, &pp, &programs[p], csv, pcsv);
    }
    if (rc == 0 && !drv_stop) {
        rc = run_threaded(ctx, &pp, pcsv);
    }
    bench_csv_close(csv, path);
    bench_csv_close(pcsv, ppath);
    return drv_stop ? 130 : rc;
}

/* The programs, for experiment "layout" (exp_layout.c), which sizes their recordings per layout. */
size_t trace_programs(void) { return TP_NPROGRAMS; }
const char *trace_program_name(size_t i) { return i < TP_NPROGRAMS ? programs[i].name : NULL; }

void trace_program_record(const bench_ctx_t *ctx, size_t i, char *file, size_t file_len, char *why, size_t len)
{
    trace_file_name(ctx, &programs[i], file, file_len);
    record_program(&programs[i], file, why, len);
}
