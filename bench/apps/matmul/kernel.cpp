// Block-cyclic matrix multiplication: the per-block OpenBLAS call every
// version uses, the matrices' element formulas and the independent check
// (matmul.hpp).
#include "matmul/matmul.hpp"

#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace apps::matmul {
namespace {

double hashed(long r, long q, std::uint64_t salt) {
  std::uint64_t h = (static_cast<std::uint64_t>(r) << 32 ^ static_cast<std::uint64_t>(q)) + salt;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;  // [-1, 1)
}

}  // namespace

double a_at(long r, long q) { return hashed(r, q, 0x1234567ull); }
double b_at(long r, long q) { return hashed(r, q, 0x7654321ull); }

Config config(const Args& a, const char* prog) {
  Config c{a.smoke ? 64 : 1024, a.smoke ? 4 : 16, 0, a.smoke ? 2 : 8};
  if (a.n) c.n = a.n;
  if (a.iterations) c.iterations = a.iterations;
  if (c.n % c.p != 0) {
    std::fprintf(stderr, "%s: -n %ld: expected a multiple of %ld (the row blocks)\n", prog, c.n, c.p);
    std::exit(2);
  }
  c.nb = c.n / c.p;
  // One thread inside each dgemm: the tasks / the parallel for are the
  // parallelism (the pthreads build would otherwise start its own pool).
  openblas_set_num_threads(1);
  return c;
}

void fill_a_tile(const Config& c, long i, long k, double* tile) {
  for (long r = 0; r < c.nb; ++r)
    for (long q = 0; q < c.nb; ++q) tile[r * c.nb + q] = a_at(i * c.nb + r, k * c.nb + q);
}

void fill_b_rows(const Config& c, long k, double* rows) {
  for (long r = 0; r < c.nb; ++r)
    for (long q = 0; q < c.n; ++q) rows[r * c.n + q] = b_at(k * c.nb + r, q);
}

void multiply(const Config& c, const double* a_tile, const double* b_rows, double* c_rows, bool accumulate) {
  const int nb = static_cast<int>(c.nb), n = static_cast<int>(c.n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, n, nb, 1.0, a_tile, nb, b_rows, n,
              accumulate ? 1.0 : 0.0, c_rows, n);
}

void check_rows(const char* prog, const Config& c, const double* const* c_rows) {
  const long n = c.n;
  auto c_at = [&](long r, long q) { return c_rows[r / c.nb][(r % c.nb) * n + q]; };
  // Freivalds: y = B x, z = A y against w = C x, x of +-1.
  std::vector<double> x(static_cast<std::size_t>(n)), y(x.size()), z(x.size());
  for (long q = 0; q < n; ++q) x[q] = (q * 7919 % 3) ? 1.0 : -1.0;
  for (long r = 0; r < n; ++r) {
    double s = 0;
    for (long q = 0; q < n; ++q) s += b_at(r, q) * x[q];
    y[r] = s;
  }
  for (long r = 0; r < n; ++r) {
    double s = 0, w = 0;
    for (long q = 0; q < n; ++q) {
      s += a_at(r, q) * y[q];
      w += c_at(r, q) * x[q];
    }
    z[r] = s;
    // Sums of n^2 terms of size <= 1: rounding grows with n.
    if (!(std::fabs(w - s) <= 1e-9 * static_cast<double>(n) * static_cast<double>(n)))
      fail(prog, "row " + std::to_string(r) + " of C x is " + std::to_string(w) + ", A (B x) gives " +
                     std::to_string(s));
  }
  // A few elements as plain dot products.
  for (long e = 0; e < 64; ++e) {
    const long r = (e * 104729) % n, q = (e * 7907 + 3) % n;
    double s = 0;
    for (long k = 0; k < n; ++k) s += a_at(r, k) * b_at(k, q);
    if (!(std::fabs(c_at(r, q) - s) <= 1e-10 * static_cast<double>(n)))
      fail(prog, "C[" + std::to_string(r) + "][" + std::to_string(q) + "] = " + std::to_string(c_at(r, q)) +
                     ", the dot product gives " + std::to_string(s));
  }
}

}  // namespace apps::matmul
