/* SPDX-License-Identifier: MIT */
/*
 * wf_touch.c -- the work of the wait-free tree and of its caches counted where it is done, and
 * compared with the paper's algorithm written here.
 *
 * The library keeps its own counts of its work (rt_wf_trace_t, rt_wfc_trace_t) and states its own
 * bounds (rt_wf_bound, rt_wfc_bound); tests that compare the two prove nothing if both are wrong
 * the same way. Here the core is rebuilt with RT_CONFIG_HEADER = wf_touch_config.h, so the node
 * access helpers (src/waitfree/wf_tree.h, wfcache.c: the only code that computes the address of a
 * node's words) report every node whose words a call reads or writes. The test keeps a model of
 * the tree of its own -- its post-order numbering built by recursion, the leaves each live block
 * covers (from the pointers the library returned), the pristine subtrees of lazy
 * re-initialisation, the chunks each cache holds -- and runs on it the paper's try_allocate
 * (Fig. 3) in the variant's order (hints: the side with a wholly free subtree that fits), or the
 * read-only descent's reads and claim walk, and the release of Fig. 4 (eager or lazy). For every
 * call it then requires:
 *   - the set of nodes the call touched equals the set the model's algorithm touches: the nodes
 *     the descent arrives at (the children a lazy descent initialises; with hints the children
 *     whose counter it reads and passes), the handed-out chunk's first node (its length word);
 *     for a free the chunk's first node and root, every ancestor, and with eager
 *     re-initialisation every node of the chunk; for the caches the popped chunk's first node on
 *     a hit, the chunk's first node and root on a push, and on a full push the same for each chunk
 *     the flush releases (the last ones pushed, as the model's list says), on a refill the descent
 *     and the pieces cut (their roots, their first nodes);
 *   - the chunk the library returns is the one the model's search finds (the leftmost fitting);
 *   - the library's own trace (nodes, rmw) equals the model's count of arrivals and atomic
 *     read-modify-writes;
 *   - the arrivals stay within the paper's bound written here: 2^(H-s+1) - 1 nodes for a malloc
 *     (every node of height >= s at most once; x 3 with lazy re-initialisation, + one claim walk
 *     of H-s+1 nodes per candidate for the read-only descent), 2^(s+1) - 1 + H - s for a free;
 *     and rt_wf_bound states exactly these.
 * So a change that makes a descent visit more nodes, a flush release more chunks, or a release
 * touch more of the tree fails here even if it also updates the library's counts and bounds (a
 * descent that also reads a sibling's counter fails here and nowhere else). What it does not see:
 * more reads or writes of a node the model's algorithm touches anyway (it compares sets of nodes
 * and the library's counts, not every word access).
 *
 * Usage: wf_touch [ops per variant]   (default 1500)
 */
#include "testlib.h"

#include "rtalloc/waitfree.h"
#include "rtalloc/wfcache.h"
#include "wf_touch_config.h"

#define MAXH 9u
#define MAXN ((2u << MAXH) - 1u)
#define NONE SIZE_MAX

/* --- the recorder (the hook of wf_touch_config.h) ----------------------------------------------- */

static struct {
    const void *target; /* the tree whose nodes are counted */
    bool on;
    unsigned count[MAXN];
    size_t list[MAXN]; /* the distinct nodes touched, in order of their first touch */
    size_t n;
    unsigned long total, outside;
} touch;

void wf_test_touch(const void *wf, size_t node)
{
    if (!touch.on || wf != touch.target) {
        return;
    }
    touch.total++;
    if (node >= MAXN) {
        touch.outside++;
        return;
    }
    if (touch.count[node]++ == 0u) {
        touch.list[touch.n++] = node;
    }
}

static void touch_start(const void *w)
{
    for (size_t i = 0; i < touch.n; i++) {
        touch.count[touch.list[i]] = 0;
    }
    touch.n = 0;
    touch.total = 0;
    touch.outside = 0;
    touch.target = w;
    touch.on = true;
}

static void touch_stop(void) { touch.on = false; }

