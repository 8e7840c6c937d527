// canopy's reading of the environment against GCC's own libgomp on this
// machine: a GCC-compiled probe prints libgomp's OMP_DISPLAY_ENV block for a
// set of variables (good values, bad ones, corner cases), and canopy's
// display_env for the same variables and this machine must print the same
// block, line for line (canopy's two CANOPY_* lines aside). This checks the
// parsing (a value libgomp refuses keeps the default in both), the places
// libgomp builds from sysfs against those canopy builds from hwloc, and the
// display format at once. Skipped when the build has no GCC OpenMP.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "env_fixture.hpp"

using namespace canopy::omp;
using omp_test::Env;

namespace {

std::string block_of(const std::string& text) {
  auto b = text.find("OPENMP DISPLAY ENVIRONMENT BEGIN\n");
  auto e = text.find("OPENMP DISPLAY ENVIRONMENT END\n");
  if (b == std::string::npos || e == std::string::npos || e < b) return "(no block in: " + text + ")";
  std::istringstream in(text.substr(b, e - b));
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  CANOPY_", 0) != 0) out += line + "\n";
  return out;
}

#ifdef CANOPY_LIBGOMP_PROBE
std::string libgomp_block(const Env& env) {
  std::string cmd = "env -i";
  for (const auto& [k, v] : env) cmd += " " + k + "='" + v + "'";
  cmd += " " CANOPY_LIBGOMP_PROBE " 2>&1 >/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "(popen failed)";
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return block_of(out);
}
#endif

}  // namespace

