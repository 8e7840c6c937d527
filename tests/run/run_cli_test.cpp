// `canopy run` end to end: real OpenMP programs (examples/omp_where.cpp built
// with libgomp and, when available, LLVM libomp) launched by the CLI, each
// thread's CPU checked against the placement; the report catching a program
// that overrides its placement; exit statuses, output pass-through and every
// bad input. Also BindMe's call (examples/omp_bindme.cpp, tests/run/omp_bind_c.c).
//
// Expectations never assume this machine's CPU count: they come from the
// CPUs this test may use (sched_getaffinity), and tests that need two skip
// on one.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "run_report.hpp"

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs a /bin/sh command line, capturing stdout and stderr separately.
Result sh(const std::string& command) {
  static int counter = 0;
  const std::string base =
      ::testing::TempDir() + "canopy_run_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string full = "( " + command + " ) >" + base + ".out 2>" + base + ".err";
  const int rc = std::system(full.c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

std::string q(const std::string& s) { return "'" + s + "'"; }

const std::string kCanopy = q(CANOPY_CLI);

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// omp_where's lines of parallel region `region`: thread -> cpu.
std::map<int, int> where(const std::string& out, int region = 0) {
  std::map<int, int> cpu;
  std::regex line(R"(omp_where: region=(\d+) thread=(\d+) of=(\d+) cpu=(-?\d+) bound=)");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it)
    if (std::stoi((*it)[1]) == region) cpu[std::stoi((*it)[2])] = std::stoi((*it)[4]);
  return cpu;
}

struct ReportRow {
  std::vector<int> expected;
  std::string bound;
  std::string status;
};

// The table `canopy run --report` prints on stderr: thread -> row.
std::map<int, ReportRow> report(const std::string& err) {
  std::map<int, ReportRow> rows;
  std::regex line(R"(\n  (\d+) +(\S+) +(\S+) +([^\n]+))");
  for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it)
    rows[std::stoi((*it)[1])] = {canopy::run::parse_cpu_list((*it)[2].str()), (*it)[3], (*it)[4]};
  return rows;
}

struct OmpProgram {
  std::string name;
  std::string path;
  std::string runtime;  // what the program must report ("" = do not check)
  std::string launch;   // extra `canopy run` options, e.g. " --runtime canopy"
};

// gtest prints this in test names instead of the struct's bytes.
void PrintTo(const OmpProgram& p, std::ostream* os) { *os << p.name; }

std::vector<OmpProgram> omp_programs() {
  std::vector<OmpProgram> p;
#ifdef CANOPY_OMP_WHERE
  p.push_back({"gcc", CANOPY_OMP_WHERE, CANOPY_OMP_WHERE_RUNTIME});
#endif
#ifdef CANOPY_OMP_WHERE_LIBOMP
  p.push_back({"libomp", CANOPY_OMP_WHERE_LIBOMP, "libomp"});
#endif
#ifdef CANOPY_OMP_WHERE_FORTRAN
  p.push_back({"gfortran", CANOPY_OMP_WHERE_FORTRAN, "libgomp"});
#endif
#ifdef CANOPY_HAS_OMP_RUNTIME
  // The gcc- and gfortran-built programs, unchanged, on canopy's own runtime.
#ifdef CANOPY_OMP_WHERE
  p.push_back({"canopy", CANOPY_OMP_WHERE, "canopy", " --runtime canopy"});
#endif
#ifdef CANOPY_OMP_WHERE_FORTRAN
  p.push_back({"gfortran_canopy", CANOPY_OMP_WHERE_FORTRAN, "canopy", " --runtime canopy"});
#endif
  // The clang-built program (libomp.so.5, the __kmpc_* ABI) on canopy's runtime.
  // Not in sanitized builds: the program is not sanitized and canopy run
  // does not preload the sanitizer runtime that canopy's runtime then needs
  // (tests/omp runs clang programs on the sanitized runtime, with it preloaded).
#if defined(CANOPY_OMP_WHERE_LIBOMP) && !defined(CANOPY_TEST_SANITIZED)
  p.push_back({"libomp_canopy", CANOPY_OMP_WHERE_LIBOMP, "canopy", " --runtime canopy"});
#endif
#endif
  return p;
}

