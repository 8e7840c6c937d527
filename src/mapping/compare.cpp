// Every policy on one input, judged by the cost model (see canopy/compare.hpp).
#include "canopy/compare.hpp"

#include <chrono>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"

namespace canopy {

Comparison compare_policies(const Topology& topo, const CommMatrix& m, const MapOptions& options) {
  MapOptions opt = options;
  opt.weights = resolve_weights(topo, options.weights);
  Comparison c;
  c.weights = opt.weights;
  for (const Policy& pol : policies()) {
    PolicyResult r;
    r.policy = pol.name;
    try {
      auto t0 = std::chrono::steady_clock::now();
      Placement p = map_tasks(topo, m, pol.name, opt);
      auto t1 = std::chrono::steady_clock::now();
      r.time_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      r.cost = evaluate(topo, m, p, opt.weights);
    } catch (const Error& e) {
      // One broken policy must not hide the others' results.
      r.error = e.what();
    }
    c.results.push_back(r);
    const int i = static_cast<int>(c.results.size()) - 1;
    if (r.error.empty()) {
      const PolicyResult* b = c.best >= 0 ? &c.results[c.best] : nullptr;
      if (!b || r.cost.weighted < b->cost.weighted ||
          (r.cost.weighted == b->cost.weighted && r.cost.hop_bytes < b->cost.hop_bytes))
        c.best = i;
    }
  }
  const double best = c.best >= 0 ? c.results[c.best].cost.weighted : 0;
  for (PolicyResult& r : c.results)
    if (r.error.empty()) r.ratio = best > 0 ? r.cost.weighted / best : 1.0;
  return c;
}

}  // namespace canopy
