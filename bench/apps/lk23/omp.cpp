// Livermore Kernel 23 with OpenMP, as a user writes it for speed: the same
// blocked storage in one allocation (block after block), filled by a
// `parallel for` with the same static schedule as the update (first touch
// puts each block's pages on the node of the thread that updates it, under
// OMP_PROC_BIND), one `parallel for collapse(2) schedule(static)` over the
// blocks per iteration. --locality logs the bytes each block update reads
// and writes (the same regions the canopy tasks declare).
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "lk23/lk23.hpp"
#include "locality.hpp"

int main(int argc, char** argv) {
  const apps::Args a = apps::parse_args(argc, argv);
  const apps::lk23::Config c = apps::lk23::config(a, argv[0]);
  omp_set_num_threads(a.threads);
  const long b = c.b;
  const std::size_t pts = c.block_points(), blocks = static_cast<std::size_t>(b * b);
  // Page-aligned, untouched until the parallel fill.
  auto alloc = [](std::size_t doubles) {
    const std::size_t bytes = (doubles * sizeof(double) + 4095) / 4096 * 4096;
    return std::unique_ptr<double[], decltype(&std::free)>(static_cast<double*>(std::aligned_alloc(4096, bytes)),
                                                           &std::free);
  };
  auto za0 = alloc(pts * blocks), za1 = alloc(pts * blocks), coef = alloc(5 * pts * blocks);
  double* za[2] = {za0.get(), za1.get()};
  auto prepare = [&] {
#pragma omp parallel for collapse(2) schedule(static)
    for (long bi = 0; bi < b; ++bi)
      for (long bj = 0; bj < b; ++bj) {
        const std::size_t k = static_cast<std::size_t>(bi * b + bj);
        apps::lk23::init_block(c, bi, bj, za[0] + k * pts, coef.get() + 5 * k * pts);
        std::memcpy(za[1] + k * pts, za[0] + k * pts, pts * sizeof(double));
      }
  };
  auto timed = [&] {
    for (long t = 0; t < c.iterations; ++t) {
      if (a.locality && t == c.iterations - 2) apps::locality_enable(true);
      const double* in = za[t % 2];
      double* out = za[1 - t % 2];
      const bool log = apps::locality_enabled();
#pragma omp parallel for collapse(2) schedule(static)
      for (long bi = 0; bi < b; ++bi)
        for (long bj = 0; bj < b; ++bj) {
          const long k = bi * b + bj;
          auto blk = [&](long kk) { return in + static_cast<std::size_t>(kk) * pts; };
          const double* up = bi > 0 ? blk(k - b) : nullptr;
          const double* down = bi < b - 1 ? blk(k + b) : nullptr;
          const double* left = bj > 0 ? blk(k - 1) : nullptr;
          const double* right = bj < b - 1 ? blk(k + 1) : nullptr;
          const double* cf = coef.get() + 5 * static_cast<std::size_t>(k) * pts;
          double* nw = out + static_cast<std::size_t>(k) * pts;
          if (log) {
            for (const double* p : {blk(k), up, down, left, right})
              if (p) apps::locality_record(p, pts * sizeof(double));
            apps::locality_record(cf, 5 * pts * sizeof(double));
            apps::locality_record(nw, pts * sizeof(double));
          }
          apps::lk23::update_block(c, bi, bj, blk(k), up, down, left, right, cf, nw);
        }
    }
    apps::locality_enable(false);
  };
  std::vector<double> ref;
  auto check = [&] {
    if (ref.empty()) ref = apps::lk23::reference(c);
    if (a.inject_error) za[0][c.s + 1] += 1e-9;  // an interior point
    apps::lk23::compare(argv[0], c, ref,
                        [&](long bi, long bj) { return za[0] + static_cast<std::size_t>(bi * b + bj) * pts; });
  };
  apps::measure(a, "lk23", "omp", c.iterations, prepare, timed, check);
  if (a.locality) apps::locality_print("lk23", "omp", a.threads, apps::locality_summarize());
}
