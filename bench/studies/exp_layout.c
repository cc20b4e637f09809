/* SPDX-License-Identifier: MIT */
/*
 * bench/studies/exp_layout.c -- experiment "layout": fragmentation of the boundary-tag heaps per
 * block layout (doc/performance.md, "What changed": alignment as a knob, fragmentation both ways).
 *
 * The layout is fixed at compile time (the word size; RT_HEAP_ALIGN, rtalloc/config.h), so one
 * binary holds one. The build makes siblings of rtbench beside it (bench/CMakeLists.txt):
 * rtbench-align8 (64-bit words, RT_HEAP_ALIGN=8) and rtbench-m32 (-m32: 32-bit words,
 * RT_HEAP_ALIGN=8, the layout Masmano 2006 measured on 32-bit x86). This experiment runs this
 * binary and each sibling found beside it as child processes (harness/sibling.h), each running
 * the benchmark's own commands, and reads their CSVs:
 *   - `run masmano` with RTBENCH_MM_FRAG_ONLY=1 (the same --seed and --scale): Masmano's Tests
 *     1-3 fragmentation runs, F = (watermark / peak live - 1) x 100 % (frag.h) per seed, from
 *     masmano_frag.csv, averaged over the seeds; beside the paper's TLSF (10.49 / 14.86 / 11.15 %,
 *     32-bit x86);
 *   - `trace size FILE` on each program of experiment "trace" (sqlite3, lua5.4, python3),
 *     recorded once here (`trace record`, exp_trace.c) and sized by every layout: the smallest
 *     heap on which the whole recording runs, over its live peak (trace/replay.c), for the
 *     stream that needs the largest heap, from trace_size.csv. The recording is of the 64-bit
 *     program: the 32-bit layout replays the same request sizes (a 32-bit build of the program
 *     would ask for smaller ones).
 * Each child prints its layout on its header ("layout: N-bit words, RT_HEAP_ALIGN=A"), which
 * labels its rows. The heaps: the library's boundary-tag heaps among those selected (--alloc).
 * The trace experiment does not measure glibc's footprint (replay.c, rp_frag: its sampled bytes in
 * use gave figures below the live peak), so the target "A=16 at most glibc's footprint" has no
 * figure here to be compared with: the table says so rather than guess.
 *
 * Output: a table per measure (layouts side by side), the layout targets' verdicts for tlsf
 * (shown, never asserted) and layout.csv (measure, allocator, layout, word_bits, heap_align,
 * workload, value, n, heap_needed, live_peak). Scale: that of masmano's fragmentation runs (quick: 3 seeds of
 * 100,000 mallocs per test; standard: 10 of 300,000); the traces are whole at every scale. At
 * quick scale without --alloc only the heaps with an O(1) malloc (tlsf, tlsf32, halffit), so the
 * experiment is part of `run all` there (about 15 s; every boundary-tag heap: about 2.5 min).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "driver.h"
#include "sibling.h"

enum { LY_LAYOUTS = 3, LY_TESTS = 3, LY_MAX_PROGS = 8, LY_MAX_ALLOCS = 16 };

/* The binaries, in the table's order: this one (the configured layout) and its siblings. */
static const char *const ly_exe[LY_LAYOUTS] = {NULL, "rtbench-align8", "rtbench-m32"};

/* Masmano 2006, Table 7: TLSF's F, avg, on 32-bit x86 (exp_masmano.c's paper row). */
static const double ly_paper_tlsf[LY_TESTS] = {10.49, 14.86, 11.15};
/* The layout target: the common C TLSF's heap needed over live peak with 8-byte alignment,
 * 1.12-1.24 over the three programs (no per-program figures given: the upper end is the target). */
static const double ly_target_a8 = 1.24;

typedef struct ly_cell {
    double sum;
    unsigned n;
    size_t failures;
} ly_cell_t;

typedef struct ly_trace {
    bool tried; /* sized: a row in trace_size.csv */
    bool have;  /* and a heap found */
    double ratio;
    unsigned long long heap, peak;
} ly_trace_t;

typedef struct ly_table {
    const rt_allocator_t *allocs[LY_MAX_ALLOCS];
    size_t nallocs;
    char alloc_list[512];
    /* per layout: run at all, its label from the child's header, its bits and alignment, a note */
    bool measured[LY_LAYOUTS];
    char label[LY_LAYOUTS][64];
    unsigned bits[LY_LAYOUTS], align[LY_LAYOUTS];
    char note[LY_LAYOUTS][1500];
    ly_cell_t f[LY_LAYOUTS][LY_MAX_ALLOCS][LY_TESTS];
    /* the programs: recorded (file) or why not */
    size_t nprogs;
    char file[LY_MAX_PROGS][1200];
    char why[LY_MAX_PROGS][300];
    ly_trace_t tr[LY_LAYOUTS][LY_MAX_ALLOCS][LY_MAX_PROGS];
    /* progress */
    size_t step, steps;
    int layout_now;
} ly_table_t;

