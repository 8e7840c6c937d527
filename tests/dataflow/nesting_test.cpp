// Nested submission (children ordered among themselves; a task's
// dependents wait for it and all its descendants), wait(Data), exceptions
// (rethrown by the next wait; dependents cancelled; the flow usable after),
// and bad use (null, freed handles, too many accesses) as canopy::Error.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "test_util.hpp"

using canopy::Data;
using canopy::Runtime;
using namespace dataflow_test;

namespace {

class DataflowNesting : public ::testing::TestWithParam<int> {
 protected:
  int workers() const { return GetParam(); }
};

void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no canopy::Error (expected one containing '" << part << "')";
  } catch (const canopy::Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// A tree of tasks: each writes its value, then submits two children that
// add to it in order (read-write on the same handle), recursively. Unsigned:
// the value wraps around, and the order of operations still shows.
void grow(Data d, std::uint64_t* value, int depth) {
  if (depth == 0) return;
  canopy::submit({canopy::read_write(d)}, [d, value, depth] {
    *value = *value * 2;
    grow(d, value, depth - 1);
  });
  canopy::submit({canopy::read_write(d)}, [d, value, depth] {
    *value = *value + 1;
    grow(d, value, depth - 1);
  });
}

std::uint64_t grow_seq(std::uint64_t v, int depth) {
  if (depth == 0) return v;
  v = grow_seq(v * 2, depth - 1);
  return grow_seq(v + 1, depth - 1);
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Workers, DataflowNesting, ::testing::ValuesIn(kWorkerCounts),
                         [](const auto& info) { return worker_name(info.param); });

TEST_P(DataflowNesting, DependentsWaitForChildren) {
  Runtime rt(options(workers()));
  Handles h(2);
  std::vector<int> a;
  int seen = 0;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      // Children on the parent's handle: ordered among themselves.
      for (int i = 0; i < 100; ++i)
        canopy::submit({canopy::read_write(h[0])}, [&a, i] {
          std::this_thread::yield();
          a.push_back(i);
        });
      // A child on a handle the parent does not list.
      canopy::submit({canopy::write(h[1])}, [] {});
    });
    // Submitted after the parent: must see every child's work.
    canopy::submit({canopy::read(h[0])}, [&] { seen = static_cast<int>(a.size()); });
    canopy::wait_all();
  });
  EXPECT_EQ(seen, 100);
  ASSERT_EQ(a.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a[i], i);
}

TEST_P(DataflowNesting, RecursiveTreeMatchesTheSequentialResult) {
  Runtime rt(options(workers()));
  Handles h(1);
  std::uint64_t value = 1;
  std::uint64_t after = 0;
  const int depth = kScaleDown > 1 ? 7 : 10;
  rt.run([&] {
    canopy::submit({canopy::read_write(h[0])}, [&] { grow(h[0], &value, depth); });
    canopy::submit({canopy::read(h[0])}, [&] { after = value; });
    canopy::wait_all();
  });
  EXPECT_EQ(value, grow_seq(1, depth));
  EXPECT_EQ(after, value);
}

TEST_P(DataflowNesting, WaitAllInsideATaskWaitsForItsChildrenOnly) {
  Runtime rt(options(workers()));
  Handles h(2);
  std::atomic<int> children{0};
  int seen_inside = -1;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      for (int i = 0; i < 20; ++i) canopy::submit({canopy::read(h[1])}, [&] { ++children; });
      canopy::wait_all();
      seen_inside = children.load();
    });
    canopy::wait_all();
  });
  EXPECT_EQ(seen_inside, 20);
}

TEST_P(DataflowNesting, WaitForOneHandle) {
  Runtime rt(options(workers()));
  Handles h(2);
  std::atomic<int> a_done{0};
  int a_seen = -1;
  rt.run([&] {
    for (int i = 0; i < 10; ++i)
      canopy::submit({canopy::read_write(h[0])}, [&] {
        std::this_thread::yield();
        ++a_done;
      });
    for (int i = 0; i < 10; ++i) canopy::submit({canopy::read_write(h[1])}, [] { std::this_thread::yield(); });
    canopy::wait(h[0]);
    a_seen = a_done.load();
    canopy::wait(h[0]);  // nothing pending: returns at once
    canopy::wait_all();
  });
  EXPECT_EQ(a_seen, 10);
  // From outside the runtime, and for a handle never used in this runtime.
  Handles other(1);
  canopy::wait(rt, other[0]);
  canopy::submit(rt, {canopy::write(h[0])}, [&] { ++a_done; });
  canopy::wait(rt, h[0]);
  EXPECT_EQ(a_done.load(), 11);
}

