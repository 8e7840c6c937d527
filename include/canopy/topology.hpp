// canopy::Topology: the machine as a tree (machine > package > NUMA node >
// cache > core > PU), loaded by hwloc from this machine, an XML file or a
// synthetic description. No hwloc type appears here: the tree is canopy's own
// copy, so that mapping code and tests depend on plain data only.
//
// The tree keeps the levels that branch. A level whose every node has exactly
// one child (a private L2 above each core, a package holding one L3) is merged
// into the level below it; the merged names stay in TopoNode::objects so that
// nothing is hidden from the user. All PUs are leaves at the same depth.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace canopy {

// One hwloc object that a tree node stands for (several when levels merge).
struct TopoObject {
  std::string type;         // hwloc's name: "Package", "L3", "Core", "NUMANode", ...
  int logical_index = -1;   // hwloc logical index (L#)
  int os_index = -1;        // hwloc OS index (P#), -1 when there is none
  std::uint64_t bytes = 0;  // cache size or NUMA node memory, 0 when unknown
};

struct TopoNode {
  int id = 0;                  // index into Topology::nodes()
  int level = 0;               // depth in the tree, root = 0
  int index_in_level = 0;      // position among the nodes of its level (tree order)
  int parent = -1;             // -1 for the root
  std::vector<int> children;   // node ids, in tree order
  int first_pu = 0;            // the PUs below are [first_pu, first_pu + num_pus)
  int num_pus = 0;             //   in logical order (leaves are numbered in tree order)
  std::vector<TopoObject> objects;  // hwloc objects merged into this node, top first
  std::vector<int> numa_nodes;      // NUMA nodes (logical) attached at this node
};

struct LevelInfo {
  std::string name;        // e.g. "Package", "Group0+NUMANode", "L2+L1d+Core+PU"
  int num_nodes = 0;
  int min_arity = 0;       // children per node on this level (0 for the leaves)
  int max_arity = 0;
  bool numa = false;       // NUMA nodes are attached at this level
};

struct PUInfo {
  int logical = 0;    // canopy's (= hwloc's) logical PU index
  int os_index = 0;   // the OS CPU number
  int core = 0;       // logical core index; a PU with no Core object is its own core
  int numa = 0;       // logical NUMA node index holding this PU (first one if several)
  int node = 0;       // tree node id of this PU
};

struct CoreInfo {
  int logical = 0;
  int os_index = -1;
  std::vector<int> pus;  // logical PU indexes, first is the one used before siblings
};

struct NumaInfo {
  int logical = 0;
  int os_index = 0;
  std::uint64_t bytes = 0;
  std::vector<int> pus;  // logical PU indexes (empty for memory-only nodes)
};

class Topology {
 public:
  // This machine, restricted to the PUs this process may run on (its CPU
  // binding, e.g. from taskset, and the cgroup cpuset).
  static Topology this_machine();
  // An hwloc XML file (`lstopo file.xml` of another machine).
  static Topology from_xml_file(const std::string& path);
  // An hwloc synthetic description such as "pack:2 numa:2 core:8 pu:2".
  static Topology from_synthetic(const std::string& description);
  // The shared --input convention: empty = this machine; an existing file or
  // a name ending in .xml = XML; anything else = synthetic.
  static Topology load(const std::string& input);

  // The same machine restricted to the given PUs (OS indexes). Throws when
  // none of them exists.
  Topology restricted(const std::vector<int>& pu_os_indexes) const;

  const std::string& source() const { return source_; }  // "this machine", a path, or the synthetic string
  bool is_this_machine() const { return this_machine_; }

  int num_levels() const { return static_cast<int>(levels_.size()); }
  int leaf_level() const { return num_levels() - 1; }
  const LevelInfo& level(int depth) const { return levels_.at(depth); }
  const std::vector<LevelInfo>& levels() const { return levels_; }
  const std::vector<TopoNode>& nodes() const { return nodes_; }
  const TopoNode& node(int id) const { return nodes_.at(id); }
  const TopoNode& root() const { return nodes_.front(); }
  const std::vector<int>& level_nodes(int depth) const { return level_nodes_.at(depth); }

  int num_pus() const { return static_cast<int>(pus_.size()); }
  int num_cores() const { return static_cast<int>(cores_.size()); }
  int num_numa_nodes() const { return static_cast<int>(numa_.size()); }
  const PUInfo& pu(int logical) const { return pus_.at(logical); }
  const std::vector<PUInfo>& pus() const { return pus_; }
  const CoreInfo& core(int logical) const { return cores_.at(logical); }
  const std::vector<CoreInfo>& cores() const { return cores_; }
  const NumaInfo& numa_node(int logical) const { return numa_.at(logical); }
  const std::vector<NumaInfo>& numa_nodes() const { return numa_; }
  // Logical PU index of an OS CPU number, -1 when absent.
  int pu_by_os_index(int os_index) const;

  // Depth (level) of the deepest common ancestor of two PUs: leaf_level()
  // when a == b, 0 when they only share the machine.
  int common_level(int pu_a, int pu_b) const;
  // The distance between two PUs: how many levels up their common ancestor
  // is (0 same PU, 1 same core or lowest shared level, ...).
  int distance(int pu_a, int pu_b) const { return leaf_level() - common_level(pu_a, pu_b); }
  // Tree edges on the path between two PUs (used by hop-bytes).
  int hops(int pu_a, int pu_b) const { return 2 * distance(pu_a, pu_b); }
  // hwloc's NUMA distance matrix (latencies relative to 10), empty when the
  // machine or file does not provide one. Indexed by logical NUMA index.
  const std::vector<std::vector<std::uint64_t>>& numa_distances() const { return numa_distances_; }

  // hwloc cpuset string ("0x0000000f") and list string ("0-3") of OS indexes.
  static std::string cpuset_mask_string(const std::vector<int>& os_indexes);
  static std::string cpuset_list_string(const std::vector<int>& os_indexes);

  // hwloc's XML of this topology (lets tests and tools save a machine).
  std::string to_xml() const;

  Topology();
  ~Topology();
  Topology(const Topology&);
  Topology& operator=(const Topology&);
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

 private:
  struct Hwloc;  // the hwloc topology this copy was built from
  friend struct TopologyBuilder;
  std::shared_ptr<const Hwloc> hwloc_;
  std::string source_;
  bool this_machine_ = false;
  std::vector<LevelInfo> levels_;
  std::vector<TopoNode> nodes_;
  std::vector<std::vector<int>> level_nodes_;
  std::vector<PUInfo> pus_;
  std::vector<CoreInfo> cores_;
  std::vector<NumaInfo> numa_;
  std::vector<std::vector<std::uint64_t>> numa_distances_;
  std::vector<std::vector<int>> ancestors_;  // per PU: node id at each level, root first
  std::vector<int> pu_of_os_;                 // OS index -> logical PU (-1 absent)
};

// Limit that keeps a typo from allocating the machine away. hwloc's time to
// build a topology grows quadratically with its PUs (about 1 minute for a
// 131,072-PU synthetic machine), so this is also where waiting stops making sense.
inline constexpr int kMaxPUs = 1 << 18;

}  // namespace canopy
