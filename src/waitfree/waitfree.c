/* SPDX-License-Identifier: MIT */
/*
 * waitfree.c -- the wait-free buddy tree (rtalloc/waitfree.h; Stellwag, Krainz and
 * Schroeder-Preikschat 2010; doc/allocators.md, "Wait-free buddy tree").
 *
 * Algorithm (paper 3.1-3.2). A complete binary tree of N = 2^(H+1) - 1 nodes of B bytes in
 * post-order: node (h, k) -- height h, k-th from the left at that height -- has its leftmost leaf
 * j = k 2^h at index 2j - popcount(j), and its own index is that plus 2^(h+1) - 2; its right child
 * is the index just below it, its left child 2^h below it, and its parent 1 above it (a right
 * child) or 2^(h+1) above it (a left child). Every node's counter c(n) satisfies, at every
 * moment (paper eq. 3),
 *
 *     c(n) + |allocated leaves below n| + sum of the sizes of the requests inside n = 2^h(n)
 *
 * where a malloc is "inside" n from its decrement of c(n) until it leaves n again (failure: it
 * adds its size back) or for ever (success), and a free is inside n from the increment of the
 * chunk's root until its increment of c(n). A request of height s has size S = 2^s leaves:
 *
 *   try(n):  if not decr(c(n), S): fail          decr(c, S): old = FAA(c, -S)
 *            if h(n) = s: n is ours (c(n): S->0)             if old >= S: true
 *            try(left), then try(right)                      FAA(c, +S); false
 *            FAA(c(n), +S); fail                  -- two fetch-and-adds, never a CAS loop
 *
 * A success at n of height s took c(n) from at least S = 2^s to 0: by eq. 3 nothing below n was
 * allocated and no request was inside, and none can enter until n is freed -- so chunks never
 * overlap, and a node's counter is touched only by requests holding a decrement on its parent,
 * i.e. never inside a live chunk (paper 3.4.1). Release (Fig. 4): re-initialise the counters
 * below the chunk's root (nobody can be there), then FAA(+S) on the root and every ancestor,
 * bottom-up; the root's increment publishes the re-initialisation (release / acquire).
 *
 * Node metadata: `length` (first word, u32, only meaningful in a chunk's first node), `padding`
 * (u32, second-to-last word) and `counter` (i32, last word). The padding word of a live chunk's
 * root is its canary; of a free node it holds our hints (RT_WF_HINTS) and the pristine flag
 * (RT_WF_LAZY_REINIT); the baseline leaves it alone. The length word is a tag: 001 in bits 0-2,
 * the height in bits 3-7, the state in bits 8-10 (allocated, allocated by memalign, freed,
 * control) and 21 check bits hashed from the node's index, the height, the state and the
 * instance, so a pointer whose first node does not start a chunk of that height, a freed chunk
 * and a word overwritten by the caller are told apart.
 *
 * A block is identified by the pointer malloc or memalign returned, never by its chunk alone: a
 * memalign chunk's length word says so (state ALIGNED) and its data-start word records the
 * returned pointer's offset o (keyed), beside the keyed offset word at pointer - 4 that leads free
 * from the pointer back to the chunk (the same word when o = 4). free, realloc and usable_size
 * accept the data start of an ALLOC chunk, and of an ALIGNED chunk exactly the pointer whose
 * offset word and record agree: the chunk start of an aligned block, a stale pointer to the data
 * start of a chunk a later memalign reused, or any other interior pointer is refused.
 *
 * The claim. A free's checks only read; the chunk becomes the free's by one compare-and-swap of
 * its length word from the live tag the check read to FREED (wf_len_claim, wf_tree.h), and only
 * then is it released. Two frees of one chunk (a double free on two threads) cannot both release
 * it -- the counters of its path would be incremented twice, and the chunk handed out twice: one
 * claim wins, the other free reports DOUBLE_FREE. The states a free can claim (ALLOC, ALIGNED) are
 * entered by release stores only (a hand-out, a cache's pop); the others are left only by the
 * chunk's holder. No retry: the claim is one attempt, and a check that saw the chunk change under
 * it is repeated once at most (wf_validate).
 *
 * Hardening (RT_HARDENING >= 1; doc/design.md, "Hardening model": the application's overflow is bad
 * input). The in-band metadata within 16 bytes of a block's data are: before it, its own length
 * word and the previous
 * node's counter and padding (the root of the subtree just left of the chunk: free, internal or a
 * live neighbour's root); after it, its root's canary and counter and the next node's length word.
 * Length words and canaries are checked by every free (tags, keyed). A counter is read and
 * trusted by every malloc that passes, so each counter word holds an arithmetic code of its value
 * (an AN code) and of its node's place: word = WF_CB + (c + P(i)) * WF_CK (mod 2^32), c = (word -
 * WF_CB) * WF_CKINV - P(i), P(i) = i * golden ratio (wf_tree.h, WF_CPLACE; a counter word copied
 * from another node -- an overrun's memcpy from another block's end -- is off by P(j) - P(i)
 * there, as far out of range as a random word), and every value read (the old value of each
 * decrement, the new value of each increment, the root's value at free) must lie in the node's
 * range [-2^(h+10), 2^h]. Fetch-and-add of +-S * WF_CK keeps the
 * code (it is linear), so the algorithm and its step counts are unchanged. WF_CKINV is chosen so
 * that any change of one byte of a counter word moves the decoded value by at least 1.52 * 2^23:
 * a one-byte write (any value, any byte) into a counter can never make it larger and still in
 * range for h <= 23 (the only change that could let a malloc into used memory), and is out of
 * range below for h <= 13; WF_CB makes the words of one repeated byte (0x00, 0xFF, ...) decode
 * beyond +-2^25. Several bytes of any value pass with probability about 2^(h+1) / 2^32. The
 * padding word of a free node (hints and the pristine flag, read by the lazy and hint variants)
 * carries its 16-bit payload twice, the copy keyed by the node's index, so any change inside one
 * half is seen; a live root's canary is never a valid free padding. A malloc that meets a
 * counter or padding out of its code undoes what it holds and is refused (CORRUPTED) -- the
 * read-only descent, whose reads may race with a new chunk's data, first verifies such a value
 * under decrements of its path (wf_verify); a free or moving realloc first checks the counters
 * (and hints) of the ancestors it will increment (wf_path_intact) and is refused if one is out of
 * its code. Should damage appear during a free after that (a concurrent write), the free
 * completes, rewrites a damaged hint and reports. Nothing is trusted before it is checked, so an
 * overflow can make a call fail or leak the damaged subtree, but never hand out memory that
 * overlaps a live block. At RT_HARDENING 0 the three constants are 1, 1, 0 and the checks
 * compile away: the paper's words.
 *
 * The variants (rtalloc/waitfree.h): read-only descent (wf_find, wf_claim), lazy
 * re-initialisation (wf_unpristine), hints (wf_try's order, wf_hints_*). Bounds as in the header;
 * every loop here states its own. Memory orders: a decrement is acquire (it may read what the
 * last release published: re-initialisation, the pristine flag), an increment release, the undo
 * of a failed decrement relaxed (it only restores the value; RMWs continue release sequences);
 * hints and statistics are relaxed (advice and counts, nothing is published through them).
 *
 * Freestanding C11 + <stdatomic.h>: 32-bit atomic_int counters (lock-free on every target of
 * tools/cross-check.sh) and size_t-wide statistics. No libc beyond what the compiler may call
 * (memset/memcpy through builtins), no globals, no thread-local state.
 *
 * RT_WF_STEP(wf, step, node), empty by default, is called before every atomic step on shared
 * tree state (step: 1 decrement, 2 undo of a failed decrement, 3 increment, 4 read of a counter or
 * padding word another call may change, 8 a free's read of a length word, 9 its claim, 10 the
 * store of a live tag; node: its post-order index): a test build defines it to hand control to a
 * scheduler and so force interleavings (tests/stress/wf_interleave.c). RT_WF_TOUCH (wf_tree.h) likewise
 * lets a test count the nodes whose words a call reads or writes (tests/unit/wf_touch.c).
 */
#include <limits.h>
#include <stdatomic.h>

#include "front/front.h"
#include "rtalloc/waitfree.h"
#include "waitfree/wf_tree.h"

size_t rt_wf_index(const rt_wf_t *w, unsigned h, size_t k)
{
    (void)w;
    size_t j = k << h;
    size_t first = 2u * j - (size_t)__builtin_popcountll((unsigned long long)j);
    return first + wf_subtree(h) - 1u;
}

/* Height and position of the node at index r: a descent from the root, O(H), no memory access.
 * False when r is not an index of the tree. */
static bool wf_locate(const rt_wf_t *w, size_t r, unsigned *h_out, size_t *k_out)
{
    if (r >= w->nodes) {
        return false;
    }
    size_t cur = w->nodes - 1u, k = 0;
    unsigned h = w->height;
    while (cur != r) { /* at most H iterations: h decreases */
        if (h == 0u) {
            return false;
        }
        size_t left = cur - wf_pow2(h);
        if (r <= left) {
            cur = left;
            k = 2u * k;
        } else {
            cur = cur - 1u;
            k = 2u * k + 1u;
        }
        h--;
    }
    *h_out = h;
    *k_out = k;
    return true;
}

/* --- one call ----------------------------------------------------------------------------------- */

typedef struct wf_call {
    rt_wf_t *w;
    unsigned s;       /* the request's height */
    int S;            /* its size in leaves, 2^s */
    rt_wf_trace_t *t; /* never NULL */
    bool bad;         /* a counter or padding word out of its code was met (RT_HARDENING >= 1) */
} wf_call_t;

