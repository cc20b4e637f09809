/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/metrics.c -- percentiles (nearest rank), mean, sd, c_v; see metrics.h.
 */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a;
    uint32_t y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

void mt_sort_u32(uint32_t *v, size_t n)
{
    if (n < 2) {
        return;
    }
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (tmp == NULL) {
        qsort(v, n, sizeof *v, cmp_u32);
        return;
    }
    /* Four passes of 8 bits; a pass whose digit is the same for all values is skipped. */
    uint32_t *src = v;
    uint32_t *dst = tmp;
    for (unsigned shift = 0; shift < 32; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) {
            count[(src[i] >> shift) & 0xFFu]++;
        }
        if (count[(src[0] >> shift) & 0xFFu] == n) {
            continue;
        }
        size_t pos = 0;
        for (size_t d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++) {
            dst[count[(src[i] >> shift) & 0xFFu]++] = src[i];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) {
        memcpy(v, src, n * sizeof *v);
    }
    free(tmp);
}

uint32_t mt_percentile(const uint32_t *sorted, size_t n, double p)
{
    double rank = ceil(p / 100.0 * (double)n);
    size_t r = rank < 1.0 ? 1u : (size_t)rank;
    if (r > n) {
        r = n;
    }
    return sorted[r - 1u];
}

void mt_summarize_u32(const uint32_t *v, size_t n, mt_summary_t *s, uint32_t *sorted_out)
{
    memset(s, 0, sizeof *s);
    if (n == 0) {
        return;
    }
    uint32_t *sorted = sorted_out != NULL ? sorted_out : malloc(n * sizeof *sorted);
    if (sorted == NULL) {
        return;
    }
    memcpy(sorted, v, n * sizeof *sorted);
    mt_sort_u32(sorted, n);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += (double)v[i];
    }
    double mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)v[i] - mean;
        ss += d * d;
    }
    s->n = n;
    s->mean = mean;
    s->sd = sqrt(ss / (double)n);
    s->cv = mean > 0.0 ? s->sd / mean : 0.0;
    s->min = sorted[0];
    s->median = mt_percentile(sorted, n, 50.0);
    s->p90 = mt_percentile(sorted, n, 90.0);
    s->p99 = mt_percentile(sorted, n, 99.0);
    s->p999 = mt_percentile(sorted, n, 99.9);
    s->max = sorted[n - 1u];
    if (sorted_out == NULL) {
        free(sorted);
    }
}

uint32_t mt_mode_u32(uint32_t *v, size_t n)
{
    if (n == 0) {
        return 0;
    }
    mt_sort_u32(v, n);
    uint32_t best = v[0];
    size_t best_run = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j] == v[i]) {
            j++;
        }
        if (j - i > best_run) {
            best_run = j - i;
            best = v[i];
        }
        i = j;
    }
    return best;
}

void mt_min_into(uint32_t *dst, const uint32_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dst[i] = src[i] < dst[i] ? src[i] : dst[i];
    }
}

void mt_write_cdf(FILE *f, const char *alloc, const char *op, const uint32_t *sorted, size_t n)
{
    if (f == NULL || n == 0) {
        return;
    }
    double q[256];
    size_t nq = 0;
    for (int i = 0; i <= 198; i++) {
        q[nq++] = (double)i * 0.5;
    }
    for (int i = 991; i <= 999; i++) {
        q[nq++] = (double)i / 10.0;
    }
    for (int i = 9991; i <= 9999; i++) {
        q[nq++] = (double)i / 100.0;
    }
    q[nq++] = 100.0;
    for (size_t i = 0; i < nq; i++) {
        uint32_t v = q[i] <= 0.0 ? sorted[0] : mt_percentile(sorted, n, q[i]);
        fprintf(f, "%s,%s,%.2f,%u\n", alloc, op, q[i], v);
    }
}
