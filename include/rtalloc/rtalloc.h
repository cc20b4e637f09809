/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/rtalloc.h -- umbrella header: every allocator of the freestanding core.
 */
#ifndef RTALLOC_RTALLOC_H
#define RTALLOC_RTALLOC_H

#include "buddy.h"
#include "common.h"
#include "config.h"
#include "fma.h"
#include "heap.h"
#include "registry.h"
#include "waitfree.h"
#include "wfcache.h"

#define RTALLOC_VERSION_MAJOR 0
#define RTALLOC_VERSION_MINOR 1
#define RTALLOC_VERSION_PATCH 0

#endif /* RTALLOC_RTALLOC_H */