/* The paper's atomic_decr on node i of height h: succeeds iff c >= amount, by two fetch-and-adds.
 * *old receives the value the first one found. A value outside the node's range is damage: the
 * decrement is undone as a failed one and the call marked bad. */
static inline bool wf_decr_old(wf_call_t *c, size_t i, unsigned h, int amount, int *old_out)
{
    atomic_uint *ctr = wf_counter(c->w, i);
    RT_WF_STEP(c->w, WF_STEP_DECR, i);
    int old = wf_dec(i, atomic_fetch_sub_explicit(ctr, wf_delta(amount), memory_order_acquire));
    c->t->rmw++;
    *old_out = old;
    bool ok = wf_ctr_ok(old, h);
    if (old >= amount && ok) {
        return true;
    }
    c->bad = c->bad || !ok;
    RT_WF_STEP(c->w, WF_STEP_UNDO, i);
    atomic_fetch_add_explicit(ctr, wf_delta(amount), memory_order_relaxed);
    c->t->rmw++;
    return false;
}

/* The paper's atomic_incr on node i of height h; returns the new value (checked: out of range
 * marks the call bad). */
static inline int wf_incr(wf_call_t *c, size_t i, unsigned h, int amount)
{
    RT_WF_STEP(c->w, WF_STEP_INCR, i);
    int now = wf_dec(i, atomic_fetch_add_explicit(wf_counter(c->w, i), wf_delta(amount), memory_order_release) +
                            wf_delta(amount));
    c->t->rmw++;
    if (!wf_ctr_ok(now, h)) {
        c->bad = true;
    }
    return now;
}

/* Padding of node i, read while we hold a decrement on it (or our leaves keep it from being
 * allocated), so it is a free node's: a word out of its code is damage (the call marked bad, the
 * payload taken as 0: not pristine, no hints). */
static inline uint32_t wf_pad_read(wf_call_t *c, size_t i)
{
    uint32_t pad = wf_pad_load(c->w, i);
    if (!wf_pad_valid(c->w, i, pad)) {
        c->bad = true;
        return 0u;
    }
    return pad & WF_PAD_PAYLOAD;
}

/* Rewrites one side of node i's hint (we hold a decrement on i, or our leaves still keep it from
 * being allocated): re-read just before, and stored only when it changes, so that overlapping
 * calls rarely overwrite each other's side with a stale copy. A damaged word is reported (bad)
 * and rewritten whole: the node lies on our path, so it is not pristine, and a hint is only an
 * order. Returns the new payload. */
static inline uint32_t wf_hint_update(wf_call_t *c, size_t i, unsigned side, unsigned f)
{
    uint32_t raw = atomic_load_explicit(wf_pad(c->w, i), memory_order_relaxed);
    bool valid = wf_pad_valid(c->w, i, raw);
    uint32_t old = valid ? raw & WF_PAD_PAYLOAD : 0u;
    uint32_t pad = wf_hint_set(old, side, f);
    if (!valid) {
        c->bad = true;
    }
    if (pad != old || !valid) {
        wf_pad_store(c->w, i, pad);
    }
    return pad;
}

static inline void wf_stat_add(rt_wf_trace_t *t, atomic_size_t *a, size_t v)
{
    atomic_fetch_add_explicit(a, v, memory_order_relaxed);
    t->stat_rmw++;
}

/* Raises *m to v: at most two compare-and-swap attempts (wait-free; under overlap a raise can be
 * lost when both attempts meet another caller's raise). */
