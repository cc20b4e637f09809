/* SPDX-License-Identifier: MIT */
/*
 * wf_visits.c -- clock-free work of the wait-free buddy tree on Stellwag's tests I and III: node
 * visits and atomic RMWs per malloc, for every variant, on a 64 MiB tree (paper 3.5.2).
 *
 *   test I    malloc(948) until it fails, never freed (948 bytes = 15 nodes of 64 bytes)
 *   test III  T request streams, each from 10 bytes growing by x1.25, never freed, interleaved
 *             round-robin until every stream has failed once (T = 16, the paper's threads)
 *
 * Default (the ctest): one OS thread, so every figure is deterministic. It asserts, without any
 * clock: every malloc within its variant's stated bound (rt_wf_bound); with RT_WF_HINTS exactly
 * the direct path (H - s + 1 nodes, as many RMWs) on every successful malloc, since the hints are
 * exact when no call overlaps (with read-only descent each path node is arrived at twice, read and
 * claimed); the paper's utilisation figures (92.58 % and 66.79 %) reached
 * within a point; eq. 3 (rt_wf_check) at the end.
 *
 * Usage: wf_visits [MiB] [--threads N]
 *   MiB          tree buffer (default 64; the ctest runs 64, or 4 under sanitizers and qemu)
 *   --threads N  also run both tests with N OS threads on one instance (they start together at a
 *                barrier and the streams of test III are split among them): the maxima then
 *                depend on the interleaving and are printed, not asserted
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>

#include "testlib.h"

#include "rtalloc/waitfree.h"

typedef struct variant {
    const char *name;
    size_t node;
    unsigned flags;
} variant_t;

static const variant_t variants[] = {
    {"paper (wf)", 64, 0},
    {"wf32", 32, 0},
    {"wf128", 128, 0},
    {"wf256", 256, 0},
    {"read-only (wf_ro)", 64, RT_WF_READONLY_DESCENT},
    {"lazy (wf_lazy)", 64, RT_WF_LAZY_REINIT},
    {"hints", 64, RT_WF_HINTS},
    {"hints+lazy (wf_hint)", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT},
    {"hints+read-only", 64, RT_WF_HINTS | RT_WF_READONLY_DESCENT},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

typedef struct work {
    unsigned long calls, fails;
    uint32_t max_nodes, max_rmw, max_fail_nodes;
    double sum_nodes, sum_rmw;
    uint64_t requested; /* bytes of the successful requests */
    unsigned long beyond_bound, off_path;
    uint32_t max_nodes_height; /* the request height of the worst call */
} work_t;

static void account(work_t *wk, rt_wf_t *w, size_t size, const rt_wf_trace_t *t, bool ok)
{
    wk->calls++;
    wk->sum_nodes += t->nodes;
    wk->sum_rmw += t->rmw;
    if (t->nodes > wk->max_nodes) {
        wk->max_nodes = t->nodes;
        wk->max_nodes_height = t->height;
    }
    wk->max_rmw = t->rmw > wk->max_rmw ? t->rmw : wk->max_rmw;
    rt_wf_bound_t b;
    if (rt_wf_bound(w, size, &b) && (t->nodes > b.malloc_nodes || t->rmw > b.malloc_rmw)) {
        wk->beyond_bound++;
    }
    if (ok) {
        wk->requested += size;
        /* read-only descent arrives at each path node twice: reading, then claiming */
        uint32_t nodes = (rt_wf_flags(w) & RT_WF_READONLY_DESCENT) != 0u ? 2u * b.path : b.path;
        if ((rt_wf_flags(w) & RT_WF_HINTS) != 0u && (t->nodes != nodes || t->rmw != b.path)) {
            wk->off_path++;
        }
    } else {
        wk->fails++;
        wk->max_fail_nodes = t->nodes > wk->max_fail_nodes ? t->nodes : wk->max_fail_nodes;
    }
}

