/*
 * NVMe controller: controller properties (registers), queue entries, command
 * opcodes, status codes and the Identify data the model fills, as the NVM
 * Express Base Specification 2.0 defines them (section numbers below), plus
 * this platform's MSI-X-style vector table. Declared once; used by the model
 * (models/nvme), the driver (sw/drivers/nvme) and the tests
 * (docs/devices.md#nvme).
 *
 * Everything is little-endian. Registers are 32 bits wide unless named as
 * 64-bit (CAP, ASQ, ACQ: a 64-bit access, or two 32-bit accesses low then
 * high).
 *
 * Queues (NVMe 2.0 3.3): submission and completion queues live in memory the
 * controller reaches by DMA through the SMMU with the drive's StreamID. The
 * host writes a submission queue entry at the SQ tail and rings the SQ tail
 * doorbell; the controller fetches entries, executes them, and posts a
 * completion queue entry at its CQ tail with the phase tag inverted on each
 * pass over the queue; the host consumes entries while their phase tag
 * matches the phase it expects and writes the CQ head doorbell.
 *
 * Interrupts: a completion queue created with IEN raises its vector IV. The
 * vector table (NVME_REG_MSIX_BASE) holds, per vector, a message address,
 * data and a mask bit, as an MSI-X table does: an unmasked vector with a
 * non-zero address sends a 32-bit write of its data to its address through
 * the master port; otherwise wired line (device irq + vector) is raised.
 */
#ifndef SMMU_VP_MODELS_NVME_NVME_REGS_H
#define SMMU_VP_MODELS_NVME_NVME_REGS_H

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

/* ---- Controller properties (NVMe 2.0 3.1.4, figure 35). */
#define NVME_REG_CAP 0x00u    /* 64-bit, RO: capabilities */
#define NVME_REG_VS 0x08u     /* RO: version */
#define NVME_REG_INTMS 0x0Cu  /* interrupt mask set (pin/MSI only; MSI-X hosts ignore it) */
#define NVME_REG_INTMC 0x10u  /* interrupt mask clear */
#define NVME_REG_CC 0x14u     /* controller configuration */
#define NVME_REG_CSTS 0x1Cu   /* RO: controller status */
#define NVME_REG_NSSR 0x20u   /* NVM subsystem reset (not supported: CAP.NSSRS 0) */
#define NVME_REG_AQA 0x24u    /* admin queue attributes */
#define NVME_REG_ASQ 0x28u    /* 64-bit: admin submission queue base */
#define NVME_REG_ACQ 0x30u    /* 64-bit: admin completion queue base */

/* CAP (3.1.4.1) */
#define NVME_CAP_MQES(cap) ((uint32_t)((cap) & 0xFFFFu))            /* max queue entries, 0's based */
#define NVME_CAP_CQR (1ull << 16)                                   /* contiguous queues required */
#define NVME_CAP_TO(cap) ((uint32_t)(((cap) >> 24) & 0xFFu))       /* ready timeout, 500 ms units */
#define NVME_CAP_DSTRD(cap) ((uint32_t)(((cap) >> 32) & 0xFu))     /* doorbell stride 2^(2+DSTRD) */
#define NVME_CAP_CSS_NVM (1ull << 37)                               /* NVM command set */
#define NVME_CAP_MPSMIN(cap) ((uint32_t)(((cap) >> 48) & 0xFu))    /* 2^(12+MPSMIN) */
#define NVME_CAP_MPSMAX(cap) ((uint32_t)(((cap) >> 52) & 0xFu))

/* VS (3.1.4.2): 2.0.0 */
#define NVME_VS_2_0 0x00020000u

/* CC (3.1.4.5) */
#define NVME_CC_EN (1u << 0)
#define NVME_CC_CSS_SHIFT 4          /* 000b: NVM command set */
#define NVME_CC_MPS_SHIFT 7          /* memory page size 2^(12+MPS) */
#define NVME_CC_MPS_MASK (0xFu << NVME_CC_MPS_SHIFT)
#define NVME_CC_AMS_SHIFT 11         /* 000b: round robin */
#define NVME_CC_SHN_SHIFT 14         /* shutdown notification */
#define NVME_CC_SHN_MASK (3u << NVME_CC_SHN_SHIFT)
#define NVME_CC_SHN_NORMAL (1u << NVME_CC_SHN_SHIFT)
#define NVME_CC_IOSQES_SHIFT 16      /* I/O SQ entry size 2^n: 6 (64 bytes) */
#define NVME_CC_IOCQES_SHIFT 20      /* I/O CQ entry size 2^n: 4 (16 bytes) */

