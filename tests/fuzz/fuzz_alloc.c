/* SPDX-License-Identifier: MIT */
/*
 * fuzz_alloc.c -- libFuzzer harness: a byte-coded sequence of operations, hostile ones included,
 * against ONE allocator of the registry, checked against a shadow model after every operation.
 *
 * doc/design.md, "Bad input and the handler", as a fuzz target: an application that overflows its
 * blocks, frees pointers the heap never returned, or frees twice must never make the allocator
 * write outside its buffer, hand out memory that overlaps a live block, change a live block's
 * contents, or fault.
 *
 * Input (every field one byte unless said; a read past the end yields 0 and ends the run):
 *   [0] allocator = byte % registry count          [1] heap: bits 0-1 base size (2, 8, 16, 40 KiB,
 *   at least min_buffer), bits 2-5 misalignment 0..15, bits 6-7 extra bytes (0, 8, 100, 1000)
 *   then operations, opcode = byte % OP_COUNT:
 *     MALLOC size16 | FREE idx | REALLOC idx size16 (idx 255: realloc(NULL)) | CALLOC cnt size16 |
 *     MEMALIGN align size16 | USABLE idx | CHECK |
 *     CORRUPT idx mode off (off16 when start-relative) bytes...: mode bit 0 base (0 start,
 *       1 end = p + usable), bits 1-2 value (0 input bytes, 1 xor input byte, 2 0x00, 3 0xFF),
 *       bits 3-5 N-1 (1..8 bytes); offset -16 .. usable+16 from the start, -16..+16 from the end
 *     COPY = CORRUPT idx mode pos sel off with mode bits 5-7 = 100: the overrun of a memcpy
 *       between two blocks of the heap -- N = 1..2W bytes (W the word) read at a source position
 *       and written 1..16 bytes past the end (mode bit 0 = 1: from end + (pos & 15)) or before
 *       the start (0: ending at start - (pos & 15)) of live block idx; N - 1 = (pos >> 4) % 2W;
 *       the source by mode bits 1-2: 0 another block's neighbourhood (block sel, off bit 0 its
 *       start or end, (off >> 1) % 33 - 16 bytes from it), 1 a gap between live blocks by
 *       address (gap sel: off bit 0 its first 4 or its last 2 words), 2 the control area below
 *       the lowest block's 16 bytes (off bit 7 its first, else its last 32 words), 3 any word
 *       of the buffer. The written bytes are other metadata of the same heap: a tagged header,
 *       a valid link, a [footer][header] pair. (COPY lives in CORRUPT's unused mode bits so that
 *       every opcode, and every input of corpus/ and regressions/, keeps its meaning.)
 *     FORGE_FREE / FORGE_REALLOC (+size16) / FORGE_USABLE kind idx off: kind bits 0-2 interior,
 *       before the start, after the end, stale (freed earlier), foreign (guard zones, static,
 *       stack, NULL), wild (anywhere in the buffer); bit 3 rounds the offset to the alignment
 *     REFILL idx: the application rewrites a live block with a new pattern
 *   size16: bits 14-15 choose tiny (0..63), small (0..1023), medium (0..16383) or a boundary
 *   (max_request, +1, -k, SIZE_MAX, SIZE_MAX-k, SIZE_MAX/2+1, the buffer size, 0xFFFFFFFF).
 *
 * The model: live blocks (pointer, requested size, usable size, alignment, "crafted" when the
 * input wrote bytes inside it) and a mirror of the buffer holding the expected contents of every
 * live byte. The buffer sits between two guard zones of GUARD bytes (a pattern, and poisoned
 * for AddressSanitizer so a write is caught at the instruction).
 *
 * Checked after every operation (a failure prints the operation and aborts):
 *   - guards intact; every live block's contents equal the mirror (so only the input's own writes
 *     changed them); every pointer returned lies in the buffer, is aligned, and [p, p + usable)
 *     overlaps no other live block;
 *   - "clean" runs (no input byte written outside the application's own blocks): no report
 *     except TOO_LARGE / OVERFLOW / BAD_ALIGNMENT for requests that deserve it, check() passes,
 *     stats.used_blocks = live blocks, stats.errors = reports, usable_size is stable; a forged
 *     pointer is reported and refused (free changes nothing, realloc returns NULL, usable 0);
 *   - "tainted" runs (a CORRUPT or COPY op wrote metadata or free memory): reports, refusals and
 *     a failing check() are allowed, and a reported free or realloc counts as refused (the block
 *     stays live); everything in the first point still holds;
 *   - containment, at the end of a tainted run on a boundary-tag heap (registry family
 *     RT_FAMILY_HEAP; RTFUZZ_NO_CONTAIN=1 leaves it out): check() finds and fences what is left,
 *     a second check() passes without a report, every live block frees without a report and
 *     counts in stats.frees, and then check() passes, stats.used_blocks is 0, the walk shows no
 *     used block, free + quarantined footprints = capacity, quarantined footprints =
 *     stats.quarantined_bytes, no two free blocks adjacent (the checks tests/contract/overflow.c makes
 *     after a reported case). Not after a run that may have forged a header (below).
 * Not issued (by design, as tests/contract/badinput.c): free, realloc or usable_size of a block after the
 * input chose 4 or more bytes of the 16 before it, with CORRUPT's input or xor values or with a
 * COPY of such bytes from elsewhere (a map of the chosen bytes follows them) (a header forged
 * with a tag the fuzzer solved from the comparisons it traces -- what an application that reads
 * its headers can do: the tags are a check against accident, not a MAC, see doc/hardening.md,
 * "What it does not do");
 * a forged pointer within 64 bytes of a block
 * whose bytes the input chose -- a header forged consistent inside the application's own data
 * is not something an O(1) check can tell from a real one.
 *
 * Built two ways: with -fsanitize=fuzzer (LLVMFuzzerTestOneInput) and, with RTFUZZ_MAIN, as a
 * plain program that replays files or directories (`fuzz_alloc_replay [-v] PATH...`) and writes
 * the seed corpus (`fuzz_alloc_replay --write-seeds DIR`). In either build RTFUZZ_VERBOSE=1
 * traces every operation, RTFUZZ_ONLY=<name> runs every input on that allocator,
 * RTFUZZ_NO_CORRUPT=1 skips the writes of CORRUPT and COPY (clean runs only), and
 * RTFUZZ_NO_CONTAIN=1 leaves out the containment checks.
 */
#if defined(RTFUZZ_MAIN) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* the replay program reads directories */
#endif
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtalloc/registry.h"

