// Moving a handle's pages to one NUMA node (automatic affinity puts each
// handle on the node of the worker that writes it). The whole pages of the
// region are bound to the node with hwloc's MIGRATE flag, which moves the
// pages already touched and makes the kernel put the others there when they
// are first touched. The bind is not strict: the kernel moves what it can
// and binds the range even when some pages will not move (a transparent
// huge page the region shares with a neighbour, a pinned page; with
// MPOL_MF_STRICT the whole call fails with EIO and nothing tells which
// pages stayed). The pages still elsewhere are then asked for one by one
// with move_pages(2), which splits or moves a huge page where mbind gives
// up, and the kernel is asked again, page by page: what is still elsewhere
// is reported (data_try_move_to_node) or an error (data_move_to_node). The
// pages the region shares with its neighbours (a registered region may
// start or end inside a page) are left alone: moving them would move
// someone else's bytes too.
#include <fmt/format.h>
#include <hwloc.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/detail/trace.hpp"
#include "canopy/error.hpp"
#include "data/machine.hpp"
#include "data/learn.hpp"
#include "data/registry.hpp"

namespace canopy {
namespace {

std::atomic<bool> refuse_for_testing{false};

// Pages [first_page, first_page + count) of `nodes` touched and not on `node`.
std::vector<std::size_t> pages_elsewhere(const std::vector<int>& nodes, std::size_t first_page, std::size_t count,
                                         int node) {
  std::vector<std::size_t> out;
  for (std::size_t i = first_page; i < first_page + count && i < nodes.size(); ++i)
    if (nodes[i] >= 0 && nodes[i] != node) out.push_back(i);
  return out;
}

std::atomic<std::uint64_t> move_generation{0};

}  // namespace

std::uint64_t data_move_generation() { return move_generation.load(std::memory_order_acquire); }

DataMoveResult data_try_move_to_node(Data d, int node) {
  const detail::DataEntry& e = detail::data_entry(d);
  const data_impl::Machine& m = data_impl::machine();
  if (node < 0 || node >= m.num_nodes)
    throw Error(fmt::format("data_move_to_node(#{}, node {}): this machine has NUMA nodes 0 to {}", d.index, node,
                            m.num_nodes - 1));
  DataMoveResult r;
  if (m.num_nodes == 1) return r;  // every page is on node 0 already
  const std::size_t page = m.page_size;
  const auto begin = reinterpret_cast<std::uintptr_t>(e.ptr);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = (begin + e.bytes) / page * page;
  if (last <= first) return r;  // no whole page of its own
  // Index in query_page_nodes' answer of the first whole page, and how many.
  const std::size_t first_page = (first - begin / page * page) / page;
  const std::size_t whole = (last - first) / page;
  const std::vector<int> before = data_impl::query_page_nodes(e.ptr, e.bytes);
  const std::vector<std::size_t> was_elsewhere = pages_elsewhere(before, first_page, whole, node);
  if (refuse_for_testing.load(std::memory_order_relaxed)) {
    r.left = was_elsewhere.size();
    if (r.left > 0) {
      r.first_left = was_elsewhere.front();
      r.first_left_node = before[r.first_left];
      r.reason = "refused for testing";
    }
    return r;
  }
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) throw Error("data_move_to_node: out of memory", ErrorKind::System);
  hwloc_bitmap_set(set, static_cast<unsigned>(m.os_of_logical.at(node)));
  const int rc = hwloc_set_area_membind(m.topo, reinterpret_cast<void*>(first), last - first, set,
                                        HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_MIGRATE);
  const int err = errno;
  hwloc_bitmap_free(set);
  if (rc != 0) r.reason = fmt::format("mbind: {}", std::strerror(err));
  std::vector<int> after = data_impl::query_page_nodes(e.ptr, e.bytes);
  std::vector<std::size_t> left = pages_elsewhere(after, first_page, whole, node);
  if (!left.empty()) {
    // Page by page: the kernel splits a huge page it cannot move whole.
    const std::uintptr_t base = begin / page * page;
    std::vector<void*> addrs;
    for (std::size_t i : left) addrs.push_back(reinterpret_cast<void*>(base + i * page));
    std::vector<int> targets(addrs.size(), m.os_of_logical.at(node));
    std::vector<int> status(addrs.size(), 0);
    constexpr int kMoveFlag = 1 << 1;  // MPOL_MF_MOVE: this process's pages only
    const long mrc = syscall(SYS_move_pages, 0, static_cast<unsigned long>(addrs.size()), addrs.data(),
                             targets.data(), status.data(), kMoveFlag);
    if (mrc < 0) {
      r.reason += fmt::format("{}move_pages: {}", r.reason.empty() ? "" : "; ", std::strerror(errno));
    } else {
      for (int s : status)
        if (s < 0) {
          r.reason += fmt::format("{}move_pages: {}", r.reason.empty() ? "" : "; ", std::strerror(-s));
          break;
        }
    }
    after = data_impl::query_page_nodes(e.ptr, e.bytes);
    left = pages_elsewhere(after, first_page, whole, node);
  }
  // After the move: an entry a cache made from an answer given before it
  // carries an older count.
  move_generation.fetch_add(1, std::memory_order_acq_rel);
  for (std::size_t i : was_elsewhere) r.moved += after[i] == node;
  r.left = left.size();
  if (!left.empty()) {
    r.first_left = left.front();
    r.first_left_node = after[left.front()];
  }
  data_impl::count_migration(r.moved, page, r.left);
  data_refresh_location(d);
  detail::trace_event_anywhere(detail::kTraceMigration, 0, r.moved * page, d.index, static_cast<std::uint16_t>(node));
  return r;
}

std::size_t data_move_to_node(Data d, int node) {
  const DataMoveResult r = data_try_move_to_node(d, node);
  if (r.left > 0)
    throw Error(fmt::format("data_move_to_node(#{}, node {}): {} page(s) could not be moved, the first (page {}) is "
                            "on node {}{}",
                            d.index, node, r.left, r.first_left, r.first_left_node,
                            r.reason.empty() ? "" : fmt::format(" (the kernel: {})", r.reason)),
                ErrorKind::System);
  return r.moved;
}

namespace detail {
void data_refuse_moves_for_testing(bool on) { refuse_for_testing.store(on, std::memory_order_relaxed); }
}  // namespace detail

}  // namespace canopy
