/* SPDX-License-Identifier: MIT */
/*
 * ports/common/crt.c -- the C run-time start (.data, .bss, main), exit, panic and fault reports.
 */
#include "port_internal.h"

/* From the linker script (ports/<arch>/<board>.ld). */
extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];

_Noreturn void port_crt_start(void)
{
    /* volatile: keeps the compiler from turning these loops into memcpy/memset calls */
    volatile uint32_t *d = __data_start;
    const volatile uint32_t *s = __data_load;
    if (s != d) {
        while (d < __data_end) {
            *d++ = *s++;
        }
    }
    for (volatile uint32_t *b = __bss_start; b < __bss_end; b++) {
        *b = 0;
    }
    port_arch_init();
    static char program[] = "target";
    static char *argv[] = {program, NULL};
    port_exit(main(1, argv));
}

_Noreturn void port_exit(int status)
{
    port_flush();
    volatile uint32_t block[2] = {PORT_ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    (void)port_arch_semihost(PORT_SYS_EXIT_EXTENDED, (uintptr_t)block);
    port_arch_exit_fallback(status);
}

_Noreturn void port_panic(const char *message)
{
    port_printf("\nPANIC: %s\n", message != NULL ? message : "(no message)");
    port_exit(PORT_EXIT_FAULT);
}

_Noreturn void port_fault(const char *what, uint32_t pc, uint32_t detail1, uint32_t detail2)
{
    port_printf("port: FAULT: %s at pc 0x%08lx (0x%08lx 0x%08lx)\n", what, (unsigned long)pc, (unsigned long)detail1,
                (unsigned long)detail2);
    port_exit(PORT_EXIT_FAULT);
}

const char *port_name(void) { return PORT_ARCH_NAME; }

const char *port_count_unit(void) { return port_arch_count_unit; }
