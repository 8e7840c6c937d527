// The per-worker task pool: blocks come back to the pool that owns them,
// also when another thread frees them, so memory does not grow without end.
#include "canopy/detail/task.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

using canopy::detail::kBlockBytes;
using canopy::detail::kSlabBytes;
using canopy::detail::TaskPool;

TEST(TaskPool, ReusesFreedBlocks) {
  TaskPool pool;
  void* a = pool.alloc(0);
  void* b = pool.alloc(0);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % kBlockBytes[0], 0u);
  pool.free(b, 0);
  EXPECT_EQ(pool.alloc(0), b);  // LIFO: the warmest block first
  pool.free(a, 0);
  pool.free(b, 0);
  EXPECT_EQ(pool.slab_count(), 1u);
}

TEST(TaskPool, BlocksStayInsideTheirSlab) {
  TaskPool pool;
  std::set<void*> seen;
  const std::size_t per_slab = kSlabBytes / kBlockBytes[1] - 1;
  for (std::size_t i = 0; i < per_slab; ++i) {
    void* p = pool.alloc(1);
    EXPECT_TRUE(seen.insert(p).second);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kBlockBytes[1], 0u);
  }
  EXPECT_EQ(pool.slab_count(), 1u);
  pool.alloc(1);
  EXPECT_EQ(pool.slab_count(), 2u);
}

TEST(TaskPool, RemoteFreesGoBackToTheOwner) {
  TaskPool owner, thief;
  const int kRounds = 50, kBlocks = 3000;
  for (int r = 0; r < kRounds; ++r) {
    std::vector<void*> blocks;
    for (int i = 0; i < kBlocks; ++i) blocks.push_back(owner.alloc(0));
    // Another thread (and another pool) frees them: they return to `owner`
    // (in chains, the last one when the thief flushes).
    std::thread t([&] {
      for (void* p : blocks) thief.free(p, 0);
      thief.flush_remote();
    });
    t.join();
  }
  // Without the way back, each round would need new slabs.
  EXPECT_LE(owner.slab_count(), 4u);
  EXPECT_EQ(thief.slab_count(), 0u);
}

TEST(TaskPool, ConcurrentRemoteFrees) {
  TaskPool owner;
  std::vector<void*> blocks;
  for (int i = 0; i < 4000; ++i) blocks.push_back(owner.alloc(0));
  std::vector<std::thread> ts;
  TaskPool others[4];
  for (int k = 0; k < 4; ++k)
    ts.emplace_back([&, k] {
      for (std::size_t i = k; i < blocks.size(); i += 4) others[k].free(blocks[i], 0);
      others[k].flush_remote();
    });
  for (auto& t : ts) t.join();
  const std::size_t slabs = owner.slab_count();
  std::set<void*> again;
  for (int i = 0; i < 4000; ++i) again.insert(owner.alloc(0));
  EXPECT_EQ(again.size(), 4000u);       // none handed out twice
  EXPECT_EQ(owner.slab_count(), slabs);  // all came back: no new slab
}

TEST(TaskPool, DeferredBlocksGoBackInChains) {
  TaskPool a, b, thief;
  void* pa = a.alloc(0);
  void* pb = b.alloc(0);
  thief.free(pa, 0);  // deferred for a
  thief.free(pb, 0);  // another owner: a's chain is given back first
  thief.flush_remote();
  // Both blocks are back: after their first slab's bump blocks, the owners
  // see them again (refill takes the given-back chain before a new slab).
  std::set<void*> seen_a;
  for (std::size_t i = 0; i < kSlabBytes / kBlockBytes[0] - 1; ++i) seen_a.insert(a.alloc(0));
  EXPECT_TRUE(seen_a.count(pa));
  EXPECT_EQ(a.slab_count(), 1u);
}
