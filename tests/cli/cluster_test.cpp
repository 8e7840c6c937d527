// `canopy map --cluster`: MPI ranks on synthetic clusters and cluster files
// (tests/data/cluster), in every launcher format, against golden files
// (tests/cli/golden/cluster_*; regenerate with CANOPY_UPDATE_GOLDEN=1 and
// review); bad cluster files and impossible jobs (exit 2, one line naming
// the file, line and value); and properties of the default policy.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "cli_runner.hpp"

namespace {

using canopy::test::check_golden;
using canopy::test::lines;
using canopy::test::run_cli;

struct Case {
  std::string name;
  std::vector<std::string> args;
};

const std::string kFour = "cluster/four-nodes.txt";
const std::string kStencil = "cli/stencil16.txt";

std::vector<Case> golden_cases() {
  auto map = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"map", "--policy", "compact"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  return {
      // the same placement in each launcher's format (cores as units)
      {"cluster_four_nodes.txt", map({"--cluster", kFour, "--matrix", kStencil})},
      {"cluster_four_nodes.rankfile", map({"--cluster", kFour, "--matrix", kStencil, "--of", "rankfile"})},
      {"cluster_four_nodes.rankfile5", map({"--cluster", kFour, "--matrix", kStencil, "--of", "rankfile5"})},
      {"cluster_four_nodes.json", map({"--cluster", kFour, "--matrix", kStencil, "--of", "json"})},
      {"cluster_four_nodes.slurm_hosts", map({"--cluster", kFour, "--matrix", kStencil, "--of", "slurm-hostfile"})},
      // hardware threads as units: PU rankfile slots, Slurm map_cpu
      {"cluster_pu.rankfile", map({"--cluster", "2*pack:2 core:2 pu:2", "--tasks", "10", "--granularity", "pu",
                                   "--of", "rankfile"})},
      {"cluster_pu.slurm", map({"--cluster", "2*pack:2 core:2 pu:2", "--tasks", "8", "--granularity", "pu", "--spread",
                                "--of", "slurm-map-cpu"})},
      // hybrid: 4 cores per rank in one subtree, OMP_PLACES per rank, on XML
      // nodes whose OS numbering differs from the logical one
      {"cluster_hybrid.rankfile", map({"--cluster", "2*topologies/two-socket.xml", "--tasks", "6",
                                       "--threads-per-rank", "4", "--of", "rankfile"})},
      {"cluster_hybrid.places", map({"--cluster", "2*topologies/two-socket.xml", "--tasks", "6", "--threads-per-rank",
                                     "4", "--of", "omp-places"})},
      {"cluster_hybrid.slurm", map({"--cluster", "2*topologies/two-socket.xml", "--tasks", "8", "--threads-per-rank",
                                    "2", "--spread", "--of", "slurm-mask-cpu"})},
      // heterogeneous nodes, a slots limit, the cost lines
      {"cluster_mixed.txt", map({"--cluster", "cluster/mixed.txt", "--matrix", "cluster/stencil24.edges"})},
      {"cluster_mixed_canopy.txt", {"map", "--cluster", "cluster/mixed.txt", "--matrix", "cluster/stencil24.edges"}},
      // an Open MPI hostfile (no topology: --input) and a Slurm-style host list
      {"cluster_hostfile.rankfile",
       map({"--cluster", "cluster/hostfile.txt", "--input", "pack:2 core:4 pu:2", "--tasks", "8", "--of", "rankfile"})},
      {"cluster_slurm_hosts.txt",
       map({"--cluster", "cluster/slurm_hosts.txt", "--input", "core:4 pu:1", "--matrix", "cli/asym4.txt"})},
  };
}

class ClusterGolden : public ::testing::TestWithParam<Case> {};

TEST_P(ClusterGolden, OutputMatchesGoldenFile) {
  const Case& c = GetParam();
  auto r = run_cli(c.args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(check_golden(c.name, r.out), "");
}

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> expect;
};

std::vector<BadCase> bad_cases() {
  auto map = [](std::string cluster, std::vector<std::string> extra) {
    std::vector<std::string> a{"map", "--cluster", std::move(cluster)};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  return {
      {"bad_slots", map("cluster/bad_slots.txt", {"--tasks", "2"}), {"cluster/bad_slots.txt:2", "slots='two'"}},
      {"unknown_option", map("cluster/unknown_option.txt", {"--tasks", "2"}), {"cluster/unknown_option.txt:2", "'cpus'"}},
      {"bad_range", map("cluster/bad_range.txt", {"--tasks", "2"}), {"cluster/bad_range.txt:1", "'3-1'"}},
      {"too_many_slots", map("cluster/too_many_slots.txt", {"--tasks", "2"}),
       {"cluster/too_many_slots.txt:2", "tiny", "slots=9", "4 cores"}},
      {"conflicting_topology", map("cluster/conflict.txt", {"--tasks", "2"}), {"cluster/conflict.txt:3", "host x", "line 1"}},
      {"bad_topology", map("cluster/bad_topology.txt", {"--tasks", "2"}), {"cluster/bad_topology.txt:2", "core:x"}},
      {"empty_cluster", map("cluster/empty.txt", {"--tasks", "2"}), {"cluster/empty.txt", "no host"}},
      {"fewer_slots_than_ranks", map("cluster/small_pair.txt", {"--tasks", "5"}),
       {"5 ranks", "cluster/small_pair.txt", "only 4 slots"}},
      {"unknown_spec", map("nope*", {"--tasks", "2"}), {"'nope*'", "N*TOPOLOGY"}},
      {"no_room_for_a_rank", map("2*core:2 pu:1", {"--tasks", "2", "--threads-per-rank", "3"}),
       {"node0", "no room", "3"}},
      {"map_cpu_needs_one_cpu", map("2*core:4 pu:1", {"--tasks", "4", "--threads-per-rank", "2", "--of", "slurm-map-cpu"}),
       {"slurm-map-cpu", "rank 0", "2 CPUs"}},
      {"cluster_format_without_cluster", {"map", "--input", "core:4 pu:1", "--tasks", "2", "--of", "slurm-hostfile"},
       {"slurm-hostfile", "--cluster"}},
      {"threads_without_cluster", {"map", "--input", "core:4 pu:1", "--tasks", "2", "--threads-per-rank", "2"},
       {"--threads-per-rank", "--cluster"}},
      {"weights_per_cluster_level", map("2*core:2 pu:1", {"--tasks", "2", "--weights", "1,2,3,4,5"}), {"weights", "levels"}},
  };
}

class ClusterBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(ClusterBadInput, ExitsTwoWithOneLineNamingTheProblem) {
  const BadCase& c = GetParam();
  auto r = run_cli(c.args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> errors;
  for (const auto& x : lines(r.err))
    if (x.rfind("canopy: note:", 0) != 0) errors.push_back(x);
  ASSERT_EQ(errors.size(), 1u) << r.err;
  EXPECT_EQ(errors[0].rfind("canopy: ", 0), 0u) << errors[0];
  for (const auto& s : c.expect) EXPECT_NE(errors[0].find(s), std::string::npos) << "'" << s << "' not in: " << errors[0];
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }
std::string golden_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.name;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}
std::string bad_name(const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Cli, ClusterGolden, ::testing::ValuesIn(golden_cases()), golden_name);
INSTANTIATE_TEST_SUITE_P(Cli, ClusterBadInput, ::testing::ValuesIn(bad_cases()), bad_name);

nlohmann::json map_json(std::vector<std::string> args) {
  args.insert(args.begin(), "map");
  args.insert(args.end(), {"--of", "json"});
  auto r = run_cli(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The default policy keeps a 4x4 stencil's rows of neighbours on one node:
// no more network volume than packing ranks in order (compact) and much less
// than dealing them round-robin over the nodes (scatter, Open MPI's map-by node).
TEST(ClusterMap, DefaultPolicyCrossesTheNetworkNoMoreThanInOrderPacking) {
  const std::vector<std::string> base{"--cluster", "4*pack:1 core:4 pu:1", "--matrix", kStencil};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return map_json(a)["cost"]["network_volume"].get<double>();
  };
  const double best = with({});
  const double compact = with({"--policy", "compact"});
  const double scatter = with({"--policy", "scatter"});
  EXPECT_LE(best, compact);
  EXPECT_LT(best, scatter);
}

// Hybrid ranks: every rank gets T distinct cores on one host, no core is
// shared, and each thread's place is one core's PUs.
TEST(ClusterMap, HybridRanksOwnTheirCoresInOneSubtree) {
  auto j = map_json({"--cluster", "2*pack:2 numa:2 core:4 pu:2", "--tasks", "8", "--threads-per-rank", "4"});
  std::set<std::pair<std::string, int>> used;
  for (const auto& r : j["ranks"]) {
    ASSERT_EQ(r["threads"].size(), 4u);
    ASSERT_EQ(r["slot"].size(), 4u);
    for (int core : r["slot"]) EXPECT_TRUE(used.insert({r["host"], core}).second) << "core shared: " << core;
    // 4 cores of a 4-core NUMA node: consecutive logical cores, aligned.
    EXPECT_EQ(r["slot"][0].get<int>() % 4, 0);
    for (const auto& t : r["threads"]) EXPECT_EQ(t.size(), 2u) << "a thread's place is its core's two PUs";
  }
  EXPECT_EQ(used.size(), 32u);
}

}  // namespace
