#include "smmu/register_file.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace smmu_vp::smmu {

using namespace reg;  // offsets and fields, in this file only

namespace {

constexpr uint32_t m32(const Field& f) { return f.mask32(); }

// Bits [hi:0] set; hi may be 63 or more.
constexpr uint64_t low_bits(unsigned count) { return count >= 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1; }

// Address bits of a base register's ADDR field that exist with this OAS
// (higher bits are RES0 and not stored, 6.3.24, 6.3.26).
uint64_t addr_mask(const Field& addr, unsigned oas_bits) { return addr.mask() & low_bits(oas_bits); }

// Effective queue base: ADDR aligned to MAX(queue bytes, 32) (6.3.26).
uint64_t queue_addr(uint64_t base_reg, unsigned log2size, unsigned entry_log2) {
  const unsigned align = std::max(5u, log2size + entry_log2);
  return base_reg & queue_base::kAddr.mask() & ~low_bits(align);
}

constexpr unsigned kCmdEntryLog2 = 4;    // 16-byte commands (4.1)
constexpr unsigned kEventEntryLog2 = 5;  // 32-byte event records (7.3)
constexpr unsigned kPriEntryLog2 = 4;    // 16-byte page requests (8)

}  // namespace

SmmuRegisterFile::SmmuRegisterFile(const SmmuFeatures& features) : f_(features) {
  const std::vector<std::string> errors = f_.validate();
  if (!errors.empty()) {
    std::string msg = "SMMU features '" + f_.name + "' are invalid:";
    for (const std::string& e : errors) msg += "\n  " + e;
    throw std::invalid_argument(msg);
  }
  space_ = f_.register_space_size();

  // CR0: VMW, ATSCHK, PRIQEN and DPT_WALK_EN are RES0 without VMW, ATS, PRI
  // and DPT; of those only ATS is modelled (6.3.9).
  cr0_mask_ = m32(cr0::kSmmuEn) | m32(cr0::kEventqEn) | m32(cr0::kCmdqEn) | (f_.ats ? m32(cr0::kAtsChk) : 0u) |
              (f_.pri ? m32(cr0::kPriqEn) : 0u);
  // CR2: E2H only with Hyp; PTM only with BTM, REC_CFG_ATS only with
  // IDR0.ATSRECERR (neither is modelled) (6.3.12).
  cr2_mask_ = m32(cr2::kRecInvSid) | (f_.hyp ? m32(cr2::kE2h) : 0u);
  // IRQ_CTRL: PRIQ_IRQEN only with PRI (6.3.16).
  irq_ctrl_mask_ = m32(irq_ctrl::kGerrorIrqEn) | m32(irq_ctrl::kEventqIrqEn) | (f_.pri ? m32(irq_ctrl::kPriqIrqEn) : 0u);
  // GERROR: MSI_* only with MSI, PRIQ_* only with PRI, CMDQP_ERR only with
  // ECMDQ, DPT_ERR only with DPT (6.3.19).
  gerror_mask_ = m32(gerror::kCmdqErr) | m32(gerror::kEventqAbtErr) | m32(gerror::kSfmErr);
  if (f_.msi)
    gerror_mask_ |= m32(gerror::kMsiCmdqAbtErr) | m32(gerror::kMsiEventqAbtErr) | m32(gerror::kMsiGerrorAbtErr);
  if (f_.ecmdq) gerror_mask_ |= m32(gerror::kCmdqpErr);
  if (f_.pri) gerror_mask_ |= m32(gerror::kPriqAbtErr) | (f_.msi ? m32(gerror::kMsiPriqAbtErr) : 0u);
  // STRTAB_BASE_CFG: FMT and SPLIT only with 2-level stream tables (6.3.25).
  strtab_cfg_mask_ = m32(strtab_base_cfg::kLog2Size);
  if (f_.two_level_strtab) strtab_cfg_mask_ |= m32(strtab_base_cfg::kFmt) | m32(strtab_base_cfg::kSplit);
  strtab_base_mask_ = strtab_base::kRa.mask() | addr_mask(strtab_base::kAddr, f_.oas_bits);
  queue_base_mask_ = queue_base::kRa.mask() | addr_mask(queue_base::kAddr, f_.oas_bits) | queue_base::kLog2Size.mask();
  irq_addr_mask_ = addr_mask(irq_cfg0::kAddr, f_.oas_bits);

  reset();
}

