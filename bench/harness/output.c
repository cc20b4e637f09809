/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/output.c -- the run's header, CSV files, progress (bench.h).
 */
#include "bench.h"
#include "driver.h"
#include "rtalloc/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef RTBENCH_CFLAGS
#define RTBENCH_CFLAGS "unknown"
#endif
#ifndef RTBENCH_BUILD_TYPE
#define RTBENCH_BUILD_TYPE "unknown"
#endif

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v != NULL) {
                v++;
                while (*v == ' ' || *v == '\t') {
                    v++;
                }
                snprintf(out, size, "%s", v);
                out[strcspn(out, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

void bench_load_average(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL) {
        return;
    }
    double a = 0, b = 0, c = 0;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) {
        snprintf(out, size, "%.2f %.2f %.2f", a, b, c);
    }
    fclose(f);
}

void bench_meta_init(bench_meta_t *meta)
{
    memset(meta, 0, sizeof *meta);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(meta->date, sizeof meta->date, "%Y-%m-%dT%H:%M:%SZ", &tm);

    char cpu[160];
    cpu_model(cpu, sizeof cpu);
    struct utsname u;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (uname(&u) == 0) {
        snprintf(meta->machine, sizeof meta->machine, "%s, %ld CPUs, %s %s %s", cpu, ncpu, u.sysname, u.release,
                 u.machine);
    } else {
        snprintf(meta->machine, sizeof meta->machine, "%s, %ld CPUs", cpu, ncpu);
    }
#if defined(__clang__)
    snprintf(meta->compiler, sizeof meta->compiler, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(meta->compiler, sizeof meta->compiler, "gcc %s", __VERSION__);
#else
    snprintf(meta->compiler, sizeof meta->compiler, "unknown compiler");
#endif
    snprintf(meta->flags, sizeof meta->flags, "%s (%s build; library and benchmark alike)", RTBENCH_CFLAGS,
             RTBENCH_BUILD_TYPE);
    bench_load_average(meta->load, sizeof meta->load);
}

void bench_print_header(FILE *f, const bench_ctx_t *ctx, const char *prefix)
{
    fprintf(f, "%srtbench: bounded-time allocators, measured\n", prefix);
    fprintf(f, "%sdate: %s\n", prefix, ctx->meta.date);
    fprintf(f, "%smachine: %s\n", prefix, ctx->meta.machine);
    fprintf(f, "%scompiler: %s\n", prefix, ctx->meta.compiler);
    fprintf(f, "%sflags: %s\n", prefix, ctx->meta.flags);
    fprintf(f, "%shardening: RT_HARDENING=%d\n", prefix, (int)RT_HARDENING);
    fprintf(f, "%slayout: %u-bit words, RT_HEAP_ALIGN=%u\n", prefix, (unsigned)(8u * sizeof(size_t)),
            (unsigned)RT_HEAP_ALIGN);
    fprintf(f, "%sseed: %llu\n", prefix, (unsigned long long)ctx->seed);
    fprintf(f, "%sscale: %s\n", prefix, bench_scale_name(ctx->scale));
    fprintf(f, "%sload average at start (1/5/15 min): %s on %ld CPUs\n", prefix, ctx->meta.load,
            sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(f, "%sclock: %s\n", prefix, ctx->clock_verified ? ctx->clock.source : "not verified in this run");
    if (ctx->clock_verified) {
        fprintf(f, "%sclock frequency: %.4f GHz; empty timed region: median %llu %s\n", prefix, ctx->clock.ticks_per_ns,
                (unsigned long long)ctx->clock.empty_median, ctx->clock.unit);
    }
}

static bool make_dir(const char *path)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        return true;
    }
    fprintf(stderr, "rtbench: cannot create %s: %s\n", path, strerror(errno));
    return false;
}

/* mkdir -p for a relative or absolute path. */
static bool make_dirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            if (!make_dir(buf)) {
                return false;
            }
            *p = '/';
        }
    }
    return make_dir(buf);
}

FILE *bench_csv_open(const bench_ctx_t *ctx, const char *name, bool raw, char *path, size_t path_size)
{
    if (ctx->csv_dir == NULL) {
        return NULL;
    }
    char dir[1024];
    snprintf(dir, sizeof dir, "%s%s", ctx->csv_dir, raw ? "/raw" : "");
    if (!make_dirs(dir)) {
        return NULL;
    }
    snprintf(path, path_size, "%s/%s", dir, name);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "rtbench: cannot write %s: %s\n", tmp, strerror(errno));
        return NULL;
    }
    bench_print_header(f, ctx, "# ");
    return f;
}

void bench_csv_close(FILE *f, const char *path)
{
    if (f == NULL) {
        return;
    }
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    bench_progress_clear();
    if (fclose(f) != 0) {
        fprintf(stderr, "rtbench: error writing %s\n", tmp);
        remove(tmp);
        return;
    }
    if (drv_stop) {
        /* interrupted: what it holds may stop anywhere; no file under the final name */
        remove(tmp);
        fprintf(stderr, "rtbench: interrupted: %s not written\n", path);
        return;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "rtbench: cannot rename %s: %s\n", tmp, strerror(errno));
        return;
    }
    fprintf(stderr, "rtbench: wrote %s\n", path);
}

static int progress_tty = -1;
static int progress_shown;
static char progress_last[160];
static size_t progress_step, progress_steps;

void bench_progress_step(size_t step, size_t steps)
{
    progress_step = step;
    progress_steps = steps;
}

