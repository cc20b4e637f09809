/* SPDX-License-Identifier: MIT */
/*
 * mc_interleave.c -- forced interleavings of the thread heaps' cross-thread path
 * (rtalloc/mcheap.h), step by step.
 *
 * mcheap.c is rebuilt with RT_CONFIG_HEADER = mc_step_config.h, so RT_MC_STEP -- called before
 * every step on state another context may touch at once: a slot's token read, compare-and-swap
 * or store, a claim bit's fetch-and or fetch-or, a map read, an inbox's exchange (push and take),
 * a push's link store, the owner's read of a link -- parks the calling operation's thread until
 * the scheduler here lets it take that one step. Each operation runs on its own thread, one moves
 * at a time, and every schedule with at most K preemptions (a switch away from an operation that
 * has not finished) is run, from a fresh instance each time (stateless model checking).
 *
 * Contexts A, B, C (tokens of their own); A owns the blocks of the set-up. After every schedule,
 * at quiescence, the main thread as A drains A's inbox (rt_mc_stats) and checks: rt_mc_check
 * (heaps, map, claim bits against the live blocks and the inboxes); no live blocks overlap; the
 * reports and the blocks used are exactly what the scenario allows:
 *   remote        B frees A's block x (a push) while A mallocs and frees y: no report; x is back
 *                 in A's heap after the drain
 *   two-pushers   B and C free A's x and y at once while A mallocs: no report, nothing lost (two
 *                 pushes onto one inbox, the owner's take between or after them)
 *   double-free   A and B free the same block (an application's racing double free): exactly one
 *                 DOUBLE_FREE report, the block freed once
 *   realloc-free  B reallocs A's x larger (a move, which frees x) while A frees x: one of them
 *                 takes x (the other reports DOUBLE_FREE); x freed once; B's new block live when B
 *                 won
 *   orphan        A has exited leaving x live (its slot an orphan); B frees x (taking the orphan
 *                 for that free, giving its span back) while C arrives and claims a slot (possibly
 *                 the orphan): no report, nothing used after, no overlap
 *   orphan-two    A has exited leaving x and y live; B and C free them at once (one takes the
 *                 orphan, the other pushes): the heap is given back whatever the order -- nothing
 *                 used, nothing held, with nobody left to drain A's inbox
 *
 * Usage: mc_interleave [K]   (default 2)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>

#include "testlib.h"

#include "rtalloc/mcheap.h"

#include "mc_step_config.h"

#include "step_sched.h"

#define MAX_DEPTH 256u

void mc_test_step(const void *mc, int step, uintptr_t what)
{
    if (my_op >= 0 && mc == S.target) {
        step_park(step, (size_t)what);
    }
}

/* --- scenarios ------------------------------------------------------------------------------------ */

enum { CTX_A = 0, CTX_B = 1, CTX_C = 2, NCTX = 3 };
static const uintptr_t token[NCTX] = {0x1000, 0x2000, 0x3000};
static unsigned main_ctx; /* whose token the main thread's calls carry */
static _Thread_local int my_ctx = -1;
static uintptr_t self_hook(void *context)
{
    (void)context;
    return token[my_ctx >= 0 ? (unsigned)my_ctx : main_ctx];
}

typedef enum { SC_REMOTE, SC_TWO_PUSHERS, SC_DOUBLE_FREE, SC_REALLOC_FREE, SC_ORPHAN, SC_ORPHAN_TWO, SC_N } sc_t;
static const char *const sc_name[SC_N] = {"remote",       "two-pushers", "double-free",
                                          "realloc-free", "orphan",      "orphan-two"};
static const unsigned sc_ops[SC_N] = {2, 3, 2, 2, 2, 2};
static const unsigned sc_ctx[SC_N][MAX_OPS] = {{CTX_B, CTX_A, 0}, {CTX_B, CTX_C, CTX_A}, {CTX_A, CTX_B, 0},
                                               {CTX_B, CTX_A, 0}, {CTX_B, CTX_C, 0},     {CTX_B, CTX_C, 0}};

static unsigned char mem[1u << 18] __attribute__((aligned(64)));

typedef struct run {
    sc_t sc;
    rt_mc_t *mc;
    void *x, *y, *got[MAX_OPS];
    unsigned long reports, double_frees;
} run_t;

static void on_report(void *context, const rt_error_t *e)
{
    run_t *r = context;
    r->reports++;
    r->double_frees += e->kind == RT_ERR_DOUBLE_FREE ? 1u : 0u;
}

