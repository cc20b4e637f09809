/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/inscount.c -- instruction counts of single calls by ptrace single-stepping; see
 * inscount.h for the method. The child side (what runs the workload) and the parent side (the
 * tracer) share one MAP_SHARED page array: the child writes which op it is about to call, the
 * parent writes the count back before letting the child go on.
 */
#include "inscount.h"
#include "paths.h"

#include <stdlib.h>
#include <string.h>

#if IC_SUPPORTED

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* The function the child is about to call. Same address in parent and child (fork). */
static volatile uintptr_t ic_target;

/* Stores the callee, then traps; the parent takes over from the instruction after int3. */
#define IC_TRAP(fn)                              \
    do {                                         \
        ic_target = (uintptr_t)(fn);             \
        __asm__ volatile("int3" : : : "memory"); \
    } while (0)

/* Steps allowed from the trap to the callee's entry (call setup), and inside one call. */
enum { IC_MAX_SETUP_STEPS = 512 };
/* Samples taken at the planned stride before the running mean may widen it. */
enum { IC_ADAPT_AFTER = 20 };
#define IC_MAX_CALL_STEPS 200000000ull

typedef struct ic_shared {
    volatile uint64_t steps;
    volatile size_t n;
    volatile size_t final_stride;
    volatile int widened;
    size_t cap;
    ic_sample_t samples[];
} ic_shared_t;

/* --- code of known length, for the self-test ------------------------------------------------- */

int rtbench_ic_known5(void);
uint64_t rtbench_ic_loop(uint64_t n);
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl rtbench_ic_known5\n"
        ".hidden rtbench_ic_known5\n"
        ".type rtbench_ic_known5, @function\n"
        "rtbench_ic_known5:\n"
        "    nop\n"
        "    nop\n"
        "    nop\n"
        "    xorl %eax, %eax\n"
        "    ret\n"
        ".size rtbench_ic_known5, .-rtbench_ic_known5\n"
        ".p2align 4\n"
        ".globl rtbench_ic_loop\n"
        ".hidden rtbench_ic_loop\n"
        ".type rtbench_ic_loop, @function\n"
        "rtbench_ic_loop:\n" /* n >= 1: 1 + 2n + 2 instructions */
        "    movq %rdi, %rcx\n"
        "1:  decq %rcx\n"
        "    jnz 1b\n"
        "    movq %rdi, %rax\n"
        "    ret\n"
        ".size rtbench_ic_loop, .-rtbench_ic_loop\n"
        ".popsection\n");

/* --- parent: the tracer ---------------------------------------------------------------------- */

static void set_error(ic_result_t *r, const char *what)
{
    snprintf(r->error, sizeof r->error, "%s%s%s", what, errno != 0 ? ": " : "", errno != 0 ? strerror(errno) : "");
}

/* waitpid that survives EINTR unless the run was stopped. */
static bool wait_child(pid_t pid, int *status)
{
    for (;;) {
        if (waitpid(pid, status, 0) == pid) {
            return true;
        }
        if (errno != EINTR || drv_stop) {
            return false;
        }
    }
}

static void kill_child(pid_t pid)
{
    int status;
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

/* One instruction. A signal that arrives instead (the tracee stops for its delivery before the
 * step) is suppressed and the step retried. */
static bool step(pid_t pid, struct user_regs_struct *regs)
{
    for (;;) {
        int status;
        if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) != 0 || !wait_child(pid, &status) || !WIFSTOPPED(status)) {
            return false;
        }
        if (WSTOPSIG(status) == SIGTRAP) {
            return ptrace(PTRACE_GETREGS, pid, NULL, regs) == 0;
        }
        if (drv_stop) {
            return false;
        }
    }
}

