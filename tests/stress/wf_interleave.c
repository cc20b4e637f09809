/* SPDX-License-Identifier: MIT */
/*
 * wf_interleave.c -- deterministic interleavings of two or three operations on a small wait-free
 * tree (depth 3 or 4: 7 or 15 nodes), forced step by step.
 *
 * The core is rebuilt with RT_CONFIG_HEADER = wf_step_config.h, so RT_WF_STEP -- called before
 * every atomic step on shared tree state (a decrement, the undo of a failed one, an increment, a
 * racy read; a free's read of a chunk's length word, its claim of it, the store of a live tag by
 * a hand-out or a pop) -- parks the calling operation's thread until the scheduler here lets it
 * take that one step. Each operation runs on its own thread, but only one moves at a time: a
 * schedule is the sequence of operations chosen at each step, and the same schedule always gives
 * the same execution. The schedules are enumerated exhaustively up to a bound on preemptions (a switch
 * away from an operation that has not finished; CHESS-style stateless model checking): every
 * interleaving with at most K preemptions, for every scenario and every variant (paper, read-only
 * descent, lazy re-initialisation, hints, hints + lazy).
 *
 * Checked after every schedule, at quiescence: the live chunks (set-up survivors and successful
 * mallocs) never overlap; equation 3 (rt_wf_check); no error report; and per scenario:
 *   fig9         the paper's Fig. 9: a depth-3 tree with leaves 0 and 2 allocated (root counter
 *                2, no free pair), A = malloc of 2 leaves, B = malloc of 1 leaf. A always fails.
 *                B succeeds whenever the two do not overlap (serial schedules); the schedules in
 *                which both fail are reproduced on purpose, counted and one is printed step by
 *                step: B's decrement of the root falls in the window where A holds the root's
 *                last 2 leaves -- the documented weak guarantee -- and after it a sequential
 *                malloc of 1 leaf succeeds (the failure was transient, memory was there). The
 *                read-only descent decides A's failure by reading, so there both-fail cannot occur.
 *   room         two mallocs of 1 leaf into an empty depth-4 tree: both always succeed
 *   free-malloc  a full tree; A frees one half while B asks for a leaf: B gets a leaf of that half
 *                or fails (it came first), and when A finished before B started B succeeds
 *   free-free    A and B free two sibling chunks, C asks for their merged parent (3 operations)
 *   three        three mallocs of 1, 2 and 1 leaves into a fragmented depth-4 tree
 *   pristine     (matters for lazy) the whole tree allocated and freed, so the root is pristine;
 *                two mallocs of 1 leaf both need it initialised: only the one whose decrement found
 *                the root untouched does it, the other may back out (fail transiently) -- never
 *                both, never an overlap
 *   double-free  A and B free the same leaf (an application's double free), preempted anywhere in
 *                their checks (the length-word read, the root's and the ancestors' reads) and
 *                before their claims: exactly one claims and releases it (frees counted once),
 *                the other reports DOUBLE_FREE and changes nothing
 *   refree       A frees a leaf while B frees the same leaf and mallocs a leaf (which gets it back
 *                when B's free won): one DOUBLE_FREE report and one release, or -- when A's claim
 *                comes after B's malloc handed the leaf out again, the serial schedule "B, then A"
 *                among them -- no report: A's free then frees B's new block, which no allocator
 *                can tell from a free of it (the same pointer, a live chunk); never a chunk live
 *                twice, never a release counted twice
 *   realloc-free A reallocs a leaf to two leaves (a move, which frees the leaf) while B frees the
 *                same leaf: a moving realloc claims the old chunk as a free does, so exactly one
 *                of them takes it -- A moves it (B reports DOUBLE_FREE) or B frees it (A's
 *                realloc reports DOUBLE_FREE and returns NULL); released once
 *
 * Then rt_wfc (rtalloc/wfcache.h, rebuilt with the same header) over a 15-node tree of 256-byte
 * nodes, leaves cached, each simulated thread its own cache (the self hook returns the running
 * operation's token): the tree's steps inside refills, cutting, flushes and releases, and the
 * cache's own shared steps (wfcache.c: a slot read, the slot compare-and-swap, the fetch-and-add
 * of an inline record). An operation is a thread's script of up to 3 calls. Scenarios:
 *   wfc-refill      two threads with empty caches malloc at once: two refill descents, one cuts
 *                   the only free pair, the other falls back to a leaf
 *   wfc-flush       A frees into its full cache (the flush releases a chunk to the tree) while
 *                   B's refill descends: B gets that leaf or fails, and gets it when A came first
 *   wfc-remote      B frees a leaf cut from A's batch (remote free) and then another, which
 *                   releases the first to the tree, while A (empty cache) mallocs again
 *   wfc-fail-flush  A's malloc fails in the tree, releases its own cache and retries, while B's
 *                   malloc races for what A released; serially both always succeed
 *   wfc-arrive      A and B, whose tokens hash to one slot of a small table, arrive at once: slot
 *                   reads and compare-and-swaps race, and for the last inline record, the loser
 *                   takes a record chunk from the tree while the winner refills
 *   wfc-arrive-full the same race in a full tree, so the loser's record claim fails (it found a
 *                   bug: a slot given back after a failed claim hid a record from its owner; now a
 *                   record is taken before its slot, and a slot is never given back)
 *   wfc-double-free A and B free the same leaf (a double free), each into its own cache, preempted
 *                   anywhere in the check (the length word, the root) and before the claim: exactly
 *                   one caches it, the other reports DOUBLE_FREE and changes nothing (no push, no
 *                   flush, no release)
 *   wfc-double-free-full  the same with both caches full (capacity 1): the winner's push first
 *                   flushes its cache; the loser flushes nothing (the claim comes first)
 *   wfc-refree      A frees a leaf while B frees it too and mallocs a leaf, which pops it back when
 *                   B's free won: one DOUBLE_FREE report and the leaf cached or live once, or (A's
 *                   claim after B's pop made it live again, B-then-A among them) A's free frees B's
 *                   new block, indistinguishable from a free of it; never live twice, never cached
 *                   twice -- before the claim, a free preempted after its check and resumed after
 *                   the other thread's free and malloc cached a chunk that thread held
 * and after each schedule: no two live blocks overlap, no error report, rt_wfc_check at
 * quiescence; each context's cache holds exactly what its own calls left there (from their traces:
 * flushing it as that context frees exactly that -- a cache two threads shared, or one its owner
 * can no longer find, fails here); after rt_wfc_flush_all the tree's used_bytes is the live blocks'
 * footprint, and 0 once they are freed; the per-scenario outcomes. Two variants besides the
 * default hints + lazy (below), with one preemption less than the tree's two-operation scenarios
 * (2): the operations take 2-3x the steps.
 *
 * Usage: wf_interleave [max preemptions [scenario]]   (default 3 for two operations, 2 for three and
 *        for rt_wfc; a number sets all; a scenario name runs that one only, "-" keeps the defaults)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>

#include "testlib.h"

#include "rtalloc/waitfree.h"
#include "rtalloc/wfcache.h"
#include "wf_step_config.h"

#include "step_sched.h"

#define MAX_DEPTH 512u /* decisions per schedule */

void wf_test_step(const void *wf, int step, size_t node)
{
    if (my_op >= 0 && wf == S.target) {
        step_park(step, node);
    }
}

