// PCIe Address Translation Services between the SMMU and an endpoint with an
// Address Translation Cache (IHI 0070 3.9.1; PCIe Base 6.0 chapter 10).
//
// Upstream, an endpoint's ATS traffic rides the SMMU's `upstream` socket like
// any other transaction, marked with an AtsExtension beside its
// StreamIdExtension:
//  - a Translation Request (kTranslationRequest: a TLM_IGNORE_COMMAND of
//    length 0 at the untranslated address) is answered in the extension's
//    completion fields and never reaches memory;
//  - a Translated transaction (kTranslated: a read or write at an address the
//    endpoint translated) is passed on as it is, as CR0.ATSCHK and the STE
//    allow (3.9.1.3).
//  - a PRI Page Request (kPageRequest, a TLM_IGNORE_COMMAND of length 0 at
//    the page's address) asks software to make a page present; the SMMU puts
//    it in the PRI queue (chapter 8), or answers it itself (8.1, 8.2).
// Downstream, an ATC invalidation (CMD_ATC_INV) and a PRG Response
// (CMD_PRI_RESP, or the SMMU's automatic one) reach the endpoint through the
// AtsDevice it registered with Smmu::attach_ats_device.
#pragma once

#include <cstdint>
#include <optional>

#include <tlm>

#include "common/sim_time.h"

namespace smmu_vp::smmu {

class AtsExtension : public tlm::tlm_extension<AtsExtension> {
 public:
  enum class Kind : uint8_t { kTranslationRequest, kTranslated, kPageRequest };
  // Completion status of a Translation Request (PCIe 6.0 10.2.3).
  enum class Status : uint8_t {
    kSuccess,              // the fields below hold the translation (R = W = 0: none)
    kUnsupportedRequest,   // UR: ATS is not enabled for the stream
    kCompleterAbort,       // CA: a configuration error
  };

  AtsExtension() = default;
  explicit AtsExtension(Kind k) : kind(k) {}
  tlm::tlm_extension_base* clone() const override { return new AtsExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const AtsExtension&>(other); }

  Kind kind = Kind::kTranslationRequest;
  // Request (kTranslationRequest). Its privilege is the StreamIdExtension's.
  // (NW, no-write, matters only with hardware dirty-state updates, which
  // the model lacks: W is granted from the translation alone.)
  bool exec = false;           // Execute requested (meaningful with a PASID)
  // Page Request (kPageRequest): the access wanted, and its group.
  bool want_write = false;     // W; R is always asked for
  uint16_t prg_index = 0;      // [8:0]
  bool last = true;            // the last request of the group
  bool accepted = false;       // set by the SMMU: written to the PRI queue

  // Completion, set by the SMMU.
  Status status = Status::kUnsupportedRequest;
  uint64_t translated_addr = 0;  // output address of the translation's first byte
  uint64_t untranslated_addr = 0;  // input address of its first byte
  unsigned size_log2 = 0;        // the translation covers 2^size_log2 bytes, aligned
  bool read = false;             // R
  bool write = false;            // W
  bool execute = false;          // Exe
  bool priv = false;             // Priv, echoes the request's
};

// PRG Response codes (IHI 0070 8.3), as the endpoint receives them.
enum class PrgResponseCode : uint8_t { kSuccess = 0b0000, kInvalidRequest = 0b0001, kResponseFailure = 0b1111 };

// An endpoint with an ATC, as the SMMU sees it (IHI 0070 3.9.1.4, 4.5.1, 8).
class AtsDevice {
 public:
  struct PrgResponse {
    uint32_t sid = 0;
    bool ssv = false;
    uint32_t ssid = 0;
    uint16_t prg_index = 0;
    PrgResponseCode code = PrgResponseCode::kResponseFailure;
    bool automatic = false;  // sent by the SMMU itself (8.1, 8.2), not CMD_PRI_RESP
  };
  struct Invalidation {
    static constexpr unsigned kSizeAll = 52;  // Size that invalidates everything (IHI 0070 4.5.1)
    uint32_t sid = 0;
    bool ssv = false;
    uint32_t ssid = 0;
    bool global = false;  // with SSV: every substream's global translations
    uint64_t addr = 0;    // first byte, aligned to the span
    unsigned size = 0;    // the span is 4 KiB x 2^size; kSizeAll: everything
    bool all() const { return size >= kSizeAll; }
    uint64_t bytes() const { return all() ? ~uint64_t{0} : uint64_t{4096} << size; }
  };
  virtual ~AtsDevice() = default;
  // The invalidation request reaches the endpoint at `arrives`. Returns when
  // the endpoint sends its Invalidation Completion (after every translated
  // access that used a removed entry), or nothing when it never answers.
  virtual std::optional<Ps> atc_invalidate(const Invalidation& inv, Ps arrives) = 0;
  // A PRG Response reaches the endpoint at `arrives`. An endpoint without
  // PRI never sends Page Requests and gets none.
  virtual void prg_response(const PrgResponse& /*r*/, Ps /*arrives*/) {}
};

}  // namespace smmu_vp::smmu
