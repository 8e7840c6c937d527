// NUMA checks of data handles: the pages of every placement land on the
// nodes asked for, as the kernel reports them (move_pages), judged here
// with arithmetic of our own rather than the library's checker; the
// library's location bookkeeping (home node, bytes per node, refresh)
// agrees; and a misplaced page is reported, never accepted.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "numa_check.hpp"

using namespace canopy;

namespace {

// Handle that frees itself, so that a failed check leaks nothing.
struct Owned {
  Data d;
  explicit Owned(Data x) : d(x) {}
  ~Owned() {
    try {
      data_free(d);
    } catch (...) {
    }
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
};

std::string list(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 40; ++i) s += fmt::format("{}{}", i ? "," : "", v[i]);
  if (v.size() > 40) s += ",...";
  return s;
}

// Moves page `page` of d to logical node `node` with move_pages(2). The
// kernel's node numbers are OS indexes; the VM's nodes have equal ones.
void move_page(Data d, std::size_t page, int node) {
  void* addr = static_cast<char*>(data_ptr(d)) + page * data_page_size();
  int status = -1;
  const long rc = syscall(SYS_move_pages, 0, 1ul, &addr, &node, &status, 0);
  numa_require(rc == 0 && status == node, "move_pages of page {} to node {}: rc {}, status {} ({})", page, node, rc,
               status, std::strerror(errno));
}

void expect_home(Data d, int node, std::size_t bytes) {
  numa_require(data_home_node(d) == node, "home node {}, expected {}", data_home_node(d), node);
  const auto per_node = data_bytes_per_node(d);
  numa_require(per_node.at(node) == bytes, "{} bytes on node {}, expected {}", per_node.at(node), node, bytes);
}

}  // namespace

CANOPY_NUMA_CHECK(data_on_node_k, 1) {
  const int n = data_num_nodes();
  const std::size_t bytes = 16 * data_page_size();
  for (int k = 0; k < 2 * n; ++k) {  // k >= n wraps to k mod n
    Owned h(data_allocate(bytes, DataPlacement::on_node(k)));
    const std::vector<int> nodes = data_page_nodes(h.d);
    numa_require(nodes == std::vector<int>(16, k % n), "on_node({}): pages on {}", k, list(nodes));
    expect_home(h.d, k % n, bytes);
  }
}

CANOPY_NUMA_CHECK(data_interleaved, 1) {
  const int n = data_num_nodes();
  const std::size_t pages = 64;
  Owned h(data_allocate(pages * data_page_size(), DataPlacement::interleaved()));
  const std::vector<int> nodes = data_page_nodes(h.d);
  numa_require(nodes.size() == pages, "{} page nodes for {} pages", nodes.size(), pages);
  std::vector<int> count(n);
  for (std::size_t i = 0; i < pages; ++i) {
    numa_require(nodes[i] >= 0 && nodes[i] < n, "page {} on node {}: {}", i, nodes[i], list(nodes));
    numa_require(nodes[i] == (nodes[0] + static_cast<int>(i)) % n, "not round-robin at page {}: {}", i, list(nodes));
    ++count[nodes[i]];
  }
  for (int k = 0; k < n; ++k)
    numa_require(count[k] * n >= static_cast<int>(pages) - n, "node {} holds {} of {} pages", k, count[k], pages);
  data_check_placement(h.d, true);
}

static void block_cyclic(std::size_t block_pages) {
  const int n = data_num_nodes();
  const std::size_t page = data_page_size();
  const std::size_t pages = 4 * n * block_pages + 1;  // a partial last block
  Owned h(data_allocate(pages * page, DataPlacement::block_cyclic(block_pages * page)));
  const std::vector<int> nodes = data_page_nodes(h.d);
  numa_require(nodes.size() == pages, "{} page nodes for {} pages", nodes.size(), pages);
  for (std::size_t i = 0; i < pages; ++i)
    numa_require(nodes[i] == static_cast<int>((i / block_pages) % n), "blocks of {} pages: page {} on node {}: {}",
                 block_pages, i, nodes[i], list(nodes));
  data_check_placement(h.d, true);
  // Every node holds its share (block b on node b mod n, 4 blocks each).
  const auto per_node = data_bytes_per_node(h.d);
  for (int k = 0; k < n; ++k) {
    const std::size_t want = (4 * block_pages + (k == 0 ? 1 : 0)) * page;
    numa_require(per_node[k] == want, "node {} holds {} bytes, expected {}", k, per_node[k], want);
  }
}

CANOPY_NUMA_CHECK(data_block_cyclic_1_page, 1) { block_cyclic(1); }
CANOPY_NUMA_CHECK(data_block_cyclic_2_pages, 1) { block_cyclic(2); }
CANOPY_NUMA_CHECK(data_block_cyclic_3_pages, 1) { block_cyclic(3); }

