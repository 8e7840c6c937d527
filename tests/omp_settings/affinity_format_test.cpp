// format_affinity: every field of OpenMP 5.1's affinity format table, short
// and long names, the 0 / . / width modifiers as libgomp applies them, %%,
// and malformed specifiers (copied out as written, reported by
// affinity_format_error).
#include <gtest/gtest.h>

#include "omp/core/settings.hpp"

using namespace canopy::omp;

namespace {
AffinityFields sample() {
  AffinityFields f;
  f.team_num = 1;
  f.num_teams = 2;
  f.nesting_level = 1;
  f.thread_num = 3;
  f.num_threads = 8;
  f.ancestor_tnum = 0;
  f.host = "node7";
  f.pid = 4242;
  f.native_thread_id = 0x7f12;
  f.os_cpus = {0, 1, 2, 3, 8};
  return f;
}
std::string fmt(const std::string& format) { return format_affinity(format, sample()); }
}  // namespace

TEST(OmpAffinityFormat, ShortFields) {
  EXPECT_EQ(fmt("%t %T %L %n %N %a %H %P %i %A"), "1 2 1 3 8 0 node7 4242 0x7f12 0-3,8");
  EXPECT_EQ(fmt("level %L thread %i affinity %A"), "level 1 thread 0x7f12 affinity 0-3,8");
  EXPECT_EQ(fmt("no fields"), "no fields");
  EXPECT_EQ(fmt(""), "");
  EXPECT_EQ(fmt("100%%"), "100%");
  EXPECT_EQ(fmt("%%n"), "%n");
}

TEST(OmpAffinityFormat, LongFields) {
  EXPECT_EQ(fmt("%{team_num} %{num_teams} %{nesting_level} %{thread_num} %{num_threads} %{ancestor_tnum} "
                "%{host} %{process_id} %{native_thread_id} %{thread_affinity}"),
            "1 2 1 3 8 0 node7 4242 0x7f12 0-3,8");
  EXPECT_EQ(fmt("%.4{thread_num}|"), "   3|");
}

TEST(OmpAffinityFormat, Modifiers) {
  EXPECT_EQ(fmt("[%4n]"), "[3   ]");    // width alone: left justified
  EXPECT_EQ(fmt("[%.4n]"), "[   3]");   // ".": right justified
  EXPECT_EQ(fmt("[%0.4n]"), "[0003]");  // "0.": zero padded
  EXPECT_EQ(fmt("[%1n]"), "[3]");
  EXPECT_EQ(fmt("[%0.8i]"), "[0x007f12]");  // zeros after 0x, as libgomp
  EXPECT_EQ(fmt("[%10H]"), "[node7     ]");
  EXPECT_EQ(fmt("[%.10H]"), "[     node7]");
  EXPECT_EQ(fmt("[%0.10H]"), "[     node7]");  // text is never zero padded
  EXPECT_EQ(fmt("[%.8A]"), "[   0-3,8]");
  EXPECT_EQ(fmt("[%8A]"), "[0-3,8   ]");
  EXPECT_EQ(fmt("[%2A]"), "[0-3,8]");
  AffinityFields f = sample();
  f.ancestor_tnum = -1;
  EXPECT_EQ(format_affinity("[%0.4a]", f), "[-001]");
  EXPECT_EQ(format_affinity("[%.4a]", f), "[  -1]");
  f.os_cpus.clear();
  EXPECT_EQ(format_affinity("[%A]", f), "[]");
}

TEST(OmpAffinityFormat, MalformedSpecifiersAreCopiedAndReported) {
  EXPECT_EQ(fmt("a %q b"), "a %q b");
  EXPECT_EQ(fmt("%0n"), "%0n");
  EXPECT_EQ(fmt("%.n"), "%.n");
  EXPECT_EQ(fmt("%{bogus} %n"), "%{bogus} 3");
  EXPECT_EQ(fmt("%{thread_num"), "%{thread_num");
  EXPECT_EQ(fmt("end %"), "end %");
  EXPECT_EQ(fmt("%99999999999999999999n"), "%99999999999999999999n");
  EXPECT_EQ(affinity_format_error("level %L thread %i affinity %A"), std::nullopt);
  EXPECT_EQ(affinity_format_error("%0.5{thread_num} %% %10H"), std::nullopt);
  EXPECT_EQ(affinity_format_error("x %q"), std::optional<std::string>("an unknown field type in '%q'"));
  EXPECT_EQ(affinity_format_error("%0n"), std::optional<std::string>("'0' must be followed by '.' in '%0'"));
  EXPECT_EQ(affinity_format_error("%.n"), std::optional<std::string>("'0' and '.' need a width in '%.'"));
  EXPECT_EQ(affinity_format_error("%{nope}"), std::optional<std::string>("an unknown field name in '%{nope}'"));
  EXPECT_EQ(affinity_format_error("%{host"), std::optional<std::string>("an unterminated '%{' in '%{host'"));
  EXPECT_EQ(affinity_format_error("50%"), std::optional<std::string>("a field type is missing in '%'"));
  EXPECT_TRUE(affinity_format_error("%99999999n").has_value());
}

TEST(OmpAffinityFormat, TheSpecificationsExample) {
  // OpenMP 5.1 section 6.14: thread 0 at level 1 on CPUs 0-1,16-17 of host nid003.
  AffinityFields f;
  f.nesting_level = 1;
  f.thread_num = 0;
  f.host = "nid003";
  f.os_cpus = {0, 1, 16, 17};
  EXPECT_EQ(format_affinity("Thread Affinity: %0.3L %.8n %.15{thread_affinity} %.12H", f),
            "Thread Affinity: 001        0       0-1,16-17       nid003");
}