static void wait_parked(unsigned j)
{
    pthread_mutex_lock(&mu);
    while (!S.parked[j] && !S.done[j]) {
        pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
}

/* --- scenarios -------------------------------------------------------------------------------- */

typedef enum { OP_MALLOC, OP_FREE, OP_FREE_MALLOC, OP_REALLOC } op_kind_t;

typedef struct op_def {
    op_kind_t kind;
    size_t arg; /* malloc: bytes; free (free-malloc, realloc): index of a set-up block */
    const char *name;
    size_t size; /* free-malloc: the bytes of the malloc after the free; realloc: the new size */
} op_def_t;

typedef struct scenario {
    const char *name;
    unsigned height;   /* H: 2 (depth 3, 7 nodes) or 3 (depth 4, 15 nodes) */
    size_t setup[8];   /* mallocs, in order (0 ends) */
    int setup_free[8]; /* then frees of these set-up blocks (-1 ends) */
    op_def_t ops[MAX_OPS];
    unsigned nops;
} scenario_t;

/* 64-byte nodes: 1 leaf <= 52 bytes, 2 leaves <= 180, 4 <= 436, 8 <= 948 */
static const scenario_t scenarios[] = {
    {"fig9", 2, {10, 10, 10, 10}, {1, 3, -1}, {{OP_MALLOC, 100, "A", 0}, {OP_MALLOC, 10, "B", 0}}, 2},
    {"room", 3, {0}, {-1}, {{OP_MALLOC, 10, "A", 0}, {OP_MALLOC, 10, "B", 0}}, 2},
    {"free-malloc", 3, {436, 436}, {-1}, {{OP_FREE, 0, "A", 0}, {OP_MALLOC, 10, "B", 0}}, 2},
    {"free-free", 3, {100, 100, 436}, {-1}, {{OP_FREE, 0, "A", 0}, {OP_FREE, 1, "B", 0}, {OP_MALLOC, 436, "C", 0}}, 3},
    {"three",
     3,
     {10, 10, 10},
     {1, -1},
     {{OP_MALLOC, 10, "A", 0}, {OP_MALLOC, 100, "B", 0}, {OP_MALLOC, 10, "C", 0}},
     3},
    {"pristine", 3, {948}, {0, -1}, {{OP_MALLOC, 10, "A", 0}, {OP_MALLOC, 10, "B", 0}}, 2},
    {"double-free", 3, {10, 10, 436}, {-1}, {{OP_FREE, 0, "A", 0}, {OP_FREE, 0, "B", 0}}, 2},
    {"refree", 3, {10, 10, 436}, {-1}, {{OP_FREE, 0, "A", 0}, {OP_FREE_MALLOC, 0, "B", 10}}, 2},
    {"realloc-free", 3, {10, 10, 436}, {-1}, {{OP_REALLOC, 0, "A", 100}, {OP_FREE, 0, "B", 0}}, 2},
};

typedef struct variant {
    const char *name;
    unsigned flags;
} variant_t;

/* clang-format off */
static const variant_t variants[] = {
    {"paper", 0},
    {"read-only", RT_WF_READONLY_DESCENT},
    {"lazy", RT_WF_LAZY_REINIT},
    {"hints", RT_WF_HINTS},
    {"hints+lazy", RT_WF_HINTS | RT_WF_LAZY_REINIT},
};
/* clang-format on */

/* --- rt_wfc scenarios (rtalloc/wfcache.h) ------------------------------------------------------- */

/* rt_wfc's default tree (hints + lazy), the read-only descent (the other search of a claim) and the
 * paper's (no hints, eager re-initialisation on release); hints alone and lazy alone add no code of
 * their own to a claim or a release (the tree scenarios above run all five) -- and the test's
 * time budget */
static const variant_t wc_variants[] = {
    {"hints+lazy", RT_WF_HINTS | RT_WF_LAZY_REINIT},
    {"read-only", RT_WF_READONLY_DESCENT},
    {"paper", 0},
};

/* 256-byte nodes, a 15-node tree (H = 3): the control chunk (the tree's and the cache front's
 * control blocks and the first contexts' records) takes the two leftmost leaves; 6 leaves, 3
 * pairs, stay for the program (post-order 3-4, 7-8, 10-11). Only height 0 is cached (heights 1):
 * a leaf holds up to 244 bytes; a pair (756) is an uncached height. */
#define WC_NODE 256u
#define WC_TREE_HEIGHT 3u
#define WC_LEAF 100u
#define WC_PAIR 500u
#define WC_REGS 8u
#define WC_CALLS 3u
#define WC_HELPERS_MAX 16u
#define WC_CTX (4u + WC_HELPERS_MAX)

enum { WC_END, WC_MALLOC, WC_FREE, WC_FLUSH, WC_HELPERS, WC_FREE_WAS };
/* Contexts: 0 none (token 0: every call goes to the tree), 1-3 the threads of operations A-C, then
 * helpers (wfc-arrive's set-up). */
enum { NOONE = 0, TA = 1, TB = 2, TC = 3, THELP = 4 };

typedef struct wc_call {
    unsigned char kind;
    unsigned char who; /* set-up: the context making the call (an operation: its own thread) */
    unsigned char reg; /* malloc: the register receiving the pointer; free: the register freed */
    unsigned short size;
} wc_call_t;

/* clang-format off */
#define WM(who, reg, size) {WC_MALLOC, (who), (reg), (size)}
#define WFR(who, reg) {WC_FREE, (who), (reg), 0}
/* a free of the block the register received last, whether or not another call freed it (a double
 * free of the application's) */
#define WFW(who, reg) {WC_FREE_WAS, (who), (reg), 0}
#define WFL(who) {WC_FLUSH, (who), 0, 0}
/* clang-format on */
/* `who` gets its record (its first calls: a refill, a free, a flush); the tree's counters are as
 * before */
#define WARRIVE(who) WM(who, 7, WC_LEAF), WFR(who, 7), WFL(who)
/* all inline records but one taken by helper contexts that arrive and flush */
/* clang-format off */
#define WHELPERS {WC_HELPERS, 0, 0, 0}
/* clang-format on */

typedef struct wc_scenario {
    const char *name;
    unsigned batch_log2, capacity;
    bool arrive; /* helpers first; B's token hashes to A's slot; slots: a power of two >= helpers + 2 */
    wc_call_t setup[20];
    wc_call_t ops[MAX_OPS][WC_CALLS]; /* ops[j]: the calls of thread j (context j + 1), in order */
    unsigned nops;
    const char *special; /* the outcome wc_check_run counts for it */
    const char *known;   /* a known library bug this scenario reproduces: its failure is expected, and
                          its passing fails the test (drop the mark with the fix); NULL: none */
} wc_scenario_t;

/* Set-up placements (leaves L2-L7; the tree takes the leftmost free, a refill the leftmost pair):
 *   refill      A and B have records and empty caches; L2, L4 live, L3 and L5 free, pair L6-L7
 *               free: both refills want a pair -- one cuts L6-L7, the other falls back to a leaf
 *   flush       A holds L2 and L4, its cache L3 and L5 (full: capacity 2), L6-L7 live. A frees L2:
 *               the flush releases L3 to the tree, then L2 is pushed; B's refill finds L3 or nothing
 *   remote      capacity 1. A's batch L2-L3 both handed out (L3: the remote block), B holds L4 and
 *               caches L5, L6-L7 live. B frees L3 (its full cache releases L5) and L4 (releases
 *               L3, A's piece, to the tree) while A, cache empty, refills: L3, L5 or nothing
 *   fail-flush  A's cache holds the pair L2-L3 (both pieces), L4-L6 live, L7 free. A asks for a
 *               pair (uncached): the tree has none, A releases its cache and tries once more; B's
 *               refill races for the pair or a leaf of it
 *   arrive      helpers take all inline records but one; A and B, tokens on the same slot, arrive
 *               at once: slot reads and compare-and-swaps race, one takes the last inline record
 *               (fetch-and-add), the other a record chunk from the tree while the first refills;
 *               each then frees its block into its own cache
 *   arrive-full the same race with the tree full (every leaf live): the loser's record claim
 *               fails, it gives its slot back and frees to the tree; A and B free one block each */
static const wc_scenario_t wc_scenarios[] = {
    {"wfc-refill",
     1,
     2,
     false,
     {WARRIVE(TA), WARRIVE(TB), WM(NOONE, 0, WC_LEAF), WM(NOONE, 1, WC_LEAF), WM(NOONE, 2, WC_LEAF),
      WM(NOONE, 3, WC_LEAF), WFR(NOONE, 1), WFR(NOONE, 3)},
     {{WM(TA, 4, WC_LEAF)}, {WM(TB, 5, WC_LEAF)}},
     2,
     "one cut, one leaf",
     NULL},
    {"wfc-flush",
     1,
     2,
     false,
     {WARRIVE(TB), WM(TA, 0, WC_LEAF), WM(TA, 1, WC_LEAF), WM(TA, 2, WC_LEAF), WFR(TA, 1), WM(NOONE, 3, WC_LEAF),
      WM(NOONE, 4, WC_LEAF)},
     {{WFR(TA, 0)}, {WM(TB, 5, WC_LEAF)}},
     2,
     "B got the flushed leaf",
     NULL},
    {"wfc-remote",
     1,
     1,
     false,
     {WM(TA, 0, WC_LEAF), WM(TA, 1, WC_LEAF), WM(TB, 2, WC_LEAF), WM(NOONE, 3, WC_LEAF), WM(NOONE, 4, WC_LEAF)},
     {{WM(TA, 5, WC_LEAF)}, {WFR(TB, 1), WFR(TB, 2)}},
     2,
     "A got its own piece back",
     NULL},
    {"wfc-fail-flush",
     1,
     2,
     false,
     {WARRIVE(TB), WM(TA, 0, WC_LEAF), WFR(TA, 0), WM(NOONE, 1, WC_LEAF), WM(NOONE, 2, WC_LEAF), WM(NOONE, 3, WC_LEAF)},
     {{WM(TA, 4, WC_PAIR)}, {WM(TB, 5, WC_LEAF)}},
     2,
     "A failed (B took a leaf of the pair it released)",
     NULL},
    {"wfc-arrive",
     1,
     2,
     true,
     {WHELPERS},
     {{WM(TA, 0, WC_LEAF), WFR(TA, 0)}, {WM(TB, 1, WC_LEAF), WFR(TB, 1)}},
     2,
     "B took the slot both hash to",
     NULL},
    {"wfc-arrive-full",
     1,
     2,
     true,
     {WHELPERS, WM(NOONE, 0, WC_LEAF), WM(NOONE, 1, WC_LEAF), WM(NOONE, 2, WC_LEAF), WM(NOONE, 3, WC_LEAF),
      WM(NOONE, 4, WC_LEAF), WM(NOONE, 5, WC_LEAF)},
     {{WFR(TA, 0)}, {WFR(TB, 1)}},
     2,
     "B took the slot both hash to",
     NULL},
    {"wfc-double-free",
     1,
     2,
     false,
     {WARRIVE(TA), WARRIVE(TB), WM(NOONE, 0, WC_LEAF)},
     {{WFW(TA, 0)}, {WFW(TB, 0)}},
     2,
     "A's cache took it",
     NULL},
    {"wfc-double-free-full",
     1,
     1,
     false,
     {WARRIVE(TA), WARRIVE(TB), WM(NOONE, 0, WC_LEAF), WM(NOONE, 1, WC_LEAF), WM(NOONE, 2, WC_LEAF), WFR(TA, 1),
      WFR(TB, 2)},
     {{WFW(TA, 0)}, {WFW(TB, 0)}},
     2,
     "A's cache took it",
     NULL},
    {"wfc-refree",
     1,
     2,
     false,
     {WARRIVE(TA), WARRIVE(TB), WM(NOONE, 0, WC_LEAF)},
     {{WFW(TA, 0)}, {WFW(TB, 0), WM(TB, 1, WC_LEAF)}},
     2,
     "B's malloc got it back",
     NULL},
};

/* Per scenario, found once before its runs (wc_prepare). */
static struct {
    unsigned inline_count; /* records the control chunk holds for this geometry */
    unsigned helpers;      /* contexts of the set-up that take inline records (arrive) */
    unsigned caches;       /* slots */
} wc_env;
static uintptr_t wc_token[WC_CTX];
static unsigned wc_main_ctx; /* the context the main thread's calls run as (set-up and checks) */

/* The self hook: the token of the simulated thread running (worker j is context j + 1). Tokens are
 * written by the main thread between runs only. */
static uintptr_t wc_self(void *context);

/* --- one execution ------------------------------------------------------------------------------ */

static unsigned char control[1024] __attribute__((aligned(64)));
static unsigned char tree[16 * 64] __attribute__((aligned(64)));

typedef struct exec {
    const scenario_t *sc;    /* a tree scenario, or NULL and ... */
    const wc_scenario_t *wc; /* ... an rt_wfc one */
    const char *name;
    unsigned nops;
    const char *opname[MAX_OPS];
    const variant_t *v;
    rt_wf_t *w;
    void *setup_ptr[8];
    size_t nsetup;
    void *result[MAX_OPS];
    /* rt_wfc runs */
    rt_wfc_t *c;
    int free0;          /* the root's counter before the set-up */
    void *reg[WC_REGS]; /* live blocks (a free clears its register) */
    void *was[WC_REGS]; /* the last block each register received */
    size_t exp[WC_CTX]; /* nodes each context's cache holds after the set-up (its own calls) */
    void *wres[MAX_OPS][WC_CALLS];
    rt_wfc_trace_t wtr[MAX_OPS][WC_CALLS];
    /* the schedule */
    unsigned n;
    unsigned char choice[MAX_DEPTH];
    unsigned char enabled[MAX_DEPTH];
    int step[MAX_DEPTH];
    size_t node[MAX_DEPTH];
    unsigned preemptions;
    bool overlapped; /* an operation moved while another had started and not finished */
    tl_recorder_t rec;
    unsigned reports[MAX_OPS]; /* reports made by each operation */
    rt_error_kind_t report_kind[MAX_OPS];
    const void *report_ptr[MAX_OPS];
} exec_t;

static void wc_run_op(exec_t *x, unsigned j);

/* The handler of every run: the recorder, and which operation reported (the scheduler runs one
 * operation at a time, so the counts need no lock). */
static void on_report(void *context, const rt_error_t *e)
{
    exec_t *x = context;
    tl_record(&x->rec, e);
    if (my_op >= 0) {
        x->reports[my_op]++;
        x->report_kind[my_op] = e->kind;
        x->report_ptr[my_op] = e->pointer;
    }
}

/* One worker thread per operation slot, reused by every run: it waits for a new run, parks at the
 * gate, performs its operation of that run, and reports done. */
static struct {
    unsigned gen; /* bumped for every run */
    bool quit;
    exec_t *x;
    unsigned nops; /* of this run: a worker without an operation never touches *x, which the next
                      run's set-up rewrites while that worker may still be waking (TSan found it) */
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
        exec_t *x = jobs.x;
        unsigned nops = jobs.nops;
        pthread_mutex_unlock(&mu);
        if (j >= nops) {
            continue;
        }
        step_park(0, 0); /* the gate: nothing runs before the scheduler says so */
        if (x->wc != NULL) {
            wc_run_op(x, j);
        } else if (x->sc->ops[j].kind == OP_MALLOC) {
            x->result[j] = rt_wf_malloc(x->w, x->sc->ops[j].arg);
        } else if (x->sc->ops[j].kind == OP_REALLOC) {
            x->result[j] = rt_wf_realloc(x->w, x->setup_ptr[x->sc->ops[j].arg], x->sc->ops[j].size);
        } else {
            rt_wf_free(x->w, x->setup_ptr[x->sc->ops[j].arg]);
            if (x->sc->ops[j].kind == OP_FREE_MALLOC) {
                x->result[j] = rt_wf_malloc(x->w, x->sc->ops[j].size);
            }
        }
        pthread_mutex_lock(&mu);
        S.done[j] = true;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
    }
}

