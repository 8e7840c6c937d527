// The lookahead Cholesky's plan and kernels (lookahead.hpp).
#include "cholesky/lookahead.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>

// LAPACK's triangular inverse (Fortran interface, as dpotrf_ in kernels.cpp).
extern "C" void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info,
                        std::size_t uplo_len, std::size_t diag_len);

namespace bench::chol::la {

namespace {

// [lo, hi) tile columns of the trailing matrix cut into at most `parts`
// ranges of about equal tile counts (column j has nt - j tiles).
std::vector<std::pair<long, long>> balanced_columns(long lo, long hi, long nt, long parts) {
  std::vector<std::pair<long, long>> out;
  long total = 0;
  for (long j = lo; j < hi; ++j) total += nt - j;
  long done = 0, start = lo;
  for (long j = lo; j < hi; ++j) {
    done += nt - j;
    const long have = static_cast<long>(out.size()) + 1;
    if (done * parts >= total * have || j + 1 == hi) {
      out.emplace_back(start, j + 1);
      start = j + 1;
    }
  }
  return out;
}

// update(k, columns [lo, hi), rows [r0, r1)): with r0 == lo the chunk's
// diagonal square (dsyrk) and the rows below it (dgemm); with r0 >= hi only
// those rows (dgemm), for a column cut by rows as well.
Task update(long k, long lo, long hi, long r0, long r1, long nt) {
  Task t{Kind::update, k, lo, hi, r0, r1, {}, {}};
  if (r0 != lo)
    for (long j = lo; j < hi; ++j) t.reads.push_back(j * nt + k);
  for (long i = r0; i < r1; ++i) t.reads.push_back(i * nt + k);
  for (long j = lo; j < hi; ++j)
    for (long i = std::max(j, r0); i < r1; ++i) t.writes.push_back(i * nt + j);
  return t;
}

// The updates of columns [lo, hi) at step k, none accessing more than
// `max` tiles: narrower column ranges, and a single column still too tall
// cut by rows too (its top part with the diagonal tile, then the rest).
void add_updates(std::vector<Task>& tasks, long k, long lo, long hi, long nt, long max) {
  const auto fits = [max](const Task& t) { return static_cast<long>(t.reads.size() + t.writes.size()) <= max; };
  while (lo < hi) {
    long end = hi;
    while (end - lo > 1 && !fits(update(k, lo, end, lo, nt, nt))) --end;
    for (long r0 = lo; r0 < nt;) {
      long r1 = nt;
      while (r1 - r0 > 1 && !fits(update(k, lo, end, r0, r1, nt))) --r1;
      if (r0 == lo) r1 = std::max(r1, end);  // the diagonal square stays whole
      tasks.push_back(update(k, lo, end, r0, r1, nt));
      r0 = r1;
    }
    lo = end;
  }
}

}  // namespace

Cuts cuts_for(int threads) {
  Cuts c;
  c.chunks = std::max(2, threads);
  c.trsm_chunks = std::max(2, threads);
  return c;
}

std::vector<Task> plan(const Size& s, const Cuts& cuts) {
  const long nt = s.nt;
  std::vector<Task> tasks;
  for (long k = 0; k < nt; ++k) {
    tasks.push_back(Task{Kind::potrf, k, k, k + 1, 0, 0, {}, {k * nt + k}});
    const long below = nt - k - 1;
    // (each chunk reads the diagonal tile and writes its rows: at most max_tiles)
    const long fit = (below + cuts.max_tiles - 2) / std::max(1L, cuts.max_tiles - 1);
    const long parts = std::max({1L, fit, std::min(cuts.trsm_chunks, below)});
    for (long p = 0; p < parts && below > 0; ++p) {
      const long lo = k + 1 + below * p / parts, hi = k + 1 + below * (p + 1) / parts;
      Task t{Kind::trsm, k, lo, hi, 0, 0, {k * nt + k}, {}};
      for (long i = lo; i < hi; ++i) t.writes.push_back(i * nt + k);
      tasks.push_back(std::move(t));
    }
    if (k + 1 < nt) add_updates(tasks, k, k + 1, k + 2, nt, cuts.max_tiles);
    if (k + 2 < nt)
      for (auto [lo, hi] : balanced_columns(k + 2, nt, nt, std::max(1L, cuts.chunks)))
        add_updates(tasks, k, lo, hi, nt, cuts.max_tiles);
  }
  return tasks;
}

void execute(double* full, double* inverses, const Size& s, const Task& t) {
  const long n = s.n, nb = s.nb, k = t.k;
  const int ld = static_cast<int>(n), b = static_cast<int>(nb);
  switch (t.kind) {
    case Kind::potrf: {
      full_potrf(full, n, nb, k);
      // The inverse of L(k, k), for the trsm tasks of this step.
      double* inv = inverses + k * nb * nb;
      const double* l = full_tile(full, n, nb, k, k);
      for (long c = 0; c < nb; ++c)
        for (long r = 0; r < nb; ++r) inv[c * nb + r] = r >= c ? l[c * n + r] : 0.0;
      const char uplo = 'L', diag = 'N';
      int info = 0;
      dtrtri_(&uplo, &diag, &b, inv, &b, &info, 1, 1);
      if (info != 0) df::fail("cholesky", "dtrtri of a diagonal tile returned " + std::to_string(info));
      break;
    }
    case Kind::trsm:
      // A(i, k) L(k, k)^-T as a triangular multiply by the inverse (OpenBLAS:
      // dtrmm ~51 GFLOP/s on one core here, dtrsm ~28).
      cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                  static_cast<int>((t.hi - t.lo) * nb), b, 1.0, inverses + k * nb * nb, b,
                  full_tile(full, n, nb, t.lo, k), ld);
      break;
    case Kind::update: {
      const int w = static_cast<int>((t.hi - t.lo) * nb);
      long first = t.rows;  // first tile row of the dgemm
      if (t.rows == t.lo) {
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, w, b, -1.0, full_tile(full, n, nb, t.lo, k), ld, 1.0,
                    full_tile(full, n, nb, t.lo, t.lo), ld);
        first = t.hi;
      }
      const int m = static_cast<int>((t.rows_end - first) * nb);
      if (m > 0)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, w, b, -1.0, full_tile(full, n, nb, first, k), ld,
                    full_tile(full, n, nb, t.lo, k), ld, 1.0, full_tile(full, n, nb, first, t.lo), ld);
      break;
    }
  }
}

}  // namespace bench::chol::la
