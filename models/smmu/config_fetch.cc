#include "smmu/config_fetch.h"

namespace smmu_vp::smmu {

namespace {
// A fetch that stopped with `id` at `done`; an abort carries the address it
// read, for the F_*_FETCH record (IHI 0070 7.3).
FetchResult fetch_failed(Ps done, EventId id, std::string why, uint64_t fetch_addr = 0) {
  FetchResult r;
  r.error = id;
  r.why = std::move(why);
  r.done = done;
  r.fetch_addr = fetch_addr;
  return r;
}
}  // namespace

bool ConfigFetcher::read64(uint64_t pa, uint64_t* v, Ps* t) { return mem_.read(pa, v, 8, *t, t); }

bool ConfigFetcher::read_block(uint64_t pa, uint64_t* words, unsigned n, Ps* t) {
  return mem_.read(pa, words, n * 8, *t, t);
}

FetchResult ConfigFetcher::fetch_ste(const StreamTableConfig& st, uint32_t sid, Ps at, DecodedSte* ste,
                                     SteWords* raw) {
  FetchResult r;
  Ps t = at;
  if (st.log2size < 32 && (static_cast<uint64_t>(sid) >> st.log2size) != 0)
    return fetch_failed(t, EventId::kBadStreamId,
                        "StreamID " + std::to_string(sid) + " beyond STRTAB_BASE_CFG.LOG2SIZE");
  uint64_t ste_addr;
  if (!st.two_level) {
    ste_addr = st.base + static_cast<uint64_t>(sid) * ste::kBytes;
  } else {
    // IHI 0070 3.3.2: the upper SID bits index the level-1 table.
    const uint64_t l1_addr = st.base + (static_cast<uint64_t>(sid) >> st.split) * 8;
    uint64_t l1;
    if (!read64(l1_addr, &l1, &t))
      return fetch_failed(t, EventId::kSteFetch, "abort reading the level-1 stream table", l1_addr);
    const L1Std d = decode_l1_std(l1);
    if (d.span == 0)
      return fetch_failed(t, EventId::kBadStreamId, "level-1 stream table descriptor is invalid (SPAN 0)");
    if (d.span > st.split + 1) return fetch_failed(t, EventId::kBadStreamId, "level-1 SPAN larger than SPLIT + 1");
    const uint64_t l2_index = sid & ((1ull << st.split) - 1);
    if (l2_index >= (1ull << (d.span - 1)))
      return fetch_failed(t, EventId::kBadStreamId, "StreamID beyond the span of its level-2 table");
    ste_addr = d.l2ptr + l2_index * ste::kBytes;
  }
  SteWords w{};
  if (!read_block(ste_addr, w.data(), 8, &t))
    return fetch_failed(t, EventId::kSteFetch, "abort reading the STE", ste_addr);
  if (raw) *raw = w;
  const DecodeResult d = decode_ste(w, caps_, ste);
  if (!d.ok()) return fetch_failed(t, d.error, d.why);
  r.done = t;
  return r;
}

FetchResult ConfigFetcher::fetch_cd(const DecodedSte& ste, bool ssv, uint32_t ssid, Ps at,
                                    const Stage2Translate& s2, DecodedCd* cd, bool* stage1_bypass,
                                    CdWords* raw) {
  FetchResult r;
  Ps t = at;
  *stage1_bypass = false;
  // Configuration pointers are IPAs when stage 2 applies.
  auto to_pa = [&](uint64_t addr, uint64_t* pa) -> bool {
    if (!ste.stage2() || !s2) {
      *pa = addr;
      return true;
    }
    EventId e = EventId::kNone;
    if (s2(addr, pa, &t, &e)) return true;
    r.error = e;
    return false;
  };

  // IHI 0070 5.2 (S1CDMax, S1DSS): which substream the transaction uses.
  if (ste.s1_cdmax == 0) {
    if (ssv)
      return fetch_failed(t, EventId::kBadSubstreamId, "SubstreamID given but the STE has a single CD (S1CDMax 0)");
    ssid = 0;
  } else if (!ssv) {
    if (ste.s1dss == ste::kTerminate)
      return fetch_failed(t, EventId::kStreamDisabled, "no SubstreamID and S1DSS terminates");
    if (ste.s1dss == ste::kBypassDss) {
      *stage1_bypass = true;
      r.done = t;
      return r;
    }
    ssid = 0;
  } else if ((static_cast<uint64_t>(ssid) >> ste.s1_cdmax) != 0) {
    return fetch_failed(t, EventId::kBadSubstreamId, "SubstreamID " + std::to_string(ssid) + " beyond S1CDMax");
  } else if (ssid == 0 && ste.s1dss == ste::kSubstream0) {
    // IHI 0070 5.2 (S1DSS 0b10): CD 0 serves the transactions without a
    // substream; one that selects Substream 0 is terminated.
    return fetch_failed(t, EventId::kStreamDisabled, "SubstreamID 0 while S1DSS gives CD 0 to transactions without one");
  }

  uint64_t cd_ipa;
  if (ste.s1fmt == ste::kLinear) {
    cd_ipa = ste.s1_context_ptr + static_cast<uint64_t>(ssid) * 64;
  } else {
    // IHI 0070 5.4.2: a level-2 CD table holds 64 CDs (4 KiB) or 1024 (64 KiB).
    const unsigned l2_bits = ste.s1fmt == ste::k2Level4K ? 6 : 10;
    const uint64_t l1_ipa = ste.s1_context_ptr + (static_cast<uint64_t>(ssid) >> l2_bits) * 8;
    uint64_t l1_pa;
    if (!to_pa(l1_ipa, &l1_pa))
      return fetch_failed(t, r.error, "stage-2 fault on the level-1 CD table address", l1_ipa);
    uint64_t l1;
    if (!read64(l1_pa, &l1, &t))
      return fetch_failed(t, EventId::kCdFetch, "abort reading the level-1 CD table", l1_pa);
    const L1Cd d = decode_l1_cd(l1);
    if (!d.valid) return fetch_failed(t, EventId::kBadSubstreamId, "level-1 CD descriptor is invalid");
    cd_ipa = d.l2ptr + (ssid & ((1u << l2_bits) - 1)) * 64ull;
  }
  uint64_t cd_pa;
  if (!to_pa(cd_ipa, &cd_pa)) return fetch_failed(t, r.error, "stage-2 fault on the CD address", cd_ipa);
  CdWords w{};
  if (!read_block(cd_pa, w.data(), 8, &t)) return fetch_failed(t, EventId::kCdFetch, "abort reading the CD", cd_pa);
  if (raw) *raw = w;
  const DecodeResult d = decode_cd(w, caps_, cd, ste.s1_stall_disable);
  if (!d.ok()) return fetch_failed(t, d.error, d.why);
  r.done = t;
  return r;
}

}  // namespace smmu_vp::smmu
