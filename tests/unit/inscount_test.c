/* SPDX-License-Identifier: MIT */
/*
 * inscount_test.c -- the benchmark's instruction counter (bench/inscount.c, ptrace
 * single-stepping) is exact:
 *
 *   (a) on hand-written assembly of known length: a descriptor whose malloc is a loop of
 *       exactly 2 * size + 3 instructions and whose free is 6 nops + ret (7 instructions), counted
 *       through ic_count_trace() like any allocator, plus the counter's own ic_selftest();
 *   (b) on every registry allocator's malloc and free over a small deterministic trace, the mean
 *       per call equals what valgrind's callgrind reports for the same calls within
 *       IC_TOLERANCE instructions. The test re-executes itself under
 *       `valgrind --tool=callgrind` with `--callgrind-helper`, which replays the same trace on the
 *       same (zeroed, equally aligned) arena without any tracing; callgrind's output file gives,
 *       per descriptor function (<name>_d_malloc / <name>_d_free), the calls into it and their
 *       inclusive Ir.
 *
 * Skipped (printed SKIP, exit 77 = ctest's SKIP_RETURN_CODE): not Linux on x86-64 (-m32, cross builds), under ASan/TSan
 * (ptrace single-stepping of instrumented code is slow and the shadow memory makes counts
 * meaningless), when ptrace is refused (containers, seccomp). Part (b) alone is skipped when
 * valgrind is not installed or cannot read the binary's debug info, and in RT_DEBUG >= 2 builds
 * (every call walks the heap: minutes of single steps).
 */
#include "testlib.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ICT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ICT_SANITIZED 1
#endif
#endif
#ifndef ICT_SANITIZED
#define ICT_SANITIZED 0
#endif

#if defined(ICT_HAVE_BENCH) && defined(__linux__) && defined(__x86_64__) && !ICT_SANITIZED
#define ICT_RUN 1
#else
#define ICT_RUN 0
#endif

#if !ICT_RUN

int main(void)
{
    printf("SKIP inscount: the ptrace instruction counter needs Linux on x86-64 without sanitizers\n");
    return TL_SKIP_STATUS;
}

#else

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver.h"
#include "inscount.h"
#include "workload.h"

/* |ptrace mean - callgrind mean| per call allowed, in instructions. Both count the same user-mode
 * instructions from the descriptor function's entry to its return, ret included (the registry
 * wrapper's tail jump into rt_<name>_malloc/free is one instruction in both; callgrind counts
 * each iteration of a rep-prefixed string instruction, and single-stepping traps after each one
 * too). Observed difference on every registry allocator: 0.00. What could make them differ, and
 * the tolerance absorbs: code chosen at run time by CPU features (glibc's IFUNC memset/memcpy,
 * should an allocator or a debug build call them: valgrind's virtual CPU advertises fewer
 * features) and the first call through a lazily bound PLT slot (the dynamic linker's path
 * differs under valgrind's preloads) -- a few instructions on one call of ~33, i.e. well under 2
 * on the mean. (The arena's address would also matter -- the buddy system's work depends on its
 * alignment -- so both runs use an arena aligned to its own size.) */
#define IC_TOLERANCE 2.0

/* ---- code of known length --------------------------------------------------------------------- */

void *ict_loop_malloc(void *handle, size_t size); /* size >= 1: 1 + 2 * size + 2 instructions */
void ict_nop_free(void *handle, void *ptr);       /* 6 nops + ret: 7 instructions */
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl ict_loop_malloc\n"
        ".hidden ict_loop_malloc\n"
        ".type ict_loop_malloc, @function\n"
        "ict_loop_malloc:\n"
        "    movq %rsi, %rcx\n"
        "1:  decq %rcx\n"
        "    jnz 1b\n"
        "    leaq ict_sink(%rip), %rax\n"
        "    ret\n"
        ".size ict_loop_malloc, .-ict_loop_malloc\n"
        ".p2align 4\n"
        ".globl ict_nop_free\n"
        ".hidden ict_nop_free\n"
        ".type ict_nop_free, @function\n"
        "ict_nop_free:\n"
        "    nop\n"
        "    nop\n"
        "    nop\n"
        "    nop\n"
        "    nop\n"
        "    nop\n"
        "    ret\n"
        ".size ict_nop_free, .-ict_nop_free\n"
        ".local ict_sink\n"
        ".comm ict_sink, 64, 64\n"
        ".popsection\n");

