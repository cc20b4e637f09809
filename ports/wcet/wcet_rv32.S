/* SPDX-License-Identifier: MIT */
/*
 * ports/wcet/wcet_rv32.S -- exact instruction counts for the WCET scenarios on RV32IMAC
 * (ports/wcet/scenarios.c): a call trampoline that reads minstret right around the call, and a
 * memcpy, memmove, memset and error handler whose every run adds its own instructions, entry to
 * return, to wcet_excluded -- what the static bound leaves out (tools/wcet.py: the copy and fill
 * themselves, the user's handler), so the scenarios can take it out of what they measure.
 *
 * Each routine's count is fixed by its code: a per-byte loop of 6 (4 for memset) instructions and
 * a constant per path, added at the end. No linker relaxation here (.option norelax), so `la`
 * stays two instructions. The scenarios check the trampoline and the routines against a
 * function of known length before they measure anything.
 */
    .option norelax

/* uintptr_t wcet_call(fn, a, b, c): returns fn(a, b, c); wcet_t[0] and wcet_t[1] are minstret
 * read just before the call and just after the return: t1 - t0 = 2 + fn's instructions, entry to
 * return (the first read and the jalr). */
    .section .text.wcet_call, "ax", @progbits
    .globl wcet_call
    .type wcet_call, @function
wcet_call:
    addi    sp, sp, -16
    sw      ra, 12(sp)
    sw      s0, 8(sp)
    sw      s1, 4(sp)
    mv      t0, a0
    mv      a0, a1
    mv      a1, a2
    mv      a2, a3
    csrr    s0, minstret
    jalr    t0
    csrr    s1, minstret
    la      t1, wcet_t
    sw      s0, 0(t1)
    sw      s1, 4(t1)
    lw      ra, 12(sp)
    lw      s0, 8(sp)
    lw      s1, 4(sp)
    addi    sp, sp, 16
    ret
    .size wcet_call, . - wcet_call

/* Five instructions: the trampoline's check. */
    .section .text.wcet_known5, "ax", @progbits
    .globl wcet_known5
    .type wcet_known5, @function
wcet_known5:
    nop
    nop
    nop
    nop
    ret
    .size wcet_known5, . - wcet_known5

/* The tail of memcpy and memmove: wcet_excluded += 6 * n (t3) + t6; 10 instructions. */
    .macro COPY_TAIL
    la      t0, wcet_excluded
    lw      t1, 0(t0)
    slli    t2, t3, 1
    add     t2, t2, t3
    slli    t2, t2, 1
    add     t1, t1, t2
    add     t1, t1, t6
    sw      t1, 0(t0)
    ret
    .endm

/* memcpy: 15 + 6 n instructions, entry to return; 14 for n = 0. */
    .section .text.memcpy, "ax", @progbits
    .globl memcpy
    .type memcpy, @function
memcpy:
    mv      t3, a2
    mv      t4, a0
    beqz    a2, 2f
1:  lbu     t5, 0(a1)
    sb      t5, 0(t4)
    addi    a1, a1, 1
    addi    t4, t4, 1
    addi    a2, a2, -1
    bnez    a2, 1b
    li      t6, 15          /* 3 + 2 + 10 */
    j       3f
2:  li      t6, 14          /* 3 + 1 + 10 */
3:  COPY_TAIL
    .size memcpy, . - memcpy

/* memmove: 16 + 6 n forwards (d <= s), 18 + 6 n backwards, 14 for n = 0. */
    .section .text.memmove, "ax", @progbits
    .globl memmove
    .type memmove, @function
memmove:
    mv      t3, a2
    mv      t4, a0
    beqz    a2, 2f
    bgtu    a0, a1, 4f
1:  lbu     t5, 0(a1)
    sb      t5, 0(t4)
    addi    a1, a1, 1
    addi    t4, t4, 1
    addi    a2, a2, -1
    bnez    a2, 1b
    li      t6, 16          /* 4 + 2 + 10 */
    j       3f
4:  add     t4, t4, a2
    add     a1, a1, a2
5:  lbu     t5, -1(a1)
    sb      t5, -1(t4)
    addi    a1, a1, -1
    addi    t4, t4, -1
    addi    a2, a2, -1
    bnez    a2, 5b
    li      t6, 18          /* 4 + 2 + 2 + 10 */
    j       3f
2:  li      t6, 14          /* 3 + 1 + 10 */
3:  COPY_TAIL
    .size memmove, . - memmove

/* memset: 13 + 4 n instructions, 12 for n = 0. */
    .section .text.memset, "ax", @progbits
    .globl memset
    .type memset, @function
memset:
    mv      t3, a2
    mv      t4, a0
    beqz    a2, 2f
1:  sb      a1, 0(t4)
    addi    t4, t4, 1
    addi    a2, a2, -1
    bnez    a2, 1b
    li      t6, 13          /* 3 + 2 + 8 */
    j       3f
2:  li      t6, 12          /* 3 + 1 + 8 */
3:  la      t0, wcet_excluded
    lw      t1, 0(t0)
    slli    t2, t3, 2
    add     t1, t1, t2
    add     t1, t1, t6
    sw      t1, 0(t0)
    ret
    .size memset, . - memset

/* The error handler (rt_error_handler_t): counts its call; 11 instructions. */
    .section .text.wcet_handler, "ax", @progbits
    .globl wcet_handler
    .type wcet_handler, @function
wcet_handler:
    la      t0, wcet_excluded
    lw      t1, 0(t0)
    addi    t1, t1, 11
    sw      t1, 0(t0)
    la      t0, wcet_handler_calls
    lw      t1, 0(t0)
    addi    t1, t1, 1
    sw      t1, 0(t0)
    ret
    .size wcet_handler, . - wcet_handler
