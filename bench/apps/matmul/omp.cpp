// Block-cyclic matrix multiplication with OpenMP, as a user writes it for
// speed: the same tiles of A and row blocks of B and C, each filled by a
// `parallel for schedule(static)` over the row blocks (first touch: row
// block i's tiles of A and C_i on the node of the thread that owns i, B_k on
// the node of the thread that filled it), and one `parallel for
// schedule(static)` over the row blocks per product, each thread calling
// dgemm for every k of its row blocks in the ring order (k = i, i+1, ...),
// reading B_k where it is: shared memory needs no copies. --locality logs
// the tile, row block of B and row block of C each dgemm touches.
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "locality.hpp"
#include "matmul/matmul.hpp"

int main(int argc, char** argv) {
  const apps::Args a = apps::parse_args(argc, argv);
  const apps::matmul::Config c = apps::matmul::config(a, argv[0]);
  omp_set_num_threads(a.threads);
  const long p = c.p;
  auto alloc = [](std::size_t doubles) {
    const std::size_t bytes = (doubles * sizeof(double) + 4095) / 4096 * 4096;
    return std::unique_ptr<double[], decltype(&std::free)>(static_cast<double*>(std::aligned_alloc(4096, bytes)),
                                                           &std::free);
  };
  auto am = alloc(c.tile() * static_cast<std::size_t>(p * p)), bm = alloc(c.row_block() * p),
       cm = alloc(c.row_block() * p);
  auto a_tile = [&](long i, long k) { return am.get() + static_cast<std::size_t>(i * p + k) * c.tile(); };
  auto b_rows = [&](long k) { return bm.get() + static_cast<std::size_t>(k) * c.row_block(); };
  auto c_rows = [&](long i) { return cm.get() + static_cast<std::size_t>(i) * c.row_block(); };
  auto prepare = [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < p; ++i) {
      for (long k = 0; k < p; ++k) apps::matmul::fill_a_tile(c, i, k, a_tile(i, k));
      apps::matmul::fill_b_rows(c, i, b_rows(i));
      std::memset(c_rows(i), 0, c.row_block() * sizeof(double));
    }
  };
  auto timed = [&] {
    for (long t = 0; t < c.iterations; ++t) {
      if (a.locality && t == c.iterations - 1) apps::locality_enable(true);
      const bool log = apps::locality_enabled();
#pragma omp parallel for schedule(static)
      for (long i = 0; i < p; ++i)
        for (long s = 0; s < p; ++s) {
          const long k = (i + s) % p;
          if (log) {
            apps::locality_record(a_tile(i, k), c.tile() * sizeof(double));
            apps::locality_record(b_rows(k), c.row_block() * sizeof(double));
            apps::locality_record(c_rows(i), c.row_block() * sizeof(double));
          }
          apps::matmul::multiply(c, a_tile(i, k), b_rows(k), c_rows(i), s > 0);
        }
    }
    apps::locality_enable(false);
  };
  auto check = [&] {
    if (a.inject_error) c_rows(c.p - 1)[c.row_block() - 1] += 1e-3;
    apps::matmul::check(argv[0], c, c_rows);
  };
  apps::measure(a, "matmul", "omp", c.iterations, prepare, timed, check);
  if (a.locality) apps::locality_print("matmul", "omp", a.threads, apps::locality_summarize());
}
