// CANOPY_* environment variables of the runtime: good values are read, a bad
// value is a canopy::Error naming the variable and its value; binding and
// placement of the workers on this machine (without assuming its size).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "canopy/binding.hpp"
#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "test_util.hpp"

using canopy::BindMode;
using canopy::RuntimeOptions;

namespace {

// Sets the variables for one test and removes them afterwards.
class Env {
 public:
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [k, v] : vars) {
      setenv(k, v, 1);
      names_.push_back(k);
    }
  }
  ~Env() {
    for (const char* k : names_) unsetenv(k);
  }

 private:
  std::vector<const char*> names_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const canopy::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(RuntimeOptions, DefaultsWithoutVariables) {
  const RuntimeOptions o = RuntimeOptions::from_env();
  EXPECT_EQ(o.num_threads, 0);
  EXPECT_EQ(o.bind, BindMode::Core);
  EXPECT_EQ(o.policy, "");
  EXPECT_FALSE(o.display_affinity);
  EXPECT_FALSE(o.stats);
  EXPECT_EQ(o.data_affinity, canopy::DataAffinity::Write);
}

TEST(RuntimeOptions, ReadsEveryVariable) {
  Env env{{"CANOPY_NUM_THREADS", " 7 "}, {"CANOPY_BIND", "PU"}, {"CANOPY_POLICY", "scatter"},
          {"CANOPY_DISPLAY_AFFINITY", "true"}, {"CANOPY_STATS", "1"}, {"CANOPY_DATA_AFFINITY", " READ"}};
  const RuntimeOptions o = RuntimeOptions::from_env();
  EXPECT_EQ(o.num_threads, 7);
  EXPECT_EQ(o.bind, BindMode::PU);
  EXPECT_EQ(o.policy, "scatter");
  EXPECT_TRUE(o.display_affinity);
  EXPECT_TRUE(o.stats);
  EXPECT_EQ(o.data_affinity, canopy::DataAffinity::Read);
  Env none{{"CANOPY_DATA_AFFINITY", "none"}};
  EXPECT_EQ(RuntimeOptions::from_env().data_affinity, canopy::DataAffinity::None);
}

TEST(RuntimeOptions, EmptyMeansUnset) {
  Env env{{"CANOPY_NUM_THREADS", ""}, {"CANOPY_BIND", ""}};
  EXPECT_EQ(RuntimeOptions::from_env().num_threads, 0);
}

