// canopy_cluster_bench: MPI rank placement on clusters (issue 17's bar).
// On synthetic clusters of 4 to 64 nodes, each communication pattern is
// mapped by canopy (map_ranks, the default policy), by Open MPI's two
// standard orders (--map-by core: rank i on the i-th core, node after node;
// --map-by node: round robin over the nodes) and by Scotch on the same
// cluster tree (scotch_peer.hpp), and every placement is judged by the same
// cost model: the volume crossing the network and the weighted cost
// (cluster default weights, network first). Prints a Markdown table and how
// often canopy is lowest or tied; exit status 1 when canopy's network volume
// exceeds any competitor's and --check is given (the smoke test).
//
//   canopy_cluster_bench [--quick] [--check]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "scotch_peer.hpp"

namespace {

using canopy::CommMatrix;
using canopy::Edge;

// Near-square factors a x b = n (a <= b).
std::pair<int, int> grid2(int n) {
  int a = static_cast<int>(std::sqrt(static_cast<double>(n)));
  while (n % a) --a;
  return {a, n / a};
}

CommMatrix stencil2d(int n) {
  auto [a, b] = grid2(n);
  std::vector<Edge> e;
  for (int y = 0; y < a; ++y)
    for (int x = 0; x < b; ++x) {
      const int r = y * b + x;
      if (x + 1 < b) e.push_back({r, r + 1, 1000});
      if (y + 1 < a) e.push_back({r, r + b, 1000});
    }
  return CommMatrix::from_edges(n, e);
}

CommMatrix stencil3d(int n) {
  // n = a * b * c, near cubic.
  int a = static_cast<int>(std::cbrt(static_cast<double>(n)));
  while (n % a) --a;
  auto [b, c] = grid2(n / a);
  std::vector<Edge> e;
  for (int z = 0; z < a; ++z)
    for (int y = 0; y < b; ++y)
      for (int x = 0; x < c; ++x) {
        const int r = (z * b + y) * c + x;
        if (x + 1 < c) e.push_back({r, r + 1, 1000});
        if (y + 1 < b) e.push_back({r, r + c, 1000});
        if (z + 1 < a) e.push_back({r, r + b * c, 1000});
      }
  return CommMatrix::from_edges(n, e);
}

CommMatrix ring(int n) {
  std::vector<Edge> e;
  for (int r = 0; r < n; ++r) e.push_back({r, (r + 1) % n, 1000});
  return CommMatrix::from_edges(n, e);
}

// Binary reduction tree: rank r talks to its parent (r - 1) / 2.
CommMatrix tree(int n) {
  std::vector<Edge> e;
  for (int r = 1; r < n; ++r) e.push_back({(r - 1) / 2, r, 1000});
  return CommMatrix::from_edges(n, e);
}

// All-to-all inside groups of 16 ranks (e.g. row communicators) plus a
// light all-to-all between group leaders.
CommMatrix grouped_alltoall(int n) {
  std::vector<Edge> e;
  for (int g = 0; g < n; g += 16)
    for (int i = g; i < std::min(n, g + 16); ++i)
      for (int j = i + 1; j < std::min(n, g + 16); ++j) e.push_back({i, j, 100});
  for (int g = 0; g < n; g += 16)
    for (int h = g + 16; h < n; h += 16) e.push_back({g, h, 10});
  return CommMatrix::from_edges(n, e);
}

// Uniform all-to-all (placement cannot help; every mapping ties).
CommMatrix alltoall(int n) {
  std::vector<Edge> e;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) e.push_back({i, j, 10});
  return CommMatrix::from_edges(n, e);
}

// The same pattern with the ranks numbered at random (an application whose
// rank order does not follow its communication).
CommMatrix permuted(const CommMatrix& m, unsigned seed) {
  std::vector<int> p(m.size());
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(p.begin(), p.end(), rng);
  std::vector<Edge> e;
  for (const Edge& x : m.edges()) e.push_back({p[x.i], p[x.j], x.weight});
  return CommMatrix::from_edges(m.size(), e);
}

struct Pattern {
  std::string name;
  CommMatrix (*make)(int);
  bool permute;
};

struct Score {
  double network = 0, weighted = 0;
};

