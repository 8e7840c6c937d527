// Topology-ordered victims for the task deques (see task_victims.hpp).
#include "task_victims.hpp"

#include <algorithm>
#include <utility>

#include <canopy/topology.hpp>

namespace canopy::omp {

int pu_of_cpus(const Topology* topo, const std::vector<int>& cpus) {
  if (!topo || cpus.empty()) return -1;
  return topo->pu_by_os_index(cpus.front());
}

bool pinned_to_one_core(const Topology* topo, const std::vector<int>& cpus) {
  if (!topo || cpus.empty()) return false;
  int core = -1;
  for (int cpu : cpus) {
    const int pu = topo->pu_by_os_index(cpu);
    if (pu < 0 || (core >= 0 && topo->pu(pu).core != core)) return false;
    core = topo->pu(pu).core;
  }
  return true;
}

std::vector<int> victim_order(const Topology* topo, const std::vector<int>& slot_pu, int self) {
  const int n = static_cast<int>(slot_pu.size());
  std::vector<std::pair<int, int>> order;  // (-shared level, rotation), sorted
  order.reserve(n > 0 ? n - 1 : 0);
  const int mine = self < n ? slot_pu[self] : -1;
  for (int k = 1; k < n; ++k) {
    const int j = (self + k) % n;
    int level = -1;  // unknown placement: after every known one
    if (topo && mine >= 0 && slot_pu[j] >= 0) level = topo->common_level(mine, slot_pu[j]);
    order.emplace_back(-level, k);
  }
  std::stable_sort(order.begin(), order.end());
  std::vector<int> victims;
  victims.reserve(order.size());
  for (const auto& o : order) victims.push_back((self + o.second) % n);
  return victims;
}

}  // namespace canopy::omp
