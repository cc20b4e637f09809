/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/config.h -- every compile-time knob of the library, each an #ifndef default.
 *
 * Override a knob with -DNAME=value, or put your overrides in a header of your own and build
 * with -DRT_CONFIG_HEADER='"my_rtalloc_config.h"': it is included first, before any default.
 * Knobs that change layouts (alignment, maximum block, TLSF second level, buddy unit) must be
 * the same for the library and for every program that includes its headers.
 */
#ifndef RTALLOC_CONFIG_H
#define RTALLOC_CONFIG_H

#ifdef RT_CONFIG_HEADER
#include RT_CONFIG_HEADER
#endif

#include <stddef.h>
#include <stdint.h>

/* Debug tiers. 0: release (bad input still detected in O(1) and reported, never corrupts);
 * 1: cheap internal assertions; 2: also exact O(n) membership checks of every pointer freed
 * and a full integrity walk after every operation (slow; for tests). */
#ifndef RT_DEBUG
#define RT_DEBUG 0
#endif

/* What a debug build (RT_DEBUG >= 1) does with misuse (a bad pointer, a double free, corruption)
 * when the allocator has no error handler: "a clear message and abort" (doc/design.md, "Bad input
 * and the handler"). The core cannot print, so the default only traps; a platform defines
 * RT_PANIC(message) to print the message (a static string) on its console first, e.g.
 * -DRT_PANIC(m)=my_panic(m). Release builds count the error and refuse the operation instead. */
#ifndef RT_PANIC
#define RT_PANIC(message) ((void)(message), __builtin_trap())
#endif

/* Internal assertion. Default: trap. A platform may route it to its own panic. */
#ifndef RT_ASSERT
#define RT_ASSERT(x) ((x) ? (void)0 : __builtin_trap())
#endif

/* Hardening level: how much redundancy the allocators keep in their metadata so that an
 * application's write past (or before) its block, into the allocator's metadata, is detected
 * before the allocator acts on it (doc/design.md, "Hardening model"). Every level still detects bad
 * pointers and double frees in O(1); the levels differ in what an overflow into metadata can do.
 *   0: the checks of the original designs only. An overflow into metadata may go undetected
 *      and corrupt the heap (the allocators of the papers as written). Smallest and fastest.
 *   1: (default) metadata integrity in O(1): every header, footer and link the allocator reads
 *      from memory the application can reach is verified before it is acted on (tagged headers,
 *      safe unlinking, links checked against their neighbours); any corruption of one to several
 *      bytes next to a block is detected and reported, the call refused.
 *   2: level 1 plus checks that cost more per call (each allocator's header says which).
 * README's guarantees table states, per allocator, what each level detects and costs. */
#ifndef RT_HARDENING
#define RT_HARDENING 1
#endif

/* 0: rt_error_message returns "" for every kind, so that the message sentences (about 450 bytes
 * of read-only data on a 32-bit target) are not linked; reports keep their kind, operation,
 * pointer and size. For firmware whose handler logs the kind alone. */
#ifndef RT_ERROR_TEXT
#define RT_ERROR_TEXT 1
#endif

/* Mixed with each heap's address into the key of its header tags (RT_HARDENING >= 1). A build
 * may set its own (e.g. from a device serial number at build time); any value works. */
#ifndef RT_HEAP_KEY_SEED
#define RT_HEAP_KEY_SEED 0x5DEECE66Dull
#endif

/* For measurement only: 0 leaves the address out of the boundary-tag heap's header tags
 * (src/block/block.h) and the seal out of rt_tlsfq's quick-list links (src/heap/quick.h), so that
 * the benchmark can show what binding metadata to its place costs. A build with 0 accepts a
 * header copied from another block, as the library did before it bound them: never ship it. */
#ifndef RT_HEAP_TAG_PLACE
#define RT_HEAP_TAG_PLACE 1
#endif

/* Alignment of every pointer a boundary-tag heap returns, and the unit of its block sizes (a
 * power of two >= 8 and >= the word size). Default: two machine words, 16 bytes on 64-bit and 8
 * on 32-bit. CMake: -DRTALLOC_HEAP_ALIGN=8 sets it for the library and, through the exported
 * target and rtalloc.pc, for every program built against it (it changes rtalloc/heap.h's
 * RT_HEAP_MIN_BLOCK and RT_HEAP_LARGEST_BLOCK: library and program must agree).
 *
 * 8 on 64-bit is a supported setting for programs whose largest alignment is 8. What it breaks:
 * it is below alignof(max_align_t), 16 on x86-64 SysV and AArch64, so a block may not hold a
 * long double, __int128, _Float128 or an SSE/NEON vector (16-byte loads such as movaps fault on
 * an 8-aligned address), nor anything else a C program may keep in memory from malloc: C11's
 * malloc guarantee (7.22.3) no longer holds for rt_heap_malloc. rt_heap_memalign(h, 16, n) still
 * returns 16-aligned blocks, and the drop-in malloc (drivers/malloc.c) keeps C's guarantee by
 * taking every call through memalign when the allocator aligns to less than max_align_t, giving up
 * the saving. The smallest block stays 4 words (32 bytes). Likewise the 32-bit default 8 is below
 * max_align_t where long double is 16-byte aligned (i386 System V with GCC, RV32 ILP32); it
 * equals it on Arm EABI (Cortex-M).
 * What it saves: block sizes round to 8 instead of 16 bytes, 4 bytes a block on average where
 * request sizes are spread evenly. Measured on TLSF (doc/allocators.md, "TLSF placement"; `rtbench
 * run layout --scale standard`: rtbench beside rtbench-align8 and rtbench-m32, 2026-11-26, gcc 12
 * -O3): Masmano 2006 Tests 1-3 (10 seeds of 300,000 mallocs), F 10.37 / 16.30 / 9.63 % at 16 and
 * 10.37 / 14.86 / 9.77 % at 8 (32-bit words: 9.40 / 11.88 / 9.21 %); the heap the recorded programs
 * need over their live peak, 16 -> 8: sqlite3 1.059 -> 1.059, lua5.4 1.201 -> 1.143, python3 1.103
 * -> 1.103. */
