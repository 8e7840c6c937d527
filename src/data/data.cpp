// Data handles over the registry: allocation with a NUMA placement (hwloc
// binds, canopy touches and checks), registration of existing regions,
// freeing, and the location queries (page nodes, bytes per node, home node,
// placement checks).
//
// Why allocate-then-touch: the kernel places a page when it is first
// written, so a bound region has no location until then. Touching at once
// makes the location known to owner-computes before any task runs, and lets
// data_allocate refuse a placement the kernel did not honour, instead of
// leaving the surprise to a later check.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include <fmt/format.h>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "data/machine.hpp"
#include "data/registry.hpp"
#include "dataflow/free_wait.hpp"

namespace canopy {

namespace {

using data_impl::Machine;

// Bytes of the region on each node of this machine, from its page nodes.
std::vector<std::size_t> node_bytes_of(const void* ptr, std::size_t bytes, const std::vector<int>& page_nodes,
                                       int num_nodes) {
  std::vector<std::size_t> out(num_nodes, 0);
  const std::size_t page = data_impl::machine().page_size;
  for (std::size_t i = 0; i < page_nodes.size(); ++i)
    if (page_nodes[i] >= 0 && page_nodes[i] < num_nodes)
      out[page_nodes[i]] += data_impl::bytes_in_page(ptr, bytes, page, i);
  return out;
}

std::string describe(const DataPlacementReport& r) {
  std::string s = fmt::format("{} of {} pages are not where the placement puts them", r.misplaced, r.pages);
  for (std::size_t k = 0; k < r.first_misplaced.size(); ++k) {
    s += k == 0 ? ": " : ", ";
    s += fmt::format("page {} on node {}", r.first_misplaced[k], r.actual_nodes[k]);
    if (r.expected_nodes[k] >= 0) s += fmt::format(" (expected node {})", r.expected_nodes[k]);
  }
  if (r.misplaced > r.first_misplaced.size()) s += ", ...";
  if (r.untouched) s += fmt::format("; {} pages not touched yet", r.untouched);
  return s;
}

void check_placement_input(const DataPlacement& p, std::size_t page) {
  switch (p.kind) {
    case DataPlacementKind::FirstTouch:
    case DataPlacementKind::Interleave: return;
    case DataPlacementKind::Node:
      if (p.node < 0)
        throw Error(fmt::format("NUMA node {}: expected 0 or more (nodes from {} up wrap around)", p.node,
                                data_num_nodes()));
      return;
    case DataPlacementKind::BlockCyclic:
      if (p.block == 0 || p.block % page != 0)
        throw Error(fmt::format("block-cyclic block of {} bytes: expected a positive multiple of the page size ({})",
                                p.block, page));
      return;
  }
  throw Error(fmt::format("unknown data placement kind {}", static_cast<int>(p.kind)));
}

// With one node a page can be nowhere else, so a kernel that has no memory
// policy calls to offer (seccomp, ENOSYS) does not change where pages go.
bool binding_unavailable_but_harmless(const Machine& m, int err) {
  return m.num_nodes == 1 && (err == ENOSYS || err == EPERM);
}

[[noreturn]] void bind_failed(void* ptr, std::size_t alloc, const DataPlacement& p, const std::string& what,
                              int err) {
  hwloc_free(data_impl::machine().topo, ptr, alloc);
  throw Error(fmt::format("data_allocate({} bytes, {}): the kernel refused to bind {}: {}", alloc, to_string(p), what,
                          std::strerror(err)),
              ErrorKind::System);
}

// Allocates and binds (does not touch). Returns the page-aligned region.
void* allocate_bound(std::size_t alloc, const DataPlacement& p) {
  const Machine& m = data_impl::machine();
  const int n = m.num_nodes;
  void* ptr = nullptr;
  switch (p.kind) {
    case DataPlacementKind::FirstTouch:
      // The kernel's default policy; hwloc's FIRSTTOUCH says so explicitly
      // (non-strict: nothing to enforce).
      ptr = hwloc_alloc_membind(m.topo, alloc, hwloc_topology_get_topology_nodeset(m.topo),
                                HWLOC_MEMBIND_FIRSTTOUCH, HWLOC_MEMBIND_BYNODESET);
      break;
    case DataPlacementKind::Node: {
      const int node = p.node % n;
      hwloc_bitmap_t set = hwloc_bitmap_alloc();
      if (!set) throw std::bad_alloc();
      hwloc_bitmap_only(set, static_cast<unsigned>(m.os_of_logical[node]));
      ptr = hwloc_alloc_membind(m.topo, alloc, set, HWLOC_MEMBIND_BIND,
                                HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
      const int err = errno;
      hwloc_bitmap_free(set);
      if (!ptr && binding_unavailable_but_harmless(m, err)) ptr = hwloc_alloc(m.topo, alloc);
      if (!ptr && err != ENOMEM)
        throw Error(fmt::format("data_allocate({} bytes, {}): hwloc_alloc_membind refused node {} (OS node {}): {}",
                                alloc, to_string(p), node, m.os_of_logical[node], std::strerror(err)),
                    ErrorKind::System);
      break;
    }
    case DataPlacementKind::Interleave:
    case DataPlacementKind::BlockCyclic: {
      ptr = hwloc_alloc(m.topo, alloc);
      if (!ptr) break;
      // Transparent huge pages would put 2 MiB at a time on one node and
      // defeat a page-grained round robin; a hint, so its failure is harmless.
      (void)madvise(ptr, alloc, MADV_NOHUGEPAGE);
      std::vector<int> all(n);
      for (int i = 0; i < n; ++i) all[i] = i;
      if (p.kind == DataPlacementKind::Interleave || n == 1) {
        const auto policy = p.kind == DataPlacementKind::Interleave ? HWLOC_MEMBIND_INTERLEAVE : HWLOC_MEMBIND_BIND;
        if (!data_impl::bind_area(ptr, alloc, all, policy)) {
          const int err = errno;
          if (!binding_unavailable_but_harmless(m, err))
            bind_failed(ptr, alloc, p, fmt::format("the region to nodes 0-{}", n - 1), err);
        }
        break;
      }
      // One binding per block: each becomes its own kernel VMA, so very
      // many small blocks can hit vm.max_map_count (reported by the error).
      char* base = static_cast<char*>(ptr);
      for (std::size_t off = 0, b = 0; off < alloc; off += p.block, ++b) {
        const std::size_t len = std::min(p.block, alloc - off);
        const int node = static_cast<int>(b % static_cast<std::size_t>(n));
        if (!data_impl::bind_area(base + off, len, {node}, HWLOC_MEMBIND_BIND)) {
          const int err = errno;
          bind_failed(ptr, alloc, p, fmt::format("block {} (bytes {}..{}) to node {}", b, off, off + len, node), err);
        }
      }
      break;
    }
  }
  if (!ptr)
    throw Error(fmt::format("data_allocate({} bytes, {}): out of memory", alloc, to_string(p)), ErrorKind::System);
  return ptr;
}

// Transparent huge page size (hpage_pmd_size), 0 when the kernel has none.
std::size_t huge_page_size() {
  static const std::size_t size = [] {
    std::size_t v = 0;
    if (std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r")) {
      unsigned long long x = 0;
      if (std::fscanf(f, "%llu", &x) == 1) v = static_cast<std::size_t>(x);
      std::fclose(f);
    }
    return v;
  }();
  return size;
}

// canopy places data handle by handle, and a huge page is on one node: a
// huge page holding the end of one handle and the start of the next (small
// allocations side by side in one mapping, THP "always") could not follow
// both, and the kernel refuses to move part of it. So the parts of an
// allocation that do not fill a whole huge page of their own get small
// pages; a large handle keeps huge pages in its middle. Before the first
// touch. A refusal (no THP in this kernel) changes nothing: ignored.
void keep_huge_pages_inside(void* ptr, std::size_t alloc) {
  const std::size_t huge = huge_page_size();
  if (huge == 0 || (huge & (huge - 1)) != 0) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t end = begin + alloc;
  const std::uintptr_t head_end = std::min(end, (begin + huge - 1) / huge * huge);
  const std::uintptr_t tail_begin = std::max(head_end, end / huge * huge);
  if (head_end > begin) madvise(ptr, head_end - begin, MADV_NOHUGEPAGE);
  if (end > tail_begin) madvise(reinterpret_cast<void*>(tail_begin), end - tail_begin, MADV_NOHUGEPAGE);
}

}  // namespace

int data_num_nodes() { return data_impl::machine().num_nodes; }
std::size_t data_page_size() { return data_impl::machine().page_size; }

Data data_allocate(std::size_t bytes, DataPlacement placement) {
  if (bytes == 0) throw Error(fmt::format("data_allocate of 0 bytes ({}): expected at least 1 byte", to_string(placement)));
  const Machine& m = data_impl::machine();
  const std::size_t page = m.page_size;
  check_placement_input(placement, page);
  if (bytes > SIZE_MAX - page)
    throw Error(fmt::format("data_allocate of {} bytes: larger than the address space", bytes));
  const std::size_t alloc = (bytes + page - 1) / page * page;
  void* ptr = allocate_bound(alloc, placement);
  keep_huge_pages_inside(ptr, alloc);
  data_impl::NewEntry e;
  e.ptr = ptr;
  e.bytes = bytes;
  e.placement = placement;
  e.owned = true;
  e.alloc_bytes = alloc;
  try {
    if (placement.kind != DataPlacementKind::FirstTouch) {
      // Writing one byte per page faults it in under the bound policy (the
      // memory is already zero, so this changes no value).
      volatile char* p = static_cast<volatile char*>(ptr);
      for (std::size_t off = 0; off < alloc; off += page) p[off] = 0;
    }
    const std::vector<int> nodes = data_impl::query_page_nodes(ptr, alloc);
    if (placement.kind != DataPlacementKind::FirstTouch) {
      const DataPlacementReport r = data_compare_placement(
          data_expected_page_nodes(placement, alloc, page, m.num_nodes), nodes, m.num_nodes);
      if (!r.ok() || r.untouched)
        throw Error(fmt::format("data_allocate({} bytes, {}): the kernel did not honour the placement: {}", bytes,
                                to_string(placement), describe(r)),
                    ErrorKind::System);
    }
    e.node_bytes = node_bytes_of(ptr, bytes, nodes, m.num_nodes);
    return data_impl::registry_add(e);
  } catch (...) {
    hwloc_free(m.topo, ptr, alloc);
    throw;
  }
}

Data data_register(void* ptr, std::size_t bytes) {
  if (!ptr) throw Error(fmt::format("data_register of a null pointer ({} bytes): expected a region", bytes));
  if (bytes == 0) throw Error(fmt::format("data_register of 0 bytes at {}: expected at least 1 byte", ptr));
  const Machine& m = data_impl::machine();
  data_impl::check_mapped(ptr, bytes);
  data_impl::NewEntry e;
  e.ptr = ptr;
  e.bytes = bytes;
  e.node_bytes = node_bytes_of(ptr, bytes, data_impl::query_page_nodes(ptr, bytes), m.num_nodes);
  return data_impl::registry_add(e);
}

void data_free(Data d) {
  detail::flow::before_data_free(d);  // tasks still using it finish first
  const data_impl::NewEntry e = data_impl::registry_remove(d);
  if (e.owned) hwloc_free(data_impl::machine().topo, e.ptr, e.alloc_bytes);
}

std::vector<int> data_page_nodes(Data d) {
  const detail::DataEntry& e = detail::data_entry(d);
  return data_impl::query_page_nodes(e.ptr, e.bytes);
}

void data_refresh_location(Data d) {
  const detail::DataEntry& e = detail::data_entry(d);
  const std::vector<int> nodes = data_impl::query_page_nodes(e.ptr, e.bytes);
  data_impl::registry_set_location(d, node_bytes_of(e.ptr, e.bytes, nodes, data_num_nodes()));
}

DataPlacementReport data_placement_report(Data d) {
  const detail::DataEntry& e = detail::data_entry(d);
  const Machine& m = data_impl::machine();
  const std::vector<int> actual = data_impl::query_page_nodes(e.ptr, e.bytes);
  // A registered region may start inside a page: its expectation (first
  // touch, any node) is per page spanned.
  const std::vector<int> expected = e.placement.kind == DataPlacementKind::FirstTouch
                                        ? std::vector<int>(actual.size(), kAnyNode)
                                        : data_expected_page_nodes(e.placement, e.bytes, m.page_size, m.num_nodes);
  return data_compare_placement(expected, actual, m.num_nodes);
}

void data_check_placement(Data d, bool require_touched) {
  const DataPlacementReport r = data_placement_report(d);
  if (r.ok() && !(require_touched && r.untouched)) return;
  const detail::DataEntry& e = detail::data_entry(d);
  throw Error(fmt::format("data handle #{} ({} bytes, {}): {}", d.index, e.bytes, to_string(e.placement),
                          r.ok() ? fmt::format("{} of {} pages not touched yet", r.untouched, r.pages) : describe(r)),
              ErrorKind::System);
}

}  // namespace canopy