static bool start_workers(void)
{
    for (unsigned j = 0; j < MAX_OPS; j++) {
        TL_REQUIRE(pthread_create(&workers[j], NULL, worker_main, (void *)(uintptr_t)j) == 0, "pthread_create");
    }
    return true;
}

static void stop_workers(void)
{
    pthread_mutex_lock(&mu);
    jobs.quit = true;
    for (unsigned j = 0; j < MAX_OPS; j++) {
        pthread_cond_signal(&cv_op[j]);
    }
    pthread_mutex_unlock(&mu);
    for (unsigned j = 0; j < MAX_OPS; j++) {
        pthread_join(workers[j], NULL);
    }
}

static bool setup(exec_t *x)
{
    memset(tree, 0xA5, sizeof tree);
    rt_wf_config_t cfg = {64, x->v->flags};
    size_t bytes = (((size_t)2 << x->sc->height) - 1u) * 64u;
    x->w = rt_wf_create_split(control, tree, bytes, &cfg);
    TL_REQUIRE(x->w != NULL && rt_wf_height(x->w) == x->sc->height, "%s: create", x->sc->name);
    rt_wf_set_handler(x->w, on_report, x);
    x->nsetup = 0;
    for (size_t i = 0; i < 8u && x->sc->setup[i] != 0u; i++) {
        x->setup_ptr[i] = rt_wf_malloc(x->w, x->sc->setup[i]);
        TL_REQUIRE(x->setup_ptr[i] != NULL, "%s: set-up malloc %zu", x->sc->name, i);
        x->nsetup++;
    }
    for (size_t i = 0; i < 8u && x->sc->setup_free[i] >= 0; i++) {
        rt_wf_free(x->w, x->setup_ptr[x->sc->setup_free[i]]);
        x->setup_ptr[x->sc->setup_free[i]] = NULL;
    }
    return true;
}

/* --- rt_wfc runs ------------------------------------------------------------------------------ */

static unsigned char wc_mem[15 * WC_NODE] __attribute__((aligned(64)));

static uintptr_t wc_self(void *context)
{
    (void)context;
    return wc_token[my_op >= 0 ? (unsigned)my_op + 1u : wc_main_ctx];
}

