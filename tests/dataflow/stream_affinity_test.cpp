// Automatic affinity of a submit stream (canopy/auto_affinity.hpp,
// src/dataflow/stream_affinity.cpp): recurring tasks recognised by what
// they access, the iteration found (also when a program alternates two
// buffer sets), its matrix (a pipeline gives its chain), the mapping applied
// (tasks on their workers unless stolen), re-mapping when the pattern
// changes and never on noise (other durations, a one-off task), a
// placement applied by hand, and nothing at all without auto or with one
// worker.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "canopy/auto_affinity.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "canopy.h"
#include "canopy_dataflow.h"
#include "canopy_runtime.h"
#include "test_util.hpp"

using canopy::AutoAffinity;
using canopy::Runtime;
using namespace dataflow_test;

namespace {

constexpr std::size_t kBytes = 4096;

Runtime two_node_runtime(AutoAffinity mode = AutoAffinity::Auto) {
  canopy::RuntimeOptions o = options(4);
  o.affinity = mode;
  return Runtime(o, canopy::Topology::from_synthetic("numa:2 core:2 pu:1"));
}

void busy_us(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// `chains` rings of `stages` tasks: stage k of chain c reads buffer k and
// writes buffer k + 1 of the chain (the last stage writes buffer 0 back),
// submitted interleaved (stage by stage), so the order says nothing of the
// chains. Each body notes the worker it ran on.
struct Rings {
  int chains, stages;
  Handles h;
  std::vector<std::atomic<int>> ran;
  std::atomic<int> noise_us{0};  // stage 1 busy-waits this long: other durations
  Rings(int c, int s)
      : chains(c), stages(s), h(static_cast<std::size_t>(c * s), kBytes), ran(static_cast<std::size_t>(c * s)) {}
  canopy::Data buf(int c, int k) const { return h[static_cast<std::size_t>(c * stages + k % stages)]; }
  // One iteration's submissions (from inside a runtime).
  void submit_iteration() {
    for (int k = 0; k < stages; ++k)
      for (int c = 0; c < chains; ++c) {
        const int t = k * chains + c;  // the submission order: the rows of stream_matrix
        canopy::submit({canopy::read(buf(c, k)), canopy::write(buf(c, k + 1))}, [this, t, k] {
          ran[static_cast<std::size_t>(t)].store(Runtime::this_worker_index());
          if (k == 1) busy_us(noise_us.load());
        });
      }
  }
  // One iteration on rt (from outside it), then a wait.
  void iterate(Runtime& rt) {
    rt.run([&] {
      submit_iteration();
      canopy::wait_all();
    });
  }
};

}  // namespace

TEST(StreamAffinity, RecurringTasksAreRecognisedMatrixIsTheChainAndItIsMapped) {
  Runtime rt = two_node_runtime();
  Rings r(4, 5);
  // The first iteration's tasks are new; the second starts at the first
  // task that recurs (the anchor); the third's first task ends it.
  for (int i = 0; i < 3; ++i) r.iterate(rt);
  EXPECT_EQ(canopy::stream_affinity(rt).affinity.mappings, 0);  // one iteration seen: nothing confirmed yet
  r.iterate(rt);  // its first task ends the third iteration, equal to the second: mapped
  const canopy::StreamReport rep = canopy::stream_affinity(rt);
  EXPECT_EQ(rep.affinity.mappings, 1);
  EXPECT_EQ(rep.signatures, 20u);
  EXPECT_EQ(rep.iteration, 20u);
  EXPECT_EQ(rep.recurring, 20u);
  ASSERT_EQ(rep.workers.size(), 20u);
  const canopy::TaskMatrix m = canopy::stream_matrix(rt);
  ASSERT_EQ(m.matrix.size(), 20);
  ASSERT_EQ(m.labels.size(), 20u);
  ASSERT_EQ(m.work.size(), 20u);
  EXPECT_EQ(m.labels[0].rfind("s0: ", 0), 0u) << m.labels[0];
  // Row t = stage t / 4 of chain t % 4: a task and the next stage of its
  // chain share the buffer one writes and the other reads, and nothing else.
  for (int a = 0; a < 20; ++a)
    for (int b = 0; b < 20; ++b) {
      const bool same_chain = a % 4 == b % 4;
      const int ka = a / 4, kb = b / 4;
      const bool next = same_chain && ((ka + 1) % 5 == kb || (kb + 1) % 5 == ka);
      EXPECT_EQ(m.matrix.at(a, b), next ? static_cast<double>(kBytes) : 0.0) << a << " " << b;
    }
  // Each ring on one worker, the four on four workers.
  for (int t = 0; t < 20; ++t) EXPECT_EQ(rep.workers[t], rep.workers[t % 4]) << t;
  std::vector<int> first(rep.workers.begin(), rep.workers.begin() + 4);
  std::sort(first.begin(), first.end());
  EXPECT_EQ(std::unique(first.begin(), first.end()), first.end());
}

TEST(StreamAffinity, TasksRunWhereTheyArePlacedUnlessStolen) {
  Runtime rt = two_node_runtime();
  Rings r(4, 5);
  for (int i = 0; i < 4; ++i) r.iterate(rt);
  const canopy::StreamReport rep = canopy::stream_affinity(rt);
  ASSERT_EQ(rep.workers.size(), 20u);
  const auto before = rt.stats();
  r.iterate(rt);
  const auto after = rt.stats();
  std::uint64_t hinted = 0, away = 0;
  for (std::size_t k = 0; k < after.size(); ++k) {
    hinted += after[k].hinted_here + after[k].hinted_away - before[k].hinted_here - before[k].hinted_away;
    away += after[k].hinted_away - before[k].hinted_away;
  }
  EXPECT_GE(hinted, 20u);  // every task of the iteration went through its worker's queue
  int elsewhere = 0;
  for (int t = 0; t < 20; ++t) elsewhere += r.ran[static_cast<std::size_t>(t)].load() != rep.workers[t];
  EXPECT_LE(static_cast<std::uint64_t>(elsewhere), away) << "tasks ran off their placed worker without a steal";
}

TEST(StreamAffinity, AStreamThatRunsAheadIsMappedOnceItsTasksAreTimed) {
  Runtime rt = two_node_runtime();
  Rings r(2, 4);
  // Twenty iterations submitted before any wait: the mapping is made when
  // the confirmed iteration's tasks have run, by whoever completes that.
  rt.run([&] {
    for (int i = 0; i < 20; ++i) r.submit_iteration();
    canopy::wait_all();
  });
  EXPECT_EQ(canopy::stream_affinity(rt).affinity.mappings, 1);
  EXPECT_EQ(canopy::stream_affinity(rt).recurring, 8u);
}

TEST(StreamAffinity, AlternatingBuffersMakeAnIterationOfTwoLoops) {
  Runtime rt = two_node_runtime();
  Handles a(8, kBytes), b(8, kBytes);
  for (int loop = 0; loop < 8; ++loop)
    rt.run([&] {
      const Handles& src = loop % 2 ? b : a;
      const Handles& dst = loop % 2 ? a : b;
      for (std::size_t k = 0; k < 8; ++k)
        canopy::submit({canopy::read(src[k]), canopy::read(src[(k + 1) % 8]), canopy::write(dst[k])}, [] {});
      canopy::wait_all();
    });
  const canopy::StreamReport rep = canopy::stream_affinity(rt);
  EXPECT_EQ(rep.affinity.mappings, 1);
  EXPECT_EQ(rep.signatures, 16u);
  EXPECT_EQ(rep.iteration, 16u);
  EXPECT_EQ(rep.recurring, 16u);
}

TEST(StreamAffinity, RemapsWhenThePatternChangesNeverOnNoise) {
  Runtime rt = two_node_runtime();
  Rings r(4, 5);
  for (int i = 0; i < 4; ++i) r.iterate(rt);
  ASSERT_EQ(canopy::stream_affinity(rt).affinity.mappings, 1);
  const std::vector<int> placed = canopy::stream_affinity(rt).workers;
  // Other durations.
  for (int i = 0; i < 4; ++i) {
    r.noise_us = 30 * i;
    r.iterate(rt);
  }
  EXPECT_EQ(canopy::stream_affinity(rt).affinity.mappings, 1);
  // A one-off task inside one iteration.
  Handles extra(1, kBytes);
  rt.run([&] {
    canopy::submit({canopy::write(extra[0])}, [] {});
    canopy::wait_all();
  });
  for (int i = 0; i < 3; ++i) r.iterate(rt);
  EXPECT_EQ(canopy::stream_affinity(rt).affinity.mappings, 1);
  EXPECT_EQ(canopy::stream_affinity(rt).workers, placed);
  // Another pattern (other handles): once the old anchor is overdue, the
  // new pattern is observed and mapped anew.
  Rings other(2, 3);
  for (int i = 0; i < 16; ++i) other.iterate(rt);
  const canopy::StreamReport rep = canopy::stream_affinity(rt);
  EXPECT_EQ(rep.affinity.mappings, 2);
  EXPECT_EQ(rep.recurring, 6u);
}

TEST(StreamAffinity, APlacementAppliedByHandIsKept) {
  Runtime rt = two_node_runtime();
  Rings r(4, 5);
  for (int i = 0; i < 4; ++i) r.iterate(rt);
  const canopy::Placement p = canopy::compute_placement(rt, canopy::stream_matrix(rt), "scatter");
  canopy::apply_stream_placement(rt, p);
  const std::vector<int> want = canopy::placement_workers(rt, p);
  for (int i = 0; i < 3; ++i) r.iterate(rt);
  const canopy::StreamReport rep = canopy::stream_affinity(rt);
  EXPECT_TRUE(rep.manual);
  EXPECT_EQ(rep.workers, want);
  EXPECT_EQ(rep.affinity.mappings, 1);
  canopy::Placement wrong = p;
  wrong.task_pu.pop_back();
  EXPECT_THROW(canopy::apply_stream_placement(rt, wrong), canopy::Error);
}

TEST(StreamAffinity, NothingWithoutAutoOrWithOneWorker) {
  {
    Runtime rt = two_node_runtime(AutoAffinity::None);
    Rings r(2, 3);
    for (int i = 0; i < 4; ++i) r.iterate(rt);
    EXPECT_EQ(canopy::stream_affinity(rt).signatures, 0u);
    EXPECT_THROW(canopy::stream_matrix(rt), canopy::Error);
  }
  canopy::RuntimeOptions o = options(1);
  o.affinity = AutoAffinity::Auto;
  Runtime one(o);
  Rings r(2, 3);
  for (int i = 0; i < 4; ++i) r.iterate(one);
  EXPECT_EQ(canopy::stream_affinity(one).signatures, 0u);
}

// The calls from C (canopy_dataflow.h) on a runtime made from the
// environment (CANOPY_AFFINITY=auto).
TEST(StreamAffinity, TheCallsFromC) {
  ::setenv("CANOPY_AFFINITY", "auto", 1);
  ::setenv("CANOPY_NUM_THREADS", "2", 1);
  ::setenv("CANOPY_BIND", "none", 1);
  canopy_runtime_t* rt = nullptr;
  const canopy_status_t made = canopy_runtime_create(&rt, nullptr);  // options from the environment
  for (const char* v : {"CANOPY_AFFINITY", "CANOPY_NUM_THREADS", "CANOPY_BIND"}) ::unsetenv(v);
  ASSERT_EQ(made, CANOPY_OK) << canopy_last_error();
  canopy_matrix_t* m = nullptr;
  EXPECT_EQ(canopy_stream_matrix(rt, &m), CANOPY_EINVAL);  // nothing submitted yet
  EXPECT_NE(std::string(canopy_last_error()).find("stream"), std::string::npos) << canopy_last_error();
  int worker = -2;
  EXPECT_EQ(canopy_stream_task_worker(rt, 0, &worker), CANOPY_OK);
  EXPECT_EQ(worker, -1);
  Handles h(4, kBytes);
  auto nothing = [](void*) {};
  for (int it = 0; it < 6; ++it) {
    for (std::size_t k = 0; k < 3; ++k) {
      const canopy_access_t acc[2] = {{{h[k].index, h[k].generation}, CANOPY_ACCESS_READ},
                                      {{h[k + 1].index, h[k + 1].generation}, CANOPY_ACCESS_WRITE}};
      ASSERT_EQ(canopy_submit(rt, acc, 2, nullptr, nothing, nullptr), CANOPY_OK) << canopy_last_error();
    }
    ASSERT_EQ(canopy_wait_all(rt), CANOPY_OK);
  }
  ASSERT_EQ(canopy_stream_matrix(rt, &m), CANOPY_OK) << canopy_last_error();
  int n = 0;
  double w = 0;
  EXPECT_EQ(canopy_matrix_size(m, &n), CANOPY_OK);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(canopy_matrix_get(m, 0, 1, &w), CANOPY_OK);
  EXPECT_EQ(w, static_cast<double>(kBytes));  // 1 reads what 0 wrote
  canopy_placement_t* p = nullptr;
  ASSERT_EQ(canopy_placement_create_for_runtime(&p, rt, m, "scatter"), CANOPY_OK) << canopy_last_error();
  EXPECT_EQ(canopy_stream_apply(rt, p), CANOPY_OK) << canopy_last_error();
  EXPECT_EQ(canopy_stream_task_worker(rt, 2, &worker), CANOPY_OK);
  EXPECT_GE(worker, 0);
  EXPECT_EQ(canopy_stream_task_worker(rt, 3, &worker), CANOPY_ERANGE);
  EXPECT_EQ(canopy_stream_apply(rt, nullptr), CANOPY_EINVAL);
  canopy_placement_destroy(p);
  canopy_matrix_destroy(m);
  canopy_runtime_destroy(rt);
}