static uint64_t fuzz_entropy(void *context)
{
    (void)context;
    return 0x0F1E2D3C4B5A6978ull;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTFUZZ_ASAN 1
#endif
#endif
#if !defined(RTFUZZ_ASAN) && defined(__SANITIZE_ADDRESS__)
#define RTFUZZ_ASAN 1
#endif
#ifdef RTFUZZ_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define MAX_LIVE 48u
#define HIST 16u
#define GUARD 256u
#define GUARD_BYTE 0xA5u
#define CRAFT_MARGIN 64u
#define MAX_HEAP (40u * 1024u + 1000u + 16384u) /* largest base + extra + largest min_buffer */

enum {
    OP_MALLOC,
    OP_FREE,
    OP_REALLOC,
    OP_CALLOC,
    OP_MEMALIGN,
    OP_USABLE,
    OP_CHECK,
    OP_CORRUPT,
    OP_FORGE_FREE,
    OP_FORGE_REALLOC,
    OP_FORGE_USABLE,
    OP_REFILL,
    OP_COUNT
};
/* COPY is CORRUPT whose mode byte has bits 5-7 = 100 (bits 6-7 are unused by CORRUPT): the
 * opcodes, and with them the committed corpus and regressions/, keep their meaning (no input of
 * either has such a CORRUPT: their traces are unchanged). */
#define COPY_MODE_MASK 0xE0u
#define COPY_MODE_BITS 0x80u

enum { FORGE_INTERIOR, FORGE_BEFORE, FORGE_AFTER, FORGE_STALE, FORGE_FOREIGN, FORGE_WILD, FORGE_KINDS };

typedef struct fblock {
    unsigned char *p;
    size_t n;      /* requested */
    size_t usable; /* usable_size when it was handed out (>= n) */
    bool crafted;  /* the input wrote bytes inside [p, p + usable) */
    bool forged;   /* the input chose 4 or more bytes of the 16 before p: its header may be forged */
} fblock_t;

typedef struct fz {
    const rt_allocator_t *d;
    void *h;
    unsigned char *block; /* what malloc returned: [pad][GUARD][mem: size][GUARD] */
    unsigned char *raw;   /* the first guard zone */
    unsigned char *mem;
    size_t size;
    size_t max_request;
    unsigned char expect[MAX_HEAP]; /* expected contents of live bytes, at the same offsets */
    unsigned char chosen[MAX_HEAP]; /* 1: the input chose this byte's value (CORRUPT with input
                                       bytes or xor, or a COPY of such bytes) */
    fblock_t live[MAX_LIVE];
    size_t nlive;
    unsigned char *hist[HIST]; /* pointers freed earlier (stale) */
    size_t nhist;
    size_t hist_at;
    bool tainted;
    unsigned long reports; /* handler calls */
    rt_error_kind_t last_kind;
    const char *last_op;
    unsigned long reports_before; /* at the start of the current op */
    unsigned char fill;           /* next pattern seed */
    const uint8_t *in;
    size_t len;
    size_t at;
    bool eof;
    unsigned op;
    const char *what;
    bool verbose;
} fz_t;

static fz_t fz_state;
static unsigned char static_area[256];
static const char *input_name; /* the replay program: the file being replayed */

/* --- failure and tracing -------------------------------------------------------------------- */

static const char *kind_name(rt_error_kind_t k)
{
    switch (k) {
    case RT_ERR_NONE: return "NONE";
    case RT_ERR_FOREIGN_POINTER: return "FOREIGN_POINTER";
    case RT_ERR_BAD_POINTER: return "BAD_POINTER";
    case RT_ERR_DOUBLE_FREE: return "DOUBLE_FREE";
    case RT_ERR_CORRUPTED: return "CORRUPTED";
    case RT_ERR_OVERFLOW: return "OVERFLOW";
    case RT_ERR_BAD_ALIGNMENT: return "BAD_ALIGNMENT";
    case RT_ERR_TOO_LARGE: return "TOO_LARGE";
    case RT_ERR_BAD_POOL: return "BAD_POOL";
    case RT_ERR_BAD_HOOKS: return "BAD_HOOKS";
    case RT_ERR_BAD_HEAP: return "BAD_HEAP";
    }
    return "?";
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void
fail(const fz_t *f, const char *fmt, ...);

static void fail(const fz_t *f, const char *fmt, ...)
{
    fprintf(stderr, "\nfuzz_alloc: FAIL [%s, heap %zu bytes, op %u %s, %s]: ", f->d != NULL ? f->d->name : "?", f->size,
            f->op, f->what != NULL ? f->what : "", f->tainted ? "tainted" : "clean");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  (last report: %s from %s; %lu reports)\n", kind_name(f->last_kind),
            f->last_op != NULL ? f->last_op : "-", f->reports);
    if (input_name != NULL) {
        fprintf(stderr, "  input: %s (replay: fuzz_alloc_replay -v FILE)\n", input_name);
    }
    fflush(stderr);
    abort();
}

#define REQUIRE(f, cond, ...)       \
    do {                            \
        if (!(cond)) {              \
            fail((f), __VA_ARGS__); \
        }                           \
    } while (0)

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
trace(const fz_t *f, const char *fmt, ...);

static void trace(const fz_t *f, const char *fmt, ...)
{
    if (!f->verbose) {
        return;
    }
    fprintf(stderr, "  op %3u %-8s ", f->op, f->what != NULL ? f->what : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void on_error(void *context, const rt_error_t *e)
{
    fz_t *f = context;
    f->reports++;
    f->last_kind = e->kind;
    f->last_op = e->operation;
    if (f->verbose) {
        fprintf(stderr, "           report %s from %s (%p)\n", kind_name(e->kind),
                e->operation != NULL ? e->operation : "?", e->pointer);
    }
}

static unsigned long new_reports(const fz_t *f) { return f->reports - f->reports_before; }

/* --- input ---------------------------------------------------------------------------------- */

static unsigned rd8(fz_t *f)
{
    if (f->at >= f->len) {
        f->eof = true;
        return 0;
    }
    return f->in[f->at++];
}

static unsigned rd16(fz_t *f)
{
    unsigned hi = rd8(f);
    return (hi << 8) | rd8(f);
}

static size_t rd_size(fz_t *f)
{
    unsigned v = rd16(f);
    unsigned t = v & 0x3FFFu;
    switch (v >> 14) {
    case 0: return t & 63u;
    case 1: return t & 1023u;
    case 2: return t;
    default: break;
    }
    size_t k = (size_t)(t >> 3);
    switch (t & 7u) {
    case 0: return f->max_request;
    case 1: return f->max_request + 1u;
    case 2: return f->max_request > k ? f->max_request - k : 0u;
    case 3: return SIZE_MAX;
    case 4: return SIZE_MAX - k;
    case 5: return SIZE_MAX / 2u + 1u;
    case 6: return f->size;
    default: return (size_t)0xFFFFFFFFu;
    }
}

/* --- the model ------------------------------------------------------------------------------ */

static bool in_buffer(const fz_t *f, const unsigned char *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)f->mem;
    return a >= lo && a - lo <= f->size && n <= f->size - (size_t)(a - lo);
}

static size_t off_of(const fz_t *f, const unsigned char *p) { return (size_t)(p - f->mem); }

static void fill_block(fz_t *f, unsigned char *p, size_t from, size_t n)
{
    unsigned char v = f->fill, step = (unsigned char)((f->fill * 37u) | 1u);
    f->fill = (unsigned char)(f->fill + 101u);
    unsigned char *e = f->expect + off_of(f, p);
    memset(f->chosen + off_of(f, p) + from, 0, n > from ? n - from : 0u);
    for (size_t j = from; j < n; j++) {
        v = (unsigned char)(v + step);
        p[j] = v;
        e[j] = v;
    }
}

static void verify_block(const fz_t *f, const fblock_t *b, const char *when)
{
    const unsigned char *e = f->expect + off_of(f, b->p);
    if (memcmp(b->p, e, b->n) != 0) {
        size_t j = 0;
        while (j < b->n && b->p[j] == e[j]) {
            j++;
        }
        fail(f, "live block %p (%zu bytes) changed at offset %zu (0x%02x, expected 0x%02x) %s", (void *)b->p, b->n, j,
             b->p[j], e[j], when);
    }
}

static void check_guards(const fz_t *f)
{
    unsigned char *zones[2] = {f->raw, f->mem + f->size};
    for (size_t z = 0; z < 2u; z++) {
        UNPOISON(zones[z], GUARD);
        for (size_t j = 0; j < GUARD; j++) {
            if (zones[z][j] != GUARD_BYTE) {
                fail(f, "guard zone %s the buffer written at %s%zu (0x%02x)", z == 0u ? "before" : "after",
                     z == 0u ? "-" : "+", z == 0u ? GUARD - j : j, zones[z][j]);
            }
        }
        POISON(zones[z], GUARD);
    }
}

/* The live block holding address a in [p, p + usable), or NULL. */
static fblock_t *owner(fz_t *f, const unsigned char *a)
{
    for (size_t i = 0; i < f->nlive; i++) {
        fblock_t *b = &f->live[i];
        if (a >= b->p && a < b->p + b->usable) {
            return b;
        }
    }
    return NULL;
}

static fblock_t *find_live(fz_t *f, const unsigned char *p)
{
    for (size_t i = 0; i < f->nlive; i++) {
        if (f->live[i].p == p) {
            return &f->live[i];
        }
    }
    return NULL;
}

/* [p, p + n) overlaps a live block other than `self`. */
static const fblock_t *overlapping(const fz_t *f, const unsigned char *p, size_t n, const fblock_t *self)
{
    for (size_t i = 0; i < f->nlive; i++) {
        const fblock_t *b = &f->live[i];
        if (b != self && p < b->p + b->usable && b->p < p + n) {
            return b;
        }
    }
    return NULL;
}

static bool near_crafted(const fz_t *f, const unsigned char *q)
{
    for (size_t i = 0; i < f->nlive; i++) {
        const fblock_t *b = &f->live[i];
        if (b->crafted && (uintptr_t)q + CRAFT_MARGIN > (uintptr_t)b->p &&
            (uintptr_t)q < (uintptr_t)b->p + b->usable + CRAFT_MARGIN) {
            return true;
        }
    }
    return false;
}

static void remember_freed(fz_t *f, unsigned char *p)
{
    f->hist[f->hist_at] = p;
    f->hist_at = (f->hist_at + 1u) % HIST;
    if (f->nhist < HIST) {
        f->nhist++;
    }
}

static void drop(fz_t *f, fblock_t *b)
{
    remember_freed(f, b->p);
    *b = f->live[--f->nlive];
}

/* A block the allocator just handed out (p != NULL, n requested): validate and add it. The
 * caller has removed the block it replaces (realloc) from the model. Returns the model's entry. */
static fblock_t *accept_block(fz_t *f, unsigned char *p, size_t n, size_t alignment)
{
    REQUIRE(f, n != 0u, "a block %p for a request of 0 bytes", (void *)p);
    REQUIRE(f, in_buffer(f, p, n), "block %p+%zu outside the buffer [%p, +%zu)", (void *)p, n, (void *)f->mem, f->size);
    REQUIRE(f, (uintptr_t)p % f->d->alignment == 0u && (uintptr_t)p % alignment == 0u,
            "block %p not aligned to %zu / %zu", (void *)p, f->d->alignment, alignment);
    size_t usable = n;
    if (f->d->usable_size != NULL) {
        unsigned long before = f->reports;
        size_t u = f->d->usable_size(f->h, p);
        if (f->reports == before && u != 0u) {
            REQUIRE(f, u >= n, "usable_size %zu < requested %zu", u, n);
            usable = u;
        } else {
            REQUIRE(f, f->tainted, "usable_size of a fresh block %p reported or 0", (void *)p);
        }
    }
    REQUIRE(f, in_buffer(f, p, usable), "block %p usable %zu past the buffer's end", (void *)p, usable);
    const fblock_t *o = overlapping(f, p, usable, NULL);
    REQUIRE(f, o == NULL, "block %p+%zu overlaps live block %p+%zu", (void *)p, usable, o != NULL ? (void *)o->p : NULL,
            o != NULL ? o->usable : 0u);
    REQUIRE(f, f->nlive < MAX_LIVE, "model full");
    fblock_t *b = &f->live[f->nlive++];
    b->p = p;
    b->n = n;
    b->usable = usable;
    b->crafted = false;
    b->forged = false;
    return b;
}

/* Reports of the current op must be none, or (when allowed) only of the kinds given. */
static void expect_reports(const fz_t *f, bool allowed, rt_error_kind_t k1, rt_error_kind_t k2)
{
    if (f->tainted || new_reports(f) == 0u) {
        return;
    }
    REQUIRE(f, allowed && (f->last_kind == k1 || f->last_kind == k2), "unexpected report %s from %s",
            kind_name(f->last_kind), f->last_op != NULL ? f->last_op : "?");
}

/* Requests of n bytes (+ alignment) that may be refused as TOO_LARGE. */
static bool may_be_too_large(const fz_t *f, size_t n, size_t alignment)
{
    size_t extra = alignment + 256u;
    return n > f->max_request || extra > f->max_request - n;
}

/* --- operations ----------------------------------------------------------------------------- */

static void op_malloc(fz_t *f)
{
    size_t n = rd_size(f);
    if (f->nlive >= MAX_LIVE) {
        return;
    }
    unsigned char *p = f->d->malloc(f->h, n);
    trace(f, "malloc(%zu) = %p", n, (void *)p);
    if (p == NULL) {
        expect_reports(f, n > f->max_request, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE);
        return;
    }
    expect_reports(f, false, RT_ERR_NONE, RT_ERR_NONE);
    fblock_t *b = accept_block(f, p, n, 1);
    fill_block(f, b->p, 0, n);
}

static void op_calloc(fz_t *f)
{
    unsigned c = rd8(f);
    size_t size = rd_size(f);
    size_t count = (c & 0x80u) != 0u ? SIZE_MAX / 2u + (c & 7u) : 1u + (c & 7u);
    if (f->nlive >= MAX_LIVE || f->d->calloc == NULL) {
        return;
    }
    bool overflows = size != 0u && count > SIZE_MAX / size;
    size_t n = overflows ? SIZE_MAX : count * size;
    unsigned char *p = f->d->calloc(f->h, count, size);
    trace(f, "calloc(%zu, %zu) = %p", count, size, (void *)p);
    if (p == NULL) {
        expect_reports(f, overflows || n > f->max_request, RT_ERR_OVERFLOW, RT_ERR_TOO_LARGE);
        return;
    }
    expect_reports(f, false, RT_ERR_NONE, RT_ERR_NONE);
    REQUIRE(f, !overflows, "calloc(%zu, %zu) overflows but returned %p", count, size, (void *)p);
    fblock_t *b = accept_block(f, p, n, 1);
    for (size_t j = 0; j < n; j++) {
        REQUIRE(f, p[j] == 0u, "calloc block %p not zero at %zu", (void *)p, j);
    }
    fill_block(f, b->p, 0, n);
}

static void op_memalign(fz_t *f)
{
    static const size_t odd[8] = {0u, 3u, 24u, 48u, 100u, SIZE_MAX, SIZE_MAX / 2u, 4097u};
    unsigned a = rd8(f);
    size_t n = rd_size(f);
    bool pow2 = a < 0xF8u;
    size_t alignment = pow2 ? (size_t)1 << (a % 13u) : odd[a & 7u];
    if (f->nlive >= MAX_LIVE || f->d->memalign == NULL) {
        return;
    }
    unsigned char *p = f->d->memalign(f->h, alignment, n);
    trace(f, "memalign(%zu, %zu) = %p", alignment, n, (void *)p);
    if (p == NULL) {
        expect_reports(f, !pow2 || may_be_too_large(f, n, alignment), pow2 ? RT_ERR_TOO_LARGE : RT_ERR_BAD_ALIGNMENT,
                       RT_ERR_TOO_LARGE);
        return;
    }
    expect_reports(f, false, RT_ERR_NONE, RT_ERR_NONE);
    REQUIRE(f, pow2, "memalign(%zu) accepted an alignment that is not a power of two", alignment);
    fblock_t *b = accept_block(f, p, n, alignment);
    fill_block(f, b->p, 0, n);
}

static fblock_t *pick(fz_t *f, unsigned idx) { return f->nlive == 0u ? NULL : &f->live[idx % f->nlive]; }

static void do_free(fz_t *f, fblock_t *b)
{
    verify_block(f, b, "before free");
    unsigned char *p = b->p;
    f->d->free(f->h, p);
    trace(f, "free(%p) [%zu bytes]", (void *)p, b->n);
    if (new_reports(f) != 0u) {
        REQUIRE(f, f->tainted, "free of a live block %p reported %s", (void *)p, kind_name(f->last_kind));
        return; /* refused: still live */
    }
    drop(f, b);
}

static void op_free(fz_t *f)
{
    fblock_t *b = pick(f, rd8(f));
    if (b != NULL && b->forged) {
        return; /* not issued: a header the input chose (see the top) */
    }
    if (b == NULL) {
        f->d->free(f->h, NULL);
        trace(f, "free(NULL)");
        REQUIRE(f, new_reports(f) == 0u, "free(NULL) reported");
        return;
    }
    do_free(f, b);
}

/* realloc(b->p, n) of a live block. */
static void do_realloc(fz_t *f, fblock_t *b, size_t n)
{
    verify_block(f, b, "before realloc");
    unsigned char *p = b->p;
    size_t old_n = b->n;
    unsigned char *q = f->d->realloc(f->h, p, n);
    trace(f, "realloc(%p [%zu], %zu) = %p", (void *)p, old_n, n, (void *)q);
    bool reported = new_reports(f) != 0u;
    if (q == NULL) {
        if (n == 0u && !reported) {
            drop(f, b); /* realloc(p, 0) frees p */
            return;
        }
        expect_reports(f, n != 0u && n > f->max_request, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE);
        REQUIRE(f, n != 0u || f->tainted, "realloc(p, 0) reported");
        verify_block(f, b, "after a failed realloc");
        return;
    }
    expect_reports(f, false, RT_ERR_NONE, RT_ERR_NONE);
    REQUIRE(f, n != 0u, "realloc(p, 0) returned %p", (void *)q);
    /* the old block is gone (moved or resized): out of the model, its expected bytes kept */
    size_t keep = old_n < n ? old_n : n;
    size_t from = off_of(f, p);
    unsigned char *pp = b->p;
    *b = f->live[--f->nlive];
    if (q != pp) {
        remember_freed(f, pp);
    }
    fblock_t *nb = accept_block(f, q, n, 1);
    memmove(f->expect + off_of(f, q), f->expect + from, keep);
    memmove(f->chosen + off_of(f, q), f->chosen + from, keep);
    if (memcmp(q, f->expect + off_of(f, q), keep) != 0) {
        fail(f, "realloc %p (%zu) -> %p (%zu) lost the contents", (void *)pp, old_n, (void *)q, n);
    }
    fill_block(f, nb->p, keep, n);
}

static void op_realloc(fz_t *f)
{
    unsigned idx = rd8(f);
    size_t n = rd_size(f);
    if (f->d->realloc == NULL) {
        return;
    }
    fblock_t *b = idx == 255u ? NULL : pick(f, idx);
    if (b != NULL && b->forged) {
        return; /* not issued: a header the input chose (see the top) */
    }
    if (b == NULL) {
        if (f->nlive >= MAX_LIVE) {
            return;
        }
        unsigned char *p = f->d->realloc(f->h, NULL, n);
        trace(f, "realloc(NULL, %zu) = %p", n, (void *)p);
        if (p == NULL) {
            expect_reports(f, n > f->max_request, RT_ERR_TOO_LARGE, RT_ERR_TOO_LARGE);
            return;
        }
        expect_reports(f, false, RT_ERR_NONE, RT_ERR_NONE);
        fblock_t *nb = accept_block(f, p, n, 1);
        fill_block(f, nb->p, 0, n);
        return;
    }
    do_realloc(f, b, n);
}

static void op_usable(fz_t *f)
{
    fblock_t *b = pick(f, rd8(f));
    if (b == NULL || b->forged || f->d->usable_size == NULL) {
        return;
    }
    size_t u = f->d->usable_size(f->h, b->p);
    trace(f, "usable_size(%p) = %zu [recorded %zu]", (void *)b->p, u, b->usable);
    if (!f->tainted) {
        REQUIRE(f, new_reports(f) == 0u && u == b->usable, "usable_size(%p) = %zu, was %zu", (void *)b->p, u,
                b->usable);
        return;
    }
    if (new_reports(f) == 0u && u != 0u) {
        /* undetected: the answer must still be safe to use */
        REQUIRE(f, in_buffer(f, b->p, u), "usable_size(%p) = %zu runs past the buffer", (void *)b->p, u);
        const fblock_t *o = overlapping(f, b->p, u, b);
        REQUIRE(f, o == NULL, "usable_size(%p) = %zu reaches into live block %p", (void *)b->p, u,
                o != NULL ? (void *)o->p : NULL);
    }
}

static void op_check(fz_t *f)
{
    if (f->d->check == NULL) {
        return;
    }
    bool ok = f->d->check(f->h);
    trace(f, "check() = %d", (int)ok);
    REQUIRE(f, ok || f->tainted, "check() failed on a clean heap");
    expect_reports(f, false, RT_ERR_NONE, RT_ERR_NONE);
}

static void op_refill(fz_t *f)
{
    fblock_t *b = pick(f, rd8(f));
    if (b == NULL) {
        return;
    }
    verify_block(f, b, "before refill");
    fill_block(f, b->p, 0, b->n);
    trace(f, "refill(%p, %zu)", (void *)b->p, b->n);
}

static bool env_flag(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' && *v != '0';
}

/* The live blocks by address (indices into f->live); returns their count. */
static size_t live_by_address(const fz_t *f, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nlive; i++) {
        size_t j = n++;
        for (; j > 0u && f->live[idx[j - 1u]].p > f->live[i].p; j--) {
            idx[j] = idx[j - 1u];
        }
        idx[j] = i;
    }
    return n;
}

/* Where COPY reads: a source position chosen by kind (bits 5-6 of its mode byte), sel and off;
 * false when there is none. */
static bool copy_source(fz_t *f, unsigned kind, unsigned sel, unsigned off, uintptr_t *src, const char **name)
{
    const uintptr_t w = sizeof(void *);
    uintptr_t lo = (uintptr_t)f->mem;
    size_t idx[MAX_LIVE];
    size_t n = live_by_address(f, idx);
    switch (kind) {
    case 0: { /* another block's neighbourhood: -16..+16 bytes from its start or its end */
        const fblock_t *b = pick(f, sel);
        if (b == NULL) {
            return false;
        }
        *name = (off & 1u) != 0u ? "block end" : "block start";
        *src = (uintptr_t)b->p + ((off & 1u) != 0u ? b->usable : 0u) + (uintptr_t)((ptrdiff_t)((off >> 1) % 33u) - 16);
        return true;
    }
    case 1: { /* a gap between live blocks (or after the last): its first 4 or its last 2 words */
        if (n == 0u) {
            return false;
        }
        size_t g = sel % n;
        const fblock_t *b = &f->live[idx[g]];
        uintptr_t gs = ((uintptr_t)b->p + b->usable + w - 1u) & ~(w - 1u);
        uintptr_t ge = (g + 1u < n ? (uintptr_t)f->live[idx[g + 1u]].p : lo + f->size) & ~(w - 1u);
        if (ge <= gs) {
            return false;
        }
        *name = (off & 1u) != 0u ? "gap end" : "gap start";
        *src = (off & 1u) != 0u ? ge - w * (1u + (off >> 1) % 2u) : gs + w * ((off >> 1) % 4u);
        return *src >= gs && *src < ge;
    }
    case 2: { /* the control area, below the lowest live block and the 16 bytes before it (kind 0
               * reaches those): its first or its last 32 words */
        uintptr_t ce = (n != 0u ? (uintptr_t)f->live[idx[0]].p - 16u : lo + f->size) & ~(w - 1u);
        uintptr_t cs = (lo + w - 1u) & ~(w - 1u);
        *name = "control";
        *src = (off & 0x80u) != 0u ? cs + w * (off & 31u) : ce - w * (1u + (off & 31u));
        return *src >= cs && *src < ce;
    }
    default: /* any word of the buffer */
        *name = "wild";
        *src = ((lo + w - 1u) & ~(w - 1u)) + (((size_t)sel << 8 | off) * w) % (f->size - w);
        return true;
    }
}

/* The application copies 1..2W bytes, read at a position of the heap (another block's
 * neighbourhood, a gap, the control area, any word), to 1..16 bytes past the end or before the
 * start of a live block: the overrun of a memcpy between two blocks of the heap, whose bytes are
 * other metadata of the same heap (a correctly tagged header, a valid link). Not written with
 * RTFUZZ_NO_CORRUPT=1. */
static void op_copy(fz_t *f, fblock_t *b, unsigned mode, bool disabled)
{
    unsigned pos = rd8(f), sel = rd8(f), off = rd8(f);
    bool past_end = (mode & 1u) != 0u;
    size_t n = 1u + (pos >> 4) % (2u * sizeof(void *));
    unsigned kind = (mode >> 1) & 3u;
    f->what = "copy";
    const char *name = "?";
    uintptr_t src = 0;
    if (b == NULL || disabled || !copy_source(f, kind, sel, off, &src, &name)) {
        return;
    }
    uintptr_t lo = (uintptr_t)f->mem, hi = lo + f->size;
    if (src < lo || src > hi || n > hi - src) {
        return; /* the harness reads only the buffer */
    }
    uintptr_t dst = past_end ? (uintptr_t)b->p + b->usable + (pos & 15u) : (uintptr_t)b->p - (pos & 15u) - n;
    unsigned char bytes[2u * sizeof(void *)], was[2u * sizeof(void *)];
    memcpy(bytes, (const void *)src, n);
    size_t from = off_of(f, (const unsigned char *)src);
    memcpy(was, f->chosen + from, n);
    bool unowned = false;
    size_t chosen = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = dst + i;
        if (a < lo || a >= hi) {
            continue; /* the harness itself never writes outside the buffer */
        }
        unsigned char *c = (unsigned char *)a;
        fblock_t *o = owner(f, c);
        if (o != NULL) {
            o->crafted = true;
            if (c < o->p + o->n) {
                f->expect[off_of(f, c)] = bytes[i];
            }
        } else {
            unowned = true;
            if (*c != bytes[i]) {
                f->tainted = true;
            }
        }
        f->chosen[off_of(f, c)] = was[i];
        chosen += was[i];
        *c = bytes[i];
    }
    if (chosen >= 4u && unowned) { /* bytes the input chose, moved over a block's header */
        for (size_t i = 0; i < f->nlive; i++) {
            uintptr_t p = (uintptr_t)f->live[i].p;
            if (dst < p && dst + n > p - 16u) {
                f->live[i].forged = true;
                f->tainted = true;
            }
        }
    }
    trace(f, "copy(%zu bytes from %p = +%zu (%s) to %p %s %+td)", n, (void *)src, (size_t)(src - lo), name,
          (void *)b->p, past_end ? "end" : "start", past_end ? (ptrdiff_t)(pos & 15u) : -(ptrdiff_t)((pos & 15u) + n));
}