static rt_wfc_t *wc_create(const wc_scenario_t *sc, unsigned flags, unsigned caches)
{
    rt_wfc_config_t cfg;
    rt_wfc_default_config(&cfg);
    cfg.node_size = WC_NODE;
    cfg.tree_flags = flags;
    cfg.heights = 1;
    cfg.batch_log2 = sc->batch_log2;
    cfg.capacity = sc->capacity;
    cfg.caches = caches;
    cfg.self = wc_self;
    cfg.self_context = NULL;
    memset(wc_mem, 0xA5, sizeof wc_mem);
    return rt_wfc_create(wc_mem, sizeof wc_mem, &cfg);
}

/* One call of a script, as the context the hook says: a malloc into its register, a free of one
 * (cleared), a flush. Returns the malloc's result or the pointer freed. */
static void *wc_call(exec_t *x, const wc_call_t *k, rt_wfc_trace_t *tr)
{
    memset(tr, 0, sizeof *tr);
    void *p = NULL;
    if (k->kind == WC_MALLOC) {
        p = rt_wfc_malloc_ex(x->c, k->size, tr);
        x->reg[k->reg] = p;
        if (p != NULL) {
            x->was[k->reg] = p;
        }
    } else if (k->kind == WC_FREE) {
        p = x->reg[k->reg];
        x->reg[k->reg] = NULL;
        rt_wfc_free_ex(x->c, p, tr);
    } else if (k->kind == WC_FREE_WAS) {
        p = x->was[k->reg];
        x->reg[k->reg] = NULL;
        rt_wfc_free_ex(x->c, p, tr);
    } else if (k->kind == WC_FLUSH) {
        rt_wfc_flush(x->c);
    }
    return p;
}

static void wc_run_op(exec_t *x, unsigned j)
{
    for (unsigned n = 0; n < WC_CALLS && x->wc->ops[j][n].kind != WC_END; n++) {
        x->wres[j][n] = wc_call(x, &x->wc->ops[j][n], &x->wtr[j][n]);
    }
}

static size_t wc_nodes(unsigned h) { return ((size_t)2 << h) - 1u; }

/* What a call leaves in its context's cache (nodes), from its trace: a hit pops one chunk, a
 * refill pushes its other pieces, a malloc that released chunks released the whole cache (the
 * failure path), a free into the cache (cache_ops: its push and the flush's pops) pushes one chunk
 * after releasing `releases` of its height; a free to the tree or a call without a cache (no cache
 * operation) leaves nothing. */
static void wc_account(size_t *exp, const wc_call_t *k, const rt_wfc_trace_t *tr, const void *p)
{
    if (k->kind == WC_MALLOC) {
        if (tr->releases != 0u) {
            *exp = 0;
        } else if (p != NULL && tr->descents == 0u) {
            *exp -= wc_nodes(tr->height);
        } else {
            *exp += tr->cache_ops * wc_nodes(tr->height);
        }
    } else if (k->kind == WC_FREE || k->kind == WC_FREE_WAS) {
        if (tr->cache_ops != 0u) {
            *exp += wc_nodes(tr->height) - tr->releases * wc_nodes(tr->height);
        }
    } else if (k->kind == WC_FLUSH) {
        *exp = 0;
    }
}

/* Context ctx's first call on c (a free of a leaf token 0 took from the tree), then its flush:
 * the free's trace (probes: slot reads; descents 1 iff its record came from the tree). */
static rt_wfc_trace_t wc_arrive(rt_wfc_t *c, unsigned ctx)
{
    rt_wfc_trace_t tr;
    memset(&tr, 0, sizeof tr);
    wc_main_ctx = NOONE;
    void *p = rt_wfc_malloc(c, WC_LEAF);
    wc_main_ctx = ctx;
    rt_wfc_free_ex(c, p, &tr);
    rt_wfc_flush(c);
    wc_main_ctx = NOONE;
    return tr;
}

/* Before a scenario's runs: the inline records of the geometry (contexts arrive until one takes its
 * record from the tree), the slots, and tokens: B's on A's slot (arrive) or each on a slot of its
 * own -- found by arrivals on scratch instances, never by copying the cache's hash. */
static bool wc_prepare(const wc_scenario_t *sc)
{
    rt_wfc_t *c = wc_create(sc, 0u, RT_WFC_MAX_CACHES);
    TL_REQUIRE(c != NULL, "%s: create", sc->name);
    unsigned n = 0;
    for (; n < WC_HELPERS_MAX; n++) {
        wc_token[THELP + n] = (uintptr_t)0x40000u + 0x40u * n;
        rt_wfc_trace_t tr = wc_arrive(c, THELP + n);
        TL_REQUIRE(tr.cache_ops == 1u, "%s: helper %u got no cache", sc->name, n);
        if (tr.descents != 0u) {
            break;
        }
    }
    TL_REQUIRE(n >= 1u && n < WC_HELPERS_MAX, "%s: %u inline records", sc->name, n);
    wc_env.inline_count = n;
    wc_env.helpers = sc->arrive ? n - 1u : 0u;
    wc_env.caches = 4u;
    if (sc->arrive) {
        wc_env.caches = 2u;
        while (wc_env.caches < wc_env.helpers + 2u) {
            wc_env.caches *= 2u;
        }
    }
    wc_token[NOONE] = 0u;
    wc_token[TA] = 0x10000u;
    wc_token[TC] = 0u;
    for (unsigned ctx = TB; ctx <= sc->nops; ctx++) {
        unsigned want = sc->arrive && ctx == TB ? 2u : 1u; /* probes of its first call */
        bool found = false;
        for (unsigned k = 1; k <= 1024u && !found; k++) {
            wc_token[ctx] = (uintptr_t)0x10000u * ctx + 0x40u * k;
            c = wc_create(sc, 0u, wc_env.caches);
            TL_REQUIRE(c != NULL, "%s: create", sc->name);
            for (unsigned o = TA; o < ctx; o++) {
                (void)wc_arrive(c, o);
            }
            found = wc_arrive(c, ctx).probes == want;
        }
        TL_REQUIRE(found, "%s: no token for context %u", sc->name, ctx);
    }
    return true;
}

static bool wc_setup(exec_t *x)
{
    const wc_scenario_t *sc = x->wc;
    x->c = wc_create(sc, x->v->flags, wc_env.caches);
    TL_REQUIRE(x->c != NULL && rt_wf_height(rt_wfc_tree(x->c)) == WC_TREE_HEIGHT, "%s: create", sc->name);
    rt_wfc_set_handler(x->c, on_report, x);
    rt_wf_t *w = rt_wfc_tree(x->c);
    x->free0 = rt_wf_counter(w, rt_wf_nodes(w) - 1u);
    memset(x->reg, 0, sizeof x->reg);
    memset(x->was, 0, sizeof x->was);
    memset(x->exp, 0, sizeof x->exp);
    memset(x->wres, 0, sizeof x->wres);
    memset(x->wtr, 0, sizeof x->wtr);
    for (size_t i = 0; i < sizeof sc->setup / sizeof sc->setup[0] && sc->setup[i].kind != WC_END; i++) {
        const wc_call_t *k = &sc->setup[i];
        if (k->kind == WC_HELPERS) {
            for (unsigned h = 0; h < wc_env.helpers; h++) {
                rt_wfc_trace_t tr = wc_arrive(x->c, THELP + h);
                TL_REQUIRE(tr.cache_ops == 1u && tr.descents == 0u, "%s: helper %u: no inline record", sc->name, h);
            }
            continue;
        }
        rt_wfc_trace_t tr;
        wc_main_ctx = k->who;
        void *p = wc_call(x, k, &tr);
        wc_main_ctx = NOONE;
        TL_REQUIRE(k->kind != WC_MALLOC || p != NULL, "%s: set-up malloc %zu", sc->name, i);
        wc_account(&x->exp[k->who], k, &tr, p);
    }
    TL_REQUIRE(x->rec.count == 0u, "%s: error report in the set-up", sc->name);
    return true;
}

/* Runs the scenario with `prefix` as the first choices, then the default: the last operation
 * goes on while it can, else the lowest unfinished one. */
