/* SPDX-License-Identifier: MIT */
/*
 * step_sched.h -- the step scheduler of the interleaving tests (wf_interleave.c, mc_interleave.c):
 * each operation runs on a thread of its own, and a step hook of the code under test calls
 * step_park before every step on shared state; the scheduler (the main thread) lets one parked
 * operation take one step at a time (step_advance), so a schedule -- the sequence of operations
 * chosen at each step -- always gives the same execution.
 *
 * Included once per test program (static state). S.target is the instance whose steps park (the
 * hook ignores other instances and every thread that is not an operation).
 */
#ifndef RT_TESTS_STEP_SCHED_H
#define RT_TESTS_STEP_SCHED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define MAX_OPS 3

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; /* the scheduler waits here */
static pthread_cond_t cv_op[MAX_OPS] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                        PTHREAD_COND_INITIALIZER}; /* op j waits here */

static struct {
    const void *target;
    unsigned parks[MAX_OPS];
    bool parked[MAX_OPS], go[MAX_OPS], done[MAX_OPS];
    int step[MAX_OPS]; /* the step op j is parked before */
    size_t node[MAX_OPS];
} S;

static _Thread_local int my_op = -1; /* the operation this thread runs; -1: not an operation */

/* Parks the calling operation before `step` (on `node`) until the scheduler lets it take it. */
static void step_park(int step, size_t node)
{
    pthread_mutex_lock(&mu);
    S.parked[my_op] = true;
    S.parks[my_op]++;
    S.step[my_op] = step;
    S.node[my_op] = node;
    pthread_cond_signal(&cv);
    while (!S.go[my_op]) {
        pthread_cond_wait(&cv_op[my_op], &mu);
    }
    S.go[my_op] = false;
    S.parked[my_op] = false;
    pthread_mutex_unlock(&mu);
}

/* Lets op j take its pending step and run to its next step (or its end). */
static void step_advance(unsigned j)
{
    pthread_mutex_lock(&mu);
    unsigned p0 = S.parks[j];
    S.go[j] = true;
    pthread_cond_signal(&cv_op[j]);
    while (S.parks[j] == p0 && !S.done[j]) {
        pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
}

#endif /* RT_TESTS_STEP_SCHED_H */
