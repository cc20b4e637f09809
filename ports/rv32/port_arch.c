/* SPDX-License-Identifier: MIT */
/*
 * ports/rv32/port_arch.c -- RV32IMAC on QEMU virt: the minstret instruction counter, mstatus.MIE
 * lock hooks, trap reports and the SiFive test device as the exit of last resort.
 */
#include "port_internal.h"

const char port_arch_count_unit[] = "instructions (QEMU -icount shift=0, minstret; not cycles)";
const char port_arch_icount_flags[] = "-icount shift=0,align=off,sleep=off";

#define MSTATUS_MIE 0x8u
#define SIFIVE_TEST 0x100000u /* QEMU virt: write 0x5555 to pass, (status << 16) | 0x3333 to fail */

_Noreturn void port_trap_report(uint32_t mcause, uint32_t mepc, uint32_t mtval);

void port_arch_init(void)
{
    /* no interrupt source enabled, interrupts globally enabled (as on Cortex-M after reset) */
    __asm__ __volatile__("csrw mie, zero\n\t"
                         "csrsi mstatus, 8"
                         :
                         :
                         : "memory");
}

_Noreturn void port_arch_exit_fallback(int status)
{
    volatile uint32_t *test = (volatile uint32_t *)(uintptr_t)SIFIVE_TEST;
    *test = status == 0 ? 0x5555u : ((uint32_t)status << 16) | 0x3333u;
    for (;;) {
        __asm__ __volatile__("wfi");
    }
}

_Noreturn void port_trap_report(uint32_t mcause, uint32_t mepc, uint32_t mtval)
{
    const char *what = "trap";
    if ((mcause & 0x80000000u) != 0u) {
        what = "unexpected interrupt (mcause has the interrupt bit)";
    } else if (mcause == 3u) {
        what = "breakpoint (ebreak: __builtin_trap, RT_ASSERT or RT_PANIC)";
    } else if (mcause == 2u) {
        what = "illegal instruction";
    } else if (mcause == 0u || mcause == 4u || mcause == 6u) {
        what = "misaligned access";
    } else if (mcause == 1u || mcause == 5u || mcause == 7u) {
        what = "access fault";
    }
    port_fault(what, mepc, mcause, mtval);
}

uint32_t port_arch_empty_raw(void)
{
    uint32_t t0, t1;
    __asm__ __volatile__("csrr %0, minstret\n\t"
                         "csrr %1, minstret"
                         : "=&r"(t0), "=&r"(t1)
                         :
                         : "memory");
    return port_arch_elapsed(t0, t1);
}

uint32_t port_arch_loop_raw(uint32_t n)
{
    uint32_t t0, t1, k = n;
    __asm__ __volatile__("csrr %[t0], minstret\n\t"
                         "1: addi %[k], %[k], -1\n\t"
                         "bnez %[k], 1b\n\t"
                         "csrr %[t1], minstret"
                         : [t0] "=&r"(t0), [t1] "=&r"(t1), [k] "+r"(k)
                         :
                         : "memory");
    return port_arch_elapsed(t0, t1);
}

/* --- lock hooks: mstatus.MIE ----------------------------------------------------------------- */

uintptr_t port_lock_hook(void *context)
{
    (void)context;
    uint32_t old;
    __asm__ __volatile__("csrrci %0, mstatus, 8" : "=r"(old) : : "memory");
    return old & MSTATUS_MIE;
}

void port_unlock_hook(void *context, uintptr_t token)
{
    (void)context;
    __asm__ __volatile__("csrs mstatus, %0" : : "r"(token) : "memory");
}

bool port_irq_masked(void)
{
    uint32_t s;
    __asm__ __volatile__("csrr %0, mstatus" : "=r"(s));
    return (s & MSTATUS_MIE) == 0u;
}
