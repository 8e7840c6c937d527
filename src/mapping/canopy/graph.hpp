// The canopy policy's working graph: a weighted CSR graph whose vertices
// carry a weight (how many tasks a coarse vertex stands for), the induced
// subgraph the top-down recursion works on, and the small seeded generator
// that every "random" choice of the policy draws from (so that the same input
// gives the same placement every time).
#pragma once
#include <cstdint>
#include <vector>

namespace canopy {
class CommMatrix;
}

namespace canopy::cmap {

struct Graph {
  int n = 0;
  std::vector<std::int64_t> xadj{0};  // neighbours of v: adj/ew[xadj[v] .. xadj[v+1])
  std::vector<int> adj;
  std::vector<double> ew;             // edge weight (communication volume), both directions stored
  std::vector<int> vw;                // vertex weight (tasks)
  std::int64_t total_vw = 0;

  int degree(int v) const { return static_cast<int>(xadj[v + 1] - xadj[v]); }
  int max_vw() const;
};

// A communication matrix's CSR as a graph of tasks of weight 1 (one copy:
// O(edges)).
Graph graph_of(const CommMatrix& m);

// splitmix64: tiny, fast, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t s_;
};

// A seed derived from another and a small number (a child's index, a try):
// one splitmix64 step, so that nearby inputs give unrelated seeds.
inline std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A seeded random permutation of 0..n-1.
std::vector<int> random_order(int n, Rng& rng);

// The subgraph induced by `verts` (local vertex i = verts[i]). `scratch` must
// have g.n entries, all -1; it is left that way.
Graph induced_subgraph(const Graph& g, const std::vector<int>& verts, std::vector<int>& scratch);

// Sum over undirected edges whose ends are in different parts.
double cut_weight(const Graph& g, const std::vector<std::uint8_t>& part);

}  // namespace canopy::cmap