void SmmuRegisterFile::reset() {
  cr0_ = cr0ack_ = cr1_ = cr2_ = 0;
  // GBPA (6.3.14): Update resets to 0, the other fields are IMPLEMENTATION
  // DEFINED: SHCFG = use incoming, ABORT as configured.
  gbpa_ = static_cast<uint32_t>(gbpa::kShCfg.place(gbpa::kShCfgUseIncoming) |
                                gbpa::kAbort.place(f_.gbpa_abort_at_reset ? 1 : 0));
  gbpa_effective_ = gbpa_;
  irq_ctrl_ = irq_ctrlack_ = 0;
  gerror_ = gerrorn_ = 0;
  gerror_irq_cfg0_ = eventq_irq_cfg0_ = priq_irq_cfg0_ = 0;
  gerror_irq_cfg1_ = gerror_irq_cfg2_ = eventq_irq_cfg1_ = eventq_irq_cfg2_ = priq_irq_cfg1_ = priq_irq_cfg2_ = 0;
  strtab_base_ = 0;
  strtab_base_cfg_ = 0;
  cmdq_base_ = eventq_base_ = priq_base_ = 0;
  cmdq_prod_ = cmdq_cons_ = eventq_prod_ = eventq_cons_ = priq_prod_ = priq_cons_ = 0;
}

// ---- Decode

int SmmuRegisterFile::control_page_reg(uint64_t off, unsigned* n) const {
  if (!f_.ecmdq || off < kCmdqControlPageRegsBase) return -1;
  const uint64_t rel = off - kCmdqControlPageRegsBase;
  const uint64_t page = rel / kCmdqControlPageStride;
  if (page >= f_.ecmdq_pages()) return -1;
  const int sub = static_cast<int>(rel % kCmdqControlPageStride);
  if (sub != 0 && sub != 8 && sub != 0xC) return -1;
  *n = static_cast<unsigned>(page);
  return sub;
}

bool SmmuRegisterFile::is_reg64(uint64_t off) const {
  switch (off) {
    case kStrtabBase:
    case kCmdqBase:
    case kEventqBase:
      return true;
    case kPriqBase:
      return f_.pri;
    case kGerrorIrqCfg0:
    case kEventqIrqCfg0:
      return f_.msi;
    case kPriqIrqCfg0:
      return f_.msi && f_.pri;
    default: {
      unsigned n = 0;
      return control_page_reg(off, &n) == 0;
    }
  }
}

uint64_t SmmuRegisterFile::read64(uint64_t off) const {
  switch (off) {
    case kStrtabBase: return strtab_base_;
    case kCmdqBase: return cmdq_base_;
    case kEventqBase: return eventq_base_;
    case kGerrorIrqCfg0: return gerror_irq_cfg0_;
    case kEventqIrqCfg0: return eventq_irq_cfg0_;
    case kPriqBase: return f_.pri ? priq_base_ : 0;
    case kPriqIrqCfg0: return f_.pri ? priq_irq_cfg0_ : 0;
    default: break;
  }
  // CMDQ_CONTROL_PAGE_BASE<n> (6.3.49): the page's offset from page 0,
  // 64 KiB granule, implemented as registers (PRESET = 1 in SMMUv3.3).
  unsigned n = 0;
  if (control_page_reg(off, &n) == 0)
    return cmdq_control_page_base::kAddr.place(ecmdq_page_offset(n) >> cmdq_control_page_base::kAddr.lo) |
           cmdq_control_page_base::kCmdqgs.place(cmdq_control_page_base::kCmdqgs64K) |
           cmdq_control_page_base::kPreset.place(1);
  return 0;
}