/* The application writes N bytes at an offset from a live block's start or end (read from the
 * input always; not written with RTFUZZ_NO_CORRUPT=1, to hunt in clean runs only). */
static void op_corrupt(fz_t *f)
{
    static int disabled = -1;
    if (disabled < 0) {
        disabled = env_flag("RTFUZZ_NO_CORRUPT") ? 1 : 0;
    }
    fblock_t *b = pick(f, rd8(f));
    unsigned mode = rd8(f);
    if ((mode & COPY_MODE_MASK) == COPY_MODE_BITS) {
        op_copy(f, b, mode, disabled != 0);
        return;
    }
    bool from_end = (mode & 1u) != 0u;
    unsigned value = (mode >> 1) & 3u;
    size_t count = 1u + ((mode >> 3) & 7u);
    if (b == NULL || disabled != 0) {
        return;
    }
    ptrdiff_t off;
    unsigned char *base;
    if (from_end) {
        base = b->p + b->usable;
        off = (ptrdiff_t)(rd8(f) % 33u) - 16;
    } else {
        base = b->p;
        off = (ptrdiff_t)((size_t)rd16(f) % (b->usable + 33u)) - 16;
    }
    unsigned char bytes[8];
    for (size_t i = 0; i < count; i++) {
        bytes[i] = value <= 1u ? (unsigned char)rd8(f) : 0u;
    }
    uintptr_t at = (uintptr_t)base + (uintptr_t)off; /* off may be negative: wraps as intended */
    uintptr_t lo = (uintptr_t)f->mem, hi = lo + f->size;
    bool unowned = false; /* a chosen byte landed outside every live block (allocator memory) */
    for (size_t i = 0; i < count; i++) {
        uintptr_t a = at + i;
        if (a < lo || a >= hi) {
            continue; /* the harness itself never writes outside the buffer */
        }
        unsigned char *c = (unsigned char *)a;
        unsigned char v;
        switch (value) {
        case 0: v = bytes[i]; break;
        case 1: v = (unsigned char)(*c ^ (bytes[i] != 0u ? bytes[i] : 1u)); break;
        case 2: v = 0x00u; break;
        default: v = 0xFFu; break;
        }
        fblock_t *o = owner(f, c);
        if (o != NULL) {
            o->crafted = true;
            if (c < o->p + o->n) {
                f->expect[off_of(f, c)] = v;
            }
        } else {
            unowned = true;
            if (*c != v) {
                f->tainted = true;
            }
        }
        f->chosen[off_of(f, c)] = value <= 1u ? 1u : 0u;
        *c = v;
    }
    if (value <= 1u && count >= 4u && unowned) { /* chosen bytes over a block's header: it may be forged */
        for (size_t i = 0; i < f->nlive; i++) {
            uintptr_t p = (uintptr_t)f->live[i].p;
            if (at < p && at + count > p - 16u) {
                f->live[i].forged = true;
                f->tainted = true; /* a block is kept out of the end's accounting */
            }
        }
    }
    trace(f, "corrupt(%p %s %+td, %zu bytes, %s)", (void *)b->p, from_end ? "end" : "start", off, count,
          value == 0u   ? "input"
          : value == 1u ? "xor"
          : value == 2u ? "0x00"
                        : "0xFF");
}

