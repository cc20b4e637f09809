/* SPDX-License-Identifier: MIT */
/*
 * trace/threads.h -- a recorded threaded program replayed with one thread per recorded
 * thread (`rtbench trace threads FILE`, threads.c).
 *
 * A stream of a trace file of format version 2 holds, per op, the thread that made it, and its
 * ops in the order the calls completed in the recording (trace.c). The replay gives each recorded
 * thread a thread of its own that makes that thread's calls, in their recorded order, on ONE
 * shared instance of a thread-safe allocator; a free (or realloc) of a block another thread
 * allocated is made by the freeing thread, so cross-thread frees are replayed as they happened.
 *
 * Two modes:
 *   ordered     the calls in the recorded global order, one at a time, each made by its own
 *               thread (a baton passed between the threads): the interleaving of the recording,
 *               deterministic, used for the heap needed (the smallest buffer on which every call
 *               that got memory in the recording gets it again: bisection, rp_size)
 *   concurrent  every thread runs free; a call waits only for the calls that must come before it
 *               in any run of the program -- the earlier calls on the same block (its allocation,
 *               its reallocs) -- so the threads contend as the program's did; used for the time
 *               per call (each call timed with the benchmark's fenced clock, clock.h)
 * Slots are renamed to objects first (one per allocation), so a slot the recording reused for
 * another thread's block is no dependency.
 */
#ifndef RTBENCH_THREADS_H
#define RTBENCH_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rtalloc/registry.h"
#include "trace.h"

/* A stream prepared for a threaded replay. */
typedef struct rp_plan {
    wl_trace_t trace; /* the stream's ops with slots renamed to objects (trace.slots: objects) */
    uint32_t nthreads;
    const uint32_t *thread; /* per op (the stream's) */
    uint32_t *seq;          /* per op: its place among the ops on its object */
    size_t *start;          /* per thread t: its ops are order[start[t] .. start[t + 1]) */
    size_t *order;          /* op indices grouped by thread, each group in stream order */
    uint64_t cross;         /* frees and reallocs of a block another thread allocated */
    uint64_t peak;          /* the stream's live peak (rp_peak_live) */
} rp_plan_t;

/* The most threads a replay starts. */
enum { RP_MAX_THREADS = 1024 };

/* Prepares st (which must have per-op threads: st->thread != NULL). The replay starts one thread
 * per recorded thread up to the highest that made a call (p->nthreads), whatever st->threads
 * claims. False when out of memory, when an op's thread is not below st->threads, or when more
 * than RP_MAX_THREADS threads made calls. */
bool rp_plan_make(const tr_stream_t *st, rp_plan_t *p);
void rp_plan_free(rp_plan_t *p);

typedef enum { RP_ORDERED, RP_CONCURRENT } rp_thr_mode_t;

typedef struct rp_thr_run {
    bool ran;         /* create succeeded and every thread started */
    bool interrupted; /* Ctrl-C (drv_stop) */
    size_t failures;  /* allocating calls that got NULL where the recording got memory */
    uint64_t calls;   /* calls made */
    double wall_ns;   /* the whole replay */
    /* timed runs only: each call's clock reading (CLK_UNIT of clock.h) */
    double mean; /* per call */
    uint32_t p99, max;
    double ticks_per_ns; /* the clock against CLOCK_MONOTONIC over the run (1 where the unit is ns) */
} rp_thr_run_t;

/* Replays p on a fresh instance of a (over buffer[0..size) when it has create), one thread per
 * recorded thread. A thread gives its context back (the descriptor's thread_exit) after its last
 * call. Returns out->ran. */
bool rp_threaded(const rt_allocator_t *a, void *buffer, size_t size, const rp_plan_t *p, rp_thr_mode_t mode, bool timed,
                 rp_thr_run_t *out);

/* rp_size's fits callback: an ordered replay of the plan (context) with no failure. */
bool rp_threaded_fits(const rt_allocator_t *a, void *buffer, size_t size, const void *context);

/* The allocators `trace threads` measures by default (thread-safe ones a user would compare). */
extern const char rp_threads_default[];
/* The names of a comma-separated list, looked up (the registry, the peers, the multi-thread
 * peers); an unavailable peer is left out with a line, as is one that is not thread-safe. 0 when
 * a name is unknown. (threads_cli.c) */
size_t rp_threads_pick(const char *names, const rt_allocator_t **out, size_t cap);

typedef struct rp_thr_opts {
    unsigned reps;       /* timed concurrent runs; their median */
    size_t max_ops;      /* only the first max_ops ops of the stream (0: all) */
    uint64_t max_memory; /* the heap mapped may not be larger */
    const char *program; /* the CSV's first column ("-" for a file) */
} rp_thr_opts_t;

/* trace_threads.csv's header, without the newline. */
extern const char rp_threads_csv_header[];

/* Stream si (threaded) against the allocators: a table on stdout, a CSV row per allocator (csv
 * may be NULL). False when the heap cannot be mapped or memory is lacking. (threads_cli.c) */
bool rp_threads_stream(const tr_stream_t *st, size_t si, const rp_thr_opts_t *o, const rt_allocator_t *const *allocs,
                       size_t na, FILE *csv);

/* `rtbench trace threads FILE [--alloc LIST] [--csv DIR] [--reps N] [--max-memory SIZE]` */
int trace_threads(int argc, char **argv);

#endif /* RTBENCH_THREADS_H */
