// The BT-MZ-like benchmark (btmz.hpp) with canopy: the outer level is one
// group per zone, the inner level the zone's time step cut into tasks of
// about --grain points (a block of rows each), spawned into the zone's
// group; every step the main task spawns all zones' tasks, then waits for
// each zone (the exchange of the next step reads the neighbours' rows).
// Zone arrays are data_allocate'd (first touch) and first written by an
// initialisation pass of the same tasks, inside the timed part.
//   --mode groups         one Bubble per zone, split from a Bubble of the
//                         whole runtime with expected work = the zone's
//                         points and its two arrays attached (the memory
//                         scheduler keeps a group near them; a group with
//                         data is never taken whole by another NUMA node)
//   --mode groups-nowork  the same split without hints (no work, no data):
//                         every zone counts the same
//   --mode taskgroup      a plain TaskGroup per zone: the tasks go to the
//                         spawning worker's deque and work stealing spreads them
// In the group modes each run prints "BTMZ impl=.. groups_taken=N": how many
// times an idle subtree took a zone's group whole (Bubble::times_taken).
#include <canopy/bubble.hpp>
#include <canopy/data.hpp>
#include <canopy/runtime.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "btmz/btmz.hpp"
#include "locality.hpp"

namespace bt = apps::btmz;

int main(int argc, char** argv) {
  const bt::BtmzArgs ba = bt::parse(argc, argv, true);
  const apps::Args& a = ba.common;
  const bt::Config c = bt::config(ba);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  const std::string impl = "canopy-" + ba.mode;
  const auto zones = static_cast<std::size_t>(c.zones);
  std::vector<canopy::Data> u[2];
  std::vector<double*> p[2];

  auto prepare = [&] {
    for (int k = 0; k < 2; ++k) {
      for (canopy::Data d : u[k]) canopy::data_free(d);
      u[k].clear();
      p[k].clear();
      for (int z = 0; z < c.zones; ++z) {
        u[k].push_back(canopy::data_allocate(sizeof(double) * c.doubles(z)));
        p[k].push_back(static_cast<double*>(canopy::data_ptr(u[k].back())));
      }
    }
  };
  int run = 0;
  auto timed = [&] {
    const bool log = a.locality && ++run == a.warmups + a.reps;  // the last run's last step
    rt.run([&] {
      // Each zone's task-spawning interface, whatever the mode.
      std::vector<canopy::Bubble> groups;
      std::vector<std::unique_ptr<canopy::TaskGroup>> plain;
      std::unique_ptr<canopy::Bubble> all;
      if (ba.mode == "taskgroup") {
        for (std::size_t z = 0; z < zones; ++z) plain.push_back(std::make_unique<canopy::TaskGroup>(rt));
      } else {
        all = std::make_unique<canopy::Bubble>(rt);
        std::vector<canopy::BubbleOptions> opts(zones);
        if (ba.mode == "groups")
          for (int z = 0; z < c.zones; ++z) {
            opts[static_cast<std::size_t>(z)].work = static_cast<double>(c.points(z));
            opts[static_cast<std::size_t>(z)].data = {u[0][static_cast<std::size_t>(z)], u[1][static_cast<std::size_t>(z)]};
            opts[static_cast<std::size_t>(z)].passes = static_cast<double>(c.steps);
          }
        groups = all->split(opts);
      }
      auto spawn = [&](int z, auto&& f) {
        if (plain.empty())
          groups[static_cast<std::size_t>(z)].spawn(std::forward<decltype(f)>(f));
        else
          plain[static_cast<std::size_t>(z)]->spawn(std::forward<decltype(f)>(f));
      };
      auto wait_all = [&] {
        for (auto& g : groups) g.wait();
        for (auto& g : plain) g->wait();
      };
      // Every zone's rows in blocks of rows_per_task, as tasks of its group.
      auto each_block = [&](auto&& body) {
        for (int z = 0; z < c.zones; ++z)
          for (long r0 = 0; r0 < c.rows; r0 += c.rows_per_task(z))
            spawn(z, [&body, z, r0, r1 = std::min(c.rows, r0 + c.rows_per_task(z))] { body(z, r0, r1); });
        wait_all();
      };
      each_block([&](int z, long r0, long r1) { bt::init_rows(c, z, p[0][static_cast<std::size_t>(z)], r0, r1); });
      for (long t = 0; t < c.steps; ++t) {
        if (log && t + 1 == c.steps) apps::locality_enable(true);
        double* const* in = p[t % 2].data();
        double* const* out = p[(t + 1) % 2].data();
        each_block([&](int z, long r0, long r1) { bt::step_rows(c, z, in, out, r0, r1); });
      }
      apps::locality_enable(false);
      // How often an idle subtree took a zone's group whole (run.py reports it):
      // what balanced the level when expected work alone did not.
      std::uint64_t taken = 0;
      for (const canopy::Bubble& g : groups) taken += g.times_taken();
      if (!groups.empty()) std::printf("BTMZ impl=%s groups_taken=%llu\n", impl.c_str(), static_cast<unsigned long long>(taken));
    });
  };
  auto check = [&] { bt::check(argv[0], c, p[c.steps % 2], a.inject_error); };
  apps::measure(a, "btmz", impl.c_str(), c.steps, prepare, timed, check);
  if (a.locality) apps::locality_print("btmz", impl.c_str(), a.threads, apps::locality_summarize());
  for (auto& v : u)
    for (canopy::Data d : v) canopy::data_free(d);
}
