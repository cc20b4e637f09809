/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/firmware.c -- a firmware whose C library allocates from rtalloc's TLSF heap
 * (ports/libc), tested while a timer interrupt allocates too.
 *
 * main makes FW_CALLS allocator calls (malloc, calloc, realloc, memalign / aligned_alloc /
 * posix_memalign, free) on FW_SLOTS slots, with seeded pseudo-random sizes: every block is filled
 * with a pattern derived from its sequence number and checked before it is freed or reallocated
 * (realloc: the kept prefix), calloc's zeroes are checked, every pointer must lie in one of the
 * heap's two regions and be aligned as asked. Meanwhile the board's timer interrupts every
 * fw_timer_period instructions; each interrupt frees one of its own FW_IRQ_SLOTS blocks (checked:
 * pattern from its address and number) and allocates another. main raises a flag around each of
 * its calls, so the interrupt counts how often it landed inside one: the figure that shows the
 * test preempts the allocator.
 *
 * Before that: the C library's own allocations (strdup, asprintf, and newlib's stdio: the FILE
 * objects __sinit allocates before main and stdout's buffer) must come from the heap's regions;
 * and the shim's edge cases (malloc(0), calloc overflow, a request above the capacity, bad
 * alignments). After it: everything freed, the heap must hold exactly the blocks it held before
 * the loop, and rt_heap_check must pass.
 *
 * Exit status (board.h): 0 and a last line "firmware: PASS" on success; a fault 3, a report to
 * the heap's error handler or a block outside the heap 4, a pattern mismatch 5, a failed check
 * or a leak 6, a test that did not test (fewer than FW_MIN_INSIDE interrupts inside main's calls,
 * a pool never used) 7, a stalled main 8. Built without the lock (RTALLOC_LIBC_LOCK_NONE) it
 * must fail with one of 3-6 or 8: the test's negative control. Built with FW_FAULT=1 it traps
 * after the edge cases: the fault handler must report it and exit with 3.
 */
#define _DEFAULT_SOURCE 1 /* strdup */
#define _GNU_SOURCE 1     /* asprintf */

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtalloc/heap.h>

#include "board.h"
#include "rtalloc_libc.h"

#ifndef FW_CALLS
#define FW_CALLS 30000u /* main's allocator calls in the loop */
#endif
#ifndef FW_MIN_INSIDE
#define FW_MIN_INSIDE 100u /* fewer interrupts inside main's calls: the test did not test */
#endif
#ifndef FW_WATCHDOG_TICKS
#define FW_WATCHDOG_TICKS 2000u /* interrupts without one loop iteration of main: stalled */
#endif
#ifndef FW_FAULT
#define FW_FAULT 0 /* 1: trap after the edge cases (the fault handler's own test) */
#endif
#define FW_SLOTS 64u
#define FW_IRQ_SLOTS 4u
#define FW_SEED 0x2545F491u

#if defined(__PICOLIBC__)
#define FW_LIBC "picolibc " __PICOLIBC_VERSION__
#elif defined(_NEWLIB_VERSION)
#define FW_LIBC "newlib " _NEWLIB_VERSION " (nano)"
#else
#define FW_LIBC "an unknown C library"
#endif

#if defined(RTALLOC_LIBC_LOCK) && RTALLOC_LIBC_LOCK == RTALLOC_LIBC_LOCK_NONE
#define FW_LOCK "none (the negative control: this run must fail)"
#elif defined(RTALLOC_LIBC_LOCK) && RTALLOC_LIBC_LOCK == RTALLOC_LIBC_LOCK_BASEPRI
#define FW_LOCK "BASEPRI, default threshold (rtalloc/port/cortex_m.h)"
#elif defined(__riscv)
#define FW_LOCK "mstatus.MIE (rtalloc/port/riscv.h)"
#else
#define FW_LOCK "PRIMASK (rtalloc/port/cortex_m.h)"
#endif

extern char __rtalloc_heap_start[], __rtalloc_heap_end[];
extern char __rtalloc_heap2_start[], __rtalloc_heap2_end[];

/* ---- failure: no C library (may run in the interrupt, or with stdio in any state) ----------- */

static _Noreturn void fail(int status, const char *what, const char *detail)
{
    fw_raw_puts("\nfirmware: FAIL: ");
    fw_raw_puts(what);
    if (detail != NULL) {
        fw_raw_puts(": ");
        fw_raw_puts(detail);
    }
    fw_raw_puts("\n");
    fw_exit(status);
}

/* ---- patterns and places ------------------------------------------------------------------- */

