// Twisted-STREAM with OpenMP nested teams, the baseline: an outer team of G
// threads (proc_bind(spread): one per NUMA node under OMP_PLACES=cores and
// as many threads as cores), each the master of an inner team of
// threads / G (proc_bind(close): its node's cores). Inner thread j works on
// chunk j of its group's vectors with the same static split, so first touch
// in phase 1 puts a group's pages on its node. In phase 2 the threads stay
// where they are and read the swapped vectors wherever they are (first
// touch alone: Twisted-100 reads all remote, Twisted-66 two thirds).
// A PHASE line per phase, as the canopy version's (nothing migrates).
#include <omp.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "locality.hpp"
#include "twisted_stream/twisted_stream.hpp"

namespace tw = apps::twisted;

int main(int argc, char** argv) {
  const tw::TwistedArgs ta = tw::parse(argc, argv, false);
  const apps::Args& a = ta.common;
  const tw::Config c = tw::config(ta, 2, argv[0]);
  omp_set_max_active_levels(2);
  const int inner = a.threads / c.groups;
  const std::size_t bytes = (sizeof(double) * static_cast<std::size_t>(c.n) + 4095) / 4096 * 4096;
  std::vector<std::unique_ptr<double[], decltype(&std::free)>> v;
  auto vec = [&](int k) { return v[static_cast<std::size_t>(k)].get(); };
  auto prepare = [&] {
    v.clear();
    for (int k = 0; k < 3 * c.groups; ++k)  // page-aligned, untouched until phase 1
      v.emplace_back(static_cast<double*>(std::aligned_alloc(4096, bytes)), &std::free);
  };
  auto timed = [&] {
    for (int phase = 1; phase <= 2; ++phase) {
      const double t0 = bench::now();
      if (a.locality) apps::locality_enable(true);
#pragma omp parallel num_threads(c.groups) proc_bind(spread)
      {
        const int g = omp_get_thread_num();
        int k[3];
        tw::phase_vectors(c, phase, g, k);
        for (long t = 0; t < c.iterations; ++t) {
#pragma omp parallel num_threads(inner) proc_bind(close)
          {
            const long chunks = omp_get_num_threads(), ch = omp_get_thread_num();
            const long begin = c.n * ch / chunks, end = c.n * (ch + 1) / chunks;
            if (phase == 1 && t == 0)
              for (int x : k)
                for (long i = begin; i < end; ++i) vec(x)[i] = tw::initial(x, i);
            if (apps::locality_enabled())
              for (int x : k) apps::locality_record(vec(x) + begin, sizeof(double) * static_cast<std::size_t>(end - begin));
            tw::triad(vec(k[0]), vec(k[1]), vec(k[2]), begin, end);
          }
        }
      }
      apps::locality_enable(false);
      const double secs = bench::now() - t0;
      tw::print_phase(c, "omp-nested", phase, secs, apps::locality_summarize().local_share(), 0, 0);
    }
  };
  auto check = [&] {
    if (a.inject_error) vec(0)[c.n / 2] += 1.0;
    tw::check(argv[0], c, vec);
  };
  apps::measure(a, "twisted_stream", "omp-nested", 2 * c.iterations, prepare, timed, check);
}
