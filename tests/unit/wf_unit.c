/* SPDX-License-Identifier: MIT */
/*
 * wf_unit.c -- white-box tests of the wait-free buddy tree (rtalloc/waitfree.h), one thread.
 *
 *   fig1         paper Fig. 1: a depth-5 tree starts with counters 16, 8, 4, 2, 1
 *   fig2         paper Fig. 2: after chunks of 1, 1, 1, 3, 7, 7 nodes every counter outside the
 *                chunks is the free leaves below it, the chunks lie where the depth-first search
 *                puts them, and the root's right child reads 0 though it is not itself allocated
 *   layout       usable bytes k * B - 12 for every node size and height (32- and 64-bit alike:
 *                948 bytes are 15 nodes of 64), pointers 4 past a node start, the length word
 *                before the pointer, the canary and the counter in the chunk's last 8 bytes
 *   traces       exact node visits and RMWs of known calls (the paper's Fig. 3 and Fig. 4 on a
 *                fresh tree); every malloc of a random sequential workload within rt_wf_bound; with
 *                hints exactly the direct path and every hint exact (rt_wf_check_ex)
 *   same-places  the paper, read-only descent, lazy re-initialisation and hints (and their
 *                combinations) place every chunk of a sequential workload at the same address:
 *                they differ in work, not in policy
 *   bad input    each path of bad input through the handler, the call refused and every counter of
 *                the tree unchanged: foreign pointers, pointers not at a chunk's data start,
 *                double free (at once, and of a stale pointer into reused memory), the length
 *                word overwritten, the canary overrun (CORRUPTED, the chunk stays allocated until
 *                the canary is restored), the control chunk, memalign's offset word, usable_size
 *                and realloc of bad pointers, calloc overflow, bad alignment, too large; a pointer
 *                of a previous instance over the same buffer (a new create is a new generation,
 *                also with an entropy source that repeats itself)
 *   config       invalid node sizes and flags refused; create_split's checks; min_buffer exact
 */
#include "testlib.h"

#include "rtalloc/waitfree.h"

static unsigned char control[1024] __attribute__((aligned(64)));
static unsigned char tree[1u << 20] __attribute__((aligned(4096)));

static rt_wf_t *split(unsigned height, size_t node, unsigned flags)
{
    rt_wf_config_t cfg = {node, flags};
    size_t bytes = (((size_t)2 << height) - 1u) * node;
    memset(tree, 0x5A, bytes);
    rt_wf_t *w = rt_wf_create_split(control, tree, bytes, &cfg);
    if (w != NULL) {
        TL_CHECK(rt_wf_height(w) == height, "split: height %u, wanted %u", rt_wf_height(w), height);
    }
    return w;
}

/* --- Fig. 1 and Fig. 2 --------------------------------------------------------------------------- */

static void test_fig1(void)
{
    rt_wf_t *w = split(4, 64, 0);
    if (!TL_CHECK(w != NULL, "fig1: create")) {
        return;
    }
    TL_CHECK(rt_wf_nodes(w) == 31u, "fig1: %zu nodes", rt_wf_nodes(w));
    for (unsigned h = 0; h <= 4u; h++) {
        for (size_t k = 0; k < ((size_t)1 << (4u - h)); k++) {
            int c = rt_wf_counter(w, rt_wf_index(w, h, k));
            TL_CHECK(c == (1 << h), "fig1: node (height %u, %zu) counter %d, expected %d", h, k, c, 1 << h);
        }
    }
    /* post-order: the root is the last node, a subtree's first node is its leftmost leaf */
    TL_CHECK(rt_wf_index(w, 4, 0) == 30u && rt_wf_index(w, 3, 0) == 14u && rt_wf_index(w, 3, 1) == 29u &&
                 rt_wf_index(w, 0, 1) == 1u && rt_wf_index(w, 1, 0) == 2u && rt_wf_index(w, 0, 2) == 3u,
             "fig1: post-order indices");
    TL_CHECK(rt_wf_check_ex(w, RT_WF_CHECK_HINTS), "fig1: check");
}

static void test_fig2(void)
{
    static const unsigned flags[] = {0, RT_WF_READONLY_DESCENT, RT_WF_LAZY_REINIT};
    for (size_t v = 0; v < sizeof flags / sizeof flags[0]; v++) {
        rt_wf_t *w = split(4, 64, flags[v]);
        if (!TL_CHECK(w != NULL, "fig2: create")) {
            return;
        }
        /* 1, 1, 1, 3, 7, 7 nodes: requests of 10, 10, 10, 100, 300, 300 bytes */
        static const size_t sizes[6] = {10, 10, 10, 100, 300, 300};
        static const unsigned first_leaf[6] = {0, 1, 2, 4, 8, 12}; /* where depth-first puts them */
        static const unsigned height[6] = {0, 0, 0, 1, 2, 2};
        for (size_t i = 0; i < 6u; i++) {
            unsigned char *p = rt_wf_malloc(w, sizes[i]);
            size_t leaf_node = rt_wf_index(w, 0, first_leaf[i]);
            TL_CHECK(p == tree + leaf_node * 64u + 4u, "fig2 (flags %#x): chunk %zu at node %zu, expected node %zu",
                     flags[v], i, (size_t)(p - 4 - tree) / 64u, leaf_node);
            TL_CHECK(rt_wf_is_chunk(w, rt_wf_index(w, height[i], first_leaf[i] >> height[i])), "fig2: chunk %zu root",
                     i);
        }
        /* counters outside the chunks: free leaves below (X = inside a chunk, undefined) */
        static const int expect[5][16] = {
            {0, 0, 0, 1, -9, -9, 1, 1, -9, -9, -9, -9, -9, -9, -9, -9}, /* leaves */
            {0, 1, 0, 2, -9, -9, -9, -9},                               /* height 1 */
            {1, 2, 0, 0},                                               /* height 2 */
            {3, 0},                                                     /* height 3 */
            {3},                                                        /* the root */
        };
        for (unsigned h = 0; h <= 4u; h++) {
            for (size_t k = 0; k < ((size_t)1 << (4u - h)); k++) {
                if (expect[h][k] == -9) {
                    continue;
                }
                size_t i = rt_wf_index(w, h, k);
                bool chunk = rt_wf_is_chunk(w, i);
                int c = rt_wf_counter(w, i);
                TL_CHECK(c == expect[h][k] || (chunk && c == 0),
                         "fig2 (flags %#x): node (%u, %zu) counter %d, expected %d", flags[v], h, k, c, expect[h][k]);
            }
        }
        size_t right = rt_wf_index(w, 3, 1);
        TL_CHECK(rt_wf_counter(w, right) == 0 && !rt_wf_is_chunk(w, right),
                 "fig2: the root's right child reads 0 and is not itself a chunk");
        TL_CHECK(rt_wf_check(w), "fig2: equation 3");
    }
}

/* --- layout -------------------------------------------------------------------------------------- */