static int find_alloc(const ly_table_t *tb, const char *name)
{
    for (size_t k = 0; k < tb->nallocs; k++) {
        if (strcmp(tb->allocs[k]->name, name) == 0) {
            return (int)k;
        }
    }
    return -1;
}

/* The child's stderr: its progress lines ("[experiment] ...") as ours, its notes of CSVs written
 * and of steps done dropped, anything else passed on with the binary's name. */
static void relay_line(void *context, const char *line)
{
    ly_table_t *tb = context;
    const char *who = ly_exe[tb->layout_now] != NULL ? ly_exe[tb->layout_now] : "rtbench";
    if (line[0] == '[') {
        char phase[80];
        snprintf(phase, sizeof phase, "%s", line);
        bench_progress("layout", who, phase, (double)tb->step / (double)(tb->steps ? tb->steps : 1u));
    } else if (line[0] != '\0' && strncmp(line, "rtbench: wrote ", 15) != 0 && strncmp(line, "rtbench: [", 10) != 0) {
        bench_progress_clear();
        fprintf(stderr, "%s: %s\n", who, line);
    }
}

/* The child's "layout: N-bit words, RT_HEAP_ALIGN=A" header line, from its stdout. */
static void read_layout(ly_table_t *tb, int l, const char *stdout_path)
{
    FILE *f = fopen(stdout_path, "r");
    if (f == NULL) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned bits = 0, align = 0;
        if (sscanf(line, "layout: %u-bit words, RT_HEAP_ALIGN=%u", &bits, &align) == 2) {
            tb->bits[l] = bits;
            tb->align[l] = align;
            snprintf(tb->label[l], sizeof tb->label[l], "%u-bit A=%u", bits, align);
            break;
        }
    }
    fclose(f);
}

/* Where a sibling's CSV rows go: its layout, and for trace_size.csv the program. */
typedef struct ly_reader {
    ly_table_t *tb;
    int layout;
    size_t program;
} ly_reader_t;

/* One row of masmano_frag.csv (allocator,test,seed,tasks,mallocs,peak_live,peak_memory,F,
 * peak_used,F_used,approximated,failures): F into the mean of its allocator and test. */
static bool masmano_row(void *context, char **field, size_t nf)
{
    (void)nf;
    ly_reader_t *rd = context;
    int k = find_alloc(rd->tb, field[0]);
    int test = atoi(field[1]);
    if (k < 0 || test < 1 || test > LY_TESTS) {
        return false;
    }
    ly_cell_t *c = &rd->tb->f[rd->layout][k][test - 1];
    c->sum += strtod(field[7], NULL);
    c->n++;
    c->failures += (size_t)strtoull(field[11], NULL, 10);
    return true;
}

/* One row of trace_size.csv (program,stream,allocator,live_peak,heap_needed,ratio,...): per
 * allocator the stream with the largest heap needed; an empty heap_needed: sized, no fit. */
static bool trace_size_row(void *context, char **field, size_t nf)
{
    (void)nf;
    ly_reader_t *rd = context;
    int k = find_alloc(rd->tb, field[2]);
    if (k < 0) {
        return false;
    }
    ly_trace_t *t = &rd->tb->tr[rd->layout][k][rd->program];
    t->tried = true;
    if (field[4][0] == '\0') {
        return true; /* does not fit in the largest buffer tried */
    }
    unsigned long long heap = strtoull(field[4], NULL, 10);
    if (!t->have || heap > t->heap) {
        t->have = true;
        t->heap = heap;
        t->peak = strtoull(field[3], NULL, 10);
        t->ratio = strtod(field[5], NULL);
    }
    return true;
}

/* Runs exe with argv, its stdout into dir/stdout.txt; returns its status (sibling.h). */
static int run_in(ly_table_t *tb, const char *exe, const char *const *argv, const char *dir)
{
    char out[1300];
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    int rc = sib_run(exe, argv, out, relay_line, tb);
    bench_progress_clear();
    tb->step++;
    return rc;
}

