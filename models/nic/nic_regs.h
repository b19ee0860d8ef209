/*
 * Multi-queue Ethernet controller: register block and descriptor format
 * (docs/devices.md#nic). Declared once; used by the model (models/nic), the
 * driver (sw/drivers/nic) and the tests. All registers are 32 bits wide
 * unless named _LO/_HI (a 64-bit access to _LO covers _HI) or listed as
 * 64-bit statistics.
 *
 * Queues: queue pair q has an RX ring and a TX ring of NIC_DESC_BYTES
 * descriptors in memory the NIC reaches by DMA (through the SMMU, with the
 * NIC's StreamID). Ring indexes run 0 .. size-1. The driver owns the
 * descriptors from TAIL up to HEAD-1 (modulo size); the NIC owns HEAD up to
 * TAIL-1: writing TAIL is the doorbell that hands descriptors to the NIC, and
 * the NIC advances HEAD as it consumes them. HEAD == TAIL: the NIC owns none.
 * So at most size-1 descriptors are posted at once.
 *
 * Completion: when the NIC is done with a descriptor it writes back its
 * `wb_len`, `wb_status` (NIC_DESC_DD set, error bits) and `wb_timestamp_ns`
 * (RX: when the frame's last byte arrived from the wire; TX: when it left)
 * in one 16-byte write, then counts the completion for the queue's
 * interrupt moderation.
 *
 * Interrupts (one vector per queue pair, as MSI-X): a queue raises its
 * vector when it has completions not yet signalled, its interrupt is
 * unmasked, and either COAL_FRAMES completions gathered or COAL_USECS passed
 * since the first of them (ethtool's rx-frames / rx-usecs; 0 frames or 0 us
 * means that trigger is off; both off: every completion). Q_CTRL.MSI_EN sends
 * a 32-bit write of MSI_DATA to MSI_ADDR through the master port; otherwise
 * Q_CTRL.IRQ_EN raises wired line (device irq + q). Raising sets the queue's
 * mask (as NAPI expects: the handler runs, polling follows); the driver
 * unmasks by writing 0 to Q_IRQ_MASK when it re-arms.
 *
 * Errors never stop the model: bad programming sets a bit in ERR_STATUS (and
 * the queue's Q_ERR), counts it in the statistics, and the queue involved
 * stops until it is reprogrammed (RX_EN/TX_EN cleared and set again).
 */
#ifndef SMMU_VP_MODELS_NIC_NIC_REGS_H
#define SMMU_VP_MODELS_NIC_NIC_REGS_H

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

/* ---- Global registers. */
#define NIC_REG_ID 0x000u          /* RO: NIC_ID_VALUE */
#define NIC_REG_QUEUES 0x004u      /* RO: queue pairs */
#define NIC_REG_LINK_MBPS 0x008u   /* RO: line rate, Mbit/s */
#define NIC_REG_MAX_FRAME 0x00Cu   /* RO: largest frame (MTU + 14-byte header), bytes */
#define NIC_REG_CTRL 0x010u        /* RW: NIC_CTRL_* */
#define NIC_REG_STATUS 0x014u      /* RO: NIC_STATUS_* */
#define NIC_REG_ERR_STATUS 0x018u  /* W1C: NIC_ERR_* of every queue, ORed */
#define NIC_REG_ERR_QUEUE 0x01Cu   /* RO: queue of the first error since ERR_STATUS was clear */
#define NIC_REG_DESC_BATCH 0x020u  /* RO: descriptors fetched by one read */
#define NIC_ID_VALUE 0x4E494331u   /* "NIC1" */

#define NIC_CTRL_RX_EN (1u << 0)   /* wire RX on: frames are received (and dropped without buffers) */
#define NIC_CTRL_TX_EN (1u << 1)   /* wire TX on */

#define NIC_STATUS_LINK_UP (1u << 0)

/* ---- Statistics: 64-bit, read-only, counting since reset (ethtool -S). */
#define NIC_STAT_BASE 0x100u
#define NIC_STAT_RX_PACKETS 0x100u
#define NIC_STAT_RX_BYTES 0x108u
#define NIC_STAT_TX_PACKETS 0x110u
#define NIC_STAT_TX_BYTES 0x118u
#define NIC_STAT_RX_NO_BUFFER 0x120u      /* dropped: the queue had no posted buffer */
#define NIC_STAT_RX_FIFO_OVERFLOW 0x128u  /* dropped: the on-chip RX FIFO was full */
#define NIC_STAT_RX_DMA_FAULT 0x130u      /* dropped: a payload write was aborted (SMMU) */
#define NIC_STAT_TX_DMA_FAULT 0x138u      /* not sent: a payload read was aborted */
#define NIC_STAT_DESC_ERRORS 0x140u       /* descriptors refused (zero length, too small) */
#define NIC_STAT_PROG_ERRORS 0x148u       /* bad ring programming or doorbells */
#define NIC_STAT_END 0x150u

