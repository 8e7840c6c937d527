// Kernighan-Lin passes over swaps on the distance-weighted cost (see
// refine.hpp).
//
// Every slot is full, so a step swaps two tasks. A pass takes the best swap
// available even when it loses, locks both tasks for the rest of the pass,
// and is rolled back to its best prefix: a losing swap that lets a later one
// win is kept. That is what puts two heavy communicators on a core that two
// others held (the spread regime and non-integer oversubscription, where only
// some cores or PUs hold two tasks): the first swap brings one of them in,
// the second its partner. Greedy swap refinement (refine.cpp) stops before.
//
// Each task's best swap (partner among the tasks near its heaviest
// neighbours, exact gain) sits in a max-heap. After a swap the neighbours of
// the two tasks are re-evaluated at once; other entries may have gone stale
// (their partner moved) and are re-evaluated when they reach the top.
#include <algorithm>
#include <cmath>

#include "mapping/canopy/gain_heap.hpp"
#include "mapping/canopy/refine.hpp"

namespace canopy::cmap {

namespace {

constexpr int kMaxNeighbours = 16;  // heaviest neighbours whose places give partners
constexpr int kMaxGroup = 16;       // partners looked at per neighbour's core

struct KlRefiner {
  const Graph& g;
  const Tree& tree;
  const std::vector<double>& w;
  std::vector<int>& pos;
  const int L;
  const double wsame;

  std::vector<std::int64_t> slot_start;  // tasks per PU in PU order: a node's tasks are contiguous
  std::vector<int> occ;
  std::vector<std::int64_t> slot_of;
  std::vector<int> pu_stamp, node_stamp;
  std::vector<double> pu_cost;
  int stamp = 0;
  std::vector<std::pair<double, int>> nbrs;
  std::vector<int> partner;
  std::vector<std::uint32_t> locked;
  std::uint32_t lock = 0;
  bool neutral_ok = false;
  GainHeap heap;
  std::int64_t work = 0;

  KlRefiner(const Graph& g_, const Tree& t_, const std::vector<double>& w_, std::vector<int>& pos_)
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
    partner.assign(g.n, -1);
    locked.assign(g.n, 0);
  }

  double cost_at(int t, int p) const {
    double c = 0;
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) c += g.ew[e] * w[tree.common_level(p, pos[g.adj[e]])];
    return c;
  }

  // Best swap for t with an unlocked task near t's heaviest neighbours.
  std::pair<double, int> best_swap(int t) {
    const int p = pos[t];
    if (g.xadj[t] == g.xadj[t + 1]) return {0, -1};
    ++stamp;
    const double cur_t = cost_at(t, p);
    work += g.degree(t);
    nbrs.clear();
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) nbrs.emplace_back(g.ew[e], g.adj[e]);
    if (static_cast<int>(nbrs.size()) > kMaxNeighbours) {
      std::nth_element(nbrs.begin(), nbrs.begin() + kMaxNeighbours, nbrs.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      nbrs.resize(kMaxNeighbours);
    }
    double best = -1e300;
    int best_u = -1;
    for (const auto& nb : nbrs) {
      const int q = pos[nb.second];
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
      std::int64_t count = hi - lo, first = 0;
      if (count > kMaxGroup) {  // a heavily oversubscribed PU: a window that moves with t
        first = (static_cast<std::int64_t>(t) * 2654435761LL) % count;
        count = kMaxGroup;
      }
      for (std::int64_t k = 0; k < count; ++k) {
        const int u = occ[lo + (first + k) % (hi - lo)];
        const int r = pos[u];
        if (r == p || locked[u] == lock) continue;
        if (!tree.swappable(p, r)) continue;
        // Two lone tasks on PUs of one core: swapping them changes nothing,
        // and locking them would waste them for this pass.
        if (L > 0 && tree.capacity[p] == 1 && tree.capacity[r] == 1 && tree.ancestor(p, L - 1) == tree.ancestor(r, L - 1))
          continue;
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
        const double gain =
            (cur_t - pu_cost[r]) + (cur_u - mv_u) - 2 * w_tu * (w[tree.common_level(p, r)] - wsame);
        // Neutral swaps are left out: they change nothing now and would lock
        // two tasks that a later, useful swap may need.
        if (gain > best && (neutral_ok || std::abs(gain) > 1e-12 * (cur_t + cur_u))) {
          best = gain;
          best_u = u;
        }
      }
    }
    return {best, best_u};
  }

  void refresh(int t) {
    if (locked[t] == lock) return;
    auto [gain, u] = best_swap(t);
    partner[t] = u;
    if (u < 0) {
      if (heap.contains(t)) heap.remove(t);
    } else if (heap.contains(t)) {
      heap.update(t, gain);
    } else {
      heap.push(t, gain);
    }
  }

  void swap_tasks(int t, int u) {
    std::swap(occ[slot_of[t]], occ[slot_of[u]]);
    std::swap(slot_of[t], slot_of[u]);
    std::swap(pos[t], pos[u]);
  }

  // One pass; returns the cost decrease it kept (>= 0).
  double pass(std::uint64_t seed, int limit, std::int64_t max_work, bool neutral) {
    ++lock;
    neutral_ok = neutral;
    heap.reset(g.n, seed);
    for (int t = 0; t < g.n; ++t) refresh(t);
    std::vector<std::pair<int, int>> swaps;
    double total = 0, best_total = 0;
    std::size_t best_len = 0;
    int since_best = 0;
    while (!heap.empty() && work < max_work) {
      const int t = heap.top();
      const double key = heap.top_key();
      // Lazy re-evaluation: an entry whose partner got locked or whose gain
      // fell goes back in the heap with its current best.
      auto [gain, u] = best_swap(t);
      if (u < 0) {
        heap.remove(t);
        continue;
      }
      if (u != partner[t] || gain < key - 1e-12 * std::abs(key)) {
        partner[t] = u;
        heap.update(t, gain);
        if (heap.top() != t) continue;
      }
      heap.remove(t);
      if (heap.contains(u)) heap.remove(u);
      swap_tasks(t, u);
      locked[t] = lock;
      swaps.emplace_back(t, u);
      total += gain;
      refresh(u);
      for (int x : {t, u})
        for (std::int64_t e = g.xadj[x]; e < g.xadj[x + 1]; ++e) refresh(g.adj[e]);
      if (total > best_total + 1e-12 * std::abs(best_total)) {
        best_total = total;
        best_len = swaps.size();
        since_best = 0;
      } else if (++since_best > limit) {
        break;
      }
    }
    for (std::size_t i = swaps.size(); i > best_len; --i) swap_tasks(swaps[i - 1].first, swaps[i - 1].second);
    return best_total;
  }
};

}  // namespace

void refine_kl(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
               std::uint64_t seed, std::int64_t max_work, int max_passes) {
  if (g.n < 2) return;
  KlRefiner r(g, tree, weights, task_pu);
  const int limit = std::clamp(g.n / 20, 50, 500);
  // Passes alternate between taking neutral swaps (they cross plateaus, as
  // in long pipelines) and leaving them out (they lock tasks that a losing
  // swap followed by a winning one needs); stop when neither finds a gain.
  int idle = 0;
  for (int p = 0; p < max_passes && r.work < max_work && idle < 2; ++p) {
    const double gained = r.pass(seed + static_cast<std::uint64_t>(p), limit, max_work, p % 2 == 1);
    idle = gained > 0 ? 0 : idle + 1;
  }
}

}  // namespace canopy::cmap
