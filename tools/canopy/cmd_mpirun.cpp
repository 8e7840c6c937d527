// `canopy mpirun`: launch an MPI program with Open MPI's mpirun, each rank
// placed by canopy from the program's communication (a matrix, or with
// --matrix auto a profile of an earlier run made with libcanopy-mpi), on this
// machine or a cluster; hybrid jobs also get each rank's OMP_PLACES. With
// --report every rank and thread says where it ran. See docs/mpi.md.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "cli.hpp"
#include "cli_common.hpp"
#include "cluster_options.hpp"
#include "mpi_launch.hpp"
#include "mpi_report.hpp"
#include "run_launch.hpp"
#include "run_report.hpp"

namespace canopy::cli {
namespace {

struct MpirunOptions {
  int np = 0;
  std::string input, matrix, format, policy, weights, granularity = "core", mpirun, keep;
  ClusterArgs cluster;
  bool report = false, dry_run = false, reprofile = false;
  std::vector<std::string> command;
};

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + run::shell_quote(a);
  return s;
}

// Runs the program once under the launcher with libcanopy-mpi preloaded; the
// profile lands at `path` only when the run succeeded.
void profile(const mpi::Launcher& l, const MpirunOptions& o, bool oversubscribe, const std::string& path) {
  const std::string lib = mpi::profiling_library(std::getenv("CANOPY_MPI_LIB"), run::self_executable(), l.flavour);
  const std::string partial = path + ".partial";
  mpi::LaunchOptions lo;
  lo.np = o.np;
  lo.oversubscribe = oversubscribe;
  lo.env = {"LD_PRELOAD=" + lib, "CANOPY_MPI_MATRIX=" + partial};
  const auto argv = mpi::launcher_argv(l, lo, o.command);
  std::fprintf(stderr, "canopy: profiling the communication (--matrix auto): %s\n", join_command(argv).c_str());
  const int status = run::run_filtered(l.path, argv, "\x01canopy-never\x01", [](std::string_view) {});
  std::error_code ec;
  if (status != 0 || !std::filesystem::exists(partial, ec))
    throw Error(fmt::format("the profiling run {} (status {}){}", status ? "failed" : "wrote no matrix", status,
                            status ? "" : ": does the program call MPI_Finalize?"),
                ErrorKind::System);
  std::filesystem::rename(partial, path, ec);
  std::filesystem::rename(partial + ".messages", path + ".messages", ec);
  if (ec) throw Error(fmt::format("cannot move the profile to {}: {}", path, ec.message()), ErrorKind::System);
}

int run_mpirun(const MpirunOptions& o) {
  if (o.command.empty()) throw Error("no program given: expected 'canopy mpirun --np N [options] -- program [args...]'");
  if (o.np < 1) throw Error("--np: give the number of ranks (--np N, or -np N)");
  const std::string policy = o.policy.empty() ? default_policy() : o.policy;
  find_policy(policy);
  const std::string program = run::find_program(o.command[0], std::getenv("PATH"));
  const char* env_mpirun = std::getenv("CANOPY_MPIRUN");
  const std::string launcher_name = !o.mpirun.empty() ? o.mpirun : env_mpirun && *env_mpirun ? env_mpirun : "mpirun";
  const mpi::Launcher l = mpi::probe_launcher(run::find_program(launcher_name, std::getenv("PATH")));
  if (l.flavour != "openmpi")
    throw Error(fmt::format("{} is not Open MPI's mpirun ('{}'): canopy mpirun places ranks with Open MPI rankfiles "
                            "(--mpirun PATH names another; for MPICH see docs/mpi.md)",
                            l.path, l.version));

  ClusterArgs ca = o.cluster;
  const bool local = ca.cluster.empty() || ca.cluster == "localhost";
  if (ca.cluster.empty()) ca.cluster = "localhost";
  const Cluster cluster = load_cluster(ca, o.input, o.granularity);
  bool oversubscribe = ca.oversubscribe;
  if (o.np > cluster.capacity() && !oversubscribe && local) {
    std::fprintf(stderr, "canopy: note: %d ranks on %d slots of this machine: oversubscribing (ranks share cores)\n",
                 o.np, cluster.capacity());
    oversubscribe = true;
  }

  // The communication: a file, a (cached) profile, or none.
  CommMatrix m(o.np);
  std::string matrix_path = o.matrix;
  if (o.matrix == "auto") {
    matrix_path = mpi::profile_cache_path(program, o.command, o.np);
    std::error_code ec;
    if (o.reprofile || !std::filesystem::exists(matrix_path, ec)) {
      if (!o.dry_run) profile(l, o, oversubscribe, matrix_path);
    } else {
      std::fprintf(stderr, "canopy: note: using the profile of an earlier run: %s (--reprofile to measure again)\n",
                   matrix_path.c_str());
    }
    if (o.dry_run && !std::filesystem::exists(matrix_path, ec)) matrix_path.clear();
  }
  if (!matrix_path.empty()) {
    m = load_matrix(matrix_path, o.format);
    if (m.size() != o.np)
      throw Error(fmt::format("{} has {} ranks but --np is {}: rank i is row i of the matrix, so they must match",
                              matrix_path, m.size(), o.np));
  }

  const Placement p = map_ranks(cluster, m, policy, cluster_weights(cluster, o.weights), ca.spread, oversubscribe);

  // The rankfile (and places file), kept with --keep DIR, else in a fresh
  // temporary directory (left for the user to inspect on --dry-run).
  std::string dir = o.keep;
  if (dir.empty()) {
    std::string tmpl = (std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : "/tmp") +
                       "/canopy-mpirun-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw Error(fmt::format("cannot create {}", tmpl), ErrorKind::System);
    dir = tmpl;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
  }
  const std::string rankfile = dir + "/rankfile";
  write_file(rankfile, format_cluster_placement(cluster, p, l.major >= 5 ? ClusterFormat::Rankfile5 : ClusterFormat::Rankfile4, &m));
  const bool hybrid = cluster.unit_options().threads_per_rank > 1;
  std::vector<std::string> command = o.command;
  const std::string marker = o.report ? run::affinity_marker(static_cast<long>(::getpid())) : "";
  if (hybrid || o.report) {
    std::vector<std::string> wrapped{run::self_executable(), "mpi-rank"};
    if (hybrid) {
      const std::string places = dir + "/omp-places";
      write_file(places, format_cluster_placement(cluster, p, ClusterFormat::OmpPlaces, &m));
      wrapped.insert(wrapped.end(), {"--places", places});
    }
    if (o.report) wrapped.insert(wrapped.end(), {"--report", marker});
    wrapped.push_back("--");
    wrapped.push_back(program);
    wrapped.insert(wrapped.end(), o.command.begin() + 1, o.command.end());
    command = std::move(wrapped);
  }
  mpi::LaunchOptions lo;
  lo.np = o.np;
  lo.rankfile = rankfile;
  lo.hwthreads = cluster.unit_options().granularity == Granularity::PU;
  lo.oversubscribe = oversubscribe;
  const auto argv = mpi::launcher_argv(l, lo, command);
  std::fprintf(stderr, "canopy: %d ranks, policy %s%s, rankfile %s\n", o.np, p.policy.c_str(),
               matrix_path.empty() ? " (no matrix: ranks that do not communicate)" : (", matrix " + matrix_path).c_str(),
               rankfile.c_str());
  if (o.dry_run) {
    std::printf("%s\n", join_command(argv).c_str());
    return 0;
  }
  // A rankfile of our own is removed once mpirun is done (so canopy waits
  // for it instead of exec'ing it); one in --keep DIR stays.
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{o.keep.empty() ? dir : std::string()};
  if (!o.report) {
    if (!o.keep.empty()) run::exec_program(l.path, argv);
    return run::run_filtered(l.path, argv, "\x01canopy-never\x01", [](std::string_view) {});
  }

  std::vector<mpi::RankLine> ranks;
  std::vector<run::AffinityLine> threads;
  std::vector<std::string> unparsed;
  const int status = run::run_filtered(l.path, argv, marker, [&](std::string_view line) {
    try {
      if (auto r = mpi::parse_rank_line(line, marker))
        ranks.push_back(std::move(*r));
      else if (auto a = run::parse_affinity_line(line, marker))
        threads.push_back(std::move(*a));
    } catch (const Error& e) {
      unparsed.push_back(e.what());
    }
  });
  std::vector<mpi::ExpectedRank> expected;
  for (int r = 0; r < p.num_tasks(); ++r) {
    const int leaf = p.task_pu[r];
    mpi::ExpectedRank e;
    e.host = cluster.nodes().at(cluster.unit(leaf).node).host;
    e.cpus = cluster.binding_os(leaf);
    if (hybrid)
      for (size_t t = 0; t < cluster.unit(leaf).threads.size(); ++t)
        e.threads.push_back(cluster.thread_binding_os(leaf, static_cast<int>(t)));
    expected.push_back(std::move(e));
  }
  const mpi::RankReport rep = mpi::compare_ranks(expected, ranks, threads);
  std::string text = rep.text;
  for (const auto& u : unparsed) text += fmt::format("canopy: cannot check a rank: {}\n", u);
  std::fputs(text.c_str(), stderr);
  if (status != 0) {
    std::fprintf(stderr, "canopy: %s exited with status %d\n", l.path.c_str(), status);
    return status;
  }
  return rep.mismatches || !unparsed.empty() ? 1 : 0;
}

const bool mpirun_registered = register_subcommand(Subcommand{
    "mpirun", "Launch an MPI program (Open MPI) with its ranks placed from their communication", 70,
    [](CLI::App& app) {
      auto o = std::make_shared<MpirunOptions>();
      app.add_option("-n,--np", o->np, "Number of MPI ranks (-np N works too)")->group("Placement");
      add_input_option(app, o->input);
      add_matrix_options(app, o->matrix, o->format)
          ->description(
              "Communication between ranks: a matrix file (as libcanopy-mpi writes it, or dense, MatrixMarket, "
              "edges), or 'auto': profile the program once with libcanopy-mpi and keep the profile in "
              "~/.cache/canopy/mpi for later runs. Default: ranks that do not communicate");
      app.add_flag("--reprofile", o->reprofile, "With --matrix auto: profile again even when a profile is cached")
          ->group("Input");
      app.add_option("--cluster", o->cluster.cluster,
                     "The nodes: a cluster file or Open MPI hostfile, 'N*TOPOLOGY' or 'localhost' (default: this "
                     "machine alone, oversubscribed when there are more ranks than cores)")
          ->option_text("SPEC")
          ->group("Input");
      app.add_option("-p,--policy", o->policy, "Mapping policy (default: " + default_policy() + ")")->group("Placement");
      app.add_option("-g,--granularity", o->granularity, "Bind each rank (thread) to whole cores (default) or to PUs")
          ->check(CLI::IsMember({"pu", "core"}))
          ->group("Placement");
      add_weights_option(app, o->weights);
      add_cluster_options(app, o->cluster, false);
      app.add_option("--mpirun", o->mpirun, "The Open MPI launcher to run (default: $CANOPY_MPIRUN, else mpirun)")
          ->group("Launch");
      app.add_option("--keep", o->keep, "Write the rankfile (and OMP_PLACES file) into DIR and keep them")
          ->option_text("DIR")
          ->group("Launch");
      app.add_flag("--report", o->report,
                   "Each rank (and OpenMP thread) reports where it runs; print the table on stderr, exit 1 on a "
                   "mismatch")
          ->group("Launch");
      app.add_flag("--dry-run", o->dry_run, "Print the mpirun command (the rankfile is written) instead of running it")
          ->group("Launch");
      app.add_option("command", o->command, "The program and its arguments (after --)")->group("Launch");
      app.footer(
          "Examples:\n"
          "  canopy mpirun -np 4 --matrix auto -- ./app input.dat      # profile once, then place from it\n"
          "  canopy mpirun -np 64 --cluster hosts.txt --input node.xml --matrix ranks.mtx -- ./app\n"
          "  canopy mpirun -np 8 --threads-per-rank 4 --matrix auto --report -- ./hybrid\n"
          "The program's exit status is passed on; --report exits 1 when a rank or thread ran elsewhere.");
      return [o] { return run_mpirun(*o); };
    }});

}  // namespace
}  // namespace canopy::cli
