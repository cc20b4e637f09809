/* SPDX-License-Identifier: MIT */
/*
 * workloads/workload.c -- the generators of workload.h.
 */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const wl_uniform_spec_t wl_churn = {
    .name = "churn",
    .description = "uniform churn: 1000 live slots, sizes 16..4096",
    .slots = 1000,
    .min_size = 16,
    .max_size = 4096,
    .default_ops = 2000000,
};

const wl_uniform_spec_t wl_small = {
    .name = "small",
    .description = "small-block churn: 10000 live slots, sizes 8..256",
    .slots = 10000,
    .min_size = 8,
    .max_size = 256,
    .default_ops = 2000000,
};

static bool trace_alloc(wl_trace_t *t, size_t nops, uint32_t slots)
{
    memset(t, 0, sizeof *t);
    t->ops = malloc((nops != 0 ? nops : 1u) * sizeof *t->ops);
    t->nops = nops;
    t->slots = slots;
    t->measured = SIZE_MAX;
    return t->ops != NULL;
}

bool wl_uniform(wl_trace_t *t, const wl_uniform_spec_t *spec, size_t nops, uint64_t seed)
{
    if (!trace_alloc(t, nops, spec->slots)) {
        return false;
    }
    unsigned char *live = calloc(spec->slots, 1);
    if (live == NULL) {
        wl_release(t);
        return false;
    }
    snprintf(t->name, sizeof t->name, "%s", spec->name);
    snprintf(t->params, sizeof t->params, "%u slots, sizes %u..%u, %zu ops, xorshift64* seed %llu", spec->slots,
             spec->min_size, spec->max_size, nops, (unsigned long long)seed);
    t->seed = seed;
    uint64_t x = seed != 0 ? seed : 1u;
    uint64_t span = (uint64_t)spec->max_size - spec->min_size + 1u;
    for (size_t i = 0; i < nops; i++) {
        uint32_t s = (uint32_t)(wl_rand(&x) % spec->slots);
        wl_op_t *op = &t->ops[i];
        op->slot = s;
        if (live[s]) {
            op->kind = WL_FREE;
            op->size = 0;
            live[s] = 0;
            t->nfree++;
        } else {
            op->kind = WL_MALLOC;
            op->size = spec->min_size + (uint32_t)(wl_rand(&x) % span);
            live[s] = 1;
            t->nmalloc++;
        }
    }
    free(live);
    return true;
}

bool wl_memfrag(wl_trace_t *t, uint32_t n)
{
    size_t nops = 3u * (size_t)n + 1u;
    if (n == 0 || !trace_alloc(t, nops, 2u * n + 1u)) {
        return false;
    }
    snprintf(t->name, sizeof t->name, "memfrag");
    snprintf(t->params, sizeof t->params, "N=%u: N x {malloc(72); malloc(8)}, free the 72s, malloc(120)", n);
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        t->ops[k++] = (wl_op_t){.slot = 2u * i, .size = 72, .kind = WL_MALLOC};
        t->ops[k++] = (wl_op_t){.slot = 2u * i + 1u, .size = 8, .kind = WL_MALLOC};
    }
    for (uint32_t i = 0; i < n; i++) {
        t->ops[k++] = (wl_op_t){.slot = 2u * i, .size = 0, .kind = WL_FREE};
    }
    t->measured = k;
    t->ops[k++] = (wl_op_t){.slot = 2u * n, .size = 120, .kind = WL_MALLOC};
    t->nmalloc = 2u * (size_t)n + 1u;
    t->nfree = n;
    return true;
}

/* --- Masmano's periodic task model -------------------------------------------------------------- */

/* Uniform in [lo, hi]. */
static uint32_t mm_uniform(uint64_t *x, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(wl_rand(x) % ((uint64_t)hi - lo + 1u));
}

double wl_normal(uint64_t *state)
{
    uint64_t sum = 0;
    for (int i = 0; i < 12; i++) {
        sum += wl_rand(state) >> 40; /* 24 bits each: the sum is exact in a double */
    }
    return (double)sum / 16777216.0 - 6.0;
}

