/* SPDX-License-Identifier: MIT */
/*
 * trace_threads.c -- the threaded replay of recorded traces (trace/threads.c): one thread
 * per recorded thread on one shared instance, on streams whose answers are known:
 *   - a hand-written stream of three threads: the plan counts exactly its cross-thread frees and
 *     reallocs (4) and its objects (6: a slot reused by another thread is a new object, no
 *     dependency), and groups each thread's ops in stream order; a header claiming 2^32 - 1
 *     threads starts 3, an op's thread beyond the header's or a 1025th calling thread is refused;
 *   - a witness allocator (glibc underneath) that logs every call with the thread that made it:
 *       ordered     the calls come in exactly the stream's order, each from the thread that
 *                   stands for its recorded thread (the same thread for the same index, another
 *                   for another);
 *       concurrent  every thread's calls come in its recorded order, and no block is freed or
 *                   realloc'ed before the call that made it returned (the witness checks each
 *                   pointer against its live set);
 *   - a synthetic stream (rp_synth, seed 11) whose ops are spread over 5 threads at random,
 *     replayed both ways on the thread-safe allocators (tlsfmc, wfc, glibc): every call made, no
 *     failure beyond the one flagged; sized with the ordered replay (rp_size with
 *     rp_threaded_fits): a heap is found, verified, and half of it fails;
 *   - the format: such a stream saved and loaded keeps its threads.
 * `trace_threads --write FILE` writes the synthetic threaded stream as a file (for trace_cli.sh).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver.h"
#include "peers.h"
#include "replay.h"
#include "testlib.h"
#include "threads.h"

#define CHECK(cond) TL_CHECK(cond, "%s", "")

/* ---- the hand-written stream ----------------------------------------------------------------- */

static wl_op_t hand_ops[] = {
    {0, 100, WL_MALLOC},                     /* t0 makes A (slot 0) */
    {1, 40, WL_MALLOC},                      /* t1 makes B (slot 1) */
    {0, 0, WL_FREE},                         /* t1 frees A: cross */
    {0, 64, WL_CALLOC},                      /* t2 makes C into slot 0: a new object */
    {1, 200, WL_REALLOC},                    /* t2 reallocs B: cross, B is now t2's */
    {2, 3u << 30, WL_MALLOC | WL_OP_FAILED}, /* t0: failed in the recording */
    {2, 32, WL_MEMALIGN | (6u << 8)},        /* t0 makes D (slot 2) */
    {1, 0, WL_FREE},                         /* t1 frees B (t2's since the realloc): cross */
    {2, 0, WL_FREE},                         /* t2 frees D: cross */
    {1, 24, WL_REALLOC},                     /* t1: realloc(NULL): E */
    {0, 0, WL_FREE},                         /* t2 frees C: its own */
    {1, 0, WL_FREE},                         /* t1 frees E */
};
static uint32_t hand_thread[] = {0, 1, 1, 2, 2, 0, 0, 1, 2, 1, 2, 1};

static void hand_stream(tr_stream_t *st)
{
    memset(st, 0, sizeof *st);
    wl_trace_t *t = &st->trace;
    snprintf(t->name, sizeof t->name, "hand3");
    t->slots = 3;
    t->ops = hand_ops;
    t->nops = sizeof hand_ops / sizeof hand_ops[0];
    rp_finish_trace(t);
    st->threads = 3;
    st->thread = hand_thread;
}