static void wf_stat_raise(rt_wf_trace_t *t, atomic_size_t *m, size_t v)
{
    size_t cur = atomic_load_explicit(m, memory_order_relaxed);
    for (unsigned attempt = 0; attempt < 2u && cur < v; attempt++) {
        t->stat_rmw++;
        if (atomic_compare_exchange_strong_explicit(m, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
            break;
        }
    }
}

void wf_report(rt_wf_t *w, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr, size_t size)
{
    atomic_fetch_add_explicit(&w->errors, 1u, memory_order_relaxed);
    if (refused) {
        atomic_fetch_add_explicit(&w->failures, 1u, memory_order_relaxed);
    }
    rt_error_deliver(w->handler, w->handler_context, kind, operation, ptr, size);
}

/* The tree as the allocator front sees it (front/front.h). */
static void *wf_front_malloc(void *w, size_t size) { return rt_wf_malloc(w, size); }
static void wf_front_free(void *w, void *ptr) { rt_wf_free(w, ptr); }
static void wf_front_report(void *w, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                            size_t size)
{
    wf_report(w, refused, kind, operation, ptr, size);
}
static size_t wf_front_max(const void *w) { return ((const rt_wf_t *)w)->max_request; }
static const rt_front_ops_t wf_front = {wf_front_malloc, wf_front_free, wf_front_report, wf_front_max};

/* --- lazy re-initialisation (paper section 5) ------------------------------------------------------
 *
 * A pristine node n (padding flag, set by a lazy free before the release increment of c(n)) is
 * wholly free but the counters below it are stale. The request whose decrement of c(n) found the
 * whole 2^h (old == 2^h: nobody else inside n) is the one that initialises it: it writes n's
 * children (counters 2^(h-1), pristine themselves) and clears the flag with a release store --
 * before it ever leaves n, so no other request can find old == 2^h while the flag is still set.
 * A request that entered n while the flag is still set (old < 2^h) does not touch the children:
 * it backs out of n (a transient failure of the weak guarantee). The initialiser's 2 child nodes
 * are the only extra work; the flag is read with acquire, so whoever sees it clear sees the
 * children. Returns false when the caller must back out. */
static bool wf_unpristine(wf_call_t *c, unsigned h, size_t i, int old)
{
    rt_wf_t *w = c->w;
    if (old != wf_leaves(h)) {
        return false;
    }
    c->t->inits++;
    unsigned hc = h - 1u;
    uint32_t child_pad = hc > 0u ? WF_PRISTINE | wf_allfree(hc) : 0u;
    size_t children[2] = {i - wf_pow2(h), i - 1u};
    for (unsigned side = 0; side < 2u; side++) {
        wf_ctr_set(w, children[side], wf_leaves(hc));
        wf_pad_store(w, children[side], child_pad);
    }
    c->t->nodes += 2u;
    atomic_store_explicit(wf_pad(w, i), wf_pad_enc(w, i, wf_allfree(h)), memory_order_release);
    return true;
}

/* --- the paper's recursive try_allocate (Fig. 3), with our hint order ----------------------------
 *
 * Returns the claimed chunk's root or WF_NONE. Each call arrives at one node of height >= s, and
 * a node is arrived at only from its parent after the parent's decrement succeeded, at most once
 * per malloc: nodes <= 2^(H-s+1) - 1. With RT_WF_HINTS the side whose hint promises a fitting
 * free subtree goes first (wf_hint_side); on success *f receives this node's
 * new "1 + largest free height below" and the hint of the side taken is rewritten on the way
 * back (we still hold a decrement on every node of the path, so none of them can be allocated
 * and its padding word is a hint, not a canary). */
static size_t wf_try(wf_call_t *c, unsigned h, size_t i, unsigned *f)
{
    rt_wf_t *w = c->w;
    c->t->nodes++;
    int old = 0;
    if ((w->flags & RT_WF_HINTS) != 0u) {
        /* a load first: a counter that visibly lacks S costs no RMW, and leaves no transient dip
         * (the two fetch-and-adds of a failed decrement) that would turn other requests away */
        RT_WF_STEP(w, WF_STEP_READ, i);
        int seen = wf_dec(i, atomic_load_explicit(wf_counter(w, i), memory_order_relaxed));
        if (!wf_ctr_ok(seen, h)) { /* we hold the parent: this is a free node's counter, damaged */
            c->bad = true;
            return WF_NONE;
        }
        if (seen < c->S) {
            return WF_NONE;
        }
    }
    if (!wf_decr_old(c, i, h, c->S, &old)) {
        return WF_NONE;
    }
    if (h == c->s) {
        *f = 0;
        return i;
    }
    unsigned first = 0;
    if ((w->flags & (RT_WF_LAZY_REINIT | RT_WF_HINTS)) != 0u) {
        uint32_t pad = wf_pad_read(c, i);
        if ((RT_HARDENING >= 1 && c->bad) ||
            ((w->flags & RT_WF_LAZY_REINIT) != 0u && (pad & WF_PRISTINE) != 0u && !wf_unpristine(c, h, i, old))) {
            wf_incr(c, i, h, c->S);
            return WF_NONE;
        }
        if ((w->flags & RT_WF_LAZY_REINIT) != 0u && (pad & WF_PRISTINE) != 0u) {
            pad = wf_allfree(h);
        }
        if ((w->flags & RT_WF_HINTS) != 0u) {
            first = wf_hint_side(pad, c->s);
        }
    }
    for (unsigned n = 0; n < 2u; n++) {
        unsigned side = n == 0u ? first : 1u - first;
        size_t child = side != 0u ? i - 1u : i - wf_pow2(h);
        unsigned fc = 0;
        size_t got = wf_try(c, h - 1u, child, &fc);
        if (got != WF_NONE) {
            if ((w->flags & RT_WF_HINTS) != 0u) {
                *f = wf_hint_max(wf_hint_update(c, i, side, fc));
            }
            return got;
        }
        if (RT_HARDENING >= 1 && c->bad) { /* damage below: back out, the call is refused */
            break;
        }
    }
    wf_incr(c, i, h, c->S);
    return WF_NONE;
}

/* --- read-only descent (paper section 5) -----------------------------------------------------------
 *
 * wf_find walks the tree depth-first reading counters only; at a node of height s whose counter
 * reads >= S (or above a pristine node, whose leftmost descendant of height s is free) it tries
 * wf_claim: decrement every counter of the direct path from the root, top-down, as try_allocate
 * would; a failed decrement undoes the ones made and the walk goes on after the candidate. Each
 * node is read at most once (nodes <= 2^(H-s+1) - 1 reads), each candidate claimed at most once
 * (at most 2^(H-s) claim walks of H-s+1 nodes).
 *
 * The reads are not protected by a decrement: a node read after its parent read "free" can have
 * become part of a chunk just allocated, so the word read may already be the chunk owner's data.
 * The value only chooses a candidate -- the claim re-checks every counter with a decrement it
 * holds -- so the race is benign; the read is a plain aligned 32-bit load that ThreadSanitizer
 * is told to ignore. */
#if defined(__GNUC__) || defined(__clang__)
#define WF_BENIGN_RACE __attribute__((no_sanitize("thread")))
#else
#define WF_BENIGN_RACE
#endif

WF_BENIGN_RACE static uint32_t wf_peek(const rt_wf_t *w, size_t i, const void *word)
{
    RT_WF_STEP(w, WF_STEP_READ, i);
    return *(const volatile uint32_t *)word;
}

typedef struct wf_frame {
    size_t i;
    unsigned h;
    unsigned state; /* 0: not yet read; 1: first child pushed; 2: second child pushed */
    unsigned first; /* side tried first */
} wf_frame_t;

/* Claims path[0..len-1] (root first, the candidate last, heights path_h). */
static bool wf_claim(wf_call_t *c, const size_t *path, const unsigned *path_h, unsigned len)
{
    rt_wf_t *w = c->w;
    c->t->claims++;
    for (unsigned j = 0; j < len; j++) { /* at most H - s + 1 nodes */
        c->t->nodes++;
        int old = 0;
        bool ok = wf_decr_old(c, path[j], path_h[j], c->S, &old);
        if (ok && j + 1u < len && (w->flags & RT_WF_LAZY_REINIT) != 0u) {
            uint32_t pad = wf_pad_read(c, path[j]);
            if ((RT_HARDENING >= 1 && c->bad) ||
                ((pad & WF_PRISTINE) != 0u && !wf_unpristine(c, path_h[j], path[j], old))) {
                wf_incr(c, path[j], path_h[j], c->S);
                ok = false;
            }
        }
        if (!ok) {
            while (j-- > 0u) {
                wf_incr(c, path[j], path_h[j], c->S);
            }
            return false;
        }
    }
    return true;
}

/* After a successful claim of path[len-1]: rewrite the hint of the side taken at every node of
 * the path, bottom-up (RT_WF_HINTS). We hold a decrement on each of them. */
static void wf_hints_after_claim(wf_call_t *c, const size_t *path, unsigned len)
{
    unsigned f = 0;
    for (unsigned j = len - 1u; j-- > 0u;) {
        unsigned side = path[j + 1u] == path[j] - 1u ? 1u : 0u;
        f = wf_hint_max(wf_hint_update(c, path[j], side, f));
    }
}

/* RT_HARDENING >= 1: node path[len-1] read out of range by wf_find. The path is claimed as
 * wf_claim would (if an ancestor lacks S the walk stops: nothing is learnt), so the node's own
 * decrement is checked while we hold its parent -- a value out of range is then damage, not a
 * race -- and whatever was taken is given back. True iff damage was found (c->bad). At most one
 * claim walk: H - s + 1 nodes, 3 (H - s + 1) RMWs, once per call. */
static bool wf_verify(wf_call_t *c, const size_t *path, const unsigned *path_h, unsigned len)
{
    if (RT_HARDENING < 1) {
        return false;
    }
    if (wf_claim(c, path, path_h, len)) { /* it read in range after all: give everything back */
        for (unsigned j = len; j-- > 0u;) {
            wf_incr(c, path[j], path_h[j], c->S);
        }
    }
    return c->bad;
}

static size_t wf_find(wf_call_t *c)
{
    rt_wf_t *w = c->w;
    wf_frame_t st[RT_WF_MAX_HEIGHT + 2];
    size_t path[RT_WF_MAX_HEIGHT + 2];
    unsigned path_h[RT_WF_MAX_HEIGHT + 2];
    unsigned top = 0;
    bool verified = false;
    st[0] = (wf_frame_t){w->nodes - 1u, w->height, 0u, 0u};
    for (;;) { /* each iteration reads a node or moves the walk; at most 3 N iterations */
        wf_frame_t *fr = &st[top];
        if (fr->state == 0u) {
            c->t->nodes++;
            int x = wf_dec(fr->i, wf_peek(w, fr->i, wf_counter(w, fr->i)));
            bool candidate = false;
            unsigned len = top + 1u;
            if (!wf_ctr_ok(x, fr->h) && !verified) {
                /* out of range: damage, or a racy read of a new chunk's data. The first time in a
                 * call it is verified under decrements of the path (wf_verify); after that, and
                 * when the read was a race, the node is passed over */
                verified = true;
                for (unsigned j = 0; j <= top; j++) {
                    path[j] = st[j].i;
                    path_h[j] = st[j].h;
                }
                if (wf_verify(c, path, path_h, len)) {
                    return WF_NONE;
                }
            }
            if (x >= c->S && wf_ctr_ok(x, fr->h)) {
                if (fr->h == c->s) {
                    candidate = true;
                } else {
                    uint32_t pad =
                        (w->flags & (RT_WF_LAZY_REINIT | RT_WF_HINTS)) != 0u ? wf_peek(w, fr->i, wf_pad(w, fr->i)) : 0u;
                    pad = wf_pad_valid(w, fr->i, pad) ? pad & WF_PAD_PAYLOAD : 0u;
                    if ((w->flags & RT_WF_LAZY_REINIT) != 0u && (pad & WF_PRISTINE) != 0u) {
                        /* wholly free: its leftmost descendant of height s, no more reads */
                        size_t i = fr->i;
                        for (unsigned h = fr->h; h > c->s; h--) {
                            i -= wf_pow2(h);
                            path[len] = i;
                            path_h[len] = h - 1u;
                            len++;
                        }
                        candidate = true;
                    } else {
                        fr->first = (w->flags & RT_WF_HINTS) != 0u ? wf_hint_side(pad, c->s) : 0u;
                        fr->state = 1u;
                        st[top + 1u] =
                            (wf_frame_t){fr->first != 0u ? fr->i - 1u : fr->i - wf_pow2(fr->h), fr->h - 1u, 0u, 0u};
                        top++;
                        continue;
                    }
                }
            }
            if (candidate) {
                for (unsigned j = 0; j <= top; j++) { /* the direct path: the walk's stack */
                    path[j] = st[j].i;
                    path_h[j] = st[j].h;
                }
            }
            if (candidate && wf_claim(c, path, path_h, len)) {
                if ((w->flags & RT_WF_HINTS) != 0u) {
                    wf_hints_after_claim(c, path, len);
                }
                return path[len - 1u];
            }
            if (RT_HARDENING >= 1 && c->bad) { /* the claim met damage: refused */
                return WF_NONE;
            }
            fr->state = 2u; /* nothing (more) here: pop below */
        } else if (fr->state == 1u) {
            fr->state = 2u;
            unsigned side = 1u - fr->first;
            st[top + 1u] = (wf_frame_t){side != 0u ? fr->i - 1u : fr->i - wf_pow2(fr->h), fr->h - 1u, 0u, 0u};
            top++;
            continue;
        }
        if (top == 0u) {
            return WF_NONE;
        }
        top--;
    }
}

/* --- allocation --------------------------------------------------------------------------------- */

size_t rt_wf_usable(size_t node_size, unsigned height) { return wf_subtree(height) * node_size - RT_WF_OVERHEAD; }

unsigned wf_height_for(const rt_wf_t *w, size_t size)
{
    /* k nodes hold size bytes iff k B - 12 >= size; the chunk has 2^(s+1) - 1 >= k nodes */
    size_t k = (size + RT_WF_OVERHEAD + w->node_size - 1u) >> w->node_log2;
    return wf_log2_floor(k); /* 2^(s+1) - 1 >= k  <=>  s = floor(log2 k) */
}

unsigned rt_wf_height_for(const rt_wf_t *w, size_t size)
{
    if (size == 0u || size > w->max_request) {
        return UINT32_MAX;
    }
    return wf_height_for(w, size);
}

/* The chunk whose root is r (height s) is ours: arm its canary, tag it live (ALLOC, or ALIGNED for
 * memalign: the record and offset word that make its pointer valid are written after, and until
 * then no pointer validates against it), count it. */
static void *wf_hand_out(rt_wf_t *w, rt_wf_trace_t *t, size_t r, unsigned s, unsigned state)
{
    size_t first = wf_first(r, s);
    atomic_store_explicit(wf_pad(w, r), wf_canary(w, r), memory_order_relaxed);
    wf_len_live(w, first, wf_tag(w, first, s, state));
    size_t k = wf_subtree(s);
    wf_stat_add(t, &w->mallocs, 1u);
    size_t used = atomic_fetch_add_explicit(&w->used_nodes, k, memory_order_relaxed) + k;
    t->stat_rmw++;
    wf_stat_raise(t, &w->peak_nodes, used);
    wf_stat_raise(t, &w->watermark, ((r + 1u) << w->node_log2) - w->first_block);
    return wf_node(w, first) + 4u;
}

/* RT_HARDENING >= 1: the chunk of height s rooted at r, just claimed (our decrement took c(r)
 * from 2^s to 0), is checked against what eq. 3 makes certain once c(r) read 2^s: nothing below r
 * is allocated and no call is inside r, so (a) r's padding is not its canary (a live chunk rooted
 * at r holds it there; every release rewrites it), (b) no live chunk starts at r's first node
 * (its length word is no live tag of height <= s for that node), and (c) unless r is pristine
 * (lazy: the counters below are stale), both children's counters read 2^(s-1) -- none of them
 * can change: every call that could reach them needs a decrement of c(r). A counter word of r restored from an earlier
 * moment (saved by a read past one block, written back by an overflow of another: in range and
 * at its place, so its code cannot tell) claims a subtree that still holds live chunks; their
 * counters, padding and length words elsewhere say so. False: the chunk is kept claimed (never
 * handed out, never released: the subtree the damage lies about stays out of use) and the call
 * marked bad. Reads the counters of r's 2 children (s >= 1), not counted in trace.nodes (the
 * first node's word and r's padding are the hand-out's own nodes). */
static bool wf_claim_sound(wf_call_t *c, size_t r)
{
    const rt_wf_t *w = c->w;
    unsigned s = c->s;
    size_t first = wf_first(r, s);
    uint32_t pad = atomic_load_explicit(wf_pad(w, r), memory_order_relaxed);
    if (pad == wf_canary(w, r)) {
        return false;
    }
    uint32_t len = wf_len_peek(w, first);
    unsigned lh = WF_LEN_HEIGHT(len), ls = WF_LEN_STATE(len);
    if (lh <= s && ls != WF_ST_FREED && ls != 0u && len == wf_tag(w, first, lh, ls)) {
        return false;
    }
    if (s == 0u) {
        return true;
    }
    if ((w->flags & RT_WF_LAZY_REINIT) != 0u && wf_pad_valid(w, r, pad) && (pad & WF_PRISTINE) != 0u) {
        return true;
    }
    int half = wf_leaves(s - 1u);
    return wf_ctr_peek(w, r - 1u) == half && wf_ctr_peek(w, r - wf_pow2(s)) == half;
}

/* One descent of the instance's variant for the call's height: the claimed chunk's root or
 * WF_NONE (also when the claimed chunk fails wf_claim_sound: kept, the call marked bad); the node
 * visits published for rt_wf_last_probes. */
static size_t wf_descend(wf_call_t *c)
{
    rt_wf_t *w = c->w;
    size_t r;
    if ((w->flags & RT_WF_READONLY_DESCENT) != 0u) {
        r = wf_find(c);
    } else {
        unsigned f = 0;
        r = wf_try(c, w->height, w->nodes - 1u, &f);
    }
    if (RT_HARDENING >= 1 && r != WF_NONE && !wf_claim_sound(c, r)) {
        c->bad = true;
        r = WF_NONE;
    }
    atomic_store_explicit(&w->last_nodes, c->t->nodes, memory_order_relaxed);
    return r;
}

/* The request of height s: NULL on failure (counted; refused and reported CORRUPTED when the
 * search met damaged metadata), else the chunk's data, its length word in the live state `state`
 * (WF_ST_ALLOC, or WF_ST_ALIGNED for memalign). */
static void *wf_alloc(rt_wf_t *w, unsigned s, rt_wf_trace_t *t, const char *operation, size_t size, unsigned state)
{
    wf_call_t c = {w, s, wf_leaves(s), t, false};
    t->height = s;
    size_t r = wf_descend(&c);
    if (r == WF_NONE) {
        if (RT_HARDENING >= 1 && c.bad) {
            return rt_front_refuse(&wf_front, w, RT_ERR_CORRUPTED, operation, NULL, size);
        }
        wf_stat_add(t, &w->failures, 1u);
        return NULL;
    }
    if (RT_HARDENING >= 1 && c.bad) { /* a damaged hint met after the claim, rewritten: the chunk is
                                       * sound */
        wf_report(w, false, RT_ERR_CORRUPTED, operation, NULL, size);
    }
    if (RT_DEBUG >= 1) {
        RT_ASSERT(wf_ctr_peek(w, r) <= 0);
    }
    return wf_hand_out(w, t, r, s, state);
}

void *rt_wf_malloc_ex(rt_wf_t *w, size_t size, rt_wf_trace_t *trace)
{
    rt_wf_trace_t local;
    rt_wf_trace_t *t = trace != NULL ? trace : &local;
    __builtin_memset(t, 0, sizeof *t);
    if (size == 0u) {
        return NULL;
    }
    if (size > w->max_request) {
        return rt_front_refuse(&wf_front, w, RT_ERR_TOO_LARGE, "malloc", NULL, size);
    }
    return wf_alloc(w, wf_height_for(w, size), t, "malloc", size, WF_ST_ALLOC);
}

void *rt_wf_malloc(rt_wf_t *w, size_t size) { return rt_wf_malloc_ex(w, size, NULL); }

/* --- validation and release --------------------------------------------------------------------- */

/* The word at byte offset `off` from node 0 (4-aligned, inside the tree). */
static inline uint32_t *wf_word(const rt_wf_t *w, size_t off)
{
    RT_WF_TOUCH(w, off >> w->node_log2);
    return (uint32_t *)(void *)(w->base + off);
}

/* A memalign chunk whose data start is at byte offset `data` returned data + o: the keyed offset
 * word before the pointer holds o, and so does the data-start word (its record; the same word
 * when o = 4). Both are keyed by the offset of the pointer they lead from, so the record at data
 * is o ^ key(data + 4) whatever o is. */
static inline uint32_t wf_record(const rt_wf_t *w, size_t data)
{
    return *wf_word(w, data) ^ wf_offset_key(w, data + 4u);
}

/* The words of the chunk at byte offset `data` (root, height h) that a live chunk's tag vouches
 * for: a memalign chunk's record of its pointer's offset o (o = 0: not a memalign chunk), the
 * root's counter (0, or below 0 while failed decrements pass through it) and canary. */
static inline rt_error_kind_t wf_chunk_intact(const rt_wf_t *w, size_t data, size_t root, unsigned h, size_t o)
{
    if (o != 0u && wf_record(w, data) != (uint32_t)o) {
        return RT_ERR_BAD_POINTER; /* not the pointer memalign returned (or its record damaged) */
    }
    RT_WF_STEP(w, WF_STEP_READ, root);
    int x = wf_ctr_peek(w, root);
    if (x > 0 || !wf_ctr_ok(x, h) ||
        atomic_load_explicit(wf_pad(w, root), memory_order_relaxed) != wf_canary(w, root)) {
        return RT_ERR_CORRUPTED;
    }
    return RT_ERR_NONE;
}

/* RT_ERR_NONE iff ptr is the pointer malloc or memalign returned for a live chunk. O(H)
 * arithmetic; reads of the length word, the record and offset word (memalign), the root's
 * counter and its canary. The live tag read is left in ch->tag for the claim (wf_len_claim): a
 * check, not yet a right to the chunk. */
rt_error_kind_t wf_validate(const rt_wf_t *w, const void *ptr, wf_chunk_t *ch)
{
    uintptr_t p = (uintptr_t)ptr;
    uintptr_t end = w->base + (w->nodes << w->node_log2);
    if (p < w->base || p >= end) {
        return RT_ERR_FOREIGN_POINTER;
    }
    size_t off = (size_t)(p - w->base);
    size_t data = off;
    bool aligned = (off & (w->node_size - 1u)) != 4u;
    ch->offset = 0;
    if (aligned) {
        /* memalign: an aligned pointer (a multiple of 8, never a data start) with a keyed offset
         * word before it */
        if ((p & 7u) != 0u || off < 8u) {
            return RT_ERR_BAD_POINTER;
        }
        size_t o = (size_t)(*wf_word(w, off - 4u) ^ wf_offset_key(w, off));
        if (o < 4u || (o & 3u) != 0u || o > off - 4u || ((off - o) & (w->node_size - 1u)) != 4u) {
            return RT_ERR_BAD_POINTER;
        }
        data = off - o;
        ch->offset = o;
    }
    size_t first = data >> w->node_log2;
    uint32_t len = wf_len_check(w, first);
    unsigned h = WF_LEN_HEIGHT(len), state = WF_LEN_STATE(len);
    if (h > w->height || state == 0u || len != wf_tag(w, first, h, state)) {
        return RT_ERR_BAD_POINTER;
    }
    if (state == WF_ST_FREED || state == WF_ST_CACHED) { /* cached: freed into a cache (wfcache.c) */
        return RT_ERR_DOUBLE_FREE;
    }
    /* the chunk start of a memalign block, a memalign pointer into a malloc block, the control
     * chunk: not a pointer the allocator returned */
    if (state != (aligned ? WF_ST_ALIGNED : WF_ST_ALLOC)) {
        return RT_ERR_BAD_POINTER;
    }
    size_t root = first + wf_subtree(h) - 1u;
    unsigned rh = 0;
    if (!wf_locate(w, root, &rh, &ch->k) || rh != h) {
        return RT_ERR_BAD_POINTER;
    }
    if (ch->offset >= rt_wf_usable(w->node_size, h)) {
        return RT_ERR_BAD_POINTER;
    }
    rt_error_kind_t error = wf_chunk_intact(w, data, root, h, aligned ? ch->offset : 0u);
    /* A chunk that another free claimed after its length word was read here is being released,
     * or reused: the chunk's words read after the tag are then not a live chunk's. If the tag
     * changed meanwhile, that free's claim came first and this one is the double free. If it is
     * the same tag again, the chunk was freed and handed out again in between (a live chunk
     * once more): its words are read once more, after that tag. A second failure is reported as
     * found (damage, or the chunk in a second free-and-reuse overlapping this call). */
    for (unsigned again = 0; error != RT_ERR_NONE; again++) { /* at most 2 iterations */
        if (wf_len_check(w, first) != len) {
            return RT_ERR_DOUBLE_FREE;
        }
        if (again == 1u) {
            return error;
        }
        error = wf_chunk_intact(w, data, root, h, aligned ? ch->offset : 0u);
    }
    ch->first = first;
    ch->root = root;
    ch->h = h;
    ch->tag = len;
    return RT_ERR_NONE;
}

/* Eager re-initialisation of the subtree at i of height h (Fig. 4's reinitialize_subtree): every
 * counter to its leaves; hints to "all free". Recursion depth <= h. */
static void wf_reinit(rt_wf_t *w, unsigned h, size_t i, bool hints)
{
    wf_ctr_set(w, i, wf_leaves(h));
    if (hints) {
        wf_pad_store(w, i, wf_allfree(h));
    }
    if (h > 0u) {
        wf_reinit(w, h - 1u, i - 1u, hints);
        wf_reinit(w, h - 1u, i - wf_pow2(h), hints);
    }
}

/* RT_HARDENING >= 1: before a release, the counters (and with hints the paddings) of the H - s
 * ancestors it will increment are read and checked, so that a free whose path is damaged is
 * refused before it changes anything (the same nodes the release visits; not counted again). Our
 * leaves keep every ancestor from being allocated, so each word read is the tree's, never a
 * chunk's data. O(H - s). */
static bool wf_path_intact(const rt_wf_t *w, const wf_chunk_t *ch)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    unsigned h = ch->h;
    size_t i = ch->root, k = ch->k;
    while (h < w->height) { /* H - s iterations */
        i = (k & 1u) != 0u ? i + 1u : i + wf_pow2(h + 1u);
        h++;
        k >>= 1;
        RT_WF_STEP(w, WF_STEP_READ, i);
        if (!wf_ctr_ok(wf_dec(i, atomic_load_explicit(wf_counter(w, i), memory_order_relaxed)), h) ||
            ((w->flags & RT_WF_HINTS) != 0u &&
             !wf_pad_valid(w, i, atomic_load_explicit(wf_pad(w, i), memory_order_relaxed)))) {
            return false;
        }
    }
    return true;
}

