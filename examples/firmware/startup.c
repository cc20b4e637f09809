/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/startup.c -- the C part of the reset sequence, for newlib-nano and picolibc
 * alike (the architecture's reset handler, cortex-m4/vectors.c or rv32/start.S, sets up the
 * stack and the processor and jumps here):
 *
 *   1. copy .data (and picolibc's .tdata) from its load image, zero .bss (and .tbss);
 *   2. picolibc: point the thread pointer at the TLS block (errno is thread-local there);
 *   3. create the heap: rtalloc_libc_init over the linker script's regions -- the hook the C
 *      library's first allocation must come after (built with FW_LAZY=1 this step is left out,
 *      and the first allocator call creates the heap: rtalloc_libc.h, "Creation");
 *   4. newlib: initialise_monitor_handles() opens the semihosting console; it allocates already
 *      (__sinit -> _malloc_r);
 *   5. the constructors (.preinit_array, .init_array);
 *   6. main; then flush stdout and exit with main's status through semihosting.
 *
 * Neither C library's crt0 is linked (-nostartfiles): this file is the firmware's own start-up,
 * which is where the heap's creation hook belongs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "rtalloc_libc.h"

int main(void);

/* The linker script's symbols. */
extern char __data_start[], __data_end[], __data_load[];
extern char __bss_start[], __bss_end[];
extern char __rtalloc_heap_start[], __rtalloc_heap_end[];
extern char __rtalloc_heap2_start[], __rtalloc_heap2_end[];
typedef void (*fw_ctor_t)(void);
extern fw_ctor_t __preinit_array_start[], __preinit_array_end[];
extern fw_ctor_t __init_array_start[], __init_array_end[];

#if defined(__PICOLIBC__)
extern char __tls_base[];
void _set_tls(void *tls); /* picolibc: sets the thread pointer (tp, or __tls on Arm) */
#elif defined(_NEWLIB_VERSION)
void initialise_monitor_handles(void); /* newlib's rdimon: opens :tt for stdin/out/err */
#endif

#ifndef FW_LAZY
#define FW_LAZY 0
#endif

_Noreturn void fw_c_start(void)
{
    if (&__data_load[0] != &__data_start[0]) { /* RAM-only images (rv32) are loaded in place */
        memcpy(__data_start, __data_load, (size_t)(__data_end - __data_start));
    }
    memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
#if defined(__PICOLIBC__)
    _set_tls(__tls_base);
#endif

#if !FW_LAZY
    /* The creation hook: before anything of the C library runs. Two regions, two pools. */
    const rtalloc_libc_region_t regions[] = {
        {__rtalloc_heap_start, (size_t)(__rtalloc_heap_end - __rtalloc_heap_start)},
        {__rtalloc_heap2_start, (size_t)(__rtalloc_heap2_end - __rtalloc_heap2_start)},
    };
    if (!rtalloc_libc_init(regions, sizeof regions / sizeof regions[0])) {
        fw_raw_puts("firmware: FAIL: rtalloc_libc_init refused the regions\n");
        fw_exit(FW_EXIT_HEAP_ERROR);
    }
#endif

#if !defined(__PICOLIBC__) && defined(_NEWLIB_VERSION)
    initialise_monitor_handles();
#endif

    for (fw_ctor_t *f = __preinit_array_start; f < __preinit_array_end; f++) {
        (*f)();
    }
    for (fw_ctor_t *f = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }

    int status = main();
    fflush(stdout);
    fw_exit(status);
}

void fw_raw_hex(const char *what, uint32_t value)
{
    char text[12];
    static const char digits[] = "0123456789abcdef";
    text[0] = '0';
    text[1] = 'x';
    for (unsigned i = 0; i < 8u; i++) {
        text[2u + i] = digits[(value >> (28u - 4u * i)) & 0xFu];
    }
    text[10] = ' ';
    text[11] = '\0';
    if (what[0] != '\0') {
        fw_raw_puts(what);
        fw_raw_puts(" ");
    }
    fw_raw_puts(text);
}
