// Starting a program with the profiling library preloaded and collecting its
// samples files (profile_launch.hpp).
#include "profile_launch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "canopy/error.hpp"

namespace canopy::profiling {
namespace {

volatile sig_atomic_t g_child = 0;
void forward_signal_to_profiled(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

// A fresh directory for the samples, removed when done.
struct TempDir {
  std::string path;
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/canopy-profile.XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw Error(fmt::format("cannot create a directory for the samples ({}): {}", pattern, std::strerror(errno)),
                  ErrorKind::System);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Some image of process `pid` has written its samples (a non-empty file).
bool samples_written(const std::string& dir, int pid) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(fmt::format("samples.{}.", pid), 0) == 0 && e.file_size(ec) > 0)
      return true;
  return false;
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

SampleTimer parse_sample_timer(const std::string& name) {
  if (name == "auto") return SampleTimer::Auto;
  if (name == "task-clock") return SampleTimer::TaskClock;
  if (name == "posix") return SampleTimer::Posix;
  throw Error(fmt::format("timer '{}': expected auto, task-clock or posix", name));
}

SampleTimer resolve_sample_timer(SampleTimer timer, unsigned period_us) {
  if (timer != SampleTimer::Auto) return timer;
  return period_us >= kPosixTimerFromUs ? SampleTimer::Posix : SampleTimer::TaskClock;
}

std::string library_path(const char* env_lib, const std::string& executable) {
  if (env_lib && *env_lib) {
    if (::access(env_lib, R_OK) != 0)
      throw Error(fmt::format("CANOPY_PROFILE_LIB='{}': {}", env_lib, std::strerror(errno)));
    return env_lib;
  }
  const size_t slash = executable.rfind('/');
  const std::string bindir = slash == std::string::npos ? "." : executable.substr(0, slash);
  const std::string lib = bindir + "/../lib/libcanopy-profile.so";
  if (::access(lib.c_str(), R_OK) != 0)
    throw Error(fmt::format("the profiling library is not at {} (build it with 'make', or set CANOPY_PROFILE_LIB "
                            "to libcanopy-profile.so)",
                            lib));
  return lib;
}

Run run_profiled(const std::string& program, const std::vector<std::string>& argv, const LaunchOptions& opt) {
  TempDir dir;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment the child gets, prepared before fork (no allocation after).
  const char* old_preload = std::getenv("LD_PRELOAD");
  const std::string preload = opt.library + (old_preload && *old_preload ? std::string(" ") + old_preload : "");
  const std::string period = std::to_string(opt.period_us), max_samples = std::to_string(opt.max_samples);
  const char* timer_name =
      resolve_sample_timer(opt.timer, opt.period_us) == SampleTimer::Posix ? "posix" : "task-clock";
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0)
    throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)), ErrorKind::System);

  struct sigaction ignore {}, forward {}, old_int {}, old_quit {}, old_term {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal_to_profiled;
  ::sigaction(SIGINT, &ignore, &old_int);  // ^C reaches the program (same process group); canopy waits for it
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    throw Error(fmt::format("cannot start '{}': fork: {}", program, std::strerror(e)), ErrorKind::System);
  }
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGQUIT, &dfl, nullptr);
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
    ::setenv("CANOPY_PROFILE_DIR", dir.path.c_str(), 1);
    ::setenv("CANOPY_PROFILE_PERIOD_US", period.c_str(), 1);
    ::setenv("CANOPY_PROFILE_MAX_SAMPLES", max_samples.c_str(), 1);
    ::setenv("CANOPY_PROFILE_TIMER", timer_name, 1);
    ::execv(program.c_str(), args.data());
    const int e = errno;
    ssize_t ignored = ::write(exec_error[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  g_child = pid;
  ::sigaction(SIGTERM, &forward, &old_term);
  ::sigaction(SIGHUP, &forward, &old_hup);
  ::close(exec_error[1]);
  int e = 0;
  const bool exec_failed = ::read(exec_error[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e);
  ::close(exec_error[0]);

  int status = 0;
  bool done = false, stopped = false;
  if (!exec_failed && opt.duration_s > 0) {
    // Sample the first duration_s seconds: then the flush signal makes the
    // library stop and write what it has; the program runs on to its end.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.duration_s);
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        done = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!done) ::kill(pid, SIGRTMAX - 6);
    if (!done && opt.stop_after_duration) {
      // The flush signal is a real-time one: a SIGTERM sent with it would be
      // delivered first. Wait until the samples are written, then stop it.
      for (int i = 0; i < 200 && !samples_written(dir.path, pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ::kill(pid, SIGTERM);
      for (int i = 0; i < 200 && !done; ++i) {
        if (::waitpid(pid, &status, WNOHANG) == pid) done = true;
        else std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (!done) ::kill(pid, SIGKILL);
      stopped = true;
    }
  }
  while (!done && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  if (exec_failed)
    throw Error(fmt::format("cannot execute '{}': {}", program, std::strerror(e)), ErrorKind::System);

  Run r;
  r.status = exit_status(status);
  r.pid = pid;
  r.stopped = stopped;
  r.signal = WIFSIGNALED(status) && !stopped ? WTERMSIG(status) : 0;
  const std::string own_prefix = fmt::format("samples.{}.", pid);
  for (const std::string& f : profile_sample_files(dir.path)) {
    const std::string name = std::filesystem::path(f).filename().string();
    // The image a signal killed wrote nothing: the caller says so in one line.
    std::error_code size_error;
    if (r.signal && name.rfind(own_prefix, 0) == 0 && std::filesystem::file_size(f, size_error) == 0) continue;
    try {
      ProfiledProcess p = read_profile_samples(f);
      if (p.pid == pid) {
        r.main.push_back(std::move(p));
      } else {
        r.other_processes.push_back(
            fmt::format("pid {}: {} thread(s), {} samples", p.pid, p.threads.size(), p.num_samples()));
      }
    } catch (const Error& err) {
      r.unreadable.push_back(name + ": " +
                             std::string(err.what()).substr(f.size() + 2));
    }
  }
  return r;
}

const ProfiledProcess* chosen_image(const Run& r) {
  for (auto it = r.main.rbegin(); it != r.main.rend(); ++it)
    if (it->num_samples() > 0) return &*it;
  return r.main.empty() ? nullptr : &r.main.back();
}

std::string summary(const ProfiledProcess& p, const SharingProfile& s, const SharingOptions& opt) {
  std::uint64_t signals = 0;
  for (const auto& t : p.threads) signals += t.signals;
  return fmt::format(
      "canopy: profile: {} thread(s) ({}), {} samples{}, {} data addresses, {} {}s shared; "
      "portable sampling: {}; hardware address sampling not used: {}",
      s.matrix.size(),
      s.openmp_numbering ? "numbered by canopy's OpenMP runtime" : "numbered in creation order, 0 = initial thread",
      signals, p.stopped_early ? " (sampling stopped after --duration)" : "", p.num_samples(), s.shared_regions,
      opt.granularity == SharingGranularity::Line ? "line" : "page", p.timer, hardware_sampling_status());
}

}  // namespace canopy::profiling
