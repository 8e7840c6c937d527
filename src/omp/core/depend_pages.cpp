// The pages of OpenMP depend items under automatic affinity (see
// depend_pages.hpp). Each item to move is registered with the data layer
// for the time of the move (data_register, data_try_move_to_node,
// data_free): the layer's one move, whole pages only (a page the item shares
// with a neighbour stays: moving it would move someone else's bytes), bound
// to the node so that pages not touched yet go there too, and checked page
// by page; its counts land in the data layer's statistics as well.
#include "depend_pages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include <canopy/data.hpp>
#include <canopy/error.hpp>

#include "data/machine.hpp"  // query_page_nodes, bytes_in_page: the data layer's page locations

namespace canopy::omp {

bool item_pages_movable(std::uint64_t bytes) { return bytes >= data_page_size(); }

PageMoves DependPages::move(const std::vector<MappedItem>& items) {
  PageMoves r;
  const int nodes = data_num_nodes();
  if (nodes < 2) return r;
  // Per written item: the bytes its writers (the tasks naming it out) write
  // from each node. std::map: items in address order, so the moves are too.
  std::map<std::uintptr_t, std::pair<std::uint64_t, std::vector<std::uint64_t>>> written;
  for (const MappedItem& i : items) {
    if (!i.out || !item_pages_movable(i.bytes) || i.node < 0 || i.node >= nodes) continue;
    auto& [bytes, per_node] = written[i.addr];
    bytes = std::max(bytes, i.bytes);
    per_node.resize(static_cast<std::size_t>(nodes), 0);
    per_node[static_cast<std::size_t>(i.node)] += i.bytes;
  }
  for (const auto& [addr, w] : written) {
    const auto& [bytes, per_node] = w;
    const int node = static_cast<int>(std::max_element(per_node.begin(), per_node.end()) - per_node.begin());
    auto it = homes_.find(addr);
    if (it != homes_.end() && it->second.bytes == bytes && it->second.node == node) continue;  // already there
    Data d;
    try {
      d = data_register(reinterpret_cast<void*>(addr), bytes);
    } catch (const Error& e) {
      // A range not all mapped (a `len` past the array's end): not this item's
      // pages to move; the others still move.
      if (e.kind() != ErrorKind::BadInput) throw;
      ++r.unmapped;
      continue;
    }
    DataMoveResult m;
    try {
      m = data_try_move_to_node(d, node);
    } catch (...) {
      data_free(d);
      throw;
    }
    data_free(d);
    homes_[addr] = Home{bytes, node};
    ++r.items;
    r.moved += m.moved;
    if (m.left > 0) {
      r.left += m.left;
      if (r.refusal.empty())
        r.refusal = fmt::format("{:#x} to node {}: {}", addr, node, m.reason.empty() ? "pages stayed" : m.reason);
    }
  }
  return r;
}

LocalBytes local_bytes(const std::vector<MappedItem>& items) {
  LocalBytes b;
  const std::size_t page = data_page_size();
  std::map<std::pair<std::uintptr_t, std::uint64_t>, std::vector<int>> nodes_of;  // one kernel question per item
  for (const MappedItem& i : items) {
    if (!item_pages_movable(i.bytes)) continue;
    const void* p = reinterpret_cast<const void*>(i.addr);
    auto [it, fresh] = nodes_of.try_emplace({i.addr, i.bytes});
    if (fresh) it->second = data_impl::query_page_nodes(p, i.bytes);
    const std::vector<int>& nodes = it->second;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (nodes[k] < 0) continue;
      const std::uint64_t in = data_impl::bytes_in_page(p, i.bytes, page, k);
      (nodes[k] == i.node ? b.local : b.remote) += in;
    }
  }
  return b;
}

std::string percent_local_text(const LocalBytes& b) {
  const std::uint64_t all = b.local + b.remote;
  if (all == 0) return "no placed bytes";
  return fmt::format("{:.1f}% of {:.1f} MB local", 100.0 * static_cast<double>(b.local) / static_cast<double>(all),
                     static_cast<double>(all) / 1e6);
}

}  // namespace canopy::omp