/* Word i of a block's pattern. Byte j of the block is byte j % 4 of word j / 4 whatever the
 * block's length, so a prefix (realloc's kept part) checks against the same pattern. */
static uint32_t pattern_word(uint32_t key, size_t i) { return (key ^ 0xA5A5A5A5u) + (uint32_t)i * 0x9E3779B1u; }

static uint8_t pattern_byte(uint32_t key, size_t j)
{
    uint32_t w = pattern_word(key, j / 4u);
    uint8_t bytes[4];
    memcpy(bytes, &w, sizeof bytes);
    return bytes[j % 4u];
}

/* Blocks are 8-byte aligned: whole words, then the tail bytes. */
static void fill(void *p, size_t n, uint32_t key)
{
    uint32_t *w = p;
    uint8_t *b = p;
    size_t words = n / 4u;
    for (size_t i = 0; i < words; i++) {
        w[i] = pattern_word(key, i);
    }
    for (size_t j = words * 4u; j < n; j++) {
        b[j] = pattern_byte(key, j);
    }
}

static bool intact(const void *p, size_t n, uint32_t key)
{
    const uint32_t *w = p;
    const uint8_t *b = p;
    size_t words = n / 4u;
    for (size_t i = 0; i < words; i++) {
        if (w[i] != pattern_word(key, i)) {
            return false;
        }
    }
    for (size_t j = words * 4u; j < n; j++) {
        if (b[j] != pattern_byte(key, j)) {
            return false;
        }
    }
    return true;
}

static bool zeroed(const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != 0u) {
            return false;
        }
    }
    return true;
}

/* 0 or 1: the region [p, p + n) lies in; -1: outside both. */
static int pool_of(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (a >= (uintptr_t)__rtalloc_heap_start && a + n <= (uintptr_t)__rtalloc_heap_end) {
        return 0;
    }
    if (a >= (uintptr_t)__rtalloc_heap2_start && a + n <= (uintptr_t)__rtalloc_heap2_end) {
        return 1;
    }
    return -1;
}

