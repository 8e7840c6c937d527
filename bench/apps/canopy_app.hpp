// What the canopy versions of the applications share beyond common.hpp:
// the canopy-only --submit flag (run the tasks through submit instead of a
// recorded TaskGraph) and the locality record of a handle's bytes.
#pragma once
#include <cstring>
#include <vector>

#include <canopy/data.hpp>

#include "common.hpp"
#include "locality.hpp"

namespace apps {

struct CanopyArgs {
  Args common;
  bool use_submit = false;
};

inline CanopyArgs parse_canopy_args(int argc, char** argv) {
  CanopyArgs a;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && !std::strcmp(argv[i], "--submit"))
      a.use_submit = true;
    else
      rest.push_back(argv[i]);
  }
  a.common = parse_args(static_cast<int>(rest.size()), rest.data());
  return a;
}

// The task touches all of handle d (--locality).
inline void record(canopy::Data d) { locality_record(canopy::data_ptr(d), canopy::data_size(d)); }

}  // namespace apps
