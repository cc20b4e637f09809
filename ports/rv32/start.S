/* SPDX-License-Identifier: MIT */
/*
 * ports/rv32/start.S -- RV32IMAC on QEMU virt (-bios none): reset entry, trap vector and the
 * semihosting trap sequence.
 */
    .section .text.start, "ax", @progbits
    .globl _start
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top
    la      t0, port_trap_entry
    csrw    mtvec, t0               /* direct mode: every trap to port_trap_entry */
    call    port_crt_start
1:  j       1b

/* Any trap -- an exception (ebreak of __builtin_trap, illegal instruction, misaligned or faulting
 * access) or an interrupt no program claimed -- is reported and ends the run: a fresh stack,
 * then port_trap_report(mcause, mepc, mtval), which never returns. A program that wants
 * interrupts installs its own mtvec. */
    .section .text.port_trap_entry, "ax", @progbits
    .balign 4
    .globl port_trap_entry
port_trap_entry:
    la      sp, __stack_top
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    j       port_trap_report

/* Semihosting: a0 = operation, a1 = argument; a0 = result. QEMU recognises the ebreak only
 * between these two uncompressed no-ops, all three in one page: 16-byte alignment keeps the
 * 12 bytes from straddling one. */
    .section .text.port_arch_semihost, "ax", @progbits
    .balign 16
    .globl port_arch_semihost
port_arch_semihost:
    .option push
    .option norvc
    slli    zero, zero, 0x1f
    ebreak
    srai    zero, zero, 7
    .option pop
    ret
