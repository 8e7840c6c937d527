// `canopy profile` as a user meets it: bad input, exit statuses passed on,
// and programs that exit, fork, exec, start and end threads and handle
// their own signals behaving as they do without profiling, with what was
// observed still written (behaviour.c checks its own side).
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
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

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

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
  // A file without execute permission, then one the kernel cannot execute.
  const std::string text = fresh_dir("not-a-program") + "/notes.txt";
  write_text(text, "not a program\n");
  r = profile({text});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "is not executable")) << r.err;
  std::filesystem::permissions(text, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add);
  r = profile({text});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "canopy: cannot execute '" + text + "': Exec format error")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
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

TEST(ProfileCli, ThreadsCallingExitAtOnceStillWriteTheSamples) {
  // Main's exit runs the destructors (the library's write is among the
  // last); the threads' exits come meanwhile and would end the process
  // before it (they did, leaving no samples: libgomp's sections-2.c).
  for (int round = 0; round < 2; ++round) {
    const std::string out = fresh_dir("exitrace" + std::to_string(round)) + "/m.mat";
    const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "exitrace", "3"}, {"-o", out, "--period-us", "200"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_FALSE(has(r.err, "left no samples")) << r.err;
    EXPECT_EQ(matrix_size(out), 4) << r.err;
  }
}

TEST(ProfileCli, AStaticProgramIsSaidToLeaveNoSamplesAndItsStatusPassedOn) {
#ifdef CANOPY_PROFILE_BEHAVIOUR_STATIC
  const std::string out = fresh_dir("static") + "/m.mat";
  Ran r = profile({CANOPY_PROFILE_BEHAVIOUR_STATIC, "exit", "4"}, {"-o", out});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_TRUE(has(r.err, "left no samples: the profiling library was not loaded (a statically linked program"))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = profile({CANOPY_PROFILE_BEHAVIOUR_STATIC, "work", "1"}, {"-o", out});
  EXPECT_EQ(r.status, 0) << r.err;  // the program's status, though there is no matrix
#else
  GTEST_SKIP() << "no static test program";
#endif
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

TEST(ProfileCli, AForkingProgramsExitStatusIsPassedOnAndItsOwnMatrixWritten) {
  const std::string out = fresh_dir("fork-exit") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "fork", "6"}, {"-o", out});
  EXPECT_EQ(r.status, 6) << r.err;
  EXPECT_TRUE(has(r.err, "started 1 other process(es) (fork)")) << r.err;
  EXPECT_TRUE(has(r.err, "exited with status 6")) << r.err;
  EXPECT_EQ(matrix_size(out), 1) << r.err;  // the parent's one thread, not the child's
}

TEST(ProfileCli, AVforkChildThatExitsLeavesTheParentsProfileAlone) {
  // The child runs in the parent's memory: its _exit must not stop the
  // parent's sampling (100 ms of CPU after it: about 200 samples at 500 us).
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "vfork"}, {"--period-us", "500"});
  ASSERT_EQ(r.status, 0) << r.err;
  unsigned samples = 0;
  const auto at = r.err.find("thread(s) (numbered in creation order, 0 = initial thread), ");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::sscanf(r.err.c_str() + at, "thread(s) (numbered in creation order, 0 = initial thread), %u samples", &samples);
  EXPECT_GE(samples, 20u) << r.err;
}

TEST(ProfileCli, AProgramKilledByASignalIsSaidSoInOneLineAndItsStatusPassedOn) {
  const std::string out = fresh_dir("killed") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "kill"}, {"-o", out});
  EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
  EXPECT_TRUE(has(r.err, "was killed by signal 15 (Terminated) before it wrote its samples: no matrix written"))
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ProfileCli, APlainProgramWithoutThreadsOrOpenMPGetsAOneThreadMatrix) {
  // Not OpenMP, not even threaded: numbered in creation order, one row.
  const std::string out = fresh_dir("plain") + "/m.mat";
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "50"}, {"-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "canopy: profile: 1 thread(s) (numbered in creation order, 0 = initial thread)")) << r.err;
  EXPECT_EQ(matrix_size(out), 1);
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

TEST(ProfileCli, TheTimerIsPosixFromTheDefaultPeriodUpTaskClockBelowAndTheSummarySaysWhich) {
  const std::string out = fresh_dir("timer") + "/m.mat";
  Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "100"}, {"-o", out});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "portable sampling: POSIX thread CPU-time timer every 2000 us")) << r.err;
  EXPECT_TRUE(has(r.err, "(perf_event task-clock: not chosen)")) << r.err;
  EXPECT_EQ(matrix_size(out), 1);
  // Below 2000 us the task-clock event, where the machine allows it (else
  // the POSIX timer, with the reason).
  r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "50"}, {"--period-us", "500"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "portable sampling: perf_event task-clock every 500 us") ||
              (has(r.err, "POSIX thread CPU-time timer every 500 us") && !has(r.err, "not chosen")))
      << r.err;
  r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "50"}, {"--timer", "posix", "--period-us", "500"});
  EXPECT_TRUE(has(r.err, "POSIX thread CPU-time timer every 500 us, at most one per kernel tick (perf_event "
                         "task-clock: not chosen)"))
      << r.err;
  r = profile({CANOPY_PROFILE_BEHAVIOUR, "work", "50"}, {"--timer", "task-clock"});
  EXPECT_FALSE(has(r.err, "not chosen")) << r.err;
  EXPECT_EQ(profile({CANOPY_PROFILE_BEHAVIOUR, "work", "1"}, {"--timer", "hpet"}).status, 2);
}

TEST(ProfileCli, PagesListsWhatEachThreadTouched) {
  const std::string dir = fresh_dir("pages");
  const Ran r = profile({CANOPY_PROFILE_BEHAVIOUR, "threads", "2"},
                       {"-o", dir + "/m.mat", "--pages", dir + "/pages", "--period-us", "500"});
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
