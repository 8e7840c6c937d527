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

// The default sampling period, µs of each thread's CPU time, and the
// shortest period the POSIX CPU-time timer is used for by default. The
// perf_event task-clock event costs something at every context switch of
// every thread (in a VM, a timer reprogrammed), which made threads that meet
// at barriers up to 1.3x slower on the pattern programs; the POSIX timer
// costs nothing between its expirations but fires at most once per kernel
// tick (4 ms at 250 Hz). So: the POSIX timer from 2000 µs up, the
// task-clock event below (bench/profile/overhead.py, docs/profile.md
// "Overhead and memory").
inline constexpr unsigned kDefaultPeriodUs = 2000;
inline constexpr unsigned kPosixTimerFromUs = 2000;

enum class SampleTimer { Auto, TaskClock, Posix };
SampleTimer parse_sample_timer(const std::string& name);  // "auto", "task-clock" or "posix"
// The timer `timer` means at `period_us`: Auto becomes one of the others.
SampleTimer resolve_sample_timer(SampleTimer timer, unsigned period_us);

struct LaunchOptions {
  std::string library;
  double duration_s = 0;          // > 0: stop sampling after this many seconds (the program runs on)
  unsigned period_us = kDefaultPeriodUs;  // sampling period, thread CPU time
  unsigned max_samples = 1 << 16; // per thread, before the buffer halves its rate
  SampleTimer timer = SampleTimer::Auto;  // the library falls back to POSIX where task-clock fails
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
