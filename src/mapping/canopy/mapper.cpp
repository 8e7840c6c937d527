// The canopy mapping algorithm: starts, refinement, best of (see mapper.hpp).
#include "mapping/canopy/mapper.hpp"

#include <algorithm>

#include "mapping/canopy/refine.hpp"
#include "mapping/canopy/top_down.hpp"

namespace canopy::cmap {

int default_starts(int n, std::int64_t m) {
  // About the same total work for every small graph, a single start for the
  // big ones: cheap inputs get a wider search, large ones stay fast.
  const std::int64_t size = static_cast<std::int64_t>(n) + m;
  return static_cast<int>(std::clamp<std::int64_t>(60000 / std::max<std::int64_t>(size, 1), 1, 8));
}

std::vector<int> map_graph(const Graph& g, const Tree& tree, const std::vector<double>& weights,
                           const MapParams& params) {
  const std::int64_t m = static_cast<std::int64_t>(g.adj.size()) / 2;
  const int starts = params.starts > 0 ? params.starts : default_starts(g.n, m);
  // Work budgets in edge visits: proportional to the graph, with a floor so
  // that small graphs are refined to convergence.
  const double size = static_cast<double>(g.n + 2 * m);
  const std::int64_t work = static_cast<std::int64_t>(params.refine_work * size) + 200000;
  const std::int64_t kl_work = static_cast<std::int64_t>(params.kl_work * size) + 2000000;
  std::vector<int> best;
  double best_cost = 0;
  for (int s = 0; s < starts; ++s) {
    const std::uint64_t seed = params.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(s);
    std::vector<int> pos = top_down_partition(g, tree, seed, params.bisect);
    refine_swaps(g, tree, weights, pos, seed ^ 0xa5a5a5a5ULL, work);
    refine_kl(g, tree, weights, pos, seed ^ 0x5a5a5a5aULL, kl_work);
    const double c = weighted_cost(g, tree, weights, pos);
    if (best.empty() || c < best_cost) {
      best_cost = c;
      best = std::move(pos);
    }
  }
  return best;
}

}  // namespace canopy::cmap
