/* SPDX-License-Identifier: MIT */
/*
 * ports/wcet/scenarios.c -- TLSF's entry points driven down their longest paths on the target,
 * every call measured exactly, for the check against the static bound (tools/wcet.py,
 * tools/wcet_check.py; ctest wcet_<level>_<port>).
 *
 * Each scenario builds a heap state, then makes ONE call of an entry point, which is measured
 * three times, each time on a fresh heap built the same way:
 *   port   the port's interrupt-masking lock hooks installed: the call's instructions;
 *   none   no lock hooks: the call's instructions;
 *   held   counting lock hooks: the longest stretch with the lock held.
 * The call goes through wcet_call (wcet_<port>.S), which reads the counter right before the call
 * instruction and right after the return, so a count is the entry point's own instructions,
 * entry to return -- what the static bound bounds -- with no call site around it. What the bound
 * leaves out is taken out of the count: the bodies of memcpy, memmove and memset and the error
 * handler's, which here are routines of known length that add their own instructions to
 * wcet_excluded (checked below on a function of known length). The held stretch is the
 * allocator's part (from the lock hook's return to the unlock call, inclusive: the counting
 * hooks' own instructions calibrated out, as the on-target study does); the checker adds the
 * port hooks' own masked instructions, read from the disassembly.
 *
 * Output: "@W,<entry>,<scenario>,<normal|damage>,<port|none|held>,<instructions>" per
 * measurement, "@END" at the end. A scenario of class "damage" makes the call contain (walk the
 * heap: damage met, or a wild pointer into a pool); the others must not (checked: the heap's
 * fenced bytes do not change; a normal scenario that contained would also exceed its bound). Each scenario checks that its call took the path it is named after; a failed check
 * ends the run with status 1.
 */
#include "port_libc.h"

#include "port.h"
#include "rtalloc/rtalloc.h"

enum { HEAP_BYTES = 64 * 1024, QUARTER = HEAP_BYTES / 4 };

static unsigned char arena[HEAP_BYTES] __attribute__((aligned(8)));

/* --- the assembly's counters ---------------------------------------------------------------- */

uint32_t wcet_t[2];     /* the trampoline's two counter reads */
uint32_t wcet_excluded; /* instructions of the copy routines and the handler, so far */
uint32_t wcet_handler_calls;
typedef void (*any_fn)(void); /* any function, called through wcet_call with its own type */
uintptr_t wcet_call(any_fn fn, uintptr_t a, uintptr_t b, uintptr_t c);
void wcet_known5(void);
void wcet_handler(void *context, const rt_error_t *error);

/* The instructions of fn(a, b, c), entry to return, and what it returned. */
static uint32_t measure(any_fn fn, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t *result)
{
    uint32_t ex = wcet_excluded;
    *result = wcet_call(fn, a, b, c);
    return port_arch_elapsed(wcet_t[0], wcet_t[1]) - 2u - (wcet_excluded - ex);
}

/* --- counting lock hooks (as ports/study/vaios_study.c's) ------------------------------------ */

static uint32_t mk_depth, mk_t0, mk_ex0, mk_last, mk_max, mk_sections, mk_wrap;

uintptr_t wcet_mk_lock(void *context);
void wcet_mk_unlock(void *context, uintptr_t token);

__attribute__((noinline, used)) uintptr_t wcet_mk_lock(void *context)
{
    uintptr_t token = port_lock_hook(context);
    if (mk_depth++ == 0u) {
        mk_ex0 = wcet_excluded;
        mk_t0 = port_count_begin();
    }
    return token;
}

__attribute__((noinline, used)) void wcet_mk_unlock(void *context, uintptr_t token)
{
    if (--mk_depth == 0u) {
        uint32_t n = port_count_end(mk_t0);
        n -= wcet_excluded - mk_ex0; /* a fill made with the lock held (containment's guards) */
        mk_last = n;
        mk_sections++;
        if (n > mk_max) {
            mk_max = n;
        }
    }
    port_unlock_hook(context, token);
}

/* The counting hooks around exactly 3 instructions: the raw count minus 3 is what the hooks
 * themselves put inside every count. */
