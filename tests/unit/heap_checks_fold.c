/* SPDX-License-Identifier: MIT */
/*
 * heap_checks_fold.c -- tests/unit/heap_checks.c built against the core with the folded header tag
 * (tests/CMakeLists.txt: RT_HEAP_MAX_BLOCK_LOG2 = 40 on 64-bit, 16 on 32-bit), where containment
 * looks twice before it trusts a header; its chance_header case runs only there on 64-bit.
 */
#include "heap_checks.c"
