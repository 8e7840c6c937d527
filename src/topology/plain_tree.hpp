// Topologies that hwloc does not build: a tree canopy assembles itself (a
// cluster: the network above several machines, each loaded by hwloc). The
// result is an ordinary canopy::Topology, so every policy, the cost model and
// the formats work on it unchanged; it has no hwloc topology behind it (no
// XML export, no restriction, no binding).
#pragma once
#include <string>
#include <vector>

#include "canopy/topology.hpp"

namespace canopy {

struct PlainNode {
  std::vector<TopoObject> objects;  // what the node stands for, top first (names its level)
  std::vector<int> children;        // indexes into PlainTree::nodes, in order
  std::vector<int> numa;            // NUMA nodes (0..PlainTree::num_numa-1) attached here
  std::uint64_t numa_bytes = 0;     // their memory, for NumaInfo (shared out evenly)
  int core = -1;                    // leaves: leaves with the same core id are one core's PUs; -1 = a core of its own
};

struct PlainTree {
  std::vector<PlainNode> nodes;  // nodes[0] is the root
  int num_numa = 0;
};

// The data of a Topology, filled by a builder other than hwloc's;
// topology_from_fields (topology.cpp, where Topology's fields are reachable)
// moves it into a Topology without an hwloc topology behind it.
struct TopologyFields {
  std::string source;
  std::vector<LevelInfo> levels;
  std::vector<TopoNode> nodes;
  std::vector<std::vector<int>> level_nodes;
  std::vector<PUInfo> pus;
  std::vector<CoreInfo> cores;
  std::vector<NumaInfo> numa;
  std::vector<std::vector<int>> ancestors;  // per PU: node id at each level, root first
  std::vector<int> pu_of_os;                // OS index -> logical PU
};
Topology topology_from_fields(TopologyFields fields);

// Leaves may sit at different depths: shallower ones get "Pad" nodes above
// them so that all leaves are at the same depth, as the hwloc loader does.
// A leaf's OS index is its position among the leaves (tree order); its NUMA
// node is the nearest ancestor's first attached one. Throws canopy::Error
// when the tree has no leaf or more than kMaxPUs.
Topology build_plain_topology(const PlainTree& tree, std::string source);

}  // namespace canopy
