// Output formats other tools already read: OMP_PLACES strings,
// GOMP_CPU_AFFINITY lists, Open MPI rankfiles, JSON, aligned tables and SVG
// pictures. All OS indexes in these strings are the OS CPU numbers.
#pragma once
#include <string>
#include <vector>

#include "canopy/cost.hpp"
#include "canopy/placement.hpp"

namespace canopy {

class Topology;
class CommMatrix;

enum class PlacementFormat { Table, Json, List, OmpPlaces, Gomp, Rankfile };
PlacementFormat parse_placement_format(const std::string& name);  // throws canopy::Error
const std::vector<std::string>& placement_format_names();

// The placement in one of the formats above (the matrix, when given, adds
// per-task communication to table and JSON).
std::string format_placement(const Topology& topo, const Placement& p, PlacementFormat format,
                             const CommMatrix* m = nullptr);
// OMP_PLACES value: one place per task, "{0},{1},{2,3}" (a place is the
// task's binding: its PU, or its core's PUs with granularity core).
std::string omp_places(const Topology& topo, const Placement& p);
// GOMP_CPU_AFFINITY value: one OS CPU per task, "0 1 2 3".
std::string gomp_cpu_affinity(const Topology& topo, const Placement& p);
// Open MPI rankfile, one line per task (rank).
std::string rankfile(const Topology& topo, const Placement& p, const std::string& host = "localhost");

// Topology as readable text (like lstopo), JSON, or an SVG picture.
std::string topology_text(const Topology& topo);
std::string topology_json(const Topology& topo);
std::string topology_svg(const Topology& topo);
// The topology with each task drawn in its PU, coloured by group.
std::string placement_svg(const Topology& topo, const Placement& p);

}  // namespace canopy
