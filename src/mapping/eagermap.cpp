// The `eagermap` policy (Cruz, Diener, Pilla, Navaux: "EagerMap: a task
// mapping algorithm to improve communication and load balancing in clusters
// of multicore systems", ACM TOPC 2019; first version 2015). Level by level,
// bottom-up, in a single pass: the ungrouped entity with the most total
// communication (the "winner") opens a group, and the group is completed
// with the partners that communicate most with it; then the matrix is
// aggregated and the next level groups the groups. See docs/policies/eagermap.md.
#include <algorithm>
#include <numeric>

#include "mapping/grouping.hpp"
#include "mapping/hierarchy.hpp"
#include "mapping/policies.hpp"

namespace canopy::policy {

namespace {

grouping::Grouping eager_groups(const grouping::Problem& p) {
  const grouping::Graph& g = p.graph;
  // Winners in order of total communication, most first (ties: lowest id).
  std::vector<int> order(g.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return g.rowsum(a) > g.rowsum(b); });
  grouping::Filler f(p);
  return f.finish({}, order);
}

}  // namespace

std::vector<int> eagermap(const Topology& topo, const CommMatrix& m, const MapOptions&, const Slots& slots) {
  return grouping::hierarchical_map(topo, m, slots, eager_groups);
}

}  // namespace canopy::policy
