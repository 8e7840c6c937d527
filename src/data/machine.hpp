// Private to src/data/: this machine's NUMA nodes as hwloc sees them, loaded
// once per process, and the two kernel conversations the data layer has:
// binding a range of pages to nodes (hwloc) and asking which node each page
// is on (move_pages(2) with nodes = NULL, which moves nothing).
#pragma once
#include <hwloc.h>

#include <cstddef>
#include <vector>

namespace canopy::data_impl {

struct Machine {
  hwloc_topology_t topo = nullptr;
  int num_nodes = 1;
  std::vector<int> logical_of_os;  // NUMA node OS index -> logical index, -1 when absent
  std::vector<int> os_of_logical;  // logical -> OS index
  std::size_t page_size = 4096;
};

// Loaded on first use; throws canopy::Error(System) when hwloc cannot load
// this machine, or when it has more NUMA nodes than the registry tracks.
const Machine& machine();

// The logical node of every page spanned by [ptr, ptr + bytes) (the first
// and last may be partly outside), -1 for a page not touched yet. Throws
// canopy::Error(System) when the kernel cannot tell on a machine of several
// nodes (on one node, resident pages are on node 0: mincore(2) suffices).
std::vector<int> query_page_nodes(const void* ptr, std::size_t bytes);

// The logical node of the CPU the calling thread runs on now (getcpu(2); 0
// on a one-node machine). Throws canopy::Error(System) when the kernel cannot
// tell on a machine of several nodes. (Also used by the OpenMP allocators'
// partition nearest, src/omp/core/alloc_memory.cpp.)
int current_node();

// Throws canopy::Error (BadInput) naming the range when part of
// [ptr, ptr + bytes) is not mapped in this process (mincore(2) says ENOMEM).
void check_mapped(const void* ptr, std::size_t bytes);

// Binds [ptr, ptr + bytes) (page-aligned) to the given logical nodes with
// hwloc's `policy` (HWLOC_MEMBIND_BIND or _INTERLEAVE), strictly. Returns
// false with errno set when the kernel refused.
bool bind_area(void* ptr, std::size_t bytes, const std::vector<int>& logical_nodes, hwloc_membind_policy_t policy);

// Pages spanned by [ptr, ptr + bytes) and the bytes of the region in each.
std::size_t pages_spanned(const void* ptr, std::size_t bytes, std::size_t page_size);
std::size_t bytes_in_page(const void* ptr, std::size_t bytes, std::size_t page_size, std::size_t page);

}  // namespace canopy::data_impl
