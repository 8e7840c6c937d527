// StarPU set up the same way by every StarPU program of bench/dataflow:
// CPU workers only, as many as -t (the configuration takes precedence over
// STARPU_NCPU & co, so that the flag always wins), the scheduler from
// STARPU_SCHED (default lws, work stealing with locality: StarPU's choice
// for task graphs without performance models), no banner.
#pragma once
#include <starpu.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace bench {

class StarpuSession {
 public:
  explicit StarpuSession(int threads) {
    const char* s = std::getenv("STARPU_SCHED");
    sched_ = s && *s ? s : "lws";
    setenv("STARPU_SILENT", "1", 0);
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.precedence_over_environment_variables = 1;
    conf.ncpus = threads;
    conf.ncuda = 0;
    conf.nopencl = 0;
    conf.sched_policy_name = sched_.c_str();
    const int rc = starpu_init(&conf);
    if (rc != 0) {
      std::fprintf(stderr, "starpu_init failed (%d)\n", rc);
      std::exit(1);
    }
    if (starpu_cpu_worker_get_count() != static_cast<unsigned>(threads)) {
      std::fprintf(stderr, "StarPU started %u CPU workers, %d asked\n", starpu_cpu_worker_get_count(), threads);
      std::exit(1);
    }
  }
  ~StarpuSession() { starpu_shutdown(); }
  StarpuSession(const StarpuSession&) = delete;
  StarpuSession& operator=(const StarpuSession&) = delete;

  // The competitor's name in RESULT lines: "starpu" with lws, else
  // "starpu-<scheduler>".
  std::string impl() const { return sched_ == "lws" ? "starpu" : "starpu-" + sched_; }

 private:
  std::string sched_;
};

// A CPU codelet whose first buffers are read and whose last one is accessed
// with `last` (STARPU_W or STARPU_RW): the shape of every task here.
inline starpu_codelet make_codelet(starpu_cpu_func_t f, int buffers, const char* name,
                                   starpu_data_access_mode last) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = f;
  cl.nbuffers = buffers;
  for (int b = 0; b < buffers; ++b) cl.modes[b] = b + 1 < buffers ? STARPU_R : last;
  cl.name = name;
  return cl;
}

}  // namespace bench
