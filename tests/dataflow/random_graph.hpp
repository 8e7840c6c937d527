// The random-graph checker of the data-flow tests: each handle carries a
// version; each task checks that it sees the versions the sequential order
// predicts and bumps what it writes, and a writer marks the handle busy
// while it runs, so that a concurrent reader or writer is caught. Used for
// canopy::submit (order_test.cpp) and TaskGraph (taskgraph_test.cpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <random>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "canopy/dataflow.hpp"
#include "test_util.hpp"

namespace dataflow_test {

struct RandomGraph {
  static constexpr std::int64_t kBusy = -1;
  std::vector<std::atomic<std::int64_t>> version;
  std::atomic<std::int64_t> errors{0};
  std::atomic<std::int64_t> ran{0};
  explicit RandomGraph(std::size_t handles) : version(handles) {}
  // Versions back to 0 (where the predictions start) before a run.
  void reset() {
    for (auto& v : version) v.store(0);
    ran.store(0);
  }
};

// Makes `tasks` tasks with 1..width random accesses over `h` handles and
// passes each to add(std::span<const canopy::Access>, callable) in order.
// With `repeats`, a task may list a handle more than once (modes merge: a
// write wins), in any order.
template <class Add>
void make_random_graph(RandomGraph& g, const Handles& h, std::int64_t tasks, std::uint64_t seed, Add&& add,
                       int width = 4, bool repeats = false) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> predicted(h.size(), 0);
  g.reset();
  for (std::int64_t t = 0; t < tasks; ++t) {
    const int n = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(width));
    struct Check {
      std::uint32_t handle;
      std::int64_t expect;
      bool write;
    };
    std::vector<canopy::Access> acc;
    std::vector<Check> checks;
    for (int k = 0; k < n; ++k) {
      const auto i = static_cast<std::uint32_t>(rng() % h.size());
      Check* seen = nullptr;
      for (Check& c : checks)
        if (c.handle == i) seen = &c;
      if (seen && !repeats) continue;  // one access per handle
      const int m = static_cast<int>(rng() % 3);
      const auto mode = m == 0   ? canopy::AccessMode::Read
                        : m == 1 ? canopy::AccessMode::Write
                                 : canopy::AccessMode::ReadWrite;
      acc.push_back({h[i], mode});
      if (seen)
        seen->write |= mode != canopy::AccessMode::Read;
      else
        checks.push_back({i, predicted[i], mode != canopy::AccessMode::Read});
    }
    for (const Check& c : checks)
      if (c.write) ++predicted[c.handle];
    const bool slow = rng() % 64 == 0;
    add(std::span<const canopy::Access>(acc), [&g, checks = std::move(checks), slow] {
      for (const Check& c : checks) {
        if (c.write) {
          std::int64_t expect = c.expect;
          if (!g.version[c.handle].compare_exchange_strong(expect, RandomGraph::kBusy)) ++g.errors;
        } else if (g.version[c.handle].load() != c.expect) {
          ++g.errors;
        }
      }
      if (slow) std::this_thread::yield();  // widen the window for a wrong overlap
      for (const Check& c : checks) {
        if (c.write)
          g.version[c.handle].store(c.expect + 1);
        else if (g.version[c.handle].load() != c.expect)
          ++g.errors;
      }
      ++g.ran;
    });
  }
}

}  // namespace dataflow_test