bool wl_mm_grange(unsigned test, uint32_t *lo, uint32_t *hi)
{
    switch (test) {
    case 1: *lo = 2048, *hi = 20480; return true;
    case 2: *lo = 8, *hi = 1024; return true;
    case 3:
    case 4: *lo = 8, *hi = 20480; return true;
    default: return false;
    }
}

bool wl_mm_taskset(wl_mm_taskset_t *ts, unsigned test, uint64_t seed)
{
    uint32_t glo = 0, ghi = 0;
    memset(ts, 0, sizeof *ts);
    if (!wl_mm_grange(test, &glo, &ghi)) {
        return false;
    }
    ts->test = test;
    ts->seed = seed;
    uint64_t x = seed != 0 ? seed : 1u;
    ts->ntasks = mm_uniform(&x, WL_MM_MIN_TASKS, WL_MM_MAX_TASKS);
    ts->pmin = UINT32_MAX;
    for (uint32_t i = 0; i < ts->ntasks; i++) {
        wl_mm_task_t *k = &ts->task[i];
        k->period = mm_uniform(&x, WL_MM_PERIOD_MIN, WL_MM_PERIOD_MAX);
        k->gmax = mm_uniform(&x, glo, ghi);
        k->nreq = mm_uniform(&x, WL_MM_REQ_MIN, WL_MM_REQ_MAX);
        k->hmax = mm_uniform(&x, WL_MM_HOLD_MIN, WL_MM_HOLD_MAX);
        ts->pmin = k->period < ts->pmin ? k->period : ts->pmin;
        ts->pmax = k->period > ts->pmax ? k->period : ts->pmax;
    }
    return true;
}

/* The simulation's state: a timing wheel of FIFO lists of slots (holding times < MM_WHEEL), the
 * FIFO of marked blocks, a stack of empty slots. */
enum { MM_WHEEL = 64 };
#define MM_NIL UINT32_MAX

typedef struct mm_sim {
    wl_trace_t *t;
    uint32_t *next;     /* per slot: the next slot in its wheel bucket or the marked list */
    uint32_t *size;     /* per slot: the bytes requested */
    uint32_t *freeslot; /* stack of empty slots */
    uint32_t nfreeslot;
    uint32_t cap; /* slots allocated */
    uint32_t head[MM_WHEEL], tail[MM_WHEEL];
    uint32_t mhead, mtail; /* marked blocks */
    uint64_t held, inuse;
} mm_sim_t;

static bool mm_grow(mm_sim_t *m)
{
    uint32_t cap = m->cap != 0 ? 2u * m->cap : 1024u;
    uint32_t *n = realloc(m->next, cap * sizeof *n);
    if (n == NULL) {
        return false;
    }
    m->next = n;
    uint32_t *s = realloc(m->size, cap * sizeof *s);
    if (s == NULL) {
        return false;
    }
    m->size = s;
    uint32_t *f = realloc(m->freeslot, cap * sizeof *f);
    if (f == NULL) {
        return false;
    }
    m->freeslot = f;
    for (uint32_t i = cap; i > m->cap; i--) {
        m->freeslot[m->nfreeslot++] = i - 1u;
    }
    m->cap = cap;
    return true;
}

static void mm_emit_free(mm_sim_t *m, uint32_t slot, uint32_t now)
{
    wl_trace_t *t = m->t;
    size_t k = t->nops++;
    t->ops[k] = (wl_op_t){.slot = slot, .size = 0, .kind = WL_FREE};
    m->held -= m->size[slot];
    t->live[k] = m->held;
    t->time[k] = now;
    t->expire[k] = 0;
    t->nfree++;
    m->freeslot[m->nfreeslot++] = slot;
}