uint32_t SmmuRegisterFile::read32(uint64_t off) const {
  if (is_reg64(off)) return static_cast<uint32_t>(read64(off));
  if (off >= 4 && (off & 7) == 4 && is_reg64(off - 4)) return static_cast<uint32_t>(read64(off - 4) >> 32);

  switch (off) {
    case kIdr0: return f_.idr0();
    case kIdr1: return f_.idr1();
    case kIdr2: return f_.idr2();
    case kIdr3: return f_.idr3();
    case kIdr4: return f_.idr4();
    case kIdr5: return f_.idr5();
    case kIidr: return f_.iidr;
    case kAidr: return f_.aidr();
    case kIdr6: return f_.idr6();  // RES0 without ECMDQ
    case kCr0: return cr0_;
    case kCr0Ack: return cr0ack_;
    case kCr1: return cr1_;
    case kCr2: return cr2_;
    case kStatusr: return 0;  // DORMANT is RES0 without DORMHINT
    case kGbpa: return gbpa_;
    case kIrqCtrl: return irq_ctrl_;
    case kIrqCtrlAck: return irq_ctrlack_;
    case kGerror: return gerror_;
    case kGerrorn: return gerrorn_;
    case kGerrorIrqCfg1: return f_.msi ? gerror_irq_cfg1_ : 0;
    case kGerrorIrqCfg2: return f_.msi ? gerror_irq_cfg2_ : 0;
    case kEventqIrqCfg1: return f_.msi ? eventq_irq_cfg1_ : 0;
    case kEventqIrqCfg2: return f_.msi ? eventq_irq_cfg2_ : 0;
    case kStrtabBaseCfg: return strtab_base_cfg_;
    case kCmdqProd: return cmdq_prod_;
    // RD bits above the wrap bit are RAZ (6.3.28).
    case kCmdqCons:
      return (cmdq_cons_ & m32(queue_cons::kErr)) | (cmdq_cons_ & QueueIndex::span_mask(cmdq_log2size()));
    case kEventqProdPage0Alias:
      if (!f_.page0_queue_aliases) return 0;
      [[fallthrough]];
    case kEventqProd:  // WR bits above the wrap bit are RAZ (6.3.95)
      return (eventq_prod_ & m32(queue_prod::kOvflg)) | (eventq_prod_ & QueueIndex::span_mask(eventq_log2size()));
    case kEventqConsPage0Alias:
      if (!f_.page0_queue_aliases) return 0;
      [[fallthrough]];
    case kEventqCons: return eventq_cons_;
    // PRIQ_* (6.3.33-6.3.36, 6.3.97, 6.3.98): RES0 without IDR0.PRI.
    case kPriqIrqCfg1: return f_.msi && f_.pri ? priq_irq_cfg1_ : 0;
    case kPriqIrqCfg2: return f_.pri ? (f_.msi ? priq_irq_cfg2_ : priq_irq_cfg2_ & m32(irq_cfg2::kPriqLo)) : 0;
    case kPriqProdPage0Alias:
      if (!f_.page0_queue_aliases) return 0;
      [[fallthrough]];
    case kPriqProd:
      if (!f_.pri) return 0;
      return (priq_prod_ & m32(queue_prod::kOvflg)) | (priq_prod_ & QueueIndex::span_mask(priq_log2size()));
    case kPriqConsPage0Alias:
      if (!f_.page0_queue_aliases) return 0;
      [[fallthrough]];
    case kPriqCons: return f_.pri ? priq_cons_ : 0;
    default: break;
  }
  unsigned n = 0;
  switch (control_page_reg(off, &n)) {
    case 8: return m32(cmdq_control_page_cfg::kEn);             // EN is RES1 (6.3.50)
    case 0xC: return m32(cmdq_control_page_status::kEnAck);     // ENACK is RES1 (6.3.51)
    default: break;
  }
  // RES0: undefined locations, registers of absent features (AGBPA, S2PII,
  // PRIQ_*), the Secure page offsets and, until ECMDQ is modelled, the
  // command queue control pages.
  return 0;
}

