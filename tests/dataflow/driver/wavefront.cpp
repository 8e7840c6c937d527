// A 2D wavefront of data-flow tasks (tile (i,j) reads its north and west
// tiles and writes itself), for instruction counts under callgrind and for
// efficiency with tasks of a given length. bench/dataflow has the full
// comparison with the peers; this is the data-flow layer's own check.
//
//   canopy_dataflow_wavefront -n 256 -t 1 -r 5            # empty tasks: ns per task
//   canopy_dataflow_wavefront -n 256 -t 2 -r 5 -w 500     # 500 ns tasks: efficiency
//   valgrind --tool=callgrind canopy_dataflow_wavefront -n 256 -t 1 -r 1 -x 2
//     (-x: repetitions in total, the first one a warm-up; divide the
//      instructions by n*n*(x-1) after subtracting a run with -x 1)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "canopy/dataflow.hpp"

namespace {

volatile std::uint64_t g_sink;

// About `iters` dependent multiply-adds (not optimized away).
[[gnu::noinline]] void spin(std::uint64_t iters) {
  std::uint64_t x = 1;
  for (std::uint64_t i = 0; i < iters; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  g_sink = x;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t iters_for_ns(double ns) {
  if (ns <= 0) return 0;
  const std::uint64_t probe = 10'000'000;
  double best = 1e9;
  for (int k = 0; k < 5; ++k) {
    const double t0 = now_s();
    spin(probe);
    best = std::min(best, now_s() - t0);
  }
  return static_cast<std::uint64_t>(ns * 1e-9 / (best / probe));
}

}  // namespace

int main(int argc, char** argv) {
  int n = 256, threads = 1, reps = 5, total = 0;
  double work_ns = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-t")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-r")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-w")) work_ns = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-x")) total = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [-n tiles] [-t threads] [-r reps] [-w ns per task] [-x runs, no timing]\n", argv[0]);
      return 2;
    }
  }
  const std::uint64_t iters = iters_for_ns(work_ns);
  std::vector<canopy::Data> h(static_cast<std::size_t>(n) * n);
  std::vector<char> tiles(h.size() * 64);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = canopy::data_register(&tiles[i * 64], 64);

  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = threads;
  canopy::Runtime rt(o);
  auto wavefront = [&] {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const canopy::Data self = h[static_cast<std::size_t>(i) * n + j];
        auto body = [iters] {
          if (iters) spin(iters);
        };
        if (i > 0 && j > 0)
          canopy::submit({canopy::read(h[(i - 1) * n + j]), canopy::read(h[i * n + j - 1]), canopy::read_write(self)},
                         body);
        else if (i > 0)
          canopy::submit({canopy::read(h[(i - 1) * n + j]), canopy::read_write(self)}, body);
        else if (j > 0)
          canopy::submit({canopy::read(h[i * n + j - 1]), canopy::read_write(self)}, body);
        else
          canopy::submit({canopy::read_write(self)}, body);
      }
    canopy::wait_all();
  };
  if (total > 0) {  // fixed number of runs, for callgrind
    rt.run([&] {
      for (int r = 0; r < total; ++r) wavefront();
    });
    return 0;
  }
  const double tasks = static_cast<double>(n) * n;
  std::vector<double> times;
  rt.run([&] {
    wavefront();  // warm-up: pools, chunks
    for (int r = 0; r < reps; ++r) {
      const double t0 = now_s();
      wavefront();
      times.push_back(now_s() - t0);
    }
  });
  std::sort(times.begin(), times.end());
  const double med = times[times.size() / 2];
  double seq = 0;
  if (iters) {
    std::vector<double> st;
    for (int r = 0; r < reps; ++r) {
      const double t0 = now_s();
      for (int k = 0; k < n * n; ++k) spin(iters);
      st.push_back(now_s() - t0);
    }
    std::sort(st.begin(), st.end());
    seq = st[st.size() / 2];
  }
  std::printf("wavefront %dx%d threads %d work %.0f ns: median %.3f ms, %.1f ns per task", n, n, threads, work_ns,
              med * 1e3, med * 1e9 / tasks);
  if (iters) std::printf(", sequential %.3f ms, efficiency %.1f%%", seq * 1e3, 100.0 * seq / (med * threads));
  std::printf("\n");
  for (canopy::Data d : h) canopy::data_free(d);
  return 0;
}
