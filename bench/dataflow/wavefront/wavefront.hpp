// The 2D wavefront every competitor runs: an n x n grid of tiles, the task of
// tile (i, j) depends on its north (i-1, j) and west (i, j-1) tiles, nothing
// else (tiles on the first row or column have one dependency or none).
//
// Each task does almost nothing, so that the dependency machinery is what
// is measured, yet enough to prove the order was kept: it writes
//   v(i, j) = v(i-1, j) + v(i, j-1) + stamp      (missing neighbours: 0)
// where stamp changes every run; a task that ran before a neighbour (or saw
// a value of the previous run) leaves a wrong grid, which check() reports.
// "Busy" tasks then spin for a calibrated ~500 ns (bench::spin).
//
// Sizes: 256 x 256 tiles (65,536 tasks) by default, 16 x 16 for --smoke.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

namespace bench::wf {

inline long grid_size(const df::Args& a) { return a.n ? a.n : (a.smoke ? 16 : 256); }

// The work of one task; `v` is the grid (row-major), `spin` the busy loop.
inline void tile(std::uint64_t* v, long n, long i, long j, std::uint64_t stamp, long spin) {
  const std::uint64_t north = i ? v[(i - 1) * n + j] : 0;
  const std::uint64_t west = j ? v[i * n + j - 1] : 0;
  v[i * n + j] = north + west + stamp;
  if (spin) bench::spin(spin);
}

// The delay loop's iterations for ~500 ns, and the time they take: the
// fastest of 20 timings of a 2^20-iteration loop (on a shared machine,
// preemption only ever makes a timing longer, so the fastest is the truest).
inline bench::Delay calibrate_500ns() {
  const long probe = 1L << 20;
  double best = 1e9;
  for (int k = 0; k < 20; ++k) {
    const double t0 = bench::now();
    bench::spin(probe);
    best = std::min(best, bench::now() - t0);
  }
  bench::Delay d;
  d.iterations = std::max(1L, static_cast<long>(500e-9 / (best / static_cast<double>(probe))));
  d.seconds = best / static_cast<double>(probe) * static_cast<double>(d.iterations);
  return d;
}

// The iterations of a ~500 ns delay: --spin, else calibrated here.
inline long spin_iterations(const df::Args& a) { return a.spin >= 0 ? a.spin : calibrate_500ns().iterations; }

// Checks the whole grid against a sequential run with the same stamp.
inline void check(const char* prog, const std::uint64_t* v, long n, std::uint64_t stamp) {
  std::vector<std::uint64_t> ref(static_cast<std::size_t>(n * n));
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) tile(ref.data(), n, i, j, stamp, 0);
  for (long k = 0; k < n * n; ++k)
    if (v[k] != ref[k])
      df::fail(prog, "wavefront tile (" + std::to_string(k / n) + ", " + std::to_string(k % n) + ") is " +
                         std::to_string(v[k]) + ", expected " + std::to_string(ref[k]) +
                         " (a task ran before its north or west neighbour)");
}

// Runs the modes asked for: run(spin, stamp) does one whole wavefront and
// leaves the grid in v; every repetition's grid is checked (outside the clock).
template <class Run>
void run_modes(const df::Args& a, const char* prog, const char* impl, std::vector<std::uint64_t>& v, long n,
               Run&& run) {
  if (a.calibrate) {
    const bench::Delay d = calibrate_500ns();
    std::printf("CALIBRATE iterations=%ld seconds=%.9f\n", d.iterations, d.seconds);
    return;
  }
  std::uint64_t stamp = 0;
  auto one = [&](const char* bench, long spin) {
    df::measure_timed(a, bench, impl, static_cast<double>(n * n), "task", [&] {
      ++stamp;
      const double t0 = bench::now();
      run(spin, stamp);
      const double t = bench::now() - t0;
      if (a.check) check(prog, v.data(), n, stamp);
      return t;
    });
  };
  if (a.mode != "busy") one("wavefront-empty", 0);
  if (a.mode != "empty") one("wavefront-busy", spin_iterations(a));
}

}  // namespace bench::wf