static void test_layout(void)
{
    for (size_t b = 16; b <= 4096u; b *= 2u) {
        for (unsigned s = 0; s < 8u; s++) {
            TL_CHECK(rt_wf_usable(b, s) == (((size_t)2 << s) - 1u) * b - 12u, "usable(%zu, %u)", b, s);
        }
    }
    TL_CHECK(rt_wf_usable(64, 3) == 948u, "948 bytes are 15 nodes of 64 (%zu-bit)", 8u * sizeof(void *));
    rt_wf_t *w = split(6, 64, 0);
    if (!TL_CHECK(w != NULL, "layout: create")) {
        return;
    }
    TL_CHECK(rt_wf_height_for(w, 948) == 3u && rt_wf_height_for(w, 949) == 4u && rt_wf_height_for(w, 52) == 0u &&
                 rt_wf_height_for(w, 53) == 1u && rt_wf_height_for(w, 1) == 0u,
             "layout: heights of 948, 949, 52, 53, 1 bytes");
    unsigned char *p = rt_wf_malloc(w, 948);
    if (!TL_CHECK(p != NULL, "layout: malloc(948)")) {
        return;
    }
    size_t first = (size_t)(p - 4 - tree) / 64u;
    TL_CHECK((size_t)(p - tree) % 64u == 4u && (uintptr_t)p % RT_WF_ALIGN == 0u, "layout: pointer 4 past a node");
    TL_CHECK(rt_wf_usable_size(w, p) == 948u, "layout: usable_size %zu", rt_wf_usable_size(w, p));
    size_t root = first + 14u;
    TL_CHECK(rt_wf_is_chunk(w, root) && rt_wf_counter(w, root) == 0, "layout: the 15th node is the chunk's root");
    /* the chunk's last word is its root's counter: the 4 bytes after data + 948 + 4 (canary); at
     * RT_HARDENING >= 1 the word holds the counter's code, so it is found by changing it */
    uint32_t word, changed;
    memcpy(&word, p + 948 + 4, 4);
    changed = word ^ 1u;
    memcpy(p + 948 + 4, &changed, 4);
    int moved = rt_wf_counter(w, root);
    memcpy(p + 948 + 4, &word, 4);
    TL_CHECK((RT_HARDENING >= 1 || word == 0u) && moved != 0 && rt_wf_counter(w, root) == 0 &&
                 (unsigned char *)p + 948 + 8 == tree + (root + 1u) * 64u,
             "layout: counter in the chunk's last word");
    memset(p, 0xEE, 948); /* the whole usable area is the caller's */
    TL_CHECK(rt_wf_check(w), "layout: writing all 948 bytes keeps the tree intact");
    rt_wf_free(w, p);
    TL_CHECK(rt_wf_check(w), "layout: check after free");
}

/* --- traces --------------------------------------------------------------------------------------- */

static void test_traces(void)
{
    rt_wf_t *w = split(4, 64, 0);
    if (!TL_CHECK(w != NULL, "traces: create")) {
        return;
    }
    rt_wf_trace_t t;
    void *a = rt_wf_malloc_ex(w, 10, &t);
    TL_CHECK(a != NULL && t.nodes == 5u && t.rmw == 5u && t.height == 0u, "first leaf: %u nodes, %u RMW (5, 5)",
             t.nodes, t.rmw);
    void *b = rt_wf_malloc_ex(w, 10, &t);
    /* root, 3 left nodes, leaf 0 (taken: decrement + undo), leaf 1 */
    TL_CHECK(b != NULL && t.nodes == 6u && t.rmw == 7u, "second leaf: %u nodes, %u RMW (6, 7)", t.nodes, t.rmw);
    TL_CHECK(rt_wf_last_probes(w) == 6u, "last_probes %u", rt_wf_last_probes(w));
    void *c = rt_wf_malloc_ex(w, 300, &t); /* 4 leaves: root, left (12 >= 4), LL (2 < 4: fails), LR */
    TL_CHECK(c != NULL && t.nodes == 4u && t.rmw == 5u && t.height == 2u, "4 leaves: %u nodes, %u RMW (4, 5)", t.nodes,
             t.rmw);
    rt_wf_free_ex(w, c, &t); /* 7 nodes re-initialised... as counted: the chunk + 2 ancestors */
    TL_CHECK(t.nodes == 7u + 2u && t.rmw == 3u && t.height == 2u, "free of 7 nodes: %u nodes, %u RMW (9, 3)", t.nodes,
             t.rmw);
    rt_wf_bound_t bd;
    TL_CHECK(rt_wf_bound(w, 300, &bd) && bd.height == 2u && bd.path == 3u && bd.malloc_nodes == 7u &&
                 bd.free_nodes == 9u && bd.free_rmw == 3u,
             "bound of 4 leaves in H=4: path %u, malloc nodes %llu, free nodes %llu", bd.path,
             (unsigned long long)bd.malloc_nodes, (unsigned long long)bd.free_nodes);
    TL_CHECK(!rt_wf_bound(w, rt_wf_max_request(w) + 1u, &bd), "no bound for an impossible size");
    rt_wf_free(w, a);
    rt_wf_free(w, b);

    /* lazy free: the chunk's root and its ancestors only */
    w = split(4, 64, RT_WF_LAZY_REINIT);
    c = rt_wf_malloc(w, 300);
    rt_wf_free_ex(w, c, &t);
    TL_CHECK(t.nodes == 1u + 1u + 2u && t.rmw == 3u, "lazy free of 7 nodes: %u nodes, %u RMW (4, 3)", t.nodes, t.rmw);
    TL_CHECK(rt_wf_check(w), "lazy: check with a pristine subtree");
    void *d = rt_wf_malloc_ex(w, 10, &t); /* descends through the pristine root of 4 leaves */
    TL_CHECK(d == c && t.inits == 2u && t.nodes == 5u + 4u && rt_wf_check(w),
             "lazy: malloc into the pristine subtree initialises it (%u inits, %u nodes)", t.inits, t.nodes);
    rt_wf_free(w, d);

    /* random sequential workload: bounds for every variant; hints: direct path and exact hints */
    static const unsigned flags[] = {0,
                                     RT_WF_READONLY_DESCENT,
                                     RT_WF_LAZY_REINIT,
                                     RT_WF_HINTS,
                                     RT_WF_HINTS | RT_WF_LAZY_REINIT,
                                     RT_WF_HINTS | RT_WF_READONLY_DESCENT,
                                     RT_WF_HINTS | RT_WF_READONLY_DESCENT | RT_WF_LAZY_REINIT};
    for (size_t v = 0; v < sizeof flags / sizeof flags[0]; v++) {
        w = split(12, 64, flags[v]);
        void *live[128];
        size_t nlive = 0;
        tl_rng_t r = tl_rng_seed(11 + v);
        unsigned long beyond = 0, off_path = 0, hint_errors = 0, mallocs = 0;
        for (unsigned op = 0; op < 4000u; op++) {
            if (nlive > 0u && (tl_chance(&r, 45) || nlive == 128u)) {
                size_t i = tl_range(&r, 0, nlive - 1u);
                rt_wf_free_ex(w, live[i], &t);
                rt_wf_bound(w, 1, &bd);
                live[i] = live[--nlive];
            } else {
                size_t n = tl_chance(&r, 80) ? tl_range(&r, 1, 2000) : tl_range(&r, 2000, 40000);
                void *p = rt_wf_malloc_ex(w, n, &t);
                rt_wf_bound(w, n, &bd);
                beyond += t.nodes > bd.malloc_nodes || t.rmw > bd.malloc_rmw;
                if (p != NULL) {
                    live[nlive++] = p;
                    mallocs++;
                    /* the direct path: H - s + 1 decrements; lazy adds the 2 children of every
                     * pristine node initialised; read-only reads at most the path first */
                    uint32_t extra = 2u * t.inits;
                    bool direct = (flags[v] & RT_WF_READONLY_DESCENT) != 0u
                                      ? t.rmw == bd.path && t.claims == 1u && t.nodes <= 2u * bd.path + extra
                                      : t.rmw == bd.path && t.nodes == bd.path + extra;
                    off_path += (flags[v] & RT_WF_HINTS) != 0u && !direct;
                }
            }
            if ((flags[v] & RT_WF_HINTS) != 0u && !rt_wf_check_ex(w, RT_WF_CHECK_HINTS)) {
                hint_errors++;
            }
        }
        while (nlive > 0u) {
            rt_wf_free(w, live[--nlive]);
        }
        TL_CHECK(beyond == 0u, "flags %#x: %lu mallocs beyond their bound", flags[v], beyond);
        TL_CHECK(hint_errors == 0u, "flags %#x: hints not exact after %lu operations", flags[v], hint_errors);
        TL_CHECK(rt_wf_check_ex(w, RT_WF_CHECK_HINTS), "flags %#x: check at the end", flags[v]);
        printf("traces    flags %#x: %lu mallocs, %lu off the direct path\n", flags[v], mallocs, off_path);
        if ((flags[v] & RT_WF_HINTS) != 0u) {
            TL_CHECK(off_path == 0u, "flags %#x: %lu successful mallocs off the direct path", flags[v], off_path);
        }
    }
}

