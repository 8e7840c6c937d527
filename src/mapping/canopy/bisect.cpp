// Multilevel bisection with exact part weights (see bisect.hpp).
#include "mapping/canopy/bisect.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "mapping/canopy/coarsen.hpp"

namespace canopy::cmap {

namespace {

std::int64_t weight0(const Graph& g, const std::vector<std::uint8_t>& part) {
  std::int64_t w = 0;
  for (int v = 0; v < g.n; ++v)
    if (part[v] == 0) w += g.vw[v];
  return w;
}

// Exact bisection of a tiny graph: every subset of the right weight. The cut
// of S is the sum of weighted degrees in S minus twice the weight inside S.
std::vector<std::uint8_t> exact_bisection(const Graph& g, std::int64_t target0) {
  const int n = g.n;
  double w[kExactBisection][kExactBisection] = {};
  double deg[kExactBisection] = {};
  bool unit = true;
  for (int v = 0; v < n; ++v) {
    unit = unit && g.vw[v] == 1;
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      w[v][g.adj[e]] += g.ew[e];
      deg[v] += g.ew[e];
    }
  }
  unsigned best_mask = 0;
  std::int64_t best_excess = -1;
  double best_cut = 0;
  auto consider = [&](unsigned mask, std::int64_t excess) {
    if (best_excess >= 0 && excess > best_excess) return;
    double cut = 0;
    for (unsigned a = mask; a; a &= a - 1) {
      const int i = __builtin_ctz(a);
      cut += deg[i];
      for (unsigned b = a & (a - 1); b; b &= b - 1) cut -= 2 * w[i][__builtin_ctz(b)];
    }
    if (best_excess < 0 || excess < best_excess || cut < best_cut) {
      best_excess = excess;
      best_cut = cut;
      best_mask = mask;
    }
  };
  if (unit) {
    // Only the subsets of exactly target0 vertices (Gosper's hack).
    const int k = static_cast<int>(std::clamp<std::int64_t>(target0, 0, n));
    if (k == 0) {
      consider(0, 0);
    } else {
      for (unsigned mask = (1u << k) - 1; mask < (1u << n);) {
        consider(mask, 0);
        const unsigned c = mask & (~mask + 1), r = mask + c;
        mask = (((r ^ mask) >> 2) / c) | r;
      }
    }
  } else {
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      std::int64_t wt = 0;
      for (int i = 0; i < n; ++i)
        if (mask >> i & 1) wt += g.vw[i];
      consider(mask, std::llabs(wt - target0));
    }
  }
  std::vector<std::uint8_t> part(n);
  for (int i = 0; i < n; ++i) part[i] = (best_mask >> i & 1) ? 0 : 1;
  return part;
}

}  // namespace

// Greedy graph growing: part 0 grows from `start` by always adding the
// frontier vertex that most reduces the cut, until it weighs `target0`.
// Disconnected graphs restart from the next vertex of `order`.
void Bisector::grow(const Graph& g, int start, std::int64_t target0, const std::vector<int>& order,
                    std::uint64_t seed, std::vector<std::uint8_t>& part) {
  const int n = g.n;
  part.assign(n, 1);
  // in_ = weighted degree, ex_ = connection to part 0 (the arrays are free here).
  in_.assign(n, 0);
  ex_.assign(n, 0);
  for (int v = 0; v < n; ++v)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) in_[v] += g.ew[e];
  GainHeap& heap = heap_[0];
  heap.reset(n, seed);
  std::int64_t pw0 = 0;
  std::size_t next = 0;
  heap.push(start, -in_[start]);
  while (pw0 < target0) {
    int v;
    if (!heap.empty()) {
      v = heap.top();
      heap.remove(v);
    } else {
      while (next < order.size() && part[order[next]] == 0) ++next;
      if (next == order.size()) break;
      v = order[next];
    }
    // Stop rather than overshoot by more than we are short.
    if (pw0 > 0 && pw0 + g.vw[v] - target0 > target0 - pw0) break;
    part[v] = 0;
    pw0 += g.vw[v];
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      const int u = g.adj[e];
      if (part[u] == 0) continue;
      ex_[u] += g.ew[e];
      const double gain = 2 * ex_[u] - in_[u];
      if (heap.contains(u)) heap.update(u, gain);
      else heap.push(u, gain);
    }
  }
}

std::vector<std::uint8_t> Bisector::initial(const Graph& g, std::int64_t target0, std::int64_t tol, int tries,
                                            std::uint64_t seed) {
  Rng rng(seed);
  const std::vector<int> order = random_order(g.n, rng);
  const std::int64_t target1 = g.total_vw - target0;
  std::vector<std::uint8_t> best, part;
  std::int64_t best_excess = 0;
  double best_cut = 0;
  tries = std::max(1, std::min(tries, g.n));
  for (int t = 0; t < tries; ++t) {
    // Alternate which side grows: for unequal targets the two give different shapes.
    const bool grow_one = (t & 1) && target0 != target1;
    grow(g, order[t], grow_one ? target1 : target0, order, seed + t, part);
    if (grow_one)
      for (auto& p : part) p ^= 1;
    const double cut = fm_refine(g, part, target0, tol, params_.fm_passes, seed + 1000 + t);
    const std::int64_t excess = std::max<std::int64_t>(0, std::llabs(weight0(g, part) - target0) - tol);
    if (best.empty() || excess < best_excess || (excess == best_excess && cut < best_cut)) {
      best_excess = excess;
      best_cut = cut;
      best.swap(part);
    }
  }
  return best;
}