/* Fig. 4: release of the chunk ch, whose length word already says FREED: taken by the caller (a
 * free's claim, or the store of the cache that held it), so no other call releases it. We own it
 * until the increment of its root. */
static void wf_release(rt_wf_t *w, const wf_chunk_t *ch, rt_wf_trace_t *t)
{
    wf_call_t c = {w, ch->h, wf_leaves(ch->h), t, false};
    bool hints = (w->flags & RT_WF_HINTS) != 0u;
    unsigned h = ch->h;
    size_t i = ch->root, k = ch->k;
    t->height = h;
    if ((w->flags & RT_WF_LAZY_REINIT) != 0u) {
        wf_pad_store(w, i, h > 0u ? WF_PRISTINE | wf_allfree(h) : 0u);
        t->nodes += h > 0u ? 1u : 0u; /* the first node's length word */
    } else {
        wf_pad_store(w, i, hints ? wf_allfree(h) : 0u);
        if (h > 0u) {
            wf_reinit(w, h - 1u, i - 1u, hints);
            wf_reinit(w, h - 1u, i - wf_pow2(h), hints);
        }
        t->nodes += (uint32_t)(wf_subtree(h) - 1u);
    }
    t->nodes++;
    wf_incr(&c, i, h, c.S);
    unsigned f = h + 1u;    /* the chunk is wholly free now */
    while (h < w->height) { /* H - s iterations: one per ancestor */
        unsigned side = (unsigned)(k & 1u);
        i = side != 0u ? i + 1u : i + wf_pow2(h + 1u);
        h++;
        k >>= 1;
        t->nodes++;
        uint32_t pad = 0;
        if (hints) {
            /* before the increment: until it, our leaves keep the node from being allocated,
             * so its padding word is still a hint */
            pad = wf_hint_update(&c, i, side, f);
        }
        int now = wf_incr(&c, i, h, c.S);
        f = now == wf_leaves(h) ? h + 1u : wf_hint_max(pad);
    }
    wf_stat_add(t, &w->frees, 1u);
    wf_stat_add(t, &w->used_nodes, (size_t)0 - wf_subtree(ch->h));
    if (RT_HARDENING >= 1 && c.bad) { /* damage that appeared after wf_path_intact (a concurrent
                                       * write): the chunk is released, the damage reported */
        wf_report(w, false, RT_ERR_CORRUPTED, "free", wf_node(w, ch->first) + 4u, 0u);
    }
}

