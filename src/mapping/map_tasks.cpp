// map_tasks: the pipeline every policy runs in: check the input, resolve the
// cost weights, choose the slots, run the policy, check that it filled the
// slots exactly, add the helper PUs, validate.
#include <fmt/format.h>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"

namespace canopy {

Placement map_tasks(const Topology& topo, const CommMatrix& m, const std::string& policy, const MapOptions& opt) {
  const Policy& pol = find_policy(policy);
  const int T = m.size();
  if (T < 1) throw Error("cannot map the matrix: it has no task");
  MapOptions o = opt;
  o.weights = resolve_weights(topo, opt.weights);
  const Slots slots = choose_slots(topo, T, o);

  std::vector<int> task_pu = pol.map(topo, m, o, slots);
  const int P = topo.num_pus();
  if (static_cast<int>(task_pu.size()) != T)
    throw Error(fmt::format("policy '{}' placed {} tasks, expected {}", pol.name, task_pu.size(), T),
                ErrorKind::System);
  std::vector<int> load(P, 0);
  for (int t = 0; t < T; ++t) {
    if (task_pu[t] < 0 || task_pu[t] >= P)
      throw Error(fmt::format("policy '{}' put task {} on PU {}, outside 0..{}", pol.name, t, task_pu[t], P - 1),
                  ErrorKind::System);
    ++load[task_pu[t]];
  }
  for (int p = 0; p < P; ++p)
    if (load[p] != slots.capacity[p])
      throw Error(fmt::format("policy '{}' put {} tasks on PU {}, whose slot holds {}", pol.name, load[p], p,
                              slots.capacity[p]),
                  ErrorKind::System);

  Placement pl;
  pl.policy = pol.name;
  pl.granularity = o.granularity;
  pl.task_pu = std::move(task_pu);
  if (o.helpers == Helpers::SMT) {
    // The slots hold one task per core on cores with a sibling; the sibling
    // is the task's helper PU.
    pl.helper_pu.assign(T, -1);
    for (int t = 0; t < T; ++t) {
      for (int q : topo.core(topo.pu(pl.task_pu[t]).core).pus)
        if (load[q] == 0) {
          pl.helper_pu[t] = q;
          break;
        }
      if (pl.helper_pu[t] < 0)
        throw Error(fmt::format("policy '{}': task {} has no free sibling PU for its helpers", pol.name, t),
                    ErrorKind::System);
    }
  }
  validate_placement(topo, pl);
  return pl;
}

}  // namespace canopy
