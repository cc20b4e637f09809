/* SPDX-License-Identifier: MIT */
/*
 * invariant.h -- RT_INVARIANT(cond, why): a pre- or postcondition, or an invariant, stated as
 * code where the comments state it, with the sentence that explains it.
 *
 * RT_DEBUG >= 1: RT_ASSERT(cond && why) (rtalloc/config.h; traps by default), so the sentence is
 * part of the assertion's text for a platform whose RT_ASSERT prints its argument. RT_DEBUG 0:
 * nothing -- cond is not even compiled, so a release build's code is exactly what it was without
 * the assertions.
 *
 * What an invariant may state: the allocator's own computations (sizes, classes, addresses it
 * derived), and facts about memory the checker has already verified in the same call with the
 * lock held. Never a fact about memory the application can reach that no check has verified yet:
 * an overflow into metadata is bad input, reported through the handler (doc/design.md, "Bad
 * input and the handler"), not a broken invariant.
 */
#ifndef RT_BASE_INVARIANT_H
#define RT_BASE_INVARIANT_H

#include "rtalloc/config.h"

#if RT_DEBUG >= 1
#define RT_INVARIANT(cond, why) RT_ASSERT((cond) && (why))
#else
#define RT_INVARIANT(cond, why) ((void)0)
#endif

#endif /* RT_BASE_INVARIANT_H */
