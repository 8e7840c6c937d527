// Livermore Kernel 23 on a blocked grid: the block update every version
// runs, and the sequential reference written independently of the block
// storage (lk23.hpp).
#include "lk23/lk23.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace apps::lk23 {
namespace {

// Deterministic values in [0, 1) of a point and a salt.
double unit(long r, long q, unsigned salt) {
  std::uint64_t h = static_cast<std::uint64_t>(r) * 0x9E3779B97F4A7C15ull ^
                    (static_cast<std::uint64_t>(q) + salt * 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

// Coefficient k (0 zr, 1 zb, 2 zu, 3 zv, 4 zz) of global point (r, q): the
// four weights sum to less than 1, so za stays bounded.
double coefficient(int k, long r, long q) { return k < 4 ? 0.05 + 0.18 * unit(r, q, k + 1) : 0.1 * unit(r, q, 9); }
double start(long r, long q) {
  return std::sin(0.01 * static_cast<double>(r)) + std::cos(0.013 * static_cast<double>(q)) + unit(r, q, 17);
}

}  // namespace

Config config(const Args& a, const char* prog) {
  Config c{a.smoke ? 32 : 1024, a.smoke ? 4 : 8, 0, a.smoke ? 4 : 200};
  if (a.n) c.n = a.n;
  if (a.iterations) c.iterations = a.iterations;
  if (c.n % c.b != 0 || c.n / c.b < 2) {
    std::fprintf(stderr, "%s: -n %ld: expected a multiple of %ld blocks, at least 2 points a block\n", prog, c.n, c.b);
    std::exit(2);
  }
  if (c.iterations % 2 != 0) {
    std::fprintf(stderr, "%s: --iterations %ld: expected an even count (za comes back to its first copy)\n", prog,
                 c.iterations);
    std::exit(2);
  }
  c.s = c.n / c.b;
  return c;
}

void init_block(const Config& c, long bi, long bj, double* za, double* coef) {
  const std::size_t pts = c.block_points();
  for (long r = 0; r < c.s; ++r)
    for (long q = 0; q < c.s; ++q) {
      const long gr = bi * c.s + r, gq = bj * c.s + q;
      za[r * c.s + q] = start(gr, gq);
      for (int k = 0; k < 5; ++k) coef[k * pts + static_cast<std::size_t>(r * c.s + q)] = coefficient(k, gr, gq);
    }
}

void update_block(const Config& c, long bi, long bj, const double* old, const double* up, const double* down,
                  const double* left, const double* right, const double* coef, double* nw) {
  const long s = c.s, n = c.n;
  const std::size_t pts = c.block_points();
  const double *zr = coef, *zb = coef + pts, *zu = coef + 2 * pts, *zv = coef + 3 * pts, *zz = coef + 4 * pts;
  for (long r = 0; r < s; ++r) {
    const long gr = bi * s + r;
    for (long q = 0; q < s; ++q) {
      const long gq = bj * s + q, i = r * s + q;
      const double o = old[i];
      if (gr == 0 || gr == n - 1 || gq == 0 || gq == n - 1) {
        nw[i] = o;
        continue;
      }
      const double za_up = r > 0 ? nw[i - s] : up[(s - 1) * s + q];
      const double za_down = r < s - 1 ? old[i + s] : down[q];
      const double za_left = q > 0 ? nw[i - 1] : left[r * s + s - 1];
      const double za_right = q < s - 1 ? old[i + 1] : right[r * s];
      const double qa = za_down * zr[i] + za_up * zb[i] + za_right * zu[i] + za_left * zv[i] + zz[i];
      nw[i] = o + 0.175 * (qa - o);
    }
  }
}

std::vector<double> reference(const Config& c) {
  const long n = c.n, s = c.s;
  const auto at = [n](long r, long q) { return static_cast<std::size_t>(r * n + q); };
  std::vector<double> old(static_cast<std::size_t>(n * n)), nw(old.size());
  std::vector<double> co[5];
  for (auto& v : co) v.resize(old.size());
  for (long r = 0; r < n; ++r)
    for (long q = 0; q < n; ++q) {
      old[at(r, q)] = start(r, q);
      for (int k = 0; k < 5; ++k) co[k][at(r, q)] = coefficient(k, r, q);
    }
  for (long t = 0; t < c.iterations; ++t) {
    for (long r = 0; r < n; ++r)
      for (long q = 0; q < n; ++q) {
        const double o = old[at(r, q)];
        if (r == 0 || r == n - 1 || q == 0 || q == n - 1) {
          nw[at(r, q)] = o;
          continue;
        }
        // New values above and to the left only inside the same block.
        const double za_up = r % s ? nw[at(r - 1, q)] : old[at(r - 1, q)];
        const double za_left = q % s ? nw[at(r, q - 1)] : old[at(r, q - 1)];
        const std::size_t i = at(r, q);
        const double qa = old[at(r + 1, q)] * co[0][i] + za_up * co[1][i] + old[at(r, q + 1)] * co[2][i] +
                          za_left * co[3][i] + co[4][i];
        nw[at(r, q)] = o + 0.175 * (qa - o);
      }
    old.swap(nw);
  }
  return old;
}

}  // namespace apps::lk23
