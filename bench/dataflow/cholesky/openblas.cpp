// OpenBLAS's own threaded Cholesky: dpotrf on the whole matrix
// (column-major, lower), OpenBLAS's pthreads build at -t threads. The copies between the tiled layout and
// the full one are outside the clock; the check is the same.
#include <memory>
#include <string>

#include "cholesky/cholesky.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  bench::chol::blas_threads(a.threads);
  const bench::chol::Size s = bench::chol::size(a, argv[0]);
  bench::chol::Tiled pristine(s), m(s);
  bench::chol::make_spd(pristine);
  std::unique_ptr<double[]> full(new double[static_cast<std::size_t>(s.n * s.n)]);
  bench::df::measure_timed(a, "cholesky", "openblas", bench::chol::flops(s), "flop", [&] {
    bench::chol::to_full(pristine, full.get());
    const double t0 = bench::now();
    const int info = bench::chol::dpotrf_lower(full.get(), s.n, s.n);
    const double t = bench::now() - t0;
    if (info != 0) bench::df::fail(argv[0], "dpotrf returned " + std::to_string(info));
    bench::chol::from_full(full.get(), m);
    bench::chol::check(argv[0], pristine, m, a.smoke);
    return t;
  });
}
