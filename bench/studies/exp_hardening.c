/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_hardening.c -- experiment "hardening": what each RT_HARDENING level costs, in exact
 * instructions per malloc and free (doc/hardening.md, "What it costs").
 *
 * RT_HARDENING is a compile-time knob (rtalloc/config.h), so one binary holds one level. The
 * build makes rtbench at the configured level (default 1) and, beside it, rtbench-hardening<N>
 * for each other level N (bench/CMakeLists.txt: the same benchmark over a copy of the core built
 * with RT_HARDENING=N). This experiment
 *   - counts the library's own allocators (the registry's; --alloc selects among them, peers are
 *     left out) on churn and small at this binary's level, exactly as experiment "inscount" does
 *     (same traces, same sample plan: inscount.h);
 *   - runs each sibling found in the directory of /proc/self/exe as a child process,
 *     `rtbench-hardening<N> run inscount --csv TMPDIR --seed S [--ops N] --scale X --alloc LIST`,
 *     and reads its TMPDIR/inscount.csv (a missing sibling is skipped, and the table says so);
 *   - prints one table: per workload and allocator, the mean and the (sampled) maximum of malloc
 *     and of free at levels 0, 1 and 2, and the difference of the means of level 1 and 2 over
 *     level 0; and writes hardening.csv (workload, allocator, op, level, calls, mean, max).
 *
 * Each child runs in its own process group with stdin from /dev/null, its stdout in TMPDIR and
 * its stderr (progress lines) read here and shown as this experiment's progress. Ctrl-C (drv_stop)
 * is forwarded to the child's group as SIGINT; a group that has not exited 5 s later is killed.
 * The child dies with rtbench (PR_SET_PDEATHSIG): harness/sibling.h. TMPDIR is removed at the end.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "inscount.h"
#include "metrics.h"
#include "sibling.h"
#include "rtalloc/config.h"
#include "workload.h"

enum { HB_LEVELS = 3, HB_WORKLOADS = 2, HB_OPS = 2 };

typedef struct hb_stat {
    bool have;
    size_t calls;
    double mean;
    unsigned long long max;
} hb_stat_t;

typedef struct hb_table {
    const rt_allocator_t *allocs[BENCH_MAX_SELECTED];
    size_t nallocs;
    hb_stat_t s[HB_WORKLOADS][BENCH_MAX_SELECTED][HB_LEVELS][HB_OPS];
    char note[HB_LEVELS][256]; /* why a level is missing, or the sibling's own header line */
    bool measured[HB_LEVELS];
} hb_table_t;

static const wl_uniform_spec_t *const hb_specs[HB_WORKLOADS] = {&wl_churn, &wl_small};
static const char *const hb_opname[HB_OPS] = {"malloc", "free"};

/* --- this binary's level --------------------------------------------------------------------- */

typedef struct hb_progress {
    const char *workload;
    const char *allocator;
} hb_progress_t;

static void on_progress(void *context, double done)
{
    const hb_progress_t *p = context;
    char phase[64];
    snprintf(phase, sizeof phase, "%s, RT_HARDENING=%d", p->workload, (int)RT_HARDENING);
    bench_progress("hardening", p->allocator, phase, done);
}

/* The plan of exp_inscount.c's count_uniform, so both count the same calls. */
static ic_plan_t hb_plan(const bench_ctx_t *ctx, size_t nops)
{
    /* the sample of exp_inscount.c at each scale: the siblings' counts are that experiment's */
    size_t samples = ctx->scale == BENCH_FULL ? 20000u : ctx->scale == BENCH_STANDARD ? 2000u : 500u;
    ic_plan_t plan = {
        .stride = nops / samples != 0 ? nops / samples : 1u,
        .step_budget = ctx->scale == BENCH_FULL       ? 5000000u
                       : ctx->scale == BENCH_STANDARD ? 500000u
                                                      : 100000u,
        .max_samples = 0,
    };
    return plan;
}

