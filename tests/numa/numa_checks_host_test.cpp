// The NUMA check table run on the build machine: the checks that fit its node
// count must pass here too (on a one-node machine: placements on node 0,
// block-cyclic and interleave degenerate to node 0, first touch from the one
// node), so that a broken check or library path shows up before the VM run.
#include <gtest/gtest.h>

#include <set>

#include "canopy/data.hpp"
#include "check/numa_check.hpp"

namespace {

TEST(NumaChecks, NamesAreUnique) {
  std::set<std::string> names;
  for (const auto& c : numa_check::registry()) EXPECT_TRUE(names.insert(c.name).second) << c.name;
  EXPECT_GE(names.size(), 8u);
}

TEST(NumaChecks, ThoseThatFitThisMachinePass) {
  const numa_check::Summary s = numa_check::run_checks("", canopy::data_num_nodes());
  for (const std::string& line : s.lines)
    if (line.rfind("FAIL", 0) == 0) ADD_FAILURE() << line;
  EXPECT_EQ(s.failed, 0);
  EXPECT_GT(s.passed, 0);
  EXPECT_EQ(s.passed + s.failed + s.skipped, static_cast<int>(numa_check::registry().size()));
}

TEST(NumaChecks, SkipsWhatNeedsMoreNodesAndFilters) {
  const numa_check::Summary all = numa_check::run_checks("data_on_node", 1);
  EXPECT_EQ(all.passed, 1);
  const numa_check::Summary none = numa_check::run_checks("data_misplaced", 1);
  EXPECT_EQ(none.skipped, 1);
  EXPECT_EQ(none.passed, 0);
}

TEST(NumaChecks, ExcludeLeavesOutMatchingChecks) {
  const numa_check::Summary without = numa_check::run_checks("data_", 1, "data_on_node");
  for (const std::string& line : without.lines) EXPECT_EQ(line.find("data_on_node"), std::string::npos) << line;
  const numa_check::Summary with = numa_check::run_checks("data_", 1);
  EXPECT_EQ(with.passed + with.failed + with.skipped, without.passed + without.failed + without.skipped + 1);
}

}  // namespace
