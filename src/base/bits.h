/* SPDX-License-Identifier: MIT */
/*
 * bits.h -- the bit helpers of the core's bottom layer: alignment, log2 and shifts that cannot be
 * undefined. Bit scans go through the overridable RT_CLZ / RT_CTZ of rtalloc/config.h.
 */
#ifndef RT_BASE_BITS_H
#define RT_BASE_BITS_H

#include <stddef.h>
#include <stdint.h>

#include "rtalloc/common.h"

static inline size_t rt_align_up(size_t x, size_t a) { return (x + a - 1u) & ~(a - 1u); }
static inline uintptr_t rt_addr_align_up(uintptr_t x, uintptr_t a) { return (x + a - 1u) & ~(a - 1u); }

/* floor(log2(x)) for x > 0. */
/* (width - 1) ^ clz == (width - 1) - clz since clz < width: the XOR form compiles to one bit scan
 * (BSR on x86), the subtraction to a scan, an XOR and a subtraction. */
static inline unsigned rt_log2(size_t x) { return (unsigned)(8u * sizeof(size_t) - 1u) ^ RT_CLZ(x); }

/* 1 << n for n < bit width; 0 otherwise (no undefined shift). */
static inline size_t rt_bit(unsigned n) { return n < 8u * sizeof(size_t) ? (size_t)1 << n : 0u; }
/* All bits at positions >= n. */
static inline size_t rt_bits_from(unsigned n) { return n < 8u * sizeof(size_t) ? ~(size_t)0 << n : 0u; }

#endif /* RT_BASE_BITS_H */