/* --- the model ------------------------------------------------------------------------------------ */

typedef struct model {
    unsigned H;
    size_t N, root;
    unsigned height[MAXN];
    size_t left[MAXN], right[MAXN], parent[MAXN], first[MAXN];
    unsigned used[MAXN]; /* leaves below the node in live chunks (cached ones included) */
    bool pristine[MAXN]; /* lazy: freed as a whole, the counters below not yet written */
    bool lazy, hints, ro;
} model_t;

/* Post-order numbering by recursion: left subtree, right subtree, the node. */
static size_t build(model_t *m, unsigned h, size_t *next)
{
    size_t l = NONE, r = NONE;
    if (h > 0u) {
        l = build(m, h - 1u, next);
        r = build(m, h - 1u, next);
    }
    size_t i = (*next)++;
    m->height[i] = h;
    m->left[i] = l;
    m->right[i] = r;
    m->first[i] = h > 0u ? m->first[l] : i;
    if (h > 0u) {
        m->parent[l] = i;
        m->parent[r] = i;
    }
    return i;
}

static void model_init(model_t *m, unsigned H, unsigned flags)
{
    memset(m, 0, sizeof *m);
    m->H = H;
    size_t next = 0;
    m->root = build(m, H, &next);
    m->N = next;
    m->parent[m->root] = NONE;
    m->lazy = (flags & RT_WF_LAZY_REINIT) != 0u;
    m->hints = (flags & RT_WF_HINTS) != 0u;
    m->ro = (flags & RT_WF_READONLY_DESCENT) != 0u;
}

static unsigned leaves(unsigned h) { return 1u << h; }
static size_t subtree_nodes(unsigned h) { return ((size_t)2 << h) - 1u; }

/* The node of height h whose first leaf is f (the root of the chunk at f). */
static size_t chunk_root(const model_t *m, size_t f, unsigned h)
{
    size_t i = f;
    while (m->height[i] < h) {
        i = m->parent[i];
    }
    return i;
}

/* The height of the largest wholly free subtree below and at n, -1 if none. */
static int maxfree(const model_t *m, size_t n)
{
    if (m->used[n] == 0u) {
        return (int)m->height[n];
    }
    if (m->height[n] == 0u) {
        return -1;
    }
    int l = maxfree(m, m->left[n]), r = maxfree(m, m->right[n]);
    return l > r ? l : r;
}

static void set_inside(model_t *m, size_t n, bool full)
{
    m->used[n] = full ? leaves(m->height[n]) : 0u;
    m->pristine[n] = false;
    if (m->height[n] > 0u) {
        set_inside(m, m->left[n], full);
        set_inside(m, m->right[n], full);
    }
}

static void model_take(model_t *m, size_t r)
{
    unsigned h = m->height[r];
    set_inside(m, r, true);
    for (size_t a = m->parent[r]; a != NONE; a = m->parent[a]) {
        m->used[a] += leaves(h);
    }
}

static void model_release(model_t *m, size_t r)
{
    unsigned h = m->height[r];
    set_inside(m, r, false);
    m->pristine[r] = m->lazy && h > 0u;
    for (size_t a = m->parent[r]; a != NONE; a = m->parent[a]) {
        m->used[a] -= leaves(h);
    }
}

/* What the model's algorithm touches and counts in one call. */
typedef struct expect {
    bool in[MAXN];
    size_t n;
    unsigned nodes, rmw;
} expect_t;

static void ex_reset(expect_t *x) { memset(x, 0, sizeof *x); }
static void ex_touch(expect_t *x, size_t i)
{
    if (!x->in[i]) {
        x->in[i] = true;
        x->n++;
    }
}

/* A lazy descent that takes a pristine node initialises its two children (pristine themselves
 * above the leaves). */
static void unpristine(model_t *m, expect_t *x, size_t n)
{
    size_t c[2] = {m->left[n], m->right[n]};
    for (unsigned k = 0; k < 2u; k++) {
        ex_touch(x, c[k]);
        m->pristine[c[k]] = m->height[c[k]] > 0u;
    }
    m->pristine[n] = false;
    x->nodes += 2u;
}

