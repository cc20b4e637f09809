/*
 * overflow.c -- the exhaustive overflow suite (issue 12 item 3; SPEC section 3, second paragraph):
 * an application writes one byte past the end, or before the start, of its own block, into
 * whatever lies there -- its neighbour's data or the allocator's metadata -- and then calls the
 * allocator. Every allocator of the registry, through its descriptor only (never by name).
 *
 * The sweep, per allocator:
 *   block size   1, min_block, 8, 12, 16, 24, 32, 48, 64, 96, 100, ... 3072, 4096 (two or three
 *                per power of two) and, for page allocators (page_size != 0), a page, a page + 1
 *                and two and a half pages -- about 22 sizes
 *   scenario     7 blocks of that size; X is the 4th by address, N its neighbour by address:
 *                after (the block above X; the bytes end+0 .. end+15, end = X + usable_size(X)) or
 *                before (the block below X; the bytes X-1 .. X-16), N used or N freed
 *   operation    driven after the corruption, each from a fresh copy of the same heap:
 *                  free(X), malloc(s)              free(N), malloc(s)                (N used)
 *                  free(X), free(N), malloc(uX+uN) free(N), free(X), malloc(uX+uN)   (N used)
 *                  malloc(s), malloc(s)            realloc(X, uX + s) (grow in place)
 *                  realloc(X, s/2), malloc(s)      memalign(max(64, 2 alignment), s), malloc(s)
 *                  nothing (only the final check)
 *                every one followed by stats and check (when nothing was reported before)
 *   byte value   the 8 single bit flips of the byte there, 0x00, 0xFF and two random bytes
 *                (xorshift64*, seeded per allocator/size/scenario/offset from --seed, printed);
 *                a value equal to the byte already there is no corruption (counted as "noop",
 *                not as a case); a byte outside the heap buffer is not the allocator's (counted
 *                as "outside", not as a case)
 * Full sweep: 16 allocators x ~22 sizes x 2 directions x 16 offsets x 12 values x (9 operations
 * with a used neighbour + 6 with a free one). On x86-64, seed 0: 1,971,792 cases (+78,768 values
 * equal to the byte already there), about 4 s of CPU in Release. Reduced sweeps (--stride):
 * ASan+UBSan stride 5: 394,352 cases (~20 s CPU, ~1.5 min on a busy 2-core machine, mostly
 * children ended by UBSan reports); RT_DEBUG=2 stride 2; TSan stride 13 (a caught fault costs
 * ~20 ms there); -m32 under qemu-i386 stride 11 (from ctest): 181,075 cases, ~1 min. The output
 * states the exact count of its run.

 * Each case restores the heap from a byte copy of the buffer taken after it was built (the same
 * buffer address, so the state is identical: every allocator keeps all of its state in its
 * buffer, STYLE rule 3; the handle must lie inside it or the allocator is reported and skipped),
 * writes the one byte, and runs the operation. A twin run of the same operation on the
 * uncorrupted copy gives the reference behaviour.
 *
 * PASS CRITERION of one case (all of):
 *   1. The allocator never faults and never hangs: cases run in batches in a forked child; a
 *      fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP) is caught and fails the case; a child that
 *      dies (a sanitizer's report, or a hang: more than 2 s of CPU time for the 192 cases of one
 *      operation, SIGVTALRM) fails the case it was on, and the next child starts after it.
 *   2. The guard zones (one page below and one page above the heap buffer, a fixed pattern) are
 *      intact, and every block returned lies inside the buffer (pages beyond the guards are
 *      PROT_NONE, so a wilder write faults: 1).
 *   3. Shadow model: no two live blocks overlap (a returned block overlapping a live one fails at
 *      once, before the test writes to it); every live block keeps its contents (the setup
 *      blocks compared with the copy, except the one corrupted byte; blocks returned during the
 *      case filled with a per-block pattern and verified); realloc keeps the common prefix.
 *   4. EITHER the corruption was reported through the handler (a recording handler installed
 *      with set_handler) and the call that reported it was refused -- malloc, realloc and
 *      memalign returned NULL (realloc's block intact: 3); free changed neither stats.frees nor
 *      stats.used_blocks -- the case then stops at that call ("reported");
 *      OR every operation returned exactly what it returned on the twin (same pointers, i.e.
 *      the same offsets from the buffer base, same NULLs) and then
 *        either stats are identical to the twin's and check() passes with no report
 *        ("harmless": the byte was not metadata, e.g. a used neighbour's payload, or metadata
 *        that no driven operation and no check depends on),
 *        or check() returns false or reports ("check": a latent corruption that none of the
 *        driven operations acted on, found by the integrity check).
 *   Anything else fails: an operation that behaved differently from the twin without a report
 *   ("silent"), stats that differ while check() passes ("silent stats"), a report whose call was
 *   not refused ("not refused"), 1-3 ("fault", "guard", "outside", "overlap", "content").
 *
 * --strict adds, per allocator, the cases whose byte lay outside every live block's usable
 * bytes ("owned": the allocator's -- its headers, free blocks, padding or control data; which of
 * those bytes are metadata cannot be known from outside, so nothing is guessed) and how they
 * ended (reported / check / harmless). It changes no verdict.
 *
 * Usage: overflow [--alloc NAME] [--stride K] [--seed S] [--show N] [--strict]
 *                 [--alloc NAME --case I]   (replay one case in-process, verbosely)
 *   --stride K   runs every K-th (size, direction, neighbour state, operation) combination, all
 *                offsets and all values of each: a reduced sweep that still covers every
 *                allocator, offset, value, operation and neighbour (K odd, not a multiple of 3:
 *                coprime to the 36 combinations of one size). Sanitizer and RT_DEBUG=2 builds
 *                default to a stride; ctest passes one under an emulator
 *   --show N     failures printed per allocator (default 3); the counts are always complete
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS */

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#include "rtalloc/registry.h"

/* Sanitizers and the library's own full walks make each case dearer: a default stride keeps
 * the run in ctest's time (still every allocator, offset and value). */
#if defined(__SANITIZE_THREAD__)
#define OVF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OVF_TSAN 1
#endif
#endif
#ifndef OVF_TSAN
#define OVF_TSAN 0
#endif
#if OVF_TSAN
#define OVF_DEFAULT_STRIDE 13u /* TSan's signal path costs ~20 ms per caught fault */
#elif TL_ASAN
#define OVF_DEFAULT_STRIDE 5u
#elif RT_DEBUG >= 2
#define OVF_DEFAULT_STRIDE 2u
#else
#define OVF_DEFAULT_STRIDE 1u
#endif

