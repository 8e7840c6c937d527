// Bad input to the canopy CLI: every case must exit with status 2 and say on
// one stderr line "canopy: ..." what is wrong, naming the file (and line)
// or the value at fault. No crash, no partial output.
#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace {

using canopy::test::lines;
using canopy::test::run_cli;

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> expect;  // substrings the error line must contain
  std::string input = {};
  bool usage_hint = false;  // option-parsing errors add a second line pointing at --help
};

const std::string kSmall = "pack:2 numa:2 core:4 pu:2";
const std::string kTwoSocket = "topologies/two-socket.xml";

std::vector<BadCase> cases() {
  return {
      // topologies
      {"bad_synthetic", {"topology", "--input", "pack:2 core:x"}, {"synthetic topology 'pack:2 core:x'", "expected"}},
      {"huge_synthetic", {"topology", "--input", "pack:100000 core:100000 pu:100"}, {"more than the limit"}},
      {"missing_xml", {"topology", "--input", "topologies/missing.xml"}, {"topologies/missing.xml", "no such"}},
      {"corrupt_xml", {"topology", "--input", "cli/corrupt.xml"}, {"cli/corrupt.xml", "not a valid hwloc XML"}},
      // matrices
      {"ragged", {"matrix", "--matrix", "cli/ragged.txt"}, {"cli/ragged.txt:2", "ragged"}},
      {"negative", {"matrix", "--matrix", "cli/negative.txt"}, {"cli/negative.txt:2", "negative", "-3"}},
      {"nan", {"matrix", "--matrix", "cli/nan.txt"}, {"cli/nan.txt:1", "NaN"}},
      {"infinite", {"matrix", "--matrix", "cli/inf.txt"}, {"cli/inf.txt:1", "infinite"}},
      {"non_square", {"matrix", "--matrix", "cli/nonsquare.txt"}, {"cli/nonsquare.txt", "non-square"}},
      {"lying_header", {"matrix", "--matrix", "cli/lying.mtx"}, {"cli/lying.mtx", "header", "3"}},
      {"huge_matrix", {"matrix", "--matrix", "cli/huge.mtx"}, {"cli/huge.mtx:2", "too many tasks"}},
      {"huge_task_count", {"map", "--input", kSmall, "--tasks", "100000000"}, {"--tasks", "100000000"}, "", true},
      {"missing_matrix", {"matrix", "--matrix", "cli/missing.txt"}, {"cli/missing.txt"}},
      {"matrix_in_map", {"map", "--input", kSmall, "--matrix", "cli/ragged.txt", "--policy", "compact"},
       {"cli/ragged.txt:2"}},
      // policies, formats, weights
      {"unknown_policy", {"map", "--input", kSmall, "--tasks", "4", "--policy", "nope"},
       {"unknown policy 'nope'", "compact", "scatter"}},
      {"unknown_format", {"map", "--input", kSmall, "--tasks", "4", "--of", "yaml"}, {"--of", "yaml"}, "", true},
      {"unknown_topology_format", {"topology", "--input", kSmall, "--of", "png"}, {"--of", "png"}, "", true},
      {"unknown_matrix_format", {"matrix", "--matrix", "cli/asym4.txt", "--format", "csv"}, {"--format", "csv"}, "",
       true},
      {"bad_weights_item", {"map", "--input", kSmall, "--tasks", "4", "--policy", "compact", "--weights", "4,x,1"},
       {"'x'"}},
      {"negative_weight", {"map", "--input", kSmall, "--tasks", "4", "--policy", "compact", "--weights=4,-2,1"},
       {"-2"}},
      {"too_many_weights",
       {"map", "--input", kSmall, "--tasks", "4", "--policy", "compact", "--weights", "1,2,3,4,5,6,7"},
       {"weights", "levels"}},
      {"bad_weights_eval",
       {"eval", "--input", kSmall, "--matrix", "cli/asym4.txt", "--placement", "-", "--weights", "nan,1"},
       {"nan"},
       "0 1 2 3"},
      {"bad_granularity", {"map", "--input", kSmall, "--tasks", "4", "--granularity", "socket"}, {"socket"}, "", true},
      // conflicting or missing options
      {"map_without_tasks", {"map", "--input", kSmall, "--policy", "compact"}, {"--matrix", "--tasks"}},
      {"map_matrix_and_tasks", {"map", "--input", kSmall, "--matrix", "cli/asym4.txt", "--tasks", "4"},
       {"--matrix", "--tasks"}, "", true},
      {"zero_tasks", {"map", "--input", kSmall, "--tasks", "0"}, {"--tasks", "0"}, "", true},
      {"eval_without_placement", {"eval", "--input", kSmall, "--matrix", "cli/asym4.txt"}, {"--placement"}, "", true},
      {"no_subcommand", {}, {"subcommand"}, "", true},
      // placements read back by eval
      {"junk_token", {"eval", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--placement",
                      "cli/junk.placement"},
       {"cli/junk.placement:1", "'x3'"}},
      {"unknown_cpu", {"eval", "--input", kTwoSocket, "--matrix", "cli/asym4.txt", "--placement", "-"},
       {"<stdin>:2", "CPU 99", "0-31"},
       "0 1\n2 99\n"},
      {"wrong_count", {"eval", "--input", kTwoSocket, "--matrix", "cli/asym4.txt", "--placement", "-"},
       {"<stdin>", "3 CPU numbers for 4 tasks"},
       "0 1 2\n"},
      {"empty_placement", {"eval", "--input", kTwoSocket, "--matrix", "cli/asym4.txt", "--placement", "-"},
       {"<stdin>", "no CPU number"},
       "# nothing\n"},
      {"missing_placement", {"eval", "--input", kTwoSocket, "--matrix", "cli/asym4.txt", "--placement",
                             "cli/missing.placement"},
       {"cli/missing.placement", "cannot open"}},
  };
}

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoWithOneLineNamingTheProblem) {
  const BadCase& c = GetParam();
  auto r = run_cli(c.args, c.input);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "") << "no partial output on error";
  auto l = lines(r.err);
  // Notes (e.g. "matrix made symmetric") may precede the error; the error is
  // the last line, or the one before the --help hint.
  std::vector<std::string> errors;
  for (const auto& x : l)
    if (x.rfind("canopy: note:", 0) != 0) errors.push_back(x);
  ASSERT_EQ(errors.size(), c.usage_hint ? 2u : 1u) << r.err;
  const std::string& line = errors.front();
  EXPECT_EQ(line.rfind("canopy: ", 0), 0u) << line;
  for (const auto& s : c.expect) EXPECT_NE(line.find(s), std::string::npos) << "'" << s << "' not in: " << line;
  if (c.usage_hint) {
    EXPECT_NE(errors.back().find("--help"), std::string::npos);
  }
}

// gtest prints a failing case by name rather than as raw bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(cases()), case_name);

TEST(BadInput, FailingOutputFileIsASystemError) {
  auto r = run_cli({"topology", "--input", kSmall, "-o", "/nonexistent-dir/x.txt"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent-dir/x.txt"), std::string::npos) << r.err;
}

}  // namespace