class RunOmp : public ::testing::TestWithParam<OmpProgram> {
 protected:
  std::string prog() const { return q(GetParam().path); }
  bool is_libgomp() const { return GetParam().runtime == "libgomp"; }
  bool is_canopy() const { return GetParam().runtime == "canopy"; }
  // `canopy run` with this parameter's launch options, then `args`.
  std::string run(const std::string& args) const { return kCanopy + " run" + GetParam().launch + " " + args; }

  // Checks that every thread omp_where saw ran on a CPU its placement allows,
  // using the expectation the report printed; returns thread -> cpu.
  std::map<int, int> expect_placed(const Result& r, int threads) {
    EXPECT_EQ(r.status, 0) << r.err;
    std::map<int, int> cpu = where(r.out);
    EXPECT_EQ(static_cast<int>(cpu.size()), threads) << r.out;
    auto rows = report(r.err);
    EXPECT_EQ(static_cast<int>(rows.size()), threads) << r.err;
    for (auto [t, c] : cpu) {
      const auto& e = rows[t].expected;
      EXPECT_TRUE(std::find(e.begin(), e.end(), c) != e.end()) << "thread " << t << " on CPU " << c << "\n" << r.err;
      // libgomp prints no affinity for a team of one thread.
      if (!(threads == 1 && is_libgomp())) {
        EXPECT_EQ(rows[t].status, "ok") << r.err;
      }
    }
    return cpu;
  }
};

}  // namespace

TEST_P(RunOmp, TheProgramUsesTheExpectedRuntime) {
  Result r = sh(is_canopy() ? run("-- " + prog()) : prog());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("omp_where: runtime="), std::string::npos) << r.out;
  if (!GetParam().runtime.empty()) {
    EXPECT_NE(r.out.find(GetParam().runtime), std::string::npos) << r.out;
  }
}

TEST_P(RunOmp, OneThreadPerAllowedCpu) {
  const auto cpus = allowed_cpus();
  const int n = static_cast<int>(std::min<size_t>(cpus.size(), 8));
  Result r = sh(run("-n " + std::to_string(n) + " --report -- " + prog()));
  auto cpu = expect_placed(r, n);
  std::set<int> distinct;
  for (auto [t, c] : cpu) distinct.insert(c);
  EXPECT_EQ(static_cast<int>(distinct.size()), n) << r.out;  // no two threads share a CPU
}

TEST_P(RunOmp, OneThread) {
  Result r = sh(run("-n 1 --report -- " + prog()));
  expect_placed(r, 1);
}

TEST_P(RunOmp, OnlyTheLastCpuAllowed) {
  // With only CPU c allowed, thread 0 must run on c (not on CPU 0).
  const int last = allowed_cpus().back();
  for (int n : {1, 2}) {
    Result r = sh("taskset -c " + std::to_string(last) + " " + run("-n " + std::to_string(n) + " --report -- " + prog()));
    auto cpu = expect_placed(r, n);
    for (auto [t, c] : cpu) EXPECT_EQ(c, last) << "thread " << t;
    EXPECT_NE(r.err.find("OMP_PLACES={" + std::to_string(last) + "}"), std::string::npos) << r.err;
  }
}

TEST_P(RunOmp, ReversedOrderOfTwoAllowedCpus) {
  // Allowed CPUs {a, b} with a < b given as "b,a": the placement still maps
  // thread i to the i-th PU in tree order; what matters is that each thread
  // runs where the placement says, whatever that order is.
  const auto cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const std::string set = std::to_string(cpus.back()) + "," + std::to_string(cpus.front());
  Result r = sh("taskset -c " + set + " " + run("-n 2 --policy scatter --report -- " + prog()));
  auto cpu = expect_placed(r, 2);
  EXPECT_NE(cpu[0], cpu[1]);
}

TEST_P(RunOmp, Oversubscribed) {
  const int n = static_cast<int>(std::min<size_t>(allowed_cpus().size(), 4)) * 2;
  Result r = sh(run("-n " + std::to_string(n) + " --report -- " + prog()));
  expect_placed(r, n);
}

