/* SPDX-License-Identifier: MIT */
/* rtalloc/drivers.h -- forwards to rtalloc/hosted/drivers.h: the hosted headers (those that need an
 * operating system) live apart from the freestanding core's. Kept so that this path works. */
#include "hosted/drivers.h"