/* --- the same places ------------------------------------------------------------------------------ */

static void test_same_places(void)
{
    static const unsigned flags[] = {0,
                                     RT_WF_READONLY_DESCENT,
                                     RT_WF_LAZY_REINIT,
                                     RT_WF_READONLY_DESCENT | RT_WF_LAZY_REINIT,
                                     RT_WF_HINTS,
                                     RT_WF_HINTS | RT_WF_LAZY_REINIT,
                                     RT_WF_HINTS | RT_WF_READONLY_DESCENT | RT_WF_LAZY_REINIT};
#define NPLACES (sizeof flags / sizeof flags[0])
    static size_t offsets[NPLACES][3000];
    for (size_t v = 0; v < NPLACES; v++) {
        rt_wf_t *w = split(12, 64, flags[v]);
        void *live[100];
        size_t nlive = 0;
        tl_rng_t r = tl_rng_seed(77);
        for (unsigned op = 0; op < 3000u; op++) {
            offsets[v][op] = SIZE_MAX;
            if (nlive > 0u && (tl_chance(&r, 45) || nlive == 100u)) {
                size_t i = tl_range(&r, 0, nlive - 1u);
                rt_wf_free(w, live[i]);
                live[i] = live[--nlive];
            } else {
                unsigned char *p = rt_wf_malloc(w, tl_range(&r, 1, 6000));
                if (p != NULL) {
                    live[nlive++] = p;
                    offsets[v][op] = (size_t)(p - tree);
                }
            }
        }
        TL_CHECK(rt_wf_check(w), "same places: check (flags %#x)", flags[v]);
    }
    for (size_t v = 1; v < NPLACES; v++) {
        size_t diff = 0;
        for (unsigned op = 0; op < 3000u; op++) {
            diff += offsets[v][op] != offsets[0][op];
        }
        TL_CHECK(diff == 0u, "flags %#x places %zu of 3000 chunks elsewhere than the paper", flags[v], diff);
    }
}

/* --- bad input ------------------------------------------------------------------------------------ */

typedef struct snapshot {
    int counter[1024];
    size_t n;
    rt_stats_t s;
} snapshot_t;

static void take(rt_wf_t *w, snapshot_t *sn)
{
    sn->n = rt_wf_nodes(w) < 1024u ? rt_wf_nodes(w) : 1024u;
    for (size_t i = 0; i < sn->n; i++) {
        sn->counter[i] = rt_wf_counter(w, i);
    }
    rt_wf_stats(w, &sn->s);
}

/* The call just made was refused: one report of `kind`, no counter of the tree changed, stats as
 * before apart from errors (+1) and failures (+1 when a request returned NULL). */
static bool refused(rt_wf_t *w, tl_recorder_t *rec, const snapshot_t *before, rt_error_kind_t kind, bool request,
                    const char *what)
{
    bool ok = TL_CHECK(rec->count == 1u && rec->last == kind, "%s: %lu reports, last %s, expected %s", what, rec->count,
                       tl_kind_name(rec->last), tl_kind_name(kind));
    size_t changed = 0;
    for (size_t i = 0; i < before->n; i++) {
        changed += rt_wf_counter(w, i) != before->counter[i];
    }
    ok = TL_CHECK(changed == 0u, "%s: %zu counters changed", what, changed) && ok;
    rt_stats_t s;
    rt_wf_stats(w, &s);
    ok = TL_CHECK(s.errors == before->s.errors + 1u && s.failures == before->s.failures + (request ? 1u : 0u) &&
                      s.frees == before->s.frees && s.mallocs == before->s.mallocs &&
                      s.used_bytes == before->s.used_bytes,
                  "%s: stats changed", what) &&
         ok;
    tl_recorder_reset(rec);
    return ok;
}

/* Bad input, one phase per function; each leaves the tree as it found it (w, its recorder rec). */

/* foreign pointers, free(NULL), pointers into chunk b, into zeros */
static void bad_pointers(rt_wf_t *w, tl_recorder_t *rec, unsigned char *b)
{
    snapshot_t sn;
    char local[64];
    static char other[256];
    void *const foreign[] = {local + 8, other + 64, tree + rt_wf_nodes(w) * 64u + 4u, (void *)((uintptr_t)tree - 60u)};
    for (size_t i = 0; i < 4u; i++) {
        take(w, &sn);
        rt_wf_free(w, foreign[i]);
        refused(w, rec, &sn, RT_ERR_FOREIGN_POINTER, false, "free(foreign)");
    }
    take(w, &sn);
    rt_wf_free(w, NULL);
    TL_CHECK(rec->count == 0u, "free(NULL) reported");
    static const size_t interior[] = {1, 4, 8, 60, 64, 128, 192, 256};
    for (size_t i = 0; i < sizeof interior / sizeof interior[0]; i++) {
        take(w, &sn);
        rt_wf_free(w, b + interior[i]);
        char what[64];
        snprintf(what, sizeof what, "free(p + %zu)", interior[i]);
        refused(w, rec, &sn, RT_ERR_BAD_POINTER, false, what);
    }
    /* zeros inside: the interior nodes' words are zero, never a valid length word */
    memset(b, 0, 300);
    take(w, &sn);
    rt_wf_free(w, b + 60);
    refused(w, rec, &sn, RT_ERR_BAD_POINTER, false, "free(p + 60) over zeros");
}

