// The SMMUv3 Non-secure register file (IHI 0070 chapter 6) without SystemC:
// register state, reset values, access rules, and the update handshakes
// (CR0/CR0ACK, IRQ_CTRL/IRQ_CTRLACK, GBPA.Update). The SystemC module maps
// read()/write() onto its register socket and drives the SMMU side through
// the methods below; the rest of the SMMU model reads its configuration
// through the typed accessors.
//
// Accesses (IHI 0070 6.2)
//   Aligned 32-bit accesses to any register and to either half of a 64-bit
//   register, and aligned 64-bit accesses, are legal. A 64-bit access to a
//   pair of 32-bit registers acts as two 32-bit accesses, low register first
//   (one of the behaviours 6.2 allows). Any other size or an unaligned access
//   is illegal and CONSTRAINED UNPREDICTABLE; this model chooses the abort:
//   *ok = false and nothing changes, and the module answers with an error
//   response. *ok = false also for offsets beyond register_space_size().
//   Undefined locations of page 0 are RES0 (6.2); for page 1 the model chooses
//   RES0 too (6.2 also allows aliasing page 0). Registers of features this
//   SMMU lacks are RES0 (PRIQ_* without PRI, *_IRQ_CFG* without MSI, IDR6 and
//   the control-page registers without ECMDQ). RES0 locations read as zero and
//   ignore writes, with *ok = true.
//
// Read-only and Guarded registers
//   Writes to read-only registers and fields are ignored. From SMMUv3.2 the
//   specification requires that a write to a Guarded register while its guard
//   is set (STRTAB_BASE/_CFG and CR2 while SMMUEN, CR1.TABLE_* while SMMUEN,
//   CR1.QUEUE_* while any queue is enabled, CMDQ_BASE/CONS while CMDQEN,
//   EVENTQ_BASE/PROD while EVENTQEN, *_IRQ_CFG* while their IRQEN) is ignored
//   (6.3.11, 6.3.12, 6.3.21, 6.3.24, 6.3.26, 6.3.29, 6.3.95); earlier versions
//   left it CONSTRAINED UNPREDICTABLE and this model ignores it for every
//   version. A guard is set while the enable is 1 in either the control
//   register or its ACK register, i.e. also while an Update is in progress.
//   ignored_writes() counts the writes that tried to change a bit and were
//   dropped for any of these reasons (a write of the value already there is
//   not counted). Writes to RES0 locations are counted in res0_writes().
//
// Update handshakes (6.3.9, 6.3.14, 6.3.16)
//   CR0, IRQ_CTRL and GBPA changes take effect when the SMMU completes their
//   Update: CR0ACK/IRQ_CTRLACK take the new value, GBPA.Update returns to 0.
//   By default the register file completes an Update inside write(), before
//   telling the listener. With AckPolicy::defer_* set, it leaves the Update in
//   progress and the SystemC module completes it later, after whatever delay
//   and side effects it models, with complete_cr0_update() etc.
//   While a CR0 or IRQ_CTRL field is in transition (register != ACK), writes
//   that change it again are ignored and the first Update completes (the only
//   behaviour allowed from SMMUv3.2, 6.3.9). A GBPA write while Update = 1,
//   or without Update = 1, is ignored (6.3.14.1).
//   The SMMU's own behaviour depends on the acknowledged values: smmuen(),
//   cmdqen(), ... read CR0ACK/IRQ_CTRLACK, gbpa_abort() the last completed
//   GBPA update.
//
// UNKNOWN reset values are 0 here; GBPA resets to SHCFG = use incoming and
// ABORT = SmmuFeatures::gbpa_abort_at_reset, other fields 0.
#pragma once

#include <cstdint>

#include "smmu/features.h"
#include "smmu/registers.h"

