/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/rv32/start.S -- RV32IMAC start-up for QEMU virt (-bios none, machine mode):
 * the reset entry, the trap entry and the semihosting call.
 */
    .section .text.start, "ax", @progbits
    .globl _start
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, __stack_top
    la      t0, fw_trap_entry
    csrw    mtvec, t0               /* direct mode: every trap to fw_trap_entry */
    csrw    mie, zero
    call    fw_c_start              /* ../startup.c; does not return */
1:  j       1b

/* Traps: interrupts and exceptions alike. Saves the registers a C function may change (the
 * interrupted code may be anywhere, in the middle of a malloc), calls fw_trap(mcause, mepc,
 * mtval) (board.c: the timer, or a fault report that exits), restores them and returns. The
 * hardware cleared mstatus.MIE on entry and mret restores it: no nesting. */
    .section .text.fw_trap_entry, "ax", @progbits
    .balign 4
    .globl fw_trap_entry
fw_trap_entry:
    addi    sp, sp, -64
    sw      ra, 0(sp)
    sw      t0, 4(sp)
    sw      t1, 8(sp)
    sw      t2, 12(sp)
    sw      a0, 16(sp)
    sw      a1, 20(sp)
    sw      a2, 24(sp)
    sw      a3, 28(sp)
    sw      a4, 32(sp)
    sw      a5, 36(sp)
    sw      a6, 40(sp)
    sw      a7, 44(sp)
    sw      t3, 48(sp)
    sw      t4, 52(sp)
    sw      t5, 56(sp)
    sw      t6, 60(sp)
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    call    fw_trap
    lw      ra, 0(sp)
    lw      t0, 4(sp)
    lw      t1, 8(sp)
    lw      t2, 12(sp)
    lw      a0, 16(sp)
    lw      a1, 20(sp)
    lw      a2, 24(sp)
    lw      a3, 28(sp)
    lw      a4, 32(sp)
    lw      a5, 36(sp)
    lw      a6, 40(sp)
    lw      a7, 44(sp)
    lw      t3, 48(sp)
    lw      t4, 52(sp)
    lw      t5, 56(sp)
    lw      t6, 60(sp)
    addi    sp, sp, 64
    mret

/* Semihosting: a0 = operation, a1 = argument; a0 = result. QEMU recognises the ebreak only
 * between these two uncompressed instructions, all three in one page (16-byte alignment). */
    .section .text.fw_semihost, "ax", @progbits
    .balign 16
    .globl fw_semihost
fw_semihost:
    .option push
    .option norvc
    slli    zero, zero, 0x1f
    ebreak
    srai    zero, zero, 7
    .option pop
    ret
