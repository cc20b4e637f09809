/* SPDX-License-Identifier: MIT */
/*
 * wf_tree.h -- the wait-free buddy tree's node layout and word codes, shared by the tree itself
 * (waitfree.c) and the per-thread cache front over it (wfcache.c). Private to src/waitfree.
 */
#ifndef RT_WAITFREE_WF_TREE_H
#define RT_WAITFREE_WF_TREE_H

#include <limits.h>
#include <stdatomic.h>

#include "rtalloc/waitfree.h"

#ifndef RT_WF_STEP
#define RT_WF_STEP(wf, step, node) ((void)(wf), (void)(node))
#endif
/* RT_WF_TOUCH(wf, node), empty by default, is called by the node access helpers below (and the
 * cache's, wfcache.c) each time a call computes the address of a word of node `node` to read or
 * write it: a test build counts the nodes the code really touches, independently of the traces
 * the code keeps itself (tests/unit/wf_touch.c). */
#ifndef RT_WF_TOUCH
#define RT_WF_TOUCH(wf, node) ((void)(wf), (void)(node))
#endif

/* RT_WF_STEP codes: 1-4 the tree's counter and padding steps, 5-7 the cache's (wfcache.c), then
 * the length-word steps of a chunk's owner and of a free: the check's read of the word (and of
 * the chunk's root after it), the claim (compare-and-swap from the live tag), the store of a
 * live tag that makes a chunk claimable (a hand-out, a pop from a cache). */
#define WF_STEP_DECR 1
#define WF_STEP_UNDO 2
#define WF_STEP_INCR 3
#define WF_STEP_READ 4
#define WF_STEP_LEN 8
#define WF_STEP_CLAIM 9
#define WF_STEP_LIVE 10

/* --- layout assumptions ----------------------------------------------------------------------- */

_Static_assert(sizeof(int) == 4 && sizeof(unsigned) == 4, "counters are 32-bit atomic_uint words");
_Static_assert(sizeof(atomic_uint) == sizeof(unsigned),
               "an atomic counter must have the size of the node word it lives in");
_Static_assert(RT_WF_MAX_HEIGHT >= 2 && RT_WF_MAX_HEIGHT <= 28, "RT_WF_MAX_HEIGHT out of range");
_Static_assert(sizeof(uintptr_t) == sizeof(size_t), "addresses and sizes have the same width");
#if ATOMIC_INT_LOCK_FREE != 2
#error "rtalloc/waitfree: 32-bit atomics must be lock-free on this target"
#endif
#if SIZE_MAX == UINT_MAX
#if ATOMIC_INT_LOCK_FREE != 2
#error "rtalloc/waitfree: size_t atomics must be lock-free on this target"
#endif
#elif SIZE_MAX == ULONG_MAX
#if ATOMIC_LONG_LOCK_FREE != 2
#error "rtalloc/waitfree: size_t atomics must be lock-free on this target"
#endif
#else
#if ATOMIC_LLONG_LOCK_FREE != 2
#error "rtalloc/waitfree: size_t atomics must be lock-free on this target"
#endif
#endif

#define WF_NONE SIZE_MAX
#define WF_MIN_NODE 16u
#define WF_MAX_NODE 4096u

/* Length-word states. 0 is none of them, so a zeroed word never validates. ALIGNED: allocated by
 * memalign, the returned pointer is not the data start (its offset is recorded there). */
#define WF_ST_ALLOC 1u
#define WF_ST_FREED 2u
#define WF_ST_CTRL 3u
#define WF_ST_ALIGNED 4u
/* wfcache.c: CACHED -- live for the tree, free for the application (held by a per-thread cache);
 * RECORD -- a cache's own record: never handed out, never freed, not reported by walk. */
#define WF_ST_CACHED 5u
#define WF_ST_RECORD 6u

/* Padding word of a free node, its payload in bits 0-15: hint per side (1 + height of the largest
 * wholly free subtree on that side, 0: none; at most 29) and the pristine flag. RT_HARDENING >= 1
 * keeps a keyed copy of the payload in bits 16-31 (wf_pad_enc). */
/* clang-format reads (p) & 0x7Fu as a cast of &0x7Fu */
/* clang-format off */
#define WF_HINT_L(p) ((unsigned)((p) & 0x7Fu))
/* clang-format on */
#define WF_HINT_R(p) ((unsigned)(((p) >> 8) & 0x7Fu))
#define WF_PRISTINE 0x80u
#define WF_PAD_PAYLOAD 0xFFFFu

