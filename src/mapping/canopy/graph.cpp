// Helpers on the canopy policy's working graph (see graph.hpp).
#include "mapping/canopy/graph.hpp"

#include <algorithm>
#include <numeric>

#include "canopy/comm_matrix.hpp"

namespace canopy::cmap {

Graph graph_of(const CommMatrix& m) {
  Graph g;
  g.n = static_cast<int>(m.size());
  g.xadj = m.row_ptr();
  g.adj = m.cols();
  g.ew = m.weights();
  g.vw.assign(static_cast<std::size_t>(g.n), 1);
  g.total_vw = g.n;
  return g;
}

int Graph::max_vw() const {
  int m = 0;
  for (int w : vw) m = std::max(m, w);
  return m;
}

std::vector<int> random_order(int n, Rng& rng) {
  std::vector<int> p(n);
  std::iota(p.begin(), p.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  return p;
}

Graph induced_subgraph(const Graph& g, const std::vector<int>& verts, std::vector<int>& scratch) {
  Graph s;
  s.n = static_cast<int>(verts.size());
  for (int i = 0; i < s.n; ++i) scratch[verts[i]] = i;
  std::int64_t m = 0;
  for (int v : verts)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) m += scratch[g.adj[e]] >= 0;
  s.xadj.resize(s.n + 1);
  s.adj.resize(m);
  s.ew.resize(m);
  s.vw.resize(s.n);
  std::int64_t k = 0;
  for (int i = 0; i < s.n; ++i) {
    int v = verts[i];
    s.xadj[i] = k;
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e) {
      int l = scratch[g.adj[e]];
      if (l >= 0) {
        s.adj[k] = l;
        s.ew[k] = g.ew[e];
        ++k;
      }
    }
    s.vw[i] = g.vw[v];
    s.total_vw += g.vw[v];
  }
  s.xadj[s.n] = k;
  for (int v : verts) scratch[v] = -1;
  return s;
}

double cut_weight(const Graph& g, const std::vector<std::uint8_t>& part) {
  double c = 0;
  for (int v = 0; v < g.n; ++v)
    for (std::int64_t e = g.xadj[v]; e < g.xadj[v + 1]; ++e)
      if (part[g.adj[e]] != part[v]) c += g.ew[e];
  return c / 2;
}

}  // namespace canopy::cmap
