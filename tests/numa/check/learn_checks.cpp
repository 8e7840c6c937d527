// NUMA checks of first-touch learning (docs/groups-memory.md): handles
// allocated with the default first-touch placement and written by tasks on
// each node are found where their pages went without data_refresh_location,
// so that Affinity::near and owner computes send later tasks there. Without
// learning every such handle would look unplaced (home -1, node 0 for the
// runtime) and the tasks aimed at the other nodes would run on node 0.
#include <atomic>
#include <cstring>
#include <vector>

#include "canopy/binding.hpp"
#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "numa_check.hpp"

using namespace canopy;
using numa_check::current_node;

namespace {

RuntimeOptions learn_options() {
  RuntimeOptions o;
  o.num_threads = 0;
  o.bind = BindMode::Core;
  o.data_affinity = DataAffinity::Write;
  return o;
}

constexpr std::size_t kPages = 32;

}  // namespace

CANOPY_NUMA_CHECK(data_first_touch_learned_for_near, 2) {
  Runtime rt(learn_options());
  const int n = rt.num_numa_nodes();
  const std::size_t bytes = kPages * data_page_size();
  std::vector<Data> h(n);
  for (int k = 0; k < n; ++k) h[k] = data_allocate(bytes);  // first touch: no location yet
  const DataStats before = data_stats();
  // Each handle written by a task on its node.
  rt.run([&] {
    TaskGroup g(rt);
    for (int k = 0; k < n; ++k) g.spawn(Affinity::node(k, true), [&, k] { std::memset(data_ptr(h[k]), 1, bytes); });
    g.wait();
  });
  for (int k = 0; k < n; ++k)
    numa_require(detail::data_entry(h[k]).home_node.load() == -1,
                 "handle {} has home node {} before anything asked (the test needs an unknown location)", k,
                 detail::data_entry(h[k]).home_node.load());
  // Strict near(handle): resolving the hint learns where the pages went.
  std::atomic<int> wrong{0}, first_wrong{-1};
  rt.run([&] {
    TaskGroup g(rt);
    for (int i = 0; i < 40; ++i)
      for (int k = 0; k < n; ++k)
        g.spawn(Affinity::near(h[k], true), [&, k] {
          const int at = current_node();
          if (at != k && wrong.fetch_add(1) == 0) first_wrong = k * 100 + at;
        });
    g.wait();
  });
  numa_require(wrong.load() == 0, "{} near(first-touch handle) tasks ran off its node (first: handle of node {} on {})",
               wrong.load(), first_wrong.load() / 100, first_wrong.load() % 100);
  for (int k = 0; k < n; ++k) {
    numa_require(detail::data_entry(h[k]).home_node.load() == k, "handle written on node {} learned as node {}", k,
                 detail::data_entry(h[k]).home_node.load());
    numa_require(detail::data_entry(h[k]).unplaced.load() == 0, "handle {} still has {} unplaced bytes", k,
                 detail::data_entry(h[k]).unplaced.load());
  }
  const DataStats after = data_stats();
  numa_require(after.learned - before.learned == static_cast<std::uint64_t>(n), "{} handles learned, expected {}",
               after.learned - before.learned, n);
  for (Data d : h) data_free(d);
  numa_note(fmt::format("{} handles learned in {} kernel looks; {} near tasks on their node", n,
                        after.looks - before.looks, 40 * n));
}

CANOPY_NUMA_CHECK(dataflow_owner_computes_on_first_touch_data, 2) {
  Runtime rt(learn_options());
  const int n = rt.num_numa_nodes();
  const std::size_t bytes = kPages * data_page_size();
  constexpr int kPerNode = 4, kRounds = 20;
  std::vector<Data> h(n * kPerNode);
  for (Data& d : h) d = data_allocate(bytes);
  std::atomic<std::uint64_t> local{0}, remote{0};
  rt.run([&] {
    // Initialisation: handle i written (first touch) by a task pinned to node i mod n.
    for (int i = 0; i < n * kPerNode; ++i) {
      Data d = h[i];
      submit(rt, {write(d)}, [=] { std::memset(data_ptr(d), 1, bytes); }, Affinity::node(i % n, true));
    }
    // Then unhinted read-write tasks: owner computes sends each to the
    // node its handle's pages went to, which canopy must learn.
    for (int round = 0; round < kRounds; ++round)
      for (int i = 0; i < n * kPerNode; ++i) {
        Data d = h[i];
        const int home = i % n;
        submit(rt, {read_write(d)}, [=, &local, &remote] {
          auto* p = static_cast<unsigned char*>(data_ptr(d));
          for (std::size_t b = 0; b < bytes; b += 64) p[b] = static_cast<unsigned char>(p[b] + 1);
          (current_node() == home ? local : remote).fetch_add(bytes);
        });
      }
    wait_all(rt);
  });
  for (int i = 0; i < n * kPerNode; ++i)
    numa_require(detail::data_entry(h[i]).home_node.load() == i % n, "handle {} written on node {} learned as {}", i,
                 i % n, detail::data_entry(h[i]).home_node.load());
  for (Data d : h) data_free(d);
  const double share = static_cast<double>(local.load()) / static_cast<double>(local.load() + remote.load());
  // Without learning the handles have no location, owner computes has no
  // target and about 1/n of the bytes are local.
  numa_require(share >= 0.75, "{:.1f}% of the bytes written on the handle's node, expected at least 75%",
               100 * share);
  numa_note(fmt::format("{:.1f}% of {:.1f} MB written on the handle's node", 100 * share,
                        static_cast<double>(local.load() + remote.load()) / 1e6));
}
