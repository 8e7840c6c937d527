// The tiled Cholesky without a runtime: the reference of the tables (one
// thread, the same kernels, no task overhead). Then the lookahead plan
// (lookahead.hpp) run task after task in submission order
// ("sequential-la"), the reference of the "-la" variants; with --smoke also
// the same plan cut for at most 4 tiles per task ("sequential-la-cut"),
// which exercises the narrower chunks and row cuts that small tiles and big
// matrices need (checked like every run).
#include <string>
#include <vector>

#include "cholesky/cholesky.hpp"
#include "cholesky/lookahead.hpp"

namespace {

void run_plan(const bench::df::Args& a, const char* prog, const char* impl, const bench::chol::la::Cuts& cuts) {
  const bench::chol::Size s = bench::chol::size(a, prog);
  std::vector<double> full(static_cast<std::size_t>(s.n * s.n));
  std::vector<double> inverses(static_cast<std::size_t>(s.nt * s.nb * s.nb));
  const std::vector<bench::chol::la::Task> plan = bench::chol::la::plan(s, cuts);
  for (const bench::chol::la::Task& t : plan)
    if (static_cast<long>(t.reads.size() + t.writes.size()) > cuts.max_tiles)
      bench::df::fail(prog, std::string(impl) + ": a task of the plan accesses more than max_tiles tiles");
  bench::chol::run_full(a, prog, impl, full.data(), [&](double* f, const bench::chol::Size& z) {
    for (const bench::chol::la::Task& t : plan) bench::chol::la::execute(f, inverses.data(), z, t);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  bench::chol::run(a, argv[0], "sequential", [](bench::chol::Tiled& m) { bench::chol::factor_sequential(m); });
  run_plan(a, argv[0], "sequential-la", bench::chol::la::cuts_for(1));
  if (a.smoke) {
    bench::chol::la::Cuts cut = bench::chol::la::cuts_for(1);
    cut.max_tiles = 4;
    run_plan(a, argv[0], "sequential-la-cut", cut);
  }
}
