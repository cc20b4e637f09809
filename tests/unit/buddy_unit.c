/* SPDX-License-Identifier: MIT */
/*
 * buddy_unit.c -- white-box tests of the binary buddy's hardened free lists (rtalloc/buddy.h,
 * src/buddy/buddy.c, RT_HARDENING >= 1), beyond the registry suites (contract, model, badinput):
 *
 *   overflow    exhaustive: for a free neighbour of every order, at the head, in the middle and at
 *               the tail of its list and alone on it, each of the 16 bytes just past the end of
 *               the block below it, and each of the 16 bytes before the start of the block above
 *               it (its tail), is overwritten with each
 *               single bit flip, 0x00, 0xFF and 4 random bytes; then one of 5 drives (malloc,
 *               free of the neighbour, realloc into it, check first, free everything and fill
 *               the heap again) runs, and check() last
 *   forged      the links of a free block forged to point at a fake free block built in the
 *               application's own live block (its start, an interior unit, misaligned), at the
 *               control structure, the table, the guard, outside the buffer on both sides, NULL,
 *               all ones, the block itself, another free block of the same and of another order
 *   contain     what containment leaves: the damaged block is quarantined (free of it is a bad
 *               pointer, walk shows it used, check fails), its list dropped or kept as stated,
 *               orphans merged again when their links agree
 *   copied      link words copied from elsewhere onto a free block's links (the links are
 *               sealed to their address): the links of its partner in a list of two (both name
 *               it: the back links alone cannot tell), every 1..16 bytes of every other free
 *               block's links and every word of the control structure, under every drive; the
 *               malloc that takes a damaged head must refuse and report it; and a stale link:
 *               the bytes a block held in an earlier life over the same buffer, written back
 *               after a re-create (also with an entropy source that repeats itself)
 *   soak        seeded random operations with random corruptions of free blocks' first bytes
 *               (`buddy_unit soak <seed>` replays one seed)
 *
 * Every case asserts: the allocator faults nowhere (in process: a fault fails the test), the
 * guard zones around the buffer are intact, every block it hands out lies in the arena and
 * overlaps no live block (shadow list), every live block's contents are intact (the allocator
 * wrote into no live block), every report is RT_ERR_CORRUPTED, and a report came iff a link
 * byte of a free block was changed (a write that leaves the bytes as they were, or lands in
 * bytes no metadata uses, is no corruption and must pass check() silently).
 * At RT_HARDENING 0 the corruption cases are skipped (the lists are not hardened there).
 */
#include "testlib.h"

#include "rtalloc/buddy.h"

#define UNIT RT_BUDDY_MIN_BLOCK
#define LINK_BYTES (2u * sizeof(void *)) /* next and prev, at the start of a free block */
#define ARENA_BYTES ((size_t)32u << 10)
#define GUARD_ZONE 256u
#define GUARD_BYTE 0xA5u
#define MAX_LIVE 512u

/* --- the world: one buffer with guard zones, the allocator in it, a shadow of live blocks -- */

typedef struct live {
    unsigned char *p;
    size_t n;
    uint64_t id; /* 0: contents are the test's own scribbles, not verified */
} live_t;

typedef struct world {
    unsigned char *raw; /* [slack][guard][buffer][guard] */
    unsigned char *mem;
    size_t size;
    rt_buddy_t *h;
    uintptr_t lo, hi; /* the arena */
    live_t live[MAX_LIVE];
    size_t nlive;
    uint64_t next_id;
    unsigned long reports, bad_kinds, refusals;
    const void *last_pointer;
    rt_error_kind_t last_kind;
    bool failed; /* a safety assertion failed in this case */
} world_t;

static void on_error(void *context, const rt_error_t *e)
{
    world_t *w = context;
    w->reports++;
    w->last_kind = e->kind;
    w->last_pointer = e->pointer;
    if (e->kind != RT_ERR_CORRUPTED) {
        w->bad_kinds++;
    }
}

typedef struct arena_span {
    uintptr_t lo, hi;
} arena_span_t;

static bool span_fn(void *context, const rt_block_info_t *b)
{
    arena_span_t *s = context;
    uintptr_t p = (uintptr_t)b->pointer;
    if (s->lo == 0u) {
        s->lo = p;
    }
    s->hi = p + b->footprint;
    return true;
}

static bool world_open(world_t *w)
{
    memset(w, 0, sizeof *w);
    w->size = ARENA_BYTES + rt_buddy_min_buffer();
    w->raw = malloc(w->size + 2u * GUARD_ZONE + 4096u);
    TL_REQUIRE(w->raw != NULL, "out of memory");
    /* the buffer at a fixed offset from a page boundary, so every run has the same layout */
    uintptr_t at = ((uintptr_t)w->raw + GUARD_ZONE + 4095u) & ~(uintptr_t)4095u;
    w->mem = w->raw + (at - (uintptr_t)w->raw);
    memset(w->mem - GUARD_ZONE, GUARD_BYTE, w->size + 2u * GUARD_ZONE);
    w->h = rt_buddy_create(w->mem, w->size);
    TL_REQUIRE(w->h != NULL, "create over %zu bytes", w->size);
    rt_buddy_set_handler(w->h, on_error, w);
    arena_span_t s = {0u, 0u};
    rt_buddy_walk(w->h, span_fn, &s);
    w->lo = s.lo;
    w->hi = s.hi;
    TL_REQUIRE(w->lo >= (uintptr_t)w->mem && w->hi <= (uintptr_t)w->mem + w->size && w->hi - w->lo >= ARENA_BYTES / 2u,
               "arena [%#jx, %#jx) in the buffer", (uintmax_t)w->lo, (uintmax_t)w->hi);
    return true;
}

static void world_close(world_t *w)
{
    free(w->raw);
    w->raw = NULL;
}

static bool guards_intact(const world_t *w)
{
    const unsigned char *before = w->mem - GUARD_ZONE;
    const unsigned char *after = w->mem + w->size;
    for (size_t i = 0; i < GUARD_ZONE; i++) {
        if (before[i] != GUARD_BYTE || after[i] != GUARD_BYTE) {
            return false;
        }
    }
    return true;
}

/* A safety check: counted once per case (the first failure stops counting the case's others). */
#define SAFE(w, cond, ...)                                  \
    do {                                                    \
        if (!(w)->failed && !TL_CHECK(cond, __VA_ARGS__)) { \
            (w)->failed = true;                             \
        }                                                   \
    } while (0)