/* The counter code (header comment): word = WF_CB + c * WF_CK, c = (word - WF_CB) * WF_CKINV
 * (mod 2^32; WF_CK * WF_CKINV = 1). WF_CKINV: every one-byte change of a word moves c by at least
 * 12,789,504 (> 2^23) in either direction (found by search over odd multipliers: for every byte
 * position k and every byte difference d, |d 2^(8k) WF_CKINV| mod 2^32, signed). WF_CB: the 256
 * words of one repeated byte decode beyond +-2^25. */
#if RT_HARDENING >= 1
#define WF_CK 0xB85434BDu
#define WF_CKINV 0x0A826695u
#define WF_CB 0x21636369u
#else
#define WF_CK 1u
#define WF_CKINV 1u
#define WF_CB 0u
#endif
_Static_assert((uint32_t)(WF_CK *WF_CKINV) == 1u, "WF_CKINV is the inverse of WF_CK");

struct rt_wf {
    uintptr_t base;     /* node 0 (aligned to min(B, 64)) */
    size_t nodes;       /* N = 2^(H+1) - 1 */
    size_t node_size;   /* B */
    size_t max_request; /* usable bytes of the largest chunk that can ever be allocated */
    size_t ctrl_root;   /* index of the control chunk's root; WF_NONE when split */
    size_t ctrl_nodes;  /* nodes of the control chunk (0 when split) */
    size_t first_block; /* bytes from node 0 to the first node that can hold a user chunk */
    unsigned node_log2;
    unsigned height;     /* H */
    unsigned max_height; /* height of the largest chunk that can ever be allocated */
    unsigned flags;
    uint32_t seed; /* keys the length tags and canaries to this instance: drawn at create,
                                never the key the buffer's previous control block held */
    rt_error_handler_t handler;
    void *handler_context;
    atomic_size_t mallocs, frees, failures, errors, reallocs, reallocs_in_place;
    atomic_size_t used_nodes, peak_nodes, watermark;
    atomic_uint last_nodes;
};

#define WF_CTRL_ALIGN ((size_t) _Alignof(struct rt_wf))

/* --- small helpers ------------------------------------------------------------------------------ */

static inline size_t wf_pow2(unsigned k) { return (size_t)1 << (k & (8u * sizeof(size_t) - 1u)); }
static inline int wf_leaves(unsigned h) { return (int)(1u << (h & 31u)); } /* h <= 28 */
static inline unsigned wf_log2_floor(size_t x) { return 8u * (unsigned)sizeof(size_t) - 1u - RT_CLZ(x); }
static inline size_t wf_subtree(unsigned h) { return wf_pow2(h + 1u) - 1u; } /* nodes below and at (h) */

/* Two's complement reading of a 32-bit word (no implementation-defined conversion). */
static inline int wf_s32(uint32_t x) { return x <= (uint32_t)INT_MAX ? (int)x : -(int)(~x) - 1; }
/* The counter code of node i: the word of value c, the value of a word, the word-delta of an
 * amount. The code carries c + WF_CPLACE(i): a valid word copied from node j to node i decodes
 * there off by (j - i) * WF_CPLACE multiples (mod 2^32; the golden-ratio multiplier spreads those
 * evenly: a word from within a few thousand nodes lands 2^18 or more from its value), so an
 * overrun that copies another node's counter over this one is out of range as surely as a random
 * one. A fetch-and-add of a delta keeps the place (it adds to c only). */
#if RT_HARDENING >= 1
/* clang-format reads (uint32_t)(i) * k as a cast of a dereference */
/* clang-format off */
#define WF_CPLACE(i) ((uint32_t)(i) * 0x9E3779B1u)
/* clang-format on */
#else
#define WF_CPLACE(i) ((void)(i), 0u)
#endif
static inline uint32_t wf_enc(size_t i, int c) { return WF_CB + ((uint32_t)c + WF_CPLACE(i)) * WF_CK; }
static inline int wf_dec(size_t i, uint32_t word)
{
    return wf_s32((uint32_t)((word - WF_CB) * WF_CKINV) - WF_CPLACE(i));
}
static inline uint32_t wf_delta(int amount) { return (uint32_t)amount * WF_CK; }

/* The range a counter of height h can hold (eq. 3): at most its leaves; below 0 only while failed
 * decrements pass (each of at most 2^h), bounded at 2^(h+10) -- up to 1024 calls failing at one
 * node at once. Always true at RT_HARDENING 0. */
