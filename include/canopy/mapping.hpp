// Mapping policies: a named registry {name, description, function} that the
// C++ API, the C API and the CLI all use. A policy maps the tasks of a
// CommMatrix onto a Topology.
//
// The engine does the work common to every policy before calling it (see
// slots.hpp): it chooses how many tasks each PU receives (at most
// ceil(T/P); with fewer tasks than PUs one per core before any hyperthread
// sibling, spread evenly over NUMA nodes, or packed into as few as possible
// with `pack`), then the policy decides which task goes to which slot.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "canopy/placement.hpp"

namespace canopy {

class Topology;
class CommMatrix;

struct MapOptions {
  bool pack = false;                       // pack into as few NUMA nodes as possible
  Granularity granularity = Granularity::PU;
  Helpers helpers = Helpers::None;
  std::vector<double> weights;             // per-level cost weights (root first); empty = defaults
};

// The slots a policy fills: capacity[pu] tasks may go to logical PU pu;
// capacities sum to the number of tasks.
struct Slots {
  std::vector<int> capacity;
};

// A policy receives the topology, the matrix, the options and the slots the
// engine chose, and returns task -> logical PU respecting the capacities.
using PolicyFunction =
    std::function<std::vector<int>(const Topology&, const CommMatrix&, const MapOptions&, const Slots&)>;

struct Policy {
  std::string name;
  std::string description;  // one line, shown by `canopy map --list-policies`
  PolicyFunction map;
};

// Every registered policy, in the order they are listed.
const std::vector<Policy>& policies();
// Throws canopy::Error naming the known policies when `name` is unknown.
const Policy& find_policy(const std::string& name);
// Adds a policy at run time (a user's own, listed after the built-ins:
// compact, scatter, treematch, eagermap, choicemap and canopy); throws when
// the name is taken.
void register_policy(Policy p);
// The default policy name: "canopy", canopy's own policy
// (docs/policies/canopy.md).
std::string default_policy();

// Choose the slots (see the top of this file).
Slots choose_slots(const Topology& topo, int num_tasks, const MapOptions& opt);

// The whole pipeline: slots, policy, helpers, validation.
Placement map_tasks(const Topology& topo, const CommMatrix& m, const std::string& policy,
                    const MapOptions& opt = {});

}  // namespace canopy
