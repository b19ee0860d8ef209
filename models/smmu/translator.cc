#include "smmu/translator.h"

#include <algorithm>

#include "smmu/registers.h"

namespace smmu_vp::smmu {

SmmuCaps caps_of(const SmmuFeatures& f) {
  SmmuCaps c;
  c.s1 = f.stage1;
  c.s2 = f.stage2;
  c.cd2l = f.two_level_cd;
  c.asid16 = f.asid16;
  c.vmid16 = f.vmid16;
  c.hyp = f.hyp;
  // Fields the model always advertises (SmmuFeatures::idr0).
  c.stall_model = f.stall_model;
  c.httu = 0b00;
  c.ttendian = f.ttendian;
  c.term_model = f.term_abort_only;
  c.arch_minor = f.arch_minor;
  c.ssid_bits = f.ssidsize;
  c.oas_bits = f.oas_bits;
  c.gran4k = f.gran4k;
  c.gran16k = f.gran16k;
  c.gran64k = f.gran64k;
  c.had = f.had;
  c.ats = f.ats;
  return c;
}

namespace {

PageTableWalker::Stage1Config stage1_of(const DecodedSte& ste, const DecodedCd& cd) {
  PageTableWalker::Stage1Config c;
  c.ttb = cd.ttb0;
  c.t0sz = cd.t0sz;
  c.granule = cd.granule;
  c.oas_bits = cd.ips_bits;
  c.affd = cd.affd;
  c.had = cd.had0;
  c.asid = cd.asid;
  c.vmid = ste.s2_vmid;  // 0 when the STE's S2VMID is IGNORED (decode_ste)
  return c;
}

PageTableWalker::Stage2Config stage2_of(const DecodedSte& ste, unsigned oas_bits) {
  PageTableWalker::Stage2Config c;
  c.ttb = ste.s2_ttb;
  c.t0sz = ste.s2_t0sz;
  c.sl0 = ste.s2_sl0;
  c.granule = ste.s2_granule;
  c.ps_bits = ste.s2_ps_bits;
  c.pa_max_bits = oas_bits;
  c.affd = ste.s2_affd;
  c.ptw = ste.s2_ptw;
  c.vmid = ste.s2_vmid;
  return c;
}

TlbPermissions to_tlb(const Permissions& p) {
  TlbPermissions t;
  t.read = p.priv_read;
  t.write = p.priv_write;
  t.exec_priv = p.priv_exec;
  t.exec_unpriv = p.unpriv_exec;
  t.user = p.unpriv_read || p.unpriv_write;
  return t;
}

// The VMSAv8 access permissions are such that an unprivileged access is
// allowed exactly when the page is user-accessible and the privileged one is.
Permissions from_tlb(const TlbPermissions& t) {
  Permissions p;
  p.priv_read = t.read;
  p.priv_write = t.write;
  p.priv_exec = t.exec_priv;
  p.unpriv_read = t.user && t.read;
  p.unpriv_write = t.user && t.write;
  p.unpriv_exec = t.exec_unpriv;
  return p;
}

StageKind stage_kind(const DecodedSte& ste, bool stage1_bypass) {
  const bool s1 = ste.stage1() && !stage1_bypass;
  if (s1 && ste.stage2()) return StageKind::kNested;
  return s1 ? StageKind::kStage1 : StageKind::kStage2;
}

}  // namespace

Translator::Translator(MemoryPort& mem, const SmmuFeatures& features, const TranslatorConfig& cfg,
                       StatsRegistry& stats, const std::string& prefix)
    : features_(features),
      caps_(caps_of(features)),
      cfg_(cfg),
      fetcher_(mem, caps_),
      tlb_(cfg.tlb, &stats, prefix + ".tlb"),
      config_cache_(cfg.config_cache, &stats, prefix + ".config_cache"),
      walk_cache_(cfg.walk_cache, &stats, prefix + ".walk_cache"),
      walker_(mem, cfg.walk, &walk_cache_, &stats, prefix + ".ptw"),
      translation_slots_(prefix + ".translation_slots", cfg.translation_slots),
      walker_slots_(prefix + ".walker_slots", cfg.walker_slots),
      tlb_lookup_ps_(ns_to_ps(cfg.tlb_lookup_ns)),
      micro_tlb_lookup_ps_(ns_to_ps(cfg.micro_tlb_lookup_ns)),
      config_lookup_ps_(ns_to_ps(cfg.config_lookup_ns)),
      translations_(stats.counter(prefix + ".translations")),
      bypassed_(stats.counter(prefix + ".bypassed")),
      aborted_(stats.counter(prefix + ".aborted")),
      faults_(stats.counter(prefix + ".faults.total")),
      latency_(stats.histogram(prefix + ".translation_latency_ns", "ns", 1000.0)),
      stats_(stats),
      prefix_(prefix) {
  const DistributedConfig& d = cfg.distributed;
  for (const TbuSpec& spec : d.tbus)
    tbus_.push_back(std::make_unique<Tbu>(spec.name, d.tbu, cfg.tlb.seed, stats, prefix + ".tbu." + spec.name));
  dti_latency_ps_ = ns_to_ps(d.dti.latency_ns);
}

void Translator::broadcast_invalidation(bool cfgi) {
  for (auto& b : tbus_) {
    b->invalidations.add();
    if (cfgi) b->forget_contexts();
  }
}

void Translator::broadcast_sync() {
  for (auto& b : tbus_) b->syncs.add();
}

void Translator::set_window(Ps start, Ps end) {
  translation_slots_.set_window(start, end);
  walker_slots_.set_window(start, end);
  for (auto& b : tbus_) b->slots().set_window(start, end);
}

void Translator::finish(Ps end) {
  if (end == 0) return;
  auto utilisation = [&](const Resource& r, const std::string& path) {
    stats_.value(path) = static_cast<double>(r.busy_time()) / (static_cast<double>(end) * r.slots());
    if (r.has_window()) stats_.value(path + "_in_window") = r.window_utilisation();
  };
  utilisation(translation_slots_, prefix_ + (tbus_.empty() ? "" : ".tcu") + ".translation_slot_utilisation");
  utilisation(walker_slots_, prefix_ + ".walker_utilisation");
  for (auto& b : tbus_) b->finish(end);
}

void Translator::retire(Ps now) {
  translation_slots_.retire(now);
  walker_slots_.retire(now);
  for (auto& b : tbus_) b->slots().retire(now);
  done_by_arrival_.erase(std::remove_if(done_by_arrival_.begin(), done_by_arrival_.end(),
                                        [now](const ArrivalDone& a) { return a.done <= now; }),
                         done_by_arrival_.end());
}

void Translator::note_done(Ps arrival, Ps done) {
  auto& v = done_by_arrival_;
  if (v.empty() || v.back().arrival < arrival) {
    v.push_back({arrival, done});
    return;
  }
  if (v.back().arrival == arrival) {  // another translation arriving with the last one
    v.back().done = std::max(v.back().done, done);
    return;
  }
  auto it = std::lower_bound(v.begin(), v.end(), arrival,
                             [](const ArrivalDone& a, Ps t) { return a.arrival < t; });
  if (it != v.end() && it->arrival == arrival) it->done = std::max(it->done, done);
  else v.insert(it, {arrival, done});
}

void Translator::reset() {
  for_each_tlb([](Tlb& t) { t.invalidate_all(); });
  walk_cache_.invalidate_all();
  config_cache_.invalidate_all();
  constexpr Ps kEndOfTime = ~Ps{0};
  translation_slots_.retire(kEndOfTime);
  walker_slots_.retire(kEndOfTime);
  for (auto& b : tbus_) {
    b->slots().retire(kEndOfTime);
    b->forget_contexts();
  }
  done_by_arrival_.clear();
  last_seen_valid_.clear();
}

Ps Translator::drained_by(Ps t) const {
  Ps latest = 0;
  for (auto it = done_by_arrival_.begin(); it != done_by_arrival_.end() && it->arrival <= t; ++it)
    latest = std::max(latest, it->done);
  return latest;
}

Tlb* Translator::create_micro_tlbs(unsigned port) {
  while (micro_tlbs_.size() <= port) {
    TlbConfig c = cfg_.tlb;  // same invalidation behaviour as the main TLB
    c.entries = c.ways = cfg_.micro_tlb_entries;  // fully associative
    c.replacement = ReplacementPolicy::kLru;
    micro_tlbs_.push_back(std::make_unique<Tlb>(
        c, &stats_, prefix_ + ".micro_tlb.port" + std::to_string(micro_tlbs_.size())));
  }
  return micro_tlbs_[port].get();
}

Translator::SidTlbCounters& Translator::sid_tlb_slow(uint32_t sid) {
  auto it = sid_tlb_.find(sid);
  if (it == sid_tlb_.end()) {
    const std::string p = prefix_ + ".tlb.by_sid." + std::to_string(sid);
    it = sid_tlb_.emplace(sid, SidTlbCounters{&stats_.counter(p + ".lookups"), &stats_.counter(p + ".hits")}).first;
  }
  last_sid_ = sid;
  last_sid_tlb_ = &it->second;  // std::map nodes do not move
  return it->second;
}

void Translator::enable_stale_check(MemoryPort& untimed) {
  stale_walker_ = std::make_unique<PageTableWalker>(untimed);
  stale_checks_ = &stats_.counter(prefix_ + ".stale_check.checks");
  stale_hits_ = &stats_.counter(prefix_ + ".stale_check.stale_hits");
  stale_window_ = &stats_.histogram(prefix_ + ".stale_check.since_last_valid_ns", "ns", 1000.0);
}

void Translator::check_stale(const TlbHit& hit, const StreamConfig& sc, const TranslationRequest& req, Ps t) {
  stale_checks_->add();
  const PageTableWalker::Stage2Config s2 = stage2_of(*sc.ste, caps_.oas_bits);
  const WalkResult w = hit.entry.stage == StageKind::kStage2
                           ? stale_walker_->walk_stage2(s2, req.addr, req.access, 0)
                           : stale_walker_->walk_stage1(stage1_of(*sc.ste, *sc.cd), req.addr, req.access, 0,
                                                        hit.entry.stage == StageKind::kNested ? &s2 : nullptr);
  const EntryKey key = key_of(hit.entry);
  if (w.ok() && w.output_address == hit.pa) {
    last_seen_valid_[key] = t;
    return;
  }
  stale_hits_->add();
  auto it = last_seen_valid_.find(key);
  stale_window_->record(it == last_seen_valid_.end() ? 0 : t - it->second);
}

namespace {
// IHI 0070 5.5: R (CD.R for stage 1, STE.S2R for stage 2) applies to the four
// translation-related faults only; with S = 0 (no stalls here) R = 0
// suppresses their record. Other faults and configuration errors are always
// recorded.
bool translation_related(EventId id) {
  return id == EventId::kTranslation || id == EventId::kAccess || id == EventId::kAddrSize ||
         id == EventId::kPermission;
}
}  // namespace

void Translator::apply_fault_flags(TranslationResult* r, const DecodedSte& ste, const DecodedCd* cd, bool stage2) {
  if (!translation_related(r->event.id)) return;
  // 3.12.2: a stage configured to stall (CD.S without STE.S1STALLD, STE.S2S)
  // stalls its translation-related faults, and records them whatever R says.
  r->stall = stage2 ? ste.s2_stall : (cd != nullptr && cd->stall && !ste.s1_stall_disable);
  r->record = r->stall || (stage2 ? ste.s2_record : (cd == nullptr || cd->record));
}

TranslationResult Translator::fault_result(const TranslationRequest& req, EventId id, Ps t) const {
  TranslationResult r;
  r.kind = TranslationResult::Kind::kFault;
  r.event.id = id;
  r.event.sid = req.sid;
  r.event.ssv = req.ssv;
  r.event.ssid = req.ssid;
  r.event.rnw = !req.access.write;
  r.event.pnu = req.access.privileged;
  r.event.ind = req.access.instruction;
  r.event.input_addr = req.addr;
  r.done = t;
  return r;
}

const DecodedCd Translator::kNoCd{};

template <typename Words, typename Decoded>
const Decoded& Translator::DecodeMemo<Words, Decoded>::refresh(const Words& words, uint64_t cache_version,
                                                               const SmmuCaps& caps,
                                                               DecodeResult (*decode)(const Words&, const SmmuCaps&,
                                                                                      Decoded*)) {
  if (!valid || raw != words) {
    decoded = Decoded{};
    decode(words, caps, &decoded);
    raw = words;
    valid = true;
  }
  at = &words;
  version = cache_version;
  return decoded;
}

bool Translator::stream_ste(const StreamTableConfig& st, const TranslationRequest& req, Ps* t, StreamConfig* sc,
                            TranslationResult* fault) {
  // STE: config cache, else the stream table.
  *t += config_lookup_ps_;
  if (auto cached = config_cache_.lookup_ste(req.sid)) {
    sc->ste = &decode_cached_ste(*cached);  // only valid STEs are cached
  } else {
    SteWords raw;
    fetched_ste_ = DecodedSte{};
    sc->ste = &fetched_ste_;
    const FetchResult f = fetcher_.fetch_ste(st, req.sid, *t, &fetched_ste_, &raw);
    *t = std::max(*t, f.done);
    if (!f.ok()) {
      *fault = fault_result(req, f.error, *t);
      // IHI 0070 7.3: an F_STE_FETCH record carries the address it read.
      if (f.error == EventId::kSteFetch) fault->event.fetch_addr = f.fetch_addr;
      return false;
    }
    if (sc->ste->stage2() && PageTableWalker::check(stage2_of(*sc->ste, caps_.oas_bits)) != ConfigError::kNone) {
      *fault = fault_result(req, EventId::kBadSte, *t);
      return false;
    }
    config_cache_.insert_ste(req.sid, raw);
  }
  return true;
}

bool Translator::stream_config(const StreamTableConfig& st, const TranslationRequest& req, Ps* t, StreamConfig* sc,
                               TranslationResult* fault) {
  if (!stream_ste(st, req, t, sc, fault)) return false;
  // IHI 0070 3.9.1.2, 7.3.6: a Translation Request for a stream that
  // bypasses, or whose STE does not enable ATS, is UR with F_BAD_ATS_TREQ,
  // decided by the STE alone (before any CD is fetched).
  if (req.ats && sc->ste->config != ste::kAbort &&
      (sc->ste->config == ste::kBypass || sc->ste->eats != ste::kEatsFull)) {
    *fault = fault_result(req, EventId::kBadAtsTreq, *t);
    return false;
  }
  sc->stage1_bypass = !sc->ste->stage1();
  if (!sc->ste->stage1()) return true;

  // CD: config cache, else the CD table (its addresses are IPAs under nesting).
  const uint32_t ssid = req.ssv ? req.ssid : 0;
  *t += config_lookup_ps_;
  if (sc->ste->s1_cdmax != 0 && !req.ssv && sc->ste->s1dss == ste::kBypassDss) {
    sc->stage1_bypass = true;
    return true;
  }
  // A cached CD serves only a transaction that the CD table would have led to
  // it; anything else goes to fetch_cd, which reports the error.
  const bool substream0 = sc->ste->s1dss == ste::kSubstream0;
  const bool substream_legal = sc->ste->s1_cdmax == 0 ? !req.ssv
                               : req.ssv ? !(req.ssid == 0 && substream0)  // 5.2: SSID 0 is then CD 0's no more
                                         : substream0;
  if (auto cached = config_cache_.lookup_cd(req.sid, ssid); cached && substream_legal) {
    sc->cd = &decode_cached_cd(*cached);
    return true;
  }
  const PageTableWalker::Stage2Config s2 = stage2_of(*sc->ste, caps_.oas_bits);
  ConfigFetcher::Stage2Translate to_pa = [&](uint64_t ipa, uint64_t* pa, Ps* when, EventId* e) {
    const WalkResult w = walker_.walk_stage2(s2, ipa, AccessType{}, *when);
    *when = w.done;
    if (!w.ok()) {
      *e = static_cast<EventId>(w.fault);
      return false;
    }
    *pa = w.output_address;
    return true;
  };
  CdWords raw;
  bool bypass = false;
  fetched_cd_ = DecodedCd{};
  sc->cd = &fetched_cd_;
  const FetchResult f = fetcher_.fetch_cd(*sc->ste, req.ssv, req.ssid, *t, to_pa, &fetched_cd_, &bypass, &raw);
  *t = std::max(*t, f.done);
  if (!f.ok()) {
    *fault = fault_result(req, f.error, *t);
    if (f.error == EventId::kSteFetch || f.error == EventId::kCdFetch) fault->event.fetch_addr = f.fetch_addr;
    if (sc->ste->stage2() && (f.error == EventId::kTranslation || f.error == EventId::kAddrSize ||
                             f.error == EventId::kAccess || f.error == EventId::kPermission ||
                             f.error == EventId::kWalkEabt)) {
      fault->event.s2 = true;
      fault->event.cls = FaultClass::kCd;
      fault->event.ipa = f.fetch_addr;
      apply_fault_flags(fault, *sc->ste, nullptr, true);
    }
    return false;
  }
  sc->stage1_bypass = bypass;
  if (!bypass) {
    if (!sc->cd->epd0 && PageTableWalker::check(stage1_of(*sc->ste, *sc->cd)) != ConfigError::kNone) {
      *fault = fault_result(req, EventId::kBadCd, *t);
      return false;
    }
    config_cache_.insert_cd(req.sid, ssid, raw);
  }
  return true;
}

TranslationResult Translator::translate(const StreamTableConfig& st, const TranslationRequest& req) {
  translations_.add();
  if (!tbus_.empty()) return translate_via_tbu(st, req);
  TranslationResult r = serve(st, req, true, nullptr);
  account(req.at, r);
  return r;
}

// IHI 0070 3.9.1.2. The request is walked as a read: read is implied, and
// what else the endpoint may do is granted from the translation's
// permissions (ats_completion). With TBUs it goes to the TCU over DTI
// without a TBU lookup: a TBU keeps no ATS translations.
TranslationResult Translator::translate_ats(const StreamTableConfig& st, TranslationRequest req) {
  const Ps arrival = req.at;
  req.ats = true;
  req.access.write = false;
  req.access.instruction = false;
  const Ps dti = tbus_.empty() ? 0 : dti_latency_ps_;
  req.at += dti;
  TranslationResult r = serve(st, req, false, nullptr);
  // 13.7.1: W is granted on its own; a translation that refuses reads may
  // still allow writes (a stage-2 write-only page), so ask again for write.
  if (r.kind == TranslationResult::Kind::kFault && r.event.id == EventId::kPermission) {
    TranslationRequest w = req;
    w.access.write = true;
    w.at = r.done;
    const TranslationResult rw = serve(st, w, false, nullptr);
    if (rw.kind == TranslationResult::Kind::kTranslated) r = rw;
  }
  r.done += dti;
  note_done(arrival, r.done);  // a CMD_SYNC waits for it as for any translation
  return r;
}

// IHI 0070 3.9.1.3 with CR0.ATSCHK = 1: only the STE is looked at.
TranslationResult Translator::check_translated(const StreamTableConfig& st, const TranslationRequest& req) {
  Ps t = req.at;
  StreamConfig sc;
  TranslationResult r;
  if (!stream_ste(st, req, &t, &sc, &r)) {
    r.record = false;  // recorded only with CR2.REC_CFG_ATS, which the model lacks
    return r;
  }
  r.done = t;
  if (sc.ste->config == ste::kAbort) {
    r.kind = TranslationResult::Kind::kAbort;
  } else if (sc.ste->config == ste::kBypass || sc.ste->eats != ste::kEatsFull) {
    r = fault_result(req, EventId::kTranslForbidden, t);
  } else {
    r.kind = TranslationResult::Kind::kBypass;  // passed on as it is
    r.pa = req.addr;
    r.span = ~0ull;
  }
  note_done(req.at, r.done);
  return r;
}

void Translator::account(Ps arrival, const TranslationResult& r) {
  latency_.record(r.done - arrival);
  note_done(arrival, r.done);
  switch (r.kind) {
    case TranslationResult::Kind::kFault:
      faults_.add();
      stats_.counter(prefix_ + ".faults." + event_name(r.event.id)).add();
      break;
    case TranslationResult::Kind::kAbort: aborted_.add(); break;
    case TranslationResult::Kind::kBypass: bypassed_.add(); break;
    case TranslationResult::Kind::kTranslated: break;
  }
}

TranslationResult Translator::translate_via_tbu(const StreamTableConfig& st, const TranslationRequest& req) {
  Tbu& tbu = tbu_of(req.port);
  tbu.translations.add();
  // Every transaction holds one of the TBU's translation slots until it
  // leaves the TBU (MMU-600 TRM: "Each transaction occupies a translation
  // slot until it is propagated downstream"): a hit for its lookup, a miss
  // until the TCU's answer is back.
  const Ps slot_start = tbu.slots().earliest_start(req.at, 1);
  if (slot_start > req.at) {
    tbu.slot_waits.add();
    tbu.slot_wait_ns.record(slot_start - req.at);
  }
  Ps t = slot_start;
  TranslationResult r;
  bool hit = false;
  // A hit: the TBU answers from what it learned of the stream.
  if (const Tbu::Context* c = tbu.context(req.sid, req.ssv, req.ssid)) {
    if (c->bypass && !beyond_ias(req.addr)) {  // beyond it: the TCU reports the fault
      t += tbu.tlb_lookup_ps();
      r.kind = TranslationResult::Kind::kBypass;
      r.pa = req.addr;
      r.span = ~0ull;
      hit = true;
    } else if (!c->bypass) {
      std::optional<TlbHit> h;
      Tlb* micro = tbu.micro_tlb();
      if (micro) {
        t += tbu.micro_tlb_lookup_ps();
        h = micro->lookup(c->kind, c->vmid, c->asid, req.addr);
      }
      if (!h) {
        t += tbu.tlb_lookup_ps();
        h = tbu.tlb().lookup(c->kind, c->vmid, c->asid, req.addr);
        if (h && micro) micro->insert(h->entry);
      }
      SidTlbCounters& by_sid = sid_tlb(req.sid);
      by_sid.lookups->add();
      if (h) by_sid.hits->add();
      if (h && from_tlb(h->entry.perms).allows(req.access)) {
        r.kind = TranslationResult::Kind::kTranslated;
        r.pa = h->pa;
        r.span = h->entry.size() - (req.addr - h->entry.input_addr);
        r.tlb_hit = true;
        hit = true;
      }
      // Permission denied: the TCU walks again for the exact fault.
    }
  } else {
    sid_tlb(req.sid).lookups->add();  // nothing known of the stream: a miss
    t += tbu.tlb_lookup_ps();
  }

  if (hit) {
    tbu.hits.add();
    r.done = t;
    // Without hit-under-miss a hit leaves in order, after the misses before it.
    if (!tbu.params().hit_under_miss) r.done = std::max(r.done, tbu.misses_done());
  } else {
    tbu.misses.add();
    TranslationRequest at_tcu = req;
    at_tcu.at = t + dti_latency_ps_;
    Learned learned;
    r = serve(st, at_tcu, false, &learned);
    r.done += dti_latency_ps_;
    if (learned.valid) {
      tbu.learn(req.sid, req.ssv, req.ssid, learned.context);
      if (learned.has_entry) {
        tbu.tlb().insert(learned.entry);
        if (Tlb* micro = tbu.micro_tlb()) micro->insert(learned.entry);
      }
    }
  }
  const Resource::Grant g = tbu.slots().reserve(slot_start, r.done - slot_start);
  r.done += g.start - slot_start;
  if (!hit) tbu.miss_done(r.done);
  tbu.latency_ns.record(r.done - req.at);
  account(req.at, r);
  return r;
}

TranslationResult Translator::serve(const StreamTableConfig& st, const TranslationRequest& req, bool by_port,
                                    Learned* learned) {
  const Ps start = translation_slots_.earliest_start(req.at, 1);
  Ps t = start;
  TranslationResult r;

  // Completes r in place: every path returns r itself (no copies).
  auto finish = [&](TranslationResult& res) {
    // Occupy a translation slot for the whole translation.
    const Resource::Grant g = translation_slots_.reserve(start, res.done - start);
    res.done += g.start - start;
  };

  StreamConfig sc;
  if (!stream_config(st, req, &t, &sc, &r)) {
    finish(r);
    return r;
  }
  if (sc.ste->config == ste::kAbort) {
    r.kind = TranslationResult::Kind::kAbort;
    r.done = t;
    finish(r);
    return r;
  }
  // IHI 0070 3.4: with stage 1 not translating, an input address beyond the
  // IAS (here the OAS: no AArch32 tables) is a stage 1 Address Size fault,
  // whether the transaction then bypasses or goes to stage 2.
  if ((sc.ste->config == ste::kBypass || sc.stage1_bypass) && beyond_ias(req.addr)) {
    r = fault_result(req, EventId::kAddrSize, t);
    r.event.cls = FaultClass::kInput;
    finish(r);
    return r;
  }
  if (sc.ste->config == ste::kBypass || (sc.stage1_bypass && !sc.ste->stage2())) {
    r.kind = TranslationResult::Kind::kBypass;
    r.pa = req.addr;
    r.span = ~0ull;
    r.done = t;
    if (learned) {
      learned->valid = true;
      learned->context.bypass = true;
    }
    finish(r);
    return r;
  }
  if (!sc.stage1_bypass && sc.cd->epd0) {
    // TTB0 walks disabled and TTB1 is not modelled: nothing translates.
    r = fault_result(req, EventId::kTranslation, t);
    apply_fault_flags(&r, *sc.ste, sc.cd, false);
    finish(r);
    return r;
  }

  const StageKind kind = stage_kind(*sc.ste, sc.stage1_bypass);
  // IHI 0070 5.2 (S2VMID): stage-1-only translations are VMID-tagged too
  // when stage 2 is implemented; decode_ste leaves 0 when it is IGNORED.
  const uint16_t vmid = sc.ste->s2_vmid;
  const uint16_t asid = kind == StageKind::kStage2 ? 0 : sc.cd->asid;
  Tlb* micro = by_port ? micro_tlb(req.port) : nullptr;
  if (learned) {
    learned->valid = true;
    learned->context.kind = kind;
    learned->context.vmid = vmid;
    learned->context.asid = asid;
  }
  // The port's micro-TLB, then the main TLB (its result returned in place).
  auto lookup_tlbs = [&]() -> std::optional<TlbHit> {
    if (micro) {
      t += micro_tlb_lookup_ps_;
      if (std::optional<TlbHit> h = micro->lookup(kind, vmid, asid, req.addr)) return h;
    }
    t += tlb_lookup_ps_;
    std::optional<TlbHit> h = tlb_.lookup(kind, vmid, asid, req.addr);
    if (h && micro) micro->insert(h->entry);
    return h;
  };
  const std::optional<TlbHit> hit = lookup_tlbs();
  if (by_port) {
    SidTlbCounters& by_sid = sid_tlb(req.sid);
    by_sid.lookups->add();
    if (hit) by_sid.hits->add();
  }
  if (hit) {
    if (from_tlb(hit->entry.perms).allows(req.access)) {
      if (stale_walker_) check_stale(*hit, sc, req, t);
      r.kind = TranslationResult::Kind::kTranslated;
      r.pa = hit->pa;
      r.span = hit->entry.size() - (req.addr - hit->entry.input_addr);
      r.perms = hit->entry.perms;
      r.size_log2 = hit->entry.size_log2;
      r.tlb_hit = true;
      r.done = t;
      if (learned) {
        learned->has_entry = true;
        learned->entry = hit->entry;
      }
      finish(r);
      return r;
    }
    // Permission denied: walk again for the exact fault (stage, level).
  }

  const PageTableWalker::Stage2Config s2 = stage2_of(*sc.ste, caps_.oas_bits);
  const Ps walk_start = walker_slots_.earliest_start(t, 1);
  const WalkResult w = kind == StageKind::kStage2
                           ? walker_.walk_stage2(s2, req.addr, req.access, walk_start)
                           : walker_.walk_stage1(stage1_of(*sc.ste, *sc.cd), req.addr, req.access, walk_start,
                                                 kind == StageKind::kNested ? &s2 : nullptr);
  const Resource::Grant wg = walker_slots_.reserve(walk_start, w.done - walk_start);
  t = w.done + (wg.start - walk_start);

  if (!w.ok()) {
    const EventId id = w.config_error != ConfigError::kNone ? (w.fault_stage == 2 ? EventId::kBadSte : EventId::kBadCd)
                                                            : static_cast<EventId>(w.fault);
    r = fault_result(req, id, t);
    r.event.s2 = w.fault_stage == 2;
    // A stage-1 walk abort was a table read (CLASS = TT); other stage-1
    // faults are on the input address.
    r.event.cls = w.fault_stage == 2 ? w.fault_class
                  : id == EventId::kWalkEabt ? FaultClass::kTranslationTable : FaultClass::kInput;
    if (w.ipa_valid) r.event.ipa = w.ipa;
    if (id == EventId::kWalkEabt) r.event.fetch_addr = w.fetch_address;
    apply_fault_flags(&r, *sc.ste, sc.cd, r.event.s2);
    finish(r);
    return r;
  }

  TlbEntry e;
  e.stage = kind;
  e.vmid = vmid;
  e.asid = asid;
  e.global = kind == StageKind::kStage2 ? false : w.global;
  e.granule = kind == StageKind::kStage2 ? sc.ste->s2_granule : sc.cd->granule;
  e.level = static_cast<uint8_t>(w.level);
  e.size_log2 = static_cast<uint8_t>(w.block_shift);
  const uint64_t mask = w.block_size() - 1;
  e.input_addr = req.addr & ~mask;
  e.output_addr = w.output_address & ~mask;
  e.ipa = kind == StageKind::kStage2 ? e.input_addr : (w.ipa & ~mask);
  e.perms = to_tlb(w.perms);
  e.attrs.mem_attr = w.attr_indx;
  e.attrs.sh = w.sh;
  const std::optional<TlbEntry> evicted = tlb_.insert(e);
  if (micro) micro->insert(e);
  if (learned) {
    learned->has_entry = true;
    learned->entry = e;
  }
  if (stale_walker_) {
    if (evicted) last_seen_valid_.erase(key_of(*evicted));
    last_seen_valid_[key_of(e)] = t;
  }

  r.kind = TranslationResult::Kind::kTranslated;
  r.pa = w.output_address;
  r.span = w.block_size() - (req.addr & mask);
  r.perms = e.perms;
  r.size_log2 = e.size_log2;
  r.done = t;
  finish(r);
  return r;
}

}  // namespace smmu_vp::smmu