#define NBLOCKS 7u         /* setup blocks; X is the 4th by address */
#define XI 3u              /* index of X among them sorted by address */
#define NOFF 16u           /* offsets 1..16 */
#define NVAL 12u           /* 8 bit flips, 0x00, 0xFF, 2 random */
#define MAXSIZES 40u
#define MAXLIVE 16u
#define HMIN ((size_t)16 << 10)
#define HMAX ((size_t)512 << 10)
#define HANG_S 2           /* CPU seconds for the 192 cases of one operation: more is a hang */
#define MAX_ALLOCS 64u

/* --- operations ----------------------------------------------------------------------------- */

typedef enum { ST_NONE, ST_FREE_X, ST_FREE_N, ST_MALLOC, ST_REALLOC_X, ST_MEMALIGN } step_kind_t;
typedef enum { SZ_S, SZ_SUM, SZ_GROW, SZ_HALF } size_kind_t;

typedef struct step {
    step_kind_t kind;
    size_kind_t size;
} step_t;

typedef struct op {
    const char *name;
    bool needs_used_n;
    step_t steps[3];
} op_t;

static const op_t ops[] = {
    {"free(X) malloc(s)", false, {{ST_FREE_X, SZ_S}, {ST_MALLOC, SZ_S}, {ST_NONE, SZ_S}}},
    {"free(N) malloc(s)", true, {{ST_FREE_N, SZ_S}, {ST_MALLOC, SZ_S}, {ST_NONE, SZ_S}}},
    {"free(X) free(N) malloc(uX+uN)", true, {{ST_FREE_X, SZ_S}, {ST_FREE_N, SZ_S}, {ST_MALLOC, SZ_SUM}}},
    {"free(N) free(X) malloc(uX+uN)", true, {{ST_FREE_N, SZ_S}, {ST_FREE_X, SZ_S}, {ST_MALLOC, SZ_SUM}}},
    {"malloc(s) malloc(s)", false, {{ST_MALLOC, SZ_S}, {ST_MALLOC, SZ_S}, {ST_NONE, SZ_S}}},
    {"realloc(X, uX+s)", false, {{ST_REALLOC_X, SZ_GROW}, {ST_NONE, SZ_S}, {ST_NONE, SZ_S}}},
    {"realloc(X, s/2) malloc(s)", false, {{ST_REALLOC_X, SZ_HALF}, {ST_MALLOC, SZ_S}, {ST_NONE, SZ_S}}},
    {"memalign(A, s) malloc(s)", false, {{ST_MEMALIGN, SZ_S}, {ST_MALLOC, SZ_S}, {ST_NONE, SZ_S}}},
    {"check", false, {{ST_NONE, SZ_S}, {ST_NONE, SZ_S}, {ST_NONE, SZ_S}}},
};
#define NOPS ((unsigned)(sizeof ops / sizeof ops[0]))

/* --- outcomes and failure kinds ------------------------------------------------------------- */

typedef enum { OUT_NOOP, OUT_OUTSIDE, OUT_REPORTED, OUT_CHECK, OUT_HARMLESS, OUT_FAIL } outcome_t;

typedef enum {
    FK_FAULT,
    FK_GUARD,
    FK_OUTSIDE,
    FK_OVERLAP,
    FK_CONTENT,
    FK_NOT_REFUSED,
    FK_SILENT,
    FK_SILENT_STATS,
    FK_SANITIZER,
    FK_HANG,
    FK_COUNT
} fail_kind_t;

static const char *const fk_names[FK_COUNT] = {"fault", "guard", "outside", "overlap", "content",
                                               "not refused", "silent", "silent stats",
                                               "sanitizer", "hang"};

typedef struct counts {
    uint64_t cases, reported, check, harmless, failed, noop, outside;
    uint64_t owned, owned_reported, owned_check, owned_harmless;
    uint64_t fk[FK_COUNT];
    uint64_t shown; /* failure messages printed */
    double seconds;
} counts_t;

/* Shared with the forked children (MAP_SHARED). */
typedef struct shared {
    volatile uint64_t current; /* case index being run */
    volatile int done;
    volatile unsigned cur_orig, cur_value;
    counts_t c[MAX_ALLOCS];
    uint64_t setup_failures;
} shared_t;

/* --- globals of the run ---------------------------------------------------------------------- */

static shared_t *sh;
static unsigned char *mem;       /* heap buffer (HMAX bytes reserved) */
static unsigned char *snap;      /* copy of the built heap */
static unsigned char *guard_ref; /* the guard pattern */
static uint64_t g_seed;
static unsigned g_stride = OVF_DEFAULT_STRIDE;
static unsigned g_show = 3;
static bool g_strict;
static tl_recorder_t rec;
static int san_fd = -1; /* the children's stderr: sanitizer reports, summarised by the parent */

/* --- size list --------------------------------------------------------------------------------- */

static unsigned sizes_for(const rt_allocator_t *d, size_t *out)
{
    static const size_t base[] = {1, 8, 12, 16, 24, 32, 48, 64, 96, 100, 128, 192, 256, 384, 512, 768, 1000,
                                  1024, 1536, 2048, 3072, 4096};
    size_t v[MAXSIZES];
    unsigned n = 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        v[n++] = base[i];
    }
    v[n++] = d->min_block;
    if (d->page_size != 0u) {
        v[n++] = d->page_size;
        v[n++] = d->page_size + 1u;
        v[n++] = 2u * d->page_size + d->page_size / 2u;
    }
    /* sort, dedupe */
    for (unsigned i = 1; i < n; i++) {
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            size_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        if (v[i] != 0u && (m == 0u || out[m - 1] != v[i])) {
            out[m++] = v[i];
        }
    }
    return m;
}

static size_t pow2_at_least(size_t x)
{
    size_t p = 1;
    while (p < x) {
        p <<= 1;
    }
    return p;
}

/* --- the scenario: a heap built once, copied for every case ------------------------------------ */

typedef struct scen {
    const rt_allocator_t *d;
    unsigned ai, si, dir, state; /* dir 0: after X's end, 1: before X's start; state 0 used, 1 free */
    size_t s, H;
    void *h;
    unsigned char *blk[NBLOCKS]; /* sorted by address */
    size_t use[NBLOCKS];
    unsigned char *X, *N;
    size_t uX, uN;
    bool valid;
} scen_t;

typedef struct run {
    void *res[3];       /* what each step returned (free: NULL) */
    bool ran[3];
    rt_stats_t st;
    bool have_stats;
    bool check_ok;
    bool check_ran;
    bool reported;      /* during a step (or stats before a free) */
    unsigned reported_step;
    bool check_reported;
    fail_kind_t fk;
    bool failed;
    char why[200];
} run_t;

/* The scenario and its twins, read-only while cases run (a wild write into them faults). */
typedef struct frozen {
    scen_t sc;
    run_t twin[NOPS];
    bool twin_ok[NOPS];
} frozen_t;
static frozen_t *fz;
static size_t pagesz;

static size_t frozen_bytes(void) { return (sizeof(frozen_t) + pagesz - 1u) & ~(pagesz - 1u); }
#define SC (fz->sc)

