// Graph views, aggregation and lookups (see graph.hpp).
#include "mapping/graph.hpp"

#include <algorithm>

#include "canopy/comm_matrix.hpp"

namespace canopy::grouping {

Graph Graph::view(const CommMatrix& m) {
  Graph g;
  g.n_ = m.size();
  g.ptr_ = m.row_ptr().data();
  g.adj_ = m.cols().data();
  g.w_ = m.weights().data();
  g.compute_rowsums();
  return g;
}

Graph Graph::from_csr(int n, std::vector<std::int64_t> ptr, std::vector<int> adj, std::vector<double> w) {
  Graph g;
  g.n_ = n;
  g.own_ptr_ = std::move(ptr);
  g.own_adj_ = std::move(adj);
  g.own_w_ = std::move(w);
  g.ptr_ = g.own_ptr_.data();
  g.adj_ = g.own_adj_.data();
  g.w_ = g.own_w_.data();
  g.compute_rowsums();
  return g;
}

void Graph::compute_rowsums() {
  rowsum_.assign(n_, 0.0);
  for (int i = 0; i < n_; ++i)
    for (std::int64_t e = ptr_[i]; e < ptr_[i + 1]; ++e) rowsum_[i] += w_[e];
}

double Graph::between(int i, int j) const {
  // A complete row (dense matrix) holds every other vertex in order.
  if (degree(i) == n_ - 1 && i != j) return w_[ptr_[i] + (j < i ? j : j - 1)];
  const int* b = adj_ + ptr_[i];
  const int* e = adj_ + ptr_[i + 1];
  const int* it = std::lower_bound(b, e, j);
  return it != e && *it == j ? w_[ptr_[i] + (it - b)] : 0.0;
}

Graph Graph::aggregate(const std::vector<std::vector<int>>& groups, const std::vector<int>& group_of) const {
  const int ng = static_cast<int>(groups.size());
  std::vector<std::int64_t> ptr(ng + 1, 0);
  std::vector<int> adj;
  std::vector<double> w;
  // A dense accumulator indexed by group, reset through the touched list, so
  // that each group costs the degrees of its members, not ng.
  std::vector<double> acc(ng, 0.0);
  std::vector<int> stamp(ng, -1);
  std::vector<int> touched;
  for (int g = 0; g < ng; ++g) {
    touched.clear();
    for (int v : groups[g])
      for (std::int64_t e = ptr_[v]; e < ptr_[v + 1]; ++e) {
        const int h = group_of[adj_[e]];
        if (h == g) continue;
        if (stamp[h] != g) {
          stamp[h] = g;
          acc[h] = 0.0;
          touched.push_back(h);
        }
        acc[h] += w_[e];
      }
    // Rows in column order: sort the touched groups, or, when they are most
    // of the groups (dense matrices), sweep the stamps instead.
    if (touched.size() * 16 < static_cast<size_t>(ng)) {
      std::sort(touched.begin(), touched.end());
      for (int h : touched) {
        adj.push_back(h);
        w.push_back(acc[h]);
      }
    } else {
      for (int h = 0; h < ng; ++h)
        if (stamp[h] == g) {
          adj.push_back(h);
          w.push_back(acc[h]);
        }
    }
    ptr[g + 1] = static_cast<std::int64_t>(adj.size());
  }
  return from_csr(ng, std::move(ptr), std::move(adj), std::move(w));
}

}  // namespace canopy::grouping
