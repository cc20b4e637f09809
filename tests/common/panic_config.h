/* SPDX-License-Identifier: MIT */
/*
 * panic_config.h -- the panic test's rtalloc configuration header (RT_CONFIG_HEADER): a debug
 * build whose RT_PANIC records the message instead of trapping.
 */
#ifndef PANIC_CONFIG_H
#define PANIC_CONFIG_H

void rt_test_panic(const char *message);
#define RT_PANIC(message) rt_test_panic(message)
#if !defined(RT_DEBUG) || RT_DEBUG < 1
#undef RT_DEBUG
#define RT_DEBUG 1
#endif

#endif /* PANIC_CONFIG_H */
