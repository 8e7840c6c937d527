// The cost model: what a placement costs on a topology. Lower is better.
#pragma once
#include <string>
#include <vector>

namespace canopy {

class Topology;
class CommMatrix;
struct Placement;

struct Cost {
  double hop_bytes = 0;         // sum over pairs of volume × tree edges between their PUs
  double weighted = 0;          // sum over pairs of volume × weight[level of common ancestor]
  double numa_crossing = 0;     // volume between tasks on different NUMA nodes
  std::vector<int> tasks_per_numa;  // per logical NUMA node
};

// Default weight per level, root first: documented in docs/cost-model.md.
std::vector<double> default_weights(const Topology& topo);
// Validates user weights (--weights): one per level or one per level above
// the PUs (the PU level then weighs 0); finite, non-negative.
std::vector<double> resolve_weights(const Topology& topo, const std::vector<double>& user);
// Parse "W0,W1,..." (throws canopy::Error naming the bad item).
std::vector<double> parse_weights(const std::string& s);

Cost evaluate(const Topology& topo, const CommMatrix& m, const std::vector<int>& task_pu,
              const std::vector<double>& weights = {});
Cost evaluate(const Topology& topo, const CommMatrix& m, const Placement& p,
              const std::vector<double>& weights = {});

}  // namespace canopy