/* The side tried first: the paper's left, or with hints the left if it holds a wholly free subtree
 * of height >= s, else the right if that does, else the left. */
static unsigned first_side(const model_t *m, size_t n, unsigned s)
{
    if (!m->hints) {
        return 0u;
    }
    bool l = maxfree(m, m->left[n]) >= (int)s, r = maxfree(m, m->right[n]) >= (int)s;
    return !l && r ? 1u : 0u;
}

/* try_allocate (Fig. 3) at n for height s; with hints a counter that visibly lacks S is passed
 * with a load. Sequential: a decrement succeeds iff the free leaves below n are >= S. */
static size_t sim_try(model_t *m, expect_t *x, size_t n, unsigned s)
{
    unsigned h = m->height[n], S = leaves(s), free_leaves = leaves(h) - m->used[n];
    ex_touch(x, n);
    x->nodes++;
    if (m->hints && free_leaves < S) {
        return NONE;
    }
    x->rmw++; /* the decrement */
    if (free_leaves < S) {
        x->rmw++; /* its undo */
        return NONE;
    }
    if (h == s) {
        return n;
    }
    if (m->lazy && m->pristine[n]) {
        unpristine(m, x, n);
    }
    unsigned side = first_side(m, n, s);
    for (unsigned k = 0; k < 2u; k++, side = 1u - side) {
        size_t got = sim_try(m, x, side != 0u ? m->right[n] : m->left[n], s);
        if (got != NONE) {
            return got;
        }
    }
    x->rmw++; /* the increment giving S back */
    return NONE;
}

/* The read-only descent: reads depth-first (the same order and pruning), then one claim walk of
 * the direct path; above a pristine node the path goes on to its leftmost descendant of height s
 * without reads. Sequential: the first claim succeeds. */
static size_t sim_find(model_t *m, expect_t *x, size_t *path, unsigned len, unsigned s)
{
    size_t n = path[len - 1u];
    unsigned h = m->height[n], S = leaves(s);
    ex_touch(x, n);
    x->nodes++;
    if (leaves(h) - m->used[n] < S) {
        return NONE;
    }
    if (h > s && !(m->lazy && m->pristine[n])) {
        unsigned side = first_side(m, n, s);
        for (unsigned k = 0; k < 2u; k++, side = 1u - side) {
            path[len] = side != 0u ? m->right[n] : m->left[n];
            size_t got = sim_find(m, x, path, len + 1u, s);
            if (got != NONE) {
                return got;
            }
        }
        return NONE;
    }
    while (m->height[path[len - 1u]] > s) { /* a pristine node: its leftmost descendant */
        path[len] = m->left[path[len - 1u]];
        len++;
    }
    for (unsigned j = 0; j < len; j++) { /* the claim walk */
        ex_touch(x, path[j]);
        x->nodes++;
        x->rmw++;
        if (j + 1u < len && m->lazy && m->pristine[path[j]]) {
            unpristine(m, x, path[j]);
        }
    }
    return path[len - 1u];
}

/* A malloc of height s on the model: the chunk's root or NONE; the model updated. */
static size_t sim_malloc(model_t *m, expect_t *x, unsigned s)
{
    size_t r;
    if (m->ro) {
        size_t path[MAXH + 2u];
        path[0] = m->root;
        r = sim_find(m, x, path, 1u, s);
    } else {
        r = sim_try(m, x, m->root, s);
    }
    /* RT_HARDENING >= 1: the claimed chunk's check reads its root's children's counters (s >= 1,
     * unless the root is pristine: its counters below are stale) -- not counted in trace.nodes */
    if (r != NONE && RT_HARDENING >= 1 && s > 0u && !(m->lazy && m->pristine[r])) {
        ex_touch(x, m->left[r]);
        ex_touch(x, m->right[r]);
    }
    if (r != NONE) {
        model_take(m, r);
    }
    return r;
}

