// Output formats other tools already read: OMP_PLACES strings,
// GOMP_CPU_AFFINITY lists, Open MPI rankfiles, JSON, aligned tables and SVG
// pictures. All OS indexes in these strings are the OS CPU numbers.
#pragma once
#include <iosfwd>
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

// Reads the List format back: one OS CPU number per task, whitespace
// separated, '#' starts a comment. Throws canopy::Error naming `name`, the
// line and the token for junk or a CPU `topo` lacks, and when
// `expected_tasks` >= 0 for a different count. Loads are not checked (an
// oversubscribed placement can still be evaluated).
Placement parse_placement_list(const Topology& topo, std::istream& in, const std::string& name,
                               int expected_tasks = -1);

// Topology as readable text (like lstopo), JSON, or an SVG picture.
std::string topology_text(const Topology& topo);
std::string topology_json(const Topology& topo);
std::string topology_svg(const Topology& topo);
// The topology with each task drawn in its PU, coloured by group.
std::string placement_svg(const Topology& topo, const Placement& p);

}  // namespace canopy
