/* SPDX-License-Identifier: MIT */
/*
 * bench/rtbench.c -- the command-line front of the benchmark.
 *
 *   rtbench list
 *   rtbench run [clock|churn|small|memfrag|memstress|inscount|hardening|masmano|worst|paths|stellwag|prio|fma|trace|layout|all] [--alloc a,b] [--seed N]
 *               [--ops N] [--scale quick|standard|paper] [--csv DIR|-] [--raw] [--threads 1,2,16] [--rt]
 *   rtbench replay churn|small --alloc NAME [--seed N] [--ops N]
 *   rtbench trace record [-o FILE] -- CMD ARGS... | trace replay FILE ... | trace size FILE ...
 *   rtbench trace threads FILE ... (a threaded recording, one thread per recorded thread)
 *
 * Tables go to stdout, progress to stderr ("[k/n] experiment  allocator  phase  %"), CSV files to
 * --csv DIR (default: results), with the run's bookkeeping (plan.csv, experiments.csv,
 * allocators.csv: bench.h). Ctrl-C stops cleanly within a second or two: the allocator being
 * measured finishes its line with what was measured, the interrupted experiment's CSVs are not
 * written (their .tmp removed; those of finished experiments stay), experiments.csv records it as
 * interrupted, and rtbench exits with status 130 (a second Ctrl-C kills it at once).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "driver.h"
#include "inscount.h"
#include "mtpeers.h"
#include "peers.h"
#include "threads.h"
#include "trace.h"
#include "workload.h"

#define ARENA_SIZE ((size_t)64 << 20)

static const bench_experiment_t experiments[] = {
    {"clock", "verify the cycle clock: resolution, cost of an empty timed region, frequency, TSC flags", exp_clock,
     true},
    {"churn", "uniform churn: 1000 slots, sizes 16..4096, 2,000,000 ops: cycles per call, loop ns/op, probes",
     exp_churn, true},
    {"small", "small-block churn: 10000 slots, sizes 8..256, 2,000,000 ops: same figures", exp_small, true},
    {"memfrag", "VaiOS mem_frag: malloc(120) after N fenced free 72-byte blocks, N = 1..256: probes, cycles",
     exp_memfrag, true},
    {"inscount", "exact instructions per malloc/free (ptrace single-step) on churn, small and memfrag", exp_inscount,
     false},
    {"hardening",
     "cost of each RT_HARDENING level: exact instructions per malloc/free on churn and small, "
     "levels 0, 1, 2 (runs rtbench-hardening<N> beside rtbench)",
     exp_hardening, false},
    {"memstress", "VaiOS mem_stress: 1,200 ops on a live set <= 48, 32 KiB heap: @MS rows, probes, cycles",
     exp_memstress, true},
    {"masmano", "Masmano 2006 periodic task model, Tests 1-4: cycles (Table 5), F (Table 7), F vs P_d", exp_masmano,
     true},
    {"worst", "adversarial workloads: exact worst-case instructions per malloc/free (Masmano Table 2)", exp_worst,
     true},
    {"paths",
     "boundary-tag heaps: exact instructions of malloc and free per path (exact fit, split, climb, merge "
     "none/prev/next/both), each kept and at its most expensive; the worst over them",
     exp_paths, true},
    {"stellwag", "Stellwag 2010 tests I-IV: T threads on one shared 64 MiB allocator, cycles, c_v, utilisation",
     exp_stellwag, true},
    {"prio",
     "priority inversion: a SCHED_FIFO thread's malloc/free while lower ones allocate and a middle one "
     "spins, one CPU: tlsf+mutex, tlsf+pi, tlsfmc, wfc (skipped where SCHED_FIFO is refused)",
     exp_prio, true},
    {"fma",
     "FMA 1998 test program, runs of 1,000..60,000 allocations: time with minus without heap calls, worst "
     "case per call, pages touched and peak (fma, bsd44, tlsf, glibc)",
     exp_fma, true},
    {"trace",
     "real programs (sqlite3, lua5.4, python3) recorded, replayed and sized: heap needed vs live peak, "
     "bound, instructions and ns per call, F",
     exp_trace, true},
    {"layout",
     "fragmentation per block layout (64-bit A=16, 64-bit A=8, 32-bit A=8): Masmano Tests 1-3 F and the "
     "programs' heap needed / live peak (runs rtbench-align8, rtbench-m32 beside rtbench)",
     exp_layout, true},
};
enum { NEXPERIMENTS = sizeof experiments / sizeof experiments[0] };

static void usage(FILE *f)
{
    fprintf(
        f, "usage: rtbench COMMAND [options]\n"
           "\n"
           "commands:\n"
           "  list                   list the allocators and the experiments\n"
           "  run [EXPERIMENT]       run an experiment: clock, churn, small, memfrag, memstress, inscount, hardening,\n"
           "                         masmano, worst, paths, stellwag, prio, fma, trace, layout, or all\n"
           "                         (default all; the clock is verified first in every run)\n"
           "  replay WORKLOAD        replay churn or small once, untimed, against one --alloc (for\n"
           "                         valgrind; see bench/callgrind_check.sh)\n"
           "  trace record [-o FILE] -- CMD ARGS...\n"
           "                         run CMD under the recorder: every malloc-family call of it and\n"
           "                         its children into one trace file (trace/trace.h)\n"
           "  trace replay FILE      replay a recorded trace against the allocators ([--alloc L] [--csv DIR])\n"
           "  trace size FILE        the heap each allocator needs for a recorded trace\n"
           "                         both: --max-memory SIZE (K, M, G, T suffixes) refuses, before\n"
           "                         mapping anything, a trace whose replay would take more (default\n"
           "                         half of physical memory; `rtbench trace replay --help`)\n"
           "  trace threads FILE     a threaded recording replayed with one thread per recorded\n"
           "                         thread: heap needed and ns/call of the thread-safe allocators\n"
           "  --help                 this text\n"
           "\n"
           "options:\n"
           "  --alloc a,b,...        allocators to measure (default: all; see list)\n"
           "  --seed N               workload seed (default 42)\n"
           "  --ops N                operations of churn and small (default 2000000; 200000 at quick)\n"
           "  --scale SCALE          quick (default): every study's headline in ~3 min on 2 cores --\n"
           "                         fewer ops, repetitions and samples; the wait-free tree's variants\n"
           "                         (wf32, wf128, wf256, wf_ro, wf_lazy) only in stellwag; run all\n"
           "                         leaves out inscount and hardening (minutes of single-stepping;\n"
           "                         run them by name);\n"
           "                         standard: the former default (~35 min): instruction counts on a\n"
           "                         sample of calls, mem_frag 25 pairs per N, Masmano 30,000 /\n"
           "                         300,000 mallocs per time / fragmentation run;\n"
           "                         paper (or full): the papers' operation counts (Masmano 300,000 /\n"
           "                         1,500,000, Test 4 10 periods x 50 seeds), 20,000-op instruction\n"
           "                         samples, 101 mem_frag pairs (hours).\n"
           "  --csv DIR              write summary CSVs to DIR (default results; - for none)\n"
           "  --raw                  also one row per operation under DIR/raw/\n"
           "  --threads N,N,...      thread counts of stellwag (default 1,2,16; more than the CPUs is\n"
           "                         oversubscribed, and reported so)\n"
           "  --rt                   stellwag: also the whole study with SCHED_FIFO threads and mlockall\n"
           "                         (where permitted; the tables say what was granted)\n"
           "\n"
           "Tables go to stdout, progress to stderr. Ctrl-C stops cleanly (exit status 130).\n");
}

static void on_sigint(int sig)
{
    (void)sig;
    drv_stop = 1;
}

static void list(void)
{
    size_t n = 0;
    const rt_allocator_t *const *all = bench_allocators(&n);
    printf("allocators:\n");
    for (size_t i = 0; i < n; i++) {
        const char *version = bench_peer_version(all[i]);
        printf("  %-10s malloc %-24s free %-24s %s%s%s%s\n", all[i]->name,
               all[i]->malloc_bound ? all[i]->malloc_bound : "?", all[i]->free_bound ? all[i]->free_bound : "?",
               all[i]->description ? all[i]->description : "", version ? " (version " : "", version ? version : "",
               version ? ")" : "");
    }
    bench_peers_print_unavailable(stdout);
    bench_mt_print_peers(stdout);
    printf("experiments:\n");
    for (size_t i = 0; i < NEXPERIMENTS; i++) {
        printf("  %-10s %s\n", experiments[i].name, experiments[i].description);
    }
    printf("  %-10s every experiment above, in that order\n", "all");
}

static bool parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s == '\0' || *s == '-') {
        return false;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = v;
    return true;
}

/* --threads 1,2,16: thread counts of the multi-thread study, 1..1024 each. */
static bool parse_threads(bench_ctx_t *ctx, const char *list)
{
    if (list == NULL) {
        return false;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    ctx->nthreads = 0;
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        uint64_t v = 0;
        if (!parse_u64(tok, &v) || v == 0 || v > 1024 || ctx->nthreads == BENCH_MAX_THREADS) {
            return false;
        }
        ctx->threads[ctx->nthreads++] = (unsigned)v;
    }
    return ctx->nthreads > 0;
}

