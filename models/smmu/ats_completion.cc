#include "smmu/ats_completion.h"

namespace smmu_vp::smmu {

namespace {

bool translation_related(EventId id) {
  return id == EventId::kTranslation || id == EventId::kAddrSize || id == EventId::kAccess ||
         id == EventId::kPermission;
}

uint64_t align_down(uint64_t addr, unsigned log2) {
  return log2 >= 64 ? 0 : addr & ~((uint64_t{1} << log2) - 1);
}

}  // namespace

AtsDevice::Invalidation atc_invalidation(const Command& cmd, const SmmuFeatures& f) {
  AtsDevice::Invalidation inv;
  inv.sid = cmd.sid;
  inv.ssv = cmd.ssv && f.ssidsize > 0;
  inv.ssid = inv.ssv ? cmd.ssid : 0;
  inv.global = inv.ssv && cmd.global;
  inv.size = cmd.size;
  inv.addr = inv.all() ? 0 : cmd.addr & ~(inv.bytes() - 1);
  return inv;
}

unsigned stu_log2(const SmmuFeatures& f) { return f.gran4k ? 12 : f.gran16k ? 14 : 16; }

bool ats_completion(const TranslationRequest& req, const TranslationResult& r, unsigned stu, unsigned oas_bits,
                    AtsExtension* ext) {
  AtsExtension& e = *ext;
  e.status = AtsExtension::Status::kUnsupportedRequest;
  e.translated_addr = e.untranslated_addr = 0;
  e.size_log2 = 0;
  e.read = e.write = e.execute = false;
  e.priv = req.access.privileged && req.ssv;  // 13.7.1: Priv = Exe = 0 without a PASID
  switch (r.kind) {
    case TranslationResult::Kind::kAbort:  // STE.Config = abort: UR, silently (5.2)
      return false;
    case TranslationResult::Kind::kFault:
      if (r.event.id == EventId::kBadAtsTreq) return true;
      if (translation_related(r.event.id)) {
        // No translation for this STU: the endpoint must not use it.
        e.status = AtsExtension::Status::kSuccess;
        e.size_log2 = stu;
        e.untranslated_addr = align_down(req.addr, stu);
        return false;
      }
      e.status = AtsExtension::Status::kCompleterAbort;
      return false;
    case TranslationResult::Kind::kBypass:
      // Stage 1 bypassed by S1DSS without stage 2 (13.6.4): the identity
      // mapping over the whole output address space, readable and writable.
      e.status = AtsExtension::Status::kSuccess;
      e.size_log2 = oas_bits;
      e.read = e.write = true;
      return false;  // Exe and Priv 0 (13.6.4)
    case TranslationResult::Kind::kTranslated: {
      // 13.7.1: R, W and Exe follow the translation's permissions at the
      // request's privilege (a request without a PASID is unprivileged).
      const TlbPermissions& p = r.perms;
      const bool priv = req.access.privileged;
      e.status = AtsExtension::Status::kSuccess;
      e.size_log2 = r.size_log2;
      e.untranslated_addr = align_down(req.addr, r.size_log2);
      e.translated_addr = align_down(r.pa, r.size_log2);
      e.read = priv ? p.read : p.user && p.read;
      e.write = priv ? p.write : p.user && p.write;
      e.execute = e.exec && req.ssv && (priv ? p.exec_priv : p.exec_unpriv);
      return false;
    }
  }
  return false;
}

}  // namespace smmu_vp::smmu
