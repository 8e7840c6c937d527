// The wavefront as a canopy::TaskGraph: one task per tile with the same
// accesses as canopy.cpp (read north and west, write its own tile), recorded
// once outside the clock; each timed run is one TaskGraph::run. The
// counterpart of oneTBB's prebuilt flow graph (tbb.cpp with PREBUILT): the
// dependencies are found once, each run pays only for running the tasks.
#include <canopy/data.hpp>
#include <canopy/runtime.hpp>
#include <canopy/taskgraph.hpp>

#include "wavefront/wavefront.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  std::vector<canopy::Data> h(static_cast<std::size_t>(n * n));
  for (long k = 0; k < n * n; ++k) h[k] = canopy::data_register(&v[k], sizeof(v[k]));
  // What changes from run to run, read by every task.
  struct Params {
    long spin = 0;
    std::uint64_t stamp = 0;
  } params;
  canopy::TaskGraph graph;
  std::uint64_t* p = v.data();
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      const Params* q = &params;
      auto body = [p, n, i, j, q] { bench::wf::tile(p, n, i, j, q->stamp, q->spin); };
      const canopy::Data c = h[i * n + j];
      if (i && j)
        graph.add({canopy::read(h[(i - 1) * n + j]), canopy::read(h[i * n + j - 1]), canopy::write(c)}, body);
      else if (i)
        graph.add({canopy::read(h[(i - 1) * n + j]), canopy::write(c)}, body);
      else if (j)
        graph.add({canopy::read(h[i * n + j - 1]), canopy::write(c)}, body);
      else
        graph.add({canopy::write(c)}, body);
    }
  bench::wf::run_modes(a, argv[0], "canopy-graph", v, n, [&](long spin, std::uint64_t stamp) {
    params.spin = spin;
    params.stamp = stamp;
    graph.run(rt);
  });
  for (const canopy::Data d : h) canopy::data_free(d);
}
