/* SPDX-License-Identifier: MIT */
/*
 * fma_segment.h -- for the region tests (C and C++): whether the POSIX shared-memory segment of
 * a region key exists. True also when it exists but cannot be opened (an error other than
 * ENOENT), so that "gone" is never claimed by mistake.
 */
#ifndef RT_TESTS_FMA_SEGMENT_H
#define RT_TESTS_FMA_SEGMENT_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rtalloc/fma_region.h"

static inline bool segment_exists(const char *key)
{
    char name[256];
    if (!rt_fma_region_name(key, name, sizeof name)) {
        return false;
    }
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd >= 0) {
        (void)close(fd);
        return true;
    }
    return errno != ENOENT;
}

#endif /* RT_TESTS_FMA_SEGMENT_H */