// First touch: a thread bound to node k writes the pages; they must be on k.
CANOPY_NUMA_CHECK(data_first_touch_from_node_k, 1) {
  const std::size_t bytes = 16 * data_page_size();
  for (int k : numa_check::nodes_with_cpus()) {
    Owned h(data_allocate(bytes));
    numa_require(data_home_node(h.d) == -1, "untouched first-touch region has home node {}", data_home_node(h.d));
    std::string error;
    std::thread t([&] {
      try {
        numa_check::bind_to_node(k);
        std::memset(data_ptr(h.d), 1, bytes);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    t.join();
    numa_require(error.empty(), "thread on node {}: {}", k, error);
    const std::vector<int> nodes = data_page_nodes(h.d);
    numa_require(nodes == std::vector<int>(16, k), "touched from node {}: pages on {}", k, list(nodes));
    data_refresh_location(h.d);
    expect_home(h.d, k, bytes);
  }
}

// A region canopy did not allocate: registration reads its location. The
// region is a fresh mapping (malloc could hand back memory an earlier
// thread touched on another node).
CANOPY_NUMA_CHECK(data_registered_region_location, 1) {
  const std::size_t page = data_page_size();
  const std::size_t bytes = 16 * page;
  for (int k : numa_check::nodes_with_cpus()) {
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    numa_require(mem != MAP_FAILED, "mmap of {} bytes: {}", bytes, std::strerror(errno));
    std::unique_ptr<void, std::function<void(void*)>> unmap(mem, [bytes](void* p) { munmap(p, bytes); });
    std::string error;
    std::thread t([&] {
      try {
        numa_check::bind_to_node(k);
        std::memset(mem, 1, bytes);
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    t.join();
    numa_require(error.empty(), "thread on node {}: {}", k, error);
    // Starting 100 bytes in: 16 pages spanned, the first one in part.
    Owned h(data_register(static_cast<char*>(mem) + 100, bytes - 100));
    numa_require(data_home_node(h.d) == k, "registered region touched on node {} has home node {}", k,
                 data_home_node(h.d));
    const std::vector<int> nodes = data_page_nodes(h.d);
    numa_require(nodes == std::vector<int>(16, k), "registered region touched on node {}: pages on {}", k,
                 list(nodes));
    numa_require(data_bytes_per_node(h.d).at(k) == bytes - 100, "bytes on node {}: {}", k,
                 data_bytes_per_node(h.d).at(k));
  }
}

// Pages moved after allocation: the last look stays until a refresh, which
// then follows the pages.
CANOPY_NUMA_CHECK(data_refresh_follows_moved_pages, 2) {
  const std::size_t page = data_page_size();
  Owned h(data_allocate(8 * page));
  std::memset(data_ptr(h.d), 1, 8 * page);
  data_refresh_location(h.d);
  const int from = data_home_node(h.d);
  numa_require(from >= 0, "touched region has no home node");
  const int to = (from + 1) % data_num_nodes();
  for (std::size_t i = 0; i < 6; ++i) move_page(h.d, i, to);
  numa_require(data_home_node(h.d) == from, "home node changed without a refresh");
  data_refresh_location(h.d);
  numa_require(data_home_node(h.d) == to, "after moving 6 of 8 pages to node {}, home node {}", to,
               data_home_node(h.d));
  const auto per_node = data_bytes_per_node(h.d);
  numa_require(per_node[to] == 6 * page && per_node[from] == 2 * page, "bytes per node {} / {}", per_node[from],
               per_node[to]);
}

// A page that is not where the placement says is reported with the handle,
// the count and the page, never accepted.
CANOPY_NUMA_CHECK(data_misplaced_page_is_reported, 2) {
  const std::size_t page = data_page_size();
  Owned h(data_allocate(16 * page, DataPlacement::on_node(0)));
  move_page(h.d, 3, 1);
  std::string msg;
  try {
    data_check_placement(h.d);
  } catch (const canopy::Error& e) {
    msg = e.what();
  }
  const std::string handle = fmt::format("data handle #{}", h.d.index);
  for (const std::string& part : {handle, std::string("1 of 16 pages"), std::string("page 3 on node 1"),
                                  std::string("expected node 0")})
    numa_require(msg.find(part) != std::string::npos, "message '{}' lacks '{}'", msg, part);
  // Block-cyclic too.
  Owned b(data_allocate(8 * page, DataPlacement::block_cyclic(2 * page)));
  move_page(b.d, 0, 1);
  numa_require(!data_placement_report(b.d).ok(), "a block-cyclic page moved to the wrong node was accepted");
}

// The machine is what the VM was asked for (so that no check passed by
// being skipped): NUMAVM_NODES, when set, must be data_num_nodes().
CANOPY_NUMA_CHECK(data_node_count_matches_the_vm, 1) {
  const char* env = std::getenv("NUMAVM_NODES");
  if (!env) return;
  numa_require(std::atoi(env) == data_num_nodes(), "NUMAVM_NODES={} but canopy sees {} NUMA nodes", env,
               data_num_nodes());
}