/* The child stopped on its int3: count the call it is about to make. */
static bool count_call(pid_t pid, ic_shared_t *sh, ic_result_t *r)
{
    errno = 0;
    long target = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)&ic_target, NULL);
    if (errno != 0) {
        set_error(r, "PTRACE_PEEKDATA of the target");
        return false;
    }
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0) {
        set_error(r, "PTRACE_GETREGS");
        return false;
    }
    uint64_t setup = 0;
    while (regs.rip != (unsigned long long)target) {
        if (++setup > IC_MAX_SETUP_STEPS || !step(pid, &regs)) {
            errno = 0;
            set_error(r, drv_stop ? "interrupted" : "the call never reached its target");
            return false;
        }
    }
    unsigned long long entry_sp = regs.rsp;
    errno = 0;
    long ret = ptrace(PTRACE_PEEKDATA, pid, (void *)(uintptr_t)entry_sp, NULL);
    if (errno != 0) {
        set_error(r, "PTRACE_PEEKDATA of the return address");
        return false;
    }
    uint64_t count = 0;
    do {
        if (!step(pid, &regs) || ++count > IC_MAX_CALL_STEPS) {
            errno = 0;
            set_error(r, drv_stop ? "interrupted" : "single-stepping the call failed");
            return false;
        }
    } while (!(regs.rip == (unsigned long long)ret && regs.rsp == entry_sp + 8u));
    size_t k = sh->n;
    if (k < sh->cap) {
        sh->samples[k].count = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
        sh->n = k + 1u;
    }
    sh->steps += count + setup;
    return true;
}

typedef int (*child_body_fn)(ic_shared_t *sh, const void *job);

/* Forks the child that runs body(sh, job) under ptrace and waits for it to stop before its body.
 * Returns its pid, or -1 (the error in r; the child killed). */
static pid_t start_traced(child_body_fn body, const void *job, ic_shared_t *sh, ic_result_t *r)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        set_error(r, "fork");
        return -1;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_IGN); /* Ctrl-C is the parent's to handle */
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
            _exit(3);
        }
        raise(SIGSTOP);
        _exit(body(sh, job));
    }

    int status = 0;
    bool ok = wait_child(pid, &status) && WIFSTOPPED(status);
    if (ok && ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(uintptr_t)PTRACE_O_EXITKILL) != 0) {
        ok = false;
    }
    if (!ok) {
        set_error(r, WIFEXITED(status) && WEXITSTATUS(status) == 3 ? "PTRACE_TRACEME refused"
                                                                   : "starting the traced child");
        kill_child(pid);
        return -1;
    }
    return pid;
}

/* Runs the stopped child to its end, counting each announced call at its SIGTRAP (count_call)
 * and reporting progress (the last sample's tag or op over progress_total). Returns whether the
 * child ran to a clean exit; the error in r otherwise. */
static bool trace_child(pid_t pid, ic_shared_t *sh, ic_result_t *r, ic_progress_fn progress, void *context,
                        double progress_total, bool progress_by_tag)
{
    bool ok = true;
    int status = 0;
    int deliver = 0;
    for (;;) {
        if (ptrace(PTRACE_CONT, pid, NULL, (void *)(intptr_t)deliver) != 0) {
            set_error(r, "PTRACE_CONT");
            ok = false;
            kill_child(pid);
            break;
        }
        deliver = 0;
        if (!wait_child(pid, &status)) {
            r->interrupted = drv_stop != 0;
            set_error(r, "waitpid");
            ok = false;
            kill_child(pid);
            break;
        }
        if (WIFEXITED(status)) {
            if (WEXITSTATUS(status) != 0) {
                errno = 0;
                snprintf(r->error, sizeof r->error, "the traced child failed (exit status %d)", WEXITSTATUS(status));
                ok = false;
            }
            break;
        }
        if (WIFSIGNALED(status)) {
            snprintf(r->error, sizeof r->error, "the traced child died of signal %d", WTERMSIG(status));
            ok = false;
            break;
        }
        if (drv_stop) {
            r->interrupted = true;
            ok = false;
            snprintf(r->error, sizeof r->error, "interrupted");
            kill_child(pid);
            break;
        }
        int sig = WSTOPSIG(status);
        if (sig == SIGTRAP) {
            if (!count_call(pid, sh, r)) {
                r->interrupted = drv_stop != 0;
                ok = false;
                kill_child(pid);
                break;
            }
            if (progress != NULL && sh->n > 0) {
                const ic_sample_t *last = &sh->samples[sh->n - 1u];
                progress(context, (double)(progress_by_tag ? last->tag : last->op) / progress_total);
            }
        } else if (sig != SIGINT && sig != SIGSTOP) {
            deliver = sig; /* not ours: hand it on */
        }
    }
    return ok;
}