double Bisector::fm_refine(const Graph& g, std::vector<std::uint8_t>& part, std::int64_t target0,
                           std::int64_t tol_final, int max_passes, std::uint64_t seed) {
  const int n = g.n;
  in_.assign(n, 0);
  ex_.assign(n, 0);
  if (locked_.size() < static_cast<std::size_t>(n)) locked_.resize(n, lock_stamp_);
  std::vector<double>& in = in_;
  std::vector<double>& ex = ex_;
  double cut = 0;
  std::int64_t pw0 = 0;
  int max_vw = 1;
  for (int v = 0; v < n; ++v) {
    if (part[v] == 0) pw0 += g.vw[v];
    max_vw = std::max(max_vw, g.vw[v]);
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      if (part[g.adj[e]] == part[v]) in[v] += g.ew[e];
      else ex[v] += g.ew[e];
    }
    cut += ex[v];
  }
  cut /= 2;
  const std::int64_t tol_move = std::max<std::int64_t>(tol_final, max_vw);
  // A pass stops after this many moves without a new best state.
  const int limit = std::clamp(n / 50, 30, 150);
  auto excess_of = [&](std::int64_t w0) { return std::max<std::int64_t>(0, std::llabs(w0 - target0) - tol_final); };

  auto move = [&](int v) {
    const std::uint8_t from = part[v];
    part[v] ^= 1;
    pw0 += from == 0 ? -g.vw[v] : g.vw[v];
    cut -= ex[v] - in[v];
    std::swap(in[v], ex[v]);
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      const int u = g.adj[e];
      const double w = g.ew[e];
      if (part[u] == from) {
        in[u] -= w;
        ex[u] += w;
      } else {
        in[u] += w;
        ex[u] -= w;
      }
    }
  };

  for (int pass = 0; pass < max_passes; ++pass) {
    for (int s = 0; s < 2; ++s) heap_[s].reset(n, seed + pass * 2 + s);
    const std::uint32_t lock = ++lock_stamp_;
    moves_.clear();
    for (int v = 0; v < n; ++v)
      if (ex[v] > 0 || g.xadj[v] == g.xadj[v + 1]) heap_[part[v]].push_unordered(v, ex[v] - in[v]);
    heap_[0].heapify();
    heap_[1].heapify();

    const std::int64_t start_excess = excess_of(pw0);
    const double start_cut = cut;
    std::int64_t best_excess = start_excess;
    double best_cut = cut;
    std::size_t best_len = 0;
    int since_best = 0;
    int scan = 0;  // for forced moves when a side has no boundary vertex left

    for (;;) {
      const std::int64_t b = pw0 - target0;
      int from = -1;
      if (b > tol_move) {
        from = 0;
      } else if (b < -tol_move) {
        from = 1;
      } else {
        const bool ok0 = !heap_[0].empty() && std::llabs(b - g.vw[heap_[0].top()]) <= tol_move;
        const bool ok1 = !heap_[1].empty() && std::llabs(b + g.vw[heap_[1].top()]) <= tol_move;
        if (ok0 && ok1) {
          const double g0 = heap_[0].top_key(), g1 = heap_[1].top_key();
          if (g0 != g1) from = g0 > g1 ? 0 : 1;
          else from = std::llabs(b - g.vw[heap_[0].top()]) <= std::llabs(b + g.vw[heap_[1].top()]) ? 0 : 1;
        } else if (ok0) {
          from = 0;
        } else if (ok1) {
          from = 1;
        } else {
          break;
        }
      }
      int v = -1;
      if (!heap_[from].empty()) {
        v = heap_[from].top();
        heap_[from].remove(v);
      } else {
        while (scan < n && (locked_[scan] == lock || part[scan] != from)) ++scan;
        if (scan == n) break;
        v = scan;
      }
      move(v);
      locked_[v] = lock;
      moves_.push_back(v);
      for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
        const int u = g.adj[e];
        if (locked_[u] == lock) continue;
        const double gain = ex[u] - in[u];
        if (heap_[part[u]].contains(u)) heap_[part[u]].update(u, gain);
        else if (ex[u] > 0) heap_[part[u]].push(u, gain);
      }
      const std::int64_t exc = excess_of(pw0);
      if (exc < best_excess || (exc == best_excess && cut < best_cut - 1e-12 * std::abs(best_cut))) {
        best_excess = exc;
        best_cut = cut;
        best_len = moves_.size();
        since_best = 0;
      } else if (++since_best > limit) {
        break;
      }
    }
    for (std::size_t i = moves_.size(); i > best_len; --i) move(moves_[i - 1]);
    if (best_len == 0 || (best_excess == start_excess && !(best_cut < start_cut))) break;
  }
  return cut;
}

