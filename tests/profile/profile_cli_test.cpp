// `canopy profile` as a user meets it: bad input, exit statuses passed on,
// and programs that exit, fork, exec, start and end threads and handle
// their own signals behaving as they do without profiling, with what was
// observed still written (behaviour.c checks its own side).
#include <gtest/gtest.h>

#include <sstream>

#include "canopy/comm_matrix.hpp"
#include "profile_runner.hpp"

#ifdef CANOPY_PROFILE_BEHAVIOUR
namespace canopy::test {
namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

Ran profile(std::vector<std::string> program, std::vector<std::string> options = {}) {
  std::vector<std::string> args = {CANOPY_CLI, "profile"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), program.begin(), program.end());
  return run(args);
}

int matrix_size(const std::string& path) { return read_matrix(path).size(); }

TEST(ProfileCli, AProgramThatCannotBeStartedIsBadInput) {
  Ran r = profile({"canopy-no-such-program"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "canopy: program 'canopy-no-such-program' not found in PATH")) << r.err;
  r = run({CANOPY_CLI, "profile"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "no program given")) << r.err;
  r = profile({"/"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "is a directory")) << r.err;
}

TEST(ProfileCli, BadOptionsAreNamed) {
  Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "1"}, {"--granularity", "word"});
  EXPECT_EQ(r.status, 2);
  r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "1"}, {"--read-weight", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "read weight 2")) << r.err;
  r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "1"}, {"--duration", "1", "--until-exit"});
  EXPECT_EQ(r.status, 2);
}

TEST(ProfileCli, AProgramThatEndsBeforeAnySampleStillGetsItsMatrixAndAWarning) {
  const std::string out = fresh_dir("quick") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "0"}, {"-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "no data address was sampled")) << r.err;
  EXPECT_EQ(matrix_size(out), 1);
}

TEST(ProfileCli, TheProgramsExitStatusIsPassedOnAndTheMatrixWritten) {
  const std::string out = fresh_dir("exit") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "exit", "3"}, {"-o", out});
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(has(r.err, "exited with status 3")) << r.err;
  EXPECT_TRUE(has(r.err, "portable sampling: ")) << r.err;
  EXPECT_TRUE(has(r.err, "hardware address sampling not used: ")) << r.err;
  EXPECT_EQ(matrix_size(out), 1);
}

TEST(ProfileCli, UnderscoreExitWithAThreadStillRunningWritesBothThreads) {
  const std::string out = fresh_dir("_exit") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "_exit", "5"}, {"-o", out});
  EXPECT_EQ(r.status, 5) << r.err;
  EXPECT_EQ(matrix_size(out), 2) << r.err;
}

TEST(ProfileCli, ThreadsThatComeAndGoAreNumberedInCreationOrder) {
  const std::string out = fresh_dir("threads") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "threads", "5"}, {"-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(matrix_size(out), 6) << r.err;
  EXPECT_TRUE(has(r.err, "numbered in creation order, 0 = initial thread")) << r.err;
}

TEST(ProfileCli, AForkedChildIsProfiledOnItsOwnAndSaidSo) {
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "fork"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "started 1 other process(es) (fork)")) << r.err;
}

TEST(ProfileCli, AnExecKeepsProfilingTheNewProgram) {
  const std::string out = fresh_dir("exec") + "/m.mat";
  const Ran r =
      profile({CANOPY_PROFILE_BEHAVIOUR, "exec", CANOPY_PROFILE_BEHAVIOUR, "threads", "3"}, {"-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(matrix_size(out), 4) << r.err;  // the exec'd image: its initial thread and 3 more
}

TEST(ProfileCli, TheProgramsOwnSignalsTimersAndSleepsAreUntouched) {
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "signals"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "usr1 1")) << r.out;
}

TEST(ProfileCli, SamplesInsideMallocDoNotDeadlock) {
  // Capstone allocates while decoding; a sample that interrupts malloc must
  // not call it again (the decoder's arena). 4 threads x 150 ms at 100 us:
  // thousands of samples inside the allocator.
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "malloc", "150"}, {"--period-us", "100"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "canopy: profile: 4 thread(s)")) << r.err;
}

TEST(ProfileCli, DurationStopsSamplingAndTheProgramRunsOn) {
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "300"}, {"--duration", "0.1", "--period-us", "500"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "sampling stopped after --duration")) << r.err;
}

TEST(ProfileCli, PagesListsWhatEachThreadTouched) {
  const std::string dir = fresh_dir("pages");
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "threads", "2"}, {"-o", dir + "/m.mat", "--pages", dir + "/pages"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream in(read_text(dir + "/pages"));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("# thread page samples written", 0), 0u) << line;
  int rows = 0, threads_seen = 0, last = -1;
  while (std::getline(in, line)) {
    int thread = -1, written = -1;
    char page[32];
    double samples = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d %31s %lf %d", &thread, page, &samples, &written), 4) << line;
    EXPECT_EQ(std::string(page).rfind("0x", 0), 0u);
    EXPECT_GT(samples, 0);
    EXPECT_GE(thread, last);
    if (thread != last) ++threads_seen;
    last = thread;
    ++rows;
  }
  EXPECT_GT(rows, 0);
  EXPECT_GE(threads_seen, 2);  // the two that computed; the initial thread only waited
  EXPECT_LE(last, 2);
}

}  // namespace
}  // namespace canopy::test
#endif