static inline bool wf_ctr_ok(int c, unsigned h)
{
    if (RT_HARDENING < 1) {
        return true;
    }
    return c <= (int)(1u << (h & 31u)) && (h + 10u >= 31u || c >= -(int)(1u << (h + 10u)));
}

static inline uint32_t wf_mix(uint32_t x) /* murmur3's finaliser: every input bit moves every output bit */
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

/* Length word: bits 0-2 = 001 (so setting a low bit never leaves a valid word valid), 3-7 the
 * height, 8-10 the state, 11-31 check bits. */
#define WF_LEN_FIXED 1u
#define WF_LEN_HEIGHT(len) (((len) >> 3) & 31u)
#define WF_LEN_STATE(len) (((len) >> 8) & 7u)

static inline uint32_t wf_tag_keyed(const rt_wf_t *w, size_t i, unsigned h, unsigned state)
{
    uint32_t x = wf_mix(((uint32_t)i * 0x9E3779B1u) ^ w->seed ^ ((uint32_t)h << 24) ^ ((uint32_t)state << 29));
    return (x & ~(uint32_t)0x7FFu) | ((uint32_t)state << 8) | ((uint32_t)h << 3) | WF_LEN_FIXED;
}
/* A cached chunk's tag is its live tag with the state bits moved to CACHED and the check bits
 * xored with a key of the instance: a cache turns one into the other with one xor (wfcache.c). */
static inline uint32_t wf_cached_flip(uint32_t seed)
{
    return (wf_mix(seed ^ 0x2F1C5A3Bu) & ~(uint32_t)0x7FFu) | ((uint32_t)(WF_ST_ALLOC ^ WF_ST_CACHED) << 8);
}
static inline uint32_t wf_tag(const rt_wf_t *w, size_t i, unsigned h, unsigned state)
{
    if (state == WF_ST_CACHED) {
        return wf_tag_keyed(w, i, h, WF_ST_ALLOC) ^ wf_cached_flip(w->seed);
    }
    return wf_tag_keyed(w, i, h, state);
}

/* Padding word of a free node (RT_HARDENING >= 1): the payload and, in bits 16-31, the payload
 * xor a key of the node's index -- a change confined to either half never validates. */
static inline uint32_t wf_pad_key(const rt_wf_t *w, size_t i) { return (((uint32_t)i * 0x9E3779B1u) ^ w->seed) >> 16; }
static inline uint32_t wf_pad_enc(const rt_wf_t *w, size_t i, uint32_t payload)
{
    if (RT_HARDENING < 1) {
        return payload;
    }
    return payload | ((payload ^ wf_pad_key(w, i)) << 16);
}
static inline bool wf_pad_valid(const rt_wf_t *w, size_t i, uint32_t pad)
{
    return RT_HARDENING < 1 || (pad >> 16) == ((pad ^ wf_pad_key(w, i)) & WF_PAD_PAYLOAD);
}

/* Canary of a live chunk's root: keyed, and never a valid free padding (a live root is never
 * taken for a free node, even with a damaged counter). */
static inline uint32_t wf_canary(const rt_wf_t *w, size_t i)
{
    uint32_t c = wf_mix(((uint32_t)i * 0x2545F491u) ^ w->seed ^ 0xA5C3E1F7u);
    if (RT_HARDENING >= 1 && wf_pad_valid(w, i, c)) {
        c ^= 0x10000u;
    }
    return c;
}

/* Key of the offset word memalign leaves before an aligned pointer at byte offset `off`. */
static inline uint32_t wf_offset_key(const rt_wf_t *w, size_t off)
{
    return wf_mix((uint32_t)(off >> 2) ^ w->seed ^ 0x6A09E667u);
}

/* Padding payload of a free internal node of height h >= 1 whose subtree is wholly free. */
static inline uint32_t wf_allfree(unsigned h) { return h == 0u ? 0u : (uint32_t)h | ((uint32_t)h << 8); }
static inline unsigned wf_hint_max(uint32_t pad)
{
    unsigned l = WF_HINT_L(pad), r = WF_HINT_R(pad);
    return l > r ? l : r;
}
/* The side to try first for a request of height s: the left one if its hint promises a wholly
 * free subtree of height >= s, else the right one if its does, else the left (the paper's order).
 * So the chunk found is the one the paper's depth-first search finds -- the leftmost free one --
 * and with exact hints it is reached along the direct path. */
static inline unsigned wf_hint_side(uint32_t pad, unsigned s)
{
    return WF_HINT_L(pad) < s + 1u && WF_HINT_R(pad) >= s + 1u ? 1u : 0u;
}

