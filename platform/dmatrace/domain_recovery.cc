#include "dmatrace/domain_recovery.h"

#include <algorithm>

#include "dmatrace/dma_trace.h"

namespace smmu_vp::dmatrace {

std::string domain_recovery_summary(const DomainRecoveryStats& s) {
  return "domain recovery: " + std::to_string(s.maps) + " iommu maps without a device assigned to " +
         std::to_string(s.new_domains) + " domains (" + std::to_string(s.by_adjacency) + " continuing their domain's " +
         "last range, " + std::to_string(s.by_task) + " by their task, " + std::to_string(s.by_recency) +
         " by recency, " + std::to_string(s.ambiguous) + " of those ambiguous); " + std::to_string(s.unmaps) +
         " unmaps: " + std::to_string(s.unmaps_unique) + " in one domain, " + std::to_string(s.unmaps_ambiguous) +
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
  std::vector<size_t> holders;
  for (size_t i = 0; i < domains_.size(); ++i) {
    const auto& live = domains_[i].live;
    auto it = live.upper_bound(iova);
    if (it != live.begin() && std::prev(it)->second > iova) holders.push_back(i);
  }
  size_t chosen = kNone;
  if (holders.size() == 1) {
    chosen = holders[0];
    ++stats_.unmaps_unique;
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
  // An unmap may cover several mappings: every live one in its range ends.
  auto& live = domains_[chosen].live;
  auto it = live.upper_bound(iova);
  if (it != live.begin() && std::prev(it)->second > iova) --it;
  while (it != live.end() && it->first < end) it = live.erase(it);
  use(chosen, pid);
  return chosen;
}

}  // namespace smmu_vp::dmatrace