uint64_t SmmuRegisterFile::read(uint64_t offset, unsigned size, bool* ok) const {
  bool dummy = false;
  if (ok == nullptr) ok = &dummy;
  *ok = (size == 4 || size == 8) && offset % size == 0 && offset < space_ && space_ - offset >= size;
  if (!*ok) return 0;
  if (size == 4) return read32(offset);
  if (is_reg64(offset)) return read64(offset);
  return read32(offset) | (uint64_t{read32(offset + 4)} << 32);
}

// ---- Writes

void SmmuRegisterFile::apply(uint64_t& r, uint64_t value, uint64_t defined, uint64_t writable) {
  const uint64_t want = value & defined;
  if ((want ^ r) & defined & ~writable) ++ignored_writes_;
  r = (r & ~(defined & writable)) | (want & writable);
}

void SmmuRegisterFile::apply(uint32_t& r, uint32_t value, uint32_t defined, uint32_t writable) {
  uint64_t wide = r;
  apply(wide, value, defined, writable);
  r = static_cast<uint32_t>(wide);
}

void SmmuRegisterFile::write_ro(uint64_t current, uint64_t value) {
  if (current != value) ++ignored_writes_;
}

void SmmuRegisterFile::write(uint64_t offset, unsigned size, uint64_t value, bool* ok) {
  bool dummy = false;
  if (ok == nullptr) ok = &dummy;
  *ok = (size == 4 || size == 8) && offset % size == 0 && offset < space_ && space_ - offset >= size;
  if (!*ok) return;
  if (size == 8) {
    if (is_reg64(offset)) {
      write64(offset, value);
    } else {  // two 32-bit registers: low, then high (6.2)
      write32(offset, static_cast<uint32_t>(value));
      write32(offset + 4, static_cast<uint32_t>(value >> 32));
    }
    return;
  }
  const uint32_t v = static_cast<uint32_t>(value);
  if (is_reg64(offset)) {  // low half of a 64-bit register
    write64(offset, (read64(offset) & ~uint64_t{0xFFFFFFFF}) | v);
  } else if ((offset & 7) == 4 && is_reg64(offset - 4)) {  // high half
    write64(offset - 4, (read64(offset - 4) & uint64_t{0xFFFFFFFF}) | (uint64_t{v} << 32));
  } else {
    write32(offset, v);
  }
}

void SmmuRegisterFile::write64(uint64_t off, uint64_t v) {
  switch (off) {
    case kStrtabBase:  // Guarded by SMMUEN (6.3.24)
      apply(strtab_base_, v, strtab_base_mask_, smmuen_guard() ? 0 : ~uint64_t{0});
      return;
    case kCmdqBase:  // Guarded by CMDQEN (6.3.26)
      apply(cmdq_base_, v, queue_base_mask_, cmdqen_guard() ? 0 : ~uint64_t{0});
      return;
    case kEventqBase:  // Guarded by EVENTQEN (6.3.29)
      apply(eventq_base_, v, queue_base_mask_, evtqen_guard() ? 0 : ~uint64_t{0});
      return;
    case kGerrorIrqCfg0:  // Guarded by IRQ_CTRL.GERROR_IRQEN (6.3.21)
      apply(gerror_irq_cfg0_, v, irq_addr_mask_, irqen_guard(irq_ctrl::kGerrorIrqEn) ? 0 : ~uint64_t{0});
      return;
    case kEventqIrqCfg0:  // Guarded by IRQ_CTRL.EVENTQ_IRQEN (6.3.30)
      apply(eventq_irq_cfg0_, v, irq_addr_mask_, irqen_guard(irq_ctrl::kEventqIrqEn) ? 0 : ~uint64_t{0});
      return;
    case kPriqBase:  // Guarded by PRIQEN (6.3.97)
      if (!f_.pri) break;
      apply(priq_base_, v, queue_base_mask_, priqen_guard() ? 0 : ~uint64_t{0});
      return;
    case kPriqIrqCfg0:  // Guarded by IRQ_CTRL.PRIQ_IRQEN (6.3.33)
      if (!f_.pri || !f_.msi) break;
      apply(priq_irq_cfg0_, v, irq_addr_mask_, irqen_guard(irq_ctrl::kPriqIrqEn) ? 0 : ~uint64_t{0});
      return;
    default:  // CMDQ_CONTROL_PAGE_BASE<n>: read-only
      write_ro(read64(off), v);
      return;
  }
}

