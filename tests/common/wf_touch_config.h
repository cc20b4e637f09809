/* SPDX-License-Identifier: MIT */
/*
 * wf_touch_config.h -- the wf_touch test's rtalloc configuration header (RT_CONFIG_HEADER): the
 * wait-free tree's and the cache's node access helpers report every node whose words they
 * address, so the test counts the nodes a call really reads or writes (src/waitfree/wf_tree.h,
 * RT_WF_TOUCH).
 */
#ifndef WF_TOUCH_CONFIG_H
#define WF_TOUCH_CONFIG_H

#include <stddef.h>

void wf_test_touch(const void *wf, size_t node);
#define RT_WF_TOUCH(wf, node) wf_test_touch((const void *)(wf), (node))

#endif /* WF_TOUCH_CONFIG_H */