static bool execute(exec_t *x, const unsigned char *prefix, unsigned plen)
{
    memset(x->result, 0, sizeof x->result);
    memset(x->reports, 0, sizeof x->reports);
    memset(x->report_ptr, 0, sizeof x->report_ptr);
    tl_recorder_reset(&x->rec);
    if (!(x->wc != NULL ? wc_setup(x) : setup(x))) {
        return false;
    }
    unsigned nops = x->nops;
    pthread_mutex_lock(&mu);
    memset(&S, 0, sizeof S);
    S.target = x->wc != NULL ? (const void *)rt_wfc_tree(x->c) : (const void *)x->w;
    jobs.x = x;
    jobs.nops = nops;
    jobs.gen++;
    for (unsigned j = 0; j < MAX_OPS; j++) {
        pthread_cond_signal(&cv_op[j]);
    }
    pthread_mutex_unlock(&mu);
    for (unsigned j = 0; j < nops; j++) {
        wait_parked(j);
    }
    x->n = 0;
    x->preemptions = 0;
    x->overlapped = false;
    int last = -1;
    bool started[MAX_OPS] = {false};
    for (;;) {
        unsigned mask = 0;
        for (unsigned j = 0; j < nops; j++) {
            mask |= S.done[j] ? 0u : 1u << j;
        }
        if (mask == 0u) {
            break;
        }
        unsigned pick;
        if (x->n < plen) {
            pick = prefix[x->n];
        } else if (last >= 0 && (mask & (1u << last)) != 0u) {
            pick = (unsigned)last;
        } else {
            pick = (unsigned)__builtin_ctz(mask);
        }
        if (last >= 0 && (mask & (1u << last)) != 0u && pick != (unsigned)last) {
            x->preemptions++;
        }
        for (unsigned j = 0; j < nops; j++) {
            if (j != pick && started[j] && !S.done[j]) {
                x->overlapped = true;
            }
        }
        if (x->n >= MAX_DEPTH) {
            TL_CHECK(false, "%s: schedule longer than %u steps", x->name, MAX_DEPTH);
            exit(1);
        }
        x->choice[x->n] = (unsigned char)pick;
        x->enabled[x->n] = (unsigned char)mask;
        x->step[x->n] = S.step[pick];
        x->node[x->n] = S.node[pick];
        x->n++;
        started[pick] = true;
        step_advance(pick);
        last = (int)pick;
    }
    pthread_mutex_lock(&mu);
    S.target = NULL;
    pthread_mutex_unlock(&mu);
    return true;
}

/* --- checks ------------------------------------------------------------------------------------ */

typedef struct range {
    uintptr_t lo, hi;
} range_t;

static bool no_overlap(exec_t *x)
{
    range_t r[16];
    size_t n = 0;
    for (size_t i = 0; i < x->nsetup; i++) {
        bool freed = false;
        for (unsigned j = 0; j < x->sc->nops; j++) {
            freed = freed || (x->sc->ops[j].kind != OP_MALLOC && x->sc->ops[j].arg == i);
        }
        if (x->setup_ptr[i] != NULL && !freed) {
            uintptr_t p = (uintptr_t)x->setup_ptr[i];
            r[n++] = (range_t){p - 4u, p - 4u + rt_wf_usable_size(x->w, x->setup_ptr[i]) + RT_WF_OVERHEAD};
        }
    }
    for (unsigned j = 0; j < x->sc->nops; j++) {
        if (x->result[j] != NULL) {
            uintptr_t p = (uintptr_t)x->result[j];
            r[n++] = (range_t){p - 4u, p - 4u + rt_wf_usable_size(x->w, x->result[j]) + RT_WF_OVERHEAD};
        }
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t b = a + 1u; b < n; b++) {
            TL_REQUIRE(r[a].hi <= r[b].lo || r[b].hi <= r[a].lo, "%s/%s: chunks [%#lx, %#lx) and [%#lx, %#lx) overlap",
                       x->sc->name, x->v->name, (unsigned long)r[a].lo, (unsigned long)r[a].hi, (unsigned long)r[b].lo,
                       (unsigned long)r[b].hi);
        }
    }
    return true;
}

static const char *step_name(int step)
{
    switch (step) {
    case 0: return "start";
    case 1: return "decrement";
    case 2: return "undo (failed decrement)";
    case 3: return "increment";
    case 4: return "read";
    case 5: return "slot read";
    case 6: return "slot compare-and-swap";
    case 7: return "inline record (fetch-add)";
    case 8: return "length word read (check)";
    case 9: return "claim (compare-and-swap)";
    case 10: return "live tag stored";
    }
    return "?";
}

static void print_schedule(const exec_t *x)
{
    for (unsigned d = 0; d < x->n; d++) {
        if (x->step[d] == 0) {
            printf("      %s starts\n", x->opname[x->choice[d]]);
        } else {
            printf("      %s %-26s %s %zu\n", x->opname[x->choice[d]], step_name(x->step[d]),
                   x->step[d] >= 5 && x->step[d] <= 7 ? "slot" : "node", x->node[d]);
        }
    }
}

/* Events of rt_wfc runs, counted per schedule in which they occur. */
enum { EV_CUT, EV_FALLBACK, EV_FAIL_FLUSH, EV_CAS_LOST, EV_INLINE_RACE, EV_TREE_RECORD, EV_N };
static const char *const ev_name[EV_N] = {"batch cut",     "leaf fallback",         "failure flush",
                                          "slot CAS lost", "inline fetch-add race", "record from the tree"};

typedef struct tally {
    unsigned long schedules, serial;
    unsigned long fails[MAX_OPS];
    unsigned long all_fail; /* schedules in which every malloc failed */
    unsigned long ev[EV_N];
    unsigned long special;      /* per scenario (rt_wfc): the outcome its check names */
    unsigned long won[MAX_OPS]; /* racing frees of one block: schedules in which op j's free claimed it */
    unsigned long refreed;      /* ... in which the first op's free freed the second op's new block */
    bool printed;
} tally_t;

/* Two operations free one block (double-free, refree, realloc-free -- a moving realloc frees it
 * too; rt_wfc's wfc-double-free, wfc-refree): given the reports each made, which free claimed the
 * block. Every report is a DOUBLE_FREE of that pointer, at most one per operation; no report at
 * all only when the second operation's malloc got the block back (`again`: then the first
 * operation's free freed that new block).
 * Returns the number of frees that claimed it (1, or 2 for that case), or 0 on a failed check. */
static unsigned racing_frees(exec_t *x, tally_t *t, const void *block, const void *again)
{
    const char *n = x->name, *v = x->v->name;
    unsigned winners = 0;
    for (unsigned j = 0; j < 2u; j++) {
        TL_REQUIRE(x->reports[j] <= 1u &&
                       (x->reports[j] == 0u || (x->report_kind[j] == RT_ERR_DOUBLE_FREE && x->report_ptr[j] == block)),
                   "%s/%s: op %s made %u reports, the last %s of %p (the block %p)", n, v, x->opname[j], x->reports[j],
                   tl_kind_name(x->report_kind[j]), x->report_ptr[j], block);
        winners += x->reports[j] == 0u ? 1u : 0u;
    }
    TL_REQUIRE(x->rec.count == x->reports[0] + x->reports[1], "%s/%s: %lu reports, not all from the operations", n, v,
               x->rec.count);
    TL_REQUIRE(winners == 1u || (winners == 2u && again == block),
               "%s/%s: %u frees of one block claimed it (B's malloc got %p, the block is %p)", n, v, winners, again,
               block);
    for (unsigned j = 0; j < 2u && winners == 1u; j++) {
        t->won[j] += x->reports[j] == 0u ? 1u : 0u;
    }
    t->refreed += winners == 2u ? 1u : 0u;
    return winners;
}