/* A pointer the heap never returned (or returned and took back), or NULL when none can be made
 * (the caller treats a live block's own pointer as the legitimate call it is). */
static unsigned char *forge(fz_t *f, unsigned kind, unsigned idx, unsigned off, unsigned char *stack, const char **name)
{
    fblock_t *b = pick(f, idx);
    bool round = (kind & 8u) != 0u;
    size_t al = f->d->alignment;
    size_t k = round ? ((size_t)off / al + 1u) * al : (size_t)off + 1u;
    switch (kind & 7u) {
    case FORGE_INTERIOR: {
        *name = "interior";
        if (b == NULL) {
            return NULL;
        }
        size_t j = k % (b->usable > 1u ? b->usable : 2u);
        return b->p + (j != 0u ? j : 1u);
    }
    case FORGE_BEFORE: *name = "before"; return b == NULL || (size_t)(b->p - f->mem) < k ? NULL : b->p - k;
    case FORGE_AFTER:
        *name = "after";
        return b == NULL || k - 1u > f->size - off_of(f, b->p) - b->usable ? NULL : b->p + b->usable + (k - 1u);
    case FORGE_STALE: *name = "stale"; return f->nhist == 0u ? NULL : f->hist[idx % f->nhist];
    case FORGE_FOREIGN:
        switch (idx % 6u) {
        case 0: *name = "guard-before"; return f->mem - 1u - (off % (GUARD - 16u));
        case 1: *name = "guard-after"; return f->mem + f->size + (off % (GUARD - 16u));
        case 2: *name = "static"; return static_area + (off % 128u) + 64u;
        case 3: *name = "stack"; return stack + (off % 32u) + 16u;
        case 4: *name = "buffer-end"; return f->mem + f->size;
        default: *name = "NULL"; return NULL;
        }
    default: {
        *name = "wild";
        size_t at = (((size_t)idx << 8) | off) * 7u % f->size;
        return f->mem + (round ? at / al * al : at);
    }
    }
}

