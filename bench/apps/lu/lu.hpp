// Blocked LU factorisation, right-looking, without pivoting: A = L x U for
// an n x n matrix of doubles stored as p x p tiles of nb x nb (each tile
// contiguous, row-major), overwritten in place by L (unit lower, below the
// diagonal) and U (upper). Step k: factor the diagonal tile (getrf), solve
// the tiles of row k right of it (trsm with L_kk) and of column k below it
// (trsm with U_kk), update the trailing tiles (A_ij -= L_ik U_kj). A is
// diagonally dominant (a(r, q) in [0, 1) plus n on the diagonal), so no
// pivoting is needed and the factors are well conditioned.
//
// Checked against A rebuilt from its element formula, without the blocked
// code: the residual |L (U x) - A x|_inf / (|A|_inf |x|_inf) for a fixed
// vector x must be below 1e-12 (O(n^2): a wrong tile anywhere shows).
// Sizes: n = 1024, nb = 64 (p = 16, 32 KiB tiles: 8 pages); -n sets n;
// small (the VMs): n = 512; --smoke: n = 128, nb = 32 (p = 4, 2-page tiles).
#pragma once
#include <cstddef>
#include <vector>

#include "common.hpp"

namespace apps::lu {

struct Config {
  long n, nb, p;
  std::size_t tile() const { return static_cast<std::size_t>(nb * nb); }
};

// Defaults, or -n; exits 2 unless n is a multiple of nb.
Config config(const Args& a, const char* prog);

// Element (r, q) of A; tile (i, j) of A filled from it.
double a_at(const Config& c, long r, long q);
void fill_tile(const Config& c, long i, long j, double* tile);

// The four kernels on tiles of nb x nb.
void getrf(long nb, double* akk);                            // A_kk = L_kk U_kk in place
void trsm_row(long nb, const double* lkk, double* akj);      // A_kj <- L_kk^-1 A_kj (U_kj)
void trsm_col(long nb, const double* ukk, double* aik);      // A_ik <- A_ik U_kk^-1 (L_ik)
void gemm(long nb, const double* lik, const double* ukj, double* aij);  // A_ij -= L_ik U_kj

// Exits 1 unless the tiles (tile(i, j) gives tile (i, j)) hold L and U of A.
void check_tiles(const char* prog, const Config& c, const std::vector<const double*>& tiles);

}  // namespace apps::lu
