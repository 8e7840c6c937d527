// Reading CANOPY_* values shared by canopy's runtime (options.cpp) and its
// OpenMP runtime (src/omp/core/task_affinity.cpp), so both accept the same
// words and say the same thing about a bad one.
#pragma once
#include <string>

namespace canopy::detail {

// A boolean: 1, 0, true, false, yes, no, on, off (any case, blanks around);
// anything else throws canopy::Error naming the variable and the value.
bool parse_env_bool(const char* var, const std::string& value);

}  // namespace canopy::detail