static uint32_t calibrate(void)
{
    mk_last = 0;
#if defined(__arm__)
    __asm__ __volatile__("movs r0, #0\n\t"
                         "bl wcet_mk_lock\n\t"
                         "mov r1, r0\n\t"
                         "movs r0, #0\n\t"
                         "bl wcet_mk_unlock\n\t"
                         :
                         :
                         : "r0", "r1", "r2", "r3", "r12", "lr", "cc", "memory");
#else
    __asm__ __volatile__("li a0, 0\n\t"
                         "jal ra, wcet_mk_lock\n\t"
                         "mv a1, a0\n\t"
                         "li a0, 0\n\t"
                         "jal ra, wcet_mk_unlock\n\t"
                         :
                         :
                         : "ra", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
                           "a7", "memory");
#endif
    return mk_last;
}

/* --- heaps ---------------------------------------------------------------------------------- */

typedef enum { CFG_PORT, CFG_NONE, CFG_HELD } cfg_t;
static const char *const cfg_name[] = {"port", "none", "held"};
static cfg_t cfg;
static int failures;

#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            port_printf("wcet_scenarios: FAILED: " __VA_ARGS__); \
            port_printf(" (%s:%d)\n", __FILE__, __LINE__);       \
            port_exit(1);                                        \
        }                                                        \
    } while (0)

/* A heap over the first `bytes` of the arena, the handler and this configuration's hooks on. */
static rt_heap_t *heap_new(size_t bytes)
{
    rt_heap_t *h = rt_tlsf_create(arena, bytes);
    CHECK(h != NULL, "create over %lu bytes", (unsigned long)bytes);
    rt_heap_set_handler(h, wcet_handler, NULL);
    if (cfg == CFG_PORT) {
        rt_heap_set_lock(h, port_lock_hook, port_unlock_hook, NULL);
    } else if (cfg == CFG_HELD) {
        rt_heap_set_lock(h, wcet_mk_lock, wcet_mk_unlock, NULL);
    }
    return h;
}

static void *must(void *p)
{
    CHECK(p != NULL, "a setup allocation failed");
    return p;
}

/* Allocates until nothing is left (decreasing sizes): every free list is then empty. */
static void exhaust(rt_heap_t *h)
{
    for (size_t n = HEAP_BYTES; n >= 1u; n /= 2u) {
        while (rt_tlsf_malloc(h, n) != NULL) {
        }
    }
}

/* A heap of four pools, the first three used up: only pool 3 (the last quarter of the arena)
 * has free memory, so everything set up next lies in the pool a pointer is tested against last. */
static rt_heap_t *heap_four_pools(void)
{
    rt_heap_t *h = heap_new(QUARTER);
    exhaust(h);
    for (int i = 1; i < 4; i++) {
        CHECK(rt_heap_add_pool(h, arena + (size_t)i * QUARTER, QUARTER), "add pool %d", i);
        if (i < 3) {
            exhaust(h);
        }
    }
    return h;
}

static uint32_t fenced_bytes(rt_heap_t *h)
{
    rt_stats_t s;
    rt_heap_stats(h, &s);
    return (uint32_t)s.quarantined_bytes;
}

/* Damages a used block's header (its word before the payload): no tag verifies it any more. */
static void damage_header(void *p) { ((volatile size_t *)p)[-1] ^= 0x5A5A5A5Au; }

/* A heap that has contained damage: 16 live blocks with damaged headers fenced (all fenced[]
 * remembers), so every free and realloc asks heap_fenced_holds about 16 blocks. Returns one of
 * the fenced blocks (its free is accepted) through *fenced. */
static rt_heap_t *heap_quarantined(void **fenced)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *v[17];
    for (int i = 0; i < 17; i++) {
        v[i] = must(rt_tlsf_malloc(h, 24));
        for (int k = 0; k < 4; k++) {    /* sound blocks enough between two damaged ones that the */
            must(rt_tlsf_malloc(h, 24)); /* walk finds where the blocks resume: 16 fenced blocks */
        }
    }
    for (int i = 0; i < 17; i++) {
        damage_header(v[i]);
    }
    uint32_t calls = wcet_handler_calls;
    rt_tlsf_free(h, v[16]); /* refused, reported, and the damage contained */
    CHECK(wcet_handler_calls == calls + 1u && fenced_bytes(h) != 0u, "quarantine set up");
    *fenced = v[3];
    return h;
}