void rt_wf_free_ex(rt_wf_t *w, void *ptr, rt_wf_trace_t *trace)
{
    rt_wf_trace_t local;
    rt_wf_trace_t *t = trace != NULL ? trace : &local;
    __builtin_memset(t, 0, sizeof *t);
    if (ptr == NULL) {
        return;
    }
    wf_chunk_t ch;
    rt_error_kind_t error = wf_validate(w, ptr, &ch);
    if (error == RT_ERR_NONE && !wf_path_intact(w, &ch)) {
        error = RT_ERR_CORRUPTED;
    }
    /* the claim: of two frees of one chunk, however they interleave, exactly one takes the length
     * word from the live tag both checked to FREED; the other changes nothing */
    if (error == RT_ERR_NONE && !wf_len_claim(w, ch.first, ch.tag, wf_tag(w, ch.first, ch.h, WF_ST_FREED))) {
        error = RT_ERR_DOUBLE_FREE;
    }
    if (error != RT_ERR_NONE) {
        wf_report(w, false, error, "free", ptr, 0u);
        return;
    }
    wf_release(w, &ch, t);
}

void rt_wf_free(rt_wf_t *w, void *ptr) { rt_wf_free_ex(w, ptr, NULL); }

/* --- entry points of the cache front (wf_tree.h) ------------------------------------------------ */

void wf_count_failure(rt_wf_t *w) { atomic_fetch_add_explicit(&w->failures, 1u, memory_order_relaxed); }

/* Post-order index, inside a subtree whose first node is `first`, of the root of its m-th subtree
 * of height h (rt_wf_index within the subtree). */
static inline size_t wf_inner_root(size_t first, unsigned h, size_t m)
{
    size_t j = m << h;
    return first + 2u * j - (size_t)__builtin_popcountll((unsigned long long)j) + wf_subtree(h) - 1u;
}

size_t wf_claim_pieces(rt_wf_t *w, unsigned s, unsigned j, unsigned state, size_t *firsts, rt_wf_trace_t *t)
{
    unsigned hb = s + j;
    if (hb > w->max_height) {
        return 0u;
    }
    wf_call_t c = {w, hb, wf_leaves(hb), t, false};
    size_t r = wf_descend(&c);
    if (RT_HARDENING >= 1 && c.bad) {
        wf_report(w, false, RT_ERR_CORRUPTED, "malloc", NULL, 0u);
    }
    if (r == WF_NONE) {
        return 0u;
    }
    if (RT_DEBUG >= 1) {
        RT_ASSERT(wf_ctr_peek(w, r) <= 0);
    }
    /* Nobody else can be inside r (our decrement found all its leaves free and left 0), so its
     * nodes are ours to write; r's own counter stays as the claim left it. Inner nodes above
     * the pieces: counter 0 (every leaf below is in a piece), padding "no free subtree". */
    size_t n = wf_pow2(j), first = wf_first(r, hb);
    for (unsigned h = s + 1u; h <= hb; h++) { /* 2^j - 1 nodes */
        for (size_t m = 0; m < wf_pow2(hb - h); m++) {
            size_t i = wf_inner_root(first, h, m);
            if (i != r) {
                wf_ctr_set(w, i, 0);
            }
            wf_pad_store(w, i, 0u);
        }
    }
    for (size_t m = 0; m < n; m++) { /* 2^j pieces: length word, canary, counter 0 */
        size_t root = wf_inner_root(first, s, m), f = wf_first(root, s);
        if (root != r) {
            wf_ctr_set(w, root, 0);
        }
        atomic_store_explicit(wf_pad(w, root), wf_canary(w, root), memory_order_relaxed);
        if (m == 0u && state == WF_ST_CACHED) {
            wf_len_live(w, f, wf_tag(w, f, s, WF_ST_ALLOC)); /* the caller's: handed out */
        } else {
            wf_len_set(w, f, wf_tag(w, f, s, state)); /* CACHED or RECORD: ours to hand on */
        }
        firsts[m] = f;
    }
    t->nodes += (uint32_t)(2u * n - 2u); /* the claimed root was counted by the descent */
    if (state != WF_ST_RECORD) {
        size_t k = n * wf_subtree(s);
        wf_stat_add(t, &w->mallocs, n);
        size_t used = atomic_fetch_add_explicit(&w->used_nodes, k, memory_order_relaxed) + k;
        t->stat_rmw++;
        wf_stat_raise(t, &w->peak_nodes, used);
        wf_stat_raise(t, &w->watermark, ((r + 1u) << w->node_log2) - w->first_block);
    }
    return n;
}