static bool check_run(exec_t *x, tally_t *t)
{
    const scenario_t *sc = x->sc;
    const char *n = sc->name, *v = x->v->name;
    t->schedules++;
    t->serial += x->overlapped ? 0u : 1u;
    unsigned mallocs = 0, failed = 0;
    for (unsigned j = 0; j < sc->nops; j++) {
        if (sc->ops[j].kind != OP_FREE) {
            mallocs++;
            if (x->result[j] == NULL) {
                failed++;
                t->fails[j]++;
            }
        }
    }
    unsigned frees = 0; /* of the operations, that claimed their block */
    bool race = sc->nops == 2u && sc->ops[0].kind != OP_MALLOC && sc->ops[1].kind != OP_MALLOC &&
                sc->ops[0].arg == sc->ops[1].arg;
    if (race) {
        frees = racing_frees(x, t, x->setup_ptr[sc->ops[0].arg], x->result[1]);
        if (frees == 0u) {
            print_schedule(x);
            return false;
        }
        if (frees == 2u) {
            x->result[1] = NULL; /* B's new block, freed by A's free */
        }
    } else {
        TL_REQUIRE(x->rec.count == 0u, "%s/%s: error report %s", n, v, tl_kind_name(x->rec.last));
        for (unsigned j = 0; j < sc->nops; j++) {
            frees += sc->ops[j].kind != OP_MALLOC ? 1u : 0u;
        }
    }
    /* the tree's own count of what it released and holds: each block released once */
    rt_stats_t st;
    rt_wf_stats(x->w, &st);
    size_t setup_frees = 0, footprint = 0;
    for (size_t i = 0; i < 8u && sc->setup_free[i] >= 0; i++) {
        setup_frees++;
    }
    for (size_t i = 0; i < x->nsetup; i++) {
        bool freed = x->setup_ptr[i] == NULL;
        for (unsigned j = 0; j < sc->nops; j++) {
            freed = freed || (sc->ops[j].kind != OP_MALLOC && sc->ops[j].arg == i);
        }
        footprint += freed ? 0u : rt_wf_usable_size(x->w, x->setup_ptr[i]) + RT_WF_OVERHEAD;
    }
    for (unsigned j = 0; j < sc->nops; j++) {
        footprint += x->result[j] != NULL ? rt_wf_usable_size(x->w, x->result[j]) + RT_WF_OVERHEAD : 0u;
    }
    if (!TL_CHECK(st.frees == setup_frees + frees && st.used_bytes == footprint,
                  "%s/%s: the tree counts %llu frees (expected %zu) and %zu bytes used (live blocks %zu)", n, v,
                  (unsigned long long)st.frees, setup_frees + frees, st.used_bytes, footprint)) {
        print_schedule(x);
        return false;
    }
    if (!no_overlap(x)) {
        print_schedule(x);
        return false;
    }
    TL_REQUIRE(rt_wf_check(x->w), "%s/%s: equation 3 after the schedule", n, v);
    if (mallocs > 0u && failed == mallocs) {
        t->all_fail++;
    }
    if (strcmp(n, "fig9") == 0) {
        TL_REQUIRE(x->result[0] == NULL, "%s/%s: A got 2 leaves where no free pair exists", n, v);
        TL_REQUIRE(x->result[1] != NULL || x->overlapped, "%s/%s: B failed without overlapping A", n, v);
        if (x->result[1] == NULL) {
            /* the weak guarantee: transient -- alone, the same request succeeds now */
            void *again = rt_wf_malloc(x->w, 10);
            TL_REQUIRE(again != NULL, "%s/%s: B's request fails even alone after the overlap", n, v);
            if (!t->printed) {
                printf("    %s/%s: both fail (Fig. 9), e.g. this schedule:\n", n, v);
                print_schedule(x);
                t->printed = true;
            }
        }
    } else if (strcmp(n, "room") == 0) {
        TL_REQUIRE(failed == 0u, "%s/%s: a malloc failed with 8 free leaves for 2", n, v);
    } else if (strcmp(n, "free-malloc") == 0) {
        uintptr_t lo = (uintptr_t)x->setup_ptr[0] - 4u, hi = lo + 7u * 64u;
        uintptr_t p = (uintptr_t)x->result[1];
        TL_REQUIRE(p == 0u || (p >= lo && p < hi), "%s/%s: B's leaf %#lx outside the freed half", n, v,
                   (unsigned long)p);
        bool a_first = x->choice[0] == 0u && !x->overlapped;
        TL_REQUIRE(!a_first || p != 0u, "%s/%s: B failed after A's free had finished", n, v);
    } else if (strcmp(n, "free-free") == 0) {
        if (x->result[2] == NULL) {
            void *again = rt_wf_malloc(x->w, 436);
            TL_REQUIRE(again != NULL, "%s/%s: the merged pair cannot be allocated after both frees", n, v);
        }
    }
    return true;
}

/* Schedules in which an operation's slot compare-and-swap failed: its next step reads a slot. */
static bool wc_cas_lost(const exec_t *x)
{
    for (unsigned d = 0; d < x->n; d++) {
        if (x->step[d] != 6) {
            continue;
        }
        for (unsigned e = d + 1u; e < x->n; e++) {
            if (x->choice[e] == x->choice[d]) {
                if (x->step[e] == 5) {
                    return true;
                }
                break;
            }
        }
    }
    return false;
}