static bool quick_leaves_out(const rt_allocator_t *a) { return bench_study_variant(a); }

/* Selects the allocators named in `list` (comma-separated), in the canonical order. */
static bool select_allocators(bench_ctx_t *ctx, const char *names)
{
    size_t n = 0;
    const rt_allocator_t *const *all = bench_allocators(&n);
    bool want[BENCH_MAX_SELECTED] = {false};
    const rt_allocator_t *extra[BENCH_MAX_SELECTED]; /* tlsf+mutex, aomalloc (mtpeers.h) */
    size_t nextra = 0;
    if (names == NULL) {
        for (size_t i = 0; i < n && i < BENCH_MAX_SELECTED; i++) {
            want[i] = ctx->scale != BENCH_QUICK || !quick_leaves_out(all[i]);
        }
    } else {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", names);
        for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
            size_t i = 0;
            while (i < n && strcmp(all[i]->name, tok) != 0) {
                i++;
            }
            if ((i == n || i >= BENCH_MAX_SELECTED) && bench_mt_find(tok) != NULL) {
                extra[nextra < BENCH_MAX_SELECTED ? nextra++ : nextra - 1] = bench_mt_find(tok);
                continue;
            }
            if (i == n || i >= BENCH_MAX_SELECTED) {
                const char *why = bench_peer_unavailable(tok);
                if (why != NULL) {
                    fprintf(stderr, "rtbench: allocator '%s' is unavailable: %s\n", tok, why);
                } else {
                    fprintf(stderr, "rtbench: unknown allocator '%s' (see rtbench list)\n", tok);
                }
                return false;
            }
            want[i] = true;
        }
    }
    ctx->nallocs = 0;
    for (size_t i = 0; i < n && i < BENCH_MAX_SELECTED; i++) {
        if (want[i]) {
            ctx->allocs[ctx->nallocs++] = all[i];
        }
    }
    for (size_t i = 0; i < nextra && ctx->nallocs < BENCH_MAX_SELECTED; i++) {
        ctx->allocs[ctx->nallocs++] = extra[i];
    }
    ctx->allocs_explicit = names != NULL;
    return ctx->nallocs > 0;
}