/* The guard pattern around [mem, mem + H); the pages beyond the upper guard are PROT_NONE. */
static void guards_set(size_t H)
{
    (void)mprotect(mem, HMAX + pagesz, PROT_READ | PROT_WRITE);
    memcpy(mem - pagesz, guard_ref, pagesz);
    memcpy(mem + H, guard_ref, pagesz);
    size_t top = H + pagesz;
    top = (top + pagesz - 1u) & ~(pagesz - 1u);
    if (top < HMAX + pagesz) {
        (void)mprotect(mem + top, HMAX + pagesz - top, PROT_NONE);
    }
}

/* True if a guard byte changed; *where: its offset from the buffer (negative below it) or from
 * the end of the buffer. Restores the guards for the next case. */
static bool guards_changed(size_t H, long *where)
{
    bool bad = false;
    if (memcmp(mem - pagesz, guard_ref, pagesz) != 0) {
        for (size_t i = 0; i < pagesz && !bad; i++) {
            if (mem[(long)i - (long)pagesz] != guard_ref[i]) {
                *where = (long)i - (long)pagesz;
                bad = true;
            }
        }
        memcpy(mem - pagesz, guard_ref, pagesz);
    }
    if (memcmp(mem + H, guard_ref, pagesz) != 0) {
        for (size_t i = 0; i < pagesz && !bad; i++) {
            if (mem[H + i] != guard_ref[i]) {
                *where = (long)i;
                bad = true;
            }
        }
        memcpy(mem + H, guard_ref, pagesz);
    }
    return bad;
}

static bool setup_fail(const char *fmt, const char *a, size_t x)
{
    printf("SETUP FAIL ");
    printf(fmt, a, x);
    printf("\n");
    fflush(stdout);
    sh->setup_failures++;
    return false;
}

/* Builds the heap of scenario (ai, si, dir, state) and copies it to snap. */
static bool scen_build(const rt_allocator_t *d, unsigned ai, unsigned si, size_t s, unsigned dir, unsigned state)
{
    (void)mprotect(fz, frozen_bytes(), PROT_READ | PROT_WRITE);
    SC.valid = false;
    SC.d = d;
    SC.ai = ai;
    SC.si = si;
    SC.dir = dir;
    SC.state = state;
    SC.s = s;
    size_t need = 16u * pow2_at_least((s > d->min_block ? s : d->min_block) + 64u);
    size_t H = HMIN;
    while (H < need || (d->min_buffer != NULL && H < d->min_buffer())) {
        H <<= 1;
    }
    void *h = NULL;
    for (; H <= HMAX; H <<= 1) {
        guards_set(H);
        memset(mem, 0, H);
        h = d->create(mem, H);
        if (h != NULL) {
            break;
        }
    }
    if (h == NULL) {
        return setup_fail("%s: create failed over every size up to %zu", d->name, HMAX);
    }
    if ((unsigned char *)h < mem || (unsigned char *)h >= mem + H) {
        return setup_fail("%s: the handle lies outside its buffer (%zu): cases cannot restore a copy", d->name, H);
    }
    SC.H = H;
    SC.h = h;
    if (d->set_handler != NULL) {
        d->set_handler(h, tl_record, &rec);
    }
    tl_recorder_reset(&rec);
    unsigned char *b[NBLOCKS];
    for (unsigned i = 0; i < NBLOCKS; i++) {
        b[i] = d->malloc(h, s);
        if (b[i] == NULL) {
            return setup_fail("%s: setup malloc of size %zu failed", d->name, s);
        }
        size_t u = d->usable_size != NULL ? d->usable_size(h, b[i]) : s;
        if (u < s || b[i] < mem || b[i] + u > mem + H) {
            return setup_fail("%s: setup block of size %zu bad", d->name, s);
        }
        tl_fill(b[i], u, 1000u + i);
    }
    for (unsigned i = 1; i < NBLOCKS; i++) {
        for (unsigned j = i; j > 0 && b[j - 1] > b[j]; j--) {
            unsigned char *t = b[j];
            b[j] = b[j - 1];
            b[j - 1] = t;
        }
    }
    for (unsigned i = 0; i < NBLOCKS; i++) {
        SC.blk[i] = b[i];
        SC.use[i] = d->usable_size != NULL ? d->usable_size(h, b[i]) : s;
    }
    unsigned ni = dir == 0u ? XI + 1u : XI - 1u;
    SC.X = SC.blk[XI];
    SC.uX = SC.use[XI];
    SC.N = SC.blk[ni];
    SC.uN = SC.use[ni];
    if (state == 1u) {
        d->free(h, SC.N);
        SC.blk[ni] = NULL; /* no longer live */
    }
    if (rec.count != 0u || (d->check != NULL && !d->check(h))) {
        return setup_fail("%s: setup of size %zu reported or failed its check", d->name, s);
    }
    (void)mprotect(snap, HMAX, PROT_READ | PROT_WRITE);
    memcpy(snap, mem, H);
    (void)mprotect(snap, HMAX, PROT_READ); /* a wild write into the copy faults */
    SC.valid = true;
    return true;
}

/* --- one run of an operation (twin or corrupted) --------------------------------------------- */

typedef struct live {
    unsigned char *p;
    size_t n;
    uint64_t id;    /* pattern id, or 0: compare with the copy (a setup block) */
    unsigned char *orig; /* setup block: its address in the copy's frame */
} live_t;


typedef struct exec {
    live_t live[MAXLIVE];
    unsigned nlive;
    uint64_t next_id;
    unsigned char *target; /* the corrupted byte, or NULL */
    run_t *r;
} exec_t;

