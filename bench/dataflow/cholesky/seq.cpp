// The tiled Cholesky without a runtime: the reference of the tables (one
// thread, the same kernels, no task overhead).
#include "cholesky/cholesky.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  bench::chol::run(a, argv[0], "sequential", [](bench::chol::Tiled& m) { bench::chol::factor_sequential(m); });
}
