// Refinement by whole subtrees (see refine.hpp): at each level of the tree,
// the contents of two nodes of the same shape (the same slot capacities on
// the same PUs below them) can be exchanged, which moves a core's pair of
// tasks, or a NUMA node's fifty, in one step. Edges inside a node keep their
// cost, so the problem at level l is the mapping problem of the quotient
// graph (one vertex per node's contents, edge weights = volume between the
// contents) onto the tree cut at level l; the task-level refiners solve it
// as is, with swaps restricted to leaves of the same class.
//
// Levels are visited bottom-up: the cores' contents are fixed by the top-down
// partition and the task swaps, and moving them as units corrects the upper
// levels in the light of how the tasks were actually grouped below.
#include <algorithm>
#include <map>

#include "mapping/canopy/refine.hpp"

namespace canopy::cmap {

namespace {

// The tree cut at level l: its leaves are the level-l nodes, one slot each
// when the node holds tasks.
struct Quotient {
  Tree tree;
  std::vector<int> nodes;  // leaf index -> node id (tree order)
};

Quotient cut_tree(const Tree& t, int l) {
  Quotient q;
  for (std::size_t id = 0; id < t.level.size(); ++id)
    if (t.level[id] == l) q.nodes.push_back(static_cast<int>(id));
  std::sort(q.nodes.begin(), q.nodes.end(), [&](int a, int b) { return t.first_pu[a] < t.first_pu[b]; });
  Tree& c = q.tree;
  c.num_levels = l + 1;
  c.num_pus = static_cast<int>(q.nodes.size());
  c.root = t.root;
  c.level = t.level;
  c.first_pu.assign(t.level.size(), -1);
  c.num_pus_below.assign(t.level.size(), 0);
  c.capacity.assign(c.num_pus, 0);
  c.anc.resize(static_cast<std::size_t>(c.num_pus) * c.num_levels);
  c.leaf_class.assign(c.num_pus, -1);
  std::map<std::vector<int>, int> classes;
  for (int i = 0; i < c.num_pus; ++i) {
    const int node = q.nodes[i];
    c.capacity[i] = t.slots[node] > 0 ? 1 : 0;
    for (int k = 0; k <= l; ++k) {
      const int a = t.ancestor(t.first_pu[node], k);
      c.anc[static_cast<std::size_t>(i) * c.num_levels + k] = a;
      if (c.first_pu[a] < 0) c.first_pu[a] = i;
      ++c.num_pus_below[a];
    }
    std::vector<int> shape(t.capacity.begin() + t.first_pu[node],
                           t.capacity.begin() + t.first_pu[node] + t.num_pus_below[node]);
    c.leaf_class[i] = classes.emplace(std::move(shape), static_cast<int>(classes.size())).first->second;
  }
  // Child indexes as in the full tree: the codes only need them distinct
  // among siblings.
  std::vector<int> index_in_parent(t.level.size(), 0);
  for (std::size_t id = 0; id < t.children.size(); ++id)
    for (std::size_t k = 0; k < t.children[id].size(); ++k) index_in_parent[t.children[id][k]] = static_cast<int>(k);
  build_codes(c, index_in_parent);
  return q;
}

}  // namespace

void refine_levels(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
                   std::uint64_t seed, std::int64_t max_work, int kl_passes) {
  const int L = tree.leaf_level();
  for (int l = L - 1; l >= 1; --l) {
    Quotient q = cut_tree(tree, l);
    const int leaves = q.tree.num_pus;
    std::vector<int> leaf_of_node(tree.level.size(), -1);
    for (int i = 0; i < leaves; ++i) leaf_of_node[q.nodes[i]] = i;

    // One quotient vertex per non-empty node, at that node's leaf.
    std::vector<int> vertex_of_leaf(leaves, -1), qpos;
    for (int i = 0; i < leaves; ++i)
      if (q.tree.capacity[i] > 0) {
        vertex_of_leaf[i] = static_cast<int>(qpos.size());
        qpos.push_back(i);
      }
    const int nq = static_cast<int>(qpos.size());
    if (nq < 3) continue;
    std::vector<int> vertex_of_task(g.n);
    std::vector<std::int64_t> start(nq + 1, 0);
    for (int t = 0; t < g.n; ++t) {
      vertex_of_task[t] = vertex_of_leaf[leaf_of_node[tree.ancestor(task_pu[t], l)]];
      ++start[vertex_of_task[t] + 1];
    }
    for (int x = 0; x < nq; ++x) start[x + 1] += start[x];
    std::vector<int> members(g.n);
    {
      std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
      for (int t = 0; t < g.n; ++t) members[fill[vertex_of_task[t]]++] = t;
    }

    // The quotient graph: volumes between the contents of two nodes.
    Graph qg;
    qg.n = nq;
    qg.xadj.assign(nq + 1, 0);
    qg.vw.assign(nq, 1);
    qg.total_vw = nq;
    std::vector<std::int64_t> where(nq, -1);
    for (int x = 0; x < nq; ++x) {
      const std::int64_t first = static_cast<std::int64_t>(qg.adj.size());
      for (std::int64_t k = start[x]; k < start[x + 1]; ++k) {
        const int t = members[k];
        for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) {
          const int y = vertex_of_task[g.adj[e]];
          if (y == x) continue;
          if (where[y] < first) {
            where[y] = static_cast<std::int64_t>(qg.adj.size());
            qg.adj.push_back(y);
            qg.ew.push_back(g.ew[e]);
          } else {
            qg.ew[where[y]] += g.ew[e];
          }
        }
      }
      qg.xadj[x + 1] = static_cast<std::int64_t>(qg.adj.size());
    }
    if (qg.adj.empty()) continue;

    const std::vector<double> qw(weights.begin(), weights.begin() + l + 1);
    std::vector<int> moved = qpos;
    refine_swaps(qg, q.tree, qw, moved, seed + l, max_work);
    if (kl_passes > 0) refine_kl(qg, q.tree, qw, moved, seed + 7 * l, max_work, kl_passes);

    // Move the tasks with their node's contents (same shape: same offsets).
    for (int x = 0; x < nq; ++x) {
      if (moved[x] == qpos[x]) continue;
      const int from = tree.first_pu[q.nodes[qpos[x]]], to = tree.first_pu[q.nodes[moved[x]]];
      for (std::int64_t k = start[x]; k < start[x + 1]; ++k) task_pu[members[k]] += to - from;
    }
  }
}

}  // namespace canopy::cmap
