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
// neighbours, exact gain: swap_state.hpp) sits in a max-heap. After a swap the neighbours of
// the two tasks are re-evaluated at once; other entries may have gone stale
// (their partner moved) and are re-evaluated when they reach the top.
#include <algorithm>
#include <cmath>

#include "mapping/canopy/gain_heap.hpp"
#include "mapping/canopy/refine.hpp"
#include "mapping/canopy/swap_state.hpp"

namespace canopy::cmap {

namespace {

constexpr int kMaxNeighbours = 16;  // heaviest neighbours whose places give partners
constexpr int kMaxGroup = 16;       // partners looked at per neighbour's core

struct KlRefiner {
  SwapState st;
  const Graph& g;
  const Tree& tree;
  const int L;
  std::vector<int> partner;
  std::vector<std::uint32_t> locked;
  std::uint32_t lock = 0;
  bool neutral_ok = false;
  GainHeap heap;

  KlRefiner(const Graph& g_, const Tree& t_, const std::vector<double>& w_, std::vector<int>& pos_)
      : st(g_, t_, w_, pos_), g(g_), tree(t_), L(t_.leaf_level()) {
    partner.assign(g.n, -1);
    locked.assign(g.n, 0);
  }

  // Best swap for t with an unlocked task near t's heaviest neighbours.
  std::pair<double, int> best_swap(int t) {
    const int p = st.pos[t];
    double best = -1e300;
    int best_u = -1;
    st.for_each_partner(
        t, kMaxNeighbours, kMaxGroup,
        [&](int u, int r) {
          // Two lone tasks on PUs of one core: swapping them changes
          // nothing, and locking them would waste them for this pass.
          return locked[u] == lock || (L > 0 && tree.capacity[p] == 1 && tree.capacity[r] == 1 &&
                                       tree.ancestor(p, L - 1) == tree.ancestor(r, L - 1));
        },
        [&](int u, double gain, double scale) {
          // Neutral swaps are left out unless asked for: they change nothing
          // now and would lock two tasks that a later, useful swap may need.
          if (gain > best && (neutral_ok || std::abs(gain) > 1e-12 * scale)) {
            best = gain;
            best_u = u;
          }
        });
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
    while (!heap.empty() && st.work < max_work) {
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
      st.swap_tasks(t, u);
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
    for (std::size_t i = swaps.size(); i > best_len; --i) st.swap_tasks(swaps[i - 1].first, swaps[i - 1].second);
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
  for (int p = 0; p < max_passes && r.st.work < max_work && idle < 2; ++p) {
    const double gained = r.pass(seed + static_cast<std::uint64_t>(p), limit, max_work, p % 2 == 1);
    idle = gained > 0 ? 0 : idle + 1;
  }
}

}  // namespace canopy::cmap