TEST_P(RunOmp, CoreGranularityAndPack) {
  const int n = static_cast<int>(std::min<size_t>(allowed_cpus().size(), 4));
  Result r = sh(run("-n " + std::to_string(n) + " --granularity core --pack --report -- " + prog()));
  expect_placed(r, n);
}

TEST_P(RunOmp, ThreadsFromTheMatrix) {
  const std::string file = ::testing::TempDir() + "canopy_run_matrix_" + std::to_string(::getpid()) + ".mat";
  std::ofstream(file) << "0 5 1\n5 0 1\n1 1 0\n";
  Result r = sh(run("--matrix " + q(file) + " --report -- " + prog()));
  expect_placed(r, 3);
  EXPECT_NE(r.err.find("OMP_NUM_THREADS=3"), std::string::npos);
  std::remove(file.c_str());
}

TEST_P(RunOmp, SeveralParallelRegions) {
  const int n = static_cast<int>(std::min<size_t>(allowed_cpus().size(), 4));
  Result r = sh(run("-n " + std::to_string(n) + " --report -- " + prog()) + " 3");
  expect_placed(r, n);
  for (int region : {1, 2}) {
    auto rows = report(r.err);
    for (auto [t, c] : where(r.out, region)) {
      const auto& e = rows[t].expected;
      EXPECT_TRUE(std::find(e.begin(), e.end(), c) != e.end()) << "region " << region << " thread " << t;
    }
  }
}

TEST_P(RunOmp, RuntimeSpecificVariables) {
  if (is_canopy()) GTEST_SKIP() << "--runtime canopy is itself the runtime choice";
  const int n = static_cast<int>(std::min<size_t>(allowed_cpus().size(), 4));
  // GOMP_CPU_AFFINITY is honoured by libgomp and by libomp.
  expect_placed(sh(kCanopy + " run -n " + std::to_string(n) + " --runtime gomp --report -- " + prog()), n);
  Result r = sh(kCanopy + " run -n " + std::to_string(n) + " --runtime llvm --report -- " + prog());
  if (!is_libgomp()) {
    expect_placed(r, n);
  } else if (n >= 2) {
    // libgomp ignores KMP_AFFINITY: its threads float, and the report says so.
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("MISMATCH"), std::string::npos) << r.err;
  }
}

TEST_P(RunOmp, TheReportCatchesAProgramThatOverridesItsPlacement) {
  const auto cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  // The program (a wrapper here) replaces canopy's OMP_PLACES with the places
  // in reverse order before its OpenMP runtime starts.
  Result dry = sh(run("-n 2 --dry-run -- " + prog()));
  ASSERT_EQ(dry.status, 0) << dry.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dry.out, m, std::regex(R"(OMP_PLACES='\{(\d+)\},\{(\d+)\}')"))) << dry.out;
  const std::string reversed = "{" + m[2].str() + "},{" + m[1].str() + "}";
  Result r = sh(run("-n 2 --report -- sh -c 'OMP_PLACES=\"" + reversed + "\" exec \"$0\"' " + prog()));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  auto rows = report(r.err);
  ASSERT_EQ(rows.size(), 2u) << r.err;
  EXPECT_EQ(rows[0].status, "MISMATCH");
  EXPECT_EQ(rows[1].status, "MISMATCH");
  EXPECT_NE(r.err.find("MISMATCH: 2 thread(s)"), std::string::npos) << r.err;
  // And the threads did run where the override put them.
  auto cpu = where(r.out);
  EXPECT_EQ(cpu[0], std::stoi(m[2].str()));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, RunOmp, ::testing::ValuesIn(omp_programs()),
                         [](const auto& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RunOmp);

