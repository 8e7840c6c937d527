// canopy_numa_check: runs the table of NUMA checks (numa_check.hpp) on this
// machine and ends with "N passed, M failed". Meant to run inside a VM with
// several NUMA nodes (scripts/numa-check.sh); exit 0 only when nothing
// failed and, with --nodes N, the machine has exactly N nodes.
//
//   canopy_numa_check [--nodes N] [--filter SUBSTRING] [--exclude SUBSTRING] [--list]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "canopy/data.hpp"
#include "numa_check.hpp"

int main(int argc, char** argv) {
  std::string filter, exclude;
  int want_nodes = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      for (const auto& c : numa_check::registry()) std::printf("%s (needs %d nodes)\n", c.name.c_str(), c.min_nodes);
      return 0;
    } else if (a == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (a == "--exclude" && i + 1 < argc) {
      exclude = argv[++i];
    } else if (a == "--nodes" && i + 1 < argc) {
      char* end = nullptr;
      want_nodes = static_cast<int>(std::strtol(argv[++i], &end, 10));
      if (*end || want_nodes < 1) {
        std::fprintf(stderr, "canopy_numa_check: --nodes %s: expected a positive number\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: canopy_numa_check [--nodes N] [--filter SUBSTRING] [--exclude SUBSTRING] [--list]\n");
      return 2;
    }
  }
  int nodes = 0;
  try {
    nodes = canopy::data_num_nodes();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canopy_numa_check: %s\n", e.what());
    return 1;
  }
  std::printf("canopy_numa_check: %d NUMA nodes, page size %zu\n", nodes, canopy::data_page_size());
  if (want_nodes && nodes != want_nodes) {
    std::printf("FAIL machine: %d NUMA nodes, expected %d\n0 passed, 1 failed\n", nodes, want_nodes);
    return 1;
  }
  const numa_check::Summary s = numa_check::run_checks(filter, nodes, exclude);
  for (const std::string& line : s.lines) std::printf("%s\n", line.c_str());
  if (s.skipped) std::printf("(%d skipped)\n", s.skipped);
  std::printf("%d passed, %d failed\n", s.passed, s.failed);
  std::fflush(stdout);
  return s.failed == 0 && s.passed > 0 ? 0 : 1;
}
