// Helpers of the profiling tests (profile_runner.hpp).
#include "profile_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>

#include <gtest/gtest.h>

#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

namespace canopy::test {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string fresh_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "x";
  for (char& c : test)
    if (c == '/') c = '_';  // parameterised tests: Suite/Test/param
  std::string dir = ::testing::TempDir() + "canopy_profile_" + test + "_" + name + "_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

Ran run(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  const std::string dir = fresh_dir("run");
  const std::string out = dir + "/out", err = dir + "/err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::setpgid(0, 0);  // its own group: a timeout kills the program under canopy too
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  // A hang (a deadlock in the profiled program, say) fails the test instead
  // of blocking the suite: killed after two minutes.
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (waited_ms == 120000) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    ::usleep(10000);
  }
  Ran r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

double top_k_recall(const CommMatrix& truth, const CommMatrix& measured) {
  const auto t = truth.dense(), m = measured.dense();
  const int n = truth.size();
  double hits = 0, wanted = 0;
  for (int i = 0; i < n; ++i) {
    std::vector<int> order;
    for (int j = 0; j < n; ++j)
      if (j != i) order.push_back(j);
    // Heaviest first; on a tie the non-partner first (no credit for luck).
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const double ma = i < measured.size() && a < measured.size() ? m[i][a] : 0;
      const double mb = i < measured.size() && b < measured.size() ? m[i][b] : 0;
      if (ma != mb) return ma > mb;
      return (t[i][a] > 0) < (t[i][b] > 0);
    });
    int k = 0;
    for (int j = 0; j < n; ++j) k += t[i][j] > 0;
    for (int r = 0; r < k; ++r) {
      const int j = order[static_cast<size_t>(r)];
      const double mij = i < measured.size() && j < measured.size() ? m[i][j] : 0;
      hits += t[i][j] > 0 && mij > 0;
    }
    wanted += k;
  }
  return wanted == 0 ? 1 : hits / wanted;
}

double placement_cost_ratio(const CommMatrix& truth, const CommMatrix& measured, const std::string& topology) {
  const Topology topo = Topology::from_synthetic(topology);
  const std::string policy = default_policy();
  const Placement from_truth = map_tasks(topo, truth, policy);
  const Placement from_measured = map_tasks(topo, measured, policy);
  const double best = evaluate(topo, truth, from_truth).weighted;
  const double got = evaluate(topo, truth, from_measured).weighted;
  return best == 0 ? (got == 0 ? 1 : 1e9) : got / best;
}

}  // namespace canopy::test