void SmmuRegisterFile::write32(uint64_t off, uint32_t v) {
  constexpr uint32_t kAll = ~0u;
  switch (off) {
    case kIdr0:
    case kIdr1:
    case kIdr2:
    case kIdr3:
    case kIdr4:
    case kIdr5:
    case kIidr:
    case kAidr:
    case kCr0Ack:
    case kStatusr:
    case kIrqCtrlAck:
    case kGerror:
      write_ro(read32(off), v);
      return;
    case kIdr6:
      if (f_.ecmdq) {
        write_ro(read32(off), v);
        return;
      }
      break;
    case kCr0: write_cr0(v); return;
    case kCr1: {  // 6.3.11: TABLE_* guarded by SMMUEN, QUEUE_* by every queue enable
      const uint32_t table = m32(cr1::kTableSh) | m32(cr1::kTableOc) | m32(cr1::kTableIc);
      const uint32_t queue = m32(cr1::kQueueSh) | m32(cr1::kQueueOc) | m32(cr1::kQueueIc);
      // With ECMDQ modelled, every ECMDQ_PROD<n>.EN/ENACK will guard QUEUE_* too;
      // the queues are registers only so far, so CMDQEN and EVTQEN guard them.
      const bool queues_on = cmdqen_guard() || evtqen_guard() || priqen_guard();
      apply(cr1_, v, table | queue, (smmuen_guard() ? 0u : table) | (queues_on ? 0u : queue));
      return;
    }
    case kCr2:  // read-only while SMMUEN (6.3.12)
      apply(cr2_, v, cr2_mask_, smmuen_guard() ? 0u : kAll);
      return;
    case kGbpa: write_gbpa(v); return;
    case kIrqCtrl: write_irq_ctrl(v); return;
    case kGerrorn: {
      const uint32_t old = gerrorn_;
      // Toggling an inactive error is CONSTRAINED UNPREDICTABLE (6.3.20); the
      // value is stored as written, as GERRORN reads back what was written.
      apply(gerrorn_, v, gerror_mask_, kAll);
      if (gerrorn_ != old && listener_ != nullptr) listener_->on_gerrorn(old, gerrorn_);
      return;
    }
    case kGerrorIrqCfg1:
      if (!f_.msi) break;
      apply(gerror_irq_cfg1_, v, kAll, irqen_guard(irq_ctrl::kGerrorIrqEn) ? 0u : kAll);
      return;
    case kGerrorIrqCfg2:
      if (!f_.msi) break;
      apply(gerror_irq_cfg2_, v, m32(irq_cfg2::kSh) | m32(irq_cfg2::kMemAttr),
            irqen_guard(irq_ctrl::kGerrorIrqEn) ? 0u : kAll);
      return;
    case kEventqIrqCfg1:
      if (!f_.msi) break;
      apply(eventq_irq_cfg1_, v, kAll, irqen_guard(irq_ctrl::kEventqIrqEn) ? 0u : kAll);
      return;
    case kEventqIrqCfg2:
      if (!f_.msi) break;
      apply(eventq_irq_cfg2_, v, m32(irq_cfg2::kSh) | m32(irq_cfg2::kMemAttr),
            irqen_guard(irq_ctrl::kEventqIrqEn) ? 0u : kAll);
      return;
    case kPriqIrqCfg1:
      if (!f_.pri || !f_.msi) break;
      apply(priq_irq_cfg1_, v, kAll, irqen_guard(irq_ctrl::kPriqIrqEn) ? 0u : kAll);
      return;
    case kPriqIrqCfg2:  // LO exists with PRI; SH and MemAttr with MSI too (6.3.35)
      if (!f_.pri) break;
      apply(priq_irq_cfg2_, v, m32(irq_cfg2::kPriqLo) | (f_.msi ? m32(irq_cfg2::kSh) | m32(irq_cfg2::kMemAttr) : 0u),
            irqen_guard(irq_ctrl::kPriqIrqEn) ? 0u : kAll);
      return;
    case kStrtabBaseCfg:  // Guarded by SMMUEN (6.3.25)
      apply(strtab_base_cfg_, v, strtab_cfg_mask_, smmuen_guard() ? 0u : kAll);
      return;
    case kCmdqProd:
      // WR bits above the wrap bit may be stored and have no effect (6.3.27).
      apply(cmdq_prod_, v, m32(queue_prod::kWr), kAll);
      if (listener_ != nullptr) listener_->on_cmdq_prod(cmdq_prod_);
      return;
    case kCmdqCons:
      // Guarded by CMDQEN (6.3.28). ERR belongs to the SMMU: a software write
      // to it is permitted to be ignored, and is (not counted).
      apply(cmdq_cons_, v, m32(queue_cons::kRd), cmdqen_guard() ? 0u : kAll);
      return;
    case kEventqProdPage0Alias:
      if (!f_.page0_queue_aliases) break;
      [[fallthrough]];
    case kEventqProd:  // Guarded by EVENTQEN (6.3.95)
      apply(eventq_prod_, v, m32(queue_prod::kWr) | m32(queue_prod::kOvflg), evtqen_guard() ? 0u : kAll);
      return;
    case kEventqConsPage0Alias:
      if (!f_.page0_queue_aliases) break;
      [[fallthrough]];
    case kEventqCons:  // always RW (6.3.96)
      apply(eventq_cons_, v, m32(queue_cons::kRd) | m32(queue_cons::kOvackflg), kAll);
      if (listener_ != nullptr) listener_->on_eventq_cons(eventq_cons_);
      return;
    case kPriqProdPage0Alias:
      if (!f_.page0_queue_aliases) break;
      [[fallthrough]];
    case kPriqProd:  // Guarded by PRIQEN (6.3.97)
      if (!f_.pri) break;
      apply(priq_prod_, v, m32(queue_prod::kWr) | m32(queue_prod::kOvflg), priqen_guard() ? 0u : kAll);
      return;
    case kPriqConsPage0Alias:
      if (!f_.page0_queue_aliases) break;
      [[fallthrough]];
    case kPriqCons:  // always RW (6.3.98)
      if (!f_.pri) break;
      apply(priq_cons_, v, m32(queue_cons::kRd) | m32(queue_cons::kOvackflg), kAll);
      return;
    default: {
      unsigned n = 0;
      const int sub = control_page_reg(off, &n);
      if (sub == 8 || sub == 0xC) {  // CMDQ_CONTROL_PAGE_CFG/STATUS<n>: read-only
        write_ro(read32(off), v);
        return;
      }
      break;
    }
  }
  ++res0_writes_;  // RES0 location: write ignored
}

