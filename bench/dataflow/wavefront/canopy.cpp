// The wavefront with canopy, two ways, from this one source:
//  - "canopy": data-flow tasks, one canopy::submit per tile reading the north
//    and west handles and writing its own; the runtime finds the
//    dependencies in the timed run; canopy::wait_all ends it. Submission runs
//    on worker 0 (inside Runtime::run), as the OpenMP variants submit from
//    their `single` thread.
//  - "canopy-graph" (GRAPH defined): the same tasks recorded once in a
//    canopy::TaskGraph outside the clock; each timed run is one
//    TaskGraph::run (the counterpart of oneTBB's prebuilt flow graph, tbb.cpp
//    with PREBUILT: the dependencies are found once).
// One data handle per tile (canopy::data_register, once, outside the clock).
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>
#include <canopy/taskgraph.hpp>

#include "wavefront/wavefront.hpp"

namespace {

// What changes from run to run, read by every task.
struct Params {
  long spin = 0;
  std::uint64_t stamp = 0;
};

// Calls add(accesses, body) for every tile, in row-major order.
template <class Add>
void for_each_tile(std::uint64_t* p, long n, const canopy::Data* h, const Params* q, Add&& add) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      auto body = [p, n, i, j, q] { bench::wf::tile(p, n, i, j, q->stamp, q->spin); };
      const canopy::Data c = h[i * n + j];
      if (i && j)
        add({canopy::read(h[(i - 1) * n + j]), canopy::read(h[i * n + j - 1]), canopy::write(c)}, body);
      else if (i)
        add({canopy::read(h[(i - 1) * n + j]), canopy::write(c)}, body);
      else if (j)
        add({canopy::read(h[i * n + j - 1]), canopy::write(c)}, body);
      else
        add({canopy::write(c)}, body);
    }
}

}  // namespace

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  std::vector<canopy::Data> h(static_cast<std::size_t>(n * n));
  for (long k = 0; k < n * n; ++k) h[k] = canopy::data_register(&v[k], sizeof(v[k]));
  Params params;
#ifndef GRAPH
  bench::wf::run_modes(a, argv[0], "canopy", v, n, [&](long spin, std::uint64_t stamp) {
    params = {spin, stamp};
    rt.run([&] {
      for_each_tile(v.data(), n, h.data(), &params, [](std::initializer_list<canopy::Access> acc, const auto& body) {
        canopy::submit(acc, body);
      });
      canopy::wait_all();
    });
  });
#else
  canopy::TaskGraph graph;
  for_each_tile(v.data(), n, h.data(), &params, [&graph](std::initializer_list<canopy::Access> acc, const auto& body) {
    graph.add(acc, body);
  });
  bench::wf::run_modes(a, argv[0], "canopy-graph", v, n, [&](long spin, std::uint64_t stamp) {
    params = {spin, stamp};
    graph.run(rt);
  });
#endif
  for (const canopy::Data d : h) canopy::data_free(d);
}
