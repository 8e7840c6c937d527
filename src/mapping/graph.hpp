// canopy::grouping::Graph: the symmetric weighted graph the grouping policies
// work on, in CSR form (rows sorted by column). Level 0 is a view on the
// CommMatrix (no copy); every level above is the aggregate of the one below
// (groups become vertices, weights between groups add up, weights inside a
// group disappear), built in O(edges).
#pragma once
#include <cstdint>
#include <vector>

namespace canopy {
class CommMatrix;
}

namespace canopy::grouping {

class Graph {
 public:
  Graph() = default;
  static Graph view(const CommMatrix& m);
  // Owning graph from CSR arrays (rows sorted by column, both directions).
  static Graph from_csr(int n, std::vector<std::int64_t> ptr, std::vector<int> adj, std::vector<double> w);

  // Moves keep the views valid (vector moves keep their buffers); copies would not.
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  int size() const { return n_; }
  std::int64_t begin(int i) const { return ptr_[i]; }
  std::int64_t end(int i) const { return ptr_[i + 1]; }
  int degree(int i) const { return static_cast<int>(ptr_[i + 1] - ptr_[i]); }
  int col(std::int64_t e) const { return adj_[e]; }
  double weight(std::int64_t e) const { return w_[e]; }
  double rowsum(int i) const { return rowsum_[i]; }
  // Weight between i and j, 0 when none (binary search in row i).
  double between(int i, int j) const;

  // The graph of `groups` (members per group; group_of[v] = its group).
  Graph aggregate(const std::vector<std::vector<int>>& groups, const std::vector<int>& group_of) const;

 private:
  void compute_rowsums();
  int n_ = 0;
  const std::int64_t* ptr_ = nullptr;
  const int* adj_ = nullptr;
  const double* w_ = nullptr;
  std::vector<std::int64_t> own_ptr_;
  std::vector<int> own_adj_;
  std::vector<double> own_w_;
  std::vector<double> rowsum_;
};

}  // namespace canopy::grouping