/* a's length word overwritten (an underrun) and restored; one byte past a's usable area */
static void bad_length_word(rt_wf_t *w, tl_recorder_t *rec, unsigned char *a)
{
    snapshot_t sn;
    /* the length word overwritten (an underrun), then restored */
    uint32_t saved;
    memcpy(&saved, a - 4, 4);
    static const uint32_t forged[] = {0, 0xFFFFFFFFu, 0x41414141u, 1u, 0x21u};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        uint32_t bad = forged[i];
        memcpy(a - 4, &bad, 4);
        take(w, &sn);
        rt_wf_free(w, a);
        refused(w, rec, &sn, RT_ERR_BAD_POINTER, false, "free with the length word overwritten");
        bad = saved ^ (1u << (i + 3u)); /* one flipped check bit */
        memcpy(a - 4, &bad, 4);
        take(w, &sn);
        TL_CHECK(rt_wf_usable_size(w, a) == 0u, "usable_size with a bad length word");
        refused(w, rec, &sn, RT_ERR_BAD_POINTER, false, "usable_size with a flipped check bit");
    }
    memcpy(a - 4, &saved, 4);
    TL_CHECK(rt_wf_usable_size(w, a) == 180u && rec->count == 0u, "the restored length word validates");
    /* overrun: one byte past the usable area hits the canary */
    size_t ua = rt_wf_usable_size(w, a);
    unsigned char keep = a[ua];
    a[ua] = (unsigned char)(keep ^ 0x80u);
    take(w, &sn);
    rt_wf_free(w, a);
    refused(w, rec, &sn, RT_ERR_CORRUPTED, false, "free after an overrun of one byte");
    TL_CHECK(!rt_wf_check(w) && rec->count == 1u && rec->last == RT_ERR_CORRUPTED, "check sees the overrun canary");
    tl_recorder_reset(rec);
    take(w, &sn);
    TL_CHECK(rt_wf_realloc(w, a, 1000) == NULL, "realloc after an overrun");
    refused(w, rec, &sn, RT_ERR_CORRUPTED, true, "realloc after an overrun");
    a[ua] = keep;
    TL_CHECK(tl_verify(a, 100, 1) == 100u && rt_wf_check(w), "the canary restored: intact");
}

/* double frees of c, then stale pointers a, b, c into a larger chunk that reuses their space */
static void bad_double_free(rt_wf_t *w, tl_recorder_t *rec, unsigned char *a, unsigned char *b, unsigned char *c)
{
    snapshot_t sn;
    /* double free: at once, then of a stale pointer into memory a larger chunk reuses */
    rt_wf_free(w, c);
    take(w, &sn);
    rt_wf_free(w, c);
    refused(w, rec, &sn, RT_ERR_DOUBLE_FREE, false, "double free");
    take(w, &sn);
    TL_CHECK(rt_wf_realloc(w, c, 10) == NULL, "realloc of a freed chunk");
    refused(w, rec, &sn, RT_ERR_DOUBLE_FREE, true, "realloc of a freed chunk");
    rt_wf_free(w, a);
    rt_wf_free(w, b);
    unsigned char *big = rt_wf_malloc(w, 5000); /* takes the space of a, b and c */
    TL_CHECK(big != NULL, "bad input: malloc(5000)");
    tl_fill(big, 5000, 4);
    unsigned char *const stale[] = {a, b, c};
    for (size_t i = 0; i < 3u; i++) {
        if (stale[i] == big) {
            continue;
        }
        take(w, &sn);
        rt_wf_free(w, stale[i]);
        TL_CHECK(rec->count == 1u && (rec->last == RT_ERR_BAD_POINTER || rec->last == RT_ERR_DOUBLE_FREE),
                 "stale pointer into a live chunk: %s", tl_kind_name(rec->last));
        tl_recorder_reset(rec);
    }
    TL_CHECK(tl_verify(big, 5000, 4) == 5000u, "the live chunk untouched");
    rt_wf_free(w, big);
}

/* memalign's offset word overwritten, and a double free of a memalign pointer */
static void bad_memalign(rt_wf_t *w, tl_recorder_t *rec, unsigned flags)
{
    snapshot_t sn;
    /* memalign: the offset word */
    unsigned char *m = rt_wf_memalign(w, 256, 1000);
    TL_CHECK(m != NULL && (uintptr_t)m % 256u == 0u && rt_wf_usable_size(w, m) >= 1000u, "memalign(256, 1000)");
    uint32_t word;
    memcpy(&word, m - 4, 4);
    uint32_t flipped = word ^ 0x10u; /* the chunk it leads to is no longer 4 past a node */
    memcpy(m - 4, &flipped, 4);
    take(w, &sn);
    rt_wf_free(w, m);
    refused(w, rec, &sn, RT_ERR_BAD_POINTER, false, "free(memalign pointer) with its offset word overwritten");
    memcpy(m - 4, &word, 4);
    rt_wf_free(w, m);
    TL_CHECK(rec->count == 0u, "memalign pointer frees");
    /* the offset word of an alignment >= 64 is an interior node's counter word, which eager
     * re-initialisation rewrites: then the pointer no longer leads to a chunk at all */
    take(w, &sn);
    rt_wf_free(w, m);
    refused(w, rec, &sn, (flags & RT_WF_LAZY_REINIT) != 0u ? RT_ERR_DOUBLE_FREE : RT_ERR_BAD_POINTER, false,
            "double free of a memalign pointer");
}

/* requests refused: calloc overflow, a bad alignment, beyond max_request */
static void bad_requests(rt_wf_t *w, tl_recorder_t *rec)
{
    snapshot_t sn;
    /* requests */
    take(w, &sn);
    TL_CHECK(rt_wf_calloc(w, SIZE_MAX / 2u + 1u, 2) == NULL, "calloc overflow");
    refused(w, rec, &sn, RT_ERR_OVERFLOW, true, "calloc overflow");
    take(w, &sn);
    TL_CHECK(rt_wf_memalign(w, 24, 10) == NULL, "memalign(24)");
    refused(w, rec, &sn, RT_ERR_BAD_ALIGNMENT, true, "memalign(24)");
    take(w, &sn);
    TL_CHECK(rt_wf_malloc(w, rt_wf_max_request(w) + 1u) == NULL, "malloc(max_request + 1)");
    refused(w, rec, &sn, RT_ERR_TOO_LARGE, true, "malloc(max_request + 1)");
}

