// The SMMU's answer to a PCIe Translation Request (IHI 0070 3.9.1.2), from
// what the translator found for it (Translator::translate_ats).
#pragma once

#include "smmu/ats.h"
#include "smmu/commands.h"
#include "smmu/translator.h"

namespace smmu_vp::smmu {

// Fills the completion fields of `ext` for request `req` (its address and
// privilege) and returns whether the SMMU records r.event: only
// F_BAD_ATS_TREQ is recorded. Translation-related faults are a Success with
// R = W = 0 over one STU (2^stu_log2 bytes); configuration errors are a
// Completer Abort (recorded only with CR2.REC_CFG_ATS, which the model
// lacks); STE.Config = abort is UR without a record.
bool ats_completion(const TranslationRequest& req, const TranslationResult& r, unsigned stu_log2,
                    unsigned oas_bits, AtsExtension* ext);

// The Invalidation Request a CMD_ATC_INV sends (IHI 0070 4.5.1): the span
// aligned (address bits below it taken as 0), Global only with SSV, and SSV
// without SubstreamIDs (IDR1.SSIDSIZE 0) as 0, one of the choices allowed.
AtsDevice::Invalidation atc_invalidation(const Command& cmd, const SmmuFeatures& f);

// The Smallest Translation Unit: the smallest granule the SMMU supports
// (IHI 0070 3.9.1), as log2 of bytes.
unsigned stu_log2(const SmmuFeatures& f);

}  // namespace smmu_vp::smmu