static bool mm_emit_malloc(mm_sim_t *m, uint32_t size, uint32_t now, uint32_t hold)
{
    if (m->nfreeslot == 0 && !mm_grow(m)) {
        return false;
    }
    wl_trace_t *t = m->t;
    uint32_t slot = m->freeslot[--m->nfreeslot];
    if (slot + 1u > t->slots) {
        t->slots = slot + 1u;
    }
    size_t k = t->nops++;
    t->ops[k] = (wl_op_t){.slot = slot, .size = size, .kind = WL_MALLOC};
    m->size[slot] = size;
    m->held += size;
    m->inuse += size;
    t->live[k] = m->held;
    t->time[k] = now;
    t->expire[k] = now + hold;
    t->nmalloc++;
    t->peak_live = m->held > t->peak_live ? m->held : t->peak_live;
    t->peak_inuse = m->inuse > t->peak_inuse ? m->inuse : t->peak_inuse;
    uint32_t b = (now + hold) % MM_WHEEL;
    m->next[slot] = MM_NIL;
    if (m->head[b] == MM_NIL) {
        m->head[b] = slot;
    } else {
        m->next[m->tail[b]] = slot;
    }
    m->tail[b] = slot;
    return true;
}

bool wl_masmano(wl_trace_t *t, const wl_mm_taskset_t *ts, size_t nmalloc, uint32_t dealloc_period, uint64_t seed)
{
    if (nmalloc == 0 || ts->ntasks == 0 || !trace_alloc(t, 2u * nmalloc, 0)) {
        return false;
    }
    t->nops = 0;
    t->live = malloc(2u * nmalloc * sizeof *t->live);
    t->time = malloc(2u * nmalloc * sizeof *t->time);
    t->expire = malloc(2u * nmalloc * sizeof *t->expire);
    mm_sim_t m;
    memset(&m, 0, sizeof m);
    m.t = t;
    bool ok = t->live != NULL && t->time != NULL && t->expire != NULL && mm_grow(&m);
    for (uint32_t b = 0; b < MM_WHEEL; b++) {
        m.head[b] = m.tail[b] = MM_NIL;
    }
    m.mhead = m.mtail = MM_NIL;
    snprintf(t->name, sizeof t->name, "masmano-t%u", ts->test);
    snprintf(t->params, sizeof t->params, "test %u, %u tasks, %s, %zu mallocs, task seed %llu, seed %llu", ts->test,
             ts->ntasks, dealloc_period == 0 ? "immediate" : "delayed", nmalloc, (unsigned long long)ts->seed,
             (unsigned long long)seed);
    t->seed = seed;
    t->dealloc_period = dealloc_period;
    uint64_t x = seed != 0 ? seed : 1u;
    for (uint32_t now = 0; ok && t->nmalloc < nmalloc; now++) {
        /* (1) holding times that end now */
        uint32_t b = now % MM_WHEEL;
        for (uint32_t s = m.head[b]; s != MM_NIL;) {
            uint32_t nx = m.next[s];
            m.inuse -= m.size[s];
            if (dealloc_period == 0) {
                mm_emit_free(&m, s, now);
            } else {
                m.next[s] = MM_NIL;
                if (m.mhead == MM_NIL) {
                    m.mhead = s;
                } else {
                    m.next[m.mtail] = s;
                }
                m.mtail = s;
            }
            s = nx;
        }
        m.head[b] = m.tail[b] = MM_NIL;
        /* (2) the deallocation task */
        if (dealloc_period != 0 && now != 0 && now % dealloc_period == 0) {
            for (uint32_t s = m.mhead; s != MM_NIL;) {
                uint32_t nx = m.next[s];
                mm_emit_free(&m, s, now);
                s = nx;
            }
            m.mhead = m.mtail = MM_NIL;
        }
        /* (3) releases */
        for (uint32_t i = 0; ok && i < ts->ntasks && t->nmalloc < nmalloc; i++) {
            const wl_mm_task_t *k = &ts->task[i];
            if (now % k->period != 0) {
                continue;
            }
            double mean = (double)k->gmax / (double)k->nreq;
            for (uint32_t r = 0; ok && r < k->nreq && t->nmalloc < nmalloc; r++) {
                double v = mean + wl_normal(&x) * mean * (WL_MM_SD_PERCENT / 100.0) + 0.5;
                uint32_t size = v < 1.0 ? 1u : v > (double)k->gmax ? k->gmax : (uint32_t)v;
                uint32_t hold = mm_uniform(&x, WL_MM_HOLD_MIN, k->hmax);
                ok = mm_emit_malloc(&m, size, now, hold);
            }
        }
    }
    free(m.next);
    free(m.size);
    free(m.freeslot);
    if (!ok) {
        wl_release(t);
    }
    return ok;
}

