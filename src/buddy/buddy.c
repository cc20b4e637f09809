/* SPDX-License-Identifier: MIT */
/*
 * buddy.c -- binary buddy allocator over a caller-supplied buffer (rtalloc/buddy.h).
 *
 * Algorithm (Knuth, TAOCP vol. 1 section 2.5, "buddy system"; Masmano et al. 2006 section 2):
 * blocks are 2^k bytes, k in [m, k_max], m = RT_BUDDY_MIN_LOG2. A block of order k lies at an
 * address that is a multiple of 2^k -- an absolute address, not an offset: the arena is laid
 * over a virtual power-of-two grid whose parts outside the buffer are simply never free. The
 * buddy of the order-k block at b is b XOR 2^k. malloc takes the head of the lowest non-empty
 * list of order >= the request's (one find-first-set over a bitmap of non-empty orders) and
 * splits it down, pushing each upper half on its list; free merges with the buddy while the
 * buddy lies wholly inside the arena, is free and has the same order.
 *
 * Layout of the buffer (U = 2^m, n = units of the arena):
 *
 *   [pad < align][struct rt_buddy][table: n bytes][guard G][pad < U+1][arena: n * U bytes][pad < U]
 *
 * The arena ends at the last U boundary of the buffer; n is the largest count for which the
 * table of n bytes and the guard fit below the arena: n = floor((arena_end - table - G) / (U + 1)),
 * G = BD_GUARD (32 bytes at RT_HARDENING >= 1, else 0). The table has
 * one byte per unit; the byte of a block's first unit holds its order (6 bits), FREE and START;
 * the bytes of all other units are 0. A pointer is therefore a live block iff it is unit-aligned
 * inside the arena and its byte is START without FREE: free() validates exactly, in O(1). The
 * initial free set is the canonical decomposition of [arena, arena_end) into maximal aligned
 * power-of-two blocks (at most 2 per order); the largest of them bounds every later block.
 *
 * Bounds (K = k_max - m <= 8 * sizeof(size_t) - 1 - m; 58 on 64-bit, 26 on 32-bit by default):
 *   malloc, calloc, memalign   1 find-first-set + at most K splits           O(K)  (+ memset)
 *   free                       O(1) validation + at most K merges            O(K)
 *   realloc                    O(K) in place (split or absorb right buddies), else
 *                              malloc + copy of the old block + free         O(K)  (+ memcpy)
 *   usable_size, stats, max_request, last_probes                             O(1)
 *   create                     O(n) to clear the table + O(bits) blocks
 *   check                      O(n + free blocks); walk O(n)
 * Probes of a malloc: 1 (the bitmap search) + the number of splits, so 1 <= probes <= K + 1.
 *
 * Hardening (RT_HARDENING >= 1, the default; config.h). The table is out of band, but the two
 * list links live in the first 2 words of each free block, where a write past the end of the
 * block below (or before the start of a block of one unit) lands. Design, after glibc's safe
 * unlinking, checked against the exact table instead of against the links alone, with each link
 * sealed to the place and the life it was written in:
 *   - each list is circular and doubly linked (no NULL link: a link zeroed by an overflow is
 *     never "end of list"; the head's prev is the tail), so every member x satisfies
 *     next(x)'s prev == x and prev(x)'s next == x, the list's head and tail included;
 *   - a link read from a free block is followed or written through only if bd_link_ok: a
 *     unit-aligned address inside the arena whose table byte says "free block of this order
 *     starts here" (a link into a live block, into the middle of a block, to a free block of
 *     another order, outside the arena or misaligned fails), and an unlink or push first checks
 *     that both neighbours point back (bd_linked). Since the table is out of band and exact, the
 *     allocator writes a link only into a block the table says is free, and hands out only a
 *     list head, which is always a free block of its order (only verified unlinks move a head):
 *     an overwritten link can cost memory, never a write into a live block, outside the arena
 *     or a fault. Any change to the links of one block x of a consistent list is detected by
 *     the next call that reads them, or by check(): a next of x that decodes to another block
 *     than its true successor fails at x unless it decodes to x itself (any other block whose
 *     prev is x is the true successor); likewise for prev. So the back links alone leave one
 *     forgery: both links of x decoding to x, which makes x look like a list of one that
 *     vouches for itself (it reads its own prev as its next's back link) and silently loses
 *     the rest of its list. With plain links an overrun that copies the links of x's partner in
 *     a list of two makes exactly that (both of the partner's links name x);
 *   - hence sealed links: x's next word holds next + seal(x) and its prev word prev - seal(x),
 *         seal(x) = key * (x + 1)   (mod 2^W, W the word's bits),
 *     with key = 2 mod 4 drawn by each create (bd_new_key: rt_entropy_draw), never the key the
 *     buffer held where the control structure stands. The forgery above now needs x's words to
 *     be exactly (x + seal(x), x - seal(x)):
 *       . a copy of at most one word (W/8 bytes) leaves x's prev word as it was: detected,
 *         always;
 *       . the next word of another free block M (its next n') copied onto x's next word
 *         decodes there to n' + key * (M - x). For x's partner in a list of two (n' = x) that
 *         is x only if key * (M - x) = 0 mod 2^W, never, as key = 2 mod 4 and the two blocks
 *         are less than 2^(W-1) bytes apart (an arena smaller than half the address space);
 *         for an M alone on its list (n' = M) only if (1 + key) * (M - x) = 0, never, as
 *         1 + key is odd. Both copies the back links missed are thus detected, always;
 *       . any other word -- another link (the pair of an M whose neighbours x lies midway
 *         between, a prev word landing on a next word), a control word, the table, application
 *         data -- has the needed value only by a coincidence with the drawn key (for M's pair:
 *         2 * key * (x - M) = n' - p', a chance below 8 * arena / 2^W; the key word itself
 *         would need x * (1 + key) = 0, never);
 *       . a STALE link -- written at the same place by an earlier life over the buffer, key
 *         k0 -- decodes under the new key k1 to its old value -/+ (k1 - k0) * (x + 1), never
 *         the old value (x + 1 is odd and k1 != k0): it fails as a copied link does.
 *     So a link verifies only where it was written, in the life that wrote it: a copied or
 *     stale link is detected, at the latest, by the call that next acts on it. The seal is a
 *     check against accident (an overflow, a copy, a stale pointer), not a MAC: an application
 *     that reads a free block's links can learn the key; the table and back-link checks still
 *     keep such a forger's writes inside the arena;
 *   - a guard of BD_GUARD bytes between the table and the arena, so a write of up to that many
 *     bytes before the first block cannot reach the table.
 * Containment of a damaged link (found at the free block d of order k):
 *   - d is quarantined: its table byte becomes BD_LOST | k (FREE without START), so it is never
 *     handed out, merged, linked or freed again (free(d) is RT_ERR_BAD_POINTER): 2^k bytes lost;
 *   - if d is the head of list k (malloc takes it, or a push reads its prev), list k is dropped
 *     (emptied): its other members stay tagged free but unlisted. Such an orphan is still merged
 *     with its buddy when that is freed, if its own links agree with its neighbours' (they are
 *     orphans too), and is quarantined like d otherwise. A damaged block d found in the middle
 *     of list k (by a merge) is quarantined alone; the list is dropped when a call reaches d's
 *     neighbours through it (their links to d no longer pass bd_link_ok).
 *   - the call reports RT_ERR_CORRUPTED with pointer = d and is refused (rtalloc/common.h): malloc,
 *     calloc and memalign return NULL; realloc returns NULL and leaves the old block as it was;
 *     free leaves the block allocated (stats.frees unchanged). Each call checks everything it
 *     will read before its first change (free: every buddy it will merge with and the list it
 *     will push on; realloc in place: the buddies it absorbs or the lists it gives halves to;
 *     realloc by moving: the old block's free first), so refusing needs no undo. Containment
 *     makes a retry sound: a free refused at a damaged buddy succeeds the next time, merging
 *     below the quarantined block. check() reports every damaged link, every quarantined block
 *     and every orphan.
 * Cost of the default level: O(1) more per link touched -- a list unlink reads 2 more words
 * (the neighbours' back links) and 2 table bytes, a push onto a non-empty list reads the tail
 * (1 word and 1 table byte) and writes 1 more word, and every block whose links are read or
 * written costs one seal (a multiply and an add); free checks its whole merge chain in a
 * first pass and merges in a second without checking again (the links it unlinks are read
 * twice, the tags once). malloc does at most one unlink (3 seals) and K pushes onto empty
 * lists (1 seal each), free at most K unlinks (3 seals checked, 3 done) and one push (2
 * checked, 3 done), so the bounds below keep their form with a larger constant. Measured
 * (bench/callgrind_check.sh -w churn buddy: exact mean instructions per call over every call,
 * x86-64 gcc 12 -O3): malloc 81.5 at level 0 -> 126.1 at level 1, free 102.8 -> 152.1 (with
 * the back links alone, before the seals: 112.0 and 129.7); code +1070 bytes on Cortex-M4 -Os
 * (+296 of it for the seals). RT_HARDENING 2 adds nothing here.
 * Memory: BD_GUARD = 32 bytes more in the layout; the control structure holds two words for it
 * (the damage found by the current call, and the key).
 * RT_HARDENING 0 keeps the original NULL-terminated lists with no checks: an overflow into a
 * free neighbour's link may then fault inside malloc or hand a live block out twice.
 *
 * Fragmentation: internal up to 50% per block (a request of 2^j + 1 bytes takes 2^(j+1));
 * external: a free block merges only with its buddy, so free memory can be split in blocks too
 * small for a request although adjacent (Masmano measured F ~ 70% for the binary buddy).
 * Overhead: the control structure + n bytes of table (1/U of the arena) + G + < 2U of padding.
 *
 * Freestanding C11: no libc, no globals; every byte of state lives in the caller's buffer.
 */
