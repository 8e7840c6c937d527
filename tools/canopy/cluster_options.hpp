// The options of the subcommands that place MPI ranks on a cluster (`canopy
// map --cluster`, `canopy mpirun`): --cluster, --threads-per-rank, --spread,
// --oversubscribe, and the cost lines of a cluster placement.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"

namespace canopy::cli {

struct ClusterArgs {
  std::string cluster;
  int threads_per_rank = 1;
  bool spread = false;
  bool oversubscribe = false;
};

// Adds the options; --cluster goes under "Input", the others under "Mapping".
// `with_cluster`: whether to add --cluster itself (canopy mpirun has its own
// help text for it).
void add_cluster_options(CLI::App& app, ClusterArgs& a, bool with_cluster = true);

// The cluster of the options: `input` is the topology of hosts that give
// none, `granularity` "core" or "pu".
Cluster load_cluster(const ClusterArgs& a, const std::string& input, const std::string& granularity);

// The weights of the cluster tree: its defaults, or --weights (one per level, the network first).
std::vector<double> cluster_weights(const Cluster& c, const std::string& weights_option);

// "network volume ...", "hop-bytes ...", "weighted cost ..." lines, and the same as JSON.
std::string cluster_cost_text(const Cluster& c, const CommMatrix& m, const Placement& p,
                              const std::vector<double>& weights);
nlohmann::ordered_json cluster_cost_json(const Cluster& c, const CommMatrix& m, const Placement& p,
                                         const std::vector<double>& weights);

}  // namespace canopy::cli
