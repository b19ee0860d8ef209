/*
 * Boot code of the qemu-virt HAL port: entry of core 0 (ELF entry, EL1, MMU
 * off, as QEMU's virt machine starts a -kernel image without virtualization
 * or secure state) and of the other cores (PSCI CPU_ON, context id = core
 * index); the identity map; the exception vectors; the semihosting call.
 *
 * The MMU goes on before any C runs: with it off every data access is
 * Device-nGnRnE, where unaligned accesses fault and exclusives (LDXR/STXR,
 * hence every HAL atomic) are not guaranteed to work (Arm ARM B2.9, D8.2.11).
 */
#include "qv_layout.h"

/* MAIR_EL1: attr0 Device-nGnRE, attr1 Normal inner/outer write-back
 * read/write-allocate (Arm ARM D17.2.97). */
#define MAIR_VALUE 0xFF04
/* TCR_EL1: T0SZ 32 (4 GiB, walks start at level 1 with 4K granule),
 * IRGN0/ORGN0 write-back, SH0 inner shareable, TG0 4K, EPD1 (no TTBR1
 * walks), IPS 32 bits: everything on virt with highmem=off is below 4 GiB. */
#define TCR_VALUE ((32 << 0) | (1 << 8) | (1 << 10) | (3 << 12) | (1 << 23))
/* SCTLR_EL1: M (MMU), C (data cache), I (instruction cache); A (alignment
 * check) and SA stay clear. */
#define SCTLR_SET ((1 << 0) | (1 << 2) | (1 << 12))
#define SCTLR_CLEAR ((1 << 1) | (1 << 3))

  .section .text.boot, "ax"
  .global _start
_start:
  mov x19, #0
  b common_entry

  /* PSCI CPU_ON entry: x0 = context id = this core's index. */
  .global qv_secondary_entry
qv_secondary_entry:
  mov x19, x0

common_entry:
  msr daifset, #0xf
  adr x1, qv_vectors
  msr vbar_el1, x1
  /* A stack per core, from the top of the stack area down. */
  ldr x1, =__stacks_end
  mov x2, #QV_STACK_SIZE
  msub x1, x19, x2, x1
  mov sp, x1
  msr tpidr_el1, x19
  /* FP/SIMD at EL1 (CPACR_EL1.FPEN = 0b11): the compiler may use the
   * vector registers for copies, and the stats print doubles. */
  mov x1, #(3 << 20)
  msr cpacr_el1, x1
  /* Event stream for WFE (CNTKCTL_EL1.EVNTEN, EVNTI = 8: an event every
   * 512 counter ticks), so that a WFE never waits for a SEV that never comes. */
  mov x1, #((8 << 4) | (1 << 2))
  msr cntkctl_el1, x1
  isb

  ldr x1, =MAIR_VALUE
  msr mair_el1, x1
  ldr x1, =TCR_VALUE
  msr tcr_el1, x1
  adrp x1, qv_l1_table
  msr ttbr0_el1, x1
  isb
  tlbi vmalle1
  dsb nsh
  isb
  mrs x1, sctlr_el1
  ldr x2, =SCTLR_SET
  orr x1, x1, x2
  ldr x2, =SCTLR_CLEAR
  bic x1, x1, x2
  msr sctlr_el1, x1
  isb

  cbnz x19, 2f
  /* Core 0: zero .bss (8-byte aligned by the linker script). */
  ldr x1, =__bss_start
  ldr x2, =__bss_end
1:
  cmp x1, x2
  b.hs 3f
  str xzr, [x1], #8
  b 1b
3:
  bl qv_primary_main
  b qv_hang
2:
  mov x0, x19
  bl qv_secondary_main

  .global qv_hang
qv_hang:
  wfe
  b qv_hang

/* uint64_t qv_semihost(uint64_t op, uint64_t arg): the AArch64 semihosting
 * trap (HLT #0xF000). Without -semihosting QEMU makes HLT undefined: the
 * vector code recognises this address and returns ~0 instead. */
  .global qv_semihost
  .global qv_semihost_insn
qv_semihost:
qv_semihost_insn:
  hlt #0xf000
  ret

/* uint64_t qv_hvc(fid, a1, a2, a3): an SMC Calling Convention call through
 * HVC, as virt's PSCI node says (method = "hvc"; DEN0022 5.1). */
  .global qv_hvc
qv_hvc:
  hvc #0
  ret

/* The identity map: one level-1 table of 1 GiB blocks. [0, 1 GiB) holds
 * every device on virt with highmem=off (flash, GIC, UART, SMMU, PCIe ECAM
 * and windows): Device-nGnRE, never executable. [1 GiB, 2 GiB) is RAM:
 * Normal write-back, inner shareable, executable. The rest faults. */
  .section .rodata.pagetable, "a"
  .balign 4096
qv_l1_table:
  .quad 0x0060000000000401
  .quad 0x0000000040000705
  .quad 0
  .quad 0

/* Exception vectors (Arm ARM D1.10.2): every entry saves the registers in a
 * struct qv_frame and calls qv_exception(frame, kind); a handled exception
 * (a bus error on an MMIO access, the semihosting trap without semihosting)
 * returns through ERET with the frame as the handler left it. */
  .macro ventry kind
  .balign 0x80
  sub sp, sp, #QV_FRAME_SIZE
  stp x0, x1, [sp, #0]
  mov x1, #\kind
  b qv_exc_common
  .endm

  .text
  .balign 2048
qv_vectors:
  ventry 0   /* current EL, SP_EL0: sync */
  ventry 1   /* irq */
  ventry 2   /* fiq */
  ventry 3   /* serror */
  ventry 0   /* current EL, SP_ELx: sync */
  ventry 1
  ventry 2
  ventry 3
  ventry 4   /* lower EL (never used here) */
  ventry 4
  ventry 4
  ventry 4
  ventry 4
  ventry 4
  ventry 4
  ventry 4

qv_exc_common:
  stp x2, x3, [sp, #16]
  stp x4, x5, [sp, #32]
  stp x6, x7, [sp, #48]
  stp x8, x9, [sp, #64]
  stp x10, x11, [sp, #80]
  stp x12, x13, [sp, #96]
  stp x14, x15, [sp, #112]
  stp x16, x17, [sp, #128]
  stp x18, x19, [sp, #144]
  stp x20, x21, [sp, #160]
  stp x22, x23, [sp, #176]
  stp x24, x25, [sp, #192]
  stp x26, x27, [sp, #208]
  stp x28, x29, [sp, #224]
  mrs x2, elr_el1
  mrs x3, spsr_el1
  stp x30, x2, [sp, #240]
  str x3, [sp, #256]
  mov x0, sp
  bl qv_exception
  ldp x30, x2, [sp, #240]
  ldr x3, [sp, #256]
  msr elr_el1, x2
  msr spsr_el1, x3
  ldp x0, x1, [sp, #0]
  ldp x2, x3, [sp, #16]
  ldp x4, x5, [sp, #32]
  ldp x6, x7, [sp, #48]
  ldp x8, x9, [sp, #64]
  ldp x10, x11, [sp, #80]
  ldp x12, x13, [sp, #96]
  ldp x14, x15, [sp, #112]
  ldp x16, x17, [sp, #128]
  ldp x18, x19, [sp, #144]
  ldp x20, x21, [sp, #160]
  ldp x22, x23, [sp, #176]
  ldp x24, x25, [sp, #192]
  ldp x26, x27, [sp, #208]
  ldp x28, x29, [sp, #224]
  add sp, sp, #QV_FRAME_SIZE
  eret