bool wf_release_held(rt_wf_t *w, size_t first, unsigned h, rt_wf_trace_t *t)
{
    wf_chunk_t ch = {first, first + wf_subtree(h) - 1u, 0u, 0u, h, 0u};
    unsigned rh = 0;
    bool ok = wf_locate(w, ch.root, &rh, &ch.k) && rh == h;
    if (ok) {
        int x = wf_ctr_peek(w, ch.root);
        ok = x <= 0 && wf_ctr_ok(x, h) &&
             atomic_load_explicit(wf_pad(w, ch.root), memory_order_relaxed) == wf_canary(w, ch.root) &&
             wf_path_intact(w, &ch);
    }
    if (!ok) {
        wf_report(w, false, RT_ERR_CORRUPTED, "free", wf_node(w, first) + 4u, 0u);
        return false;
    }
    wf_len_set(w, first, wf_tag(w, first, h, WF_ST_FREED)); /* held: no free can claim it */
    wf_release(w, &ch, t);
    return true;
}

/* --- realloc, calloc, memalign, usable_size ----------------------------------------------------- */

void *rt_wf_realloc(rt_wf_t *w, void *ptr, size_t size)
{
    void *edge;
    if (rt_front_realloc_edge(&wf_front, w, ptr, size, &edge)) {
        return edge;
    }
    wf_chunk_t ch;
    rt_error_kind_t error = wf_validate(w, ptr, &ch);
    if (error != RT_ERR_NONE) {
        return rt_front_refuse(&wf_front, w, error, "realloc", ptr, size);
    }
    if (size > rt_wf_usable(w->node_size, ch.h) - ch.offset && !wf_path_intact(w, &ch)) {
        return rt_front_refuse(&wf_front, w, RT_ERR_CORRUPTED, "realloc", ptr,
                               size); /* moving would free into damage */
    }
    rt_wf_trace_t t;
    __builtin_memset(&t, 0, sizeof t);
    size_t usable = rt_wf_usable(w->node_size, ch.h) - ch.offset;
    if (size <= usable) {
        wf_stat_add(&t, &w->reallocs, 1u);
        wf_stat_add(&t, &w->reallocs_in_place, 1u);
        return ptr;
    }
    /* a move frees the old chunk: claimed first, as a free claims it (a racing free or realloc of
     * the same pointer gets DOUBLE_FREE); given back untouched if no new chunk is found */
    uint32_t freed = wf_tag(w, ch.first, ch.h, WF_ST_FREED);
    if (!wf_len_claim(w, ch.first, ch.tag, freed)) {
        return rt_front_refuse(&wf_front, w, RT_ERR_DOUBLE_FREE, "realloc", ptr, size);
    }
    void *moved = wf_alloc(w, wf_height_for(w, size), &t, "realloc", size, WF_ST_ALLOC);
    if (moved == NULL) {
        wf_len_live(w, ch.first, ch.tag); /* out of memory: the old chunk as it was */
        return NULL;
    }
    __builtin_memcpy(moved, ptr, usable);
    wf_release(w, &ch, &t);
    wf_stat_add(&t, &w->reallocs, 1u);
    return moved;
}

void *rt_wf_calloc(rt_wf_t *w, size_t count, size_t size) { return rt_front_calloc(&wf_front, w, count, size); }

void *rt_wf_memalign(rt_wf_t *w, size_t alignment, size_t size)
{
    if (!rt_front_memalign_args(&wf_front, w, alignment, size)) {
        return NULL;
    }
    if (alignment <= RT_WF_ALIGN) {
        return rt_wf_malloc(w, size);
    }
    /* the data start is 4 past a multiple of 8: the aligned pointer lies at most alignment - 4
     * bytes further, and at least 4 (room for the offset word) */
    if (alignment > w->max_request || size > w->max_request - (alignment - 4u)) {
        return rt_front_refuse(&wf_front, w, RT_ERR_TOO_LARGE, "memalign", NULL, size);
    }
    rt_wf_trace_t t;
    __builtin_memset(&t, 0, sizeof t);
    size_t n = size + alignment - 4u;
    /* handed out ALIGNED at once (never ALLOC, so a stale free of the data start cannot claim it
     * meanwhile); the record (the offset word itself when o = 4) and the offset word then make p
     * -- only p -- the chunk's pointer */
    unsigned char *data = wf_alloc(w, wf_height_for(w, n), &t, "memalign", n, WF_ST_ALIGNED);
    if (data == NULL) {
        return NULL;
    }
    uintptr_t p = ((uintptr_t)data + alignment - 1u) & ~(uintptr_t)(alignment - 1u);
    size_t o = (size_t)(p - (uintptr_t)data);
    size_t at = (size_t)((uintptr_t)data - w->base);
    *wf_word(w, at) = (uint32_t)o ^ wf_offset_key(w, at + 4u);
    *wf_word(w, at + o - 4u) = (uint32_t)o ^ wf_offset_key(w, at + o);
    return (void *)p;
}

size_t rt_wf_usable_size(rt_wf_t *w, void *ptr)
{
    wf_chunk_t ch;
    rt_error_kind_t error = ptr == NULL ? RT_ERR_FOREIGN_POINTER : wf_validate(w, ptr, &ch);
    if (error != RT_ERR_NONE) {
        wf_report(w, false, error, "usable_size", ptr, 0u);
        return 0u;
    }
    return rt_wf_usable(w->node_size, ch.h) - ch.offset;
}

/* --- creation ------------------------------------------------------------------------------------ */

static bool wf_config(const rt_wf_config_t *cfg, size_t *node_size, unsigned *flags)
{
    size_t b = cfg != NULL && cfg->node_size != 0u ? cfg->node_size : RT_WF_NODE_SIZE;
    unsigned f = cfg != NULL ? cfg->flags : 0u;
    if (b < WF_MIN_NODE || b > WF_MAX_NODE || (b & (b - 1u)) != 0u ||
        (f & ~(RT_WF_READONLY_DESCENT | RT_WF_LAZY_REINIT | RT_WF_HINTS | RT_WF_LAZY_CREATE)) != 0u ||
        ((f & RT_WF_LAZY_CREATE) != 0u && (f & RT_WF_LAZY_REINIT) == 0u)) {
        return false;
    }
    *node_size = b;
    *flags = f;
    return true;
}

static size_t wf_node_align(size_t node_size) { return node_size < 64u ? node_size : 64u; }

/* Height of the control chunk for node size B: the smallest whose data holds the control block
 * at an aligned offset. */
static unsigned wf_ctrl_height(size_t node_size, size_t extra)
{
    size_t need = ((4u + WF_CTRL_ALIGN - 1u) & ~(WF_CTRL_ALIGN - 1u)) - 4u + sizeof(struct rt_wf);
    if (extra != 0u) { /* the reserve, 64-aligned after the control block (at most 63 bytes apart) */
        need += 63u + extra;
    }
    unsigned h = 0;
    while (rt_wf_usable(node_size, h) < need) { /* at most log2(sizeof) iterations */
        h++;
    }
    return h;
}

size_t rt_wf_control_size(void) { return sizeof(struct rt_wf); }
size_t rt_wf_control_align(void) { return WF_CTRL_ALIGN; }

/* The smallest tree of rt_wf_create has the control chunk and its free sibling: height hc + 1,
 * 2^(hc+2) - 1 nodes; add the worst alignment slack of the buffer's start. */
size_t wf_min_buffer_reserve(const rt_wf_config_t *config, size_t extra)
{
    size_t b = 0;
    unsigned f = 0;
    if (!wf_config(config, &b, &f)) {
        return SIZE_MAX;
    }
    return wf_subtree(wf_ctrl_height(b, extra) + 1u) * b + wf_node_align(b) - 1u;
}

size_t rt_wf_min_buffer(const rt_wf_config_t *config) { return wf_min_buffer_reserve(config, 0u); }

/* Every counter to its leaves, every length word to 0, padding per variant. */
static void wf_init_tree(rt_wf_t *w, unsigned h, size_t i)
{
    if ((w->flags & RT_WF_LAZY_CREATE) != 0u && h > 0u) {
        /* The root alone, pristine: the first request to enter it initialises its children
         * (wf_unpristine), and so on down -- create touches one node. */
        atomic_init(wf_counter(w, i), wf_enc(i, wf_leaves(h)));
        atomic_init(wf_pad(w, i), wf_pad_enc(w, i, WF_PRISTINE | wf_allfree(h)));
        atomic_init(wf_len_word(w, i), 0u);
        return;
    }
    atomic_init(wf_counter(w, i), wf_enc(i, wf_leaves(h)));
    atomic_init(wf_pad(w, i), wf_pad_enc(w, i, (w->flags & RT_WF_HINTS) != 0u ? wf_allfree(h) : 0u));
    atomic_init(wf_len_word(w, i), 0u);
    if (h > 0u) {
        wf_init_tree(w, h - 1u, i - 1u);
        wf_init_tree(w, h - 1u, i - wf_pow2(h));
    }
}

/* Fills `w` (not yet at its final address) for a tree over [tree, tree + tree_size). */
static bool wf_setup(rt_wf_t *w, uintptr_t tree, size_t tree_size, size_t b, unsigned flags, unsigned min_height)
{
    __builtin_memset(w, 0, sizeof *w);
    uintptr_t end = tree_size > UINTPTR_MAX - tree ? UINTPTR_MAX : tree + tree_size;
    uintptr_t base = (tree + wf_node_align(b) - 1u) & ~(uintptr_t)(wf_node_align(b) - 1u);
    if (base < tree || base >= end) {
        return false;
    }
    unsigned lb = wf_log2_floor(b);
    size_t slots = (size_t)(end - base) >> lb;
    if (slots < 3u) {
        return false;
    }
    unsigned height = wf_log2_floor(slots + 1u) - 1u; /* 2^(H+1) - 1 <= slots */
    if (height > RT_WF_MAX_HEIGHT) {
        height = RT_WF_MAX_HEIGHT;
    }
    if (height < min_height) {
        return false;
    }
    w->base = base;
    w->node_size = b;
    w->node_log2 = lb;
    w->height = height;
    w->nodes = wf_subtree(height);
    w->flags = flags;
    w->ctrl_root = WF_NONE;
    w->max_height = height;
    return true;
}

