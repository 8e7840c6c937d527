// NUMA checks of the memory scheduler (docs/groups-memory.md): Twisted-
// STREAM's second phase in small, with real first-touch pages and real
// migrations. Each node gets three vectors written there (phase 1, first
// touch, by tasks pinned to the node); then one group per node is given
// vectors: all three of the next node's (Twisted-100: the groups move, nothing migrates), two of the next
// node's and its own third (Twisted-66: the groups move, the third follows
// them), or its own two and one of the next node's (the work stays, that
// one migrates). Passes are set high so that the measured model always
// says migrate a remote vector; what is checked is what moves and where
// the pages end, page by page, and that each group's tasks ran on its data.
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "canopy/binding.hpp"
#include "canopy/bubble.hpp"
#include "canopy/data.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "numa_check.hpp"

using namespace canopy;
using numa_check::current_node;

namespace {

constexpr std::size_t kPages = 64;
std::string note;  // the PASS line's, one part per variant

// Variant: which vector of which group each group gets in phase 2 (0: its
// own, 1: the next node's), per vector a, b, c.
void twisted(const char* name, const int (&from_next)[3], int expect_moved_groups, int expect_vectors_migrated) {
  RuntimeOptions o;
  o.num_threads = 0;
  o.bind = BindMode::Core;
  Runtime rt(o);
  const int n = rt.num_numa_nodes();
  const std::size_t bytes = kPages * data_page_size();
  std::vector<std::vector<Data>> v(n);
  for (auto& g : v)
    for (int j = 0; j < 3; ++j) g.push_back(data_allocate(bytes));
  std::vector<int> group_node(n, -1);
  std::atomic<int> off_node{0}, ran_off{0};
  std::uint64_t taken = 0;
  const MemorySchedulerStats before = memory_scheduler_stats();
  rt.run([&] {
    // Phase 1: each node's vectors written there (first touch), by tasks
    // pinned to the node.
    {
      TaskGroup t(rt);
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < 3; ++j)
          t.spawn(Affinity::node(k, true), [&, k, j] { std::memset(data_ptr(v[k][j]), k + 1, bytes); });
      t.wait();
    }
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < 3; ++j)
        numa_require(data_home_node(v[k][j]) == k, "{}: vector {} of node {} was written on node {}", name, j, k,
                     data_home_node(v[k][j]));
    Bubble all(rt);
    // Phase 2.
    std::vector<BubbleOptions> p2(n);
    std::vector<std::vector<Data>> mine(n);
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < 3; ++j) mine[k].push_back(v[from_next[j] ? (k + 1) % n : k][j]);
      p2[k] = {.work = 1, .data = mine[k], .passes = 1000};
    }
    std::vector<Bubble> g = all.split(p2);
    // Where the scheduler put each group: its pages must all be there.
    for (int k = 0; k < n; ++k) {
      group_node[k] = rt.worker_numa_node(g[k].workers().front());
      for (Data d : mine[k])
        for (int pg : data_page_nodes(d))
          if (pg != group_node[k]) off_node.fetch_add(1);
    }
    // And its task runs there (unless an idle node took the group whole:
    // the VMs' slow wake-ups make that possible).
    for (int k = 0; k < n; ++k)
      g[k].spawn([&, k] {
        if (current_node() != group_node[k]) ran_off.fetch_add(1);
      });
    for (Bubble& b : g) b.wait();
    for (Bubble& b : g) taken += b.times_taken();
    for (Bubble& b : g) b.wait();
  });
  const MemorySchedulerStats after = memory_scheduler_stats();
  const std::uint64_t migrated = after.bytes_migrated - before.bytes_migrated;
  const std::uint64_t moved = after.groups_moved - before.groups_moved;
  numa_require(off_node.load() == 0, "{}: {} pages of a group's vectors were off the node it was placed on", name,
               off_node.load());
  numa_require(ran_off.load() == 0 || taken > 0, "{}: {} groups' tasks ran off their node, no group was taken whole",
               name, ran_off.load());
  numa_require(moved == static_cast<std::uint64_t>(expect_moved_groups * n), "{}: {} groups moved, expected {}",
               name, moved, expect_moved_groups * n);
  numa_require(migrated == static_cast<std::uint64_t>(expect_vectors_migrated * n) * bytes,
               "{}: {} bytes migrated, expected {} ({} vector(s) per group)", name, migrated,
               static_cast<std::uint64_t>(expect_vectors_migrated * n) * bytes, expect_vectors_migrated);
  numa_require(after.pages_not_moved == before.pages_not_moved, "{}: {} pages the kernel did not move", name,
               after.pages_not_moved - before.pages_not_moved);
  const double share_before = 100.0 * static_cast<double>(after.bytes_local_before - before.bytes_local_before) /
                              static_cast<double>(after.bytes_attached - before.bytes_attached);
  note += fmt::format("{}: {} groups moved, {} KiB migrated, local {:.0f}% -> 100%; ", name, moved, migrated / 1024,
                      share_before);
  for (auto& g : v)
    for (Data d : g) data_free(d);
}

}  // namespace

CANOPY_NUMA_CHECK(memsched_twisted_stream_phases, 2) {
  const int all_next[3] = {1, 1, 1}, two_next[3] = {1, 1, 0}, one_next[3] = {0, 0, 1};
  twisted("Twisted-100", all_next, 1, 0);
  twisted("Twisted-66", two_next, 1, 1);
  twisted("one remote", one_next, 0, 1);
  const MemorySchedulerStats m = memory_scheduler_stats();
  numa_require(m.model_measured, "the cost model was never measured (Twisted-66 needs it)");
  numa_note(note + fmt::format("model: migration {:.0f} us + {:.2f} ns/B, read {:.2f} ns/B", m.migrate_fixed_ns / 1e3,
                               m.migrate_ns_per_byte, m.read_ns_per_byte));
  note.clear();
}