void bench_progress(const char *experiment, const char *allocator, const char *phase, double done)
{
    if (progress_tty < 0) {
        progress_tty = isatty(STDERR_FILENO);
    }
    char head[160];
    if (progress_steps != 0) {
        snprintf(head, sizeof head, "[%zu/%zu] %s  %s  %s", progress_step, progress_steps, experiment, allocator,
                 phase);
    } else {
        snprintf(head, sizeof head, "[%s] %s: %s", experiment, allocator, phase);
    }
    int pct = (int)(done * 100.0 + 0.5);
    pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
    if (progress_tty) {
        fprintf(stderr, "\r%-60s %3d%%\033[K", head, pct);
        progress_shown = 1;
    } else if (strcmp(head, progress_last) != 0) {
        fprintf(stderr, "%s  %d%%\n", head, pct); /* a log: one line per phase */
    }
    snprintf(progress_last, sizeof progress_last, "%s", head);
}

void bench_progress_clear(void)
{
    if (progress_shown) {
        fprintf(stderr, "\r\033[K");
        progress_shown = 0;
    }
}

void bench_ensure_clock(bench_ctx_t *ctx)
{
    if (!ctx->clock_verified) {
        clk_verify(&ctx->clock);
        ctx->clock_verified = true;
    }
}

bool bench_selected(const bench_ctx_t *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->nallocs; i++) {
        if (strcmp(ctx->allocs[i]->name, name) == 0) {
            return true;
        }
    }
    return false;
}

const char *bench_scale_name(bench_scale_t scale)
{
    return scale == BENCH_FULL ? "paper" : scale == BENCH_STANDARD ? "standard" : "quick";
}

bool bench_scale_parse(const char *name, bench_scale_t *scale)
{
    if (name == NULL) {
        return false;
    }
    if (strcmp(name, "quick") == 0) {
        *scale = BENCH_QUICK;
    } else if (strcmp(name, "standard") == 0) {
        *scale = BENCH_STANDARD;
    } else if (strcmp(name, "paper") == 0 || strcmp(name, "full") == 0) {
        *scale = BENCH_FULL;
    } else {
        return false;
    }
    return true;
}

void bench_csv_field(FILE *f, const char *s)
{
    if (s == NULL) {
        s = "";
    }
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"') {
            fputc('"', f);
        }
        fputc(*s, f);
    }
    fputc('"', f);
}

/* CSV_DIR/name, opened with `mode` (the bookkeeping files carry no header: one table each, read
 * by the report as it stands). */
static FILE *run_file(const bench_ctx_t *ctx, const char *name, const char *mode)
{
    if (ctx->csv_dir == NULL || !make_dirs(ctx->csv_dir)) {
        return NULL;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", ctx->csv_dir, name);
    FILE *f = fopen(path, mode);
    if (f == NULL) {
        fprintf(stderr, "rtbench: cannot write %s: %s\n", path, strerror(errno));
    }
    return f;
}

void bench_run_plan(const bench_ctx_t *ctx, const char *const *experiments, size_t n)
{
    FILE *f = run_file(ctx, "plan.csv", "w");
    if (f != NULL) {
        fprintf(f, "step,experiment,scale\n");
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "%zu,", i + 1u);
            bench_csv_field(f, experiments[i]);
            fprintf(f, ",%s\n", bench_scale_name(ctx->scale));
        }
        fclose(f);
    }
    /* this run's record starts empty: rows of an earlier run would read as this one's */
    f = run_file(ctx, "experiments.csv", "w");
    if (f != NULL) {
        fprintf(f, "experiment,status,scale,seconds\n");
        fclose(f);
    }
}

void bench_run_record(const bench_ctx_t *ctx, const char *experiment, bool complete, double seconds)
{
    FILE *f = run_file(ctx, "experiments.csv", "a");
    if (f != NULL) {
        bench_csv_field(f, experiment);
        fprintf(f, ",%s,%s,%.1f\n", complete ? "complete" : "interrupted", bench_scale_name(ctx->scale), seconds);
        fclose(f);
    }
}

static const char *family_word(rt_family_t family)
{
    switch (family) {
    case RT_FAMILY_SYSTEM: return "system";
    case RT_FAMILY_HEAP: return "heap";
    case RT_FAMILY_BUDDY: return "buddy";
    case RT_FAMILY_TREE: return "tree";
    case RT_FAMILY_PAGES: return "pages";
    case RT_FAMILY_TREE_CACHED: return "tree-cached";
    case RT_FAMILY_THREAD_HEAPS: return "thread-heaps";
    }
    return "unknown";
}

void bench_run_allocators(const bench_ctx_t *ctx, const rt_allocator_t *const *all, size_t n)
{
    FILE *f = run_file(ctx, "allocators.csv", "w");
    if (f == NULL) {
        return;
    }
    fprintf(f, "name,family,thread_safe,malloc_bound,free_bound,alignment,ours\n");
    for (size_t i = 0; i < n; i++) {
        const rt_allocator_t *a = all[i];
        bench_csv_field(f, a->name);
        fprintf(f, ",%s,%d,", family_word(a->family), a->thread_safe ? 1 : 0);
        bench_csv_field(f, a->malloc_bound);
        fputc(',', f);
        bench_csv_field(f, a->free_bound);
        fprintf(f, ",%zu,%d\n", a->alignment, rt_registry_find(a->name) == a ? 1 : 0);
    }
    fclose(f);
}
