/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/board.h -- what the application needs from a board: a periodic timer
 * interrupt, a console and an exit that need no C library (usable from fault and interrupt
 * handlers, where the C library's stdio may be in the middle of a call), and the exit statuses.
 *
 * Boards: cortex-m4/ (QEMU mps2-an386: SysTick) and rv32/ (QEMU virt: the CLINT machine timer).
 * Console and exit are semihosting, as the C library's own stdio (rdimon, libsemihost) is.
 */
#ifndef FW_BOARD_H
#define FW_BOARD_H

#include <stdint.h>

/* Exit statuses (the test expects 0; the no-lock build one of the failures). */
#define FW_EXIT_OK 0
#define FW_EXIT_FAULT 3      /* HardFault / trap: the handler printed where */
#define FW_EXIT_HEAP_ERROR 4 /* the heap's error handler was called, or a block outside the heap */
#define FW_EXIT_PATTERN 5    /* a block's contents changed while it was owned */
#define FW_EXIT_CHECK 6      /* rt_heap_check failed at the end */
#define FW_EXIT_COVERAGE 7   /* the test did not test: too few interrupts inside calls, ... */
#define FW_EXIT_WATCHDOG 8   /* main made no progress for FW_WATCHDOG_TICKS timer interrupts */

extern const char fw_board_name[];
extern const char fw_timer_name[];
extern const uint32_t fw_timer_period; /* instructions between interrupts, under QEMU -icount */

/* Starts the periodic timer interrupt: it calls fw_tick() (the application's), with nothing
 * masked but what the hardware masks for an interrupt. */
void fw_timer_start(void);
void fw_timer_stop(void);

/* Semihosting console and exit; no C library. */
void fw_raw_puts(const char *s);
_Noreturn void fw_exit(int status);

/* The application's timer work (examples/firmware/firmware.c). */
void fw_tick(void);

/* The C start (examples/firmware/startup.c), entered from the reset handler with a stack:
 * initialises memory, creates the heap, initialises the C library, runs main, exits. */
_Noreturn void fw_c_start(void);

/* Shared by the boards: "<what> 0x<hex>" on the raw console. */
void fw_raw_hex(const char *what, uint32_t value);

#endif /* FW_BOARD_H */
