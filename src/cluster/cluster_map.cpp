// Ranks onto a cluster: the placement engine on Cluster::tree() with the
// cluster's rules (no oversubscription unless asked, packed into as few
// nodes as possible unless spread), and the volume crossing the network.
#include <fmt/format.h>

#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"

namespace canopy {

Placement map_ranks(const Cluster& cluster, const CommMatrix& m, const std::string& policy,
                    std::vector<double> weights, bool spread, bool oversubscribe) {
  find_policy(policy);  // unknown names fail before any work
  if (m.size() > cluster.capacity() && !oversubscribe) {
    const auto& u = cluster.unit_options();
    std::string unit = u.granularity == Granularity::Core ? "core" : "PU";
    if (u.threads_per_rank > 1) unit = fmt::format("{} {}s", u.threads_per_rank, unit);
    throw Error(fmt::format("{} ranks but the cluster {} has only {} slots (one rank per {}); give fewer ranks, more "
                            "nodes or slots, or --oversubscribe",
                            m.size(), cluster.source(), cluster.capacity(), unit));
  }
  MapOptions opt;
  opt.pack = !spread;
  opt.granularity = Granularity::PU;  // a leaf is a whole unit already
  opt.weights = weights.empty() ? cluster.default_weights() : std::move(weights);
  return map_tasks(cluster.tree(), m, policy, opt);
}

double internode_volume(const Cluster& cluster, const CommMatrix& m, const std::vector<int>& rank_leaf) {
  if (static_cast<int>(rank_leaf.size()) != m.size())
    throw Error(fmt::format("internode_volume: {} ranks placed, the matrix has {}", rank_leaf.size(), m.size()),
                ErrorKind::System);
  double v = 0;
  for (const Edge& e : m.edges())
    if (cluster.unit(rank_leaf[e.i]).node != cluster.unit(rank_leaf[e.j]).node) v += e.weight;
  return v;
}

}  // namespace canopy