/* The release of the chunk at r (Fig. 4; the free's check reads the same nodes): its first node
 * and root, every ancestor, and with eager re-initialisation every node of the chunk. */
static void sim_release(model_t *m, expect_t *x, size_t r)
{
    unsigned h = m->height[r];
    ex_touch(x, m->first[r]);
    ex_touch(x, r);
    if (!m->lazy) {
        for (size_t i = m->first[r]; i <= r; i++) { /* the chunk: a contiguous slice */
            ex_touch(x, i);
        }
        x->nodes += (unsigned)subtree_nodes(h) + (m->H - h);
    } else {
        x->nodes += (h > 0u ? 1u : 0u) + 1u + (m->H - h);
    }
    for (size_t a = m->parent[r]; a != NONE; a = m->parent[a]) {
        ex_touch(x, a);
    }
    x->rmw += m->H - h + 1u;
    model_release(m, r);
}

/* The recorder's set against the model's; the first difference printed. */
static bool same_touch(const expect_t *x, const char *what)
{
    size_t extra = NONE, missing = NONE, wrong = 0;
    for (size_t i = 0; i < touch.n; i++) {
        if (!x->in[touch.list[i]]) {
            extra = extra == NONE ? touch.list[i] : extra;
            wrong++;
        }
    }
    size_t hit = touch.n - wrong;
    for (size_t i = 0; i < MAXN && hit != x->n; i++) {
        if (x->in[i] && touch.count[i] == 0u) {
            missing = i;
            break;
        }
    }
    return TL_CHECK(wrong == 0u && hit == x->n && touch.outside == 0u,
                    "%s: touched %zu nodes, the model %zu: %zu not in the model (e.g. node %zu), model's node %zu "
                    "not touched, %lu outside the tree",
                    what, touch.n, x->n, wrong, extra == NONE ? (size_t)0 : extra,
                    missing == NONE ? (size_t)0 : missing, touch.outside);
}

/* --- the paper's trees ---------------------------------------------------------------------------- */

typedef struct variant {
    const char *name;
    size_t node;
    unsigned flags;
} variant_t;

static const variant_t variants[] = {
    {"paper (wf)", 64, 0},
    {"wf32", 32, 0},
    {"wf256", 256, 0},
    {"read-only (wf_ro)", 64, RT_WF_READONLY_DESCENT},
    {"lazy (wf_lazy)", 64, RT_WF_LAZY_REINIT},
    {"hints", 64, RT_WF_HINTS},
    {"hints+lazy (wf_hint)", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT},
    {"hints+read-only", 64, RT_WF_HINTS | RT_WF_READONLY_DESCENT},
    {"read-only+lazy", 64, RT_WF_READONLY_DESCENT | RT_WF_LAZY_REINIT},
};

#define TREE_H 7u
static unsigned char control[1024] __attribute__((aligned(64)));
static unsigned char tree[(2u << TREE_H) * 256u] __attribute__((aligned(64)));

/* The paper's bound on the arrivals of a malloc of height s (written here, not rt_wf_bound's). */
static uint64_t paper_malloc_bound(const model_t *m, unsigned s)
{
    uint64_t above = ((uint64_t)2 << (m->H - s)) - 1u, path = m->H - s + 1u;
    uint64_t b = above + (m->ro ? ((uint64_t)1 << (m->H - s)) * path : 0u);
    return m->lazy ? 3u * b : b;
}

typedef struct live {
    unsigned char *p;
    size_t root;
} live_t;

