// Starting the program for `canopy run` (see run_launch.hpp): environment,
// PATH lookup, exec, and the fork/pipe/poll loop behind --report.
#include "run_launch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

namespace canopy::run {

Runtime parse_runtime(const std::string& name) {
  if (name == "auto") return Runtime::Auto;
  if (name == "gomp") return Runtime::Gomp;
  if (name == "llvm") return Runtime::Llvm;
  if (name == "canopy") return Runtime::Canopy;
  throw Error(fmt::format("runtime '{}': expected auto, gomp, llvm or canopy", name));
}

std::string omp_runtime_dir(const char* env_dir, const std::string& executable) {
  // Both names: GCC-compiled programs look for libgomp.so.1, clang-compiled ones for libomp.so.5.
  auto holds_runtime = [](const std::string& dir) {
    return ::access((dir + "/libgomp.so.1").c_str(), R_OK) == 0 && ::access((dir + "/libomp.so.5").c_str(), R_OK) == 0;
  };
  if (env_dir && *env_dir) {
    if (!holds_runtime(env_dir))
      throw Error(fmt::format("CANOPY_OMP_DIR='{}': expected a directory holding canopy's OpenMP runtime as "
                              "libgomp.so.1 and libomp.so.5, found neither or one of them there",
                              env_dir));
    return env_dir;
  }
  const size_t slash = executable.rfind('/');
  const std::string bindir = slash == std::string::npos ? "." : executable.substr(0, slash);
  const std::string dir = bindir + "/../lib/canopy-omp";
  if (!holds_runtime(dir))
    throw Error(fmt::format("--runtime canopy: canopy's OpenMP runtime (libgomp.so.1 and libomp.so.5) is not in {} "
                            "(build it with 'make', or set CANOPY_OMP_DIR to the directory that holds it)",
                            dir));
  return dir;
}

std::vector<EnvChange> omp_environment(const Topology& topo, const Placement& p, Runtime runtime,
                                       const std::string& affinity_format, const std::string& canopy_dir,
                                       const char* ld_library_path) {
  std::vector<EnvChange> env;
  auto set = [&](const char* name, std::string value) { env.push_back({name, std::move(value)}); };
  auto unset = [&](const char* name) { env.push_back({name, std::nullopt}); };
  set("OMP_NUM_THREADS", std::to_string(p.num_tasks()));
  switch (runtime) {
    case Runtime::Canopy:
      set("LD_LIBRARY_PATH",
          ld_library_path && *ld_library_path ? canopy_dir + ":" + ld_library_path : canopy_dir);
      [[fallthrough]];
    case Runtime::Auto:
      set("OMP_PLACES", omp_places(topo, p));
      // close, not true: with as many threads as places the standard defines
      // close as thread i on place i; true leaves the policy to the runtime.
      set("OMP_PROC_BIND", "close");
      unset("GOMP_CPU_AFFINITY");  // libomp would let these win over OMP_PLACES
      unset("KMP_AFFINITY");
      break;
    case Runtime::Gomp:
      if (p.granularity == Granularity::Core) {
        for (int t = 0; t < p.num_tasks(); ++t)
          if (p.binding(topo, t).size() > 1)
            throw Error(
                "--runtime gomp: GOMP_CPU_AFFINITY binds each thread to one CPU, but --granularity core binds to "
                "whole cores with several PUs; use --runtime auto (OMP_PLACES) or --granularity pu");
      }
      set("GOMP_CPU_AFFINITY", gomp_cpu_affinity(topo, p));
      unset("OMP_PLACES");  // libgomp lets OMP_PLACES win over GOMP_CPU_AFFINITY
      unset("OMP_PROC_BIND");
      unset("KMP_AFFINITY");
      break;
    case Runtime::Llvm: {
      std::string list;
      for (int t = 0; t < p.num_tasks(); ++t) {
        std::string place;
        for (int pu : p.binding(topo, t)) place += fmt::format("{}{}", place.empty() ? "" : ",", topo.pu(pu).os_index);
        list += fmt::format("{}{{{}}}", t ? "," : "", place);
      }
      set("KMP_AFFINITY", fmt::format("granularity=fine,explicit,proclist=[{}]", list));
      unset("OMP_PLACES");  // ignored with a warning by libomp when KMP_AFFINITY is set
      unset("OMP_PROC_BIND");
      unset("GOMP_CPU_AFFINITY");
      break;
    }
  }
  if (!affinity_format.empty()) {
    set("OMP_DISPLAY_AFFINITY", "true");
    set("OMP_AFFINITY_FORMAT", affinity_format);
  }
  return env;
}

std::string find_program(const std::string& name, const char* path_env) {
  if (name.empty()) throw Error("no program given: expected 'canopy run [options] -- program [args...]'");
  auto usable = [](const std::string& path, std::string* why) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      *why = std::strerror(errno);
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      *why = "is a directory";
      return false;
    }
    if (::access(path.c_str(), X_OK) != 0) {
      *why = "is not executable";
      return false;
    }
    return true;
  };
  std::string why;
  if (name.find('/') != std::string::npos) {
    if (!usable(name, &why)) throw Error(fmt::format("program '{}': {}", name, why));
    return name;
  }
  std::string path = path_env ? path_env : "";
  std::string found_unusable;
  size_t start = 0;
  while (true) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (usable(candidate, &why)) return candidate;
    if (found_unusable.empty() && why != std::strerror(ENOENT) && why != std::strerror(ENOTDIR))
      found_unusable = fmt::format(" ({} {})", candidate, why);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  throw Error(fmt::format("program '{}' not found in PATH{}", name, found_unusable));
}