static int replay(bench_ctx_t *ctx, const char *workload)
{
    const wl_uniform_spec_t *spec = strcmp(workload, "churn") == 0   ? &wl_churn
                                    : strcmp(workload, "small") == 0 ? &wl_small
                                                                     : NULL;
    if (spec == NULL || ctx->nallocs != 1) {
        fprintf(stderr, "rtbench: replay needs churn or small and exactly one --alloc\n");
        return 2;
    }
    wl_trace_t t;
    if (!wl_uniform(&t, spec, ctx->ops != 0 ? ctx->ops : spec->default_ops, ctx->seed)) {
        return 1;
    }
    drv_instance_t in;
    if (!drv_open(&in, ctx->allocs[0], ctx->arena, ctx->arena_size, t.slots, true)) {
        fprintf(stderr, "rtbench: cannot create %s\n", ctx->allocs[0]->name);
        return 1;
    }
    uint64_t ns = 0;
    drv_outcome_t o = drv_replay_untimed(&in, &t, &ns);
    /* The blocks still live are left to the process's exit, so that a counter (callgrind) sees
     * exactly the trace's calls and no clean-up frees. */
    memset(in.slots, 0, in.nslots * sizeof *in.slots);
    drv_close(&in);
    printf("replay %s on %s: %zu ops (%zu malloc, %zu free), %zu failures, %.1f ns/op%s\n", spec->name,
           ctx->allocs[0]->name, o.done, t.nmalloc, t.nfree, o.failures, (double)ns / (double)(o.done ? o.done : 1u),
           o.interrupted ? " (interrupted)" : "");
    wl_release(&t);
    return o.interrupted ? 130 : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* allocators.csv: every allocator rtbench knows, the multi-thread study's peers included. */
static void write_allocators(const bench_ctx_t *ctx)
{
    size_t n = 0;
    const rt_allocator_t *const *reg = bench_allocators(&n);
    const rt_allocator_t *all[BENCH_MAX_SELECTED + 2];
    size_t k = 0;
    for (size_t i = 0; i < n && k < BENCH_MAX_SELECTED; i++) {
        all[k++] = reg[i];
    }
    static const char *const mt_peers[] = {"tlsf+mutex", "aomalloc"};
    for (size_t i = 0; i < 2; i++) {
        const rt_allocator_t *a = bench_mt_find(mt_peers[i]);
        if (a != NULL) {
            all[k++] = a;
        }
    }
    bench_run_allocators(ctx, all, k);
}

/* Runs the chosen experiments in order: plan.csv first, a row of experiments.csv after each,
 * step k of n in the progress line. Returns 0, 130 when interrupted, or an experiment's error. */
static int run_experiments(bench_ctx_t *ctx, const bool *run_one)
{
    const char *names[NEXPERIMENTS];
    size_t steps = 0;
    for (size_t i = 0; i < NEXPERIMENTS; i++) {
        if (run_one[i]) {
            names[steps++] = experiments[i].name;
        }
    }
    bench_run_plan(ctx, names, steps);
    write_allocators(ctx);
    int rc = 0;
    size_t step = 0;
    for (size_t i = 0; i < NEXPERIMENTS && rc == 0 && !drv_stop; i++) {
        if (!run_one[i]) {
            continue;
        }
        bench_progress_step(++step, steps);
        double t0 = now_s();
        rc = experiments[i].run(ctx);
        if (drv_stop) {
            rc = 130;
        }
        bench_progress_clear();
        bench_run_record(ctx, experiments[i].name, rc == 0, now_s() - t0);
        fprintf(stderr, "rtbench: [%zu/%zu] %s %s in %.1f s\n", step, steps, experiments[i].name,
                rc == 0     ? "done"
                : rc == 130 ? "interrupted"
                            : "failed",
                now_s() - t0);
    }
    return rc;
}

/* Parses the options after the command into ctx, *what and *alloc_names. Returns -1 to go on, or
 * the status to exit with (0 after --help, 2 for a bad argument). */
static int parse_options(int argc, char **argv, bench_ctx_t *ctx, const char **what, const char **alloc_names)
{
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--alloc") == 0 && val != NULL) {
            *alloc_names = val;
            i++;
        } else if (strcmp(arg, "--seed") == 0 && parse_u64(val, &v)) {
            ctx->seed = v;
            i++;
        } else if (strcmp(arg, "--ops") == 0 && parse_u64(val, &v) && v > 0 && v <= UINT32_MAX) {
            ctx->ops = (size_t)v;
            i++;
        } else if (strcmp(arg, "--scale") == 0 && bench_scale_parse(val, &ctx->scale)) {
            i++;
        } else if (strcmp(arg, "--csv") == 0 && val != NULL) {
            ctx->csv_dir = strcmp(val, "-") == 0 ? NULL : val;
            i++;
        } else if (strcmp(arg, "--raw") == 0) {
            ctx->raw = true;
        } else if (strcmp(arg, "--rt") == 0) {
            ctx->rt = true;
        } else if (strcmp(arg, "--threads") == 0 && parse_threads(ctx, val)) {
            i++;
        } else if (arg[0] != '-' && *what == NULL) {
            *what = arg;
        } else {
            fprintf(stderr, "rtbench: bad argument '%s'%s\n", arg,
                    val == NULL && arg[0] == '-' ? " (missing value?)" : "");
            usage(stderr);
            return 2;
        }
    }
    return -1;
}

