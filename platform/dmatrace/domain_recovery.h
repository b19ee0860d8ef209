// Which DMA domain an iommu:map / iommu:unmap event belongs to, when the
// event does not say (issue 32): Linux's iommu events print no device, and
// kernels before 6.12 have no dma: events that would. Each device's DMA
// domain allocates IOVAs on its own, top-down from just below its DMA mask,
// so the domains' ranges overlap; replayed as one address space they collide.
//
// The rule (docs/traces.md, "Domain recovery"), one event at a time:
//  - map: the domains whose live mappings it does not overlap are the
//    candidates. Among them, the one whose last mapping it continues (the
//    allocator's next range, below or above) wins; else the domain the same
//    task mapped into last; else the one used most recently (ambiguous when
//    more than one was a candidate). A map that overlaps every domain opens
//    a new one.
//  - unmap: the domains holding a live mapping at its IOVA; one is taken as
//    is; among several, those whose mappings it would end whole (dma-iommu
//    unmaps an IOVA allocation whole), then the same task's last domain,
//    else the one that mapped it most recently (ambiguous). None: unmatched.
//    Parts of mappings outside its range stay live.
//  - A new domain belongs to the earliest attach_device_to_domain device
//    that has none yet; without one it is named iommu-domain-N.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace smmu_vp::dmatrace {

struct DomainRecoveryStats {
  uint64_t maps = 0;            // iommu:map events assigned
  uint64_t by_adjacency = 0;    // continuing their domain's last mapping
  uint64_t by_task = 0;         // into their task's last domain
  uint64_t by_recency = 0;      // into the most recently used candidate
  uint64_t new_domains = 0;     // opened a domain (the first map, or one overlapping every domain)
  uint64_t ambiguous = 0;       // maps with more than one candidate and no adjacency or task to choose by
  uint64_t unmaps = 0;          // iommu:unmap events
  uint64_t unmaps_unique = 0;   // exactly one domain held the IOVA
  uint64_t unmaps_whole = 0;     // several held it; only one would unmap whole mappings
  uint64_t unmaps_ambiguous = 0;
  uint64_t unmaps_unmatched = 0;  // no domain held it (mapped before the capture)
};

// One line for the import's summary and the trace's comment: what was
// assigned and how.
std::string domain_recovery_summary(const DomainRecoveryStats& s);

class DomainRecovery {
 public:
  static constexpr size_t kNone = ~size_t{0};

  // An attach_device_to_domain event.
  void attached(const std::string& device);
  // The domain of a map / an unmap (kNone: unmatched unmap).
  size_t map(uint64_t iova, uint64_t size, int64_t pid);
  size_t unmap(uint64_t iova, uint64_t size, int64_t pid);
  // Its name: the attached device it took, or iommu-domain-N (1-based).
  const std::string& name(size_t domain) const { return domains_[domain].name; }
  size_t domains() const { return domains_.size(); }
  const DomainRecoveryStats& stats() const { return stats_; }

 private:
  struct Domain {
    std::string name;
    std::map<uint64_t, uint64_t> live;  // iova -> end (exclusive)
    uint64_t last_iova = 0, last_end = 0;
    uint64_t last_used = 0;  // event counter
  };
  bool overlaps(const Domain& d, uint64_t iova, uint64_t end) const;
  bool unmaps_exactly(const Domain& d, uint64_t iova, uint64_t end) const;
  size_t open_domain();
  void use(size_t domain, int64_t pid);

  std::vector<Domain> domains_;
  std::vector<std::string> attached_;  // in order; the first `taken_` have a domain
  size_t taken_ = 0;
  std::unordered_map<int64_t, size_t> task_domain_;
  uint64_t events_ = 0;
  DomainRecoveryStats stats_;
};

}  // namespace smmu_vp::dmatrace
