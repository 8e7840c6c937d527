// Block-cyclic matrix multiplication, C = A x B of n x n doubles, repeated:
// p row blocks of nb = n/p rows. A is stored as p x p tiles of nb x nb
// (A[i][k]), B and C as p row blocks of nb x n (B_k, C_i). C_i is the sum
// over k of A[i][k] x B_k, each term one OpenBLAS dgemm (nb x nb times
// nb x n). The canopy version is the ring algorithm of distributed-memory
// codes (and of ORWL's benchmark): task i owns A[i][*] and C_i and, at step
// s, multiplies with the block of B it holds, B_(i+s) mod p, then takes the
// next one from its neighbour i+1 (a copy into its own buffer): each task
// talks to one neighbour. The OpenMP version reads B_k where it is.
//
// Checked against values computed independently of the blocked code:
// Freivalds' test (C x = A (B x) for a fixed vector x, with A and B from
// their element formulas) and 64 elements of C computed as dot products.
// Sizes: n = 1024, p = 16 (nb = 64), 8 products; --smoke: n = 64, p = 4, 2.
#pragma once
#include <cstddef>
#include <vector>

#include "common.hpp"

namespace apps::matmul {

struct Config {
  long n, p, nb, iterations;
  std::size_t tile() const { return static_cast<std::size_t>(nb * nb); }
  std::size_t row_block() const { return static_cast<std::size_t>(nb * n); }
};

// Defaults, or -n / -i; exits 2 unless n is a multiple of p.
Config config(const Args& a, const char* prog);

// Element (r, q) of A and of B.
double a_at(long r, long q);
double b_at(long r, long q);

// Fills tile A[i][k], and row block k of B.
void fill_a_tile(const Config& c, long i, long k, double* tile);
void fill_b_rows(const Config& c, long k, double* rows);

// C_i (+)= A[i][k] x B_k: `accumulate` false sets C_i.
void multiply(const Config& c, const double* a_tile, const double* b_rows, double* c_rows, bool accumulate);

// Exits 1 unless C (row block i at c_rows(i)) is A x B.
template <class Rows>
void check(const char* prog, const Config& c, Rows&& c_rows);
void check_rows(const char* prog, const Config& c, const double* const* c_rows);

template <class Rows>
void check(const char* prog, const Config& c, Rows&& c_rows) {
  std::vector<const double*> rows;
  for (long i = 0; i < c.p; ++i) rows.push_back(c_rows(i));
  check_rows(prog, c, rows.data());
}

}  // namespace apps::matmul