static bool run_traced(child_body_fn body, const void *job, size_t cap, ic_result_t *r, ic_progress_fn progress,
                       void *context, double progress_total, bool progress_by_tag)
{
    memset(r, 0, sizeof *r);
    size_t bytes = sizeof(ic_shared_t) + (cap != 0 ? cap : 1u) * sizeof(ic_sample_t);
    ic_shared_t *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        set_error(r, "mmap");
        return false;
    }
    sh->cap = cap;
    pid_t pid = start_traced(body, job, sh, r);
    if (pid < 0) {
        munmap(sh, bytes);
        return false;
    }
    bool ok = trace_child(pid, sh, r, progress, context, progress_total, progress_by_tag);
    r->n = sh->n;
    r->steps = sh->steps;
    r->final_stride = sh->final_stride;
    r->widened = sh->widened != 0;
    r->samples = malloc((r->n != 0 ? r->n : 1u) * sizeof *r->samples);
    if (r->samples == NULL) {
        r->n = 0;
        ok = false;
    } else if (r->n != 0) {
        memcpy(r->samples, sh->samples, r->n * sizeof *r->samples);
    }
    munmap(sh, bytes);
    r->ok = ok;
    return ok;
}

/* --- child: the workloads -------------------------------------------------------------------- */

typedef struct trace_job {
    const rt_allocator_t *a;
    void *buffer;
    size_t size;
    const wl_trace_t *t;
    const ic_plan_t *plan;
} trace_job_t;

/* Puts the op in the next sample record (the parent fills in the count). */
static void announce(ic_shared_t *sh, size_t i, uint32_t kind, uint32_t tag)
{
    size_t k = sh->n;
    if (k < sh->cap) {
        sh->samples[k] = (ic_sample_t){.op = (uint32_t)i, .kind = kind, .tag = tag, .count = 0};
    }
}

static void *traced_malloc(drv_instance_t *in, size_t size)
{
    void *(*fn)(void *, size_t) = in->a->malloc;
    IC_TRAP(fn);
    return fn(in->handle, size);
}

static void traced_free(drv_instance_t *in, void *p)
{
    void (*fn)(void *, void *) = in->a->free;
    IC_TRAP(fn);
    fn(in->handle, p);
}

/* realloc, calloc and memalign through the descriptor's own function (driver.h's fallbacks, for an
 * allocator without one, are not counted: drv_apply_ext runs them untraced). */
static bool traced_other(drv_instance_t *in, const wl_op_t *op, size_t i)
{
    const rt_allocator_t *a = in->a;
    void *old = in->slots[op->slot];
    void *p = NULL;
    switch (WL_OP_KIND(op)) {
    case WL_REALLOC: {
        void *(*fn)(void *, void *, size_t) = a->realloc;
        IC_TRAP(fn);
        p = fn(in->handle, old, op->size);
        if (p == NULL) {
            return true; /* the old block stays */
        }
        break;
    }
    case WL_CALLOC: {
        void *(*fn)(void *, size_t, size_t) = a->calloc;
        IC_TRAP(fn);
        p = fn(in->handle, 1, op->size);
        break;
    }
    case WL_MEMALIGN: {
        void *(*fn)(void *, size_t, size_t) = a->memalign;
        IC_TRAP(fn);
        p = fn(in->handle, WL_OP_ALIGN(op), op->size);
        break;
    }
    default: return false;
    }
    if (p != NULL) {
        *(volatile unsigned char *)p = (unsigned char)i;
    }
    in->slots[op->slot] = p;
    return true;
}

/* Whether op i can be counted: a malloc or free, or a realloc / calloc / memalign the allocator
 * has, not flagged as failed in a recording (those are replayed untraced). */