static uint32_t next_random(uint32_t *state)
{
    uint32_t x = *state; /* xorshift32 */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

/* ---- the heap's error handler: installed when the heap is created ------------------------- */

static volatile uint32_t too_large_reports;

static void heap_error(void *context, const rt_error_t *error)
{
    (void)context;
    if (error->kind == RT_ERR_TOO_LARGE) { /* a request above the capacity: not damage */
        too_large_reports = too_large_reports + 1u;
        return;
    }
    fw_raw_puts("\nfirmware: the heap reported an error in ");
    fw_raw_puts(error->operation != NULL ? error->operation : "?");
    fail(FW_EXIT_HEAP_ERROR, "heap error", error->message);
}

void rtalloc_libc_on_create(rt_heap_t *heap) { rt_heap_set_handler(heap, heap_error, NULL); }

/* ---- the timer interrupt -------------------------------------------------------------------- */

static volatile uint32_t in_call;  /* main is inside an allocator call */
static volatile uint32_t progress; /* main's loop iterations (the watchdog's input) */
static volatile uint32_t irqs, irqs_inside, irq_calls;

typedef struct irq_block {
    void *p;
    size_t size;
    uint32_t key;
} irq_block_t;
static irq_block_t irq_blocks[FW_IRQ_SLOTS];
static uint32_t irq_random = 0x9E3779B9u;
static uint32_t watchdog_seen, watchdog_ticks;

void fw_tick(void)
{
    uint32_t n = irqs + 1u;
    irqs = n;
    if (in_call != 0u) {
        irqs_inside = irqs_inside + 1u;
    }
    if (progress != watchdog_seen) {
        watchdog_seen = progress;
        watchdog_ticks = 0;
    } else if (++watchdog_ticks >= FW_WATCHDOG_TICKS) {
        fail(FW_EXIT_WATCHDOG, "watchdog", "main made no progress (stuck in the heap?)");
    }

    irq_block_t *b = &irq_blocks[n % FW_IRQ_SLOTS];
    if (b->p != NULL) {
        if (!intact(b->p, b->size, b->key)) {
            fail(FW_EXIT_PATTERN, "pattern mismatch", "a block of the interrupt changed");
        }
        free(b->p);
        b->p = NULL;
        irq_calls = irq_calls + 1u;
    }
    size_t size = 8u + next_random(&irq_random) % 248u;
    void *p = (n & 3u) == 0u ? calloc(1, size) : malloc(size);
    irq_calls = irq_calls + 1u;
    if (p == NULL) {
        return; /* out of memory: main holds it all for now */
    }
    if (pool_of(p, size) < 0) {
        fail(FW_EXIT_HEAP_ERROR, "block outside the heap", "the interrupt's");
    }
    if ((n & 3u) == 0u && !zeroed(p, size)) {
        fail(FW_EXIT_PATTERN, "pattern mismatch", "the interrupt's calloc block is not zeroed");
    }
    b->p = p;
    b->size = size;
    b->key = (uint32_t)(uintptr_t)p ^ n;
    fill(p, size, b->key);
}

/* ---- main's calls: the flag around each ----------------------------------------------------- */

typedef struct main_counts {
    uint32_t calls, mallocs, callocs, reallocs, aligned, frees, out_of_memory, checks;
    uint32_t pool_blocks[2];
} main_counts_t;
static main_counts_t counts;

static void *call_malloc(size_t n)
{
    in_call = 1u;
    void *p = malloc(n);
    in_call = 0u;
    counts.calls++;
    counts.mallocs++;
    return p;
}

static void *call_calloc(size_t count, size_t size)
{
    in_call = 1u;
    void *p = calloc(count, size);
    in_call = 0u;
    counts.calls++;
    counts.callocs++;
    return p;
}

static void *call_realloc(void *old, size_t n)
{
    in_call = 1u;
    void *p = realloc(old, n);
    in_call = 0u;
    counts.calls++;
    counts.reallocs++;
    return p;
}

/* The three aligned calls in turn. */
static void *call_aligned(size_t alignment, size_t n, uint32_t which)
{
    void *p = NULL;
    in_call = 1u;
    if (which == 0u) {
        p = memalign(alignment, n);
    } else if (which == 1u) {
        p = aligned_alloc(alignment, n);
    } else if (posix_memalign(&p, alignment, n) != 0) {
        p = NULL;
        errno = ENOMEM; /* posix_memalign returns its error; the loop reads errno */
    }
    in_call = 0u;
    counts.calls++;
    counts.aligned++;
    return p;
}

static void call_free(void *p)
{
    in_call = 1u;
    free(p);
    in_call = 0u;
    counts.calls++;
    counts.frees++;
}

/* ---- main's loop ------------------------------------------------------------------------------ */

typedef struct block {
    void *p;
    size_t size;
    uint32_t seq;
} block_t;
static block_t blocks[FW_SLOTS];

/* Mostly small, some up to a few KiB: the live set (about 64 blocks) fills the first pool and
 * spills into the second. */
static size_t pick_size(uint32_t r)
{
    uint32_t c = r % 100u;
    uint32_t v = r >> 8;
    if (c < 70u) {
        return 1u + v % 128u;
    }
    if (c < 93u) {
        return 129u + v % 896u;
    }
    if (c < 99u) {
        return 1025u + v % 3072u;
    }
    return 4097u + v % 8192u;
}

static void placed(const void *p, size_t n, size_t alignment)
{
    int pool = pool_of(p, n);
    if (pool < 0) {
        fail(FW_EXIT_HEAP_ERROR, "block outside the heap", "main's");
    }
    if (((uintptr_t)p & (alignment - 1u)) != 0u) {
        fail(FW_EXIT_HEAP_ERROR, "misaligned block", "main's");
    }
    counts.pool_blocks[pool]++;
}

static void verify(const block_t *b, size_t n)
{
    counts.checks++;
    if (!intact(b->p, n, b->seq)) {
        fail(FW_EXIT_PATTERN, "pattern mismatch", "a block of main changed while it was owned");
    }
}

static void out_of_memory(void)
{
    if (errno != ENOMEM) {
        fail(FW_EXIT_HEAP_ERROR, "failed call without errno ENOMEM", NULL);
    }
    counts.out_of_memory++;
}

static void step(uint32_t *random, uint32_t *seq)
{
    uint32_t r = next_random(random);
    block_t *b = &blocks[r % FW_SLOTS];
    uint32_t kind = (r >> 8) % 16u;
    errno = 0;
    if (b->p == NULL) {
        size_t n = pick_size(next_random(random));
        void *p;
        size_t alignment = 8u;
        if (kind < 10u) {
            p = call_malloc(n);
        } else if (kind < 13u) {
            n = (n + 7u) / 8u * 8u;
            p = call_calloc(n / 8u, 8u);
            if (p != NULL && !zeroed(p, n)) {
                fail(FW_EXIT_PATTERN, "pattern mismatch", "calloc's block is not zeroed");
            }
        } else {
            alignment = (size_t)16u << ((r >> 16) % 5u); /* 16 .. 256 */
            p = call_aligned(alignment, n, (r >> 20) % 3u);
        }
        if (p == NULL) {
            out_of_memory();
            return;
        }
        placed(p, n, alignment);
        b->p = p;
        b->size = n;
        b->seq = ++*seq;
        fill(p, n, b->seq);
    } else if (kind < 4u) {
        size_t n = pick_size(next_random(random));
        verify(b, b->size);
        void *p = call_realloc(b->p, n);
        if (p == NULL) {
            out_of_memory(); /* the old block stays, unchanged */
            verify(b, b->size);
            return;
        }
        placed(p, n, 8u);
        b->p = p;
        verify(b, n < b->size ? n : b->size); /* the kept prefix */
        b->size = n;
        b->seq = ++*seq;
        fill(p, n, b->seq);
    } else {
        verify(b, b->size);
        call_free(b->p);
        b->p = NULL;
    }
}

/* ---- before the loop: the C library's own allocations, and the shim's edge cases ----------- */

static void expect(bool ok, const char *what)
{
    if (!ok) {
        fail(FW_EXIT_HEAP_ERROR, "edge case", what);
    }
}

static void libc_allocations(void)
{
    char *s = strdup("allocated by the C library");
    expect(s != NULL && pool_of(s, strlen(s) + 1u) >= 0, "strdup's block is not in the heap");
    rt_stats_t before, after;
    rt_heap_stats(rtalloc_libc_heap(), &before);
    char *t = NULL;
    int len = asprintf(&t, "%s, %d", s, 42);
    rt_heap_stats(rtalloc_libc_heap(), &after);
    expect(len > 0 && t != NULL && pool_of(t, (size_t)len + 1u) >= 0, "asprintf's block is not in the heap");
    expect(after.mallocs > before.mallocs, "asprintf did not allocate from the heap");
    printf("firmware: the C library's strdup and asprintf (%lu heap allocations) are served by "
           "rtalloc\n",
           (unsigned long)(after.mallocs - before.mallocs));
    free(t);
    free(s);
#if !defined(__PICOLIBC__) && defined(_NEWLIB_VERSION)
    /* newlib's stdio: the FILE objects (__sinit, before main) and stdout's buffer (first
     * printf) come from _malloc_r */
    fflush(stdout);
    expect(pool_of(stdout, sizeof *stdout) >= 0, "newlib's stdout FILE is not in the heap");
    expect(stdout->_bf._base != NULL && pool_of(stdout->_bf._base, (size_t)stdout->_bf._size) >= 0,
           "newlib's stdout buffer is not in the heap");
    printf("firmware: newlib's stdout FILE and its %d-byte buffer lie in the heap (pool %d)\n", stdout->_bf._size,
           pool_of(stdout->_bf._base, (size_t)stdout->_bf._size) + 1);
#endif
}

/* Sizes the compiler cannot see (it would warn about the huge constant ones). */
static volatile size_t size_max = SIZE_MAX;
static volatile size_t one_mib = 1024u * 1024u;

static void edge_cases(void)
{
    void *p = malloc(0);
    expect(p != NULL && pool_of(p, 1) >= 0, "malloc(0) is not a block");
    expect(malloc_usable_size(p) >= 1u, "malloc_usable_size");
    free(p);
    free(NULL);
    p = realloc(NULL, 24);
    expect(p != NULL && malloc_usable_size(p) >= 24u, "realloc(NULL, n)");
    expect(realloc(p, 0) == NULL, "realloc(p, 0) frees");
    errno = 0;
    expect(calloc(size_max / 2u, 4) == NULL && errno == ENOMEM, "calloc's overflow");
    errno = 0;
    expect(malloc(size_max) == NULL && errno == ENOMEM, "malloc(SIZE_MAX)");
    uint32_t reports = too_large_reports;
    errno = 0;
    expect(malloc(one_mib) == NULL && errno == ENOMEM, "a request above the capacity");
    expect(too_large_reports == reports + 1u, "the handler did not hear of RT_ERR_TOO_LARGE");
    errno = 0;
    expect(memalign(24, 8) == NULL && errno == EINVAL, "memalign(24, n)");
    expect(posix_memalign(&p, 2, 8) == EINVAL, "posix_memalign(p, 2, n)");
    expect(posix_memalign(&p, 64, 8) == 0 && ((uintptr_t)p & 63u) == 0u, "posix_memalign");
    free(p);
    printf("firmware: edge cases of the shim: ok (malloc(0), realloc(p, 0), calloc overflow, "
           "ENOMEM, EINVAL, a too-large request reported to the handler)\n");
}

/* ---- main ------------------------------------------------------------------------------------ */

int main(void)
{
    const char *created_before_main = rtalloc_libc_creator();
    printf("firmware: %s, %s, malloc = rtalloc TLSF (ports/libc), lock: %s\n", fw_board_name, FW_LIBC, FW_LOCK);
    libc_allocations();
    rt_heap_t *heap = rtalloc_libc_heap();
    if (heap == NULL) {
        fail(FW_EXIT_HEAP_ERROR, "no heap", "the shim created none");
    }
    rt_stats_t stats;
    rt_heap_stats(heap, &stats);
    printf("firmware: heap created by %s, %s; %lu pools, capacity %lu bytes\n", rtalloc_libc_creator(),
           created_before_main != NULL ? "before main" : "in main (lazily)", (unsigned long)rtalloc_libc_pools(),
           (unsigned long)stats.capacity);
    edge_cases();
#if FW_FAULT
    fflush(stdout);
    __builtin_trap(); /* the fault handler must report and exit with FW_EXIT_FAULT */
#endif

    rt_heap_stats(heap, &stats);
    size_t baseline_blocks = stats.used_blocks;
    printf("firmware: %lu allocator calls in main, %lu slots, seed 0x%08lx; timer: %s every "
           "%lu instructions, allocating in its handler\n",
           (unsigned long)FW_CALLS, (unsigned long)FW_SLOTS, (unsigned long)FW_SEED, fw_timer_name,
           (unsigned long)fw_timer_period);
    fflush(stdout);

    uint32_t random = FW_SEED;
    uint32_t seq = 0;
    fw_timer_start();
    while (counts.calls < FW_CALLS) {
        step(&random, &seq);
        progress = progress + 1u;
    }
    fw_timer_stop();

    for (size_t i = 0; i < FW_SLOTS; i++) {
        if (blocks[i].p != NULL) {
            verify(&blocks[i], blocks[i].size);
            free(blocks[i].p);
        }
    }
    for (size_t i = 0; i < FW_IRQ_SLOTS; i++) {
        if (irq_blocks[i].p != NULL) {
            if (!intact(irq_blocks[i].p, irq_blocks[i].size, irq_blocks[i].key)) {
                fail(FW_EXIT_PATTERN, "pattern mismatch", "a block of the interrupt changed");
            }
            free(irq_blocks[i].p);
        }
    }

    printf("firmware: main: %lu calls (malloc %lu, calloc %lu, realloc %lu, aligned %lu, "
           "free %lu), %lu pattern checks, %lu out of memory (errno ENOMEM)\n",
           (unsigned long)counts.calls, (unsigned long)counts.mallocs, (unsigned long)counts.callocs,
           (unsigned long)counts.reallocs, (unsigned long)counts.aligned, (unsigned long)counts.frees,
           (unsigned long)counts.checks, (unsigned long)counts.out_of_memory);
    printf("firmware: main's blocks from pool 1: %lu, from pool 2: %lu\n", (unsigned long)counts.pool_blocks[0],
           (unsigned long)counts.pool_blocks[1]);
    printf("firmware: interrupts: %lu, inside an allocator call of main: %lu; the handler's "
           "allocator calls: %lu\n",
           (unsigned long)irqs, (unsigned long)irqs_inside, (unsigned long)irq_calls);

    bool checked = rt_heap_check(heap);
    rt_heap_stats(heap, &stats);
    printf("firmware: heap after freeing: %lu used blocks (before the loop %lu), "
           "rt_heap_check %s, errors reported %lu (too large: %lu)\n",
           (unsigned long)stats.used_blocks, (unsigned long)baseline_blocks, checked ? "ok" : "FAILED",
           (unsigned long)stats.errors, (unsigned long)too_large_reports);
    fflush(stdout);
    if (!checked) {
        fail(FW_EXIT_CHECK, "rt_heap_check", "the heap is damaged");
    }
    if (stats.used_blocks != baseline_blocks) {
        fail(FW_EXIT_CHECK, "leak", "the heap holds other blocks than before the loop");
    }
    if (irqs_inside < FW_MIN_INSIDE) {
        fail(FW_EXIT_COVERAGE, "too few interrupts inside allocator calls", "the test would not see a missing lock");
    }
    if (counts.pool_blocks[0] == 0u || counts.pool_blocks[1] == 0u) {
        fail(FW_EXIT_COVERAGE, "a pool served no block", "the regions are not both in use");
    }
    printf("firmware: PASS\n");
    return FW_EXIT_OK;
}
