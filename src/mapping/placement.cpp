// Placement helpers: bindings per task and the validity check every policy's
// result goes through.
#include "canopy/placement.hpp"

#include <fmt/format.h>

#include "canopy/error.hpp"
#include "canopy/topology.hpp"

namespace canopy {

std::vector<int> Placement::binding(const Topology& topo, int task) const {
  int pu = task_pu.at(task);
  if (granularity == Granularity::Core) return topo.core(topo.pu(pu).core).pus;
  return {pu};
}

void validate_placement(const Topology& topo, const Placement& p) {
  const int T = p.num_tasks();
  const int P = topo.num_pus();
  if (T == 0) return;
  const int cap = (T + P - 1) / P;
  std::vector<int> load(P, 0);
  for (int t = 0; t < T; ++t) {
    int pu = p.task_pu[t];
    if (pu < 0 || pu >= P)
      throw Error(fmt::format("placement by '{}': task {} has PU {}, outside 0..{}", p.policy, t, pu, P - 1),
                  ErrorKind::System);
    if (++load[pu] > cap)
      throw Error(fmt::format("placement by '{}': PU {} holds more than ceil({}/{}) = {} tasks", p.policy, pu, T,
                              P, cap),
                  ErrorKind::System);
  }
  if (!p.helper_pu.empty()) {
    if (static_cast<int>(p.helper_pu.size()) != T)
      throw Error(fmt::format("placement by '{}': {} helper entries for {} tasks", p.policy, p.helper_pu.size(), T),
                  ErrorKind::System);
    for (int t = 0; t < T; ++t) {
      int h = p.helper_pu[t];
      if (h < -1 || h >= P || (h >= 0 && load[h] > 0))
        throw Error(fmt::format("placement by '{}': helper PU {} of task {} is not a free PU", p.policy, h, t),
                    ErrorKind::System);
    }
  }
}

Granularity parse_granularity(const std::string& s) {
  if (s == "pu") return Granularity::PU;
  if (s == "core") return Granularity::Core;
  throw Error(fmt::format("granularity '{}': expected 'core' or 'pu'", s));
}

Helpers parse_helpers(const std::string& s) {
  if (s == "none") return Helpers::None;
  if (s == "smt") return Helpers::SMT;
  throw Error(fmt::format("helpers '{}': expected 'smt' or 'none'", s));
}

std::string to_string(Granularity g) { return g == Granularity::Core ? "core" : "pu"; }

}  // namespace canopy
