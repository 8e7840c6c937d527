// Moving a handle's pages to one NUMA node (automatic affinity puts each
// handle on the node of the worker that writes it). The whole pages of the
// region are bound to the node with hwloc's MIGRATE flag, which moves the
// pages already touched and makes the kernel put the others there when they
// are first touched; then the kernel is asked again, page by page, and a
// touched page left elsewhere is an error, as for data_allocate. The pages
// the region shares with its neighbours (a registered region may start or
// end inside a page) are left alone: moving them would move someone else's
// bytes too.
#include <fmt/format.h>
#include <hwloc.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "data/machine.hpp"
#include "data/registry.hpp"

namespace canopy {

std::size_t data_move_to_node(Data d, int node) {
  const detail::DataEntry& e = detail::data_entry(d);
  const data_impl::Machine& m = data_impl::machine();
  if (node < 0 || node >= m.num_nodes)
    throw Error(fmt::format("data_move_to_node(#{}, node {}): this machine has NUMA nodes 0 to {}", d.index, node,
                            m.num_nodes - 1));
  if (m.num_nodes == 1) return 0;  // every page is on node 0 already
  const std::size_t page = m.page_size;
  const auto begin = reinterpret_cast<std::uintptr_t>(e.ptr);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = (begin + e.bytes) / page * page;
  std::size_t moved = 0;
  if (last > first) {
    // Only the pages not on `node` yet need the system call.
    const std::vector<int> before = data_impl::query_page_nodes(e.ptr, e.bytes);
    for (int n : before) moved += n >= 0 && n != node;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) throw Error("data_move_to_node: out of memory", ErrorKind::System);
    hwloc_bitmap_set(set, static_cast<unsigned>(m.os_of_logical.at(node)));
    const int rc = hwloc_set_area_membind(m.topo, reinterpret_cast<void*>(first), last - first, set,
                                          HWLOC_MEMBIND_BIND,
                                          HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_STRICT);
    const int err = errno;
    hwloc_bitmap_free(set);
    if (rc != 0)
      throw Error(fmt::format("data_move_to_node(#{}, node {}): the kernel refused to move {} bytes: {}", d.index,
                              node, last - first, std::strerror(err)),
                  ErrorKind::System);
  }
  // Checked page by page; the location the runtime uses is refreshed.
  const std::vector<int> after = data_impl::query_page_nodes(e.ptr, e.bytes);
  const std::size_t first_page = (first - begin / page * page) / page;
  const std::size_t whole = last > first ? (last - first) / page : 0;
  for (std::size_t i = first_page; i < first_page + whole && i < after.size(); ++i)
    if (after[i] >= 0 && after[i] != node)
      throw Error(fmt::format("data_move_to_node(#{}, node {}): page {} of {} is on node {} after the move",
                              d.index, node, i, after.size(), after[i]),
                  ErrorKind::System);
  data_refresh_location(d);
  return moved;
}

}  // namespace canopy
