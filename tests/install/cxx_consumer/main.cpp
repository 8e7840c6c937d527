// A C++ program that uses an installed canopy through the C++ API
// (include/canopy/...), built outside the source tree by
// tests/install/check_install.sh with find_package(canopy) and with
// pkg-config. The same mapping as the C consumer (8 tasks in heavy pairs on
// "pack:2 core:2 pu:2"), a canopy::Error caught across the library boundary,
// and the runtime's header-only parts, which call canopy::detail functions
// and its thread_local worker pointer inside libcanopy: a TaskGroup,
// canopy::invoke, parallel_for and parallel_reduce. Exit 0 = all good.
#include <canopy.hpp>
#include <canopy/runtime.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  canopy::Topology topo = canopy::Topology::from_synthetic("pack:2 core:2 pu:2");
  std::vector<canopy::Edge> edges = {{0, 5, 100}, {1, 6, 100}, {2, 7, 100}, {3, 4, 100}};
  for (int t = 0; t < 8; ++t) edges.push_back({t, (t + 1) % 8, 1});
  canopy::CommMatrix comm = canopy::CommMatrix::from_edges(8, edges);
  canopy::Placement placement = canopy::map_tasks(topo, comm, "treematch");
  const std::vector<int>& pu = placement.task_pu;
  int together = (pu[0] / 2 == pu[5] / 2) + (pu[1] / 2 == pu[6] / 2) + (pu[2] / 2 == pu[7] / 2) +
                 (pu[3] / 2 == pu[4] / 2);
  std::printf("cxx_consumer: OMP_PLACES=%s\n", canopy::omp_places(topo, placement).c_str());
  std::printf("cxx_consumer: pairs sharing a core: %d/4\n", together);

  bool caught = false;
  try {
    canopy::map_tasks(topo, comm, "no-such-policy");
  } catch (const canopy::Error& e) {
    caught = std::string(e.what()).find("no-such-policy") != std::string::npos;
    std::printf("cxx_consumer: error caught: %s\n", e.what());
  }

  canopy::RuntimeOptions options;
  options.num_threads = 2;
  options.bind = canopy::BindMode::None;
  canopy::Runtime rt(options);
  std::atomic<int> spawned{0};
  std::int64_t sum = 0, reduced = 0;
  int left = 0, right = 0;
  rt.run([&] {
    canopy::TaskGroup group(rt);
    for (int i = 0; i < 100; ++i) group.spawn([&] { spawned.fetch_add(1, std::memory_order_relaxed); });
    group.wait();
    canopy::invoke([&] { left = 1; }, [&] { right = 2; });
    std::vector<std::int64_t> values(10000);
    canopy::parallel_for(0, 10000, [&](std::int64_t i) { values[i] = i; });
    for (std::int64_t v : values) sum += v;
    reduced = canopy::parallel_reduce(canopy::Range{0, 10000, 0}, std::int64_t{0},
        [](std::int64_t lo, std::int64_t hi, std::int64_t acc) {
          for (std::int64_t i = lo; i < hi; ++i) acc += i;
          return acc;
        },
        [](std::int64_t a, std::int64_t b) { return a + b; });
  });
  std::printf("cxx_consumer: runtime: %d workers, %d/100 tasks, invoke %d+%d, parallel_for sum %lld, "
              "parallel_reduce %lld\n",
              rt.num_workers(), spawned.load(), left, right, static_cast<long long>(sum),
              static_cast<long long>(reduced));
  bool ok = together == 4 && caught && rt.num_workers() == 2 && spawned.load() == 100 && left + right == 3 &&
            sum == 49995000 && reduced == 49995000;
  return ok ? 0 : 1;
}