TEST(RuntimeOptions, BadValuesNameTheVariable) {
  struct Case {
    const char* var;
    const char* value;
    const char* expect;
  };
  const Case cases[] = {
      {"CANOPY_NUM_THREADS", "0", "CANOPY_NUM_THREADS='0'"},
      {"CANOPY_NUM_THREADS", "-3", "CANOPY_NUM_THREADS='-3'"},
      {"CANOPY_NUM_THREADS", "4x", "CANOPY_NUM_THREADS='4x'"},
      {"CANOPY_NUM_THREADS", "99999999", "from 1 to"},
      {"CANOPY_BIND", "socket", "CANOPY_BIND='socket': expected core, pu or none"},
      {"CANOPY_POLICY", "nearest", "CANOPY_POLICY='nearest'"},
      {"CANOPY_DISPLAY_AFFINITY", "maybe", "CANOPY_DISPLAY_AFFINITY='maybe'"},
      {"CANOPY_STATS", "2", "CANOPY_STATS='2'"},
      {"CANOPY_DATA_AFFINITY", "owner", "CANOPY_DATA_AFFINITY='owner': expected write, read or none"},
  };
  for (const Case& c : cases) {
    Env env{{c.var, c.value}};
    const std::string msg = error_of([] { RuntimeOptions::from_env(); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.var << "=" << c.value << " gave: " << msg;
    // A runtime built from the environment fails the same way.
    EXPECT_NE(error_of([] { canopy::Runtime rt; }).find(c.var), std::string::npos);
  }
}

TEST(RuntimeOptions, ParseBindMode) {
  EXPECT_EQ(canopy::parse_bind_mode("core"), BindMode::Core);
  EXPECT_EQ(canopy::parse_bind_mode("none"), BindMode::None);
  EXPECT_THROW(canopy::parse_bind_mode("numa"), canopy::Error);
  EXPECT_EQ(canopy::to_string(BindMode::PU), "pu");
}

TEST(RuntimePlacement, WorkersAreBoundWhereThePlacementSays) {
  // On this machine, whatever its size: every worker thread runs bound to
  // the CPUs of its placement, and worker 0 (the caller) too while inside.
  const auto before = canopy::current_thread_binding();
  for (BindMode mode : {BindMode::Core, BindMode::PU}) {
    canopy::Runtime rt(canopy_test::options(2, mode));
    std::vector<std::vector<int>> seen(2);
    std::atomic<int> count{0};
    rt.run([&] {
      seen[0] = canopy::current_thread_binding();
      // Keep spawning until the other worker ran one (it steals).
      while (seen[1].empty() || count.load() < 1) {
        canopy::TaskGroup g;
        for (int i = 0; i < 16; ++i)
          g.spawn([&] {
            if (canopy::Runtime::this_worker_index() == 1 && count.fetch_add(1) == 0)
              seen[1] = canopy::current_thread_binding();
          });
        g.wait();
      }
    });
    for (int w = 0; w < 2; ++w) EXPECT_EQ(seen[w], rt.placement()[w].cpus) << "worker " << w;
    if (mode == BindMode::PU) {
      for (const auto& p : rt.placement()) EXPECT_EQ(p.cpus, std::vector<int>{p.pu_os});
    }
  }
  // The caller's own binding is given back when the runtime ends.
  EXPECT_EQ(canopy::current_thread_binding(), before);
}

TEST(RuntimePlacement, CompactOrderAndPolicies) {
  const canopy::Topology& topo = canopy::process_topology();
  canopy::Runtime compact(canopy_test::options(topo.num_cores()));
  // One worker per core, in core order, on each core's first PU.
  for (int i = 0; i < topo.num_cores(); ++i) {
    EXPECT_EQ(compact.placement()[i].core, i);
    EXPECT_EQ(compact.placement()[i].pu, topo.core(i).pus.front());
  }
  RuntimeOptions o = canopy_test::options(topo.num_cores());
  o.policy = "scatter";
  canopy::Runtime scattered(o);
  std::vector<int> cores;
  for (const auto& p : scattered.placement()) cores.push_back(p.core);
  std::sort(cores.begin(), cores.end());
  EXPECT_EQ(std::unique(cores.begin(), cores.end()), cores.end());  // one per core
}

TEST(RuntimePlacement, DisplayAffinityPrintsOneLinePerWorker) {
  RuntimeOptions o = canopy_test::options(3);
  o.display_affinity = true;
  testing::internal::CaptureStderr();
  { canopy::Runtime rt(o); }
  const std::string out = testing::internal::GetCapturedStderr();
  for (int w = 0; w < 3; ++w) EXPECT_NE(out.find("worker " + std::to_string(w) + " pu L#"), std::string::npos) << out;
  EXPECT_NE(out.find("host "), std::string::npos);
  EXPECT_NE(out.find("numa "), std::string::npos);
}

// Known work with CANOPY_STATS=1, on a synthetic machine of two NUMA nodes
// of one core (worker 0 on node 0, worker 1 on node 1): 100 tasks, each
// hinted strictly at worker i % 2, and 4 data-flow tasks reading 1 MB that
// lies on node 1, hinted strictly at node i % 2. Every number of the table
// is then known: per worker 52 tasks, all hinted and taken here, no steals
// (strict tasks are never on a deque), 2 MB local on node 1 and
// 2 MB remote on node 0. Checked in Runtime::stats() and in the table the
// runtime prints on stderr when it ends.
TEST(RuntimePlacement, StatsAtTheEndCountTheWorkDone) {
  Env env{{"CANOPY_STATS", "1"}, {"CANOPY_NUM_THREADS", "2"}, {"CANOPY_BIND", "none"}};
  constexpr int kTasks = 100, kReads = 4;
  constexpr std::size_t kBytes = 1'000'000;
  std::vector<char> buf(kBytes);
  const canopy::Data d = canopy::data_register(buf.data(), buf.size());
  canopy::detail::data_set_location_for_testing(d, {0, kBytes});
  std::vector<canopy::WorkerStats> st;
  std::atomic<int> ran{0};
  testing::internal::CaptureStderr();
  {
    canopy::Runtime rt(RuntimeOptions::from_env(), canopy::Topology::from_synthetic("numa:2 core:1 pu:1"));
    ASSERT_TRUE(rt.options().stats);
    ASSERT_EQ(rt.worker_numa_node(1), 1);
    rt.run([&] {
      canopy::TaskGroup g;
      for (int i = 0; i < kTasks; ++i) g.spawn(canopy::Affinity::worker(i % 2, /*strict=*/true), [&] { ++ran; });
      g.wait();
      for (int i = 0; i < kReads; ++i)
        canopy::submit({canopy::read(d)}, [&] { ++ran; }, canopy::Affinity::node(i % 2, /*strict=*/true));
      canopy::wait_all();
    });
    st = rt.stats();
  }
  const std::string out = testing::internal::GetCapturedStderr();
  canopy::data_free(d);
  ASSERT_EQ(ran.load(), kTasks + kReads);

  // Per worker: tasks, steals (core, numa, remote), hinted here / away,
  // bytes local / remote.
  constexpr std::uint64_t kPerWorker = (kTasks + kReads) / 2;
  ASSERT_EQ(st.size(), 2u);
  std::uint64_t tasks = 0;
  for (int w = 0; w < 2; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    tasks += st[w].tasks_run;
    EXPECT_EQ(st[w].tasks_run, kPerWorker);
    EXPECT_EQ(st[w].steals_same_core + st[w].steals_same_numa + st[w].steals_remote, 0u);
    EXPECT_EQ(st[w].hinted_here, kPerWorker);
    EXPECT_EQ(st[w].hinted_away, 0u);
    EXPECT_EQ(st[w].bytes_local, w == 1 ? 2 * kBytes : 0);
    EXPECT_EQ(st[w].bytes_remote, w == 0 ? 2 * kBytes : 0);
  }
  EXPECT_EQ(tasks, static_cast<std::uint64_t>(kTasks + kReads));

  // The table: a title, a header, one row per worker, the local share;
  // then the counters and the energy (counters_test.cpp checks those).
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_GE(lines.size(), 6u) << out;
  EXPECT_TRUE(lines[5].rfind("canopy stats: counters", 0) == 0 || lines[5].rfind("canopy stats: energy", 0) == 0)
      << out;
  EXPECT_EQ(lines[0], "canopy stats: 2 workers") << out;
  std::istringstream header(lines[1]);
  std::vector<std::string> columns{std::istream_iterator<std::string>(header), std::istream_iterator<std::string>()};
  const std::vector<std::string> expected_columns{"worker",   "numa",        "tasks",       "steals.core",
                                                  "steals.numa", "steals.remote", "parks",    "parked.ms",
                                                  "hinted.here", "hinted.away",   "local.MB", "remote.MB"};
  ASSERT_EQ(columns, expected_columns) << out;
  for (int w = 0; w < 2; ++w) {
    std::istringstream row(lines[2 + w]);
    std::vector<std::string> v{std::istream_iterator<std::string>(row), std::istream_iterator<std::string>()};
    ASSERT_EQ(v.size(), columns.size()) << lines[2 + w];
    const std::string n = std::to_string(kPerWorker);
    // parks and parked.ms depend on timing: numbers, at least what stats() saw.
    const std::vector<std::string> known{std::to_string(w), std::to_string(w), n, "0", "0", "0", v[6], v[7], n, "0",
                                         w == 1 ? "2.0" : "0.0", w == 0 ? "2.0" : "0.0"};
    EXPECT_EQ(v, known) << out;
    EXPECT_GE(std::stoull(v[6]), st[w].parks) << out;
    EXPECT_GE(std::stod(v[7]), 0.0) << out;
  }
  EXPECT_EQ(lines[4], "canopy stats: 50.0% of 4.0 MB accessed on the worker's own NUMA node") << out;
}
