// Register map of the SMMUv3 programming interface (IHI 0070 chapter 6),
// declared once for the register file, the SystemC module and the tests:
// offsets of every Non-secure register of page 0 and page 1 (6.2.1, 6.2.2),
// the Command queue control page registers of ECMDQ (6.2.5), field positions
// as `Field{hi, lo}` (bit numbers as the specification writes them), the
// architected encodings the model uses, and queue index arithmetic (3.5).
//
// Naming: offsets are reg::kName; the fields of a register live in a namespace
// named after it, e.g. reg::cr0::kSmmuEn, reg::idr1::kCmdqs.
#pragma once

#include <cstdint>

namespace smmu_vp::smmu {

// Bits [hi:lo] of a register value, inclusive (hi >= lo, hi < 64).
struct Field {
  unsigned hi;
  unsigned lo;

  constexpr unsigned width() const { return hi - lo + 1; }
  // Largest value the field holds.
  constexpr uint64_t max() const { return width() >= 64 ? ~uint64_t{0} : (uint64_t{1} << width()) - 1; }
  // The field's bits in place.
  constexpr uint64_t mask() const { return max() << lo; }
  constexpr uint32_t mask32() const { return static_cast<uint32_t>(mask()); }
  // The field's value, shifted down.
  constexpr uint64_t get(uint64_t reg) const { return (reg >> lo) & max(); }
  constexpr bool test(uint64_t reg) const { return get(reg) != 0; }
  // `v` truncated to the field and shifted into place.
  constexpr uint64_t place(uint64_t v) const { return (v & max()) << lo; }
  // `reg` with the field replaced by `v`.
  constexpr uint64_t set(uint64_t reg, uint64_t v) const { return (reg & ~mask()) | place(v); }
};

// A one-bit field.
constexpr Field field_bit(unsigned b) { return Field{b, b}; }

namespace reg {

// ---- Pages (IHI 0070 6.1, 6.2). Page 1 is at page 0 + 64 KiB.
inline constexpr uint64_t kPageSize = 0x10000;
inline constexpr uint64_t kPage0 = 0x00000;
inline constexpr uint64_t kPage1 = 0x10000;

// ---- Page 0 (IHI 0070 6.2.1). "64" marks the 64-bit registers; all others
// are 32-bit. Offsets not listed, and the registers of features this SMMU
// does not have, are RES0 (6.2).
inline constexpr uint64_t kIdr0 = 0x0000;
inline constexpr uint64_t kIdr1 = 0x0004;
inline constexpr uint64_t kIdr2 = 0x0008;
inline constexpr uint64_t kIdr3 = 0x000C;
inline constexpr uint64_t kIdr4 = 0x0010;
inline constexpr uint64_t kIdr5 = 0x0014;
inline constexpr uint64_t kIidr = 0x0018;
inline constexpr uint64_t kAidr = 0x001C;
inline constexpr uint64_t kCr0 = 0x0020;
inline constexpr uint64_t kCr0Ack = 0x0024;
inline constexpr uint64_t kCr1 = 0x0028;
inline constexpr uint64_t kCr2 = 0x002C;
inline constexpr uint64_t kS2pii = 0x0030;  // 64; only with IDR3.S2PI (not modelled: RES0)
inline constexpr uint64_t kStatusr = 0x0040;
inline constexpr uint64_t kGbpa = 0x0044;
inline constexpr uint64_t kAgbpa = 0x0048;
inline constexpr uint64_t kIrqCtrl = 0x0050;
inline constexpr uint64_t kIrqCtrlAck = 0x0054;
inline constexpr uint64_t kGerror = 0x0060;
inline constexpr uint64_t kGerrorn = 0x0064;
inline constexpr uint64_t kGerrorIrqCfg0 = 0x0068;  // 64
inline constexpr uint64_t kGerrorIrqCfg1 = 0x0070;
inline constexpr uint64_t kGerrorIrqCfg2 = 0x0074;
inline constexpr uint64_t kStrtabBase = 0x0080;  // 64
inline constexpr uint64_t kStrtabBaseCfg = 0x0088;
inline constexpr uint64_t kCmdqBase = 0x0090;  // 64
inline constexpr uint64_t kCmdqProd = 0x0098;
inline constexpr uint64_t kCmdqCons = 0x009C;
inline constexpr uint64_t kEventqBase = 0x00A0;  // 64
// Optional page-0 aliases of the page-1 EVENTQ_PROD/CONS, otherwise RAZ/WI.
inline constexpr uint64_t kEventqProdPage0Alias = 0x00A8;
inline constexpr uint64_t kEventqConsPage0Alias = 0x00AC;
inline constexpr uint64_t kEventqIrqCfg0 = 0x00B0;  // 64
inline constexpr uint64_t kEventqIrqCfg1 = 0x00B8;
inline constexpr uint64_t kEventqIrqCfg2 = 0x00BC;
inline constexpr uint64_t kPriqBase = 0x00C0;  // 64; PRIQ_* only with IDR0.PRI
inline constexpr uint64_t kPriqProdPage0Alias = 0x00C8;
inline constexpr uint64_t kPriqConsPage0Alias = 0x00CC;
inline constexpr uint64_t kPriqIrqCfg0 = 0x00D0;  // 64
inline constexpr uint64_t kPriqIrqCfg1 = 0x00D8;
inline constexpr uint64_t kPriqIrqCfg2 = 0x00DC;
inline constexpr uint64_t kIdr6 = 0x0190;  // SMMUv3.3 ECMDQ (6.3.45)

// Command queue control page registers, n = 0..255, present when IDR1.ECMDQ
// (IHI 0070 6.3.49-6.3.51). All three are read-only.
inline constexpr unsigned kMaxCmdqControlPages = 256;
inline constexpr uint64_t kCmdqControlPageRegsBase = 0x4000;
inline constexpr uint64_t kCmdqControlPageStride = 32;
constexpr uint64_t cmdq_control_page_base_offset(unsigned n) { return 0x4000 + 32 * uint64_t{n}; }  // 64
constexpr uint64_t cmdq_control_page_cfg_offset(unsigned n) { return 0x4008 + 32 * uint64_t{n}; }
constexpr uint64_t cmdq_control_page_status_offset(unsigned n) { return 0x400C + 32 * uint64_t{n}; }

// ---- Page 1 (IHI 0070 6.2.2).
inline constexpr uint64_t kEventqProd = kPage1 + 0x00A8;
inline constexpr uint64_t kEventqCons = kPage1 + 0x00AC;
inline constexpr uint64_t kPriqProd = kPage1 + 0x00C8;
inline constexpr uint64_t kPriqCons = kPage1 + 0x00CC;

// ---- Command queue control pages (IHI 0070 6.2.5): 64 KiB each, holding
// 2^IDR6.CMDQ_CONTROL_PAGE_LOG2NUMQ ECMDQ interfaces spaced evenly through the
// page. Where the pages are is IMPLEMENTATION DEFINED and reported by
// CMDQ_CONTROL_PAGE_BASE<n>.ADDR; this model places them contiguously right
// after page 1.
inline constexpr uint64_t kEcmdqPagesOffset = 0x20000;
constexpr uint64_t ecmdq_page_offset(unsigned page) { return kEcmdqPagesOffset + uint64_t{page} * kPageSize; }
constexpr uint64_t ecmdq_queue_stride(unsigned log2numq) { return kPageSize >> log2numq; }
// Registers of one ECMDQ interface, relative to its place in the page
// (IHI 0070 6.3.107-6.3.109).
inline constexpr uint64_t kEcmdqBase = 0x00;  // 64
inline constexpr uint64_t kEcmdqProd = 0x08;
inline constexpr uint64_t kEcmdqCons = 0x0C;

// Largest LOG2SIZE of any queue (IHI 0070 6.3.2: CMDQS/EVENTQS/PRIQS <= 19).
inline constexpr unsigned kMaxQueueLog2Size = 19;

// ---- Fields.

namespace idr0 {  // IHI 0070 6.3.1
inline constexpr Field kRmeImpl = field_bit(30);
inline constexpr Field kStLevel{28, 27};
inline constexpr Field kTermModel = field_bit(26);
inline constexpr Field kStallModel{25, 24};
inline constexpr Field kAtsRecErr = field_bit(23);
inline constexpr Field kTtEndian{22, 21};
inline constexpr Field kVatos = field_bit(20);
inline constexpr Field kCd2l = field_bit(19);
inline constexpr Field kVmid16 = field_bit(18);
inline constexpr Field kVmw = field_bit(17);
inline constexpr Field kPri = field_bit(16);
inline constexpr Field kAtos = field_bit(15);
inline constexpr Field kSev = field_bit(14);
inline constexpr Field kMsi = field_bit(13);
inline constexpr Field kAsid16 = field_bit(12);
inline constexpr Field kNs1Ats = field_bit(11);
inline constexpr Field kAts = field_bit(10);
inline constexpr Field kHyp = field_bit(9);
inline constexpr Field kDormHint = field_bit(8);
inline constexpr Field kHttu{7, 6};
inline constexpr Field kBtm = field_bit(5);
inline constexpr Field kCohAcc = field_bit(4);
inline constexpr Field kTtf{3, 2};
inline constexpr Field kS1p = field_bit(1);
inline constexpr Field kS2p = field_bit(0);
// Encodings.
inline constexpr uint32_t kStLevelLinear = 0b00;
inline constexpr uint32_t kStLevelTwoLevel = 0b01;
inline constexpr uint32_t kStallModelBoth = 0b00;
inline constexpr uint32_t kStallModelNoStall = 0b01;
inline constexpr uint32_t kStallModelForced = 0b10;
inline constexpr uint32_t kTtEndianMixed = 0b00;
inline constexpr uint32_t kTtEndianLittle = 0b10;
inline constexpr uint32_t kTtEndianBig = 0b11;
inline constexpr uint32_t kTtfAArch32 = 0b01;
inline constexpr uint32_t kTtfAArch64 = 0b10;
inline constexpr uint32_t kTtfBoth = 0b11;
}  // namespace idr0

namespace idr1 {  // IHI 0070 6.3.2
inline constexpr Field kEcmdq = field_bit(31);
inline constexpr Field kTablesPreset = field_bit(30);
inline constexpr Field kQueuesPreset = field_bit(29);
inline constexpr Field kRel = field_bit(28);
inline constexpr Field kAttrTypesOvr = field_bit(27);
inline constexpr Field kAttrPermsOvr = field_bit(26);
inline constexpr Field kCmdqs{25, 21};
inline constexpr Field kEventqs{20, 16};
inline constexpr Field kPriqs{15, 11};
inline constexpr Field kSsidSize{10, 6};
inline constexpr Field kSidSize{5, 0};
}  // namespace idr1

namespace idr3 {  // IHI 0070 6.3.4
inline constexpr Field kAie = field_bit(23);
inline constexpr Field kMtePerm = field_bit(22);
inline constexpr Field kThe = field_bit(21);
inline constexpr Field kS2po = field_bit(20);
inline constexpr Field kS2pi = field_bit(19);
inline constexpr Field kS1pi = field_bit(18);
inline constexpr Field kEpan = field_bit(17);
inline constexpr Field kPasidTt = field_bit(16);
inline constexpr Field kDpt = field_bit(15);
inline constexpr Field kPtwnnc = field_bit(14);
inline constexpr Field kE0pd = field_bit(13);
inline constexpr Field kBbml{12, 11};
inline constexpr Field kRil = field_bit(10);
inline constexpr Field kStt = field_bit(9);
inline constexpr Field kFwb = field_bit(8);
inline constexpr Field kMpam = field_bit(7);
inline constexpr Field kPps = field_bit(5);
inline constexpr Field kXnx = field_bit(4);
inline constexpr Field kPbha = field_bit(3);
inline constexpr Field kHad = field_bit(2);
}  // namespace idr3

namespace idr5 {  // IHI 0070 6.3.6
inline constexpr Field kStallMax{31, 16};
inline constexpr Field kVax{11, 10};
inline constexpr Field kD128 = field_bit(8);
inline constexpr Field kDs = field_bit(7);
inline constexpr Field kGran64K = field_bit(6);
inline constexpr Field kGran16K = field_bit(5);
inline constexpr Field kGran4K = field_bit(4);
inline constexpr Field kOas{2, 0};
// VAX encodings.
inline constexpr uint32_t kVax48 = 0b00;
inline constexpr uint32_t kVax52 = 0b01;
inline constexpr uint32_t kVax56 = 0b10;
}  // namespace idr5

namespace idr6 {  // IHI 0070 6.3.45
inline constexpr Field kCmdqControlPageLog2NumP{27, 24};
inline constexpr Field kCmdqControlPageLog2NumQ{19, 16};
inline constexpr unsigned kMaxLog2 = 8;  // each field is at most 0b1000
}  // namespace idr6

namespace iidr {  // IHI 0070 6.3.7
inline constexpr Field kProductId{31, 20};
inline constexpr Field kVariant{19, 16};
inline constexpr Field kRevision{15, 12};
inline constexpr Field kImplementer{11, 0};
}  // namespace iidr

namespace aidr {  // IHI 0070 6.3.8
inline constexpr Field kArchMajorRev{7, 4};
inline constexpr Field kArchMinorRev{3, 0};
}  // namespace aidr

namespace cr0 {  // IHI 0070 6.3.9; CR0ACK has the same layout (6.3.10)
inline constexpr Field kSmmuEn = field_bit(0);
inline constexpr Field kPriqEn = field_bit(1);
inline constexpr Field kEventqEn = field_bit(2);
inline constexpr Field kCmdqEn = field_bit(3);
inline constexpr Field kAtsChk = field_bit(4);
inline constexpr Field kVmw{8, 6};
inline constexpr Field kDptWalkEn = field_bit(10);
}  // namespace cr0

namespace cr1 {  // IHI 0070 6.3.11
inline constexpr Field kTableSh{11, 10};
inline constexpr Field kTableOc{9, 8};
inline constexpr Field kTableIc{7, 6};
inline constexpr Field kQueueSh{5, 4};
inline constexpr Field kQueueOc{3, 2};
inline constexpr Field kQueueIc{1, 0};
}  // namespace cr1

namespace cr2 {  // IHI 0070 6.3.12
inline constexpr Field kE2h = field_bit(0);
inline constexpr Field kRecInvSid = field_bit(1);
inline constexpr Field kPtm = field_bit(2);
inline constexpr Field kRecCfgAts = field_bit(3);
}  // namespace cr2

namespace statusr {  // IHI 0070 6.3.13
inline constexpr Field kDormant = field_bit(0);
}  // namespace statusr

namespace gbpa {  // IHI 0070 6.3.14
inline constexpr Field kUpdate = field_bit(31);
inline constexpr Field kAbort = field_bit(20);
inline constexpr Field kInstCfg{19, 18};
inline constexpr Field kPrivCfg{17, 16};
inline constexpr Field kShCfg{13, 12};
inline constexpr Field kAllocCfg{11, 8};
inline constexpr Field kMtCfg = field_bit(4);
inline constexpr Field kMemAttr{3, 0};
inline constexpr uint32_t kShCfgUseIncoming = 0b01;
}  // namespace gbpa

namespace irq_ctrl {  // IHI 0070 6.3.16; IRQ_CTRLACK has the same layout (6.3.18)
inline constexpr Field kGerrorIrqEn = field_bit(0);
inline constexpr Field kPriqIrqEn = field_bit(1);
inline constexpr Field kEventqIrqEn = field_bit(2);
}  // namespace irq_ctrl

namespace gerror {  // IHI 0070 6.3.19; GERRORN has the same layout (6.3.20)
inline constexpr Field kCmdqErr = field_bit(0);
inline constexpr Field kEventqAbtErr = field_bit(2);
inline constexpr Field kPriqAbtErr = field_bit(3);
inline constexpr Field kMsiCmdqAbtErr = field_bit(4);
inline constexpr Field kMsiEventqAbtErr = field_bit(5);
inline constexpr Field kMsiPriqAbtErr = field_bit(6);
inline constexpr Field kMsiGerrorAbtErr = field_bit(7);
inline constexpr Field kSfmErr = field_bit(8);
inline constexpr Field kCmdqpErr = field_bit(9);
inline constexpr Field kDptErr = field_bit(10);
}  // namespace gerror

// *_IRQ_CFG0/1/2 of GERROR, EVENTQ and PRIQ (IHI 0070 6.3.21-6.3.23,
// 6.3.30-6.3.32): present only when IDR0.MSI == 1.
namespace irq_cfg0 {
inline constexpr Field kAddr{55, 2};
}  // namespace irq_cfg0
namespace irq_cfg1 {
inline constexpr Field kData{31, 0};
}  // namespace irq_cfg1
namespace irq_cfg2 {
inline constexpr Field kSh{5, 4};
inline constexpr Field kMemAttr{3, 0};
inline constexpr Field kPriqLo = field_bit(31);  // PRIQ_IRQ_CFG2.LO: interrupt on Last entries only (6.3.33)
}  // namespace irq_cfg2

namespace strtab_base {  // IHI 0070 6.3.24
inline constexpr Field kRa = field_bit(62);
inline constexpr Field kAddr{55, 6};
}  // namespace strtab_base

namespace strtab_base_cfg {  // IHI 0070 6.3.25
inline constexpr Field kFmt{17, 16};
inline constexpr Field kSplit{10, 6};
inline constexpr Field kLog2Size{5, 0};
inline constexpr uint32_t kFmtLinear = 0b00;
inline constexpr uint32_t kFmtTwoLevel = 0b01;
}  // namespace strtab_base_cfg

// CMDQ_BASE, EVENTQ_BASE, PRIQ_BASE, ECMDQ_BASE (IHI 0070 6.3.26, 6.3.29,
// 6.3.107). Bit 62 is RA for command queues and WA for the event queue.
namespace queue_base {
inline constexpr Field kRa = field_bit(62);
inline constexpr Field kWa = field_bit(62);
inline constexpr Field kAddr{55, 5};
inline constexpr Field kLog2Size{4, 0};
}  // namespace queue_base

// CMDQ_PROD (6.3.27), EVENTQ_PROD (6.3.95), PRIQ_PROD: WR with its wrap bit
// at bit LOG2SIZE; OVFLG for the queues the SMMU produces into.
namespace queue_prod {
inline constexpr Field kWr{19, 0};
inline constexpr Field kOvflg = field_bit(31);
}  // namespace queue_prod

// CMDQ_CONS (6.3.28), EVENTQ_CONS (6.3.96), PRIQ_CONS.
namespace queue_cons {
inline constexpr Field kRd{19, 0};
inline constexpr Field kErr{30, 24};       // CMDQ_CONS only
inline constexpr Field kOvackflg = field_bit(31);  // EVENTQ_CONS, PRIQ_CONS
}  // namespace queue_cons

// CMDQ_CONS.ERR reason codes (IHI 0070 7.1).
namespace cerror {
inline constexpr uint32_t kNone = 0;
inline constexpr uint32_t kIll = 1;
inline constexpr uint32_t kAbt = 2;
inline constexpr uint32_t kAtcInvSync = 3;
}  // namespace cerror

namespace cmdq_control_page_base {  // IHI 0070 6.3.49
inline constexpr Field kAddr{55, 16};
inline constexpr Field kCmdqgs{2, 1};
inline constexpr Field kPreset = field_bit(0);
inline constexpr uint32_t kCmdqgs64K = 0b01;
}  // namespace cmdq_control_page_base
namespace cmdq_control_page_cfg {  // IHI 0070 6.3.50
inline constexpr Field kEn = field_bit(0);
}  // namespace cmdq_control_page_cfg
namespace cmdq_control_page_status {  // IHI 0070 6.3.51
inline constexpr Field kEnAck = field_bit(0);
}  // namespace cmdq_control_page_status

namespace ecmdq_prod {  // IHI 0070 6.3.108
inline constexpr Field kEn = field_bit(31);
inline constexpr Field kErrAck = field_bit(23);
inline constexpr Field kWr{19, 0};
}  // namespace ecmdq_prod
namespace ecmdq_cons {  // IHI 0070 6.3.109
inline constexpr Field kEnAck = field_bit(31);
inline constexpr Field kErrReason{26, 24};
inline constexpr Field kErr = field_bit(23);
inline constexpr Field kRd{19, 0};
}  // namespace ecmdq_cons

}  // namespace reg

// ---- Queue index arithmetic (IHI 0070 3.5, 6.3.27/6.3.28): for a queue of
// 2^log2size entries, the low log2size bits of PROD.WR / CONS.RD are the
// index and bit log2size is the wrap bit. Empty: index and wrap equal; full:
// index equal, wrap different. Flag bits above the wrap bit are not part of
// the index and are dropped.
class QueueIndex {
 public:
  constexpr QueueIndex(unsigned log2size, uint32_t value) : log2size_(log2size), raw_(value & span_mask(log2size)) {}

