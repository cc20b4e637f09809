/* SPDX-License-Identifier: MIT */
/*
 * ports/common/port.h -- the harness API of rtalloc's bare-metal ports (QEMU mps2-an386 Cortex-M4F,
 * QEMU virt RV32IMAC): console text, exit status, an exact per-call instruction counter, and lock
 * hooks that mask interrupts. Programs that run on a target (the on-target tests, the studies)
 * include this header and link the port (ports/CMakeLists.txt: rtalloc_port_executable()).
 *
 * The core library needs none of it: a firmware hands the heap a buffer and, if interrupts
 * allocate, port_lock_hook/port_unlock_hook (or its own equivalents). The port is the test and
 * measurement harness around the core, not a dependency of it.
 *
 * What the port provides before main(argc = 1, argv = {"target", NULL}) runs: the vector table
 * or trap vector, .data copied, .bss zeroed, the FPU enabled (Cortex-M4F), the instruction counter
 * started (not yet verified: call port_selftest or port_require_counter), interrupts globally
 * enabled with no source enabled. Returning from main exits with its value (port_exit). A fault or
 * an unexpected trap (including __builtin_trap, the core's default RT_ASSERT and RT_PANIC) prints
 * what happened and exits with PORT_EXIT_FAULT.
 */
#ifndef RTALLOC_PORT_H
#define RTALLOC_PORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port_arch.h" /* this target's inline counter read and name */

#if defined(__GNUC__)
#define PORT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PORT_PRINTF(f, a)
#endif

/* Exit statuses the port itself uses (a program's own failures should use 1). */
#define PORT_EXIT_CLOCK 2 /* port_require_counter: the instruction counter failed its self-check */
#define PORT_EXIT_FAULT 3 /* a fault, an unexpected trap or interrupt, port_panic */

/* --- console (semihosting) ------------------------------------------------------------------- */

/* Text goes through a 256-byte line buffer, written to the host with one semihosting call per
 * line (SYS_WRITE0) or when the buffer is full; port_exit flushes. NUL bytes are not sent. */
void port_putc(char c);
void port_puts(const char *s); /* the string as is: no newline added */
void port_flush(void);

/* printf subset: flags - 0 + space #; width and precision (numbers or *); length hh h l ll z j t;
 * conversions d i u o x X c s p %. No floating point (prints "?"). Returns the characters
 * written. The snprintf form always NUL-terminates (when n > 0) and returns the untruncated
 * length, like C's. */
int port_printf(const char *fmt, ...) PORT_PRINTF(1, 2);
int port_vprintf(const char *fmt, va_list ap);
int port_snprintf(char *buf, size_t n, const char *fmt, ...) PORT_PRINTF(3, 4);
int port_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);

/* The formatter behind all of them: calls out(context, c) for every character. */
int port_vformat(void (*out)(void *context, char c), void *context, const char *fmt, va_list ap);

/* --- exit ------------------------------------------------------------------------------------- */

/* Flushes the console and ends the emulation with `status` as QEMU's exit status (semihosting
 * SYS_EXIT_EXTENDED {ADP_Stopped_ApplicationExit, status}; on RV32 the SiFive test device at
 * 0x100000 as a fallback). Statuses above 255 are seen modulo 256 by the shell. */
_Noreturn void port_exit(int status);

/* Prints "PANIC: <message>" and exits with PORT_EXIT_FAULT. A firmware build may route the core's
 * RT_PANIC to it: -D'RT_PANIC(m)=port_panic(m)' (and declare it through RT_CONFIG_HEADER). */
_Noreturn void port_panic(const char *message);

/* --- the instruction counter ------------------------------------------------------------------ */

