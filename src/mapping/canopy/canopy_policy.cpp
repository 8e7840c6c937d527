// The `canopy` policy's entry point: checks the slots, turns the CommMatrix
// and the Topology into the algorithm's plain data (graph.hpp, tree.hpp) and
// runs it (mapper.hpp).
#include "mapping/canopy/canopy_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "mapping/canopy/mapper.hpp"

namespace canopy::policy {

namespace {

constexpr std::int64_t kLeanMaxStarts = 8;

std::vector<int> run(const Topology& topo, const CommMatrix& m, const MapOptions& opt, const Slots& slots,
                     bool lean) {
  const int T = m.size();
  const int P = topo.num_pus();
  if (static_cast<int>(slots.capacity.size()) != P)
    throw Error(fmt::format("policy 'canopy': {} slot capacities given, but topology '{}' has {} PUs",
                            slots.capacity.size(), topo.source(), P));
  std::int64_t total = 0;
  for (int p = 0; p < P; ++p) {
    if (slots.capacity[p] < 0)
      throw Error(fmt::format("policy 'canopy': PU {} has a negative slot capacity ({})", p, slots.capacity[p]));
    total += slots.capacity[p];
  }
  if (total != T)
    throw Error(fmt::format("policy 'canopy': the slots hold {} tasks, but the matrix has {}", total, T));
  if (T == 0) return {};

  const std::vector<double> weights = resolve_weights(topo, opt.weights);

  const cmap::Tree tree = cmap::build_tree(topo, slots.capacity);
  const cmap::Graph g = cmap::graph_of(m);
  cmap::MapParams params;
  if (lean) {
    // The effort default_effort gives a graph of 50,000 tasks and edges.
    params.auto_effort = false;
    params.effort = cmap::default_effort(400000, 0);
    // More starts for a graph so small that they cost next to nothing (up
    // to 8 below 256 tasks and edges, one from 2,048 on: the time at 1,000
    // tasks is unchanged). One start lands where its seed leads, and on
    // small graphs the spread between seeds is wide: the video pipeline's
    // 70 recurring tasks on 4 NUMA nodes crossed 1.08x the volume of the
    // best placement with the first seed, 1.03x with the best of 8 (4 ms).
    const std::int64_t size = T + static_cast<std::int64_t>(g.adj.size()) / 2;
    params.effort.starts = static_cast<int>(std::clamp<std::int64_t>(2048 / size, 1, kLeanMaxStarts));
  }
  return cmap::map_graph(g, tree, weights, params);
}

}  // namespace

std::vector<int> canopy(const Topology& topo, const CommMatrix& m, const MapOptions& opt, const Slots& slots) {
  return run(topo, m, opt, slots, false);
}

std::vector<int> canopy_lean(const Topology& topo, const CommMatrix& m, const MapOptions& opt, const Slots& slots) {
  return run(topo, m, opt, slots, true);
}

}  // namespace canopy::policy