static void check_plan(void)
{
    tr_stream_t st;
    hand_stream(&st);
    rp_plan_t p;
    CHECK(rp_plan_make(&st, &p));
    CHECK(p.cross == 4u);
    CHECK(p.trace.slots == 6u); /* A, B, C, the failed op (an object of its own), D, E */
    CHECK(p.nthreads == 3u && p.start[0] == 0u && p.start[3] == st.trace.nops);
    for (uint32_t th = 0; th < 3u; th++) {
        for (size_t k = p.start[th]; k < p.start[th + 1u]; k++) {
            CHECK(hand_thread[p.order[k]] == th);
            CHECK(k == p.start[th] || p.order[k - 1u] < p.order[k]);
        }
    }
    /* B's ops: its malloc, the realloc, the free: places 0, 1, 2 on one object */
    CHECK(p.trace.ops[1].slot == p.trace.ops[4].slot && p.trace.ops[4].slot == p.trace.ops[7].slot);
    CHECK(p.seq[1] == 0u && p.seq[4] == 1u && p.seq[7] == 2u);
    /* slot 0 reused by t2 after t1's free: another object, no dependency */
    CHECK(p.trace.ops[3].slot != p.trace.ops[0].slot && p.seq[3] == 0u);
    CHECK(p.peak == rp_peak_live(&st.trace));
    rp_plan_free(&p);
    tr_stream_t none;
    hand_stream(&none);
    none.thread = NULL;
    CHECK(!rp_plan_make(&none, &p)); /* no thread per op: no plan */
    /* hostile headers: the threads started are those that made calls, never what `threads`
     * claims; an op's thread beyond it, or more than RP_MAX_THREADS callers, no plan */
    tr_stream_t big;
    hand_stream(&big);
    big.threads = UINT32_MAX;
    CHECK(rp_plan_make(&big, &p) && p.nthreads == 3u);
    rp_plan_free(&p);
    static uint32_t bad_thread[sizeof hand_thread / sizeof hand_thread[0]];
    memcpy(bad_thread, hand_thread, sizeof bad_thread);
    tr_stream_t bad;
    hand_stream(&bad);
    bad.thread = bad_thread;
    bad_thread[5] = 3; /* threads is 3 */
    CHECK(!rp_plan_make(&bad, &p));
    bad.threads = RP_MAX_THREADS + 1u;
    bad_thread[5] = RP_MAX_THREADS; /* the 1025th thread made a call */
    CHECK(!rp_plan_make(&bad, &p));
    bad_thread[5] = RP_MAX_THREADS - 1u; /* the 1024th: allowed, 1021 of them with no op */
    CHECK(rp_plan_make(&bad, &p) && p.nthreads == RP_MAX_THREADS);
    rp_plan_free(&p);
}

/* ---- the witness allocator ------------------------------------------------------------------- */

enum { LOG_CAP = 1u << 16, LIVE_CAP = 1u << 12 };

typedef struct witness {
    pthread_mutex_t lock;
    size_t n;
    uint32_t size[LOG_CAP]; /* each call's size (0 for a free) */
    pthread_t who[LOG_CAP];
    void *live[LIVE_CAP]; /* blocks handed out and not yet freed */
    size_t nlive;
    size_t violations; /* a free or realloc of a block not live */
} witness_t;

static witness_t wit;

static void wit_log(uint32_t size)
{
    if (wit.n < LOG_CAP) {
        wit.size[wit.n] = size;
        wit.who[wit.n] = pthread_self();
        wit.n++;
    }
}

static bool wit_take(void *p)
{
    for (size_t i = 0; i < wit.nlive; i++) {
        if (wit.live[i] == p) {
            wit.live[i] = wit.live[--wit.nlive];
            return true;
        }
    }
    return false;
}

static void wit_give(void *p)
{
    if (p != NULL && wit.nlive < LIVE_CAP) {
        wit.live[wit.nlive++] = p;
    }
}

static void *wit_malloc(void *h, size_t size)
{
    (void)h;
    pthread_mutex_lock(&wit.lock);
    void *p = size < ((size_t)1 << 30) ? malloc(size) : NULL;
    wit_log((uint32_t)size);
    wit_give(p);
    pthread_mutex_unlock(&wit.lock);
    return p;
}

static void wit_free(void *h, void *p)
{
    (void)h;
    pthread_mutex_lock(&wit.lock);
    wit.violations += !wit_take(p);
    wit_log(0);
    free(p);
    pthread_mutex_unlock(&wit.lock);
}

