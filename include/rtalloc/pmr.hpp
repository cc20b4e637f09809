// SPDX-License-Identifier: MIT
// rtalloc/pmr.hpp -- forwards to rtalloc/hosted/pmr.hpp: the hosted headers (those that need an
// operating system) live apart from the freestanding core's. Kept so that this path works.
#include "hosted/pmr.hpp"
