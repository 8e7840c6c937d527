// libFuzzer target: the bytes as an environment for canopy's OpenMP runtime.
// The input is split at '\x01' bytes; each piece's first byte picks one of
// the OMP_*/GOMP_* variables and the rest is its value. parse_settings must
// never throw or crash, must give at most one warning line per variable set,
// and must leave places that hold (non-empty, sorted, on the machine);
// display_env and format_affinity (every value used as a format) must
// survive whatever parse_settings kept. A violation aborts (a finding).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "canopy/topology.hpp"
#include "omp/core/settings.hpp"

namespace {

const char* const kVariables[] = {
    "OMP_NUM_THREADS",        "OMP_PROC_BIND",       "OMP_PLACES",            "GOMP_CPU_AFFINITY",
    "OMP_DYNAMIC",            "OMP_MAX_ACTIVE_LEVELS", "OMP_NESTED",          "OMP_THREAD_LIMIT",
    "OMP_SCHEDULE",           "OMP_STACKSIZE",       "GOMP_STACKSIZE",        "OMP_WAIT_POLICY",
    "OMP_DISPLAY_ENV",        "OMP_DISPLAY_AFFINITY", "OMP_AFFINITY_FORMAT",  "OMP_CANCELLATION",
    "OMP_MAX_TASK_PRIORITY",  "OMP_DEFAULT_DEVICE",  "OMP_ALLOCATOR",         "OMP_NUM_TEAMS",
    "OMP_TEAMS_THREAD_LIMIT", "GOMP_SPINCOUNT",      "OMP_TARGET_OFFLOAD"};
constexpr std::size_t kNumVariables = sizeof(kVariables) / sizeof(kVariables[0]);

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_omp_env: invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const canopy::Topology machine = canopy::Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  std::map<std::string, std::string> env;
  std::string input(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start < input.size()) {
    std::size_t end = input.find('\x01', start);
    if (end == std::string::npos) end = input.size();
    if (end > start)
      env[kVariables[static_cast<unsigned char>(input[start]) % kNumVariables]] =
          input.substr(start + 1, end - start - 1);
    start = end + 1;
  }
  canopy::omp::Getenv getenv = [&env](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  std::ostringstream warnings;
  canopy::omp::Settings s = canopy::omp::parse_settings(getenv, machine, warnings);
  const std::string lines = warnings.str();
  check(static_cast<std::size_t>(std::count(lines.begin(), lines.end(), '\n')) <= env.size(),
        "more warning lines than variables");
  for (const canopy::omp::Place& p : s.places) {
    check(!p.os_cpus.empty(), "an empty place");
    check(std::is_sorted(p.os_cpus.begin(), p.os_cpus.end()), "an unsorted place");
    for (int cpu : p.os_cpus) check(machine.pu_by_os_index(cpu) >= 0, "a CPU the machine lacks");
  }
  for (int n : s.num_threads) check(n > 0, "a thread count below 1");
  std::ostringstream out;
  canopy::omp::display_env(s, true, out);
  canopy::omp::AffinityFields fields;
  fields.os_cpus = {0, 1, 2, 5};
  fields.host = "host";
  for (const auto& [name, value] : env) (void)canopy::omp::format_affinity(value, fields);
  (void)canopy::omp::format_affinity(s.affinity_format, fields);
  return 0;
}
