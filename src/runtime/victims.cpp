// Victim lists from the topology tree (see victims.hpp).
#include "runtime/victims.hpp"

#include <algorithm>

#include "canopy/detail/worker.hpp"
#include "canopy/topology.hpp"

namespace canopy::detail {

std::uint8_t steal_class(const Topology& topo, int pu_a, int pu_b) {
  const PUInfo& a = topo.pu(pu_a);
  const PUInfo& b = topo.pu(pu_b);
  if (a.core == b.core) return kStealSameCore;
  if (a.numa == b.numa) return kStealSameNuma;
  return kStealRemote;
}

std::vector<VictimList> build_victim_lists(const Topology& topo, const std::vector<int>& worker_pu) {
  const int n = static_cast<int>(worker_pu.size());
  std::vector<VictimList> lists(n);
  for (int i = 0; i < n; ++i) {
    // (shared level, rotated index) so that, inside a group, worker i's list
    // starts after i: neighbours do not all start with the same victim.
    std::vector<std::pair<int, int>> order;
    for (int k = 1; k < n; ++k) {
      const int j = (i + k) % n;
      order.emplace_back(-topo.common_level(worker_pu[i], worker_pu[j]), k);
    }
    std::stable_sort(order.begin(), order.end());
    VictimList& l = lists[i];
    for (std::size_t k = 0; k < order.size(); ++k) {
      const int j = (i + order[k].second) % n;
      const int level = -order[k].first;
      if (l.group_level.empty() || l.group_level.back() != level) {
        if (!l.group_level.empty()) l.group_end.push_back(static_cast<int>(l.workers.size()));
        l.group_level.push_back(level);
        l.group_class.push_back(steal_class(topo, worker_pu[i], worker_pu[j]));
      }
      l.workers.push_back(j);
    }
    if (!l.group_level.empty()) l.group_end.push_back(static_cast<int>(l.workers.size()));
  }
  return lists;
}

}  // namespace canopy::detail
