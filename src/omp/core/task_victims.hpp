// The order in which a thread of a team tries the other threads' task
// deques when it has no task of its own: closest first by the machine's
// topology (same core, then the same cache, then the same NUMA node, then
// the package, then the machine), from the CPUs the team's threads were
// placed on. Threads at the same distance are tried starting after the
// thief's own slot, so neighbours do not all go to the same victim first.
#pragma once
#include <vector>

namespace canopy {
class Topology;
}

namespace canopy::omp {

// slot_pu[i]: the logical PU of thread i of the team (-1: not bound, in
// which case that thread is treated as far from every other one). Returns
// the other slots in the order thread `self` steals from them.
std::vector<int> victim_order(const Topology* topo, const std::vector<int>& slot_pu, int self);

// The logical PU of a thread placed on `cpus` (OS CPU numbers; the first
// one stands for the place), -1 when unknown.
int pu_of_cpus(const Topology* topo, const std::vector<int>& cpus);
// Whether `cpus` lie in one core (a thread pinned to a PU or a core, not
// spread over the partition of an unpinned team).
bool pinned_to_one_core(const Topology* topo, const std::vector<int>& cpus);

}  // namespace canopy::omp