namespace smmu_vp::smmu {

// Notifications of software writes that need the SMMU to act. Called from
// write() after the register state has been updated, and after the Update has
// been completed when the AckPolicy does not defer it. A listener may call the
// SMMU-side methods of the register file (complete_*, set_*, raise_gerror)
// from these callbacks, but not write().
class SmmuRegisterListener {
 public:
  virtual ~SmmuRegisterListener() = default;
  // CR0 changed (only called when a field changed).
  virtual void on_cr0(uint32_t /*old_cr0*/, uint32_t /*new_cr0*/) {}
  // IRQ_CTRL changed (only called when a field changed).
  virtual void on_irq_ctrl(uint32_t /*old_irq_ctrl*/, uint32_t /*new_irq_ctrl*/) {}
  // A GBPA write with Update = 1 was accepted; `gbpa` holds the new fields
  // (Update bit clear).
  virtual void on_gbpa_update(uint32_t /*gbpa*/) {}
  // Every software write to CMDQ_PROD, changed or not: the SMMU considers the
  // command queue for processing (6.3.27).
  virtual void on_cmdq_prod(uint32_t /*cmdq_prod*/) {}
  // Every software write to EVENTQ_CONS (space freed, OVACKFLG).
  virtual void on_eventq_cons(uint32_t /*eventq_cons*/) {}
  // GERRORN changed: errors acknowledged (e.g. CMDQ_ERR, after which command
  // processing resumes, 6.3.28).
  virtual void on_gerrorn(uint32_t /*old_gerrorn*/, uint32_t /*new_gerrorn*/) {}
};

// MSI configuration of an interrupt source: *_IRQ_CFG0/1/2 (6.3.21-6.3.23).
struct IrqConfig {
  uint64_t addr = 0;     // MSI target PA, bits [1:0] zero; 0 = no MSI
  uint32_t data = 0;     // payload
  uint32_t sh = 0;       // Shareability (CFG2.SH)
  uint32_t memattr = 0;  // memory type (CFG2.MemAttr, encoded as STE.MemAttr)
};

enum class StrtabFormat : uint8_t { kLinear, kTwoLevel };

class SmmuRegisterFile {
 public:
  struct AckPolicy {
    bool defer_cr0 = false;
    bool defer_irq_ctrl = false;
    bool defer_gbpa = false;
  };

  // Throws std::invalid_argument when features.validate() reports problems.
  explicit SmmuRegisterFile(const SmmuFeatures& features);

  // Back to the reset state (counters are kept).
  void reset();

  const SmmuFeatures& features() const { return f_; }
  // Bytes of register space from page 0 (pages 0, 1 and the ECMDQ pages).
  uint64_t register_space_size() const { return space_; }

  // ---- Software accesses. size is 4 or 8; see the top of the file.
  uint64_t read(uint64_t offset, unsigned size, bool* ok) const;
  void write(uint64_t offset, unsigned size, uint64_t value, bool* ok);

  // ---- Listener and acknowledge policy. The listener is not owned.
  void set_listener(SmmuRegisterListener* listener) { listener_ = listener; }
  void set_ack_policy(const AckPolicy& policy) { policy_ = policy; }
  const AckPolicy& ack_policy() const { return policy_; }

  // ---- CR0 / CR0ACK (6.3.9, 6.3.10)
  uint32_t cr0() const { return cr0_; }
  uint32_t cr0ack() const { return cr0ack_; }
  // Fields whose Update is in progress (CR0 ^ CR0ACK).
  uint32_t cr0_pending() const { return cr0_ ^ cr0ack_; }
  // Complete the Update of the given fields (default: all): CR0ACK takes
  // their CR0 value.
  void complete_cr0_update(uint32_t fields = ~0u);
  // Acknowledged enables: what the SMMU acts on.
  bool smmuen() const { return reg::cr0::kSmmuEn.test(cr0ack_); }
  // CR0.ATSCHK (6.3.9.6): translated transactions are checked against the STE.
  bool atschk() const { return reg::cr0::kAtsChk.test(cr0ack_); }
  bool cmdqen() const { return reg::cr0::kCmdqEn.test(cr0ack_); }
  bool evtqen() const { return reg::cr0::kEventqEn.test(cr0ack_); }
  bool priqen() const { return reg::cr0::kPriqEn.test(cr0ack_); }

  // ---- CR1, CR2 (6.3.11, 6.3.12): decode with reg::cr1 / reg::cr2 fields.
  uint32_t cr1() const { return cr1_; }
  uint32_t cr2() const { return cr2_; }
  bool recinvsid() const { return reg::cr2::kRecInvSid.test(cr2_); }
  bool e2h() const { return reg::cr2::kE2h.test(cr2_); }

  // ---- GBPA (6.3.14)
  uint32_t gbpa() const { return gbpa_; }  // as software reads it, Update included
  bool gbpa_update_pending() const { return reg::gbpa::kUpdate.test(gbpa_); }
  void complete_gbpa_update();
  // Fields of the last completed update: what bypassing transactions get.
  uint32_t gbpa_effective() const { return gbpa_effective_; }
  bool gbpa_abort() const { return reg::gbpa::kAbort.test(gbpa_effective_); }