/* Adds a block the allocator handed out: inside the arena, overlapping no live block. */
static void world_add(world_t *w, void *ptr, size_t request)
{
    size_t n = rt_buddy_usable_size(w->h, ptr);
    uintptr_t p = (uintptr_t)ptr;
    SAFE(w, n >= request && p >= w->lo && p < w->hi && n <= w->hi - p, "block %p + %zu outside the arena", ptr, n);
    for (size_t i = 0; i < w->nlive; i++) {
        uintptr_t q = (uintptr_t)w->live[i].p;
        SAFE(w, p + n <= q || q + w->live[i].n <= p, "block %p + %zu overlaps live %p + %zu", ptr, n,
             (void *)w->live[i].p, w->live[i].n);
    }
    if (w->failed || w->nlive == MAX_LIVE) {
        return;
    }
    live_t *l = &w->live[w->nlive++];
    l->p = ptr;
    l->n = n;
    l->id = ++w->next_id;
    tl_fill(l->p, l->n, l->id);
}

static void world_verify(world_t *w, size_t i)
{
    if (w->live[i].id == 0u) {
        return;
    }
    size_t bad = tl_verify(w->live[i].p, w->live[i].n, w->live[i].id);
    SAFE(w, bad == w->live[i].n, "live block %p + %zu changed at byte %zu (the allocator wrote into it)",
         (void *)w->live[i].p, w->live[i].n, bad);
}

static uint64_t frees_of(world_t *w)
{
    rt_stats_t st;
    rt_buddy_stats(w->h, &st);
    return st.frees;
}

/* A call that reports must be refused (rtalloc/common.h): malloc and realloc return NULL, free
 * leaves the block allocated -- it then stays in the shadow, and must not be handed out again. */
static void *w_malloc(world_t *w, size_t n)
{
    unsigned long r0 = w->reports;
    void *p = rt_buddy_malloc(w->h, n);
    SAFE(w, w->reports == r0 || p == NULL, "malloc(%zu) reported but returned %p", n, p);
    if (p != NULL) {
        world_add(w, p, n);
    }
    return p;
}

static bool w_free_at(world_t *w, size_t i)
{
    world_verify(w, i);
    unsigned long r0 = w->reports;
    uint64_t f0 = frees_of(w);
    rt_buddy_free(w->h, w->live[i].p);
    uint64_t f1 = frees_of(w);
    if (w->reports != r0) {
        SAFE(w, f1 == f0 && rt_buddy_usable_size(w->h, w->live[i].p) == w->live[i].n,
             "free(%p) reported but not refused", (void *)w->live[i].p);
        return false;
    }
    SAFE(w, f1 == f0 + 1u, "free(%p) neither reported nor done", (void *)w->live[i].p);
    w->live[i] = w->live[--w->nlive];
    return true;
}

static size_t w_find(const world_t *w, const void *p)
{
    for (size_t i = 0; i < w->nlive; i++) {
        if (w->live[i].p == p) {
            return i;
        }
    }
    return SIZE_MAX;
}

static void w_realloc_at(world_t *w, size_t i, size_t n)
{
    world_verify(w, i);
    live_t old = w->live[i];
    unsigned long r0 = w->reports;
    void *q = rt_buddy_realloc(w->h, old.p, n);
    SAFE(w, w->reports == r0 || q == NULL, "realloc(%p, %zu) reported but returned %p", (void *)old.p, n, q);
    if (q == NULL) {
        /* refused or out of memory: the old block must be untouched */
        SAFE(w, old.id == 0u || tl_verify(old.p, old.n, old.id) == old.n, "refused realloc changed the old block %p",
             (void *)old.p);
        return;
    }
    size_t keep = old.n < n ? old.n : n;
    SAFE(w, old.id == 0u || tl_verify(q, keep, old.id) == keep, "realloc %p -> %p lost the contents", (void *)old.p, q);
    w->live[i] = w->live[--w->nlive];
    world_add(w, q, n);
}

/* The final verdict of every case: guards, live contents. */
static void world_final(world_t *w)
{
    SAFE(w, guards_intact(w), "a guard zone around the buffer was written");
    for (size_t i = 0; i < w->nlive; i++) {
        world_verify(w, i);
    }
}

/* --- snapshots: a state built once, restored before each case (same address: links are absolute) */

typedef struct snapshot {
    unsigned char *bytes;
    live_t live[MAX_LIVE];
    size_t nlive;
    uint64_t next_id;
} snapshot_t;

static void snap_take(snapshot_t *s, const world_t *w)
{
    memcpy(s->bytes, w->mem, w->size);
    memcpy(s->live, w->live, sizeof s->live);
    s->nlive = w->nlive;
    s->next_id = w->next_id;
}

static void snap_restore(world_t *w, const snapshot_t *s)
{
    memcpy(w->mem, s->bytes, w->size);
    memcpy(w->live, s->live, sizeof w->live);
    w->nlive = s->nlive;
    w->next_id = s->next_id;
    w->reports = w->bad_kinds = w->refusals = 0u;
    w->last_pointer = NULL;
    w->last_kind = RT_ERR_NONE;
    w->failed = false;
}

/* --- what the blocks are, from the walk (white box: the links are the first LINK_BYTES) ----- */

#define MAX_BLOCKS 2048u

typedef struct blocks {
    rt_block_info_t b[MAX_BLOCKS];
    size_t n;
} blocks_t;

static bool blocks_fn(void *context, const rt_block_info_t *b)
{
    blocks_t *s = context;
    if (s->n < MAX_BLOCKS) {
        s->b[s->n++] = *b;
    }
    return true;
}

/* True iff [p, p + n) holds a link byte of a free block. */
static bool is_link_byte(const blocks_t *s, uintptr_t p)
{
    for (size_t i = 0; i < s->n; i++) {
        uintptr_t q = (uintptr_t)s->b[i].pointer;
        if (!s->b[i].used && p >= q && p < q + LINK_BYTES) {
            return true;
        }
    }
    return false;
}

static unsigned order_of(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n) {
        k++;
    }
    return k;
}

/* --- the drives: operations that touch the corrupted neighbour -------------------------------- */

enum { DRIVES = 5 };
static const char *const drive_names[DRIVES] = {"malloc", "free-neighbour", "realloc", "check-first", "free-all"};