/* Marks in run_one the experiments `run [what]` runs (all, or the clock and the one named).
 * Returns false, having said why, for an unknown experiment or a replay without a workload. */
static bool choose_experiments(const char *command, const char *what, const bench_ctx_t *ctx, bool *run_one)
{
    if (strcmp(command, "run") == 0) {
        if (what == NULL || strcmp(what, "all") == 0) {
            for (size_t i = 0; i < NEXPERIMENTS; i++) {
                run_one[i] = ctx->scale != BENCH_QUICK || experiments[i].in_quick_all;
            }
        } else {
            size_t i = 0;
            while (i < NEXPERIMENTS && strcmp(experiments[i].name, what) != 0) {
                i++;
            }
            if (i == NEXPERIMENTS) {
                fprintf(stderr, "rtbench: unknown experiment '%s' (see rtbench list)\n", what);
                return false;
            }
            run_one[0] = true; /* the clock, always */
            run_one[i] = true;
        }
    } else if (what == NULL) {
        fprintf(stderr, "rtbench: replay needs a workload (churn or small)\n");
        return false;
    }
    return true;
}

static void install_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = (int)SA_RESETHAND; /* a second Ctrl-C kills at once; no SA_RESTART: waits wake up */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* `run`: the header, the experiments chosen, the load average at the end. */
static int run_command(bench_ctx_t *ctx, const bool *run_one)
{
    bench_meta_init(&ctx->meta);
    bench_ensure_clock(ctx);
    bench_print_header(stdout, ctx, "");
    printf("allocators:");
    for (size_t i = 0; i < ctx->nallocs; i++) {
        printf(" %s", ctx->allocs[i]->name);
    }
    printf("\n");
    int rc = run_experiments(ctx, run_one);
    char load[64];
    bench_load_average(load, sizeof load);
    printf("\nload average at end (1/5/15 min): %s (at start: %s)\n", load, ctx->meta.load);
    if (rc == 130) {
        printf("interrupted: the figures above are what was measured before Ctrl-C.\n");
    }
    return rc;
}