/* ---- Per queue pair q: registers at NIC_Q_REG(q, reg). */
#define NIC_Q_BASE 0x1000u
#define NIC_Q_STRIDE 0x100u
#define NIC_Q_REG(q, reg) (NIC_Q_BASE + (q) * NIC_Q_STRIDE + (reg))

#define NIC_Q_RX_BASE_LO 0x00u   /* ring base (device address), NIC_DESC_BYTES-aligned */
#define NIC_Q_RX_BASE_HI 0x04u
#define NIC_Q_RX_SIZE 0x08u      /* descriptors, a power of two, 2 .. NIC_RING_MAX */
#define NIC_Q_RX_HEAD 0x0Cu      /* RO: next descriptor the NIC fills */
#define NIC_Q_RX_TAIL 0x10u      /* doorbell: one past the last posted descriptor */
#define NIC_Q_TX_BASE_LO 0x20u
#define NIC_Q_TX_BASE_HI 0x24u
#define NIC_Q_TX_SIZE 0x28u
#define NIC_Q_TX_HEAD 0x2Cu      /* RO: next descriptor the NIC sends */
#define NIC_Q_TX_TAIL 0x30u      /* doorbell */
#define NIC_Q_CTRL 0x40u         /* RW: NIC_Q_CTRL_* */
#define NIC_Q_MSI_ADDR_LO 0x44u
#define NIC_Q_MSI_ADDR_HI 0x48u
#define NIC_Q_MSI_DATA 0x4Cu
#define NIC_Q_COAL_FRAMES 0x50u  /* completions before an interrupt; 0: off */
#define NIC_Q_COAL_USECS 0x54u   /* us after the first unsignalled completion; 0: off */
#define NIC_Q_IRQ_MASK 0x58u     /* RW: 1 masked; set by the NIC when it raises */
#define NIC_Q_ERR 0x5Cu          /* W1C: NIC_ERR_* of this queue */

#define NIC_Q_CTRL_RX_EN (1u << 0)   /* rising edge: latch RX_BASE/RX_SIZE, HEAD = TAIL = 0 */
#define NIC_Q_CTRL_TX_EN (1u << 1)   /* rising edge: latch TX_BASE/TX_SIZE, HEAD = TAIL = 0 */
#define NIC_Q_CTRL_IRQ_EN (1u << 2)  /* wired line irq + q */
#define NIC_Q_CTRL_MSI_EN (1u << 3)  /* MSI write (takes precedence over IRQ_EN) */

#define NIC_RING_MAX 32768u

/* Error bits (ERR_STATUS and Q_ERR). */
#define NIC_ERR_RING_SIZE (1u << 0)    /* enabled with a size not a power of two in 2..NIC_RING_MAX */
#define NIC_ERR_RING_ALIGN (1u << 1)   /* ring base not NIC_DESC_BYTES-aligned */
#define NIC_ERR_DOORBELL (1u << 2)     /* TAIL written >= size, or to a disabled ring */
#define NIC_ERR_DESC_FETCH (1u << 3)   /* a descriptor read or write-back was aborted */
#define NIC_ERR_DESC (1u << 4)         /* a descriptor was refused (see NIC_DESC_ERR_*) */
#define NIC_ERR_DMA (1u << 5)          /* a payload access was aborted */
#define NIC_ERR_MSI (1u << 6)          /* an MSI write was aborted */

/* ---- Descriptors: the same 32-byte layout for RX and TX rings. */
#define NIC_DESC_BYTES 32u

struct nic_desc {
  uint64_t addr;            /* driver: buffer device address */
  uint32_t len;             /* driver: RX buffer capacity / TX frame length, bytes */
  uint32_t flags;           /* driver: NIC_DESC_F_* */
  uint32_t wb_len;          /* NIC: bytes received / sent */
  uint32_t wb_status;       /* NIC: NIC_DESC_DD | NIC_DESC_ERR_* */
  uint64_t wb_timestamp_ns; /* NIC: wire time of the frame */
};

#define NIC_DESC_WB_OFFSET 16u /* the NIC writes back bytes 16..31 */

/* TX: the frame's own flow number is in its first bytes (the NIC only counts
 * it); RX: no driver flags yet. */
#define NIC_DESC_F_NONE 0u

#define NIC_DESC_DD (1u << 0)           /* descriptor done */
#define NIC_DESC_ERR_LEN (1u << 8)      /* zero length, or an RX buffer smaller than the frame */
#define NIC_DESC_ERR_DMA (1u << 9)      /* payload DMA aborted: frame dropped / not sent */

/* ---- Frames the RX generator produces (so a receiver can check them):
 * bytes 0..13 an Ethernet header (NIC_FRAME_ETHERTYPE), then a 16-byte
 * generator header, then payload byte i = nic_frame_byte(flow, seq, i). */
#define NIC_FRAME_ETHERTYPE 0x88B5u /* IEEE local experimental */
#define NIC_FRAME_HDR_OFFSET 14u
struct nic_frame_hdr {
  uint32_t flow;
  uint32_t seq;        /* per flow, from 0 */
  uint64_t wire_ns;    /* arrival time of the first byte */
};
#define NIC_FRAME_PAYLOAD_OFFSET 30u