/* Appends op (measured or not) to the stride-2 layout of wl_worst. */
typedef struct wl_lay {
    wl_trace_t *t;
    size_t cap;
    uint32_t pad; /* the never-allocated slot */
    bool ok;
} wl_lay_t;

static void lay_put(wl_lay_t *l, wl_op_t op)
{
    if (!l->ok) {
        return;
    }
    if (l->t->nops + 2u > l->cap) {
        size_t cap = l->cap * 2u + 64u;
        wl_op_t *ops = realloc(l->t->ops, cap * sizeof *ops);
        if (ops == NULL) {
            l->ok = false;
            return;
        }
        l->t->ops = ops;
        l->cap = cap;
    }
    l->t->ops[l->t->nops++] = op;
    if (op.kind == WL_MALLOC) {
        l->t->nmalloc++;
    } else {
        l->t->nfree++;
    }
}

static void lay_op(wl_lay_t *l, bool measured, uint32_t kind, uint32_t slot, uint32_t size)
{
    bool odd = (l->t->nops & 1u) != 0;
    if (measured != odd) {
        lay_put(l, (wl_op_t){.slot = l->pad, .size = 0, .kind = WL_FREE});
        l->t->nfree--; /* a pad, not a free */
    }
    if (measured && l->t->measured == SIZE_MAX) {
        l->t->measured = l->t->nops;
    }
    lay_put(l, (wl_op_t){.slot = slot, .size = size, .kind = kind});
}

bool wl_worst(wl_trace_t *t, wl_worst_t which, uint32_t n)
{
    uint32_t slots = (which == WL_WORST_QUICKFLUSH ? 4u : 2u) * n + 8u;
    if (!trace_alloc(t, 0, slots + 1u)) {
        return false;
    }
    wl_lay_t l = {t, 0, slots, true};
    switch (which) {
    case WL_WORST_MEMFRAG:
        snprintf(t->name, sizeof t->name, "memfrag");
        snprintf(t->params, sizeof t->params, "N=%u: N x {malloc(72); malloc(8)}, free the 72s, malloc(120)", n);
        for (uint32_t i = 0; i < n; i++) {
            lay_op(&l, false, WL_MALLOC, 2u * i, 72);
            lay_op(&l, false, WL_MALLOC, 2u * i + 1u, 8);
        }
        for (uint32_t i = 0; i < n; i++) {
            lay_op(&l, false, WL_FREE, 2u * i, 0);
        }
        lay_op(&l, true, WL_MALLOC, 2u * n, 120);
        break;
    case WL_WORST_CASCADE:
        snprintf(t->name, sizeof t->name, "cascade");
        snprintf(t->params, sizeof t->params, "fresh heap: malloc(1), free");
        lay_op(&l, true, WL_MALLOC, 0, 1);
        lay_op(&l, true, WL_FREE, 0, 0);
        break;
    case WL_WORST_CONSOLIDATE:
        snprintf(t->name, sizeof t->name, "consolidate");
        snprintf(t->params, sizeof t->params, "N=%u: N x malloc(24), free all, malloc(65536), free", n);
        for (uint32_t i = 0; i < n; i++) {
            lay_op(&l, false, WL_MALLOC, i, 24);
        }
        for (uint32_t i = 0; i < n; i++) {
            lay_op(&l, false, WL_FREE, i, 0);
        }
        lay_op(&l, true, WL_MALLOC, n, 65536);
        lay_op(&l, true, WL_FREE, n, 0);
        break;
    case WL_WORST_SPLITMERGE:
        snprintf(t->name, sizeof t->name, "splitmerge");
        snprintf(t->params, sizeof t->params, "free 100000-byte block; malloc(24); A,B,C = 40,200,3000; free A, C, B");
        lay_op(&l, false, WL_MALLOC, 0, 100000);
        lay_op(&l, false, WL_MALLOC, 1, 16);
        lay_op(&l, false, WL_FREE, 0, 0);
        lay_op(&l, true, WL_MALLOC, 2, 24);
        lay_op(&l, false, WL_MALLOC, 3, 40);
        lay_op(&l, false, WL_MALLOC, 4, 200);
        lay_op(&l, false, WL_MALLOC, 5, 3000);
        lay_op(&l, false, WL_MALLOC, 6, 16);
        lay_op(&l, false, WL_FREE, 3, 0);
        lay_op(&l, false, WL_FREE, 5, 0);
        lay_op(&l, true, WL_FREE, 4, 0);
        break;
    case WL_WORST_QUICKFLUSH:
        snprintf(t->name, sizeof t->name, "quickflush");
        snprintf(t->params, sizeof t->params,
                 "N=%u: malloc(32 MiB); N x {A,B,C = 40,200,40; spacer}; free Bs, As, Cs; malloc(40 MiB)", n);
        lay_op(&l, false, WL_MALLOC, 4u * n, 32u << 20);
        for (uint32_t i = 0; i < n; i++) {
            for (uint32_t k = 0; k < 4u; k++) {
                lay_op(&l, false, WL_MALLOC, 4u * i + k, k == 1u ? 200u : k == 3u ? 16u : 40u);
            }
        }
        for (uint32_t i = 0; i < n; i++) {
            lay_op(&l, false, WL_FREE, 4u * i + 1u, 0);
        }
        for (uint32_t i = 0; i < n; i++) {
            lay_op(&l, false, WL_FREE, 4u * i, 0);
            lay_op(&l, false, WL_FREE, 4u * i + 2u, 0);
        }
        lay_op(&l, true, WL_MALLOC, 4u * n + 1u, 40u << 20);
        break;
    default: l.ok = false; break;
    }
    if (!l.ok) {
        wl_release(t);
    }
    return l.ok;
}

