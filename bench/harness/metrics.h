/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/metrics.h -- summary statistics of per-operation samples.
 *
 * Percentiles are nearest-rank: the p-th percentile of n sorted values is the value at rank
 * ceil(p/100 * n) (1-based), so every reported percentile is a value that was measured. The
 * standard deviation is the population one; c_v = sd / mean.
 */
#ifndef RTBENCH_METRICS_H
#define RTBENCH_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct mt_summary {
    size_t n;
    double mean, sd, cv;
    uint64_t min, median, p90, p99, p999, max;
} mt_summary_t;

/* Summarises v[0..n). If sorted_out is not NULL it receives a sorted copy (n values, caller's
 * storage); otherwise a temporary copy is sorted. n == 0 gives an all-zero summary. */
void mt_summarize_u32(const uint32_t *v, size_t n, mt_summary_t *s, uint32_t *sorted_out);

/* Nearest-rank percentile p (0..100) of sorted[0..n), n > 0. */
uint32_t mt_percentile(const uint32_t *sorted, size_t n, double p);

/* The most frequent value of v[0..n) (smallest on ties); 0 when n == 0. Sorts v in place. */
uint32_t mt_mode_u32(uint32_t *v, size_t n);

/* Sorts v[0..n) ascending (LSD radix sort, O(n); falls back to qsort when no scratch memory). */
void mt_sort_u32(uint32_t *v, size_t n);

/* dst[i] = min(dst[i], src[i]): Masmano's minimum of two identical runs. */
void mt_min_into(uint32_t *dst, const uint32_t *src, size_t n);

/* Writes the CDF of sorted[0..n) to f as CSV rows "<alloc>,<op>,<percentile>,<value>": every
 * 0.5 %, then 99.1..99.9 by 0.1 and 99.91..99.99 by 0.01, then 100 (the minimum at 0). Nothing
 * when f is NULL or n == 0. The format of churn_cdf.csv, small_cdf.csv and fma_cdf.csv. */
void mt_write_cdf(FILE *f, const char *alloc, const char *op, const uint32_t *sorted, size_t n);

#endif /* RTBENCH_METRICS_H */
