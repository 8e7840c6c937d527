// Next-touch and next-write for data handles (data_mark_next_touch,
// docs/groups-memory.md). Linux has no next-touch policy (Solaris had
// madvise(MADV_ACCESS_LWP); Linux patches for it were never merged), so
// canopy does it with what its runtime knows: the accesses data-flow tasks
// declare. A mark is a byte on the handle's registry entry; the data-flow
// paths that start a task (run_node, the inline path, TaskGraph's execute)
// look at their declared accesses only while some handle is marked
// (touch_marks_live, one relaxed load), and call data_touch_claim for each.
//
// Claim rule: the first task to exchange the mark away owns the move, so
// each page moves at most once per marking and two tasks starting at once
// on two nodes are resolved by the exchange (exactly one wins; the other
// runs at once, reading the pages where they are while they move, which
// move_pages makes safe). The winner moves the pages before its body runs,
// to the node of the CPU it runs on (getcpu: right for unbound threads too).
//
// Counter rule: touch_marks_live counts marked handles. A marker raises it
// before it stores a mark into an unmarked entry and takes it back when the
// entry was already marked; whoever exchanges a mark to 0 (a claim,
// data_clear_touch_mark, data_free) lowers it. So it is never below the
// number of marks stored, and 0 means no handle is marked.
#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <exception>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "data/learn.hpp"
#include "data/machine.hpp"

namespace canopy {

namespace detail {
std::atomic<std::uint32_t> touch_marks_live{0};
}  // namespace detail

namespace {

std::atomic<bool> reported{false};

void set_mark(Data d, DataTouchMark m) {
  detail::DataEntry& e = detail::data_entry(d);  // throws for null or freed handles
  detail::touch_marks_live.fetch_add(1, std::memory_order_relaxed);
  // Release: the claimer's acquire exchange sees what the marker wrote before.
  if (e.touch_mark.exchange(static_cast<std::uint8_t>(m), std::memory_order_acq_rel) != 0)
    detail::touch_marks_live.fetch_sub(1, std::memory_order_relaxed);  // was marked: counted already
}

// The first failure of the process goes to stderr (the others are counted).
void report(std::uint32_t index, int node, const std::string& what) {
  if (reported.exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr, "canopy: next-touch of data handle #%u to node %d: %s (further failures are counted in "
               "CANOPY_STATS only)\n",
               index, node, what.c_str());
}

}  // namespace

void data_mark_next_touch(Data d) { set_mark(d, DataTouchMark::NextTouch); }
void data_mark_next_write(Data d) { set_mark(d, DataTouchMark::NextWrite); }

void data_clear_touch_mark(Data d) {
  detail::DataEntry& e = detail::data_entry(d);
  if (e.touch_mark.exchange(0, std::memory_order_relaxed) != 0)
    detail::touch_marks_live.fetch_sub(1, std::memory_order_relaxed);
}

DataTouchMark data_touch_mark(Data d) {
  return static_cast<DataTouchMark>(detail::data_entry(d).touch_mark.load(std::memory_order_acquire));
}

namespace detail {

void data_touch_claim(DataEntry& e, bool writes) noexcept {
  std::uint8_t m = e.touch_mark.load(std::memory_order_relaxed);
  if (m == 0 || (m == static_cast<std::uint8_t>(DataTouchMark::NextWrite) && !writes)) return;
  // Only the mark seen is taken: a next-write mark that replaced a
  // next-touch one since the load stays for a writer.
  if (!e.touch_mark.compare_exchange_strong(m, 0, std::memory_order_acq_rel, std::memory_order_relaxed)) return;
  touch_marks_live.fetch_sub(1, std::memory_order_relaxed);
  // The task holds its access, so the handle is live; its generation names it.
  const Data d{e.index, e.live.load(std::memory_order_acquire)};
  int node = -1;
  try {
    node = data_impl::current_node();
    const DataMoveResult r = data_try_move_to_node(d, node);
    data_impl::count_touch_claim(r.moved, data_impl::machine().page_size, r.left);
    if (r.left > 0)
      report(d.index, node,
             fmt::format("{} page(s) not moved, the first (page {}) is on node {}{}", r.left, r.first_left,
                         r.first_left_node, r.reason.empty() ? "" : fmt::format(" (the kernel: {})", r.reason)));
  } catch (const std::exception& x) {
    // The kernel cannot say where pages are (or move them): nothing moved.
    const std::size_t page = 4096;  // (machine() may be what failed) a count, not a size
    data_impl::count_touch_claim(0, 0, (e.bytes + page - 1) / page);
    report(d.index, node, x.what());
  } catch (...) {
    report(d.index, node, "unknown error");
  }
}

}  // namespace detail
}  // namespace canopy
