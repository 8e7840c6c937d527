// The one-worker inline path (src/dataflow/inline.hpp): worker 0 of a
// one-worker runtime runs a top-level task at submission, unregistered, when
// nothing else is unfinished. Each test first uses its handles once (a
// handle's first submission takes the checked path), so that what follows
// goes through the inline path: concurrent submitters from other threads
// (which must wait for an inline body, never overlap it), a body that
// throws (its writes poison, its dependents are cancelled), a body that
// submits children (which finish after it: its dependents wait for them),
// and the per-handle totals, on one NUMA node and on several.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "canopy/topology.hpp"
#include "test_util.hpp"

using canopy::Data;
using canopy::Runtime;
using namespace dataflow_test;

namespace {

// One task per handle, so that later submissions find them known.
void touch(const Handles& h) {
  for (std::size_t i = 0; i < h.size(); ++i) canopy::submit({canopy::read(h[i])}, [] {});
  canopy::wait_all();
}

void spin_for(std::chrono::microseconds us) {
  const auto end = std::chrono::steady_clock::now() + us;
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace

TEST(DataflowInline, RunsAtSubmissionAndCountsItsBytes) {
  Runtime rt(options(1));
  Handles h(3, 128);
  int x = 0;
  rt.run([&] {
    touch(h);
    const auto before = canopy::data_locality(h[1]);
    canopy::submit({canopy::read(h[0]), canopy::write(h[1]), canopy::read_write(h[2])}, [&] { x = 1; });
    EXPECT_EQ(x, 1);  // inside submit
    const auto after = canopy::data_locality(h[1]);
    EXPECT_EQ(after.accesses, before.accesses + 1);
    ASSERT_EQ(before.accesses, 1u);  // touch's
    EXPECT_EQ(after.local_bytes, 2 * before.local_bytes);
    EXPECT_EQ(after.remote_bytes, 2 * before.remote_bytes);
    canopy::wait_all();
  });
}

TEST(DataflowInline, OtherThreadsWaitForAnInlineBody) {
  // Worker 0 runs a long body inline that writes h; another thread submits
  // a reader of h meanwhile: the reader must come after the body (its
  // submission overlapped the body's, so it may not see the old value and
  // must not run during it).
  Runtime rt(options(1));
  Handles h(1);
  std::atomic<bool> started{false};
  int value = 0;
  int seen = -1;
  rt.run([&] { touch(h); });
  std::thread other([&] {
    while (!started.load()) std::this_thread::yield();
    canopy::submit(rt, {canopy::read(h[0])}, [&] { seen = value; });
    canopy::wait(rt, h[0]);
  });
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      started.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      value = 42;
    });
    canopy::wait_all();
  });
  other.join();
  rt.run([&] { canopy::wait_all(); });
  EXPECT_EQ(seen, 42);
}

class DataflowOutside : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Workers, DataflowOutside, ::testing::ValuesIn(kWorkerCounts),
                         [](const auto& info) { return worker_name(info.param); });

