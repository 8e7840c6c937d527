// The lookahead Cholesky ("<impl>-la"): the same factorization as the tiled
// one, on the whole column-major matrix (lda = n, tile (i, j) at
// full + j*nb*n + i*nb), with fewer and bigger BLAS calls off the critical
// path. Step k:
//   potrf(k)                          RW (k, k)
//   trsm(k, rows [lo, hi))            R (k, k); RW (i, k), lo <= i < hi
//   update(k, columns [k+1, k+2))     the next panel: its critical path
//   update(k, columns [lo, hi))       the rest of the trailing matrix, in a
//                                     few chunks of about equal flops
// where update(k, [lo, hi)) is one dsyrk on the chunk's diagonal square and
// one dgemm on the rows below it:
//                                     R (i, k), i >= lo; RW (i, j), lo <= j < hi, i >= j
// The plan (the list of tasks with their accesses, in submission order) is
// made once here and run by every runtime, so that canopy, libgomp and
// libomp execute the same graph; each only turns the accesses into its own
// dependencies.
//
// Why: OpenBLAS packs the operands of each call, so a 3,840 x 1,024 x 256
// dgemm runs at ~54 GFLOP/s on one core here, a 256 x 256 x 256 one at ~50
// and a 256 x 256 dsyrk at ~37; threaded dpotrf makes the big calls and
// beats every runtime running 256 x 256 tile kernels (docs/bench-dataflow.md).
#pragma once
#include <vector>

#include "cholesky/cholesky.hpp"

namespace bench::chol::la {

enum class Kind { potrf, trsm, update };

struct Task {
  Kind kind;
  long k;       // the step (the panel's tile column)
  long lo, hi;  // trsm: tile rows [lo, hi); update: tile columns [lo, hi)
  long rows = 0, rows_end = 0;  // update: tile rows [rows, rows_end) (rows == lo: with the diagonal square)
  std::vector<long> reads;   // tiles read, as i * nt + j
  std::vector<long> writes;  // tiles read and written, as i * nt + j
};

// How the work is cut: the trailing update beyond the next panel in
// `chunks` tasks of about equal flops (fewer when fewer columns are left),
// each panel's trsm in `trsm_chunks` tasks of about equal rows.
// No task accesses more than `max_tiles` tiles (canopy::kMaxAccesses): a
// chunk that would is cut narrower, a single column by rows too (none is
// at 4096 / 256; small tiles or big matrices need it).
struct Cuts {
  long chunks = 2;
  long trsm_chunks = 2;
  long max_tiles = 256;
};

// The cuts every runtime uses on `threads` threads: as many chunks as
// threads, at least 2 (on 2 threads, 2 to 4 chunks were within 1% of each
// other for canopy, libgomp and libomp alike; 4 was 5% slower).
Cuts cuts_for(int threads);

// The tasks of the whole factorization, in submission order.
std::vector<Task> plan(const Size& s, const Cuts& cuts);

// Runs one task on `full` (sequential OpenBLAS calls on the caller);
// `inverses` holds nt tiles of nb x nb doubles: potrf(k) writes the inverse
// of L(k, k) into the k-th, the trsm tasks of step k read it.
void execute(double* full, double* inverses, const Size& s, const Task& t);

// The element offset in `full` of tile id (i * nt + j): its first element.
inline long offset(const Size& s, long id) { return (id % s.nt) * s.nb * s.n + (id / s.nt) * s.nb; }

}  // namespace bench::chol::la
