// What OMP_AFFINITY_FORMAT shows for the calling thread (omp_display_affinity,
// omp_capture_affinity) and OMP_DISPLAY_AFFINITY's automatic display: one
// line per thread when it starts a parallel region with information that
// differs from what it last displayed (OpenMP 5.1, 6.14).
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "canopy/binding.hpp"
#include "runtime.hpp"

int canopy_omp_team_num();  // the host teams construct's state (gomp/parallel.cpp)
int canopy_omp_num_teams();

namespace canopy::omp {

std::string thread_affinity(const char* format) {
  ThreadState& ts = this_thread();
  AffinityFields f;
  f.team_num = canopy_omp_team_num();
  f.num_teams = canopy_omp_num_teams();
  f.nesting_level = ts.team->level;
  f.thread_num = ts.num;
  f.num_threads = ts.team->nthreads;
  f.ancestor_tnum = ts.team->level > 0 ? ts.team->parent_thread_num : -1;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  f.host = host;
  f.pid = getpid();
  f.native_thread_id = static_cast<long>(gettid());
  try {
    f.os_cpus = canopy::current_thread_binding();
  } catch (...) {
    // Unknown binding: %A prints nothing rather than failing the program.
  }
  return format_affinity(format && *format ? std::string(format) : runtime().settings.affinity_format, f);
}

void display_affinity_if_changed(ThreadState&) {
  const std::string line = thread_affinity(nullptr);
  thread_local std::string last;
  if (line == last) return;
  last = line;
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace canopy::omp
