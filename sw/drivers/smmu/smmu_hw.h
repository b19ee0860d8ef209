/*
 * SMMUv3 hardware definitions for drivers in sw/ (C11): register offsets and
 * fields, and the layouts of the STE, CD, event record and stage-1 page table
 * descriptors a driver writes or reads. Section numbers are IHI 0070's.
 *
 * The model declares the same facts in C++ (models/smmu/registers.h,
 * descriptors.h); tests/unit/smmu/smmu_hw_header_test.cc checks that the two
 * agree, value by value.
 */
#ifndef SMMU_VP_SW_SMMU_HW_H
#define SMMU_VP_SW_SMMU_HW_H

#include <stdint.h>

#define SMMU_BIT(n) (1u << (n))
#define SMMU_BIT64(n) (1ull << (n))
/* Bits [hi:lo] of a 64-bit value as a mask. */
#define SMMU_GENMASK64(hi, lo) (((~0ull) >> (63 - (hi))) & ~((1ull << (lo)) - 1))

/* ---- Registers, page 0 (6.3) */
#define SMMU_IDR0 0x000u
#define SMMU_IDR1 0x004u
#define SMMU_IDR3 0x00Cu
#define SMMU_IDR5 0x014u
#define SMMU_IDR6 0x190u                 /* SMMUv3.3 ECMDQ geometry */
#define SMMU_CR0 0x020u
#define SMMU_CR0ACK 0x024u
#define SMMU_CR1 0x028u
#define SMMU_CR2 0x02Cu
#define SMMU_GBPA 0x044u
#define SMMU_IRQ_CTRL 0x050u
#define SMMU_IRQ_CTRLACK 0x054u
#define SMMU_GERROR 0x060u
#define SMMU_GERRORN 0x064u
#define SMMU_STRTAB_BASE 0x080u
#define SMMU_STRTAB_BASE_CFG 0x088u
#define SMMU_CMDQ_BASE 0x090u
#define SMMU_CMDQ_PROD 0x098u
#define SMMU_CMDQ_CONS 0x09Cu
#define SMMU_EVENTQ_BASE 0x0A0u
#define SMMU_EVENTQ_IRQ_CFG0 0x0B0u
#define SMMU_EVENTQ_IRQ_CFG1 0x0B8u
/* CMDQ_CONTROL_PAGE_BASE<n> (6.3.49): where ECMDQ control page n is */
#define SMMU_CMDQ_CONTROL_PAGE_BASE(n) (0x4000u + 32u * (n))
#define SMMU_CMDQ_CONTROL_PAGE_ADDR_MASK SMMU_GENMASK64(55, 16)
/* Page 1 (6.2) */
#define SMMU_EVENTQ_PROD 0x100A8u
#define SMMU_EVENTQ_CONS 0x100ACu
#define SMMU_PRIQ_BASE 0x0C0u
#define SMMU_PRIQ_IRQ_CFG0 0x0D0u
#define SMMU_PRIQ_IRQ_CFG1 0x0D8u
#define SMMU_PRIQ_PROD 0x100C8u
#define SMMU_PRIQ_CONS 0x100CCu
/* PRI queue record, 2 dwords (8; Linux's PRIQ_0_*, PRIQ_1_*) */
#define SMMU_PRIQ_DWORDS 2
#define SMMU_PRIQ0_SID_MASK 0xFFFFFFFFull
#define SMMU_PRIQ0_WRITE SMMU_BIT64(61)
#define SMMU_PRIQ0_LAST SMMU_BIT64(62)
#define SMMU_PRIQ1_PRG_MASK 0x1FFull
#define SMMU_PRIQ1_ADDR_MASK SMMU_GENMASK64(63, 12)
/* CMD_PRI_RESP (4.5.2): SID[63:32], PRGIndex dword 1 [8:0], Resp dword 1 [13:12] */
#define SMMU_CMD_PRI_RESP 0x41u
/* CMD_RESUME (4.7.1): SID[63:32], Ac (retry) bit 12, Ab (abort) bit 13, STAG dword 1 [15:0] */
#define SMMU_CMD_RESUME 0x44u
#define SMMU_CMD0_RESUME_RETRY SMMU_BIT64(12)
#define SMMU_CMD0_RESUME_ABORT SMMU_BIT64(13)
#define SMMU_CMD1_PRI_RESP_SHIFT 12
#define SMMU_PRI_RESP_FAILURE 0u
#define SMMU_PRI_RESP_INVALID 1u
#define SMMU_PRI_RESP_SUCCESS 2u

