// canopy::compare_policies: run every registered policy on one matrix and
// topology and judge each placement with the cost model. The CLI's
// `canopy compare` and the Python package's canopy.compare() both print or
// return this; one policy that throws does not hide the others' results.
#pragma once
#include <string>
#include <vector>

#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"

namespace canopy {

class Topology;
class CommMatrix;

struct PolicyResult {
  std::string policy;
  Cost cost;           // meaningful only when error is empty
  double ratio = 0;    // weighted cost / the best weighted cost (1 when the best is 0)
  double time_ms = 0;  // time map_tasks took
  std::string error;   // canopy::Error's message when the policy failed, else empty
};

struct Comparison {
  std::vector<PolicyResult> results;  // in the order of policies()
  int best = -1;                      // index of the lowest weighted cost (ties: lower hop-bytes), -1 if all failed
  std::vector<double> weights;        // the per-level weights used, root first
};

// opt.weights empty = the default weights; otherwise validated with
// resolve_weights (throws canopy::Error, as do a bad topology or matrix).
Comparison compare_policies(const Topology& topo, const CommMatrix& m, const MapOptions& opt = {});

}  // namespace canopy