/* `at` = the corrupted boundary; k = order of the free block beside it. */
static void drive(world_t *w, int which, uintptr_t at, size_t k_size)
{
    switch (which) {
    case 0: /* mallocs that take from the neighbour's list and the lists around it */
        for (int r = 0; r < 6; r++) {
            (void)w_malloc(w, k_size);
        }
        (void)w_malloc(w, UNIT);
        (void)w_malloc(w, 2u * k_size);
        break;
    case 1: /* free the live blocks on both sides of the boundary (merging with the free one) */
        for (size_t i = 0; i < w->nlive;) {
            uintptr_t p = (uintptr_t)w->live[i].p;
            if (!(p + w->live[i].n == at || p == at || p == at + k_size || p + w->live[i].n + k_size == at) ||
                !w_free_at(w, i)) {
                i++;
            }
        }
        (void)w_malloc(w, 2u * k_size);
        for (int r = 0; r < 4; r++) {
            (void)w_malloc(w, k_size);
        }
        break;
    case 2: /* realloc the block below the boundary up (in place into its free buddy) and down */
        for (size_t i = 0; i < w->nlive; i++) {
            uintptr_t p = (uintptr_t)w->live[i].p;
            if (p + w->live[i].n == at) {
                w_realloc_at(w, i, 2u * w->live[i].n);
                break;
            }
        }
        if (w->nlive > 0u) {
            w_realloc_at(w, w->nlive - 1u, UNIT); /* a shrink pushes halves on lists */
        }
        for (int r = 0; r < 3; r++) {
            (void)w_malloc(w, k_size);
        }
        break;
    case 3: /* the integrity check first, then the mallocs */
        (void)rt_buddy_check(w->h);
        for (int r = 0; r < 4; r++) {
            (void)w_malloc(w, k_size);
        }
        break;
    default: /* everything back (every merge), then the heap filled again (every list's head) */
        for (size_t i = w->nlive; i-- > 0u;) {
            (void)w_free_at(w, i);
        }
        for (size_t sz = rt_buddy_max_request(w->h); sz >= UNIT; sz /= 2u) {
            while (w->nlive < MAX_LIVE && w_malloc(w, sz) != NULL) {
            }
        }
        break;
    }
}

/* Runs one case on a restored snapshot: corrupt [at, at + 1) to value v, drive, check. */
static void run_case(world_t *w, const snapshot_t *s, const blocks_t *bl, uintptr_t byte, unsigned char v, int which,
                     uintptr_t at, size_t k_size, const char *what)
{
    snap_restore(w, s);
    unsigned char *c = (unsigned char *)byte;
    bool changed = *c != v && is_link_byte(bl, byte);
    for (size_t i = 0; i < w->nlive; i++) {
        if (byte >= (uintptr_t)w->live[i].p && byte < (uintptr_t)w->live[i].p + w->live[i].n) {
            w->live[i].id = 0u; /* the application scribbled on its own block: not verified */
        }
    }
    *c = v;
    drive(w, which, at, k_size);
    bool ok = rt_buddy_check(w->h);
    world_final(w);
    SAFE(w, w->bad_kinds == 0u, "%s: a report of another kind than CORRUPTED (last %s)", what,
         tl_kind_name(w->last_kind));
    if (changed) {
        SAFE(w, w->reports > 0u && !ok, "%s: link byte at arena+%ju set to %#x, drive %s: not reported", what,
             (uintmax_t)(byte - w->lo), v, drive_names[which]);
    } else {
        SAFE(w, w->reports == 0u && ok,
             "%s: no link byte changed (arena+%ju = %#x, drive %s), yet %lu reports, check %d", what,
             (uintmax_t)(byte - w->lo), v, drive_names[which], w->reports, ok);
    }
}

/* --- overflow: exhaustive single-byte corruptions around free blocks of every order ---------- */

static unsigned long overflow_cases;

/* Builds the state for order k: variant 0 = one free block of order k (the split remainder)
 * just above a live block; variant 1 = up to 4 free blocks of order k on one list (upper
 * buddies of live lower ones: head, middle, tail), each with live neighbours. Returns false if
 * the heap cannot hold it. */
static bool build(world_t *w, unsigned k, int variant)
{
    size_t sz = (size_t)1 << k;
    if (variant == 0) {
        for (int r = 0; r < 64; r++) {
            void *p = w_malloc(w, sz);
            if (p == NULL) {
                return false;
            }
            /* its upper buddy free (the split pushed it): done */
            blocks_t *bl = malloc(sizeof *bl);
            bl->n = 0;
            rt_buddy_walk(w->h, blocks_fn, bl);
            bool found = false;
            for (size_t i = 0; i < bl->n; i++) {
                if ((uintptr_t)bl->b[i].pointer == (uintptr_t)p + sz && !bl->b[i].used && bl->b[i].footprint == sz &&
                    ((uintptr_t)p & sz) == 0u) {
                    found = true;
                }
            }
            free(bl);
            if (found) {
                /* and a live block above it, so both boundaries of the free block are tested */
                return true;
            }
        }
        return false;
    }
    void *got[16];
    int n = 0;
    while (n < 16) {
        got[n] = w_malloc(w, sz);
        if (got[n] == NULL) {
            break;
        }
        n++;
    }
    int freed = 0;
    for (int i = 0; i < n && freed < 4; i++) {
        uintptr_t p = (uintptr_t)got[i];
        if ((p & sz) == 0u) {
            continue; /* keep lower buddies */
        }
        for (int j = 0; j < n; j++) {
            if ((uintptr_t)got[j] == (p ^ sz)) {
                (void)w_free_at(w, w_find(w, got[i]));
                freed++;
                break;
            }
        }
    }
    return freed >= 2;
}

/* The set-up of the attack passes (overflow, forged): a world, a snapshot buffer, a block list.
 * False (after a skip or a reported failure) when the pass cannot run. */
static bool attack_open(const char *pass, world_t **w, snapshot_t **s, blocks_t **bl)
{
    if (RT_HARDENING < 1) {
        tl_skip("%s: RT_HARDENING %d keeps the original unchecked lists", pass, (int)RT_HARDENING);
        return false;
    }
    *w = malloc(sizeof **w);
    *s = malloc(sizeof **s);
    *bl = malloc(sizeof **bl);
    if (!TL_CHECK(*w != NULL && *s != NULL && *bl != NULL && world_open(*w), "%s: setup", pass)) {
        free(*w);
        free(*s);
        free(*bl);
        return false;
    }
    (*s)->bytes = malloc((*w)->size);
    return true;
}

static void attack_close(world_t *w, snapshot_t *s, blocks_t *bl)
{
    world_close(w);
    free(s->bytes);
    free(s);
    free(bl);
    free(w);
}