static const rt_allocator_t known_descriptor = {
    .name = "known",
    .description = "hand-written assembly of known length",
    .alignment = 1,
    .malloc = ict_loop_malloc,
    .free = ict_nop_free,
};

/* ---- traces ------------------------------------------------------------------------------------ */

enum { ICT_SLOTS = 12, ICT_MAX_OPS = 96 };

typedef struct ict_trace {
    wl_trace_t t;
    wl_op_t ops[ICT_MAX_OPS];
} ict_trace_t;

static void add_op(ict_trace_t *x, uint32_t kind, uint32_t slot, uint32_t size)
{
    if (x->t.nops < ICT_MAX_OPS) {
        x->ops[x->t.nops++] = (wl_op_t){.slot = slot, .size = size, .kind = kind};
        if (kind == WL_MALLOC) {
            x->t.nmalloc++;
        } else {
            x->t.nfree++;
        }
    }
}

static void trace_init(ict_trace_t *x)
{
    memset(x, 0, sizeof *x);
    snprintf(x->t.name, sizeof x->t.name, "inscount_test");
    x->t.slots = ICT_SLOTS;
    x->t.measured = SIZE_MAX;
    x->t.ops = x->ops;
}

/* The allocator trace: fill every slot, then a seeded churn (free an occupied slot or fill an
 * empty one), then free everything. Sizes 1..600, deterministic (xorshift64*, fixed seed). */
static void allocator_trace(ict_trace_t *x, unsigned churn)
{
    trace_init(x);
    bool live[ICT_SLOTS] = {false};
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (uint32_t s = 0; s < ICT_SLOTS; s++) {
        add_op(x, WL_MALLOC, s, 1u + (uint32_t)(wl_rand(&state) % 600u));
        live[s] = true;
    }
    for (unsigned i = 0; i < churn; i++) {
        uint32_t s = (uint32_t)(wl_rand(&state) % ICT_SLOTS);
        if (live[s]) {
            add_op(x, WL_FREE, s, 0);
        } else {
            add_op(x, WL_MALLOC, s, 1u + (uint32_t)(wl_rand(&state) % 600u));
        }
        live[s] = !live[s];
    }
    for (uint32_t s = 0; s < ICT_SLOTS; s++) {
        if (live[s]) {
            add_op(x, WL_FREE, s, 0);
        }
    }
}

#define ICT_CHURN 48u

/* The arena: 1 MiB aligned to 1 MiB, so that allocators whose work depends on the buffer's
 * address (the buddy system aligns its orders to it) do the same work in the traced child and
 * under valgrind, whatever address space layout either gets. */
#define ICT_ARENA_SIZE ((size_t)1u << 20)
static unsigned char *arena;

static bool arena_map(void)
{
    void *p = mmap(NULL, 2u * ICT_ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return false;
    }
    uintptr_t a = ((uintptr_t)p + ICT_ARENA_SIZE - 1u) & ~(uintptr_t)(ICT_ARENA_SIZE - 1u);
    arena = (unsigned char *)a;
    return true;
}

/* ---- (a) ------------------------------------------------------------------------------------------ */

static bool ptrace_refused(const ic_result_t *r)
{
    return strstr(r->error, "TRACEME") != NULL || strstr(r->error, "Operation not permitted") != NULL;
}

/* Returns false (after printing SKIP) when ptrace cannot be used here. */
static bool test_known_length(void)
{
    ict_trace_t x;
    trace_init(&x);
    static const uint32_t sizes[] = {1, 2, 3, 10, 100, 1000, 7};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    for (uint32_t i = 0; i < nsizes; i++) {
        add_op(&x, WL_MALLOC, i, sizes[i]);
    }
    for (uint32_t i = 0; i < nsizes; i++) {
        add_op(&x, WL_FREE, i, 0);
    }
    x.t.slots = (uint32_t)nsizes;

    ic_plan_t plan = {.stride = 1, .step_budget = 0, .max_samples = 0};
    ic_result_t r;
    bool ok = ic_count_trace(&known_descriptor, NULL, 0, &x.t, &plan, &r, NULL, NULL);
    if (!ok && r.n == 0 && ptrace_refused(&r)) {
        printf("SKIP inscount: ptrace is not permitted here (%s)\n", r.error);
        ic_result_free(&r);
        return false;
    }
    TL_CHECK(ok, "ic_count_trace on the known-length descriptor: %s", r.error);
    TL_CHECK(r.n == x.t.nops, "%zu samples for %zu ops", r.n, x.t.nops);
    for (size_t k = 0; k < r.n; k++) {
        const ic_sample_t *s = &r.samples[k];
        const wl_op_t *op = &x.ops[s->op];
        uint32_t expect = op->kind == WL_MALLOC ? 2u * op->size + 3u : 7u;
        TL_CHECK(s->kind == op->kind && s->count == expect, "op %u (%s, size %u): counted %u, expected %u", s->op,
                 op->kind == WL_MALLOC ? "malloc" : "free", op->size, s->count, expect);
    }
    ic_result_free(&r);

    ic_selftest_t st;
    bool self = ic_selftest(&st);
    TL_CHECK(self, "ic_selftest: known5 %u (expected %u), loop1000 %u (expected %u)", st.known5, st.expect5,
             st.loop1000, st.expect_loop);
    return true;
}

