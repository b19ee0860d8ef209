#include "config/platform_params.h"

namespace smmu_vp::config {

const ParamTable<CpuConfig>& cpu_params() {
  static const ParamTable<CpuConfig> t = [] {
    ParamTable<CpuConfig> p;
    using C = CpuConfig;
    p.add("count", &C::count, 1, 256, "cores", "Number of CPU cores.");
    p.add("frequency_mhz", &C::frequency_mhz, 1, 10000, "MHz", "Core clock; hal_cycles() and the cost table count cycles of it.");
    p.add("quantum_ns", &C::quantum_ns, 1, 1e6, "ns", "Temporal-decoupling quantum: how far a core may run ahead of the others before it synchronises.");
    p.add("shared_load_cycles", &C::shared_load_cycles, 0, 1e6, "cycles", "hal_load*() of a cache line this core holds.");
    p.add("atomic_cycles", &C::atomic_cycles, 0, 1e6, "cycles", "Atomic read-modify-write or hal_store*() on a line this core owns.");
    p.add("cacheline_transfer_ns", &C::cacheline_transfer_ns, 0, 1e6, "ns", "Extra cost when the line of an atomic or shared load is held by another core of the same cluster (by every other core, with the default topology).");
    p.add("cluster_cores", &C::cluster_cores, 1, 256, "cores", "Cores per cluster (sharing an L2 or an L3 tag): cores 0..N-1 form the first. With die_cores, sets which of the three transfer costs a moving line pays.");
    p.add("die_cores", &C::die_cores, 1, 256, "cores", "Cores per die (a NUMA node of a multi-die package), a multiple of cluster_cores.");
    p.add("cacheline_transfer_die_ns", &C::cacheline_transfer_die_ns, 0, 1e6, "ns", "Extra cost when the line is held by a core of another cluster of the same die.");
    p.add("cacheline_transfer_remote_ns", &C::cacheline_transfer_remote_ns, 0, 1e6, "ns", "Extra cost when the line is held by a core of another die. A write waits for the farthest copy; a load takes the nearest.");
    p.add("line_queueing", &C::line_queueing, "true: a cache line serves one transfer at a time, so a core that needs a line while another core's transfer of it is under way waits for it (the atomics of a contended line serialise at the rate of its transfers, as a directory or home node serialises them); false (default): transfers of one line overlap.");
    p.add("queued_handoff_share", &C::queued_handoff_share, 0.01, 1, "share", "With line_queueing: the share of the transfer cost that a core already queued for a line pays when the previous holder hands it on (its request already waits at the home node, so only the data's hop is left, as with a directory forwarding a line from cache to cache); 1 (default): the whole transfer, as for a line nobody was waiting for.");
    p.add("line_retry_ns", &C::line_retry_ns, 0, 1e6, "ns", "With line_queueing, how a busy line is granted. 0 (default): first come, first served, each request queued behind the transfers under way. Above 0: the home node keeps a request for a busy line only while no other waits for it (the one being served aside) and answers the rest with a retry; a retried core tries again once the line frees, after a random delay below this, so the retried cores get it in no fixed order, and a core that holds the line has no head start for a write while others wait. Each access then happens when its core gets the line, and queued_handoff_share does not apply. A contended cmpxchg loop then fails about as the square root of its CPU count, not as the count.");
    p.add("line_retry_grant_ns", &C::line_retry_grant_ns, 0, 1e6, "ns", "With line_retry_ns above 0: what the grant to a core that had to retry for a line adds to its transfer, the line busy for it too (the home node's answer to the retried request, a credit and the request again, before the line moves). 0 (default): a retried grant costs what a transfer to an idle line does.");
    p.add("far_atomics", &C::far_atomics, "true: an atomic read-modify-write (hal_cmpxchg*, hal_fetch_*, hal_xchg*) is performed at the line's home node, the shared cache, taken to sit with the first die, as LSE atomics are on Kunpeng 920 (Huawei's tuning guide): the core pays a transfer from there whatever it held (cacheline_transfer_die_ns from the first die, _remote_ns from another, cacheline_transfer_ns with one cluster), the line queueing there with line_queueing, and no core holds the line afterwards; loads and stores still bring it into the core's cache. Needs platform.cpu.count < 256. false (default): an atomic takes the line into the core's cache, as a load-exclusive/store-exclusive pair does.");
    p.add("dmb_cycles", &C::dmb_cycles, 0, 1e6, "cycles", "HAL_BARRIER_DMB.");
    p.add("dsb_cycles", &C::dsb_cycles, 0, 1e6, "cycles", "HAL_BARRIER_DSB.");
    p.add("isb_cycles", &C::isb_cycles, 0, 1e6, "cycles", "HAL_BARRIER_ISB.");
    p.add("cpu_relax_cycles", &C::cpu_relax_cycles, 0, 1e6, "cycles", "hal_cpu_relax() in spin loops.");
    p.add("event_stream_ns", &C::event_stream_ns, 0, 1e12, "ns", "Period of the event stream that wakes WFE (Linux uses 100 us); 0 disables it.");
    p.add("poll_sleep", &C::poll_sleep, "true (default): hal_poll32/64 sleep until the polled word can change, and hal_read_poll32 until the device reports a register value that ends the poll, instead of synchronising at every poll, each poll at the plain loop's simulated time, with the same results (docs/architecture.md, \"Polling\" and \"Polling a register\"; far fewer host-side synchronisations, docs/performance.md). false: the plain loop, a wait per poll.");
    p.add("private_cache_kib", &C::private_cache_kib, 0, 1 << 20, "KiB", "Data a core's private caches hold for a structure software walks again and again (hal_cost_walk, e.g. the IOVA allocator's rbtree): the L2 of a core with a private L2. 0 (default): no cache model, a walk costs only what its code charges per step.");
    p.add("shared_cache_kib", &C::shared_cache_kib, 0, 1 << 24, "KiB", "Size of the shared cache behind the private ones that such a walk can use (the L3 of the core's die), counting what the private caches hold; 0 or not above private_cache_kib: none, misses go to memory.");
    p.add("shared_cache_ns", &C::shared_cache_ns, 0, 1e6, "ns", "Extra load latency of an object a walk finds only in the shared cache, beyond a private-cache hit.");
    p.add("memory_load_ns", &C::memory_load_ns, 0, 1e6, "ns", "Extra load latency of an object a walk finds in no cache: a dependent load from DRAM as the core sees it, beyond a private-cache hit.");
    p.add("stack_kib", &C::stack_kib, 64, 1 << 20, "KiB", "Host stack of each core's thread (sw/ code runs on it).");
    return p;
  }();
  return t;
}

const ParamTable<DramConfig>& dram_params() {
  static const ParamTable<DramConfig> t = [] {
    ParamTable<DramConfig> p;
    using C = DramConfig;
    ParamTable<DmaRegion> region;
    region.address("offset", &DmaRegion::offset, "bytes", "Start of the region hal_dma_alloc() serves, from the DRAM base.");
    region.address("size", &DmaRegion::size, 4096, 1ull << 44, "bytes", "Size of that region.");
    p.address("base", &C::base, "address", "Physical base of DRAM.");
    p.address("size", &C::size, 4096, 1ull << 44, "bytes", "DRAM size (host memory is used only for pages the run touches).");
    p.add("read_latency_ns", &C::read_latency_ns, 0, 1e6, "ns", "Read latency once the data bus is granted.");
    p.add("write_latency_ns", &C::write_latency_ns, 0, 1e6, "ns", "Write acknowledgement latency once the data bus is granted.");
    p.add("bandwidth_gbps", &C::bandwidth_gbps, 0.001, 1e5, "GB/s", "Data bus bandwidth (bytes per ns); transfers queue behind each other for it.");
    p.group("dma_region", &C::dma_region, region, "");
    return p;
  }();
  return t;
}

const ParamTable<InterconnectConfig>& interconnect_params() {
  static const ParamTable<InterconnectConfig> t = [] {
    ParamTable<InterconnectConfig> p;
    p.add("latency_ns", &InterconnectConfig::latency_ns, 0, 1e6, "ns", "Latency of one pass through the address router.");
    return p;
  }();
  return t;
}

const ParamTable<IntcConfig>& intc_params() {
  static const ParamTable<IntcConfig> t = [] {
    ParamTable<IntcConfig> p;
    using C = IntcConfig;
    p.address("base", &C::base, "address", "Physical base of the interrupt controller (MSI doorbell at +0x40).");
    p.add("lines", &C::lines, 1, 1024, "", "Number of interrupt lines.");
    p.add("reg_latency_ns", &C::reg_latency_ns, 0, 1e6, "ns", "Register access latency.");
    return p;
  }();
  return t;
}

namespace {

using namespace smmu;

// Feature switches a configuration may change on top of its profile, each
// with the SmmuFeatures member it sets (ID register fields, IHI 0070 6.3).
struct BoolFeature {
  const char* name;
  bool SmmuFeatures::*member;
  const char* help;
};
struct UintFeature {
  const char* name;
  unsigned SmmuFeatures::*member;
  unsigned min, max;
  const char* help;
};
const std::vector<BoolFeature>& bool_features() {
  static const std::vector<BoolFeature> v = {
      {"stage1", &SmmuFeatures::stage1, "IDR0.S1P: stage 1 translation."},
      {"stage2", &SmmuFeatures::stage2, "IDR0.S2P: stage 2 translation."},
      {"two_level_strtab", &SmmuFeatures::two_level_strtab, "IDR0.ST_LEVEL: two-level stream tables."},
      {"two_level_cd", &SmmuFeatures::two_level_cd, "IDR0.CD2L: two-level CD tables."},
      {"msi", &SmmuFeatures::msi, "IDR0.MSI: message-signalled interrupts."},
      {"sev", &SmmuFeatures::sev, "IDR0.SEV: WFE wake-up events."},
      {"cohacc", &SmmuFeatures::cohacc, "IDR0.COHACC: coherent table and queue accesses."},
      {"ecmdq", &SmmuFeatures::ecmdq, "IDR1.ECMDQ: enhanced command queues (needs MSI, COHACC, v3.3)."},
      {"pri", &SmmuFeatures::pri, "IDR0.PRI: PCIe PRI, the PRI queue and CMD_PRI_RESP (docs/smmu.md, \"PRI\"); needs ats."},
      {"ats", &SmmuFeatures::ats, "IDR0.ATS: PCIe ATS, Translation Requests, translated transactions and CMD_ATC_INV (docs/smmu.md, \"ATS\"); split-stage ATS is not modelled (NS1ATS = 1)."},
      {"ril", &SmmuFeatures::ril, "IDR3.RIL: range invalidation."},
      {"gran4k", &SmmuFeatures::gran4k, "IDR5.GRAN4K."},
      {"gran16k", &SmmuFeatures::gran16k, "IDR5.GRAN16K."},
      {"gran64k", &SmmuFeatures::gran64k, "IDR5.GRAN64K."},
  };
  return v;
}
const std::vector<UintFeature>& uint_features() {
  static const std::vector<UintFeature> v = {
      {"sidsize", &SmmuFeatures::sidsize, 0, 32, "IDR1.SIDSIZE: StreamID bits."},
      {"ssidsize", &SmmuFeatures::ssidsize, 0, 20, "IDR1.SSIDSIZE: SubstreamID bits."},
      {"cmdqs", &SmmuFeatures::cmdqs, 0, 19, "IDR1.CMDQS: log2 of the largest command queue."},
      {"eventqs", &SmmuFeatures::eventqs, 0, 19, "IDR1.EVENTQS: log2 of the largest event queue."},
      {"priqs", &SmmuFeatures::priqs, 0, 19, "IDR1.PRIQS: log2 of the largest PRI queue (with pri)."},
      {"stall_model", &SmmuFeatures::stall_model, 0, 2, "IDR0.STALL_MODEL: 0 stall and terminate, 1 terminate only (no stalls), 2 stall forced (docs/smmu.md, \"Stall model\")."},
      {"stall_max", &SmmuFeatures::stall_max, 0, 65535, "IDR5.STALL_MAX: stalled transactions the SMMU holds at once (with stalls, at least 1)."},
      {"oas_bits", &SmmuFeatures::oas_bits, 32, 48, "IDR5.OAS in bits (32, 36, 40, 42, 44 or 48; 52-bit addressing is not modelled)."},
      {"ecmdq_log2_pages", &SmmuFeatures::ecmdq_log2_pages, 0, 8, "IDR6.CMDQ_CONTROL_PAGE_LOG2NUMP: log2 of the command queue control pages."},
      {"ecmdq_log2_queues", &SmmuFeatures::ecmdq_log2_queues, 0, 8, "IDR6.CMDQ_CONTROL_PAGE_LOG2NUMQ: log2 of the ECMDQs per control page."},
  };
  return v;
}

NodePtr feature_overrides_schema() {
  std::vector<std::pair<std::string, NodePtr>> fields;
  for (const auto& f : bool_features()) fields.emplace_back(f.name, optional(leaf(Type::kBool, json(), "", f.help)));
  for (const auto& f : uint_features())
    fields.emplace_back(f.name, optional(ranged(Type::kUint, json(), f.min, f.max, "", f.help)));
  return object(fields, "Changes to the profile; absent ones keep the profile's value.");
}

void apply_feature_overrides(const json& f, SmmuFeatures& features) {
  for (const auto& b : bool_features())
    if (f.contains(b.name)) features.*b.member = f.at(b.name).get<bool>();
  for (const auto& n : uint_features())
    if (f.contains(n.name)) features.*n.member = static_cast<unsigned>(f.at(n.name).get<uint64_t>());
}

}  // namespace

const ParamTable<SmmuConfig>& smmu_params() {
  static const ParamTable<SmmuConfig> t = [] {
    ParamTable<SmmuConfig> p;
    using C = SmmuConfig;
    using T = TranslatorConfig;
    ParamTable<CommandQueueTiming> cmdq;
    {
      using Q = CommandQueueTiming;
      cmdq.add("fetch_batch", &Q::fetch_batch, 1, 1 << 19, "commands", "Commands fetched by one memory read.");
      cmdq.add("decode_ns", &Q::decode_ns, 0, 1e6, "ns", "Per command, before it goes to a lane.");
      cmdq.add("cfgi_ns", &Q::cfgi_ns, 0, 1e6, "ns", "CFGI_* execution.");
      cmdq.add("tlbi_ns", &Q::tlbi_ns, 0, 1e6, "ns", "TLBI_* execution (the broadcast to TBUs).");
      cmdq.add("tlbi_context_ns", &Q::tlbi_context_ns, 0, 1e6, "ns", "A TLBI of a whole context (by ASID, VMID or ALL) when not 0; 0: tlbi_ns, as one by address.");
      cmdq.add("tlbi_per_entry_ns", &Q::tlbi_per_entry_ns, 0, 1e6, "ns", "Added per TLB entry a TLBI removes (0: fixed cost; else a scan).");
      cmdq.add("tlbi_range_ns", &Q::tlbi_range_ns, 0, 1e6, "ns", "A range TLBI (TG != 0), whatever the range.");
      cmdq.add("sync_ns", &Q::sync_ns, 0, 1e6, "ns", "CMD_SYNC, after the commands and translations it waits for.");
      cmdq.add("prefetch_ns", &Q::prefetch_ns, 0, 1e6, "ns", "PREFETCH_* execution.");
      cmdq.add("other_ns", &Q::other_ns, 0, 1e6, "ns", "ATC_INV and other commands.");
      cmdq.add("lanes", &Q::lanes, 1, 64, "", "Commands executing at once.");
      cmdq.add("msi_coherent", &Q::msi_coherent, "true: a CMD_SYNC's MSI write to normal memory is a coherent write that takes the line from the cores holding a copy (those polling the word), and the queue consumes its next command only once the farthest copy is given up (a line transfer from where that core sits, the SMMU sitting with the first die: cacheline_transfer_die_ns, or _remote_ns from another die); the cores then fetch the line back from it; needs platform.cpu.count < 256. false (default): the write costs the queue nothing and the pollers' next load is a hit.");
    }
    ParamTable<TlbConfig> tlb;
    tlb.add("entries", &TlbConfig::entries, 1, 1 << 20, "entries", "TLB capacity.");
    tlb.add("ways", &TlbConfig::ways, 1, 1 << 20, "ways", "Associativity; entries must be a multiple of it (ways = entries: fully associative).");
    tlb.choice("replacement", &TlbConfig::replacement,
               {{"lru", ReplacementPolicy::kLru}, {"fifo", ReplacementPolicy::kFifo}, {"random", ReplacementPolicy::kRandom}},
               "Replacement policy (random is seeded by scenario.seed).");
    ParamTable<ConfigCacheConfig> config_cache;
    config_cache.add("ste_entries", &ConfigCacheConfig::ste_entries, 0, 1 << 20, "entries", "Cached STEs (0: none).");
    config_cache.add("cd_entries", &ConfigCacheConfig::cd_entries, 0, 1 << 20, "entries", "Cached CDs (0: none).");
    // A JSON object of its own, members of TranslatorConfig itself.
    ParamTable<T> micro_tlb;
    micro_tlb.add("entries", &T::micro_tlb_entries, 0, 4096, "entries", "Fully associative micro-TLB per master port, looked up before the main TLB (0: none).");
    micro_tlb.add("lookup_ns", &T::micro_tlb_lookup_ns, 0, 1e6, "ns", "Micro-TLB lookup, hit or miss.");
    // A distributed SMMU (models/smmu/tbu.h): TBUs in front of the TCU.
    ParamTable<TbuParams> tbu;
    tbu.group("tlb", &TbuParams::tlb, tlb, "Each TBU's main TLB.");
    tbu.add("micro_tlb_entries", &TbuParams::micro_tlb_entries, 0, 4096, "entries", "Fully associative micro-TLB of each TBU, looked up before its main TLB (0: none).");
    tbu.add("translation_slots", &TbuParams::translation_slots, 1, 4096, "", "Transactions a TBU holds at once, each until it leaves (a hit after its lookup, a miss after the TCU answers); more wait.");
    tbu.add("hit_under_miss", &TbuParams::hit_under_miss, "A hit leaves as soon as it is looked up, before outstanding misses; off: after every miss before it.");
    tbu.add("tlb_lookup_ns", &TbuParams::tlb_lookup_ns, 0, 1e6, "ns", "A TBU's main TLB lookup, hit or miss.");
    tbu.add("micro_tlb_lookup_ns", &TbuParams::micro_tlb_lookup_ns, 0, 1e6, "ns", "A TBU's micro-TLB lookup, hit or miss.");
    ParamTable<DtiTiming> dti;
    dti.add("latency_ns", &DtiTiming::latency_ns, 0, 1e6, "ns", "One DTI message, TBU to TCU or back.");
    dti.add("message_ns", &DtiTiming::message_ns, 0, 1e6, "ns", "The TCU sending one DTI message: an invalidation or sync goes to every TBU, one message each.");
    const NodePtr tbu_spec = object(
        {{"name", leaf(Type::kString, json(), "", "The TBU's name (its statistics are smmu.tbu.<name>.*).")},
         {"masters", array_of(leaf(Type::kString, json(), "", ""), json::array(),
                              "Device instances whose transactions it translates; every device must be in one TBU.")}},
        "");
    ParamTable<AtsTiming> ats;
    ats.add("pcie_latency_ns", &AtsTiming::pcie_latency_ns, 0, 1e6, "ns", "One way between the SMMU and an endpoint, for an ATC Invalidation Request and its completion (a guess: half a PCIe DMA read round trip).");
    ats.add("message_ns", &AtsTiming::message_ns, 0, 1e6, "ns", "The SMMU sending one Invalidation Request: back-to-back requests leave one per message_ns (a guess).");
    ats.add("atc_inv_timeout_us", &AtsTiming::atc_inv_timeout_us, 0, 1e9, "us", "How long the SMMU waits for an Invalidation Completion before the CMD_SYNC behind it fails with CERROR_ATC_INV_SYNC (IMPLEMENTATION DEFINED; a guess).");
    ParamTable<WalkCacheConfig> walk_cache;
    walk_cache.add("entries", &WalkCacheConfig::entries, 1, 1 << 20, "entries", "Cached intermediate table addresses.");
    walk_cache.add("ways", &WalkCacheConfig::ways, 1, 1 << 20, "ways", "Associativity; entries must be a multiple of it.");

    p.address("base", &C::base, "address", "Physical base of the register pages (page 0; page 1 follows at +64 KiB).").required();
    p.custom("profile", choice(C{}.features.name, profile_names(), "Feature profile: which SMMUv3 the ID registers describe (docs/smmu.md)."),
             [](const json& v, C& c) { c.features = *profile_by_name(v.get<std::string>()); });
    p.custom("features", feature_overrides_schema(), [](const json& v, C& c) { apply_feature_overrides(v, c.features); });
    p.add("eventq_irq", &C::eventq_irq, 0, 1023, "line", "Wired interrupt of the event queue (used when no MSI is configured).").required();
    p.add("gerror_irq", &C::gerror_irq, 0, 1023, "line", "Wired interrupt of global errors (used when no MSI is configured).").required();
    p.add("sync_irq", &C::sync_irq, 0, 1023, "line", "Wired interrupt of CMD_SYNC with CS = SIG_IRQ on an SMMU without MSIs.").required();
    p.add("priq_irq", &C::priq_irq, 0, 1023, "line", "Wired interrupt of the PRI queue (features.pri) when no MSI is configured; must be a line of its own then.");
    p.group("cmdq", &C::cmdq, cmdq, "Command queue consumer timing (docs/smmu.md).");
    p.group("ats", &C::ats, ats, "PCIe ATS message timing, used with features.ats (docs/smmu.md, \"ATS\").");
    p.add("reg_latency_ns", &C::reg_latency_ns, 0, 1e6, "ns", "Register access latency.");
    p.add("bypass_latency_ns", &C::bypass_latency_ns, 0, 1e6, "ns", "Added to a transaction passed through with SMMUEN = 0.");
    // The translator's parameters, at the same level in the JSON.
    auto tr = p.within(&C::translation);
    tr.add("tlb_lookup_ns", &T::tlb_lookup_ns, 0, 1e6, "ns", "TLB lookup, hit or miss.");
    tr.add("config_lookup_ns", &T::config_lookup_ns, 0, 1e6, "ns", "Config cache (STE or CD) lookup, hit or miss.");
    tr.within(&T::walk).add("walk_step_ns", &WalkTiming::step_ns, 0, 1e6, "ns", "Walker work per descriptor, after its read completes.");
    tr.add("translation_slots", &T::translation_slots, 1, 4096, "", "Translations in progress at once; more queue.");
    tr.add("walker_slots", &T::walker_slots, 1, 1024, "", "Table walks in progress at once; more queue.");
    tr.group("tlb", &T::tlb, tlb, "");
    tr.group("config_cache", &T::config_cache, config_cache, "");
    tr.group("micro_tlb", micro_tlb, "");
    p.add("cmdq_check", &C::cmdq_check, "Debug: check how software fills the command queues (docs/smmu.md, \"Command-queue checker\"): PROD never backwards nor past CONS plus the size, and no command consumed twice without being rewritten; violations are problems in the summary (smmu.cmdq.check_errors). Costs host time, not simulated time.");
    p.add("stale_check", &C::stale_check, "Debug: check every TLB hit against the page tables in memory and count stale hits (smmu.stale_check.*), to measure the window of lazy invalidation. Costs host time, not simulated time.");
    tr.group("walk_cache", &T::walk_cache, walk_cache, "");
    auto dist = tr.within(&T::distributed);
    dist.custom("tbus", array_of(tbu_spec, json::array(),
                                 "TBUs of a distributed SMMU (docs/smmu.md, \"Distributed SMMU\"); empty: one monolithic SMMU. With TBUs, translation_slots are the TCU's."),
                [](const json& v, DistributedConfig& d) {
                  d.tbus.clear();
                  for (const auto& e : v) d.tbus.push_back({e.at("name").get<std::string>(), e.at("masters").get<std::vector<std::string>>()});
                });
    dist.group("tbu", &DistributedConfig::tbu, tbu, "What every TBU has (used when tbus is not empty).");
    dist.group("dti", &DistributedConfig::dti, dti, "The DTI link between the TBUs and the TCU (used when tbus is not empty).");
    return p;
  }();
  return t;
}

}  // namespace smmu_vp::config