std::vector<std::uint8_t> Bisector::bisect(const Graph& g, std::int64_t target0, std::uint64_t seed) {
  if (g.n == 0) return {};
  if (g.n <= kExactBisection) return exact_bisection(g, target0);

  // Coarsen. A coarse vertex may not outweigh a third of the smaller side,
  // or the exact weights could not be met again after projection.
  const std::int64_t small_side = std::min(target0, g.total_vw - target0);
  const int max_vw = static_cast<int>(std::max<std::int64_t>(1, small_side / 3));
  Rng rng(seed);
  std::vector<Graph> graphs;
  std::vector<std::vector<int>> cmaps;
  const Graph* cur = &g;
  while (cur->n > params_.coarsen_to) {
    Graph coarse;
    std::vector<int> cmap;
    if (!coarsen_once(*cur, max_vw, rng, coarse, cmap, nullptr, params_.in_order)) break;
    graphs.push_back(std::move(coarse));
    cmaps.push_back(std::move(cmap));
    cur = &graphs.back();
  }

  // Coarse levels may be off balance by half their heaviest vertex; the input
  // level must be exact.
  auto tol_of = [](const Graph& h, bool finest) -> std::int64_t { return finest ? 0 : h.max_vw() / 2; };
  std::vector<std::uint8_t> part = initial(*cur, target0, tol_of(*cur, graphs.empty()),
                                           graphs.empty() ? params_.small_tries : params_.init_tries,
                                           seed ^ 0x5bd1e995u);

  for (int level = static_cast<int>(graphs.size()) - 1; level >= 0; --level) {
    const Graph& fine = level == 0 ? g : graphs[level - 1];
    std::vector<std::uint8_t> fpart(fine.n);
    for (int v = 0; v < fine.n; ++v) fpart[v] = part[cmaps[level][v]];
    part.swap(fpart);
    graphs.pop_back();  // free the coarse graph once projected
    fm_refine(fine, part, target0, tol_of(fine, level == 0), params_.fm_passes, seed + 7919u * (level + 1));
  }

  // V-cycles: coarsen again without ever merging across the cut, so that the
  // partition carries down unchanged, and refine on the way back up: at the
  // coarse levels FM moves whole clusters, which escapes the local minima
  // that single-vertex moves at the finest level are stuck in.
  cmaps.clear();
  // Up to vcycles cycles; after the first `vcycles_min`, stop at the first
  // cycle that does not lower the cut (random graphs settle at once, grids
  // keep straightening their cut for several cycles).
  double cur_cut = params_.vcycles > 0 ? cut_weight(g, part) : 0;
  for (int cycle = 0; cycle < params_.vcycles && g.n > params_.coarsen_to; ++cycle) {
    std::vector<std::vector<std::uint8_t>> parts{part};
    cur = &g;
    while (cur->n > params_.coarsen_to) {
      Graph coarse;
      std::vector<int> cmap;
      if (!coarsen_once(*cur, max_vw, rng, coarse, cmap, &parts.back(), params_.in_order)) break;
      std::vector<std::uint8_t> cpart(coarse.n);
      for (int v = 0; v < cur->n; ++v) cpart[cmap[v]] = parts.back()[v];
      graphs.push_back(std::move(coarse));
      cmaps.push_back(std::move(cmap));
      parts.push_back(std::move(cpart));
      cur = &graphs.back();
    }
    if (graphs.empty()) break;
    std::vector<std::uint8_t> p = parts.back();
    fm_refine(*cur, p, target0, tol_of(*cur, false), params_.fm_passes, seed + 104729u * (cycle + 1));
    for (int level = static_cast<int>(graphs.size()) - 1; level >= 0; --level) {
      const Graph& fine = level == 0 ? g : graphs[level - 1];
      std::vector<std::uint8_t> fpart(fine.n);
      for (int v = 0; v < fine.n; ++v) fpart[v] = p[cmaps[level][v]];
      p.swap(fpart);
      graphs.pop_back();
      cmaps.pop_back();
      fm_refine(fine, p, target0, tol_of(fine, level == 0), params_.fm_passes,
                seed + 7919u * (level + 1) + 104729u * (cycle + 1));
    }
    const std::int64_t ex_old = std::llabs(weight0(g, part) - target0), ex_new = std::llabs(weight0(g, p) - target0);
    const double new_cut = cut_weight(g, p);
    const bool better = ex_new < ex_old || (ex_new == ex_old && new_cut < cur_cut);
    if (better) {
      part.swap(p);
      cur_cut = new_cut;
    } else if (cycle + 1 >= params_.vcycles_min) {
      break;
    }
  }
  return part;
}

std::vector<std::uint8_t> bisect(const Graph& g, std::int64_t target0, std::uint64_t seed,
                                 const BisectParams& params) {
  Bisector b(params);
  return b.bisect(g, target0, seed);
}

}  // namespace canopy::cmap
