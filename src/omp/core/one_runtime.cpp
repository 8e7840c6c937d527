// One process, one OpenMP runtime. canopy's library serves both ABIs (it is
// libgomp.so.1 and libomp.so.5 in lib/canopy-omp: the two names load it
// once, the loader recognises the file); but if another runtime is loaded
// beside it (a library linked against libgomp found the system's copy while
// the program found canopy as libomp, or the reverse), the two would each
// keep their own threads and ICVs and the program would silently run on
// both. canopy says so and stops, when it is loaded (the objects the
// program was linked with are all mapped by then) and whenever it starts
// new worker threads (runtime.cpp: a runtime dlopen'ed since).
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "one_runtime.hpp"

namespace canopy::omp {

namespace {

bool is_openmp_runtime(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* prefix : {"libgomp.so", "libomp.so", "libiomp5.so", "libgomp-", "libomp-"})
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

struct Scan {
  const void* self_base;
  std::string other;
};

int visit(dl_phdr_info* info, std::size_t, void* arg) {
  auto* scan = static_cast<Scan*>(arg);
  if (!info->dlpi_name || !*info->dlpi_name) return 0;
  if (reinterpret_cast<const void*>(info->dlpi_addr) == scan->self_base) return 0;
  if (is_openmp_runtime(info->dlpi_name)) {
    scan->other = info->dlpi_name;
    return 1;
  }
  return 0;
}

}  // namespace

void check_one_runtime() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&check_one_runtime), &self)) return;
  // dladdr gives the base address the loader subtracts (l_addr) only through
  // the link map: compare with dlpi_addr via the object's link map entry.
  link_map* lm = nullptr;
  if (!dladdr1(reinterpret_cast<void*>(&check_one_runtime), &self, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) ||
      !lm)
    return;
  Scan scan{reinterpret_cast<const void*>(lm->l_addr), {}};
  dl_iterate_phdr(visit, &scan);
  if (scan.other.empty()) return;
  std::fprintf(stderr,
               "canopy: this process loads two OpenMP runtimes: canopy's (%s) and %s. Each would run its own "
               "threads; put canopy's lib/canopy-omp first in LD_LIBRARY_PATH (it provides both libgomp.so.1 and "
               "libomp.so.5), e.g. with 'canopy run --runtime canopy'. Stopping.\n",
               self.dli_fname ? self.dli_fname : "libcanopy-omp.so", scan.other.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

namespace {
__attribute__((constructor)) void check_at_load() { check_one_runtime(); }
}  // namespace

}  // namespace canopy::omp