/* --- wl_paths: per-path scenarios of the boundary-tag heap (workload.h) ------------------------- */

typedef struct pb {
    wl_lay_t l;
    uint32_t next;     /* next unused slot of the rep */
    uint32_t live[16]; /* the rep's slots in allocation order; UINT32_MAX once freed */
    uint32_t nlive;
    size_t at[WL_PATHS_REPS * 2u];
    uint32_t val[WL_PATHS_REPS * 2u];
    uint32_t nmeasured;
} pb_t;

enum { PB_SLOTS = 16, PB_SPACER = 32 };

static uint32_t pb_malloc(pb_t *b, bool measured, uint32_t block)
{
    uint32_t slot = b->next++;
    if (slot >= PB_SLOTS) {
        b->l.ok = false;
        return 0;
    }
    b->live[b->nlive++] = slot;
    lay_op(&b->l, measured, WL_MALLOC, slot, block - 8u); /* the request whose block is `block` */
    return slot;
}

static uint32_t pb_m(pb_t *b, uint32_t block) { return pb_malloc(b, false, block); }

static void pb_free(pb_t *b, bool measured, uint32_t slot)
{
    for (uint32_t i = 0; i < b->nlive; i++) {
        if (b->live[i] == slot) {
            b->live[i] = UINT32_MAX;
        }
    }
    lay_op(&b->l, measured, WL_FREE, slot, 0);
}

static void pb_f(pb_t *b, uint32_t slot) { pb_free(b, false, slot); }

/* The measured op just laid out: expects `path` with `nfree` free blocks in the heap before it. */
static void pb_expect(pb_t *b, wl_path_t path, uint32_t nfree)
{
    if (b->nmeasured < WL_PATHS_REPS * 2u) {
        b->at[b->nmeasured] = b->l.t->nops - 1u;
        b->val[b->nmeasured++] = (uint32_t)path | nfree << 8;
    }
}

/* The rep's end: every block it still holds freed in allocation order, so all merge into W. */
static void pb_teardown(pb_t *b)
{
    for (uint32_t i = 0; i < b->nlive; i++) {
        if (b->live[i] != UINT32_MAX) {
            lay_op(&b->l, false, WL_FREE, b->live[i], 0);
        }
    }
    b->nlive = 0;
    b->next = 0;
}

typedef struct wl_path_scenario {
    const char *name;
    wl_path_t path;
    const char *setup; /* in words, for the trace's params */
} wl_path_scenario_t;