static void *wit_realloc(void *h, void *old, size_t size)
{
    (void)h;
    pthread_mutex_lock(&wit.lock);
    wit.violations += old != NULL && !wit_take(old);
    void *p = realloc(old, size);
    if (p == NULL && old != NULL) {
        wit_give(old);
    }
    wit_log((uint32_t)size);
    wit_give(p);
    pthread_mutex_unlock(&wit.lock);
    return p;
}

static void *wit_calloc(void *h, size_t n, size_t size)
{
    void *p = wit_malloc(h, n * size);
    if (p != NULL) {
        memset(p, 0, n * size);
    }
    return p;
}

static void *wit_memalign(void *h, size_t align, size_t size)
{
    (void)h;
    pthread_mutex_lock(&wit.lock);
    void *p = NULL;
    if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) != 0) {
        p = NULL;
    }
    wit_log((uint32_t)size);
    wit_give(p);
    pthread_mutex_unlock(&wit.lock);
    return p;
}

static rt_allocator_t witness_desc(void)
{
    rt_allocator_t d;
    memset(&d, 0, sizeof d);
    d.name = "witness";
    d.malloc = wit_malloc;
    d.free = wit_free;
    d.realloc = wit_realloc;
    d.calloc = wit_calloc;
    d.memalign = wit_memalign;
    d.family = RT_FAMILY_SYSTEM;
    d.thread_safe = true;
    return d;
}

static void wit_reset(void)
{
    for (size_t i = 0; i < wit.nlive; i++) {
        free(wit.live[i]);
    }
    wit.n = 0;
    wit.nlive = 0;
    wit.violations = 0;
}

/* The calls after the stream's: the frees of the blocks still live, by this thread when the
 * replay closes its instance. Checked, then left out of the log. */
static void wit_trim(size_t nops)
{
    size_t bad = 0;
    for (size_t j = nops; j < wit.n; j++) {
        bad += wit.size[j] != 0u || !pthread_equal(wit.who[j], pthread_self());
    }
    CHECK(bad == 0u && wit.n >= nops);
    wit.n = wit.n > nops ? nops : wit.n;
}

/* The witness's log against the stream: ordered -- the same sizes in the same order, and the
 * recorded thread of each call always made by the same replay thread (a one-to-one map). */
static void check_ordered_log(const tr_stream_t *st)
{
    const wl_trace_t *t = &st->trace;
    wit_trim(t->nops);
    pthread_t map[8];
    bool seen[8] = {false};
    size_t bad_size = 0, bad_thread = 0;
    for (size_t i = 0; i < wit.n && i < t->nops; i++) {
        uint32_t want = WL_OP_KIND(&t->ops[i]) == WL_FREE ? 0u : t->ops[i].size;
        bad_size += wit.size[i] != want;
        uint32_t th = st->thread[i];
        if (!seen[th]) {
            for (uint32_t o = 0; o < 8u; o++) {
                bad_thread += seen[o] && pthread_equal(map[o], wit.who[i]);
            }
            seen[th] = true;
            map[th] = wit.who[i];
        }
        bad_thread += !pthread_equal(map[th], wit.who[i]);
    }
    CHECK(bad_size == 0u && bad_thread == 0u);
}

/* Concurrent: the calls each replay thread made are exactly one recorded thread's, in its order
 * (sequences of sizes compared), and no block was freed or realloc'ed before it was made. */
