// The MPI launcher's side of `canopy mpirun` (see mpi_launch.hpp).
#include "mpi_launch.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "canopy/error.hpp"
#include "run_launch.hpp"

namespace canopy::mpi {

Launcher probe_launcher(const std::string& path) {
  Launcher l;
  l.path = path;
  const std::string cmd = run::shell_quote(path) + " --version 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw Error(fmt::format("cannot run '{} --version'", path), ErrorKind::System);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  if (status != 0 && out.empty())
    throw Error(fmt::format("'{} --version' failed: is it an MPI launcher? (--mpirun PATH names another)", path));
  l.version = out.substr(0, out.find('\n'));
  if (out.find("Open MPI") != std::string::npos || out.find("OpenRTE") != std::string::npos) {
    l.flavour = "openmpi";
    // "mpirun (Open MPI) 4.1.4"
    const size_t at = out.find(") ");
    if (at != std::string::npos) l.major = std::atoi(out.c_str() + at + 2);
  } else if (out.find("HYDRA") != std::string::npos || out.find("MPICH") != std::string::npos) {
    l.flavour = "mpich";
  }
  return l;
}

std::string profiling_library(const char* env_lib, const std::string& executable, const std::string& flavour) {
  if (env_lib && *env_lib) {
    if (::access(env_lib, R_OK) != 0)
      throw Error(fmt::format("CANOPY_MPI_LIB='{}': no such file (expected libcanopy-mpi.so)", env_lib));
    return env_lib;
  }
  const size_t slash = executable.rfind('/');
  const std::string bindir = slash == std::string::npos ? "." : executable.substr(0, slash);
  const std::string lib = fmt::format("{}/../lib/canopy-mpi/{}/libcanopy-mpi.so", bindir, flavour.empty() ? "openmpi" : flavour);
  if (::access(lib.c_str(), R_OK) != 0)
    throw Error(fmt::format("the MPI profiling library is not at {} (build canopy with {}'s mpicc installed, or set "
                            "CANOPY_MPI_LIB)",
                            lib, flavour.empty() ? "the MPI" : flavour));
  return lib;
}

std::string profile_cache_path(const std::string& program_path, const std::vector<std::string>& command, int np) {
  std::string base;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    base = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = std::string(h) + "/.cache";
  else
    throw Error("--matrix auto: neither XDG_CACHE_HOME nor HOME is set, so there is no cache directory");
  std::error_code ec;
  const std::string real = std::filesystem::weakly_canonical(program_path, ec).string();
  struct stat st {};
  ::stat(program_path.c_str(), &st);
  // A rebuilt program (new size or time) or other arguments profile again.
  std::string key = fmt::format("{}\n{}\n{}\n{}", real, st.st_size, static_cast<long long>(st.st_mtime), np);
  for (size_t i = 1; i < command.size(); ++i) key += "\n" + command[i];
  const std::string dir = base + "/canopy/mpi";
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("--matrix auto: cannot create {}: {}", dir, ec.message()), ErrorKind::System);
  const std::string name = std::filesystem::path(real).filename().string();
  return fmt::format("{}/{}-np{}-{:016x}.mtx", dir, name, np, std::hash<std::string>{}(key));
}

std::vector<std::string> launcher_argv(const Launcher& l, const LaunchOptions& o, const std::vector<std::string>& command) {
  std::vector<std::string> a{l.path, "-np", std::to_string(o.np)};
  if (l.flavour == "mpich") {
    for (const auto& e : o.env) {
      const size_t eq = e.find('=');
      if (eq == std::string::npos) continue;  // hydra passes the environment on
      a.insert(a.end(), {"-genv", e.substr(0, eq), e.substr(eq + 1)});
    }
  } else {
    if (o.oversubscribe) a.push_back("--oversubscribe");
    if (!o.rankfile.empty()) {
      if (l.major >= 5) {
        a.insert(a.end(), {"--map-by", "rankfile:file=" + o.rankfile + (o.hwthreads ? ":hwtcpus" : "")});
      } else {
        if (o.hwthreads) a.push_back("--use-hwthread-cpus");
        a.insert(a.end(), {"--rankfile", o.rankfile});
      }
    }
    for (const auto& e : o.env) a.insert(a.end(), {"-x", e});
  }
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

std::optional<int> rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(name); v && *v) {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (*end == '\0' && r >= 0) return static_cast<int>(r);
    }
  return std::nullopt;
}

}  // namespace canopy::mpi
