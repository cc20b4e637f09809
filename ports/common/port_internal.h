/* SPDX-License-Identifier: MIT */
/*
 * ports/common/port_internal.h -- what the common part of the port (the files of ports/common) needs from
 * each architecture (ports/<arch>/port_arch.c, startup). Not for programs: they use port.h.
 */
#ifndef RTALLOC_PORT_INTERNAL_H
#define RTALLOC_PORT_INTERNAL_H

#include <stdint.h>

#include "port.h"

/* Semihosting operations (ARM "Semihosting for AArch32 and AArch64", also used by RISC-V). */
#define PORT_SYS_WRITE0 0x04u
#define PORT_SYS_EXIT_EXTENDED 0x20u
#define PORT_ADP_STOPPED_APPLICATION_EXIT 0x20026u

/* One semihosting call: operation and argument in, result out. */
uintptr_t port_arch_semihost(uintptr_t op, uintptr_t arg);

/* Called once after .data and .bss are set up, before main: starts the counter, enables
 * interrupts globally (no source enabled). */
void port_arch_init(void);

/* The last resort when semihosting exit returned (it never does under QEMU with semihosting on):
 * RV32 writes the SiFive test device, Cortex-M waits for the time limit. */
_Noreturn void port_arch_exit_fallback(int status);

/* For the self-check (both in assembly, no compiler code inside the interval): the instructions
 * measured by two consecutive counter reads, and by reads around a loop of exactly 2 n
 * instructions (n >= 1). Both converted by port_arch_elapsed, nothing subtracted. */
uint32_t port_arch_empty_raw(void);
uint32_t port_arch_loop_raw(uint32_t n);

/* The loop alone (2 n instructions, n >= 1, n modified), for the C-API check. */
#if defined(__arm__)
#define PORT_ARCH_LOOP(n) __asm__ __volatile__("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc")
#elif defined(__riscv)
#define PORT_ARCH_LOOP(n) __asm__ __volatile__("1: addi %0, %0, -1\n\tbnez %0, 1b" : "+r"(n))
#else
#error "port: unknown architecture"
#endif

/* "instructions (QEMU -icount ...; not cycles)" and the QEMU flags the counter needs. */
extern const char port_arch_count_unit[];
extern const char port_arch_icount_flags[];

/* The C entry after the architecture's reset code (stack set, FPU on): copies .data, zeroes
 * .bss, port_arch_init(), main, port_exit. */
_Noreturn void port_crt_start(void);

/* Reports a fault or trap ("port: FAULT: <what> at pc <pc> (<detail1> <detail2>)": lr and r0 on
 * Cortex-M, mcause and mtval on RISC-V) and exits with PORT_EXIT_FAULT. */
_Noreturn void port_fault(const char *what, uint32_t pc, uint32_t detail1, uint32_t detail2);

int main(int argc, char **argv);

#endif /* RTALLOC_PORT_INTERNAL_H */
