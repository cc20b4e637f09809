/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_clock.c -- experiment "clock": the verification of the cycle clock, printed and
 * written to clock.csv. Every other experiment runs it first (once per run).
 */
#include "bench.h"

static const char *yes_no(bool known, bool v) { return !known ? "unknown" : v ? "yes" : "no"; }

int exp_clock(bench_ctx_t *ctx)
{
    bench_ensure_clock(ctx);
    const clk_info_t *c = &ctx->clock;
    printf("\n== clock verification ==\n");
    printf("  source              %s\n", c->source);
    printf("  unit                %s\n", c->unit);
    printf("  frequency           %.4f GHz (TSC ticks per ns, against CLOCK_MONOTONIC over %.1f ms)\n", c->ticks_per_ns,
           c->calib_ms);
    printf("  resolution          %llu ticks: smallest step between consecutive reads seen in >= 0.1%% of them\n"
           "                      (most common step %llu; smallest ever %llu; equal consecutive reads %llu of %u)\n",
           (unsigned long long)c->resolution, (unsigned long long)c->common_step, (unsigned long long)c->smallest_step,
           (unsigned long long)c->zero_steps, CLK_SAMPLES);
    printf("  empty timed region  min %llu, median %llu, p99 %llu %s -- never subtracted; see the noop row\n",
           (unsigned long long)c->empty_min, (unsigned long long)c->empty_median, (unsigned long long)c->empty_p99,
           c->unit);
    printf("  CPU flags           constant_tsc %s, nonstop_tsc %s, rdtscp %s\n",
           yes_no(c->flags_known, c->constant_tsc), yes_no(c->flags_known, c->nonstop_tsc),
           yes_no(c->flags_known, c->rdtscp));
    fflush(stdout);

    char path[1200];
    FILE *f = bench_csv_open(ctx, "clock.csv", false, path, sizeof path);
    if (f != NULL) {
        fprintf(f, "key,value\n");
        fprintf(f, "source,\"%s\"\n", c->source);
        fprintf(f, "unit,%s\n", c->unit);
        fprintf(f, "ghz,%.6f\n", c->ticks_per_ns);
        fprintf(f, "calibration_ms,%.3f\n", c->calib_ms);
        fprintf(f, "resolution,%llu\n", (unsigned long long)c->resolution);
        fprintf(f, "common_step,%llu\n", (unsigned long long)c->common_step);
        fprintf(f, "smallest_step,%llu\n", (unsigned long long)c->smallest_step);
        fprintf(f, "zero_steps,%llu\n", (unsigned long long)c->zero_steps);
        fprintf(f, "samples,%u\n", CLK_SAMPLES);
        fprintf(f, "empty_min,%llu\n", (unsigned long long)c->empty_min);
        fprintf(f, "empty_median,%llu\n", (unsigned long long)c->empty_median);
        fprintf(f, "empty_p99,%llu\n", (unsigned long long)c->empty_p99);
        fprintf(f, "constant_tsc,%s\n", yes_no(c->flags_known, c->constant_tsc));
        fprintf(f, "nonstop_tsc,%s\n", yes_no(c->flags_known, c->nonstop_tsc));
        fprintf(f, "rdtscp,%s\n", yes_no(c->flags_known, c->rdtscp));
        bench_csv_close(f, path);
    }
    return 0;
}