static void test_overflow(void)
{
    world_t *w;
    snapshot_t *s;
    blocks_t *bl;
    if (!attack_open("overflow", &w, &s, &bl)) {
        return;
    }
    tl_rng_t rng = tl_rng_seed(12);
    unsigned max_k = order_of(rt_buddy_max_request(w->h));
    unsigned long before_failed = tl_state.failed;
    /* ASan: every other value, to stay in CI's time */
    unsigned value_step = TL_ASAN || TL_DEBUG_WALKS ? 2u : 1u;
    for (unsigned k = order_of(UNIT); k < max_k; k++) {
        for (int variant = 0; variant < 2; variant++) {
            world_close(w);
            if (!world_open(w)) {
                break;
            }
            if (!build(w, k, variant)) {
                continue;
            }
            TL_CHECK(rt_buddy_check(w->h) && w->reports == 0u, "order %u variant %d: the built state is sound", k,
                     variant);
            snap_take(s, w);
            bl->n = 0;
            rt_buddy_walk(w->h, blocks_fn, bl);
            size_t sz = (size_t)1 << k;
            /* boundaries: every start of a free block of order k (bytes after the end of the
             * block below), every end of one (bytes before the start of the block above), and the
             * first block of the arena (bytes before it: the guard) */
            for (size_t i = 0; i < bl->n; i++) {
                uintptr_t q = (uintptr_t)bl->b[i].pointer;
                bool free_k = !bl->b[i].used && bl->b[i].footprint == sz;
                for (int side = 0; side < 2; side++) {
                    uintptr_t at;
                    if (side == 0) {
                        if (!free_k || q == w->lo) {
                            continue;
                        }
                        at = q; /* bytes at + 0 .. at + 15: past the end of the block below */
                    } else {
                        if (!free_k) {
                            continue;
                        }
                        at = q + sz; /* bytes at - 16 .. at - 1: the free block's tail */
                        if (at >= w->hi) {
                            continue;
                        }
                    }
                    for (unsigned off = 0; off < 16u; off++) {
                        uintptr_t byte = side == 0 ? at + off : at - 1u - off;
                        unsigned char orig = s->bytes[byte - (uintptr_t)w->mem];
                        unsigned char values[14];
                        unsigned nv = 0;
                        for (unsigned bit = 0; bit < 8u; bit++) {
                            values[nv++] = (unsigned char)(orig ^ (1u << bit));
                        }
                        values[nv++] = 0x00u;
                        values[nv++] = 0xFFu;
                        for (int r = 0; r < 4; r++) {
                            values[nv++] = (unsigned char)tl_next(&rng);
                        }
                        for (unsigned vi = 0; vi < nv; vi += value_step) {
                            for (int which = 0; which < DRIVES; which++) {
                                char what[96];
                                snprintf(what, sizeof what, "order %u variant %d %s %u", k, variant,
                                         side == 0 ? "past the end +" : "before the start -",
                                         off + (side == 0 ? 0u : 1u));
                                run_case(w, s, bl, byte, values[vi], which, at, sz, what);
                                overflow_cases++;
                            }
                        }
                    }
                }
            }
        }
    }
    printf("overflow: %lu cases (orders %u..%u, %s), %lu failed checks\n", overflow_cases, order_of(UNIT), max_k - 1u,
           value_step == 1u ? "all values" : "every other value", tl_state.failed - before_failed);
    attack_close(w, s, bl);
}

/* --- forged: whole links pointing where an attacker would like them -------------------------- */

static void test_forged(void)
{
    world_t *w;
    snapshot_t *s;
    blocks_t *bl;
    if (!attack_open("forged", &w, &s, &bl)) {
        return;
    }
    unsigned long cases = 0;
    for (unsigned k = order_of(UNIT); k < order_of(UNIT) + 4u; k++) {
        world_close(w);
        if (!world_open(w) || !build(w, k, 1)) {
            continue;
        }
        size_t sz = (size_t)1 << k;
        /* a live block of the application to build fakes in, and the free blocks of order k */
        void *app = w_malloc(w, 4u * UNIT);
        TL_CHECK(app != NULL, "order %u: app block", k);
        snap_take(s, w);
        bl->n = 0;
        rt_buddy_walk(w->h, blocks_fn, bl);
        uintptr_t frees[4];
        size_t nf = 0;
        uintptr_t other = 0; /* a free block of another order */
        for (size_t i = 0; i < bl->n; i++) {
            if (!bl->b[i].used && bl->b[i].footprint == sz && nf < 4u) {
                frees[nf++] = (uintptr_t)bl->b[i].pointer;
            } else if (!bl->b[i].used && other == 0u) {
                other = (uintptr_t)bl->b[i].pointer;
            }
        }
        uintptr_t a = (uintptr_t)app;
        int dummy = 0;
        uintptr_t targets[] = {
            a,
            a + UNIT,
            a + 8u,
            a + 2u * UNIT + 1u, /* the app's live block */
            (uintptr_t)w->mem,
            (uintptr_t)w->mem + 64u, /* control structure */
            w->lo - 1u,
            w->lo - 16u,
            w->lo - UNIT, /* guard / table */
            (uintptr_t)w->mem - 64u,
            (uintptr_t)w->mem - 8u, /* before the buffer */
            (uintptr_t)w->mem + w->size,
            w->hi,
            w->hi + UNIT, /* after the arena / buffer */
            0u,
            1u,
            ~(uintptr_t)0,
            ~(uintptr_t)0 - UNIT + 1u, /* NULL, all ones */
            (uintptr_t)&dummy,         /* the stack */
            other,                     /* a free block of another order */
            0u,
            0u,
            0u,
            0u, /* filled per victim below */
        };
        size_t nt = sizeof targets / sizeof targets[0];
        for (size_t f = 0; f < nf; f++) {
            uintptr_t victim = frees[f];
            targets[nt - 4u] = victim;               /* itself */
            targets[nt - 3u] = frees[(f + 1u) % nf]; /* another free block of its order */
            targets[nt - 2u] = frees[(f + 2u) % nf];
            targets[nt - 1u] = victim + UNIT; /* inside itself */
            for (size_t t = 0; t < nt; t++) {
                for (int link = 0; link < 2; link++) {
                    for (int fake = 0; fake < 2; fake++) {
                        for (int which = 0; which < DRIVES; which++) {
                            snap_restore(w, s);
                            uintptr_t *slot = (uintptr_t *)(void *)(victim + (size_t)link * sizeof(void *));
                            bool changed = *slot != targets[t];
                            if (fake) {
                                /* the app builds a plausible free block in its own block, linked
                                 * both ways to the victim */
                                uintptr_t *fk = (uintptr_t *)app;
                                fk[0] = victim;
                                fk[1] = victim;
                                w->live[w_find(w, app)].id = 0u; /* its contents: not verified */
                            }
                            *slot = targets[t];
                            drive(w, which, victim, sz);
                            bool ok = rt_buddy_check(w->h);
                            world_final(w);
                            SAFE(w, w->bad_kinds == 0u, "forged: a report of kind %s", tl_kind_name(w->last_kind));
                            if (changed) {
                                SAFE(w, w->reports > 0u && !ok,
                                     "forged: order %u victim %zu link %d -> target %zu, drive %s: not reported", k, f,
                                     link, t, drive_names[which]);
                            } else {
                                SAFE(w, w->reports == 0u && ok, "forged: unchanged link reported");
                            }
                            cases++;
                        }
                    }
                }
            }
        }
    }
    printf("forged: %lu cases\n", cases);
    attack_close(w, s, bl);
}

