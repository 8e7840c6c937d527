// The affinity queue (canopy/detail/affine_queue.hpp) on its own: FIFO
// order, the peeks, and a stress test with concurrent producers and
// consumers where every task must come out exactly once.
#include "canopy/detail/affine_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.hpp"

using canopy::detail::AffineQueue;
using canopy::detail::AffineTask;

namespace {

struct Item : AffineTask {
  int producer = 0;
  int seq = 0;
};

}  // namespace

TEST(AffineQueue, FifoAcrossBatches) {
  AffineQueue q;
  std::vector<Item> items(10);
  bool busy = false;
  EXPECT_FALSE(q.maybe_nonempty());
  EXPECT_FALSE(q.looks_nonempty());
  EXPECT_EQ(q.pop(&busy), nullptr);
  for (int i = 0; i < 5; ++i) {
    items[i].seq = i;
    q.push(&items[i]);
  }
  EXPECT_TRUE(q.looks_nonempty());
  EXPECT_EQ(static_cast<Item*>(q.pop(&busy))->seq, 0);
  EXPECT_EQ(static_cast<Item*>(q.pop(&busy))->seq, 1);
  // Pushed after the first batch was taken: come after it.
  for (int i = 5; i < 10; ++i) {
    items[i].seq = i;
    q.push(&items[i]);
  }
  for (int i = 2; i < 10; ++i) {
    AffineTask* t = q.pop(&busy);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(static_cast<Item*>(t)->seq, i);
  }
  EXPECT_EQ(q.pop(&busy), nullptr);
  EXPECT_FALSE(busy);
  EXPECT_FALSE(q.looks_nonempty());
}

TEST(AffineQueue, ConcurrentProducersAndConsumers) {
  constexpr int kProducers = 3, kConsumers = 3;
  const int per = static_cast<int>(200'000 / canopy_test::kScaleDown);
  AffineQueue q;
  std::vector<std::vector<Item>> items(kProducers, std::vector<Item>(per));
  std::vector<std::atomic<int>> seen(kProducers * per);
  std::atomic<int> taken{0};
  std::atomic<bool> out_of_order{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < per; ++i) {
        items[p][i].producer = p;
        items[p][i].seq = i;
        q.push(&items[p][i]);
      }
    });
  for (int c = 0; c < kConsumers; ++c)
    threads.emplace_back([&] {
      // One consumer sees each producer's tasks in the order pushed.
      std::vector<int> last(kProducers, -1);
      while (taken.load(std::memory_order_relaxed) < kProducers * per) {
        bool busy = false;
        AffineTask* t = q.pop(&busy);
        if (!t) {
          std::this_thread::yield();
          continue;
        }
        auto* it = static_cast<Item*>(t);
        if (it->seq <= last[it->producer]) out_of_order = true;
        last[it->producer] = it->seq;
        seen[it->producer * per + it->seq].fetch_add(1);
        taken.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(taken.load(), kProducers * per);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << i;
  EXPECT_FALSE(out_of_order.load());
  EXPECT_FALSE(q.looks_nonempty());
}
