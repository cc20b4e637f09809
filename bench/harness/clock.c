/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/clock.c -- verification of the cycle clock (see clock.h): resolution, cost of an empty
 * timed region, frequency against CLOCK_MONOTONIC, and the invariant-TSC flags of the CPU.
 */
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static bool cpuinfo_has_flag(const char *line, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = strstr(line, flag); p != NULL; p = strstr(p + 1, flag)) {
        bool starts = p == line || p[-1] == ' ' || p[-1] == '\t';
        bool ends = p[n] == ' ' || p[n] == '\n' || p[n] == '\0';
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

static void read_flags(clk_info_t *info)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return;
    }
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "flags", 5) == 0) {
            info->flags_known = true;
            info->constant_tsc = cpuinfo_has_flag(line, "constant_tsc");
            info->nonstop_tsc = cpuinfo_has_flag(line, "nonstop_tsc");
            info->rdtscp = cpuinfo_has_flag(line, "rdtscp");
            break;
        }
    }
    fclose(f);
}

#if CLK_TSC
static inline uint64_t read_plain(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#else
static inline uint64_t read_plain(void) { return clk_read_fenced(); }
#endif

void clk_verify(clk_info_t *info)
{
    memset(info, 0, sizeof *info);
#if CLK_TSC
    info->source = "rdtsc, fenced: lfence;rdtsc;lfence before and after the timed call";
#else
    info->source = "clock_gettime(CLOCK_MONOTONIC) (no TSC on this host)";
#endif
    info->unit = CLK_UNIT;
    read_flags(info);

    uint32_t *d = malloc(CLK_SAMPLES * sizeof *d);
    if (d == NULL) {
        return;
    }
    /* Resolution: deltas between consecutive plain reads. A virtualised TSC may advance in
     * steps (this project's VM: 21 ticks) and jump oddly now and then, so the resolution is the
     * smallest delta seen in at least 0.1 % of the reads; the smallest ever is kept too. */
    uint64_t prev = read_plain();
    uint64_t smallest = UINT64_MAX;
    size_t nz = 0;
    for (size_t i = 0; i < CLK_SAMPLES; i++) {
        uint64_t now = read_plain();
        uint64_t delta = now - prev;
        prev = now;
        if (delta != 0) {
            smallest = delta < smallest ? delta : smallest;
            d[nz++] = delta > UINT32_MAX ? UINT32_MAX : (uint32_t)delta;
        }
    }
    info->smallest_step = smallest == UINT64_MAX ? 0 : smallest;
    info->zero_steps = CLK_SAMPLES - nz;
    mt_sort_u32(d, nz);
    for (size_t i = 0; i < nz;) {
        size_t j = i;
        while (j < nz && d[j] == d[i]) {
            j++;
        }
        if ((j - i) * 1000u >= CLK_SAMPLES) {
            info->resolution = d[i];
            break;
        }
        i = j;
    }
    info->common_step = mt_mode_u32(d, nz);

    /* Cost of an empty timed region, through the same macros as the driver. */
    for (size_t i = 0; i < CLK_SAMPLES; i++) {
        uint64_t t0 = clk_start();
        uint64_t t1 = clk_end();
        uint64_t delta = t1 - t0;
        d[i] = delta > UINT32_MAX ? UINT32_MAX : (uint32_t)delta;
    }
    mt_summary_t s;
    mt_summarize_u32(d, CLK_SAMPLES, &s, NULL);
    info->empty_min = s.min;
    info->empty_median = s.median;
    info->empty_p99 = s.p99;
    free(d);

    /* Frequency: ticks over ~100 ms of CLOCK_MONOTONIC. */
    uint64_t n0 = clk_now_ns();
    uint64_t c0 = clk_read_fenced();
    uint64_t n1;
    do {
        n1 = clk_now_ns();
    } while (n1 - n0 < 100000000u);
    uint64_t c1 = clk_read_fenced();
    info->calib_ms = (double)(n1 - n0) / 1e6;
    info->ticks_per_ns = (double)(c1 - c0) / (double)(n1 - n0);
}
