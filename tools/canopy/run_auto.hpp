// `canopy run --matrix auto`: the program's own sharing matrix, from the
// profile of an earlier run of the same program with the same arguments
// (cached), or else from profiling the first seconds of a run now (see
// docs/run.md, docs/profile.md).
#pragma once
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"
#include "profile_launch.hpp"

namespace canopy::run_auto {

// Where profiles are kept: $CANOPY_PROFILE_CACHE, else
// $XDG_CACHE_HOME/canopy/profiles, else $HOME/.cache/canopy/profiles.
std::string cache_dir();

// The cache file of a program run: keyed by the program's path, size and
// modification time, its arguments, the thread count asked (0: none) and
// the runtime; a rebuilt program or other arguments get a new profile.
std::string cache_file(const std::string& dir, const std::string& program, const std::vector<std::string>& argv,
                       int threads, const std::string& runtime);

struct AutoMatrix {
  CommMatrix matrix;
  std::string source;  // one line: where the matrix comes from
};

// The cached matrix when there is one (and !refresh); else profiles the
// program for at most `opt.duration_s` seconds (then stops it: SIGTERM,
// SIGKILL a second later), saves the matrix and returns it. The caller
// has set the profiling run's environment (OMP_NUM_THREADS, the runtime).
AutoMatrix auto_matrix(const std::string& program, const std::vector<std::string>& argv, const std::string& cache,
                       bool refresh, const profiling::LaunchOptions& opt);

}  // namespace canopy::run_auto