static inline uint8_t nic_frame_byte(uint32_t flow, uint32_t seq, uint32_t i) {
  return (uint8_t)((flow * 131u) ^ (seq * 31u) ^ (i * 7u) ^ (i >> 8));
}

/* The same pattern eight bytes at a time (the generator writes, and net_rx
 * checks, every payload byte of every frame: byte by byte it was a quarter
 * of a NIC run's host instructions). Little-endian words, as every host and
 * target of this project. For i a multiple of 8, bytes i..i+7 share i >> 8,
 * so within each 256-byte block a word is the block's constant byte
 * (flow * 131) ^ (seq * 31) ^ (i >> 8) in every lane, xored with the bytes
 * (i + k) * 7 mod 256, which depend on i mod 256 only: one of 32 words. */
static const uint64_t nic_frame_steps[32] = {
    0x312A231C150E0700ULL,
    0x69625B544D463F38ULL,
    0xA19A938C857E7770ULL,
    0xD9D2CBC4BDB6AFA8ULL,
    0x110A03FCF5EEE7E0ULL,
    0x49423B342D261F18ULL,
    0x817A736C655E5750ULL,
    0xB9B2ABA49D968F88ULL,
    0xF1EAE3DCD5CEC7C0ULL,
    0x29221B140D06FFF8ULL,
    0x615A534C453E3730ULL,
    0x99928B847D766F68ULL,
    0xD1CAC3BCB5AEA7A0ULL,
    0x0902FBF4EDE6DFD8ULL,
    0x413A332C251E1710ULL,
    0x79726B645D564F48ULL,
    0xB1AAA39C958E8780ULL,
    0xE9E2DBD4CDC6BFB8ULL,
    0x211A130C05FEF7F0ULL,
    0x59524B443D362F28ULL,
    0x918A837C756E6760ULL,
    0xC9C2BBB4ADA69F98ULL,
    0x01FAF3ECE5DED7D0ULL,
    0x39322B241D160F08ULL,
    0x716A635C554E4740ULL,
    0xA9A29B948D867F78ULL,
    0xE1DAD3CCC5BEB7B0ULL,
    0x19120B04FDF6EFE8ULL,
    0x514A433C352E2720ULL,
    0x89827B746D665F58ULL,
    0xC1BAB3ACA59E9790ULL,
    0xF9F2EBE4DDD6CFC8ULL};

static inline uint64_t nic_frame_block_xor(uint32_t flow, uint32_t seq, uint32_t i) {
  return (uint64_t)(((flow * 131u) ^ (seq * 31u) ^ (i >> 8)) & 0xFFu) * 0x0101010101010101ull;
}

/* The end of the whole words from i (a multiple of 8) within i's block. */
static inline uint32_t nic_frame_block_end(uint32_t i, uint32_t len) {
  const uint32_t block_end = (i | 255u) + 1u, words_end = len & ~7u;
  return block_end < words_end ? block_end : words_end;
}

/* Writes payload bytes [NIC_FRAME_PAYLOAD_OFFSET, len) of frame (flow, seq). */
static inline void nic_frame_fill_payload(uint8_t *frame, uint32_t len, uint32_t flow, uint32_t seq) {
  uint32_t i = NIC_FRAME_PAYLOAD_OFFSET;
  for (; i < len && (i & 7u) != 0; i++) frame[i] = nic_frame_byte(flow, seq, i);
  while (i + 8 <= len) {
    const uint64_t x = nic_frame_block_xor(flow, seq, i);
    for (const uint32_t end = nic_frame_block_end(i, len); i < end; i += 8) {
      const uint64_t w = nic_frame_steps[(i >> 3) & 31u] ^ x;
      __builtin_memcpy(frame + i, &w, 8);
    }
  }
  for (; i < len; i++) frame[i] = nic_frame_byte(flow, seq, i);
}

/* Whether payload bytes [NIC_FRAME_PAYLOAD_OFFSET, len) are those of frame (flow, seq). */
static inline int nic_frame_payload_ok(const uint8_t *frame, uint32_t len, uint32_t flow, uint32_t seq) {
  uint32_t i = NIC_FRAME_PAYLOAD_OFFSET;
  for (; i < len && (i & 7u) != 0; i++)
    if (frame[i] != nic_frame_byte(flow, seq, i)) return 0;
  while (i + 8 <= len) {
    const uint64_t x = nic_frame_block_xor(flow, seq, i);
    uint64_t diff = 0; /* a whole block at once: no branch per word */
    for (const uint32_t end = nic_frame_block_end(i, len); i < end; i += 8) {
      uint64_t w;
      __builtin_memcpy(&w, frame + i, 8);
      diff |= w ^ nic_frame_steps[(i >> 3) & 31u] ^ x;
    }
    if (diff) return 0;
  }
  for (; i < len; i++)
    if (frame[i] != nic_frame_byte(flow, seq, i)) return 0;
  return 1;
}

#endif /* SMMU_VP_MODELS_NIC_NIC_REGS_H */