/* IDR0 (6.3.1) */
#define SMMU_IDR0_S2P SMMU_BIT(0)
#define SMMU_IDR0_S1P SMMU_BIT(1)
#define SMMU_IDR0_MSI SMMU_BIT(13)
#define SMMU_IDR0_SEV SMMU_BIT(14)
#define SMMU_IDR0_HYP SMMU_BIT(9)
#define SMMU_IDR0_CD2L SMMU_BIT(19)
#define SMMU_IDR0_ATS SMMU_BIT(10)
#define SMMU_IDR0_STALL_MODEL_SHIFT 24  /* 0b00 stall and terminate, 0b01 terminate only, 0b10 stall forced */
#define SMMU_IDR0_PRI SMMU_BIT(16)
#define SMMU_IDR0_ST_LEVEL_SHIFT 27     /* 1: 2-level stream tables */
#define SMMU_IDR0_ST_LEVEL_MASK 0x3u
/* IDR1 (6.3.2) */
#define SMMU_IDR1_SIDSIZE_MASK 0x3Fu
#define SMMU_IDR1_SSIDSIZE_SHIFT 6
#define SMMU_IDR1_SSIDSIZE_MASK 0x1Fu
#define SMMU_IDR1_EVENTQS_SHIFT 16
#define SMMU_IDR1_CMDQS_SHIFT 21
#define SMMU_IDR1_QS_MASK 0x1Fu
#define SMMU_IDR1_PRIQS_SHIFT 11
#define SMMU_IDR1_ECMDQ SMMU_BIT(31)
/* IDR3 (6.3.4) */
#define SMMU_IDR3_RIL SMMU_BIT(10)
/* IDR5 (6.3.6) */
#define SMMU_IDR5_OAS_MASK 0x7u
#define SMMU_IDR5_GRAN4K SMMU_BIT(4)
/* IDR6 (6.3.45) */
#define SMMU_IDR6_LOG2NUMP_SHIFT 24
#define SMMU_IDR6_LOG2NUMQ_SHIFT 16
#define SMMU_IDR6_LOG2NUM_MASK 0xFu

/* CR0 / CR0ACK (6.3.9) */
#define SMMU_CR0_SMMUEN SMMU_BIT(0)
#define SMMU_CR0_EVTQEN SMMU_BIT(2)
#define SMMU_CR0_CMDQEN SMMU_BIT(3)
#define SMMU_CR0_PRIQEN SMMU_BIT(1)
/* GBPA (6.3.14) */
#define SMMU_GBPA_UPDATE SMMU_BIT(31)
#define SMMU_GBPA_ABORT SMMU_BIT(20)
/* IRQ_CTRL / IRQ_CTRLACK (6.3.16) */
#define SMMU_IRQ_CTRL_GERROR_IRQEN SMMU_BIT(0)
#define SMMU_IRQ_CTRL_EVTQ_IRQEN SMMU_BIT(2)
#define SMMU_IRQ_CTRL_PRIQ_IRQEN SMMU_BIT(1)
/* STRTAB_BASE_CFG (6.3.25) */
#define SMMU_STRTAB_CFG_LOG2SIZE_MASK 0x3Fu
#define SMMU_STRTAB_CFG_SPLIT_SHIFT 6
#define SMMU_STRTAB_CFG_FMT_SHIFT 16
#define SMMU_STRTAB_CFG_FMT_LINEAR 0u
#define SMMU_STRTAB_CFG_FMT_2LVL 1u
/* *_BASE of queues (6.3.26, 6.3.29): ADDR[55:5], LOG2SIZE[4:0] */
#define SMMU_Q_BASE_LOG2SIZE_MASK 0x1Fu
/* *_PROD / *_CONS */
#define SMMU_Q_OVFLG SMMU_BIT(31)     /* EVENTQ_PROD.OVFLG, EVENTQ_CONS.OVACKFLG */
#define SMMU_Q_WR_RD_MASK 0xFFFFFu     /* index and wrap bit */
/* ECMDQ interface registers, relative to the interface (6.3.107-6.3.109);
 * 2^LOG2NUMQ interfaces spread evenly through each 64 KiB control page. */