static void check_concurrent_log(const tr_stream_t *st)
{
    const wl_trace_t *t = &st->trace;
    wit_trim(t->nops);
    CHECK(wit.violations == 0u);
    enum { MAXT = 8 };
    pthread_t who[MAXT];
    size_t nwho = 0;
    for (size_t j = 0; j < wit.n; j++) {
        bool known = false;
        for (size_t k = 0; k < nwho; k++) {
            known = known || pthread_equal(who[k], wit.who[j]);
        }
        if (!known && nwho < MAXT) {
            who[nwho++] = wit.who[j];
        }
    }
    bool used[MAXT] = {false};
    size_t unmatched = 0, threads_with_ops = 0;
    for (uint32_t th = 0; th < st->threads; th++) {
        size_t nops_th = 0;
        for (size_t i = 0; i < t->nops; i++) {
            nops_th += st->thread[i] == th;
        }
        if (nops_th == 0u) {
            continue;
        }
        threads_with_ops++;
        bool matched = false;
        for (size_t k = 0; k < nwho && !matched; k++) {
            if (used[k]) {
                continue;
            }
            size_t i = 0, j = 0;
            bool same = true;
            for (;;) {
                while (i < t->nops && st->thread[i] != th) {
                    i++;
                }
                while (j < wit.n && !pthread_equal(wit.who[j], who[k])) {
                    j++;
                }
                if (i == t->nops || j == wit.n) {
                    same = i == t->nops && j == wit.n;
                    break;
                }
                uint32_t want = WL_OP_KIND(&t->ops[i]) == WL_FREE ? 0u : t->ops[i].size;
                if (wit.size[j] != want) {
                    same = false;
                    break;
                }
                i++, j++;
            }
            if (same) {
                used[k] = matched = true;
            }
        }
        unmatched += !matched;
    }
    CHECK(unmatched == 0u && nwho == threads_with_ops);
}

static void check_witness(void)
{
    pthread_mutex_init(&wit.lock, NULL);
    rt_allocator_t d = witness_desc();
    tr_stream_t st;
    hand_stream(&st);
    rp_plan_t p;
    CHECK(rp_plan_make(&st, &p));
    for (int rep = 0; rep < 20; rep++) {
        wit_reset();
        rp_thr_run_t r;
        CHECK(rp_threaded(&d, NULL, 0, &p, RP_ORDERED, false, &r) && r.calls == st.trace.nops && r.failures == 0u);
        check_ordered_log(&st);
        CHECK(wit.violations == 0u);
        wit_reset();
        CHECK(rp_threaded(&d, NULL, 0, &p, RP_CONCURRENT, true, &r) && r.calls == st.trace.nops && r.failures == 0u &&
              r.max >= r.p99);
        check_concurrent_log(&st);
    }
    rp_plan_free(&p);
    wit_reset();
}

/* ---- the synthetic stream -------------------------------------------------------------------- */

enum { SYN_THREADS = 5, SYN_OPS = 20000, SYN_SLOTS = 400 };

/* rp_synth's stream with its ops spread over SYN_THREADS threads at random (any spread keeps the
 * order valid: the order is global). f->streams[0].thread is malloc'ed (tr_release frees it). */
static bool synth_threaded(tr_file_t *f)
{
    if (!rp_synth(f, 11, SYN_OPS, SYN_SLOTS)) {
        return false;
    }
    tr_stream_t *st = &f->streams[0];
    st->threads = SYN_THREADS;
    st->thread = malloc(st->trace.nops * sizeof *st->thread);
    if (st->thread == NULL) {
        return false;
    }
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < st->trace.nops; i++) {
        st->thread[i] = (uint32_t)(wl_rand(&x) % SYN_THREADS);
    }
    return true;
}

