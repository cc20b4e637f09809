/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/clock.h -- the cycle clock of the benchmark, and its verification.
 *
 * x86-64 (and i386): the time-stamp counter, read as
 *     start:  lfence; rdtsc; lfence
 *     end:    lfence; rdtsc; lfence
 * The leading lfence waits until every earlier instruction has completed locally (at the end
 * read: the timed call has finished), the trailing lfence keeps later instructions from starting
 * before the counter is read (at the start read: the timed call has not begun). rdtscp is not
 * used because some hosts hide it (this project's VM reports no rdtscp flag); the same sequence
 * at both ends also makes the empty region symmetric. On AMD, lfence is dispatch-serialising
 * when the OS sets MSR C001_1029[1] (Linux does on every affected CPU).
 *
 * Elsewhere: clock_gettime(CLOCK_MONOTONIC) in nanoseconds; the unit is then "ns", not cycles.
 *
 * Nothing is ever subtracted from a reading: clk_verify() measures the clock's resolution and the
 * cost of an empty timed region so that the reader can judge the raw figures, and the benchmark
 * carries a no-op allocator through the same driver as a calibration row.
 */
#ifndef RTBENCH_CLOCK_H
#define RTBENCH_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define CLK_TSC 1
static inline uint64_t clk_read_fenced(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}
#define CLK_UNIT "cycles"
#else
#define CLK_TSC 0
static inline uint64_t clk_read_fenced(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define CLK_UNIT "ns"
#endif

/* Reads before and after a timed region (see above). */
static inline uint64_t clk_start(void) { return clk_read_fenced(); }
static inline uint64_t clk_end(void) { return clk_read_fenced(); }

/* Wall-clock nanoseconds, for whole-loop timing and for calibrating the TSC. */
static inline uint64_t clk_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reads taken by each measurement of clk_verify(). */
#define CLK_SAMPLES 200000u

typedef struct clk_info {
    const char *source;     /* how a reading is taken, in words */
    const char *unit;       /* "cycles" (TSC ticks) or "ns" */
    uint64_t resolution;    /* smallest nonzero delta between two consecutive plain reads that
                                 occurs in at least 0.1 % of them */
    uint64_t smallest_step; /* smallest nonzero delta ever seen */
    uint64_t common_step;   /* the most frequent nonzero delta */
    uint64_t zero_steps;    /* consecutive reads that returned the same value */
    uint64_t empty_min;     /* empty fenced region (start; end): min, median, p99 */
    uint64_t empty_median;
    uint64_t empty_p99;
    double ticks_per_ns; /* TSC frequency in GHz, calibrated against CLOCK_MONOTONIC */
    double calib_ms;     /* length of that calibration */
    bool constant_tsc;   /* flags the CPU reports in /proc/cpuinfo (x86 Linux) */
    bool nonstop_tsc;
    bool rdtscp;
    bool flags_known; /* false when /proc/cpuinfo could not be read */
} clk_info_t;

/* Measures the clock (about 150 ms). */
void clk_verify(clk_info_t *info);

#endif /* RTBENCH_CLOCK_H */
