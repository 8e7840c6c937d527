// Swap refinement on the distance-weighted cost (see refine.hpp).
#include "mapping/canopy/refine.hpp"

#include <algorithm>
#include <cmath>

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

struct Refiner {
  const Graph& g;
  const Tree& tree;
  const std::vector<double>& w;
  std::vector<int>& pos;
  const int L;
  const double wsame;

  // Tasks per PU, in PU order, so that the tasks below any node are contiguous.
  std::vector<std::int64_t> slot_start;
  std::vector<int> occ;
  std::vector<std::int64_t> slot_of;

  // Scratch.
  std::vector<int> pu_stamp;
  std::vector<double> pu_cost;
  std::vector<int> node_stamp;
  std::vector<std::pair<double, int>> nbrs;
  int stamp = 0;

  Refiner(const Graph& g_, const Tree& t_, const std::vector<double>& w_, std::vector<int>& pos_)
      : g(g_), tree(t_), w(w_), pos(pos_), L(t_.leaf_level()), wsame(w_[t_.leaf_level()]) {
    const int P = tree.num_pus;
    slot_start.assign(P + 1, 0);
    for (int p = 0; p < P; ++p) slot_start[p + 1] = slot_start[p] + tree.capacity[p];
    occ.resize(g.n);
    slot_of.resize(g.n);
    std::vector<std::int64_t> fill(slot_start.begin(), slot_start.end() - 1);
    for (int t = 0; t < g.n; ++t) {
      slot_of[t] = fill[pos[t]]++;
      occ[slot_of[t]] = t;
    }
    pu_stamp.assign(P, 0);
    pu_cost.assign(P, 0);
    node_stamp.assign(tree.level.size(), 0);
  }

  // Cost of task t's edges if t were on PU p (the others where they are).
  double cost_at(int t, int p) const {
    double c = 0;
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) c += g.ew[e] * w[tree.common_level(p, pos[g.adj[e]])];
    return c;
  }

  // Looks for the best swap for t and applies it; returns the partner or -1.
  int improve(int t, std::int64_t& work) {
    const int p = pos[t];
    if (g.xadj[t] == g.xadj[t + 1]) return -1;
    ++stamp;
    const double cur_t = cost_at(t, p);
    work += g.degree(t);

    // The heaviest neighbours' places are the candidate destinations.
    nbrs.clear();
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) nbrs.emplace_back(g.ew[e], g.adj[e]);
    if (static_cast<int>(nbrs.size()) > kMaxNeighbours) {
      std::nth_element(nbrs.begin(), nbrs.begin() + kMaxNeighbours, nbrs.end(),
                       [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
      nbrs.resize(kMaxNeighbours);
    }

    double best = 0;
    int best_u = -1;
    for (const auto& [wt, j] : nbrs) {
      const int q = pos[j];
      // The group: the parent node of q when it holds few tasks, else q alone.
      int node = L > 0 ? tree.ancestor(q, L - 1) : tree.ancestor(q, L);
      std::int64_t lo = slot_start[tree.first_pu[node]];
      std::int64_t hi = slot_start[tree.first_pu[node] + tree.num_pus_below[node]];
      if (hi - lo > kMaxGroup) {
        node = tree.ancestor(q, L);
        lo = slot_start[q];
        hi = slot_start[q + 1];
      }
      if (node_stamp[node] == stamp) continue;
      node_stamp[node] = stamp;
      std::int64_t count = hi - lo;
      std::int64_t first = 0;
      if (count > kMaxGroup) {  // a heavily oversubscribed PU: a window that moves with t
        first = (static_cast<std::int64_t>(t) * 2654435761LL) % count;
        count = kMaxGroup;
      }
      for (std::int64_t k = 0; k < count; ++k) {
        const int u = occ[lo + (first + k) % (hi - lo)];
        const int r = pos[u];
        if (r == p) continue;
        if (!tree.swappable(p, r)) continue;
        if (pu_stamp[r] != stamp) {
          pu_stamp[r] = stamp;
          pu_cost[r] = cost_at(t, r);
          work += g.degree(t);
        }
        double cur_u = 0, mv_u = 0, w_tu = 0;
        for (std::int64_t e = g.xadj[u]; e < g.xadj[u + 1]; ++e) {
          const int k2 = g.adj[e];
          const int pk = pos[k2];
          cur_u += g.ew[e] * w[tree.common_level(r, pk)];
          mv_u += g.ew[e] * w[tree.common_level(p, pk)];
          if (k2 == t) w_tu += g.ew[e];
        }
        work += g.degree(u);
        const double delta = (pu_cost[r] - cur_t) + (mv_u - cur_u) + 2 * w_tu * (w[tree.common_level(p, r)] - wsame);
        if (delta < best - 1e-12 * (cur_t + cur_u)) {
          best = delta;
          best_u = u;
        }
      }
    }
    if (best_u < 0) return -1;
    const int u = best_u;
    std::swap(occ[slot_of[t]], occ[slot_of[u]]);
    std::swap(slot_of[t], slot_of[u]);
    std::swap(pos[t], pos[u]);
    return u;
  }
};

}  // namespace

void refine_swaps(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
                  std::uint64_t seed, std::int64_t max_work) {
  if (g.n < 2) return;
  Refiner r(g, tree, weights, task_pu);
  Rng rng(seed);
  std::vector<int> order = random_order(g.n, rng);
  // FIFO work queue of tasks to look at, each at most once in the queue.
  std::vector<int> queue(order);
  std::vector<std::uint8_t> queued(g.n, 1);
  std::size_t head = 0;
  std::int64_t work = 0;
  auto push = [&](int v) {
    if (!queued[v]) {
      queued[v] = 1;
      queue.push_back(v);
    }
  };
  while (head < queue.size() && work < max_work) {
    const int t = queue[head++];
    queued[t] = 0;
    // Compact the queue once its consumed prefix dominates.
    if (head > 4096 && head * 2 > queue.size()) {
      queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(head));
      head = 0;
    }
    const int u = r.improve(t, work);
    if (u < 0) continue;
    push(t);
    push(u);
    for (int x : {t, u})
      for (std::int64_t e = g.xadj[x]; e < g.xadj[x + 1]; ++e) push(g.adj[e]);
  }
}

}  // namespace canopy::cmap