/* --- contain: what a detection leaves behind ------------------------------------------------- */

/* Up to 4 free blocks of footprint sz, by a walk, into m; returns how many. */
static size_t free_members(world_t *w, blocks_t *bl, size_t sz, uintptr_t m[4])
{
    bl->n = 0;
    rt_buddy_walk(w->h, blocks_fn, bl);
    size_t nm = 0;
    for (size_t i = 0; i < bl->n && nm < 4u; i++) {
        if (!bl->b[i].used && bl->b[i].footprint == sz) {
            m[nm++] = (uintptr_t)bl->b[i].pointer;
        }
    }
    return nm;
}

/* A middle member d of a list of order k damaged: freeing its lower buddy quarantines it */
static void contain_member(world_t *w, blocks_t *bl, unsigned k, uintptr_t d)
{
    size_t sz = (size_t)1 << k;
    /* damage the second-lowest member's next (a middle member), then free its lower buddy:
     * the merge check finds it, quarantines it alone, and the free is refused; a retry
     * frees the block (its buddy is out of the way) */
    ((unsigned char *)d)[0] ^= 0x40u;
    size_t lower = w_find(w, (void *)(d - sz));
    TL_CHECK(lower != SIZE_MAX, "the lower buddy is live");
    rt_stats_t st0, st1;
    rt_buddy_stats(w->h, &st0);
    void *lp = w->live[lower].p;
    rt_buddy_free(w->h, lp);
    rt_buddy_stats(w->h, &st1);
    TL_CHECK(w->reports == 1u && w->last_kind == RT_ERR_CORRUPTED && w->last_pointer == (void *)d,
             "merge into a damaged buddy: one CORRUPTED report at it (%lu, %p)", w->reports, w->last_pointer);
    TL_CHECK(st1.frees == st0.frees && st1.used_blocks == st0.used_blocks && rt_buddy_usable_size(w->h, lp) == sz,
             "the free is refused (frees %ju -> %ju)", (uintmax_t)st0.frees, (uintmax_t)st1.frees);
    (void)w_free_at(w, lower);
    rt_buddy_stats(w->h, &st1);
    TL_CHECK(w->reports == 1u && st1.frees == st0.frees + 1u, "a retry frees it, unreported");
    TL_CHECK(!rt_buddy_check(w->h), "check reports the quarantined block");
    /* the quarantined block is no one's: free and usable_size refuse it as a bad pointer */
    w->reports = 0;
    rt_buddy_free(w->h, (void *)d);
    TL_CHECK(w->reports == 1u && w->last_kind == RT_ERR_BAD_POINTER, "free of a quarantined block: BAD_POINTER");
    /* the walk shows it used */
    bl->n = 0;
    rt_buddy_walk(w->h, blocks_fn, bl);
    bool seen = false;
    for (size_t i = 0; i < bl->n; i++) {
        if ((uintptr_t)bl->b[i].pointer == d) {
            seen = bl->b[i].used && bl->b[i].footprint == sz;
        }
    }
    TL_CHECK(seen, "walk shows the quarantined block as used, whole");
    /* the heap stays usable: fill it, never get the quarantined block or an overlap */
    w->reports = 0;
    w->bad_kinds = 0;
    for (size_t s2 = rt_buddy_max_request(w->h); s2 >= UNIT; s2 /= 2u) {
        void *p;
        while (w->nlive < MAX_LIVE && (p = w_malloc(w, s2)) != NULL) {
            TL_CHECK((uintptr_t)p + s2 <= d || (uintptr_t)p >= d + sz, "the quarantined block handed out");
        }
    }
    TL_CHECK(w->bad_kinds == 0u, "only CORRUPTED reports while filling");
    world_final(w);
    for (size_t i = w->nlive; i-- > 0u;) {
        (void)w_free_at(w, i);
    }
    world_final(w);
    TL_CHECK(!w->failed, "contain: safety");
}

/* a damaged head: malloc refuses (NULL, counted as a failure), the list is dropped, and the next
 * malloc of the order is served from a larger block */
static void contain_head(world_t *w, blocks_t *bl, unsigned k)
{
    size_t sz = (size_t)1 << k;
    uintptr_t m[4];
    size_t nm = free_members(w, bl, sz, m);
    /* the head: what malloc takes, and free puts back at the head (its buddy is live) */
    void *taken = rt_buddy_malloc(w->h, sz);
    rt_buddy_free(w->h, taken);
    uintptr_t head = (uintptr_t)taken;
    /* the orphan two steps after the head: both of its neighbours are orphans too. The links
     * are sealed, so the list's order is learnt by taking: the third malloc of the order takes
     * it; then the state is restored */
    snapshot_t *s = malloc(sizeof *s);
    if (!TL_CHECK(s != NULL && (s->bytes = malloc(w->size)) != NULL, "contain head: out of memory")) {
        free(s);
        return;
    }
    snap_take(s, w);
    (void)rt_buddy_malloc(w->h, sz);
    (void)rt_buddy_malloc(w->h, sz);
    uintptr_t orphan = (uintptr_t)rt_buddy_malloc(w->h, sz);
    snap_restore(w, s);
    free(s->bytes);
    free(s);
    TL_CHECK(nm == 4u && orphan != head && orphan != 0u, "4 members, the orphan is not the head");
    ((uintptr_t *)head)[1] = 0; /* its prev: NULL is never a link of a circular list */
    rt_stats_t st0, st1;
    rt_buddy_stats(w->h, &st0);
    void *p = rt_buddy_malloc(w->h, sz);
    rt_buddy_stats(w->h, &st1);
    TL_CHECK(p == NULL && w->reports == 1u && w->last_pointer == (void *)head && st1.failures == st0.failures + 1u,
             "malloc at a damaged head: refused, reported at the head, counted (%p, %lu)", p, w->reports);
    void *q = w_malloc(w, sz);
    TL_CHECK(q != NULL && w->reports == 1u, "the next malloc of the order is served, unreported");
    /* the dropped list's other members are orphans: freeing the lower buddy of one whose
     * links still agree merges with it, silently */
    size_t before = w->reports;
    size_t lower = w_find(w, (void *)(orphan - sz));
    if (TL_CHECK(lower != SIZE_MAX, "orphan's lower buddy live")) {
        TL_CHECK(w_free_at(w, lower) && w->reports == before, "merge with an orphan whose links agree: no report");
        TL_CHECK(w_malloc(w, 2u * sz) != NULL && w->reports == before, "the merged orphan serves a request");
    }
    world_final(w);
    TL_CHECK(!w->failed, "contain head: safety");
}