#include <stddef.h>

#include "front/front.h"
#include "rtalloc/buddy.h"

/* --- constants and layout assumptions ------------------------------------------------------- */

#define BD_BITS ((unsigned)(8u * sizeof(size_t)))
#define BD_MIN ((unsigned)RT_BUDDY_MIN_LOG2)
#define BD_UNIT ((size_t)1 << RT_BUDDY_MIN_LOG2)
#define BD_ORDERS (BD_BITS - BD_MIN) /* orders m .. BITS-1: one list and one bitmap bit each */

/* Table byte of a block's first unit; 0 for every other unit. */
#define BD_ORDER_MASK 0x3Fu
#define BD_FREE 0x40u
#define BD_START 0x80u
/* A quarantined block (its links were found damaged): FREE without START, and its order. Never
 * handed out, merged, linked or freed again; check() reports it. Only at RT_HARDENING >= 1. */
#define BD_LOST BD_FREE

/* RT_HARDENING >= 1: circular lists with verified links (see the top of the file). */
#define BD_HARDENED (RT_HARDENING >= 1)
/* Bytes kept free between the table and the arena, so that a write of up to this many bytes
 * before the first block cannot reach the table (the last unit's byte is the table's last). */
#define BD_GUARD ((size_t)(BD_HARDENED ? 32u : 0u))

/* The two link words at the start of a free block (list k: the free blocks of order k). Each
 * holds its link, the address of a free block of the same list, plus the seal of the word's own
 * address (bd_seal: RT_HARDENING >= 1; the plain address, 0 for none, at level 0). */
typedef struct bd_node {
    uintptr_t next;
    uintptr_t prev;
} bd_node;

struct rt_buddy {
    uintptr_t arena;     /* first byte of the arena (U-aligned) */
    uintptr_t arena_end; /* one past the last byte (U-aligned) */
    uint8_t *table;      /* one byte per unit, table[(addr - arena) >> m] */
    size_t units;        /* n */
    unsigned max_order;  /* k_max: order of the largest block this arena can ever hold */
    unsigned last_probes;
    size_t nonempty; /* bit k - m set iff heads[k - m] != 0 */
    size_t used_bytes;
    size_t used_blocks;
    size_t free_blocks;
    size_t peak_used;
    size_t watermark; /* highest block end handed out, minus arena */
    uint64_t mallocs, frees, reallocs, reallocs_in_place;
    rt_hooks_t hooks;
    uintptr_t damage;           /* RT_HARDENING >= 1: the first damaged block the current call found
                            (0: none); reported after the lock is released */
    uintptr_t key;              /* RT_HARDENING >= 1: the links' key, drawn anew by each create
                            (bd_new_key); 0 at level 0 */
    uintptr_t heads[BD_ORDERS]; /* the first block of list k - m, 0: empty. RT_HARDENING >= 1:
                                   circular lists; else 0-terminated */
};

#define BD_ALIGN ((size_t) _Alignof(struct rt_buddy))

