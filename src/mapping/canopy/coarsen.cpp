// Heavy-edge matching and contraction (see coarsen.hpp).
#include "mapping/canopy/coarsen.hpp"

namespace canopy::cmap {

bool coarsen_once(const Graph& g, int max_vw, Rng& rng, Graph& coarse, std::vector<int>& cmap,
                  const std::vector<std::uint8_t>* keep, bool in_order) {
  const int n = g.n;
  std::vector<int> match(n, -1);
  std::vector<int> order;
  if (in_order) {
    order.resize(n);
    for (int v = 0; v < n; ++v) order[v] = v;
  } else {
    order = random_order(n, rng);
  }
  int nc = 0;
  for (int v : order) {
    if (match[v] >= 0) continue;
    int best = -1;
    double best_r = -1;
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      int u = g.adj[e];
      if (match[u] >= 0 || g.vw[u] + g.vw[v] > max_vw) continue;
      if (keep && (*keep)[u] != (*keep)[v]) continue;
      double r = g.ew[e] * g.ew[e] / (static_cast<double>(g.vw[u]) * g.vw[v]);
      if (r > best_r) {
        best_r = r;
        best = u;
      }
    }
    if (best >= 0) {
      match[v] = best;
      match[best] = v;
    } else {
      match[v] = v;
    }
    ++nc;
  }
  if (nc > n - n / 10) return false;

  // Coarse ids in fine-vertex order, so that contraction reads g sequentially.
  cmap.assign(n, -1);
  std::vector<int> first(nc);
  int next = 0;
  for (int v = 0; v < n; ++v)
    if (cmap[v] < 0) {
      cmap[v] = cmap[match[v]] = next;
      first[next++] = v;
    }

  coarse = Graph{};
  coarse.n = nc;
  coarse.xadj.assign(nc + 1, 0);
  coarse.vw.assign(nc, 0);
  // Sized as we go: zero-filling m entries up front costs as much as the
  // contraction itself.
  coarse.adj.reserve(g.adj.size());
  coarse.ew.reserve(g.adj.size());
  coarse.total_vw = g.total_vw;
  std::vector<std::int64_t> where(nc, -1);
  std::int64_t k = 0;
  for (int c = 0; c < nc; ++c) {
    const std::int64_t start = k;
    int members[2] = {first[c], match[first[c]]};
    int count = members[0] == members[1] ? 1 : 2;
    for (int i = 0; i < count; ++i) {
      int v = members[i];
      coarse.vw[c] += g.vw[v];
      for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
        int cu = cmap[g.adj[e]];
        if (cu == c) continue;
        if (where[cu] < start) {
          where[cu] = k;
          coarse.adj.push_back(cu);
          coarse.ew.push_back(g.ew[e]);
          ++k;
        } else {
          coarse.ew[where[cu]] += g.ew[e];
        }
      }
    }
    coarse.xadj[c + 1] = k;
  }
  coarse.adj.shrink_to_fit();
  coarse.ew.shrink_to_fit();
  return true;
}

}  // namespace canopy::cmap
