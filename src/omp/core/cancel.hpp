// The cancel construct and cancellation points, for both ABIs: `which` is
// a set of the kinds below (GCC's encoding; the kmp layer converts libomp's).
// Both return true when the construct is cancelled (the caller then jumps
// to its end); false always when cancel-var (OMP_CANCELLATION) is off.
#pragma once

namespace canopy::omp {

constexpr int kCancelParallel = 1, kCancelLoop = 2, kCancelSections = 4, kCancelTaskgroup = 8;

bool cancellation_point(int which);
bool cancel(int which);  // requests cancellation of the innermost construct of that kind

}  // namespace canopy::omp
