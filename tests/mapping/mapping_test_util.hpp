// Shared helpers of the mapping tests: communication matrices of the kinds
// the benchmark uses (stencils, permuted stencils, all-to-all, pipelines,
// random sparse graphs, hierarchical blocks) and placement checks. All
// generators are deterministic (fixed seeds).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"

namespace canopy::test {

// 2D 5-point stencil on an r × c grid (as close to square as n allows).
inline CommMatrix stencil2d(int n, double w = 100) {
  int r = static_cast<int>(std::sqrt(static_cast<double>(n)));
  while (r > 1 && n % r) --r;
  const int c = n / r;
  std::vector<Edge> e;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) {
      int t = i * c + j;
      if (j + 1 < c) e.push_back({t, t + 1, w});
      if (i + 1 < r) e.push_back({t, t + c, w});
    }
  return CommMatrix::from_edges(n, e);
}

// The same matrix with task ids permuted at random.
inline CommMatrix permuted(const CommMatrix& m, unsigned seed = 7) {
  std::vector<int> perm(m.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<Edge> e = m.edges();
  for (Edge& x : e) {
    x.i = perm[x.i];
    x.j = perm[x.j];
  }
  return CommMatrix::from_edges(m.size(), e);
}

// All-to-all with random weights in [1, 100].
inline CommMatrix all_to_all(int n, unsigned seed = 3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(1, 100);
  std::vector<Edge> e;
  e.reserve(static_cast<size_t>(n) * (n - 1) / 2);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) e.push_back({i, j, std::round(d(rng))});
  return CommMatrix::from_edges(n, e);
}

// A chain of n stages (each talks to the next), stage weights varying.
inline CommMatrix pipeline(int n) {
  std::vector<Edge> e;
  for (int i = 0; i + 1 < n; ++i) e.push_back({i, i + 1, 10.0 + (i % 3) * 5});
  return CommMatrix::from_edges(n, e);
}

// Random sparse graph, about `deg` neighbours per task, skewed weights.
inline CommMatrix random_sparse(int n, int deg = 4, unsigned seed = 11) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::exponential_distribution<double> w(0.05);
  std::vector<Edge> e;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < deg / 2; ++k) {
      int j = pick(rng);
      if (j != i) e.push_back({i, j, 1 + std::floor(w(rng))});
    }
  return CommMatrix::from_edges(n, e);
}

// Hierarchical blocks: tasks i, j with ids agreeing above bit b communicate
// weights[b] (weights[0] for pairs 2k, 2k+1, then groups of 4, 8, ...).
inline CommMatrix blocks(int n, const std::vector<double>& weights) {
  std::vector<Edge> e;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      int b = 0;
      while ((i >> (b + 1)) != (j >> (b + 1))) ++b;
      if (b < static_cast<int>(weights.size()) && weights[b] > 0) e.push_back({i, j, weights[b]});
    }
  return CommMatrix::from_edges(n, e);
}

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Load per PU of a task -> PU vector.
inline std::vector<int> loads(const Topology& topo, const std::vector<int>& task_pu) {
  std::vector<int> l(topo.num_pus(), 0);
  for (int p : task_pu) ++l.at(p);
  return l;
}

// Tasks per NUMA node.
inline std::vector<int> numa_loads(const Topology& topo, const std::vector<int>& task_pu) {
  std::vector<int> l(topo.num_numa_nodes(), 0);
  for (int p : task_pu) ++l.at(topo.pu(p).numa);
  return l;
}

// Tasks per core.
inline std::vector<int> core_loads(const Topology& topo, const std::vector<int>& task_pu) {
  std::vector<int> l(topo.num_cores(), 0);
  for (int p : task_pu) ++l.at(topo.pu(p).core);
  return l;
}

inline std::vector<int> range(int a, int b) {
  std::vector<int> v(b - a);
  std::iota(v.begin(), v.end(), a);
  return v;
}

}  // namespace canopy::test