/* the control chunk of rt_wf_create is not a block */
static void bad_control_chunk(void)
{
    /* the control chunk of rt_wf_create is not a block */
    static unsigned char buf[64u << 10] __attribute__((aligned(64)));
    rt_wf_t *w = rt_wf_create(buf, sizeof buf, NULL);
    tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
    rt_wf_set_handler(w, tl_record, &rec);
    snapshot_t sn;
    take(w, &sn);
    rt_wf_free(w, buf + 4);
    refused(w, &rec, &sn, RT_ERR_BAD_POINTER, false, "free(the control chunk)");
    take(w, &sn);
    rt_wf_free(w, w);
    refused(w, &rec, &sn, RT_ERR_BAD_POINTER, false, "free(the handle)");
    TL_CHECK(rt_wf_check(w), "control chunk intact");
}

/* Two instances over one buffer, one after the other: a pointer of the first into memory the
 * second hands out as part of a larger block, whose bytes (the application's data) still hold the
 * old chunk's length word, canary and counter, is refused (BAD_POINTER, nothing changed): every
 * create draws a new key, never the one the buffer's previous control block held (rt_wf_create:
 * in the buffer; rt_wf_create_split: the control buffer reused). With the previous key the free
 * would release a leaf inside the live block, which the next malloc would hand out again. */
static void bad_generations(void)
{
    static unsigned char gbuf[8u << 10] __attribute__((aligned(64)));
    static const unsigned flags[] = {0, RT_WF_READONLY_DESCENT, RT_WF_HINTS | RT_WF_LAZY_REINIT};
    for (unsigned inside = 0; inside < 2u; inside++) {
        for (size_t v = 0; v < sizeof flags / sizeof flags[0]; v++) {
            for (unsigned gen = 0; gen < 3u; gen++) {
                rt_wf_config_t cfg = {64, flags[v]};
                rt_wf_t *w = inside != 0u ? rt_wf_create(gbuf, sizeof gbuf, &cfg)
                                          : rt_wf_create_split(control, gbuf, sizeof gbuf, &cfg);
                unsigned char *a = rt_wf_malloc(w, 1), *b = rt_wf_malloc(w, 1);
                if (!TL_CHECK(a != NULL && b == a + 64, "generations: two leaves side by side")) {
                    return;
                }
                unsigned char old[64];
                memcpy(old, b - 4, sizeof old); /* b's node: its length word, data, canary, counter */
                w = inside != 0u ? rt_wf_create(gbuf, sizeof gbuf, &cfg)
                                 : rt_wf_create_split(control, gbuf, sizeof gbuf, &cfg);
                tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
                rt_wf_set_handler(w, tl_record, &rec);
                unsigned char *q = rt_wf_malloc(w, rt_wf_usable(64, 1)); /* a and b's parent subtree */
                if (!TL_CHECK(q == a, "generations: the new block %p starts where the old leaf %p did", (void *)q,
                              (void *)a)) {
                    return;
                }
                memcpy(b - 4, old, sizeof old); /* the application's data: a copy of old memory */
                snapshot_t sn;
                take(w, &sn);
                rt_wf_free(w, b);
                refused(w, &rec, &sn, RT_ERR_BAD_POINTER, false, "generations: free of an old pointer");
                take(w, &sn);
                TL_CHECK(rt_wf_realloc(w, b, 2000) == NULL, "generations: realloc");
                refused(w, &rec, &sn, RT_ERR_BAD_POINTER, true, "generations: realloc of it");
                unsigned char *x = rt_wf_malloc(w, 1);
                TL_CHECK(x != NULL && (x < q || x >= q + rt_wf_usable(64, 1)) && rt_wf_check(w) && rec.count == 0u,
                         "generations (%s, flags %#x, round %u): a leaf %p inside the live block %p",
                         inside ? "in the "
                                  "buffer"
                                : "split",
                         flags[v], gen, (void *)x, (void *)q);
                rt_wf_free(w, x);
                rt_wf_free(w, q);
                TL_CHECK(rec.count == 0u && rt_wf_check(w), "generations: intact");
            }
        }
    }
}

static void test_bad_input(void)
{
    static const unsigned flags[] = {0, RT_WF_LAZY_REINIT, RT_WF_HINTS | RT_WF_LAZY_REINIT};
    for (size_t v = 0; v < sizeof flags / sizeof flags[0]; v++) {
        rt_wf_t *w = split(9, 64, flags[v]);
        tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
        rt_wf_set_handler(w, tl_record, &rec);
        unsigned char *a = rt_wf_malloc(w, 100), *b = rt_wf_malloc(w, 300), *c = rt_wf_malloc(w, 50);
        if (!TL_CHECK(a != NULL && b != NULL && c != NULL, "bad input: set-up")) {
            return;
        }
        tl_fill(a, 100, 1);
        tl_fill(b, 300, 2);
        tl_fill(c, 50, 3);
        bad_pointers(w, &rec, b);
        bad_length_word(w, &rec, a);
        bad_double_free(w, &rec, a, b, c);
        bad_memalign(w, &rec, flags[v]);
        bad_requests(w, &rec);
        TL_CHECK(rt_wf_check(w), "bad input: intact at the end (flags %#x)", flags[v]);
    }
    bad_control_chunk();
    bad_generations();
    rt_set_entropy(tl_entropy_constant, NULL); /* both lives draw the same key: create moves it */
    bad_generations();
    rt_set_entropy(NULL, NULL);
}

/* --- the registry's seven variants ---------------------------------------------------------------- */

typedef struct wf_variant {
    const char *name;
    size_t node;
    unsigned flags;
} wf_variant_t;

