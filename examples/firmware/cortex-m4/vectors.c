/* SPDX-License-Identifier: MIT */
/*
 * examples/firmware/cortex-m4/vectors.c -- Cortex-M4F start-up for QEMU mps2-an386: the vector
 * table, the reset handler, and the fault handlers.
 *
 * Reset: the core loads SP from vector 0 and starts Reset_Handler, which gives the FPU access
 * (CPACR CP10/CP11: the C libraries are built for the hard-float ABI) and continues in fw_c_start
 * (../startup.c). A fault prints the stacked pc, lr and the fault status registers on the raw
 * console and exits with FW_EXIT_FAULT; so does any interrupt without a handler.
 */
#include <stdint.h>

#include "../board.h"

extern uint32_t __stack_top[];

void Reset_Handler(void);
void Default_Handler(void);
void HardFault_Handler(void);
void SysTick_Handler(void); /* board.c */
void fw_fault_report(const uint32_t *frame);

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define SCB_CPACR 0xE000ED88u
#define SCB_CFSR 0xE000ED28u
#define SCB_HFSR 0xE000ED2Cu
#define SCB_MMFAR 0xE000ED34u
#define SCB_BFAR 0xE000ED38u

void Reset_Handler(void)
{
    REG(SCB_CPACR) |= 0xFu << 20; /* CP10, CP11: full access */
    __asm__ __volatile__("dsb\n\tisb" : : : "memory");
    fw_c_start();
}

/* Faults: the stacked frame is on MSP or PSP (EXC_RETURN bit 2). */
__attribute__((naked)) void HardFault_Handler(void)
{
    __asm__ __volatile__("tst lr, #4\n\t"
                         "ite eq\n\t"
                         "mrseq r0, msp\n\t"
                         "mrsne r0, psp\n\t"
                         "b fw_fault_report");
}

void fw_fault_report(const uint32_t *frame)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    fw_raw_puts("\nfirmware: FAULT: exception ");
    fw_raw_hex("", ipsr & 0x1FFu);
    fw_raw_hex("pc", frame[6]);
    fw_raw_hex("lr", frame[5]);
    fw_raw_hex("CFSR", REG(SCB_CFSR));
    fw_raw_hex("HFSR", REG(SCB_HFSR));
    fw_raw_hex("MMFAR", REG(SCB_MMFAR));
    fw_raw_hex("BFAR", REG(SCB_BFAR));
    fw_raw_puts("\n");
    fw_exit(FW_EXIT_FAULT);
}

void Default_Handler(void)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    fw_raw_puts("\nfirmware: FAULT: ");
    fw_raw_hex("unexpected exception", ipsr & 0x1FFu);
    fw_raw_puts("\n");
    fw_exit(FW_EXIT_FAULT);
}

typedef void (*fw_handler_t)(void);
typedef struct fw_vector_table {
    uint32_t *initial_sp;
    fw_handler_t handlers[15 + 32]; /* 15 system exceptions, 32 interrupts on mps2-an386 */
} fw_vector_table_t;

/* clang-format off */
#define D Default_Handler
__attribute__((section(".vectors"), used)) const fw_vector_table_t fw_vectors = {
    __stack_top,
    {
        Reset_Handler,
        D,                 /* NMI */
        HardFault_Handler, /* HardFault */
        HardFault_Handler, /* MemManage */
        HardFault_Handler, /* BusFault */
        HardFault_Handler, /* UsageFault */
        0, 0, 0, 0,
        D,                 /* SVCall */
        D,                 /* DebugMonitor */
        0,
        D,                 /* PendSV */
        SysTick_Handler,
        D, D, D, D, D, D, D, D, D, D, D, D, D, D, D, D,
        D, D, D, D, D, D, D, D, D, D, D, D, D, D, D, D,
    },
};
#undef D
/* clang-format on */
