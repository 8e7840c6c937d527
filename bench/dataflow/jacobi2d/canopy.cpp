// 2D Jacobi with canopy's data-flow tasks: a data handle per row block of
// each grid (registered once), one canopy::submit per block and sweep
// reading the block and its two neighbours of the previous grid and writing
// the block of the next one; every sweep is submitted before one
// canopy::wait_all, so blocks of consecutive sweeps overlap (no barrier).
// No affinity hint: owner computes (CANOPY_DATA_AFFINITY) decides where a
// task runs; on a machine with one NUMA node it has nothing to decide.
// Then "canopy-graph": the same tasks recorded once in a canopy::TaskGraph
// (on the first run, a warm-up run, as the handles are made) and run as a
// whole each time: a finishing task runs the first one it makes ready
// next, on the same worker, also on one thread (where submit runs each
// task at submission, sweep by sweep).
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>
#include <canopy/taskgraph.hpp>

#include <memory>
#include <vector>

#include "jacobi2d/jacobi2d.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  // Handles for the grids the driver passes (the measured one, and the
  // checked one with --smoke), made on first sight of a grid.
  struct Handles {
    const bench::jac::Grid* grid = nullptr;
    std::vector<canopy::Data> a, b;
  };
  std::vector<Handles> known;
  auto handles_of = [&](bench::jac::Grid& g, const bench::jac::Config& c) -> Handles& {
    for (Handles& h : known)
      if (h.grid == &g) return h;
    Handles h;
    h.grid = &g;
    for (long k = 0; k < c.blocks; ++k) {
      const long lo = bench::jac::block_begin(c, k), hi = bench::jac::block_begin(c, k + 1);
      const std::size_t bytes = sizeof(double) * static_cast<std::size_t>((hi - lo) * c.n);
      h.a.push_back(canopy::data_register(g.a.get() + lo * c.n, bytes));
      h.b.push_back(canopy::data_register(g.b.get() + lo * c.n, bytes));
    }
    known.push_back(std::move(h));
    return known.back();
  };
  // Calls add(accesses, body) for every block and sweep, in order.
  auto for_each_task = [](bench::jac::Grid& g, const bench::jac::Config& c, const Handles& h, auto&& add) {
    const long n = c.n, nb = c.blocks;
    for (long s = 0; s < c.sweeps; ++s) {
      const double* in = s % 2 ? g.b.get() : g.a.get();
      double* out = s % 2 ? g.a.get() : g.b.get();
      const std::vector<canopy::Data>& hin = s % 2 ? h.b : h.a;
      const std::vector<canopy::Data>& hout = s % 2 ? h.a : h.b;
      for (long k = 0; k < nb; ++k) {
        const long lo = bench::jac::block_begin(c, k), hi = bench::jac::block_begin(c, k + 1);
        auto body = [in, out, n, lo, hi] { bench::jac::Grid::rows(in, out, n, lo, hi); };
        if (nb == 1)
          add({canopy::read(hin[k]), canopy::write(hout[k])}, body);
        else if (k == 0)
          add({canopy::read(hin[k]), canopy::read(hin[k + 1]), canopy::write(hout[k])}, body);
        else if (k == nb - 1)
          add({canopy::read(hin[k - 1]), canopy::read(hin[k]), canopy::write(hout[k])}, body);
        else
          add({canopy::read(hin[k - 1]), canopy::read(hin[k]), canopy::read(hin[k + 1]), canopy::write(hout[k])},
              body);
      }
    }
  };
  bench::jac::bench_run(a, argv[0], "canopy", [&](bench::jac::Grid& g, const bench::jac::Config& c) {
    const Handles& h = handles_of(g, c);
    rt.run([&] {
      for_each_task(g, c, h, [](std::initializer_list<canopy::Access> acc, const auto& body) {
        canopy::submit(acc, body);
      });
      canopy::wait_all();
    });
  });
  struct Recorded {
    const bench::jac::Grid* grid;
    std::unique_ptr<canopy::TaskGraph> graph;
  };
  std::vector<Recorded> graphs;
  bench::jac::bench_run(a, argv[0], "canopy-graph", [&](bench::jac::Grid& g, const bench::jac::Config& c) {
    canopy::TaskGraph* graph = nullptr;
    for (Recorded& r : graphs)
      if (r.grid == &g) graph = r.graph.get();
    if (!graph) {
      graphs.push_back({&g, std::make_unique<canopy::TaskGraph>()});
      graph = graphs.back().graph.get();
      for_each_task(g, c, handles_of(g, c), [graph](std::initializer_list<canopy::Access> acc, const auto& body) {
        graph->add(acc, body);
      });
    }
    graph->run(rt);
  });
  for (Handles& h : known)
    for (long k = 0; k < static_cast<long>(h.a.size()); ++k) {
      canopy::data_free(h.a[k]);
      canopy::data_free(h.b[k]);
    }
}
