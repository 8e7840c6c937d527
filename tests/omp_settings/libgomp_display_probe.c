/* A GCC-compiled OpenMP program that does nothing: run with OMP_DISPLAY_ENV
   set, libgomp prints its view of the environment. libgomp_diff_test.cpp
   compares that block with canopy's display_env for the same variables. */
#include <omp.h>

int main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }
