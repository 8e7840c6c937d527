// The canopy mapping algorithm: effort, starts, refinement, best of (see
// mapper.hpp).
#include "mapping/canopy/mapper.hpp"

#include <algorithm>
#include <cmath>

#include "mapping/canopy/kway.hpp"
#include "mapping/canopy/refine.hpp"
#include "mapping/canopy/top_down.hpp"

namespace canopy::cmap {

Effort default_effort(int n, std::int64_t m) {
  // Effort level q: one step less each time the graph (tasks + edges)
  // doubles past 12,500, so that the time grows about linearly with the size
  // of the input while small inputs get a much wider search.
  const std::int64_t size = std::max<std::int64_t>(1, static_cast<std::int64_t>(n) + m);
  int q = 0;
  while (q < 5 && (std::int64_t{400000} >> (q + 1)) >= size) ++q;
  Effort e;
  BisectParams& b = e.partition.bisect;
  if (q == 5) {
    e.starts = static_cast<int>(std::clamp<std::int64_t>(60000 / size, 1, 8));
    b.vcycles = 2;
    e.partition.groupings = kGroupingRules;
    e.level_rounds = 1;
    // Iterated local search: 96 rounds up to size 512 (where it finds the
    // optima that the starts miss), fewer above, so that its share of the
    // time stays bounded (dense all-to-all graphs gain nothing from it).
    e.ils_rounds = static_cast<int>(std::clamp<std::int64_t>(49152 / size, 4, 96));
    // As many cluster kicks: they find the regroupings that random kicks
    // miss (a pipeline case in the spread regime: 7% lower); three times as many
    // gained 0.01-0.03% more per regime. None on dense graphs (mean degree
    // above 16: all-to-all), where every task neighbours every other and a
    // cluster is any group: there they doubled the time for under 0.03%.
    e.cluster_rounds = m <= 8 * static_cast<std::int64_t>(n) ? e.ils_rounds : 0;
    return e;  // the defaults otherwise: 8/4 tries, 8 FM passes, full refinement budgets
  }
  e.starts = 1;
  e.partition.groupings = 1;
  e.level_rounds = 0;
  // One V-cycle stays even at 131,072 tasks: 1.7 s instead of 1.1 s there,
  // for a 1.5% lower cost.
  b.vcycles = 1;
  b.init_tries = 4;
  b.small_tries = 2;
  b.fm_passes = 3;
  e.swap_work = q >= 4 ? 10 : 5;
  e.kl_work = 10;
  // Kernighan-Lin finds the compound moves that slots of unequal capacity
  // call for (see kl_refine.cpp); with equal slots it gains little on large
  // graphs for its cost, so map_graph runs it there only on small ones.
  e.kl_passes = q >= 3 ? 1 : 0;
  e.kl_only_uneven = true;
  return e;
}

namespace {

// Grows a cluster of tasks from a seed along the heaviest edges, staying
// inside one subtree: the tasks that should move together.
struct ClusterGrower {
  const Graph& g;
  std::vector<int> mark;  // round stamp per task
  int stamp = 0;
  explicit ClusterGrower(const Graph& graph) : g(graph), mark(graph.n, 0) {}

