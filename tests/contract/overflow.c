/* SPDX-License-Identifier: MIT */
/*
 * overflow.c -- the exhaustive overflow suite (doc/hardening.md, "How it is tested"):
 * an application writes past the end, or before the start, of its own block, into whatever lies
 * there -- its neighbour's data or the allocator's metadata -- and then calls the allocator.
 * Every allocator of the registry, through its descriptor only (never by name). Two classes of
 * corruption, counted and printed apart:
 *   byte   one byte, bit flips and other values: the wild single write;
 *   copy   1..16 bytes next to the block's boundary, copied from another word of the same heap:
 *          the commonest overflow, memcpy(dst, src, n) with n too long where src is a heap block
 *          too, so the bytes written past dst are the bytes read past src -- another block's
 *          valid metadata (a correctly tagged header, a valid link), not noise.
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
 *   byte class   offset k = 1..16: the byte end+k-1 (after) or X-k (before); value: the 8 single
 *                bit flips of the byte there, 0x00, 0xFF and two random bytes (xorshift64*,
 *                seeded per allocator/size/scenario/offset from --seed, printed)
 *   copy class   offset k = 1..16: the k bytes end+0 .. end+k-1 (after) or X-k .. X-1 (before),
 *                the same destinations as the byte class's offsets 1..k, as an overrun of k bytes
 *                writes them; their new value: the k bytes at the same place relative to a source
 *                word S -- S, S+1, ... (after) or ..., S+W-2, S+W-1 (before; W = the word) -- so
 *                that S lands on the word at X's boundary (the header for the heaps): k < W a
 *                partial word, k = W the whole word, k = 2W two adjacent words copied together
 *                (a [header][first link] pair after, a [footer][header] pair before), k = 4W on
 *                32-bit. The source words S are what the suite can see of the built heap from
 *                outside (it cannot know which words are metadata): the words within 16 bytes
 *                before and after every live block; the first 4 and the last 2 words of every gap
 *                between live blocks and of the gap after the last one (free blocks, cached
 *                blocks, padding, the pool's end); the first 8 and the last 32 words of the
 *                control area (the buffer below the lowest live block). Each word once, named by
 *                the first of those kinds it belongs to (on 32-bit, where 16 bytes are 4 words,
 *                a gap's first words are all "block-after"); up to NSRC per scenario, 58..77 on
 *                x86-64. The output prints the source as a kind and a place ("N end+0", "gap
 *                after B5, its start+8", "control area, its end-8").
 *   Bytes equal to those already there are no corruption (counted as "noop", not as a case);
 *   bytes outside the heap buffer are not the allocator's (counted as "outside", not a case).
 * Full sweep on x86-64, seed 0, Release, 18 allocators x ~22 sizes x 2 directions x 16 offsets x
 * (12 values | 58..77 source words) x (9 operations with a used neighbour + 6 with a free one):
 *   byte class   2,257,023 cases (+46,977 values equal to the byte there), ~6 s of CPU (~8 s with
 *                the containment checks; 15..20 s on a busy 2-core machine)
 *   copy class   12,621,195 cases (+244,245 copies equal to the bytes there, 95,520 runs reaching
 *                outside the buffer), ~21 s of CPU (30..40 s with the containment checks; 60..80 s
 *                on a busy 2-core machine), ctest 'overflow_copy' (label long)
 * Reduced sweeps, the byte class (--stride): ASan+UBSan (gcc) stride 5: 451,388 cases (~20 s on
 * a busy 2-core machine, containment included); RT_DEBUG=2 stride 2; TSan stride 13 (a caught
 * fault costs ~20 ms there); -m32 under qemu-i386 stride 11 (from ctest): 206,087 cases, 40..50 s.
 * The copy class (--copy-stride): ASan+UBSan (gcc) 16: 787,839 cases (~30..60 s on a busy 2-core
 * machine); RT_DEBUG=2 16; TSan 64; -m32 under qemu-i386 64 (from ctest): 247,106 cases, 40..50 s.
 * The output states the exact count of its run.
 *
 * Each case restores the heap from a byte copy of the buffer taken after it was built (the same
 * buffer address, so the state is identical: every allocator keeps all of its state in its
 * buffer, doc/design.md, "The descriptor and the registry"; the handle must lie inside it or the allocator is reported and skipped),
 * writes the corrupted bytes, and runs the operation. A twin run of the same operation on the
 * uncorrupted copy gives the reference behaviour.
 *
 * PASS CRITERION of one case (all of):
 *   1. The allocator never faults and never hangs: cases run in batches in a forked child; a
 *      fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP) is caught and fails the case; a child that
 *      dies (a sanitizer's report, or a hang: more than 2 s of CPU time for the 192 cases of one
 *      operation, or for the cases of one offset of one operation in the copy class, SIGVTALRM)
 *      fails the case it was on, and the next child starts after it.
 *   2. The guard zones (one page below and one page above the heap buffer, a fixed pattern) are
 *      intact, and every block returned lies inside the buffer (pages beyond the guards are
 *      PROT_NONE, so a wilder write faults: 1).
 *   3. Shadow model: no two live blocks overlap (a returned block overlapping a live one fails at
 *      once, before the test writes to it); every live block keeps its contents (the setup
 *      blocks compared with the copy, except the corrupted bytes; blocks returned during the
 *      case filled with a per-block pattern and verified); realloc keeps the common prefix.
 *   4. EITHER the corruption was reported through the handler (a recording handler installed
 *      with set_handler) and the call that reported it was refused -- malloc, realloc and
 *      memalign returned NULL (realloc's block intact: 3); free changed neither stats.frees nor
 *      stats.used_blocks -- the case then stops at that call ("reported");
 *      OR every operation returned exactly what it returned on the twin (same pointers, i.e.
 *      the same offsets from the buffer base, same NULLs) and then
 *        either stats are identical to the twin's and check() passes with no report
 *        ("harmless": the bytes were not metadata, e.g. a used neighbour's payload, or metadata
 *        that no driven operation and no check depends on),
 *        or check() returns false or reports ("check": a latent corruption that none of the
 *        driven operations acted on, found by the integrity check).
 *   5. Containment (on by default; --no-contain leaves it out), after a case that ended
 *      "reported" or "check": the heap goes on from where the case left it, and
 *        - check() passes with no report (after "check" this is the second call: a check fences
 *          the damage it finds);
 *        - every block of the shadow model (the setup blocks and those returned during the case,
 *          X and N included) is freed, each free without a report and counted in stats.frees
 *          (the other live blocks keep their contents: 3; the guards stay intact: 2);
 *        - then check() passes with no report, stats.used_blocks is 0, and the walk shows no
 *          used block, free + quarantined footprints = stats.capacity, quarantined footprints =
 *          stats.quarantined_bytes, and no two free blocks adjacent: the heap serves its whole
 *          capacity but what it fenced off.
 *      A failure of these fails the case ("contain") for the boundary-tag heaps (registry family
 *      RT_FAMILY_HEAP); for the other families the same checks run and are only counted (the
 *      table's c-failed column, marked '*'), though a fault, a guard or a content failure met on
 *      the way fails the case as in 1-3. The table prints per allocator the cases continued
 *      ("contained"), those that fenced something (quarantined bytes in stats or the walk), the
 *      largest stats.quarantined_bytes seen, and the containment failures.
 *   Anything else fails: an operation that behaved differently from the twin without a report
 *   ("silent"), stats that differ while check() passes ("silent stats"), a report whose call was
 *   not refused ("not refused"), 1-3 ("fault", "guard", "outside", "overlap", "content"), 5
 *   ("contain"). Each failure prints its class, allocator, case and the command that replays it.
 *
 * --strict adds, per allocator, the cases whose bytes lay outside every live block's usable
 * bytes ("owned": the allocator's -- its headers, free blocks, padding or control data; which of
 * those bytes are metadata cannot be known from outside, so nothing is guessed) and how they
 * ended (reported / check / harmless). It changes no verdict.
 *
 * Usage: overflow [--class byte|copy|all] [--alloc NAME] [--stride K] [--copy-stride K] [--seed S]
 *                 [--show N] [--strict] [--no-contain]
 *                 [--class byte|copy --alloc NAME --case I]   (replay one case in-process, verbosely:
 *                 the layout, the twin, the case and each step of the containment)
 *   --class C        the classes run (default all; ctest runs 'byte' as overflow, 'copy' as
 *                    overflow_copy)
 *   --stride K       byte class: every K-th (size, direction, neighbour state, operation)
 *                    combination, all offsets and all values of each: a reduced sweep that still
 *                    covers every allocator, offset, value, operation and neighbour (K odd, not a
 *                    multiple of 3: coprime to the 36 combinations of one size)
 *   --copy-stride K  copy class: every combination and every offset, every K-th source word of
 *                    each, the phase turning with the offset and the combination, so every
 *                    allocator, size, offset, operation and source kind is still met (the run
 *                    fails, "COVERAGE", if an allocator meets no word of a source kind that its
 *                    scenarios had)
 *                    Sanitizer and RT_DEBUG=2 builds default to strides; ctest passes them under
 *                    an emulator
 *   --show N         failures printed per allocator and class (default 3; as many notes of a
 *                    containment that failed outside the heaps); the counts are always complete
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
#define OVF_DEFAULT_COPY_STRIDE 64u
#elif TL_ASAN
#define OVF_DEFAULT_STRIDE 5u
#define OVF_DEFAULT_COPY_STRIDE 16u
#elif RT_DEBUG >= 2
#define OVF_DEFAULT_STRIDE 2u
#define OVF_DEFAULT_COPY_STRIDE 16u
#else
#define OVF_DEFAULT_STRIDE 1u
#define OVF_DEFAULT_COPY_STRIDE 1u
#endif

#define NBLOCKS 7u /* setup blocks; X is the 4th by address */
#define XI 3u      /* index of X among them sorted by address */
#define NOFF 16u   /* offsets 1..16 */
#define NVAL 12u   /* 8 bit flips, 0x00, 0xFF, 2 random */
#define MAXSIZES 40u
#define MAXLIVE 16u
#define HMIN ((size_t)16 << 10)
#define HMAX ((size_t)512 << 10)
#define HANG_S \
    2 /* CPU seconds for the 192 cases of one operation (byte class) or the
                              NSRC cases of one offset of one operation (copy class): more is a hang */