/* --- the scenarios --------------------------------------------------------------------------- */

typedef struct call {
    any_fn fn;
    uintptr_t a, b, c;
} call_t;

typedef enum { R_ANY, R_NULL, R_NONNULL } expect_t;

typedef struct scenario {
    const char *entry;
    const char *name;
    bool damage;
    expect_t expect;
    unsigned reports; /* handler calls the measured call makes */
    rt_heap_t *(*setup)(call_t *c);
    /* optional: whether the call took its path (result: what it returned) */
    bool (*took)(rt_heap_t *h, uintptr_t result);
} scenario_t;

#define CALL(F, A, B, C) (*c = (call_t){(any_fn)(F), (uintptr_t)(A), (uintptr_t)(B), (uintptr_t)(C)})

static void *keep[8]; /* pointers a setup hands to its `took` check */

/* malloc */
static rt_heap_t *m_small(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_malloc, h, 100, 0);
    return h;
}
static rt_heap_t *m_large(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_malloc, h, 1000, 0);
    return h;
}
static rt_heap_t *m_exact(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *a = must(rt_tlsf_malloc(h, 300));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, a);
    keep[0] = a;
    CALL(rt_tlsf_malloc, h, 300, 0);
    return h;
}
static bool took_keep0(rt_heap_t *h, uintptr_t r) { return (void)h, r == (uintptr_t)keep[0]; }
/* Four pools; the request's own slot holds a block too small (good fit looks and passes), its
 * row nothing larger, so the search climbs a row to a list of two blocks in pool 3: the head is
 * taken, its next checked through every pool's range, the rest goes back to the index. */
static rt_heap_t *m_climb_pools(call_t *c)
{
    rt_heap_t *h = heap_four_pools();
    void *small = must(rt_tlsf_malloc(h, 580)); /* block 584: the slot [576, 608) */
    must(rt_tlsf_malloc(h, 8));
    void *b1 = must(rt_tlsf_malloc(h, 1996)); /* block 2000: a row above */
    must(rt_tlsf_malloc(h, 8));
    void *b2 = must(rt_tlsf_malloc(h, 1996));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, small);
    rt_tlsf_free(h, b1);
    rt_tlsf_free(h, b2); /* the head; b1 its next */
    keep[0] = b2;
    CALL(rt_tlsf_malloc, h, 600, 0); /* block 608 > 584 */
    return h;
}
static rt_heap_t *m_zero(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_malloc, h, 0, 0);
    return h;
}
static rt_heap_t *m_too_large(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_malloc, h, (size_t)1 << 30, 0);
    return h;
}
static rt_heap_t *m_oom(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    exhaust(h);
    CALL(rt_tlsf_malloc, h, 1000, 0);
    return h;
}
/* Many blocks, one free block damaged: the malloc that finds it refuses and contains. */
static rt_heap_t *m_damage(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *x = NULL;
    for (int i = 0; i < 1500; i++) {
        void *p = must(rt_tlsf_malloc(h, 12));
        if (i == 700) {
            x = must(rt_tlsf_malloc(h, 500));
        }
        if (i % 3 == 0) {
            rt_tlsf_free(h, p);
        }
    }
    rt_tlsf_free(h, x);
    damage_header(x);
    CALL(rt_tlsf_malloc, h, 500, 0);
    return h;
}

/* free */
static rt_heap_t *f_plain(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    must(rt_tlsf_malloc(h, 40));
    void *b = must(rt_tlsf_malloc(h, 40));
    must(rt_tlsf_malloc(h, 40));
    CALL(rt_tlsf_free, h, b, 0);
    return h;
}
/* [P free][b][N free][used]: both neighbours leave lists that become empty. */
static rt_heap_t *f_merge(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *p = must(rt_tlsf_malloc(h, 200));
    void *b = must(rt_tlsf_malloc(h, 40));
    void *n = must(rt_tlsf_malloc(h, 700));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n);
    CALL(rt_tlsf_free, h, b, 0);
    return h;
}
/* The same in pool 3 of four, each neighbour the head of a list whose next is in pool 3 too:
 * every link it checks is tested against every pool. */
