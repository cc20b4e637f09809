/* SPDX-License-Identifier: MIT */
/*
 * ports/wcet/wcet_m4.S -- exact instruction counts for the WCET scenarios on Cortex-M4
 * (ports/wcet/scenarios.c): a call trampoline that reads SysTick right around the call, and a
 * memcpy, memmove, memset and error handler whose every run adds its own instructions, entry to
 * return, to wcet_excluded -- what the static bound leaves out (tools/wcet.py: the copy and fill
 * themselves, the user's handler), so the scenarios can take it out of what they measure.
 *
 * Each routine's count is fixed by its code: a per-byte loop of 4 (3 for memset) instructions and
 * a constant per path, added at the end (the constants below are the instructions of that path,
 * the loop's excepted). The scenarios check the trampoline and the routines against a function
 * of known length before they measure anything.
 */
    .syntax unified
    .thumb

/* uintptr_t wcet_call(fn, a, b, c): returns fn(a, b, c); wcet_t[0] and wcet_t[1] are SysTick
 * read just before the call and just after the return: port_arch_elapsed(t0, t1) = 2 + fn's
 * instructions, entry to return (the blx and the second read). */
    .section .text.wcet_call, "ax", %progbits
    .global wcet_call
    .type wcet_call, %function
    .thumb_func
wcet_call:
    push    {r4, r5, r6, lr}
    mov     r4, r0
    mov     r0, r1
    mov     r1, r2
    mov     r2, r3
    movw    r5, #0xE018
    movt    r5, #0xE000
    ldr     r6, [r5]
    blx     r4
    ldr     r5, [r5]
    ldr     r3, =wcet_t
    str     r6, [r3]
    str     r5, [r3, #4]
    pop     {r4, r5, r6, pc}
    .ltorg
    .size wcet_call, . - wcet_call

/* Five instructions: the trampoline's check. */
    .section .text.wcet_known5, "ax", %progbits
    .global wcet_known5
    .type wcet_known5, %function
    .thumb_func
wcet_known5:
    nop
    nop
    nop
    nop
    bx      lr
    .size wcet_known5, . - wcet_known5

/* The tail every copy routine ends with: wcet_excluded += 4 * n (ip) + r2; 7 instructions. */
    .macro COPY_TAIL
    ldr     r4, =wcet_excluded
    ldr     r3, [r4]
    add     r3, r3, ip, lsl #2
    add     r3, r3, r2
    str     r3, [r4]
    pop     {r0, r4}
    bx      lr
    .endm

/* memcpy: 13 + 4 n instructions, entry to return; 12 for n = 0. */
    .section .text.memcpy, "ax", %progbits
    .global memcpy
    .type memcpy, %function
    .thumb_func
memcpy:
    push    {r0, r4}
    mov     ip, r2
    mov     r3, r0
    cbz     r2, 2f
1:  ldrb    r4, [r1], #1
    strb    r4, [r3], #1
    subs    r2, r2, #1
    bne     1b
    movs    r2, #13         /* 4 + 2 + 7 */
    b       3f
2:  movs    r2, #12         /* 4 + 1 + 7 */
3:  COPY_TAIL
    .ltorg
    .size memcpy, . - memcpy

/* memmove: 15 + 4 n forwards (d <= s), 17 + 4 n backwards, 12 for n = 0. */
    .section .text.memmove, "ax", %progbits
    .global memmove
    .type memmove, %function
    .thumb_func
memmove:
    push    {r0, r4}
    mov     ip, r2
    mov     r3, r0
    cbz     r2, 2f
    cmp     r0, r1
    bhi     4f
1:  ldrb    r4, [r1], #1
    strb    r4, [r3], #1
    subs    r2, r2, #1
    bne     1b
    movs    r2, #15         /* 6 + 2 + 7 */
    b       3f
4:  add     r3, r3, r2
    add     r1, r1, r2
5:  ldrb    r4, [r1, #-1]!
    strb    r4, [r3, #-1]!
    subs    r2, r2, #1
    bne     5b
    movs    r2, #17         /* 6 + 2 + 2 + 7 */
    b       3f
2:  movs    r2, #12         /* 4 + 1 + 7 */
3:  COPY_TAIL
    .ltorg
    .size memmove, . - memmove

/* memset: 14 + 3 n instructions, 13 for n = 0. */
    .section .text.memset, "ax", %progbits
    .global memset
    .type memset, %function
    .thumb_func
memset:
    push    {r0, r4}
    mov     ip, r2
    mov     r3, r0
    cbz     r2, 2f
1:  strb    r1, [r3], #1
    subs    r2, r2, #1
    bne     1b
    movs    r2, #14         /* 4 + 2 + 8 */
    b       3f
2:  movs    r2, #13         /* 4 + 1 + 8 */
3:  ldr     r4, =wcet_excluded
    ldr     r3, [r4]
    add     r3, r3, ip, lsl #1
    add     r3, r3, ip
    add     r3, r3, r2
    str     r3, [r4]
    pop     {r0, r4}
    bx      lr
    .ltorg
    .size memset, . - memset

/* The error handler (rt_error_handler_t): counts its call; 9 instructions. */
    .section .text.wcet_handler, "ax", %progbits
    .global wcet_handler
    .type wcet_handler, %function
    .thumb_func
wcet_handler:
    ldr     r2, =wcet_excluded
    ldr     r3, [r2]
    adds    r3, r3, #9
    str     r3, [r2]
    ldr     r2, =wcet_handler_calls
    ldr     r3, [r2]
    adds    r3, r3, #1
    str     r3, [r2]
    bx      lr
    .ltorg
    .size wcet_handler, . - wcet_handler
