// display_env: the OMP_DISPLAY_ENV block. The variable list, its order and
// the value spellings are GCC 12 libgomp's (TRUE/FALSE, MASTER for primary,
// places as "{0:2},{2:2}", an unlimited thread limit as 4294967295), so that
// scripts that parse libgomp's block read canopy's unchanged; two extra
// lines, CANOPY_RUNTIME and CANOPY_VERSION, tell that canopy runs the program.
#include <algorithm>
#include <ostream>
#include <string>

#include "omp/core/settings.hpp"

#ifndef CANOPY_VERSION
#error "CANOPY_VERSION must be defined by the build (the project version)"
#endif

namespace canopy::omp {
namespace {

const char* bind_name(ProcBind b) {
  switch (b) {
    case ProcBind::False: return "FALSE";
    case ProcBind::True: return "TRUE";
    case ProcBind::Primary: return "MASTER";  // GCC 12 still prints the 4.0 name
    case ProcBind::Close: return "CLOSE";
    case ProcBind::Spread: return "SPREAD";
  }
  return "FALSE";
}

std::string schedule_string(const Schedule& s) {
  std::string out;
  // libgomp's rules: static is monotonic unless told otherwise, the other
  // kinds are nonmonotonic unless told otherwise; only the non-default is shown.
  if (s.kind == ScheduleKind::Static) {
    if (s.nonmonotonic) out += "NONMONOTONIC:";
  } else if (s.monotonic) {
    out += "MONOTONIC:";
  }
  switch (s.kind) {
    case ScheduleKind::Static:
      out += "STATIC";
      if (s.chunk != 0) out += ',' + std::to_string(s.chunk);
      break;
    case ScheduleKind::Dynamic:
    case ScheduleKind::Guided:
      out += s.kind == ScheduleKind::Dynamic ? "DYNAMIC" : "GUIDED";
      if (s.chunk > 1) out += ',' + std::to_string(s.chunk);
      break;
    case ScheduleKind::Auto: out += "AUTO"; break;
  }
  return out;
}

}  // namespace

std::string cpu_list_string(const std::vector<int>& os_cpus) {
  std::vector<int> v(os_cpus);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j > i) {
      out += '-';  // (not "-" + to_string: GCC 12 warns falsely, -Wrestrict)
      out += std::to_string(v[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string places_string(const std::vector<Place>& places) {
  std::string out;
  for (std::size_t p = 0; p < places.size(); ++p) {
    std::vector<int> v(places[p].os_cpus);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    out += p == 0 ? "{" : ",{";
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (i > 0) out += ',';
      out += std::to_string(v[i]);
      if (j > i) {
        out += ':';
        out += std::to_string(j - i + 1);
      }
      i = j + 1;
    }
    out += '}';
  }
  return out;
}

void display_env(const Settings& s, bool verbose, std::ostream& out) {
  const int levels = effective_max_active_levels(s);
  out << "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n";
  out << "  _OPENMP = '201511'\n";
  out << "  OMP_DYNAMIC = '" << (s.dynamic ? "TRUE" : "FALSE") << "'\n";
  out << "  OMP_NESTED = '" << (levels > 1 ? "TRUE" : "FALSE") << "'\n";
  out << "  OMP_NUM_THREADS = '";
  if (s.num_threads.empty()) out << s.default_num_threads;
  for (std::size_t i = 0; i < s.num_threads.size(); ++i) out << (i ? "," : "") << s.num_threads[i];
  out << "'\n";
  out << "  OMP_SCHEDULE = '" << schedule_string(s.run_sched) << "'\n";
  out << "  OMP_PROC_BIND = '";
  if (s.proc_bind.empty()) out << "FALSE";
  for (std::size_t i = 0; i < s.proc_bind.size(); ++i) out << (i ? "," : "") << bind_name(s.proc_bind[i]);
  out << "'\n";
  out << "  OMP_PLACES = '" << places_string(s.places) << "'\n";
  out << "  OMP_STACKSIZE = '" << s.stacksize << "'\n";
  // libgomp's default is neither active nor passive and shows as PASSIVE.
  out << "  OMP_WAIT_POLICY = '" << (s.wait_policy == WaitPolicy::Active ? "ACTIVE" : "PASSIVE") << "'\n";
  out << "  OMP_THREAD_LIMIT = '" << (s.thread_limit > 0 ? std::to_string(s.thread_limit) : "4294967295") << "'\n";
  out << "  OMP_MAX_ACTIVE_LEVELS = '" << levels << "'\n";
  out << "  OMP_NUM_TEAMS = '" << s.num_teams << "'\n";
  out << "  OMP_TEAMS_THREAD_LIMIT = '" << s.teams_thread_limit << "'\n";
  out << "  OMP_CANCELLATION = '" << (s.cancellation ? "TRUE" : "FALSE") << "'\n";
  out << "  OMP_DEFAULT_DEVICE = '" << s.default_device << "'\n";
  out << "  OMP_MAX_TASK_PRIORITY = '" << s.max_task_priority << "'\n";
  out << "  OMP_DISPLAY_AFFINITY = '" << (s.display_affinity ? "TRUE" : "FALSE") << "'\n";
  out << "  OMP_AFFINITY_FORMAT = '" << s.affinity_format << "'\n";
  out << "  OMP_ALLOCATOR = '" << s.allocator << "'\n";
  static const char* offload[] = {"DEFAULT", "MANDATORY", "DISABLED"};
  out << "  OMP_TARGET_OFFLOAD = '" << offload[static_cast<int>(s.target_offload)] << "'\n";
  if (verbose) {
    out << "  GOMP_CPU_AFFINITY = '" << s.gomp_cpu_affinity << "'\n";
    out << "  GOMP_STACKSIZE = '" << s.stacksize << "'\n";
    out << "  GOMP_SPINCOUNT = '" << effective_spin_count(s) << "'\n";
  }
  out << "  CANOPY_RUNTIME = 'canopy'\n";
  out << "  CANOPY_VERSION = '" << CANOPY_VERSION << "'\n";
  out << "OPENMP DISPLAY ENVIRONMENT END\n";
}

}  // namespace canopy::omp