static rt_heap_t *f_merge_pools(call_t *c)
{
    rt_heap_t *h = heap_four_pools();
    void *p2 = must(rt_tlsf_malloc(h, 200));
    must(rt_tlsf_malloc(h, 8));
    void *n2 = must(rt_tlsf_malloc(h, 700));
    must(rt_tlsf_malloc(h, 8));
    void *p = must(rt_tlsf_malloc(h, 200));
    void *b = must(rt_tlsf_malloc(h, 40));
    void *n = must(rt_tlsf_malloc(h, 700));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p2);
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n2);
    rt_tlsf_free(h, n);
    CALL(rt_tlsf_free, h, b, 0);
    return h;
}
static rt_heap_t *f_quarantined(call_t *c)
{
    void *fenced;
    rt_heap_t *h = heap_quarantined(&fenced);
    void *p = must(rt_tlsf_malloc(h, 200));
    void *b = must(rt_tlsf_malloc(h, 40));
    void *n = must(rt_tlsf_malloc(h, 700));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n);
    CALL(rt_tlsf_free, h, b, 0);
    return h;
}
static rt_heap_t *f_fenced(call_t *c)
{
    void *fenced;
    rt_heap_t *h = heap_quarantined(&fenced);
    CALL(rt_tlsf_free, h, fenced, 0);
    return h;
}
static rt_heap_t *f_double(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *a = must(rt_tlsf_malloc(h, 40));
    must(rt_tlsf_malloc(h, 40));
    rt_tlsf_free(h, a);
    CALL(rt_tlsf_free, h, a, 0);
    return h;
}
static size_t outside[4];
static rt_heap_t *f_foreign(call_t *c)
{
    rt_heap_t *h = heap_new(QUARTER);
    CALL(rt_tlsf_free, h, &outside[2], 0);
    return h;
}
static rt_heap_t *f_null(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_free, h, NULL, 0);
    return h;
}
static rt_heap_t *f_interior(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    for (int i = 0; i < 600; i++) {
        void *p = must(rt_tlsf_malloc(h, 20));
        if (i % 2 == 0) {
            rt_tlsf_free(h, p);
        }
    }
    unsigned char *a = must(rt_tlsf_malloc(h, 64));
    CALL(rt_tlsf_free, h, a + 16, 0);
    return h;
}
/* An overflow of a's payload into its successor's header: the free of a sees it. */
static rt_heap_t *f_overflow(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    unsigned char *a = NULL;
    for (int i = 0; i < 600; i++) {
        void *p = must(rt_tlsf_malloc(h, 20));
        if (i == 300) {
            a = must(rt_tlsf_malloc(h, 60)); /* block 64: its payload ends at the next header */
            must(rt_tlsf_malloc(h, 60));
        }
        if (i % 2 == 0) {
            rt_tlsf_free(h, p);
        }
    }
    a[60] ^= 0xFFu;
    CALL(rt_tlsf_free, h, a, 0);
    return h;
}

