// Victim lists: for each worker, the other workers in the order it tries to
// steal from them, closest first, built from the topology tree. Victims are
// grouped by the depth of the deepest tree node they share with the thief
// (same core, then same L3 or NUMA node, then the package, then the
// machine); a thief tries every victim of a group (from a random one) before
// the next group. Each group also carries the class the statistics count its
// steals in (same core / same NUMA node / remote).
#pragma once
#include <cstdint>
#include <vector>

namespace canopy {
class Topology;
}

namespace canopy::detail {

struct VictimList {
  std::vector<int> workers;             // closest first
  std::vector<int> group_end;           // group k is workers[group_end[k-1] .. group_end[k])
  std::vector<int> group_level;         // tree level of the shared ancestor (deeper = closer)
  std::vector<std::uint8_t> group_class;  // StealClass of each group
};

// worker_pu[i] = logical PU of worker i (several workers may share a PU).
std::vector<VictimList> build_victim_lists(const Topology& topo, const std::vector<int>& worker_pu);

// The steal class of a victim on PU b for a thief on PU a.
std::uint8_t steal_class(const Topology& topo, int pu_a, int pu_b);

}  // namespace canopy::detail
