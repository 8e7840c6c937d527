// EnergyMeter: RAPL package and DRAM energy from powercap, else from perf's
// power events (energy.hpp).
#include "counters/energy.hpp"

#include <errno.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace canopy::counters {

namespace {

namespace fs = std::filesystem;

// The first line of a sysfs file; false (errno set) if it cannot be read.
bool read_line(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::getline(in, *out);
  return true;
}

bool read_u64(const std::string& path, std::uint64_t* out, std::string* why) {
  std::string line;
  errno = 0;
  if (!read_line(path, &line)) {
    const int e = errno;
    *why = e == EACCES || e == EPERM
               ? fmt::format("{}: {} (energy_uj is readable by root only since Linux 5.10)", path, std::strerror(e))
               : fmt::format("{}: {}", path, std::strerror(e ? e : EIO));
    return false;
  }
  char* end = nullptr;
  const unsigned long long v = std::strtoull(line.c_str(), &end, 10);
  if (end == line.c_str()) {
    *why = fmt::format("{}: '{}' is not a number", path, line);
    return false;
  }
  *out = v;
  return true;
}

// "0", "0,18", "0-3,8": the CPUs of a cpumask list.
std::vector<int> cpu_list(const std::string& s) {
  std::vector<int> cpus;
  std::istringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    const auto dash = part.find('-');
    const int a = std::atoi(part.c_str());
    const int b = dash == std::string::npos ? a : std::atoi(part.c_str() + dash + 1);
    for (int c = a; c <= b && part.find_first_of("0123456789") != std::string::npos; ++c) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace

std::uint64_t energy_delta_uj(std::uint64_t start_uj, std::uint64_t end_uj, std::uint64_t max_range_uj) {
  if (end_uj >= start_uj) return end_uj - start_uj;
  // Wrapped: up to the top of the range, then from 0.
  return max_range_uj >= start_uj ? (max_range_uj - start_uj) + end_uj : end_uj;
}

EnergyMeter::~EnergyMeter() {
  for (Domain& d : domains_)
    for (int fd : d.fds) ::close(fd);
}

bool EnergyMeter::start_powercap(const std::string& root, std::string* why) {
  const fs::path dir = fs::path(root) / "class/powercap";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *why = fmt::format("no {} (no powercap driver: a virtual machine, or a kernel without intel_rapl)", dir.string());
    return false;
  }
  std::vector<fs::path> zones;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("intel-rapl:", 0) == 0) zones.push_back(e.path());
  }
  std::sort(zones.begin(), zones.end());
  std::string first_error;
  for (const fs::path& z : zones) {
    std::string kind;
    if (!read_line((z / "name").string(), &kind)) continue;
    // intel-rapl:N is package N; its subzones intel-rapl:N:M are core,
    // uncore (parts of the package) and dram.
    const std::string zone = z.filename().string();
    const std::string package = zone.substr(11, zone.find(':', 11) - 11);
    std::string domain;
    if (kind.rfind("package", 0) == 0)
      domain = kind;
    else if (kind == "dram")
      domain = "dram-" + package;
    else
      continue;
    Domain d;
    d.name = domain;
    d.path = (z / "energy_uj").string();
    std::string err;
    if (!read_u64(d.path, &d.start_uj, &err) ||
        !read_u64((z / "max_energy_range_uj").string(), &d.max_range_uj, &err)) {
      if (first_error.empty()) first_error = err;
      continue;
    }
    domains_.push_back(d);
  }
  if (!domains_.empty()) return true;
  *why = !first_error.empty() ? first_error
                              : fmt::format("no RAPL package or DRAM zone (intel-rapl:*) in {}", dir.string());
  return false;
}

bool EnergyMeter::start_perf(const std::string& root, std::string* why) {
  const fs::path pmu = fs::path(root) / "bus/event_source/devices/power";
  std::string type_text, mask;
  if (!read_line((pmu / "type").string(), &type_text)) {
    *why = fmt::format("no perf power events ({} is missing)", pmu.string());
    return false;
  }
  read_line((pmu / "cpumask").string(), &mask);
  const std::vector<int> cpus = cpu_list(mask.empty() ? "0" : mask);
  std::string found_others;
  std::string first_error;
  for (const auto& [event, domain] : {std::pair{"energy-pkg", "package"}, std::pair{"energy-ram", "dram"}}) {
    std::string spec, scale;
    if (!read_line((pmu / "events" / event).string(), &spec)) continue;
    read_line((pmu / "events" / (std::string(event) + ".scale")).string(), &scale);
    const auto eq = spec.find("event=");
    if (eq == std::string::npos) continue;
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = static_cast<std::uint32_t>(std::strtoul(type_text.c_str(), nullptr, 10));
    attr.config = std::strtoull(spec.c_str() + eq + 6, nullptr, 0);
    Domain d;
    d.name = domain;
    d.scale = scale.empty() ? 0 : std::strtod(scale.c_str(), nullptr);
    for (int cpu : cpus) {
      const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
      if (fd < 0) {
        const int e = errno;
        if (first_error.empty())
          first_error = fmt::format(
              "perf power event {} on CPU {}: {}{}", event, cpu, strerrorname_np(e) ? strerrorname_np(e) : "?",
              e == EACCES || e == EPERM ? " (machine-wide events need perf_event_paranoid 0 or less, or CAP_PERFMON)"
                                        : fmt::format(" ({})", std::strerror(e)));
        for (int f : d.fds) ::close(f);
        d.fds.clear();
        break;
      }
      d.fds.push_back(fd);
    }
    if (d.fds.empty() || d.scale <= 0) continue;
    for (int fd : d.fds) {
      std::uint64_t v = 0;
      if (::read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v)) d.start_count += v;
    }
    domains_.push_back(std::move(d));
  }
  if (!domains_.empty()) return true;
  if (!first_error.empty()) {
    *why = first_error;
  } else {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(pmu / "events", ec)) {
      const std::string n = e.path().filename().string();
      if (n.find('.') == std::string::npos) found_others += (found_others.empty() ? "" : ", ") + n;
    }
    *why = fmt::format("perf's power events have no energy-pkg or energy-ram{}",
                       found_others.empty() ? "" : fmt::format(" (only {})", found_others));
  }
  return false;
}

void EnergyMeter::start(const std::string& sysfs_root) {
  domains_.clear();
  why_.clear();
  std::string powercap_why, perf_why;
  if (start_powercap(sysfs_root, &powercap_why)) {
    source_ = "powercap";
    return;
  }
  if (start_perf(sysfs_root, &perf_why)) {
    source_ = "perf power events";
    return;
  }
  why_ = fmt::format("{}; {}", powercap_why, perf_why);
}

std::vector<EnergyReading> EnergyMeter::read() {
  std::vector<EnergyReading> out;
  for (const Domain& d : domains_) {
    EnergyReading r;
    r.domain = d.name;
    if (d.fds.empty()) {
      std::uint64_t now = 0;
      std::string err;
      if (!read_u64(d.path, &now, &err)) continue;
      r.joules = static_cast<double>(energy_delta_uj(d.start_uj, now, d.max_range_uj)) * 1e-6;
    } else {
      std::uint64_t count = 0;
      for (int fd : d.fds) {
        std::uint64_t v = 0;
        if (::read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v)) count += v;
      }
      r.joules = static_cast<double>(count - d.start_count) * d.scale;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace canopy::counters
