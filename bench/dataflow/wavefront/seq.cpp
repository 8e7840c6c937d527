// The wavefront without a runtime: the tiles in row-major order, one call
// each. Its busy time is the reference of the efficiency figure
// (sequential time / (threads x time)). --calibrate prints the delay
// run.py passes to every program.
#include "wavefront/wavefront.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  bench::wf::run_modes(a, argv[0], "sequential", v, n, [&](long spin, std::uint64_t stamp) {
    std::uint64_t* p = v.data();
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) bench::wf::tile(p, n, i, j, stamp, spin);
  });
}