/* CSTS (3.1.4.6) */
#define NVME_CSTS_RDY (1u << 0)
#define NVME_CSTS_CFS (1u << 1)            /* controller fatal status */
#define NVME_CSTS_SHST_MASK (3u << 2)
#define NVME_CSTS_SHST_COMPLETE (2u << 2)

/* AQA (3.1.4.8): sizes 0's based, 2 .. 4096 entries */
#define NVME_AQA_ASQS(n) ((uint32_t)((n) - 1) & 0xFFFu)
#define NVME_AQA_ACQS(n) (((uint32_t)((n) - 1) & 0xFFFu) << 16)

/* Doorbells (3.1.4.22-23): SQ y tail at 0x1000 + (2y) * stride, CQ y head at
 * 0x1000 + (2y + 1) * stride, stride = 4 << CAP.DSTRD. */
#define NVME_REG_DBS 0x1000u
#define NVME_SQ_TAIL_DB(qid, dstrd) (NVME_REG_DBS + (2u * (qid)) * (4u << (dstrd)))
#define NVME_CQ_HEAD_DB(qid, dstrd) (NVME_REG_DBS + (2u * (qid) + 1u) * (4u << (dstrd)))

/* ---- This platform's vector table (MSI-X style, NVMe 2.0 3.5.1 uses PCI's). */
#define NVME_REG_MSIX_BASE 0x3000u
#define NVME_MSIX_ENTRY_BYTES 16u
#define NVME_MSIX_ADDR_LO 0x0u
#define NVME_MSIX_ADDR_HI 0x4u
#define NVME_MSIX_DATA 0x8u
#define NVME_MSIX_CTRL 0xCu          /* bit 0: masked (the reset value) */
#define NVME_MSIX_CTRL_MASKED (1u << 0)
#define NVME_MSIX_REG(v, reg) (NVME_REG_MSIX_BASE + (v) * NVME_MSIX_ENTRY_BYTES + (reg))
#define NVME_MAX_VECTORS 64u
/* Size of the register block (properties, doorbells, vector table). */
#define NVME_REG_BLOCK_SIZE 0x4000u

/* ---- Queue entries (3.3.3). */
#define NVME_SQE_BYTES 64u
#define NVME_CQE_BYTES 16u