_Static_assert(RT_BUDDY_MIN_LOG2 >= 1 && RT_BUDDY_MIN_LOG2 < 8 * sizeof(size_t) - 1, "RT_BUDDY_MIN_LOG2 out of range");
_Static_assert(BD_UNIT >= 2u * sizeof(void *), "a free block must hold its two list links");
_Static_assert(BD_UNIT >= sizeof(bd_node), "a free block must hold its two list links");
_Static_assert(8 * sizeof(size_t) - 1 <= BD_ORDER_MASK, "an order must fit the table byte");
_Static_assert(BD_ORDERS <= 8 * sizeof(size_t), "the non-empty-order bitmap is one size_t");
_Static_assert(sizeof(uintptr_t) == sizeof(size_t), "addresses and sizes have the same width");
_Static_assert((_Alignof(struct rt_buddy) & (_Alignof(struct rt_buddy) - 1)) == 0 && _Alignof(struct rt_buddy) >= 2 &&
                   _Alignof(struct rt_buddy) <= BD_UNIT,
               "rt_buddy_min_buffer assumes 2 <= alignof(control) <= unit, both powers of two");

/* --- bit helpers (no shift can be undefined: every count is masked below the width) -------- */

static inline size_t bd_pow2(unsigned k) { return (size_t)1 << (k & (BD_BITS - 1u)); }
static inline unsigned bd_log2_floor(size_t x) { return BD_BITS - 1u - RT_CLZ(x); } /* x != 0 */
/* x rotated right by m bits: the unit index of an offset that is a multiple of U; any other
 * offset has a low bit rotated to the top, so the result is >= 2^(BITS - m) > n. */
static inline size_t bd_unit_index(size_t x) { return (x >> BD_MIN) | (x << ((BD_BITS - BD_MIN) & (BD_BITS - 1u))); }
static inline uintptr_t bd_align_up(uintptr_t x, size_t a) { return (x + (a - 1u)) & ~(uintptr_t)(a - 1u); }

/* Order of the smallest block holding `size` bytes; 0 < size <= 2^(BITS-1). */
static inline unsigned bd_order_of(size_t size) { return size <= BD_UNIT ? BD_MIN : BD_BITS - RT_CLZ(size - 1u); }

/* --- locking and errors --------------------------------------------------------------------- */

static inline uintptr_t bd_lock(rt_buddy_t *b) { return rt_hooks_lock(&b->hooks); }
static inline void bd_unlock(rt_buddy_t *b, uintptr_t token) { rt_hooks_unlock(&b->hooks, token); }

static void bd_report(rt_buddy_t *b, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                      size_t size)
{
    rt_hooks_report(&b->hooks, refused, kind, operation, ptr, size);
}

/* The buddy as the allocator front sees it (front/front.h). */
static void *bd_front_malloc(void *b, size_t size) { return rt_buddy_malloc(b, size); }
static void bd_front_free(void *b, void *ptr) { rt_buddy_free(b, ptr); }
static void bd_front_report(void *b, bool refused, rt_error_kind_t kind, const char *operation, const void *ptr,
                            size_t size)
{
    bd_report(b, refused, kind, operation, ptr, size);
}
static size_t bd_front_max(const void *b) { return rt_buddy_max_request(b); }
static const rt_front_ops_t bd_front = {bd_front_malloc, bd_front_free, bd_front_report, bd_front_max};

/* --- block verbs: the only code that touches table bytes or list links ----------------------- */

static inline uint8_t *bd_byte(const rt_buddy_t *b, uintptr_t addr) { return &b->table[(addr - b->arena) >> BD_MIN]; }
static inline bd_node *bd_node_at(uintptr_t addr) { return (bd_node *)(void *)addr; }
static inline uint8_t bd_tag(unsigned order, unsigned flags) { return (uint8_t)(BD_START | flags | order); }

/* True iff [addr, addr + size) lies inside the arena (no overflow for any addr). */
static inline bool bd_inside(const rt_buddy_t *b, uintptr_t addr, size_t size)
{
    return addr >= b->arena && addr < b->arena_end && b->arena_end - addr >= size;
}

/* True iff the block at addr is free and of order k (addr inside the arena, unit-aligned). */
static inline bool bd_is_free_of(const rt_buddy_t *b, uintptr_t addr, unsigned k)
{
    return *bd_byte(b, addr) == bd_tag(k, BD_FREE);
}

/* --- sealed links (RT_HARDENING >= 1; see the top of the file) ------------------------------- */

/* The seal of the free block at x under `key` (RT_HARDENING >= 1; 0 at level 0):
 *     seal(x) = key * (x + 1)   (mod 2^W; key = 2 mod 4)
 * x's next word holds next + seal(x), its prev word prev - seal(x) (top of the file). */
static inline uintptr_t bd_seal(uintptr_t key, uintptr_t x) { return BD_HARDENED ? key * (x + 1u) : 0u; }

/* The links of the free block at x as its words say (unverified), and their writers. */
static inline uintptr_t bd_next(uintptr_t key, uintptr_t x) { return bd_node_at(x)->next - bd_seal(key, x); }
static inline uintptr_t bd_prev(uintptr_t key, uintptr_t x) { return bd_node_at(x)->prev + bd_seal(key, x); }
static inline void bd_set_next(uintptr_t key, uintptr_t x, uintptr_t link)
{
    bd_node_at(x)->next = link + bd_seal(key, x);
}
static inline void bd_set_prev(uintptr_t key, uintptr_t x, uintptr_t link)
{
    bd_node_at(x)->prev = link - bd_seal(key, x);
}

/* RT_HARDENING >= 1: true iff `link`, read from a free block of list k, may be followed: a
 * unit-aligned address inside the arena whose table byte says a free block of order k starts
 * there. Reads one table byte; any other value (outside the buffer, into a live block or the
 * middle of one, the table, a block of another order, a quarantined block) fails. O(1). */
static inline bool bd_link_ok(const rt_buddy_t *b, uintptr_t link, unsigned k)
{
    /* below the arena the offset wraps to a huge value; misaligned, bd_unit_index is >= n */
    size_t unit = bd_unit_index((size_t)(link - b->arena));
    return __builtin_expect(unit < b->units && b->table[unit] == bd_tag(k, BD_FREE), 1);
}

/* RT_HARDENING >= 1: true iff the free block x of list k is linked consistently: both of its
 * links pass bd_link_ok and point back at it (next(x)'s prev is x, prev(x)'s next is x; a list
 * of one links x to itself). Writes nothing. O(1): 4 words, 2 table bytes, 3 seals. */
static inline bool bd_linked(const rt_buddy_t *b, uintptr_t x, unsigned k)
{
    uintptr_t key = b->key;
    uintptr_t n = bd_next(key, x);
    uintptr_t p = bd_prev(key, x);
    return __builtin_expect(bd_link_ok(b, n, k) && bd_link_ok(b, p, k) && bd_prev(key, n) == x && bd_next(key, p) == x,
                            1);
}

/* Records the first damaged block of the current call (reported after the unlock). */
static inline void bd_damaged(rt_buddy_t *b, uintptr_t addr)
{
    if (b->damage == 0u) {
        b->damage = addr;
    }
}

