// The Jacobi kernel shared by every variant (see jacobi.hpp).
#include "jacobi/jacobi.hpp"

namespace bench {

void jacobi_rows(const double* in, double* out, long n, std::int64_t lo, std::int64_t hi) {
  for (std::int64_t i = lo; i < hi; ++i) {
    const double* up = in + (i - 1) * n;
    const double* row = in + i * n;
    const double* down = in + (i + 1) * n;
    double* o = out + i * n;
    for (long j = 1; j < n - 1; ++j) o[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
}

}  // namespace bench
