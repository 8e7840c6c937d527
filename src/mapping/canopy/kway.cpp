// Multilevel k-way partitioning with exact part sizes (see kway.hpp).
#include "mapping/canopy/kway.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "mapping/canopy/gain_heap.hpp"

namespace canopy::cmap {

namespace {

std::int64_t excess(const std::vector<std::int64_t>& pw, const std::vector<std::int64_t>& targets) {
  std::int64_t e = 0;
  for (std::size_t i = 0; i < pw.size(); ++i) e += std::max<std::int64_t>(0, pw[i] - targets[i]);
  return e;
}

}  // namespace

std::size_t split_point(const std::vector<std::int64_t>& sizes, int rule, int depth) {
  const std::size_t k = sizes.size();
  if (k < 2) return k;
  // Which halving each rule uses at this depth of the recursion.
  int how = 0;  // 0 balanced, 1 a power of two first, 2 a third first
  switch (rule) {
    case 1: how = 1; break;
    case 2: how = 2; break;
    case 3: how = depth == 0 ? 0 : 1; break;
    case 4: how = depth == 0 ? 1 : 0; break;
    default: how = 0;
  }
  if (how != 0) {
    std::size_t m = 1;
    if (how == 1)
      while (m * 2 <= k / 2) m *= 2;
    else
      m = std::max<std::size_t>(1, (k + 1) / 3);
    if (m < k) return m;
  }
  std::int64_t total = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  std::size_t at = 1;
  std::int64_t best = -1, prefix = 0;
  for (std::size_t i = 1; i < k; ++i) {
    prefix += sizes[i - 1];
    const std::int64_t d = std::llabs(2 * prefix - total);
    if (best < 0 || d < best || (d == best && 2 * i <= k)) {
      best = d;
      at = i;
    }
  }
  return at;
}

namespace {

// The whole halving tree a rule gives, as a string of split points, so that
// rules that give the same tree are tried once.
void split_signature(const std::vector<std::int64_t>& sizes, int rule, int depth, std::vector<std::size_t>& out) {
  if (sizes.size() < 2) return;
  const std::size_t at = split_point(sizes, rule, depth);
  out.push_back(at);
  split_signature({sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(at)}, rule, depth + 1, out);
  split_signature({sizes.begin() + static_cast<std::ptrdiff_t>(at), sizes.end()}, rule, depth + 1, out);
}

}  // namespace

double KwayPartitioner::cut(const Graph& g, const std::vector<int>& part) {
  double c = 0;
  for (int v = 0; v < g.n; ++v)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e)
      if (part[g.adj[e]] != part[v]) c += g.ew[e];
  return c / 2;
}

void KwayPartitioner::recursive_bisection(const Graph& g, const std::vector<int>& parts,
                                          const std::vector<std::int64_t>& targets, int rule, int depth,
                                          std::uint64_t seed, const std::vector<int>& ids, std::vector<int>& part) {
  if (parts.size() == 1) {
    for (int v : ids) part[v] = parts[0];
    return;
  }
  std::vector<std::int64_t> sizes;
  for (int p : parts) sizes.push_back(targets[p]);
  const std::size_t at = split_point(sizes, rule, depth);
  const std::vector<int> left(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(at));
  const std::vector<int> right(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());
  std::int64_t target0 = 0;
  for (int p : left) target0 += targets[p];
  // Scale the target to the actual weight of this subgraph (coarse vertices
  // cannot always give every part its exact weight).
  std::int64_t want = 0;
  for (int p : parts) want += targets[p];
  if (want != g.total_vw && want > 0)
    target0 = static_cast<std::int64_t>(std::llround(static_cast<double>(target0) * g.total_vw / want));
  const std::vector<std::uint8_t> side = bisector_.bisect(g, target0, seed);
  std::vector<int> scratch(g.n, -1);
  for (int s = 0; s < 2; ++s) {
    std::vector<int> local, sub_ids;
    for (int v = 0; v < g.n; ++v)
      if (side[v] == s) {
        local.push_back(v);
        sub_ids.push_back(ids[v]);
      }
    const Graph sub = induced_subgraph(g, local, scratch);
    std::vector<int> local_ids(sub.n);
    std::iota(local_ids.begin(), local_ids.end(), 0);
    std::vector<int> sub_part(sub.n, -1);
    recursive_bisection(sub, s == 0 ? left : right, targets, rule, depth + 1, mix_seed(seed, s + 1), local_ids, sub_part);
    for (int i = 0; i < sub.n; ++i) part[sub_ids[i]] = sub_part[i];
  }
}