static TL_PRINTF(3, 4) void fail(run_t *r, fail_kind_t k, const char *fmt, ...)
{
    if (r->failed) {
        return;
    }
    /* RT_DEBUG >= 2: once the library's own walk after a call ("check") has reported the damage,
     * what that call returned is not judged (the walk reports in the middle of a call that the
     * O(1) checks let through; release builds judge it) -- faults, guards and overlaps still are */
    if (RT_DEBUG >= 2 && (k == FK_CONTENT || k == FK_NOT_REFUSED) && rec.count != 0u && rec.operation != NULL &&
        strcmp(rec.operation, "check") == 0) {
        r->reported = true;
        return;
    }
    r->failed = true;
    r->fk = k;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

static long rel(const void *p) { return p == NULL ? -1L : (long)((const unsigned char *)p - mem); }

static int find_live(exec_t *e, const unsigned char *p)
{
    for (unsigned i = 0; i < e->nlive; i++) {
        if (e->live[i].p == p) {
            return (int)i;
        }
    }
    return -1;
}

static void drop_live(exec_t *e, int i)
{
    e->live[i] = e->live[--e->nlive];
}

/* A block returned by a step lies inside the buffer and overlaps no live block (checked before
 * the test writes to it). */
static bool new_ok(exec_t *e, const unsigned char *p, size_t n, const char *what)
{
    if (p < mem || p > mem + SC.H || n > (size_t)(mem + SC.H - p)) {
        fail(e->r, FK_OUTSIDE, "%s returned %p+%zu, outside the buffer [+0, +%zu)", what, (const void *)p, n, SC.H);
        return false;
    }
    for (unsigned i = 0; i < e->nlive; i++) {
        const live_t *l = &e->live[i];
        if (p < l->p + l->n && l->p < p + n) {
            fail(e->r, FK_OVERLAP, "%s returned +%ld..+%ld, overlapping live block +%ld..+%ld", what, rel(p),
                 rel(p) + (long)n, rel(l->p), rel(l->p) + (long)l->n);
            return false;
        }
    }
    return e->nlive < MAXLIVE;
}

/* Joins the shadow with a fresh pattern. */
static void add_live(exec_t *e, unsigned char *p, size_t n)
{
    live_t *l = &e->live[e->nlive++];
    l->p = p;
    l->n = n;
    l->id = e->next_id++;
    l->orig = NULL;
    tl_fill(p, n, l->id);
}

/* Offset of the first changed byte of a live block (skipping the corrupted one), or n. */
static size_t live_changed(const exec_t *e, const live_t *l, size_t n)
{
    if (l->id != 0u) {
        return tl_verify(l->p, n, l->id);
    }
    const unsigned char *ref = snap + (l->orig - mem);
    if (memcmp(l->p, ref, n) == 0) {
        return n;
    }
    for (size_t j = 0; j < n; j++) {
        if (l->p[j] != ref[j] && l->orig + j != e->target) {
            return j;
        }
    }
    return n;
}

static bool verify_all(exec_t *e)
{
    for (unsigned i = 0; i < e->nlive; i++) {
        live_t *l = &e->live[i];
        size_t bad = live_changed(e, l, l->n);
        if (bad != l->n) {
            fail(e->r, FK_CONTENT, "live block +%ld (%zu bytes) changed at +%zu", rel(l->p), l->n, bad);
            return false;
        }
        for (unsigned j = i + 1u; j < e->nlive; j++) {
            live_t *m = &e->live[j];
            if (l->p < m->p + m->n && m->p < l->p + l->n) {
                fail(e->r, FK_OVERLAP, "live blocks +%ld and +%ld overlap", rel(l->p), rel(m->p));
                return false;
            }
        }
    }
    return true;
}

static size_t step_bytes(size_kind_t k)
{
    switch (k) {
    case SZ_S: return SC.s;
    case SZ_SUM: return SC.uX + SC.uN;
    case SZ_GROW: return SC.uX + SC.s;
    case SZ_HALF: return SC.s / 2u != 0u ? SC.s / 2u : 1u;
    }
    return SC.s;
}

static size_t memalign_alignment(const rt_allocator_t *d)
{
    size_t a = 2u * d->alignment;
    return a > 64u ? a : 64u;
}

/* Runs operation o on the heap now in mem (restored by the caller). */
static void run_op(unsigned o, unsigned char *target, run_t *r)
{
    const rt_allocator_t *d = SC.d;
    void *h = SC.h;
    memset(r, 0, sizeof *r);
    exec_t e;
    memset(&e, 0, sizeof e);
    e.r = r;
    e.target = target;
    e.next_id = 1;
    for (unsigned i = 0; i < NBLOCKS; i++) {
        if (SC.blk[i] != NULL) {
            live_t *l = &e.live[e.nlive++];
            l->p = SC.blk[i];
            l->n = SC.use[i];
            l->id = 0;
            l->orig = SC.blk[i];
        }
    }
    unsigned char *x = SC.X;
    for (unsigned k = 0; k < 3u && !r->failed; k++) {
        const step_t *st = &ops[o].steps[k];
        if (st->kind == ST_NONE) {
            break;
        }
        size_t n = step_bytes(st->size);
        rt_stats_t before;
        memset(&before, 0, sizeof before);
        void *res = NULL;
        const char *what = "?";
        r->ran[k] = true;
        switch (st->kind) {
        case ST_FREE_X:
        case ST_FREE_N: {
            unsigned char *p = st->kind == ST_FREE_X ? x : SC.N;
            what = st->kind == ST_FREE_X ? "free(X)" : "free(N)";
            if (d->stats != NULL) {
                d->stats(h, &before);
            }
            if (rec.count != 0u) {
                r->reported = true;
                r->reported_step = k;
                return; /* stats found it; nothing was changed */
            }
            d->free(h, p);
            if (rec.count != 0u) {
                rt_stats_t after;
                d->stats(h, &after);
                if (after.frees != before.frees || after.used_blocks != before.used_blocks) {
                    fail(r, FK_NOT_REFUSED, "%s reported %s but was not refused: frees %" PRIu64 " -> %" PRIu64
                                            ", used blocks %zu -> %zu",
                         what, tl_kind_name(rec.last), before.frees, after.frees, before.used_blocks,
                         after.used_blocks);
                }
            } else {
                int i = find_live(&e, p);
                if (i >= 0) {
                    drop_live(&e, i);
                }
            }
            break;
        }
        case ST_MALLOC:
            what = "malloc";
            res = d->malloc(h, n);
            break;
        case ST_MEMALIGN:
            what = "memalign";
            res = d->memalign != NULL ? d->memalign(h, memalign_alignment(d), n) : d->malloc(h, n);
            break;
        case ST_REALLOC_X: {
            what = "realloc(X)";
            res = d->realloc != NULL ? d->realloc(h, x, n) : NULL;
            if (res != NULL && rec.count == 0u) {
                int i = find_live(&e, x);
                live_t old = e.live[i];
                drop_live(&e, i);
                if (new_ok(&e, res, n, what)) {
                    /* the common prefix survives the move (or the resize in place) */
                    size_t keep = old.n < n ? old.n : n;
                    live_t moved = old;
                    moved.p = res;
                    size_t bad = live_changed(&e, &moved, keep);
                    if (bad != keep) {
                        fail(r, FK_CONTENT, "realloc(X) to %zu lost byte %zu of the %zu kept", n, bad, keep);
                    } else {
                        add_live(&e, res, n);
                    }
                }
                x = res;
                r->res[k] = res;
                res = NULL;
            }
            break;
        }
        case ST_NONE: break;
        }
        if (rec.count != 0u) {
            r->reported = true;
            r->reported_step = k;
            /* RT_DEBUG >= 2: the library's full walk after a call that succeeded reports damage
             * the call itself never touched ("check"): reported, but nothing to refuse */
            bool by_walk = RT_DEBUG >= 2 && rec.operation != NULL && strcmp(rec.operation, "check") == 0;
            if (!by_walk && (res != NULL || r->res[k] != NULL)) {
                fail(r, FK_NOT_REFUSED, "%s reported %s but returned +%ld", what, tl_kind_name(rec.last),
                     rel(res != NULL ? res : r->res[k]));
            }
            break;
        }
        if (res != NULL) {
            r->res[k] = res;
            if (new_ok(&e, res, n, what)) {
                add_live(&e, res, n);
            }
        }
    }
    if (!r->reported && !r->failed) {
        if (d->stats != NULL) {
            d->stats(h, &r->st);
            r->have_stats = true;
        }
        if (rec.count == 0u) {
            r->check_ran = true;
            r->check_ok = d->check == NULL || d->check(h);
            r->check_reported = rec.count != 0u;
        } else {
            r->check_reported = true; /* stats found it */
        }
    }
    long g = 0;
    if (guards_changed(SC.H, &g)) {
        fail(r, FK_GUARD, "the guard zone %s the buffer changed at %s%+ld", g < 0 ? "below" : "above",
             g < 0 ? "start" : "end", g);
    }
    (void)verify_all(&e);
}

/* --- cases ------------------------------------------------------------------------------------- */


static unsigned char value_of(unsigned vi, unsigned char orig, const unsigned char rnd[2])
{
    if (vi < 8u) {
        return (unsigned char)(orig ^ (1u << vi));
    }
    if (vi == 8u) {
        return 0x00;
    }
    if (vi == 9u) {
        return 0xFF;
    }
    return rnd[vi - 10u];
}

static void randoms(unsigned ai, unsigned si, unsigned dir, unsigned state, unsigned k, unsigned char rnd[2])
{
    tl_rng_t r = tl_rng_seed(g_seed ^ ((uint64_t)ai << 40) ^ ((uint64_t)si << 24) ^ ((uint64_t)dir << 20) ^
                             ((uint64_t)state << 18) ^ ((uint64_t)k << 8));
    for (unsigned i = 0; i < 2u; i++) {
        unsigned char v;
        do {
            v = (unsigned char)(tl_next(&r) >> 56);
        } while (v == 0x00 || v == 0xFF || (i == 1u && v == rnd[0]));
        rnd[i] = v;
    }
}

static unsigned char *target_of(unsigned k)
{
    return SC.dir == 0u ? SC.X + SC.uX + k : SC.X - 1 - (ptrdiff_t)k;
}

static void describe(char *buf, size_t n, const rt_allocator_t *d, uint64_t idx, unsigned si, size_t s,
                     unsigned dir, unsigned state, unsigned o, unsigned k, unsigned orig, unsigned value, unsigned vi)
{
    char v[24];
    if (vi < 8u) {
        snprintf(v, sizeof v, "bit %u", vi);
    } else {
        snprintf(v, sizeof v, "%s", vi == 8u ? "0x00" : vi == 9u ? "0xFF" : "random");
    }
    (void)si;
    snprintf(buf, n, "%s case %" PRIu64 ": size %zu, %s neighbour %s, byte %s%u = 0x%02x (was 0x%02x, %s), %s",
             d->name, idx, s, state == 0u ? "used" : "free", dir == 0u ? "after" : "before",
             dir == 0u ? "end+" : "start-", dir == 0u ? k : k + 1u, value, orig, v, ops[o].name);
}

static bool results_equal(const run_t *a, const run_t *b, char *why, size_t n)
{
    for (unsigned k = 0; k < 3u; k++) {
        if (a->ran[k] != b->ran[k] || a->res[k] != b->res[k]) {
            snprintf(why, n, "step %u returned %+ld, on the twin %+ld", k + 1u, rel(a->res[k]), rel(b->res[k]));
            return false;
        }
    }
    return true;
}

static bool stats_equal(const rt_stats_t *a, const rt_stats_t *b, char *why, size_t n)
{
    if (memcmp(a, b, sizeof *a) == 0) {
        return true;
    }
    snprintf(why, n, "stats differ: used %zu/%zu blocks %zu/%zu, free %zu/%zu, largest %zu/%zu, frees %" PRIu64
                     "/%" PRIu64,
             a->used_bytes, b->used_bytes, a->used_blocks, b->used_blocks, a->free_blocks, b->free_blocks,
             a->largest_free, b->largest_free, a->frees, b->frees);
    return false;
}

static run_t last_run; /* for the replay */

/* Sanitizer builds: the size of the child's stderr, which grows when UBSan reports (UBSan reports
 * each source location once per process: a later case at the same place is judged by the rest
 * of the criterion only). Elsewhere a constant, to spare a system call per case. */
static off_t stderr_size(void)
{
#if TL_ASAN
    struct stat st;
    if (san_fd >= 0 && fstat(STDERR_FILENO, &st) == 0) {
        return st.st_size;
    }
#endif
    return 0;
}

/* A fault in the allocator's code (or in the test's, reading what the allocator returned) jumps
 * back here: the case fails, the next one restores the heap from the copy. Cheaper than a new
 * child per fault (a fork costs milliseconds in VMs); what kills the process anyway -- a
 * sanitizer's report, a hang, a fault with the handler unavailable -- still ends
 * the child, and the parent fails the case and starts the next child after it. */
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
    if (fault_armed != 0) {
        fault_armed = 0;
        fault_sig = sig;
        siglongjmp(fault_jmp, 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static bool run_guarded(unsigned o, unsigned char *t, run_t *r)
{
    if (sigsetjmp(fault_jmp, 0) != 0) { /* SA_NODEFER: no mask to restore */
        long g = 0;
        (void)guards_changed(SC.H, &g); /* restores them */
        return false;
    }
    fault_armed = 1;
    run_op(o, t, r);
    fault_armed = 0;
    return true;
}

/* Runs case (o, k, vi) of the current scenario; returns its outcome and, on failure, why. */
static outcome_t run_case(unsigned o, unsigned k, unsigned vi, bool *owned, char *why, size_t wn,
                          fail_kind_t *fk)
{
    unsigned char *t = target_of(k);
    if (t < mem || t >= mem + SC.H) {
        return OUT_OUTSIDE;
    }
    unsigned char rnd[2];
    randoms(SC.ai, SC.si, SC.dir, SC.state, k, rnd);
    unsigned char orig = snap[t - mem];
    unsigned char v = value_of(vi, orig, rnd);
    if (v == orig) {
        return OUT_NOOP;
    }
    sh->cur_orig = orig;
    sh->cur_value = v;
    *owned = true;
    for (unsigned i = 0; i < NBLOCKS; i++) {
        if (SC.blk[i] != NULL && t >= SC.blk[i] && t < SC.blk[i] + SC.use[i]) {
            *owned = false;
        }
    }
    memcpy(mem, snap, SC.H);
    tl_recorder_reset(&rec);
    *t = v;
    run_t r;
    off_t said = stderr_size();
    if (!run_guarded(o, t, &r)) {
        *fk = FK_FAULT;
        snprintf(why, wn, "fault: signal %d (%s) in the case", (int)fault_sig, strsignal((int)fault_sig));
        return OUT_FAIL;
    }
    last_run = r;
    if (stderr_size() != said && !r.failed) {
        *fk = FK_SANITIZER;
        snprintf(why, wn, "a sanitizer reported during the case (its report is summarised below)");
        return OUT_FAIL;
    }
    if (r.failed) {
        *fk = r.fk;
        snprintf(why, wn, "%s", r.why);
        return OUT_FAIL;
    }
    if (r.reported) {
        return OUT_REPORTED;
    }
    const run_t *tw = &fz->twin[o];
    if (!results_equal(&r, tw, why, wn)) {
        *fk = FK_SILENT;
        return OUT_FAIL;
    }
    if (r.check_reported || !r.check_ok) {
        return OUT_CHECK;
    }
    if (r.have_stats && !stats_equal(&r.st, &tw->st, why, wn)) {
        *fk = FK_SILENT_STATS;
        return OUT_FAIL;
    }
    return OUT_HARMLESS;
}

/* A case that loops (a corrupted list walked forever) is a hang: the child's CPU time (not the
 * wall clock, so a busy machine does not count) is limited per operation; SIGVTALRM ends it. */
static void arm_hang_timer(long seconds)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = seconds;
    (void)setitimer(ITIMER_VIRTUAL, &it, NULL);
}

/* --- enumeration --------------------------------------------------------------------------------
 * Index = ((((si * 2 + dir) * 2 + state) * NOPS + o) * NOFF + k) * NVAL + vi, independent of the
 * stride (a replay names the same case at every stride). */

static uint64_t combo_of(unsigned si, unsigned dir, unsigned state, unsigned o)
{
    return (((uint64_t)si * 2u + dir) * 2u + state) * NOPS + o;
}

static bool combo_selected(const rt_allocator_t *d, unsigned state, unsigned o, uint64_t combo)
{
    (void)d;
    if (state == 1u && ops[o].needs_used_n) {
        return false;
    }
    return combo % g_stride == 0u;
}

static void count(counts_t *c, outcome_t out, bool owned, fail_kind_t fk)
{
    switch (out) {
    case OUT_NOOP: c->noop++; return;
    case OUT_OUTSIDE: c->outside++; return;
    case OUT_REPORTED: c->reported++; break;
    case OUT_CHECK: c->check++; break;
    case OUT_HARMLESS: c->harmless++; break;
    case OUT_FAIL:
        c->failed++;
        c->fk[fk]++;
        break;
    }
    c->cases++;
    if (owned) {
        c->owned++;
        c->owned_reported += out == OUT_REPORTED ? 1u : 0u;
        c->owned_check += out == OUT_CHECK ? 1u : 0u;
        c->owned_harmless += out == OUT_HARMLESS ? 1u : 0u;
    }
}

static void print_run(const char *name, unsigned o, const run_t *r)
{
    printf("      %-5s", name);
    for (unsigned k = 0; k < 3u && ops[o].steps[k].kind != ST_NONE; k++) {
        printf(" step %u %s %+ld;", k + 1u, r->ran[k] ? "->" : "not run", rel(r->res[k]));
    }
    printf(" reported %s, check %s%s, used %zu bytes in %zu blocks, %zu free blocks, frees %" PRIu64 "%s%s\n",
           r->reported ? "yes" : "no", r->check_ran ? (r->check_ok ? "passed" : "FAILED") : "not run",
           r->check_reported ? " (reported)" : "", r->st.used_bytes, r->st.used_blocks, r->st.free_blocks, r->st.frees,
           r->failed ? ": " : "", r->failed ? r->why : "");
}

static void replay_hint(const rt_allocator_t *d, uint64_t idx)
{
    printf("      replay: overflow --alloc %s --case %" PRIu64 " --seed %" PRIu64 "\n", d->name, idx, g_seed);
}

/* Twin of every operation of the current scenario (uncorrupted). */
static bool twins_build(void)
{
    for (unsigned o = 0; o < NOPS; o++) {
        fz->twin_ok[o] = false;
        if (SC.state == 1u && ops[o].needs_used_n) {
            continue;
        }
        memcpy(mem, snap, SC.H);
        tl_recorder_reset(&rec);
        run_op(o, NULL, &fz->twin[o]);
        if (fz->twin[o].failed || fz->twin[o].reported || !fz->twin[o].check_ok) {
            printf("SETUP FAIL %s: size %zu, %s neighbour %s: the uncorrupted twin of %s: %s%s%s\n", SC.d->name,
                   SC.s, SC.state == 0u ? "used" : "free", SC.dir == 0u ? "after" : "before", ops[o].name,
                   fz->twin[o].failed ? fz->twin[o].why : "", fz->twin[o].reported ? "reported" : "",
                   !fz->twin[o].check_ok ? " check failed" : "");
            sh->setup_failures++;
            continue;
        }
        fz->twin_ok[o] = true;
    }
    return true;
}

/* Runs the cases of allocator ai from index `start` (in the child); `only`: just that one. */
static void run_from(unsigned ai, const rt_allocator_t *d, uint64_t start, bool only)
{
    size_t sizes[MAXSIZES];
    unsigned ns = sizes_for(d, sizes);
    counts_t *c = &sh->c[ai];
    for (unsigned si = 0; si < ns; si++) {
        for (unsigned dir = 0; dir < 2u; dir++) {
            for (unsigned state = 0; state < 2u; state++) {
                bool built = false;
                for (unsigned o = 0; o < NOPS; o++) {
                    uint64_t combo = combo_of(si, dir, state, o);
                    uint64_t first = combo * NOFF * NVAL, last = first + NOFF * NVAL - 1u;
                    if (last < start || !combo_selected(d, state, o, combo)) {
                        continue;
                    }
                    if (only && first > start) {
                        return;
                    }
                    if (!built) {
                        built = true;
                        if (!scen_build(d, ai, si, sizes[si], dir, state) || !twins_build()) {
                            SC.valid = false;
                        }
                    }
                    if (!SC.valid || !fz->twin_ok[o]) {
                        continue;
                    }
                    if (!only) {
                        arm_hang_timer(HANG_S); /* per operation: 192 cases, milliseconds */
                    }
                    for (unsigned k = 0; k < NOFF; k++) {
                        for (unsigned vi = 0; vi < NVAL; vi++) {
                            uint64_t idx = first + (uint64_t)k * NVAL + vi;
                            if (idx < start || (only && idx != start)) {
                                continue;
                            }
                            sh->current = idx;
                            sh->cur_orig = sh->cur_value = 0;
                            bool owned = false;
                            char why[240] = "";
                            fail_kind_t fk = FK_FAULT;
                            outcome_t out = run_case(o, k, vi, &owned, why, sizeof why, &fk);
                            count(c, out, owned, fk);
                            if (only || (out == OUT_FAIL && c->shown < g_show)) {
                                c->shown += out == OUT_FAIL ? 1u : 0u;
                                char desc[240];
                                describe(desc, sizeof desc, d, idx, si, sizes[si], dir, state, o, k,
                                         sh->cur_orig, sh->cur_value, vi);
                                static const char *const outs[] = {"noop", "outside", "reported", "check",
                                                                   "harmless", "FAIL"};
                                printf("%s %s\n      %s%s%s\n", out == OUT_FAIL ? "FAIL" : "case", desc,
                                       outs[out], out == OUT_FAIL ? ": " : "", out == OUT_FAIL ? why : "");
                                if (out == OUT_FAIL) {
                                    printf("      (%s)\n", fk_names[fk]);
                                    replay_hint(d, idx);
                                }
                                fflush(stdout);
                            }
                            if (only) {
                                print_run("twin", o, &fz->twin[o]);
                                print_run("case", o, &last_run);
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
    arm_hang_timer(0);
}

/* Decodes a case index (for a child that died on it). */
static void describe_index(char *buf, size_t n, unsigned ai, const rt_allocator_t *d, uint64_t idx)
{
    size_t sizes[MAXSIZES];
    (void)sizes_for(d, sizes);
    unsigned vi = (unsigned)(idx % NVAL);
    unsigned k = (unsigned)(idx / NVAL % NOFF);
    uint64_t combo = idx / NVAL / NOFF;
    unsigned o = (unsigned)(combo % NOPS);
    unsigned state = (unsigned)(combo / NOPS % 2u);
    unsigned dir = (unsigned)(combo / NOPS / 2u % 2u);
    unsigned si = (unsigned)(combo / NOPS / 4u);
    (void)ai;
    describe(buf, n, d, idx, si, sizes[si], dir, state, o, k, sh->cur_orig, sh->cur_value, vi);
}

static void child_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};
    static unsigned char altstack[1u << 16];
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    (void)sigaltstack(&ss, NULL);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fault;
        sa.sa_flags = SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        (void)sigaction(sigs[i], &sa, NULL);
    }
    signal(SIGABRT, SIG_DFL);
    signal(SIGVTALRM, SIG_DFL);
    struct rlimit no_core = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &no_core);
}

/* The first report line (a sanitizer's) the children wrote to stderr since *seen, or "". */
static void stderr_report(FILE *err, long *seen, char *out, size_t n)
{
    out[0] = '\0';
    if (err == NULL || fseek(err, *seen, SEEK_SET) != 0) {
        return;
    }
    char line[400];
    while (fgets(line, sizeof line, err) != NULL) {
        if (out[0] == '\0' && (strstr(line, "runtime error") != NULL || strstr(line, "ERROR:") != NULL)) {
            snprintf(out, n, "%s", line);
        }
    }
    *seen = ftell(err);
}

/* Runs all cases of allocator ai, restarting a child after every case that killed one. */
static void run_allocator(unsigned ai, const rt_allocator_t *d, FILE *err)
{
    counts_t *c = &sh->c[ai];
    uint64_t start = 0;
    long seen = 0;
    for (;;) {
        sh->done = 0;
        sh->current = start;
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            exit(2);
        }
        if (pid == 0) {
            if (san_fd >= 0) {
                (void)dup2(san_fd, STDERR_FILENO);
            }
            child_signals();
            run_from(ai, d, start, false);
            fflush(stdout);
            sh->done = 1;
            _exit(0);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->done) {
            return;
        }
        uint64_t idx = sh->current;
        char said[400];
        stderr_report(err, &seen, said, sizeof said);
        bool hang = WIFSIGNALED(status) && WTERMSIG(status) == SIGVTALRM;
        c->cases++;
        c->failed++;
        c->fk[hang ? FK_HANG : FK_FAULT]++;
        if (c->shown < g_show) {
            c->shown++;
            char desc[240];
            describe_index(desc, sizeof desc, ai, d, idx);
            if (WIFSIGNALED(status)) {
                printf("FAIL %s\n      fault: the case died by signal %d (%s)\n", desc, WTERMSIG(status),
                       WTERMSIG(status) == SIGVTALRM ? "hang: over its CPU time limit" : strsignal(WTERMSIG(status)));
            } else {
                printf("FAIL %s\n      fault: the case ended the process (exit %d)\n", desc,
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            }
            if (said[0] != '\0') {
                printf("      stderr: %s", said);
            }
            replay_hint(d, idx);
            fflush(stdout);
        }
        start = idx + 1u;
    }
}

#if TL_ASAN
/* The project builds UBSan with -fno-sanitize-recover, so a report ends its child (the parent
 * fails that case and prints the report's first line); UBSAN_OPTIONS=print_stacktrace=1 (test.sh)
 * would symbolise a stack per report, a second each. The suite re-executes itself once with
 * print_stacktrace=0 (every other option as given). */
static void ubsan_no_stacks(char **argv)
{
    if (getenv("OVERFLOW_REEXEC") != NULL) {
        return;
    }
    const char *old = getenv("UBSAN_OPTIONS");
    char opts[1024];
    snprintf(opts, sizeof opts, "%s%sprint_stacktrace=0", old != NULL ? old : "",
             old != NULL && *old != '\0' ? ":" : "");
    if (setenv("UBSAN_OPTIONS", opts, 1) == 0 && setenv("OVERFLOW_REEXEC", "1", 1) == 0) {
        fflush(stdout);
        execv("/proc/self/exe", argv);
    }
    /* no re-execution: only slower */
}
#endif

/* --- main ---------------------------------------------------------------------------------------- */

/* An address inside every runtime's application memory: ASan's high memory below its allocator's
 * space (0x600000000000), TSan's low application range, a 32-bit process's (qemu-i386's) middle. */
static void *fixed_address(void)
{
#if UINTPTR_MAX > 0xFFFFFFFFu
#if OVF_TSAN
    return (void *)(uintptr_t)0x7000000000u;
#else
    return (void *)(uintptr_t)0x500000000000u;
#endif
#else
    return (void *)(uintptr_t)0x50000000u;
#endif
}

static bool map_buffers(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    pagesz = ps > 0 ? (size_t)ps : 4096u;
    /* [PROT_NONE page][guard page][heap HMAX][guard page][PROT_NONE page] */
    size_t total = HMAX + 4u * pagesz;
    /* At a fixed address where the kernel grants it: the allocators keep absolute pointers in their
     * buffers, so the bytes a case flips, and with them the case, depend on the buffer's address;
     * at the same address every run (and a replay) is the same. */
    unsigned char *region = mmap(fixed_address(), total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region != MAP_FAILED && (void *)region != fixed_address()) {
        printf("overflow: the buffer is not at its usual address (%p, not %p): the cases' bytes depend on it, a "
               "replay may differ\n", (void *)region, fixed_address());
    }
    void *copy = mmap(NULL, HMAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *frozen = mmap(NULL, frozen_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *shared = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    guard_ref = malloc(pagesz);
    if (region == MAP_FAILED || copy == MAP_FAILED || frozen == MAP_FAILED || shared == MAP_FAILED || guard_ref == NULL) {
        printf("overflow: cannot map the buffers\n");
        return false;
    }
    (void)mprotect(region, pagesz, PROT_NONE);
    (void)mprotect(region + total - pagesz, pagesz, PROT_NONE);
    mem = region + 2u * pagesz;
    snap = copy;
    fz = frozen;
    sh = shared;
    memset(sh, 0, sizeof *sh);
    tl_fill(guard_ref, pagesz, 0x6A55u);
    return true;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    printf("usage: overflow [--alloc NAME] [--stride K] [--seed S] [--show N] [--strict] [--case I]\n"
           "  K: odd and not a multiple of 3 (coprime to the 36 neighbour-operation combinations per size)\n");
}

/* The command line (usage()); false on anything it does not know. */
static bool parse_args(int argc, char **argv, const char **only_alloc, uint64_t *only_case, bool *replay)
{
    for (int i = 1; i < argc; i++) {
        uint64_t v = 0;
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--strict") == 0) {
            g_strict = true;
        } else if (strcmp(a, "--alloc") == 0 && next != NULL) {
            *only_alloc = next;
            i++;
        } else if (strcmp(a, "--stride") == 0 && tl_parse_u64(next, &v) && v >= 1u && v < 1000u &&
                   v % 2u != 0u && v % 3u != 0u) {
            g_stride = (unsigned)v;
            i++;
        } else if (strcmp(a, "--seed") == 0 && tl_parse_u64(next, &v)) {
            g_seed = v;
            i++;
        } else if (strcmp(a, "--show") == 0 && tl_parse_u64(next, &v) && v < 1000000u) {
            g_show = (unsigned)v;
            i++;
        } else if (strcmp(a, "--case") == 0 && tl_parse_u64(next, &v)) {
            *only_case = v;
            *replay = true;
            i++;
        } else {
            return false;
        }
    }
    return true;
}

/* The table: one row per allocator with cases, and the total (returned). */
static counts_t print_table(const rt_allocator_t *const *all, size_t na)
{
    counts_t tot;
    memset(&tot, 0, sizeof tot);
    printf("\n%-10s %9s %9s %9s %9s %9s", "allocator", "cases", "reported", "check", "harmless", "failures");
    if (g_strict) {
        printf(" | %9s %9s %9s %9s", "owned", "reported", "check", "harmless");
    }
    printf("  seconds  failures by kind\n");
    for (unsigned ai = 0; ai < na; ai++) {
        const counts_t *c = &sh->c[ai];
        if (c->cases == 0u && c->noop == 0u) {
            continue;
        }
        printf("%-10s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, all[ai]->name, c->cases,
               c->reported, c->check, c->harmless, c->failed);
        if (g_strict) {
            printf(" | %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, c->owned, c->owned_reported, c->owned_check,
                   c->owned_harmless);
        }
        printf(" %8.1f ", c->seconds);
        for (unsigned f = 0; f < FK_COUNT; f++) {
            if (c->fk[f] != 0u) {
                printf(" %s %" PRIu64, fk_names[f], c->fk[f]);
            }
        }
        printf("\n");
        tot.cases += c->cases;
        tot.reported += c->reported;
        tot.check += c->check;
        tot.harmless += c->harmless;
        tot.failed += c->failed;
        tot.noop += c->noop;
        tot.outside += c->outside;
        tot.owned += c->owned;
        tot.owned_reported += c->owned_reported;
        tot.owned_check += c->owned_check;
        tot.owned_harmless += c->owned_harmless;
    }
    printf("%-10s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, "total", tot.cases, tot.reported,
           tot.check, tot.harmless, tot.failed);
    if (g_strict) {
        printf(" | %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, tot.owned, tot.owned_reported, tot.owned_check,
               tot.owned_harmless);
    }
    printf("\noverflow: %" PRIu64 " cases (+%" PRIu64 " values equal to the byte there, %" PRIu64
           " bytes outside the buffer: not cases), %" PRIu64 " setup failures\n",
           tot.cases, tot.noop, tot.outside, sh->setup_failures);
    return tot;
}

int main(int argc, char **argv)
{
#if TL_ASAN
    ubsan_no_stacks(argv);
#endif
    const char *only_alloc = NULL;
    uint64_t only_case = 0;
    bool replay = false;
    if (!parse_args(argc, argv, &only_alloc, &only_case, &replay)) {
        usage();
        return 2;
    }
    if (replay && only_alloc == NULL) {
        usage();
        return 2;
    }
    if (!map_buffers()) {
        return 1;
    }
    size_t na = 0;
    const rt_allocator_t *const *all = rt_registry(&na);
    bool registry_ok = tl_check_registry(na);
    if (na > MAX_ALLOCS) {
        na = MAX_ALLOCS;
    }
    bool found = only_alloc == NULL;
    if (replay) {
        rec.print = true;
        g_stride = 1;
        for (unsigned ai = 0; ai < na; ai++) {
            if (strcmp(all[ai]->name, only_alloc) == 0) {
                found = true;
                run_from(ai, all[ai], only_case, true);
                if (sh->c[ai].cases + sh->c[ai].noop + sh->c[ai].outside == 0u) {
                    printf("overflow: %s has no case %" PRIu64 " (an operation that needs a used neighbour)\n",
                           only_alloc, only_case);
                }
            }
        }
        if (!found) {
            printf("overflow: no allocator '%s'\n", only_alloc);
            return 2;
        }
        return 0;
    }
    printf("overflow: seed %" PRIu64 ", stride %u (%s (size, neighbour, operation) combination; all "
           "offsets 1..16 after the end and before the start, all 12 values)\n",
           g_seed, g_stride, g_stride == 1u ? "every" : "every K-th");
    fflush(stdout);
    for (unsigned ai = 0; ai < na; ai++) {
        if (only_alloc != NULL && strcmp(all[ai]->name, only_alloc) != 0) {
            continue;
        }
        found = true;
        FILE *err = tmpfile();
        san_fd = err != NULL ? fileno(err) : -1;
        double t0 = now_s();
        run_allocator(ai, all[ai], err);
        sh->c[ai].seconds = now_s() - t0;
        if (err != NULL) {
            fclose(err);
            san_fd = -1;
        }
    }
    if (!found) {
        printf("overflow: no allocator '%s'\n", only_alloc);
        return 2;
    }
    counts_t tot = print_table(all, na);
    tl_state.passed = (unsigned long)(tot.cases - tot.failed);
    tl_state.failed = (unsigned long)(tot.failed + sh->setup_failures) + (registry_ok ? 0u : 1u);
    return tl_summary("overflow");
}