static void test_contain(void)
{
    if (RT_HARDENING < 1) {
        tl_skip("contain: RT_HARDENING %d keeps the original unchecked lists", (int)RT_HARDENING);
        return;
    }
    world_t *w = malloc(sizeof *w);
    if (!TL_CHECK(w != NULL && world_open(w), "setup")) {
        free(w);
        return;
    }
    /* a list of the second order with 4 members: upper buddies of live lower ones */
    unsigned k = order_of(UNIT) + 1u;
    size_t sz = (size_t)1 << k;
    TL_CHECK(build(w, k, 1), "build");
    blocks_t *bl = malloc(sizeof *bl);
    uintptr_t m[4];
    size_t nm = free_members(w, bl, sz, m);
    TL_CHECK(nm == 4u, "4 free blocks of order %u, got %zu", k, nm);
    if (nm == 4u) {
        contain_member(w, bl, k, m[1]); /* a middle member */
    }
    world_close(w);
    if (world_open(w) && build(w, k, 1)) {
        contain_head(w, bl, k);
    }
    world_close(w);
    free(bl);
    free(w);
}

/* --- copied: link words copied from elsewhere onto a free block's links ----------------------- */

/* Runs one case on a restored snapshot: [src, src + len) copied onto [dst, dst + len) (dst the
 * start of a free block, len <= LINK_BYTES: only link bytes change), drive, check. When dst is
 * `head`, the head of its list (0: not known), the malloc drive's first malloc must already
 * refuse and report it: it is the call that acts on the damaged links (a later report, by
 * check(), would come after a silent loss). */
static void run_copy_case(world_t *w, const snapshot_t *s, uintptr_t dst, uintptr_t src, size_t len, int which,
                          size_t k_size, uintptr_t head, const char *what)
{
    snap_restore(w, s);
    bool changed = memcmp((const void *)dst, (const void *)src, len) != 0;
    memmove((void *)dst, (const void *)src, len);
    if (which == 0 && dst == head && changed) {
        void *p = w_malloc(w, k_size);
        SAFE(w, p == NULL && w->reports == 1u && w->last_pointer == (void *)dst,
             "%s: the malloc that takes the damaged head was not refused and reported (got %p, %lu reports)", what, p,
             w->reports);
    }
    drive(w, which, dst, k_size);
    bool ok = rt_buddy_check(w->h);
    world_final(w);
    SAFE(w, w->bad_kinds == 0u, "%s: a report of another kind than CORRUPTED (last %s)", what,
         tl_kind_name(w->last_kind));
    if (changed) {
        SAFE(w, w->reports > 0u && !ok, "%s, drive %s: not reported (%lu reports, check %d)", what, drive_names[which],
             w->reports, ok);
    } else {
        SAFE(w, w->reports == 0u && ok, "%s, drive %s: no byte changed, yet %lu reports, check %d", what,
             drive_names[which], w->reports, ok);
    }
}

/* A list of exactly two free blocks of order k, *head first, then *other (both the upper buddies
 * of live lower ones; nothing else of order k is free). False if the heap cannot hold it. */
static bool two_list(world_t *w, blocks_t *bl, unsigned k, uintptr_t *head, uintptr_t *other)
{
    size_t sz = (size_t)1 << k;
    uintptr_t m[4];
    while (free_members(w, bl, sz, m) > 0u) { /* take every free block of order k first */
        if (w_malloc(w, sz) == NULL) {
            return false;
        }
    }
    void *got[4]; /* list k is empty: each split gives a lower half and its upper buddy */
    for (int i = 0; i < 4; i++) {
        if ((got[i] = w_malloc(w, sz)) == NULL) {
            return false;
        }
    }
    if (((uintptr_t)got[1] ^ sz) != (uintptr_t)got[0] || ((uintptr_t)got[3] ^ sz) != (uintptr_t)got[2] ||
        ((uintptr_t)got[1] & sz) == 0u || ((uintptr_t)got[3] & sz) == 0u || !w_free_at(w, w_find(w, got[1])) ||
        !w_free_at(w, w_find(w, got[3])) || free_members(w, bl, sz, m) != 2u) {
        return false;
    }
    *head = (uintptr_t)got[3]; /* a free pushes at the head */
    *other = (uintptr_t)got[1];
    return true;
}

/* The case the copy class of the overflow suite found: in a list of two, {x, o}, o's links both
 * name x; an overrun copying them (all or the first W + 2 bytes) onto x's links made x look
 * like a list of one, linked to itself, and o was lost silently when malloc took x. Now malloc
 * must refuse, report x, and hand nothing out. */
