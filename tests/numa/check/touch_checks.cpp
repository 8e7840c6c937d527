// NUMA checks of next-touch and next-write (src/data/touch.cpp,
// docs/groups-memory.md): a marked handle's pages move to the node of the
// first task that declares an access to it (next-write: a writer), and only
// then; blocks of one region registered as handles move each to its own
// toucher's node; two tasks on two nodes claiming one handle at once leave
// every page on one of the two nodes, moved once. Where pages are is the
// kernel's answer (data_page_nodes), not canopy's bookkeeping.
#include <atomic>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/runtime.hpp"
#include "numa_check.hpp"

using namespace canopy;

namespace {

constexpr std::size_t kPages = 16;

RuntimeOptions bound() {
  RuntimeOptions o;
  o.num_threads = 0;  // one worker per core: every node has workers
  o.bind = BindMode::Core;
  o.data_affinity = DataAffinity::None;  // where tasks run is their strict hint alone
  return o;
}

int pages_on(Data d, int node) {
  int c = 0;
  for (int k : data_page_nodes(d)) c += k == node;
  return c;
}

void run_on(Runtime& rt, int node, std::initializer_list<Access> acc) {
  rt.run([&] {
    submit(acc, [] {}, Affinity::node(node, true));
    wait_all();
  });
}

}  // namespace

CANOPY_NUMA_CHECK(data_next_touch_and_next_write_move_once, 2) {
  Runtime rt(bound());
  const int n = rt.num_numa_nodes();
  const std::size_t page = data_page_size(), bytes = kPages * page;
  const DataStats s0 = data_stats();
  for (int k = 0; k < n; ++k) {
    const int from = (k + 1) % n, other = (k + 2) % n;
    // Next-touch: a reader on node k takes it; a later task elsewhere does not.
    Data t = data_allocate(bytes, DataPlacement::on_node(from));
    data_mark_next_touch(t);
    run_on(rt, k, {read(t)});
    numa_require(pages_on(t, k) == static_cast<int>(kPages), "next-touch: {} of {} pages on node {} (the reader's)",
                 pages_on(t, k), kPages, k);
    numa_require(data_touch_mark(t) == DataTouchMark::None, "next-touch: the mark is still there after the claim");
    run_on(rt, other, {read_write(t)});
    numa_require(pages_on(t, k) == static_cast<int>(kPages), "next-touch: pages left node {} without a new mark", k);
    // Next-write: a reader on node `other` leaves it; the writer on k takes it.
    Data w = data_allocate(bytes, DataPlacement::on_node(from));
    data_mark_next_write(w);
    if (other != k) {
      run_on(rt, other, {read(w)});
      numa_require(pages_on(w, from) == static_cast<int>(kPages), "next-write: a reader moved pages");
    }
    run_on(rt, k, {write(w)});
    numa_require(pages_on(w, k) == static_cast<int>(kPages), "next-write: {} of {} pages on node {} (the writer's)",
                 pages_on(w, k), kPages, k);
    data_free(t);
    data_free(w);
  }
  const DataStats s1 = data_stats();
  const std::uint64_t expect = 2ull * n * bytes;
  numa_require(s1.touch_bytes_migrated - s0.touch_bytes_migrated == expect && s1.touch_claims - s0.touch_claims ==
                   static_cast<std::uint64_t>(2 * n) && s1.touch_pages_not_moved == s0.touch_pages_not_moved,
               "stats: {} bytes migrated by {} claims ({} pages not moved), expected {} by {}",
               s1.touch_bytes_migrated - s0.touch_bytes_migrated, s1.touch_claims - s0.touch_claims,
               s1.touch_pages_not_moved - s0.touch_pages_not_moved, expect, 2 * n);
  numa_note(fmt::format("{} handles x {} pages moved to their claimer's node, {} bytes", 2 * n, kPages, expect));
}

CANOPY_NUMA_CHECK(data_next_touch_blocks_and_concurrent_claims, 2) {
  Runtime rt(bound());
  const int n = rt.num_numa_nodes();
  const std::size_t page = data_page_size(), block = 4 * page;
  // One region on node 0, one handle per block; block b read by a task on node b mod n.
  const int blocks = 2 * n;
  Data region = data_allocate(blocks * block, DataPlacement::on_node(0));
  std::vector<Data> b(blocks);
  for (int i = 0; i < blocks; ++i) {
    b[i] = data_register(static_cast<char*>(data_ptr(region)) + i * block, block);
    data_mark_next_touch(b[i]);
  }
  rt.run([&] {
    for (int i = 0; i < blocks; ++i) submit({read(b[i])}, [] {}, Affinity::node(i % n, true));
    wait_all();
  });
  const std::vector<int> nodes = data_page_nodes(region);
  for (std::size_t p = 0; p < nodes.size(); ++p) {
    const int want = static_cast<int>(p * page / block) % n;
    numa_require(nodes[p] == want, "block {}: page {} on node {}, expected {} (its reader's)", p * page / block, p,
                 nodes[p], want);
  }
  for (Data d : b) data_free(d);
  data_free(region);
  // Two readers on two nodes start together on one marked handle: every
  // page ends on one of the two nodes, moved by one claim.
  int splits = 0;
  for (int round = 0; round < 10; ++round) {
    Data d = data_allocate(kPages * page, DataPlacement::on_node(n - 1));
    data_mark_next_touch(d);
    const DataStats s0 = data_stats();
    std::atomic<int> arrived{0};
    rt.run([&] {
      for (int k = 0; k < 2; ++k)
        submit({read(d)}, [&] { arrived.fetch_add(1); }, Affinity::node(k, true));
      wait_all();
    });
    const int on0 = pages_on(d, 0), on1 = pages_on(d, 1);
    numa_require(on0 == static_cast<int>(kPages) || on1 == static_cast<int>(kPages),
                 "round {}: {} pages on node 0 and {} on node 1: the claim was split", round, on0, on1);
    splits += on1 == static_cast<int>(kPages);
    numa_require(data_stats().touch_claims - s0.touch_claims == 1, "round {}: {} claims", round,
                 data_stats().touch_claims - s0.touch_claims);
    data_free(d);
  }
  numa_note(fmt::format("{} blocks each on its reader's node; 10 concurrent claims, node 1 won {}", blocks, splits));
}