/* realloc */
static rt_heap_t *r_grow(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *a = must(rt_tlsf_malloc(h, 100));
    void *n = must(rt_tlsf_malloc(h, 300));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, n);
    keep[0] = a;
    CALL(rt_tlsf_realloc, h, a, 250);
    return h;
}
static rt_heap_t *r_shrink(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *a = must(rt_tlsf_malloc(h, 600));
    void *n = must(rt_tlsf_malloc(h, 300));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, n);
    keep[0] = a;
    CALL(rt_tlsf_realloc, h, a, 100);
    return h;
}
/* [P free][b][N free][used]: b grows into both, its payload moved down (the copy excluded). */
static rt_heap_t *r_slide(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *p = must(rt_tlsf_malloc(h, 300));
    void *b = must(rt_tlsf_malloc(h, 100));
    void *n = must(rt_tlsf_malloc(h, 40));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n);
    keep[0] = p;
    CALL(rt_tlsf_realloc, h, b, 400);
    return h;
}
static rt_heap_t *r_move(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    must(rt_tlsf_malloc(h, 40));
    void *b = must(rt_tlsf_malloc(h, 100));
    must(rt_tlsf_malloc(h, 40));
    keep[0] = b;
    CALL(rt_tlsf_realloc, h, b, 1000);
    return h;
}
static bool took_moved(rt_heap_t *h, uintptr_t r) { return (void)h, r != 0u && r != (uintptr_t)keep[0]; }
static rt_heap_t *r_null(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_realloc, h, NULL, 100);
    return h;
}
static rt_heap_t *r_zero(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *p = must(rt_tlsf_malloc(h, 200));
    void *b = must(rt_tlsf_malloc(h, 40));
    void *n = must(rt_tlsf_malloc(h, 700));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n);
    CALL(rt_tlsf_realloc, h, b, 0);
    return h;
}
static rt_heap_t *r_too_large(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *b = must(rt_tlsf_malloc(h, 40));
    CALL(rt_tlsf_realloc, h, b, (size_t)1 << 30);
    return h;
}
static rt_heap_t *r_quarantined(call_t *c)
{
    void *fenced;
    rt_heap_t *h = heap_quarantined(&fenced);
    void *a = must(rt_tlsf_malloc(h, 100));
    void *n = must(rt_tlsf_malloc(h, 300));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, n);
    keep[0] = a;
    CALL(rt_tlsf_realloc, h, a, 250);
    return h;
}
/* A move on a heap with fenced memory: realloc's own check, the malloc, the copy and the free
 * each ask heap_fenced_holds (realloc's and free's) about the 16 fenced blocks. */
static rt_heap_t *r_move_quarantined(call_t *c)
{
    void *fenced;
    rt_heap_t *h = heap_quarantined(&fenced);
    void *p = must(rt_tlsf_malloc(h, 200));
    void *b = must(rt_tlsf_malloc(h, 100));
    void *n = must(rt_tlsf_malloc(h, 700));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n);
    keep[0] = b;
    CALL(rt_tlsf_realloc, h, b, 3000);
    return h;
}
/* A slide on a heap with fenced memory. */
static rt_heap_t *r_slide_quarantined(call_t *c)
{
    void *fenced;
    rt_heap_t *h = heap_quarantined(&fenced);
    void *p = must(rt_tlsf_malloc(h, 300));
    void *b = must(rt_tlsf_malloc(h, 100));
    void *n = must(rt_tlsf_malloc(h, 40));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, p);
    rt_tlsf_free(h, n);
    keep[0] = p;
    CALL(rt_tlsf_realloc, h, b, 400);
    return h;
}
/* A free next whose own link lies in pool 3: absorbed in place after every pool range test. */
static rt_heap_t *r_grow_pools(call_t *c)
{
    rt_heap_t *h = heap_four_pools();
    void *n2 = must(rt_tlsf_malloc(h, 300));
    must(rt_tlsf_malloc(h, 8));
    void *a = must(rt_tlsf_malloc(h, 100));
    void *n = must(rt_tlsf_malloc(h, 300));
    must(rt_tlsf_malloc(h, 8));
    rt_tlsf_free(h, n2);
    rt_tlsf_free(h, n);
    keep[0] = a;
    CALL(rt_tlsf_realloc, h, a, 250);
    return h;
}
static rt_heap_t *r_bad(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    for (int i = 0; i < 600; i++) {
        void *p = must(rt_tlsf_malloc(h, 20));
        if (i % 2 == 0) {
            rt_tlsf_free(h, p);
        }
    }
    unsigned char *a = must(rt_tlsf_malloc(h, 64));
    CALL(rt_tlsf_realloc, h, a + 16, 100);
    return h;
}

/* memalign */
static rt_heap_t *a_gap(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    must(rt_tlsf_malloc(h, 100));
    CALL(rt_tlsf_memalign, h, 256, 100);
    return h;
}
static rt_heap_t *a_big_gap(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    must(rt_tlsf_malloc(h, 100));
    CALL(rt_tlsf_memalign, h, 4096, 1000);
    return h;
}
static rt_heap_t *a_small(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_memalign, h, 4, 100);
    return h;
}
static rt_heap_t *a_bad(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_memalign, h, 24, 100);
    return h;
}
static rt_heap_t *a_too_large(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_memalign, h, 64, (size_t)1 << 30);
    return h;
}
static rt_heap_t *a_oom(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    exhaust(h);
    CALL(rt_tlsf_memalign, h, 64, 100);
    return h;
}
static rt_heap_t *a_damage(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    void *x = NULL;
    for (int i = 0; i < 1500; i++) {
        void *p = must(rt_tlsf_malloc(h, 12));
        if (i == 700) {
            x = must(rt_tlsf_malloc(h, 2000));
        }
        if (i % 3 == 0) {
            rt_tlsf_free(h, p);
        }
    }
    rt_tlsf_free(h, x);
    damage_header(x);
    CALL(rt_tlsf_memalign, h, 64, 500);
    return h;
}
static bool took_aligned(rt_heap_t *h, uintptr_t r) { return (void)h, r != 0u && r % 256u == 0u; }
static bool took_aligned4k(rt_heap_t *h, uintptr_t r) { return (void)h, r != 0u && r % 4096u == 0u; }

