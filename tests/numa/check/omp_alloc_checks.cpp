// NUMA checks of canopy's OpenMP allocators (src/omp, linked in as
// libcanopy-omp.so and called through the OpenMP API as a program would):
// an allocator with partition nearest puts every page of a block on the
// calling thread's node (from each node in turn), interleaved puts
// consecutive pages on consecutive nodes, blocked puts one contiguous
// block of pages on each node in node order; and none of them reports a
// fallback (canopy_omp_alloc_error). Where the pages are is asked of the
// kernel here (move_pages), not taken from the library.
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "canopy/data.hpp"
#include "numa_check.hpp"
#include "omp_alloc_api.hpp"

using namespace omp_alloc_api;

namespace {

// A placed block's pointer is this far into its mapping: the mapping's
// 16-byte record, then the 32-byte header (src/omp/core/alloc_memory.hpp).
constexpr std::size_t kHeader = 48;

// An allocator with the given partition whose fallback is null_fb: a block
// that cannot be placed is null, never memory elsewhere.
struct PartitionAllocator {
  std::uintptr_t handle;
  explicit PartitionAllocator(std::uintptr_t partition) {
    handle = partition_allocator(partition, kNullFb);
    numa_require(handle != 0, "omp_init_allocator with partition {} returned omp_null_allocator", partition);
  }
  ~PartitionAllocator() { omp_destroy_allocator(handle); }
};

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

// A placed block: its region starts with the header on a page boundary.
struct Block {
  char* p = nullptr;
  std::size_t size = 0;
  std::uintptr_t allocator = 0;
  Block(std::size_t bytes, std::uintptr_t a) : size(bytes), allocator(a) {
    p = static_cast<char*>(omp_alloc(bytes, a));
    const char* err = canopy_omp_alloc_error();
    numa_require(p != nullptr, "omp_alloc of {} bytes returned null: {}", bytes, err ? err : "(no reason)");
    numa_require(err == nullptr, "omp_alloc of {} bytes took a fallback: {}", bytes, err);
    numa_require(reinterpret_cast<std::uintptr_t>(p - kHeader) % page_size() == 0,
                 "the block at {} does not start a page after its record and header ({} bytes)", static_cast<void*>(p), kHeader);
  }
  ~Block() { omp_free(p, allocator); }
  std::size_t pages() const { return (size + kHeader + page_size() - 1) / page_size(); }
  // The kernel's node of each page of the region (-1: not present).
  std::vector<int> nodes() const {
    std::vector<void*> addrs(pages());
    for (std::size_t i = 0; i < addrs.size(); ++i) addrs[i] = p - kHeader + i * page_size();
    std::vector<int> status(addrs.size(), -1);
    const long rc = syscall(SYS_move_pages, 0, addrs.size(), addrs.data(), nullptr, status.data(), 0);
    numa_require(rc == 0, "move_pages: {}", std::strerror(errno));
    for (std::size_t i = 0; i < status.size(); ++i)
      numa_require(status[i] >= 0, "page {} of {} is not present (placed blocks are touched at once)", i,
                   status.size());
    return status;
  }
};

// Restores the calling thread's CPU set (the checks bind it to nodes).
struct KeepAffinity {
  cpu_set_t saved;
  KeepAffinity() { sched_getaffinity(0, sizeof saved, &saved); }
  ~KeepAffinity() { sched_setaffinity(0, sizeof saved, &saved); }
};

// Interleaved and blocked spread over every node of the memory space (all
// of this machine's nodes), not only those with CPUs.
int num_nodes() { return canopy::data_num_nodes(); }

}  // namespace

CANOPY_NUMA_CHECK(omp_alloc_partition_nearest_on_the_callers_node, 1) {
  KeepAffinity keep;
  PartitionAllocator a(kNearest);
  for (int node : numa_check::nodes_with_cpus()) {
    numa_check::bind_to_node(node);
    Block b((1 << 20) + 12345, a.handle);
    const std::vector<int> nodes = b.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i)
      numa_require(nodes[i] == node, "thread on node {}: page {} of {} is on node {}", node, i, nodes.size(),
                   nodes[i]);
  }
  numa_note(fmt::format("{} nodes, every page on the caller's", numa_check::nodes_with_cpus().size()));
}

CANOPY_NUMA_CHECK(omp_alloc_partition_interleaved_round_robin, 1) {
  PartitionAllocator a(kInterleaved);
  const int n = num_nodes();
  Block b(1 << 20, a.handle);
  const std::vector<int> nodes = b.nodes();
  std::vector<std::size_t> per_node(n, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    numa_require(nodes[i] < n, "page {} on node {} of {}", i, nodes[i], n);
    ++per_node[nodes[i]];
    if (i > 0)
      numa_require(nodes[i] == (nodes[i - 1] + 1) % n, "page {} on node {} after a page on node {}", i, nodes[i],
                   nodes[i - 1]);
  }
  std::string shares;
  for (int k = 0; k < n; ++k) {
    numa_require(per_node[k] + 1 >= nodes.size() / n, "node {} has {} of {} pages", k, per_node[k], nodes.size());
    shares += fmt::format("{}{}", k ? "/" : "", per_node[k]);
  }
  numa_note(fmt::format("pages per node {}", shares));
}

CANOPY_NUMA_CHECK(omp_alloc_partition_blocked_contiguous_blocks, 1) {
  PartitionAllocator a(kBlocked);
  const int n = num_nodes();
  Block b(3 * (1 << 18) + 777, a.handle);
  const std::vector<int> nodes = b.nodes();
  const std::size_t per = (nodes.size() + n - 1) / n;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    numa_require(nodes[i] == static_cast<int>(i / per), "page {} of {} on node {}, expected node {} ({} pages a node)",
                 i, nodes.size(), nodes[i], i / per, per);
  numa_note(fmt::format("{} pages, blocks of {} per node", nodes.size(), per));
}