void SmmuRegisterFile::write_cr0(uint32_t v) {
  const uint32_t old = cr0_;
  // A field whose Update is in progress keeps its value (6.3.9).
  apply(cr0_, v, cr0_mask_, cr0_mask_ & ~(cr0_ ^ cr0ack_));
  if (cr0_ == old) return;
  if (!policy_.defer_cr0) complete_cr0_update();
  if (listener_ != nullptr) listener_->on_cr0(old, cr0_);
}

void SmmuRegisterFile::complete_cr0_update(uint32_t fields) {
  fields &= cr0_mask_;
  cr0ack_ = (cr0ack_ & ~fields) | (cr0_ & fields);
}

void SmmuRegisterFile::write_irq_ctrl(uint32_t v) {
  const uint32_t old = irq_ctrl_;
  // Same Update rules as CR0 (6.3.16).
  apply(irq_ctrl_, v, irq_ctrl_mask_, irq_ctrl_mask_ & ~(irq_ctrl_ ^ irq_ctrlack_));
  if (irq_ctrl_ == old) return;
  if (!policy_.defer_irq_ctrl) complete_irq_ctrl_update();
  if (listener_ != nullptr) listener_->on_irq_ctrl(old, irq_ctrl_);
}

void SmmuRegisterFile::complete_irq_ctrl_update(uint32_t fields) {
  fields &= irq_ctrl_mask_;
  irq_ctrlack_ = (irq_ctrlack_ & ~fields) | (irq_ctrl_ & fields);
}

