// Simulated annealing over task swaps (see anneal.hpp).
#include "anneal.hpp"

#include <algorithm>
#include <cmath>

#include "mapping/canopy/refine.hpp"

namespace canopy::bench {

AnnealResult anneal(const cmap::Graph& g, const cmap::Tree& tree, const std::vector<double>& weights,
                    std::vector<int> task_pu, const AnnealParams& p) {
  AnnealResult out;
  out.cost = cmap::weighted_cost(g, tree, weights, task_pu);
  out.task_pu = task_pu;
  if (g.n < 2 || tree.num_levels < 2) return out;
  const int leaf = tree.leaf_level();
  std::vector<std::vector<int>> on(tree.num_pus);  // tasks per PU (a few each)
  auto cost_at = [&](int t, int pu) {
    double c = 0;
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e)
      c += g.ew[e] * weights[tree.common_level(pu, task_pu[g.adj[e]])];
    return c;
  };
  auto edge = [&](int t, int u) {
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e)
      if (g.adj[e] == u) return g.ew[e];
    return 0.0;
  };
  // A typical task's cost if all its traffic crossed the root: the scale of
  // the cost differences a swap makes.
  double volume = 0;
  for (double w : g.ew) volume += w;
  const double scale = std::max(1e-12, volume / g.n * (weights[0] - weights[leaf]));
  cmap::Rng rng(p.seed);
  for (int r = 0; r < p.runs; ++r) {
    task_pu = out.task_pu;
    for (auto& v : on) v.clear();
    for (int t = 0; t < g.n; ++t) on[task_pu[t]].push_back(t);
    double cur = out.cost;
    const double hot = scale * p.t0 / static_cast<double>(1 << (r % 3));
    const double cold = scale * 1e-4;
    const double ratio = std::log(cold / hot);
    for (std::int64_t it = 0; it < p.moves; ++it) {
      const double temp = hot * std::exp(ratio * static_cast<double>(it) / static_cast<double>(p.moves));
      const int t = rng.below(g.n);
      const int pt = task_pu[t];
      int u;
      if (g.degree(t) > 0 && rng.below(8) != 0) {
        const int j = g.adj[g.xadj[t] + rng.below(g.degree(t))];
        const int node = tree.ancestor(task_pu[j], 1 + rng.below(leaf));
        const int q = tree.first_pu[node] + rng.below(tree.num_pus_below[node]);
        if (on[q].empty()) continue;
        u = on[q][rng.below(static_cast<int>(on[q].size()))];
      } else {
        u = rng.below(g.n);
      }
      const int pu = task_pu[u];
      if (pu == pt || !tree.swappable(pt, pu)) continue;
      // cost_at(t, pu) counts the edge t-u at distance 0 (u is still there);
      // after the swap it spans pt-pu: the correction adds it back twice.
      double d = cost_at(t, pu) - cost_at(t, pt) + cost_at(u, pt) - cost_at(u, pu);
      const double w = edge(t, u);
      if (w != 0) d += 2 * w * (weights[tree.common_level(pt, pu)] - weights[leaf]);
      const bool take = d <= 0 || std::exp(-d / temp) * 4294967296.0 > static_cast<double>(rng.next() >> 32);
      if (!take) continue;
      task_pu[t] = pu;
      task_pu[u] = pt;
      std::replace(on[pt].begin(), on[pt].end(), t, u);
      std::replace(on[pu].begin(), on[pu].end(), u, t);
      ++out.accepted;
      cur += d;
      if (cur < out.cost * (1 - 1e-12)) {
        // Recomputed, not accumulated: the running sum drifts.
        const double exact = cmap::weighted_cost(g, tree, weights, task_pu);
        cur = exact;
        if (exact < out.cost) {
          out.cost = exact;
          out.task_pu = task_pu;
        }
      }
    }
    std::vector<int> polished = out.task_pu;
    cmap::refine_swaps(g, tree, weights, polished, p.seed + 7 * (r + 1), std::int64_t{1} << 26);
    cmap::refine_kl(g, tree, weights, polished, p.seed + 9 * (r + 1), std::int64_t{1} << 27, 8);
    const double c = cmap::weighted_cost(g, tree, weights, polished);
    if (c < out.cost) {
      out.cost = c;
      out.task_pu = std::move(polished);
    }
  }
  return out;
}

}  // namespace canopy::bench
