/*
 * bench/harness/bench.h -- what the experiments of rtbench share: the run's settings, the arena, the
 * verified clock, the header every output carries (STYLE rule 11: machine, compiler, flags,
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

typedef enum bench_scale { BENCH_QUICK = 0, BENCH_FULL = 1 } bench_scale_t;

typedef struct bench_meta {
    char date[32];      /* ISO 8601, UTC */
    char machine[512];  /* CPU model, CPU count, OS */
    char compiler[128];
    char flags[256];
    char load[64];      /* /proc/loadavg's 1/5/15-minute averages when the run started */
} bench_meta_t;

typedef struct bench_ctx {
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t nallocs;
    uint64_t seed;
    size_t ops;          /* 0: each workload's default */
    bench_scale_t scale;
    const char *csv_dir; /* NULL: no CSV */
    bool raw;            /* per-op CSVs under csv_dir/raw/ */
    bool allocs_explicit; /* --alloc given (else allocs is every allocator) */
    bool rt;             /* --rt: the multi-thread study again under SCHED_FIFO, memory locked */
    unsigned threads[BENCH_MAX_THREADS]; /* --threads of the multi-thread study (0 entries: 1,2,16) */
    size_t nthreads;
    void *arena;         /* the heaps' buffer */
    size_t arena_size;
    clk_info_t clock;
    bool clock_verified;
    bench_meta_t meta;
} bench_ctx_t;

typedef struct bench_experiment {
    const char *name;
    const char *description;
    int (*run)(bench_ctx_t *ctx);
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
int exp_stellwag(bench_ctx_t *ctx);
int exp_fma(bench_ctx_t *ctx);

/* --- output.c -------------------------------------------------------------------------------- */

void bench_meta_init(bench_meta_t *meta);

/* The 1/5/15-minute load averages now ("unknown" where /proc/loadavg is missing). Other work on
 * the machine shows in every timing: the header carries the load so a reader can judge it. */
void bench_load_average(char *out, size_t size);

/* Prints the run's header, each line starting with `prefix` ("# " in CSV files). */
void bench_print_header(FILE *f, const bench_ctx_t *ctx, const char *prefix);

/* Opens CSV_DIR/name (CSV_DIR/raw/name when raw), creating the directories, and writes the
 * header as comment lines. Returns NULL when CSV output is off or the file cannot be opened (a
 * message goes to stderr). Close with bench_csv_close, which reports the path on stderr. */
FILE *bench_csv_open(const bench_ctx_t *ctx, const char *name, bool raw, char *path, size_t path_size);
void bench_csv_close(FILE *f, const char *path);

/* Progress on stderr: "[experiment] allocator: phase  37%". Rewrites one line on a terminal;
 * otherwise prints a line only when a phase starts. */
void bench_progress(const char *experiment, const char *allocator, const char *phase, double done);
void bench_progress_clear(void);

/* Verifies the clock once per run (clock.h) and prints the verification. */
void bench_ensure_clock(bench_ctx_t *ctx);

/* True when the allocator named `name` is among the selected ones. */
bool bench_selected(const bench_ctx_t *ctx, const char *name);

#endif /* RTBENCH_BENCH_H */
