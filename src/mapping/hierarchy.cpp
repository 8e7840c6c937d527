// The bottom-up grouping / top-down assignment skeleton (see hierarchy.hpp).
#include "mapping/hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "mapping/slot_tree.hpp"

namespace canopy::grouping {

namespace {

// The compositions asked for by the nodes of one level, largest first.
std::vector<Composition> compositions(const SlotTree& st, const std::vector<int>& level_nodes) {
  std::map<int, Composition> by_shape;
  for (int v : level_nodes) {
    const SlotNode& n = st.nodes[v];
    auto [it, fresh] = by_shape.emplace(n.shape, Composition{});
    Composition& c = it->second;
    if (fresh) {
      c.shape = n.shape;
      if (n.children.empty()) {
        c.need = {{kTaskType, n.tasks}};
      } else {
        std::vector<int> shapes, idx;
        for (int k : n.children) {
          idx.push_back(static_cast<int>(shapes.size()));
          shapes.push_back(st.nodes[k].shape);
        }
        c.need = type_count(idx, shapes);
      }
      c.size = total(c.need);
    }
    ++c.count;
  }
  std::vector<Composition> out;
  for (auto& [s, c] : by_shape) out.push_back(std::move(c));
  std::stable_sort(out.begin(), out.end(), [](const Composition& a, const Composition& b) { return a.size > b.size; });
  return out;
}

}  // namespace

std::vector<int> hierarchical_map(const Topology& topo, const CommMatrix& m, const Slots& slots,
                                  const GroupFn& group) {
  const SlotTree st = build_slot_tree(topo, slots);
  const int L = topo.leaf_level();
  const int T = m.size();

  // Bottom-up. steps[l] holds the groups built for the nodes of level l.
  struct Step {
    std::vector<std::vector<int>> groups;
    std::vector<int> shape;
  };
  std::vector<Step> steps(L + 1);
  Graph graph = Graph::view(m);
  std::vector<int> type(T, kTaskType);
  for (int l = L; l >= 0; --l) {
    Problem p{graph, type, compositions(st, st.levels[l])};
    bool trivial = std::all_of(p.comps.begin(), p.comps.end(), [](const Composition& c) { return c.size == 1; });
    Grouping g;
    if (trivial) {
      // One child per node: every entity is a group of its own.
      std::map<int, int> comp_of_type;
      for (size_t c = 0; c < p.comps.size(); ++c) comp_of_type[p.comps[c].need.front().first] = static_cast<int>(c);
      for (int e = 0; e < graph.size(); ++e) {
        g.groups.push_back({e});
        g.comp.push_back(comp_of_type.at(type[e]));
      }
    } else {
      g = group(p);
    }
    check_grouping(p, g);
    Step& s = steps[l];
    s.groups = std::move(g.groups);
    for (int c : g.comp) s.shape.push_back(p.comps[c].shape);
    if (!trivial) {
      std::vector<int> group_of(graph.size());
      for (size_t i = 0; i < s.groups.size(); ++i)
        for (int v : s.groups[i]) group_of[v] = static_cast<int>(i);
      graph = graph.aggregate(s.groups, group_of);
    }
    type = s.shape;
  }
  if (steps[0].groups.size() != 1) throw Error("hierarchical_map: the root level made several groups", ErrorKind::System);

  // Top-down: node_of[i] = slot node of group i of the current level.
  std::vector<int> task_pu(T, -1);
  std::vector<int> node_of{0};
  for (int l = 0; l <= L; ++l) {
    const Step& s = steps[l];
    std::vector<int> next(l < L ? steps[l + 1].groups.size() : 0, -1);
    for (size_t gi = 0; gi < s.groups.size(); ++gi) {
      const SlotNode& v = st.nodes[node_of[gi]];
      const std::vector<int>& members = s.groups[gi];
      if (l == L) {
        for (int t : members) task_pu[t] = v.pu;
        continue;
      }
      // Children and members of the same shape pair up in order.
      std::vector<char> done(members.size(), 0);
      for (int c : v.children) {
        size_t k = 0;
        while (k < members.size() && (done[k] || steps[l + 1].shape[members[k]] != st.nodes[c].shape)) ++k;
        if (k == members.size()) throw Error("hierarchical_map: a group does not fit its node", ErrorKind::System);
        done[k] = 1;
        next[members[k]] = c;
      }
    }
    node_of = std::move(next);
  }
  return task_pu;
}

}  // namespace canopy::grouping