/* The 32-bit word at `at`, as the buffer holds it (any bytes: a previous control block, or not). */
static uint32_t wf_old_word(uintptr_t at)
{
    uint32_t v;
    __builtin_memcpy(&v, (const void *)at, sizeof v);
    return v;
}

/* A new instance's key (a new generation of the buffer): a fresh draw of the core's entropy
 * (rtalloc/common.h, rt_set_entropy), never the key `old` the buffer's previous control block held,
 * so that no tag, canary, padding or offset word a previous instance left in the buffer verifies
 * in this one (up to the check bits each keeps). */
uint32_t wf_new_seed(uint32_t old)
{
    uint64_t d = rt_entropy_draw();
    uint32_t seed = (uint32_t)d ^ (uint32_t)(d >> 32);
    return seed != old ? seed : ~seed;
}

static void wf_publish(rt_wf_t *dst, const rt_wf_t *src)
{
    __builtin_memcpy(dst, src, sizeof *dst);
    atomic_init(&dst->mallocs, 0u);
    atomic_init(&dst->frees, 0u);
    atomic_init(&dst->failures, 0u);
    atomic_init(&dst->errors, 0u);
    atomic_init(&dst->reallocs, 0u);
    atomic_init(&dst->reallocs_in_place, 0u);
    atomic_init(&dst->used_nodes, 0u);
    atomic_init(&dst->peak_nodes, 0u);
    atomic_init(&dst->watermark, 0u);
    atomic_init(&dst->last_nodes, 0u);
    atomic_thread_fence(memory_order_release); /* whoever receives the handle through a
                                                  synchronising hand-over sees a built tree */
}

rt_wf_t *wf_create_reserve(void *mem, size_t size, const rt_wf_config_t *config, size_t extra, void **extra_out,
                           size_t *room_out, size_t peek, uint32_t *peeked)
{
    size_t b = 0;
    unsigned flags = 0;
    if (mem == NULL || !wf_config(config, &b, &flags)) {
        return NULL;
    }
    unsigned hc = wf_ctrl_height(b, extra);
    rt_wf_t tmp;
    if (!wf_setup(&tmp, (uintptr_t)mem, size, b, flags, hc + 1u)) {
        return NULL;
    }
    /* where the control block (and the reserve) will stand: the previous instance's keys are read
     * there before anything is written */
    uintptr_t at = (tmp.base + 4u + WF_CTRL_ALIGN - 1u) & ~(uintptr_t)(WF_CTRL_ALIGN - 1u);
    uintptr_t x = (at + sizeof(struct rt_wf) + 63u) & ~(uintptr_t)63u;
    tmp.seed = wf_new_seed(wf_old_word(at + offsetof(struct rt_wf, seed)));
    if (extra != 0u) {
        *peeked = wf_old_word(x + peek);
    }
    wf_init_tree(&tmp, tmp.height, tmp.nodes - 1u);
    /* The control chunk: the leftmost subtree of height hc, allocated as the paper's malloc
     * would (every counter on the left spine above it decremented by its leaves). */
    size_t rc = wf_subtree(hc) - 1u;
    int sc = wf_leaves(hc);
    size_t i = tmp.nodes - 1u;
    for (unsigned h = tmp.height; h > hc; h--) { /* the left spine, H - hc nodes */
        atomic_fetch_sub_explicit(wf_counter(&tmp, i), wf_delta(sc), memory_order_relaxed);
        if ((flags & RT_WF_HINTS) != 0u) {
            /* left side: what the spine below holds (h - 1 when h - 1 > hc: its right half);
             * right side: wholly free */
            unsigned left = h - 1u > hc ? h - 1u : 0u;
            wf_pad_store(&tmp, i, (uint32_t)left | ((uint32_t)h << 8));
        }
        i -= wf_pow2(h);
    }
    wf_ctr_set(&tmp, rc, 0);
    wf_len_set(&tmp, 0, wf_tag(&tmp, 0, hc, WF_ST_CTRL));
    atomic_store_explicit(wf_pad(&tmp, rc), wf_canary(&tmp, rc), memory_order_relaxed);
    tmp.ctrl_root = rc;
    tmp.ctrl_nodes = wf_subtree(hc);
    tmp.first_block = (rc + 1u) << tmp.node_log2;
    tmp.max_height = tmp.height - 1u;
    tmp.max_request = rt_wf_usable(b, tmp.max_height);
    rt_wf_t *w = (rt_wf_t *)(void *)at;
    RT_ASSERT(at + sizeof *w <= tmp.base + ((rc + 1u) << tmp.node_log2) - 8u);
    if (extra != 0u) {
        RT_ASSERT(peek + sizeof *peeked <= extra);
        uintptr_t end = tmp.base + ((rc + 1u) << tmp.node_log2) - 8u; /* the root's padding, counter */
        RT_ASSERT(x + extra <= end);
        __builtin_memset((void *)x, 0, (size_t)(end - x));
        *extra_out = (void *)x;
        *room_out = (size_t)(end - x);
    }
    wf_publish(w, &tmp);
    return w;
}

rt_wf_t *rt_wf_create(void *mem, size_t size, const rt_wf_config_t *config)
{
    return wf_create_reserve(mem, size, config, 0u, NULL, NULL, 0u, NULL);
}

rt_wf_t *rt_wf_create_split(void *control, void *tree, size_t tree_size, const rt_wf_config_t *config)
{
    size_t b = 0;
    unsigned flags = 0;
    if (control == NULL || tree == NULL || ((uintptr_t)control & (WF_CTRL_ALIGN - 1u)) != 0u ||
        !wf_config(config, &b, &flags)) {
        return NULL;
    }
    rt_wf_t tmp;
    if (!wf_setup(&tmp, (uintptr_t)tree, tree_size, b, flags, 1u)) {
        return NULL;
    }
    uintptr_t c = (uintptr_t)control;
    uintptr_t tree_end = tmp.base + (tmp.nodes << tmp.node_log2);
    if (c < tree_end && tmp.base < c + sizeof(struct rt_wf)) {
        return NULL; /* overlapping */
    }
    tmp.seed = wf_new_seed(wf_old_word(c + offsetof(struct rt_wf, seed)));
    wf_init_tree(&tmp, tmp.height, tmp.nodes - 1u);
    tmp.max_request = rt_wf_usable(b, tmp.max_height);
    rt_wf_t *w = (rt_wf_t *)control;
    wf_publish(w, &tmp);
    return w;
}

/* --- inspection --------------------------------------------------------------------------------- */

size_t rt_wf_max_request(const rt_wf_t *w) { return w->max_request; }
unsigned rt_wf_height(const rt_wf_t *w) { return w->height; }
size_t rt_wf_nodes(const rt_wf_t *w) { return w->nodes; }
size_t rt_wf_node_size(const rt_wf_t *w) { return w->node_size; }
unsigned rt_wf_flags(const rt_wf_t *w) { return w->flags; }
unsigned rt_wf_last_probes(const rt_wf_t *w) { return atomic_load_explicit(&w->last_nodes, memory_order_relaxed); }
int rt_wf_counter(const rt_wf_t *w, size_t index) { return wf_ctr_peek(w, index); }

/* Node i (height h) is the root of a live chunk (or of the control chunk). */
static bool wf_is_chunk_root(const rt_wf_t *w, size_t i, unsigned h, bool *ctrl)
{
    if (wf_ctr_peek(w, i) > 0) {
        return false;
    }
    size_t first = wf_first(i, h);
    uint32_t len = wf_len_peek(w, first);
    *ctrl = (i == w->ctrl_root && len == wf_tag(w, first, h, WF_ST_CTRL)) || len == wf_tag(w, first, h, WF_ST_RECORD);
    return *ctrl || len == wf_tag(w, first, h, WF_ST_ALLOC) || len == wf_tag(w, first, h, WF_ST_ALIGNED) ||
           len == wf_tag(w, first, h, WF_ST_CACHED);
}

/* Offset of the pointer memalign returned for the live chunk at `first` (height h), from its
 * record, checked against the offset word it leads to; 0 when the chunk is not an intact
 * memalign chunk. */
static size_t wf_aligned_offset(const rt_wf_t *w, size_t first, unsigned h)
{
    if (wf_len_peek(w, first) != wf_tag(w, first, h, WF_ST_ALIGNED)) {
        return 0u;
    }
    size_t data = (first << w->node_log2) + 4u;
    size_t o = wf_record(w, data);
    if (o < 4u || (o & 3u) != 0u || o >= rt_wf_usable(w->node_size, h) ||
        (size_t)(*wf_word(w, data + o - 4u) ^ wf_offset_key(w, data + o)) != o) {
        return 0u;
    }
    return o;
}

bool rt_wf_is_chunk(const rt_wf_t *w, size_t index)
{
    unsigned h = 0;
    size_t k = 0;
    bool ctrl = false;
    return wf_locate(w, index, &h, &k) && wf_is_chunk_root(w, index, h, &ctrl) && !ctrl;
}

