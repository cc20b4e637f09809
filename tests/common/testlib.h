/* SPDX-License-Identifier: MIT */
/*
 * testlib.h -- the tests' own tiny assertion helper (no external framework).
 *
 * Every check counts as passed or failed; a failed check prints file:line, the condition and an
 * optional printf-style message. tl_summary() prints "N passed, N failed" and returns the exit
 * status (non-zero on any failure). Checks inside helper functions use TL_REQUIRE to stop the
 * current case (return false) at the first failure, so one bug does not flood the output.
 *
 * Also here: xorshift64* (the project's PRNG), buffers deliberately misaligned, a recording
 * error handler, and an argument parser for "replay this seed".
 */
#ifndef RT_TESTLIB_H
#define RT_TESTLIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* TL_TARGET: built for a bare-metal target (ports/): the port's C library subset stands in for
 * the hosted headers -- printf and friends over semihosting, malloc from a static arena -- so
 * the same test sources build for the host and for the emulated boards. */
#if defined(TL_TARGET)
#include "port_libc.h"
#else
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif

#include "rtalloc/common.h"
#include "rtalloc/registry.h"

#if defined(__GNUC__)
#define TL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TL_UNUSED __attribute__((unused))
#else
#define TL_PRINTF(f, a)
#define TL_UNUSED
#endif

/* ASan makes some tests heavy (huge mappings, long loops): they scale down or skip. */
#if defined(__SANITIZE_ADDRESS__)
#define TL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_ASAN 1
#endif
#endif
#ifndef TL_ASAN
#define TL_ASAN 0
#endif

/* RT_DEBUG >= 2: the library itself walks the whole heap after every operation, so the long
 * randomised tests run fewer rounds (they would only repeat the library's own checks). */
#define TL_DEBUG_WALKS (RT_DEBUG >= 2)

typedef struct tl_state {
    unsigned long passed;
    unsigned long failed;
    unsigned long skipped;
    unsigned long reported; /* failure messages printed (capped) */
} tl_state_t;

static tl_state_t tl_state TL_UNUSED;

#define TL_MAX_REPORTS 200ul

static inline TL_PRINTF(5, 6) bool tl_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
    if (ok) {
        tl_state.passed++;
        return true;
    }
    tl_state.failed++;
    if (tl_state.reported++ < TL_MAX_REPORTS) {
        fprintf(stdout, "FAIL %s:%d: (%s) ", file, line, expr);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stdout, fmt, ap);
        va_end(ap);
        fputc('\n', stdout);
        fflush(stdout);
    } else if (tl_state.reported == TL_MAX_REPORTS + 1u) {
        fprintf(stdout, "(further failure messages suppressed)\n");
    }
    return false;
}

/* TL_CHECK(cond, "fmt", args...): counts; prints on failure; evaluates to cond. The message is
 * required (a non-empty format). */
#define TL_CHECK(cond, ...) tl_check((cond) ? true : false, __FILE__, __LINE__, #cond, __VA_ARGS__)
/* TL_REQUIRE: as TL_CHECK, and returns false from the enclosing function on failure. */
#define TL_REQUIRE(cond, ...)               \
    do {                                    \
        if (!TL_CHECK(cond, __VA_ARGS__)) { \
            return false;                   \
        }                                   \
    } while (0)

