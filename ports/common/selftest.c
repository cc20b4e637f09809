/* SPDX-License-Identifier: MIT */
/*
 * ports/common/selftest.c -- the instruction counter verifies itself before anyone reports a count
 * (VaiOS blog: a clock you have not verified is not evidence).
 *
 * Loops of known length: `subs; bne` (Cortex-M) or `addi; bnez` (RISC-V) executed n times are
 * exactly 2 n instructions. They are measured
 *   1. in assembly, counter read - loop - counter read, with nothing the compiler could add: this
 *      checks the counter itself (QEMU -icount with the right shift);
 *   2. through the C API, port_count_begin - loop - port_count_end: this checks that the API adds
 *      nothing but its calibrated constant (port_count_overhead).
 * Each length at 8 phases: before each measurement a short loop of 0..7 iterations shifts where
 * in the SysTick tick the interval starts. Every figure must be exact; any deviation fails.
 */
#include "port_internal.h"

uint32_t port_count_overhead;

#define PHASES 8u
#define EMPTY_RUNS 64u

static const uint32_t lengths[] = {1u, 2u, 3u, 4u, 5u, 7u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u};
#define NLENGTHS (sizeof lengths / sizeof lengths[0])

static volatile uint32_t opaque_one = 1u; /* a loop count the compiler cannot see */

static void shift_phase(uint32_t p)
{
    uint32_t k = p + opaque_one; /* p + 1 iterations */
    PORT_ARCH_LOOP(k);
}

/* The API measurement of the loop: n sits in a register before begin, so nothing but the loop
 * executes between the two reads. */
static uint32_t api_loop(uint32_t n)
{
    uint32_t k = n;
    __asm__ __volatile__("" : "+r"(k));
    port_count_t t = port_count_begin();
    PORT_ARCH_LOOP(k);
    return port_count_end(t);
}

static uint32_t api_empty(void)
{
    port_count_t t = port_count_begin();
    return port_count_end(t);
}

static int verdict = -1; /* -1 not run, 0 failed, 1 passed */

static bool fail(const char *what, uint32_t n, uint32_t phase, uint32_t got, uint32_t expected)
{
    char loop[48] = "";
    if (n > 0u) {
        port_snprintf(loop, sizeof loop, " of 2 x %lu instructions", (unsigned long)n);
    }
    port_printf("port: counter FAILED: %s%s, phase %lu: measured %lu, expected %lu; the counter needs "
                "QEMU %s\n",
                what, loop, (unsigned long)phase, (unsigned long)got, (unsigned long)expected, port_arch_icount_flags);
    return false;
}

static bool run_checks(void)
{
    /* 1a. the empty read pair, in assembly */
    uint32_t empty = port_arch_empty_raw();
    for (uint32_t i = 0; i < EMPTY_RUNS; i++) {
        shift_phase(i % PHASES);
        uint32_t e = port_arch_empty_raw();
        if (e != empty) {
            return fail("empty read pair (assembly) not constant", 0, i % PHASES, e, empty);
        }
    }
    /* 1b. loops of known length, in assembly */
    for (size_t l = 0; l < NLENGTHS; l++) {
        for (uint32_t p = 0; p < PHASES; p++) {
            shift_phase(p);
            uint32_t got = port_arch_loop_raw(lengths[l]) - empty;
            if (got != 2u * lengths[l]) {
                return fail("loop in assembly", lengths[l], p, got, 2u * lengths[l]);
            }
        }
    }
    /* 2. the C API: calibrate the empty pair, then the same loops */
    port_count_overhead = 0;
    uint32_t overhead = api_empty();
    for (uint32_t i = 0; i < EMPTY_RUNS; i++) {
        shift_phase(i % PHASES);
        uint32_t e = api_empty();
        if (e != overhead) {
            return fail("empty port_count_begin/end pair not constant", 0, i % PHASES, e, overhead);
        }
    }
    port_count_overhead = overhead;
    for (size_t l = 0; l < NLENGTHS; l++) {
        for (uint32_t p = 0; p < PHASES; p++) {
            shift_phase(p);
            uint32_t got = api_loop(lengths[l]);
            if (got != 2u * lengths[l]) {
                port_count_overhead = 0;
                return fail("loop through port_count_begin/end", lengths[l], p, got, 2u * lengths[l]);
            }
        }
    }
    port_printf("port: counter ok: %s; empty read pair %lu, API overhead %lu (subtracted); loops of "
                "2 n instructions measured exactly for n = 1 .. %lu (%u lengths x %u phases, assembly and "
                "C API: %u measurements)\n",
                port_arch_count_unit, (unsigned long)empty, (unsigned long)overhead,
                (unsigned long)lengths[NLENGTHS - 1u], (unsigned)NLENGTHS, (unsigned)PHASES,
                (unsigned)(2u * NLENGTHS * PHASES));
    return true;
}

bool port_selftest(void)
{
    if (verdict < 0) {
        verdict = run_checks() ? 1 : 0;
    }
    return verdict == 1;
}

void port_require_counter(void)
{
    if (!port_selftest()) {
        port_printf("port: refusing to report instruction counts (the counter failed its self-check)\n");
        port_exit(PORT_EXIT_CLOCK);
    }
}