static void op_body(run_t *r, unsigned j)
{
    switch (r->sc) {
    case SC_REMOTE:
        if (j == 0u) {
            rt_mc_free(r->mc, r->x);
        } else {
            r->got[j] = rt_mc_malloc(r->mc, 100);
            rt_mc_free(r->mc, r->y);
        }
        break;
    case SC_TWO_PUSHERS:
        if (j == 0u) {
            rt_mc_free(r->mc, r->x);
        } else if (j == 1u) {
            rt_mc_free(r->mc, r->y);
        } else {
            r->got[j] = rt_mc_malloc(r->mc, 100);
        }
        break;
    case SC_DOUBLE_FREE:
    case SC_ORPHAN:
        if (r->sc == SC_ORPHAN && j == 1u) {
            r->got[j] = rt_mc_malloc(r->mc, 100); /* C arrives */
        } else {
            rt_mc_free(r->mc, r->x);
        }
        break;
    case SC_ORPHAN_TWO: rt_mc_free(r->mc, j == 0u ? r->x : r->y); break;
    case SC_REALLOC_FREE:
        if (j == 0u) {
            r->got[j] = rt_mc_realloc(r->mc, r->x, 400);
        } else {
            rt_mc_free(r->mc, r->x);
        }
        break;
    default: break;
    }
}

/* One worker per operation, reused by every run. */
static struct {
    unsigned gen;
    bool quit;
    run_t *r;
    unsigned nops;
} jobs;
static pthread_t workers[MAX_OPS];

static void *worker_main(void *arg)
{
    unsigned j = (unsigned)(uintptr_t)arg;
    unsigned seen = 0;
    my_op = (int)j;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (jobs.gen == seen && !jobs.quit) {
            pthread_cond_wait(&cv_op[j], &mu);
        }
        if (jobs.quit) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        seen = jobs.gen;
        run_t *r = jobs.r;
        unsigned nops = jobs.nops;
        pthread_mutex_unlock(&mu);
        if (j >= nops) {
            continue;
        }
        my_ctx = (int)sc_ctx[r->sc][j];
        step_park(0, 0); /* the gate */
        op_body(r, j);
        pthread_mutex_lock(&mu);
        S.done[j] = true;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
    }
}

static bool setup(run_t *r)
{
    rt_mc_config_t cfg;
    rt_mc_default_config(&cfg);
    cfg.self = self_hook;
    cfg.slots = 4u;
    memset(mem, 0x5A, sizeof mem);
    main_ctx = CTX_A;
    r->mc = rt_mc_create(mem, sizeof mem, &cfg);
    TL_REQUIRE(r->mc != NULL, "create");
    rt_mc_set_handler(r->mc, on_report, r);
    r->x = rt_mc_malloc(r->mc, 200);
    r->y = rt_mc_malloc(r->mc, 200);
    TL_REQUIRE(r->x != NULL && r->y != NULL, "set-up mallocs");
    if (r->sc == SC_ORPHAN) {
        rt_mc_free(r->mc, r->y);
        rt_mc_thread_exit(r->mc); /* A leaves x live: its slot an orphan */
        r->y = NULL;
    } else if (r->sc == SC_ORPHAN_TWO) {
        rt_mc_thread_exit(r->mc); /* A leaves x and y live */
    }
    return true;
}

/* Runs one schedule: `prefix` first, then the running operation as long as it can (else the
 * lowest enabled). Records every decision. */
typedef struct sched {
    unsigned n;
    unsigned char choice[MAX_DEPTH], enabled[MAX_DEPTH];
} sched_t;

static bool execute(run_t *r, const unsigned char *prefix, unsigned plen, sched_t *out)
{
    memset(&S, 0, sizeof S);
    if (!setup(r)) {
        return false;
    }
    unsigned nops = sc_ops[r->sc];
    pthread_mutex_lock(&mu);
    S.target = r->mc;
    jobs.r = r;
    jobs.nops = nops;
    jobs.gen++;
    for (unsigned j = 0; j < MAX_OPS; j++) {
        pthread_cond_signal(&cv_op[j]);
    }
    for (unsigned j = 0; j < nops; j++) {
        while (!S.parked[j]) {
            pthread_cond_wait(&cv, &mu);
        }
    }
    pthread_mutex_unlock(&mu);
    out->n = 0;
    int cur = -1;
    for (;;) {
        unsigned en = 0;
        pthread_mutex_lock(&mu);
        for (unsigned j = 0; j < nops; j++) {
            en |= S.parked[j] && !S.done[j] ? 1u << j : 0u;
        }
        pthread_mutex_unlock(&mu);
        if (en == 0u) {
            break;
        }
        TL_REQUIRE(out->n < MAX_DEPTH, "%s: schedule too long", sc_name[r->sc]);
        unsigned pick;
        if (out->n < plen) {
            pick = prefix[out->n];
        } else if (cur >= 0 && (en >> cur & 1u) != 0u) {
            pick = (unsigned)cur;
        } else {
            pick = (unsigned)__builtin_ctz(en);
        }
        TL_REQUIRE((en >> pick & 1u) != 0u, "%s: replay diverged", sc_name[r->sc]);
        out->choice[out->n] = (unsigned char)pick;
        out->enabled[out->n] = (unsigned char)en;
        out->n++;
        cur = (int)pick;
        step_advance(pick);
    }
    return true;
}

static unsigned preemptions(const sched_t *s, unsigned len)
{
    unsigned p = 0;
    for (unsigned i = 1; i < len; i++) {
        if (s->choice[i] != s->choice[i - 1u] && ((unsigned)s->enabled[i] >> s->choice[i - 1u] & 1u) != 0u) {
            p++;
        }
    }
    return p;
}