static bool countable(const rt_allocator_t *a, const wl_op_t *op)
{
    if ((op->kind & WL_OP_FAILED) != 0u) {
        return false;
    }
    switch (WL_OP_KIND(op)) {
    case WL_MALLOC:
    case WL_FREE: return true;
    case WL_REALLOC: return a->realloc != NULL;
    case WL_CALLOC: return a->calloc != NULL;
    case WL_MEMALIGN: return a->memalign != NULL;
    }
    return false;
}

/* Op i announced, then run through the traced function: the parent counts its instructions. */
static void traced_op(ic_shared_t *sh, drv_instance_t *in, const wl_op_t *op, size_t i)
{
    announce(sh, i, WL_OP_KIND(op), 0);
    if (op->kind == WL_MALLOC) {
        void *p = traced_malloc(in, op->size);
        if (p != NULL) {
            *(volatile unsigned char *)p = (unsigned char)i;
        }
        in->slots[op->slot] = p;
    } else if (op->kind != WL_FREE) {
        traced_other(in, op, i);
    } else {
        void *p = in->slots[op->slot];
        in->slots[op->slot] = NULL;
        if (p != NULL) {
            traced_free(in, p);
        }
    }
}

/* The stride to the next sample after op i: `stride` as it was, widened once IC_ADAPT_AFTER
 * samples are in if the rest at that stride would overrun the budget (the running mean of steps
 * per sample says). 0 when sampling stops: the sample records are full or the budget is spent. */
static size_t next_stride(ic_shared_t *sh, const wl_trace_t *t, size_t i, size_t base, uint64_t budget, size_t stride)
{
    size_t got = sh->n;
    uint64_t used = sh->steps;
    if (got >= sh->cap || (budget != 0 && used >= budget)) {
        sh->widened = 1;
        return 0;
    }
    if (budget != 0 && got >= IC_ADAPT_AFTER) {
        double mean = (double)used / (double)got;
        double remaining = (double)(t->nops - i - 1u);
        double want = ceil(remaining * mean / (double)(budget - used));
        stride = want > (double)base ? (size_t)want : base;
        if (stride > base) {
            sh->widened = 1;
        }
    }
    sh->final_stride = stride;
    return stride;
}

static int child_trace(ic_shared_t *sh, const void *arg)
{
    const trace_job_t *job = arg;
    const wl_trace_t *t = job->t;
    drv_instance_t in;
    if (!drv_open(&in, job->a, job->buffer, job->size, t->slots, false)) {
        return 2;
    }
    if (job->plan->prepare != NULL && !job->plan->prepare(job->a, in.handle, job->plan->prepare_context)) {
        return 2;
    }
    const size_t base = job->plan->stride != 0 ? job->plan->stride : 1u;
    const uint64_t budget = job->plan->step_budget;
    size_t stride = base;
    size_t next = base - 1u;
    bool sampling = true;
    sh->final_stride = base;
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        if (!sampling || i != next) {
            drv_apply(&in, op, i);
            continue;
        }
        if (!countable(job->a, op)) {
            drv_apply(&in, op, i);
            next = i + 1u; /* the sample moves to the next op */
            continue;
        }
        bool classify = job->plan->classify && hp_supported(job->a) && (op->kind == WL_MALLOC || op->kind == WL_FREE);
        hp_pre_t pre;
        if (classify) {
            hp_before(job->a, in.handle, op, in.slots[op->slot], &pre);
        }
        traced_op(sh, &in, op, i);
        if (classify && sh->n > 0u && sh->n <= sh->cap && sh->samples[sh->n - 1u].op == (uint32_t)i) {
            sh->samples[sh->n - 1u].tag = hp_after(job->a, in.handle, op, in.slots[op->slot], &pre);
        }
        stride = next_stride(sh, t, i, base, budget, stride);
        sampling = stride != 0u;
        next = i + stride;
    }
    drv_close(&in);
    return 0;
}

typedef struct memfrag_job {
    const rt_allocator_t *a;
    void *buffer;
    size_t size;
    uint32_t nmax;
} memfrag_job_t;