TEST(OmpLibgompDiff, SameDisplayBlockAsGcc12Libgomp) {
#ifndef CANOPY_LIBGOMP_PROBE
  GTEST_SKIP() << "no GCC OpenMP in this build";
#else
  const canopy::Topology machine = canopy::Topology::this_machine();
  const std::vector<Env> cases = {
      {},
      {{"OMP_NUM_THREADS", "3"}},
      {{"OMP_NUM_THREADS", " 4 , 2 "}},
      {{"OMP_NUM_THREADS", "4,x"}},
      {{"OMP_NUM_THREADS", "0"}},
      {{"OMP_NUM_THREADS", ""}},
      {{"OMP_DYNAMIC", "TRUE"}, {"OMP_CANCELLATION", " true "}, {"OMP_DISPLAY_AFFINITY", "false"}},
      {{"OMP_DYNAMIC", "1"}, {"OMP_CANCELLATION", "yes"}},
      {{"OMP_SCHEDULE", "static"}},
      {{"OMP_SCHEDULE", "static,0"}},
      {{"OMP_SCHEDULE", "nonmonotonic:static,3"}},
      {{"OMP_SCHEDULE", "monotonic : dynamic , 2"}},
      {{"OMP_SCHEDULE", "monotonic:static"}},
      {{"OMP_SCHEDULE", "guided,0"}},
      {{"OMP_SCHEDULE", "GUIDED,9"}},
      {{"OMP_SCHEDULE", "auto"}},
      {{"OMP_SCHEDULE", "fast"}},
      {{"OMP_SCHEDULE", "dynamic,"}},
      {{"OMP_PROC_BIND", "close"}},
      {{"OMP_PROC_BIND", "spread,close"}},
      {{"OMP_PROC_BIND", "false,close"}},
      {{"OMP_PROC_BIND", "primary"}},
      {{"OMP_PROC_BIND", "TRUE"}},
      {{"OMP_PLACES", "threads"}},
      {{"OMP_PLACES", "cores"}},
      {{"OMP_PLACES", "sockets"}},
      {{"OMP_PLACES", "ll_caches"}},
      {{"OMP_PLACES", "numa_domains"}},
      {{"OMP_PLACES", "threads(1)"}},
      {{"OMP_PLACES", "cores(1)"}, {"OMP_PROC_BIND", "spread"}},
      {{"OMP_PLACES", "cores"}, {"OMP_PROC_BIND", "false"}},
      {{"OMP_PLACES", "{0},{1}"}},
      {{"OMP_PLACES", "{0:2}"}},
      {{"OMP_PLACES", "{1,0}"}},
      {{"OMP_PLACES", "0:2"}},
      {{"OMP_PLACES", "{0:2,!1}"}},
      {{"OMP_PLACES", "{0},{1},!{0}"}},
      {{"OMP_PLACES", "{5000}"}},
      {{"OMP_PLACES", "bogus"}},
      {{"OMP_PLACES", "cores(0)"}},
      {{"OMP_PLACES", "{0:2}:2:-1"}},
      {{"OMP_STACKSIZE", "1M"}},
      {{"OMP_STACKSIZE", "100"}},
      {{"OMP_STACKSIZE", "  2 g "}},
      {{"OMP_STACKSIZE", "8X"}},
      {{"GOMP_STACKSIZE", "64k"}},
      {{"OMP_WAIT_POLICY", "active"}},
      {{"OMP_WAIT_POLICY", "PASSIVE"}},
      {{"OMP_WAIT_POLICY", "lazy"}},
      {{"GOMP_SPINCOUNT", "10k"}},
      {{"GOMP_SPINCOUNT", "infinite"}},
      {{"GOMP_SPINCOUNT", "1T"}},
      {{"GOMP_SPINCOUNT", "x"}},
      {{"OMP_THREAD_LIMIT", "8"}},
      {{"OMP_THREAD_LIMIT", "0"}},
      {{"OMP_MAX_ACTIVE_LEVELS", "3"}},
      {{"OMP_MAX_ACTIVE_LEVELS", "1000"}},
      {{"OMP_NESTED", "true"}},
      {{"OMP_NESTED", "false"}, {"OMP_NUM_THREADS", "2,2"}},
      {{"OMP_NUM_TEAMS", "2"}, {"OMP_TEAMS_THREAD_LIMIT", "3"}},
      {{"OMP_NUM_TEAMS", "0"}, {"OMP_TEAMS_THREAD_LIMIT", "x"}},
      {{"OMP_DEFAULT_DEVICE", "2"}, {"OMP_MAX_TASK_PRIORITY", "5"}},
      {{"OMP_AFFINITY_FORMAT", "%n on %A"}},
      {{"OMP_ALLOCATOR", "omp_pteam_mem_alloc"}},
      {{"OMP_ALLOCATOR", "OMP_CONST_MEM_ALLOC"}},
      {{"OMP_ALLOCATOR", "bad"}},
      {{"OMP_TARGET_OFFLOAD", "disabled"}},
      {{"GOMP_CPU_AFFINITY", "0 1"}},
      {{"GOMP_CPU_AFFINITY", "1,0-1:1"}},
      {{"GOMP_CPU_AFFINITY", "1-0"}},
      {{"GOMP_CPU_AFFINITY", "0"}, {"OMP_PROC_BIND", "false"}},
      {{"OMP_PLACES", "threads(9)"}},
      {{"OMP_PLACES", " cores ( 1 ) "}},
      {{"OMP_PLACES", "{0,1}:1"}},
      {{"OMP_PLACES", "!{0}"}},
      {{"OMP_PLACES", "0-1"}},
      {{"OMP_PLACES", "{1:2:-1}"}},
      {{"OMP_PLACES", "{0},{1}"}, {"OMP_PROC_BIND", "close,spread"}},
      {{"OMP_SCHEDULE", "static , 5"}},
      {{"OMP_SCHEDULE", "Monotonic:Auto"}},
      {{"OMP_NUM_THREADS", "1,,2"}},
      {{"OMP_STACKSIZE", "0"}},
      {{"OMP_MAX_ACTIVE_LEVELS", "-1"}},
      {{"OMP_THREAD_LIMIT", "99999999999"}},
      {{"GOMP_SPINCOUNT", "99999999999T"}},
      {{"OMP_DEFAULT_DEVICE", "-1"}},
      {{"OMP_DISPLAY_AFFINITY", "TRUE"}, {"OMP_WAIT_POLICY", " active "}},
  };
  for (Env env : cases) {
    // libgomp's verbose block always shows GOMP_CPU_AFFINITY as ''; canopy
    // shows the value it used, so those cases compare the short block.
    bool verbose = env.count("GOMP_CPU_AFFINITY") == 0;
    env["OMP_DISPLAY_ENV"] = verbose ? "verbose" : "true";
    std::ostringstream warnings;
    Settings s = parse_settings(omp_test::getenv_of(env), machine, warnings);
    s.default_num_threads = machine.num_pus();  // libgomp: one thread per CPU
    std::ostringstream ours;
    display_env(s, s.display_env_verbose, ours);
    std::string what;
    for (const auto& [k, v] : env) what += k + "='" + v + "' ";
    EXPECT_EQ(block_of(ours.str()), libgomp_block(env)) << what << "\nwarnings: " << warnings.str();
  }
#endif
}