  // The bits that hold index and wrap.
  static constexpr uint32_t span_mask(unsigned log2size) { return (uint32_t{2} << log2size) - 1; }

  constexpr unsigned log2size() const { return log2size_; }
  constexpr uint32_t entries() const { return uint32_t{1} << log2size_; }
  constexpr uint32_t index() const { return raw_ & (entries() - 1); }
  constexpr bool wrap() const { return ((raw_ >> log2size_) & 1u) != 0; }
  // Index and wrap bit, as written to the register.
  constexpr uint32_t value() const { return raw_; }
  // Moved on by n entries (n <= entries), toggling the wrap bit on wrap-around.
  constexpr QueueIndex advanced(uint32_t n = 1) const { return QueueIndex(log2size_, raw_ + n); }

  constexpr bool operator==(const QueueIndex& o) const { return log2size_ == o.log2size_ && raw_ == o.raw_; }
  constexpr bool operator!=(const QueueIndex& o) const { return !(*this == o); }

 private:
  unsigned log2size_;
  uint32_t raw_;
};

// Both arguments must describe the same queue (same log2size).
constexpr bool queue_empty(QueueIndex prod, QueueIndex cons) { return prod.value() == cons.value(); }
constexpr bool queue_full(QueueIndex prod, QueueIndex cons) {
  return prod.index() == cons.index() && prod.wrap() != cons.wrap();
}
// Entries written by the producer and not yet consumed (0..entries).
constexpr uint32_t queue_used(QueueIndex prod, QueueIndex cons) {
  return (prod.value() - cons.value()) & QueueIndex::span_mask(prod.log2size());
}
constexpr uint32_t queue_free(QueueIndex prod, QueueIndex cons) { return prod.entries() - queue_used(prod, cons); }

}  // namespace smmu_vp::smmu