static int count_own(bench_ctx_t *ctx, hb_table_t *tb)
{
    const int level = RT_HARDENING;
    for (int w = 0; w < HB_WORKLOADS && !drv_stop; w++) {
        const wl_uniform_spec_t *spec = hb_specs[w];
        size_t nops = ctx->ops != 0 ? ctx->ops : spec->default_ops;
        ic_plan_t plan = hb_plan(ctx, nops);
        wl_trace_t t;
        if (!wl_uniform(&t, spec, nops, ctx->seed)) {
            return 1;
        }
        uint32_t *v = malloc((t.nops / plan.stride + 2u) * sizeof *v);
        if (v == NULL) {
            wl_release(&t);
            return 1;
        }
        for (size_t k = 0; k < tb->nallocs && !drv_stop; k++) {
            hb_progress_t pc = {spec->name, tb->allocs[k]->name};
            ic_result_t r;
            bool ok = ic_count_trace(tb->allocs[k], ctx->arena, ctx->arena_size, &t, &plan, &r, on_progress, &pc);
            bench_progress_clear();
            if (!ok) {
                printf("RT_HARDENING=%d %s %s: %s\n", level, spec->name, tb->allocs[k]->name, r.error);
            }
            for (uint32_t kind = 0; kind < HB_OPS && ok; kind++) {
                size_t n = 0;
                for (size_t i = 0; i < r.n; i++) {
                    if (r.samples[i].kind == kind) {
                        v[n++] = r.samples[i].count;
                    }
                }
                mt_summary_t s;
                mt_summarize_u32(v, n, &s, NULL);
                hb_stat_t *st = &tb->s[w][k][level][kind];
                st->have = n > 0;
                st->calls = n;
                st->mean = s.mean;
                st->max = (unsigned long long)s.max;
            }
            ic_result_free(&r);
        }
        free(v);
        wl_release(&t);
    }
    return drv_stop ? 130 : 0;
}

/* A line of the level's note (vsnprintf: a long path is cut, not an error). */
static void set_note(hb_table_t *tb, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tb->note[level], sizeof tb->note[level], fmt, ap);
    va_end(ap);
}

/* --- the siblings ------------------------------------------------------------------------------ */

/* One progress line of the child ("[inscount] tlsf: churn") as this experiment's progress: the
 * fraction is the phases started so far over the phases expected (churn, small, memfrag for
 * each allocator). */
static void child_progress(int level, const char *line, size_t *phases, size_t nphases)
{
    const char *p = strstr(line, "[inscount] ");
    if (p == NULL) {
        return;
    }
    p += strlen("[inscount] ");
    char alloc[64], phase[64];
    const char *colon = strstr(p, ": ");
    if (colon == NULL || (size_t)(colon - p) >= sizeof alloc) {
        return;
    }
    memcpy(alloc, p, (size_t)(colon - p));
    alloc[colon - p] = '\0';
    snprintf(phase, sizeof phase, "%s, RT_HARDENING=%d", colon + 2, level);
    phase[strcspn(phase, "\r\n")] = '\0';
    if (*phases < nphases) {
        (*phases)++;
    }
    bench_progress("hardening", alloc, phase, (double)(*phases - 1u) / (double)(nphases ? nphases : 1u));
}

/* What the relay of one child's stderr needs: its level and the progress phases seen. */
typedef struct hb_relay {
    int level;
    size_t phases, nphases;
} hb_relay_t;

/* One line of the child's stderr: its progress as ours, other lines but "rtbench: wrote ..."
 * passed on. */
static void relay_line(void *context, const char *line)
{
    hb_relay_t *r = context;
    if (strstr(line, "[inscount] ") != NULL) {
        child_progress(r->level, line, &r->phases, r->nphases);
    } else if (strncmp(line, "rtbench: wrote ", 15) != 0 && line[0] != '\0') {
        bench_progress_clear();
        fprintf(stderr, "rtbench-hardening%d: %s\n", r->level, line);
    }
}

/* Runs `exe run inscount ...` with its CSVs in outdir; returns its exit status (-1: not run,
 * 130: interrupted). */
