// The tiled Cholesky with StarPU: one matrix data handle per tile of the
// lower triangle, one starpu_task_insert per kernel (R / RW modes as in
// cholesky.hpp); StarPU infers the dependencies. Handles are registered
// before and unregistered after each run, outside the clock (the matrix is
// restored between runs). Workers and scheduler: starpu_env.hpp.
// Then the lookahead variant ("starpu-la", lookahead.hpp): the same plan as
// canopy's, one task per plan entry with a variable number of buffers (a
// handle per tile of the whole column-major matrix it reads or writes).
#include <starpu.h>

#include <memory>
#include <string>
#include <vector>

#include "cholesky/cholesky.hpp"
#include "cholesky/lookahead.hpp"
#include "starpu_env.hpp"

namespace {

long g_nb = 0;

double* tile(void* buffer) { return reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffer)); }

void potrf_cpu(void* b[], void*) { bench::chol::potrf(tile(b[0]), g_nb); }
void trsm_cpu(void* b[], void*) { bench::chol::trsm(tile(b[0]), tile(b[1]), g_nb); }
void syrk_cpu(void* b[], void*) { bench::chol::syrk(tile(b[0]), tile(b[1]), g_nb); }
void gemm_cpu(void* b[], void*) { bench::chol::gemm(tile(b[0]), tile(b[1]), tile(b[2]), g_nb); }

// A lookahead task: its buffers only order it; it works on the whole matrix
// (main memory, CPU workers: the handles' pointers are the matrix's own).
struct LaArgs {
  double* full;
  double* inverses;
  const bench::chol::Size* size;
  const bench::chol::la::Task* task;
};
void la_cpu(void*[], void* arg) {
  const auto* x = static_cast<const LaArgs*>(arg);
  bench::chol::la::execute(x->full, x->inverses, *x->size, *x->task);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  bench::chol::blas_threads(1);
  const bench::StarpuSession session(a.threads);
  starpu_codelet potrf = bench::make_codelet(potrf_cpu, 1, "potrf", STARPU_RW);
  starpu_codelet trsm = bench::make_codelet(trsm_cpu, 2, "trsm", STARPU_RW);
  starpu_codelet syrk = bench::make_codelet(syrk_cpu, 2, "syrk", STARPU_RW);
  starpu_codelet gemm = bench::make_codelet(gemm_cpu, 3, "gemm", STARPU_RW);
  const bench::chol::Size s = bench::chol::size(a, argv[0]);
  g_nb = s.nb;
  const long nt = s.nt;
  std::vector<starpu_data_handle_t> h(static_cast<std::size_t>(nt * nt));
  bench::chol::Tiled pristine(s), m(s);
  bench::chol::make_spd(pristine);
  const std::string impl = session.impl();
  bench::df::measure_timed(a, "cholesky", impl.c_str(), bench::chol::flops(s), "flop", [&] {
    m.copy_from(pristine);
    for (long i = 0; i < nt; ++i)
      for (long j = 0; j <= i; ++j)
        starpu_matrix_data_register(&h[i * nt + j], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(m.tile(i, j)),
                                    s.nb, s.nb, s.nb, sizeof(double));
    auto H = [&](long i, long j) { return h[i * nt + j]; };
    auto ok = [&](int rc) {
      if (rc != 0) bench::df::fail(argv[0], "starpu_task_insert returned " + std::to_string(rc));
    };
    const double t0 = bench::now();
    for (long k = 0; k < nt; ++k) {
      ok(starpu_task_insert(&potrf, STARPU_RW, H(k, k), 0));
      for (long i = k + 1; i < nt; ++i) ok(starpu_task_insert(&trsm, STARPU_R, H(k, k), STARPU_RW, H(i, k), 0));
      for (long i = k + 1; i < nt; ++i) {
        ok(starpu_task_insert(&syrk, STARPU_R, H(i, k), STARPU_RW, H(i, i), 0));
        for (long j = k + 1; j < i; ++j)
          ok(starpu_task_insert(&gemm, STARPU_R, H(i, k), STARPU_R, H(j, k), STARPU_RW, H(i, j), 0));
      }
    }
    starpu_task_wait_for_all();
    const double t = bench::now() - t0;
    for (long i = 0; i < nt; ++i)
      for (long j = 0; j <= i; ++j) starpu_data_unregister(h[i * nt + j]);
    bench::chol::check(argv[0], pristine, m, a.smoke);
    return t;
  });

  // The lookahead variant.
  starpu_codelet la{};
  la.cpu_funcs[0] = la_cpu;
  la.nbuffers = STARPU_VARIABLE_NBUFFERS;
  la.name = "la";
  std::unique_ptr<double[]> full(new double[static_cast<std::size_t>(s.n * s.n)]);
  std::vector<double> inverses(static_cast<std::size_t>(s.nt * s.nb * s.nb));
  const std::vector<bench::chol::la::Task> plan = bench::chol::la::plan(s, bench::chol::la::cuts_for(a.threads));
  std::vector<LaArgs> args(plan.size());
  for (std::size_t t = 0; t < plan.size(); ++t) args[t] = {full.get(), inverses.data(), &s, &plan[t]};
  std::vector<starpu_data_descr> descr;
  const std::string la_impl = impl + "-la";
  bench::chol::run_full(a, argv[0], la_impl.c_str(), full.get(), [&](double* f, const bench::chol::Size&) {
    // (registration inside the clock here, ~136 handles: microseconds
    // against a run of a quarter second)
    for (long i = 0; i < nt; ++i)
      for (long j = 0; j <= i; ++j)
        starpu_matrix_data_register(&h[i * nt + j], STARPU_MAIN_RAM,
                                    reinterpret_cast<uintptr_t>(bench::chol::full_tile(f, s.n, s.nb, i, j)), s.n,
                                    s.nb, s.nb, sizeof(double));
    for (std::size_t t = 0; t < plan.size(); ++t) {
      descr.clear();
      for (long id : plan[t].reads) descr.push_back({h[id], STARPU_R});
      for (long id : plan[t].writes) descr.push_back({h[id], STARPU_RW});
      const int rc = starpu_task_insert(&la, STARPU_DATA_MODE_ARRAY, descr.data(), static_cast<int>(descr.size()),
                                        STARPU_CL_ARGS_NFREE, &args[t], sizeof(LaArgs), 0);
      if (rc != 0) bench::df::fail(argv[0], "starpu_task_insert returned " + std::to_string(rc));
    }
    starpu_task_wait_for_all();
    for (long i = 0; i < nt; ++i)
      for (long j = 0; j <= i; ++j) starpu_data_unregister(h[i * nt + j]);
  });
}
