/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/port/riscv.h -- interrupt-masking lock hooks for RISC-V, header-only.
 *
 * Each function has the type of rt_lock_fn / rt_unlock_fn (rtalloc/common.h): install a pair with
 *     rt_heap_set_lock(heap, rt_riscv_mie_lock, rt_riscv_mie_unlock, NULL);
 * The lock clears the global interrupt enable with one csrrci and returns the bit it found; the
 * unlock sets it again only if it was set (csrs of the token), so sections nest and a call from a
 * trap handler (which runs with the bit already clear) leaves it clear. Neither blocks.
 *
 *   mstatus.MIE   machine mode: firmware without an operating system (QEMU virt -bios none, most
 *                 microcontrollers).
 *   sstatus.SIE   supervisor mode, for code that runs under an SBI firmware.
 *
 * Needs the Zicsr extension (-march=..._zicsr with GCC 12 and later). Not part of the
 * freestanding core (it is target code), but it needs only <stdint.h> and the compiler.
 */
#ifndef RTALLOC_PORT_RISCV_H
#define RTALLOC_PORT_RISCV_H

#include <stdint.h>

#include "../common.h"

#if !defined(__riscv)
#error "rtalloc/port/riscv.h: for RISC-V targets"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RT_RISCV_MSTATUS_MIE 0x8u /* mstatus bit 3 */
#define RT_RISCV_SSTATUS_SIE 0x2u /* sstatus bit 1 */

/* mstatus.MIE: returns RT_RISCV_MSTATUS_MIE if interrupts were enabled, else 0. */
static inline uintptr_t rt_riscv_mie_lock(void *context)
{
    uintptr_t old;
    (void)context;
    __asm__ __volatile__("csrrci %0, mstatus, 8" : "=r"(old) : : "memory");
    return old & RT_RISCV_MSTATUS_MIE;
}

static inline void rt_riscv_mie_unlock(void *context, uintptr_t token)
{
    (void)context;
    __asm__ __volatile__("csrs mstatus, %0" : : "r"(token & RT_RISCV_MSTATUS_MIE) : "memory");
}

/* sstatus.SIE: returns RT_RISCV_SSTATUS_SIE if interrupts were enabled, else 0. */
static inline uintptr_t rt_riscv_sie_lock(void *context)
{
    uintptr_t old;
    (void)context;
    __asm__ __volatile__("csrrci %0, sstatus, 2" : "=r"(old) : : "memory");
    return old & RT_RISCV_SSTATUS_SIE;
}

static inline void rt_riscv_sie_unlock(void *context, uintptr_t token)
{
    (void)context;
    __asm__ __volatile__("csrs sstatus, %0" : : "r"(token & RT_RISCV_SSTATUS_SIE) : "memory");
}

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_PORT_RISCV_H */