static const wf_variant_t variants[] = {
    {"wf", 64, 0},
    {"wf32", 32, 0},
    {"wf128", 128, 0},
    {"wf256", 256, 0},
    {"wf_ro", 64, RT_WF_READONLY_DESCENT},
    {"wf_lazy", 64, RT_WF_LAZY_REINIT},
    {"wf_hint", 64, RT_WF_HINTS | RT_WF_LAZY_REINIT},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

/* --- a block is the pointer the allocator returned ---------------------------------------------------- */

/* The call just made was refused: exactly one report, the counters and the counts unchanged. */
static bool refused_any(rt_wf_t *w, tl_recorder_t *rec, const snapshot_t *before, const char *what, const void *q)
{
    size_t changed = 0;
    for (size_t i = 0; i < before->n; i++) {
        changed += rt_wf_counter(w, i) != before->counter[i];
    }
    rt_stats_t s;
    rt_wf_stats(w, &s);
    bool ok = TL_CHECK(rec->count == 1u && rec->last != RT_ERR_NONE && changed == 0u && s.frees == before->s.frees &&
                           s.mallocs == before->s.mallocs && s.used_bytes == before->s.used_bytes,
                       "%s(%p): %lu reports (%s), %zu counters changed", what, q, rec->count, tl_kind_name(rec->last),
                       changed);
    tl_recorder_reset(rec);
    return ok;
}

/* Every pointer near a memalign block other than the one returned -- its chunk's data start
 * among them -- is refused by free, realloc and usable_size, and the block stays its owner's. */
static void interior_sweep(rt_wf_t *w, tl_recorder_t *rec, unsigned char *m, size_t n, size_t align, const char *name)
{
    unsigned char *lo = m >= tree + align + 8u ? m - align - 8u : tree + 4u;
    unsigned long bad = 0;
    snapshot_t sn;
    for (unsigned char *q = lo; q < m + 64; q += 4) {
        if (q == m) {
            continue;
        }
        take(w, &sn);
        rt_wf_free(w, q);
        bad += !refused_any(w, rec, &sn, "free", q);
        take(w, &sn);
        bad += !TL_CHECK(rt_wf_usable_size(w, q) == 0u, "%s: usable_size of an interior pointer", name);
        bad += !refused_any(w, rec, &sn, "usable_size", q);
        take(w, &sn);
        bad += !TL_CHECK(rt_wf_realloc(w, q, 10) == NULL, "%s: realloc of an interior pointer", name);
        rec->count = rec->count > 0u ? rec->count : 0u;
        /* realloc's refusal counts a failure too: compare what matters */
        size_t changed = 0;
        for (size_t i = 0; i < sn.n; i++) {
            changed += rt_wf_counter(w, i) != sn.counter[i];
        }
        bad += !TL_CHECK(rec->count == 1u && changed == 0u, "%s: realloc(%p) %lu reports, %zu counters changed", name,
                         (void *)q, rec->count, changed);
        tl_recorder_reset(rec);
    }
    bad += !TL_CHECK(tl_verify(m, n, align) == n && rt_wf_usable_size(w, m) >= n && rec->count == 0u,
                     "%s: the memalign block intact and its own", name);
    TL_CHECK(bad == 0u, "%s: memalign(%zu, %zu): %lu interior pointers accepted", name, align, n, bad);
}

static void test_interior(void)
{
    static const size_t aligns[] = {8, 16, 32, 64, 128, 256, 1024};
    static const size_t sizes[] = {1, 20, 100, 700};
    for (size_t v = 0; v < NVARIANTS; v++) {
        const wf_variant_t *va = &variants[v];
        rt_wf_t *w = split(9, va->node, va->flags);
        if (!TL_CHECK(w != NULL, "interior %s: create", va->name)) {
            continue;
        }
        tl_recorder_t rec = {0, RT_ERR_NONE, NULL, NULL, false};
        rt_wf_set_handler(w, tl_record, &rec);
        for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                unsigned char *m = rt_wf_memalign(w, aligns[a], sizes[z]);
                if (!TL_CHECK(m != NULL && (uintptr_t)m % aligns[a] == 0u, "%s: memalign(%zu, %zu)", va->name,
                              aligns[a], sizes[z])) {
                    continue;
                }
                tl_fill(m, sizes[z], aligns[a]);
                interior_sweep(w, &rec, m, sizes[z], aligns[a], va->name);
                rt_wf_free(w, m);
                TL_CHECK(rec.count == 0u, "%s: the owner's free of memalign(%zu, %zu) reported %s", va->name, aligns[a],
                         sizes[z], tl_kind_name(rec.last));
                tl_recorder_reset(&rec);
            }
        }
        /* a stale pointer at the data start of a chunk that memalign reused: q, freed, then the
         * same chunk (leftmost of its height) taken by memalign(64, 100) */
        snapshot_t sn;
        unsigned char *q = rt_wf_malloc(w, 100 + 64 - 4);
        rt_wf_free(w, q);
        unsigned char *m = rt_wf_memalign(w, 64, 100);
        if (TL_CHECK(q != NULL && m != NULL && q < m && m < q + 64, "%s: memalign reuses the freed chunk", va->name)) {
            tl_fill(m, 100, 9);
            take(w, &sn);
            rt_wf_free(w, q);
            refused_any(w, &rec, &sn, "stale free", q);
            take(w, &sn);
            TL_CHECK(rt_wf_usable_size(w, q) == 0u, "%s: usable_size(stale)", va->name);
            refused_any(w, &rec, &sn, "stale usable_size", q);
            TL_CHECK(rt_wf_realloc(w, q, 10) == NULL && rec.count == 1u, "%s: realloc(stale) refused", va->name);
            tl_recorder_reset(&rec);
            TL_CHECK(tl_verify(m, 100, 9) == 100u && rt_wf_usable_size(w, m) >= 100u, "%s: the reuser's block intact",
                     va->name);
            rt_wf_free(w, m);
            TL_CHECK(rec.count == 0u, "%s: the reuser's free reported %s", va->name, tl_kind_name(rec.last));
            tl_recorder_reset(&rec);
        }
        /* the other way round: an old memalign pointer into a chunk reused by malloc, then by a
         * memalign of another alignment */
        unsigned char *m1 = rt_wf_memalign(w, 32, 130);
        rt_wf_free(w, m1);
        unsigned char *p = rt_wf_malloc(w, 130 + 32 - 4);
        if (TL_CHECK(m1 != NULL && p != NULL && p < m1 && m1 < p + 32, "%s: malloc reuses the memalign chunk",
                     va->name)) {
            take(w, &sn);
            rt_wf_free(w, m1);
            refused_any(w, &rec, &sn, "stale memalign free", m1);
            rt_wf_free(w, p);
            TL_CHECK(rec.count == 0u, "%s: the reuser's free reported", va->name);
            tl_recorder_reset(&rec);
        }
        unsigned char *m2 = rt_wf_memalign(w, 8, 150);
        rt_wf_free(w, m2);
        unsigned char *m3 = rt_wf_memalign(w, 64, 94);
        if (TL_CHECK(m2 != NULL && m3 != NULL && m2 != m3, "%s: memalign reuses a memalign chunk", va->name)) {
            take(w, &sn);
            rt_wf_free(w, m2);
            refused_any(w, &rec, &sn, "stale memalign free after memalign", m2);
            rt_wf_free(w, m3);
            TL_CHECK(rec.count == 0u, "%s: the reuser's free reported", va->name);
            tl_recorder_reset(&rec);
        }
        TL_CHECK(rt_wf_check(w) && rec.count == 0u, "%s: intact after the interior pointers", va->name);
        rt_stats_t st;
        rt_wf_stats(w, &st);
        TL_CHECK(st.used_blocks == 0u && st.used_bytes == 0u, "%s: every block freed by its owner", va->name);
    }
}

/* --- an overflow into the metadata (doc/hardening.md) -----------------------------------------------
 *
 * For every variant, chunk heights 0..2 (the request fills the chunk's usable bytes), victims at
 * three positions (so that the nodes before and after are a live neighbour's root, an internal
 * node, a neighbour's first node or a parent), with the other chunks live or freed: one byte at
 * 1..16 past the end or 1..16 before the start of the victim's usable area becomes each single
 * bit flip, 0x00, 0xFF and four random bytes. Then free of the victim, of every other block,
 * mallocs of several heights until the tree is full, reallocs, free of everything, the same
 * again, and check. Pass: no two live blocks overlap (shadow list; a block whose free was refused
 * stays live), every block's data intact, the guard zones around the tree untouched, no fault,
 * and the corruption reported -- by the victim's own free when it hit its length word, canary or
 * counter (that free refused); by the end when it hit the previous node's counter, a live
 * neighbour's canary or a live neighbour's length word (the leaves are allocated first after the
 * frees, so every free node's counter is passed by a malloc before anything else reuses it).
 * Bytes that are no metadata the allocator will act on (a free node's padding in the variants
 * that never read it, a free chunk's stale length word, node bytes no one reads, a neighbour's
 * data) need no report, but the same safety. */