struct nvme_sqe {
  uint32_t cdw0;   /* OPC [7:0], FUSE [9:8], PSDT [15:14] (0: PRPs), CID [31:16] */
  uint32_t nsid;
  uint32_t cdw2, cdw3;
  uint64_t mptr;
  uint64_t prp1;   /* data pointer: PRP entry 1 */
  uint64_t prp2;   /* PRP entry 2, or the address of a PRP list */
  uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

struct nvme_cqe {
  uint32_t dw0;    /* command specific */
  uint32_t dw1;
  uint16_t sqhd;   /* SQ head pointer after this command was fetched */
  uint16_t sqid;
  uint16_t cid;
  uint16_t status; /* bit 0: phase tag; bits 15:1: status field */
};

#define NVME_CDW0(opc, cid) ((uint32_t)(opc) | ((uint32_t)(cid) << 16))
#define NVME_CDW0_OPC(cdw0) ((uint8_t)((cdw0) & 0xFFu))
#define NVME_CDW0_PSDT(cdw0) (((cdw0) >> 14) & 3u)
#define NVME_CDW0_CID(cdw0) ((uint16_t)((cdw0) >> 16))

/* CQE status (3.3.3.2.1): phase, then the status field. */
#define NVME_CQE_PHASE 0x1u
#define NVME_STATUS_SC(status) ((uint8_t)(((status) >> 1) & 0xFFu))     /* status code */
#define NVME_STATUS_SCT(status) ((uint8_t)(((status) >> 9) & 0x7u))     /* status code type */
#define NVME_STATUS_DNR (1u << 15)                                      /* do not retry */
#define NVME_STATUS(sct, sc) ((uint16_t)((((sct) & 7u) << 9) | (((sc) & 0xFFu) << 1)))

/* Status code types (3.3.3.2.1.1) */
#define NVME_SCT_GENERIC 0u
#define NVME_SCT_COMMAND_SPECIFIC 1u
/* Generic command status (figure 102) */
#define NVME_SC_SUCCESS 0x00u
#define NVME_SC_INVALID_OPCODE 0x01u
#define NVME_SC_INVALID_FIELD 0x02u
#define NVME_SC_DATA_TRANSFER_ERROR 0x04u
#define NVME_SC_INTERNAL_ERROR 0x06u
#define NVME_SC_INVALID_NAMESPACE 0x0Bu
#define NVME_SC_PRP_OFFSET_INVALID 0x13u
#define NVME_SC_LBA_OUT_OF_RANGE 0x80u
/* Command specific status (figures 103, and the Create/Delete queue commands) */
#define NVME_SC_CQ_INVALID 0x00u
#define NVME_SC_INVALID_QID 0x01u
#define NVME_SC_INVALID_QSIZE 0x02u
#define NVME_SC_INVALID_VECTOR 0x08u
#define NVME_SC_INVALID_QUEUE_DELETION 0x0Cu

/* ---- Admin commands (5, figure 139). */
#define NVME_ADMIN_DELETE_SQ 0x00u
#define NVME_ADMIN_CREATE_SQ 0x01u
#define NVME_ADMIN_DELETE_CQ 0x04u
#define NVME_ADMIN_CREATE_CQ 0x05u
#define NVME_ADMIN_IDENTIFY 0x06u
#define NVME_ADMIN_SET_FEATURES 0x09u
#define NVME_ADMIN_GET_FEATURES 0x0Au

/* Create I/O CQ (5.4): CDW10 QID [15:0], QSIZE [31:16] (0's based);
 * CDW11 PC bit 0, IEN bit 1, IV [31:16]; PRP1 the queue's base. */
#define NVME_QUEUE_CDW10(qid, entries) ((uint32_t)(qid) | (((uint32_t)(entries) - 1u) << 16))
#define NVME_CQ_CDW11(vector, ien) (1u | ((ien) ? 2u : 0u) | ((uint32_t)(vector) << 16))
/* Create I/O SQ (5.5): CDW11 PC bit 0, QPRIO [2:1], CQID [31:16]. */
#define NVME_SQ_CDW11(cqid) (1u | ((uint32_t)(cqid) << 16))

/* Identify (5.17): CDW10 CNS [7:0]; 4096 bytes to PRP1/PRP2. */
#define NVME_IDENTIFY_NAMESPACE 0x00u
#define NVME_IDENTIFY_CONTROLLER 0x01u
#define NVME_IDENTIFY_BYTES 4096u
/* Identify Controller fields (figure 275) the driver reads. */
#define NVME_IDCTRL_VID 0          /* 2 bytes: PCI vendor ID */
#define NVME_IDCTRL_SN 4           /* 20 bytes, ASCII */
#define NVME_IDCTRL_MN 24          /* 40 bytes, ASCII */
#define NVME_IDCTRL_MDTS 77        /* max data transfer 2^n * CAP.MPSMIN pages; 0: no limit */
#define NVME_IDCTRL_SQES 512       /* [3:0] required, [7:4] maximum SQ entry size, log2 */
#define NVME_IDCTRL_CQES 513
#define NVME_IDCTRL_NN 516         /* 4 bytes: number of namespaces */
/* Identify Namespace fields (NVM command set, figure 97 of the NVM spec). */
#define NVME_IDNS_NSZE 0           /* 8 bytes: size in logical blocks */
#define NVME_IDNS_NCAP 8
#define NVME_IDNS_FLBAS 26         /* [3:0]: the LBA format in use */
#define NVME_IDNS_LBAF0 128        /* 4 bytes each: MS [15:0], LBADS [23:16] (log2 block size) */

/* Set/Get Features (5.27): CDW10 FID [7:0]. Number of Queues (5.27.1.5):
 * CDW11 NSQR [15:0], NCQR [31:16] (0's based); completion DW0 the same
 * layout with what was allocated. */
#define NVME_FEAT_NUM_QUEUES 0x07u
#define NVME_NUM_QUEUES(nsq, ncq) (((uint32_t)(nsq) - 1u) | (((uint32_t)(ncq) - 1u) << 16))

/* ---- NVM command set I/O commands (NVM Command Set spec 3). */
#define NVME_CMD_FLUSH 0x00u
#define NVME_CMD_WRITE 0x01u
#define NVME_CMD_READ 0x02u
/* Read/Write: CDW10-11 SLBA (64 bits), CDW12 NLB [15:0] (0's based). */

/* ---- PRPs (4.1.1): each entry a 64-bit address; the first may have an
 * offset within the page, the others are page aligned. A transfer that
 * crosses more than one page boundary after PRP1's page puts a PRP list's
 * address in PRP2; a list's last entry points to the next list page when
 * more entries follow than fit. */
#define NVME_PRP_ENTRIES_PER_PAGE(page) ((page) / 8u)

#endif /* SMMU_VP_MODELS_NVME_NVME_REGS_H */