/* `trace record|replay|size|advise|threads ...` (trace/). Returns -1 when argv is not a trace command. */
static int trace_command(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "trace") != 0) {
        return -1;
    }
    const char *sub = argc > 2 ? argv[2] : "";
    if (strcmp(sub, "replay") == 0 || strcmp(sub, "size") == 0 || strcmp(sub, "advise") == 0 ||
        strcmp(sub, "threads") == 0) {
        install_sigint(); /* the replays poll drv_stop: Ctrl-C stops them cleanly (status 130) */
    }
    int rc = strcmp(sub, "record") == 0    ? trace_record(argc - 3, argv + 3)
             : strcmp(sub, "replay") == 0  ? trace_replay(argc - 3, argv + 3)
             : strcmp(sub, "size") == 0    ? trace_size(argc - 3, argv + 3)
             : strcmp(sub, "advise") == 0  ? trace_advise(argc - 3, argv + 3)
             : strcmp(sub, "threads") == 0 ? trace_threads(argc - 3, argv + 3)
                                           : -2;
    if (rc == -2) {
        fprintf(stderr, "rtbench: trace needs record, replay, size, advise or threads\n");
        return 2;
    }
    return rc;
}

int main(int argc, char **argv)
{
    /* record first: the recorded program must not inherit the peers' re-execution (peers.c) */
    if (argc > 2 && strcmp(argv[1], "trace") == 0 && strcmp(argv[2], "record") == 0) {
        return trace_command(argc, argv);
    }
    bench_peers_init(argv); /* jemalloc, mimalloc: may re-execute rtbench once (peers.c) */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *command = argv[1];
    if (strcmp(command, "list") == 0) {
        list();
        return 0;
    }
    if (strcmp(command, "trace") == 0) {
        return trace_command(argc, argv);
    }
    if (strcmp(command, "run") != 0 && strcmp(command, "replay") != 0) {
        fprintf(stderr, "rtbench: unknown command '%s'\n", command);
        usage(stderr);
        return 2;
    }

    static bench_ctx_t ctx;
    ctx.seed = 42;
    ctx.csv_dir = "results";
    const char *what = NULL;
    const char *alloc_names = NULL;
    int status = parse_options(argc, argv, &ctx, &what, &alloc_names);
    if (status >= 0) {
        return status;
    }
    if (!select_allocators(&ctx, alloc_names)) {
        return 2;
    }
    bool run_one[NEXPERIMENTS] = {false};
    if (!choose_experiments(command, what, &ctx, run_one)) {
        return 2;
    }

    ctx.arena_size = ARENA_SIZE;
    ctx.arena = aligned_alloc(4096, ctx.arena_size);
    if (ctx.arena == NULL) {
        fprintf(stderr, "rtbench: cannot allocate the %zu MiB arena\n", ctx.arena_size >> 20);
        return 1;
    }
    install_sigint();
    int rc = strcmp(command, "replay") == 0 ? replay(&ctx, what) : run_command(&ctx, run_one);
    fflush(stdout);
    free(ctx.arena);
    return rc;
}
