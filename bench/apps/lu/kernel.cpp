// The blocked LU's kernels, its matrix and its check (lu.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "lu/lu.hpp"

namespace apps::lu {

Config config(const Args& a, const char* prog) {
  Config c{a.smoke ? 128 : 1024, a.smoke ? 32 : 64, 0};
  if (a.n) c.n = a.n;
  if (c.n % c.nb != 0) {
    std::fprintf(stderr, "%s: -n %ld: expected a multiple of the tile size %ld\n", prog, c.n, c.nb);
    std::exit(2);
  }
  c.p = c.n / c.nb;
  return c;
}

double a_at(const Config& c, long r, long q) {
  // A fixed pseudo-random value in [0, 1) (a 64-bit mix of r and q).
  std::uint64_t h = static_cast<std::uint64_t>(r) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(q) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return static_cast<double>(h >> 11) * 0x1.0p-53 + (r == q ? static_cast<double>(c.n) : 0.0);
}

void fill_tile(const Config& c, long i, long j, double* tile) {
  for (long r = 0; r < c.nb; ++r)
    for (long q = 0; q < c.nb; ++q) tile[r * c.nb + q] = a_at(c, i * c.nb + r, j * c.nb + q);
}

void getrf(long nb, double* a) {
  for (long k = 0; k < nb; ++k) {
    const double inv = 1.0 / a[k * nb + k];
    for (long r = k + 1; r < nb; ++r) {
      const double l = a[r * nb + k] *= inv;
      for (long q = k + 1; q < nb; ++q) a[r * nb + q] -= l * a[k * nb + q];
    }
  }
}

void trsm_row(long nb, const double* l, double* a) {
  // Forward substitution with the unit lower L, row by row.
  for (long r = 1; r < nb; ++r)
    for (long k = 0; k < r; ++k) {
      const double f = l[r * nb + k];
      for (long q = 0; q < nb; ++q) a[r * nb + q] -= f * a[k * nb + q];
    }
}

void trsm_col(long nb, const double* u, double* a) {
  // X U = A, column by column of X: x_q = (a_q - sum_{k<q} x_k u_kq) / u_qq.
  for (long r = 0; r < nb; ++r)
    for (long q = 0; q < nb; ++q) {
      double s = a[r * nb + q];
      for (long k = 0; k < q; ++k) s -= a[r * nb + k] * u[k * nb + q];
      a[r * nb + q] = s / u[q * nb + q];
    }
}

void gemm(long nb, const double* l, const double* u, double* a) {
  for (long r = 0; r < nb; ++r)
    for (long k = 0; k < nb; ++k) {
      const double f = l[r * nb + k];
      for (long q = 0; q < nb; ++q) a[r * nb + q] -= f * u[k * nb + q];
    }
}

void check_tiles(const char* prog, const Config& c, const std::vector<const double*>& tiles) {
  const long n = c.n, nb = c.nb;
  auto at = [&](long r, long q) { return tiles[(r / nb) * c.p + q / nb][(r % nb) * nb + q % nb]; };
  std::vector<double> x(n), ux(n, 0.0), lux(n, 0.0), ax(n, 0.0);
  for (long i = 0; i < n; ++i) x[i] = 1.0 + static_cast<double>(i % 7) / 7.0;
  double a_norm = 0;  // |A|_inf: the largest row sum
  for (long r = 0; r < n; ++r) {
    double row = 0, s = 0;
    for (long q = 0; q < n; ++q) {
      const double v = a_at(c, r, q);
      row += std::fabs(v);
      s += v * x[q];
    }
    ax[r] = s;
    a_norm = std::max(a_norm, row);
    double u = 0;
    for (long q = r; q < n; ++q) u += at(r, q) * x[q];
    ux[r] = u;
  }
  double worst = 0;
  long worst_row = 0;
  for (long r = 0; r < n; ++r) {
    double s = ux[r];  // unit diagonal of L
    for (long q = 0; q < r; ++q) s += at(r, q) * ux[q];
    lux[r] = s;
    const double d = std::fabs(s - ax[r]);
    if (!(d <= worst)) {
      worst = d;
      worst_row = r;
    }
  }
  const double residual = worst / (a_norm * 2.0);  // |x|_inf < 2
  if (!(residual < 1e-12))
    fail(prog, "residual |L U x - A x| / (|A| |x|) = " + std::to_string(residual) + " at row " +
                   std::to_string(worst_row) + " (expected < 1e-12)");
}

}  // namespace apps::lu