  // Up to `size` tasks in subtree `node` at level `lv` (by pos), starting
  // at t. Equal edges (a stencil's) are told apart by a hash of the task and
  // `salt`, not by task ids: the numbering must not steer the result.
  std::vector<int> grow(const Tree& tree, const std::vector<int>& pos, int t, int size, int lv, int node,
                        std::uint64_t salt) {
    ++stamp;
    std::vector<int> out{t};
    mark[t] = stamp;
    while (static_cast<int>(out.size()) < size) {
      int pick = -1;
      double w = -1;
      std::uint64_t pick_key = 0;
      for (int v : out)
        for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
          const int u = g.adj[e];
          if (mark[u] == stamp || tree.ancestor(pos[u], lv) != node || g.ew[e] < w) continue;
          const std::uint64_t key = mix_seed(salt, static_cast<std::uint64_t>(u));
          if (g.ew[e] > w || key > pick_key) {
            w = g.ew[e];
            pick = u;
            pick_key = key;
          }
        }
      if (pick < 0) break;
      mark[pick] = stamp;
      out.push_back(pick);
    }
    return out;
  }
};

// Exchanges a cluster grown from a random task with a cluster of the same
// size grown from one of its neighbours in another subtree (of a random
// level): the compound move that brings a group of heavy communicators into
// the subtree whose slots suit them better (two doubled cores instead of
// one), which no sequence of improving single swaps reaches.
bool cluster_kick(const Graph& g, const Tree& tree, std::vector<int>& pos, ClusterGrower& grow, Rng& rng, int size) {
  const int t = rng.below(g.n);
  const int lv = 1 + rng.below(tree.num_levels - 2);  // a level with siblings above the cores' PUs
  const int a = tree.ancestor(pos[t], lv);
  // A neighbour of t (or of its cluster) outside a.
  const std::uint64_t salt = rng.next();
  std::vector<int> s = grow.grow(tree, pos, t, size, lv, a, salt);
  std::vector<int> outside;
  for (int v : s)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e)
      if (tree.ancestor(pos[g.adj[e]], lv) != a) outside.push_back(g.adj[e]);
  if (outside.empty()) return false;
  const int u = outside[rng.below(static_cast<int>(outside.size()))];
  const int b = tree.ancestor(pos[u], lv);
  std::vector<int> d = grow.grow(tree, pos, u, static_cast<int>(s.size()), lv, b, salt);
  const std::size_t k = std::min(s.size(), d.size());
  for (std::size_t i = 0; i < k; ++i) std::swap(pos[s[i]], pos[d[i]]);
  return k > 0;
}

}  // namespace

double numbering_locality(const Graph& g) {
  if (g.n < 2) return 1;
  double num = 0, den = 0;
  for (int v = 0; v < g.n; ++v)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      const int u = g.adj[e];
      if (u <= v) continue;
      num += g.ew[e] * std::log2(1.0 + (u - v));
      den += g.ew[e];
    }
  if (den <= 0) return 1;
  return num / (den * std::log2(static_cast<double>(g.n)));
}