void KwayPartitioner::refine(const Graph& g, std::vector<int>& part, const std::vector<std::int64_t>& targets,
                               std::int64_t tol, int passes, std::uint64_t seed) {
  const int k = static_cast<int>(targets.size());
  conn_.assign(k, 0);
  std::vector<std::int64_t> pw(k, 0);
  for (int v = 0; v < g.n; ++v) pw[part[v]] += g.vw[v];
  Rng rng(seed);
  std::vector<int> order = random_order(g.n, rng);
  for (int pass = 0; pass < passes; ++pass) {
    int moved = 0;
    for (int v : order) {
      const int a = part[v];
      touched_.clear();
      bool boundary = false;
      for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
        const int b = part[g.adj[e]];
        if (conn_[b] == 0) touched_.push_back(b);
        conn_[b] += g.ew[e];
        boundary = boundary || b != a;
      }
      if (boundary) {
        const double own = conn_[a];
        const int w = g.vw[v];
        int best = -1;
        double best_gain = 0;
        const bool a_ok = pw[a] - w >= targets[a] - tol;
        for (int b : touched_) {
          if (b == a) continue;
          const double gain = conn_[b] - own;
          const bool fits = pw[b] + w <= targets[b] + tol;
          // Balance first: a move that makes an off-balance pair of parts
          // better balanced is taken even at no gain.
          const bool evens = (pw[a] - targets[a]) - (pw[b] - targets[b]) > w;
          if (!fits && !evens) continue;
          if (!a_ok && !evens) continue;
          if (gain > best_gain || (gain == best_gain && best < 0 && evens && gain >= 0)) {
            best_gain = gain;
            best = b;
          }
        }
        if (best >= 0 && (best_gain > 0 || (pw[a] - targets[a]) - (pw[best] - targets[best]) > w)) {
          part[v] = best;
          pw[a] -= w;
          pw[best] += w;
          ++moved;
        }
      }
      for (int b : touched_) conn_[b] = 0;
    }
    if (moved == 0) break;
  }
}

void KwayPartitioner::rebalance(const Graph& g, std::vector<int>& part, const std::vector<std::int64_t>& targets) {
  const int k = static_cast<int>(targets.size());
  std::vector<std::int64_t> pw(k, 0);
  for (int v = 0; v < g.n; ++v) pw[part[v]] += g.vw[v];
  if (excess(pw, targets) == 0) return;
  conn_.assign(k, 0);

  // The best move of a vertex of an overweight part into an underweight one:
  // preferably a part it is connected to, else any underweight part.
  auto best_move = [&](int v, double& gain) -> int {
    const int a = part[v];
    touched_.clear();
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      const int b = part[g.adj[e]];
      if (conn_[b] == 0) touched_.push_back(b);
      conn_[b] += g.ew[e];
    }
    const double own = conn_[a];
    int best = -1;
    gain = -1e300;
    for (int b : touched_)
      if (b != a && pw[b] + g.vw[v] <= targets[b] && conn_[b] - own > gain) {
        gain = conn_[b] - own;
        best = b;
      }
    for (int b : touched_) conn_[b] = 0;
    if (best < 0)
      for (int b = 0; b < k; ++b)
        if (pw[b] + g.vw[v] <= targets[b]) {
          gain = -own;
          best = b;
          break;
        }
    return best;
  };

  GainHeap heap;
  heap.reset(g.n, 0x7265626cULL);
  std::vector<int> target(g.n, -1);
  for (int v = 0; v < g.n; ++v)
    if (pw[part[v]] > targets[part[v]]) {
      double gain;
      target[v] = best_move(v, gain);
      if (target[v] >= 0) heap.push(v, gain);
    }
  while (!heap.empty() && excess(pw, targets) > 0) {
    const int v = heap.top();
    const double key = heap.top_key();
    const int a = part[v];
    if (pw[a] <= targets[a]) {  // its part got light enough meanwhile
      heap.remove(v);
      continue;
    }
    double gain;
    const int b = best_move(v, gain);
    if (b < 0) {
      heap.remove(v);
      continue;
    }
    if (b != target[v] || gain < key) {  // stale entry: re-rank it
      target[v] = b;
      heap.update(v, gain);
      if (heap.top() != v) continue;
    }
    heap.remove(v);
    part[v] = b;
    pw[a] -= g.vw[v];
    pw[b] += g.vw[v];
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      const int u = g.adj[e];
      if (!heap.contains(u)) continue;
      double gu;
      const int tu = best_move(u, gu);
      target[u] = tu;
      if (tu < 0) heap.remove(u);
      else heap.update(u, gu);
    }
  }
}

std::vector<int> KwayPartitioner::partition(const Graph& g, const std::vector<std::int64_t>& targets,
                                            std::uint64_t seed) {
  const int k = static_cast<int>(targets.size());
  std::vector<int> part(g.n, 0);
  if (k == 1 || g.n == 0) return part;
  if (k == 2) {
    const std::vector<std::uint8_t> side = bisector_.bisect(g, targets[0], seed);
    for (int v = 0; v < g.n; ++v) part[v] = side[v];
    return part;
  }
  std::vector<int> all(k), ids(g.n), p(g.n);
  std::iota(all.begin(), all.end(), 0);
  std::iota(ids.begin(), ids.end(), 0);
  double best_cut = 0;
  const int groupings = std::max(1, std::min(params_.groupings, kGroupingRules));
  std::vector<std::vector<std::size_t>> tried;
  for (int rule = 0; rule < groupings; ++rule) {
    std::vector<std::size_t> sig;
    split_signature(targets, rule, 0, sig);
    if (std::find(tried.begin(), tried.end(), sig) != tried.end()) continue;
    tried.push_back(std::move(sig));
    recursive_bisection(g, all, targets, rule, 0, seed, ids, p);
    if (groupings == 1) {
      part.swap(p);
      break;
    }
    const double c = cut(g, p);
    if (rule == 0 || c < best_cut) {
      best_cut = c;
      part = p;
    }
  }
  // The halving order of recursive bisection is arbitrary (siblings are
  // equidistant): k-way moves between any two parts repair what it split
  // needlessly; they leave parts off by one, which rebalancing restores.
  refine(g, part, targets, 1, params_.refine_passes, mix_seed(seed, 17));
  rebalance(g, part, targets);
  return part;
}

}  // namespace canopy::cmap
