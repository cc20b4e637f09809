/* SPDX-License-Identifier: MIT */
/*
 * idx_count_config.h -- the bounded test's rtalloc configuration header (RT_CONFIG_HEADER): the
 * indexes' count hook (src/index/list.h, RT_IDX_COUNT) hands every list read, insert and remove
 * to the test, which bounds a call's reads by these counts rather than by the probes the
 * allocator reports of itself.
 */
#ifndef IDX_COUNT_CONFIG_H
#define IDX_COUNT_CONFIG_H

/* The events, numbered as src/index/list.h numbers them (IDX_EV_*; bounded.c checks the meaning of
 * each on a fresh heap, so a renumbering fails there). */
#define BT_EV_FIND 0   /* a find */
#define BT_EV_HEAD 1   /* a list head read by a find */
#define BT_EV_BLOCK 2  /* a block read by a find */
#define BT_EV_MAP 3    /* a bitmap word searched by a find */
#define BT_EV_INSERT 4 /* a block inserted into the index */
#define BT_EV_REMOVE 5 /* a block removed from it */
#define BT_EV_KINDS 6

void idx_test_count(int event);
#define RT_IDX_COUNT(event) idx_test_count(event)

#endif /* IDX_COUNT_CONFIG_H */
