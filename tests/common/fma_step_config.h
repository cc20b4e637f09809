/* SPDX-License-Identifier: MIT */
/*
 * fma_step_config.h -- the fma_kill test's rtalloc configuration header (RT_CONFIG_HEADER): the
 * FMA core's step hook (src/fma/fma_internal.h) hands control to the test before every store to
 * region metadata, so that a forked process can stop (die) at each of them in turn.
 */
#ifndef FMA_STEP_CONFIG_H
#define FMA_STEP_CONFIG_H

void fma_test_step(const void *fma);
#define RT_FMA_STEP(f) fma_test_step((const void *)(f))

#endif /* FMA_STEP_CONFIG_H */
