// omp_where: prints, for every thread of an OpenMP parallel region, the CPU
// it runs on (sched_getcpu) and the CPUs it is bound to (sched_getaffinity),
// and which OpenMP runtime the program uses. It is the program the tests of
// `canopy run` launch, built once with GCC's libgomp and once with LLVM's
// libomp, and a handy check by hand:
//
//   canopy run -n 4 --report -- build/bin/example_omp_where
//
// Usage: example_omp_where [REGIONS]   (REGIONS parallel regions, default 1)
// It needs nothing from canopy, so that it can be built by any compiler.
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string cpu_list(const cpu_set_t& set) {
  std::string s;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) {
      if (!s.empty()) s += ',';
      s += std::to_string(c);
    }
  return s.empty() ? "-" : s;
}

// The shared object that provides the OpenMP API (libgomp.so.1, libomp.so.5, ...).
const char* runtime_library() {
  void* f = dlsym(RTLD_DEFAULT, "omp_get_num_threads");
  Dl_info info{};
  if (f && dladdr(f, &info) && info.dli_fname) return info.dli_fname;
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  const int regions = argc > 1 ? std::atoi(argv[1]) : 1;
  if (regions < 1) {
    std::fprintf(stderr, "usage: %s [REGIONS >= 1]\n", argv[0]);
    return 2;
  }
  std::printf("omp_where: runtime=%s\n", runtime_library());
  for (int r = 0; r < regions; ++r) {
#pragma omp parallel
    {
      const int cpu = sched_getcpu();
      cpu_set_t set;
      CPU_ZERO(&set);
      sched_getaffinity(0, sizeof set, &set);
#pragma omp critical
      std::printf("omp_where: region=%d thread=%d of=%d cpu=%d bound=%s\n", r, omp_get_thread_num(),
                  omp_get_num_threads(), cpu, cpu_list(set).c_str());
    }
  }
  return 0;
}