#define SMMU_ECMDQ_BASE 0x00u
#define SMMU_ECMDQ_PROD 0x08u
#define SMMU_ECMDQ_CONS 0x0Cu
#define SMMU_ECMDQ_PROD_EN SMMU_BIT(31)
#define SMMU_ECMDQ_PROD_ERRACK SMMU_BIT(23)
#define SMMU_ECMDQ_CONS_ENACK SMMU_BIT(31)
#define SMMU_ECMDQ_CONS_ERR SMMU_BIT(23)
#define SMMU_ECMDQ_CONS_ERR_REASON_SHIFT 24
#define SMMU_ECMDQ_CONS_ERR_REASON_MASK 0x7u

/* ---- Stream table level-1 descriptor (5.1.2): SPAN[4:0], L2Ptr[51:6] */
#define SMMU_L1STD_SPAN_MASK 0x1Full
#define SMMU_L1STD_L2PTR_MASK SMMU_GENMASK64(51, 6)

/* ---- Stream table entry, 8 dwords (5.2) */
#define SMMU_STE_DWORDS 8
#define SMMU_STE0_V SMMU_BIT64(0)
#define SMMU_STE0_CONFIG_SHIFT 1
#define SMMU_STE_CONFIG_ABORT 0u
#define SMMU_STE_CONFIG_BYPASS 4u
#define SMMU_STE_CONFIG_S1 5u
#define SMMU_STE_CONFIG_S2 6u
#define SMMU_STE_CONFIG_NESTED 7u
#define SMMU_STE0_S1FMT_SHIFT 4
#define SMMU_STE0_S1CTXPTR_MASK SMMU_GENMASK64(51, 6)
#define SMMU_STE0_S1CDMAX_SHIFT 59
#define SMMU_STE1_S1DSS_MASK 0x3ull
#define SMMU_STE1_EATS_SHIFT 28        /* STE[93:92] */
#define SMMU_STE_EATS_TRANS 1ull       /* full ATS */

/* ---- Context descriptor, 8 dwords (5.4) */
#define SMMU_CD_DWORDS 8
#define SMMU_CD0_T0SZ_MASK 0x3Full
#define SMMU_CD0_TG0_SHIFT 6           /* 0: 4K, 1: 64K, 2: 16K */
#define SMMU_CD0_TG0_4K 0u
#define SMMU_CD0_TG0_64K 1u
#define SMMU_CD0_TG0_16K 2u
/* Walk attributes of TTB0 (IR0[9:8], OR0[11:10], SH0[13:12]), as Linux
 * fills them from the io-pgtable's TCR; the model's walker does not use them. */
#define SMMU_CD0_IR0_SHIFT 8
#define SMMU_CD0_OR0_SHIFT 10
#define SMMU_CD0_SH0_SHIFT 12
#define SMMU_CD0_EPD1 SMMU_BIT64(30)
#define SMMU_CD0_V SMMU_BIT64(31)
#define SMMU_CD0_IPS_SHIFT 32          /* 5: 48 bits */
#define SMMU_CD0_AA64 SMMU_BIT64(41)
#define SMMU_CD0_S SMMU_BIT64(44)      /* stall stage-1 translation-related faults (5.4, 3.12.2) */
#define SMMU_CD0_R SMMU_BIT64(45)      /* record F_TRANSLATION/F_ACCESS/F_ADDR_SIZE/F_PERMISSION (5.5) */
#define SMMU_CD0_A SMMU_BIT64(46)      /* abort on termination: required with IDR0.TERM_MODEL = 1 */
#define SMMU_CD0_ASID_SHIFT 48
#define SMMU_CD1_TTB0_MASK SMMU_GENMASK64(51, 4)
/* MAIR0[223:192] and MAIR1[255:224]: the whole of dword 3 is MAIR_EL1's value. */
#define SMMU_CD_MAIR_DWORD 3