/* One layout: masmano's fragmentation runs, then `trace size` on every program recorded. */
static int run_layout(bench_ctx_t *ctx, ly_table_t *tb, int l, const char *exe, const char *tmpdir)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/layout%d", tmpdir, l);
    if (mkdir(dir, 0700) != 0) {
        snprintf(tb->note[l], sizeof tb->note[l], "not measured: cannot create %s", dir);
        return 0;
    }
    tb->layout_now = l;
    double t0 = sib_now_s();
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)ctx->seed);
    const char *argv[16] = {
        exe,       "run",          "masmano", "--csv", dir, "--seed", seed, "--scale", bench_scale_name(ctx->scale),
        "--alloc", tb->alloc_list, NULL};
    setenv("RTBENCH_MM_FRAG_ONLY", "1", 1);
    int rc = run_in(tb, exe, argv, dir);
    unsetenv("RTBENCH_MM_FRAG_ONLY");
    char out[1300];
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    read_layout(tb, l, out);
    ly_reader_t rd = {tb, l, 0};
    size_t rows = sib_read_csv(dir, "masmano_frag.csv", 12, masmano_row, &rd);
    if (rc == 130 || drv_stop) {
        snprintf(tb->note[l], sizeof tb->note[l], "interrupted (%s)", exe);
        return 130;
    }
    /* the first child that failed or wrote no rows: its status (-1: no rows) */
    int bad = rc != 0 ? rc : rows == 0 ? -1 : 0;
    for (size_t p = 0; p < tb->nprogs && !drv_stop; p++) {
        if (tb->why[p][0] != '\0') {
            tb->step++;
            continue;
        }
        char pdir[1200];
        snprintf(pdir, sizeof pdir, "%s/%s", dir, trace_program_name(p));
        if (mkdir(pdir, 0700) != 0) {
            continue;
        }
        const char *targv[10] = {exe, "trace", "size", tb->file[p], "--alloc", tb->alloc_list, "--csv", pdir, NULL};
        int trc = run_in(tb, exe, targv, pdir);
        if (trc == 130) {
            break;
        }
        rd.program = p;
        if ((sib_read_csv(pdir, "trace_size.csv", 6, trace_size_row, &rd) == 0 || trc != 0) && bad == 0) {
            bad = trc != 0 ? trc : -1;
        }
    }
    tb->measured[l] = true;
    char why[80] = "";
    if (bad != 0) {
        snprintf(why, sizeof why, "; a child %s: see its figures", bad < 0 ? "wrote no rows" : "exited non-zero");
    }
    snprintf(tb->note[l], sizeof tb->note[l], "%s: %s (%.0f s)%s", exe,
             tb->label[l][0] ? tb->label[l] : "layout not printed", sib_now_s() - t0, why);
    return drv_stop ? 130 : 0;
}

/* The library's boundary-tag heaps among those selected; at quick scale without --alloc only
 * those whose malloc is O(1) (tlsf, tlsf32, halffit: about 15 s for the three layouts; the list
 * heaps' fragmentation runs and sizings take about 90 s more). */
static void select_heaps(const bench_ctx_t *ctx, ly_table_t *tb)
{
    bool bounded_only = ctx->scale == BENCH_QUICK && !ctx->allocs_explicit;
    tb->alloc_list[0] = '\0';
    for (size_t i = 0; i < ctx->nallocs && tb->nallocs < LY_MAX_ALLOCS; i++) {
        const rt_allocator_t *a = ctx->allocs[i];
        if (a->family != RT_FAMILY_HEAP || rt_registry_find(a->name) != a ||
            (bounded_only && (a->malloc_bound == NULL || strcmp(a->malloc_bound, "O(1)") != 0))) {
            continue;
        }
        tb->allocs[tb->nallocs++] = a;
        size_t len = strlen(tb->alloc_list);
        snprintf(tb->alloc_list + len, sizeof tb->alloc_list - len, "%s%s", len ? "," : "", a->name);
    }
}

/* Records every program once (exp_trace.c), for all the layouts. */
static void record_programs(const bench_ctx_t *ctx, ly_table_t *tb)
{
    size_t n = trace_programs();
    tb->nprogs = n < LY_MAX_PROGS ? n : LY_MAX_PROGS;
    for (size_t p = 0; p < tb->nprogs && !drv_stop; p++) {
        trace_program_record(ctx, p, tb->file[p], sizeof tb->file[p], tb->why[p], sizeof tb->why[p]);
    }
}

/* --- output ------------------------------------------------------------------------------------ */