static void op_forge(fz_t *f, unsigned which)
{
    unsigned kind = rd8(f), idx = rd8(f), off = rd8(f);
    size_t n = which == OP_FORGE_REALLOC ? rd_size(f) : 0u;
    unsigned char stack[64];
    memset(stack, 0x5A, sizeof stack);
    if ((kind & 7u) >= FORGE_KINDS) {
        kind = FORGE_WILD;
    }
    if (which == OP_FORGE_REALLOC && f->nlive >= MAX_LIVE) {
        return; /* no room in the model for what an undetected realloc might return */
    }
    const char *name = "?";
    unsigned char *q = forge(f, kind, idx, off, stack, &name);
    if (q == NULL) {
        if ((kind & 7u) == FORGE_FOREIGN && which == OP_FORGE_FREE) {
            f->d->free(f->h, NULL);
            trace(f, "free(NULL)");
            REQUIRE(f, new_reports(f) == 0u, "free(NULL) reported");
        }
        return;
    }
    fblock_t *b = find_live(f, q);
    if (b != NULL) { /* a live block's own pointer: a legitimate call */
        if (which == OP_FORGE_FREE) {
            do_free(f, b);
        } else if (which == OP_FORGE_REALLOC) {
            do_realloc(f, b, n);
        } else {
            size_t u = f->d->usable_size(f->h, q);
            REQUIRE(f, f->tainted || (new_reports(f) == 0u && u == b->usable), "usable_size(%p) = %zu, was %zu",
                    (void *)q, u, b->usable);
        }
        return;
    }
    if (near_crafted(f, q)) {
        return; /* a header the input may have forged in its own data (see the top) */
    }
    bool inside = in_buffer(f, q, 1);
    if (which == OP_FORGE_FREE) {
        f->d->free(f->h, q);
        trace(f, "free(%p) forged %s%s", (void *)q, name, inside ? "" : " (outside)");
        REQUIRE(f, f->tainted || new_reports(f) != 0u, "forged free(%p) (%s) accepted silently", (void *)q, name);
    } else if (which == OP_FORGE_REALLOC) {
        unsigned char *r = f->d->realloc(f->h, q, n);
        trace(f, "realloc(%p, %zu) forged %s = %p", (void *)q, n, name, (void *)r);
        REQUIRE(f, f->tainted || (new_reports(f) != 0u && r == NULL), "forged realloc(%p) (%s) = %p, %lu reports",
                (void *)q, name, (void *)r, new_reports(f));
        if (r != NULL) { /* tainted heap, undetected: at least the new block must be sound */
            fblock_t *nb = accept_block(f, r, n, 1);
            fill_block(f, nb->p, 0, n);
        }
    } else {
        size_t u = f->d->usable_size(f->h, q);
        trace(f, "usable_size(%p) forged %s = %zu", (void *)q, name, u);
        REQUIRE(f, f->tainted || (new_reports(f) != 0u && u == 0u), "forged usable_size(%p) (%s) = %zu", (void *)q,
                name, u);
    }
}

/* --- the run -------------------------------------------------------------------------------- */

static void after_op(fz_t *f)
{
    check_guards(f);
    for (size_t i = 0; i < f->nlive; i++) {
        verify_block(f, &f->live[i], "after the op");
    }
    if (f->tainted) {
        return;
    }
    if (f->d->stats != NULL) {
        rt_stats_t s;
        f->d->stats(f->h, &s);
        REQUIRE(f, s.used_blocks == f->nlive, "stats.used_blocks %zu, model %zu", s.used_blocks, f->nlive);
        REQUIRE(f, s.errors == f->reports, "stats.errors %llu, handler calls %lu", (unsigned long long)s.errors,
                f->reports);
    }
}

/* RTFUZZ_NO_CONTAIN=1: no containment checks at the end of a tainted run (the library before
 * its containment). */
static bool contain_on(void)
{
    static int on = -1;
    if (on < 0) {
        on = env_flag("RTFUZZ_NO_CONTAIN") ? 0 : 1;
    }
    return on != 0;
}

typedef struct walk_sum {
    size_t blocks, used, free_bytes, q_bytes, adjacent, q_live;
    uintptr_t prev_end;
    bool prev_free;
} walk_sum_t;

/* The fenced regions a walk reports (containment may swallow several damaged blocks into one). */
#define MAX_FENCED 64u
typedef struct fenced_set {
    size_t n;
    uintptr_t lo[MAX_FENCED], hi[MAX_FENCED]; /* [first byte of the header, end) */
    bool dead[MAX_FENCED];                    /* not live: no free of it is accepted */
} fenced_set_t;

static bool walk_fenced(void *context, const rt_block_info_t *b)
{
    fenced_set_t *fs = context;
    if (b->quarantined && fs->n < MAX_FENCED) {
        uintptr_t end = (uintptr_t)b->pointer + b->size;
        fs->lo[fs->n] = end - b->footprint;
        fs->hi[fs->n] = end;
        fs->dead[fs->n] = !b->used;
        fs->n++;
    }
    return fs->n < MAX_FENCED;
}

/* True iff the live block p lies inside a fenced region that starts before its header, or that
 * the walk calls dead: swallowed with another damaged block's. */
static bool swallowed(const fenced_set_t *fs, const unsigned char *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    for (size_t i = 0; i < fs->n; i++) {
        if (a >= fs->lo[i] + sizeof(size_t) && a + n <= fs->hi[i] && (a > fs->lo[i] + sizeof(size_t) || fs->dead[i])) {
            return true;
        }
    }
    return false;
}