/* ---- Commands, 2 dwords (4) */
#define SMMU_CMD_DWORDS 2
#define SMMU_CMD_CFGI_STE 0x03u
#define SMMU_CMD_CFGI_ALL 0x04u          /* CFGI_STE_RANGE with Range 31 */
#define SMMU_CMD_CFGI_CD 0x05u
#define SMMU_CMD_TLBI_NH_ASID 0x11u
#define SMMU_CMD_TLBI_NH_VA 0x12u
#define SMMU_CMD_TLBI_EL2_ALL 0x20u
#define SMMU_CMD_TLBI_NSNH_ALL 0x30u
#define SMMU_CMD_ATC_INV 0x40u
#define SMMU_CMD_SYNC 0x46u
#define SMMU_CMD0_SSID_SHIFT 12
#define SMMU_CMD0_SID_SHIFT 32
#define SMMU_CMD0_NUM_SHIFT 12
#define SMMU_CMD0_SCALE_SHIFT 20
#define SMMU_CMD0_VMID_SHIFT 32
#define SMMU_CMD0_ASID_SHIFT 48
#define SMMU_CMD0_SYNC_CS_SHIFT 12     /* 0 none, 1 IRQ (MSI), 2 SEV */
#define SMMU_CMD0_SYNC_MSIDATA_SHIFT 32
#define SMMU_CMD1_LEAF SMMU_BIT64(0)
#define SMMU_CMD1_RANGE_SHIFT 0        /* CFGI_STE_RANGE */
#define SMMU_CMD1_TTL_SHIFT 8
#define SMMU_CMD1_TG_SHIFT 10
#define SMMU_CMD1_ADDR_MASK SMMU_GENMASK64(63, 12) /* VA[63:12] */
#define SMMU_CMD1_MSIADDR_MASK SMMU_GENMASK64(55, 2)
#define SMMU_CMD1_ATC_SIZE_MASK 0x3Full    /* ATC_INV: the span is 4 KiB x 2^Size */
#define SMMU_ATC_INV_SIZE_ALL 52u          /* every translation of the stream (4.5.1) */
#define SMMU_SYNC_CS_NONE 0u
#define SMMU_SYNC_CS_IRQ 1u
#define SMMU_SYNC_CS_SEV 2u
/* CMDQ_CONS.ERR (6.3.28, 7.1) */
#define SMMU_CMDQ_CONS_ERR_SHIFT 24
#define SMMU_CMDQ_CONS_ERR_MASK 0x7Fu
#define SMMU_CERROR_ILL 1u
#define SMMU_CERROR_ATC_INV_SYNC 3u   /* an ATC invalidation timed out; CONS stays on the CMD_SYNC */
#define SMMU_GERROR_CMDQ_ERR SMMU_BIT(0)
#define SMMU_GERROR_CMDQP_ERR SMMU_BIT(9)

/* ---- Event record, 4 dwords (7.3) */
#define SMMU_EVT_DWORDS 4
#define SMMU_EVT0_ID_MASK 0xFFull
#define SMMU_EVT0_SID_SHIFT 32
#define SMMU_EVT1_RNW SMMU_BIT64(35)
#define SMMU_EVT1_STALL SMMU_BIT64(31)   /* the transaction is stalled (3.12.2) */
#define SMMU_EVT1_STAG_MASK 0xFFFFull     /* its STAG, for CMD_RESUME */
#define SMMU_EVT_F_TRANSLATION 0x10u
#define SMMU_EVT_F_PERMISSION 0x13u
#define SMMU_EVT_C_BAD_STE 0x04u

/* ---- AArch64 stage-1 descriptors, 4K granule (Arm ARM D8) */
#define SMMU_PTE_VALID SMMU_BIT64(0)
#define SMMU_PTE_TABLE SMMU_BIT64(1)   /* table at levels 0-2, page at level 3 */
#define SMMU_PTE_AP_UNPRIV SMMU_BIT64(6)
#define SMMU_PTE_AP_RDONLY SMMU_BIT64(7)
#define SMMU_PTE_SH_INNER (3ull << 8)
#define SMMU_PTE_AF SMMU_BIT64(10)
#define SMMU_PTE_ADDR_MASK SMMU_GENMASK64(47, 12)

#endif /* SMMU_VP_SW_SMMU_HW_H */
