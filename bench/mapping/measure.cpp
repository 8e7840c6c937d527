// Clocks, median, peak-RSS tracking and the watchdog of the mapping
// benchmark (see measure.hpp).
#include "measure.hpp"

#include <malloc.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

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

namespace {
// What the SIGALRM handler writes: prepared before the timer is armed, since
// a signal handler may only call async-signal-safe functions (write, _exit).
std::string g_timeout_message;

extern "C" void on_alarm(int) {
  const char* p = g_timeout_message.data();
  size_t left = g_timeout_message.size();
  while (left > 0) {
    ssize_t n = write(STDOUT_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  _exit(3);
}
}  // namespace

Watchdog::Watchdog(double seconds, std::string message) {
  if (seconds <= 0) return;
  std::fflush(stdout);
  g_timeout_message = std::move(message);
  struct sigaction sa {};
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  itimerval t{};
  t.it_value.tv_sec = static_cast<time_t>(seconds);
  t.it_value.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(t.it_value.tv_sec)) * 1e6);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
  armed_ = setitimer(ITIMER_REAL, &t, nullptr) == 0;
}

Watchdog::~Watchdog() {
  if (!armed_) return;
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
}

}  // namespace canopy::bench