#define MAX_ALLOCS 64u
#define W_BYTES (sizeof(void *)) /* a word */
#define NSRC 256u                /* copy class: source words per scenario, at most */
#define CTRL_HEAD 8u             /* copy class: the control area's first words ... */
#define CTRL_TAIL 32u            /* ... and its last words, as sources */

/* The two classes of corruption: one byte (bit flips and values), or a copy (an overrun whose
 * bytes are read past another heap block: other metadata words of the same heap). */
typedef enum { CL_BYTE, CL_COPY, CL_COUNT } class_t;
static const char *const class_names[CL_COUNT] = {"byte", "copy"};

/* Where the copy class reads its source words (see the top). */
typedef enum { SK_BLOCK_BEFORE, SK_BLOCK_AFTER, SK_GAP_START, SK_GAP_END, SK_CONTROL, SK_COUNT } src_kind_t;
static const char *const sk_names[SK_COUNT] = {"block-before", "block-after", "gap-start", "gap-end", "control"};

/* One source word of the copy class: its offset from the buffer, its kind, and where it lies as
 * the suite sees it (ref: the live block, by address among the live ones, or the gap; delta: the
 * word's offset from that block's start or end, the gap's start or end, or the control area's
 * end). */
typedef struct anchor {
    uint32_t off;
    unsigned char kind;
    unsigned char ref;
    int32_t delta;
} anchor_t;

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
    FK_CONTAIN,
    FK_COUNT
} fail_kind_t;

static const char *const fk_names[FK_COUNT] = {"fault",     "guard",       "outside", "overlap",
                                               "content",   "not refused", "silent",  "silent stats",
                                               "sanitizer", "hang",        "contain"};

typedef struct counts {
    uint64_t cases, reported, check, harmless, failed, noop, outside;
    uint64_t owned, owned_reported, owned_check, owned_harmless;
    uint64_t fk[FK_COUNT];
    uint64_t by_kind[SK_COUNT];   /* copy class: cases per source kind */
    uint64_t kind_seen[SK_COUNT]; /* copy class: scenarios that had a source word of the kind */
    /* containment (after a case that ended "reported" or "check"): continued, fenced something,
     * failed (a failure for the heaps, counted only for the other families), the largest
     * stats.quarantined_bytes seen */
    uint64_t contained, fenced, contain_failed;
    size_t max_quarantined;
    uint64_t shown; /* failure messages printed */
    uint64_t noted; /* notes printed (a containment that failed outside the heaps) */
    double seconds;
} counts_t;

/* Shared with the forked children (MAP_SHARED). */
typedef struct shared {
    volatile uint64_t current; /* case index being run */
    volatile int done;
    volatile unsigned cur_orig, cur_value;
    volatile uint32_t cur_src_off; /* copy class: the source of the case being run */
    volatile unsigned cur_src_kind, cur_src_ref;
    volatile int32_t cur_src_delta;
    counts_t c[CL_COUNT][MAX_ALLOCS];
    uint64_t setup_failures;
} shared_t;

/* --- globals of the run ---------------------------------------------------------------------- */

static shared_t *sh;
static unsigned char *mem;       /* heap buffer (HMAX bytes reserved) */
static unsigned char *snap;      /* copy of the built heap */
static unsigned char *guard_ref; /* the guard pattern */
static uint64_t g_seed;
static unsigned g_stride = OVF_DEFAULT_STRIDE;
static unsigned g_copy_stride = OVF_DEFAULT_COPY_STRIDE;
static unsigned g_show = 3;
static bool g_strict;
static bool g_contain = true;                   /* --no-contain: the containment checks off */
static bool g_classes[CL_COUNT] = {true, true}; /* --class */
static bool g_verbose;                          /* a replay: the containment's steps too */
static tl_recorder_t rec;

/* RT_DEBUG >= 2: the reports since the last reset all come from the library's own full walk after a
 * call that succeeded ("check"): damage the call itself never touched -- nothing to refuse. */
static bool walk_only(void)
{
    return RT_DEBUG >= 2 && rec.count != 0u && rec.operation != NULL && strcmp(rec.operation, "check") == 0;
}
static int san_fd = -1; /* the children's stderr: sanitizer reports, summarised by the parent */

/* --- size list --------------------------------------------------------------------------------- */

static unsigned sizes_for(const rt_allocator_t *d, size_t *out)
{
    static const size_t base[] = {1,   8,   12,  16,  24,  32,   48,   64,   96,   100,  128,
                                  192, 256, 384, 512, 768, 1000, 1024, 1536, 2048, 3072, 4096};
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
    anchor_t src[NSRC]; /* copy class: the source words (sources_find) */
    unsigned nsrc;
    unsigned src_dropped; /* candidates beyond NSRC (none expected: reported) */
} scen_t;

