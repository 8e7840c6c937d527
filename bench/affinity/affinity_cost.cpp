// canopy_bench_affinity_cost: the run-time cost of automatic affinity
// (docs/auto-affinity.md, "Cost"; bars: 10 ms for 1,000 recurring tasks,
// 100 ms for 10,000). The graph is a 2-D five-point stencil over blocks,
// two sweeps with two buffers (N tasks, N handles), as iterative codes
// record it. For each N it times, median of -r repetitions:
//   matrix  TaskGraph::matrix()              (the task-to-task matrix)
//   place   compute_placement(rt, m)         (the placement engine, default policy)
//   workers placement_workers(rt, p)
//   auto    the automatic step after an observed run, as the runtime does it
//           (AffinityReport::map_cpu_seconds: matrix + placement + workers;
//           map_seconds, elapsed, beside it)
// Times are CPU time of the calling thread (this machine is shared).
// and, once, the quality given up for that speed: the weighted cost
// (docs/cost-model.md) of the run-time placement over that of the canopy
// policy at its full offline effort (canopy map), and the same for the
// volume crossing NUMA nodes;
// and prints benchlib RESULT lines (bench/common/benchlib.py) plus a table.
//
//   canopy_bench_affinity_cost [--tasks 1000,10000] [-r 5] [-t workers] [--input 'pack:2 core:16']
// --input maps onto a synthetic machine (workers unbound) to see the cost
// on more workers than this machine has.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "canopy/auto_affinity.hpp"
#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "canopy/taskgraph.hpp"
#include "canopy/topology.hpp"

namespace {

struct Args {
  std::vector<int> tasks{1000, 10000};
  int reps = 5;
  int threads = 0;
  std::string input;
};

[[noreturn]] void usage(const std::string& why) {
  fmt::print(stderr,
             "canopy_bench_affinity_cost: {}\nusage: canopy_bench_affinity_cost [--tasks N[,N...]] [-r reps] "
             "[-t workers] [--input synthetic-or-xml]\n",
             why);
  std::exit(2);
}

int positive(const char* flag, const std::string& v) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1 || n > 10'000'000) usage(fmt::format("{} '{}': expected a positive whole number", flag, v));
  return static_cast<int>(n);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(f + " needs a value");
      return argv[++i];
    };
    if (f == "--tasks") {
      a.tasks.clear();
      std::string list = value();
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        a.tasks.push_back(positive("--tasks", list.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (f == "-r") {
      a.reps = positive("-r", value());
    } else if (f == "-t") {
      a.threads = positive("-t", value());
    } else if (f == "--input") {
      a.input = value();
    } else {
      usage("unknown argument '" + f + "'");
    }
  }
  return a;
}

// The stencil graph of about n tasks over blocks of `block` bytes.
struct Stencil {
  int side;
  std::vector<char> memory;
  std::vector<canopy::Data> a, b;
  canopy::TaskGraph graph;
  Stencil(int n, std::size_t block) : side(std::max(1, static_cast<int>(std::lround(std::sqrt(n / 2.0))))) {
    const int cells = side * side;
    memory.assign(static_cast<std::size_t>(cells) * 2 * block, 0);
    for (int c = 0; c < cells; ++c) {
      a.push_back(canopy::data_register(&memory[(2 * c) * block], block));
      b.push_back(canopy::data_register(&memory[(2 * c + 1) * block], block));
    }
    for (int sweep = 0; sweep < 2; ++sweep)
      for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j) {
          const auto& in = sweep == 0 ? a : b;
          const auto& out = sweep == 0 ? b : a;
          std::vector<canopy::Access> acc{canopy::write(out[i * side + j]), canopy::read(in[i * side + j])};
          if (i > 0) acc.push_back(canopy::read(in[(i - 1) * side + j]));
          if (i + 1 < side) acc.push_back(canopy::read(in[(i + 1) * side + j]));
          if (j > 0) acc.push_back(canopy::read(in[i * side + j - 1]));
          if (j + 1 < side) acc.push_back(canopy::read(in[i * side + j + 1]));
          char* dst = static_cast<char*>(canopy::data_ptr(out[i * side + j]));
          graph.add(acc, [dst] { dst[0] = static_cast<char>(dst[0] + 1); });
        }
  }
  ~Stencil() {
    for (auto d : a) canopy::data_free(d);
    for (auto d : b) canopy::data_free(d);
  }
};

