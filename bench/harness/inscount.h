/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/inscount.h -- exact instruction counts of single allocator calls, by ptrace
 * single-stepping (Masmano et al. 2006, section 4: "single-step the call").
 *
 * How: the workload runs in a forked child that asks to be traced (PTRACE_TRACEME). Right before
 * a sampled call the child stores the address of the function it is about to call -- the
 * descriptor's malloc or free, i.e. what a caller pays through the descriptor, wrapper included
 * (for the library's heaps a jump into rt_<index>_malloc/free) -- in the global ic_target and
 * executes int3. The parent, stopped on that SIGTRAP, reads ic_target (PTRACE_PEEKDATA: the
 * child's address space is a copy of its own), single-steps the call setup until rip reaches the
 * target (not counted), reads the return address at [rsp] and rsp itself, then counts every
 * instruction stepped until rip is back at that return address with rsp = entry rsp + 8 (the
 * ret is counted; instructions in the kernel during a syscall are not). The child then runs on
 * at full speed to the next sampled call.
 *
 * Cost: one single step takes ~20-40 us, so quick runs count a sample: every stride-th
 * operation over the whole run, within a budget of steps; when the running mean of the sample
 * predicts the budget would run out, the stride widens so the sample still spans the whole run
 * (the result says the stride it ended with). mem_frag's malloc(120) is counted for every N.
 *
 * Linux x86-64 only; elsewhere ic_supported() is false and nothing is counted.
 */
#ifndef RTBENCH_INSCOUNT_H
#define RTBENCH_INSCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.h"
#include "rtalloc/registry.h"
#include "workload.h"

#if defined(__linux__) && defined(__x86_64__)
#define IC_SUPPORTED 1
#else
#define IC_SUPPORTED 0
#endif

static inline bool ic_supported(void) { return IC_SUPPORTED != 0; }

typedef struct ic_sample {
    uint32_t op;    /* index of the operation in its trace */
    uint32_t kind;  /* wl_kind_t */
    uint32_t tag;   /* mem_frag: N; with plan.classify: the path (paths.h) */
    uint32_t count; /* instructions from the function's entry to its return, ret included */
} ic_sample_t;

typedef struct ic_plan {
    size_t stride;        /* count op i when i % stride == stride - 1 */
    uint64_t step_budget; /* single steps allowed in one replay; 0: unlimited */
    size_t max_samples;
    /* Boundary-tag heaps (paths.h): each sample's tag is the path the call took, as
     * wl_trace_t.expect writes it (0: not told), decided from untraced looks at the heap
     * before and after the call. */
    bool classify;
    /* Optional: called in the child on the fresh instance before the replay (untraced), e.g. to
     * add pools; the replay fails (the child exits 2) when it returns false. */
    bool (*prepare)(const rt_allocator_t *a, void *handle, void *context);
    void *prepare_context;
} ic_plan_t;

typedef struct ic_result {
    ic_sample_t *samples; /* malloc'ed; n of them */
    size_t n;
    uint64_t steps;      /* single steps taken, call setup included */
    size_t final_stride; /* the stride at the end of the run (>= plan stride) */
    bool widened;        /* the budget made the stride widen */
    bool interrupted;    /* drv_stop was set */
    bool ok;
    char error[160];
} ic_result_t;

typedef void (*ic_progress_fn)(void *context, double done);

/* Replays `t` against a fresh instance of `a` (over buffer/size) in a traced child and counts
 * the sampled calls. */
bool ic_count_trace(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, const ic_plan_t *plan,
                    ic_result_t *r, ic_progress_fn progress, void *context);

/* mem_frag for N = 1..nmax, each on a fresh instance: counts every malloc(120) (tag = N). */
bool ic_count_memfrag(const rt_allocator_t *a, void *buffer, size_t size, uint32_t nmax, ic_result_t *r,
                      ic_progress_fn progress, void *context);

/* The counter checked on code of known length: a 5-instruction function and a loop of
 * 2 * 1000 + 3 instructions. Returns false (and the counts found) when either is wrong. */
typedef struct ic_selftest {
    uint32_t known5, loop1000; /* counted */
    uint32_t expect5, expect_loop;
    bool ok;
} ic_selftest_t;
bool ic_selftest(ic_selftest_t *st);

void ic_result_free(ic_result_t *r);

#endif /* RTBENCH_INSCOUNT_H */
