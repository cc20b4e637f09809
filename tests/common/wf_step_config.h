/* SPDX-License-Identifier: MIT */
/*
 * wf_step_config.h -- the wf_interleave test's rtalloc configuration header (RT_CONFIG_HEADER):
 * the wait-free tree's step hook hands control to the test's scheduler before every atomic step.
 */
#ifndef WF_STEP_CONFIG_H
#define WF_STEP_CONFIG_H

#include <stddef.h>

void wf_test_step(const void *wf, int step, size_t node);
#define RT_WF_STEP(wf, step, node) wf_test_step((const void *)(wf), (step), (node))

#endif /* WF_STEP_CONFIG_H */
