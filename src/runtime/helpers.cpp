// Helper threads (canopy/helpers.hpp): the PUs no worker uses, siblings of a
// worker's PU first (a helper then shares the worker's core caches without
// taking its pipeline), the fewest helpers first; without such a PU the
// core whose PUs carry the fewest helpers.
#include "canopy/helpers.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

#include "canopy/binding.hpp"
#include "canopy/topology.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {

HelperPlacement choose_helper_pu(const Topology& topo, const std::vector<int>& worker_pus,
                                 const std::vector<int>& helpers) {
  const int P = topo.num_pus();
  std::vector<int> workers_on(P, 0);
  std::vector<bool> worker_core(topo.num_cores(), false);
  for (int pu : worker_pus)
    if (pu >= 0 && pu < P) {
      ++workers_on[pu];
      worker_core[topo.pu(pu).core] = true;
    }
  auto helpers_on = [&](int pu) { return pu < static_cast<int>(helpers.size()) ? helpers[pu] : 0; };
  // A free PU: siblings of workers first, then the fewest helpers, then order.
  int best = -1;
  auto key = [&](int pu) { return std::pair{worker_core[topo.pu(pu).core] ? 0 : 1, helpers_on(pu)}; };
  for (int pu = 0; pu < P; ++pu)
    if (workers_on[pu] == 0 && (best < 0 || key(pu) < key(best))) best = pu;
  HelperPlacement h;
  if (best >= 0) {
    h.pu = best;
  } else {
    // Every PU runs a worker: the core with the fewest helpers (then the
    // fewest workers), its first PU.
    long best_load = std::numeric_limits<long>::max();
    for (const CoreInfo& c : topo.cores()) {
      long load = 0, work = 0;
      for (int pu : c.pus) {
        load += helpers_on(pu);
        work += workers_on[pu];
      }
      const long k = load * 1024 + work;
      if (k < best_load) {
        best_load = k;
        h.pu = c.pus.front();
      }
    }
    h.shared = true;
  }
  h.pu_os = topo.pu(h.pu).os_index;
  return h;
}

HelperPlacement register_helper_thread(Runtime& rt) {
  detail::RuntimeCore* c = rt.core();
  const Topology& topo = *c->topology;
  HelperPlacement h;
  {
    std::lock_guard<std::mutex> lock(c->affinity_mutex);
    if (c->helpers.empty()) c->helpers.assign(topo.num_pus(), 0);
    std::vector<int> worker_pus;
    for (const WorkerPlacement& w : c->placement) worker_pus.push_back(w.pu);
    h = choose_helper_pu(topo, worker_pus, c->helpers);
    ++c->helpers[h.pu];
  }
  if (c->options.bind != BindMode::None && topo.is_this_machine()) {
    if (h.shared)
      for (int pu : topo.core(topo.pu(h.pu).core).pus) h.cpus.push_back(topo.pu(pu).os_index);
    else
      h.cpus.push_back(h.pu_os);
    bind_current_thread(h.cpus);
  }
  return h;
}

}  // namespace canopy