static bool walk_sum(void *context, const rt_block_info_t *b)
{
    walk_sum_t *w = context;
    uintptr_t end = (uintptr_t)b->pointer + b->size;
    bool is_free = !b->used && !b->quarantined;
    w->blocks++;
    w->used += b->used ? 1u : 0u;
    w->q_live += b->used && b->quarantined ? 1u : 0u;
    if (b->quarantined) {
        w->q_bytes += b->footprint;
    } else if (!b->used) {
        w->free_bytes += b->footprint;
    }
    if (is_free && w->prev_free && w->prev_end == end - b->footprint) {
        w->adjacent++;
    }
    w->prev_free = is_free;
    w->prev_end = end;
    return w->blocks <= MAX_HEAP; /* more blocks than bytes: a walk that does not end */
}

/* The containment at the end of a tainted run on a boundary-tag heap (the same checks as
 * tests/contract/overflow.c after a reported case): a check() finds and fences whatever damage is left,
 * and a second check() passes without a report; every live block is freed without a report, each
 * free counted in stats.frees; then check() passes, no block is used (stats and walk), the walk's
 * free and quarantined footprints sum to the capacity, its quarantined footprints equal
 * stats.quarantined_bytes, and no two free blocks are adjacent. Several damaged headers side by
 * side may be fenced as one region (src/heap/heap_common.h): a live block inside such a region,
 * not at its start, may have its free refused (BAD_POINTER), and a fenced live region no free
 * names stays counted; the overflow suite, one damage at a time, allows neither. Not when the
 * input may have forged a header (a block marked forged: see the top). */
static void contain_end(fz_t *f)
{
    const rt_allocator_t *d = f->d;
    for (size_t i = 0; i < f->nlive; i++) {
        if (f->live[i].forged) {
            return;
        }
    }
    f->what = "contain";
    f->reports_before = f->reports;
    if (d->check != NULL) {
        bool first = d->check(f->h);
        trace(f, "check() = %d (finds and fences what is left)", (int)first);
        f->reports_before = f->reports;
        bool ok = d->check(f->h);
        trace(f, "check() = %d (again)", (int)ok);
        REQUIRE(f, ok && new_reports(f) == 0u, "containment: the second check() %s%s", ok ? "passed" : "failed",
                new_reports(f) != 0u ? " and reported" : "");
    }
    fenced_set_t fs;
    memset(&fs, 0, sizeof fs);
    if (d->walk != NULL) {
        d->walk(f->h, walk_fenced, &fs);
    }
    while (f->nlive > 0u) {
        fblock_t *b = &f->live[f->nlive - 1u];
        rt_stats_t s0, s1;
        memset(&s0, 0, sizeof s0);
        memset(&s1, 0, sizeof s1);
        f->reports_before = f->reports;
        if (d->stats != NULL) {
            d->stats(f->h, &s0);
        }
        verify_block(f, b, "before its free (containment)");
        unsigned char *p = b->p;
        d->free(f->h, p);
        trace(f, "free(%p) [%zu bytes] (containment)", (void *)p, b->n);
        if (d->stats != NULL) {
            d->stats(f->h, &s1);
        }
        if (new_reports(f) != 0u && f->last_kind == RT_ERR_BAD_POINTER && swallowed(&fs, p, b->n)) {
            trace(f, "  (inside a fenced region that swallowed it with its damaged neighbour)");
            drop(f, b);
            continue;
        }
        REQUIRE(f, new_reports(f) == 0u, "containment: free(%p) of a live block reported %s", (void *)p,
                kind_name(f->last_kind));
        REQUIRE(f, d->stats == NULL || s1.frees == s0.frees + 1u,
                "containment: free(%p) of a live block: stats.frees %llu -> %llu", (void *)p,
                (unsigned long long)s0.frees, (unsigned long long)s1.frees);
        drop(f, b);
        after_op(f);
    }
    f->reports_before = f->reports;
    REQUIRE(f, d->check == NULL || d->check(f->h), "containment: check() failed after freeing every block");
    rt_stats_t s;
    memset(&s, 0, sizeof s);
    walk_sum_t w;
    memset(&w, 0, sizeof w);
    if (d->walk != NULL) {
        d->walk(f->h, walk_sum, &w);
    }
    if (d->stats != NULL) {
        d->stats(f->h, &s);
        REQUIRE(f, s.used_blocks == w.q_live,
                "containment: every block freed, but stats.used_blocks %zu (%zu fenced live)", s.used_blocks, w.q_live);
    }
    if (d->walk != NULL) {
        trace(f,
              "walk: %zu blocks, %zu used, %zu free bytes, %zu quarantined, %zu adjacent free pairs; capacity %zu, "
              "stats.quarantined_bytes %zu",
              w.blocks, w.used, w.free_bytes, w.q_bytes, w.adjacent, s.capacity, s.quarantined_bytes);
        REQUIRE(f, w.used == w.q_live, "containment: every block freed, but the walk shows %zu used", w.used);
        REQUIRE(f, d->stats == NULL || w.free_bytes + w.q_bytes == s.capacity,
                "containment: the walk's free %zu + quarantined %zu bytes != capacity %zu", w.free_bytes, w.q_bytes,
                s.capacity);
        REQUIRE(f, d->stats == NULL || w.q_bytes == s.quarantined_bytes,
                "containment: stats.quarantined_bytes %zu, the walk's quarantined footprints %zu", s.quarantined_bytes,
                w.q_bytes);
        REQUIRE(f, w.adjacent == 0u, "containment: %zu pairs of adjacent free blocks", w.adjacent);
    }
    REQUIRE(f, new_reports(f) == 0u, "containment: a report after freeing every block (%s from %s)",
            kind_name(f->last_kind), f->last_op != NULL ? f->last_op : "?");
}

/* byte % registry count, or the allocator RTFUZZ_ONLY names (a long run on one allocator) */
static const rt_allocator_t *pick_allocator(unsigned byte)
{
    static const rt_allocator_t *only;
    static bool looked;
    if (!looked) {
        const char *name = getenv("RTFUZZ_ONLY");
        only = name != NULL && *name != '\0' ? rt_registry_find(name) : NULL;
        if (name != NULL && *name != '\0' && only == NULL) {
            fprintf(stderr, "fuzz_alloc: RTFUZZ_ONLY=%s: no such allocator\n", name);
            exit(2);
        }
        looked = true;
    }
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    return only != NULL ? only : all[byte % count];
}

static size_t heap_size(const rt_allocator_t *d, unsigned cfg)
{
    static const size_t base[4] = {2048u, 8192u, 16384u, 40960u};
    static const size_t extra[4] = {0u, 8u, 100u, 1000u};
    size_t size = base[cfg & 3u];
    size_t min = d->min_buffer != NULL ? d->min_buffer() : 0u;
    if (size < min) {
        size = min;
    }
    return size + extra[(cfg >> 6) & 3u];
}

static int run(const uint8_t *data, size_t len, bool verbose)
{
    fz_t *f = &fz_state;
    memset(f, 0, offsetof(fz_t, expect));
    memset(f->chosen, 0, sizeof f->chosen);
    memset(&f->live, 0, sizeof *f - offsetof(fz_t, live));
    f->in = data;
    f->len = len;
    f->verbose = verbose;
    if (len < 2u) {
        return 0;
    }
    f->d = pick_allocator(rd8(f));
    unsigned cfg = rd8(f);
    f->size = heap_size(f->d, cfg);
    if (f->size > MAX_HEAP || f->d->create == NULL) {
        return 0;
    }
    size_t misalign = (cfg >> 2) & 15u;
    f->block = malloc(GUARD + f->size + GUARD + misalign + 64u);
    if (f->block == NULL) {
        return 0;
    }
    /* mem: misalign bytes past a 64-byte boundary, at least GUARD bytes into the block */
    uintptr_t at = ((uintptr_t)f->block + GUARD + 63u) & ~(uintptr_t)63u;
    f->mem = f->block + (size_t)(at - (uintptr_t)f->block) + misalign;
    f->raw = f->mem - GUARD;
    memset(f->raw, GUARD_BYTE, GUARD);
    memset(f->mem + f->size, GUARD_BYTE, GUARD);
    POISON(f->raw, GUARD);
    POISON(f->mem + f->size, GUARD);
    f->what = "create";
    /* the same key for the same input in every run (rtalloc/common.h): a constant source and a
     * cleared buffer (the new key differs from the one the buffer held) */
    rt_set_entropy(fuzz_entropy, NULL);
    memset(f->mem, 0, f->size);
    f->h = f->d->create(f->mem, f->size);
    REQUIRE(f, f->h != NULL, "create over %zu bytes at +%zu failed", f->size, misalign);
    if (f->d->set_handler != NULL) {
        f->d->set_handler(f->h, on_error, f);
    }
    f->max_request = f->d->max_request != NULL ? f->d->max_request(f->h) : f->size;
    trace(f, "%s over %zu bytes at +%zu (max_request %zu)", f->d->name, f->size, misalign, f->max_request);
    check_guards(f);

    static const char *const names[OP_COUNT] = {"malloc", "free",    "realloc", "calloc",   "memalign", "usable",
                                                "check",  "corrupt", "ffree",   "frealloc", "fusable",  "refill"};
    for (f->op = 0; !f->eof; f->op++) {
        unsigned code = rd8(f);
        if (f->eof) {
            break;
        }
        code %= OP_COUNT;
        f->what = names[code];
        f->reports_before = f->reports;
        switch (code) {
        case OP_MALLOC: op_malloc(f); break;
        case OP_FREE: op_free(f); break;
        case OP_REALLOC: op_realloc(f); break;
        case OP_CALLOC: op_calloc(f); break;
        case OP_MEMALIGN: op_memalign(f); break;
        case OP_USABLE: op_usable(f); break;
        case OP_CHECK: op_check(f); break;
        case OP_CORRUPT: op_corrupt(f); break;
        case OP_REFILL: op_refill(f); break;
        default: op_forge(f, code); break;
        }
        after_op(f);
    }

    /* the end: a clean heap checks and gives every block back; a tainted boundary-tag heap
     * fences what it finds and then does the same (contain_end) */
    f->what = "end";
    f->reports_before = f->reports;
    if (!f->tainted && f->d->check != NULL) {
        REQUIRE(f, f->d->check(f->h), "check() failed at the end of a clean run");
    }
    if (f->tainted && f->d->family == RT_FAMILY_HEAP && contain_on()) {
        contain_end(f);
    }
    while (f->nlive > 0u) {
        size_t before = f->nlive;
        f->reports_before = f->reports;
        if (f->live[f->nlive - 1u].forged) {
            f->nlive--; /* a header the input chose: never given back (see the top) */
            continue;
        }
        do_free(f, &f->live[f->nlive - 1u]);
        after_op(f);
        if (f->nlive == before) {
            f->nlive--; /* refused on a tainted heap: leave it */
        }
    }
    if (!f->tainted && f->d->stats != NULL) {
        rt_stats_t s;
        f->d->stats(f->h, &s);
        REQUIRE(f, s.used_blocks == 0u && s.used_bytes == 0u, "all freed, but used %zu blocks, %zu bytes",
                s.used_blocks, s.used_bytes);
        REQUIRE(f, f->d->check == NULL || f->d->check(f->h), "check() failed after freeing everything");
    }
    check_guards(f);
    UNPOISON(f->raw, GUARD);
    UNPOISON(f->mem + f->size, GUARD);
    free(f->block);
    f->block = NULL;
    return 0;
}