typedef struct run {
    void *res[3]; /* what each step returned (free: NULL) */
    bool ran[3];
    rt_stats_t st;
    bool have_stats;
    bool check_ok;
    bool check_ran;
    bool reported; /* during a step (or stats before a free) */
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

/* Copy class: adds the word at buffer offset `off` (word-aligned) as a source, unless it is
 * outside the buffer or already a source (the first kind that names a word keeps it). */
static void source_add(ptrdiff_t off, src_kind_t kind, unsigned ref, ptrdiff_t delta)
{
    if (off < 0 || (size_t)off + W_BYTES > SC.H || off % (ptrdiff_t)W_BYTES != 0) {
        return;
    }
    for (unsigned i = 0; i < SC.nsrc; i++) {
        if (SC.src[i].off == (uint32_t)off) {
            return;
        }
    }
    if (SC.nsrc == NSRC) {
        SC.src_dropped++;
        return;
    }
    anchor_t *a = &SC.src[SC.nsrc++];
    a->off = (uint32_t)off;
    a->kind = (unsigned char)kind;
    a->ref = (unsigned char)ref;
    a->delta = (int32_t)delta;
}

/* Copy class: the candidate source words of the built heap, as the suite can see them from
 * outside (it cannot know which words are metadata): the words within 16 bytes before and after
 * every live block; the first 4 and the last 2 words of every gap between live blocks (and of
 * the gap after the last one: free blocks, cached blocks, padding, the pool's end); the first
 * CTRL_HEAD and the last CTRL_TAIL words of the control area (the buffer below the lowest live
 * block). Word offsets from the buffer (which is page-aligned): a word of a block boundary is
 * copied onto the word of X's boundary, as an overrun between two blocks of one heap does. */
static void sources_find(void)
{
    SC.nsrc = 0;
    SC.src_dropped = 0;
    unsigned char *lb[NBLOCKS];
    size_t lu[NBLOCKS];
    unsigned li[NBLOCKS]; /* the live blocks by address, and their index among the setup blocks */
    unsigned nl = 0;
    for (unsigned i = 0; i < NBLOCKS; i++) {
        if (SC.blk[i] != NULL) {
            lb[nl] = SC.blk[i];
            lu[nl] = SC.use[i];
            li[nl++] = i;
        }
    }
    const ptrdiff_t w = (ptrdiff_t)W_BYTES;
    for (unsigned i = 0; i < nl; i++) {
        ptrdiff_t start = lb[i] - mem, end = start + (ptrdiff_t)lu[i];
        ptrdiff_t lo = (start - 16) & ~(w - 1), hi = (end + 16 + w - 1) & ~(w - 1);
        for (ptrdiff_t o = lo; o < start; o += w) {
            source_add(o, SK_BLOCK_BEFORE, li[i], o - start);
        }
        for (ptrdiff_t o = end & ~(w - 1); o < hi; o += w) {
            source_add(o, SK_BLOCK_AFTER, li[i], o - end);
        }
    }
    for (unsigned i = 0; i < nl; i++) { /* gap i: from live block i's end to the next one's start */
        ptrdiff_t gs = ((lb[i] - mem) + (ptrdiff_t)lu[i] + w - 1) & ~(w - 1);
        ptrdiff_t ge = i + 1u < nl ? (lb[i + 1u] - mem) & ~(w - 1) : (ptrdiff_t)SC.H & ~(w - 1);
        for (ptrdiff_t j = 0; j < 4 && gs + j * w < ge; j++) {
            source_add(gs + j * w, SK_GAP_START, li[i], j * w);
        }
        for (ptrdiff_t j = 1; j <= 2 && ge - j * w >= gs; j++) {
            source_add(ge - j * w, SK_GAP_END, li[i], -j * w);
        }
    }
    ptrdiff_t ce = nl != 0u ? (lb[0] - mem) & ~(w - 1) : 0;
    for (ptrdiff_t j = 0; j < (ptrdiff_t)CTRL_HEAD && j * w < ce; j++) {
        source_add(j * w, SK_CONTROL, 0, j * w - ce);
    }
    for (ptrdiff_t j = (ptrdiff_t)CTRL_TAIL; j >= 1; j--) {
        source_add(ce - j * w, SK_CONTROL, 0, -j * w);
    }
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
    sources_find();
    if (SC.src_dropped != 0u) {
        return setup_fail("%s: size %zu: more candidate source words than NSRC", d->name, s);
    }
    SC.valid = true;
    return true;
}

/* --- one run of an operation (twin or corrupted) --------------------------------------------- */

typedef struct live {
    unsigned char *p;
    size_t n;
    uint64_t id;         /* pattern id, or 0: compare with the copy (a setup block) */
    unsigned char *orig; /* setup block: its address in the copy's frame */
} live_t;

typedef struct exec {
    live_t live[MAXLIVE];
    unsigned nlive;
    uint64_t next_id;
    unsigned char *target; /* the corrupted bytes [target, target + tlen), or NULL */
    size_t tlen;
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

static void drop_live(exec_t *e, int i) { e->live[i] = e->live[--e->nlive]; }

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
        if (l->p[j] != ref[j] && (e->target == NULL || l->orig + j < e->target || l->orig + j >= e->target + e->tlen)) {
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

/* Runs operation o on the heap now in mem (restored by the caller), whose bytes [target, target +
 * tlen) were corrupted (NULL: the twin); leaves the shadow model in *ep (for the containment). */
static void run_op(unsigned o, unsigned char *target, size_t tlen, run_t *r, exec_t *ep)
{
    const rt_allocator_t *d = SC.d;
    void *h = SC.h;
    memset(r, 0, sizeof *r);
    memset(ep, 0, sizeof *ep);
    exec_t *e = ep;
    e->r = r;
    e->target = target;
    e->tlen = tlen;
    e->next_id = 1;
    for (unsigned i = 0; i < NBLOCKS; i++) {
        if (SC.blk[i] != NULL) {
            live_t *l = &e->live[e->nlive++];
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
            if (rec.count != 0u && !walk_only()) {
                rt_stats_t after;
                d->stats(h, &after);
                if (after.frees != before.frees || after.used_blocks != before.used_blocks) {
                    fail(r, FK_NOT_REFUSED,
                         "%s reported %s but was not refused: frees %" PRIu64 " -> %" PRIu64 ", used blocks %zu -> %zu",
                         what, tl_kind_name(rec.last), before.frees, after.frees, before.used_blocks,
                         after.used_blocks);
                }
            } else {
                int i = find_live(e, p);
                if (i >= 0) {
                    drop_live(e, i);
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
            if (res != NULL && (rec.count == 0u || walk_only())) {
                int i = find_live(e, x);
                live_t old = e->live[i];
                drop_live(e, i);
                if (new_ok(e, res, n, what)) {
                    /* the common prefix survives the move (or the resize in place) */
                    size_t keep = old.n < n ? old.n : n;
                    live_t moved = old;
                    moved.p = res;
                    size_t bad = live_changed(e, &moved, keep);
                    if (bad != keep) {
                        fail(r, FK_CONTENT, "realloc(X) to %zu lost byte %zu of the %zu kept", n, bad, keep);
                    } else {
                        add_live(e, res, n);
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
            bool by_walk = walk_only();
            if (!by_walk && (res != NULL || r->res[k] != NULL)) {
                fail(r, FK_NOT_REFUSED, "%s reported %s but returned +%ld", what, tl_kind_name(rec.last),
                     rel(res != NULL ? res : r->res[k]));
            }
            if (by_walk && res != NULL) { /* the call succeeded: its block is live (containment frees it) */
                r->res[k] = res;
                if (new_ok(e, res, n, what)) {
                    add_live(e, res, n);
                }
            }
            break;
        }
        if (res != NULL) {
            r->res[k] = res;
            if (new_ok(e, res, n, what)) {
                add_live(e, res, n);
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
    (void)verify_all(e);
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

static unsigned char *target_of(unsigned k) { return SC.dir == 0u ? SC.X + SC.uX + k : SC.X - 1 - (ptrdiff_t)k; }

/* The name of setup block i (by address) in scenario (dir): X, N or B0..B6. */
static void block_label(char *buf, size_t n, unsigned i, unsigned dir)
{
    unsigned ni = dir == 0u ? XI + 1u : XI - 1u;
    if (i == XI) {
        snprintf(buf, n, "X");
    } else if (i == ni) {
        snprintf(buf, n, "N");
    } else {
        snprintf(buf, n, "B%u", i);
    }
}

/* Copy class: where the source word lies, in words a reader can check against the layout. */
static void source_label(char *buf, size_t n, unsigned kind, unsigned ref, long delta, unsigned dir)
{
    char b[8];
    block_label(b, sizeof b, ref, dir);
    switch (kind) {
    case SK_BLOCK_BEFORE: snprintf(buf, n, "%s start%+ld", b, delta); break;
    case SK_BLOCK_AFTER: snprintf(buf, n, "%s end%+ld", b, delta); break;
    case SK_GAP_START: snprintf(buf, n, "gap after %s, its start%+ld", b, delta); break;
    case SK_GAP_END: snprintf(buf, n, "gap after %s, its end%+ld", b, delta); break;
    default: snprintf(buf, n, "control area, its end%+ld", delta); break;
    }
}

static void describe(char *buf, size_t n, const rt_allocator_t *d, uint64_t idx, unsigned si, size_t s, unsigned dir,
                     unsigned state, unsigned o, unsigned k, unsigned orig, unsigned value, unsigned vi)
{
    char v[24];
    if (vi < 8u) {
        snprintf(v, sizeof v, "bit %u", vi);
    } else {
        snprintf(v, sizeof v, "%s", vi == 8u ? "0x00" : vi == 9u ? "0xFF" : "random");
    }
    (void)si;
    snprintf(buf, n, "%s case %" PRIu64 ": size %zu, %s neighbour %s, byte %s%u = 0x%02x (was 0x%02x, %s), %s", d->name,
             idx, s, state == 0u ? "used" : "free", dir == 0u ? "after" : "before", dir == 0u ? "end+" : "start-",
             dir == 0u ? k : k + 1u, value, orig, v, ops[o].name);
}

/* Copy class: the bytes written and where they were read (len bytes; source word at src_off). */
static void describe_copy(char *buf, size_t n, const rt_allocator_t *d, uint64_t idx, size_t s, unsigned dir,
                          unsigned state, unsigned o, unsigned len, uint32_t src_off, unsigned kind, unsigned ref,
                          long delta)
{
    char where[80], dst[40];
    source_label(where, sizeof where, kind, ref, delta, dir);
    long from = dir == 0u ? (long)src_off : (long)src_off + (long)W_BYTES - (long)len;
    if (dir == 0u) {
        snprintf(dst, sizeof dst, "end+0..end+%u", len - 1u);
    } else {
        snprintf(dst, sizeof dst, "start-%u..start-1", len);
    }
    snprintf(buf, n,
             "%s copy case %" PRIu64 ": size %zu, %s neighbour %s, bytes %s (%u) = a copy of +%ld..+%ld "
             "(%s word at +%lu: %s), %s",
             d->name, idx, s, state == 0u ? "used" : "free", dir == 0u ? "after" : "before", dst, len, from,
             from + (long)len - 1, sk_names[kind < SK_COUNT ? kind : 0], (unsigned long)src_off, where, ops[o].name);
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
    snprintf(why, n,
             "stats differ: used %zu/%zu blocks %zu/%zu, free %zu/%zu, largest %zu/%zu, frees %" PRIu64 "/%" PRIu64,
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

/* --- containment --------------------------------------------------------------------------------
 * After a case that ended "reported" or "check", the heap goes on (see the top): check() passes,
 * every block of the shadow model is freed without a report, and then the heap is whole again --
 * nothing used, free plus quarantined footprints = capacity, quarantined_bytes = the quarantined
 * footprints, no two free blocks adjacent. */

typedef struct contain {
    bool failed;        /* a containment check failed (a failure for the heaps, counted otherwise) */
    fail_kind_t hard;   /* FK_COUNT, or a safety failure met on the way (every family) */
    size_t quarantined; /* the largest stats.quarantined_bytes seen */
    bool fenced;        /* something was fenced off (stats or walk) */
    char why[200];
} contain_t;

static TL_PRINTF(2, 3) void cfail(contain_t *c, const char *fmt, ...)
{
    if (c->failed) {
        return;
    }
    c->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

typedef struct walk_acc {
    size_t blocks, used, free_bytes, q_bytes, q_blocks, adjacent;
    uintptr_t prev_end;
    bool prev_free;
} walk_acc_t;

static bool walk_acc(void *context, const rt_block_info_t *b)
{
    walk_acc_t *w = context;
    uintptr_t end = (uintptr_t)b->pointer + b->size;
    uintptr_t start = end - b->footprint;
    bool is_free = !b->used && !b->quarantined;
    w->blocks++;
    w->used += b->used ? 1u : 0u;
    if (b->quarantined) {
        w->q_bytes += b->footprint;
        w->q_blocks++;
    } else if (!b->used) {
        w->free_bytes += b->footprint;
    }
    if (is_free && w->prev_free && w->prev_end == start) {
        w->adjacent++;
    }
    w->prev_free = is_free;
    w->prev_end = end;
    return w->blocks < ((size_t)1 << 24); /* a walk that does not end is a hang, not a test loop */
}

/* stats, noting what was fenced; false (and the containment failed) when stats reported. */
static bool contain_stats(contain_t *c, rt_stats_t *s, const char *when)
{
    memset(s, 0, sizeof *s);
    if (SC.d->stats == NULL) {
        return true;
    }
    unsigned long before = rec.count;
    SC.d->stats(SC.h, s);
    if (s->quarantined_bytes > c->quarantined) {
        c->quarantined = s->quarantined_bytes;
    }
    c->fenced |= s->quarantined_bytes != 0u;
    if (rec.count != before) {
        cfail(c, "stats %s reported %s", when, tl_kind_name(rec.last));
        return false;
    }
    return true;
}

static bool contain_check(contain_t *c, const char *when)
{
    if (SC.d->check == NULL) {
        return true;
    }
    unsigned long before = rec.count;
    bool ok = SC.d->check(SC.h);
    if (g_verbose) {
        printf("      contain: check() %s: %s%s\n", when, ok ? "passed" : "FAILED",
               rec.count != before ? ", reported" : "");
    }
    if (!ok || rec.count != before) {
        cfail(c, "check() %s %s%s", when, ok ? "passed" : "failed", rec.count != before ? " and reported" : "");
        return false;
    }
    return true;
}

/* The containment of the case whose shadow model is *e, on the heap as the case left it. Stops at
 * the first check that fails. */
static void contain_run(exec_t *e, contain_t *c)
{
    const rt_allocator_t *d = SC.d;
    void *h = SC.h;
    run_t cr;
    memset(&cr, 0, sizeof cr);
    e->r = &cr; /* content and overlap failures of the frees land here */
    rt_stats_t s0, s1;
    if (!contain_check(c, "after the damage was found")) {
        return;
    }
    while (e->nlive > 0u) {
        live_t *l = &e->live[e->nlive - 1u];
        unsigned char *p = l->p;
        if (!contain_stats(c, &s0, "before a free")) {
            return;
        }
        unsigned long before = rec.count;
        d->free(h, p);
        bool said = rec.count != before;
        if (g_verbose) {
            printf("      contain: free(+%ld) %s\n", rel(p), said ? tl_kind_name(rec.last) : "ok");
        }
        if (said) {
            cfail(c, "free(+%ld) of a live block reported %s", rel(p), tl_kind_name(rec.last));
            return;
        }
        if (!contain_stats(c, &s1, "after a free")) {
            return;
        }
        if (d->stats != NULL && s1.frees != s0.frees + 1u) {
            cfail(c, "free(+%ld) of a live block: stats.frees %" PRIu64 " -> %" PRIu64, rel(p), s0.frees, s1.frees);
            return;
        }
        e->nlive--;
        if (!verify_all(e)) {
            c->hard = cr.fk;
            snprintf(c->why, sizeof c->why, "after free(+%ld): %.160s", rel(p), cr.why);
            return;
        }
    }
    if (!contain_check(c, "after freeing every block") || !contain_stats(c, &s1, "after freeing every block")) {
        return;
    }
    if (d->stats != NULL && s1.used_blocks != 0u) {
        cfail(c, "every block freed, but stats.used_blocks %zu", s1.used_blocks);
        return;
    }
    if (d->walk != NULL) {
        walk_acc_t w;
        memset(&w, 0, sizeof w);
        unsigned long before = rec.count;
        d->walk(h, walk_acc, &w);
        c->fenced |= w.q_blocks != 0u;
        if (g_verbose) {
            printf("      contain: walk: %zu blocks, %zu used, %zu free bytes, %zu quarantined bytes in %zu blocks, "
                   "%zu adjacent free pairs; stats: capacity %zu, quarantined %zu\n",
                   w.blocks, w.used, w.free_bytes, w.q_bytes, w.q_blocks, w.adjacent, s1.capacity,
                   s1.quarantined_bytes);
        }
        if (rec.count != before) {
            cfail(c, "the walk reported %s", tl_kind_name(rec.last));
        } else if (w.used != 0u) {
            cfail(c, "every block freed, but the walk shows %zu used", w.used);
        } else if (d->stats != NULL && w.free_bytes + w.q_bytes != s1.capacity) {
            cfail(c, "every block freed: the walk's free %zu + quarantined %zu bytes != capacity %zu", w.free_bytes,
                  w.q_bytes, s1.capacity);
        } else if (d->stats != NULL && w.q_bytes != s1.quarantined_bytes) {
            cfail(c, "stats.quarantined_bytes %zu, the walk's quarantined footprints %zu", s1.quarantined_bytes,
                  w.q_bytes);
        } else if (w.adjacent != 0u && d->family != RT_FAMILY_THREAD_HEAPS) {
            /* (thread heaps: once every block is freed the heaps are given back, and what stays
             * is each back-end tree's free memory -- trees that touch never unite) */
            cfail(c, "every block freed: %zu pairs of adjacent free blocks", w.adjacent);
        }
    }
}

/* --- one case ---------------------------------------------------------------------------------- */

typedef struct guarded {
    unsigned o;
    unsigned char *t;
    size_t tlen;
    run_t *r;
    exec_t *e;
    contain_t *c; /* NULL: run the operation; else: the containment */
} guarded_t;

static bool run_guarded(guarded_t *g)
{
    if (sigsetjmp(fault_jmp, 0) != 0) { /* SA_NODEFER: no mask to restore */
        long where = 0;
        (void)guards_changed(SC.H, &where); /* restores them */
        return false;
    }
    fault_armed = 1;
    if (g->c == NULL) {
        run_op(g->o, g->t, g->tlen, g->r, g->e);
    } else {
        contain_run(g->e, g->c);
        long where = 0;
        if (g->c->hard == FK_COUNT && guards_changed(SC.H, &where)) {
            g->c->hard = FK_GUARD;
            snprintf(g->c->why, sizeof g->c->why, "the guard zone %s the buffer changed at %s%+ld",
                     where < 0 ? "below" : "above", where < 0 ? "start" : "end", where);
        }
    }
    fault_armed = 0;
    return true;
}

/* What one case did, beyond its outcome. */
typedef struct case_res {
    bool owned; /* a corrupted byte lay outside every live block's usable bytes */
    fail_kind_t fk;
    bool contained; /* the containment ran */
    contain_t ct;
    char why[400];
} case_res_t;

/* Runs case (o, k, j) of the current scenario: class byte, offset k (0..15), value j (0..11); or
 * class copy, the k + 1 bytes next to X's boundary, copied from source j. Returns its outcome
 * and, on failure, why. */
static outcome_t run_case(unsigned cls, unsigned o, unsigned k, unsigned j, case_res_t *cr)
{
    unsigned char vals[NOFF];
    unsigned char *t;
    size_t len;
    if (cls == CL_BYTE) {
        t = target_of(k);
        len = 1;
        if (t < mem || t >= mem + SC.H) {
            return OUT_OUTSIDE;
        }
        unsigned char rnd[2];
        randoms(SC.ai, SC.si, SC.dir, SC.state, k, rnd);
        unsigned char orig = snap[t - mem];
        vals[0] = value_of(j, orig, rnd);
        if (vals[0] == orig) {
            return OUT_NOOP;
        }
        sh->cur_orig = orig;
        sh->cur_value = vals[0];
    } else {
        len = k + 1u;
        t = SC.dir == 0u ? SC.X + SC.uX : SC.X - len;
        const anchor_t *a = &SC.src[j];
        ptrdiff_t from = (ptrdiff_t)a->off + (SC.dir == 0u ? 0 : (ptrdiff_t)W_BYTES - (ptrdiff_t)len);
        if (t < mem || t + len > mem + SC.H || from < 0 || (size_t)from + len > SC.H) {
            return OUT_OUTSIDE;
        }
        memcpy(vals, snap + from, len);
        if (memcmp(vals, snap + (t - mem), len) == 0) {
            return OUT_NOOP;
        }
    }
    cr->owned = false;
    for (size_t b = 0; b < len; b++) {
        bool in_live = false;
        for (unsigned i = 0; i < NBLOCKS; i++) {
            in_live |= SC.blk[i] != NULL && t + b >= SC.blk[i] && t + b < SC.blk[i] + SC.use[i];
        }
        cr->owned |= !in_live;
    }
    memcpy(mem, snap, SC.H);
    tl_recorder_reset(&rec);
    memcpy(t, vals, len);
    run_t r;
    exec_t e;
    off_t said = stderr_size();
    guarded_t g = {o, t, len, &r, &e, NULL};
    if (!run_guarded(&g)) {
        cr->fk = FK_FAULT;
        snprintf(cr->why, sizeof cr->why, "fault: signal %d (%s) in the case", (int)fault_sig,
                 strsignal((int)fault_sig));
        return OUT_FAIL;
    }
    last_run = r;
    if (stderr_size() != said && !r.failed) {
        cr->fk = FK_SANITIZER;
        snprintf(cr->why, sizeof cr->why, "a sanitizer reported during the case (its report is summarised below)");
        return OUT_FAIL;
    }
    outcome_t out;
    if (r.failed) {
        cr->fk = r.fk;
        snprintf(cr->why, sizeof cr->why, "%s", r.why);
        return OUT_FAIL;
    }
    const run_t *tw = &fz->twin[o];
    if (r.reported) {
        out = OUT_REPORTED;
    } else if (!results_equal(&r, tw, cr->why, sizeof cr->why)) {
        cr->fk = FK_SILENT;
        return OUT_FAIL;
    } else if (r.check_reported || !r.check_ok) {
        out = OUT_CHECK;
    } else if (r.have_stats && !stats_equal(&r.st, &tw->st, cr->why, sizeof cr->why)) {
        cr->fk = FK_SILENT_STATS;
        return OUT_FAIL;
    } else {
        return OUT_HARMLESS;
    }
    if (!g_contain) {
        return out;
    }
    /* the containment: the heap goes on from where the case left it */
    memset(&cr->ct, 0, sizeof cr->ct);
    cr->ct.hard = FK_COUNT;
    cr->contained = true;
    g.c = &cr->ct;
    if (!run_guarded(&g)) {
        cr->fk = FK_FAULT;
        snprintf(cr->why, sizeof cr->why, "fault: signal %d (%s) in the containment (frees after the %s)",
                 (int)fault_sig, strsignal((int)fault_sig), out == OUT_REPORTED ? "report" : "check");
        return OUT_FAIL;
    }
    if (stderr_size() != said) {
        cr->fk = FK_SANITIZER;
        snprintf(cr->why, sizeof cr->why, "a sanitizer reported during the containment (summarised below)");
        return OUT_FAIL;
    }
    if (cr->ct.hard != FK_COUNT) {
        cr->fk = cr->ct.hard;
        snprintf(cr->why, sizeof cr->why, "in the containment: %s", cr->ct.why);
        return OUT_FAIL;
    }
    if (cr->ct.failed && (SC.d->family == RT_FAMILY_HEAP || SC.d->family == RT_FAMILY_THREAD_HEAPS)) {
        cr->fk = FK_CONTAIN;
        snprintf(cr->why, sizeof cr->why, "%s, then: %s", out == OUT_REPORTED ? "reported" : "found by check",
                 cr->ct.why);
        return OUT_FAIL;
    }
    return out;
}

/* A case that loops (a corrupted list walked forever) is a hang: the child's CPU time (not the
 * wall clock, so a busy machine does not count) is limited per batch; SIGVTALRM ends it. */
static void arm_hang_timer(long seconds)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = seconds;
    (void)setitimer(ITIMER_VIRTUAL, &it, NULL);
}

/* --- enumeration --------------------------------------------------------------------------------
 * Byte class: index = ((((si * 2 + dir) * 2 + state) * NOPS + o) * NOFF + k) * NVAL + vi;
 * copy class: index = ((((si * 2 + dir) * 2 + state) * NOPS + o) * NOFF + k) * NSRC + j. Both
 * independent of the stride (a replay names the same case at every stride). */

static uint64_t combo_of(unsigned si, unsigned dir, unsigned state, unsigned o)
{
    return (((uint64_t)si * 2u + dir) * 2u + state) * NOPS + o;
}

static unsigned per_offset(unsigned cls) { return cls == CL_BYTE ? NVAL : NSRC; }

/* Byte class: every K-th combination (K = --stride), all offsets and values of each. */
static bool combo_selected(unsigned cls, unsigned state, unsigned o, uint64_t combo)
{
    if (state == 1u && ops[o].needs_used_n) {
        return false;
    }
    return cls == CL_COPY || combo % g_stride == 0u;
}

/* Copy class: every combination and offset, every K-th source (K = --copy-stride), the phase
 * turning with the offset and the combination, so every source is met at some offset. */
static bool copy_selected(uint64_t combo, unsigned k, unsigned j)
{
    return (combo * NOFF + k + j) % g_copy_stride == 0u;
}

static void count(counts_t *c, outcome_t out, const case_res_t *cr, unsigned cls, unsigned kind)
{
    switch (out) {
    case OUT_NOOP: c->noop++; return;
    case OUT_OUTSIDE: c->outside++; return;
    case OUT_REPORTED: c->reported++; break;
    case OUT_CHECK: c->check++; break;
    case OUT_HARMLESS: c->harmless++; break;
    case OUT_FAIL:
        c->failed++;
        c->fk[cr->fk]++;
        break;
    }
    c->cases++;
    if (cls == CL_COPY && kind < SK_COUNT) {
        c->by_kind[kind]++;
    }
    if (cr->contained) {
        c->contained++;
        c->fenced += cr->ct.fenced ? 1u : 0u;
        c->contain_failed += cr->ct.failed ? 1u : 0u;
        if (cr->ct.quarantined > c->max_quarantined) {
            c->max_quarantined = cr->ct.quarantined;
        }
    }
    if (cr->owned) {
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

static void replay_hint(const rt_allocator_t *d, unsigned cls, uint64_t idx)
{
    printf("      replay: overflow --class %s --alloc %s --case %" PRIu64 " --seed %" PRIu64 "%s\n", class_names[cls],
           d->name, idx, g_seed, g_contain ? "" : " --no-contain");
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
        exec_t e;
        run_op(o, NULL, 0, &fz->twin[o], &e);
        if (fz->twin[o].failed || fz->twin[o].reported || !fz->twin[o].check_ok) {
            printf("SETUP FAIL %s: size %zu, %s neighbour %s: the uncorrupted twin of %s: %s%s%s\n", SC.d->name, SC.s,
                   SC.state == 0u ? "used" : "free", SC.dir == 0u ? "after" : "before", ops[o].name,
                   fz->twin[o].failed ? fz->twin[o].why : "", fz->twin[o].reported ? "reported" : "",
                   !fz->twin[o].check_ok ? " check failed" : "");
            sh->setup_failures++;
            continue;
        }
        fz->twin_ok[o] = true;
    }
    return true;
}

static const char *const outs[] = {"noop", "outside", "reported", "check", "harmless", "FAIL"};

/* A replay: the setup blocks (usable bytes, as offsets from the buffer) and the bytes around X. */
static void print_layout(void)
{
    printf("      heap of %zu bytes, handle at +%ld; setup blocks by address:", SC.H, rel(SC.h));
    for (unsigned i = 0; i < NBLOCKS; i++) {
        char b[8];
        block_label(b, sizeof b, i, SC.dir);
        unsigned char *p = i == XI ? SC.X : SC.blk[i] != NULL ? SC.blk[i] : SC.N;
        size_t u = i == XI ? SC.uX : SC.blk[i] != NULL ? SC.use[i] : SC.uN;
        printf(" %s +%ld..+%ld%s", b, rel(p), rel(p) + (long)u, SC.blk[i] == NULL ? " (freed)" : "");
    }
    printf("\n      words around X's %s (before the corruption):", SC.dir == 0u ? "end" : "start");
    long at = SC.dir == 0u ? rel(SC.X + SC.uX) - 2 * (long)W_BYTES : rel(SC.X) - 3 * (long)W_BYTES;
    for (unsigned i = 0; i < 5u; i++) {
        long o = at + (long)(i * W_BYTES);
        if (o >= 0 && (size_t)o + W_BYTES <= SC.H) {
            uintptr_t v;
            memcpy(&v, snap + o, sizeof v);
            printf(" +%ld:%0*" PRIxPTR, o, (int)(2u * W_BYTES), v);
        }
    }
    printf("\n");
}

/* Prints one case (a failure, a note on a containment that failed outside the heaps, or the
 * replayed case). */
static void print_case(const rt_allocator_t *d, unsigned cls, uint64_t idx, unsigned si, size_t s, unsigned o,
                       unsigned k, unsigned j, outcome_t out, const case_res_t *cr, bool note)
{
    char desc[320];
    if (cls == CL_BYTE) {
        describe(desc, sizeof desc, d, idx, si, s, SC.dir, SC.state, o, k, sh->cur_orig, sh->cur_value, j);
    } else {
        const anchor_t *a = &SC.src[j];
        describe_copy(desc, sizeof desc, d, idx, s, SC.dir, SC.state, o, k + 1u, a->off, a->kind, a->ref,
                      (long)a->delta);
    }
    if (note) {
        printf("note %s\n      %s, then the containment (informational for this family): %s\n", desc, outs[out],
               cr->ct.why);
    } else {
        printf("%s %s\n      %s%s%s\n", out == OUT_FAIL ? "FAIL" : "case", desc, outs[out], out == OUT_FAIL ? ": " : "",
               out == OUT_FAIL ? cr->why : "");
        if (out == OUT_FAIL) {
            printf("      (%s class, %s)\n", class_names[cls], fk_names[cr->fk]);
        }
    }
    if (out == OUT_FAIL || note) {
        replay_hint(d, cls, idx);
    }
    fflush(stdout);
}

/* Runs the cases of class cls of allocator ai from index `start` (in the child); `only`: just
 * that one. */
static void run_from(unsigned ai, const rt_allocator_t *d, unsigned cls, uint64_t start, bool only)
{
    size_t sizes[MAXSIZES];
    unsigned ns = sizes_for(d, sizes);
    counts_t *c = &sh->c[cls][ai];
    const unsigned per = per_offset(cls);
    for (unsigned si = 0; si < ns; si++) {
        for (unsigned dir = 0; dir < 2u; dir++) {
            for (unsigned state = 0; state < 2u; state++) {
                bool built = false;
                for (unsigned o = 0; o < NOPS; o++) {
                    uint64_t combo = combo_of(si, dir, state, o);
                    uint64_t first = combo * NOFF * per, last = first + NOFF * per - 1u;
                    if (last < start || !combo_selected(cls, state, o, combo)) {
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
                        if (cls == CL_COPY && !only && SC.valid) { /* for the coverage check */
                            bool had[SK_COUNT] = {false};
                            for (unsigned j = 0; j < SC.nsrc; j++) {
                                had[SC.src[j].kind] = true;
                            }
                            for (unsigned kd = 0; kd < SK_COUNT; kd++) {
                                c->kind_seen[kd] += had[kd] ? 1u : 0u;
                            }
                        }
                    }
                    if (!SC.valid || !fz->twin_ok[o]) {
                        continue;
                    }
                    if (!only && cls == CL_BYTE) {
                        arm_hang_timer(HANG_S); /* per operation: 192 cases, milliseconds */
                    }
                    for (unsigned k = 0; k < NOFF; k++) {
                        if (!only && cls == CL_COPY) {
                            arm_hang_timer(HANG_S); /* per offset: up to NSRC cases */
                        }
                        unsigned nj = cls == CL_BYTE ? NVAL : SC.nsrc;
                        for (unsigned j = 0; j < nj; j++) {
                            uint64_t idx = first + (uint64_t)k * per + j;
                            if (idx < start || (only && idx != start) ||
                                (!only && cls == CL_COPY && !copy_selected(combo, k, j))) {
                                continue;
                            }
                            sh->current = idx;
                            sh->cur_orig = sh->cur_value = 0;
                            if (cls == CL_COPY) {
                                sh->cur_src_off = SC.src[j].off;
                                sh->cur_src_kind = SC.src[j].kind;
                                sh->cur_src_ref = SC.src[j].ref;
                                sh->cur_src_delta = SC.src[j].delta;
                            }
                            case_res_t cr;
                            memset(&cr, 0, sizeof cr);
                            cr.fk = FK_FAULT;
                            outcome_t out = run_case(cls, o, k, j, &cr);
                            count(c, out, &cr, cls, cls == CL_COPY ? SC.src[j].kind : SK_COUNT);
                            if (only || (out == OUT_FAIL && c->shown < g_show)) {
                                c->shown += out == OUT_FAIL ? 1u : 0u;
                                print_case(d, cls, idx, si, sizes[si], o, k, j, out, &cr, false);
                            } else if (out != OUT_FAIL && cr.contained && cr.ct.failed && c->noted < g_show) {
                                c->noted++;
                                print_case(d, cls, idx, si, sizes[si], o, k, j, out, &cr, true);
                            }
                            if (only) {
                                if (out == OUT_NOOP || out == OUT_OUTSIDE) {
                                    printf("      (not a case: %s)\n", out == OUT_NOOP ? "the bytes there are already "
                                                                                         "these"
                                                                                       : "outside the buffer");
                                    return;
                                }
                                print_layout();
                                print_run("twin", o, &fz->twin[o]);
                                print_run("case", o, &last_run);
                                if (cr.contained) {
                                    printf("      containment: %s%s (quarantined_bytes up to %zu)\n",
                                           cr.ct.failed || cr.ct.hard != FK_COUNT ? "FAILED: " : "passed",
                                           cr.ct.failed || cr.ct.hard != FK_COUNT ? cr.ct.why : "", cr.ct.quarantined);
                                }
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
static void describe_index(char *buf, size_t n, unsigned cls, const rt_allocator_t *d, uint64_t idx)
{
    size_t sizes[MAXSIZES];
    (void)sizes_for(d, sizes);
    const unsigned per = per_offset(cls);
    unsigned j = (unsigned)(idx % per);
    unsigned k = (unsigned)(idx / per % NOFF);
    uint64_t combo = idx / per / NOFF;
    unsigned o = (unsigned)(combo % NOPS);
    unsigned state = (unsigned)(combo / NOPS % 2u);
    unsigned dir = (unsigned)(combo / NOPS / 2u % 2u);
    unsigned si = (unsigned)(combo / NOPS / 4u);
    if (cls == CL_BYTE) {
        describe(buf, n, d, idx, si, sizes[si], dir, state, o, k, sh->cur_orig, sh->cur_value, j);
    } else {
        describe_copy(buf, n, d, idx, sizes[si], dir, state, o, k + 1u, sh->cur_src_off, sh->cur_src_kind,
                      sh->cur_src_ref, (long)sh->cur_src_delta);
    }
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

/* Runs all cases of class cls of allocator ai, restarting a child after every case that killed
 * one. */
static void run_allocator(unsigned ai, const rt_allocator_t *d, unsigned cls, FILE *err)
{
    counts_t *c = &sh->c[cls][ai];
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
            run_from(ai, d, cls, start, false);
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
            char desc[320];
            describe_index(desc, sizeof desc, cls, d, idx);
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
            printf("      (%s class, %s)\n", class_names[cls], hang ? "hang" : "fault");
            replay_hint(d, cls, idx);
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
               "replay may differ\n",
               (void *)region, fixed_address());
    }
    void *copy = mmap(NULL, HMAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *frozen = mmap(NULL, frozen_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *shared = mmap(NULL, sizeof(shared_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    guard_ref = malloc(pagesz);
    if (region == MAP_FAILED || copy == MAP_FAILED || frozen == MAP_FAILED || shared == MAP_FAILED ||
        guard_ref == NULL) {
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
    printf("usage: overflow [--class byte|copy|all] [--alloc NAME] [--stride K] [--copy-stride K] [--seed S]\n"
           "                [--show N] [--strict] [--no-contain] [--class C --alloc NAME --case I]\n"
           "  --stride K       byte class: every K-th (size, neighbour, operation) combination; K odd and not a\n"
           "                   multiple of 3 (coprime to the 36 combinations of one size)\n"
           "  --copy-stride K  copy class: every K-th source word, turning with the offset and combination\n"
           "  --no-contain     without the containment checks (after a report or a failed check)\n");
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
        } else if (strcmp(a, "--no-contain") == 0) {
            g_contain = false;
        } else if (strcmp(a, "--class") == 0 && next != NULL &&
                   (strcmp(next, "byte") == 0 || strcmp(next, "copy") == 0 || strcmp(next, "all") == 0)) {
            g_classes[CL_BYTE] = strcmp(next, "copy") != 0;
            g_classes[CL_COPY] = strcmp(next, "byte") != 0;
            i++;
        } else if (strcmp(a, "--alloc") == 0 && next != NULL) {
            *only_alloc = next;
            i++;
        } else if (strcmp(a, "--stride") == 0 && tl_parse_u64(next, &v) && v >= 1u && v < 1000u && v % 2u != 0u &&
                   v % 3u != 0u) {
            g_stride = (unsigned)v;
            i++;
        } else if (strcmp(a, "--copy-stride") == 0 && tl_parse_u64(next, &v) && v >= 1u && v < 100000u) {
            g_copy_stride = (unsigned)v;
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

static void add_counts(counts_t *tot, const counts_t *c)
{
    tot->cases += c->cases;
    tot->reported += c->reported;
    tot->check += c->check;
    tot->harmless += c->harmless;
    tot->failed += c->failed;
    tot->noop += c->noop;
    tot->outside += c->outside;
    tot->owned += c->owned;
    tot->owned_reported += c->owned_reported;
    tot->owned_check += c->owned_check;
    tot->owned_harmless += c->owned_harmless;
    tot->contained += c->contained;
    tot->fenced += c->fenced;
    tot->contain_failed += c->contain_failed;
    if (c->max_quarantined > tot->max_quarantined) {
        tot->max_quarantined = c->max_quarantined;
    }
    for (unsigned f = 0; f < FK_COUNT; f++) {
        tot->fk[f] += c->fk[f];
    }
    for (unsigned k = 0; k < SK_COUNT; k++) {
        tot->by_kind[k] += c->by_kind[k];
        tot->kind_seen[k] += c->kind_seen[k];
    }
    tot->seconds += c->seconds;
}

/* The table of one class: one row per allocator with cases, and the total (returned). Adds to
 * *coverage_gaps the allocators whose copy class met no case of a source kind. */
static counts_t print_table(unsigned cls, const rt_allocator_t *const *all, size_t na, unsigned *coverage_gaps)
{
    counts_t tot;
    memset(&tot, 0, sizeof tot);
    printf("\n%s class%s\n", class_names[cls],
           cls == CL_BYTE ? ": one byte at end+0..end+15 or start-1..start-16"
                          : ": 1..16 bytes at end+0.. or ..start-1, copied from another metadata word of the heap");
    printf("%-10s %9s %9s %9s %9s %9s", "allocator", "cases", "reported", "check", "harmless", "failures");
    if (g_strict) {
        printf(" | %9s %9s %9s %9s", "owned", "reported", "check", "harmless");
    }
    if (g_contain) {
        printf(" | %9s %8s %8s %8s", "contained", "fenced", "max q", "c-failed");
    }
    printf("  seconds  failures by kind\n");
    bool informational = false;
    for (unsigned ai = 0; ai < na; ai++) {
        const counts_t *c = &sh->c[cls][ai];
        if (c->cases == 0u && c->noop == 0u) {
            continue;
        }
        printf("%-10s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, all[ai]->name, c->cases,
               c->reported, c->check, c->harmless, c->failed);
        if (g_strict) {
            printf(" | %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, c->owned, c->owned_reported, c->owned_check,
                   c->owned_harmless);
        }
        if (g_contain) {
            bool info = all[ai]->family != RT_FAMILY_HEAP && all[ai]->family != RT_FAMILY_THREAD_HEAPS;
            informational |= info && c->contain_failed != 0u;
            printf(" | %9" PRIu64 " %8" PRIu64 " %8zu %7" PRIu64 "%s", c->contained, c->fenced, c->max_quarantined,
                   c->contain_failed, info && c->contain_failed != 0u ? "*" : " ");
        }
        printf(" %8.1f ", c->seconds);
        for (unsigned f = 0; f < FK_COUNT; f++) {
            if (c->fk[f] != 0u) {
                printf(" %s %" PRIu64, fk_names[f], c->fk[f]);
            }
        }
        printf("\n");
        if (cls == CL_COPY) {
            for (unsigned k = 0; k < SK_COUNT; k++) {
                if (c->by_kind[k] == 0u && c->kind_seen[k] != 0u) {
                    printf("%-10s COVERAGE: no copy case read a %s word (%" PRIu64 " scenarios had one)\n",
                           all[ai]->name, sk_names[k], c->kind_seen[k]);
                    (*coverage_gaps)++;
                }
            }
        }
        add_counts(&tot, c);
    }
    printf("%-10s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, "total", tot.cases, tot.reported,
           tot.check, tot.harmless, tot.failed);
    if (g_strict) {
        printf(" | %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, tot.owned, tot.owned_reported, tot.owned_check,
               tot.owned_harmless);
    }
    if (g_contain) {
        printf(" | %9" PRIu64 " %8" PRIu64 " %8zu %7" PRIu64 " ", tot.contained, tot.fenced, tot.max_quarantined,
               tot.contain_failed);
    }
    printf(" %8.1f\n", tot.seconds);
    if (informational) {
        printf("  *: containment of a family other than the boundary-tag heaps: counted, not a failure\n");
    }
    if (cls == CL_COPY) {
        printf("  copy cases by source kind:");
        for (unsigned k = 0; k < SK_COUNT; k++) {
            printf(" %s %" PRIu64 "%s%s", sk_names[k], tot.by_kind[k],
                   tot.kind_seen[k] == 0u ? " (no scenario had one)" : "", k + 1u < SK_COUNT ? "," : "\n");
        }
    }
    printf("overflow: %s class: %" PRIu64 " cases (+%" PRIu64 " %s, %" PRIu64 " %s outside the buffer: not cases), "
           "%" PRIu64 " failures\n",
           class_names[cls], tot.cases, tot.noop,
           cls == CL_BYTE ? "values equal to the byte there" : "copies equal to the bytes there", tot.outside,
           cls == CL_BYTE ? "bytes" : "runs", tot.failed);
    return tot;
}

/* The folded header tag of the 32-bit layout has T = 8 * W - RT_HEAP_MAX_BLOCK_LOG2 bits
 * (src/block/block.h): a word copied over a header that is not a header of the same 2^T * A
 * window -- a link, a footer, a word of the control structure -- passes it with probability 2^-T,
 * and no one-word tag can do better (block.h proves it). For the boundary-tag heaps on such a
 * layout, the copy class's failures that such a chance acceptance can cause (overlap, content,
 * not refused, silent, silent stats, contain) are counted as tag escapes and allowed up to the
 * bound cases / 2^T -- each case meets at least one tag check -- and printed as such; a fault, a
 * write outside the buffer, a sanitizer report or a hang is never allowed. The default 64-bit
 * layout (affine tag, 32 bits) is allowed none. */
#if RT_HARDENING >= 1 && SIZE_MAX <= 0xFFFFFFFFu
#define OVF_TAG_BITS (32u - (unsigned)RT_HEAP_MAX_BLOCK_LOG2)
#elif RT_HARDENING >= 1 && RT_HEAP_MAX_BLOCK_LOG2 != 32
#define OVF_TAG_BITS (64u - (unsigned)RT_HEAP_MAX_BLOCK_LOG2)
#else
#define OVF_TAG_BITS 64u
#endif

static uint64_t escape_bound(const counts_t *c) { return OVF_TAG_BITS >= 32u ? 0u : c->cases >> (OVF_TAG_BITS & 31u); }

static uint64_t escapes_allowed(unsigned cls, const rt_allocator_t *d, const counts_t *c)
{
    if (cls != CL_COPY || (d->family != RT_FAMILY_HEAP && d->family != RT_FAMILY_THREAD_HEAPS) || OVF_TAG_BITS >= 32u) {
        return 0; /* (the thread heaps' blocks are the heap's: the same tag) */
    }
    uint64_t escapable = c->fk[FK_OVERLAP] + c->fk[FK_CONTENT] + c->fk[FK_NOT_REFUSED] + c->fk[FK_SILENT] +
                         c->fk[FK_SILENT_STATS] + c->fk[FK_CONTAIN];
    if (escapable != c->failed || escapable > escape_bound(c)) {
        return 0;
    }
    return escapable;
}

/* One line per class that failed: the allocators and the kinds of their failures. */
static void print_failures(unsigned cls, const rt_allocator_t *const *all, size_t na)
{
    bool any = false;
    for (unsigned ai = 0; ai < na; ai++) {
        const counts_t *c = &sh->c[cls][ai];
        uint64_t esc = escapes_allowed(cls, all[ai], c);
        if (esc != 0u) {
            printf("overflow: %s class: %s: %" PRIu64 " escapes of its %u-bit tag, within the bound of %" PRIu64
                   " (cases / 2^%u; src/block/block.h)\n",
                   class_names[cls], all[ai]->name, esc, OVF_TAG_BITS, escape_bound(c), OVF_TAG_BITS);
        }
        if (c->failed == esc) {
            continue;
        }
        if (!any) {
            printf("overflow: FAILED, %s class:", class_names[cls]);
            any = true;
        }
        printf(" %s (", all[ai]->name);
        bool first = true;
        for (unsigned f = 0; f < FK_COUNT; f++) {
            if (c->fk[f] != 0u) {
                printf("%s%s %" PRIu64, first ? "" : ", ", fk_names[f], c->fk[f]);
                first = false;
            }
        }
        printf(")");
    }
    if (any) {
        printf("\n");
    }
}

static uint64_t fixed_entropy(void *context)
{
    (void)context;
    return 0x0F1E2D3C4B5A6978ull;
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
    if (replay && (only_alloc == NULL || g_classes[CL_BYTE] == g_classes[CL_COPY])) {
        printf("overflow: a replay (--case) names its allocator and its class (--class byte or copy)\n");
        usage();
        return 2;
    }
    if (!map_buffers()) {
        return 1;
    }
    /* the same keys in every run, a sweep's and a replay's alike (rtalloc/common.h) */
    rt_set_entropy(fixed_entropy, NULL);
    size_t na = 0;
    const rt_allocator_t *const *all = rt_registry(&na);
    bool registry_ok = tl_check_registry(na);
    if (na > MAX_ALLOCS) {
        na = MAX_ALLOCS;
    }
    bool found = only_alloc == NULL;
    if (replay) {
        unsigned cls = g_classes[CL_BYTE] ? CL_BYTE : CL_COPY;
        rec.print = true;
        g_verbose = true;
        g_stride = 1;
        g_copy_stride = 1;
        for (unsigned ai = 0; ai < na; ai++) {
            if (strcmp(all[ai]->name, only_alloc) == 0) {
                found = true;
                run_from(ai, all[ai], cls, only_case, true);
                const counts_t *c = &sh->c[cls][ai];
                if (c->cases + c->noop + c->outside == 0u) {
                    printf("overflow: %s has no %s case %" PRIu64 " (an operation that needs a used neighbour, or a "
                           "source word the scenario does not have)\n",
                           only_alloc, class_names[cls], only_case);
                }
            }
        }
        if (!found) {
            printf("overflow: no allocator '%s'\n", only_alloc);
            return 2;
        }
        return 0;
    }
    printf("overflow: seed %" PRIu64 "; containment checks %s\n", g_seed,
           g_contain ? "on (after a report or a failed check; --no-contain: off)" : "off (--no-contain)");
    if (g_classes[CL_BYTE]) {
        printf("overflow: byte class, stride %u (%s (size, neighbour, operation) combination; all offsets 1..16 "
               "after the end and before the start, all 12 values)\n",
               g_stride, g_stride == 1u ? "every" : "every K-th");
    }
    if (g_classes[CL_COPY]) {
        printf("overflow: copy class, stride %u (every combination and offset; %s source word)\n", g_copy_stride,
               g_copy_stride == 1u ? "every" : "every K-th");
    }
    fflush(stdout);
    for (unsigned cls = 0; cls < CL_COUNT; cls++) {
        if (!g_classes[cls]) {
            continue;
        }
        for (unsigned ai = 0; ai < na; ai++) {
            if (only_alloc != NULL && strcmp(all[ai]->name, only_alloc) != 0) {
                continue;
            }
            found = true;
            FILE *err = tmpfile();
            san_fd = err != NULL ? fileno(err) : -1;
            double t0 = now_s();
            run_allocator(ai, all[ai], cls, err);
            sh->c[cls][ai].seconds = now_s() - t0;
            if (err != NULL) {
                fclose(err);
                san_fd = -1;
            }
        }
    }
    if (!found) {
        printf("overflow: no allocator '%s'\n", only_alloc);
        return 2;
    }
    uint64_t cases = 0, failed = 0;
    unsigned coverage_gaps = 0;
    for (unsigned cls = 0; cls < CL_COUNT; cls++) {
        if (g_classes[cls]) {
            counts_t tot = print_table(cls, all, na, &coverage_gaps);
            cases += tot.cases;
            failed += tot.failed;
            for (unsigned ai = 0; ai < na; ai++) {
                failed -= escapes_allowed(cls, all[ai], &sh->c[cls][ai]);
            }
        }
    }
    printf("overflow: %" PRIu64 " setup failures, %u coverage gaps\n", sh->setup_failures, coverage_gaps);
    for (unsigned cls = 0; cls < CL_COUNT; cls++) {
        if (g_classes[cls]) {
            print_failures(cls, all, na);
        }
    }
    tl_state.passed = (unsigned long)(cases - failed);
    tl_state.failed = (unsigned long)(failed + sh->setup_failures + coverage_gaps) + (registry_ok ? 0u : 1u);
    return tl_summary("overflow");
}