#define OV_GUARD 256u
#define OV_MAXLIVE 512u
static unsigned char ov_arena[OV_GUARD + (64u << 10) + OV_GUARD] __attribute__((aligned(4096)));

typedef struct ov_block {
    unsigned char *p;
    size_t n;
    uint64_t id;
} ov_block_t;

typedef struct ov_state {
    rt_wf_t *w;
    tl_recorder_t rec;
    ov_block_t live[OV_MAXLIVE];
    size_t nlive;
    unsigned char *lo, *hi;   /* the tree */
    const unsigned char *hit; /* the corrupted byte (not checked in data) */
    uint64_t next_id;
    uint64_t frees; /* stats.frees as last seen */
    unsigned long overlaps, outside, damaged;
} ov_state_t;

static size_t ov_verify(const ov_state_t *st, const ov_block_t *b)
{
    for (size_t j = 0; j < b->n; j++) {
        if (b->p + j != st->hit && b->p[j] != tl_pattern_byte(b->id, j)) {
            return j;
        }
    }
    return b->n;
}

/* A block malloc, realloc or memalign just returned: inside the tree, overlapping no live one. */
static void ov_add(ov_state_t *st, unsigned char *p, size_t n)
{
    if (p < st->lo || p + n > st->hi) {
        st->outside++;
        return;
    }
    for (size_t i = 0; i < st->nlive; i++) {
        const ov_block_t *b = &st->live[i];
        if (p < b->p + b->n && b->p < p + n) {
            st->overlaps++;
            return;
        }
    }
    if (st->nlive < OV_MAXLIVE) {
        ov_block_t *b = &st->live[st->nlive++];
        *b = (ov_block_t){p, n, st->next_id++};
        tl_fill(p, n, b->id);
    }
}

/* Frees live block i; false (and the block stays live) when the free was refused -- it did not
 * count as a free (a free may also complete and report damage it met elsewhere). */
static bool ov_free(ov_state_t *st, size_t i)
{
    ov_block_t *b = &st->live[i];
    st->damaged += ov_verify(st, b) != b->n;
    unsigned long reports = st->rec.count;
    rt_wf_free(st->w, b->p);
    if (st->rec.count == reports) {
        st->frees++;
    } else {
        rt_stats_t now;
        rt_wf_stats(st->w, &now);
        bool done = now.frees != st->frees;
        st->frees = now.frees;
        if (!done) {
            return false;
        }
    }
    *b = st->live[--st->nlive];
    return true;
}

static void ov_free_all(ov_state_t *st)
{
    for (size_t i = st->nlive; i-- > 0u;) { /* from the end: a refused block keeps its slot */
        ov_free(st, i);
    }
}

static void ov_fill_up(ov_state_t *st, size_t node, unsigned top, tl_rng_t *r)
{
    unsigned fails = 0;
    for (unsigned it = 0; it < 600u && fails < 12u && st->nlive < OV_MAXLIVE; it++) {
        unsigned s = (unsigned)tl_range(r, 0, top);
        size_t lo = s == 0u ? 1u : rt_wf_usable(node, s - 1u) + 1u;
        size_t n = tl_range(r, lo, rt_wf_usable(node, s));
        unsigned char *p = rt_wf_malloc(st->w, n);
        if (p == NULL) {
            fails++;
            continue;
        }
        ov_add(st, p, n);
    }
}

static void ov_reallocs(ov_state_t *st, tl_rng_t *r)
{
    for (unsigned k = 0; k < 4u && st->nlive > 0u; k++) {
        size_t i = tl_range(r, 0, st->nlive - 1u);
        ov_block_t b = st->live[i];
        size_t n = tl_chance(r, 50) ? b.n / 2u + 1u : b.n * 2u + 1u;
        st->damaged += ov_verify(st, &b) != b.n;
        unsigned char *q = rt_wf_realloc(st->w, b.p, n);
        if (q == NULL) {
            continue; /* refused or out of memory: the old block stays */
        }
        size_t keep = b.n < n ? b.n : n;
        for (size_t j = 0; j < keep; j++) {
            if (b.p + j != st->hit && q[j] != tl_pattern_byte(b.id, j)) {
                st->damaged++;
                break;
            }
        }
        st->live[i] = st->live[--st->nlive];
        ov_add(st, q, n);
    }
    rt_stats_t now;
    rt_wf_stats(st->w, &now); /* a moving realloc counts a free */
    st->frees = now.frees;
}

typedef struct ov_tally {
    unsigned long cases, unchanged, reported, silent_ok, missed, unsafe;
} ov_tally_t;