/* ---- (b) ------------------------------------------------------------------------------------------ */

typedef struct ict_means {
    unsigned long long calls[2]; /* [WL_MALLOC], [WL_FREE] */
    unsigned long long ir[2];
} ict_means_t;

/* The calls of the trace without any tracing, for callgrind: same arena, same order. */
static int callgrind_helper(void)
{
    size_t n;
    const rt_allocator_t *const *reg = rt_registry(&n);
    ict_trace_t x;
    allocator_trace(&x, ICT_CHURN);
    for (size_t i = 0; i < n; i++) {
        memset(arena, 0, ICT_ARENA_SIZE);
        drv_instance_t in;
        if (!drv_open(&in, reg[i], arena, ICT_ARENA_SIZE, x.t.slots, false)) {
            return 2;
        }
        for (size_t k = 0; k < x.t.nops; k++) {
            drv_apply(&in, &x.ops[k], k);
        }
        drv_close(&in);
    }
    return 0;
}

/* Calls into `fn` and their inclusive Ir, summed over every caller, from a callgrind output file
 * written with --compress-strings=no --compress-pos=no (so every name is spelled out). */
static bool callgrind_calls(const char *path, const char *fn, unsigned long long *calls, unsigned long long *ir)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    char line[4096];
    int npos = 1;
    int ir_col = 0;
    bool callee_match = false;
    bool pending = false;
    *calls = 0;
    *ir = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (pending) {
            pending = false;
            /* cost line: npos positions, then the events */
            char *save = NULL;
            char *tok = strtok_r(line, " \t", &save);
            for (int i = 0; tok != NULL && i < npos + ir_col; i++) {
                tok = strtok_r(NULL, " \t", &save);
            }
            if (tok != NULL) {
                *ir += strtoull(tok, NULL, 10);
            }
            continue;
        }
        if (strncmp(line, "positions:", 10) == 0) {
            npos = 0;
            for (char *p = line + 10; *p != '\0';) {
                while (*p == ' ') {
                    p++;
                }
                if (*p == '\0') {
                    break;
                }
                npos++;
                while (*p != ' ' && *p != '\0') {
                    p++;
                }
            }
        } else if (strncmp(line, "events:", 7) == 0) {
            /* Ir is the first event unless told otherwise; this test asks for none other. */
            ir_col = 0;
        } else if (strncmp(line, "cfn=", 4) == 0) {
            const char *name = line + 4;
            /* "(id) name" appears even without compression in some versions: skip an id. */
            if (name[0] == '(') {
                const char *close = strchr(name, ')');
                if (close != NULL) {
                    name = close + 1;
                    while (*name == ' ') {
                        name++;
                    }
                }
            }
            callee_match = strcmp(name, fn) == 0;
        } else if (strncmp(line, "calls=", 6) == 0) {
            if (callee_match) {
                *calls += strtoull(line + 6, NULL, 10);
                pending = true;
            }
        }
    }
    fclose(f);
    return true;
}

static bool have_valgrind(void) { return system("valgrind --version >/dev/null 2>&1") == 0; }