static bool overlap(void *a, size_t na, void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a != NULL && b != NULL && x < y + nb && y < x + na;
}

/* The checks at quiescence. */
static bool check_run(run_t *r, const sched_t *s, unsigned long *special)
{
    main_ctx = CTX_A;
    rt_stats_t st;
    rt_mc_stats(r->mc, &st); /* drains A's inbox */
    bool ok = rt_mc_check(r->mc);
    size_t expect_used = 0;
    unsigned long expect_reports = 0;
    switch (r->sc) {
    case SC_REMOTE: expect_used = r->got[1] != NULL ? 1u : 0u; break;
    case SC_TWO_PUSHERS: expect_used = r->got[2] != NULL ? 1u : 0u; break;
    case SC_DOUBLE_FREE:
        expect_used = 1u; /* y */
        expect_reports = 1u;
        break;
    case SC_REALLOC_FREE:
        expect_reports = 1u;
        expect_used = 1u + (r->got[0] != NULL ? 1u : 0u);
        *special += r->got[0] != NULL ? 1u : 0u;
        break;
    case SC_ORPHAN: expect_used = r->got[1] != NULL ? 1u : 0u; break;
    case SC_ORPHAN_TWO: /* A is gone: nobody drains for it; the two frees must give its heap back */
        expect_used = 0u;
        ok = ok && rt_mc_held_bytes(r->mc) == 0u;
        break;
    default: break;
    }
    /* a realloc that loses to a free cannot tell a double free from a bad pointer: either kind */
    bool kinds_ok = r->sc == SC_REALLOC_FREE || r->double_frees == expect_reports;
    ok = ok && r->reports == expect_reports && kinds_ok && st.used_blocks == expect_used;
    for (unsigned i = 0; i < MAX_OPS; i++) {
        ok = ok && !(r->got[i] != NULL && r->y != NULL && r->got[i] != r->y && overlap(r->got[i], 100, r->y, 200));
    }
    if (!ok) {
        printf("  %s: schedule", sc_name[r->sc]);
        for (unsigned i = 0; i < s->n; i++) {
            printf(" %u", s->choice[i]);
        }
        printf(": check %s, %lu reports (%lu double frees), %zu used (expected %zu, %lu reports)\n",
               rt_mc_check(r->mc) ? "ok" : "FAILED", r->reports, r->double_frees, st.used_blocks, expect_used,
               expect_reports);
    }
    return ok;
}

static void explore(sc_t sc, const unsigned char *prefix, unsigned plen, unsigned bound, unsigned long *runs,
                    unsigned long *bad, unsigned long *special)
{
    run_t r;
    memset(&r, 0, sizeof r);
    r.sc = sc;
    sched_t s;
    if (!execute(&r, prefix, plen, &s)) {
        (*bad)++;
        return;
    }
    (*runs)++;
    if (!check_run(&r, &s, special)) {
        (*bad)++;
    }
    for (unsigned i = plen; i < s.n; i++) {
        for (unsigned e = 0; e < MAX_OPS; e++) {
            if (e == s.choice[i] || ((unsigned)s.enabled[i] >> e & 1u) == 0u) {
                continue;
            }
            sched_t alt = s;
            alt.choice[i] = (unsigned char)e;
            if (preemptions(&alt, i + 1u) > bound) {
                continue;
            }
            explore(sc, alt.choice, i + 1u, bound, runs, bad, special);
        }
    }
}

int main(int argc, char **argv)
{
    uint64_t bound = 2;
    if (argc > 1 && !tl_parse_u64(argv[1], &bound)) {
        fprintf(stderr, "usage: mc_interleave [preemption bound]\n");
        return 2;
    }
    for (unsigned j = 0; j < MAX_OPS; j++) {
        TL_CHECK(pthread_create(&workers[j], NULL, worker_main, (void *)(uintptr_t)j) == 0, "pthread_create");
    }
    for (unsigned sc = 0; sc < SC_N; sc++) {
        unsigned long runs = 0, bad = 0, special = 0;
        explore((sc_t)sc, NULL, 0, (unsigned)bound, &runs, &bad, &special);
        TL_CHECK(bad == 0u && runs > 1u, "%s: %lu of %lu schedules failed", sc_name[sc], bad, runs);
        printf("%-13s %6lu schedules (<= %u preemptions)%s: %s\n", sc_name[sc], runs, (unsigned)bound,
               sc == SC_REALLOC_FREE ? (special > 0u ? ", realloc won in some" : ", realloc never won") : "",
               bad == 0u ? "ok" : "FAILED");
        if (sc == SC_REALLOC_FREE) {
            TL_CHECK(special > 0u && special < runs, "realloc-free: both outcomes reached (%lu of %lu)", special, runs);
        }
    }
    pthread_mutex_lock(&mu);
    jobs.quit = true;
    for (unsigned j = 0; j < MAX_OPS; j++) {
        pthread_cond_signal(&cv_op[j]);
    }
    pthread_mutex_unlock(&mu);
    for (unsigned j = 0; j < MAX_OPS; j++) {
        pthread_join(workers[j], NULL);
    }
    return tl_summary("mc_interleave");
}