static void merge(work_t *a, const work_t *b)
{
    a->calls += b->calls;
    a->fails += b->fails;
    a->sum_nodes += b->sum_nodes;
    a->sum_rmw += b->sum_rmw;
    a->requested += b->requested;
    a->beyond_bound += b->beyond_bound;
    a->off_path += b->off_path;
    if (b->max_nodes > a->max_nodes) {
        a->max_nodes = b->max_nodes;
        a->max_nodes_height = b->max_nodes_height;
    }
    a->max_rmw = b->max_rmw > a->max_rmw ? b->max_rmw : a->max_rmw;
    a->max_fail_nodes = b->max_fail_nodes > a->max_fail_nodes ? b->max_fail_nodes : a->max_fail_nodes;
}

#define STREAMS 16u

/* --- one run: a test on a fresh instance, on `threads` OS threads (1 = inline, deterministic) --- */

typedef struct run {
    rt_wf_t *w;
    unsigned test; /* 1 or 3 */
    unsigned threads;
    pthread_barrier_t start;
    work_t part[64];
} run_t;

typedef struct worker {
    run_t *r;
    unsigned id;
} worker_t;

static void test_one(rt_wf_t *w, work_t *wk)
{
    for (;;) { /* ends: the tree holds at most N / 15 such chunks */
        rt_wf_trace_t t;
        void *p = rt_wf_malloc_ex(w, 948, &t);
        account(wk, w, 948, &t, p != NULL);
        if (p == NULL) {
            return;
        }
    }
}

/* Streams id, id + threads, ...: round-robin over the streams this thread owns. */
static void test_three(rt_wf_t *w, work_t *wk, unsigned id, unsigned threads)
{
    double size[STREAMS];
    bool done[STREAMS];
    unsigned alive = 0;
    for (unsigned k = id; k < STREAMS; k += threads) {
        size[k] = 10.0;
        done[k] = false;
        alive++;
    }
    while (alive > 0u) { /* every stream fails once its size exceeds the tree: <= 80 rounds */
        for (unsigned k = id; k < STREAMS; k += threads) {
            if (done[k]) {
                continue;
            }
            size_t n = (size_t)size[k];
            rt_wf_trace_t t;
            void *p = n <= rt_wf_max_request(w) ? rt_wf_malloc_ex(w, n, &t) : NULL;
            if (n <= rt_wf_max_request(w)) {
                account(wk, w, n, &t, p != NULL);
            }
            if (p == NULL) {
                done[k] = true;
                alive--;
            } else {
                size[k] *= 1.25;
            }
        }
    }
}

static void *worker_main(void *arg)
{
    worker_t *x = arg;
    run_t *r = x->r;
    pthread_barrier_wait(&r->start);
    if (r->test == 1u) {
        test_one(r->w, &r->part[x->id]);
    } else {
        test_three(r->w, &r->part[x->id], x->id, r->threads);
    }
    return NULL;
}

static bool run_test(const variant_t *v, unsigned test, unsigned threads, size_t bytes, work_t *out, size_t *height,
                     double *util)
{
    memset(out, 0, sizeof *out);
    size_t ctrl = rt_wf_control_size();
    void *control = aligned_alloc(64, (ctrl + 63u) & ~(size_t)63u);
    void *tree = aligned_alloc(4096, bytes);
    TL_REQUIRE(control != NULL && tree != NULL, "out of memory");
    rt_wf_config_t cfg = {v->node, v->flags};
    /* the paper's heap: the whole 64 MiB is the tree (control block apart, as in the paper) */
    rt_wf_t *w = rt_wf_create_split(control, tree, bytes, &cfg);
    TL_REQUIRE(w != NULL, "%s: create", v->name);
    *height = rt_wf_height(w);
    static run_t r;
    memset(&r, 0, sizeof r);
    r.w = w;
    r.test = test;
    r.threads = threads;
    if (threads <= 1u) {
        if (test == 1u) {
            test_one(w, &r.part[0]);
        } else {
            test_three(w, &r.part[0], 0, 1);
        }
    } else {
        pthread_t tid[64];
        worker_t wx[64];
        pthread_barrier_init(&r.start, NULL, threads);
        for (unsigned i = 0; i < threads; i++) {
            wx[i] = (worker_t){&r, i};
            TL_REQUIRE(pthread_create(&tid[i], NULL, worker_main, &wx[i]) == 0, "pthread_create");
        }
        for (unsigned i = 0; i < threads; i++) {
            pthread_join(tid[i], NULL);
        }
        pthread_barrier_destroy(&r.start);
    }
    for (unsigned i = 0; i < (threads > 1u ? threads : 1u); i++) {
        merge(out, &r.part[i]);
    }
    *util = (double)out->requested / (double)(rt_wf_nodes(w) * rt_wf_node_size(w) + rt_wf_node_size(w));
    TL_CHECK(rt_wf_check(w), "%s: test %u: equation 3 at the end", v->name, test);
    free(tree);
    free(control);
    return true;
}

