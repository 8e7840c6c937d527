// `canopy run --matrix auto`: the first run profiles the program and places
// it from its own matrix, the next ones take the cached profile; a long
// program is profiled only for --profile-duration seconds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "canopy/comm_matrix.hpp"
#include "profile_runner.hpp"

#ifdef CANOPY_SHARING_PATTERNS
namespace canopy::test {
namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The dense matrix --report prints after "canopy: the matrix placed".
CommMatrix reported_matrix(const std::string& err, int n) {
  std::istringstream in(err);
  std::string line, rows;
  while (std::getline(in, line) && !has(line, "canopy: the matrix placed")) {
  }
  for (int i = 0; i < n && std::getline(in, line); ++i) rows += line + "\n";
  std::istringstream dense(rows);
  return read_matrix(dense, "report", MatrixFormat::Dense);
}

TEST(RunMatrixAuto, TheFirstRunIsProfiledAndPlacedTheNextTakesTheCachedProfile) {
  const std::string cache = fresh_dir("cache");
  const std::vector<std::string> env = {"CANOPY_PROFILE_CACHE=" + cache};
  const std::vector<std::string> args = {CANOPY_CLI, "run", "--matrix", "auto", "-n", "8", "--report",
                                         "--profile-duration", "60", "--", CANOPY_SHARING_PATTERNS, "halo1d", "8",
                                         // About 0.5 s of CPU per thread: some 125 samples each at
                                         // the default (the POSIX timer, at most one per 4 ms tick
                                         // here), enough for the recall bar (docs/profile.md). With
                                         // 0.3 s a loaded ASan run once took 308 samples in all and
                                         // missed one of the 7 pairs (recall 0.86).
                                         "60000"};
  Ran first = run(args, env);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_TRUE(has(first.err, "canopy: matrix: profiled now (a whole run, exit status 0; saved as " + cache))
      << first.err;
  EXPECT_TRUE(has(first.out, "halo1d 8 threads: checksum")) << first.out;  // the placed run's own output
  const Ran truth = run({CANOPY_SHARING_PATTERNS, "halo1d", "8", "--truth"});
  std::istringstream truth_text(truth.out);
  EXPECT_GE(top_k_recall(read_matrix(truth_text, "truth", MatrixFormat::Dense), reported_matrix(first.err, 8)), 0.9)
      << first.err;

  Ran second = run(args, env);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_TRUE(has(second.err, "canopy: matrix: the profile of an earlier run, " + cache)) << second.err;
  EXPECT_FALSE(has(second.err, "portable sampling")) << second.err;  // not profiled again

  // Other arguments are another run: profiled anew.
  std::vector<std::string> other = args;
  other.back() = "8000";
  Ran third = run(other, env);
  ASSERT_EQ(third.status, 0) << third.err;
  EXPECT_TRUE(has(third.err, "profiled now")) << third.err;
}

TEST(RunMatrixAuto, ALongProgramIsProfiledForTheDurationOnlyThenRunPlaced) {
  const std::string cache = fresh_dir("cache");
  const Ran r = run({CANOPY_CLI, "run", "--matrix", "auto", "-n", "1", "--profile-duration", "0.3", "--",
                     CANOPY_PROFILE_BEHAVIOUR, "work", "400"},
                    {"CANOPY_PROFILE_CACHE=" + cache});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "its first 0.3 s, then stopped")) << r.err;
}

TEST(RunMatrixAuto, DryRunNeedsAProfileAlready) {
  const std::string cache = fresh_dir("cache");
  const Ran r = run({CANOPY_CLI, "run", "--matrix", "auto", "--dry-run", "--", CANOPY_SHARING_PATTERNS, "halo1d", "8",
                     "10"},
                    {"CANOPY_PROFILE_CACHE=" + cache});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "no profile of this run yet")) << r.err;
}

}  // namespace
}  // namespace canopy::test
#endif