static bool wc_check_run(exec_t *x, tally_t *t)
{
    const wc_scenario_t *sc = x->wc;
    const char *n = sc->name, *v = x->v->name;
    rt_wfc_t *c = x->c;
    rt_wf_t *w = rt_wfc_tree(c);
    t->schedules++;
    t->serial += x->overlapped ? 0u : 1u;
    unsigned mallocs = 0, failed = 0;
    bool ev[EV_N] = {false};
    for (unsigned j = 0; j < sc->nops; j++) {
        for (unsigned k = 0; k < WC_CALLS && sc->ops[j][k].kind != WC_END; k++) {
            const rt_wfc_trace_t *tr = &x->wtr[j][k];
            if (sc->ops[j][k].kind != WC_MALLOC) {
                continue;
            }
            mallocs++;
            if (x->wres[j][k] == NULL) {
                failed++;
                t->fails[j]++;
            }
            /* a refill's pieces pushed (the failure path's flush pops count as cache operations) */
            ev[EV_CUT] = ev[EV_CUT] || (tr->descents != 0u && tr->releases == 0u && tr->cache_ops != 0u);
            ev[EV_FALLBACK] = ev[EV_FALLBACK] || (tr->releases == 0u && tr->descents >= 2u && !sc->arrive);
            ev[EV_FAIL_FLUSH] = ev[EV_FAIL_FLUSH] || tr->releases != 0u;
        }
    }
    ev[EV_CAS_LOST] = wc_cas_lost(x);
    unsigned took_inline = 0; /* operations that reached the fetch-and-add of an inline record */
    for (unsigned d = 0; d < x->n; d++) {
        took_inline |= x->step[d] == 7 ? 1u << x->choice[d] : 0u;
    }
    ev[EV_INLINE_RACE] = took_inline == 3u;
    if (mallocs > 0u && failed == mallocs) {
        t->all_fail++;
    }
    bool race = sc->nops == 2u && sc->ops[0][0].kind == WC_FREE_WAS && sc->ops[1][0].kind == WC_FREE_WAS &&
                sc->ops[0][0].reg == sc->ops[1][0].reg;
    if (race) {
        /* the winner cached or released it (a free that finds it cached goes the tree's way, and may
         * find it live again there); the loser changed nothing: no push, no flush, no release */
        const void *block = x->was[sc->ops[0][0].reg];
        unsigned winners = racing_frees(x, t, block, x->wres[1][1]);
        for (unsigned j = 0; j < 2u && winners != 0u; j++) {
            const rt_wfc_trace_t *tr = &x->wtr[j][0];
            bool won = x->reports[j] == 0u;
            if (!TL_CHECK(won ? tr->cache_ops + tr->releases >= 1u
                              : tr->cache_ops == 0u && tr->releases == 0u && tr->rmw == 0u,
                          "%s/%s: %s's free (%s) "
                          "cache_ops %u releases %u rmw %u",
                          n, v, x->opname[j], won ? "claimed it" : "lost", tr->cache_ops, tr->releases, tr->rmw)) {
                winners = 0;
            }
        }
        if (winners == 0u) {
            print_schedule(x);
            return false;
        }
        if (winners == 2u) {
            x->reg[sc->ops[1][1].reg] = NULL; /* B's new block, freed by A's free */
        }
        bool refree = sc->ops[1][1].kind == WC_MALLOC;
        t->special += refree ? x->wres[1][1] == block : x->reports[1] != 0u;
        tl_recorder_reset(&x->rec); /* accounted for: none may follow */
    } else {
        TL_REQUIRE(x->rec.count == 0u, "%s/%s: error report %s", n, v, tl_kind_name(x->rec.last));
    }
    /* no two live blocks overlap */
    size_t live = 0;
    for (unsigned a = 0; a < WC_REGS; a++) {
        if (x->reg[a] == NULL) {
            continue;
        }
        uintptr_t pa = (uintptr_t)x->reg[a] - 4u, fa = rt_wfc_usable_size(c, x->reg[a]) + RT_WF_OVERHEAD;
        live += fa;
        for (unsigned b = a + 1u; b < WC_REGS; b++) {
            if (x->reg[b] == NULL) {
                continue;
            }
            uintptr_t pb = (uintptr_t)x->reg[b] - 4u, fb = rt_wfc_usable_size(c, x->reg[b]) + RT_WF_OVERHEAD;
            if (!(pa + fa <= pb || pb + fb <= pa)) {
                TL_CHECK(false, "%s/%s: blocks %u [%#lx, %#lx) and %u [%#lx, %#lx) overlap", n, v, a, (unsigned long)pa,
                         (unsigned long)(pa + fa), b, (unsigned long)pb, (unsigned long)(pb + fb));
                print_schedule(x);
                return false;
            }
        }
    }
    if (!TL_CHECK(rt_wfc_check(c), "%s/%s: rt_wfc_check after the schedule", n, v)) {
        print_schedule(x);
        return false;
    }
    /* each context's cache holds what its own calls left there: flushing it as that context frees
     * exactly that (a cache two threads shared, or one no slot leads to, shows here) */
    size_t exp[WC_CTX];
    memcpy(exp, x->exp, sizeof exp);
    for (unsigned j = 0; j < sc->nops; j++) {
        for (unsigned k = 0; k < WC_CALLS && sc->ops[j][k].kind != WC_END; k++) {
            wc_account(&exp[j + 1u], &sc->ops[j][k], &x->wtr[j][k], x->wres[j][k]);
        }
    }
    for (unsigned ctx = TA; ctx < THELP + wc_env.helpers; ctx++) {
        size_t before = rt_wfc_cached_bytes(c);
        wc_main_ctx = ctx;
        rt_wfc_flush(c);
        wc_main_ctx = NOONE;
        size_t held = before - rt_wfc_cached_bytes(c);
        if (!TL_CHECK(held == exp[ctx] * WC_NODE, "%s/%s: context %u's cache held %zu bytes, its calls left %zu", n, v,
                      ctx, held, exp[ctx] * WC_NODE)) {
            print_schedule(x);
            return false;
        }
    }
    TL_REQUIRE(rt_wfc_cached_bytes(c) == 0u, "%s/%s: %zu bytes cached where no context's flush reaches", n, v,
               rt_wfc_cached_bytes(c));
    rt_wfc_flush_all(c);
    rt_stats_t st;
    rt_wf_stats(w, &st);
    if (!TL_CHECK(st.used_bytes == live, "%s/%s: after flush_all the tree counts %zu bytes used, live blocks %zu", n, v,
                  st.used_bytes, live)) {
        print_schedule(x);
        return false;
    }
    TL_REQUIRE(rt_wfc_check(c), "%s/%s: rt_wfc_check after flush_all", n, v);
    /* scenario checks (before the blocks go) */
    const void *r0 = x->wres[0][0], *r1 = x->wres[1][0];
    bool a_first = !x->overlapped && x->choice[0] == 0u, b_first = !x->overlapped && x->choice[0] == 1u;
    if (strcmp(n, "wfc-refill") == 0) {
        TL_REQUIRE(failed == 0u || x->overlapped, "%s/%s: a refill failed alone with a pair and 2 leaves free", n, v);
        t->special += r0 != NULL && r1 != NULL && x->wtr[0][0].cache_ops + x->wtr[1][0].cache_ops == 1u;
    } else if (strcmp(n, "wfc-flush") == 0) {
        TL_REQUIRE(x->wtr[0][0].releases == 1u, "%s/%s: A's free into a full cache released %u chunks", n, v,
                   x->wtr[0][0].releases);
        TL_REQUIRE(r1 == NULL || r1 == x->was[1], "%s/%s: B got %p, not the leaf A's flush released (%p)", n, v, r1,
                   x->was[1]);
        TL_REQUIRE(!a_first || r1 != NULL, "%s/%s: B failed after A's flush had finished", n, v);
        t->special += r1 != NULL;
    } else if (strcmp(n, "wfc-remote") == 0) {
        const void *spare = (const unsigned char *)x->was[2] + WC_NODE; /* B's batch: L4, then L5 */
        TL_REQUIRE(r0 == NULL || r0 == x->was[1] || r0 == spare, "%s/%s: A got %p, neither released leaf", n, v, r0);
        TL_REQUIRE(!b_first || r0 != NULL, "%s/%s: A failed after B's frees had finished", n, v);
        TL_REQUIRE(!a_first || r0 == NULL, "%s/%s: A got memory before anything was free", n, v);
        TL_REQUIRE(x->wtr[1][0].releases == 1u && x->wtr[1][1].releases == 1u, "%s/%s: B's frees released %u, %u", n, v,
                   x->wtr[1][0].releases, x->wtr[1][1].releases);
        t->special += r0 == x->was[1]; /* A's own piece, back through B's cache and the tree */
    } else if (strcmp(n, "wfc-fail-flush") == 0) {
        TL_REQUIRE(x->wtr[0][0].releases == 2u, "%s/%s: A's failing malloc released %u chunks, not its 2", n, v,
                   x->wtr[0][0].releases);
        TL_REQUIRE(failed == 0u || x->overlapped, "%s/%s: a malloc failed alone", n, v);
        t->special += r0 == NULL; /* B took a leaf of the pair A had released for itself */
    } else if (strncmp(n, "wfc-arrive", 10) == 0) {
        TL_REQUIRE(failed == 0u || x->overlapped, "%s/%s: a malloc failed alone", n, v);
        t->special += x->wtr[0][0].probes >= 2u; /* B claimed the slot both hash to */
    }
    /* every block freed, straight to the tree: nothing used, equation 3; what the root lacks then
     * is the records the tree gave */
    for (unsigned a = 0; a < WC_REGS; a++) {
        rt_wfc_free(c, x->reg[a]);
        x->reg[a] = NULL;
    }
    rt_wf_stats(w, &st);
    TL_REQUIRE(st.used_bytes == 0u && x->rec.count == 0u, "%s/%s: %zu bytes used after every free", n, v,
               st.used_bytes);
    TL_REQUIRE(rt_wfc_check(c), "%s/%s: rt_wfc_check after every free", n, v);
    int records = x->free0 - rt_wf_counter(w, rt_wf_nodes(w) - 1u);
    /* arrive: the loser's record; else B's where the control chunk holds one record only */
    int most = sc->arrive || wc_env.inline_count < 2u ? 1 : 0;
    TL_REQUIRE(records >= 0 && records <= most, "%s/%s: %d records from the tree", n, v, records);
    ev[EV_TREE_RECORD] = records != 0;
    for (unsigned e = 0; e < EV_N; e++) {
        t->ev[e] += ev[e] ? 1u : 0u;
    }
    return true;
}

/* --- exploration -------------------------------------------------------------------------------- */

static unsigned preemptions_of(const unsigned char *choice, const unsigned char *enabled, unsigned len)
{
    unsigned p = 0;
    for (unsigned d = 1; d < len; d++) {
        unsigned prev = choice[d - 1u];
        if ((enabled[d] & (1u << prev)) != 0u && choice[d] != prev) {
            p++;
        }
    }
    return p;
}