static inline TL_PRINTF(1, 2) void tl_skip(const char *fmt, ...)
{
    tl_state.skipped++;
    fputs("SKIP ", stdout);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

/* Exit status of a test that skipped everything it had to check: ctest's SKIP_RETURN_CODE
 * (tests/CMakeLists.txt), so that ctest reports it as not run, never as passed. */
#define TL_SKIP_STATUS 77

/* Prints the counts; returns 1 on any failure, TL_SKIP_STATUS when nothing was checked and
 * something was skipped, else 0. */
static inline int tl_summary(const char *name)
{
    printf("%s: %lu passed, %lu failed", name, tl_state.passed, tl_state.failed);
    if (tl_state.skipped != 0u) {
        printf(" (%lu cases skipped)", tl_state.skipped);
    }
    printf("\n%lu passed, %lu failed\n", tl_state.passed, tl_state.failed);
    if (tl_state.failed == 0u && tl_state.passed == 0u && tl_state.skipped != 0u) {
        printf("%s: everything skipped (exit %d)\n", name, TL_SKIP_STATUS);
        fflush(stdout);
        return TL_SKIP_STATUS;
    }
    fflush(stdout);
    return tl_state.failed == 0u ? 0 : 1;
}

/* The suites that loop over rt_registry() check first that it holds every allocator the build
 * registers: tests/CMakeLists.txt counts the registry[] table's entries and passes
 * RT_EXPECTED_ALLOCATORS (builds without it, e.g. the ports, check nothing). */
static inline bool tl_check_registry(size_t count)
{
#ifdef RT_EXPECTED_ALLOCATORS
    return tl_check(count == (size_t)(RT_EXPECTED_ALLOCATORS), __FILE__, __LINE__, "registry count",
                    "rt_registry() holds %zu allocators, the build registers %zu", count,
                    (size_t)(RT_EXPECTED_ALLOCATORS));
#else
    (void)count;
    return true;
#endif
}

/* --- xorshift64* ------------------------------------------------------------------------------ */

typedef struct tl_rng {
    uint64_t x;
} tl_rng_t;

static inline tl_rng_t tl_rng_seed(uint64_t seed)
{
    /* splitmix64 once, so that small seeds give unrelated streams; never zero */
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    tl_rng_t r = {z != 0u ? z : 1u};
    return r;
}

static inline uint64_t tl_next(tl_rng_t *r)
{
    uint64_t x = r->x;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->x = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [lo, hi] (hi - lo < 2^32 is enough for the tests; modulo bias is irrelevant). */
static inline size_t tl_range(tl_rng_t *r, size_t lo, size_t hi)
{
    return lo + (size_t)(tl_next(r) % (uint64_t)(hi - lo + 1u));
}

static inline bool tl_chance(tl_rng_t *r, unsigned percent) { return (unsigned)(tl_next(r) % 100u) < percent; }

/* --- buffers ---------------------------------------------------------------------------------- */

/* A malloc'd buffer of `size` bytes whose start is `misalign` bytes past a 64-byte boundary. */
typedef struct tl_buffer {
    unsigned char *raw;
    unsigned char *mem;
    size_t size;
} tl_buffer_t;

static inline bool tl_buffer_new(tl_buffer_t *b, size_t size, size_t misalign)
{
    b->raw = malloc(size + 64u + misalign);
    if (b->raw == NULL) {
        b->mem = NULL;
        b->size = 0;
        return false;
    }
    uintptr_t at = ((uintptr_t)b->raw + 63u) & ~(uintptr_t)63u;
    b->mem = b->raw + (size_t)(at - (uintptr_t)b->raw) + misalign;
    b->size = size;
    return true;
}

static inline void tl_buffer_free(tl_buffer_t *b)
{
    free(b->raw);
    b->raw = NULL;
    b->mem = NULL;
    b->size = 0;
}

static inline bool tl_inside(const void *p, size_t n, const tl_buffer_t *b)
{
    uintptr_t a = (uintptr_t)p;
    uintptr_t lo = (uintptr_t)b->mem;
    return a >= lo && a <= lo + b->size && n <= (size_t)(lo + b->size - a);
}

/* --- a recording error handler ------------------------------------------------------------------ */

typedef struct tl_recorder {
    unsigned long count;
    rt_error_kind_t last;
    const void *pointer;
    const char *operation;
    bool print; /* print every report (for unexpected ones) */
} tl_recorder_t;

static inline void tl_record(void *context, const rt_error_t *error)
{
    tl_recorder_t *r = context;
    r->count++;
    r->last = error->kind;
    r->pointer = error->pointer;
    r->operation = error->operation;
    if (r->print) {
        printf("  (report: kind %d, %s: %s)\n", (int)error->kind, error->operation != NULL ? error->operation : "?",
               error->message != NULL ? error->message : "?");
    }
}

static inline void tl_recorder_reset(tl_recorder_t *r)
{
    r->count = 0;
    r->last = RT_ERR_NONE;
    r->pointer = NULL;
    r->operation = NULL;
}

static inline const char *tl_kind_name(rt_error_kind_t k)
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

/* One allocator instance over a fresh buffer, with a recording error handler. */
typedef struct tl_inst {
    const rt_allocator_t *d;
    tl_buffer_t buf;
    void *h;
    tl_recorder_t rec;
} tl_inst_t;

static inline bool tl_inst_open(tl_inst_t *x, const rt_allocator_t *d, size_t size, size_t misalign)
{
    memset(x, 0, sizeof *x);
    x->d = d;
    TL_REQUIRE(tl_buffer_new(&x->buf, size, misalign), "out of memory");
    x->h = d->create(x->buf.mem, size);
    TL_REQUIRE(x->h != NULL, "%s: create over %zu bytes at +%zu failed", d->name, size, misalign);
    if (d->set_handler != NULL) {
        d->set_handler(x->h, tl_record, &x->rec);
    }
    return true;
}

/* check: run the integrity check and require no unexpected report (skip it after a deliberate,
 * undetectable corruption). */
static inline void tl_inst_close(tl_inst_t *x, bool check)
{
    if (x->h != NULL && check) {
        TL_CHECK(x->d->check == NULL || x->d->check(x->h), "%s: integrity check at the end", x->d->name);
        TL_CHECK(x->rec.count == 0u, "%s: %lu unexpected error reports (last %s)", x->d->name, x->rec.count,
                 tl_kind_name(x->rec.last));
    }
    tl_buffer_free(&x->buf);
    x->h = NULL;
}

/* --- patterns --------------------------------------------------------------------------------- */

/* Byte j of the block with id `id`: a per-block start and step, so blocks differ from each other
 * and a shifted copy of a block differs from the block (cheap enough to fill every byte). */
static inline unsigned char tl_pattern_start(uint64_t id)
{
    return (unsigned char)((id * 0x9E3779B97F4A7C15ull) >> 56);
}
static inline unsigned char tl_pattern_step(uint64_t id)
{
    return (unsigned char)(((id * 0xC2B2AE3D27D4EB4Full) >> 57) | 1u);
}
static inline unsigned char tl_pattern_byte(uint64_t id, size_t j)
{
    return (unsigned char)(tl_pattern_start(id) + (unsigned char)j * tl_pattern_step(id));
}

static inline void tl_fill(void *p, size_t n, uint64_t id)
{
    unsigned char *c = p;
    unsigned char v = tl_pattern_start(id), step = tl_pattern_step(id);
    for (size_t j = 0; j < n; j++) {
        c[j] = v;
        v = (unsigned char)(v + step);
    }
}

/* Returns n if the pattern is intact, else the offset of the first bad byte. */
static inline size_t tl_verify(const void *p, size_t n, uint64_t id)
{
    const unsigned char *c = p;
    unsigned char v = tl_pattern_start(id), step = tl_pattern_step(id);
    for (size_t j = 0; j < n; j++) {
        if (c[j] != v) {
            return j;
        }
        v = (unsigned char)(v + step);
    }
    return n;
}

/* --- entropy ---------------------------------------------------------------------------------- */

/* A source for rt_set_entropy that repeats itself: every create then draws the same key, so a
 * test of a second life over one buffer sees that create still moves the new key off the one the
 * buffer held (rtalloc/common.h). Put the built-in source back with rt_set_entropy(NULL, NULL). */
static inline uint64_t tl_entropy_constant(void *context)
{
    (void)context;
    return 0x5EED5EED5EED5EEDull;
}

/* --- arguments -------------------------------------------------------------------------------- */

static inline bool tl_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s == '\0') {
        return false;
    }
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == NULL || *end != '\0') {
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

#endif /* RT_TESTLIB_H */
