// The BT-MZ-like benchmark (btmz.hpp) with OpenMP nested teams, as the
// OpenMP version of NAS BT-MZ runs: an outer team (proc_bind(spread)) whose
// threads each own a bin of zones, packed by size before the run (largest
// zone first to the least loaded bin), and for each zone of its bin an
// inner team (proc_bind(close)) running a `parallel for schedule(static)`
// over the zone's rows, one block per inner thread. The outer threads meet
// at a barrier after every step (the exchange reads the neighbours' rows).
// Arrays are first touched by the same nested loops (first touch puts a
// zone where its outer thread's team runs).
//
// Threads: --outer T outer threads (default: the NUMA nodes of the machine
// when the threads divide among them, else 2, at most the threads and the
// zones), -t / T inner threads each (at least 1). Nesting needs
// OMP_MAX_ACTIVE_LEVELS >= 2; the program sets it (omp_set_max_active_levels).
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "btmz/btmz.hpp"
#include "locality.hpp"

namespace bt = apps::btmz;

namespace {
// NUMA nodes with memory on this machine (/sys), 1 when it cannot tell.
int numa_nodes() {
  int n = 0;
  while (n < 1024) {
    const std::string dir = "/sys/devices/system/node/node" + std::to_string(n);
    if (!std::ifstream(dir + "/cpulist")) break;
    ++n;
  }
  return std::max(1, n);
}
}  // namespace

int main(int argc, char** argv) {
  const bt::BtmzArgs ba = bt::parse(argc, argv, false);
  const apps::Args& a = ba.common;
  const bt::Config c = bt::config(ba);
  int outer = ba.outer;
  if (outer == 0) {
    const int nodes = numa_nodes();
    outer = nodes > 1 && a.threads % nodes == 0 ? nodes : 2;
  }
  outer = std::max(1, std::min({outer, a.threads, c.zones}));
  const int inner = std::max(1, a.threads / outer);
  omp_set_max_active_levels(2);
  const std::vector<std::vector<int>> bins = bt::bin_pack(c, outer);
  std::vector<std::unique_ptr<double[], decltype(&std::free)>> u[2];
  std::vector<double*> p[2];
  auto prepare = [&] {
    for (int k = 0; k < 2; ++k) {
      u[k].clear();
      p[k].clear();
      for (int z = 0; z < c.zones; ++z) {  // page-aligned, untouched until the first loop
        const std::size_t bytes = (sizeof(double) * c.doubles(z) + 4095) / 4096 * 4096;
        u[k].emplace_back(static_cast<double*>(std::aligned_alloc(4096, bytes)), &std::free);
        p[k].push_back(u[k].back().get());
      }
    }
  };
  int run = 0;
  auto timed = [&] {
    const bool log = a.locality && ++run == a.warmups + a.reps;
#pragma omp parallel num_threads(outer) proc_bind(spread)
    {
      const std::vector<int>& mine = bins[static_cast<std::size_t>(omp_get_thread_num())];
      // One block of rows per inner thread: schedule(static) over the blocks.
      auto each_zone = [&](auto&& body) {
        for (int z : mine) {
#pragma omp parallel for num_threads(inner) proc_bind(close) schedule(static)
          for (int b = 0; b < inner; ++b) body(z, c.rows * b / inner, c.rows * (b + 1) / inner);
        }
      };
      each_zone([&](int z, long r0, long r1) { bt::init_rows(c, z, p[0][static_cast<std::size_t>(z)], r0, r1); });
      for (long t = 0; t < c.steps; ++t) {
        // single's closing barrier: every zone finished the step before (the
        // exchange reads the neighbours' rows).
#pragma omp single
        if (log && t + 1 == c.steps) apps::locality_enable(true);
        double* const* in = p[t % 2].data();
        double* const* out = p[(t + 1) % 2].data();
        each_zone([&](int z, long r0, long r1) { bt::step_rows(c, z, in, out, r0, r1); });
      }
    }
    apps::locality_enable(false);
  };
  auto check = [&] { bt::check(argv[0], c, p[c.steps % 2], a.inject_error); };
  apps::measure(a, "btmz", "omp-nested", c.steps, prepare, timed, check);
  if (a.locality) apps::locality_print("btmz", "omp-nested", a.threads, apps::locality_summarize());
}