/* "kept": the lists the call removes from keep other blocks and the one it inserts into has some;
 * "lone": each list it removes from empties (bitmap bits cleared), the insert goes to an empty list. */
static const wl_path_scenario_t path_scenarios[] = {
    {"malloc exact, kept", WL_PATH_M_EXACT, "X1=B,s,X2=B,s; free X1,X2; malloc B"},
    {"malloc exact, lone", WL_PATH_M_EXACT, "X=B,s; free X; malloc B"},
    {"malloc exact climb, kept", WL_PATH_M_EXACT2, "X1=P,s,X2=P,s; free X1,X2; malloc P-16 (P=256,512)"},
    {"malloc exact climb, lone", WL_PATH_M_EXACT2, "X=P,s; free X; malloc P-16 (P=256,512)"},
    {"malloc split, kept", WL_PATH_M_SPLIT, "X1=3B,s,X2=3B,s,R=B,s; free X1,X2,R; malloc 2B"},
    {"malloc split, lone", WL_PATH_M_SPLIT, "X=3B,s; free X; malloc 2B"},
    {"malloc split climb, kept", WL_PATH_M_SPLIT2, "X1=65B,s,X2=65B,s; free X1,X2; malloc B"},
    {"malloc split climb, lone", WL_PATH_M_SPLIT2, "X=4B,s; free X; malloc B"},
    {"malloc split climb, new peak", WL_PATH_M_SPLIT2,
     "malloc B from W, the reps' blocks kept: new peak and watermark"},
    {"free no merge, kept", WL_PATH_F_NONE, "K=B,s,Y=B,s; free K; free Y"},
    {"free no merge, lone", WL_PATH_F_NONE, "s,Y=B,s; free Y"},
    {"free merge prev, kept", WL_PATH_F_PREV, "K=B,s,K2=2B,s,P=B,Y=B,s; free K,K2,P; free Y"},
    {"free merge prev, lone", WL_PATH_F_PREV, "s,P=B,Y=B,s; free P; free Y"},
    {"free merge next, kept", WL_PATH_F_NEXT, "K=B,s,K2=2B,s,Y=B,N=B,s; free K,K2,N; free Y"},
    {"free merge next, lone", WL_PATH_F_NEXT, "s,Y=B,N=B,s; free N; free Y"},
    {"free merge both, kept", WL_PATH_F_BOTH, "K=B,s,K3=3B,s,P=B,Y=B,N=B,s; free K,K3,P,N; free Y"},
    {"free merge both, lone", WL_PATH_F_BOTH, "s,P=B,Y=B,N=2B,s; free P,N; free Y"},
};
enum { WL_PATH_SCENARIOS = sizeof path_scenarios / sizeof path_scenarios[0] };

const char *wl_path_name(wl_path_t path)
{
    static const char *const names[WL_PATH_COUNT] = {"-",
                                                     "malloc exact fit",
                                                     "malloc exact fit, climb",
                                                     "malloc split",
                                                     "malloc split, climb",
                                                     "free no merge",
                                                     "free merge prev",
                                                     "free merge next",
                                                     "free merge both"};
    return (unsigned)path < WL_PATH_COUNT ? names[path] : "?";
}

size_t wl_paths_count(void) { return WL_PATH_SCENARIOS; }