static int run_child(const bench_ctx_t *ctx, int level, const char *exe, const char *outdir, const char *alloc_list,
                     size_t nallocs)
{
    char seed[32], ops[32], logpath[1400];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)ctx->seed);
    snprintf(ops, sizeof ops, "%zu", ctx->ops);
    snprintf(logpath, sizeof logpath, "%s/stdout.txt", outdir);
    const char *argv[16];
    int argc = 0;
    argv[argc++] = exe;
    argv[argc++] = "run";
    argv[argc++] = "inscount";
    argv[argc++] = "--csv";
    argv[argc++] = outdir;
    argv[argc++] = "--seed";
    argv[argc++] = seed;
    if (ctx->ops != 0) {
        argv[argc++] = "--ops";
        argv[argc++] = ops;
    }
    argv[argc++] = "--scale";
    argv[argc++] = bench_scale_name(ctx->scale);
    argv[argc++] = "--alloc";
    argv[argc++] = alloc_list;
    argv[argc] = NULL;

    hb_relay_t relay = {level, 0, 3u * nallocs};
    int rc = sib_run(exe, argv, logpath, relay_line, &relay);
    bench_progress_clear();
    return rc;
}

static int find_alloc(const hb_table_t *tb, const char *name)
{
    for (size_t k = 0; k < tb->nallocs; k++) {
        if (strcmp(tb->allocs[k]->name, name) == 0) {
            return (int)k;
        }
    }
    return -1;
}

/* Where inscount.csv's rows of one sibling go: its level of the table. */
typedef struct hb_reader {
    hb_table_t *tb;
    int level;
} hb_reader_t;

/* One row of inscount.csv (exp_inscount.c's columns: workload, allocator, op, calls, mean, min,
 * median, p99, max, ..., error). */
static bool inscount_row(void *context, char **field, size_t nf)
{
    hb_reader_t *rd = context;
    int w = strcmp(field[0], "churn") == 0 ? 0 : strcmp(field[0], "small") == 0 ? 1 : -1;
    int k = find_alloc(rd->tb, field[1]);
    int op = strcmp(field[2], "malloc") == 0 ? 0 : strcmp(field[2], "free") == 0 ? 1 : -1;
    bool failed = nf >= 15 && atoi(field[14]) != 0;
    if (w < 0 || k < 0 || op < 0 || failed) {
        return false;
    }
    hb_stat_t *st = &rd->tb->s[w][k][rd->level][op];
    st->calls = (size_t)strtoull(field[3], NULL, 10);
    st->mean = strtod(field[4], NULL);
    st->max = strtoull(field[8], NULL, 10);
    st->have = st->calls > 0;
    return true;
}

/* Reads outdir/inscount.csv into level `level` of the table. Returns the rows taken. */
static size_t read_inscount(hb_table_t *tb, int level, const char *outdir)
{
    hb_reader_t rd = {tb, level};
    return sib_read_csv(outdir, "inscount.csv", 9, inscount_row, &rd);
}

/* The sibling's "hardening: RT_HARDENING=N" header line (from its stdout), or "". */
static void child_level_line(const char *outdir, char *out, size_t size)
{
    out[0] = '\0';
    char path[1400];
    snprintf(path, sizeof path, "%s/stdout.txt", outdir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "hardening: ", 11) == 0) {
            size_t n = strcspn(line + 11, "\r\n");
            n = n < size - 1u ? n : size - 1u;
            memcpy(out, line + 11, n);
            out[n] = '\0';
            break;
        }
    }
    fclose(f);
}