TEST_P(DataflowNesting, ExceptionReachesWaitAndCancelsDependents) {
  Runtime rt(options(workers()));
  Handles h(3);
  std::atomic<int> dependents_ran{0}, unrelated_ran{0}, after_ran{0};
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [] { throw std::runtime_error("task failed"); });
    // Reads what the failed task wrote: cancelled, and so are its own dependents.
    canopy::submit({canopy::read(h[0]), canopy::write(h[1])}, [&] { ++dependents_ran; });
    canopy::submit({canopy::read(h[1])}, [&] { ++dependents_ran; });
    canopy::submit({canopy::write(h[0])}, [&] { ++dependents_ran; });
    // Independent of it: runs.
    canopy::submit({canopy::write(h[2])}, [&] { ++unrelated_ran; });
    try {
      canopy::wait_all();
      ADD_FAILURE() << "wait_all did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "task failed");
    }
    // Reported: the flow is clean again.
    canopy::submit({canopy::read_write(h[0]), canopy::read(h[1])}, [&] { ++after_ran; });
    canopy::wait_all();
  });
  EXPECT_EQ(dependents_ran.load(), 0);
  EXPECT_EQ(unrelated_ran.load(), 1);
  EXPECT_EQ(after_ran.load(), 1);
}

TEST_P(DataflowNesting, ExceptionOfAChildFailsItsParent) {
  Runtime rt(options(workers()));
  Handles h(2);
  std::atomic<int> dependent_ran{0};
  bool caught = false;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      canopy::submit({canopy::write(h[1])}, [] { throw std::logic_error("child failed"); });
    });
    canopy::submit({canopy::read(h[0])}, [&] { ++dependent_ran; });
    try {
      canopy::wait(h[0]);
    } catch (const std::logic_error&) {
      caught = true;
    }
    canopy::wait_all();
  });
  EXPECT_TRUE(caught);
  EXPECT_EQ(dependent_ran.load(), 0);
}

TEST_P(DataflowNesting, ChildExceptionCaughtInsideDoesNotEscape) {
  Runtime rt(options(workers()));
  Handles h(1);
  bool caught_inside = false;
  int dependent_ran = 0;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      canopy::submit({canopy::write(h[0])}, [] { throw std::runtime_error("inner"); });
      try {
        canopy::wait_all();
      } catch (const std::runtime_error&) {
        caught_inside = true;
      }
    });
    canopy::submit({canopy::read(h[0])}, [&] { ++dependent_ran; });
    canopy::wait_all();
  });
  EXPECT_TRUE(caught_inside);
  EXPECT_EQ(dependent_ran, 1);
}

TEST(DataflowBadUse, NullFreedAndTooManyAreErrors) {
  Runtime rt(options(2));
  Data freed;
  {
    Handles h(1);
    freed = h[0];
  }
  Handles h(1);
  rt.run([&] {
    expect_error([&] { canopy::submit({canopy::read(h[0]), canopy::write(Data{})}, [] {}); },
                 "access 1 of 2: null data handle");
    expect_error([&] { canopy::submit({canopy::read(freed)}, [] {}); }, "access 0 of 1");
    expect_error([&] { canopy::submit({canopy::read(freed)}, [] {}); }, "data_free");
    std::vector<canopy::Access> many(canopy::kMaxAccesses + 1, canopy::read(h[0]));
    expect_error([&] { canopy::submit(std::span<const canopy::Access>(many), [] {}); }, "at most 256");
    canopy::Access bad_mode{h[0], static_cast<canopy::AccessMode>(9)};
    expect_error([&] { canopy::submit({bad_mode}, [] {}); }, "access mode");
    expect_error([&] { canopy::submit({canopy::read(h[0])}, [] {}, canopy::Affinity::near(freed)); },
                 "submit: affinity near data: ");
    expect_error([&] { canopy::wait(freed); }, "wait: ");
    expect_error([&] { canopy::wait(Data{}); }, "null data handle");
    canopy::wait_all();  // nothing was submitted by the failed calls
  });
  expect_error([&] { canopy::data_locality(freed); }, "data_locality: ");
}

TEST(DataflowBadUse, HandlesSeenBeforeAreStillChecked) {
  // A handle submitted before takes the quick check (its State remembers
  // the registry entry; sorted accesses are not re-sorted): it must still
  // refuse a freed handle, a null one of the same index and accesses out of
  // order with a freed one among them, and keep a new handle's totals in
  // the same slot apart from the old one's.
  Runtime rt(options(1));
  Handles keep(1);
  char buf[64];
  const Data d = canopy::data_register(buf, sizeof buf);
  const bool keep_first = keep[0].index < d.index;
  auto both = [&](Data x) {
    return keep_first ? std::vector<canopy::Access>{canopy::read(keep[0]), canopy::write(x)}
                      : std::vector<canopy::Access>{canopy::write(x), canopy::read(keep[0])};
  };
  const std::string at = keep_first ? "access 1 of 2: " : "access 0 of 2: ";
  int ran = 0;
  rt.run([&] {
    for (int i = 0; i < 3; ++i) canopy::submit(std::span<const canopy::Access>(both(d)), [&] { ++ran; });
    canopy::wait_all();
  });
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(canopy::data_locality(d).accesses, 3u);
  canopy::data_free(d);
  rt.run([&] {
    expect_error([&] { canopy::submit(std::span<const canopy::Access>(both(d)), [] {}); }, at + "data handle #");
    expect_error([&] { canopy::submit({canopy::write(d)}, [] {}); }, "access 0 of 1: data handle #");
    expect_error([&] { canopy::submit(std::span<const canopy::Access>(both(Data{d.index, 0})), [] {}); },
                 at + "null data handle");
    // Out of order (the checked path) with the freed handle.
    std::vector<canopy::Access> rev = both(d);
    std::swap(rev[0], rev[1]);
    expect_error([&] { canopy::submit(std::span<const canopy::Access>(rev), [] {}); }, "used after data_free");
    canopy::wait_all();  // nothing was queued
  });
  EXPECT_EQ(ran, 3);
  const Data again = canopy::data_register(buf, sizeof buf);  // (the free slot: usually d's)
  rt.run([&] {
    canopy::submit(std::span<const canopy::Access>(both(again)), [&] { ++ran; });
    canopy::wait_all();
  });
  EXPECT_EQ(ran, 4);
  EXPECT_EQ(canopy::data_locality(again).accesses, 1u);
  EXPECT_EQ(canopy::data_locality(again).local_bytes, 64u);
  EXPECT_EQ(canopy::data_locality(keep[0]).accesses, 4u);
  canopy::data_free(again);
}

