// A Cluster's tree: the network, its nodes, and in each node the units a rank
// runs on (see cluster.hpp), cut from the node's topology and copied into a
// PlainTree; plus the default weights and the bindings of the units.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "canopy/cluster.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "topology/plain_tree.hpp"

namespace canopy {

namespace {

using Element = std::vector<int>;  // what one thread runs on: one PU, or one core's PUs
using Group = std::vector<Element>;  // one unit: threads_per_rank elements

// A tree node of `t` that holds exactly the PUs of one core (so it is cut
// whole with granularity core).
bool is_one_core(const Topology& t, const TopoNode& n) {
  const int core = t.pu(n.first_pu).core;
  return static_cast<int>(t.core(core).pus.size()) == n.num_pus && t.pu(n.first_pu + n.num_pus - 1).core == core;
}

// Cuts the units of one node bottom-up: each subtree hands its leftover
// elements to its parent, which makes groups of T from them, so a group stays
// in the lowest subtree that can hold it. `lca` receives each group's lowest
// common ancestor.
Group collect(const Topology& t, int id, const UnitOptions& u, std::vector<Group>& groups, std::vector<int>& lca) {
  const TopoNode& n = t.node(id);
  Group left;
  if (u.granularity == Granularity::Core && is_one_core(t, n)) {
    left.push_back(t.core(t.pu(n.first_pu).core).pus);
  } else if (n.children.empty()) {
    left.push_back({n.first_pu});
  } else {
    for (int c : n.children) {
      Group g = collect(t, c, u, groups, lca);
      left.insert(left.end(), g.begin(), g.end());
    }
  }
  size_t taken = 0;
  while (left.size() - taken >= static_cast<size_t>(u.threads_per_rank)) {
    groups.emplace_back(left.begin() + static_cast<long>(taken),
                        left.begin() + static_cast<long>(taken + u.threads_per_rank));
    lca.push_back(id);
    taken += u.threads_per_rank;
  }
  return Group(left.begin() + static_cast<long>(taken), left.end());
}

std::string units_word(const UnitOptions& u) {
  const char* what = u.granularity == Granularity::Core ? "core" : "PU";
  if (u.threads_per_rank == 1) return fmt::format("{}s", what);
  return fmt::format("groups of {} {}s (--threads-per-rank {})", u.threads_per_rank, what, u.threads_per_rank);
}

}  // namespace

Cluster::Cluster(std::vector<ClusterNode> nodes, const UnitOptions& units, std::string source)
    : source_(std::move(source)), nodes_(std::move(nodes)), units_(units) {
  if (nodes_.empty()) throw Error(fmt::format("{}: the cluster has no node", source_));
  if (units_.threads_per_rank < 1)
    throw Error(fmt::format("--threads-per-rank {}: expected at least 1", units_.threads_per_rank));

  PlainTree plain;
  plain.nodes.push_back(PlainNode{{{"Network", 0, -1, 0}}, {}, {}, 0, -1});
  int core_ids = 0;
  for (size_t ni = 0; ni < nodes_.size(); ++ni) {
    const ClusterNode& cn = nodes_[ni];
    const Topology& t = cn.topology;
    const std::string& where = cn.where.empty() ? source_ : cn.where;
    std::vector<Group> groups;
    std::vector<int> lca;
    collect(t, t.root().id, units_, groups, lca);
    if (groups.empty())
      throw Error(fmt::format("{}: host {} ({}, {} PUs) has no room for one rank of {}", where, cn.host,
                              t.source(), t.num_pus(), units_word(units_)));
    // slots=S keeps S units: one PU per core first for PU units (hyperthread
    // siblings last), else the first in tree order.
    std::vector<int> keep(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) keep[g] = static_cast<int>(g);
    if (cn.slots > 0) {
      if (cn.slots > static_cast<int>(groups.size()))
        throw Error(fmt::format("{}: host {} has slots={} but its topology ({}) has only {} {}{}", where, cn.host,
                                cn.slots, t.source(), groups.size(), units_word(units_),
                                units_.granularity == Granularity::Core ? " (--granularity pu counts hardware threads)"
                                                                        : ""));
      if (units_.granularity == Granularity::PU && units_.threads_per_rank == 1) {
        auto sibling = [&](int g) {
          const int pu = groups[g][0][0];
          const auto& pus = t.core(t.pu(pu).core).pus;
          return std::find(pus.begin(), pus.end(), pu) - pus.begin();
        };
        std::stable_sort(keep.begin(), keep.end(), [&](int a, int b) { return sibling(a) < sibling(b); });
      }
      keep.resize(cn.slots);
      std::sort(keep.begin(), keep.end());
    }

    // The node's tree nodes to copy: ancestors of the kept groups' LCAs. A
    // group that is all of its LCA's PUs becomes that node; otherwise it is a
    // "Slot" leaf below it.
    std::vector<char> needed(t.nodes().size(), 0);
    std::map<int, int> whole;                 // tree node -> group that is exactly it
    std::map<int, std::vector<int>> slots_at;  // tree node -> groups hanging below it
    for (int g : keep) {
      int pus = 0;
      for (const Element& e : groups[g]) pus += static_cast<int>(e.size());
      if (t.node(lca[g]).num_pus == pus)
        whole[lca[g]] = g;
      else
        slots_at[lca[g]].push_back(g);
      for (int id = lca[g]; id >= 0 && !needed[id]; id = t.node(id).parent) needed[id] = 1;
    }
    const int numa_offset = plain.num_numa;
    plain.num_numa += t.num_numa_nodes();
    const int node_core_base = core_ids;
    core_ids += t.num_cores();

    auto add_leaf = [&](int parent, std::vector<TopoObject> objects, int g) {
      PlainNode leaf;
      leaf.objects = std::move(objects);
      if (units_.granularity == Granularity::PU && units_.threads_per_rank == 1)
        leaf.core = node_core_base + t.pu(groups[g][0][0]).core;  // siblings: one core, for the slot rules
      const int id = static_cast<int>(plain.nodes.size());
      plain.nodes.push_back(std::move(leaf));
      plain.nodes[parent].children.push_back(id);
      ClusterUnit u;
      u.node = static_cast<int>(ni);
      u.threads = groups[g];
      units_of_leaf_.push_back(std::move(u));
    };
    // Depth-first copy, children in tree order, so leaves come in tree order.
    auto copy = [&](auto&& self, int id, int parent) -> void {
      const TopoNode& n = t.node(id);
      std::vector<int> numa;
      for (int k : n.numa_nodes) numa.push_back(numa_offset + k);
      auto w = whole.find(id);
      if (w != whole.end()) {
        const int leaf = static_cast<int>(plain.nodes.size());
        add_leaf(parent, n.objects, w->second);
        plain.nodes[leaf].numa = numa;
        return;
      }
      PlainNode copy;
      copy.objects = n.objects;
      copy.numa = numa;
      for (int k : n.numa_nodes) copy.numa_bytes += t.numa_node(k).bytes;
      const int me = static_cast<int>(plain.nodes.size());
      plain.nodes.push_back(std::move(copy));
      plain.nodes[parent].children.push_back(me);
      for (int c : n.children)
        if (needed[c]) self(self, c, me);
      auto s = slots_at.find(id);
      if (s != slots_at.end())
        for (int g : s->second) add_leaf(me, {{"Slot", -1, -1, 0}}, g);
    };
    copy(copy, t.root().id, 0);
  }
  tree_ = build_plain_topology(plain, source_);
}

std::vector<double> Cluster::default_weights() const {
  std::vector<double> w = canopy::default_weights(tree_);
  if (w.size() >= 2) w[0] = std::max(1.0, 4 * w[1]);
  return w;
}

std::vector<int> Cluster::thread_binding_os(int leaf, int thread) const {
  const ClusterUnit& u = unit(leaf);
  const Topology& t = nodes_.at(u.node).topology;
  std::vector<int> os;
  for (int pu : u.threads.at(thread)) os.push_back(t.pu(pu).os_index);
  std::sort(os.begin(), os.end());
  return os;
}

std::vector<int> Cluster::binding_os(int leaf) const {
  std::vector<int> os;
  for (size_t k = 0; k < unit(leaf).threads.size(); ++k) {
    std::vector<int> t = thread_binding_os(leaf, static_cast<int>(k));
    os.insert(os.end(), t.begin(), t.end());
  }
  std::sort(os.begin(), os.end());
  return os;
}

}  // namespace canopy
