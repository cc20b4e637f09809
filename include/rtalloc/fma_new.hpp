// SPDX-License-Identifier: MIT
// rtalloc/fma_new.hpp -- forwards to rtalloc/hosted/fma_new.hpp: the hosted headers (those that
// need an operating system) live apart from the freestanding core's. Kept so that this path
// works.
#include "hosted/fma_new.hpp"
