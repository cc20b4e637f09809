/* SPDX-License-Identifier: MIT */
/*
 * trace/replay.h -- replaying and sizing recorded traces, the parts that
 * `rtbench trace replay|size` (replay.c) and the experiment `trace` (studies/exp_trace.c) share.
 *
 * Every stream of a trace file is replayed on its own, single-threaded and deterministic, on a
 * fresh instance of each allocator:
 *   replay  failures (allocating calls that returned NULL where the recording got memory),
 *           exact instructions per call by ptrace single-stepping a sample (harness/inscount),
 *           ns per call of untimed whole-stream loops (several repetitions, allocators
 *           interleaved, the median), F at the peak (frag.h's definition: the allocator's
 *           watermark over the stream's live peak, minus 1, on the smallest heap that fits), and
 *           the worst call counted.
 *           Heap of a library allocator: max(64 MiB, 8 x the stream's live peak), touched once.
 *           Both commands refuse, before mapping anything, a trace whose replay would take more
 *           than --max-memory (default: half of physical memory; rp_need).
 *   size    the smallest buffer (bytes passed to create) on which every call that got memory in
 *           the recording gets memory again, by bisection (rp_size), beside the live peak, and
 *           the worst-case bound of the power-of-two allocators (rp_bound).
 */
#ifndef RTBENCH_REPLAY_H
#define RTBENCH_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtalloc/registry.h"
#include "trace.h"

enum { RP_KINDS = 5 }; /* malloc, free, realloc, calloc, memalign */

extern const char *const rp_kind_name[RP_KINDS];

/* The live peak of a stream: the most requested bytes live at once (a realloc replaces its
 * slot's size). Computed from the ops (the recording's peak_live is not trusted blindly). */
uint64_t rp_peak_live(const wl_trace_t *t);

/* Whether the whole stream fits in a fresh instance of a (which has create) over buffer[0..size):
 * create succeeds and every allocating call not flagged WL_OP_FAILED gets memory. *fail_op
 * (may be NULL) receives the first op that failed (SIZE_MAX when create failed). */
bool rp_fits(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, size_t *fail_op);

typedef struct rp_size_opts {
    size_t res_abs; /* bisection stops when hi - lo <= max(res_abs, hi * res_rel) */
    double res_rel;
    size_t cap;      /* the largest size tried (the buffer's size) */
    unsigned checks; /* sizes above the found one checked for monotonicity */
    /* whether the stream fits a fresh instance over buffer[0..size); NULL: rp_fits (the
     * single-threaded replay). A threaded replay passes its own (threads.h) */
    bool (*fits)(const rt_allocator_t *a, void *buffer, size_t size, const void *context);
    const void *fits_context;
} rp_size_opts_t;

typedef struct rp_size {
    bool found;        /* some size <= cap fits */
    size_t heap;       /* the smallest size found to fit */
    size_t below;      /* the largest size found not to fit (0: none tried) */
    size_t resolution; /* the bisection's last step: the minimum is in (below, heap] if monotone */
    unsigned replays;  /* replays made */
    bool verified;     /* a second replay at `heap` fit too */
    unsigned nonmono;  /* sizes above heap that did not fit (checked: opts.checks) */
    size_t nonmono_at; /* the first of them */
    bool interrupted;
} rp_size_t;

/* Bisection for the smallest fitting size of a over buffer[0..opts->cap). */
void rp_size(const rt_allocator_t *a, void *buffer, const wl_trace_t *t, const rp_size_opts_t *opts, rp_size_t *out);

/* The worst-case bound of a's memory for any sequence with the stream's live peak and block
 * range (buddy and the wait-free trees: Knuth's buddy bound, see replay.c). False when a has no
 * bound we defend; else the bound in bytes of managed area and the formula, with its values. */
bool rp_bound(const rt_allocator_t *a, const wl_trace_t *t, double *bytes, char *formula, size_t len);

typedef struct rp_kind_stat {
    size_t n; /* calls counted */
    double mean;
    uint32_t p99, max;
} rp_kind_stat_t;

typedef struct rp_replay {
    size_t failures; /* beyond those flagged WL_OP_FAILED */
    size_t flagged;  /* ops flagged WL_OP_FAILED in the recording */
    /* instructions (ptrace sample) */
    bool ic_ok;
    size_t ic_stride; /* the sample's stride */
    rp_kind_stat_t all, kind[RP_KINDS];
    size_t worst_op; /* the counted call with the most instructions */
    uint32_t worst_kind, worst_size, worst_count;
    /* time */
    double ns_per_call; /* median over the repetitions; 0 unmeasured */
    /* fragmentation */
    bool f_known, f_approx;
    uint64_t peak_memory;
    double f; /* F in % */
    bool interrupted;
} rp_replay_t;

/* The per-kind instruction columns of the CSVs: for malloc, free, realloc, calloc, memalign in
 * that order, calls counted, mean, p99, max ("<kind>_calls,<kind>_mean,<kind>_p99,<kind>_max");
 * rp_write_kinds writes r's values (empty where a kind had no counted call), each field followed
 * by a comma. */
extern const char rp_kinds_header[];
void rp_write_kinds(FILE *csv, const rp_replay_t *r);
/* The measured columns shared by trace_replay.csv and the experiment's trace.csv: ic_stride,
 * ins_mean, ins_p99, ins_max, the kinds (rp_write_kinds), ns_per_call, the ratio to glibc (with
 * ratio_digits decimals), f_percent, f_approx, worst_op, worst_kind, worst_size, worst_ins and
 * the newline. */
