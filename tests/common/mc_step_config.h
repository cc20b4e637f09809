/* SPDX-License-Identifier: MIT */
/*
 * mc_step_config.h -- the mc_interleave test's rtalloc configuration header (RT_CONFIG_HEADER):
 * the thread heaps' step hook hands control to the test's scheduler before every step on state
 * another context may touch (src/mcheap/mcheap.c, RT_MC_STEP).
 */
#ifndef MC_STEP_CONFIG_H
#define MC_STEP_CONFIG_H

#include <stdint.h>

void mc_test_step(const void *mc, int step, uintptr_t what);
#define RT_MC_STEP(mc, step, x) mc_test_step((const void *)(mc), (step), (uintptr_t)(x))

#endif /* MC_STEP_CONFIG_H */
