// canopy::evaluate: what a placement costs on a topology (docs/cost-model.md).
// One pass over the matrix's edges, O(edges × levels): each undirected edge
// is visited once (from its smaller endpoint).
#include "canopy/cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

namespace canopy {

Cost evaluate(const Topology& topo, const CommMatrix& m, const std::vector<int>& task_pu,
              const std::vector<double>& weights) {
  const int T = m.size();
  const int P = topo.num_pus();
  if (static_cast<int>(task_pu.size()) != T)
    throw Error(fmt::format("evaluate: the placement has {} tasks but the matrix has {}", task_pu.size(), T));
  for (int t = 0; t < T; ++t)
    if (task_pu[t] < 0 || task_pu[t] >= P)
      throw Error(fmt::format("evaluate: task {} is on PU {}, but topology '{}' has PUs 0..{}", t, task_pu[t],
                              topo.source(), P - 1));
  const std::vector<double> w = resolve_weights(topo, weights);
  const int L = topo.leaf_level();

  Cost c;
  c.tasks_per_numa.assign(std::max(topo.num_numa_nodes(), 1), 0);
  for (int t = 0; t < T; ++t) ++c.tasks_per_numa[topo.num_numa_nodes() ? topo.pu(task_pu[t]).numa : 0];

  const auto& cols = m.cols();
  const auto& vals = m.weights();
  for (int i = 0; i < T; ++i) {
    const int pi = task_pu[i];
    const int ni = topo.pu(pi).numa;
    for (std::int64_t e = m.row_begin(i); e < m.row_end(i); ++e) {
      const int j = cols[e];
      if (j <= i) continue;  // each undirected edge once
      const double v = vals[e];
      const int pj = task_pu[j];
      const int lvl = pi == pj ? L : topo.common_level(pi, pj);
      c.hop_bytes += v * 2.0 * (L - lvl);
      c.weighted += v * w[lvl];
      if (topo.pu(pj).numa != ni) c.numa_crossing += v;
    }
  }
  return c;
}

Cost evaluate(const Topology& topo, const CommMatrix& m, const Placement& p, const std::vector<double>& weights) {
  return evaluate(topo, m, p.task_pu, weights);
}

}  // namespace canopy