static bool explore(exec_t *x, const unsigned char *prefix, unsigned plen, unsigned bound, tally_t *t)
{
    if (!execute(x, prefix, plen) || !(x->wc != NULL ? wc_check_run(x, t) : check_run(x, t))) {
        printf("    schedule prefix:");
        for (unsigned d = 0; d < plen; d++) {
            printf(" %s", x->opname[prefix[d]]);
        }
        printf("\n");
        return false;
    }
    /* this run's choices and enabled sets: branch at every decision point it introduced */
    unsigned n = x->n;
    unsigned char choice[MAX_DEPTH], enabled[MAX_DEPTH];
    memcpy(choice, x->choice, n);
    memcpy(enabled, x->enabled, n);
    for (unsigned d = n; d-- > plen;) {
        for (unsigned o = 0; o < x->nops; o++) {
            if ((enabled[d] & (1u << o)) == 0u || o == choice[d]) {
                continue;
            }
            unsigned char next[MAX_DEPTH];
            memcpy(next, choice, d);
            next[d] = (unsigned char)o;
            if (preemptions_of(next, enabled, d + 1u) > bound) {
                continue;
            }
            if (!explore(x, next, d + 1u, bound, t)) {
                return false;
            }
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    uint64_t bound2 = 3, bound3 = 2, bound_wc = 2;
    const char *only = argc > 2 ? argv[2] : NULL;
    if (argc > 1 && strcmp(argv[1], "-") != 0) {
        if (!tl_parse_u64(argv[1], &bound2) || bound2 > 8u) {
            fprintf(stderr, "usage: wf_interleave [max preemptions [scenario]]\n");
            return 2;
        }
        bound3 = bound2;
        bound_wc = bound2;
    }
    if (!start_workers()) {
        return tl_summary("wf_interleave");
    }
    for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
        const scenario_t *sc = &scenarios[s];
        if (only != NULL && strcmp(only, sc->name) != 0) {
            continue;
        }
        unsigned bound = (unsigned)(sc->nops == 2u ? bound2 : bound3);
        for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
            static exec_t x;
            memset(&x, 0, sizeof x);
            x.sc = sc;
            x.name = sc->name;
            x.nops = sc->nops;
            for (unsigned j = 0; j < sc->nops; j++) {
                x.opname[j] = sc->ops[j].name;
            }
            x.v = &variants[k];
            tally_t t;
            memset(&t, 0, sizeof t);
            unsigned long failed = tl_state.failed;
            bool ok = explore(&x, NULL, 0, bound, &t);
            printf("%-11s %-10s %2u ops, <= %u preemptions: %6lu schedules (%lu serial); failed mallocs:", sc->name,
                   x.v->name, sc->nops, bound, t.schedules, t.serial);
            for (unsigned j = 0; j < sc->nops; j++) {
                if (sc->ops[j].kind != OP_FREE) {
                    printf(" %s %lu", sc->ops[j].name, t.fails[j]);
                }
            }
            bool race = sc->nops == 2u && sc->ops[0].kind != OP_MALLOC && sc->ops[1].kind != OP_MALLOC;
            if (race) {
                printf(", A's free won %lu, B's %lu, A freed B's new block %lu", t.won[0], t.won[1], t.refreed);
            }
            printf(", all failed %lu: %s\n", t.all_fail, ok && tl_state.failed == failed ? "ok" : "FAILED");
            if (race && ok) {
                /* each outcome occurred: either free can win; and in refree the schedules where A's
                 * claim follows B's malloc (B, then A, among them) */
                bool refree = sc->ops[1].kind == OP_FREE_MALLOC;
                TL_CHECK(t.won[0] > 0u && t.won[1] > 0u && (t.refreed > 0u) == refree,
                         "%s/%s: A won %lu, B won %lu, A freed B's new block %lu", sc->name, x.v->name, t.won[0],
                         t.won[1], t.refreed);
            }
            if (strcmp(sc->name, "pristine") == 0 || strcmp(sc->name, "room") == 0) {
                TL_CHECK(t.all_fail == 0u, "%s/%s: both mallocs failed on a tree with room for both", sc->name,
                         x.v->name);
            }
            if (strcmp(sc->name, "fig9") == 0) {
                bool decides_by_reading = (x.v->flags & RT_WF_READONLY_DESCENT) != 0u;
                TL_CHECK(decides_by_reading || t.all_fail > 0u,
                         "fig9/%s: the both-fail interleaving of Fig. 9 was not reproduced", x.v->name);
                TL_CHECK(!decides_by_reading || t.all_fail == 0u, "fig9/%s: both failed though A decides by reading",
                         x.v->name);
            }
        }
    }
    /* rt_wfc (wfcache.h) over the same tree: the cache's own steps (slot reads, compare-and-swap,
     * inline record) and the tree's inside its refills, flushes and releases */
    for (size_t s = 0; s < sizeof wc_scenarios / sizeof wc_scenarios[0]; s++) {
        const wc_scenario_t *sc = &wc_scenarios[s];
        if (only != NULL && strcmp(only, sc->name) != 0) {
            continue;
        }
        if (!wc_prepare(sc)) {
            continue;
        }
        unsigned bound = (unsigned)bound_wc;
        if (sc->known != NULL) {
            printf("%s: known bug, expected to fail (FAIL lines below are expected): %s\n", sc->name, sc->known);
        }
        for (size_t k = 0; k < sizeof wc_variants / sizeof wc_variants[0]; k++) {
            static exec_t x;
            memset(&x, 0, sizeof x);
            x.wc = sc;
            x.name = sc->name;
            x.nops = sc->nops;
            static const char *const names[MAX_OPS] = {"A", "B", "C"};
            for (unsigned j = 0; j < sc->nops; j++) {
                x.opname[j] = names[j];
            }
            x.v = &wc_variants[k];
            tally_t t;
            memset(&t, 0, sizeof t);
            unsigned long failed = tl_state.failed;
            bool ok = explore(&x, NULL, 0, bound, &t);
            printf("%-14s %-10s %u ops, <= %u preemptions: %5lu schedules (%lu serial); failed mallocs:", sc->name,
                   x.v->name, sc->nops, bound, t.schedules, t.serial);
            for (unsigned j = 0; j < sc->nops; j++) {
                unsigned m = 0;
                for (unsigned q = 0; q < WC_CALLS; q++) {
                    m += sc->ops[j][q].kind == WC_MALLOC ? 1u : 0u;
                }
                if (m > 0u) {
                    printf(" %s %lu", names[j], t.fails[j]);
                }
            }
            printf("; %s %lu;", sc->special, t.special);
            bool race = sc->ops[0][0].kind == WC_FREE_WAS;
            if (race) {
                printf(" A's free won %lu, B's %lu, A freed B's new block %lu;", t.won[0], t.won[1], t.refreed);
            }
            for (unsigned e = 0; e < EV_N; e++) {
                if (t.ev[e] != 0u) {
                    printf(" %s %lu,", ev_name[e], t.ev[e]);
                }
            }
            bool passed = ok && tl_state.failed == failed;
            const char *verdict = passed ? "ok" : "FAILED";
            if (sc->known != NULL) {
                verdict = passed ? "PASSED (known bug gone?)" : "failed as known";
            }
            printf(" slots %u, inline %u: %s\n", wc_env.caches, wc_env.inline_count, verdict);
            if (sc->known != NULL) {
                tl_state.failed = failed; /* expected */
                TL_CHECK(!passed, "%s/%s: the known bug no longer shows (fixed? drop the scenario's mark): %s",
                         sc->name, x.v->name, sc->known);
                continue;
            }
            if (!ok) {
                continue;
            }
            /* the races each scenario is there for did occur (a step hook lost, a set-up that no
             * longer places its blocks, would leave them out silently) */
            const char *sn = sc->name, *vn = x.v->name;
            if (strcmp(sn, "wfc-refill") == 0) {
                TL_CHECK(t.ev[EV_CUT] > 0u && t.ev[EV_FALLBACK] > 0u && t.all_fail == 0u,
                         "%s/%s: refills: %lu cut, %lu fell back, %lu both failed", sn, vn, t.ev[EV_CUT],
                         t.ev[EV_FALLBACK], t.all_fail);
            } else if (strcmp(sn, "wfc-flush") == 0 || strcmp(sn, "wfc-remote") == 0) {
                unsigned m = strcmp(sn, "wfc-flush") == 0 ? 1u : 0u; /* the malloc racing the releases */
                TL_CHECK(t.special > 0u && t.fails[m] > 0u, "%s/%s: the released leaf taken in %lu, missed in %lu", sn,
                         vn, t.special, t.fails[m]);
            } else if (strcmp(sn, "wfc-fail-flush") == 0) {
                TL_CHECK(t.ev[EV_FAIL_FLUSH] == t.schedules && t.special > 0u,
                         "%s/%s: failure flushes %lu of %lu, A lost its pair in %lu", sn, vn, t.ev[EV_FAIL_FLUSH],
                         t.schedules, t.special);
            } else if (strcmp(sn, "wfc-arrive") == 0) {
                TL_CHECK(t.ev[EV_CAS_LOST] > 0u && t.ev[EV_INLINE_RACE] > 0u && t.ev[EV_TREE_RECORD] > 0u &&
                             t.special > 0u && t.special < t.schedules,
                         "%s/%s: CAS lost %lu, inline races %lu, tree records %lu, B first on the slot %lu", sn, vn,
                         t.ev[EV_CAS_LOST], t.ev[EV_INLINE_RACE], t.ev[EV_TREE_RECORD], t.special);
            } else if (race) {
                /* either free can win; in wfc-refree A's claim can also follow B's pop */
                bool refree = sc->ops[1][1].kind == WC_MALLOC;
                TL_CHECK(t.won[0] > 0u && t.won[1] > 0u && (t.refreed > 0u) == refree && t.special > 0u,
                         "%s/%s: A won %lu, B won %lu, A freed B's new block %lu, %s %lu", sn, vn, t.won[0], t.won[1],
                         t.refreed, sc->special, t.special);
            } else if (strcmp(sn, "wfc-arrive-full") == 0) {
                /* the loser's record claim fails before it reaches a slot (a record is taken first):
                 * the race is for the last inline record */
                TL_CHECK(t.ev[EV_INLINE_RACE] > 0u && t.special > 0u, "%s/%s: inline races %lu, B first %lu", sn, vn,
                         t.ev[EV_INLINE_RACE], t.special);
            }
        }
    }
    stop_workers();
    return tl_summary("wf_interleave");
}
