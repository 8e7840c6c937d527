// First-touch learning: canopy finds out where the pages of a first-touch
// region went after tasks wrote them, without the program calling
// data_refresh_location, so that owner computes and Affinity::near work for
// the default allocation.
//
// When. A handle's entry counts the bytes that were on no node at its last
// look (`unplaced`). While that is 0 the location is complete: pages never
// move by themselves once placed (canopy's own migrations refresh the
// location; the kernel's automatic NUMA balancing is the exception, and
// canopy's VMs and docs ask for it off), so nothing is ever looked at again.
// While it is not 0, the runtime's paths that need the node (resolving
// Affinity::near, owner computes, a finished data-flow task's locality
// counts) call data_learn_if_unplaced: one relaxed load when the location is
// complete, the slow path here otherwise.
//
// Cost. A look is move_pages(2) for the region (one system call per 4096
// pages). Hot paths look at one handle at most once per interval, 1 ms
// after a look, doubling after each look that found nothing new up to
// 64 ms (a region whose tail is never written does not cost a system call
// per task), and one thread at a time (the CAS on next_look_ns; the others
// use the last look). data_home_node and data_bytes_per_node look whenever
// the last look was incomplete (no interval).
#include <atomic>
#include <chrono>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "data/learn.hpp"

namespace canopy {

namespace {

std::atomic<std::uint64_t> looks{0}, learned{0}, pages_migrated{0}, bytes_migrated{0}, pages_not_moved{0};
std::atomic<std::uint64_t> touch_claims{0}, touch_pages{0}, touch_bytes{0}, touch_left{0};

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace data_impl {

void count_migration(std::uint64_t moved_pages, std::uint64_t page_size, std::uint64_t left_pages) {
  pages_migrated.fetch_add(moved_pages, std::memory_order_relaxed);
  bytes_migrated.fetch_add(moved_pages * page_size, std::memory_order_relaxed);
  pages_not_moved.fetch_add(left_pages, std::memory_order_relaxed);
}

void count_touch_claim(std::uint64_t moved_pages, std::uint64_t page_size, std::uint64_t left_pages) {
  touch_claims.fetch_add(1, std::memory_order_relaxed);
  touch_pages.fetch_add(moved_pages, std::memory_order_relaxed);
  touch_bytes.fetch_add(moved_pages * page_size, std::memory_order_relaxed);
  touch_left.fetch_add(left_pages, std::memory_order_relaxed);
}

}  // namespace data_impl

DataStats data_stats() {
  DataStats s;
  s.looks = looks.load(std::memory_order_relaxed);
  s.learned = learned.load(std::memory_order_relaxed);
  s.pages_migrated = pages_migrated.load(std::memory_order_relaxed);
  s.bytes_migrated = bytes_migrated.load(std::memory_order_relaxed);
  s.pages_not_moved = pages_not_moved.load(std::memory_order_relaxed);
  s.touch_claims = touch_claims.load(std::memory_order_relaxed);
  s.touch_pages_migrated = touch_pages.load(std::memory_order_relaxed);
  s.touch_bytes_migrated = touch_bytes.load(std::memory_order_relaxed);
  s.touch_pages_not_moved = touch_left.load(std::memory_order_relaxed);
  return s;
}

namespace detail {

void data_learn_location(DataEntry& e, bool force) noexcept { data_learn_location_at(e, steady_ns(), force); }

void data_learn_location_at(DataEntry& e, std::int64_t now_ns, bool force) noexcept {
  std::int64_t next = e.next_look_ns.load(std::memory_order_relaxed);
  bool claimed = false;
  if (!force) {
    if (now_ns < next) return;  // too soon, or someone is looking (kLearnBusy)
    if (!e.next_look_ns.compare_exchange_strong(next, kLearnBusy, std::memory_order_acquire,
                                                std::memory_order_relaxed))
      return;  // another thread took this look
    claimed = true;
  }
  const std::uint32_t gen = e.live.load(std::memory_order_acquire);
  const std::size_t before = e.unplaced.load(std::memory_order_relaxed);
  const int home_before = e.home_node.load(std::memory_order_relaxed);
  if (gen != 0) {
    try {
      // Checks the generation again under the registry mutex before it
      // stores: a handle freed (or its slot reused) meanwhile is left alone.
      data_refresh_location(Data{e.index, gen});
      looks.fetch_add(1, std::memory_order_relaxed);
      if (home_before < 0 && e.home_node.load(std::memory_order_relaxed) >= 0)
        learned.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      // freed meanwhile, or the kernel cannot say: keep the last look
    }
  }
  // The next wait: doubles while looks find nothing new.
  const std::size_t after = e.unplaced.load(std::memory_order_relaxed);
  std::uint32_t idle = e.idle_looks.load(std::memory_order_relaxed);
  idle = (after != 0 && after == before) ? std::min(idle + 1, kLearnMaxDoublings) : 0;
  e.idle_looks.store(idle, std::memory_order_relaxed);
  const std::int64_t wait = kLearnFirstWaitNs << idle;
  if (claimed || e.next_look_ns.load(std::memory_order_relaxed) != kLearnBusy)
    e.next_look_ns.store(now_ns + wait, std::memory_order_release);
}

}  // namespace detail
}  // namespace canopy