static void tree_variant(const variant_t *v, unsigned long ops)
{
    rt_wf_config_t cfg = {v->node, v->flags};
    size_t bytes = subtree_nodes(TREE_H) * v->node;
    rt_wf_t *w = rt_wf_create_split(control, tree, bytes, &cfg);
    if (!TL_CHECK(w != NULL && rt_wf_height(w) == TREE_H, "%s: create", v->name)) {
        return;
    }
    static model_t m;
    model_init(&m, TREE_H, v->flags);
    TL_CHECK(rt_wf_nodes(w) == m.N, "%s: %zu nodes, the model %zu", v->name, rt_wf_nodes(w), m.N);
    /* the bounds the library states (rt_wf_bound) are the paper's, written here (+ the read-only
     * descent's one verifying walk at RT_HARDENING >= 1) */
    for (unsigned s = 0; s < TREE_H; s++) {
        rt_wf_bound_t b;
        uint64_t path = TREE_H - s + 1u, verify = m.ro && RT_HARDENING >= 1 ? path : 0u;
        uint64_t free_nodes = m.lazy ? path + 1u : subtree_nodes(s) + (TREE_H - s);
        TL_CHECK(rt_wf_bound(w, rt_wf_usable(v->node, s), &b) && b.height == s &&
                     b.malloc_nodes == paper_malloc_bound(&m, s) + (m.lazy ? 3u : 1u) * verify &&
                     b.free_nodes == free_nodes && b.free_rmw == path && b.path == path,
                 "%s: rt_wf_bound of height %u: malloc %llu nodes, free %llu nodes %llu rmw", v->name, s,
                 (unsigned long long)b.malloc_nodes, (unsigned long long)b.free_nodes, (unsigned long long)b.free_rmw);
    }
    tl_rng_t r = tl_rng_seed(0x70C4u ^ v->flags ^ (v->node << 8));
    static live_t live[MAXN];
    size_t nlive = 0;
    unsigned long calls = 0, wrong = 0, fails = 0, max_arrivals = 0;
    static expect_t x;
    for (unsigned long op = 0; op < ops && wrong < 5u; op++) {
        ex_reset(&x);
        rt_wf_trace_t t;
        char what[96];
        if (nlive > 0u && (tl_chance(&r, 45) || nlive >= MAXN / 2u)) {
            size_t k = tl_range(&r, 0, nlive - 1u);
            live_t b = live[k];
            live[k] = live[--nlive];
            snprintf(what, sizeof what, "%s: op %lu: free of the chunk at node %zu", v->name, op, b.root);
            sim_release(&m, &x, b.root);
            touch_start(w);
            rt_wf_free_ex(w, b.p, &t);
            touch_stop();
            unsigned h = m.height[b.root];
            wrong += !TL_CHECK(x.nodes <= subtree_nodes(h) + (m.H - h), "%s: %u arrivals beyond the paper's bound",
                               what, x.nodes);
        } else {
            unsigned s = (unsigned)tl_range(&r, 0, 3);
            size_t lo = s == 0u ? 1u : rt_wf_usable(v->node, s - 1u) + 1u, hi = rt_wf_usable(v->node, s);
            size_t n = tl_range(&r, lo, hi);
            snprintf(what, sizeof what, "%s: op %lu: malloc(%zu), height %u", v->name, op, n, s);
            size_t root = sim_malloc(&m, &x, s);
            if (root != NONE) {
                ex_touch(&x, m.first[root]); /* the hand-out's length word */
            }
            touch_start(w);
            unsigned char *p = rt_wf_malloc_ex(w, n, &t);
            touch_stop();
            size_t got = p == NULL ? NONE : (size_t)(p - 4 - tree) / v->node;
            if (!TL_CHECK(got == (root == NONE ? NONE : m.first[root]),
                          "%s: the library's chunk at node %zu, the "
                          "model's %zu",
                          what, got, root == NONE ? NONE : m.first[root])) {
                wrong++;
                break;
            }
            fails += p == NULL ? 1u : 0u;
            if (p != NULL) {
                live[nlive++] = (live_t){p, root};
            }
            wrong += !TL_CHECK(x.nodes <= paper_malloc_bound(&m, s), "%s: %u arrivals beyond the paper's bound %llu",
                               what, x.nodes, (unsigned long long)paper_malloc_bound(&m, s));
            max_arrivals = x.nodes > max_arrivals ? x.nodes : max_arrivals;
        }
        calls++;
        wrong += !same_touch(&x, what);
        wrong += !TL_CHECK(t.nodes == x.nodes && t.rmw == x.rmw,
                           "%s: the library's trace nodes %u rmw %u, the model "
                           "%u and %u",
                           what, t.nodes, t.rmw, x.nodes, x.rmw);
    }
    TL_CHECK(rt_wf_check(w), "%s: equation 3 at the end", v->name);
    printf("%-22s %lu calls (%lu failed mallocs), at most %lu arrivals per malloc: %s\n", v->name, calls, fails,
           max_arrivals, wrong == 0u ? "ok" : "FAILED");
}

