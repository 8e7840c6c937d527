// The arithmetic of placements, kept free of the kernel so that it can be
// tested for any node count: which node each page should be on, and how a
// kernel's answer compares with that.
#include <fmt/format.h>

#include "canopy/data.hpp"
#include "canopy/error.hpp"

namespace canopy {

std::string to_string(const DataPlacement& p) {
  switch (p.kind) {
    case DataPlacementKind::FirstTouch: return "first-touch";
    case DataPlacementKind::Node: return fmt::format("node {}", p.node);
    case DataPlacementKind::Interleave: return "interleaved";
    case DataPlacementKind::BlockCyclic: return fmt::format("block-cyclic, blocks of {} bytes", p.block);
  }
  return fmt::format("unknown placement kind {}", static_cast<int>(p.kind));
}

std::vector<int> data_expected_page_nodes(const DataPlacement& p, std::size_t bytes, std::size_t page_size,
                                          int num_nodes) {
  if (num_nodes < 1) throw Error(fmt::format("{} NUMA nodes: expected at least 1", num_nodes));
  if (page_size == 0 || (page_size & (page_size - 1)) != 0)
    throw Error(fmt::format("page size {}: expected a power of two", page_size));
  const std::size_t pages = (bytes + page_size - 1) / page_size;
  switch (p.kind) {
    case DataPlacementKind::FirstTouch: return std::vector<int>(pages, kAnyNode);
    case DataPlacementKind::Node:
      if (p.node < 0) throw Error(fmt::format("NUMA node {}: expected 0 or more (larger ones wrap)", p.node));
      return std::vector<int>(pages, p.node % num_nodes);
    case DataPlacementKind::Interleave:
      // One node: nothing to interleave, every page is on it.
      return std::vector<int>(pages, num_nodes == 1 ? 0 : kNextNode);
    case DataPlacementKind::BlockCyclic: {
      if (p.block == 0 || p.block % page_size != 0)
        throw Error(fmt::format("block-cyclic block of {} bytes: expected a positive multiple of the page size ({})",
                                p.block, page_size));
      const std::size_t pages_per_block = p.block / page_size;
      std::vector<int> nodes(pages);
      for (std::size_t i = 0; i < pages; ++i)
        nodes[i] = static_cast<int>((i / pages_per_block) % static_cast<std::size_t>(num_nodes));
      return nodes;
    }
  }
  throw Error(fmt::format("unknown placement kind {}", static_cast<int>(p.kind)));
}

DataPlacementReport data_compare_placement(const std::vector<int>& expected, const std::vector<int>& actual,
                                           int num_nodes) {
  if (expected.size() != actual.size())
    throw Error(fmt::format("{} expected page nodes against {} actual ones: the counts must match", expected.size(),
                            actual.size()));
  if (num_nodes < 1) throw Error(fmt::format("{} NUMA nodes: expected at least 1", num_nodes));
  DataPlacementReport r;
  r.pages = expected.size();
  // Interleaved pages go round-robin; the first touched page sets the phase
  // (the kernel picks it from the address), and every later page is judged
  // against that phase, so one stray page counts once.
  std::size_t first_touched = 0;
  int first_node = -1;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const int a = actual[i];
    if (a < 0) {
      ++r.untouched;
      continue;
    }
    int want = expected[i];
    bool ok;
    if (want == kAnyNode) {
      ok = a < num_nodes;
    } else if (want == kNextNode) {
      if (first_node < 0) {
        ok = a < num_nodes;
        if (ok) {
          first_node = a;
          first_touched = i;
        }
      } else {
        want = static_cast<int>((static_cast<std::size_t>(first_node) + (i - first_touched)) % num_nodes);
        ok = a == want;
      }
    } else {
      ok = a == want;
    }
    if (!ok) {
      ++r.misplaced;
      if (r.first_misplaced.size() < 8) {
        r.first_misplaced.push_back(i);
        r.expected_nodes.push_back(want);
        r.actual_nodes.push_back(a);
      }
    }
  }
  return r;
}

}  // namespace canopy
