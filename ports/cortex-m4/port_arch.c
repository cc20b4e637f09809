/* SPDX-License-Identifier: MIT */
/*
 * ports/cortex-m4/port_arch.c -- Cortex-M4F on QEMU mps2-an386: semihosting, the SysTick
 * instruction counter, PRIMASK lock hooks.
 */
#include "port_internal.h"

const char port_arch_count_unit[] = "instructions (QEMU -icount shift=7, SysTick 25 MHz: "
                                    "round(ticks / 3.2); not cycles)";
const char port_arch_icount_flags[] = "-icount shift=7,align=off,sleep=off";

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))

/* Semihosting: bkpt 0xAB with r0 = operation, r1 = argument; r0 = result. */
uintptr_t port_arch_semihost(uintptr_t op, uintptr_t arg)
{
    uintptr_t result;
    __asm__ __volatile__("mov r0, %1\n\t"
                         "mov r1, %2\n\t"
                         "bkpt 0xAB\n\t"
                         "mov %0, r0"
                         : "=r"(result)
                         : "r"(op), "r"(arg)
                         : "r0", "r1", "memory");
    return result;
}

void port_arch_init(void)
{
    /* SysTick: reload 0xFFFFFF, processor clock, no interrupt; wait for the first reload so that
     * the counter runs its full range from then on. */
    REG(PORT_SYST_CSR) = 0;
    REG(PORT_SYST_RVR) = 0xFFFFFFu;
    REG(PORT_SYST_CVR) = 0;              /* any write clears it and COUNTFLAG */
    REG(PORT_SYST_CSR) = (1u << 2) | 1u; /* CLKSOURCE = processor, ENABLE */
    while ((REG(PORT_SYST_CSR) & (1u << 16)) == 0u) {
        /* COUNTFLAG: the counter wrapped to the reload value */
    }
    __asm__ __volatile__("cpsie i" : : : "memory");
}

_Noreturn void port_arch_exit_fallback(int status)
{
    (void)status;
    __asm__ __volatile__("cpsid i" : : : "memory");
    for (;;) {
        __asm__ __volatile__("wfi");
    }
}

uint32_t port_arch_empty_raw(void)
{
    uint32_t a, t0, t1;
    __asm__ __volatile__("movw %[a], #0xE018\n\t"
                         "movt %[a], #0xE000\n\t"
                         "ldr %[t0], [%[a]]\n\t"
                         "ldr %[t1], [%[a]]"
                         : [a] "=&r"(a), [t0] "=&r"(t0), [t1] "=&r"(t1)
                         :
                         : "memory");
    return port_arch_elapsed(t0, t1);
}

uint32_t port_arch_loop_raw(uint32_t n)
{
    uint32_t a, t0, t1, k = n;
    __asm__ __volatile__("movw %[a], #0xE018\n\t"
                         "movt %[a], #0xE000\n\t"
                         "ldr %[t0], [%[a]]\n\t"
                         "1: subs %[k], %[k], #1\n\t"
                         "bne 1b\n\t"
                         "ldr %[t1], [%[a]]"
                         : [a] "=&r"(a), [t0] "=&r"(t0), [t1] "=&r"(t1), [k] "+r"(k)
                         :
                         : "cc", "memory");
    return port_arch_elapsed(t0, t1);
}

/* --- lock hooks: PRIMASK --------------------------------------------------------------------- */

uintptr_t port_lock_hook(void *context)
{
    (void)context;
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\t"
                         "cpsid i"
                         : "=r"(primask)
                         :
                         : "memory");
    return primask;
}

void port_unlock_hook(void *context, uintptr_t token)
{
    (void)context;
    __asm__ __volatile__("msr primask, %0" : : "r"(token) : "memory");
}

bool port_irq_masked(void)
{
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask" : "=r"(primask));
    return (primask & 1u) != 0u;
}