static void csv_row(FILE *csv, const char *measure, const ly_table_t *tb, size_t k, int l, const char *workload,
                    double value, unsigned n, unsigned long long heap, unsigned long long peak)
{
    if (csv == NULL) {
        return;
    }
    fprintf(csv, "%s,%s,%s,%u,%u,%s,%.4f,%u,", measure, tb->allocs[k]->name, tb->label[l], tb->bits[l], tb->align[l],
            workload, value, n);
    if (peak != 0u) {
        fprintf(csv, "%llu,%llu\n", heap, peak);
    } else {
        fprintf(csv, ",\n");
    }
}

static void print_masmano(const ly_table_t *tb, FILE *csv)
{
    printf("\nMasmano 2006 Tests 1-3: F %% = (watermark / peak live - 1) x 100, mean over the seeds (experiment\n"
           "masmano's fragmentation runs); the paper's TLSF on 32-bit x86: %.2f / %.2f / %.2f\n",
           ly_paper_tlsf[0], ly_paper_tlsf[1], ly_paper_tlsf[2]);
    printf("%-10s %-14s %8s %8s %8s\n", "allocator", "layout", "Test 1", "Test 2", "Test 3");
    bool any_failed = false;
    for (size_t k = 0; k < tb->nallocs; k++) {
        for (int l = 0; l < LY_LAYOUTS; l++) {
            if (!tb->measured[l]) {
                continue;
            }
            printf("%-10s %-14s", tb->allocs[k]->name, tb->label[l]);
            for (int t = 0; t < LY_TESTS; t++) {
                const ly_cell_t *c = &tb->f[l][k][t];
                if (c->n == 0) {
                    printf(" %8s", "-");
                    continue;
                }
                printf(" %7.2f%s", c->sum / c->n, c->failures ? "!" : " ");
                any_failed = any_failed || c->failures != 0u;
                char w[16];
                snprintf(w, sizeof w, "test%d", t + 1);
                csv_row(csv, "masmano_F", tb, k, l, w, c->sum / c->n, c->n, 0, 0);
            }
            printf("\n");
        }
    }
    if (any_failed) {
        printf("!: some mallocs failed in that test's runs\n");
    }
}

static void print_traces(const ly_table_t *tb, FILE *csv)
{
    printf(
        "\nReal programs (experiment trace's recordings, whole): heap needed / live peak (`trace size`: the smallest\n"
        "heap on which the recording runs, bisection to max(4 KiB, 0.5 %%); the stream needing the largest heap)\n");
    printf("%-10s %-14s", "allocator", "layout");
    for (size_t p = 0; p < tb->nprogs; p++) {
        printf(" %9s", trace_program_name(p));
    }
    printf("\n");
    bool any_nofit = false;
    for (size_t k = 0; k < tb->nallocs; k++) {
        for (int l = 0; l < LY_LAYOUTS; l++) {
            if (!tb->measured[l]) {
                continue;
            }
            printf("%-10s %-14s", tb->allocs[k]->name, tb->label[l]);
            for (size_t p = 0; p < tb->nprogs; p++) {
                const ly_trace_t *t = &tb->tr[l][k][p];
                if (!t->have) {
                    printf(" %9s", t->tried ? "no fit" : "-");
                    any_nofit = any_nofit || t->tried;
                    if (t->tried && csv != NULL) {
                        fprintf(csv, "trace_heap_ratio,%s,%s,%u,%u,%s,,0,,\n", tb->allocs[k]->name, tb->label[l],
                                tb->bits[l], tb->align[l], trace_program_name(p));
                    }
                    continue;
                }
                printf(" %9.3f", t->ratio);
                csv_row(csv, "trace_heap_ratio", tb, k, l, trace_program_name(p), t->ratio, 1, t->heap, t->peak);
            }
            printf("\n");
        }
    }
    if (any_nofit) {
        printf("no fit: sized, and no heap up to 4x the replay's buffer runs the recording. On 32-bit at RT_HARDENING\n"
               ">= 1 one block, and so one pool, is below 2^24 bytes (RT_HEAP_MAX_BLOCK_LOG2, rtalloc/config.h): a\n"
               "program whose live peak is above 16 MiB needs pools added, which `trace size` does not do.\n");
    }
    for (size_t p = 0; p < tb->nprogs; p++) {
        if (tb->why[p][0] != '\0') {
            printf("%s: %s\n", trace_program_name(p), tb->why[p]);
        }
    }
    printf("glibc's footprint on these traces: not measured (experiment trace leaves system peers' F out: their\n"
           "sampled bytes in use gave figures below the live peak), so no figure to hold A=16 against.\n");
}