static void copied_pair(void)
{
    world_t *w = malloc(sizeof *w);
    blocks_t *bl = malloc(sizeof *bl);
    if (!TL_CHECK(w != NULL && bl != NULL, "copied pair: setup")) {
        free(w);
        free(bl);
        return;
    }
    const size_t lens[] = {LINK_BYTES, sizeof(void *) + 2u};
    for (unsigned k = order_of(UNIT); k < order_of(UNIT) + 4u; k++) {
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            uintptr_t x = 0, o = 0;
            if (!TL_CHECK(world_open(w), "copied pair: open")) {
                break;
            }
            if (!TL_CHECK(two_list(w, bl, k, &x, &o) && rt_buddy_check(w->h) && w->reports == 0u,
                          "order %u: a sound list of two", k)) {
                world_close(w);
                continue;
            }
            size_t sz = (size_t)1 << k;
            memcpy((void *)x, (const void *)o, lens[li]); /* the overrun from x's lower buddy */
            rt_stats_t st;
            rt_buddy_stats(w->h, &st);
            size_t used = st.used_blocks;
            void *p = w_malloc(w, sz);
            TL_CHECK(p == NULL && w->reports == 1u && w->last_kind == RT_ERR_CORRUPTED && w->last_pointer == (void *)x,
                     "order %u, %zu bytes of o's links copied onto x: malloc refused and reported x (got %p, %lu "
                     "reports, at %p)",
                     k, lens[li], p, w->reports, w->last_pointer);
            rt_buddy_stats(w->h, &st);
            TL_CHECK(st.used_blocks == used, "order %u: the refused malloc handed nothing out", k);
            TL_CHECK(!rt_buddy_check(w->h), "order %u: check reports the damage", k);
            /* the heap stays safe: fill it, never getting x or an overlap (world_add checks) */
            for (size_t s2 = rt_buddy_max_request(w->h); s2 >= UNIT; s2 /= 2u) {
                void *q;
                while (w->nlive < MAX_LIVE && (q = w_malloc(w, s2)) != NULL) {
                    TL_CHECK((uintptr_t)q + s2 <= x || (uintptr_t)q >= x + sz, "order %u: the damaged block handed out",
                             k);
                }
            }
            world_final(w);
            TL_CHECK(w->bad_kinds == 0u && !w->failed, "order %u: safety", k);
            world_close(w);
        }
    }
    free(bl);
    free(w);
}

/* Every copy of 1..LINK_BYTES bytes from another free block's links (starting at its next or
 * its prev word) or from the control structure (whole links' length, every word) onto a free
 * block's links, under every drive: reported iff a byte changed. States: for each of 3 orders,
 * a list of up to 4 (build) and a list of two (two_list). */
static void copied_all(void)
{
    world_t *w;
    snapshot_t *s;
    blocks_t *bl;
    if (!attack_open("copied", &w, &s, &bl)) {
        return;
    }
    unsigned long cases = 0, before_failed = tl_state.failed;
    for (unsigned state = 0; state < 6u; state++) {
        unsigned k = order_of(UNIT) + state / 2u;
        uintptr_t x = 0, o = 0;
        world_close(w);
        if (!world_open(w) || !(state % 2u == 0u ? build(w, k, 1) : two_list(w, bl, k, &x, &o))) {
            TL_CHECK(false, "copied: state %u", state);
            continue;
        }
        size_t sz = (size_t)1 << k;
        snap_take(s, w);
        bl->n = 0;
        rt_buddy_walk(w->h, blocks_fn, bl);
        uintptr_t frees[64];
        size_t nf = 0;
        for (size_t i = 0; i < bl->n && nf < 64u; i++) {
            if (!bl->b[i].used) {
                frees[nf++] = (uintptr_t)bl->b[i].pointer;
            }
        }
        uintptr_t control = ((uintptr_t)w->mem + sizeof(void *) - 1u) & ~(uintptr_t)(sizeof(void *) - 1u);
        for (size_t d = 0; d < nf; d++) {
            uintptr_t dst = frees[d];
            char what[128];
            for (size_t f = 0; f < nf; f++) {
                for (size_t off = 0; f != d && off < LINK_BYTES; off += sizeof(void *)) {
                    for (size_t len = 1; len <= LINK_BYTES; len++) {
                        for (int which = 0; which < DRIVES; which++) {
                            snprintf(what, sizeof what, "order %u: %zu bytes of arena+%ju+%zu onto arena+%ju", k, len,
                                     (uintmax_t)(frees[f] - w->lo), off, (uintmax_t)(dst - w->lo));
                            run_copy_case(w, s, dst, frees[f] + off, len, which, sz, x, what);
                            cases++;
                        }
                    }
                }
            }
            for (size_t off = 0; off + LINK_BYTES <= rt_buddy_control_size(); off += sizeof(void *)) {
                for (int which = 0; which < DRIVES; which++) {
                    snprintf(what, sizeof what, "order %u: control+%zu onto arena+%ju", k, off,
                             (uintmax_t)(dst - w->lo));
                    run_copy_case(w, s, dst, control + off, LINK_BYTES, which, sz, x, what);
                    cases++;
                }
            }
        }
    }
    printf("copied: %lu cases, %lu failed checks\n", cases, tl_state.failed - before_failed);
    attack_close(w, s, bl);
}

/* A link of an earlier life over the same buffer: x alone on its list in life 0 (both links name
 * x); in life 1, re-created over the buffer, x heads a list of two, and an overrun writes back
 * the bytes x held in life 0. Under the same key they would still read as "x alone" and the
 * other member would be lost silently; create draws a new key, so malloc refuses and reports. */
static void stale_link(void)
{
    world_t *w = malloc(sizeof *w);
    blocks_t *bl = malloc(sizeof *bl);
    if (!TL_CHECK(w != NULL && bl != NULL && world_open(w), "stale: setup")) {
        free(w);
        free(bl);
        return;
    }
    unsigned k = order_of(UNIT) + 1u;
    size_t sz = (size_t)1 << k;
    uintptr_t x = 0, o = 0;
    unsigned char life0[LINK_BYTES];
    /* life 0: x alone on list k, x's lower buddy live */
    bool built = two_list(w, bl, k, &x, &o) && w_malloc(w, sz) == (void *)x && w_malloc(w, sz) == (void *)o;
    built = built && w_free_at(w, w_find(w, (void *)x)); /* x alone on the list */
    uintptr_t m[4];
    if (!TL_CHECK(built && free_members(w, bl, sz, m) == 1u && m[0] == x && rt_buddy_check(w->h) && w->reports == 0u,
                  "stale: life 0, x alone on its list")) {
        world_close(w);
        free(bl);
        free(w);
        return;
    }
    memcpy(life0, (const void *)x, LINK_BYTES);
    /* life 1: the same buffer, created again, the same steps (the same layout), x heads {x, o} */
    w->h = rt_buddy_create(w->mem, w->size);
    TL_CHECK(w->h != NULL, "stale: create again");
    rt_buddy_set_handler(w->h, on_error, w);
    w->nlive = 0;
    uintptr_t x1 = 0, o1 = 0;
    built = two_list(w, bl, k, &x1, &o1);
    if (TL_CHECK(built && x1 == x && rt_buddy_check(w->h) && w->reports == 0u,
                 "stale: life 1, x heads a list of two")) {
        TL_CHECK(memcmp(life0, (const void *)x, LINK_BYTES) != 0, "stale: life 1's links differ from life 0's");
        memcpy((void *)x, life0, LINK_BYTES);
        void *p = w_malloc(w, sz);
        TL_CHECK(p == NULL && w->reports == 1u && w->last_kind == RT_ERR_CORRUPTED && w->last_pointer == (void *)x,
                 "stale: x's links of life 0 in life 1: malloc refused and reported x (got %p, %lu reports)", p,
                 w->reports);
        TL_CHECK(!rt_buddy_check(w->h), "stale: check reports the damage");
        world_final(w);
        TL_CHECK(w->bad_kinds == 0u && !w->failed, "stale: safety");
    }
    world_close(w);
    free(bl);
    free(w);
}

