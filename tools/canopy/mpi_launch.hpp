// `canopy mpirun`: what it needs to know about the MPI launcher (which MPI,
// which version), where the profiling library and the profile cache are, the
// mpirun command line, and the rank's own view for `canopy mpi-rank`.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace canopy::mpi {

struct Launcher {
  std::string path;      // the mpirun executable
  std::string flavour;   // "openmpi", "mpich" or "" (unknown)
  int major = 0;         // Open MPI's major version (rankfile options differ from 5 on)
  std::string version;   // the first line of `mpirun --version`
};

// Runs `<path> --version` and reads which MPI it is. Throws canopy::Error
// naming the program when it cannot be run.
Launcher probe_launcher(const std::string& path);

// libcanopy-mpi for that MPI: $CANOPY_MPI_LIB when set, else
// <bindir>/../lib/canopy-mpi/<flavour>/libcanopy-mpi.so. Throws naming the
// places looked at.
std::string profiling_library(const char* env_lib, const std::string& executable, const std::string& flavour);

// Where --matrix auto keeps the profile of `command` run with `np` ranks:
// $XDG_CACHE_HOME/canopy/mpi (else ~/.cache/canopy/mpi), one file per program
// (path, size and modification time), arguments and rank count.
std::string profile_cache_path(const std::string& program_path, const std::vector<std::string>& command, int np);

struct LaunchOptions {
  int np = 1;
  std::string rankfile;      // empty: no placement (the profiling run)
  bool hwthreads = false;    // rankfile slots are hardware threads
  bool oversubscribe = false;
  std::vector<std::string> env;  // variables to pass to the ranks (NAME or NAME=value)
};

// The launcher's command line: Open MPI's `mpirun -np N --rankfile F` (4.x)
// or `--map-by rankfile:file=F` (5.x), then the command.
std::vector<std::string> launcher_argv(const Launcher& l, const LaunchOptions& o, const std::vector<std::string>& command);

// This process's rank in MPI_COMM_WORLD, from the variables the launchers set
// (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID); nullopt outside a job.
std::optional<int> rank_from_environment();

}  // namespace canopy::mpi
