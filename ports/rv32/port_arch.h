/* SPDX-License-Identifier: MIT */
/*
 * ports/rv32/port_arch.h -- RV32IMAC on QEMU virt: the inline counter read behind
 * port_count_begin/end (ports/common/port.h).
 *
 * minstret counts retired instructions; under QEMU -icount shift=0 it advances exactly one per
 * instruction (other shifts scale it by 2^shift; without -icount it follows host time). The low
 * 32 bits are enough for one interval (wrap-around handled by the unsigned difference).
 */
#ifndef RTALLOC_PORT_ARCH_H
#define RTALLOC_PORT_ARCH_H

#include <stdint.h>

#define PORT_ARCH_NAME "rv32imac (QEMU virt)"

/* Longest interval one begin/end pair measures. */
#define PORT_COUNT_MAX 0xFFFFFFFFu

static inline uint32_t port_arch_counter(void)
{
    uint32_t v;
    __asm__ __volatile__("csrr %0, minstret" : "=r"(v) : : "memory");
    return v;
}

static inline uint32_t port_arch_elapsed(uint32_t begin, uint32_t end) { return end - begin; }

#endif /* RTALLOC_PORT_ARCH_H */
