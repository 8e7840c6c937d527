// `canopy mpirun --report`: each rank, started through `canopy mpi-rank`,
// prints one marker line saying where it runs (host, pid, the CPUs it may
// use), and its OpenMP runtime one line per thread (OMP_DISPLAY_AFFINITY, the
// format of run_report.hpp). This file parses the rank lines and compares
// both with the placement.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "run_report.hpp"

namespace canopy::mpi {

struct RankLine {
  int rank = 0;
  std::string host;
  long pid = 0;
  std::vector<int> cpus;
};

// marker + " rank=R host=H pid=P cpus=LIST"
std::string rank_line(const std::string& marker, int rank, const std::string& host, long pid,
                      const std::vector<int>& cpus);
// nullopt unless the line starts with the marker and has rank=; throws
// canopy::Error naming the line when it does but does not parse.
std::optional<RankLine> parse_rank_line(std::string_view line, std::string_view marker);

struct ExpectedRank {
  std::string host;                      // "localhost" matches any host
  std::vector<int> cpus;                 // the rank's binding (OS CPUs)
  std::vector<std::vector<int>> threads;  // per OpenMP thread (hybrid jobs), else empty
};

struct RankReport {
  std::string text;    // the table and a closing line
  int mismatches = 0;  // ranks or threads bound elsewhere, ranks not seen
};

RankReport compare_ranks(const std::vector<ExpectedRank>& expected, const std::vector<RankLine>& ranks,
                         const std::vector<run::AffinityLine>& threads);

}  // namespace canopy::mpi