static int run_sibling(bench_ctx_t *ctx, hb_table_t *tb, int level, const char *dir, const char *tmpdir,
                       const char *alloc_list)
{
    char exe[1200];
    snprintf(exe, sizeof exe, "%srtbench-hardening%d", dir, level);
    if (access(exe, X_OK) != 0) {
        set_note(tb, level, "not measured: %s not found (build the target rtbench-hardening%d)", exe, level);
        return 0;
    }
    char outdir[1300];
    snprintf(outdir, sizeof outdir, "%s/level%d", tmpdir, level);
    if (mkdir(outdir, 0700) != 0) {
        set_note(tb, level, "not measured: cannot create %s", outdir);
        return 0;
    }
    double t0 = sib_now_s();
    int rc = run_child(ctx, level, exe, outdir, alloc_list, tb->nallocs);
    char own[128];
    child_level_line(outdir, own, sizeof own);
    size_t rows = read_inscount(tb, level, outdir);
    if (rc == 130 || drv_stop) {
        set_note(tb, level, "interrupted (%s)", exe);
        return 130;
    }
    if (rc != 0 || rows == 0) {
        set_note(tb, level, "not measured: %s exited with status %d, %zu rows", exe, rc, rows);
        return 0;
    }
    if (own[0] != '\0' && strstr(own, "RT_HARDENING=") != NULL && atoi(strstr(own, "RT_HARDENING=") + 13) != level) {
        set_note(tb, level, "not used: %s says %s", exe, own);
        for (int w = 0; w < HB_WORKLOADS; w++) {
            for (size_t k = 0; k < tb->nallocs; k++) {
                memset(tb->s[w][k][level], 0, sizeof tb->s[w][k][level]);
            }
        }
        return 0;
    }
    tb->measured[level] = true;
    set_note(tb, level, "%s: %s (%.0f s)", exe, own[0] ? own : "level not printed", sib_now_s() - t0);
    return 0;
}

/* --- output ------------------------------------------------------------------------------------ */

static void print_cell(const hb_stat_t *st)
{
    if (st->have) {
        printf(" %7.1f %5llu", st->mean, st->max);
    } else {
        printf(" %7s %5s", "-", "-");
    }
}

static void print_delta(const hb_stat_t *st, const hb_stat_t *base)
{
    if (st->have && base->have) {
        printf(" %+7.1f", st->mean - base->mean);
    } else {
        printf(" %7s", "-");
    }
}

/* Takes the library's own allocators among those selected into tb, their names into alloc_list
 * (comma-separated, for the siblings' --alloc). */
static void select_own_allocs(const bench_ctx_t *ctx, hb_table_t *tb, char *alloc_list, size_t size)
{
    alloc_list[0] = '\0';
    for (size_t i = 0; i < ctx->nallocs; i++) {
        const rt_allocator_t *a = ctx->allocs[i];
        if (rt_registry_find(a->name) != a) {
            continue; /* a peer, the no-op or tlsf+mutex: not the library's own */
        }
        tb->allocs[tb->nallocs++] = a;
        size_t len = strlen(alloc_list);
        snprintf(alloc_list + len, size - len, "%s%s", len ? "," : "", a->name);
    }
}

/* Measures each level: this binary's by counting, the others by their siblings in a temporary
 * directory (removed at the end). Returns 0, or 130 when interrupted. */
static int measure_levels(bench_ctx_t *ctx, hb_table_t *tb, const char *alloc_list)
{
    const int own = RT_HARDENING;
    char dir[1024];
    if (!sib_self_dir(dir, sizeof dir)) {
        dir[0] = '\0';
    }
    char tmpdir[1024];
    bool have_tmp = sib_tmpdir(tmpdir, sizeof tmpdir, "hardening");

    int rc = 0;
    for (int level = 0; level < HB_LEVELS && rc == 0; level++) {
        if (level == own) {
            rc = count_own(ctx, tb);
            tb->measured[level] = rc == 0;
            set_note(tb, level, "this binary: RT_HARDENING=%d", own);
        } else if (dir[0] == '\0') {
            set_note(tb, level, "not measured: /proc/self/exe unreadable");
        } else if (!have_tmp) {
            set_note(tb, level, "not measured: no temporary directory");
        } else {
            rc = run_sibling(ctx, tb, level, dir, tmpdir, alloc_list);
        }
        if (drv_stop) {
            rc = 130;
        }
    }
    if (have_tmp) {
        sib_remove_tree(tmpdir);
    }
    return rc;
}

/* Whether the levels that have (w, k, op) counted different numbers of calls. */
static bool calls_differ(const hb_table_t *tb, int w, size_t k, int op)
{
    size_t calls = 0;
    bool differ = false;
    for (int level = 0; level < HB_LEVELS; level++) {
        const hb_stat_t *c = &tb->s[w][k][level][op];
        if (c->have) {
            differ = differ || (calls != 0 && c->calls != calls);
            calls = c->calls;
        }
    }
    return differ;
}

