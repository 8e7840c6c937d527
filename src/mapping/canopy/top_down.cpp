// Top-down partitioning along the tree (see top_down.hpp).
#include "mapping/canopy/top_down.hpp"

#include <algorithm>

namespace canopy::cmap {

namespace {

struct TopDown {
  const Tree& tree;
  KwayPartitioner& kway;
  std::vector<int>& task_pu;

  // `sub` is the graph of the tasks `ids` (global task numbers); they go
  // below `node`, whose slots add up to sub.n.
  int first_split_tries = 1;

  void place(const Graph& sub, const std::vector<int>& ids, int node, std::uint64_t seed, int depth) {
    if (ids.empty()) return;
    std::vector<int> children;
    for (;;) {
      if (tree.is_leaf(node)) {
        for (int t : ids) task_pu[t] = tree.first_pu[node];
        return;
      }
      children.clear();
      for (int c : tree.children[node])
        if (tree.slots[c] > 0) children.push_back(c);
      if (children.size() != 1) break;
      node = children[0];  // a single child with slots: nothing to split here
    }
    // PUs of one task each: every way of filling them costs the same.
    if (std::all_of(children.begin(), children.end(), [&](int c) { return tree.is_leaf(c) && tree.slots[c] == 1; })) {
      for (std::size_t i = 0; i < ids.size(); ++i) task_pu[ids[i]] = tree.first_pu[children[i]];
      return;
    }
    std::vector<std::int64_t> targets;
    for (int c : children) targets.push_back(tree.slots[c]);
    const std::uint64_t s = mix_seed(seed, static_cast<std::uint64_t>(node));
    std::vector<int> part = kway.partition(sub, targets, s);
    // The first split cuts the most expensive edges and decides the shape of
    // everything below; its quality varies with the coarsening's random
    // matchings, so it gets several tries and keeps the least cut.
    if (depth == 0)
      for (int t = 1; t < first_split_tries; ++t) {
        std::vector<int> other = kway.partition(sub, targets, mix_seed(s, 1000 + t));
        if (KwayPartitioner::cut(sub, other) < KwayPartitioner::cut(sub, part)) part.swap(other);
      }

    // The tasks of each child, then each child's graph, one at a time.
    const int k = static_cast<int>(children.size());
    std::vector<std::int64_t> start(k + 1, 0);
    for (int v = 0; v < sub.n; ++v) ++start[part[v] + 1];
    for (int i = 0; i < k; ++i) start[i + 1] += start[i];
    std::vector<int> members(sub.n);
    {
      std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
      for (int v = 0; v < sub.n; ++v) members[fill[part[v]]++] = v;
    }
    std::vector<int> scratch(sub.n, -1);
    for (int i = 0; i < k; ++i) {
      if (tree.is_leaf(children[i])) {
        for (std::int64_t j = start[i]; j < start[i + 1]; ++j) task_pu[ids[members[j]]] = tree.first_pu[children[i]];
        continue;
      }
      std::vector<int> local(members.begin() + start[i], members.begin() + start[i + 1]);
      std::vector<int> gl(local.size());
      for (std::size_t j = 0; j < local.size(); ++j) gl[j] = ids[local[j]];
      const Graph child = induced_subgraph(sub, local, scratch);
      std::vector<int>().swap(local);
      place(child, gl, children[i], mix_seed(s, i + 1), depth + 1);
    }
  }
};

}  // namespace

std::vector<int> top_down_partition(const Graph& g, const Tree& tree, std::uint64_t seed, const KwayParams& params) {
  std::vector<int> task_pu(g.n, -1);
  std::vector<int> ids(g.n);
  for (int i = 0; i < g.n; ++i) ids[i] = i;
  KwayPartitioner kway(params);
  TopDown td{tree, kway, task_pu};
  td.first_split_tries = std::max(1, params.first_split_tries);
  td.place(g, ids, tree.root, seed, 0);
  return task_pu;
}

}  // namespace canopy::cmap