void SmmuRegisterFile::write_gbpa(uint32_t v) {
  const uint32_t update = m32(gbpa::kUpdate);
  const uint32_t fields = m32(gbpa::kAbort) | m32(gbpa::kInstCfg) | m32(gbpa::kPrivCfg) | m32(gbpa::kShCfg) |
                          m32(gbpa::kAllocCfg) | m32(gbpa::kMtCfg) | m32(gbpa::kMemAttr);
  // While an Update is in progress the register is read-only, and a write
  // without Update = 1 is ignored (6.3.14.1, the only behaviours from v3.2).
  // The override fields are stored even without IDR1.ATTR_*_OVR, which 6.3.14
  // permits (reading them as zero is the other choice).
  if ((gbpa_ & update) != 0 || (v & update) == 0) {
    write_ro(gbpa_ & fields, v & fields);
    return;
  }
  gbpa_ = (v & fields) | update;
  if (!policy_.defer_gbpa) complete_gbpa_update();
  if (listener_ != nullptr) listener_->on_gbpa_update(gbpa_ & fields);
}

void SmmuRegisterFile::complete_gbpa_update() {
  gbpa_ &= ~m32(gbpa::kUpdate);
  gbpa_effective_ = gbpa_;
}

// ---- SMMU side

uint32_t SmmuRegisterFile::raise_gerror(uint32_t bits) {
  // An error is only activated if it is inactive (6.3.19).
  const uint32_t newly = bits & gerror_mask_ & ~gerror_active();
  gerror_ ^= newly;
  return newly;
}

void SmmuRegisterFile::set_cmdq_cons(uint32_t index) {
  cmdq_cons_ = (cmdq_cons_ & m32(queue_cons::kErr)) | (index & QueueIndex::span_mask(cmdq_log2size()));
}

bool SmmuRegisterFile::set_cmdq_error(uint32_t code) {
  if (gerror::kCmdqErr.test(gerror_active())) return false;
  cmdq_cons_ = static_cast<uint32_t>(queue_cons::kErr.set(cmdq_cons_, code));
  return true;
}

void SmmuRegisterFile::set_eventq_prod(uint32_t index) {
  eventq_prod_ = (eventq_prod_ & m32(queue_prod::kOvflg)) | (index & QueueIndex::span_mask(eventq_log2size()));
}

bool SmmuRegisterFile::eventq_overflow_pending() const {
  return queue_prod::kOvflg.test(eventq_prod_) != queue_cons::kOvackflg.test(eventq_cons_);
}

void SmmuRegisterFile::set_priq_prod(uint32_t index) {
  priq_prod_ = (priq_prod_ & m32(queue_prod::kOvflg)) | (index & QueueIndex::span_mask(priq_log2size()));
}

bool SmmuRegisterFile::priq_overflow_pending() const {
  return queue_prod::kOvflg.test(priq_prod_) != queue_cons::kOvackflg.test(priq_cons_);
}

bool SmmuRegisterFile::signal_priq_overflow() {
  if (priq_overflow_pending()) return false;  // 8.1: toggles only when none is active
  priq_prod_ ^= m32(queue_prod::kOvflg);
  return true;
}

bool SmmuRegisterFile::signal_eventq_overflow() {
  // OVFLG toggles only when no overflow is pending (6.3.95, 7.4).
  if (eventq_overflow_pending()) return false;
  eventq_prod_ ^= m32(queue_prod::kOvflg);
  return true;
}

// ---- Typed accessors