/* Empties list k (RT_HARDENING >= 1, after damage was found at its head): its members stay
 * tagged free, unlisted (orphans; see the top of the file). O(1). */
static inline void bd_drop_list(rt_buddy_t *b, unsigned k)
{
    b->heads[k - BD_MIN] = 0u;
    b->nonempty &= ~bd_pow2(k - BD_MIN);
}

/* Quarantines the free block d of order k whose links were found damaged (RT_HARDENING >= 1):
 * tagged lost, never touched again; if it heads list k, the list is dropped, so that a head is
 * always a free block of its order. O(1). */
static void __attribute__((noinline, cold)) bd_quarantine(rt_buddy_t *b, uintptr_t d, unsigned k)
{
    if (b->heads[k - BD_MIN] == d) {
        bd_drop_list(b, k);
    }
    *bd_byte(b, d) = (uint8_t)(BD_LOST | k);
    b->free_blocks--;
    bd_damaged(b, d);
}

/* RT_HARDENING >= 1: true iff a block can be pushed on list k: the list is empty, or its tail
 * t = prev(h) (h the head) is a free block of order k whose next is h. Writes nothing. O(1). */
static inline bool bd_push_ok(const rt_buddy_t *b, unsigned k)
{
    uintptr_t h = b->heads[k - BD_MIN];
    if (h == 0u) {
        return true;
    }
    uintptr_t key = b->key;
    uintptr_t t = bd_prev(key, h);
    return __builtin_expect(bd_link_ok(b, t, k) && bd_next(key, t) == h, 1);
}

/* Makes [addr, addr + 2^k) a free block of order k: tags it and pushes it on list k. With
 * RT_HARDENING >= 1 the list is circular and the caller has checked bd_push_ok (or knows the
 * list is empty); the new head goes between the tail t and the old head h:
 *   [t] <-> [h] ...  =>  [t] <-> [x] <-> [h] ...      (an empty list: [x] linked to itself)
 * O(1). */
static inline void bd_put_free(rt_buddy_t *b, uintptr_t addr, unsigned k)
{
    uintptr_t *head = &b->heads[k - BD_MIN];
    uintptr_t key = b->key;
    uintptr_t h = *head;
    if (BD_HARDENED) {
        if (RT_DEBUG >= 1) {
            RT_ASSERT(bd_push_ok(b, k));
        }
        if (h != 0u) {
            uintptr_t t = bd_prev(key, h);
            bd_set_next(key, addr, h);
            bd_set_prev(key, addr, t);
            bd_set_next(key, t, addr);
            bd_set_prev(key, h, addr);
        } else {
            bd_set_next(key, addr, addr);
            bd_set_prev(key, addr, addr);
        }
    } else {
        bd_set_prev(key, addr, 0u);
        bd_set_next(key, addr, h);
        if (h != 0u) {
            bd_set_prev(key, h, addr);
        }
    }
    *head = addr;
    b->nonempty |= bd_pow2(k - BD_MIN);
    b->free_blocks++;
    *bd_byte(b, addr) = bd_tag(k, BD_FREE);
}

/* bd_put_free onto list k known to be empty (a split's upper half): the block alone. O(1). */
static inline void bd_put_first(rt_buddy_t *b, uintptr_t addr, unsigned k)
{
    uintptr_t key = b->key;
    if (RT_DEBUG >= 1) {
        RT_ASSERT(b->heads[k - BD_MIN] == 0u);
    }
    bd_set_next(key, addr, BD_HARDENED ? addr : 0u);
    bd_set_prev(key, addr, BD_HARDENED ? addr : 0u);
    b->heads[k - BD_MIN] = addr;
    b->nonempty |= bd_pow2(k - BD_MIN);
    b->free_blocks++;
    *bd_byte(b, addr) = bd_tag(k, BD_FREE);
}

/* Unlinks the free block at addr from list k. Its tag is left for the caller to rewrite. With
 * RT_HARDENING >= 1 the caller has checked bd_linked(b, addr, k); the head moves only here:
 *   [p] <-> [x] <-> [n]  =>  [p] <-> [n]      (head x => head n; a list of one => empty) */
static inline void bd_take_free(rt_buddy_t *b, uintptr_t addr, unsigned k)
{
    uintptr_t key = b->key;
    uintptr_t next = bd_next(key, addr);
    uintptr_t prev = bd_prev(key, addr);
    if (BD_HARDENED) {
        if (RT_DEBUG >= 1) {
            RT_ASSERT(bd_linked(b, addr, k));
        }
        bd_set_next(key, prev, next);
        bd_set_prev(key, next, prev);
        if (b->heads[k - BD_MIN] == addr) {
            if (next == addr) {
                bd_drop_list(b, k); /* it was the only member */
            } else {
                b->heads[k - BD_MIN] = next;
            }
        }
    } else {
        if (prev != 0u) {
            bd_set_next(key, prev, next);
        } else {
            b->heads[k - BD_MIN] = next;
            if (next == 0u) {
                b->nonempty &= ~bd_pow2(k - BD_MIN);
            }
        }
        if (next != 0u) {
            bd_set_prev(key, next, prev);
        }
    }
    b->free_blocks--;
}

/* The damaged block found by the current call (0: none), cleared; under the lock. */
static inline uintptr_t bd_damage_take(rt_buddy_t *b)
{
    if (!BD_HARDENED) {
        return 0u;
    }
    uintptr_t d = b->damage;
    if (d != 0u) {
        b->damage = 0u;
    }
    return d;
}

static inline void bd_set_used(rt_buddy_t *b, uintptr_t addr, unsigned k) { *bd_byte(b, addr) = bd_tag(k, 0u); }
/* The block at addr was absorbed by a merge: its first unit is no longer a block start. */
static inline void bd_clear(rt_buddy_t *b, uintptr_t addr) { *bd_byte(b, addr) = 0u; }

/* Books a block of order k handed out at addr (or grown to order k). */
static inline void bd_account(rt_buddy_t *b, uintptr_t addr, unsigned k)
{
    size_t end = (size_t)(addr - b->arena) + bd_pow2(k);
    if (b->used_bytes > b->peak_used) {
        b->peak_used = b->used_bytes;
    }
    if (end > b->watermark) {
        b->watermark = end;
    }
}

/* --- the algorithm (all under the lock) ----------------------------------------------------- */

static bool bd_check_locked(rt_buddy_t *b, bool links);