/* Exact counts of executed instructions under QEMU -icount: instructions, NOT cycles (QEMU models
 * no pipeline, caches or wait states).
 *   Cortex-M4: SysTick (24 bits, processor clock, reload 0xFFFFFF) under -icount shift=7: the board
 *     clocks SysTick at 25 MHz (40 ns a tick) and each instruction advances virtual time by
 *     2^7 = 128 ns, so an interval of n instructions reads 3.2 n +- 1 ticks and round(ticks / 3.2)
 *     is n exactly. One interval holds at most PORT_COUNT_MAX instructions (~5.2 M).
 *   RV32: minstret under -icount shift=0 counts exactly one per instruction (32-bit difference).
 *
 *     port_count_t t = port_count_begin();
 *     p = d->malloc(h, n);
 *     uint32_t instructions = port_count_end(t);
 *
 * counts what executes between the two reads: the call site's argument moves, the call, the
 * callee and its return, and storing the result -- the empty pair's own cost (measured by the
 * self-check, port_count_overhead) already subtracted. begin and end are inline and touch no
 * memory, so they add nothing the compiler could move into the interval except that. The
 * counter is only trustworthy after port_selftest() passed: programs that report counts call
 * port_require_counter() first. Counting runs with interrupts as they are: an interrupt taken
 * inside the interval is counted too (none is enabled unless the program enables one). */
typedef uint32_t port_count_t;

/* Instructions of the empty begin/end pair, measured by port_selftest (0 before it ran). */
extern uint32_t port_count_overhead;

static inline port_count_t port_count_begin(void) { return port_arch_counter(); }

/* Instructions executed since `begin`, minus the empty pair's. */
static inline uint32_t port_count_end(port_count_t begin)
{
    port_count_t now = port_arch_counter();
    return port_arch_elapsed(begin, now) - port_count_overhead;
}

/* Verifies the counter and calibrates port_count_overhead; prints one line with the figures
 * ("port: counter ok: ...") or what failed ("port: counter FAILED: ..."). Checks, all exact:
 *   1. the empty measurement (asm: two consecutive counter reads) reads the same 64 times;
 *   2. an assembly loop of known length (2 n instructions: subtract and branch) measures exactly
 *      2 n for n = 1 ... 1,000,000 (12 lengths), each 8 times at different phases of the clock;
 *   3. through the C API (port_count_begin/end around the same loop): the same figures, and the
 *      empty pair constant over 64 runs.
 * Without -icount (SysTick and minstret then follow host time) or with another shift, check 2
 * fails. Returns the verdict; later calls return the first verdict without measuring again. */
bool port_selftest(void);

/* port_selftest(), and on failure: "port: refusing to report instruction counts" and
 * port_exit(PORT_EXIT_CLOCK). */
void port_require_counter(void);

/* What the counter counts, for report headers: e.g. "instructions (QEMU -icount shift=7, SysTick;
 * not cycles)". */
const char *port_count_unit(void);

/* --- interrupts and the lock hooks -------------------------------------------------------------- */

/* Lock hooks with the signatures of rt_lock_fn / rt_unlock_fn (rtalloc/common.h): the lock masks
 * every maskable interrupt and returns the previous mask as the token, the unlock restores exactly
 * that state, so critical sections nest and a hook called with interrupts already masked leaves
 * them masked. Constant time, branch-free:
 *   Cortex-M: token = PRIMASK (mrs; cpsid i), unlock = msr PRIMASK, token.
 *   RISC-V:   token = mstatus & MIE (csrrci mstatus, MIE), unlock = csrs mstatus, token.
 * `context` is ignored. Install: rt_heap_set_lock(heap, port_lock_hook, port_unlock_hook, NULL). */
uintptr_t port_lock_hook(void *context);
void port_unlock_hook(void *context, uintptr_t token);

/* Whether maskable interrupts are masked now (PRIMASK set / mstatus.MIE clear). */
bool port_irq_masked(void);

/* --- identification --------------------------------------------------------------------------- */

/* e.g. "cortex-m4 (QEMU mps2-an386)", "rv32imac (QEMU virt)". */
const char *port_name(void);

#endif /* RTALLOC_PORT_H */