static void test_against_callgrind(void)
{
    size_t n;
    const rt_allocator_t *const *reg = rt_registry(&n);
    ict_trace_t x;
    allocator_trace(&x, ICT_CHURN);
    printf("trace: %zu ops (%zu malloc, %zu free) per allocator\n", x.t.nops, x.t.nmalloc, x.t.nfree);

    enum { ICT_MAX_ALLOCATORS = 32 };
    ict_means_t pt[ICT_MAX_ALLOCATORS];
    memset(pt, 0, sizeof pt);
    TL_CHECK(n <= ICT_MAX_ALLOCATORS, "registry of %zu allocators", n);
    if (n > ICT_MAX_ALLOCATORS) {
        n = ICT_MAX_ALLOCATORS;
    }
    for (size_t i = 0; i < n; i++) {
        memset(arena, 0, ICT_ARENA_SIZE);
        ic_plan_t plan = {.stride = 1, .step_budget = 0, .max_samples = 0};
        ic_result_t r;
        bool ok = ic_count_trace(reg[i], arena, ICT_ARENA_SIZE, &x.t, &plan, &r, NULL, NULL);
        TL_CHECK(ok, "%s: ic_count_trace: %s", reg[i]->name, r.error);
        TL_CHECK(r.n == x.t.nops, "%s: %zu calls counted of %zu", reg[i]->name, r.n, x.t.nops);
        for (size_t k = 0; k < r.n; k++) {
            uint32_t kind = r.samples[k].kind == WL_MALLOC ? WL_MALLOC : WL_FREE;
            pt[i].calls[kind]++;
            pt[i].ir[kind] += r.samples[k].count;
        }
        ic_result_free(&r);
    }

    if (!have_valgrind()) {
        printf("SKIP inscount: valgrind is not installed; the ptrace counts are not compared with callgrind\n");
        tl_state.skipped++;
        return;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1u);
    if (!TL_CHECK(len > 0, "readlink /proc/self/exe: %s", strerror(errno))) {
        return;
    }
    self[len] = '\0';
    char dir[] = "/tmp/rt_inscount_XXXXXX";
    if (!TL_CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) {
        return;
    }
    char out[sizeof dir + 32], log[sizeof dir + 32], cmd[2 * PATH_MAX + 256];
    snprintf(out, sizeof out, "%s/callgrind.out", dir);
    snprintf(log, sizeof log, "%s/valgrind.log", dir);
    snprintf(cmd, sizeof cmd,
             "valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file='%s' "
             "'%s' --callgrind-helper >'%s' 2>&1",
             out, self, log);
    fflush(stdout);
    int rc = system(cmd);
    if (rc != 0) {
        /* Valgrind too old for the compiler's DWARF (e.g. clang's DWARF 5) gives up reading it. */
        snprintf(cmd, sizeof cmd, "grep -q 'debuginfo reader' '%s'", log);
        if (system(cmd) == 0) {
            printf("SKIP inscount: valgrind cannot read this binary's debug info (see %s)\n", log);
            tl_state.skipped++;
            return;
        }
    }
    TL_CHECK(rc == 0, "valgrind failed (status %d): see %s", rc, log);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            for (uint32_t kind = WL_MALLOC; kind <= WL_FREE; kind++) {
                char fn[96];
                snprintf(fn, sizeof fn, "%s_d_%s", reg[i]->name, kind == WL_MALLOC ? "malloc" : "free");
                unsigned long long calls = 0, ir = 0;
                TL_CHECK(callgrind_calls(out, fn, &calls, &ir), "reading %s", out);
                TL_CHECK(calls == pt[i].calls[kind], "%s: callgrind saw %llu calls, ptrace counted %llu", fn, calls,
                         pt[i].calls[kind]);
                if (calls == 0 || pt[i].calls[kind] == 0) {
                    continue;
                }
                double cg = (double)ir / (double)calls;
                double pm = (double)pt[i].ir[kind] / (double)pt[i].calls[kind];
                double d = pm - cg;
                printf("%-18s calls %3llu  ptrace mean %9.2f  callgrind mean %9.2f  difference %+.2f\n", fn, calls, pm,
                       cg, d);
                TL_CHECK(d <= IC_TOLERANCE && d >= -IC_TOLERANCE, "%s: ptrace mean %.2f vs callgrind mean %.2f", fn, pm,
                         cg);
            }
        }
    }
    if (tl_state.failed == 0) {
        unlink(out);
        unlink(log);
        rmdir(dir);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--callgrind-helper") == 0) {
        return arena_map() ? callgrind_helper() : 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!TL_CHECK(arena_map(), "mmap of the arena: %s", strerror(errno))) {
        return tl_summary("inscount");
    }
    if (!test_known_length()) {
        return TL_SKIP_STATUS; /* nothing of the counter was checked */
    }
    if (TL_DEBUG_WALKS) {
        /* RT_DEBUG >= 2: every call walks the whole heap (tens of thousands of instructions),
         * which single-stepping takes many minutes to count; the comparison checks the counter,
         * which the Release configurations do. */
        printf("SKIP inscount: RT_DEBUG >= 2 build, allocator calls are not compared with callgrind\n");
        tl_state.skipped++;
    } else {
        test_against_callgrind();
    }
    return tl_summary("inscount");
}

#endif