std::vector<int> map_graph(const Graph& g, const Tree& tree, const std::vector<double>& weights,
                           const MapParams& params) {
  const std::int64_t m = static_cast<std::int64_t>(g.adj.size()) / 2;
  const Effort e = params.auto_effort ? default_effort(g.n, m) : params.effort;
  // Work budgets in edge visits: proportional to the graph, with a floor so
  // that small graphs are refined to convergence.
  const double size = static_cast<double>(g.n + 2 * m);
  const std::int64_t work = static_cast<std::int64_t>(e.swap_work * size) + e.work_floor;
  const std::int64_t kl_work = static_cast<std::int64_t>(e.kl_work * size) + 10 * e.work_floor;
  int lo = 0, hi = 0;
  for (int c : tree.capacity)
    if (c > 0) {
      lo = lo == 0 ? c : std::min(lo, c);
      hi = std::max(hi, c);
    }
  bool uneven = lo != hi;
  // Spread with SMT: some cores hold one task, others two.
  if (!uneven && tree.num_levels >= 2) {
    std::vector<int> per_core(tree.level.size(), 0);
    for (int p = 0; p < tree.num_pus; ++p) per_core[tree.ancestor(p, tree.num_levels - 2)] += tree.capacity[p];
    int clo = 0, chi = 0;
    for (int c : per_core)
      if (c > 0) {
        clo = clo == 0 ? c : std::min(clo, c);
        chi = std::max(chi, c);
      }
    uneven = clo != chi;
  }
  const bool run_kl = e.kl_passes > 0 && (uneven || !e.kl_only_uneven);
  std::vector<int> best;
  double best_cost = 0;
  auto run_start = [&](std::uint64_t seed, const KwayParams& partition) {
    std::vector<int> pos = top_down_partition(g, tree, seed, partition);
    refine_swaps(g, tree, weights, pos, seed ^ 0xa5a5a5a5ULL, work);
    if (run_kl) refine_kl(g, tree, weights, pos, seed ^ 0x5a5a5a5aULL, kl_work, e.kl_passes);
    if (e.level_rounds > 0) {
      refine_levels(g, tree, weights, pos, seed ^ 0x3c3c3c3cULL, kl_work, e.level_kl_passes);
      refine_swaps(g, tree, weights, pos, seed ^ 0xa5a5a5a6ULL, work);
      if (run_kl) refine_kl(g, tree, weights, pos, seed ^ 0x5a5a5a5bULL, kl_work, e.kl_passes);
    }
    const double c = weighted_cost(g, tree, weights, pos);
    // Strictly lower: on a tie the earlier start stays, so adding the order
    // start never changes a result it does not improve.
    if (best.empty() || c < best_cost) {
      best_cost = c;
      best = std::move(pos);
    }
  };
  for (int s = 0; s < std::max(1, e.starts); ++s)
    run_start(params.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(s), e.partition);
  // The order start: where the ids follow the graph's geometry (row-major
  // grids), coarsening in id order merges tasks into regular blocks, which
  // the seeded random orders only approach (ChoiceMap's pairing in id order
  // finds the optimal blocks of unpermuted grids). The result still does not
  // depend on the numbering for the worse: this start only adds a candidate.
  if (e.order_start && g.n > 1 && numbering_locality(g) < e.order_locality) {
    KwayParams ordered = e.partition;
    ordered.bisect.in_order = true;
    run_start(params.seed ^ 0x6f72646572ULL, ordered);  // "order"
  }
  // A kicked placement, refined, replaces the best when it is cheaper.
  auto refine_and_keep = [&](std::vector<int>& pos, std::uint64_t seed) {
    refine_swaps(g, tree, weights, pos, seed, work);
    if (run_kl) refine_kl(g, tree, weights, pos, seed ^ 0x5a5a5a5aULL, kl_work, e.kl_passes);
    const double c = weighted_cost(g, tree, weights, pos);
    if (c < best_cost) {
      best_cost = c;
      best = std::move(pos);
    }
  };
  // Iterated local search: the starts end in local optima of the swap
  // neighbourhood; a kick (random swaps anywhere) followed by the same
  // refinement explores the optima near the best one, which the independent
  // starts do not (a 20-task spread case reaches its optimum, found by
  // enumeration, only this way). Kicks of three sizes: small ones stay in the
  // basin, large ones leave it.
  if (e.ils_rounds > 0 && g.n >= 4) {
    Rng rng(params.seed ^ 0x696c73ULL);  // "ils"
    for (int r = 0; r < e.ils_rounds; ++r) {
      const double k = e.ils_kick * 0.5 * static_cast<double>(1 << (r % 3));
      const int kicks = std::max(2, static_cast<int>(k * g.n));
      std::vector<int> pos = best;
      for (int i = 0; i < kicks; ++i) std::swap(pos[rng.below(g.n)], pos[rng.below(g.n)]);
      refine_and_keep(pos, params.seed + 0x2545f4914f6cdd1dULL * static_cast<std::uint64_t>(r + 1));
    }
  }
  // Cluster kicks: the random kicks above scatter single tasks, and the
  // refinement brings them back to the same grouping. Where the top-down
  // split put a group of heavy communicators in the wrong one of two
  // subtrees of the same cut (a pipeline's heaviest chain in the package
  // with one doubled core while the next one has two, in the spread regime),
  // only moving the group as a whole reaches the better basin. Clusters of 2,
  // 4 and 8 tasks in turn.
  if (e.cluster_rounds > 0 && g.n >= 4 && tree.num_levels >= 3) {
    Rng rng(params.seed ^ 0x636c75ULL);  // "clu"
    ClusterGrower grow(g);
    for (int r = 0; r < e.cluster_rounds; ++r) {
      std::vector<int> pos = best;
      if (!cluster_kick(g, tree, pos, grow, rng, 1 << (1 + r % std::max(1, e.cluster_sizes)))) continue;
      refine_and_keep(pos, params.seed + 0x6a09e667f3bcc909ULL * static_cast<std::uint64_t>(r + 1));
    }
  }
  return best;
}

}  // namespace canopy::cmap
