// Golden-output tests of the canopy CLI on synthetic topologies and the XML
// machines of tests/data/topologies (never on this machine's layout): each
// case runs one command and compares its standard output with
// tests/cli/golden/<name>. Regenerate with CANOPY_UPDATE_GOLDEN=1 (see
// cli_runner.hpp) and review every changed line.
//
// Mapping goldens use the policies whose result is fixed by definition
// (compact, scatter); the others are checked by properties elsewhere.
#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace {

using canopy::test::check_golden;
using canopy::test::run_cli;

struct GoldenCase {
  std::string name;  // golden file name
  std::vector<std::string> args;
  std::string input = {};  // standard input
};

const std::string kSmall = "pack:2 numa:2 core:4 pu:2";
const std::string kTwoSocket = "topologies/two-socket.xml";

std::vector<GoldenCase> cases() {
  return {
      // topology: text (lstopo-like), JSON, SVG, on synthetic and XML machines
      {"topology_small.txt", {"topology", "--input", kSmall}},
      {"topology_small.json", {"topology", "--input", kSmall, "--of", "json"}},
      {"topology_small.svg", {"topology", "--input", kSmall, "--of", "svg"}},
      {"topology_two_socket.txt", {"topology", "--input", kTwoSocket}},
      {"topology_two_socket.json", {"topology", "--input", kTwoSocket, "--of", "json"}},
      {"topology_two_socket.svg", {"topology", "--input", kTwoSocket, "--of", "svg"}},
      {"topology_hybrid.txt", {"topology", "--input", "topologies/hybrid-like.xml"}},
      {"topology_hybrid.svg", {"topology", "--input", "topologies/hybrid-like.xml", "--of", "svg"}},
      {"topology_knl.txt", {"topology", "--input", "topologies/knl-like.xml"}},
      {"topology_smp12.txt", {"topology", "--input", "pack:12 numa:1 core:8 pu:2"}},
      {"topology_4096.txt", {"topology", "--input", "pack:16 numa:4 core:16 pu:4"}},
      // matrix: description
      {"matrix_stencil16.txt", {"matrix", "--matrix", "cli/stencil16.txt"}},
      {"matrix_asym4.txt", {"matrix", "--matrix", "cli/asym4.txt"}},
      // map: every placement format, on a machine whose OS numbering differs
      // from the logical one (two-socket.xml: siblings are P#n and P#n+16)
      {"map_compact_small.txt", {"map", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--policy", "compact"}},
      {"map_scatter_small.txt", {"map", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--policy", "scatter"}},
      {"map_compact_two_socket.json",
       {"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact", "--of", "json"}},
      {"map_compact_two_socket.list",
       {"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact", "--of", "list"}},
      {"map_compact_two_socket.gomp",
       {"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact", "--of", "gomp"}},
      {"map_compact_two_socket.places",
       {"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact", "--of",
        "omp-places"}},
      {"map_compact_core_two_socket.places",
       {"map", "--input", kTwoSocket, "--tasks", "6", "--policy", "compact", "--granularity", "core", "--of",
        "omp-places"}},
      {"map_compact_two_socket.rankfile",
       {"map", "--input", kTwoSocket, "--tasks", "6", "--policy", "compact", "--of", "rankfile"}},
      {"map_compact_core_two_socket.rankfile",
       {"map", "--input", kTwoSocket, "--tasks", "6", "--policy", "compact", "--granularity", "core", "--of",
        "rankfile"}},
      {"map_helpers_two_socket.txt",
       {"map", "--input", kTwoSocket, "--tasks", "6", "--policy", "compact", "--helpers", "smt"}},
      {"map_helpers_two_socket.svg",
       {"map", "--input", kTwoSocket, "--tasks", "6", "--policy", "compact", "--helpers", "smt", "--of", "list", "-o",
        "/dev/null", "--svg", "-"}},
      {"map_tasks_oversubscribed.txt", {"map", "--input", "pack:2 core:2 pu:1", "--tasks", "6", "--policy",
                                        "compact"}},
      {"map_weights_small.txt",
       {"map", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--policy", "scatter", "--weights", "10,5,2,1"}},
      // eval: a hand-written placement
      {"eval_stencil16.txt",
       {"eval", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--placement", "cli/stencil16.placement"}},
      {"eval_stencil16.json",
       {"eval", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--placement", "cli/stencil16.placement",
        "--of", "json"}},
      {"eval_stdin.txt",
       {"eval", "--input", kSmall, "--matrix", "cli/asym4.txt", "--placement", "-"},
       "0 8\n16 24 # one task per NUMA node\n"},
  };
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, OutputMatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  auto r = run_cli(c.args, c.input);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(check_golden(c.name, r.out), "");
}

// gtest prints a failing case by name rather than as raw bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string s = info.param.name;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Cli, Golden, ::testing::ValuesIn(cases()), case_name);

}  // namespace