std::string self_executable() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw Error(fmt::format("cannot read /proc/self/exe: {}", std::strerror(errno)), ErrorKind::System);
  buf.resize(static_cast<size_t>(n));
  return buf;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void apply_environment(const std::vector<EnvChange>& changes) {
  for (const EnvChange& c : changes) {
    int rc = c.value ? ::setenv(c.name.c_str(), c.value->c_str(), 1) : ::unsetenv(c.name.c_str());
    if (rc != 0) throw Error(fmt::format("cannot set {}: {}", c.name, std::strerror(errno)), ErrorKind::System);
  }
}

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (const std::string& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

// Writes all of `bytes` to fd; gives up silently when the reader is gone.
void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// The child to forward SIGTERM/SIGHUP to while canopy waits for it.
volatile sig_atomic_t g_child = 0;

void forward_signal_to_program(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)), ErrorKind::System);
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (fd[0] >= 0) ::close(fd[0]);
    fd[0] = -1;
  }
  void close_write() {
    if (fd[1] >= 0) ::close(fd[1]);
    fd[1] = -1;
  }
};

}  // namespace

void exec_program(const std::string& path, const std::vector<std::string>& argv) {
  std::vector<char*> args = c_argv(argv);
  ::execv(path.c_str(), args.data());
  throw Error(fmt::format("cannot execute '{}': {}", path, std::strerror(errno)), ErrorKind::System);
}

LineFilter::LineFilter(std::string marker, std::function<void(std::string_view)> pass,
                       std::function<void(std::string_view)> on_marker_line)
    : marker_(std::move(marker)), pass_(std::move(pass)), on_marker_(std::move(on_marker_line)) {}

void LineFilter::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (passing_) {
      size_t nl = bytes.find('\n');
      size_t n = nl == std::string_view::npos ? bytes.size() : nl + 1;
      pass_(bytes.substr(0, n));
      bytes.remove_prefix(n);
      if (nl != std::string_view::npos) passing_ = false;
      continue;
    }
    // At the start of a line, or inside one that may still be a marker line.
    size_t nl = bytes.find('\n');
    size_t n = nl == std::string_view::npos ? bytes.size() : nl;
    pending_.append(bytes.data(), n);
    bytes.remove_prefix(n);
    const size_t k = std::min(pending_.size(), marker_.size());
    if (pending_.compare(0, k, marker_, 0, k) != 0) {
      // Not ours: pass what was held and the rest of the line as it comes.
      pass_(pending_);
      pending_.clear();
      passing_ = true;
      continue;
    }
    if (nl != std::string_view::npos) {
      bytes.remove_prefix(1);  // the newline
      if (pending_.size() >= marker_.size()) {
        on_marker_(pending_);
      } else {
        pending_ += '\n';  // a line that is only a prefix of the marker
        pass_(pending_);
      }
      pending_.clear();
    }
  }
}

void LineFilter::finish() {
  if (pending_.empty()) return;
  if (pending_.size() >= marker_.size())
    on_marker_(pending_);
  else
    pass_(pending_);
  pending_.clear();
}

int run_filtered(const std::string& path, const std::vector<std::string>& argv, const std::string& marker,
                 const std::function<void(std::string_view)>& on_marker_line) {
  Pipe out, err, exec_error;
  std::vector<char*> args = c_argv(argv);

  // Like system(): the terminal's ^C and ^\ reach the program (same process
  // group); canopy ignores them so that it can still report and exit with
  // the program's status.
  struct sigaction ignore {}, forward {}, old_int {}, old_quit {}, old_term {}, old_hup {};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal_to_program;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);

  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    throw Error(fmt::format("cannot start '{}': fork: {}", path, std::strerror(e)), ErrorKind::System);
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls from here to exec.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGQUIT, &dfl, nullptr);
    ::dup2(out.fd[1], 1);
    ::dup2(err.fd[1], 2);
    ::execv(path.c_str(), args.data());
    int e = errno;
    ssize_t ignored = ::write(exec_error.fd[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  g_child = pid;
  ::sigaction(SIGTERM, &forward, &old_term);
  ::sigaction(SIGHUP, &forward, &old_hup);
  out.close_write();
  err.close_write();
  exec_error.close_write();

  LineFilter out_filter(marker, [](std::string_view b) { write_all(1, b); }, on_marker_line);
  LineFilter err_filter(marker, [](std::string_view b) { write_all(2, b); }, on_marker_line);
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  LineFilter* filters[2] = {&out_filter, &err_filter};
  std::string buf(1 << 16, '\0');
  int open_fds = 2;
  while (open_fds > 0) {
    int rc = ::poll(fds, 2, -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[k].fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        filters[k]->finish();
        fds[k].fd = -1;  // poll ignores negative fds
        --open_fds;
        continue;
      }
      filters[k]->feed(std::string_view(buf.data(), static_cast<size_t>(n)));
    }
  }

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);

  int exec_errno = 0;
  if (::read(exec_error.fd[0], &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno))
    throw Error(fmt::format("cannot execute '{}': {}", path, std::strerror(exec_errno)), ErrorKind::System);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace canopy::run
