/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/cortex-m4/board.c -- QEMU mps2-an386 (Cortex-M4F): semihosting console and
 * exit, and SysTick as the periodic interrupt.
 *
 * SysTick counts the processor clock (25 MHz on this board). Under QEMU -icount shift=7 each
 * instruction advances virtual time by 128 ns, 3.2 ticks, so a reload of FW_SYSTICK_RELOAD
 * ticks interrupts every FW_SYSTICK_RELOAD / 3.2 instructions, at the same instructions on every
 * run: the test is repeatable.
 */
#include <stdint.h>

#include "../board.h"

#ifndef FW_SYSTICK_RELOAD
#define FW_SYSTICK_RELOAD 16000u /* 5,000 instructions under -icount shift=7 */
#endif

const char fw_board_name[] = "Cortex-M4F, QEMU mps2-an386";
const char fw_timer_name[] = "SysTick";
const uint32_t fw_timer_period = (FW_SYSTICK_RELOAD * 10u + 16u) / 32u; /* ticks / 3.2 */

void SysTick_Handler(void);

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define SCB_SHPR3 0xE000ED20u /* priority of SysTick: bits 31..24 */

/* Semihosting: bkpt 0xAB, r0 = operation, r1 = argument. */
static uintptr_t semihost(uintptr_t op, uintptr_t arg)
{
    register uintptr_t r0 __asm__("r0") = op;
    register uintptr_t r1 __asm__("r1") = arg;
    __asm__ __volatile__("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void fw_raw_puts(const char *s) { (void)semihost(0x04u, (uintptr_t)s); /* SYS_WRITE0 */ }

_Noreturn void fw_exit(int status)
{
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with any status */
    uint32_t block[2] = {0x20026u, (uint32_t)status};
    (void)semihost(0x20u, (uintptr_t)block);
    for (;;) {
        __asm__ __volatile__("cpsid i\n\twfi");
    }
}

void fw_timer_start(void)
{
    /* SysTick at the lowest priority of the 3 bits every ARMv7-M device has (as RTOSes set it):
     * masked by PRIMASK and by a BASEPRI lock of any threshold */
    REG(SCB_SHPR3) = (REG(SCB_SHPR3) & 0x00FFFFFFu) | (0xE0u << 24);
    REG(SYST_CSR) = 0;
    REG(SYST_RVR) = FW_SYSTICK_RELOAD - 1u;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = (1u << 2) | (1u << 1) | 1u; /* processor clock, interrupt, enable */
    __asm__ __volatile__("cpsie i" : : : "memory");
}

void fw_timer_stop(void) { REG(SYST_CSR) = 0; }

void SysTick_Handler(void) { fw_tick(); }
