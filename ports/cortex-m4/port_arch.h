/* SPDX-License-Identifier: MIT */
/*
 * ports/cortex-m4/port_arch.h -- Cortex-M4F on QEMU mps2-an386: the inline counter read behind
 * port_count_begin/end (ports/common/port.h).
 *
 * SysTick counts down from 0xFFFFFF at the processor clock (25 MHz on the board). Under QEMU
 * -icount shift=7 each instruction advances virtual time by 128 ns = 3.2 ticks, so the ticks of an
 * interval of n instructions are 3.2 n rounded up or down (|error| < 1 tick) and
 * round(ticks / 3.2) = floor((10 ticks + 16) / 32) is n exactly -- as long as the interval
 * holds fewer than 2^24 ticks (PORT_COUNT_MAX instructions): no overflow interrupt is used,
 * because its handler would be counted too.
 */
#ifndef RTALLOC_PORT_ARCH_H
#define RTALLOC_PORT_ARCH_H

#include <stdint.h>

#define PORT_ARCH_NAME "cortex-m4 (QEMU mps2-an386)"
#define PORT_SYST_CSR 0xE000E010u
#define PORT_SYST_RVR 0xE000E014u
#define PORT_SYST_CVR 0xE000E018u

/* Longest interval one begin/end pair measures: 2^24 ticks / 3.2. */
#define PORT_COUNT_MAX 5242879u

/* SysTick's current value. The address is built inside the asm (movw/movt, no literal pool), so
 * the read costs the same 3 instructions wherever it is inlined; the load is the last of them. */
static inline uint32_t port_arch_counter(void)
{
    uint32_t v;
    __asm__ __volatile__("movw %0, #0xE018\n\t"
                         "movt %0, #0xE000\n\t"
                         "ldr %0, [%0]"
                         : "=r"(v)
                         :
                         : "memory");
    return v;
}

/* Instructions between two reads (SysTick counts down; 24-bit wrap-around). */
static inline uint32_t port_arch_elapsed(uint32_t begin, uint32_t end)
{
    uint32_t ticks = (begin - end) & 0xFFFFFFu;
    return (ticks * 10u + 16u) / 32u;
}

#endif /* RTALLOC_PORT_ARCH_H */
