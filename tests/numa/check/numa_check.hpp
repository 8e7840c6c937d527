// The table of named NUMA checks that canopy_numa_check runs (inside a VM
// with several NUMA nodes, see scripts/numa-check.sh) and that
// canopy_numa_tests runs on the build machine (checks needing more nodes
// than it has are skipped).
//
// Adding a check: a .cpp file in tests/numa/check/ with
//
//   CANOPY_NUMA_CHECK(my_area_what_it_proves, 2 /* nodes at least */) {
//     numa_require(condition, "what went wrong: {}", value);
//   }
//
// A check fails by throwing (numa_require, or any exception: canopy::Error
// messages are printed as they are). Checks run one after the other on the
// main thread and must leave nothing behind (free their handles, join their
// threads).
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace numa_check {

struct Check {
  std::string name;
  int min_nodes = 1;  // skipped on machines with fewer NUMA nodes
  void (*run)() = nullptr;
};

std::vector<Check>& registry();

struct Registrar {
  Registrar(const char* name, int min_nodes, void (*run)()) { registry().push_back({name, min_nodes, run}); }
};

struct Failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class... Args>
void numa_require(bool ok, fmt::format_string<Args...> f, Args&&... args) {
  if (!ok) throw Failed(fmt::format(f, std::forward<Args>(args)...));
}

// A note for the PASS line of the running check ("PASS name (note)"),
// for the numbers a reader wants to see (shares, counts).
void numa_note(const std::string& note);

// The result of running the table.
struct Summary {
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> lines;  // "PASS name", "FAIL name: why", "SKIP name: why"
};

// Runs the checks whose name contains `filter` ("" = all) and not `exclude`
// ("" = none left out) on a machine of `num_nodes` nodes, in name order.
Summary run_checks(const std::string& filter, int num_nodes, const std::string& exclude = "");

// The logical NUMA nodes of this machine that have CPUs (first-touch checks
// need a thread there).
std::vector<int> nodes_with_cpus();
// Binds the calling thread to the CPUs of logical NUMA node `node`.
void bind_to_node(int node);
// The logical NUMA node of the CPU the calling thread is on now (-1: unknown).
int current_node();

}  // namespace numa_check

#define CANOPY_NUMA_CHECK_CAT2(a, b) a##b
#define CANOPY_NUMA_CHECK_CAT(a, b) CANOPY_NUMA_CHECK_CAT2(a, b)
#define CANOPY_NUMA_CHECK(name, min_nodes)                                                             \
  static void numa_check_##name();                                                                     \
  static const ::numa_check::Registrar CANOPY_NUMA_CHECK_CAT(numa_check_registrar_, name){#name, min_nodes, \
                                                                                          &numa_check_##name}; \
  static void numa_check_##name()

using numa_check::numa_note;
using numa_check::numa_require;