/* Takes a block of order k: the lowest non-empty order j >= k, split j - k times; each split
 *   [--------- 2^j ---------]  =>  [ 2^(j-1) kept ][ 2^(j-1) free ]
 * keeps the lower half (its upper half goes on list j - 1, empty since j is the lowest
 * non-empty order >= k: a split never reads a link). NULL when no order >= k is non-empty, or
 * (RT_HARDENING >= 1) when the head of list j is damaged: it is quarantined and list j dropped,
 * nothing else changed. O(K). */
static inline void *bd_alloc(rt_buddy_t *b, unsigned k)
{
    size_t candidates = b->nonempty & ~(bd_pow2(k - BD_MIN) - 1u);
    b->last_probes = 1u;
    if (candidates == 0u) {
        b->hooks.failures++;
        return NULL;
    }
    unsigned j = BD_MIN + RT_CTZ(candidates);
    uintptr_t addr = b->heads[j - BD_MIN];
    if (BD_HARDENED) {
        if (RT_DEBUG >= 1) {
            RT_ASSERT(bd_is_free_of(b, addr, j)); /* a head is always a free block of its order */
        }
        if (!bd_linked(b, addr, j)) {
            bd_quarantine(b, addr, j);
            return NULL;
        }
    }
    bd_take_free(b, addr, j);
    while (j > k) { /* at most K iterations */
        j--;
        bd_put_first(b, addr + bd_pow2(j), j);
        b->last_probes++;
    }
    bd_set_used(b, addr, k);
    b->used_bytes += bd_pow2(k);
    b->used_blocks++;
    b->mallocs++;
    bd_account(b, addr, k);
    return (void *)addr;
}

/* RT_HARDENING >= 1: checks, before anything changes, everything bd_release will read: each
 * free buddy it will merge with is linked soundly (bd_linked), and the list it will push the
 * result on can take it (bd_push_ok). Then *top is the order the block reaches. On damage the
 * block whose links failed (a buddy, or the target list's head) is quarantined and false
 * returned: the caller refuses. At level 0: true, *top = k_max (bd_release stops by itself).
 * O(K); writes nothing but the quarantine of a damaged block. */
static inline bool bd_release_ok(rt_buddy_t *b, uintptr_t addr, unsigned k, unsigned *top)
{
    if (!BD_HARDENED) {
        *top = b->max_order;
        return true;
    }
    while (k < b->max_order) { /* at most K iterations */
        uintptr_t buddy = addr ^ (uintptr_t)bd_pow2(k);
        if (!bd_link_ok(b, buddy, k)) { /* = inside, and free of order k (exact) */
            break;
        }
        if (!bd_linked(b, buddy, k)) {
            bd_quarantine(b, buddy, k);
            return false;
        }
        addr &= ~(uintptr_t)bd_pow2(k); /* the lower of the two */
        k++;
    }
    if (!bd_push_ok(b, k)) {
        bd_quarantine(b, b->heads[k - BD_MIN], k);
        return false;
    }
    *top = k;
    return true;
}

/* Gives back the used block of order k at addr, merging while the buddy allows, up to order
 * top (from bd_release_ok, which checked every buddy up to there and the list at top):
 *   [* 2^k][buddy free 2^k] => [---- free 2^(k+1) ----]   (and mirrored when * is the upper)
 * The absorbed upper block's tag is cleared. O(K). */
static inline void bd_release(rt_buddy_t *b, uintptr_t addr, unsigned k, unsigned top)
{
    b->used_bytes -= bd_pow2(k);
    b->used_blocks--;
    b->frees++;
    while (k < top) { /* at most K iterations; no block exceeds max_order */
        uintptr_t buddy = addr ^ (uintptr_t)bd_pow2(k);
        if (!BD_HARDENED && (!bd_inside(b, buddy, bd_pow2(k)) || !bd_is_free_of(b, buddy, k))) {
            break; /* (at RT_HARDENING >= 1 bd_release_ok found every buddy below top free) */
        }
        bd_take_free(b, buddy, k);
        if (buddy < addr) {
            bd_clear(b, addr);
            addr = buddy;
        } else {
            bd_clear(b, buddy);
        }
        k++;
    }
    bd_put_free(b, addr, k);
}

/* RT_ERR_NONE iff ptr is a live block start; then *order is its order. Exact, O(1). */
static rt_error_kind_t bd_validate(const rt_buddy_t *b, const void *ptr, unsigned *order)
{
    uintptr_t p = (uintptr_t)ptr;
    if (p < b->arena || p >= b->arena_end) {
        return RT_ERR_FOREIGN_POINTER;
    }
    if ((p & (BD_UNIT - 1u)) != 0u) {
        return RT_ERR_BAD_POINTER;
    }
    unsigned tag = *bd_byte(b, p);
    if ((tag & BD_START) == 0u) {
        return RT_ERR_BAD_POINTER;
    }
    if ((tag & BD_FREE) != 0u) {
        return RT_ERR_DOUBLE_FREE;
    }
    *order = tag & BD_ORDER_MASK;
    if (RT_DEBUG >= 1) {
        RT_ASSERT(*order >= BD_MIN && *order <= b->max_order && (p & (bd_pow2(*order) - 1u)) == 0u);
    }
    return RT_ERR_NONE;
}

/* RT_DEBUG >= 2: the whole invariant after every operation, trapping on a failure (a bug of
 * the allocator). With RT_HARDENING >= 1 only the part the application cannot reach -- the
 * table, the counters, the bitmap and the list heads (bd_check_locked with links = false) --
 * since the links may hold an overflow that no call has read yet: that is reported by the call
 * that reads it, or by rt_buddy_check. */
static inline void bd_debug_check(rt_buddy_t *b)
{
    if (RT_DEBUG >= 2) {
        RT_ASSERT(bd_check_locked(b, !BD_HARDENED));
    }
}

/* Reports the damage a call found (RT_HARDENING >= 1), after the lock is released. */
static void __attribute__((noinline, cold))
bd_report_damage(rt_buddy_t *b, uintptr_t damage, bool refused, const char *operation, size_t size)
{
    bd_report(b, refused, RT_ERR_CORRUPTED, operation, (const void *)damage, size);
}

/* --- creation ------------------------------------------------------------------------------- */

/* sizeof, which C makes a multiple of the structure's alignment. */
size_t rt_buddy_control_size(void) { return sizeof(struct rt_buddy); }

/* C + G + 2U + A - 1, with C = control size, A = its alignment (A | U, A | C, A >= 2), G the
 * guard. One unit of arena needs, from the start of the buffer: up to A - 1 bytes to align the
 * control, C, then the table byte, the guard and padding up to the next U boundary (up to U
 * bytes when the guard ends on one), then U bytes of arena; and the buffer may end up to U - 1
 * bytes past the last U boundary. All three worst cases meet at one start address
 * (start = 1 mod A, start + A - 1 + C + G = 0 mod U, size chosen to end just below a U
 * boundary), where one byte less leaves no unit. */
