// Twisted-STREAM with canopy bubbles: one group per NUMA node (a Bubble of
// the split of the whole runtime), each iteration one task per worker of
// the group, each on its chunk of the group's vectors (data_allocate, first
// touch: the first phase's tasks place the pages). Each phase is one split.
//   --mode first-touch  the groups carry no data: placed by expected work
//                       alone (group g on node g in both phases)
//   --mode memsched     each group's split carries its three vectors and the
//                       phase's passes (the iteration count): in phase 2 the
//                       memory scheduler moves the groups to their data and
//                       migrates what the cost model says (docs/groups-memory.md)
// Per phase a PHASE line: time, the share of the bytes the tasks accessed
// on their own node (the kernel's answer, locality.hpp; counted in every
// iteration with --locality, else in none: 1.0), bytes the memory scheduler
// migrated and groups it moved.
#include <canopy/bubble.hpp>
#include <canopy/data.hpp>
#include <canopy/runtime.hpp>

#include <array>
#include <string>
#include <vector>

#include "locality.hpp"
#include "twisted_stream/twisted_stream.hpp"

namespace tw = apps::twisted;

int main(int argc, char** argv) {
  const tw::TwistedArgs ta = tw::parse(argc, argv, true);
  const apps::Args& a = ta.common;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  const tw::Config c = tw::config(ta, rt.num_numa_nodes(), argv[0]);
  const bool memsched = ta.mode == "memsched";
  const std::string impl = "canopy-" + ta.mode;
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(c.n);
  std::vector<canopy::Data> v;
  auto vec = [&](int k) { return static_cast<double*>(canopy::data_ptr(v[static_cast<std::size_t>(k)])); };

  auto prepare = [&] {
    for (canopy::Data d : v) canopy::data_free(d);
    v.clear();
    for (int k = 0; k < 3 * c.groups; ++k) v.push_back(canopy::data_allocate(bytes));
  };
  auto timed = [&] {
    rt.run([&] {
      canopy::Bubble all(rt);
      for (int phase = 1; phase <= 2; ++phase) {
        std::vector<canopy::BubbleOptions> opts(static_cast<std::size_t>(c.groups));
        std::vector<std::array<int, 3>> w(static_cast<std::size_t>(c.groups));
        for (int g = 0; g < c.groups; ++g) {
          tw::phase_vectors(c, phase, g, w[static_cast<std::size_t>(g)].data());
          opts[static_cast<std::size_t>(g)].work = 1;
          if (memsched) {
            for (int k : w[static_cast<std::size_t>(g)]) opts[static_cast<std::size_t>(g)].data.push_back(v[static_cast<std::size_t>(k)]);
            opts[static_cast<std::size_t>(g)].passes = static_cast<double>(c.iterations);
          }
        }
        const canopy::MemorySchedulerStats before = canopy::memory_scheduler_stats();
        const double t0 = bench::now();
        if (a.locality) apps::locality_enable(true);
        std::vector<canopy::Bubble> groups = all.split(opts);
        for (long t = 0; t < c.iterations; ++t) {
          for (int g = 0; g < c.groups; ++g) {
            canopy::Bubble& b = groups[static_cast<std::size_t>(g)];
            const long chunks = static_cast<long>(b.workers().size());
            const std::array<int, 3> k = w[static_cast<std::size_t>(g)];
            for (long ch = 0; ch < chunks; ++ch)
              b.spawn([&, k, ch, chunks] {
                const long begin = c.n * ch / chunks, end = c.n * (ch + 1) / chunks;
                // Phase 1's first iteration writes the pages first (first touch).
                if (phase == 1 && t == 0)
                  for (int x : k)
                    for (long i = begin; i < end; ++i) vec(x)[i] = tw::initial(x, i);
                if (apps::locality_enabled())
                  for (int x : k) apps::locality_record(vec(x) + begin, sizeof(double) * static_cast<std::size_t>(end - begin));
                tw::triad(vec(k[0]), vec(k[1]), vec(k[2]), begin, end);
              });
          }
          for (canopy::Bubble& b : groups) b.wait();
        }
        apps::locality_enable(false);
        const double secs = bench::now() - t0;
        const canopy::MemorySchedulerStats after = canopy::memory_scheduler_stats();
        const apps::LocalitySummary loc = apps::locality_summarize();
        tw::print_phase(c, impl.c_str(), phase, secs, loc.local_share(), after.bytes_migrated - before.bytes_migrated,
                        after.groups_moved - before.groups_moved);
      }
    });
  };
  auto check = [&] {
    if (a.inject_error) vec(0)[c.n / 2] += 1.0;
    tw::check(argv[0], c, vec);
  };
  apps::measure(a, "twisted_stream", impl.c_str(), 2 * c.iterations, prepare, timed, check);
  for (canopy::Data d : v) canopy::data_free(d);
}
