// The wavefront with canopy's data-flow tasks: one data handle per tile
// (canopy::data_register, once, outside the clock), one canopy::submit per
// tile reading the north and west handles and writing its own; the runtime
// infers the dependencies; canopy::wait_all ends the run. Submission runs
// on worker 0 (inside Runtime::run), as the OpenMP variants submit from
// their `single` thread.
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>

#include "wavefront/wavefront.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  std::vector<canopy::Data> h(static_cast<std::size_t>(n * n));
  for (long k = 0; k < n * n; ++k) h[k] = canopy::data_register(&v[k], sizeof(v[k]));
  bench::wf::run_modes(a, argv[0], "canopy", v, n, [&](long spin, std::uint64_t stamp) {
    rt.run([&] {
      std::uint64_t* p = v.data();
      const canopy::Data* hp = h.data();
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
          auto body = [p, n, i, j, stamp, spin] { bench::wf::tile(p, n, i, j, stamp, spin); };
          const canopy::Data c = hp[i * n + j];
          if (i && j)
            canopy::submit({canopy::read(hp[(i - 1) * n + j]), canopy::read(hp[i * n + j - 1]), canopy::write(c)},
                           body);
          else if (i)
            canopy::submit({canopy::read(hp[(i - 1) * n + j]), canopy::write(c)}, body);
          else if (j)
            canopy::submit({canopy::read(hp[i * n + j - 1]), canopy::write(c)}, body);
          else
            canopy::submit({canopy::write(c)}, body);
        }
      canopy::wait_all();
    });
  });
  for (const canopy::Data d : h) canopy::data_free(d);
}
