// `canopy map`: compute a placement of the tasks of a communication matrix
// (or of N tasks that do not communicate) on a topology with one of the
// registered policies, and print it in a format other tools read.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "cli.hpp"
#include "cli_common.hpp"
#include "cluster_options.hpp"

namespace {

struct MapArgs {
  std::string input, matrix, format, policy, granularity = "pu", helpers = "none", weights, of, svg, output;
  int tasks = 0;
  bool list = false, pack = false;
  canopy::cli::ClusterArgs cluster;
  CLI::Option* granularity_opt = nullptr;
};

// Every --of value: one machine's formats, then the cluster's others.
std::vector<std::string> all_format_names() {
  std::vector<std::string> all = canopy::placement_format_names();
  for (const auto& n : canopy::cluster_format_names())
    if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
  return all;
}

// `canopy map --cluster`: ranks onto the nodes and into them.
int run_map_cluster(const MapArgs& a) {
  if (a.pack) throw canopy::Error("--pack: a cluster packs ranks by default (--spread spreads them)");
  if (a.helpers != "none") throw canopy::Error("--helpers: not available with --cluster");
  if (!a.svg.empty()) throw canopy::Error("--svg: not available with --cluster");
  canopy::find_policy(a.policy);
  const canopy::ClusterFormat of = canopy::parse_cluster_format(a.of);
  // Ranks are bound to whole cores unless --granularity pu says otherwise.
  const std::string granularity = a.granularity_opt && a.granularity_opt->count() ? a.granularity : "core";
  const canopy::Cluster cluster = canopy::cli::load_cluster(a.cluster, a.input, granularity);
  canopy::CommMatrix m = a.matrix.empty() ? canopy::CommMatrix(a.tasks) : canopy::cli::load_matrix(a.matrix, a.format);
  const std::vector<double> weights = canopy::cli::cluster_weights(cluster, a.weights);
  const canopy::Placement p =
      canopy::map_ranks(cluster, m, a.policy, weights, a.cluster.spread, a.cluster.oversubscribe);
  std::string text = canopy::format_cluster_placement(cluster, p, of, &m);
  if (of == canopy::ClusterFormat::Table) {
    text += "\n" + canopy::cli::cluster_cost_text(cluster, m, p, weights);
  } else if (of == canopy::ClusterFormat::Json) {
    auto j = nlohmann::ordered_json::parse(text);
    j["cost"] = canopy::cli::cluster_cost_json(cluster, m, p, weights);
    text = j.dump(2) + "\n";
  }
  canopy::cli::write_file(a.output, text);
  return 0;
}

std::string policy_list() {
  const std::string def = canopy::default_policy();
  size_t w = 0;
  for (const auto& p : canopy::policies()) w = std::max(w, p.name.size());
  std::string out;
  for (const auto& p : canopy::policies())
    out += fmt::format("{:<{}}  {}{}\n", p.name, w, p.description, p.name == def ? " (default)" : "");
  return out;
}

int run_map(const MapArgs& a) {
  if (a.list) {
    canopy::cli::write_file(a.output, policy_list());
    return 0;
  }
  if (a.matrix.empty() && a.tasks == 0)
    throw canopy::Error("map: give the tasks: --matrix FILE, or --tasks N for N tasks that do not communicate");
  if (!a.cluster.cluster.empty()) return run_map_cluster(a);
  if (a.cluster.threads_per_rank != 1 || a.cluster.spread || a.cluster.oversubscribe)
    throw canopy::Error("--threads-per-rank, --spread and --oversubscribe place MPI ranks: they need --cluster");
  canopy::find_policy(a.policy);  // an unknown name fails before any file is read
  if (std::find(canopy::placement_format_names().begin(), canopy::placement_format_names().end(), a.of) ==
      canopy::placement_format_names().end())
    throw canopy::Error(fmt::format("--of {}: a format for MPI ranks on a cluster: it needs --cluster", a.of));
  canopy::PlacementFormat of = canopy::parse_placement_format(a.of);
  canopy::Topology topo = canopy::Topology::load(a.input);
  canopy::CommMatrix m = a.matrix.empty() ? canopy::CommMatrix(a.tasks) : canopy::cli::load_matrix(a.matrix, a.format);
  canopy::MapOptions opt;
  opt.pack = a.pack;
  opt.granularity = canopy::parse_granularity(a.granularity);
  opt.helpers = canopy::parse_helpers(a.helpers);
  opt.weights = canopy::cli::weights_for(topo, a.weights);
  canopy::Placement p = canopy::map_tasks(topo, m, a.policy, opt);

  std::string text = canopy::format_placement(topo, p, of, &m);
  if (of == canopy::PlacementFormat::Table || of == canopy::PlacementFormat::Json) {
    canopy::Cost cost = canopy::evaluate(topo, m, p, opt.weights);
    if (of == canopy::PlacementFormat::Table) {
      text += "\n" + canopy::cli::cost_text(topo, m, cost, opt.weights);
    } else {
      auto j = nlohmann::ordered_json::parse(text);
      j["cost"] = canopy::cli::cost_json(m, cost, opt.weights);
      text = j.dump(2) + "\n";
    }
  }
  canopy::cli::write_file(a.output, text);
  if (!a.svg.empty()) canopy::cli::write_file(a.svg, canopy::placement_svg(topo, p));
  return 0;
}

const bool map_registered = canopy::cli::register_subcommand({
    "map",
    "Compute where each task should run (a placement) with a mapping policy",
    30,
    [](CLI::App& app) -> std::function<int()> {
      auto a = std::make_shared<MapArgs>();
      a->policy = canopy::default_policy();
      canopy::cli::add_input_option(app, a->input);
      CLI::Option* matrix = canopy::cli::add_matrix_options(app, a->matrix, a->format);
      app.add_option("-n,--tasks", a->tasks, "Map N tasks that do not communicate (instead of --matrix)")
          ->option_text("N")
          ->check(CLI::Range(1, static_cast<int>(canopy::kMaxTasks)))
          ->excludes(matrix)
          ->group("Input");
      app.add_option("-p,--policy", a->policy, fmt::format("Mapping policy (default {}; see --list-policies)",
                                                           canopy::default_policy()))
          ->group("Mapping");
      app.add_flag("--list-policies", a->list, "List the mapping policies and exit")->group("Mapping");
      app.add_flag("--pack", a->pack,
                   "With fewer tasks than PUs, pack the tasks into as few NUMA nodes as possible (default: spread "
                   "them evenly, one per core first)")
          ->group("Mapping");
      a->granularity_opt = app.add_option("--granularity", a->granularity,
                                          "Bind each task to its PU or to its whole core (default pu; with --cluster, "
                                          "core)")
          ->check(CLI::IsMember({"core", "pu"}))
          ->group("Mapping");
      app.add_option("--helpers", a->helpers,
                     "smt: keep the hyperthread sibling of each task's PU for its helper threads (default none)")
          ->check(CLI::IsMember({"smt", "none"}))
          ->group("Mapping");
      canopy::cli::add_weights_option(app, a->weights);
      canopy::cli::add_cluster_options(app, a->cluster);
      canopy::cli::add_format_option(app, a->of, all_format_names(), "table");
      app.add_option("--svg", a->svg, "Also draw the topology with each task in its PU into FILE")
          ->option_text("FILE")
          ->group("Output");
      canopy::cli::add_output_option(app, a->output);
      app.footer(
          "Examples:\n"
          "  canopy map --input 'pack:2 numa:2 core:8 pu:2' --matrix stencil.txt\n"
          "  canopy map --matrix stencil.txt --policy treematch --of omp-places   # this machine\n"
          "  canopy map --input machine.xml --tasks 8 --granularity core --of rankfile -o ranks.txt\n"
          "  canopy map --input machine.xml --matrix m.mtx --of list -o p.txt --svg p.svg\n"
          "  canopy map --list-policies\n"
          "  canopy map --cluster hosts.txt --input node.xml --matrix ranks.mtx --of rankfile -o ranks.rf\n"
          "  canopy map --cluster '4*pack:2 core:8' --matrix ranks.mtx --threads-per-rank 4 --of omp-places\n"
          "Cluster formats (--cluster): table, json, rankfile (Open MPI 4), rankfile5 (Open MPI 5), slurm-map-cpu,\n"
          "slurm-mask-cpu, slurm-hostfile, omp-places (one line per rank). See docs/mpi.md");
      return [a] { return run_map(*a); };
    },
});

}  // namespace
