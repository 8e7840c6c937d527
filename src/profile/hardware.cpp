// Whether this machine offers hardware data-address sampling (Intel's
// load-latency "mem-loads"/"mem-stores" events, AMD's IBS op sampling) to
// perf_event_open, and why not, in one line: `canopy profile` reports it
// next to the portable mechanism it uses.
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "canopy/profile.hpp"

namespace canopy {

std::string hardware_sampling_status() {
  const std::string pmus = "/sys/bus/event_source/devices";
  const bool intel = ::access((pmus + "/cpu/events/mem-loads").c_str(), F_OK) == 0;
  const bool amd = ::access((pmus + "/ibs_op").c_str(), F_OK) == 0;
  if (!intel && !amd) {
    if (::access((pmus + "/cpu").c_str(), F_OK) != 0)
      return fmt::format("no hardware performance counters are exposed here ({}/cpu is absent: usual in a "
                         "virtual machine or container)",
                         pmus);
    return fmt::format("the processor's PMU offers no data-address sampling event ({}/cpu/events/mem-loads "
                       "and {}/ibs_op are absent)",
                       pmus, pmus);
  }
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  if (paranoid > 1 && ::geteuid() != 0)
    return fmt::format("{} is exposed but /proc/sys/kernel/perf_event_paranoid is {} (address sampling of "
                       "user code needs 1 or less, or root)",
                       intel ? "mem-loads" : "IBS", paranoid);
  return fmt::format("{} is exposed here, but canopy does not read hardware address samples yet", 
                     intel ? "mem-loads" : "IBS");
}

}  // namespace canopy