  // ---- IRQ_CTRL / IRQ_CTRLACK (6.3.16, 6.3.18)
  uint32_t irq_ctrl() const { return irq_ctrl_; }
  uint32_t irq_ctrlack() const { return irq_ctrlack_; }
  uint32_t irq_ctrl_pending() const { return irq_ctrl_ ^ irq_ctrlack_; }
  void complete_irq_ctrl_update(uint32_t fields = ~0u);
  bool gerror_irqen() const { return reg::irq_ctrl::kGerrorIrqEn.test(irq_ctrlack_); }
  bool eventq_irqen() const { return reg::irq_ctrl::kEventqIrqEn.test(irq_ctrlack_); }
  bool priq_irqen() const { return reg::irq_ctrl::kPriqIrqEn.test(irq_ctrlack_); }
  // PRIQ_IRQ_CFG2.LO: interrupt on Last entries only (RES0 without PRI).
  bool priq_irq_last_only() const { return reg::irq_cfg2::kPriqLo.test(priq_irq_cfg2_); }

  // ---- GERROR / GERRORN (6.3.19, 6.3.20, 7.5)
  uint32_t gerror() const { return gerror_; }
  uint32_t gerrorn() const { return gerrorn_; }
  // Errors active: GERROR ^ GERRORN.
  uint32_t gerror_active() const { return gerror_ ^ gerrorn_; }
  // The GERROR bits this SMMU implements.
  uint32_t gerror_implemented() const { return gerror_mask_; }
  // The SMMU reports errors: each given bit that is implemented and not
  // already active is toggled in GERROR; an active error is not toggled
  // again. Returns the bits that became active.
  uint32_t raise_gerror(uint32_t bits);

  // ---- Interrupt configuration (6.3.21-6.3.23, 6.3.30-6.3.32). All zero
  // without MSI.
  IrqConfig gerror_irq_cfg() const;
  IrqConfig eventq_irq_cfg() const;
  IrqConfig priq_irq_cfg() const;

  // ---- Stream table (6.3.24, 6.3.25)
  // Effective base PA: ADDR aligned as the SMMU aligns it for the format and
  // size (linear: to the table size; 2-level: to the level-1 table size, at
  // least 64 bytes).
  uint64_t strtab_base() const;
  bool strtab_ra() const { return reg::strtab_base::kRa.test(strtab_base_); }
  uint64_t strtab_base_raw() const { return strtab_base_; }
  uint32_t strtab_base_cfg_raw() const { return strtab_base_cfg_; }
  // Reserved FMT encodings behave as linear; FMT is RES0 without 2-level
  // support.
  StrtabFormat strtab_fmt() const;
  // SPLIT: 6, 8 or 10; reserved values behave as 6.
  unsigned strtab_split() const;
  // Effective LOG2SIZE: MIN(LOG2SIZE, IDR1.SIDSIZE) (6.3.25).
  unsigned strtab_log2size() const;

  // ---- Command queue (6.3.26-6.3.28)
  uint64_t cmdq_base_addr() const;  // aligned to MAX(queue bytes, 32)
  // Effective LOG2SIZE: the written value capped at IDR1.CMDQS (6.3.26).
  unsigned cmdq_log2size() const;
  bool cmdq_ra() const { return reg::queue_base::kRa.test(cmdq_base_); }
  QueueIndex cmdq_prod() const { return QueueIndex(cmdq_log2size(), cmdq_prod_); }
  QueueIndex cmdq_cons() const { return QueueIndex(cmdq_log2size(), cmdq_cons_); }
  uint32_t cmdq_error() const { return static_cast<uint32_t>(reg::queue_cons::kErr.get(cmdq_cons_)); }
  // The SMMU consumed commands: CMDQ_CONS.RD (with wrap) = index; ERR kept.
  void set_cmdq_cons(uint32_t index);
  // A command error (7.1): CMDQ_CONS.ERR = code (reg::cerror). The caller
  // then activates GERROR.CMDQ_ERR with raise_gerror(), so that whoever
  // activates it also signals the GERROR interrupt (7.5.1). Returns false,
  // changing nothing, if CMDQ_ERR is already active.
  bool set_cmdq_error(uint32_t code);