/* One case. where > 0: the byte `where` past the end of the usable area; < 0: before the start. */
static void ov_case(const wf_variant_t *va, unsigned s, unsigned victim, bool neighbours_live, int where, unsigned vk,
                    ov_tally_t *tally)
{
    static ov_state_t st;
    unsigned height = s + 4u;
    size_t bytes = (((size_t)2 << height) - 1u) * va->node;
    unsigned char *treep = ov_arena + OV_GUARD;
    memset(ov_arena, 0xA5, OV_GUARD);
    memset(treep + bytes, 0xA5, OV_GUARD);
    rt_wf_config_t cfg = {va->node, va->flags};
    memset(&st, 0, sizeof st);
    st.w = rt_wf_create_split(control, treep, bytes, &cfg);
    if (!TL_CHECK(st.w != NULL, "overflow %s: create", va->name)) {
        return;
    }
    rt_wf_set_handler(st.w, tl_record, &st.rec);
    st.lo = treep;
    st.hi = treep + bytes;
    st.next_id = 1;
    size_t usable = rt_wf_usable(va->node, s);
    for (unsigned k = 0; k < 8u; k++) {
        unsigned char *p = rt_wf_malloc(st.w, usable);
        if (!TL_CHECK(p != NULL, "overflow %s: set-up malloc", va->name)) {
            return;
        }
        ov_add(&st, p, usable);
    }
    unsigned char *vp = st.live[victim].p;
    if (!neighbours_live) {
        for (size_t i = st.nlive; i-- > 0u;) {
            if (st.live[i].p != vp) {
                ov_free(&st, i);
            }
        }
    }
    /* the node after the victim's root starts the next chunk when the victim is a left child */
    bool next_is_live_first = neighbours_live && (victim % 2u) == 0u;
    unsigned char *at = where > 0 ? vp + usable + (size_t)where - 1u : vp - (size_t)(-where);
    unsigned char old = *at;
    unsigned char value;
    tl_rng_t r = tl_rng_seed(0xC0FFEEu ^ ((uint64_t)vk << 8) ^ ((uint64_t)(where + 32) << 16) ^ ((uint64_t)s << 24) ^
                             ((uint64_t)victim << 28) ^ ((uint64_t)neighbours_live << 31));
    if (vk < 8u) {
        value = (unsigned char)(old ^ (1u << vk));
    } else if (vk == 8u) {
        value = 0x00;
    } else if (vk == 9u) {
        value = 0xFF;
    } else {
        value = (unsigned char)tl_next(&r);
    }
    tally->cases++;
    if (value == old) {
        tally->unchanged++;
        return;
    }
    *at = value;
    st.hit = at;
    tl_recorder_reset(&st.rec);

    /* the victim's own free first */
    size_t vi = 0;
    while (st.live[vi].p != vp) {
        vi++;
    }
    bool own = (where < 0 && where >= -4) || (where > 0 && where <= 8);
    bool freed = ov_free(&st, vi);
    unsigned long at_free = st.rec.count;
    ov_free_all(&st);
    ov_fill_up(&st, va->node, 0u, &r); /* leaves first: every free node's counter is passed */
    ov_fill_up(&st, va->node, s + 1u, &r);
    ov_reallocs(&st, &r);
    ov_free_all(&st);
    ov_fill_up(&st, va->node, s + 2u, &r);
    ov_free_all(&st);
    bool hints = (va->flags & RT_WF_HINTS) != 0u;
    rt_wf_check_ex(st.w, hints ? RT_WF_CHECK_HINTS : 0u);
    size_t guard_bad = 0;
    for (size_t j = 0; j < OV_GUARD; j++) {
        guard_bad += ov_arena[j] != 0xA5u || treep[bytes + j] != 0xA5u;
    }
    /* the node before the victim is a live neighbour's root when the victim is a right child */
    bool prev_is_live_root = neighbours_live && (victim % 2u) == 1u;
    bool must = own || (where >= -8 && where <= -5) || (where >= -12 && where <= -9 && prev_is_live_root) ||
                (where >= 9 && where <= 12 && next_is_live_first);
    bool safe = st.overlaps == 0u && st.outside == 0u && guard_bad == 0u && st.damaged == 0u;
    bool ok_report = own ? (!freed && at_free > 0u) : (!must || st.rec.count > 0u);
    if (!safe) {
        tally->unsafe++;
    }
    if (!ok_report) {
        tally->missed++;
    }
    if (st.rec.count > 0u) {
        tally->reported++;
    } else {
        tally->silent_ok++;
    }
    if (!safe || !ok_report) {
        TL_CHECK(false,
                 "overflow %s: height %u, victim %u, neighbours %s, byte %s%d, 0x%02x -> 0x%02x: %lu overlaps, %lu "
                 "outside, %zu guard bytes, %lu blocks damaged, %lu reports (%lu at the victim's free, freed %d)",
                 va->name, s, victim, neighbours_live ? "live" : "free", where > 0 ? "+" : "", where, old, value,
                 st.overlaps, st.outside, guard_bad, st.damaged, st.rec.count, at_free, (int)freed);
    }
}

static void test_overflow(void)
{
    if (RT_HARDENING < 1) {
        tl_skip("overflow: RT_HARDENING 0 keeps the paper's unprotected metadata");
        return;
    }
    ov_tally_t all = {0, 0, 0, 0, 0, 0};
    for (size_t v = 0; v < NVARIANTS; v++) {
        ov_tally_t t = {0, 0, 0, 0, 0, 0};
        for (unsigned s = 0; s <= 2u; s++) {
            for (unsigned victim = 1; victim <= 3u; victim++) {
                for (int live = 0; live < 2; live++) {
                    for (int where = -16; where <= 16; where++) {
                        if (where == 0) {
                            continue;
                        }
                        for (unsigned vk = 0; vk < 14u; vk++) {
                            ov_case(&variants[v], s, victim, live != 0, where, vk, &t);
                        }
                    }
                }
            }
        }
        printf("overflow  %-8s %lu cases (%lu leave the byte as it was): %lu reported, %lu silent on bytes no one "
               "acts on, %lu missed, %lu unsafe\n",
               variants[v].name, t.cases, t.unchanged, t.reported, t.silent_ok, t.missed, t.unsafe);
        all.cases += t.cases;
        all.missed += t.missed;
        all.unsafe += t.unsafe;
    }
    TL_CHECK(all.missed == 0u && all.unsafe == 0u, "overflow: %lu of %lu cases missed, %lu unsafe", all.missed,
             all.cases, all.unsafe);
}

/* --- configuration ------------------------------------------------------------------------------- */

static void test_config(void)
{
    static unsigned char buf[64u << 10] __attribute__((aligned(64)));
    static const rt_wf_config_t bad[] = {{8, 0}, {48, 0}, {8192, 0}, {64, 0x80u}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TL_CHECK(rt_wf_create(buf, sizeof buf, &bad[i]) == NULL, "create with node size %zu flags %#x",
                 bad[i].node_size, bad[i].flags);
        TL_CHECK(rt_wf_min_buffer(&bad[i]) == SIZE_MAX, "min_buffer of an invalid configuration");
    }
    TL_CHECK(rt_wf_create_split(control + 1, tree, 4096, NULL) == NULL, "misaligned control");
    TL_CHECK(rt_wf_create_split(control, tree, 2u * 64u, NULL) == NULL, "a tree of 2 nodes");
    TL_CHECK(rt_wf_create_split(tree + 64, tree, 4096, NULL) == NULL, "control inside the tree");
    /* a 64 MiB-shaped buffer keeps its full height: 2^(H+1) nodes of buffer -> height H */
    rt_wf_t *w = rt_wf_create(buf, sizeof buf, NULL);
    TL_CHECK(w != NULL && rt_wf_height(w) == 9u && rt_wf_max_request(w) == rt_wf_usable(64, 8),
             "64 KiB of 64-byte nodes: height %u (9), largest request %zu", w != NULL ? rt_wf_height(w) : 0u,
             w != NULL ? rt_wf_max_request(w) : 0u);
    w = rt_wf_create(buf, 1023u * 64u, NULL);
    TL_CHECK(w != NULL && rt_wf_height(w) == 9u, "1023 nodes: height 9");
    w = rt_wf_create(buf, 1023u * 64u - 1u, NULL);
    TL_CHECK(w != NULL && rt_wf_height(w) == 8u, "one byte less: height 8");
    for (size_t b = 16; b <= 4096u; b *= 2u) {
        rt_wf_config_t cfg = {b, RT_WF_HINTS};
        size_t min = rt_wf_min_buffer(&cfg);
        TL_CHECK(min <= sizeof buf && rt_wf_create(buf + 1, min, &cfg) != NULL &&
                     rt_wf_create(buf + 1, min - 1u, &cfg) == NULL,
                 "node size %zu: min_buffer %zu exact at an address 1 past alignment", b, min);
    }
    TL_CHECK(rt_wf_control_size() > 0u && rt_wf_control_align() >= sizeof(size_t), "control size and alignment");
}

int main(void)
{
    test_fig1();
    test_fig2();
    test_layout();
    test_traces();
    test_same_places();
    test_bad_input();
    test_interior();
    test_overflow();
    test_config();
    return tl_summary("wf_unit");
}
