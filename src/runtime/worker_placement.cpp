// Where a runtime's workers run: the PUs of the placement engine for N
// workers that do not communicate (CANOPY_POLICY), or compact order, and the
// CPUs each worker is bound to (CANOPY_BIND).
#include <fmt/format.h>

#include <algorithm>

#include "canopy/binding.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail {

std::vector<WorkerPlacement> place_workers(const Topology& topo, const RuntimeOptions& options) {
  const int n = options.num_threads > 0 ? options.num_threads : topo.num_cores();
  const long per_pu_limit = static_cast<long>(kMaxThreadsPerPU) * topo.num_pus();
  if (n < 1 || n > kMaxWorkers || n > per_pu_limit)
    throw Error(fmt::format("runtime with {} workers (CANOPY_NUM_THREADS or RuntimeOptions::num_threads): expected 1 "
                            "to {} ({} per PU of the {} this process may use, at most {})",
                            n, std::min<long>(kMaxWorkers, per_pu_limit), kMaxThreadsPerPU, topo.num_pus(),
                            kMaxWorkers));
  std::vector<int> pus;
  if (options.policy.empty()) {
    // Compact: the first PU of every core, then the second ones, ...; more
    // workers than PUs wrap around.
    std::vector<int> order;
    for (std::size_t r = 0; order.size() < static_cast<std::size_t>(topo.num_pus()); ++r)
      for (const CoreInfo& c : topo.cores())
        if (r < c.pus.size()) order.push_back(c.pus[r]);
    for (int i = 0; i < n; ++i) pus.push_back(order[i % order.size()]);
  } else {
    MapOptions mo;
    mo.granularity = options.bind == BindMode::Core ? Granularity::Core : Granularity::PU;
    pus = map_tasks(topo, CommMatrix(n), options.policy, mo).task_pu;
  }
  std::vector<WorkerPlacement> out;
  for (int i = 0; i < n; ++i) {
    const PUInfo& pu = topo.pu(pus[i]);
    WorkerPlacement p;
    p.worker = i;
    p.pu = pu.logical;
    p.pu_os = pu.os_index;
    p.core = pu.core;
    p.numa = pu.numa;
    if (options.bind == BindMode::Core) {
      for (int q : topo.core(pu.core).pus) p.cpus.push_back(topo.pu(q).os_index);
    } else if (options.bind == BindMode::PU) {
      p.cpus.push_back(pu.os_index);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace canopy::detail