static int child_memfrag(ic_shared_t *sh, const void *arg)
{
    const memfrag_job_t *job = arg;
    drv_instance_t in;
    if (!drv_open(&in, job->a, job->buffer, job->size, 2u * job->nmax + 1u, false)) {
        return 2;
    }
    for (uint32_t n = 1; n <= job->nmax; n++) {
        wl_trace_t t;
        if (!wl_memfrag(&t, n) || (n > 1 && !drv_reset(&in))) {
            return 2;
        }
        for (size_t i = 0; i < t.measured; i++) {
            drv_apply(&in, &t.ops[i], i);
        }
        const wl_op_t *op = &t.ops[t.measured];
        announce(sh, t.measured, WL_MALLOC, n);
        in.slots[op->slot] = traced_malloc(&in, op->size);
        wl_release(&t);
    }
    drv_close(&in);
    return 0;
}

static int child_selftest(ic_shared_t *sh, const void *arg)
{
    (void)arg;
    announce(sh, 0, WL_MALLOC, 5);
    int (*f5)(void) = rtbench_ic_known5;
    IC_TRAP(f5);
    volatile int r5 = f5();
    announce(sh, 1, WL_MALLOC, 1000);
    uint64_t (*fl)(uint64_t) = rtbench_ic_loop;
    IC_TRAP(fl);
    volatile uint64_t rl = fl(1000);
    (void)r5;
    (void)rl;
    return 0;
}

bool ic_count_trace(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, const ic_plan_t *plan,
                    ic_result_t *r, ic_progress_fn progress, void *context)
{
    trace_job_t job = {a, buffer, size, t, plan};
    size_t stride = plan->stride != 0 ? plan->stride : 1u;
    size_t cap = t->nops / stride + 1u;
    if (plan->max_samples != 0 && cap > plan->max_samples) {
        cap = plan->max_samples;
    }
    return run_traced(child_trace, &job, cap, r, progress, context, (double)t->nops, false);
}

bool ic_count_memfrag(const rt_allocator_t *a, void *buffer, size_t size, uint32_t nmax, ic_result_t *r,
                      ic_progress_fn progress, void *context)
{
    memfrag_job_t job = {a, buffer, size, nmax};
    return run_traced(child_memfrag, &job, nmax, r, progress, context, (double)nmax, true);
}

bool ic_selftest(ic_selftest_t *st)
{
    ic_result_t r;
    memset(st, 0, sizeof *st);
    st->expect5 = 5;
    st->expect_loop = 2u * 1000u + 3u;
    bool ok = run_traced(child_selftest, NULL, 2, &r, NULL, NULL, 1.0, false);
    if (ok && r.n == 2) {
        st->known5 = r.samples[0].count;
        st->loop1000 = r.samples[1].count;
    }
    st->ok = ok && st->known5 == st->expect5 && st->loop1000 == st->expect_loop;
    ic_result_free(&r);
    return st->ok;
}

#else /* !IC_SUPPORTED */

static bool unsupported(ic_result_t *r)
{
    memset(r, 0, sizeof *r);
    strncpy(r->error, "instruction counting needs Linux on x86-64", sizeof r->error - 1u);
    return false;
}

bool ic_count_trace(const rt_allocator_t *a, void *buffer, size_t size, const wl_trace_t *t, const ic_plan_t *plan,
                    ic_result_t *r, ic_progress_fn progress, void *context)
{
    (void)a, (void)buffer, (void)size, (void)t, (void)plan, (void)progress, (void)context;
    return unsupported(r);
}

bool ic_count_memfrag(const rt_allocator_t *a, void *buffer, size_t size, uint32_t nmax, ic_result_t *r,
                      ic_progress_fn progress, void *context)
{
    (void)a, (void)buffer, (void)size, (void)nmax, (void)progress, (void)context;
    return unsupported(r);
}

bool ic_selftest(ic_selftest_t *st)
{
    memset(st, 0, sizeof *st);
    return false;
}

#endif

void ic_result_free(ic_result_t *r)
{
    free(r->samples);
    r->samples = NULL;
    r->n = 0;
}
