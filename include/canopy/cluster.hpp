// canopy::Cluster: the machine an MPI job runs on, as one tree: the network
// at the root, one child per node (host), and below each node that node's
// own topology (this machine, an hwloc XML file or a synthetic string). The
// placement engine maps ranks onto its tree() exactly as it maps tasks onto
// one machine; the leaves are the "units" a rank runs on: a PU, a core, or,
// for hybrid MPI+OpenMP jobs, a group of T PUs or cores inside one subtree.
//
// The cluster tree is not an hwloc topology (hwloc builds one machine at a
// time), so the OS index of its leaves is only their position; what a leaf
// means on its node (host, logical PUs, OS CPU numbers) is in unit().
#pragma once
#include <string>
#include <vector>

#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

namespace canopy {

class CommMatrix;

// One host of the cluster.
struct ClusterNode {
  std::string host;
  Topology topology;
  int slots = 0;  // ranks allowed on the host; 0 = no limit given (every unit)
  std::string where;  // where it was described ("file:line"), for messages; empty = the cluster's source
};

// What a rank is bound to: how the units are cut from each node.
struct UnitOptions {
  Granularity granularity = Granularity::Core;  // a unit of PUs or of whole cores
  int threads_per_rank = 1;                     // T > 1: T PUs or cores per rank, in one subtree
};

// One leaf of the cluster tree.
struct ClusterUnit {
  int node = 0;  // index into Cluster::nodes()
  // Per thread of the rank (one unless threads_per_rank > 1): the logical
  // PUs of the node's topology it is bound to (one PU, or one core's PUs).
  std::vector<std::vector<int>> threads;
};

class Cluster {
 public:
  // The nodes, in order; `source` names the description in messages.
  Cluster(std::vector<ClusterNode> nodes, const UnitOptions& units, std::string source);

  // A cluster description or hostfile (docs/mpi.md, "Cluster files"): lines
  // "HOSTS [slots=N] [TOPOLOGY]". Hosts without a topology get
  // `default_topology` (a --input value: empty = this machine). Errors
  // (canopy::Error, bad input) name the file, the line and the value.
  static Cluster from_file(const std::string& path, const std::string& default_topology, const UnitOptions& units);
  // The --cluster value: an existing file (as above), "N*TOPOLOGY" (N
  // identical nodes node0..node{N-1}; TOPOLOGY empty = this machine), or
  // "localhost" (this machine alone).
  static Cluster load(const std::string& spec, const std::string& default_topology, const UnitOptions& units);

  const std::string& source() const { return source_; }
  const std::vector<ClusterNode>& nodes() const { return nodes_; }
  const UnitOptions& unit_options() const { return units_; }
  // The tree the ranks are mapped on: level 0 = the network, level 1 = the
  // nodes, then each node's levels; leaves = units.
  const Topology& tree() const { return tree_; }
  int num_units() const { return static_cast<int>(units_of_leaf_.size()); }
  const ClusterUnit& unit(int leaf) const { return units_of_leaf_.at(leaf); }
  // The units' total; the ranks a job may have without oversubscribing.
  int capacity() const { return num_units(); }

  // Default cost weights of tree(): each node's defaults below the network
  // (docs/cost-model.md), and the network 4 times the heaviest of them.
  std::vector<double> default_weights() const;

  // The OS CPU numbers (on its node) that thread `thread` of a rank on
  // `leaf` is bound to: one PU, or one core's PUs with granularity core.
  std::vector<int> thread_binding_os(int leaf, int thread) const;
  // All of the rank's OS CPU numbers on its node, sorted.
  std::vector<int> binding_os(int leaf) const;

 private:
  std::string source_;
  std::vector<ClusterNode> nodes_;
  UnitOptions units_;
  Topology tree_;
  std::vector<ClusterUnit> units_of_leaf_;
};

// Where each rank of a placement on cluster.tree() runs, in the formats
// launchers read (docs/mpi.md). Throws canopy::Error when the format cannot
// express the placement.
enum class ClusterFormat { Table, Json, Rankfile4, Rankfile5, SlurmMapCpu, SlurmMaskCpu, SlurmHostfile, OmpPlaces };
ClusterFormat parse_cluster_format(const std::string& name);
const std::vector<std::string>& cluster_format_names();
std::string format_cluster_placement(const Cluster& cluster, const Placement& p, ClusterFormat format,
                                     const CommMatrix* m = nullptr);

// The volume between ranks on different nodes (what crosses the network).
double internode_volume(const Cluster& cluster, const CommMatrix& m, const std::vector<int>& rank_leaf);

// The placement engine on a cluster: at most one rank per unit unless
// `oversubscribe` (else a job larger than the cluster's capacity is bad
// input naming both numbers); ranks packed into as few nodes as possible
// unless `spread`. Empty weights = cluster.default_weights().
Placement map_ranks(const Cluster& cluster, const CommMatrix& m, const std::string& policy,
                    std::vector<double> weights = {}, bool spread = false, bool oversubscribe = false);

}  // namespace canopy
