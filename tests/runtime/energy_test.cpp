// Energy of a run (src/counters/energy.cpp) on fake sysfs trees: RAPL's
// powercap zones (package and DRAM kept, core and uncore not: they are
// parts of the package), wrap-around at max_energy_range_uj, the reasons
// when there is nothing to read, and CANOPY_STATS' energy line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "canopy/runtime.hpp"
#include "counters/energy.hpp"
#include "counters/run_counters.hpp"

namespace {

namespace fs = std::filesystem;
using namespace canopy::counters;

constexpr std::uint64_t kRange = 262143328850;  // a real package's max_energy_range_uj

struct FakeSys {
  fs::path root;
  explicit FakeSys(const std::string& name)
      : root(fs::temp_directory_path() / ("canopy_energy_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~FakeSys() { fs::remove_all(root); }
  void zone(const std::string& dir, const std::string& name, std::uint64_t uj, std::uint64_t range = kRange) {
    const fs::path z = root / "class/powercap" / dir;
    fs::create_directories(z);
    std::ofstream(z / "name") << name << "\n";
    std::ofstream(z / "energy_uj") << uj << "\n";
    std::ofstream(z / "max_energy_range_uj") << range << "\n";
  }
  void set(const std::string& dir, std::uint64_t uj) {
    std::ofstream(root / "class/powercap" / dir / "energy_uj") << uj << "\n";
  }
};

TEST(Energy, DeltaHandlesWrapAround) {
  EXPECT_EQ(energy_delta_uj(100, 350, 1000), 250u);
  EXPECT_EQ(energy_delta_uj(900, 50, 1000), 150u);  // 100 to the top, then 50
  EXPECT_EQ(energy_delta_uj(kRange - 10, 20, kRange), 30u);
  EXPECT_EQ(energy_delta_uj(7, 7, 1000), 0u);
}

TEST(Energy, PowercapPackagesAndDramWithWrapAround) {
  FakeSys sys("powercap");
  sys.zone("intel-rapl:0", "package-0", 1'000'000);
  sys.zone("intel-rapl:0:0", "core", 500'000);
  sys.zone("intel-rapl:0:1", "dram", 2'000'000);
  sys.zone("intel-rapl:1", "package-1", kRange - 1'000'000);  // wraps during the run
  EnergyMeter m;
  m.start(sys.root.string());
  ASSERT_EQ(m.why_missing(), "");
  EXPECT_EQ(m.source(), "powercap");
  sys.set("intel-rapl:0", 13'500'000);
  sys.set("intel-rapl:0:0", 9'000'000);
  sys.set("intel-rapl:0:1", 2'250'000);
  sys.set("intel-rapl:1", 4'000'000);
  const std::vector<EnergyReading> r = m.read();
  ASSERT_EQ(r.size(), 3u);  // core is part of package-0: not listed
  EXPECT_EQ(r[0].domain, "package-0");
  EXPECT_DOUBLE_EQ(r[0].joules, 12.5);
  EXPECT_EQ(r[1].domain, "dram-0");
  EXPECT_DOUBLE_EQ(r[1].joules, 0.25);
  EXPECT_EQ(r[2].domain, "package-1");
  EXPECT_DOUBLE_EQ(r[2].joules, 5.0);  // 1 J to the top of the range, 4 J after the wrap
}

TEST(Energy, NothingToReadSaysWhy) {
  FakeSys sys("none");
  EnergyMeter m;
  m.start(sys.root.string());
  EXPECT_TRUE(m.read().empty());
  EXPECT_NE(m.why_missing().find("class/powercap (no powercap driver"), std::string::npos) << m.why_missing();
  EXPECT_NE(m.why_missing().find("no perf power events"), std::string::npos) << m.why_missing();

  // This VM's case: a perf power unit with only the platform's energy.
  const fs::path pmu = sys.root / "bus/event_source/devices/power";
  fs::create_directories(pmu / "events");
  std::ofstream(pmu / "type") << "9\n";
  std::ofstream(pmu / "events/energy-psys") << "event=0x05\n";
  std::ofstream(pmu / "events/energy-psys.scale") << "2.3283064365386962890625e-10\n";
  fs::create_directories(sys.root / "class/powercap");
  EnergyMeter p;
  p.start(sys.root.string());
  EXPECT_NE(p.why_missing().find("no RAPL package or DRAM zone"), std::string::npos) << p.why_missing();
  EXPECT_NE(p.why_missing().find("no energy-pkg or energy-ram (only energy-psys)"), std::string::npos)
      << p.why_missing();
}

TEST(Energy, UnreadableCounterSaysWhich) {
  FakeSys sys("garbage");
  sys.zone("intel-rapl:0", "package-0", 0);
  std::ofstream(sys.root / "class/powercap/intel-rapl:0/energy_uj") << "n/a\n";
  EnergyMeter m;
  m.start(sys.root.string());
  EXPECT_TRUE(m.read().empty());
  EXPECT_NE(m.why_missing().find("intel-rapl:0/energy_uj: 'n/a' is not a number"), std::string::npos)
      << m.why_missing();
}

// CANOPY_STATS' energy line, from the fake tree the runtime was told to read.
TEST(Energy, StatsPrintTheRunsEnergy) {
  FakeSys sys("stats");
  sys.zone("intel-rapl:0", "package-0", 5'000'000);
  Probe probe;
  probe.sysfs_root = sys.root.string();
  set_test_probe(&probe);
  std::ostringstream out;
  {
    canopy::RuntimeOptions o;
    o.num_threads = 1;
    o.bind = canopy::BindMode::None;
    o.stats = true;
    setenv("CANOPY_COUNTERS", "energy", 1);
    canopy::Runtime rt(o);
    unsetenv("CANOPY_COUNTERS");
    sys.set("intel-rapl:0", 7'000'000);
    rt.print_stats(out);
  }
  set_test_probe(nullptr);
  EXPECT_NE(out.str().find("canopy stats: energy: package-0 2.000 J in "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("(powercap; the whole machine"), std::string::npos) << out.str();
}

}  // namespace
