/*
 * wf_interleave.c -- deterministic interleavings of two or three operations on a small wait-free
 * tree (depth 3 or 4: 7 or 15 nodes), forced step by step.
 *
 * The core is rebuilt with RT_CONFIG_HEADER = wf_step_config.h, so RT_WF_STEP -- called before
 * every atomic step on shared tree state (a decrement, the undo of a failed one, an increment, a
 * racy read) -- parks the calling operation's thread until the scheduler here lets it take that
 * one step. Each operation runs on its own thread, but only one moves at a time: a schedule is
 * the sequence of operations chosen at each step, and the same schedule always gives the same
 * execution. The schedules are enumerated exhaustively up to a bound on preemptions (a switch
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
 *
 * Usage: wf_interleave [max preemptions]   (default 3 for two operations, 2 for three)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>

#include "testlib.h"

#include "rtalloc/waitfree.h"
#include "wf_step_config.h"

#define MAX_OPS 3
#define MAX_DEPTH 512u /* decisions per schedule */

/* --- the scheduler ---------------------------------------------------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; /* the scheduler waits here */
static pthread_cond_t cv_op[MAX_OPS] = {PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                        PTHREAD_COND_INITIALIZER}; /* op j waits here */

static struct {
    const void *wf;
    unsigned parks[MAX_OPS];
    bool parked[MAX_OPS], go[MAX_OPS], done[MAX_OPS];
    int step[MAX_OPS]; /* the step op j is parked before */
    size_t node[MAX_OPS];
} S;

static _Thread_local int my_op = -1;

static void park(int step, size_t node)
{
    pthread_mutex_lock(&mu);
    S.parked[my_op] = true;
    S.parks[my_op]++;
    S.step[my_op] = step;
    S.node[my_op] = node;
    pthread_cond_signal(&cv);
    while (!S.go[my_op]) {
        pthread_cond_wait(&cv_op[my_op], &mu);
    }
    S.go[my_op] = false;
    S.parked[my_op] = false;
    pthread_mutex_unlock(&mu);
}

void wf_test_step(const void *wf, int step, size_t node)
{
    if (my_op >= 0 && wf == S.wf) {
        park(step, node);
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

/* Lets op j take its pending step and run to its next step (or its end). */
static void advance(unsigned j)
{
    pthread_mutex_lock(&mu);
    unsigned p0 = S.parks[j];
    S.go[j] = true;
    pthread_cond_signal(&cv_op[j]);
    while (S.parks[j] == p0 && !S.done[j]) {
        pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
}

/* --- scenarios -------------------------------------------------------------------------------- */

typedef enum { OP_MALLOC, OP_FREE } op_kind_t;

typedef struct op_def {
    op_kind_t kind;
    size_t arg; /* malloc: bytes; free: index of a set-up block */
    const char *name;
} op_def_t;

typedef struct scenario {
    const char *name;
    unsigned height;     /* H: 2 (depth 3, 7 nodes) or 3 (depth 4, 15 nodes) */
    size_t setup[8];     /* mallocs, in order (0 ends) */
    int setup_free[8];   /* then frees of these set-up blocks (-1 ends) */
    op_def_t ops[MAX_OPS];
    unsigned nops;
} scenario_t;

/* 64-byte nodes: 1 leaf <= 52 bytes, 2 leaves <= 180, 4 <= 436, 8 <= 948 */
static const scenario_t scenarios[] = {
    {"fig9", 2, {10, 10, 10, 10}, {1, 3, -1}, {{OP_MALLOC, 100, "A"}, {OP_MALLOC, 10, "B"}}, 2},
    {"room", 3, {0}, {-1}, {{OP_MALLOC, 10, "A"}, {OP_MALLOC, 10, "B"}}, 2},
    {"free-malloc", 3, {436, 436}, {-1}, {{OP_FREE, 0, "A"}, {OP_MALLOC, 10, "B"}}, 2},
    {"free-free", 3, {100, 100, 436}, {-1}, {{OP_FREE, 0, "A"}, {OP_FREE, 1, "B"}, {OP_MALLOC, 436, "C"}}, 3},
    {"three", 3, {10, 10, 10}, {1, -1}, {{OP_MALLOC, 10, "A"}, {OP_MALLOC, 100, "B"}, {OP_MALLOC, 10, "C"}}, 3},
    {"pristine", 3, {948}, {0, -1}, {{OP_MALLOC, 10, "A"}, {OP_MALLOC, 10, "B"}}, 2},
};

typedef struct variant {
    const char *name;
    unsigned flags;
} variant_t;

static const variant_t variants[] = {
    {"paper", 0},
    {"read-only", RT_WF_READONLY_DESCENT},
    {"lazy", RT_WF_LAZY_REINIT},
    {"hints", RT_WF_HINTS},
    {"hints+lazy", RT_WF_HINTS | RT_WF_LAZY_REINIT},
};

/* --- one execution ------------------------------------------------------------------------------ */

static unsigned char control[1024] __attribute__((aligned(64)));
static unsigned char tree[16 * 64] __attribute__((aligned(64)));

typedef struct exec {
    const scenario_t *sc;
    const variant_t *v;
    rt_wf_t *w;
    void *setup_ptr[8];
    size_t nsetup;
    void *result[MAX_OPS];
    /* the schedule */
    unsigned n;
    unsigned char choice[MAX_DEPTH];
    unsigned char enabled[MAX_DEPTH];
    int step[MAX_DEPTH];
    size_t node[MAX_DEPTH];
    unsigned preemptions;
    bool overlapped; /* an operation moved while another had started and not finished */
    tl_recorder_t rec;
} exec_t;

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
        park(0, 0); /* the gate: nothing runs before the scheduler says so */
        const op_def_t *o = &x->sc->ops[j];
        if (o->kind == OP_MALLOC) {
            x->result[j] = rt_wf_malloc(x->w, o->arg);
        } else {
            rt_wf_free(x->w, x->setup_ptr[o->arg]);
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
    rt_wf_set_handler(x->w, tl_record, &x->rec);
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

/* Runs the scenario with `prefix` as the first choices, then the default: the last operation
 * goes on while it can, else the lowest unfinished one. */
static bool execute(exec_t *x, const unsigned char *prefix, unsigned plen)
{
    memset(x->result, 0, sizeof x->result);
    tl_recorder_reset(&x->rec);
    if (!setup(x)) {
        return false;
    }
    unsigned nops = x->sc->nops;
    pthread_mutex_lock(&mu);
    memset(&S, 0, sizeof S);
    S.wf = x->w;
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
            TL_CHECK(false, "%s: schedule longer than %u steps", x->sc->name, MAX_DEPTH);
            exit(1);
        }
        x->choice[x->n] = (unsigned char)pick;
        x->enabled[x->n] = (unsigned char)mask;
        x->step[x->n] = S.step[pick];
        x->node[x->n] = S.node[pick];
        x->n++;
        started[pick] = true;
        advance(pick);
        last = (int)pick;
    }
    pthread_mutex_lock(&mu);
    S.wf = NULL;
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
            freed = freed || (x->sc->ops[j].kind == OP_FREE && x->sc->ops[j].arg == i);
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
                       x->sc->name, x->v->name, (unsigned long)r[a].lo, (unsigned long)r[a].hi,
                       (unsigned long)r[b].lo, (unsigned long)r[b].hi);
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
    }
    return "?";
}

