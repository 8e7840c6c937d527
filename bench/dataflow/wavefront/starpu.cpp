// The wavefront with StarPU: one variable data handle per tile (registered
// once, outside the clock), one starpu_task_insert per tile with STARPU_R on
// the north and west handles and STARPU_W on its own; StarPU infers the
// dependencies from the handles (sequential consistency), and
// starpu_task_wait_for_all ends the run. Workers: STARPU_NCPU = -t (set in
// the configuration, which here takes precedence over the environment);
// scheduler: STARPU_SCHED, default lws.
#include <starpu.h>

#include "starpu_env.hpp"
#include "wavefront/wavefront.hpp"

namespace {

long g_n = 0;
long g_spin = 0;
std::uint64_t g_stamp = 0;
std::uint64_t* g_v = nullptr;

// The codelets find the tile from the handle of the tile they write (the
// last buffer): its offset in the grid gives (i, j).
template <int Buffers>
void tile_cpu(void* buffers[], void*) {
  auto* c = reinterpret_cast<std::uint64_t*>(STARPU_VARIABLE_GET_PTR(buffers[Buffers - 1]));
  const long k = c - g_v;
  bench::wf::tile(g_v, g_n, k / g_n, k % g_n, g_stamp, g_spin);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  g_n = n;
  g_v = v.data();
  const bench::StarpuSession session(a.threads);
  starpu_codelet cl1 = bench::make_codelet(tile_cpu<1>, 1, "tile0", STARPU_W);
  starpu_codelet cl2 = bench::make_codelet(tile_cpu<2>, 2, "tile1", STARPU_W);
  starpu_codelet cl3 = bench::make_codelet(tile_cpu<3>, 3, "tile2", STARPU_W);
  std::vector<starpu_data_handle_t> h(static_cast<std::size_t>(n * n));
  for (long k = 0; k < n * n; ++k)
    starpu_variable_data_register(&h[k], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&v[k]), sizeof(v[k]));
  bench::wf::run_modes(a, argv[0], session.impl().c_str(), v, n, [&](long spin, std::uint64_t stamp) {
    g_spin = spin;
    g_stamp = stamp;
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        starpu_data_handle_t c = h[i * n + j];
        int rc;
        if (i && j)
          rc = starpu_task_insert(&cl3, STARPU_R, h[(i - 1) * n + j], STARPU_R, h[i * n + j - 1], STARPU_W, c, 0);
        else if (i)
          rc = starpu_task_insert(&cl2, STARPU_R, h[(i - 1) * n + j], STARPU_W, c, 0);
        else if (j)
          rc = starpu_task_insert(&cl2, STARPU_R, h[i * n + j - 1], STARPU_W, c, 0);
        else
          rc = starpu_task_insert(&cl1, STARPU_W, c, 0);
        if (rc != 0) bench::df::fail(argv[0], "starpu_task_insert returned " + std::to_string(rc));
      }
    starpu_task_wait_for_all();
  });
  for (auto& x : h) starpu_data_unregister(x);
}
