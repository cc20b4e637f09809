/* SPDX-License-Identifier: MIT */
/* rtalloc/fma_region.h -- forwards to rtalloc/hosted/fma_region.h: the hosted headers (those
 * that need an operating system) live apart from the freestanding core's. Kept so that this path
 * works. */
#include "hosted/fma_region.h"
