// libFuzzer target: the bytes as a matrix file, read in every format. Bad
// input must end in canopy::Error; anything else (crash, other exception,
// sanitizer report) is a finding. A matrix that reads must also be a valid
// CommMatrix (sorted CSR, symmetric, positive finite weights, no diagonal)
// and survive a write/read round trip in each format unchanged.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"

using namespace canopy;

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_matrix: invariant broken: %s\n", what);
    std::abort();
  }
}

void check_invariants(const CommMatrix& m) {
  const int n = m.size();
  require(n >= 0 && n <= kMaxTasks, "size within limits");
  require(m.row_ptr().size() == static_cast<std::size_t>(n) + 1 && m.row_ptr()[0] == 0, "row_ptr shape");
  require(m.cols().size() == m.weights().size(), "cols and weights match");
  require(m.row_ptr()[n] == static_cast<std::int64_t>(m.cols().size()), "row_ptr ends at nnz");
  for (int i = 0; i < n; ++i) {
    require(m.row_begin(i) <= m.row_end(i), "row_ptr monotone");
    for (std::int64_t k = m.row_begin(i); k < m.row_end(i); ++k) {
      int j = m.cols()[k];
      double w = m.weights()[k];
      require(j >= 0 && j < n && j != i, "column in range, off the diagonal");
      require(k == m.row_begin(i) || m.cols()[k - 1] < j, "columns strictly increasing");
      require(std::isfinite(w) && w > 0, "weight positive and finite");
      require(m.at(j, i) == w, "symmetric");
    }
  }
}

void round_trip(const CommMatrix& m, MatrixFormat f) {
  std::ostringstream out;
  write_matrix(out, m, f);
  std::istringstream in(out.str());
  MatrixReadInfo info;
  CommMatrix back = read_matrix(in, "round-trip", f, &info);  // an Error here is a finding too
  require(back == m, "write then read gives the same matrix");
  require(!info.symmetrized, "written matrices are symmetric");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (MatrixFormat f : {MatrixFormat::Auto, MatrixFormat::Dense, MatrixFormat::MatrixMarket, MatrixFormat::EdgeList}) {
    CommMatrix m;
    try {
      std::istringstream in(text);
      m = read_matrix(in, "fuzz", f);
    } catch (const Error&) {
      continue;
    }
    // The deep checks walk all n rows several times; for the huge empty
    // matrices a "# tasks 16000000" line makes, reading them once is enough.
    if (m.size() > 100000) continue;
    check_invariants(m);
    round_trip(m, MatrixFormat::MatrixMarket);
    round_trip(m, MatrixFormat::EdgeList);
    if (m.size() <= 64 && m.size() > 0) round_trip(m, MatrixFormat::Dense);  // an empty dense file is not a matrix
    std::string svg = matrix_svg(m, 16);
    require(svg.find("</svg>") != std::string::npos, "svg complete");
  }
  return 0;
}