bool rt_wf_bound(const rt_wf_t *w, size_t size, rt_wf_bound_t *b)
{
    unsigned s = rt_wf_height_for(w, size);
    if (s == UINT32_MAX) {
        return false;
    }
    unsigned H = w->height;
    uint64_t above = ((uint64_t)2 << (H - s)) - 1u; /* nodes of height >= s */
    uint64_t cands = (uint64_t)1 << (H - s);
    uint64_t path = (uint64_t)(H - s) + 1u;
    b->height = s;
    b->path = (uint32_t)path;
    if ((w->flags & RT_WF_READONLY_DESCENT) != 0u) {
        /* + one verification walk at RT_HARDENING >= 1 (wf_verify) */
        uint64_t walks = cands + (RT_HARDENING >= 1 ? 1u : 0u);
        b->malloc_nodes = above + walks * path;
        b->malloc_rmw = 3u * walks * path;
    } else {
        b->malloc_nodes = above;
        b->malloc_rmw = 3u * above;
    }
    if ((w->flags & RT_WF_LAZY_REINIT) != 0u) {
        b->malloc_nodes *= 3u;
        b->free_nodes = path + 1u;
    } else {
        b->free_nodes = (uint64_t)wf_subtree(s) + (H - s);
    }
    b->free_rmw = path;
    return true;
}

/* --- check, walk, stats -------------------------------------------------------------------------- */

typedef struct wf_checker {
    rt_wf_t *w;
    unsigned what;
    bool ok;
} wf_checker_t;

/* Equation 3 at quiescence below node i (height h). Returns the allocated leaves below i and
 * stores in *f the hint value of the subtree (1 + largest free height, 0 none). */
static size_t wf_check_node(wf_checker_t *ck, unsigned h, size_t i, unsigned *f)
{
    rt_wf_t *w = ck->w;
    int x = wf_ctr_peek(w, i);
    *f = 0;
    if (x <= 0) { /* a chunk's root, or a node whose leaves are all in chunks below */
        size_t first = wf_first(i, h);
        uint32_t len = wf_len_peek(w, first);
        bool aligned = len == wf_tag(w, first, h, WF_ST_ALIGNED);
        if (aligned || len == wf_tag(w, first, h, WF_ST_ALLOC) || len == wf_tag(w, first, h, WF_ST_CACHED) ||
            len == wf_tag(w, first, h, WF_ST_RECORD) || (i == w->ctrl_root && len == wf_tag(w, first, h, WF_ST_CTRL))) {
            if (x != 0 || atomic_load_explicit(wf_pad(w, i), memory_order_relaxed) != wf_canary(w, i) ||
                (aligned && wf_aligned_offset(w, first, h) == 0u)) {
                ck->ok = false;
            }
            return wf_pow2(h);
        }
    }
    bool hints = (ck->what & RT_WF_CHECK_HINTS) != 0u && (w->flags & RT_WF_HINTS) != 0u;
    uint32_t pad = 0;
    if (hints || ((w->flags & RT_WF_LAZY_REINIT) != 0u && h > 0u)) { /* only then is the word needed */
        pad = atomic_load_explicit(wf_pad(w, i), memory_order_relaxed);
        if (!wf_pad_valid(w, i, pad)) {
            ck->ok = false;
        }
        pad &= WF_PAD_PAYLOAD;
    }
    if ((w->flags & RT_WF_LAZY_REINIT) != 0u && h > 0u && (pad & WF_PRISTINE) != 0u) {
        if (x != wf_leaves(h) || (hints && (pad & ~(uint32_t)WF_PRISTINE) != wf_allfree(h))) {
            ck->ok = false;
        }
        *f = h + 1u;
        return 0;
    }
    if (h == 0u) {
        if (x != 1) {
            ck->ok = false;
        }
        *f = 1u;
        return 0;
    }
    unsigned fl = 0, fr = 0;
    size_t used = wf_check_node(ck, h - 1u, i - wf_pow2(h), &fl) + wf_check_node(ck, h - 1u, i - 1u, &fr);
    if (x < 0 || (size_t)x != (size_t)wf_leaves(h) - used) {
        ck->ok = false;
    }
    if (hints && (WF_HINT_L(pad) != fl || WF_HINT_R(pad) != fr || (pad & ~(uint32_t)0x7F7Fu) != 0u)) {
        ck->ok = false;
    }
    *f = used == 0u ? h + 1u : (fl > fr ? fl : fr);
    return used;
}

bool rt_wf_check_ex(rt_wf_t *w, unsigned what)
{
    wf_checker_t ck = {w, what, true};
    unsigned f = 0;
    size_t used = wf_check_node(&ck, w->height, w->nodes - 1u, &f);
    size_t used_nodes = atomic_load_explicit(&w->used_nodes, memory_order_relaxed);
    (void)used;
    if (w->ctrl_root != WF_NONE) {
        bool ctrl = false;
        unsigned hc = 0;
        size_t kc = 0;
        if (!wf_locate(w, w->ctrl_root, &hc, &kc) || !wf_is_chunk_root(w, w->ctrl_root, hc, &ctrl) || !ctrl) {
            ck.ok = false;
        }
    }
    size_t mallocs = atomic_load_explicit(&w->mallocs, memory_order_relaxed);
    size_t frees = atomic_load_explicit(&w->frees, memory_order_relaxed);
    if (used_nodes > w->nodes || mallocs < frees ||
        atomic_load_explicit(&w->peak_nodes, memory_order_relaxed) < used_nodes) {
        ck.ok = false;
    }
    if (!ck.ok) {
        wf_report(w, false, RT_ERR_CORRUPTED, "check", NULL, 0u);
    }
    return ck.ok;
}

bool rt_wf_check(rt_wf_t *w) { return rt_wf_check_ex(w, 0u); }

typedef struct wf_walker {
    rt_wf_t *w;
    rt_walk_fn fn; /* NULL: only count */
    void *context;
    bool stop;
    size_t free_blocks;
    size_t largest_free;
} wf_walker_t;

static void wf_emit(wf_walker_t *wk, size_t first, size_t nodes, size_t size, bool used, size_t offset)
{
    if (!used) {
        wk->free_blocks++;
        wk->largest_free = size > wk->largest_free ? size : wk->largest_free;
    }
    if (wk->fn != NULL && !wk->stop) {
        rt_block_info_t info = {wf_node(wk->w, first) + 4u + offset, size - offset, nodes << wk->w->node_log2, used,
                                false};
        wk->stop = !wk->fn(wk->context, &info);
    }
}

/* Post-order: a chunk, a wholly free subtree, or the two subtrees and then the node itself --
 * address order. Visits only nodes above chunk and free-subtree boundaries: O(blocks * H). */
static void wf_walk_node(wf_walker_t *wk, unsigned h, size_t i)
{
    rt_wf_t *w = wk->w;
    if (wk->stop) {
        return;
    }
    bool ctrl = false;
    int x = wf_ctr_peek(w, i);
    if (x == wf_leaves(h)) {
        wf_emit(wk, wf_first(i, h), wf_subtree(h), rt_wf_usable(w->node_size, h), false, 0u);
        return;
    }
    if (wf_is_chunk_root(w, i, h, &ctrl)) {
        if (!ctrl) {
            /* a memalign block is reported at the pointer memalign returned; a cached chunk
             * (wfcache.c) is free for the application */
            size_t first = wf_first(i, h);
            bool cached = wf_len_peek(w, first) == wf_tag(w, first, h, WF_ST_CACHED);
            wf_emit(wk, first, wf_subtree(h), rt_wf_usable(w->node_size, h), !cached, wf_aligned_offset(w, first, h));
        }
        return;
    }
    if (h > 0u) {
        wf_walk_node(wk, h - 1u, i - wf_pow2(h));
        wf_walk_node(wk, h - 1u, i - 1u);
    }
    wf_emit(wk, i, 1u, 0u, false, 0u); /* an internal node above used chunks (or a damaged leaf) */
}

void rt_wf_walk(rt_wf_t *w, rt_walk_fn fn, void *context)
{
    wf_walker_t wk = {w, fn, context, false, 0, 0};
    wf_walk_node(&wk, w->height, w->nodes - 1u);
}

void rt_wf_stats(rt_wf_t *w, rt_stats_t *s)
{
    wf_walker_t wk = {w, NULL, NULL, false, 0, 0};
    wf_walk_node(&wk, w->height, w->nodes - 1u);
    size_t used_nodes = atomic_load_explicit(&w->used_nodes, memory_order_relaxed);
    size_t mallocs = atomic_load_explicit(&w->mallocs, memory_order_relaxed);
    size_t frees = atomic_load_explicit(&w->frees, memory_order_relaxed);
    rt_stats_t own = {
        .capacity = (w->nodes - w->ctrl_nodes) << w->node_log2,
        .used_bytes = used_nodes << w->node_log2,
        .largest_free = wk.largest_free,
        .peak_used = atomic_load_explicit(&w->peak_nodes, memory_order_relaxed) << w->node_log2,
        .watermark = atomic_load_explicit(&w->watermark, memory_order_relaxed),
        .used_blocks = mallocs - frees,
        .free_blocks = wk.free_blocks,
    };
    rt_front_counts_t counts = {
        mallocs,
        frees,
        atomic_load_explicit(&w->reallocs, memory_order_relaxed),
        atomic_load_explicit(&w->reallocs_in_place, memory_order_relaxed),
        atomic_load_explicit(&w->failures, memory_order_relaxed),
        atomic_load_explicit(&w->errors, memory_order_relaxed),
    };
    rt_front_stats(s, &own, &counts);
}

void rt_wf_set_handler(rt_wf_t *w, rt_error_handler_t handler, void *context)
{
    w->handler = handler;
    w->handler_context = context;
}