  // ---- Event queue (6.3.29, 6.3.95, 6.3.96, 7.4)
  uint64_t eventq_base_addr() const;  // aligned to MAX(queue bytes, 32)
  unsigned eventq_log2size() const;   // capped at IDR1.EVENTQS
  bool eventq_wa() const { return reg::queue_base::kWa.test(eventq_base_); }
  QueueIndex eventq_prod() const { return QueueIndex(eventq_log2size(), eventq_prod_); }
  QueueIndex eventq_cons() const { return QueueIndex(eventq_log2size(), eventq_cons_); }
  // The SMMU wrote records: EVENTQ_PROD.WR (with wrap) = index; OVFLG kept.
  void set_eventq_prod(uint32_t index);
  // A record was lost to a full queue: toggles EVENTQ_PROD.OVFLG unless an
  // overflow is already pending (OVFLG != EVENTQ_CONS.OVACKFLG). Returns true
  // if it toggled.
  bool signal_eventq_overflow();
  bool eventq_overflow_pending() const;
  // The PRI queue (chapter 8), as the event queue above: PRIQ_PROD.WR after
  // records were written; an overflow toggles OVFLG unless one is active (8.1).
  uint64_t priq_base_addr() const;
  unsigned priq_log2size() const;  // capped at IDR1.PRIQS
  QueueIndex priq_prod() const { return QueueIndex(priq_log2size(), priq_prod_); }
  QueueIndex priq_cons() const { return QueueIndex(priq_log2size(), priq_cons_); }
  void set_priq_prod(uint32_t index);
  bool signal_priq_overflow();
  bool priq_overflow_pending() const;

  // ---- Counters (see the top of the file)
  uint64_t ignored_writes() const { return ignored_writes_; }
  uint64_t res0_writes() const { return res0_writes_; }

 private:
  // Locations with a 64-bit register (at its 8-aligned offset).
  bool is_reg64(uint64_t offset) const;
  uint64_t read64(uint64_t offset) const;
  uint32_t read32(uint64_t offset) const;
  void write64(uint64_t offset, uint64_t value);
  void write32(uint64_t offset, uint32_t value);
  void write_cr0(uint32_t value);
  void write_irq_ctrl(uint32_t value);
  void write_gbpa(uint32_t value);
  // A read-only register: the write is dropped (counted if it differs).
  void write_ro(uint64_t current, uint64_t value);
  // reg = value in the `writable` bits of `defined`; counts a dropped change
  // of a defined bit that is not writable.
  void apply(uint64_t& reg, uint64_t value, uint64_t defined, uint64_t writable);
  void apply(uint32_t& reg, uint32_t value, uint32_t defined, uint32_t writable);
  // Control-page register n at `offset`, if it is one of this SMMU's:
  // 0 base, 8 cfg, 0xC status; -1 otherwise.
  int control_page_reg(uint64_t offset, unsigned* n) const;

  bool smmuen_guard() const { return reg::cr0::kSmmuEn.test(cr0_ | cr0ack_); }
  bool cmdqen_guard() const { return reg::cr0::kCmdqEn.test(cr0_ | cr0ack_); }
  bool evtqen_guard() const { return reg::cr0::kEventqEn.test(cr0_ | cr0ack_); }
  bool priqen_guard() const { return reg::cr0::kPriqEn.test(cr0_ | cr0ack_); }
  bool irqen_guard(const Field& f) const { return f.test(irq_ctrl_ | irq_ctrlack_); }

  SmmuFeatures f_;
  uint64_t space_;
  SmmuRegisterListener* listener_ = nullptr;
  AckPolicy policy_;

  // Implemented bits, from the features.
  uint32_t cr0_mask_;
  uint32_t cr2_mask_;
  uint32_t irq_ctrl_mask_;
  uint32_t gerror_mask_;
  uint32_t strtab_cfg_mask_;
  uint64_t strtab_base_mask_;
  uint64_t queue_base_mask_;
  uint64_t irq_addr_mask_;

  // State.
  uint32_t cr0_ = 0, cr0ack_ = 0, cr1_ = 0, cr2_ = 0;
  uint32_t gbpa_ = 0, gbpa_effective_ = 0;
  uint32_t irq_ctrl_ = 0, irq_ctrlack_ = 0;
  uint32_t gerror_ = 0, gerrorn_ = 0;
  uint64_t gerror_irq_cfg0_ = 0;
  uint32_t gerror_irq_cfg1_ = 0, gerror_irq_cfg2_ = 0;
  uint64_t eventq_irq_cfg0_ = 0;
  uint32_t eventq_irq_cfg1_ = 0, eventq_irq_cfg2_ = 0;
  uint64_t priq_irq_cfg0_ = 0;
  uint32_t priq_irq_cfg1_ = 0, priq_irq_cfg2_ = 0;
  uint64_t strtab_base_ = 0;
  uint32_t strtab_base_cfg_ = 0;
  uint64_t cmdq_base_ = 0;
  uint32_t cmdq_prod_ = 0, cmdq_cons_ = 0;
  uint64_t eventq_base_ = 0;
  uint32_t eventq_prod_ = 0, eventq_cons_ = 0;
  uint64_t priq_base_ = 0;
  uint32_t priq_prod_ = 0, priq_cons_ = 0;

  uint64_t ignored_writes_ = 0;
  uint64_t res0_writes_ = 0;
};

}  // namespace smmu_vp::smmu