void rp_csv_measures(FILE *csv, const rp_replay_t *r, double ns, double glibc_ns, int ratio_digits);

/* Instructions per call of a fixed sample of the stream: `sample` calls spread evenly over it
 * (every max(1, nops / sample)-th op; 0: every call), the same ops for every allocator (an op
 * an allocator cannot count -- flagged failed, or a kind it lacks -- moves the sample to the next
 * op). progress (may be NULL) receives the share of the stream done. */
void rp_count(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, size_t sample, rp_replay_t *r,
              void (*progress)(void *, double), void *context);
/* The stride rp_count uses for `sample` calls of t. */
size_t rp_sample_stride(const wl_trace_t *t, size_t sample);
/* Whether a percentile p (99 or 99.9) is supported by n samples: at least 10 lie above it. */
bool rp_percentile_ok(size_t n, double p);

/* F of allocator a on t (the same definition as `trace size`'s ratio and the studies' F): the
 * smallest heap found to run the stream (rp_size; `heap`) over the stream's live peak, minus 1,
 * in %. Not known for the system peers (no heap of their own) or when no heap was found. */
void rp_frag(const rt_allocator_t *a, const rp_size_t *s, const wl_trace_t *t, rp_replay_t *r);

/* Runs job(k, result_k, progress_k, context) for k = 0 .. n-1 in worker processes, at most
 * `workers` at once (each result_size bytes, zeroed before; results in shared memory), then
 * row(k, result_k, context) in order of k as soon as jobs 0..k are done, and a progress line on
 * stderr (`what`, the jobs done and running, the share done and the time left) at least every
 * second. A worker that dies leaves its result zeroed and *crashed_k true. False when
 * interrupted (drv_stop: the workers are stopped). */
typedef void (*rp_job_fn)(size_t k, void *result, volatile double *progress, void *context);
typedef void (*rp_row_fn)(size_t k, const void *result, bool crashed, void *context);
bool rp_run_jobs(size_t n, size_t result_size, unsigned workers, rp_job_fn job, rp_row_fn row, void *context,
                 const char *what);
/* Workers for jobs that each may take `need` bytes, within max_memory and the CPUs online. */
unsigned rp_workers(uint64_t need, uint64_t max_memory, unsigned requested);

/* ns per call of allocs[0..n) on t: reps untimed replays each, the allocators interleaved within
 * each repetition (the order rotated by one each repetition); ns[k] receives allocator k's median
 * (0 where it could not run) and failures[k] the failures of its first replay; progress(context,
 * done) after each replay (may be NULL). */
void rp_time(const rt_allocator_t *const *allocs, size_t n, void *buffer, size_t size, const wl_trace_t *t,
             unsigned reps, double *ns, size_t *failures, void (*progress)(void *, double), void *context);

/* The heap a library allocator replays on: max(64 MiB, 8 x live peak), rounded up to 1 MiB (at
 * most SIZE_MAX rounded down to 1 MiB: callers check rp_need first). */
size_t rp_replay_heap(const wl_trace_t *t);

/* What replaying or sizing a stream may take of the machine at once, worked out from the
 * stream's own figures before anything is mapped (bytes; sums and products saturate at
 * UINT64_MAX, so a hostile trace cannot wrap them to a small figure):
 *   heap    the replay heap (rp_replay_heap): mapped, and written whole, by `trace replay`;
 *   replay  2 x heap (the instruction counter's forked child writes into its own copy of the
 *           heap's pages), + peak + largest when an allocator without a heap of its own (the
 *           system peers) replays the stream: its live blocks, and the block a realloc or a call
 *           flagged failed gets beside them;
 *   size    4 x heap: the buffer `trace size` maps for the bisection, whose largest try may write
 *           all of it; + peak + largest: glibc's footprint replay in a child. */
typedef struct rp_need {
    uint64_t peak;    /* the live peak (rp_peak_live) */
    uint64_t largest; /* the largest single request, calls flagged WL_OP_FAILED included */
    uint64_t heap, replay, size;
} rp_need_t;
void rp_need(const wl_trace_t *t, bool peers, rp_need_t *need);

/* Parses a memory size: decimal digits, optionally followed by K, M, G or T (powers of 1024,
 * either case). False on anything else, on 0 and on a value above UINT64_MAX. */
bool rp_parse_size(const char *s, uint64_t *bytes);

/* "1.5 GiB": bytes in the largest binary unit that leaves at least 1 (B, KiB ... EiB). */
void rp_format_size(char *out, size_t len, uint64_t bytes);

/* Synthetic realloc-heavy traces (tests and development): one stream of `nops` ops over `slots`
 * slots, every kind of workload.h: mallocs, callocs, memaligns (16..4096), reallocs growing and
 * shrinking, frees; and one op flagged WL_OP_FAILED (a malloc of 3 GiB that got nothing).
 * Deterministic in seed. False when out of memory. */
bool rp_synth(tr_file_t *f, uint64_t seed, size_t nops, uint32_t slots);

/* Fills the counters of t from its ops as trace.c checks them: nmalloc (allocating calls not
 * flagged WL_OP_FAILED), nfree, peak_live. */
void rp_finish_trace(wl_trace_t *t);

#endif /* RTBENCH_REPLAY_H */
