// Clocks, median, peak-RSS tracking and the watchdog of the mapping
// benchmark (see measure.hpp).
#include "measure.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

namespace canopy::bench {

double wall_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long proc_status_kb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, len, field) == 0 && line.size() > len && line[len] == ':')
      return std::strtol(line.c_str() + len + 1, nullptr, 10);
  return -1;
}

void PeakRss::start() {
  // Give freed heap back first, so the baseline is what is really live and a
  // run that reuses cached pages is not counted as using none.
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // "5": reset the peak RSS (VmHWM) to the current RSS
  clear.flush();
  reset_ok_ = static_cast<bool>(clear);
  baseline_kb_ = proc_status_kb("VmRSS");
}

long PeakRss::delta_kb() const {
  if (!reset_ok_ || baseline_kb_ < 0) return -1;
  long hwm = proc_status_kb("VmHWM");
  return hwm < 0 ? -1 : std::max(0L, hwm - baseline_kb_);
}

Watchdog::Watchdog(double seconds, std::function<void()> on_timeout) {
  if (seconds <= 0) return;
  thread_ = std::thread([this, seconds, f = std::move(on_timeout)] {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
      f();
      std::fflush(stdout);
      std::_Exit(3);
    }
  });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

}  // namespace canopy::bench
