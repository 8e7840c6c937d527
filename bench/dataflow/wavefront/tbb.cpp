// The wavefront with oneTBB's flow graph: one continue_node per tile, an
// edge from its north and its west tile; a try_put to tile (0, 0) starts it.
// Built twice: "tbb" builds the graph inside the timed run (the
// dependencies are declared at run time, as with the other runtimes);
// "tbb-prebuilt" (PREBUILT defined) builds it once and times only its
// execution (as a Taskflow graph built in advance).
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>

#include "wavefront/wavefront.hpp"

namespace {

using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

struct Graph {
  tbb::flow::graph g;
  std::vector<std::unique_ptr<Node>> nodes;
  long spin = 0;
  std::uint64_t stamp = 0;

  Graph(std::uint64_t* p, long n) {
    nodes.reserve(static_cast<std::size_t>(n * n));
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        nodes.push_back(std::make_unique<Node>(g, [this, p, n, i, j](const tbb::flow::continue_msg&) {
          bench::wf::tile(p, n, i, j, stamp, spin);
        }));
        if (i) tbb::flow::make_edge(*nodes[(i - 1) * n + j], *nodes.back());
        if (j) tbb::flow::make_edge(*nodes[i * n + j - 1], *nodes.back());
      }
  }
  void run(long s, std::uint64_t st) {
    spin = s;
    stamp = st;
    nodes[0]->try_put(tbb::flow::continue_msg());
    g.wait_for_all();
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, a.threads);
  tbb::task_arena arena(a.threads);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  arena.execute([&] {
#ifndef PREBUILT
    bench::wf::run_modes(a, argv[0], "tbb", v, n, [&](long spin, std::uint64_t stamp) {
      Graph g(v.data(), n);
      g.run(spin, stamp);
    });
#else
    Graph built(v.data(), n);
    bench::wf::run_modes(a, argv[0], "tbb-prebuilt", v, n,
                         [&](long spin, std::uint64_t stamp) { built.run(spin, stamp); });
#endif
  });
}