/* Prints the table's row for (w, k, op) and writes its CSV rows (one per level measured);
 * returns whether the levels counted different calls. */
static bool print_row(const hb_table_t *tb, int w, size_t k, int op, FILE *csv)
{
    printf("%-8s %-10s %-6s", hb_specs[w]->name, tb->allocs[k]->name, hb_opname[op]);
    for (int level = 0; level < HB_LEVELS; level++) {
        print_cell(&tb->s[w][k][level][op]);
    }
    print_delta(&tb->s[w][k][1][op], &tb->s[w][k][0][op]);
    print_delta(&tb->s[w][k][2][op], &tb->s[w][k][0][op]);
    bool differ = calls_differ(tb, w, k, op);
    printf("%s\n", differ ? "  *" : "");
    for (int level = 0; level < HB_LEVELS && csv != NULL; level++) {
        const hb_stat_t *c = &tb->s[w][k][level][op];
        if (c->have) {
            fprintf(csv, "%s,%s,%s,%d,%zu,%.3f,%llu\n", hb_specs[w]->name, tb->allocs[k]->name, hb_opname[op], level,
                    c->calls, c->mean, c->max);
        }
    }
    return differ;
}

/* The notes per level, the table and hardening.csv. */
static void print_table(bench_ctx_t *ctx, const hb_table_t *tb)
{
    for (int level = 0; level < HB_LEVELS; level++) {
        if (tb->note[level][0] != '\0') {
            printf("level %d: %s\n", level, tb->note[level]);
        }
    }
    printf("%-8s %-10s %-6s %13s %13s %13s %7s %7s\n", "workload", "allocator", "op", "level 0", "level 1", "level 2",
           "1 - 0", "2 - 0");
    printf("%-8s %-10s %-6s %7s %5s %7s %5s %7s %5s %7s %7s\n", "", "", "", "mean", "max", "mean", "max", "mean", "max",
           "mean", "mean");
    printf("-------- ---------- ------ ------------- ------------- ------------- ------- -------\n");
    char path[1200];
    FILE *csv = bench_csv_open(ctx, "hardening.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "workload,allocator,op,level,calls,mean,max\n");
    }
    bool any_differ = false;
    for (int w = 0; w < HB_WORKLOADS; w++) {
        for (size_t k = 0; k < tb->nallocs; k++) {
            for (int op = 0; op < HB_OPS; op++) {
                bool differ = print_row(tb, w, k, op, csv);
                any_differ = any_differ || differ;
            }
        }
    }
    printf("-------- ---------- ------ ------------- ------------- ------------- ------- -------\n");
    if (any_differ) {
        printf("* the levels counted different calls: the step budget widened the stride at one level more than at\n"
               "  another (inscount.h), so those means compare samples of the same trace, not the same calls.\n");
    }
    fflush(stdout);
    bench_csv_close(csv, path);
}

int exp_hardening(bench_ctx_t *ctx)
{
    printf("\n== hardening -- the cost of each RT_HARDENING level: exact instructions per call ==\n");
    if (!ic_supported()) {
        printf("not supported on this host (needs Linux on x86-64: experiment inscount's counter)\n");
        return 0;
    }
    static hb_table_t tb;
    memset(&tb, 0, sizeof tb);
    char alloc_list[1024];
    select_own_allocs(ctx, &tb, alloc_list, sizeof alloc_list);
    if (tb.nallocs == 0) {
        printf("no allocator of the library selected (--alloc): nothing to measure\n");
        return 0;
    }
    printf("this binary: RT_HARDENING=%d; the other levels by rtbench-hardening<N> beside it, each its own\n"
           "process (`run inscount` with the same --seed/--ops/--scale/--alloc). Same traces and sample plan as\n"
           "experiment inscount; mean over the sampled calls, max = the largest sampled call (not a bound).\n",
           RT_HARDENING);
    printf("allocators: %s\n", alloc_list);
    fflush(stdout);

    int rc = measure_levels(ctx, &tb, alloc_list);
    print_table(ctx, &tb);
    return drv_stop ? 130 : rc;
}