static void test_copied(void)
{
    if (RT_HARDENING < 1) {
        tl_skip("copied: RT_HARDENING %d keeps the original unchecked lists", (int)RT_HARDENING);
        return;
    }
    copied_pair();
    copied_all();
    stale_link();
    rt_set_entropy(tl_entropy_constant, NULL); /* both lives draw the same key: create moves it */
    stale_link();
    rt_set_entropy(NULL, NULL);
}

/* --- soak: random operations, random corruptions --------------------------------------------- */

static void soak(uint64_t seed, unsigned ops)
{
    world_t *w = malloc(sizeof *w);
    blocks_t *bl = malloc(sizeof *bl);
    if (!TL_CHECK(w != NULL && bl != NULL && world_open(w), "soak setup")) {
        free(w);
        free(bl);
        return;
    }
    tl_rng_t r = tl_rng_seed(seed);
    unsigned long changes = 0;
    for (unsigned i = 0; i < ops && !w->failed; i++) {
        unsigned op = (unsigned)tl_range(&r, 0, 99);
        if (op < 40) {
            (void)w_malloc(w, tl_range(&r, 1, 3000));
        } else if (op < 70) {
            if (w->nlive > 0u) {
                (void)w_free_at(w, tl_range(&r, 0, w->nlive - 1u));
            }
        } else if (op < 85) {
            if (w->nlive > 0u) {
                w_realloc_at(w, tl_range(&r, 0, w->nlive - 1u), tl_range(&r, 1, 4000));
            }
        } else if (op < 88) {
            (void)rt_buddy_check(w->h);
        } else if (op < 92 && RT_HARDENING >= 1) {
            /* corrupt 1..16 bytes at the start of a random free block (an overflow from below) */
            bl->n = 0;
            rt_buddy_walk(w->h, blocks_fn, bl);
            size_t nfree = 0;
            for (size_t j = 0; j < bl->n; j++) {
                nfree += bl->b[j].used ? 0u : 1u;
            }
            if (nfree == 0u) {
                continue;
            }
            size_t pick = tl_range(&r, 0, nfree - 1u);
            for (size_t j = 0; j < bl->n; j++) {
                if (!bl->b[j].used && pick-- == 0u) {
                    unsigned char *c = bl->b[j].pointer;
                    size_t len = tl_range(&r, 1, 16);
                    if (len > bl->b[j].footprint) {
                        len = bl->b[j].footprint; /* within the free block: the test's own writes
                                                     stay off live blocks and the guards */
                    }
                    unsigned kind = (unsigned)tl_range(&r, 0, 3);
                    for (size_t x = 0; x < len; x++) {
                        unsigned bit = 1u << (unsigned)tl_range(&r, 0, 7);
                        unsigned char v = (unsigned char)(kind == 0   ? 0x00u
                                                          : kind == 1 ? 0xFFu
                                                          : kind == 2 ? ((unsigned)c[x] ^ bit) & 0xFFu
                                                                      : (unsigned)(tl_next(&r) & 0xFFu));
                        if (x < LINK_BYTES && c[x] != v) {
                            changes++;
                        }
                        c[x] = v;
                    }
                    break;
                }
            }
        } else if (w->nlive > 0u) {
            (void)rt_buddy_usable_size(w->h, w->live[tl_range(&r, 0, w->nlive - 1u)].p);
        }
    }
    bool ok = rt_buddy_check(w->h);
    world_final(w);
    TL_CHECK(w->bad_kinds == 0u, "soak seed %ju: a report of kind %s", (uintmax_t)seed, tl_kind_name(w->last_kind));
    TL_CHECK(changes == 0u ? (w->reports == 0u && ok) : w->reports > 0u,
             "soak seed %ju: %lu link bytes changed, %lu reports, check %d", (uintmax_t)seed, changes, w->reports, ok);
    TL_CHECK(!w->failed, "soak seed %ju: safety (replay: buddy_unit soak %ju)", (uintmax_t)seed, (uintmax_t)seed);
    world_close(w);
    free(bl);
    free(w);
}

/* --- sanity at every level: the layout, the guard, min_buffer -------------------------------- */

/* The guard: the 32 bytes before the first block (1..16 of an underflow and more) are not read. */
static void test_layout(void)
{
    world_t *w = malloc(sizeof *w);
    if (!TL_CHECK(w != NULL && world_open(w), "setup")) {
        free(w);
        return;
    }
    /* the table's last byte is below the guard: writing the 32 bytes before the first block
     * changes nothing the allocator reads */
    if (RT_HARDENING >= 1) {
        memset((void *)(w->lo - 32u), 0x5A, 32u);
    }
    TL_CHECK(rt_buddy_check(w->h) && w->reports == 0u, "32 bytes before the arena are the guard");
    while (w_malloc(w, UNIT) != NULL) {
    }
    for (size_t i = w->nlive; i-- > 0u;) {
        (void)w_free_at(w, i);
    }
    TL_CHECK(rt_buddy_check(w->h) && w->reports == 0u && !w->failed, "fill and empty over a scribbled guard");
    world_final(w);
    world_close(w);
    free(w);
}

int main(int argc, char **argv)
{
    uint64_t seed = 0;
    if (argc == 3 && strcmp(argv[1], "soak") == 0 && tl_parse_u64(argv[2], &seed)) {
        soak(seed, 200000u);
        return tl_summary("buddy_unit soak");
    }
    printf("buddy_unit: RT_HARDENING %d, unit %zu bytes, links %zu bytes\n", (int)RT_HARDENING, (size_t)UNIT,
           (size_t)LINK_BYTES);
    test_layout();
    test_overflow();
    test_forged();
    test_contain();
    test_copied();
    unsigned seeds = TL_ASAN || TL_DEBUG_WALKS ? 8u : 32u;
    for (uint64_t s = 1; s <= seeds; s++) {
        soak(s, 20000u);
    }
    return tl_summary("buddy_unit");
}
