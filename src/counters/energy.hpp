// Energy of a run (as libKOMP reported it): package and DRAM energy from
// the kernel's powercap interface (RAPL: /sys/class/powercap/intel-rapl:*,
// energy_uj with its wrap-around at max_energy_range_uj), else from perf's
// power events (energy-pkg, energy-ram) where they can be opened. Both are
// machine-wide: every process on the packages counts. Where neither is
// there, one reason (a virtual machine has neither).
//
// Read when a run starts and when it ends (or CANOPY_STATS prints), never
// in between: a powercap counter that wraps more than once between the two
// readings undercounts (a package at 100 W wraps about every 45 minutes;
// docs/trace.md says so).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace canopy::counters {

// Micro-joules between two readings of a counter that wraps to 0 after
// max_range_uj (powercap's max_energy_range_uj); at most one wrap.
std::uint64_t energy_delta_uj(std::uint64_t start_uj, std::uint64_t end_uj, std::uint64_t max_range_uj);

struct EnergyReading {
  std::string domain;  // package-0, dram-0, ...
  double joules = 0;
};

class EnergyMeter {
 public:
  EnergyMeter() = default;
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  // Finds the domains under `sysfs_root` (tests: a fake tree) and reads
  // their counters.
  void start(const std::string& sysfs_root = "/sys");
  // Joules per domain since start() (empty: see why_missing()).
  std::vector<EnergyReading> read();
  // Why there is no reading ("" when there is).
  const std::string& why_missing() const { return why_; }
  // Where the readings come from ("powercap" or "perf power events").
  const std::string& source() const { return source_; }

 private:
  struct Domain {
    std::string name;
    std::string path;  // powercap: .../energy_uj
    std::uint64_t max_range_uj = 0;
    std::uint64_t start_uj = 0;
    std::vector<int> fds;  // perf: one event per CPU of the power PMU's cpumask
    double scale = 0;      // perf: joules per count
    std::uint64_t start_count = 0;
  };
  bool start_powercap(const std::string& root, std::string* why);
  bool start_perf(const std::string& root, std::string* why);

  std::vector<Domain> domains_;
  std::string why_;
  std::string source_;
};

}  // namespace canopy::counters