TEST(RunCli, ExitStatusIsPassedOn) {
  EXPECT_EQ(sh(kCanopy + " run -n 1 -- sh -c 'exit 7'").status, 7);
  EXPECT_EQ(sh(kCanopy + " run -n 1 --report -- sh -c 'exit 7'").status, 7);
  EXPECT_EQ(sh(kCanopy + " run -n 1 -- true").status, 0);
  Result killed = sh(kCanopy + " run -n 1 --report -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(killed.status, 128 + 15) << killed.err;
}

TEST(RunCli, OutputPassesThroughUnchanged) {
  Result r = sh(kCanopy + " run -n 1 --report -- sh -c " +
                q("echo out; echo err >&2; echo canopy-affinity-1: not ours; printf \"no newline\""));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out\ncanopy-affinity-1: not ours\nno newline");
  EXPECT_EQ(r.err.rfind("err\n", 0), 0u) << r.err;
  // Without --report canopy execs the program: nothing of canopy's in between.
  Result plain = sh(kCanopy + " run -n 1 -- sh -c " + q("echo out; echo err >&2"));
  EXPECT_EQ(plain.out, "out\n");
  EXPECT_EQ(plain.err, "err\n");
}

TEST(RunCli, TheProgramSeesThePlacementAndNotConflictingVariables) {
  Result r = sh("KMP_AFFINITY=compact GOMP_CPU_AFFINITY=0 OMP_NUM_THREADS=99 " + kCanopy + " run -n 1 -- sh -c " +
                q("echo $OMP_NUM_THREADS $OMP_PROC_BIND ${KMP_AFFINITY-unset} ${GOMP_CPU_AFFINITY-unset} "
                  "$OMP_PLACES"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("1 close unset unset {", 0), 0u) << r.out;
  EXPECT_NE(r.err.find("removing KMP_AFFINITY=compact"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("removing GOMP_CPU_AFFINITY=0"), std::string::npos) << r.err;
}

TEST(RunCli, DryRunPrintsTheEquivalentCommand) {
  Result r = sh(kCanopy + " run -n 1 --dry-run -- echo 'a b' c");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("env -u GOMP_CPU_AFFINITY -u KMP_AFFINITY OMP_NUM_THREADS=1 OMP_PLACES='{", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("}' OMP_PROC_BIND=close echo 'a b' c\n"), std::string::npos) << r.out;
  // The printed command works as printed.
  Result again = sh(r.out);
  EXPECT_EQ(again.out, "a b c\n");
  Result llvm = sh(kCanopy + " run -n 1 --runtime llvm --report --dry-run -- prog 2>&1");
  EXPECT_EQ(llvm.status, 2);  // 'prog' does not exist: checked even in a dry run
  Result gomp = sh(kCanopy + " run -n 1 --runtime gomp --report --dry-run -- true");
  EXPECT_NE(gomp.out.find("-u OMP_PLACES -u OMP_PROC_BIND -u KMP_AFFINITY"), std::string::npos) << gomp.out;
  EXPECT_NE(gomp.out.find("OMP_DISPLAY_AFFINITY=true OMP_AFFINITY_FORMAT='canopy-affinity-"), std::string::npos);
}

TEST(RunCli, BadInput) {
  struct Case {
    std::string args;
    std::string message;
  };
  const std::string matrix = ::testing::TempDir() + "canopy_run_bad_" + std::to_string(::getpid()) + ".mat";
  std::ofstream(matrix) << "0 1\n1 0\n";
  const std::string ragged = matrix + ".ragged";
  std::ofstream(ragged) << "0 1\n1\n";
  const Case cases[] = {
      {"run", "no program given"},
      {"run -n 2", "no program given"},
      {"run -- no-such-program-xyz", "'no-such-program-xyz' not found in PATH"},
      {"run -- ./no/such/program", "program './no/such/program'"},
      {"run -- /tmp", "is a directory"},
      {"run -n 0 -- true", "-n 0: expected at least 1 thread"},
      {"run -n -3 -- true", "-n -3"},
      {"run -n 100000000 -- true", "threads per PU"},
      {"run -n 3 --matrix " + matrix + " -- true", "has 2 tasks but -n is 3"},
      {"run --matrix " + ragged + " -- true", ragged + ":2"},
      {"run --matrix /nonexistent.mat -- true", "/nonexistent.mat"},
      {"run --policy nope -- true", "nope"},
      {"run --granularity socket -- true", "socket"},
      {"run --runtime intel -- true", "intel"},
      {"run -n two -- true", "two"},
      // A directory without canopy's OpenMP runtime in it.
      {"run --runtime canopy -- true", ""},
  };
  for (const Case& c : cases) {
    const bool no_runtime = c.message.empty();
    Result r = sh(no_runtime ? "CANOPY_OMP_DIR=/tmp " + kCanopy + " " + c.args : kCanopy + " " + c.args);
    if (no_runtime) {
      EXPECT_NE(r.err.find("CANOPY_OMP_DIR='/tmp': expected a directory holding canopy's OpenMP runtime"),
                std::string::npos)
          << r.err;
    }
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("canopy: ", 0), 0u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
  std::remove(matrix.c_str());
  std::remove(ragged.c_str());
}

#ifdef CANOPY_OMP_BINDME
// BindMe's one call: every thread of the team binds itself.
TEST(RunBindMe, EveryThreadBindsWherePlaced) {
  const auto cpus = allowed_cpus();
  const int n = static_cast<int>(std::min<size_t>(cpus.size(), 4));
  for (const std::string args : {"compact", "scatter core", "-"}) {
    Result r = sh("OMP_NUM_THREADS=" + std::to_string(n) + " " + q(CANOPY_OMP_BINDME) + " " + args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.out << r.err;
    std::regex line(R"(omp_bindme: thread=(\d+) of=(\d+) cpu=(\d+) bound=(\S+) expected=(\S+) ok)");
    std::set<int> threads;
    for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
      threads.insert(std::stoi((*it)[1]));
      EXPECT_EQ((*it)[4], (*it)[5]);
      auto bound = canopy::run::parse_cpu_list((*it)[4].str());
      EXPECT_TRUE(std::find(bound.begin(), bound.end(), std::stoi((*it)[3])) != bound.end());
    }
    EXPECT_EQ(static_cast<int>(threads.size()), n) << r.out;
  }
}

TEST(RunBindMe, OnlyTheLastCpuAllowed) {
  const std::string last = std::to_string(allowed_cpus().back());
  Result r = sh("OMP_NUM_THREADS=2 taskset -c " + last + " " + q(CANOPY_OMP_BINDME) + " compact");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("thread=0 of=2 cpu=" + last + " bound=" + last + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("thread=1 of=2 cpu=" + last + " bound=" + last + " "), std::string::npos) << r.out;
}

TEST(RunBindMe, APlanningErrorReachesEveryThread) {
  Result r = sh("OMP_NUM_THREADS=3 " + q(CANOPY_OMP_BINDME) + " no-such-policy");
  EXPECT_EQ(r.status, 2) << r.out;
  std::regex line(R"(omp_bindme: thread=\d+ error=invalid argument: canopy_team_bind: planning the team failed: )"
                  R"(unknown policy 'no-such-policy')");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), line), std::sregex_iterator()), 3)
      << r.out;
}

TEST(RunBindMe, WithAMatrixOfTheWrongSize) {
  const std::string file = ::testing::TempDir() + "canopy_bindme_" + std::to_string(::getpid()) + ".mat";
  std::ofstream(file) << "0 1\n1 0\n";
  Result ok = sh("OMP_NUM_THREADS=2 " + q(CANOPY_OMP_BINDME) + " compact pu " + q(file));
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  Result bad = sh("OMP_NUM_THREADS=3 " + q(CANOPY_OMP_BINDME) + " compact pu " + q(file));
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_NE(bad.out.find("the matrix has 2 tasks but the team has 3 threads"), std::string::npos) << bad.out;
  std::remove(file.c_str());
}
#endif

#ifdef CANOPY_OMP_BIND_C
TEST(RunBindMe, FromC) {
  const int n = static_cast<int>(std::min<size_t>(allowed_cpus().size(), 4));
  Result r = sh("OMP_NUM_THREADS=" + std::to_string(n) + " " + q(CANOPY_OMP_BIND_C));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  std::regex ok(R"(omp_bind_c: thread=\d+ cpu=\d+ expected=\d+ ok)");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), ok), std::sregex_iterator()), n) << r.out;
}
#endif
