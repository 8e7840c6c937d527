// Stops the process when another OpenMP runtime is loaded beside canopy's (one_runtime.cpp).
#pragma once
namespace canopy::omp {
void check_one_runtime();
}