Score score(const canopy::Cluster& c, const CommMatrix& m, const std::vector<int>& leaf,
            const std::vector<double>& w) {
  Score s;
  s.network = canopy::internode_volume(c, m, leaf);
  s.weighted = canopy::evaluate(c.tree(), m, leaf, w).weighted;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, check = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--check")) check = true;
    else {
      std::fprintf(stderr, "usage: canopy_cluster_bench [--quick] [--check]\n");
      return 2;
    }
  }
  const std::vector<std::pair<int, std::string>> clusters =
      quick ? std::vector<std::pair<int, std::string>>{{4, "pack:2 numa:2 core:4 pu:1"}}
            : std::vector<std::pair<int, std::string>>{{4, "pack:2 numa:2 core:8 pu:1"},
                                                       {16, "pack:2 numa:2 core:8 pu:1"},
                                                       {16, "pack:2 numa:4 core:8 pu:1"},
                                                       {64, "pack:2 numa:2 core:8 pu:1"}};
  const std::vector<Pattern> patterns{{"stencil2d", stencil2d, false}, {"stencil2d", stencil2d, true},
                                      {"stencil3d", stencil3d, false}, {"stencil3d", stencil3d, true},
                                      {"ring", ring, false},           {"tree", tree, false},
                                      {"tree", tree, true},            {"groups16", grouped_alltoall, false},
                                      {"groups16", grouped_alltoall, true}, {"alltoall", alltoall, false}};
  const char* names[] = {"canopy", "map-by core", "map-by node", "scotch"};
  std::printf("| cluster | pattern | ranks | network volume: canopy | map-by core | map-by node | scotch | "
              "weighted: canopy | map-by core | map-by node | scotch | canopy time |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  int cases = 0, canopy_best = 0, canopy_best_weighted = 0;
  for (const auto& [nodes, node] : clusters) {
    canopy::UnitOptions u;  // one rank per core
    const std::string spec = fmt::format("{}*{}", nodes, node);
    const canopy::Cluster c = canopy::Cluster::load(spec, "", u);
    const int n = c.capacity();
    const std::vector<double> w = c.default_weights();
    const int per_node = n / nodes;
    for (const Pattern& pat : patterns) {
      if (pat.make == alltoall && n > 1024) continue;  // n^2 edges: too big to be worth it
      const CommMatrix base = pat.make(n);
      const CommMatrix m = pat.permute ? permuted(base, 17) : base;
      std::vector<std::vector<int>> place(4);
      const auto t0 = std::chrono::steady_clock::now();
      place[0] = canopy::map_ranks(c, m, "canopy").task_pu;
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      place[1].resize(n);
      place[2].resize(n);
      for (int r = 0; r < n; ++r) {
        place[1][r] = r;                                    // leaves are in node order, cores in order
        place[2][r] = (r % nodes) * per_node + r / nodes;  // round robin over the nodes
      }
      canopy::bench::ScotchOptions so;
      so.weights = w;
      place[3] = canopy::bench::scotch_map(c.tree(), m, so).task_pu;
      Score s[4];
      for (int k = 0; k < 4; ++k) s[k] = score(c, m, place[k], w);
      ++cases;
      bool best = true, best_w = true;
      for (int k = 1; k < 4; ++k) {
        best = best && s[0].network <= s[k].network * (1 + 1e-9);
        best_w = best_w && s[0].weighted <= s[k].weighted * (1 + 1e-9);
      }
      canopy_best += best;
      canopy_best_weighted += best_w;
      if (check && !best)
        for (int k = 1; k < 4; ++k)
          if (s[0].network > s[k].network * (1 + 1e-9))
            std::fprintf(stderr, "canopy_cluster_bench: %s %s: canopy's network volume %.0f > %s's %.0f\n",
                         spec.c_str(), pat.name.c_str(), s[0].network, names[k], s[k].network);
      std::printf("| %d × `%s` | %s%s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f s |\n", nodes,
                  node.c_str(), pat.name.c_str(), pat.permute ? " (permuted)" : "", n, s[0].network, s[1].network,
                  s[2].network, s[3].network, s[0].weighted, s[1].weighted, s[2].weighted, s[3].weighted, secs);
      std::fflush(stdout);
    }
  }
  std::printf("\ncanopy lowest or tied: network volume %d/%d cases, weighted cost %d/%d cases\n", canopy_best, cases,
              canopy_best_weighted, cases);
  return check && canopy_best < cases ? 1 : 0;
}