size_t rt_buddy_min_buffer(void) { return sizeof(struct rt_buddy) + BD_GUARD + 2u * BD_UNIT + BD_ALIGN - 1u; }

/* The links' key of a new allocator whose control structure stands at `address`
 * (RT_HARDENING >= 1; 0 at level 0): drawn (rt_entropy_draw: the user's entropy source, or the
 * core's counter) and mixed with the address, never equal to `previous` -- the key the buffer
 * held where the new control structure stands, i.e. the key of the allocator that lived there
 * before -- so that no link of that earlier life verifies in this one (top of the file). */
static uintptr_t bd_new_key(uintptr_t address, uintptr_t previous)
{
    if (!BD_HARDENED) {
        (void)address;
        (void)previous;
        return 0u;
    }
    uintptr_t key = ((uintptr_t)(rt_entropy_draw() ^ rt_mix64((uint64_t)address)) & ~(uintptr_t)3u) | 2u;
    return key != previous ? key : key + 4u; /* still 2 mod 4 */
}

rt_buddy_t *rt_buddy_create(void *mem, size_t size)
{
    if (mem == NULL || size < rt_buddy_min_buffer()) {
        return NULL;
    }
    uintptr_t start = (uintptr_t)mem;
    uintptr_t end = size > UINTPTR_MAX - start ? UINTPTR_MAX : start + size; /* a lie; clamp */
    uintptr_t base = bd_align_up(start, BD_ALIGN);
    uintptr_t table = base + sizeof(struct rt_buddy);
    uintptr_t arena_end = end & ~(uintptr_t)(BD_UNIT - 1u);
    /* size >= min_buffer guarantees arena_end - table >= G + U + 1, i.e. n >= 1 */
    RT_ASSERT(arena_end > table && (size_t)(arena_end - table) >= BD_GUARD + BD_UNIT + 1u);
    size_t units = ((size_t)(arena_end - table) - BD_GUARD) / (BD_UNIT + 1u);

    rt_buddy_t *b = (rt_buddy_t *)(void *)base;
    uintptr_t previous = *(volatile uintptr_t *)&b->key; /* whatever the buffer held there */
    __builtin_memset(b, 0, sizeof *b);
    b->key = bd_new_key(base, previous);
    b->table = (uint8_t *)(void *)table;
    b->units = units;
    b->arena_end = arena_end;
    b->arena = arena_end - units * BD_UNIT;
    __builtin_memset(b->table, 0, units);

    /* Canonical decomposition, from the top down so the lowest blocks end up at the list heads
     * (lower addresses first keeps the watermark low): at each step the largest block that ends
     * at `pos`, is aligned to its size, and starts inside the arena. At most 2 per order. */
    uintptr_t pos = arena_end;
    while (pos > b->arena) {
        unsigned by_align = RT_CTZ(pos);
        unsigned by_room = bd_log2_floor((size_t)(pos - b->arena));
        unsigned k = by_align < by_room ? by_align : by_room;
        pos -= bd_pow2(k);
        bd_put_free(b, pos, k);
        if (k > b->max_order) {
            b->max_order = k;
        }
    }
    b->last_probes = 0u;
    bd_debug_check(b);
    return b;
}

/* --- allocation ----------------------------------------------------------------------------- */

/* O(K): one find-first-set and at most K splits. */
void *rt_buddy_malloc(rt_buddy_t *b, size_t size)
{
    if (size == 0u) {
        return NULL;
    }
    if (size > bd_pow2(b->max_order)) {
        return rt_front_refuse(&bd_front, b, RT_ERR_TOO_LARGE, "malloc", NULL, size);
    }
    unsigned k = bd_order_of(size);
    uintptr_t token = bd_lock(b);
    void *p = bd_alloc(b, k);
    bd_debug_check(b);
    uintptr_t damage = p == NULL ? bd_damage_take(b) : 0u; /* damage refuses */
    bd_unlock(b, token);
    if (damage != 0u) {
        bd_report_damage(b, damage, p == NULL, "malloc", size);
    }
    return p;
}

/* O(K): O(1) validation and at most K merges (RT_HARDENING >= 1: all checked first; on damage
 * the free is refused and reported, the block stays allocated). */
void rt_buddy_free(rt_buddy_t *b, void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    unsigned k = 0;
    uintptr_t token = bd_lock(b);
    rt_error_kind_t error = bd_validate(b, ptr, &k);
    unsigned top = 0;
    uintptr_t damage = 0u;
    if (error == RT_ERR_NONE) {
        if (bd_release_ok(b, (uintptr_t)ptr, k, &top)) {
            bd_release(b, (uintptr_t)ptr, k, top);
        } else {
            damage = bd_damage_take(b);
        }
    }
    bd_debug_check(b);
    bd_unlock(b, token);
    if (error != RT_ERR_NONE) {
        bd_report(b, false, error, "free", ptr, 0u);
    }
    if (damage != 0u) { /* refused: the block stays allocated */
        bd_report_damage(b, damage, false, "free", 0u);
    }
}

/* Resizes the used block of order k at addr to order t in place, or returns false (nothing
 * changed). Shrinking always succeeds, giving back the upper halves:
 *   [* 2^t][free 2^t][free 2^(t+1)] ... [free 2^(k-1)]
 * (each freed half's buddy is the part kept, which is used, so none can merge). Growing succeeds
 * iff the block is the lower buddy at every level k .. t-1 and each upper buddy is free and
 * whole: [* 2^k][free 2^k][free 2^(k+1)] ... => [* 2^t]. With RT_HARDENING >= 1 everything is
 * checked before the first change (each list involved holds one of the halves or buddies, so
 * changing one cannot spoil another's checks): a buddy whose links are damaged, or a list that
 * cannot take a half, is quarantined and false returned with b->damage set (the caller
 * refuses). O(t - k). */
