#include "dmatrace/domain_recovery.h"

#include <algorithm>

#include "dmatrace/dma_trace.h"

namespace smmu_vp::dmatrace {

std::string domain_recovery_summary(const DomainRecoveryStats& s) {
  return "domain recovery: " + std::to_string(s.maps) + " iommu maps without a device assigned to " +
         std::to_string(s.new_domains) + " domains (" + std::to_string(s.by_adjacency) + " continuing their domain's " +
         "last range, " + std::to_string(s.by_task) + " by their task, " + std::to_string(s.by_recency) +
         " by recency, " + std::to_string(s.ambiguous) + " of those ambiguous); " + std::to_string(s.unmaps) +
         " unmaps: " + std::to_string(s.unmaps_unique) + " in one domain, " + std::to_string(s.unmaps_whole) +
         " ending whole mappings in only one, " + std::to_string(s.unmaps_ambiguous) +
         " ambiguous, " + std::to_string(s.unmaps_unmatched) + " unmatched";
}

void DomainRecovery::attached(const std::string& device) {
  if (std::find(attached_.begin(), attached_.end(), device) == attached_.end()) attached_.push_back(device);
}

bool DomainRecovery::overlaps(const Domain& d, uint64_t iova, uint64_t end) const {
  auto it = d.live.lower_bound(iova);
  if (it != d.live.end() && it->first < end) return true;
  return it != d.live.begin() && std::prev(it)->second > iova;
}

// The live ranges the unmap [iova, end) touches start at iova and end by end.
bool DomainRecovery::unmaps_exactly(const Domain& d, uint64_t iova, uint64_t end) const {
  auto it = d.live.find(iova);
  if (it == d.live.end()) return false;
  for (; it != d.live.end() && it->first < end; ++it)
    if (it->second > end) return false;
  return true;
}

size_t DomainRecovery::open_domain() {
  Domain d;
  d.name = taken_ < attached_.size() ? attached_[taken_++] : "iommu-domain-" + std::to_string(domains_.size() + 1);
  domains_.push_back(std::move(d));
  ++stats_.new_domains;
  return domains_.size() - 1;
}

void DomainRecovery::use(size_t domain, int64_t pid) {
  domains_[domain].last_used = ++events_;
  task_domain_[pid] = domain;
}

size_t DomainRecovery::map(uint64_t iova, uint64_t size, int64_t pid) {
  ++stats_.maps;
  const uint64_t end = range_end(iova, size);
  std::vector<size_t> fits;
  for (size_t i = 0; i < domains_.size(); ++i)
    if (!overlaps(domains_[i], iova, end)) fits.push_back(i);

  size_t chosen = kNone;
  // The allocator's next range continues the last one, downwards or upwards.
  for (size_t i : fits) {
    const Domain& d = domains_[i];
    if (d.last_end != 0 && (end == d.last_iova || iova == d.last_end)) {
      chosen = i;
      ++stats_.by_adjacency;
      break;
    }
  }
  if (chosen == kNone) {
    auto t = task_domain_.find(pid);
    if (t != task_domain_.end() && std::find(fits.begin(), fits.end(), t->second) != fits.end()) {
      chosen = t->second;
      ++stats_.by_task;
    }
  }
  if (chosen == kNone && !fits.empty()) {
    chosen = *std::max_element(fits.begin(), fits.end(), [&](size_t a, size_t b) {
      return domains_[a].last_used < domains_[b].last_used;
    });
    ++stats_.by_recency;
    if (fits.size() > 1) ++stats_.ambiguous;
  }
  if (chosen == kNone) chosen = open_domain();

  Domain& d = domains_[chosen];
  d.live.emplace(iova, end);
  d.last_iova = iova;
  d.last_end = end;
  use(chosen, pid);
  return chosen;
}

size_t DomainRecovery::unmap(uint64_t iova, uint64_t size, int64_t pid) {
  ++stats_.unmaps;
  const uint64_t end = range_end(iova, size);
  std::vector<size_t> holders, exact;
  for (size_t i = 0; i < domains_.size(); ++i) {
    const auto& live = domains_[i].live;
    auto it = live.upper_bound(iova);
    if (it != live.begin() && std::prev(it)->second > iova) {
      holders.push_back(i);
      if (unmaps_exactly(domains_[i], iova, end)) exact.push_back(i);
    }
  }
  // Linux unmaps what it mapped, whole: a domain whose mappings the unmap
  // would cut is not the one (dma-iommu frees its IOVA allocations whole).
  const bool several = holders.size() > 1;
  if (!exact.empty()) holders.swap(exact);
  size_t chosen = kNone;
  if (holders.size() == 1) {
    chosen = holders[0];
    ++(several ? stats_.unmaps_whole : stats_.unmaps_unique);
  } else if (holders.empty()) {
    ++stats_.unmaps_unmatched;
    return kNone;
  } else {
    ++stats_.unmaps_ambiguous;
    auto t = task_domain_.find(pid);
    if (t != task_domain_.end() && std::find(holders.begin(), holders.end(), t->second) != holders.end())
      chosen = t->second;
    else
      chosen = *std::max_element(holders.begin(), holders.end(), [&](size_t a, size_t b) {
        return domains_[a].last_used < domains_[b].last_used;
      });
  }
  // An unmap may cover several mappings (a scatterlist's pieces): every live
  // range in it ends. A part of a mapping outside it stays mapped, as in the
  // page tables, so that no later map is put over it.
  auto& live = domains_[chosen].live;
  auto it = live.upper_bound(iova);
  if (it != live.begin() && std::prev(it)->second > iova) --it;
  uint64_t head_start = 0, tail_end = 0;
  bool head = false, tail = false;
  while (it != live.end() && it->first < end) {
    if (it->first < iova) head = true, head_start = it->first;
    if (it->second > end) tail = true, tail_end = it->second;
    it = live.erase(it);
  }
  if (head) live.emplace(head_start, iova);
  if (tail) live.emplace(end, tail_end);
  use(chosen, pid);
  return chosen;
}

}  // namespace smmu_vp::dmatrace
