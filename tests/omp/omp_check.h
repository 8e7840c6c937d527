/* What every C test of canopy's OpenMP runtime shares: CHECK (a failed
   condition prints its file, line and text and exits 1) and the weak
   declaration of canopy's export, by which a test asks which runtime it got
   (null on libgomp). */
#ifndef CANOPY_TESTS_OMP_CHECK_H
#define CANOPY_TESTS_OMP_CHECK_H
#include <stdio.h>
#include <stdlib.h>

int canopy_omp_is_canopy(void) __attribute__((weak));

#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

/* The runtime under test is canopy's, unless OMP_TEST_ANY_RUNTIME is set
   (the same program run on libgomp or libomp, for comparison). */
#define CHECK_CANOPY() CHECK(getenv("OMP_TEST_ANY_RUNTIME") || (canopy_omp_is_canopy && canopy_omp_is_canopy()))

#endif