static inline uint32_t wf_hint_set(uint32_t pad, unsigned side, unsigned f)
{
    return side == 0u ? (pad & ~(uint32_t)0x7Fu) | f : (pad & ~(uint32_t)0x7F00u) | ((uint32_t)f << 8);
}

/* --- node access: the only code that computes node addresses ------------------------------------ */

static inline unsigned char *wf_node(const rt_wf_t *w, size_t i)
{
    return (unsigned char *)(w->base + (i << w->node_log2));
}
static inline atomic_uint *wf_counter(const rt_wf_t *w, size_t i)
{
    RT_WF_TOUCH(w, i);
    return (atomic_uint *)(void *)(wf_node(w, i) + w->node_size - 4u);
}
/* Value of node i's counter (relaxed; for inspection and quiescent walks). */
static inline int wf_ctr_peek(const rt_wf_t *w, size_t i)
{
    return wf_dec(i, atomic_load_explicit(wf_counter(w, i), memory_order_relaxed));
}
static inline void wf_ctr_set(const rt_wf_t *w, size_t i, int value)
{
    atomic_store_explicit(wf_counter(w, i), wf_enc(i, value), memory_order_relaxed);
}
static inline atomic_uint *wf_pad(const rt_wf_t *w, size_t i)
{
    RT_WF_TOUCH(w, i);
    return (atomic_uint *)(void *)(wf_node(w, i) + w->node_size - 8u);
}

/* The length word of node i (the tag of the chunk whose first node it is). An atomic word: two
 * frees of one chunk race for it (wf_len_claim), and a stale free may read it while the chunk's
 * owner writes it. Its transitions: a live tag (ALLOC, ALIGNED) is left only by a claim, a
 * compare-and-swap that exactly one of any number of racing frees wins; every other state is
 * left only by the one call that holds the chunk (the descent that claimed it, the cache that
 * holds it, the free that claimed it), by plain atomic stores. */
static inline atomic_uint *wf_len_word(const rt_wf_t *w, size_t i)
{
    RT_WF_TOUCH(w, i);
    return (atomic_uint *)(void *)wf_node(w, i);
}
/* The accesses, on node i's length word `word` (wf_len_word(w, i), or the cache's own address of
 * it, wfcache.c). A free's check reads the word with acquire: it pairs with the release store of
 * a live tag (wf_len_live_at), so the root's canary and counter read after it are at least as
 * new as the hand-out that wrote the tag. */
static inline uint32_t wf_len_check_at(const rt_wf_t *w, size_t i, atomic_uint *word)
{
    (void)i;
    RT_WF_STEP(w, WF_STEP_LEN, i);
    return atomic_load_explicit(word, memory_order_acquire);
}
/* The chunk becomes claimable by a free: release, pairing with the free's acquire check and
 * claim, so what the holder did with the chunk's words before (a pop's read of its link, the
 * canary written at a hand-out) happens before whatever the free that claims it does next. */
static inline void wf_len_live_at(const rt_wf_t *w, size_t i, atomic_uint *word, uint32_t tag)
{
    (void)i;
    RT_WF_STEP(w, WF_STEP_LIVE, i);
    atomic_store_explicit(word, tag, memory_order_release);
}
/* The claim of a free: the word from the live tag its check read to `to` (FREED, CACHED), one
 * compare-and-swap, never retried: false means another call changed the word since the check --
 * another free claimed the chunk (it is theirs; this free is a double free), whatever happened
 * to the chunk after that. Acquire on success: pairs with wf_len_live_at (above); the failure
 * reads nothing it acts on (relaxed). Wait-free. */
static inline bool wf_len_claim_at(const rt_wf_t *w, size_t i, atomic_uint *word, uint32_t live, uint32_t to)
{
    (void)i;
    RT_WF_STEP(w, WF_STEP_CLAIM, i);
    uint32_t expected = live;
    return atomic_compare_exchange_strong_explicit(word, &expected, to, memory_order_acquire, memory_order_relaxed);
}
static inline uint32_t wf_len_check(const rt_wf_t *w, size_t i) { return wf_len_check_at(w, i, wf_len_word(w, i)); }
static inline void wf_len_live(const rt_wf_t *w, size_t i, uint32_t tag)
{
    wf_len_live_at(w, i, wf_len_word(w, i), tag);
}
static inline bool wf_len_claim(const rt_wf_t *w, size_t i, uint32_t live, uint32_t to)
{
    return wf_len_claim_at(w, i, wf_len_word(w, i), live, to);
}
/* Relaxed: the holder's own reads, and quiescent inspection. */
static inline uint32_t wf_len_peek(const rt_wf_t *w, size_t i)
{
    return atomic_load_explicit(wf_len_word(w, i), memory_order_relaxed);
}
/* A state only the holder of the chunk leaves (or a word outside any live chunk). Relaxed. */
static inline void wf_len_set(const rt_wf_t *w, size_t i, uint32_t tag)
{
    atomic_store_explicit(wf_len_word(w, i), tag, memory_order_relaxed);
}

/* Acquire: pairs with the release store that clears the pristine flag (lazy). */
static inline uint32_t wf_pad_load(const rt_wf_t *w, size_t i)
{
    RT_WF_STEP(w, WF_STEP_READ, i);
    return atomic_load_explicit(wf_pad(w, i), memory_order_acquire);
}
/* Stores the padding of a free node: its payload, coded (wf_pad_enc). */
static inline void wf_pad_store(const rt_wf_t *w, size_t i, uint32_t payload)
{
    atomic_store_explicit(wf_pad(w, i), wf_pad_enc(w, i, payload), memory_order_relaxed);
}

/* Index of the first node (leftmost leaf) of the subtree rooted at i of height h. */
static inline size_t wf_first(size_t i, unsigned h) { return i - (wf_subtree(h) - 1u); }

/* --- the tree's internal entry points for the cache front (wfcache.c) --------------------------- */

typedef struct wf_chunk {
    size_t first;  /* index of the first node */
    size_t root;   /* index of the root (last node) */
    size_t k;      /* position of the root at its height */
    size_t offset; /* bytes from the chunk's data start to the pointer (memalign) */
    unsigned h;
    uint32_t tag; /* the live tag the check read (what a claim expects) */
} wf_chunk_t;

/* Height of the chunk a request of size bytes (1 .. max_request) takes. */
unsigned wf_height_for(const rt_wf_t *w, size_t size);
/* RT_ERR_NONE iff ptr is the pointer malloc or memalign returned for a live chunk (waitfree.c). */
rt_error_kind_t wf_validate(const rt_wf_t *w, const void *ptr, wf_chunk_t *ch);
/* Counts and delivers a report (refused: also a failure). */
void wf_report(rt_wf_t *w, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr, size_t size);
/* Counts a failed request. */
void wf_count_failure(rt_wf_t *w);
/* Claims one chunk of height s + j by one descent (the instance's variant, its bound) and makes
 * it 2^j live chunks of height s; their first nodes, in address order, in firsts[0 .. 2^j). State
 * WF_ST_CACHED: counted as mallocs, the first handed out (ALLOC, by wf_len_live), the others
 * CACHED (no free can claim them before the caller caches them); WF_ST_RECORD: j = 0, not
 * counted. Returns 2^j, or 0 when nothing was claimed (not counted as a failure; a search that
 * met damage is reported). The 2^(j+1) - 1 nodes of height >= s inside the claimed chunk are
 * written: O(2^j) beyond the descent, no RMW. */
size_t wf_claim_pieces(rt_wf_t *w, unsigned s, unsigned j, unsigned state, size_t *firsts, rt_wf_trace_t *t);
/* Releases the live chunk of height h at first, which the caller holds (its length word says
 * CACHED: no free can claim it): its root counter and canary and the H - h ancestors are checked
 * first; a damaged chunk or path is reported (CORRUPTED) and kept out of the tree (false), else
 * its length word is set to FREED and it is released. O(H). */
bool wf_release_held(rt_wf_t *w, size_t first, unsigned h, rt_wf_trace_t *t);
/* rt_wf_create with `extra` more bytes in the control chunk, 64-aligned, at *extra_out (zeroed);
 * *room_out receives the bytes from there to the end of the control chunk's data (>= extra), and
 * *peeked the 32-bit word at *extra_out + peek (peek + 4 <= extra) as the buffer held it before
 * (a previous instance's key there, for the caller's own new key to differ from). */
rt_wf_t *wf_create_reserve(void *mem, size_t size, const rt_wf_config_t *config, size_t extra, void **extra_out,
                           size_t *room_out, size_t peek, uint32_t *peeked);
/* A new key for an instance whose buffer held `old` where the key is kept: a draw of the core's
 * entropy (base/hooks.h, rt_entropy_draw), never equal to old. */
uint32_t wf_new_seed(uint32_t old);
size_t wf_min_buffer_reserve(const rt_wf_config_t *config, size_t extra);

#endif /* RT_WAITFREE_WF_TREE_H */
