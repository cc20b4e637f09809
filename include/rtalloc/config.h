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
 * when the allocator has no error handler: SPEC 3's "clear message and abort". The core cannot
 * print, so the default only traps; a platform defines RT_PANIC(message) to print the message (a
 * static string) on its console first, e.g. -DRT_PANIC(m)=my_panic(m). Release builds count the
 * error and refuse the operation instead. */
#ifndef RT_PANIC
#define RT_PANIC(message) ((void)(message), __builtin_trap())
#endif

/* Internal assertion. Default: trap. A platform may route it to its own panic. */
#ifndef RT_ASSERT
#define RT_ASSERT(x) ((x) ? (void)0 : __builtin_trap())
#endif

/* Hardening level: how much redundancy the allocators keep in their metadata so that an
 * application's write past (or before) its block, into the allocator's metadata, is detected
 * before the allocator acts on it (SPEC 3). Every level still detects bad pointers and double
 * frees in O(1); the levels differ in what an overflow into metadata can do.
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

/* Mixed with each heap's address into the key of its header tags (RT_HARDENING >= 1). A build
 * may set its own (e.g. from a device serial number at build time); any value works. */
#ifndef RT_HEAP_KEY_SEED
#define RT_HEAP_KEY_SEED 0x5DEECE66Dull
#endif

/* Alignment of every pointer a heap returns (a power of two >= 8 and >= the word size).
 * Default: two machine words = 16 bytes on 64-bit, 8 bytes on 32-bit (alignof(max_align_t)
 * on the usual ABIs of both). */
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
#define RT_CLZ(x) ((unsigned)(sizeof(size_t) == sizeof(long) ? __builtin_clzl((unsigned long)(x)) \
                                                            : __builtin_clzll((unsigned long long)(x))))
#endif
#ifndef RT_CTZ
#define RT_CTZ(x) ((unsigned)(sizeof(size_t) == sizeof(long) ? __builtin_ctzl((unsigned long)(x)) \
                                                            : __builtin_ctzll((unsigned long long)(x))))
#endif

#endif /* RTALLOC_CONFIG_H */
