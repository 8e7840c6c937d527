// Livermore Kernel 23 (2-D implicit hydrodynamics fragment) on a blocked
// grid, iterated: the n x n grid of za is cut into b x b square blocks of
// s = n/b points a side, each stored contiguously (a handle per block in the
// canopy version), with its five coefficient arrays zr, zb, zu, zv, zz
// (stored together, one block after the other). One iteration updates every
// point not on the grid's outer edge:
//
//   qa = za[k+1][j]*zr + za[k-1][j]*zb + za[k][j+1]*zu + za[k][j-1]*zv + zz
//   za[k][j] += 0.175 * (qa - za[k][j])
//
// Inside a block, rows then columns in order, as the original loop: the
// point above and the point to the left are the new values when they are in
// the same block (Gauss-Seidel, like the kernel's in-place update); across a
// block edge every neighbour is the previous iteration's value (so that the
// blocks of one iteration are independent). Each iteration reads one copy of
// za and writes the other. The result depends only on n, b and the
// iteration count, never on the order the blocks run in, so every version
// must agree with reference() (one global array, the same rule written with
// global indices) to the last bit; the check allows 1e-12.
//
// Sizes: n = 1024, b = 8 (blocks of 128 x 128 = 128 KiB), 200 iterations;
// --smoke: n = 32, b = 4, 4 iterations.
#pragma once
#include <cstddef>
#include <cstdio>
#include <vector>

#include "common.hpp"

namespace apps::lk23 {

struct Config {
  long n, b, s, iterations;
  std::size_t block_points() const { return static_cast<std::size_t>(s * s); }
};

// Defaults, or -n / -i; exits 2 when n is not a multiple of b or the
// iteration count is odd (each pair of iterations brings za back to its first copy).
Config config(const Args& a, const char* prog);

// za and the coefficients of block (bi, bj) at the start.
void init_block(const Config& c, long bi, long bj, double* za, double* coef);

// One iteration of block (bi, bj): old (this block's za), its neighbours'
// old za (nullptr beyond the grid's edge), coef, into nw.
void update_block(const Config& c, long bi, long bj, const double* old, const double* up, const double* down,
                  const double* left, const double* right, const double* coef, double* nw);

// The whole computation on a plain n x n array (row-major), sequentially.
std::vector<double> reference(const Config& c);

// Exits 1 unless block (bi, bj) of every block equals the reference;
// block(bi, bj) returns the block's za.
template <class Block>
void compare(const char* prog, const Config& c, const std::vector<double>& ref, Block&& block) {
  for (long bi = 0; bi < c.b; ++bi)
    for (long bj = 0; bj < c.b; ++bj) {
      const double* z = block(bi, bj);
      for (long r = 0; r < c.s; ++r)
        for (long q = 0; q < c.s; ++q) {
          const double want = ref[static_cast<std::size_t>((bi * c.s + r) * c.n + bj * c.s + q)];
          const double got = z[r * c.s + q];
          if (!(got - want <= 1e-12 && want - got <= 1e-12)) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "za[%ld][%ld] = %.17g, the sequential reference has %.17g",
                          bi * c.s + r, bj * c.s + q, got, want);
            fail(prog, msg);
          }
        }
    }
}

}  // namespace apps::lk23
