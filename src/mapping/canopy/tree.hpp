// The machine as the canopy policy sees it: the topology tree with, per node,
// the number of slots (task capacity) below it, and per PU its ancestors so
// that the level of the common ancestor of two PUs costs O(levels). Plain
// data, built once per call from a Topology and the engine's Slots.
#pragma once
#include <cstdint>
#include <vector>

namespace canopy {
class Topology;
}

namespace canopy::cmap {

struct Tree {
  int num_levels = 0;                       // leaf (PU) level = num_levels - 1
  int num_pus = 0;
  int root = 0;
  std::vector<std::vector<int>> children;   // per node
  std::vector<int> level;                   // per node
  std::vector<int> first_pu, num_pus_below; // per node: its PUs are [first_pu, first_pu + num_pus_below)
  std::vector<std::int64_t> slots;          // per node: tasks that go below it
  std::vector<int> capacity;                // per PU
  std::vector<int> anc;                     // anc[p * num_levels + l]: ancestor of PU p at level l
  // Per PU, its path from the root as bit fields (the child index at level
  // 1 in the top bits, then level 2, ...), so that the first differing bit
  // of two codes gives their common level in O(1). Empty when the fields do
  // not fit 64 bits (then the ancestor arrays are compared).
  std::vector<std::uint64_t> code;
  std::uint8_t level_of_clz[64] = {};  // common level when the first differing bit is clz bits down
  // Optional: swaps only between leaves of the same class (empty = any).
  // Used when the leaves stand for whole subtrees (level_refine.cpp).
  std::vector<int> leaf_class;

  int leaf_level() const { return num_levels - 1; }
  bool is_leaf(int node) const { return level[node] == leaf_level(); }
  int ancestor(int pu, int l) const { return anc[static_cast<std::size_t>(pu) * num_levels + l]; }
  bool swappable(int p, int q) const { return leaf_class.empty() || leaf_class[p] == leaf_class[q]; }
  // Level of the deepest common ancestor (leaf_level() for the same PU).
  int common_level(int p, int q) const {
    if (!code.empty()) {
      const std::uint64_t x = code[p] ^ code[q];
      return x ? level_of_clz[__builtin_clzll(x)] : num_levels - 1;
    }
    const int* a = &anc[static_cast<std::size_t>(p) * num_levels];
    const int* b = &anc[static_cast<std::size_t>(q) * num_levels];
    int l = num_levels - 1;
    while (a[l] != b[l]) --l;
    return l;
  }
};

Tree build_tree(const Topology& topo, const std::vector<int>& capacity);

// Fills tree.code and tree.level_of_clz from tree.anc and the children's
// order (child index at each level); leaves them empty when they do not fit.
// `index_in_parent[node]` is a node's position among its parent's children.
void build_codes(Tree& tree, const std::vector<int>& index_in_parent);

}  // namespace canopy::cmap
