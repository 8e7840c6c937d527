// The `canopy` mapping policy: canopy's own, registered in registry.cpp like
// the published ones. See docs/policies/canopy.md for what it does and why.
#pragma once
#include <vector>

#include "canopy/mapping.hpp"

namespace canopy::policy {

inline constexpr const char* kCanopyDescription =
    "multilevel partitioning along the tree's levels with exact slot counts, refined on the weighted cost "
    "(deterministic, numbering-independent, sparse)";

// task -> logical PU, filling slots.capacity exactly. Throws canopy::Error
// when the slots do not match the topology or the matrix.
std::vector<int> canopy(const Topology& topo, const CommMatrix& m, const MapOptions& opt, const Slots& slots);

// The same policy with the lean effort it uses for large inputs (one start,
// one V-cycle, a short refinement) at every size, except that graphs of
// under 2,048 tasks and edges get more starts (up to 8), the best kept:
// what automatic affinity runs while the program waits (a few milliseconds
// for thousands of tasks, where the offline effort of small inputs takes a
// few hundred).
std::vector<int> canopy_lean(const Topology& topo, const CommMatrix& m, const MapOptions& opt, const Slots& slots);

}  // namespace canopy::policy