/* The layout targets for tlsf, as verdicts (never asserted). */
static void print_verdicts(const ly_table_t *tb)
{
    int k = find_alloc(tb, "tlsf");
    if (k < 0) {
        return;
    }
    printf("\nlayout targets (tlsf; shown, not asserted):\n");
    for (int l = 0; l < LY_LAYOUTS; l++) {
        if (!tb->measured[l]) {
            continue;
        }
        if (tb->bits[l] == 32u && tb->align[l] == 8u) {
            for (int t = 0; t < LY_TESTS; t++) {
                const ly_cell_t *c = &tb->f[l][k][t];
                if (c->n != 0) {
                    double f = c->sum / c->n;
                    printf("  Masmano Test %d, %s: F %.2f %% <= %.2f %%: %s\n", t + 1, tb->label[l], f,
                           ly_paper_tlsf[t], f <= ly_paper_tlsf[t] ? "met" : "NOT met");
                }
            }
        }
        if (tb->bits[l] == 64u && tb->align[l] == 8u) {
            for (size_t p = 0; p < tb->nprogs; p++) {
                const ly_trace_t *t = &tb->tr[l][k][p];
                if (t->have) {
                    printf("  trace %s, %s: heap / live peak %.3f <= %.2f: %s\n", trace_program_name(p), tb->label[l],
                           t->ratio, ly_target_a8, t->ratio <= ly_target_a8 ? "met" : "NOT met");
                }
            }
        }
        if (tb->bits[l] == 64u && tb->align[l] == 16u) {
            printf("  traces, %s: heap / live peak <= glibc's footprint: no verdict (glibc's not measured)\n",
                   tb->label[l]);
        }
    }
}

int exp_layout(bench_ctx_t *ctx)
{
    printf("\n== layout -- fragmentation per block layout: Masmano's F and the real programs' heap ==\n");
    static ly_table_t tb;
    memset(&tb, 0, sizeof tb);
    select_heaps(ctx, &tb);
    if (tb.nallocs == 0) {
        printf("no boundary-tag heap of the library selected (--alloc): nothing to measure\n");
        return 0;
    }
    printf("this binary and its siblings rtbench-align8, rtbench-m32 beside it, each its own process: `run masmano`\n"
           "(fragmentation runs only, same --seed and --scale) and `trace size` on each program recorded here.\n");
    printf("allocators: %s\n", tb.alloc_list);
    fflush(stdout);
    char dir[1024], tmpdir[1024];
    if (!sib_self_dir(dir, sizeof dir) || !sib_tmpdir(tmpdir, sizeof tmpdir, "layout")) {
        printf("cannot find this binary's directory or make a temporary one: nothing measured\n");
        return 1;
    }
    record_programs(ctx, &tb);
    tb.steps = LY_LAYOUTS * (1u + tb.nprogs);
    int rc = 0;
    for (int l = 0; l < LY_LAYOUTS && rc == 0 && !drv_stop; l++) {
        char exe[1100];
        if (ly_exe[l] == NULL) {
            ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1u);
            exe[n > 0 ? n : 0] = '\0';
        } else {
            snprintf(exe, sizeof exe, "%s%s", dir, ly_exe[l]);
        }
        if (access(exe, X_OK) != 0) {
            snprintf(tb.note[l], sizeof tb.note[l],
                     "not measured: %s not found (target rtbench-all builds it where it differs from rtbench's layout "
                     "and, for rtbench-m32, where the compiler links -m32 programs: bench/CMakeLists.txt)",
                     exe);
            tb.step += 1u + tb.nprogs;
            continue;
        }
        rc = run_layout(ctx, &tb, l, exe, tmpdir);
    }
    sib_remove_tree(tmpdir);
    if (ctx->csv_dir == NULL) {
        for (size_t p = 0; p < tb.nprogs; p++) {
            if (tb.why[p][0] == '\0') {
                unlink(tb.file[p]);
            }
        }
    }
    for (int l = 0; l < LY_LAYOUTS; l++) {
        printf("layout %d: %s\n", l, tb.note[l]);
    }
    char path[1200];
    FILE *csv = bench_csv_open(ctx, "layout.csv", false, path, sizeof path);
    if (csv != NULL) {
        fprintf(csv, "measure,allocator,layout,word_bits,heap_align,workload,value,n,heap_needed,live_peak\n");
    }
    print_masmano(&tb, csv);
    print_traces(&tb, csv);
    print_verdicts(&tb);
    fflush(stdout);
    bench_csv_close(csv, path);
    return drv_stop ? 130 : rc;
}