static bool bd_resize_in_place(rt_buddy_t *b, uintptr_t addr, unsigned k, unsigned t)
{
    if (t <= k) {
        for (unsigned j = t; BD_HARDENED && j < k; j++) {
            if (!bd_push_ok(b, j)) {
                bd_quarantine(b, b->heads[j - BD_MIN], j);
                return false;
            }
        }
        for (unsigned j = k; j > t; j--) {
            bd_put_free(b, addr + bd_pow2(j - 1u), j - 1u);
        }
        b->used_bytes -= bd_pow2(k) - bd_pow2(t);
    } else {
        if ((addr & (bd_pow2(t) - 1u)) != 0u) { /* not the lower buddy at some level */
            return false;
        }
        for (unsigned j = k; j < t; j++) { /* all checks before the first change */
            uintptr_t buddy = addr + bd_pow2(j);
            if (!bd_inside(b, buddy, bd_pow2(j)) || !bd_is_free_of(b, buddy, j)) {
                return false;
            }
            if (BD_HARDENED && !bd_linked(b, buddy, j)) {
                bd_quarantine(b, buddy, j);
                return false;
            }
        }
        for (unsigned j = k; j < t; j++) {
            uintptr_t buddy = addr + bd_pow2(j);
            bd_take_free(b, buddy, j);
            bd_clear(b, buddy);
        }
        b->used_bytes += bd_pow2(t) - bd_pow2(k);
    }
    bd_set_used(b, addr, t);
    bd_account(b, addr, t);
    b->reallocs++;
    b->reallocs_in_place++;
    return true;
}

/* O(K) in place; otherwise O(K) + a copy of the old block (done outside the lock: the caller
 * still owns the old block) + O(K) to free it. RT_HARDENING >= 1: damage met by any part
 * refuses the whole (NULL, the old block as it was). */
void *rt_buddy_realloc(rt_buddy_t *b, void *ptr, size_t size)
{
    void *edge;
    if (rt_front_realloc_edge(&bd_front, b, ptr, size, &edge)) {
        return edge;
    }
    unsigned t = bd_order_of(size);
    unsigned k = 0;
    uintptr_t token = bd_lock(b);
    rt_error_kind_t error = bd_validate(b, ptr, &k);
    if (error != RT_ERR_NONE) {
        bd_unlock(b, token);
        return rt_front_refuse(&bd_front, b, error, "realloc", ptr, size);
    }
    bool in_place = bd_resize_in_place(b, (uintptr_t)ptr, k, t);
    uintptr_t damage = bd_damage_take(b);
    unsigned top = 0;
    if (!in_place && damage == 0u && !bd_release_ok(b, (uintptr_t)ptr, k, &top)) {
        damage = bd_damage_take(b); /* moving would end in a free that must be refused */
    }
    if (in_place || damage != 0u) {
        bd_debug_check(b);
        bd_unlock(b, token);
        if (damage != 0u) {
            bd_report_damage(b, damage, true, "realloc", size);
            return NULL; /* refused: the old block is untouched */
        }
        return ptr;
    }
    void *moved = bd_alloc(b, t);
    damage = bd_damage_take(b);
    bd_unlock(b, token);
    if (moved == NULL) {
        if (damage != 0u) {
            bd_report_damage(b, damage, true, "realloc", size);
        }
        return NULL; /* out of memory or refused: the old block is untouched */
    }
    __builtin_memcpy(moved, ptr, bd_pow2(k)); /* t > k: the whole old block fits */
    token = bd_lock(b);
    if (bd_release_ok(b, (uintptr_t)ptr, k, &top)) { /* checked again: the lock was released */
        bd_release(b, (uintptr_t)ptr, k, top);
        b->reallocs++;
    } else if (bd_release_ok(b, (uintptr_t)moved, t, &top)) { /* refused: the new block goes back */
        bd_release(b, (uintptr_t)moved, t, top);
        b->mallocs--;
        b->frees--;
        moved = NULL;
    } else {
        moved = NULL; /* both damaged meanwhile: the new block is lost with them */
    }
    bd_debug_check(b);
    damage = bd_damage_take(b);
    bd_unlock(b, token);
    if (damage != 0u) {
        bd_report_damage(b, damage, moved == NULL, "realloc", size);
    }
    return moved;
}

/* O(1) overflow check + malloc + a memset of the request (outside the lock). */
void *rt_buddy_calloc(rt_buddy_t *b, size_t count, size_t size) { return rt_front_calloc(&bd_front, b, count, size); }

/* O(K): every block of order k is 2^k-aligned, so alignment only raises the order. */
void *rt_buddy_memalign(rt_buddy_t *b, size_t alignment, size_t size)
{
    if (!rt_front_memalign_args(&bd_front, b, alignment, size)) {
        return NULL;
    }
    if (alignment > bd_pow2(b->max_order)) {
        return rt_front_refuse(&bd_front, b, RT_ERR_TOO_LARGE, "memalign", NULL, size);
    }
    unsigned k = bd_order_of(size);
    unsigned a = bd_log2_floor(alignment);
    if (a > k) {
        k = a;
    }
    uintptr_t token = bd_lock(b);
    void *p = bd_alloc(b, k);
    bd_debug_check(b);
    uintptr_t damage = p == NULL ? bd_damage_take(b) : 0u; /* damage refuses */
    bd_unlock(b, token);
    if (damage != 0u) {
        bd_report_damage(b, damage, p == NULL, "memalign", size);
    }
    return p;
}

/* O(1). */
size_t rt_buddy_usable_size(rt_buddy_t *b, void *ptr)
{
    unsigned k = 0;
    uintptr_t token = bd_lock(b);
    rt_error_kind_t error = ptr == NULL ? RT_ERR_FOREIGN_POINTER : bd_validate(b, ptr, &k);
    bd_unlock(b, token);
    if (error != RT_ERR_NONE) {
        bd_report(b, false, error, "usable_size", ptr, 0u);
        return 0u;
    }
    return bd_pow2(k);
}

/* O(1): fixed at creation. */
size_t rt_buddy_max_request(const rt_buddy_t *b) { return bd_pow2(b->max_order); }

/* --- inspection and configuration ----------------------------------------------------------- */

/* O(1): every figure is a counter; the largest free block is the highest bit of the bitmap. */
void rt_buddy_stats(rt_buddy_t *b, rt_stats_t *stats)
{
    uintptr_t token = bd_lock(b);
    rt_stats_t own = {
        .capacity = b->units * BD_UNIT,
        .used_bytes = b->used_bytes,
        .largest_free = b->nonempty != 0u ? bd_pow2(BD_MIN + bd_log2_floor(b->nonempty)) : 0u,
        .peak_used = b->peak_used,
        .watermark = b->watermark,
        .used_blocks = b->used_blocks,
        .free_blocks = b->free_blocks,
    };
    rt_front_counts_t counts = {b->mallocs,           b->frees,          b->reallocs,
                                b->reallocs_in_place, b->hooks.failures, b->hooks.errors};
    bd_unlock(b, token);
    rt_front_stats(stats, &own, &counts);
}

/* O(1). Not locked: one word read. */
unsigned rt_buddy_last_probes(const rt_buddy_t *b) { return b->last_probes; }