static void print_row(const variant_t *v, const work_t *wk, size_t height, double util)
{
    printf("  %-22s H=%-2zu %8lu %6lu %9u %8.2f %8u %8.2f %6.2f%%  (worst at s=%u)\n", v->name, height, wk->calls,
           wk->fails, wk->max_nodes, wk->sum_nodes / (double)wk->calls, wk->max_rmw, wk->sum_rmw / (double)wk->calls,
           100.0 * util, wk->max_nodes_height);
}

/* One table: test I or III on a tree of `mib` MiB with nt threads, every variant; the bounds are
 * asserted on the deterministic (one-thread) runs. */
static void run_table(unsigned test, unsigned nt, size_t mib, size_t bytes)
{
    printf("\nTest %s, %zu MiB tree, %u thread%s%s\n",
           test == 1u ? "I (malloc(948) until full)" : "III (16 streams x1.25 from 10 B)", mib, nt, nt == 1u ? "" : "s",
           nt == 1u ? " (deterministic)" : " (one interleaving; not asserted)");
    printf("  %-22s %-4s %8s %6s %9s %8s %8s %8s %7s\n", "variant", "", "mallocs", "fails", "max nodes", "mean",
           "max RMW", "mean", "util");
    work_t base;
    memset(&base, 0, sizeof base);
    for (size_t k = 0; k < NVARIANTS; k++) {
        const variant_t *v = &variants[k];
        work_t wk;
        size_t height = 0;
        double util = 0.0;
        if (!run_test(v, test, nt, bytes, &wk, &height, &util)) {
            continue;
        }
        print_row(v, &wk, height, util);
        if (k == 0u) {
            base = wk;
        }
        if (nt == 1u) {
            TL_CHECK(wk.beyond_bound == 0u, "%s: test %u: %lu mallocs beyond the stated bound", v->name, test,
                     wk.beyond_bound);
            TL_CHECK(wk.off_path == 0u, "%s: test %u: %lu successful mallocs off the direct path", v->name, test,
                     wk.off_path);
            if (v->node == 64u && mib == 64u) {
                double paper = test == 1u ? 0.9258 : 0.6679;
                TL_CHECK(util >= paper - 0.01, "%s: test %u: utilisation %.2f %%, the paper %.2f %%", v->name, test,
                         100.0 * util, 100.0 * paper);
            }
        }
        if (v->flags == (RT_WF_HINTS | RT_WF_LAZY_REINIT)) {
            printf("  -> worst-case nodes per malloc, paper / wf_hint: %u / %u = %.2fx; RMW %u / %u = %.2fx\n",
                   base.max_nodes, wk.max_nodes, (double)base.max_nodes / (double)wk.max_nodes, base.max_rmw,
                   wk.max_rmw, (double)base.max_rmw / (double)wk.max_rmw);
        }
    }
}

int main(int argc, char **argv)
{
    size_t mib = 64;
    unsigned threads = 0;
    for (int i = 1; i < argc; i++) {
        uint64_t v = 0;
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && tl_parse_u64(argv[i + 1], &v) && v >= 1u && v <= 64u) {
            threads = (unsigned)v;
            i++;
        } else if (tl_parse_u64(argv[i], &v) && v >= 1u && v <= 1024u) {
            mib = (size_t)v;
        } else {
            fprintf(stderr, "usage: wf_visits [MiB] [--threads N]\n");
            return 2;
        }
    }
    size_t bytes = mib << 20;
    for (unsigned pass = 0; pass < (threads > 1u ? 2u : 1u); pass++) {
        unsigned nt = pass == 0u ? 1u : threads;
        for (unsigned test = 1; test <= 3u; test += 2u) {
            run_table(test, nt, mib, bytes);
        }
    }
    return tl_summary("wf_visits");
}