static void check_synth(void)
{
    tr_file_t f;
    CHECK(synth_threaded(&f));
    tr_stream_t *st = &f.streams[0];
    rp_plan_t p;
    CHECK(rp_plan_make(st, &p));
    CHECK(p.cross > 0u);
    /* the witness, both modes, on the synthetic stream too */
    rt_allocator_t d = witness_desc();
    wit_reset();
    rp_thr_run_t r;
    CHECK(rp_threaded(&d, NULL, 0, &p, RP_ORDERED, false, &r) && r.calls == st->trace.nops);
    check_ordered_log(st);
    wit_reset();
    CHECK(rp_threaded(&d, NULL, 0, &p, RP_CONCURRENT, false, &r) && r.calls == st->trace.nops);
    check_concurrent_log(st);
    wit_reset();
    const char *names[] = {"tlsfmc", "wfc", "glibc"};
    size_t heap = rp_replay_heap(&st->trace);
    void *buf = mmap(NULL, heap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(buf != MAP_FAILED);
    for (size_t k = 0; k < sizeof names / sizeof names[0] && buf != MAP_FAILED; k++) {
        const rt_allocator_t *a = bench_find(names[k]);
        CHECK(a != NULL && a->thread_safe);
        if (a == NULL) {
            continue;
        }
        for (int mode = 0; mode < 2; mode++) {
            CHECK(rp_threaded(a, buf, heap, &p, mode ? RP_CONCURRENT : RP_ORDERED, mode == 1, &r));
            CHECK(r.calls == st->trace.nops && r.failures == 0u && !r.interrupted);
            if (r.failures != 0u) {
                fprintf(stderr, "%s, %s: %zu failures\n", names[k], mode ? "concurrent" : "ordered", r.failures);
            }
        }
        if (a->create != NULL) {
            rp_size_opts_t so = {4096u, 0.005, heap, 1, rp_threaded_fits, &p};
            rp_size_t sz;
            rp_size(a, buf, &p.trace, &so, &sz);
            CHECK(sz.found && sz.verified && sz.heap <= heap);
            CHECK(sz.found && !rp_threaded_fits(a, buf, sz.heap / 2u, &p));
            printf("%s: threaded heap needed %zu bytes (live peak %llu), %llu cross-thread frees\n", names[k], sz.heap,
                   (unsigned long long)p.peak, (unsigned long long)p.cross);
        }
    }
    if (buf != MAP_FAILED) {
        munmap(buf, heap);
    }
    rp_plan_free(&p);
    tr_release(&f);
}

/* The threads survive a save and a load; a thread beyond the stream's threads is refused. */
static void check_format(const char *dir)
{
    tr_file_t f;
    CHECK(synth_threaded(&f));
    char path[4200];
    snprintf(path, sizeof path, "%s/trace_threads.rtt", dir);
    char err[256];
    CHECK(tr_save(path, &f, err, sizeof err));
    tr_file_t g;
    CHECK(tr_load(path, &g, err, sizeof err));
    CHECK(g.nstreams == 1 && g.streams[0].threads == SYN_THREADS && g.streams[0].thread != NULL);
    if (g.nstreams == 1 && g.streams[0].thread != NULL) {
        CHECK(memcmp(g.streams[0].thread, f.streams[0].thread, f.streams[0].trace.nops * sizeof(uint32_t)) == 0);
    }
    tr_release(&g);
    f.streams[0].thread[f.streams[0].trace.nops / 2u] = SYN_THREADS; /* one past the last */
    CHECK(tr_save(path, &f, err, sizeof err));
    CHECK(!tr_load(path, &g, err, sizeof err) && strstr(err, "thread") != NULL);
    f.streams[0].threads = 1; /* a single thread: no thread per op after a load */
    memset(f.streams[0].thread, 0, f.streams[0].trace.nops * sizeof(uint32_t));
    CHECK(tr_save(path, &f, err, sizeof err));
    CHECK(tr_load(path, &g, err, sizeof err) && g.streams[0].thread == NULL);
    tr_release(&g);
    remove(path);
    tr_release(&f);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0) {
        tr_file_t f;
        char err[256];
        bool ok = synth_threaded(&f) && tr_save(argv[2], &f, err, sizeof err);
        tr_release(&f);
        return ok ? 0 : 1;
    }
    check_plan();
    check_witness();
    check_synth();
    check_format(argc > 1 ? argv[1] : ".");
    return tl_summary("trace_threads");
}