/* The whole invariant, O(n + free blocks):
 *  1. the blocks tile [arena, arena_end): each starts with a START tag of an order in [m, k_max],
 *     is aligned to its size, ends inside the arena, and the tags of its other units are 0;
 *  2. no free block has a free buddy of its order wholly inside the arena (it would have merged);
 *  3. list k holds exactly the free blocks of order k, each once: every link, read only after
 *     bd_link_ok-style validation (so a damaged link cannot make the walk fault), points at a
 *     member whose back link agrees (RT_HARDENING >= 1: circular, the head's prev the tail;
 *     else NULL-terminated, the head's prev NULL), as many members as the tiling counted;
 *     bitmap bit k set iff list k is non-empty;
 *  4. the counters match the tiling;
 *  5. (RT_HARDENING >= 1) no block is quarantined: a block lost to damaged links, like a list
 *     dropped for one (its orphans fail 3), keeps check() false from then on.
 * links = false (RT_DEBUG's walk after every call, RT_HARDENING >= 1): only what the application
 * cannot write -- 1, 2, 4, the bitmap, and each head a free block of its order -- not 3 and 5. */
static bool bd_check_locked(rt_buddy_t *b, bool links)
{
    size_t free_per_order[BD_ORDERS];
    size_t used_bytes = 0, used_blocks = 0, free_blocks = 0, lost_blocks = 0;
    for (unsigned i = 0; i < BD_ORDERS; i++) {
        free_per_order[i] = 0;
    }
    if (b->arena_end - b->arena != b->units * BD_UNIT || (b->arena & (BD_UNIT - 1u)) != 0u ||
        (uintptr_t)(void *)b->table + b->units + BD_GUARD > b->arena || b->max_order < BD_MIN ||
        b->max_order >= BD_BITS) {
        return false;
    }
    uintptr_t pos = b->arena;
    while (pos < b->arena_end) { /* at most n blocks, n units in all */
        unsigned tag = *bd_byte(b, pos);
        unsigned k = tag & BD_ORDER_MASK;
        bool lost = BD_HARDENED && (tag & (BD_START | BD_FREE)) == BD_LOST;
        if (((tag & BD_START) == 0u && !lost) || k < BD_MIN || k > b->max_order) {
            return false;
        }
        size_t size = bd_pow2(k);
        if ((pos & (size - 1u)) != 0u || !bd_inside(b, pos, size)) {
            return false;
        }
        for (size_t off = BD_UNIT; off < size; off += BD_UNIT) {
            if (*bd_byte(b, pos + off) != 0u) {
                return false;
            }
        }
        if (lost) {
            lost_blocks++;
        } else if ((tag & BD_FREE) != 0u) {
            free_per_order[k - BD_MIN]++;
            free_blocks++;
            uintptr_t buddy = pos ^ (uintptr_t)size;
            if (buddy > pos && bd_inside(b, buddy, size) && bd_is_free_of(b, buddy, k)) {
                return false; /* two free buddies that should have merged */
            }
        } else {
            used_bytes += size;
            used_blocks++;
        }
        pos += size;
    }
    uintptr_t key = b->key;
    for (unsigned i = 0; i < BD_ORDERS; i++) {
        unsigned k = BD_MIN + i;
        uintptr_t head = b->heads[i];
        size_t members = 0;
        if (!links) {
            if ((head != 0u && !bd_link_ok(b, head, k)) || ((b->nonempty >> i) & 1u) != (head != 0u ? 1u : 0u)) {
                return false;
            }
            continue;
        }
        if (BD_HARDENED) {
            if (head != 0u) {
                if (!bd_link_ok(b, head, k)) {
                    return false;
                }
                uintptr_t n = head;
                do { /* n is a checked member; at most free_per_order[i] steps */
                    uintptr_t next = bd_next(key, n);
                    if (members == free_per_order[i] || !bd_link_ok(b, next, k) || bd_prev(key, next) != n) {
                        return false;
                    }
                    members++;
                    n = next;
                } while (n != head);
            }
        } else {
            uintptr_t prev = 0u;
            for (uintptr_t n = head; n != 0u; n = bd_next(key, n)) {
                if (members == free_per_order[i] || !bd_inside(b, n, BD_UNIT) || (n & (BD_UNIT - 1u)) != 0u ||
                    !bd_is_free_of(b, n, k) || bd_prev(key, n) != prev) {
                    return false;
                }
                members++;
                prev = n;
            }
        }
        if (members != free_per_order[i] || ((b->nonempty >> i) & 1u) != (members != 0u ? 1u : 0u)) {
            return false;
        }
    }
    if ((b->nonempty >> BD_ORDERS) != 0u) { /* BD_ORDERS < BITS since m >= 1 */
        return false;
    }
    return (lost_blocks == 0u || !links) && used_bytes == b->used_bytes && used_blocks == b->used_blocks &&
           free_blocks == b->free_blocks && b->peak_used >= b->used_bytes && b->watermark <= b->units * BD_UNIT;
}

bool rt_buddy_check(rt_buddy_t *b)
{
    uintptr_t token = bd_lock(b);
    bool ok = bd_check_locked(b, true);
    bd_unlock(b, token);
    if (!ok) {
        bd_report(b, false, RT_ERR_CORRUPTED, "check", NULL, 0u);
    }
    return ok;
}

/* O(n): blocks in address order, stepping by each block's size. A quarantined block
 * (RT_HARDENING >= 1) shows as used: it is no one's and never free again. Runs under the lock:
 * fn must not call the allocator. */
void rt_buddy_walk(rt_buddy_t *b, rt_walk_fn fn, void *context)
{
    uintptr_t token = bd_lock(b);
    uintptr_t pos = b->arena;
    while (pos < b->arena_end) {
        unsigned tag = *bd_byte(b, pos);
        unsigned k = tag & BD_ORDER_MASK;
        size_t size = bd_pow2(k);
        bool lost = BD_HARDENED && (tag & (BD_START | BD_FREE)) == BD_LOST;
        if (((tag & BD_START) == 0u && !lost) || k < BD_MIN || k > b->max_order || !bd_inside(b, pos, size)) {
            break; /* corrupted: rt_buddy_check reports it */
        }
        rt_block_info_t info = {(void *)pos, size, size, lost || (tag & BD_FREE) == 0u, false};
        if (!fn(context, &info)) {
            break;
        }
        pos += size;
    }
    bd_unlock(b, token);
}

void rt_buddy_set_handler(rt_buddy_t *b, rt_error_handler_t handler, void *context)
{
    rt_hooks_set_handler(&b->hooks, handler, context);
}

/* Not itself locked: call before sharing the allocator. */
void rt_buddy_set_lock(rt_buddy_t *b, rt_lock_fn lock, rt_unlock_fn unlock, void *context)
{
    rt_hooks_set_lock(&b->hooks, lock, unlock, context);
}
