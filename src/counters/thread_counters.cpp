// ThreadCounters: perf_event counters of one thread, with /proc's
// per-thread counts where perf_event refuses the OS events, and a reason for
// every counter that has neither (thread_counters.hpp).
//
// Why the OS events are not retried in user space only: with
// perf_event_paranoid >= 2 an unprivileged process may count only with
// exclude_kernel set, and context switches and CPU migrations happen in
// the kernel: they would count zero, silently. Page faults and hardware
// events are retried that way (the user-space part is what the program
// causes) and marked user-only.
#include "counters/thread_counters.hpp"

#include <errno.h>
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "canopy/error.hpp"

namespace canopy::counters {

namespace {

struct EventSpec {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};

constexpr EventSpec kEvents[kNumCounters] = {
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
};

std::string errno_name(int e) {
  const char* n = strerrorname_np(e);
  return n ? n : fmt::format("errno {}", e);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string paranoid_text(const std::string& proc_root) {
  std::string v = read_file(proc_root + "/sys/kernel/perf_event_paranoid");
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v.empty() ? "unknown" : v;
}

// Why perf_event_open failed with e, in words a user can act on.
std::string perf_reason(int e, const std::string& proc_root, bool hardware) {
  const std::string name = errno_name(e);
  switch (e) {
    case EACCES:
    case EPERM:
      return fmt::format(
          "perf_event_open refused ({}: /proc/sys/kernel/perf_event_paranoid is {}; events in the kernel need 1 or "
          "less, or CAP_PERFMON; 3, Debian's default, refuses every event to unprivileged users)",
          name, paranoid_text(proc_root));
    case ENOENT:
      return hardware ? fmt::format("perf_event_open: {}: no hardware performance counters (a virtual machine "
                                    "without a virtual PMU, or a CPU the kernel's perf does not know)",
                                    name)
                      : fmt::format("perf_event_open: {}: the kernel has no such software event", name);
    case EOPNOTSUPP:
      return fmt::format("perf_event_open: {}: the CPU's performance unit has no such event", name);
    case ENOSYS:
      return fmt::format("perf_event_open: {}: the kernel has no perf_event (or a seccomp filter blocks it)", name);
    case EMFILE:
    case ENFILE:
      return fmt::format("perf_event_open: {}: too many open files", name);
    case ESRCH:
      return fmt::format("perf_event_open: {}: the thread had ended", name);
    default:
      return fmt::format("perf_event_open: {}: {}", name, std::strerror(e));
  }
}

int perf_open(int c, pid_t tid, bool user_only, const Probe& probe, int* error) {
  if (probe.refuse_perf != 0) {
    *error = probe.refuse_perf;
    return -1;
  }
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = kEvents[c].type;
  attr.config = kEvents[c].config;
  attr.exclude_hv = 1;
  attr.exclude_kernel = user_only ? 1 : 0;
  // Hardware events may share the PMU's few counters (multiplexing): the
  // times let read() scale the count to the whole time enabled.
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) *error = errno;
  return fd;
}

// A count from a perf event; false if the event never ran on the PMU.
bool perf_read(int fd, std::uint64_t* out) {
  std::uint64_t v[3] = {0, 0, 0};
  if (::read(fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) return false;
  if (v[2] == 0) return v[1] == 0 && (*out = v[0], true);  // never enabled: 0 is the count
  *out = v[2] < v[1] ? static_cast<std::uint64_t>(static_cast<double>(v[0]) * static_cast<double>(v[1]) /
                                                  static_cast<double>(v[2]))
                     : v[0];
  return true;
}

// "name: value" lines (/proc/PID/status, /proc/PID/sched): the value of `key`.
bool field_of(const std::string& text, const std::string& key, std::uint64_t* out) {
  std::size_t pos = 0;
  while ((pos = text.find(key, pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      std::size_t p = pos + key.size();
      while (p < text.size() && (text[p] == ' ' || text[p] == '\t' || text[p] == ':')) ++p;
      char* end = nullptr;
      const unsigned long long v = std::strtoull(text.c_str() + p, &end, 10);
      if (end != text.c_str() + p) {
        *out = v;
        return true;
      }
    }
    pos += key.size();
  }
  return false;
}

// minflt + majflt from /proc/PID/task/TID/stat (fields 10 and 12, counted
// after the command name's closing parenthesis).
bool faults_of(const std::string& stat, std::uint64_t* out) {
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(stat.substr(close + 1));
  std::string f;
  std::uint64_t minflt = 0, majflt = 0;
  for (int field = 3; field <= 12 && (in >> f); ++field) {
    if (field == 10) minflt = std::strtoull(f.c_str(), nullptr, 10);
    if (field == 12) {
      majflt = std::strtoull(f.c_str(), nullptr, 10);
      *out = minflt + majflt;
      return true;
    }
  }
  return false;
}

const Probe& current_probe_for_warm_up() {
  static const Probe real;
  return real;
}

}  // namespace

const char* counter_name(int c) { return c >= 0 && c < kNumCounters ? kEvents[c].name : "?"; }

unsigned parse_counter_sets(const std::string& value, const std::string& what) {
  unsigned sets = 0;
  std::size_t start = 0;
  if (value.empty())
    throw Error(fmt::format("{}='': expected all, none or a comma-separated list of os, hardware, energy", what));
  while (start <= value.size()) {
    std::size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    std::string word = value.substr(start, end - start);
    const auto b = word.find_first_not_of(" \t"), e = word.find_last_not_of(" \t");
    word = b == std::string::npos ? "" : word.substr(b, e - b + 1);
    if (word == "all")
      sets |= kSetAll;
    else if (word == "os")
      sets |= kSetOs;
    else if (word == "hardware")
      sets |= kSetHardware;
    else if (word == "energy")
      sets |= kSetEnergy;
    else if (word != "none" || value.find(',') != std::string::npos)
      throw Error(fmt::format("{}='{}': unknown word '{}'; expected all, none or a comma-separated list of os, "
                              "hardware, energy",
                              what, value, word));
    start = end + 1;
  }
  return sets;
}

int perf_warm_up() {
  int error = 0;
  return perf_open(kContextSwitches, 0, false, current_probe_for_warm_up(), &error);
}

void perf_warm_down(int fd) {
  if (fd >= 0) ::close(fd);
}

unsigned sets_from_env() {
  const char* v = std::getenv("CANOPY_COUNTERS");
  return v && *v ? parse_counter_sets(v, "CANOPY_COUNTERS") : kSetAll;
}

Sample difference(const Sample& after, const Sample& before) {
  Sample d = after;
  for (int c = 0; c < kNumCounters; ++c)
    if (after.has(c) && before.has(c)) d.value[c] = after.value[c] >= before.value[c] ? after.value[c] - before.value[c] : 0;
  return d;
}

ThreadCounters::~ThreadCounters() {
  for (int& fd : fd_)
    if (fd >= 0) ::close(fd);
}

void ThreadCounters::open(pid_t tid, unsigned sets, const Probe& probe) {
  std::lock_guard<std::mutex> lock(mutex_);
  tid_ = tid;
  task_dir_ = fmt::format("{}/self/task/{}", probe.proc_root, tid);
  std::string refused;  // why perf_event refused the OS events
  for (int c = 0; c < kNumCounters; ++c) {
    const bool hardware = c >= kNumOsCounters;
    if (!(sets & (hardware ? kSetHardware : kSetOs))) continue;
    int error = 0;
    int fd = perf_open(c, tid, false, probe, &error);
    if (fd < 0 && (error == EACCES || error == EPERM) && c != kContextSwitches && c != kCpuMigrations) {
      // In user space only; if that fails for another reason (no PMU),
      // that reason is the one to tell.
      int retry = 0;
      fd = perf_open(c, tid, true, probe, &retry);
      if (fd >= 0) user_only_[c] = true;
      else if (retry != EACCES && retry != EPERM) error = retry;
    }
    if (fd >= 0) {
      fd_[c] = fd;
      source_[c] = kPerf;
      continue;
    }
    why_[c] = perf_reason(error, probe.proc_root, hardware);
    if (!hardware) {
      source_[c] = kProc;
      refused = why_[c];
    }
  }
  if (!refused.empty()) {
    // The kernel's own per-thread counts: context switches in status,
    // faults in stat, migrations in sched (only with CONFIG_SCHED_DEBUG).
    proc_base_ = read_proc();
    std::string from;
    for (int c = 0; c < kNumOsCounters; ++c) {
      if (source_[c] != kProc) continue;
      if (proc_base_.has(c)) {
        why_[c].clear();
        from += fmt::format("{}{}", from.empty() ? "" : ", ", counter_name(c));
        continue;
      }
      source_[c] = kNone;
      const char* file = c == kContextSwitches ? "status" : c == kPageFaults ? "stat" : "sched";
      const char* field = c == kContextSwitches ? "voluntary_ctxt_switches"
                          : c == kPageFaults    ? "minflt"
                                                : "se.nr_migrations";
      why_[c] = fmt::format("{}; and {}/{} has no {}{}", why_[c], task_dir_, file, field,
                            c == kCpuMigrations ? " (a kernel without CONFIG_SCHED_DEBUG)" : "");
    }
    if (!from.empty()) fallback_note_ = fmt::format("{} from /proc/self/task/TID: {}", from, refused);
  }
}

Sample ThreadCounters::read_proc() {
  Sample s;
  std::uint64_t v = 0, w = 0;
  const std::string status = read_file(task_dir_ + "/status");
  if (field_of(status, "voluntary_ctxt_switches", &v) && field_of(status, "nonvoluntary_ctxt_switches", &w)) {
    s.value[kContextSwitches] = v + w;
    s.have |= 1u << kContextSwitches;
  }
  if (field_of(read_file(task_dir_ + "/sched"), "se.nr_migrations", &v)) {
    s.value[kCpuMigrations] = v;
    s.have |= 1u << kCpuMigrations;
  }
  if (faults_of(read_file(task_dir_ + "/stat"), &v)) {
    s.value[kPageFaults] = v;
    s.have |= 1u << kPageFaults;
  }
  return s;
}

Sample ThreadCounters::read_locked() {
  if (finished_) return final_;
  Sample s;
  Sample proc;
  bool proc_read = false;
  for (int c = 0; c < kNumCounters; ++c) {
    if (source_[c] == kPerf) {
      std::uint64_t v = 0;
      if (perf_read(fd_[c], &v)) {
        s.value[c] = v;
        s.have |= 1u << c;
      } else if (why_[c].empty()) {
        why_[c] = "the event never ran on the performance unit (all its counters were taken)";
      }
    } else if (source_[c] == kProc) {
      if (!proc_read) {
        proc = difference(read_proc(), proc_base_);
        proc_read = true;
      }
      if (proc.has(c)) {
        s.value[c] = proc.value[c];
        s.have |= 1u << c;
      } else if (why_[c].empty()) {
        why_[c] = fmt::format("thread {} ended before its counts were read ({} is gone)", tid_, task_dir_);
      }
    }
  }
  return s;
}

Sample ThreadCounters::read() {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_locked();
}

void ThreadCounters::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  final_ = read_locked();
  finished_ = true;
  for (int& fd : fd_)
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
}

std::string ThreadCounters::why_missing(int c) {
  std::lock_guard<std::mutex> lock(mutex_);
  return why_[c];
}

bool ThreadCounters::user_only(int c) {
  std::lock_guard<std::mutex> lock(mutex_);
  return user_only_[c];
}

std::string ThreadCounters::fallback_note() {
  std::lock_guard<std::mutex> lock(mutex_);
  return fallback_note_;
}

}  // namespace canopy::counters