/* calloc */
static rt_heap_t *c_small(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_calloc, h, 10, 30);
    return h;
}
static rt_heap_t *c_large(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    must(rt_tlsf_malloc(h, 100));
    CALL(rt_tlsf_calloc, h, 100, 40);
    return h;
}
static rt_heap_t *c_overflow(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_calloc, h, 0x10000, 0x10000);
    return h;
}
static rt_heap_t *c_too_large(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(rt_tlsf_calloc, h, 0x1000, 0x1000);
    return h;
}
static rt_heap_t *c_oom(call_t *c)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    exhaust(h);
    CALL(rt_tlsf_calloc, h, 10, 30);
    return h;
}

static rt_heap_t *c_damage(call_t *c)
{
    call_t m;
    rt_heap_t *h = m_damage(&m); /* the malloc inside calloc finds the damaged block */
    CALL(rt_tlsf_calloc, h, 10, 50);
    return h;
}

/* create */
static rt_heap_t *k_create(call_t *c)
{
    CALL(rt_tlsf_create, arena, HEAP_BYTES, 0);
    return NULL;
}

/* An entry point on a heap pointer that is no heap: refused, reported to the default handler. */
static rt_heap_t *bad_heap(call_t *c, any_fn fn)
{
    rt_heap_t *h = heap_new(HEAP_BYTES);
    CALL(fn, outside, 100, 100);
    return h;
}
static rt_heap_t *m_bad_heap(call_t *c) { return bad_heap(c, (any_fn)rt_tlsf_malloc); }
static rt_heap_t *f_bad_heap(call_t *c) { return bad_heap(c, (any_fn)rt_tlsf_free); }
static rt_heap_t *r_bad_heap(call_t *c) { return bad_heap(c, (any_fn)rt_tlsf_realloc); }
static rt_heap_t *a_bad_heap(call_t *c) { return bad_heap(c, (any_fn)rt_tlsf_memalign); }
static rt_heap_t *c_bad_heap(call_t *c) { return bad_heap(c, (any_fn)rt_tlsf_calloc); }