IrqConfig SmmuRegisterFile::gerror_irq_cfg() const {
  IrqConfig c;
  if (!f_.msi) return c;
  c.addr = gerror_irq_cfg0_ & irq_addr_mask_;
  c.data = gerror_irq_cfg1_;
  c.sh = static_cast<uint32_t>(irq_cfg2::kSh.get(gerror_irq_cfg2_));
  c.memattr = static_cast<uint32_t>(irq_cfg2::kMemAttr.get(gerror_irq_cfg2_));
  return c;
}

IrqConfig SmmuRegisterFile::priq_irq_cfg() const {
  IrqConfig c;
  if (!f_.msi || !f_.pri) return c;
  c.addr = priq_irq_cfg0_ & irq_addr_mask_;
  c.data = priq_irq_cfg1_;
  c.sh = static_cast<uint32_t>(irq_cfg2::kSh.get(priq_irq_cfg2_));
  c.memattr = static_cast<uint32_t>(irq_cfg2::kMemAttr.get(priq_irq_cfg2_));
  return c;
}

IrqConfig SmmuRegisterFile::eventq_irq_cfg() const {
  IrqConfig c;
  if (!f_.msi) return c;
  c.addr = eventq_irq_cfg0_ & irq_addr_mask_;
  c.data = eventq_irq_cfg1_;
  c.sh = static_cast<uint32_t>(irq_cfg2::kSh.get(eventq_irq_cfg2_));
  c.memattr = static_cast<uint32_t>(irq_cfg2::kMemAttr.get(eventq_irq_cfg2_));
  return c;
}

StrtabFormat SmmuRegisterFile::strtab_fmt() const {
  return strtab_base_cfg::kFmt.get(strtab_base_cfg_) == strtab_base_cfg::kFmtTwoLevel ? StrtabFormat::kTwoLevel
                                                                                       : StrtabFormat::kLinear;
}

unsigned SmmuRegisterFile::strtab_split() const {
  const auto split = static_cast<unsigned>(strtab_base_cfg::kSplit.get(strtab_base_cfg_));
  return split == 8 || split == 10 ? split : 6;
}

unsigned SmmuRegisterFile::strtab_log2size() const {
  return std::min(static_cast<unsigned>(strtab_base_cfg::kLog2Size.get(strtab_base_cfg_)), f_.sidsize);
}

uint64_t SmmuRegisterFile::strtab_base() const {
  // 6.3.24: the alignment follows the literal LOG2SIZE, not the capped one.
  // Linear: ADDR[LOG2SIZE+5:0] = 0. 2-level: ADDR[MAX(5, LOG2SIZE-SPLIT-1+3):0] = 0.
  const int log2size = static_cast<int>(strtab_base_cfg::kLog2Size.get(strtab_base_cfg_));
  const int zero_bits = strtab_fmt() == StrtabFormat::kLinear
                            ? log2size + 6
                            : std::max(6, log2size - static_cast<int>(strtab_split()) + 3);
  return strtab_base_ & strtab_base::kAddr.mask() & ~low_bits(static_cast<unsigned>(zero_bits));
}

unsigned SmmuRegisterFile::cmdq_log2size() const {
  return std::min(static_cast<unsigned>(queue_base::kLog2Size.get(cmdq_base_)), f_.cmdqs);
}

unsigned SmmuRegisterFile::eventq_log2size() const {
  return std::min(static_cast<unsigned>(queue_base::kLog2Size.get(eventq_base_)), f_.eventqs);
}

uint64_t SmmuRegisterFile::cmdq_base_addr() const { return queue_addr(cmdq_base_, cmdq_log2size(), kCmdEntryLog2); }

unsigned SmmuRegisterFile::priq_log2size() const {
  return std::min(static_cast<unsigned>(queue_base::kLog2Size.get(priq_base_)), f_.priqs);
}

uint64_t SmmuRegisterFile::priq_base_addr() const { return queue_addr(priq_base_, priq_log2size(), kPriEntryLog2); }

uint64_t SmmuRegisterFile::eventq_base_addr() const {
  return queue_addr(eventq_base_, eventq_log2size(), kEventEntryLog2);
}

}  // namespace smmu_vp::smmu
