// Top-down partitioning along the tree (see top_down.hpp).
#include "mapping/canopy/top_down.hpp"

#include <cstdlib>

namespace canopy::cmap {

namespace {

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct TopDown {
  const Tree& tree;
  Bisector& bisector;
  std::vector<int>& task_pu;

  // `sub` is the graph of the tasks `ids` (global task numbers); they go
  // below the sibling nodes `group`, whose slots add up to sub.n.
  void place(const Graph& sub, const std::vector<int>& ids, std::vector<int> group, std::uint64_t seed) {
    if (ids.empty()) return;
    while (group.size() == 1) {
      const int node = group[0];
      if (tree.is_leaf(node)) {
        for (int t : ids) task_pu[t] = tree.first_pu[node];
        return;
      }
      group.clear();
      for (int c : tree.children[node])
        if (tree.slots[c] > 0) group.push_back(c);
    }
    // Split the children list where the two halves' slots are closest to equal.
    std::int64_t total = 0;
    for (int c : group) total += tree.slots[c];
    std::size_t cut_at = 1;
    std::int64_t best = -1, prefix = 0;
    for (std::size_t i = 1; i < group.size(); ++i) {
      prefix += tree.slots[group[i - 1]];
      std::int64_t d = std::llabs(2 * prefix - total);
      if (best < 0 || d < best || (d == best && 2 * i <= group.size())) {
        best = d;
        cut_at = i;
      }
    }
    std::vector<int> left(group.begin(), group.begin() + static_cast<std::ptrdiff_t>(cut_at));
    std::vector<int> right(group.begin() + static_cast<std::ptrdiff_t>(cut_at), group.end());
    std::int64_t target0 = 0;
    for (int c : left) target0 += tree.slots[c];

    const std::uint64_t s = mix(seed, static_cast<std::uint64_t>(group.front()) * 131 + group.size());
    std::vector<std::uint8_t> part = bisector.bisect(sub, target0, s);

    std::vector<int> scratch(sub.n, -1);
    for (int side = 0; side < 2; ++side) {
      std::vector<int> local, gl;
      for (int v = 0; v < sub.n; ++v)
        if (part[v] == side) {
          local.push_back(v);
          gl.push_back(ids[v]);
        }
      Graph child = induced_subgraph(sub, local, scratch);
      std::vector<int>().swap(local);
      place(child, gl, side == 0 ? left : right, mix(s, side + 1));
    }
  }
};

}  // namespace

std::vector<int> top_down_partition(const Graph& g, const Tree& tree, std::uint64_t seed,
                                    const BisectParams& params) {
  std::vector<int> task_pu(g.n, -1);
  std::vector<int> ids(g.n);
  for (int i = 0; i < g.n; ++i) ids[i] = i;
  Bisector bisector(params);
  TopDown td{tree, bisector, task_pu};
  td.place(g, ids, {tree.root}, seed);
  return task_pu;
}

}  // namespace canopy::cmap
