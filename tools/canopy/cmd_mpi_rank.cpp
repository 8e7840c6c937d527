// `canopy mpi-rank` (hidden): what `canopy mpirun` starts in place of each
// rank's program. It reads its rank from the launcher's environment, sets the
// rank's OMP_PLACES from the per-rank places file (hybrid jobs), with --report
// prints where the rank may run and asks the OpenMP runtime to print where
// each thread runs, then replaces itself by the program (same pid, same
// binding, so what it reports is the program's).
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "canopy/error.hpp"
#include "cli.hpp"
#include "mpi_launch.hpp"
#include "mpi_report.hpp"
#include "run_launch.hpp"
#include "run_report.hpp"

namespace canopy::cli {
namespace {

struct RankOptions {
  std::string places;
  std::string marker;
  std::vector<std::string> command;
};

// The OMP_PLACES of `rank` in a file of "RANK PLACES" lines.
std::string places_of(const std::string& path, int rank) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open the places file", path));
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    int r = -1;
    std::string places;
    if (!(ss >> r >> places)) throw Error(fmt::format("{}:{}: expected 'RANK OMP_PLACES'", path, lineno));
    if (r == rank) return places;
  }
  throw Error(fmt::format("{}: no line for rank {}", path, rank));
}

int run_rank(const RankOptions& o) {
  if (o.command.empty()) throw Error("mpi-rank: no program given");
  const auto rank = mpi::rank_from_environment();
  if (!rank) throw Error("mpi-rank: not started by an MPI launcher (no OMPI_COMM_WORLD_RANK, PMI_RANK, ...)");
  std::vector<run::EnvChange> env;
  if (!o.places.empty()) {
    const std::string places = places_of(o.places, *rank);
    const long threads = std::count(places.begin(), places.end(), '{');
    env.push_back({"OMP_PLACES", places});
    env.push_back({"OMP_PROC_BIND", "close"});
    env.push_back({"OMP_NUM_THREADS", std::to_string(threads)});
  }
  if (!o.marker.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    char host[256] = "?";
    ::gethostname(host, sizeof host - 1);
    const std::string line = mpi::rank_line(o.marker, *rank, host, static_cast<long>(::getpid()), cpus) + "\n";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    env.push_back({"OMP_DISPLAY_AFFINITY", "true"});
    env.push_back({"OMP_AFFINITY_FORMAT", run::affinity_format(o.marker)});
  }
  run::apply_environment(env);
  run::exec_program(run::find_program(o.command[0], std::getenv("PATH")), o.command);
}

const bool mpi_rank_registered = register_subcommand(Subcommand{
    "mpi-rank", "", 91, [](CLI::App& app) {
      auto o = std::make_shared<RankOptions>();
      app.add_option("--places", o->places, "Per-rank OMP_PLACES file (RANK PLACES lines)");
      app.add_option("--report", o->marker, "Print where the rank runs, after this marker");
      app.add_option("command", o->command, "The program and its arguments (after --)");
      return [o] { return run_rank(*o); };
    }});

}  // namespace
}  // namespace canopy::cli