static bool env_verbose(void) { return env_flag("RTFUZZ_VERBOSE"); }

#ifndef RTFUZZ_MAIN

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int verbose = -1;
    if (verbose < 0) {
        verbose = env_verbose() ? 1 : 0;
    }
    return run(data, size, verbose != 0);
}

#else /* RTFUZZ_MAIN: replay files, write or compare the seed corpus */

#include <dirent.h>
#include <sys/stat.h>

/* --- the seed corpus: a few inputs per allocator, built here so the encoding has one home ---- */

typedef struct seed {
    uint8_t b[512];
    size_t n;
} seed_t;

#define SEEDS_PER_ALLOCATOR 6u

static void put(seed_t *s, unsigned v)
{
    if (s->n < sizeof s->b) {
        s->b[s->n++] = (uint8_t)v;
    }
}

static void put16(seed_t *s, unsigned v)
{
    put(s, (v >> 8) & 0xFFu);
    put(s, v & 0xFFu);
}

/* size16 of an exact size below 16384 */
static unsigned sz(unsigned n) { return n < 64u ? n : n < 1024u ? (1u << 14) | n : (2u << 14) | (n & 0x3FFFu); }
/* size16 of a boundary: 0 max_request, 1 +1, 2 -k, 3 SIZE_MAX, 4 SIZE_MAX-k, 5 SIZE_MAX/2+1, 6 buffer */
static unsigned edge(unsigned which, unsigned k) { return (3u << 14) | ((k & 0x7FFu) << 3) | (which & 7u); }

static void s_malloc(seed_t *s, unsigned n)
{
    put(s, OP_MALLOC);
    put16(s, sz(n));
}
static void s_free(seed_t *s, unsigned idx)
{
    put(s, OP_FREE);
    put(s, idx);
}
static void s_realloc(seed_t *s, unsigned idx, unsigned size16)
{
    put(s, OP_REALLOC);
    put(s, idx);
    put16(s, size16);
}
static void s_calloc(seed_t *s, unsigned c, unsigned size16)
{
    put(s, OP_CALLOC);
    put(s, c);
    put16(s, size16);
}
static void s_memalign(seed_t *s, unsigned a, unsigned size16)
{
    put(s, OP_MEMALIGN);
    put(s, a);
    put16(s, size16);
}
static void s_op1(seed_t *s, unsigned op, unsigned idx)
{
    put(s, op);
    put(s, idx);
}
static void s_forge(seed_t *s, unsigned op, unsigned kind, unsigned idx, unsigned off)
{
    put(s, op);
    put(s, kind);
    put(s, idx);
    put(s, off);
    if (op == OP_FORGE_REALLOC) {
        put16(s, sz(40));
    }
}
/* corrupt n bytes at `off` from the end (from_end) or the start of live block idx */
static void s_corrupt(seed_t *s, unsigned idx, bool from_end, int off, unsigned value, unsigned n, unsigned byte)
{
    put(s, OP_CORRUPT);
    put(s, idx);
    put(s, (from_end ? 1u : 0u) | (value << 1) | ((n - 1u) << 3));
    if (from_end) {
        put(s, (unsigned)(off + 16));
    } else {
        put16(s, (unsigned)(off + 16)); /* exact while off + 16 < usable + 33 */
    }
    for (unsigned i = 0; value <= 1u && i < n; i++) {
        put(s, byte + i);
    }
}

/* COPY n = 1..16 bytes to `pos` (0..15) bytes past the end (past_end) or before the start of live
 * block idx, read from a source of `kind` (0 a block's neighbourhood, 1 a gap, 2 the control area,
 * 3 any word) chosen by sel and off (copy_source). */
static void s_copy(seed_t *s, unsigned idx, bool past_end, unsigned pos, unsigned n, unsigned kind, unsigned sel,
                   unsigned off)
{
    put(s, OP_CORRUPT);
    put(s, idx);
    put(s, COPY_MODE_BITS | (kind << 1) | (past_end ? 1u : 0u));
    put(s, ((n - 1u) << 4) | pos);
    put(s, sel);
    put(s, off);
}
/* copy_source's off for kind 0: `delta` bytes (-16..16) from the start, or from the end */
static unsigned near_start(int delta) { return (unsigned)(delta + 16) << 1; }
static unsigned near_end(int delta) { return ((unsigned)(delta + 16) << 1) | 1u; }

/* Live-block indices refer to the model's array, which keeps order until a free moves the last
 * entry into the hole: the seeds free from the end or accept the shuffle. */
