// The runner of the NUMA check table, and the helpers every check uses.
#include "numa_check.hpp"

#include <algorithm>
#include <exception>

#include "canopy/binding.hpp"
#include "canopy/topology.hpp"

namespace numa_check {

namespace {
std::string g_note;  // checks run one at a time, on the main thread
}

void numa_note(const std::string& note) { g_note = note; }

std::vector<Check>& registry() {
  static std::vector<Check> checks;
  return checks;
}

Summary run_checks(const std::string& filter, int num_nodes, const std::string& exclude) {
  std::vector<Check> checks = registry();
  std::sort(checks.begin(), checks.end(), [](const Check& a, const Check& b) { return a.name < b.name; });
  Summary s;
  for (const Check& c : checks) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    if (!exclude.empty() && c.name.find(exclude) != std::string::npos) continue;
    if (num_nodes < c.min_nodes) {
      ++s.skipped;
      s.lines.push_back(fmt::format("SKIP {}: needs {} NUMA nodes, this machine has {}", c.name, c.min_nodes, num_nodes));
      continue;
    }
    g_note.clear();
    try {
      c.run();
      ++s.passed;
      s.lines.push_back("PASS " + c.name + (g_note.empty() ? "" : " (" + g_note + ")"));
    } catch (const std::exception& e) {
      ++s.failed;
      s.lines.push_back(fmt::format("FAIL {}: {}", c.name, e.what()));
    }
  }
  return s;
}

std::vector<int> nodes_with_cpus() {
  std::vector<int> out;
  for (const canopy::NumaInfo& n : canopy::process_topology().numa_nodes())
    if (!n.pus.empty()) out.push_back(n.logical);
  return out;
}

void bind_to_node(int node) {
  const canopy::Topology& t = canopy::process_topology();
  std::vector<int> os;
  for (int pu : t.numa_node(node).pus) os.push_back(t.pu(pu).os_index);
  numa_require(!os.empty(), "NUMA node {} has no CPU to bind to", node);
  canopy::bind_current_thread(os);
}

int current_node() {
  const canopy::Topology& t = canopy::process_topology();
  const int pu = t.pu_by_os_index(canopy::current_cpu());
  return pu < 0 ? -1 : t.pu(pu).numa;
}

}  // namespace numa_check
