/* SPDX-License-Identifier: MIT */
/*
 * ports/cortex-m4/startup.c -- vector table, reset handler and fault reports for Cortex-M4F
 * (QEMU mps2-an386). Built without an FPU (no __ARM_FP), the reset skips the CPACR step.
 *
 * Reset: the core loads SP from vector 0 and jumps to port_reset, which enables the FPU (CPACR:
 * full access to CP10/CP11) before any C code could use a floating-point register, then
 * continues in port_crt_start (ports/common/crt.c). Every exception and interrupt has a weak
 * handler a program may override (SysTick_Handler, PendSV_Handler, port_irq<N>_handler, ...);
 * the default reports the exception number and exits with PORT_EXIT_FAULT. Faults report the
 * stacked pc and the fault status registers.
 */
#include "port_internal.h"

extern uint32_t __stack_top[];

_Noreturn void port_reset(void);
void port_fault_report(const uint32_t *frame);

#define NUM_IRQ 32 /* mps2-an386 in QEMU: 32 external interrupts */

__attribute__((naked, noreturn)) void port_reset(void)
{
#if defined(__ARM_FP)
    __asm__ __volatile__("movw r0, #0xED88\n\t" /* CPACR */
                         "movt r0, #0xE000\n\t"
                         "ldr r1, [r0]\n\t"
                         "orr r1, r1, #0xF00000\n\t"
                         "str r1, [r0]\n\t"
                         "dsb\n\t"
                         "isb\n\t"
                         "b port_crt_start");
#else
    __asm__ __volatile__("b port_crt_start");
#endif
}

/* Faults: find the stacked frame (MSP or PSP, from EXC_RETURN bit 2) and report. */
__attribute__((naked)) static void port_fault_entry(void)
{
    __asm__ __volatile__("tst lr, #4\n\t"
                         "ite eq\n\t"
                         "mrseq r0, msp\n\t"
                         "mrsne r0, psp\n\t"
                         "b port_fault_report");
}

void port_fault_report(const uint32_t *frame)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    static const char *const names[] = {"?", "reset", "NMI", "HardFault", "MemManage", "BusFault", "UsageFault"};
    uint32_t n = ipsr & 0x1FFu;
    uint32_t cfsr = *(volatile uint32_t *)0xE000ED28u;
    uint32_t hfsr = *(volatile uint32_t *)0xE000ED2Cu;
    port_printf("\nport: %s (exception %lu): CFSR 0x%08lx HFSR 0x%08lx MMFAR 0x%08lx BFAR 0x%08lx%s\n",
                n < 7u ? names[n] : "exception", (unsigned long)n, (unsigned long)cfsr, (unsigned long)hfsr,
                (unsigned long)*(volatile uint32_t *)0xE000ED34u, (unsigned long)*(volatile uint32_t *)0xE000ED38u,
                (cfsr & (1u << 16)) != 0u ? " (undefined instruction: __builtin_trap, RT_ASSERT or RT_PANIC)" : "");
    port_fault(n < 7u ? names[n] : "exception", frame[6], frame[5], frame[0]); /* pc; lr, r0 */
}

static void port_unexpected(void)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    port_printf("\nport: unexpected exception %lu (IRQ %ld) without a handler\n", (unsigned long)(ipsr & 0x1FFu),
                (long)(ipsr & 0x1FFu) - 16);
    port_exit(PORT_EXIT_FAULT);
}

/* Weak, overridable handlers. */
/* clang-format off */
#define WEAK_DEFAULT __attribute__((weak, alias("port_unexpected")))
void NMI_Handler(void) WEAK_DEFAULT;
void SVC_Handler(void) WEAK_DEFAULT;
void DebugMon_Handler(void) WEAK_DEFAULT;
void PendSV_Handler(void) WEAK_DEFAULT;
void SysTick_Handler(void) WEAK_DEFAULT;
#define IRQ(n) void port_irq##n##_handler(void) WEAK_DEFAULT;
IRQ(0) IRQ(1) IRQ(2) IRQ(3) IRQ(4) IRQ(5) IRQ(6) IRQ(7) IRQ(8) IRQ(9) IRQ(10) IRQ(11) IRQ(12) IRQ(13)
IRQ(14) IRQ(15) IRQ(16) IRQ(17) IRQ(18) IRQ(19) IRQ(20) IRQ(21) IRQ(22) IRQ(23) IRQ(24) IRQ(25) IRQ(26)
IRQ(27) IRQ(28) IRQ(29) IRQ(30) IRQ(31)
#undef IRQ

typedef void (*port_handler_t)(void);
typedef struct port_vector_table {
    uint32_t *initial_sp;
    port_handler_t handlers[15 + NUM_IRQ];
} port_vector_table_t;

#define IRQ(n) port_irq##n##_handler,
__attribute__((section(".vectors"), used)) const port_vector_table_t port_vectors = {
    __stack_top,
    {
        port_reset,       /*  1 reset */
        NMI_Handler,      /*  2 */
        port_fault_entry, /*  3 HardFault */
        port_fault_entry, /*  4 MemManage */
        port_fault_entry, /*  5 BusFault */
        port_fault_entry, /*  6 UsageFault */
        NULL, NULL, NULL, NULL,
        SVC_Handler,      /* 11 */
        DebugMon_Handler, /* 12 */
        NULL,
        PendSV_Handler,   /* 14 */
        SysTick_Handler,  /* 15 */
        IRQ(0) IRQ(1) IRQ(2) IRQ(3) IRQ(4) IRQ(5) IRQ(6) IRQ(7) IRQ(8) IRQ(9) IRQ(10) IRQ(11) IRQ(12) IRQ(13)
        IRQ(14) IRQ(15) IRQ(16) IRQ(17) IRQ(18) IRQ(19) IRQ(20) IRQ(21) IRQ(22) IRQ(23) IRQ(24) IRQ(25) IRQ(26)
        IRQ(27) IRQ(28) IRQ(29) IRQ(30) IRQ(31)
    },
};
#undef IRQ
/* clang-format on */