TEST(DataflowBadUse, AFailedSubmissionLeavesNoQueuedAccessBehind) {
  // The quick path registers each access as it checks it; when a later one
  // fails (here a freed handle after a handle whose writer is still
  // running, so the read was queued), the registrations made so far are
  // undone. A read left queued would never run and wait_all would hang.
  Runtime rt(options(2));
  char buf[2][64];
  Data a = canopy::data_register(buf[0], 64), b = canopy::data_register(buf[1], 64);
  if (b.index < a.index) std::swap(a, b);  // a is first in lock order
  std::atomic<bool> go{false};
  int ran = 0;
  rt.run([&] {
    canopy::submit({canopy::read(a), canopy::write(b)}, [&] { ++ran; });  // both States know their entries
    canopy::wait_all();
    canopy::data_free(b);
    canopy::submit({canopy::write(a)}, [&] {
      while (!go.load()) std::this_thread::yield();
      ++ran;
    });
    expect_error([&] { canopy::submit({canopy::read(a), canopy::write(b)}, [&] { ran += 100; }); },
                 "access 1 of 2: data handle #");
    expect_error([&] { canopy::submit({canopy::write(a), canopy::read(b)}, [&] { ran += 100; }); },
                 "access 1 of 2: data handle #");
    go = true;
    canopy::submit({canopy::read_write(a)}, [&] { ++ran; });
    canopy::wait_all();
  });
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(canopy::data_locality(a).accesses, 3u);
  canopy::data_free(a);
}

TEST(DataflowBadUse, ThrowingCopyLeavesNothingBehind) {
  Runtime rt(options(1));
  Handles h(1);
  struct Throws {
    Throws() = default;
    Throws(const Throws&) { throw std::runtime_error("copy"); }
    void operator()() const {}
  };
  Throws t;
  rt.run([&] {
    EXPECT_THROW(canopy::submit({canopy::write(h[0])}, t), std::runtime_error);
    int ran = 0;
    canopy::submit({canopy::write(h[0])}, [&] { ++ran; });
    canopy::wait_all();
    EXPECT_EQ(ran, 1);
  });
}

TEST_P(DataflowNesting, WaitForOneHandleInsideATask) {
  Runtime rt(options(workers()));
  Handles h(2);
  int seen = -1;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      std::atomic<int> on_a{0};
      for (int i = 0; i < 10; ++i)
        canopy::submit({canopy::read_write(h[0])}, [&] {
          std::this_thread::yield();
          ++on_a;
        });
      canopy::submit({canopy::read_write(h[1])}, [] { std::this_thread::yield(); });
      canopy::wait(h[0]);  // the children on h[0]
      seen = on_a.load();
      canopy::wait_all();  // and the rest, before on_a goes
    });
    canopy::wait_all();
  });
  EXPECT_EQ(seen, 10);
}

TEST(DataflowLimits, MaxAccessesIsAccepted) {
  Runtime rt(options(2));
  Handles h(canopy::kMaxAccesses);
  std::vector<canopy::Access> acc;
  for (std::size_t i = 0; i < h.size(); ++i) acc.push_back(i % 2 ? canopy::read(h[i]) : canopy::write(h[i]));
  int ran = 0;
  rt.run([&] {
    canopy::submit(std::span<const canopy::Access>(acc), [&] { ++ran; });
    canopy::submit(std::span<const canopy::Access>(acc), [&] { ++ran; });
    canopy::wait_all();
  });
  EXPECT_EQ(ran, 2);
}

TEST(DataflowLimits, OneWorkerRunsAReadyTaskAtSubmission) {
  // Documented: on a runtime of one worker a task that is ready when
  // submitted runs inside submit (nobody else could run it).
  Runtime rt(options(1));
  Handles h(1);
  int x = 0;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] { x = 1; });
    EXPECT_EQ(x, 1);
    canopy::wait_all();
  });
}