static size_t make_seeds(seed_t *out, size_t max)
{
    size_t count = 0, n = 0;
    rt_registry(&n);
    for (unsigned a = 0; a < n && count + SEEDS_PER_ALLOCATOR <= max; a++) {
        seed_t *s;
        /* 1. every legitimate call, the boundaries, a clean end */
        s = &out[count++];
        put(s, a);
        put(s, 0x01u | (3u << 2)); /* 8 KiB, misaligned by 3 */
        s_malloc(s, 24);
        s_malloc(s, 100);
        s_malloc(s, 1000);
        s_calloc(s, 2, sz(40));
        s_memalign(s, 6, sz(200)); /* 64 */
        s_memalign(s, 12, sz(10)); /* 4096 */
        s_op1(s, OP_USABLE, 1);
        s_realloc(s, 0, sz(300));
        s_realloc(s, 2, sz(16));
        s_realloc(s, 255, sz(77));
        s_op1(s, OP_CHECK, 0);
        s_free(s, 1);
        s_op1(s, OP_REFILL, 0);
        s_malloc(s, 0);
        put(s, OP_MALLOC);
        put16(s, edge(0, 0));
        put(s, OP_MALLOC);
        put16(s, edge(1, 0));
        put(s, OP_MALLOC);
        put16(s, edge(3, 0));
        s_calloc(s, 0x81u, sz(1000)); /* overflows */
        s_memalign(s, 0xF9u, sz(64)); /* alignment 3 */
        s_realloc(s, 3, 0);           /* realloc(p, 0) */
        s_op1(s, OP_CHECK, 0);
        /* 2. forged pointers: interior, before, after, stale, foreign, wild, double free */
        s = &out[count++];
        put(s, a);
        put(s, 0x02u | (1u << 6)); /* 16 KiB + 8 */
        s_malloc(s, 64);
        s_malloc(s, 200);
        s_memalign(s, 7, sz(100)); /* 128 */
        s_malloc(s, 64);
        s_forge(s, OP_FORGE_FREE, FORGE_INTERIOR | 8u, 1, 0);
        s_forge(s, OP_FORGE_FREE, FORGE_INTERIOR, 1, 0);
        s_forge(s, OP_FORGE_FREE, FORGE_BEFORE | 8u, 2, 0);
        s_forge(s, OP_FORGE_FREE, FORGE_BEFORE, 2, 3);
        s_forge(s, OP_FORGE_REALLOC, FORGE_BEFORE | 8u, 2, 0);
        s_forge(s, OP_FORGE_USABLE, FORGE_BEFORE | 8u, 2, 0);
        s_forge(s, OP_FORGE_FREE, FORGE_AFTER, 1, 8);
        s_forge(s, OP_FORGE_FREE, FORGE_FOREIGN, 0, 5);
        s_forge(s, OP_FORGE_FREE, FORGE_FOREIGN, 1, 5);
        s_forge(s, OP_FORGE_FREE, FORGE_FOREIGN, 2, 5);
        s_forge(s, OP_FORGE_FREE, FORGE_FOREIGN, 3, 5);
        s_forge(s, OP_FORGE_FREE, FORGE_FOREIGN, 4, 5);
        s_forge(s, OP_FORGE_FREE, FORGE_FOREIGN, 5, 5);
        s_forge(s, OP_FORGE_USABLE, FORGE_FOREIGN, 2, 5);
        s_forge(s, OP_FORGE_FREE, FORGE_WILD | 8u, 9, 200);
        s_free(s, 3);
        s_forge(s, OP_FORGE_FREE, FORGE_STALE, 0, 0);    /* double free */
        s_forge(s, OP_FORGE_REALLOC, FORGE_STALE, 0, 0); /* realloc of a freed block */
        s_malloc(s, 300);
        s_forge(s, OP_FORGE_FREE, FORGE_STALE, 0, 0); /* stale, maybe reused */
        s_op1(s, OP_CHECK, 0);
        /* 3. overflows into the next block's metadata: one NUL, a bit, a few bytes, underflow */
        s = &out[count++];
        put(s, a);
        put(s, 0x01u);
        s_malloc(s, 40);
        s_malloc(s, 40);
        s_malloc(s, 40);
        s_malloc(s, 40);
        s_free(s, 2);                      /* a free block between live ones */
        s_corrupt(s, 1, true, 0, 2, 1, 0); /* NUL just past block 1 */
        s_free(s, 1);
        s_malloc(s, 40);
        s_corrupt(s, 0, true, 0, 1, 1, 0x01u); /* flip a bit past block 0 */
        s_free(s, 0);
        s_corrupt(s, 0, false, -8, 0, 8, 0x40u); /* 8 bytes before the start */
        s_realloc(s, 0, sz(500));
        s_op1(s, OP_CHECK, 0);
        s_malloc(s, 40);
        /* 4. exhaustion of a small heap, fragmentation, realloc in place and moving */
        s = &out[count++];
        put(s, a);
        put(s, 0x00u | (2u << 6)); /* 2 KiB (or min_buffer) + 100 */
        for (unsigned i = 0; i < 12u; i++) {
            s_malloc(s, 48u + 40u * i);
        }
        for (unsigned i = 0; i < 6u; i++) {
            s_free(s, i);
        }
        s_realloc(s, 0, sz(700));
        s_realloc(s, 1, sz(20));
        s_calloc(s, 3, sz(100));
        s_memalign(s, 9, sz(100));
        s_op1(s, OP_CHECK, 0);
        /* 5. copy overruns of one header word (and parts of one): the header after another
         * block onto a free neighbour's, a header before another block onto a used block's,
         * the control area's last word, 3 bytes of a header (the sizes for 64-bit words; a
         * 32-bit build reads the same bytes as other widths) */
        s = &out[count++];
        put(s, a);
        put(s, 0x01u); /* 8 KiB */
        for (unsigned i = 0; i < 6u; i++) {
            s_malloc(s, 40);
        }
        s_free(s, 2);                                /* model: 0 1 5 3 4 */
        s_copy(s, 1, true, 0, 8, 0, 3, near_end(0)); /* the word after block 3 -> after block 1 */
        s_malloc(s, 40);
        s_malloc(s, 40);
        put(s, OP_CHECK);                                /* (no argument) */
        s_copy(s, 4, false, 0, 8, 0, 0, near_start(-8)); /* block 0's header -> block 4's */
        s_free(s, 4);
        s_realloc(s, 3, sz(120));
        s_copy(s, 0, false, 0, 8, 2, 0, 1);          /* the control area's last words */
        s_copy(s, 2, true, 0, 3, 0, 1, near_end(0)); /* 3 bytes of a header */
        s_free(s, 0);
        s_free(s, 1);
        s_malloc(s, 100);
        put(s, OP_CHECK); /* (no argument) */
        /* 6. consistent pairs: a free block's [header][first link] onto another free block's,
         * and a [footer][header] pair before a block onto the pair before another one */
        s = &out[count++];
        put(s, a);
        put(s, 0x02u); /* 16 KiB */
        for (unsigned i = 0; i < 8u; i++) {
            s_malloc(s, 40);
        }
        s_free(s, 2);                                      /* model: 0 1 7 3 4 5 6 */
        s_free(s, 5);                                      /* model: 0 1 7 3 4 6 */
        s_copy(s, 4, false, 0, 16, 0, 3, near_start(-16)); /* [footer][header] before 3 -> before 4 */
        s_copy(s, 1, true, 0, 16, 1, 3, 0);                /* gap after the 4th by address: [hdr][link] */
        s_malloc(s, 40);
        s_malloc(s, 40);
        s_malloc(s, 40);
        put(s, OP_CHECK);                   /* (no argument) */
        s_copy(s, 2, true, 0, 16, 1, 0, 1); /* a gap's last two words */
        s_free(s, 3);
        s_memalign(s, 6, sz(40));
        s_realloc(s, 1, sz(90));
        put(s, OP_CHECK); /* (no argument) */
    }
    return count;
}

static int write_seeds(const char *dir, bool compare)
{
    static seed_t seeds[192];
    memset(seeds, 0, sizeof seeds);
    size_t n = make_seeds(seeds, sizeof seeds / sizeof seeds[0]);
    size_t nalloc = 0;
    const rt_allocator_t *const *all = rt_registry(&nalloc);
    static const char *const kinds[SEEDS_PER_ALLOCATOR] = {"calls",   "forged", "overflow",
                                                           "exhaust", "copy",   "copypair"};
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%02zu-%s-%s", dir, i / SEEDS_PER_ALLOCATOR,
                 all[(i / SEEDS_PER_ALLOCATOR) % nalloc]->name, kinds[i % SEEDS_PER_ALLOCATOR]);
        if (compare) {
            FILE *fp = fopen(path, "rb");
            uint8_t got[sizeof seeds[i].b + 1];
            size_t len = fp != NULL ? fread(got, 1, sizeof got, fp) : 0u;
            if (fp == NULL || len != seeds[i].n || memcmp(got, seeds[i].b, len) != 0) {
                fprintf(stderr, "fuzz_alloc_replay: %s %s\n", path, fp == NULL ? "missing" : "differs");
                bad = 1;
            }
            if (fp != NULL) {
                fclose(fp);
            }
            continue;
        }
        FILE *fp = fopen(path, "wb");
        if (fp == NULL || fwrite(seeds[i].b, 1, seeds[i].n, fp) != seeds[i].n) {
            fprintf(stderr, "fuzz_alloc_replay: cannot write %s\n", path);
            bad = 1;
        }
        if (fp != NULL) {
            fclose(fp);
        }
    }
    printf("%s %zu seeds %s %s\n", compare ? "compared" : "wrote", n, compare ? "with" : "to", dir);
    return bad;
}

static unsigned long replayed;

static int replay_file(const char *path, bool verbose)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fprintf(stderr, "fuzz_alloc_replay: cannot open %s\n", path);
        return 1;
    }
    static uint8_t data[1u << 20];
    size_t len = fread(data, 1, sizeof data, fp);
    fclose(fp);
    if (verbose) {
        fprintf(stderr, "%s (%zu bytes)\n", path, len);
    }
    input_name = path;
    run(data, len, verbose);
    input_name = NULL;
    replayed++;
    return 0;
}

static int replay_path(const char *path, bool verbose)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_alloc_replay: no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return replay_file(path, verbose);
    }
    DIR *dir = opendir(path);
    if (dir == NULL) {
        return 1;
    }
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        bad |= replay_path(sub, verbose);
    }
    closedir(dir);
    return bad;
}

int main(int argc, char **argv)
{
    bool verbose = env_verbose();
    int bad = 0, paths = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            verbose = true;
        } else if ((strcmp(argv[i], "--write-seeds") == 0 || strcmp(argv[i], "--check-seeds") == 0) && i + 1 < argc) {
            bad |= write_seeds(argv[i + 1], strcmp(argv[i], "--check-seeds") == 0);
            i++;
            paths++;
        } else {
            bad |= replay_path(argv[i], verbose);
            paths++;
        }
    }
    if (paths == 0) {
        fprintf(stderr, "usage: fuzz_alloc_replay [-v] FILE|DIR...   replay inputs (abort on a failure)\n"
                        "       fuzz_alloc_replay --write-seeds DIR   write the seed corpus\n"
                        "       fuzz_alloc_replay --check-seeds DIR   compare DIR with it\n");
        return 2;
    }
    if (replayed != 0u) {
        printf("replayed %lu inputs: no failure\n", replayed);
    }
    return bad;
}

#endif