/* One rep of scenario i with block size B (header included). */
static void pb_rep(pb_t *b, size_t i, uint32_t B)
{
    const uint32_t s = PB_SPACER;
    uint32_t P = B <= 256u ? 256u : 512u; /* a row's start: P - 16 lies in the row below */
    uint32_t x, x2, r, k, k2, y, n, p;
    switch (i) {
    case 0:
        x = pb_m(b, B), pb_m(b, s), x2 = pb_m(b, B), pb_m(b, s);
        pb_f(b, x), pb_f(b, x2);
        pb_malloc(b, true, B), pb_expect(b, WL_PATH_M_EXACT, 3);
        break;
    case 1:
        x = pb_m(b, B), pb_m(b, s);
        pb_f(b, x);
        pb_malloc(b, true, B), pb_expect(b, WL_PATH_M_EXACT, 2);
        break;
    case 2:
        x = pb_m(b, P), pb_m(b, s), x2 = pb_m(b, P), pb_m(b, s);
        pb_f(b, x), pb_f(b, x2);
        pb_malloc(b, true, P - 16u), pb_expect(b, WL_PATH_M_EXACT2, 3);
        break;
    case 3:
        x = pb_m(b, P), pb_m(b, s);
        pb_f(b, x);
        pb_malloc(b, true, P - 16u), pb_expect(b, WL_PATH_M_EXACT2, 2);
        break;
    case 4:
        x = pb_m(b, 3u * B), pb_m(b, s), x2 = pb_m(b, 3u * B), pb_m(b, s), r = pb_m(b, B), pb_m(b, s);
        pb_f(b, x), pb_f(b, x2), pb_f(b, r);
        pb_malloc(b, true, 2u * B), pb_expect(b, WL_PATH_M_SPLIT, 4);
        break;
    case 5:
        x = pb_m(b, 3u * B), pb_m(b, s);
        pb_f(b, x);
        pb_malloc(b, true, 2u * B), pb_expect(b, WL_PATH_M_SPLIT, 2);
        break;
    case 6: /* the remainder 64B stays in the found block's slot (wider than B): the same list */
        x = pb_m(b, 65u * B), pb_m(b, s), x2 = pb_m(b, 65u * B), pb_m(b, s);
        pb_f(b, x), pb_f(b, x2);
        pb_malloc(b, true, B), pb_expect(b, WL_PATH_M_SPLIT2, 3);
        break;
    case 7:
        x = pb_m(b, 4u * B), pb_m(b, s);
        pb_f(b, x);
        pb_malloc(b, true, B), pb_expect(b, WL_PATH_M_SPLIT2, 2);
        break;
    case 8: /* W itself, lone in its row, cut at a new high: the watermark and peak move too */
        pb_malloc(b, true, B), pb_expect(b, WL_PATH_M_SPLIT2, 1);
        return; /* no teardown: the next rep cuts above this one */
    case 9:
        k = pb_m(b, B), pb_m(b, s), y = pb_m(b, B), pb_m(b, s);
        pb_f(b, k);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_NONE, 2);
        break;
    case 10:
        pb_m(b, s), y = pb_m(b, B), pb_m(b, s);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_NONE, 1);
        break;
    case 11:
        k = pb_m(b, B), pb_m(b, s), k2 = pb_m(b, 2u * B), pb_m(b, s), p = pb_m(b, B), y = pb_m(b, B), pb_m(b, s);
        pb_f(b, k), pb_f(b, k2), pb_f(b, p);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_PREV, 4);
        break;
    case 12:
        pb_m(b, s), p = pb_m(b, B), y = pb_m(b, B), pb_m(b, s);
        pb_f(b, p);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_PREV, 2);
        break;
    case 13:
        k = pb_m(b, B), pb_m(b, s), k2 = pb_m(b, 2u * B), pb_m(b, s), y = pb_m(b, B), n = pb_m(b, B), pb_m(b, s);
        pb_f(b, k), pb_f(b, k2), pb_f(b, n);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_NEXT, 4);
        break;
    case 14:
        pb_m(b, s), y = pb_m(b, B), n = pb_m(b, B), pb_m(b, s);
        pb_f(b, n);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_NEXT, 2);
        break;
    case 15:
        k = pb_m(b, B), pb_m(b, s), k2 = pb_m(b, 3u * B), pb_m(b, s);
        p = pb_m(b, B), y = pb_m(b, B), n = pb_m(b, B), pb_m(b, s);
        pb_f(b, k), pb_f(b, k2), pb_f(b, p), pb_f(b, n);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_BOTH, 5);
        break;
    case 16:
        pb_m(b, s), p = pb_m(b, B), y = pb_m(b, B), n = pb_m(b, 2u * B), pb_m(b, s);
        pb_f(b, p), pb_f(b, n);
        pb_free(b, true, y), pb_expect(b, WL_PATH_F_BOTH, 3);
        break;
    default: b->l.ok = false; break;
    }
    pb_teardown(b);
}

