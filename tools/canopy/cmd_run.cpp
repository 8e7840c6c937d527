// `canopy run`: launch an existing OpenMP program so that its thread i runs
// where a placement puts task i (of --matrix, or of -n threads that do not
// communicate) on this machine, and with --report check afterwards where
// the OpenMP runtime bound each thread. See docs/run.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "canopy/binding.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"
#include "cli.hpp"
#include "profile_launch.hpp"
#include "run_auto.hpp"
#include "run_launch.hpp"
#include "run_report.hpp"

namespace canopy::cli {
namespace {

struct RunOptions {
  std::string policy;
  std::string matrix;
  std::string granularity = "pu";
  std::string runtime = "auto";
  int threads = 0;
  CLI::Option* threads_opt = nullptr;
  bool pack = false;
  bool report = false;
  bool dry_run = false;
  double profile_duration = 3;  // --matrix auto: how long the profiling run may take
  bool refresh_profile = false;
  std::vector<std::string> command;
};

// The equivalent shell command: env -u X NAME=value ... program args.
std::string command_line(const std::vector<run::EnvChange>& env, const std::vector<std::string>& command) {
  std::string line = "env";
  for (const auto& c : env)
    if (!c.value) line += " -u " + c.name;
  for (const auto& c : env)
    if (c.value) line += " " + c.name + "=" + run::shell_quote(*c.value);
  for (const auto& a : command) line += " " + run::shell_quote(a);
  return line;
}

// --matrix auto: the cached profile of this program run, or a profiling run
// now (with the thread count and the runtime the real run will have).
CommMatrix auto_matrix(const RunOptions& o, bool threads_given, std::string* source) {
  const std::string program = run::find_program(o.command[0], std::getenv("PATH"));
  const std::string cache = run_auto::cache_file(run_auto::cache_dir(), program, o.command,
                                                 threads_given ? o.threads : 0, o.runtime);
  if (o.dry_run) {
    if (::access(cache.c_str(), R_OK) != 0)
      throw Error(fmt::format("--matrix auto --dry-run: no profile of this run yet ({}): run it once without "
                              "--dry-run",
                              cache));
    *source = "the profile of an earlier run, " + cache;
    return read_matrix(cache);
  }
  if (o.profile_duration <= 0)
    throw Error(fmt::format("--profile-duration {}: expected a number of seconds > 0", o.profile_duration));
  profiling::LaunchOptions lo;
  lo.library = profiling::library_path(std::getenv("CANOPY_PROFILE_LIB"), run::self_executable());
  lo.duration_s = o.profile_duration;
  // The profiling run's environment, put back afterwards: the real run's is
  // computed from the user's.
  const char* old_threads = std::getenv("OMP_NUM_THREADS");
  const char* old_path = std::getenv("LD_LIBRARY_PATH");
  const std::string saved_threads = old_threads ? old_threads : "", saved_path = old_path ? old_path : "";
  if (threads_given) ::setenv("OMP_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  if (run::parse_runtime(o.runtime) == run::Runtime::Canopy) {
    const std::string dir = run::omp_runtime_dir(std::getenv("CANOPY_OMP_DIR"), run::self_executable());
    ::setenv("LD_LIBRARY_PATH", (dir + (saved_path.empty() ? "" : ":" + saved_path)).c_str(), 1);
  }
  auto restore = [&] {
    old_threads ? ::setenv("OMP_NUM_THREADS", saved_threads.c_str(), 1) : ::unsetenv("OMP_NUM_THREADS");
    old_path ? ::setenv("LD_LIBRARY_PATH", saved_path.c_str(), 1) : ::unsetenv("LD_LIBRARY_PATH");
  };
  run_auto::AutoMatrix am;
  try {
    am = run_auto::auto_matrix(program, o.command, cache, o.refresh_profile, lo);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  *source = am.source;
  std::fprintf(stderr, "canopy: matrix: %s\n", am.source.c_str());
  return am.matrix;
}

int run_command(const RunOptions& o) {
  if (o.command.empty()) throw Error("no program given: expected 'canopy run [options] -- program [args...]'");
  const Granularity granularity = parse_granularity(o.granularity);
  const run::Runtime runtime = run::parse_runtime(o.runtime);
  const std::string policy = o.policy.empty() ? default_policy() : o.policy;
  find_policy(policy);  // unknown: fails before anything is loaded, listing the policies

  Topology topo = Topology::this_machine();
  std::optional<CommMatrix> matrix;
  std::string matrix_source;
  const bool threads_given = o.threads_opt && o.threads_opt->count() > 0;
  if (o.matrix == "auto") {
    matrix = auto_matrix(o, threads_given, &matrix_source);
  } else if (!o.matrix.empty()) {
    MatrixReadInfo info;
    matrix = read_matrix(o.matrix, MatrixFormat::Auto, &info);
    if (info.symmetrized)
      std::fprintf(stderr, "canopy: note: %s is not symmetric: using C + Ct (total traffic between i and j)\n",
                   o.matrix.c_str());
  }
  const int n = threads_given ? o.threads : matrix ? matrix->size() : topo.num_cores();
  if (n < 1) throw Error(fmt::format("-n {}: expected at least 1 thread", n));
  const long limit = static_cast<long>(kMaxThreadsPerPU) * topo.num_pus();
  if (n > limit)
    throw Error(fmt::format("-n {}: more than {} threads per PU ({} PUs allowed here: at most {})", n,
                            kMaxThreadsPerPU, topo.num_pus(), limit));
  if (matrix && o.matrix == "auto" && matrix->size() != n) {
    // The profiled run may have had more threads (helpers) or fewer (it
    // ended first) than -n: thread i is still task i.
    std::vector<Edge> kept;
    for (const Edge& e : matrix->edges())
      if (e.i < n && e.j < n) kept.push_back(e);
    matrix = CommMatrix::from_edges(n, kept);
  }
  if (matrix && matrix->size() != n)
    throw Error(fmt::format("{} has {} tasks but -n is {}: thread i is task i, so they must match", o.matrix,
                            matrix->size(), n));

  MapOptions opt;
  opt.pack = o.pack;
  opt.granularity = granularity;
  const Placement p = map_tasks(topo, matrix ? *matrix : CommMatrix(n), policy, opt);

  const std::string marker = o.report ? run::affinity_marker(static_cast<long>(::getpid())) : "";
  const std::string canopy_dir = runtime == run::Runtime::Canopy
                                     ? run::omp_runtime_dir(std::getenv("CANOPY_OMP_DIR"), run::self_executable())
                                     : "";
  const auto env = run::omp_environment(topo, p, runtime, o.report ? run::affinity_format(marker) : "", canopy_dir,
                                        std::getenv("LD_LIBRARY_PATH"));
  const std::string program = run::find_program(o.command[0], std::getenv("PATH"));

  if (o.dry_run) {
    std::printf("%s\n", command_line(env, o.command).c_str());
    return 0;
  }
  // Say when a variable the user set is removed: it would have overridden
  // the placement with some runtime.
  for (const auto& c : env)
    if (!c.value)
      if (const char* old = std::getenv(c.name.c_str()))
        std::fprintf(stderr, "canopy: note: removing %s=%s from the environment: it would override the placement\n",
                     c.name.c_str(), old);
  run::apply_environment(env);
  if (!o.report) run::exec_program(program, o.command);

  std::vector<run::AffinityLine> lines;
  std::vector<std::string> unparsed;
  int status = run::run_filtered(program, o.command, marker, [&](std::string_view line) {
    try {
      if (auto a = run::parse_affinity_line(line, marker)) lines.push_back(std::move(*a));
    } catch (const Error& e) {
      unparsed.push_back(e.what());
    }
  });

  std::vector<std::vector<int>> expected;
  for (int t = 0; t < p.num_tasks(); ++t) {
    std::vector<int> os;
    for (int pu : p.binding(topo, t)) os.push_back(topo.pu(pu).os_index);
    std::sort(os.begin(), os.end());
    expected.push_back(std::move(os));
  }
  run::Report r = run::compare(expected, lines);
  std::string head = fmt::format("canopy: {} thread(s), policy {}, granularity {}:", n, p.policy, to_string(granularity));
  for (const auto& c : env)
    if (c.value && c.name != "OMP_AFFINITY_FORMAT" && c.name != "OMP_DISPLAY_AFFINITY")
      head += fmt::format(" {}={}", c.name, *c.value);
  std::string text = head + "\n";
  if (!matrix_source.empty()) {
    std::ostringstream dense;
    if (matrix->size() <= 32) write_matrix(dense, *matrix, MatrixFormat::Dense);
    text += fmt::format("canopy: the matrix placed ({} threads, from {}){}\n{}", matrix->size(),
                        matrix_source.substr(0, matrix_source.find('\n')), matrix->size() <= 32 ? ":" : "",
                        dense.str());
  }
  text += run::format_report(r);
  for (const auto& u : unparsed) text += fmt::format("canopy: cannot check a thread: {}\n", u);
  std::fputs(text.c_str(), stderr);
  if (status != 0) {
    std::fprintf(stderr, "canopy: %s exited with status %d\n", o.command[0].c_str(), status);
    return status;
  }
  return (r.mismatches > 0 || !unparsed.empty()) ? 1 : 0;
}

const bool run_registered = register_subcommand(Subcommand{
    "run", "Launch an OpenMP program with thread i where the placement puts task i", 60, [](CLI::App& app) {
      auto o = std::make_shared<RunOptions>();
      app.add_option("-p,--policy", o->policy, "Mapping policy (default: " + default_policy() + ")")
          ->group("Placement");
      app.add_option("-m,--matrix", o->matrix,
                     "Communication matrix: thread i is task i (dense, MatrixMarket or edges), or 'auto': the "
                     "program's own, profiled (docs/profile.md)")
          ->group("Placement");
      app.add_option("--profile-duration", o->profile_duration,
                     "--matrix auto without a cached profile: profile at most S seconds of a first run, then stop "
                     "it (default 3)")
          ->group("Placement");
      app.add_flag("--refresh-profile", o->refresh_profile, "--matrix auto: profile again even if a profile is cached")
          ->group("Placement");
      o->threads_opt = app.add_option("-n,--threads", o->threads,
                                      "Number of OpenMP threads (default: the matrix size, else the number of "
                                      "cores this process may use)")
                           ->group("Placement");
      app.add_option("-g,--granularity", o->granularity, "Bind each thread to one PU or to its whole core")
          ->check(CLI::IsMember({"pu", "core"}))
          ->group("Placement");
      app.add_flag("--pack", o->pack, "Fewer threads than PUs: pack into as few NUMA nodes as possible")
          ->group("Placement");
      app.add_option("--runtime", o->runtime,
                     "How to tell the OpenMP runtime: auto = OMP_PLACES + OMP_PROC_BIND (libgomp and libomp), "
                     "gomp = GOMP_CPU_AFFINITY, llvm = KMP_AFFINITY, canopy = run the program on canopy's own "
                     "OpenMP runtime (with OMP_PLACES + OMP_PROC_BIND)")
          ->check(CLI::IsMember({"auto", "gomp", "llvm", "canopy"}))
          ->group("Launch");
      app.add_flag("--report", o->report,
                   "Check where the runtime bound each thread (OMP_DISPLAY_AFFINITY), print it on stderr, exit 1 "
                   "on a mismatch")
          ->group("Launch");
      app.add_flag("--dry-run", o->dry_run, "Print the equivalent 'env ... program' command instead of running it")
          ->group("Launch");
      app.add_option("command", o->command, "The program and its arguments (after --)")->group("Launch");
      app.footer(
          "Example: canopy run --matrix comm.mat --report -- ./solver input.dat\n"
          "The program's exit status is passed on; --report exits 1 when a thread was bound elsewhere.");
      return [o] { return run_command(*o); };
    }});

}  // namespace
}  // namespace canopy::cli
