// Next-touch and next-write marks (src/data/touch.cpp): who consumes a mark
// (a data-flow task that declares an access to the handle, in a mode that
// satisfies it; on the worker path, the one-worker inline path and
// TaskGraph), that nothing else does (undeclared handles, readers of a
// next-write handle), that two tasks at once claim it once, and bad input.
// On this one-node machine a claim moves nothing; the move itself is proved
// in the VMs (tests/numa/check/touch_checks.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/runtime.hpp"
#include "canopy/taskgraph.hpp"
#include "canopy_data.h"

using namespace canopy;

namespace {

RuntimeOptions workers(int n) {
  RuntimeOptions o;
  o.num_threads = n;
  o.bind = BindMode::None;
  return o;
}

std::uint64_t claims() { return data_stats().touch_claims; }

TEST(DataTouch, MarkQueryReplaceAndClear) {
  Data d = data_allocate(4 * data_page_size());
  EXPECT_EQ(data_touch_mark(d), DataTouchMark::None);
  const std::uint32_t live0 = detail::touch_marks_live.load();
  data_mark_next_touch(d);
  EXPECT_EQ(data_touch_mark(d), DataTouchMark::NextTouch);
  EXPECT_EQ(detail::touch_marks_live.load(), live0 + 1);
  data_mark_next_write(d);  // replaces, counted once
  EXPECT_EQ(data_touch_mark(d), DataTouchMark::NextWrite);
  EXPECT_EQ(detail::touch_marks_live.load(), live0 + 1);
  data_clear_touch_mark(d);
  EXPECT_EQ(data_touch_mark(d), DataTouchMark::None);
  EXPECT_EQ(detail::touch_marks_live.load(), live0);
  data_clear_touch_mark(d);  // no-op
  EXPECT_EQ(detail::touch_marks_live.load(), live0);
  data_free(d);
}

TEST(DataTouch, FreeDropsTheMarkAndTheSlotsNextHandleIsUnmarked) {
  const std::uint32_t live0 = detail::touch_marks_live.load();
  Data d = data_allocate(data_page_size());
  data_mark_next_touch(d);
  data_free(d);
  EXPECT_EQ(detail::touch_marks_live.load(), live0);
  Data e = data_allocate(data_page_size());  // likely the same slot
  EXPECT_EQ(data_touch_mark(e), DataTouchMark::None);
  data_free(e);
}

TEST(DataTouch, BadHandlesAreErrors) {
  EXPECT_THROW(data_mark_next_touch(Data{}), Error);
  EXPECT_THROW(data_mark_next_write(Data{}), Error);
  EXPECT_THROW(data_touch_mark(Data{}), Error);
  Data d = data_allocate(data_page_size());
  data_free(d);
  try {
    data_mark_next_touch(d);
    FAIL() << "a freed handle was marked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("used after data_free"), std::string::npos) << e.what();
  }
  EXPECT_THROW(data_clear_touch_mark(d), Error);
}

// The worker path (two workers: tasks go through run_node) and the inline
// path of a one-worker runtime.
class DataTouchWorkers : public ::testing::TestWithParam<int> {};

TEST_P(DataTouchWorkers, ADeclaredAccessConsumesTheMarkAndOnlyThatHandlesMark) {
  Runtime rt(workers(GetParam()));
  const std::size_t bytes = 4 * data_page_size();
  Data a = data_allocate(bytes), b = data_allocate(bytes);
  data_mark_next_touch(a);
  data_mark_next_touch(b);
  const std::uint64_t c0 = claims();
  rt.run([&] {
    // Writes b too, but declares only a: b keeps its mark.
    submit({read(a)}, [&] { std::memset(data_ptr(b), 1, bytes); });
    wait_all();
  });
  EXPECT_EQ(data_touch_mark(a), DataTouchMark::None);
  EXPECT_EQ(data_touch_mark(b), DataTouchMark::NextTouch);
  EXPECT_EQ(claims(), c0 + 1);
  // Consumed: a second task claims nothing.
  rt.run([&] {
    submit({read_write(a)}, [] {});
    wait_all();
  });
  EXPECT_EQ(claims(), c0 + 1);
  data_free(a);
  data_free(b);
}

TEST_P(DataTouchWorkers, NextWriteIgnoresReaders) {
  Runtime rt(workers(GetParam()));
  Data d = data_allocate(4 * data_page_size());
  Data e = data_allocate(4 * data_page_size());
  data_mark_next_write(d);
  data_mark_next_write(e);
  const std::uint64_t c0 = claims();
  rt.run([&] {
    for (int i = 0; i < 3; ++i) submit({read(d)}, [] {});
    wait_all();
  });
  EXPECT_EQ(data_touch_mark(d), DataTouchMark::NextWrite);
  EXPECT_EQ(claims(), c0);
  rt.run([&] {
    submit({write(d)}, [] {});
    submit({read_write(e)}, [] {});
    wait_all();
  });
  EXPECT_EQ(data_touch_mark(d), DataTouchMark::None);
  EXPECT_EQ(data_touch_mark(e), DataTouchMark::None);
  EXPECT_EQ(claims(), c0 + 2);
  data_free(d);
  data_free(e);
}

INSTANTIATE_TEST_SUITE_P(Workers, DataTouchWorkers, ::testing::Values(1, 2));

TEST(DataTouch, ConcurrentReadersClaimOnce) {
  Runtime rt(workers(4));
  Data d = data_allocate(16 * data_page_size());
  for (int round = 0; round < 20; ++round) {
    data_mark_next_touch(d);
    const std::uint64_t c0 = claims();
    rt.run([&] {
      // Readers run at the same time on every worker.
      for (int i = 0; i < 16; ++i) submit({read(d)}, [] {});
      wait_all();
    });
    ASSERT_EQ(claims(), c0 + 1) << "round " << round;
    ASSERT_EQ(data_touch_mark(d), DataTouchMark::None);
  }
  data_free(d);
}

TEST(DataTouch, TaskGraphTasksClaim) {
  Runtime rt(workers(2));
  Data r = data_allocate(data_page_size()), w = data_allocate(data_page_size());
  TaskGraph g;
  g.add({read(r)}, [] {});
  g.add({read(w)}, [] {});
  g.add({write(w)}, [] {});
  data_mark_next_write(r);  // only read: stays
  data_mark_next_write(w);
  const std::uint64_t c0 = claims();
  g.run(rt);
  EXPECT_EQ(data_touch_mark(r), DataTouchMark::NextWrite);
  EXPECT_EQ(data_touch_mark(w), DataTouchMark::None);
  EXPECT_EQ(claims(), c0 + 1);
  data_clear_touch_mark(r);
  data_free(r);
  data_free(w);
}

// A replay tests for marks once, when it starts (TaskGraph's one flag per
// task): a mark set by one of its tasks is claimed from the next replay on.
TEST(DataTouch, ATaskGraphReplayClaimsTheMarksThatExistedWhenItStarted) {
  Runtime rt(workers(1));
  Data h = data_allocate(data_page_size());
  bool mark = true;
  TaskGraph g;
  g.add({read(h)}, [&] {  // a reader: leaves a next-write mark
    if (mark) data_mark_next_write(h);
  });
  g.add({write(h)}, [] {});  // after the reader
  const std::uint64_t c0 = claims();
  g.run(rt);
  EXPECT_EQ(data_touch_mark(h), DataTouchMark::NextWrite);
  EXPECT_EQ(claims(), c0);
  mark = false;
  g.run(rt);
  EXPECT_EQ(data_touch_mark(h), DataTouchMark::None);
  EXPECT_EQ(claims(), c0 + 1);
  data_free(h);
}

TEST(DataTouch, CApi) {
  canopy_data_t d;
  ASSERT_EQ(canopy_data_allocate(&d, data_page_size(), nullptr), CANOPY_OK);
  int m = -1;
  ASSERT_EQ(canopy_data_touch_mark(d, &m), CANOPY_OK);
  EXPECT_EQ(m, CANOPY_DATA_MARK_NONE);
  ASSERT_EQ(canopy_data_mark(d, CANOPY_DATA_MARK_NEXT_WRITE), CANOPY_OK);
  ASSERT_EQ(canopy_data_touch_mark(d, &m), CANOPY_OK);
  EXPECT_EQ(m, CANOPY_DATA_MARK_NEXT_WRITE);
  EXPECT_EQ(canopy_data_mark(d, 7), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("mark 7"), std::string::npos) << canopy_last_error();
  EXPECT_EQ(canopy_data_touch_mark(d, nullptr), CANOPY_EINVAL);
  ASSERT_EQ(canopy_data_mark(d, CANOPY_DATA_MARK_NONE), CANOPY_OK);
  ASSERT_EQ(canopy_data_touch_mark(d, &m), CANOPY_OK);
  EXPECT_EQ(m, CANOPY_DATA_MARK_NONE);
  ASSERT_EQ(canopy_data_free(d), CANOPY_OK);
  EXPECT_EQ(canopy_data_mark(d, CANOPY_DATA_MARK_NEXT_TOUCH), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("used after data_free"), std::string::npos);
  EXPECT_EQ(canopy_data_mark(canopy_data_t{0, 0}, CANOPY_DATA_MARK_NEXT_TOUCH), CANOPY_EINVAL);
}

}  // namespace
