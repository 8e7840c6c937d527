// Running a program under the profiling library (libcanopy-profile.so,
// LD_PRELOAD) and turning what it wrote into a SharingProfile: shared by
// `canopy profile` and `canopy run --matrix auto`.
#pragma once
#include <string>
#include <vector>

#include "canopy/profile.hpp"

namespace canopy::profiling {

// libcanopy-profile.so: $CANOPY_PROFILE_LIB when set, else beside this
// canopy executable's libraries (<bindir>/../lib). Throws canopy::Error
// naming where it looked when it is not there.
std::string library_path(const char* env_lib, const std::string& executable);

// The default sampling period, µs of each thread's CPU time. 2000 µs keeps
// the profiled run within 1.2x of the plain run on the pattern programs
// (bench/profile/overhead.py), and the recall and placement bars hold at it
// given the same number of samples per thread as at the tests' 250 µs
// (docs/profile.md, "Overhead and memory").
inline constexpr unsigned kDefaultPeriodUs = 2000;

struct LaunchOptions {
  std::string library;
  double duration_s = 0;          // > 0: stop sampling after this many seconds (the program runs on)
  unsigned period_us = kDefaultPeriodUs;  // sampling period, thread CPU time
  unsigned max_samples = 1 << 16; // per thread, before the buffer halves its rate
  bool posix_timer = false;       // the POSIX CPU-time timer even where the task-clock event works
  bool stop_after_duration = false;  // end the program after duration_s (SIGTERM, then SIGKILL 2 s later)
};

// What a profiled run left: the program's exit status (128 + N when killed
// by signal N) and the samples of its process images.
struct Run {
  int status = 0;
  int pid = 0;
  int signal = 0;        // the program was killed by this signal (its last image wrote nothing)
  bool stopped = false;  // ended by canopy after the duration (stop_after_duration)
  std::vector<ProfiledProcess> main;         // the program's own pid, one per image (exec), in order
  std::vector<std::string> other_processes;  // forked children: "pid N: T threads, S samples"
  std::vector<std::string> unreadable;       // files that could not be read, with why
};

// Starts `program` (a path, see run::find_program) with the library
// preloaded, waits for it (SIGTERM/SIGHUP are passed on to it) and reads
// its samples. Throws canopy::Error when it cannot be started.
Run run_profiled(const std::string& program, const std::vector<std::string>& argv, const LaunchOptions& opt);

// The image whose samples make the matrix: the last one of the program's pid
// that has samples (a shell script that execs the program: the program), or
// the last one. nullptr when there is none.
const ProfiledProcess* chosen_image(const Run& r);

// One line for stderr that says what was observed and how: threads,
// samples, shared regions, the numbering, the timer, and why hardware
// sampling was not used.
std::string summary(const ProfiledProcess& p, const SharingProfile& s, const SharingOptions& opt);

}  // namespace canopy::profiling