/* --- the caches ------------------------------------------------------------------------------------ */

#define C_CAP 2u   /* capacity: a third free of one height flushes C - C/2 = 1 */
#define C_BATCH 1u /* a refill claims a pair */
#define C_HEIGHTS 2u

static unsigned char arena[1u << 15] __attribute__((aligned(64)));
static uintptr_t token = 0x1000u;
static uintptr_t self_hook(void *context)
{
    (void)context;
    return token;
}

typedef struct cache_model {
    size_t list[C_HEIGHTS][C_CAP + 1u]; /* first nodes, bottom to top */
    unsigned n[C_HEIGHTS];
} cache_model_t;

static void cache_variant(const variant_t *v, unsigned long ops)
{
    rt_wfc_config_t cfg;
    rt_wfc_default_config(&cfg);
    cfg.node_size = 64;
    cfg.tree_flags = v->flags;
    cfg.heights = C_HEIGHTS;
    cfg.batch_log2 = C_BATCH;
    cfg.capacity = C_CAP;
    cfg.caches = 2;
    cfg.self = self_hook;
    memset(arena, 0x5A, sizeof arena);
    rt_wfc_t *c = rt_wfc_create(arena, sizeof arena, &cfg);
    rt_wf_t *w = c != NULL ? rt_wfc_tree(c) : NULL;
    if (!TL_CHECK(w != NULL && rt_wf_height(w) <= MAXH, "cache %s: create", v->name)) {
        return;
    }
    static model_t m;
    model_init(&m, rt_wf_height(w), v->flags);
    /* the control chunk: the leftmost subtree, what the tree's capacity leaves out */
    rt_stats_t st;
    rt_wf_stats(w, &st);
    size_t ctrl_nodes = (size_t)(rt_wf_nodes(w) * 64u - st.capacity) / 64u;
    unsigned hc = 0;
    while (subtree_nodes(hc) < ctrl_nodes) {
        hc++;
    }
    if (!TL_CHECK(subtree_nodes(hc) == ctrl_nodes, "cache %s: the control chunk is %zu nodes", v->name, ctrl_nodes)) {
        return;
    }
    model_take(&m, chunk_root(&m, 0, hc));
    static cache_model_t cm;
    memset(&cm, 0, sizeof cm);
    tl_rng_t r = tl_rng_seed(0xCAC4Eu ^ v->flags);
    static live_t live[MAXN];
    size_t nlive = 0;
    unsigned long calls = 0, wrong = 0, hits = 0, refills = 0, flushes = 0;
    static expect_t x;
    for (unsigned long op = 0; op < ops && wrong < 5u; op++) {
        ex_reset(&x);
        rt_wfc_trace_t t;
        char what[96];
        if (nlive > 0u && (tl_chance(&r, 45) || nlive >= 40u)) {
            size_t k = tl_range(&r, 0, nlive - 1u);
            live_t b = live[k];
            live[k] = live[--nlive];
            unsigned h = m.height[b.root];
            snprintf(what, sizeof what, "cache %s: op %lu: free of the chunk at node %zu", v->name, op, b.root);
            if (h < C_HEIGHTS) {
                if (cm.n[h] == C_CAP) { /* the flush: the chunks pushed last, released */
                    for (unsigned k2 = 0; k2 < C_CAP - C_CAP / 2u; k2++) {
                        size_t f = cm.list[h][--cm.n[h]];
                        sim_release(&m, &x, chunk_root(&m, f, h));
                    }
                    flushes++;
                }
                ex_touch(&x, m.first[b.root]); /* the check, the claim, the push */
                ex_touch(&x, b.root);
                x.nodes++;
                cm.list[h][cm.n[h]++] = m.first[b.root];
            } else {
                sim_release(&m, &x, b.root);
            }
            touch_start(w);
            rt_wfc_free_ex(c, b.p, &t);
            touch_stop();
        } else {
            unsigned s = (unsigned)tl_range(&r, 0, 2);
            size_t lo = s == 0u ? 1u : rt_wf_usable(64, s - 1u) + 1u, hi = rt_wf_usable(64, s);
            size_t n = tl_range(&r, lo, hi);
            snprintf(what, sizeof what, "cache %s: op %lu: malloc(%zu), height %u", v->name, op, n, s);
            size_t f = NONE;
            if (s < C_HEIGHTS && cm.n[s] > 0u) { /* a hit: the top chunk */
                f = cm.list[s][--cm.n[s]];
                ex_touch(&x, f);
                x.nodes++;
                hits++;
            } else {
                /* a refill: batch C_BATCH first (cut into 2^j pieces: the roots and first nodes of
                 * the pieces written), then smaller; uncached heights: one chunk */
                for (unsigned j = s < C_HEIGHTS ? C_BATCH + 1u : 1u; j-- > 0u && f == NONE;) {
                    size_t rr = sim_malloc(&m, &x, s + j);
                    if (rr == NONE) {
                        continue;
                    }
                    size_t pieces[1u << C_BATCH] = {0}, np = 0;
                    for (size_t i = m.first[rr]; i <= rr; i++) {
                        if (m.height[i] >= s) {
                            ex_touch(&x, i);
                        }
                        if (m.height[i] == s) {
                            pieces[np++] = i;
                            ex_touch(&x, m.first[i]);
                        }
                    }
                    x.nodes += (unsigned)(2u * np - 2u);
                    f = m.first[pieces[0]];
                    for (size_t k2 = np; k2-- > 1u;) {
                        cm.list[s][cm.n[s]++] = m.first[pieces[k2]];
                    }
                    refills++;
                }
            }
            touch_start(w);
            unsigned char *p = rt_wfc_malloc_ex(c, n, &t);
            touch_stop();
            size_t got = p == NULL ? NONE : (size_t)(p - 4 - arena) / 64u;
            if (!TL_CHECK(got == f, "%s: the library's chunk at node %zu, the model's %zu", what, got, f)) {
                wrong++;
                break;
            }
            if (p != NULL) {
                live[nlive++] = (live_t){p, chunk_root(&m, f, s)};
            }
        }
        calls++;
        wrong += !same_touch(&x, what);
        wrong += !TL_CHECK(t.nodes == x.nodes && t.rmw == x.rmw,
                           "%s: the library's trace nodes %u rmw %u, the model "
                           "%u and %u",
                           what, t.nodes, t.rmw, x.nodes, x.rmw);
    }
    rt_wfc_flush_all(c);
    TL_CHECK(rt_wfc_check(c), "cache %s: equation 3 at the end", v->name);
    printf("cache %-16s %lu calls: %lu hits, %lu refills, %lu flushes: %s\n", v->name, calls, hits, refills, flushes,
           wrong == 0u ? "ok" : "FAILED");
}

int main(int argc, char **argv)
{
    uint64_t ops = 1500;
    if (argc > 1 && (!tl_parse_u64(argv[1], &ops) || ops == 0u)) {
        fprintf(stderr, "usage: wf_touch [ops per variant]\n");
        return 2;
    }
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        tree_variant(&variants[k], (unsigned long)ops);
    }
    static const variant_t cache_variants[] = {
        {"hints+lazy", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT},
        {"paper", 64, 0},
        {"read-only", 64, RT_WF_READONLY_DESCENT},
        {"lazy", 64, RT_WF_LAZY_REINIT},
    };
    for (size_t k = 0; k < sizeof cache_variants / sizeof cache_variants[0]; k++) {
        cache_variant(&cache_variants[k], (unsigned long)ops);
    }
    return tl_summary("wf_touch");
}
