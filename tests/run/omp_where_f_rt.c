/* omp_where_f's C helper: prints which shared object provides the OpenMP API
 * (GCC's libgomp, canopy's runtime, ...), as examples/omp_where.cpp does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

void omp_where_f_print_runtime(void) {
  Dl_info info;
  void* f = dlsym(RTLD_DEFAULT, "omp_get_num_threads_");
  printf("omp_where: runtime=%s\n", f && dladdr(f, &info) && info.dli_fname ? info.dli_fname : "unknown");
  fflush(stdout);
}