static void print_schedule(const exec_t *x)
{
    for (unsigned d = 0; d < x->n; d++) {
        if (x->step[d] == 0) {
            printf("      %s starts\n", x->sc->ops[x->choice[d]].name);
        } else {
            printf("      %s %-24s node %zu\n", x->sc->ops[x->choice[d]].name, step_name(x->step[d]), x->node[d]);
        }
    }
}

typedef struct tally {
    unsigned long schedules, serial;
    unsigned long fails[MAX_OPS];
    unsigned long all_fail; /* schedules in which every malloc failed */
    bool printed;
} tally_t;

static bool check_run(exec_t *x, tally_t *t)
{
    const scenario_t *sc = x->sc;
    const char *n = sc->name, *v = x->v->name;
    t->schedules++;
    t->serial += x->overlapped ? 0u : 1u;
    unsigned mallocs = 0, failed = 0;
    for (unsigned j = 0; j < sc->nops; j++) {
        if (sc->ops[j].kind == OP_MALLOC) {
            mallocs++;
            if (x->result[j] == NULL) {
                failed++;
                t->fails[j]++;
            }
        }
    }
    TL_REQUIRE(x->rec.count == 0u, "%s/%s: error report %s", n, v, tl_kind_name(x->rec.last));
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
    if (!execute(x, prefix, plen) || !check_run(x, t)) {
        printf("    schedule prefix:");
        for (unsigned d = 0; d < plen; d++) {
            printf(" %s", x->sc->ops[prefix[d]].name);
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
        for (unsigned o = 0; o < x->sc->nops; o++) {
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
    uint64_t bound2 = 3, bound3 = 2;
    if (argc > 1) {
        if (!tl_parse_u64(argv[1], &bound2) || bound2 > 8u) {
            fprintf(stderr, "usage: wf_interleave [max preemptions]\n");
            return 2;
        }
        bound3 = bound2;
    }
    if (!start_workers()) {
        return tl_summary("wf_interleave");
    }
    for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
        const scenario_t *sc = &scenarios[s];
        unsigned bound = (unsigned)(sc->nops == 2u ? bound2 : bound3);
        for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
            static exec_t x;
            memset(&x, 0, sizeof x);
            x.sc = sc;
            x.v = &variants[k];
            tally_t t;
            memset(&t, 0, sizeof t);
            unsigned long failed = tl_state.failed;
            bool ok = explore(&x, NULL, 0, bound, &t);
            printf("%-11s %-10s %2u ops, <= %u preemptions: %6lu schedules (%lu serial); failed mallocs:", sc->name,
                   x.v->name, sc->nops, bound, t.schedules, t.serial);
            for (unsigned j = 0; j < sc->nops; j++) {
                if (sc->ops[j].kind == OP_MALLOC) {
                    printf(" %s %lu", sc->ops[j].name, t.fails[j]);
                }
            }
            printf(", all failed %lu: %s\n", t.all_fail, ok && tl_state.failed == failed ? "ok" : "FAILED");
            if (strcmp(sc->name, "pristine") == 0 || strcmp(sc->name, "room") == 0) {
                TL_CHECK(t.all_fail == 0u, "%s/%s: both mallocs failed on a tree with room for both", sc->name,
                         x.v->name);
            }
            if (strcmp(sc->name, "fig9") == 0) {
                bool decides_by_reading = (x.v->flags & RT_WF_READONLY_DESCENT) != 0u;
                TL_CHECK(decides_by_reading || t.all_fail > 0u,
                         "fig9/%s: the both-fail interleaving of Fig. 9 was not reproduced", x.v->name);
                TL_CHECK(!decides_by_reading || t.all_fail == 0u,
                         "fig9/%s: both failed though A decides by reading", x.v->name);
            }
        }
    }
    stop_workers();
    return tl_summary("wf_interleave");
}