static const scenario_t scenarios[] = {
    {"rt_tlsf_malloc", "small", false, R_NONNULL, 0, m_small, NULL},
    {"rt_tlsf_malloc", "large", false, R_NONNULL, 0, m_large, NULL},
    {"rt_tlsf_malloc", "exact-fit", false, R_NONNULL, 0, m_exact, took_keep0},
    {"rt_tlsf_malloc", "good-fit-misses-climb-4-pools", false, R_NONNULL, 0, m_climb_pools, took_keep0},
    {"rt_tlsf_malloc", "zero", false, R_NULL, 0, m_zero, NULL},
    {"rt_tlsf_malloc", "too-large", false, R_NULL, 1, m_too_large, NULL},
    {"rt_tlsf_malloc", "out-of-memory", false, R_NULL, 0, m_oom, NULL},
    {"rt_tlsf_malloc", "damaged-free-block", true, R_NULL, 1, m_damage, NULL},
    {"rt_tlsf_malloc", "not-a-heap", false, R_NULL, 1, m_bad_heap, NULL},
    {"rt_tlsf_free", "no-merge", false, R_ANY, 0, f_plain, NULL},
    {"rt_tlsf_free", "merge-both", false, R_ANY, 0, f_merge, NULL},
    {"rt_tlsf_free", "merge-both-4-pools", false, R_ANY, 0, f_merge_pools, NULL},
    {"rt_tlsf_free", "merge-both-quarantined", false, R_ANY, 0, f_quarantined, NULL},
    {"rt_tlsf_free", "fenced-live-block", false, R_ANY, 0, f_fenced, NULL},
    {"rt_tlsf_free", "double-free", false, R_ANY, 1, f_double, NULL},
    {"rt_tlsf_free", "foreign-pointer", false, R_ANY, 1, f_foreign, NULL},
    {"rt_tlsf_free", "null", false, R_ANY, 0, f_null, NULL},
    {"rt_tlsf_free", "interior-pointer", true, R_ANY, 1, f_interior, NULL},
    {"rt_tlsf_free", "overflowed-successor", true, R_ANY, 1, f_overflow, NULL},
    {"rt_tlsf_free", "not-a-heap", false, R_ANY, 1, f_bad_heap, NULL},
    {"rt_tlsf_realloc", "grow-in-place", false, R_NONNULL, 0, r_grow, took_keep0},
    {"rt_tlsf_realloc", "grow-in-place-4-pools", false, R_NONNULL, 0, r_grow_pools, took_keep0},
    {"rt_tlsf_realloc", "grow-in-place-quarantined", false, R_NONNULL, 0, r_quarantined, took_keep0},
    {"rt_tlsf_realloc", "shrink", false, R_NONNULL, 0, r_shrink, took_keep0},
    {"rt_tlsf_realloc", "slide", false, R_NONNULL, 0, r_slide, took_keep0},
    {"rt_tlsf_realloc", "move", false, R_NONNULL, 0, r_move, took_moved},
    {"rt_tlsf_realloc", "move-quarantined", false, R_NONNULL, 0, r_move_quarantined, took_moved},
    {"rt_tlsf_realloc", "slide-quarantined", false, R_NONNULL, 0, r_slide_quarantined, took_keep0},
    {"rt_tlsf_realloc", "null", false, R_NONNULL, 0, r_null, NULL},
    {"rt_tlsf_realloc", "zero", false, R_NULL, 0, r_zero, NULL},
    {"rt_tlsf_realloc", "too-large", false, R_NULL, 1, r_too_large, NULL},
    {"rt_tlsf_realloc", "interior-pointer", true, R_NULL, 1, r_bad, NULL},
    {"rt_tlsf_realloc", "not-a-heap", false, R_NULL, 1, r_bad_heap, NULL},
    {"rt_tlsf_memalign", "gap", false, R_NONNULL, 0, a_gap, took_aligned},
    {"rt_tlsf_memalign", "large-gap", false, R_NONNULL, 0, a_big_gap, took_aligned4k},
    {"rt_tlsf_memalign", "small-alignment", false, R_NONNULL, 0, a_small, NULL},
    {"rt_tlsf_memalign", "bad-alignment", false, R_NULL, 1, a_bad, NULL},
    {"rt_tlsf_memalign", "too-large", false, R_NULL, 1, a_too_large, NULL},
    {"rt_tlsf_memalign", "out-of-memory", false, R_NULL, 0, a_oom, NULL},
    {"rt_tlsf_memalign", "damaged-free-block", true, R_NULL, 1, a_damage, NULL},
    {"rt_tlsf_memalign", "not-a-heap", false, R_NULL, 1, a_bad_heap, NULL},
    {"rt_tlsf_calloc", "small", false, R_NONNULL, 0, c_small, NULL},
    {"rt_tlsf_calloc", "large", false, R_NONNULL, 0, c_large, NULL},
    {"rt_tlsf_calloc", "overflow", false, R_NULL, 1, c_overflow, NULL},
    {"rt_tlsf_calloc", "too-large", false, R_NULL, 1, c_too_large, NULL},
    {"rt_tlsf_calloc", "out-of-memory", false, R_NULL, 0, c_oom, NULL},
    {"rt_tlsf_calloc", "damaged-free-block", true, R_NULL, 1, c_damage, NULL},
    {"rt_tlsf_calloc", "not-a-heap", false, R_NULL, 1, c_bad_heap, NULL},
    {"rt_tlsf_create", "64-kib", false, R_NONNULL, 0, k_create, NULL},
};