bool wl_paths(wl_trace_t *t, size_t i)
{
    static const uint32_t sizes[WL_PATHS_REPS] = {64, 256, 1024, 4096};
    if (i >= WL_PATH_SCENARIOS || !trace_alloc(t, 0, PB_SLOTS + 1u)) {
        return false;
    }
    static pb_t b;
    memset(&b, 0, sizeof b);
    b.l = (wl_lay_t){t, 0, PB_SLOTS, true};
    snprintf(t->name, sizeof t->name, "paths %u", (unsigned)i);
    snprintf(t->params, sizeof t->params, "%s: %s; B = 64, 256, 1024, 4096", path_scenarios[i].name,
             path_scenarios[i].setup);
    for (size_t r = 0; r < WL_PATHS_REPS; r++) {
        pb_rep(&b, i, sizes[r]);
    }
    if (b.l.ok) {
        t->expect = calloc(t->nops != 0 ? t->nops : 1u, sizeof *t->expect);
        b.l.ok = t->expect != NULL;
    }
    for (uint32_t k = 0; b.l.ok && k < b.nmeasured; k++) {
        t->expect[b.at[k]] = b.val[k];
    }
    if (!b.l.ok) {
        wl_release(t);
    }
    return b.l.ok;
}

/* The scenario's name (without the setup). */
const char *wl_paths_name(size_t i) { return i < WL_PATH_SCENARIOS ? path_scenarios[i].name : "?"; }

void wl_release(wl_trace_t *t)
{
    free(t->expect);
    t->expect = NULL;
    free(t->ops);
    free(t->live);
    free(t->time);
    free(t->expire);
    t->ops = NULL;
    t->live = NULL;
    t->time = NULL;
    t->expire = NULL;
    t->nops = 0;
}

/* The mem_stress trace: seed 0 is replaced by 1 (xorshift needs a nonzero state). */
bool wl_memstress(wl_trace_t *t, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->ops = calloc(WL_MEMSTRESS_OPS, sizeof *t->ops);
    if (t->ops == NULL) {
        return false;
    }
    snprintf(t->name, sizeof t->name, "memstress");
    snprintf(t->params, sizeof t->params, "%u ops, live set <= %u, sizes 70%% 8..64, 25%% 65..256, 5%% 257..1024",
             (unsigned)WL_MEMSTRESS_OPS, (unsigned)WL_MEMSTRESS_SLOTS);
    t->seed = seed != 0u ? seed : 1u;
    t->slots = WL_MEMSTRESS_SLOTS;
    t->measured = SIZE_MAX;
    uint64_t x = t->seed;
    bool used[WL_MEMSTRESS_SLOTS] = {false};
    uint32_t live = 0;
    for (size_t i = 0; i < WL_MEMSTRESS_OPS; i++) {
        wl_op_t *op = &t->ops[i];
        bool alloc = live == 0u || (live < WL_MEMSTRESS_SLOTS && wl_rand(&x) % 100u < 52u);
        if (alloc) {
            uint32_t s = (uint32_t)(wl_rand(&x) % WL_MEMSTRESS_SLOTS);
            while (used[s]) {
                s = (s + 1u) % WL_MEMSTRESS_SLOTS;
            }
            uint64_t c = wl_rand(&x) % 100u;
            uint32_t size = c < 70u   ? 8u + (uint32_t)(wl_rand(&x) % 57u)
                            : c < 95u ? 65u + (uint32_t)(wl_rand(&x) % 192u)
                                      : 257u + (uint32_t)(wl_rand(&x) % 768u);
            *op = (wl_op_t){.slot = s, .size = size, .kind = WL_MALLOC};
            used[s] = true;
            live++;
            t->nmalloc++;
        } else {
            uint32_t k = (uint32_t)(wl_rand(&x) % live), s = 0;
            for (;; s++) {
                if (used[s] && k-- == 0u) {
                    break;
                }
            }
            *op = (wl_op_t){.slot = s, .size = 0, .kind = WL_FREE};
            used[s] = false;
            live--;
            t->nfree++;
        }
    }
    t->nops = WL_MEMSTRESS_OPS;
    return true;
}
