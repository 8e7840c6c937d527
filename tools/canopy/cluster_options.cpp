// Options and cost summaries shared by the cluster subcommands (see
// cluster_options.hpp).
#include "cluster_options.hpp"

#include <fmt/format.h>

#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "cli_common.hpp"

namespace canopy::cli {

void add_cluster_options(CLI::App& app, ClusterArgs& a, bool with_cluster) {
  if (with_cluster)
    app.add_option("--cluster", a.cluster,
                   "Place MPI ranks on a cluster: a cluster file or an Open MPI / Slurm hostfile ('HOSTS [slots=N] "
                   "[TOPOLOGY]' lines; hosts without a topology get --input), 'N*TOPOLOGY' (N identical nodes) or "
                   "'localhost'. See docs/mpi.md")
        ->option_text("SPEC")
        ->group("Input");
  app.add_option("--threads-per-rank", a.threads_per_rank,
                 "Hybrid MPI+OpenMP: reserve T cores (or PUs with --granularity pu) per rank in one subtree; each "
                 "rank's threads get their OMP_PLACES (--of omp-places)")
      ->option_text("T")
      ->check(CLI::Range(1, 4096))
      ->group("Mapping");
  app.add_flag("--spread", a.spread,
               "Cluster: spread the ranks over all nodes (default: as few nodes as possible when there are fewer ranks "
               "than slots)")
      ->group("Mapping");
  app.add_flag("--oversubscribe", a.oversubscribe, "Cluster: allow more ranks than slots (several ranks per unit)")
      ->group("Mapping");
}

Cluster load_cluster(const ClusterArgs& a, const std::string& input, const std::string& granularity) {
  UnitOptions u;
  u.granularity = parse_granularity(granularity);
  u.threads_per_rank = a.threads_per_rank;
  return Cluster::load(a.cluster, input, u);
}

std::vector<double> cluster_weights(const Cluster& c, const std::string& option) {
  if (option.empty()) return c.default_weights();
  return resolve_weights(c.tree(), parse_weights(option));
}

std::string cluster_cost_text(const Cluster& c, const CommMatrix& m, const Placement& p,
                              const std::vector<double>& weights) {
  const Cost cost = evaluate(c.tree(), m, p, weights);
  const double net = internode_volume(c, m, p.task_pu);
  const double total = m.total();
  std::string w;
  for (double x : weights) w += (w.empty() ? "" : ",") + number(x);
  std::string out;
  out += fmt::format("network volume   {}   ({} of the total volume {}: between ranks on different hosts)\n",
                     number(net), total > 0 ? fmt::format("{:.1f}%", 100.0 * net / total) : std::string("0%"),
                     number(total));
  out += fmt::format("hop-bytes        {}\n", number(cost.hop_bytes));
  out += fmt::format("weighted cost    {}   (weights per level, network first: {})\n", number(cost.weighted), w);
  std::vector<int> per_host(c.nodes().size(), 0);
  for (int leaf : p.task_pu) ++per_host[c.unit(leaf).node];
  std::string hosts;
  for (size_t i = 0; i < per_host.size(); ++i)
    if (per_host[i]) hosts += fmt::format("{}{}: {}", hosts.empty() ? "" : ", ", c.nodes()[i].host, per_host[i]);
  out += fmt::format("ranks per host   {}\n", hosts);
  return out;
}

nlohmann::ordered_json cluster_cost_json(const Cluster& c, const CommMatrix& m, const Placement& p,
                                         const std::vector<double>& weights) {
  const Cost cost = evaluate(c.tree(), m, p, weights);
  nlohmann::ordered_json j;
  j["network_volume"] = internode_volume(c, m, p.task_pu);
  j["total_volume"] = m.total();
  j["hop_bytes"] = cost.hop_bytes;
  j["weighted"] = cost.weighted;
  j["weights"] = weights;
  return j;
}

}  // namespace canopy::cli
