// Pieces of the placement formats shared between their files. Internal to
// src/formats.
#pragma once
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

namespace canopy::formats {

// The OS CPU numbers task `task` is bound to, ascending.
std::vector<int> binding_os(const Topology& topo, const Placement& p, int task);

// Total communication of each task (empty when `m` is null or does not have
// one row per task). Read from the CSR arrays directly.
std::vector<double> task_volumes(const Placement& p, const CommMatrix* m);

std::string placement_table(const Topology& topo, const Placement& p, const CommMatrix* m);
std::string placement_json(const Topology& topo, const Placement& p, const CommMatrix* m);

}  // namespace canopy::formats
