// Swap refinement on the distance-weighted cost (see refine.hpp).
#include "mapping/canopy/refine.hpp"

#include <algorithm>
#include <cmath>

#include "mapping/canopy/swap_state.hpp"

namespace canopy::cmap {

double weighted_cost(const Graph& g, const Tree& tree, const std::vector<double>& weights,
                     const std::vector<int>& task_pu) {
  double c = 0;
  for (int v = 0; v < g.n; ++v)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      int u = g.adj[e];
      if (u > v) c += g.ew[e] * weights[tree.common_level(task_pu[v], task_pu[u])];
    }
  return c;
}

namespace {

// Most neighbours looked at per task (the heaviest) and most partner tasks
// per neighbourhood group: they bound the work per task on dense graphs and
// heavily oversubscribed PUs.
constexpr int kMaxNeighbours = 24;
constexpr int kMaxGroup = 48;

// Looks for the best swap for t and applies it; returns the partner or -1.
int improve(SwapState& st, int t) {
  double best = 0;  // cost change of the best swap found (< 0 improves)
  int best_u = -1;
  st.for_each_partner(
      t, kMaxNeighbours, kMaxGroup, [](int, int) { return false; },
      [&](int u, double gain, double scale) {
        if (-gain < best - 1e-12 * scale) {
          best = -gain;
          best_u = u;
        }
      });
  if (best_u >= 0) st.swap_tasks(t, best_u);
  return best_u;
}

}  // namespace

void refine_swaps(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
                  std::uint64_t seed, std::int64_t max_work) {
  if (g.n < 2) return;
  SwapState st(g, tree, weights, task_pu);
  Rng rng(seed);
  std::vector<int> order = random_order(g.n, rng);
  // FIFO work queue of tasks to look at, each at most once in the queue.
  std::vector<int> queue(order);
  std::vector<std::uint8_t> queued(g.n, 1);
  std::size_t head = 0;
  auto push = [&](int v) {
    if (!queued[v]) {
      queued[v] = 1;
      queue.push_back(v);
    }
  };
  while (head < queue.size() && st.work < max_work) {
    const int t = queue[head++];
    queued[t] = 0;
    // Compact the queue once its consumed prefix dominates.
    if (head > 4096 && head * 2 > queue.size()) {
      queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    const int u = improve(st, t);
    if (u < 0) continue;
    push(t);
    push(u);
    for (int x : {t, u})
      for (std::int64_t e = g.xadj[x]; e < g.xadj[x + 1]; ++e) push(g.adj[e]);
  }
}

}  // namespace canopy::cmap