static void run(const scenario_t *s)
{
    for (int k = 0; k < 3; k++) {
        cfg = (cfg_t)k;
        if (cfg == CFG_HELD && strcmp(s->entry, "rt_tlsf_create") == 0) {
            continue; /* a new heap has no lock hooks */
        }
        call_t c;
        memset(keep, 0, sizeof keep);
        rt_heap_t *h = s->setup(&c);
        uint32_t fenced = h != NULL ? fenced_bytes(h) : 0u;
        uint32_t calls = wcet_handler_calls;
        mk_max = 0;
        mk_sections = 0;
        uintptr_t r;
        uint32_t n = measure(c.fn, c.a, c.b, c.c, &r);
        uint32_t held = mk_sections != 0u ? mk_max - mk_wrap : 0u;
        CHECK(s->expect == R_ANY || (s->expect == R_NULL) == (r == 0u), "%s %s (%s): returned %p", s->entry, s->name,
              cfg_name[k], (void *)r);
        CHECK(wcet_handler_calls == calls + s->reports, "%s %s (%s): %lu reports, expected %u", s->entry, s->name,
              cfg_name[k], (unsigned long)(wcet_handler_calls - calls), s->reports);
        CHECK(s->took == NULL || s->took(h, r), "%s %s (%s): not the path it is named after", s->entry, s->name,
              cfg_name[k]);
        if (h != NULL) {
            uint32_t after = fenced_bytes(h);
            /* (containment may find nothing to fence: a wild pointer into a pool) */
            CHECK(s->damage || after == fenced, "%s %s (%s): fenced bytes %lu -> %lu", s->entry, s->name, cfg_name[k],
                  (unsigned long)fenced, (unsigned long)after);
            CHECK(rt_heap_check(h), "%s %s (%s): the heap fails its check afterwards", s->entry, s->name, cfg_name[k]);
        }
        port_printf("@W,%s,%s,%s,%s,%lu\n", s->entry, s->name, s->damage ? "damage" : "normal", cfg_name[k],
                    (unsigned long)(cfg == CFG_HELD ? held : n));
    }
}

int main(void)
{
    port_require_counter();
    rt_set_entropy(NULL, NULL);                 /* linked, so the tool finds the entropy source's variable */
    rt_set_default_handler(wcet_handler, NULL); /* a call on a pointer that is no heap reports here */

    /* the trampoline and the routines of known length */
    uintptr_t r;
    uint32_t ex = wcet_excluded;
    uint32_t known = measure(wcet_known5, 0, 0, 0, &r);
    CHECK(known == 5u && wcet_excluded == ex, "the trampoline measures %lu for 5 instructions", (unsigned long)known);
    static unsigned char s1[64], s2[64];
    const any_fn fns[] = {(any_fn)memcpy, (any_fn)memmove, (any_fn)memset};
    for (size_t f = 0; f < 3; f++) {
        for (uintptr_t len = 0; len < 20; len += 7) {
            uint32_t before = wcet_excluded;
            uint32_t n = port_arch_elapsed(0, 0); /* (silences an unused-function warning) */
            (void)wcet_call(fns[f], (uintptr_t)(f == 1 ? s2 + 3 : s1), f == 2 ? 0x5Au : (uintptr_t)s2, len);
            n = port_arch_elapsed(wcet_t[0], wcet_t[1]) - 2u;
            CHECK(n == wcet_excluded - before, "routine %lu, %lu bytes: %lu instructions, %lu booked", (unsigned long)f,
                  (unsigned long)len, (unsigned long)n, (unsigned long)(wcet_excluded - before));
        }
    }
    uint32_t c1 = calibrate(), c2 = calibrate();
    CHECK(c1 == c2 && c1 >= 3u && mk_depth == 0u, "the counting hooks' calibration (%lu, %lu)", (unsigned long)c1,
          (unsigned long)c2);
    mk_wrap = c1 - 3u;

    port_printf("@META,port,%s\n", port_name());
    port_printf("@META,unit,%s\n", port_count_unit());
    port_printf("@META,heap_bytes,%u\n", (unsigned)HEAP_BYTES);
    port_printf("@META,trampoline,exact on a function of 5 instructions; copy routines exact\n");
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        run(&scenarios[i]);
    }
    port_printf("@END\n");
    return failures;
}
