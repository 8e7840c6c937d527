// canopy: the umbrella header of the C++ API. It includes every public
// header of include/canopy/ (detail/ is not API): the topology, matrices,
// placement engine, policies and cost model, clusters of machines (MPI
// ranks), output formats, binding, profiling (profile.hpp), the task runtime
// and affinity hints, data handles, data-flow tasks and task graphs.
// tests/headers checks that none is left out and that each of them,
// this one included, compiles alone.
#pragma once
#include "canopy/affinity.hpp"
#include "canopy/auto_affinity.hpp"
#include "canopy/binding.hpp"
#include "canopy/bubble.hpp"
#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/compare.hpp"
#include "canopy/cost.hpp"
#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/helpers.hpp"
#include "canopy/mapping.hpp"
#include "canopy/placement.hpp"
#include "canopy/profile.hpp"
#include "canopy/runtime.hpp"
#include "canopy/taskgraph.hpp"
#include "canopy/topology.hpp"
#include "canopy/trace.hpp"