TEST_P(DataflowOutside, ConcurrentExternalSubmittersStayExact) {
  // Worker 0 and three outside threads increment shared counters through
  // read-write tasks (plain ints: any overlap is a lost update, and a data
  // race under ThreadSanitizer), and each keeps a private sequence. On one
  // worker, worker 0's tasks take the inline path while the outside threads
  // submit; on any count, the outside threads (in extra slots, entered for
  // each call) make tasks ready that must not stay behind when they leave.
  constexpr int kShared = 4, kThreads = 3;
  const int per = static_cast<int>(4000 / (kScaleDown > 1 ? 10 : 1));
  Runtime rt(options(GetParam()));
  Handles shared(kShared), own(kThreads + 1);
  std::vector<long> counter(kShared, 0);
  std::vector<int> next(kThreads + 1, 0);
  std::vector<int> bad(kThreads + 1, 0);
  rt.run([&] {
    touch(shared);
    touch(own);
  });
  std::atomic<bool> go{false};
  auto work = [&](int me, bool outside) {
    while (!go.load()) std::this_thread::yield();
    for (int k = 0; k < per; ++k) {
      const int s = (k + me) % kShared;
      auto body = [&, me, s, k] {
        ++counter[s];
        if (next[me] != k) ++bad[me];
        next[me] = k + 1;
        if (k % 256 == 0) spin_for(std::chrono::microseconds(50));
      };
      if (outside)
        canopy::submit(rt, {canopy::read_write(shared[s]), canopy::read_write(own[me])}, body);
      else
        canopy::submit({canopy::read_write(shared[s]), canopy::read_write(own[me])}, body);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t <= kThreads; ++t) threads.emplace_back([&, t] { work(t, true); });
  rt.run([&] {
    go.store(true);
    work(0, false);
    canopy::wait_all();
  });
  for (auto& t : threads) t.join();
  canopy::wait_all(rt);
  long total = 0;
  for (long c : counter) total += c;
  EXPECT_EQ(total, static_cast<long>(per) * (kThreads + 1));
  for (int t = 0; t <= kThreads; ++t) {
    EXPECT_EQ(bad[t], 0) << "submitter " << t;
    EXPECT_EQ(next[t], per) << "submitter " << t;
  }
}

TEST(DataflowInline, AFailedBodyPoisonsItsWritesAndCountsItsBytes) {
  Runtime rt(options(1));
  Handles h(3);
  bool reader_ran = false, other_ran = false, after_ran = false;
  rt.run([&] {
    touch(h);
    const auto before = canopy::data_locality(h[0]);
    canopy::submit({canopy::read(h[2]), canopy::write(h[0])}, [] { throw std::runtime_error("inline failure"); });
    EXPECT_EQ(canopy::data_locality(h[0]).accesses, before.accesses + 1);  // it ran
    canopy::submit({canopy::read(h[0]), canopy::write(h[1])}, [&] { reader_ran = true; });  // cancelled
    canopy::submit({canopy::read(h[1])}, [&] { reader_ran = true; });                        // cancelled in turn
    canopy::submit({canopy::read(h[2])}, [&] { other_ran = true; });                         // independent
    EXPECT_EQ(canopy::data_locality(h[1]).accesses, before.accesses);  // cancelled: counts nothing
    try {
      canopy::wait_all();
      ADD_FAILURE() << "wait_all did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "inline failure");
    }
    canopy::submit({canopy::read(h[0])}, [&] { after_ran = true; });  // clean again
    canopy::wait_all();
  });
  EXPECT_FALSE(reader_ran);
  EXPECT_TRUE(other_ran);
  EXPECT_TRUE(after_ran);
}

TEST(DataflowInline, ChildrenThatOutliveTheBodyHoldItsDependents) {
  // The children carry a worker hint: they are queued, not run at once, so
  // the inline body ends before them and the task must be registered for
  // its dependents to wait.
  Runtime rt(options(1));
  Handles h(2);
  int a = 0, seen = -1, children_done = 0;
  rt.run([&] {
    touch(h);
    canopy::submit({canopy::write(h[0])}, [&] {
      a = 1;
      for (int k = 0; k < 3; ++k)
        canopy::submit({canopy::read_write(h[0])}, [&] { a = a * 10 + 1; ++children_done; },
                       canopy::Affinity::worker(0));
    });
    canopy::submit({canopy::read(h[0]), canopy::write(h[1])}, [&] { seen = a; });
    canopy::wait_all();
    EXPECT_EQ(children_done, 3);
    EXPECT_EQ(seen, 1111);
    // And the flow goes back to the inline path afterwards.
    canopy::submit({canopy::read(h[1])}, [&] { seen = -2; });
    EXPECT_EQ(seen, -2);
    canopy::wait_all();
  });
}

TEST(DataflowInline, ChildrenDoneWithinTheBodyAndAFailingChild) {
  Runtime rt(options(1));
  Handles h(2);
  bool dependent_ran = false;
  int x = 0;
  rt.run([&] {
    touch(h);
    // Children that ran at once (nothing queued at the end of the body).
    canopy::submit({canopy::write(h[0])}, [&] {
      canopy::submit({canopy::write(h[0])}, [&] { x = 5; });
    });
    EXPECT_EQ(x, 5);
    // A child that throws, queued: the parent fails after its body, its
    // dependents are cancelled, the error reaches the top-level wait.
    canopy::submit({canopy::write(h[0])}, [&] {
      canopy::submit({canopy::write(h[0])}, [] { throw std::runtime_error("child failed"); },
                     canopy::Affinity::worker(0));
    });
    canopy::submit({canopy::read(h[0])}, [&] { dependent_ran = true; });
    EXPECT_THROW(canopy::wait_all(), std::runtime_error);
    canopy::submit({canopy::write(h[1])}, [&] { x = 6; });
    EXPECT_EQ(x, 6);
    canopy::wait_all();
  });
  EXPECT_FALSE(dependent_ran);
}

TEST(DataflowInline, AThrowingCopyLeavesTheFlowUsable) {
  struct Bomb {
    bool armed = true;
    Bomb() = default;
    Bomb(const Bomb& o) : armed(o.armed) {
      if (armed) throw std::runtime_error("copy");
    }
    void operator()() const {}
  };
  Runtime rt(options(1));
  Handles h(1);
  int x = 0;
  rt.run([&] {
    touch(h);
    Bomb b;
    EXPECT_THROW(canopy::submit({canopy::write(h[0])}, b), std::runtime_error);
    canopy::submit({canopy::write(h[0])}, [&] { x = 1; });
    EXPECT_EQ(x, 1);
    canopy::wait_all();
  });
}

TEST(DataflowInline, SeveralNodesCountLocalAndRemoteBytes) {
  // One worker on node 0 of a synthetic two-node machine: the inline path's
  // loop for several nodes.
  Runtime rt(options(1), canopy::Topology::from_synthetic("numa:2 core:1 pu:1"));
  Handles h(2, 4096);
  canopy::detail::data_set_location_for_testing(h[0], {0, 4096});  // node 1: remote
  canopy::detail::data_set_location_for_testing(h[1], {4096, 0});  // node 0: local
  int ran = 0;
  rt.run([&] {
    touch(h);
    for (int i = 0; i < 10; ++i) canopy::submit({canopy::read(h[0]), canopy::write(h[1])}, [&] { ++ran; });
    EXPECT_EQ(ran, 10);
    canopy::wait_all();
  });
  const canopy::DataLocality a = canopy::data_locality(h[0]);
  const canopy::DataLocality b = canopy::data_locality(h[1]);
  EXPECT_EQ(a.accesses, 11u);
  EXPECT_EQ(a.remote_bytes, 11u * 4096);
  EXPECT_EQ(a.local_bytes, 0u);
  EXPECT_EQ(b.local_bytes, 11u * 4096);
  EXPECT_EQ(b.remote_bytes, 0u);
  std::uint64_t local = 0, remote = 0;
  for (const canopy::WorkerStats& s : rt.stats()) {
    local += s.bytes_local;
    remote += s.bytes_remote;
  }
  EXPECT_EQ(local, 11u * 4096);
  EXPECT_EQ(remote, 11u * 4096);
}
