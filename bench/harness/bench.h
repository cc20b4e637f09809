/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/bench.h -- what the experiments of rtbench share: the run's settings, the arena, the
 * verified clock, the header every output carries (doc/benchmark.md, "How to read the report": machine, compiler, flags,
 * seed, date beside every figure), CSV files and progress on stderr.
 *
 * An experiment is a function over this context that prints its table to stdout as each
 * allocator finishes, writes one summary CSV under the CSV directory (per-op rows only under
 * raw/ when asked), and returns 0, or 130 when interrupted (drv_stop).
 */
#ifndef RTBENCH_BENCH_H
#define RTBENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clock.h"
#include "rtalloc/registry.h"

enum { BENCH_MAX_SELECTED = 64, BENCH_MAX_THREADS = 8 };

/* Scales (--scale; bench_scale_parse):
 *   quick     the default: every study's headline in about 3 minutes of rtbench on 2 cores (fewer
 *             operations, repetitions and samples; variants that no headline needs left out)
 *   standard  the parameters the default scale had before (about 35 minutes on 2 cores)
 *   paper     (alias full) the papers' operation counts and large samples (hours)
 * Code that tests `scale == BENCH_FULL` runs the standard parameters at quick too, unless the
 * experiment tunes quick itself. */
typedef enum bench_scale { BENCH_QUICK = 0, BENCH_STANDARD = 1, BENCH_FULL = 2 } bench_scale_t;

typedef struct bench_meta {
    char date[32];     /* ISO 8601, UTC */
    char machine[512]; /* CPU model, CPU count, OS */
    char compiler[128];
    char flags[256];
    char load[64]; /* /proc/loadavg's 1/5/15-minute averages when the run started */
} bench_meta_t;

typedef struct bench_ctx {
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t nallocs;
    uint64_t seed;
    size_t ops; /* 0: each workload's default */
    bench_scale_t scale;
    const char *csv_dir;                 /* NULL: no CSV */
    bool raw;                            /* per-op CSVs under csv_dir/raw/ */
    bool allocs_explicit;                /* --alloc given (else allocs is every allocator) */
    bool rt;                             /* --rt: the multi-thread study again under SCHED_FIFO, memory locked */
    unsigned threads[BENCH_MAX_THREADS]; /* --threads of the multi-thread study (0 entries: 1,2,16) */
    size_t nthreads;
    void *arena; /* the heaps' buffer */
    size_t arena_size;
    clk_info_t clock;
    bool clock_verified;
    bench_meta_t meta;
} bench_ctx_t;

typedef struct bench_experiment {
    const char *name;
    const char *description;
    int (*run)(bench_ctx_t *ctx);
    bool in_quick_all; /* part of `run all` at quick scale (inscount, hardening are not: by name) */
} bench_experiment_t;

/* Experiments (exp_*.c). */
int exp_clock(bench_ctx_t *ctx);
int exp_churn(bench_ctx_t *ctx);
int exp_small(bench_ctx_t *ctx);
int exp_memfrag(bench_ctx_t *ctx);
int exp_inscount(bench_ctx_t *ctx);
int exp_hardening(bench_ctx_t *ctx);
int exp_masmano(bench_ctx_t *ctx);
int exp_memstress(bench_ctx_t *ctx);
int exp_worst(bench_ctx_t *ctx);
int exp_paths(bench_ctx_t *ctx);
int exp_stellwag(bench_ctx_t *ctx);
int exp_prio(bench_ctx_t *ctx);
int exp_fma(bench_ctx_t *ctx);
int exp_trace(bench_ctx_t *ctx);
int exp_layout(bench_ctx_t *ctx);

/* exp_trace.c's programs, for exp_layout.c: how many, the name of the i-th, and its recording
 * into *file (beside the CSVs as trace_<name>.rtt, else a temporary file the caller removes);
 * why says why it was not recorded (empty when it was). */
size_t trace_programs(void);
const char *trace_program_name(size_t i);
void trace_program_record(const bench_ctx_t *ctx, size_t i, char *file, size_t file_len, char *why, size_t len);

/* --- output.c -------------------------------------------------------------------------------- */

void bench_meta_init(bench_meta_t *meta);

/* The 1/5/15-minute load averages now ("unknown" where /proc/loadavg is missing). Other work on
 * the machine shows in every timing: the header carries the load so a reader can judge it. */
void bench_load_average(char *out, size_t size);

/* Prints the run's header, each line starting with `prefix` ("# " in CSV files). */
void bench_print_header(FILE *f, const bench_ctx_t *ctx, const char *prefix);

/* Opens CSV_DIR/name (CSV_DIR/raw/name when raw), creating the directories, and writes the
 * header as comment lines. Returns NULL when CSV output is off or the file cannot be opened (a
 * message goes to stderr). Close with bench_csv_close, which reports the path on stderr.
 * The file is written as `name`.tmp and renamed to `name` by bench_csv_close; when the run was
 * interrupted (drv_stop) the .tmp is removed instead, so a CSV under its own name is always
 * complete, and a previous run's file of that name is left as it was. `path` receives the final
 * name. */
FILE *bench_csv_open(const bench_ctx_t *ctx, const char *name, bool raw, char *path, size_t path_size);
void bench_csv_close(FILE *f, const char *path);

/* Progress on stderr: "[3/9] masmano  tlsf  phase  37%" (step k of n of the run, set by
 * bench_progress_step; "[experiment]" before). Rewrites one line on a terminal; otherwise prints
 * a line only when a phase starts. */
void bench_progress_step(size_t step, size_t steps);
void bench_progress(const char *experiment, const char *allocator, const char *phase, double done);
void bench_progress_clear(void);

/* The scale's name as written in outputs ("quick", "standard", "paper"), and --scale's parser
 * (quick; standard; paper or full). */
const char *bench_scale_name(bench_scale_t scale);
bool bench_scale_parse(const char *name, bench_scale_t *scale);

/* Writes `s` as one CSV field, quoted (and its quotes doubled) when it holds a comma, a quote or
 * a line break. */
void bench_csv_field(FILE *f, const char *s);

/* The run's bookkeeping under the CSV directory, for the report (nothing when CSV output is off):
 *   plan.csv         step,experiment,scale           written at start: what this run will do
 *   experiments.csv  experiment,status,scale,seconds  started empty, one row appended after each
 *                                                     experiment (status complete or interrupted)
 *   allocators.csv   name,family,thread_safe,malloc_bound,free_bound,alignment,ours
 *                    every allocator rtbench knows (registry, peers, multi-thread peers); ours 1
 *                    for the library's registry. */
void bench_run_plan(const bench_ctx_t *ctx, const char *const *experiments, size_t n);
void bench_run_record(const bench_ctx_t *ctx, const char *experiment, bool complete, double seconds);
void bench_run_allocators(const bench_ctx_t *ctx, const rt_allocator_t *const *all, size_t n);

/* Verifies the clock once per run (clock.h) and prints the verification. */
void bench_ensure_clock(bench_ctx_t *ctx);

/* True when the allocator named `name` is among the selected ones. */
bool bench_selected(const bench_ctx_t *ctx, const char *name);

#endif /* RTBENCH_BENCH_H */
