// The placement as the strings other tools read: OMP_PLACES, GOMP_CPU_AFFINITY,
// a plain list of OS CPU numbers, and Open MPI rankfiles; plus the table of
// format names and the dispatch of format_placement().
#include <fmt/format.h>

#include <algorithm>

#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "formats/placement_detail.hpp"

namespace canopy {

const std::vector<std::string>& placement_format_names() {
  static const std::vector<std::string> names{"table", "json", "list", "omp-places", "gomp", "rankfile"};
  return names;
}

PlacementFormat parse_placement_format(const std::string& name) {
  static const PlacementFormat formats[] = {PlacementFormat::Table,     PlacementFormat::Json,
                                            PlacementFormat::List,      PlacementFormat::OmpPlaces,
                                            PlacementFormat::Gomp,      PlacementFormat::Rankfile};
  const auto& names = placement_format_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return formats[i];
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error(fmt::format("unknown placement format '{}': expected one of {}", name, list));
}

std::vector<int> formats::binding_os(const Topology& topo, const Placement& p, int task) {
  std::vector<int> os;
  for (int pu : p.binding(topo, task)) os.push_back(topo.pu(pu).os_index);
  std::sort(os.begin(), os.end());
  return os;
}

std::string omp_places(const Topology& topo, const Placement& p) {
  // An explicit list of places, one per task, each the task's binding as OS
  // CPU numbers: the places syntax "{0},{1},{2,3}" of the OpenMP
  // specification's OMP_PLACES variable, read by libgomp and LLVM's libomp
  // alike. A place may repeat when tasks share a PU (oversubscription).
  std::string r;
  for (int t = 0; t < p.num_tasks(); ++t) {
    std::string place;
    for (int os : formats::binding_os(topo, p, t)) {
      if (!place.empty()) place += ',';
      place += std::to_string(os);
    }
    if (t) r += ',';
    r += '{';
    r += place;
    r += '}';
  }
  return r;
}

std::string gomp_cpu_affinity(const Topology& topo, const Placement& p) {
  // libgomp binds thread i to the i-th CPU of the list; a list of single
  // CPUs cannot say "a whole core", so this is always the task's PU.
  std::string r;
  for (int t = 0; t < p.num_tasks(); ++t) {
    if (t) r += ' ';
    r += std::to_string(topo.pu(p.task_pu.at(t)).os_index);
  }
  return r;
}

std::string rankfile(const Topology& topo, const Placement& p, const std::string& host) {
  // Open MPI rankfile lines "rank <N>=<hostname> slot=<slot list>" (Open MPI
  // 5 / PRRTE documentation, "Placement > Rankfiles"; the same syntax since
  // Open MPI 1.3). Slot numbers are hwloc *logical* indexes: of cores by
  // default, or of hardware threads when the job treats hardware threads as
  // CPUs (PRRTE's prte_hwloc_base_cpu_list_parse picks the object type from
  // use_hwthread_cpus). So granularity core writes the task's logical core,
  // and granularity pu its logical PU (plus its helper PU, which must be in
  // the process's cpuset for its helper threads to run there) and must be
  // run with hardware threads as CPUs. Lines starting with '#' are comments
  // to Open MPI's rankfile lexer.
  const bool core = p.granularity == Granularity::Core;
  std::string r;
  r += fmt::format("# Open MPI rankfile by canopy: policy {}, {} ranks on {}, granularity {}\n",
                   p.policy.empty() ? "?" : p.policy, p.num_tasks(), topo.source(), to_string(p.granularity));
  if (core) {
    r += "# slot = hwloc logical core index (the rank is bound to the whole core). Run with:\n";
    r += "#   mpirun --rankfile FILE ...                      (Open MPI 4)\n";
    r += "#   mpirun --map-by rankfile:file=FILE ...          (Open MPI 5)\n";
  } else {
    r += "# slot = hwloc logical PU (hardware thread) index. Run with hardware threads as CPUs:\n";
    r += "#   mpirun --use-hwthread-cpus --rankfile FILE ...  (Open MPI 4)\n";
    r += "#   mpirun --map-by rankfile:file=FILE:hwtcpus ...  (Open MPI 5)\n";
  }
  for (int t = 0; t < p.num_tasks(); ++t) {
    int pu = p.task_pu.at(t);
    std::string slot;
    if (core) {
      slot = std::to_string(topo.pu(pu).core);
    } else {
      slot = std::to_string(pu);
      if (!p.helper_pu.empty() && p.helper_pu.at(t) >= 0) slot += fmt::format(",{}", p.helper_pu.at(t));
    }
    r += fmt::format("rank {}={} slot={}\n", t, host, slot);
  }
  return r;
}

std::string format_placement(const Topology& topo, const Placement& p, PlacementFormat format, const CommMatrix* m) {
  switch (format) {
    case PlacementFormat::Table: return formats::placement_table(topo, p, m);
    case PlacementFormat::Json: return formats::placement_json(topo, p, m);
    case PlacementFormat::List: return gomp_cpu_affinity(topo, p) + "\n";
    case PlacementFormat::OmpPlaces: return omp_places(topo, p) + "\n";
    case PlacementFormat::Gomp: return gomp_cpu_affinity(topo, p) + "\n";
    case PlacementFormat::Rankfile: return rankfile(topo, p);
  }
  throw Error("format_placement: unknown format", ErrorKind::System);
}

}  // namespace canopy
