/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/rv32/board.c -- QEMU virt (RV32IMAC, machine mode): semihosting console and
 * exit, the CLINT machine timer as the periodic interrupt, and the trap dispatch.
 *
 * The CLINT's mtime counts at 10 MHz of virtual time on this board. Under QEMU -icount shift=0
 * each instruction takes 1 ns, so mtimecmp = mtime + FW_MTIME_PERIOD interrupts after
 * FW_MTIME_PERIOD * 100 instructions, at the same instructions on every run.
 */
#include <stdint.h>

#include "../board.h"

#ifndef FW_MTIME_PERIOD
#define FW_MTIME_PERIOD 50u /* 5,000 instructions under -icount shift=0 */
#endif

const char fw_board_name[] = "RV32IMAC, QEMU virt";
const char fw_timer_name[] = "CLINT machine timer";
const uint32_t fw_timer_period = FW_MTIME_PERIOD * 100u;

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define CLINT_MTIMECMP 0x02004000u /* hart 0 */
#define CLINT_MTIME 0x0200BFF8u
#define MIE_MTIE 0x80u
#define MCAUSE_MTIMER 0x80000007u
#define SIFIVE_TEST 0x100000u /* write (status << 16) | 0x3333 to stop QEMU with status */

uintptr_t fw_semihost(uintptr_t op, uintptr_t arg); /* start.S */
void fw_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval);

void fw_raw_puts(const char *s) { (void)fw_semihost(0x04u, (uintptr_t)s); /* SYS_WRITE0 */ }

_Noreturn void fw_exit(int status)
{
    uint32_t block[2] = {0x20026u, (uint32_t)status};
    (void)fw_semihost(0x20u, (uintptr_t)block); /* SYS_EXIT_EXTENDED */
    REG(SIFIVE_TEST) = status == 0 ? 0x5555u : ((uint32_t)status << 16) | 0x3333u;
    for (;;) {
        __asm__ __volatile__("wfi");
    }
}

static uint64_t mtime(void)
{
    uint32_t hi, lo;
    do {
        hi = REG(CLINT_MTIME + 4u);
        lo = REG(CLINT_MTIME);
    } while (hi != REG(CLINT_MTIME + 4u));
    return ((uint64_t)hi << 32) | lo;
}

/* The next interrupt FW_MTIME_PERIOD after now (not after the last deadline: a long handler
 * must not make the interrupts pile up). */
static void arm_timer(void)
{
    uint64_t next = mtime() + FW_MTIME_PERIOD;
    REG(CLINT_MTIMECMP + 4u) = 0xFFFFFFFFu; /* no spurious match while the halves change */
    REG(CLINT_MTIMECMP) = (uint32_t)next;
    REG(CLINT_MTIMECMP + 4u) = (uint32_t)(next >> 32);
}

void fw_timer_start(void)
{
    arm_timer();
    __asm__ __volatile__("csrs mie, %0\n\t"
                         "csrsi mstatus, 8"
                         :
                         : "r"(MIE_MTIE)
                         : "memory");
}

void fw_timer_stop(void) { __asm__ __volatile__("csrc mie, %0" : : "r"(MIE_MTIE) : "memory"); }

void fw_trap(uint32_t mcause, uint32_t mepc, uint32_t mtval)
{
    if (mcause == MCAUSE_MTIMER) {
        arm_timer();
        fw_tick();
        return;
    }
    fw_raw_puts("\nfirmware: FAULT: trap, ");
    fw_raw_hex("mcause", mcause);
    fw_raw_hex("mepc", mepc);
    fw_raw_hex("mtval", mtval);
    fw_raw_puts("\n");
    fw_exit(FW_EXIT_FAULT);
}
