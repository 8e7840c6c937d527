// TEMPORARY minimal settings parser for the OpenMP runtime, until the full
// parser (settings.cpp: every OMP_* variable, places, display_env,
// format_affinity) lands from its own branch; the lead replaces this file at
// merge. Only OMP_NUM_THREADS, OMP_DYNAMIC, OMP_SCHEDULE,
// OMP_MAX_ACTIVE_LEVELS, OMP_NESTED, OMP_THREAD_LIMIT, OMP_PROC_BIND and
// OMP_CANCELLATION are read; display_env and format_affinity are reduced to what the tests need.
#include <cstdlib>
#include <ostream>
#include <sstream>

#include "settings.hpp"

namespace canopy::omp {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  return s;
}
bool parse_int(const std::string& s, long& out) {
  char* end = nullptr;
  out = std::strtol(s.c_str(), &end, 10);
  while (end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  return !s.empty() && end && *end == 0;
}
void warn(std::ostream& w, const char* var, const std::string& value, const char* expected) {
  w << "canopy-omp: ignoring " << var << "='" << value << "': expected " << expected << "\n";
}
}  // namespace

Getenv process_getenv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

Settings parse_settings(const Getenv& getenv, const Topology&, std::ostream& warnings) {
  Settings s;
  if (auto v = getenv("OMP_NUM_THREADS")) {
    std::vector<int> list;
    std::stringstream ss(*v);
    std::string item;
    bool ok = true;
    while (std::getline(ss, item, ',')) {
      long n;
      if (!parse_int(item, n) || n < 1) ok = false;
      else list.push_back(static_cast<int>(n));
    }
    if (ok && !list.empty()) s.num_threads = list;
    else warn(warnings, "OMP_NUM_THREADS", *v, "a comma-separated list of positive integers");
  }
  if (auto v = getenv("OMP_DYNAMIC")) {
    std::string l = lower(*v);
    if (l == "true" || l == "false") s.dynamic = l == "true";
    else warn(warnings, "OMP_DYNAMIC", *v, "true or false");
  }
  if (auto v = getenv("OMP_CANCELLATION")) {
    std::string l = lower(*v);
    if (l == "true" || l == "false") s.cancellation = l == "true";
    else warn(warnings, "OMP_CANCELLATION", *v, "true or false");
  }
  if (auto v = getenv("OMP_NESTED")) {
    std::string l = lower(*v);
    if (l == "true" || l == "false") s.nested = l == "true";
    else warn(warnings, "OMP_NESTED", *v, "true or false");
  }
  if (auto v = getenv("OMP_MAX_ACTIVE_LEVELS")) {
    long n;
    if (parse_int(*v, n) && n >= 0) s.max_active_levels = static_cast<int>(std::min(n, 255L));
    else warn(warnings, "OMP_MAX_ACTIVE_LEVELS", *v, "a non-negative integer");
  }
  if (auto v = getenv("OMP_THREAD_LIMIT")) {
    long n;
    if (parse_int(*v, n) && n >= 1) s.thread_limit = static_cast<int>(n);
    else warn(warnings, "OMP_THREAD_LIMIT", *v, "a positive integer");
  }
  if (auto v = getenv("OMP_SCHEDULE")) {
    std::string l = lower(*v);
    Schedule sch;
    if (l.rfind("monotonic:", 0) == 0) {
      sch.monotonic = true;
      l = l.substr(10);
    } else if (l.rfind("nonmonotonic:", 0) == 0) {
      l = l.substr(13);
    }
    std::string kind = l.substr(0, l.find(','));
    bool ok = true;
    if (kind == "static") sch.kind = ScheduleKind::Static;
    else if (kind == "dynamic") sch.kind = ScheduleKind::Dynamic;
    else if (kind == "guided") sch.kind = ScheduleKind::Guided;
    else if (kind == "auto") sch.kind = ScheduleKind::Auto;
    else ok = false;
    if (ok && l.find(',') != std::string::npos) {
      long c;
      if (parse_int(l.substr(l.find(',') + 1), c) && c >= 1) sch.chunk = static_cast<int>(c);
      else ok = false;
    }
    if (ok) {
      s.run_sched = sch;
      s.run_sched_set = true;
    } else {
      warn(warnings, "OMP_SCHEDULE", *v, "[modifier:]static|dynamic|guided|auto[,chunk]");
    }
  }
  if (auto v = getenv("OMP_PROC_BIND")) {
    std::vector<ProcBind> list;
    std::stringstream ss(lower(*v));
    std::string item;
    bool ok = true;
    while (std::getline(ss, item, ',')) {
      item = lower(item);
      if (item == "false") list.push_back(ProcBind::False);
      else if (item == "true") list.push_back(ProcBind::True);
      else if (item == "primary" || item == "master") list.push_back(ProcBind::Primary);
      else if (item == "close") list.push_back(ProcBind::Close);
      else if (item == "spread") list.push_back(ProcBind::Spread);
      else ok = false;
    }
    if (ok && !list.empty()) s.proc_bind = list;
    else warn(warnings, "OMP_PROC_BIND", *v, "false, true, or a list of primary|master|close|spread");
  }
  return s;
}

void display_env(const Settings& s, bool, std::ostream& out) {
  out << "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '202011'\n  [host] canopy OpenMP runtime (temporary display)\n";
  out << "  [host] OMP_DYNAMIC = '" << (s.dynamic ? "TRUE" : "FALSE") << "'\n";
  out << "  [host] OMP_NUM_THREADS = '";
  for (std::size_t i = 0; i < s.num_threads.size(); ++i) out << (i ? "," : "") << s.num_threads[i];
  out << "'\nOPENMP DISPLAY ENVIRONMENT END\n";
}

std::string format_affinity(const std::string& format, const AffinityFields& f) {
  std::string out;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 == format.size()) {
      out += format[i];
      continue;
    }
    char c = format[++i];
    switch (c) {
      case 'n': out += std::to_string(f.thread_num); break;
      case 'N': out += std::to_string(f.num_threads); break;
      case 'L': out += std::to_string(f.nesting_level); break;
      case 't': out += std::to_string(f.team_num); break;
      case 'T': out += std::to_string(f.num_teams); break;
      case 'a': out += std::to_string(f.ancestor_tnum); break;
      case 'H': out += f.host; break;
      case 'P': out += std::to_string(f.pid); break;
      case 'i': out += std::to_string(f.native_thread_id); break;
      case 'A': {
        for (std::size_t k = 0; k < f.os_cpus.size(); ++k) out += (k ? "," : "") + std::to_string(f.os_cpus[k]);
        break;
      }
      case '%': out += '%'; break;
      default: out += '%'; out += c;
    }
  }
  return out;
}

}  // namespace canopy::omp