#ifndef RT_HEAP_ALIGN
#define RT_HEAP_ALIGN (2u * sizeof(void *))
#endif

/* Every block of a boundary-tag heap (header included) is smaller than 2^RT_HEAP_MAX_BLOCK_LOG2
 * bytes; larger pools are used up to that size (add pools for more). It sizes the TLSF and
 * half-fit tables, so a small embedded heap saves RAM by lowering it. With RT_HARDENING >= 1 the
 * header word's bits above it hold the header's tag (src/block/block.h), so it must be a multiple
 * of 8 with at least 8 bits left: default 2^32 (4 GiB) on 64-bit (up to 48 allowed: 40 costs two
 * instructions per header check), 2^24 (16 MiB) on 32-bit. With RT_HARDENING 0: 2^40 (1 TiB) on
 * 64-bit, 2^31 on 32-bit. */
#ifndef RT_HEAP_MAX_BLOCK_LOG2
#if RT_HARDENING >= 1
#if UINTPTR_MAX > 0xFFFFFFFFu
#define RT_HEAP_MAX_BLOCK_LOG2 32
#else
#define RT_HEAP_MAX_BLOCK_LOG2 24
#endif
#elif UINTPTR_MAX > 0xFFFFFFFFu
#define RT_HEAP_MAX_BLOCK_LOG2 40
#else
#define RT_HEAP_MAX_BLOCK_LOG2 31
#endif
#endif

/* TLSF second-level slots per octave, as a log2: 4 (16 slots, default) or 5 (32 slots). The
 * library always builds both: backend "tlsf" uses this value, backend "tlsf32" uses 5. */
#ifndef RT_TLSF_SL_LOG2
#define RT_TLSF_SL_LOG2 4
#endif

/* TLSF placement (doc/allocators.md, "TLSF placement"; measured by experiments masmano, trace).
 * RT_TLSF_GOOD_FIT 1 (default): before rounding a request up to the next slot, the search
 * takes the first block of the request's own slot when it is large enough (one load and one
 * header check more per malloc above row 0; Masmano F 4.5 -> 4.1 % (Test 1), 7.1 -> 6.4 %
 * (Test 3) on 64-bit). 0: Masmano's search only.
 * RT_TLSF_CUT_AT_SLOT 0 (default): the found block is cut at the request. 1: at the start of
 * the rounded slot, as Masmano's TLSF (up to 1/16 of a block kept as slack: realloc growth within
 * the slot is then in place, but F is about 2 points higher). Same time bound either way. */
#ifndef RT_TLSF_GOOD_FIT
#define RT_TLSF_GOOD_FIT 1
#endif
#ifndef RT_TLSF_CUT_AT_SLOT
#define RT_TLSF_CUT_AT_SLOT 0
#endif

/* How many pools one heap can hold (the first plus rt_heap_add_pool's). Validating a pointer
 * scans this many ranges, so it is part of free's constant. */
#ifndef RT_HEAP_MAX_POOLS
#define RT_HEAP_MAX_POOLS 4
#endif

/* The default index of rt_heap_create(): one of RT_INDEX_TLSF, RT_INDEX_TLSF32,
 * RT_INDEX_SEGLIST, RT_INDEX_FIRSTFIT, RT_INDEX_BESTFIT, RT_INDEX_HALFFIT. */
#ifndef RT_HEAP_DEFAULT_INDEX
#define RT_HEAP_DEFAULT_INDEX RT_INDEX_TLSF
#endif

/* Smallest buddy block, as a log2 (>= log2 of two words). Its metadata costs one byte per
 * smallest block: 1/32 of the arena at the default of 32 bytes. */
#ifndef RT_BUDDY_MIN_LOG2
#define RT_BUDDY_MIN_LOG2 5
#endif

/* Bit scans on a nonzero size_t: count of leading / trailing zero bits. Override with a
 * platform intrinsic if the compiler lacks the builtins (GCC and Clang have them; on
 * Cortex-M3/M4 they compile to CLZ and RBIT+CLZ, on RV32 without Zbb to a short libgcc loop). */
#ifndef RT_CLZ
#define RT_CLZ(x)                                                                   \
    ((unsigned)(sizeof(size_t) == sizeof(long) ? __builtin_clzl((unsigned long)(x)) \
                                               : __builtin_clzll((unsigned long long)(x))))
#endif
#ifndef RT_CTZ
#define RT_CTZ(x)                                                                   \
    ((unsigned)(sizeof(size_t) == sizeof(long) ? __builtin_ctzl((unsigned long)(x)) \
                                               : __builtin_ctzll((unsigned long long)(x))))
#endif

#endif /* RTALLOC_CONFIG_H */