// CPU time of this thread: the machine these run on is shared, and the
// elapsed time of a step counts whatever else ran meanwhile.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds(const std::function<void()>& f) {
  const double t0 = cpu_now();
  f();
  return cpu_now() - t0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
    if (args.threads) o.num_threads = args.threads;
    if (!args.input.empty()) o.bind = canopy::BindMode::None;
    canopy::Runtime rt = args.input.empty() ? canopy::Runtime(o) : canopy::Runtime(o, canopy::Topology::load(args.input));
    const int W = rt.num_workers();
    fmt::print("CPU ms of the thread, median of {} (auto elapsed: wall clock)\n", args.reps);
    fmt::print("{:>8} {:>8} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10}  bar (auto CPU)\n", "tasks", "workers",
               "matrix", "place", "workers", "auto", "auto elapsed", "cost/full", "numa/full");
    for (int n : args.tasks) {
      Stencil s(n, 256);
      const int tasks = static_cast<int>(s.graph.size());
      std::vector<double> tm, tp, tw, ta, te;
      double cost_ratio = 0, numa_ratio = 0;
      {
        const canopy::TaskMatrix m = s.graph.matrix();
        const canopy::Topology topo = canopy::worker_topology(rt);
        const canopy::Cost fast = canopy::evaluate(topo, m.matrix, canopy::compute_placement(rt, m, "canopy"));
        const canopy::Cost full = canopy::evaluate(topo, m.matrix, canopy::map_tasks(topo, m.matrix, "canopy"));
        cost_ratio = full.weighted > 0 ? fast.weighted / full.weighted : 1;
        numa_ratio = full.numa_crossing > 0 ? fast.numa_crossing / full.numa_crossing : fast.numa_crossing > 0 ? 99 : 1;
      }
      for (int r = 0; r < args.reps; ++r) {
        canopy::TaskMatrix m;
        canopy::Placement p;
        tm.push_back(seconds([&] { m = s.graph.matrix(); }));
        tp.push_back(seconds([&] { p = canopy::compute_placement(rt, m); }));
        tw.push_back(seconds([&] { (void)canopy::placement_workers(rt, p); }));
        // The automatic step: a fresh graph's first run with auto observes, then maps.
        Stencil fresh(n, 256);
        fresh.graph.set_affinity(canopy::AutoAffinity::Auto);
        fresh.graph.run(rt);
        ta.push_back(fresh.graph.affinity_report().map_cpu_seconds);
        te.push_back(fresh.graph.affinity_report().map_seconds);
      }
      // The bars are for 1,000 and 10,000 tasks; the stencil's square rounds N a little.
      const double bar = tasks <= 1100 ? 0.010 : tasks <= 11000 ? 0.100 : 0;
      const double autom = median(ta);
      for (const auto& [name, v] : {std::pair{"affinity-matrix", tm}, {"affinity-place", tp},
                                    {"affinity-workers", tw}, {"affinity-auto", ta},
                                    {"affinity-auto-elapsed", te}})
        for (int r = 0; r < static_cast<int>(v.size()); ++r)
          fmt::print("RESULT bench={} impl=canopy threads={} rep={} seconds={:.6f} count={} unit=tasks\n", name, W, r,
                     v[r], tasks);
      fmt::print("{:>8} {:>8} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>12.2f} {:>10.3f} {:>10.3f}  {}\n", tasks, W,
                 median(tm) * 1e3, median(tp) * 1e3, median(tw) * 1e3, autom * 1e3, median(te) * 1e3, cost_ratio,
                 numa_ratio,
                 bar == 0 ? "-" : autom <= bar ? fmt::format("met (<= {:.0f} ms)", bar * 1e3)
                                               : fmt::format("NOT met (> {:.0f} ms)", bar * 1e3));
    }
  } catch (const canopy::Error& e) {
    fmt::print(stderr, "canopy_bench_affinity_cost: {}\n", e.what());
    return 2;
  }
  return 0;
}
