// Building a canopy::Topology from a PlainTree (see plain_tree.hpp): the same
// fields the hwloc loader fills (levels, nodes, PUs, cores, NUMA nodes,
// ancestors), from plain data.
#include "topology/plain_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "canopy/error.hpp"

namespace canopy {

namespace {

struct PlainTreeBuilder {
  const PlainTree& in;
  TopologyFields& out;
  int depth = 0;  // depth of the deepest leaf

  int max_leaf_depth(int n, int d) const {
    const PlainNode& node = in.nodes.at(n);
    if (node.children.empty()) return d;
    int m = d;
    for (int c : node.children) m = std::max(m, max_leaf_depth(c, d + 1));
    return m;
  }

  int add_node(int level, int parent, std::vector<TopoObject> objects, std::vector<int> numa) {
    TopoNode n;
    n.id = static_cast<int>(out.nodes.size());
    n.level = level;
    n.parent = parent;
    n.objects = std::move(objects);
    n.numa_nodes = std::move(numa);
    n.index_in_level = static_cast<int>(out.level_nodes[level].size());
    out.level_nodes[level].push_back(n.id);
    out.nodes.push_back(std::move(n));
    if (parent >= 0) out.nodes[parent].children.push_back(out.nodes.back().id);
    return out.nodes.back().id;
  }

  // Copies plain node n (at plain depth d) below canopy node `parent`.
  void walk(int n, int d, int parent, int numa_above, std::map<int, int>& core_of_id) {
    const PlainNode& node = in.nodes.at(n);
    const int numa_here = node.numa.empty() ? numa_above : node.numa.front();
    int level = d;
    if (node.children.empty()) {
      // Pads between the parent and a shallow leaf keep all leaves at one depth.
      for (; level < depth; ++level) parent = add_node(level, parent, {{"Pad", -1, -1, 0}}, {});
    }
    const int self = add_node(level, parent, node.objects, node.numa);
    if (!node.children.empty()) {
      for (int c : node.children) walk(c, d + 1, self, numa_here, core_of_id);
      return;
    }
    PUInfo pu;
    pu.logical = static_cast<int>(out.pus.size());
    pu.os_index = pu.logical;
    pu.node = self;
    pu.numa = numa_here < 0 ? 0 : numa_here;
    int core = -1;
    if (node.core >= 0) {
      auto it = core_of_id.find(node.core);
      if (it != core_of_id.end()) core = it->second;
    }
    if (core < 0) {
      core = static_cast<int>(out.cores.size());
      CoreInfo ci;
      ci.logical = core;
      out.cores.push_back(ci);
      if (node.core >= 0) core_of_id[node.core] = core;
    }
    pu.core = core;
    out.cores[core].pus.push_back(pu.logical);
    if (numa_here >= 0) out.numa.at(numa_here).pus.push_back(pu.logical);
    out.pus.push_back(pu);
  }

  void build(std::string source) {
    if (in.nodes.empty() || in.nodes.front().children.empty())
      throw Error(fmt::format("{}: the tree has no processing unit", source));
    depth = max_leaf_depth(0, 0);
    out.source = std::move(source);
    out.levels.assign(depth + 1, {});
    out.level_nodes.assign(depth + 1, {});
    for (int i = 0; i < in.num_numa; ++i) {
      NumaInfo ni;
      ni.logical = i;
      ni.os_index = i;
      out.numa.push_back(ni);
    }
    for (const PlainNode& n : in.nodes)
      for (int k : n.numa)
        if (k >= 0 && k < in.num_numa) out.numa[k].bytes = n.numa_bytes / n.numa.size();
    std::map<int, int> core_of_id;
    walk(0, 0, -1, -1, core_of_id);
    if (out.pus.size() > static_cast<size_t>(kMaxPUs))
      throw Error(fmt::format("{}: more than {} processing units", out.source, kMaxPUs));

    for (int l = 0; l <= depth; ++l) {
      LevelInfo& L = out.levels[l];
      L.num_nodes = static_cast<int>(out.level_nodes[l].size());
      L.min_arity = l == depth ? 0 : 1 << 30;
      L.max_arity = 0;
      bool all_numa = !out.level_nodes[l].empty();
      std::vector<std::string> names;
      for (int id : out.level_nodes[l]) {
        const TopoNode& n = out.nodes[id];
        if (l < depth) {
          L.min_arity = std::min<int>(L.min_arity, static_cast<int>(n.children.size()));
          L.max_arity = std::max<int>(L.max_arity, static_cast<int>(n.children.size()));
        }
        if (n.numa_nodes.empty()) all_numa = false;
        for (const TopoObject& o : n.objects)
          if (std::find(names.begin(), names.end(), o.type) == names.end()) names.push_back(o.type);
      }
      L.numa = all_numa;
      for (const std::string& s : names) L.name += (L.name.empty() ? "" : "+") + s;
    }

    // first_pu / num_pus bottom-up, ancestors per PU, OS index lookup.
    int next = 0;
    for (int id : out.level_nodes.back()) {
      out.nodes[id].first_pu = next++;
      out.nodes[id].num_pus = 1;
    }
    for (int l = depth - 1; l >= 0; --l)
      for (int id : out.level_nodes[l]) {
        TopoNode& n = out.nodes[id];
        n.num_pus = 0;
        n.first_pu = n.children.empty() ? 0 : out.nodes[n.children.front()].first_pu;
        for (int c : n.children) n.num_pus += out.nodes[c].num_pus;
      }
    const int npu = static_cast<int>(out.pus.size());
    out.ancestors.assign(npu, std::vector<int>(depth + 1));
    out.pu_of_os.resize(npu);
    for (int i = 0; i < npu; ++i) {
      out.pu_of_os[i] = i;
      int id = out.pus[i].node;
      for (int l = depth; l >= 0; --l) {
        out.ancestors[i][l] = id;
        id = out.nodes[id].parent;
      }
    }
  }
};

}  // namespace

Topology build_plain_topology(const PlainTree& tree, std::string source) {
  TopologyFields f;
  PlainTreeBuilder b{tree, f, 0};
  b.build(std::move(source));
  return topology_from_fields(std::move(f));
}

}  // namespace canopy
