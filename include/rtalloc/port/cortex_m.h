/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/port/cortex_m.h -- interrupt-masking lock hooks for Arm Cortex-M, header-only.
 *
 * Each function has the type of rt_lock_fn / rt_unlock_fn (rtalloc/common.h): install a pair with
 *     rt_heap_set_lock(heap, rt_cortex_m_primask_lock, rt_cortex_m_primask_unlock, NULL);
 * The lock returns the mask it found and the unlock writes that value back, so sections nest: an
 * allocator call from an interrupt handler, or from inside another masked section, leaves the mask
 * as it found it. Each is a few instructions and never blocks: the masked stretch of an allocator
 * call is the allocator's own bounded path (rtalloc/heap.h).
 *
 *   PRIMASK   masks every interrupt of configurable priority (all but NMI and HardFault). Every
 *             Cortex-M (ARMv6-M, ARMv7-M, ARMv8-M).
 *   BASEPRI   masks only interrupts whose priority value is >= a threshold, so that more urgent
 *             interrupts (lower values) stay live. An interrupt handler that stays live must then
 *             never call the allocator. ARMv7-M and ARMv8-M Mainline only (Cortex-M3, M4, M7, M33,
 *             M55, ...): not on Cortex-M0, M0+, M1 or M23, where RT_CORTEX_M_HAVE_BASEPRI is 0
 *             and these two functions are not declared.
 *
 * The BASEPRI threshold is the lock's context, a priority value cast to a pointer:
 *     rt_heap_set_lock(heap, rt_cortex_m_basepri_lock, rt_cortex_m_basepri_unlock,
 *                      (void *)(uintptr_t)0x40);
 * A NULL context takes RT_CORTEX_M_BASEPRI_THRESHOLD (define it before including this header), whose
 * default, 1 << (8 - RT_CORTEX_M_PRIO_BITS), masks everything but priority 0.
 * RT_CORTEX_M_PRIO_BITS is the number of priority bits the device implements: __NVIC_PRIO_BITS
 * when a CMSIS device header was included first, else 3, the fewest any ARMv7-M device has. A
 * threshold in bits the device does not implement reads back as 0 and masks nothing: give values
 * in the device's top bits (with 4 bits: 0x10, 0x20, ..., 0xF0).
 *
 * Not part of the freestanding core (it is target code), but it needs only <stdint.h> and the
 * compiler: no CMSIS header. GCC and Clang inline assembly.
 */
#ifndef RTALLOC_PORT_CORTEX_M_H
#define RTALLOC_PORT_CORTEX_M_H

#include <stdint.h>

#include "../common.h"

#if !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE != 'M'
#error "rtalloc/port/cortex_m.h: for Arm M-profile targets (-mcpu=cortex-m...)"
#endif

/* BASEPRI is part of ARMv7-M and ARMv8-M Mainline, whose Thumb is Thumb-2; ARMv6-M and ARMv8-M
 * Baseline (Thumb-1 plus a few) have no BASEPRI. */
#if defined(__ARM_ARCH_ISA_THUMB) && __ARM_ARCH_ISA_THUMB >= 2
#define RT_CORTEX_M_HAVE_BASEPRI 1
#else
#define RT_CORTEX_M_HAVE_BASEPRI 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* PRIMASK: returns the previous PRIMASK (bit 0 set if interrupts were already masked). */
static inline uintptr_t rt_cortex_m_primask_lock(void *context)
{
    uint32_t primask;
    (void)context;
    __asm__ __volatile__("mrs %0, primask\n\t"
                         "cpsid i"
                         : "=r"(primask)
                         :
                         : "memory");
    return primask;
}

/* Writes the token back: unmasks only if the matching lock found interrupts unmasked. */
static inline void rt_cortex_m_primask_unlock(void *context, uintptr_t token)
{
    (void)context;
    __asm__ __volatile__("msr primask, %0" : : "r"((uint32_t)token) : "memory");
}

#if RT_CORTEX_M_HAVE_BASEPRI

#ifndef RT_CORTEX_M_PRIO_BITS
#ifdef __NVIC_PRIO_BITS
#define RT_CORTEX_M_PRIO_BITS __NVIC_PRIO_BITS
#else
#define RT_CORTEX_M_PRIO_BITS 3
#endif
#endif

#ifndef RT_CORTEX_M_BASEPRI_THRESHOLD
#define RT_CORTEX_M_BASEPRI_THRESHOLD (1u << (8 - (RT_CORTEX_M_PRIO_BITS)))
#endif

/* BASEPRI: raises the mask to the threshold (BASEPRI_MAX only ever raises it, so a lock taken
 * inside a stricter section changes nothing) and returns the previous BASEPRI. */
static inline uintptr_t rt_cortex_m_basepri_lock(void *context)
{
    uint32_t threshold = (uint32_t)(uintptr_t)context;
    uint32_t old;
    if (threshold == 0u) {
        threshold = (uint32_t)(RT_CORTEX_M_BASEPRI_THRESHOLD);
    }
    __asm__ __volatile__("mrs %0, basepri\n\t"
                         "msr basepri_max, %1\n\t"
                         "isb"
                         : "=&r"(old)
                         : "r"(threshold)
                         : "memory");
    return old;
}

/* Writes the previous BASEPRI back. */
static inline void rt_cortex_m_basepri_unlock(void *context, uintptr_t token)
{
    (void)context;
    __asm__ __volatile__("msr basepri, %0" : : "r"((uint32_t)token) : "memory");
}

#endif /* RT_CORTEX_M_HAVE_BASEPRI */

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_PORT_CORTEX_M_H */
