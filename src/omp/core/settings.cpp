// parse_settings: every OMP_* / GOMP_* variable of OpenMP 5.1 chapter 6 that
// the runtime honours, read once at start-up. Where the specification leaves
// room, libgomp's behaviour is kept (GCC-compiled programs and their users
// expect it): booleans are only true/false, OMP_NESTED and list lengths set
// max-active-levels when OMP_MAX_ACTIVE_LEVELS is unset, OMP_PROC_BIND=false
// disables the places list, a places list turns binding on, GOMP_STACKSIZE
// stands in for OMP_STACKSIZE. A bad value yields exactly one warning line
// ("canopy-omp: NAME='value': expected ...; using the default") and the
// variable keeps its default.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <ostream>

#include "canopy/topology.hpp"
#include "omp/core/env_text.hpp"
#include "omp/core/places.hpp"
#include "omp/core/settings.hpp"

namespace canopy::omp {
namespace {

using text::Cursor;

constexpr std::uint64_t kIntMax = static_cast<std::uint64_t>(std::numeric_limits<int>::max());

// The value as the warning shows it: control characters (a newline would
// split the one warning line) and bytes above 0x7e as \xNN.
std::string printable(const std::string& v) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (char ch : v) {
    auto u = static_cast<unsigned char>(ch);
    if (u >= 0x20 && u < 0x7f && ch != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

// One variable being read: its value, and the warning sink.
struct Var {
  const char* name;
  std::string value;
  std::ostream& warnings;

  void warn(const std::string& expected, bool using_default = true) const {
    // `expected` may quote part of the value (a bad affinity field): escaped too.
    warnings << "canopy-omp: " << name << "='" << printable(value) << "': " << printable(expected)
             << (using_default ? "; using the default" : "") << '\n';
  }
};

class Reader {
 public:
  Reader(const Getenv& getenv, std::ostream& warnings) : getenv_(getenv), warnings_(warnings) {}

  std::optional<Var> get(const char* name) const {
    std::optional<std::string> v = getenv_(name);
    if (!v) return std::nullopt;
    return Var{name, *v, warnings_};
  }

  // A whole value that is one integer in [min, max].
  std::optional<std::uint64_t> integer(const char* name, std::uint64_t min, std::uint64_t max,
                                       const char* expected) const {
    auto v = get(name);
    if (!v) return std::nullopt;
    Cursor c{v->value};
    auto n = c.number(max);
    if (!n || *n < min || !c.done()) {
      v->warn(expected);
      return std::nullopt;
    }
    return n;
  }

  std::optional<bool> boolean(const char* name) const {
    auto v = get(name);
    if (!v) return std::nullopt;
    std::string_view t = text::trim(v->value);
    if (text::iequals(t, "true")) return true;
    if (text::iequals(t, "false")) return false;
    v->warn("expected true or false");
    return std::nullopt;
  }

  // One of `words` (case-blind, blanks around); its index.
  std::optional<std::size_t> keyword(const char* name, std::initializer_list<const char*> words,
                                     const char* expected) const {
    auto v = get(name);
    if (!v) return std::nullopt;
    std::string_view t = text::trim(v->value);
    std::size_t i = 0;
    for (const char* w : words) {
      if (text::iequals(t, w)) return i;
      ++i;
    }
    v->warn(expected);
    return std::nullopt;
  }

  std::ostream& warnings() const { return warnings_; }

 private:
  const Getenv& getenv_;
  std::ostream& warnings_;
};

void parse_num_threads(const Reader& r, Settings& s) {
  auto v = r.get("OMP_NUM_THREADS");
  if (!v) return;
  Cursor c{v->value};
  std::vector<int> list;
  while (true) {
    auto n = c.number(kIntMax);
    if (!n || *n == 0) break;
    list.push_back(static_cast<int>(*n));
    if (c.done()) {
      s.num_threads = std::move(list);
      return;
    }
    if (!c.eat(',')) break;
  }
  v->warn("expected a comma-separated list of positive integers");
}

void parse_proc_bind(const Reader& r, Settings& s) {
  auto v = r.get("OMP_PROC_BIND");
  if (!v) return;
  Cursor c{v->value};
  std::vector<ProcBind> list;
  auto fail = [&] {
    v->warn("expected true, false, or a comma-separated list of primary, master, close and spread");
  };
  while (true) {
    if (c.eat_word("false")) list.push_back(ProcBind::False);
    else if (c.eat_word("true")) list.push_back(ProcBind::True);
    else if (c.eat_word("primary") || c.eat_word("master")) list.push_back(ProcBind::Primary);
    else if (c.eat_word("close")) list.push_back(ProcBind::Close);
    else if (c.eat_word("spread")) list.push_back(ProcBind::Spread);
    else return fail();
    if (c.done()) break;
    if (!c.eat(',')) return fail();
  }
  // true and false are whole values, never list items (libgomp, OpenMP 5.1 6.4).
  if (list.size() > 1 && std::any_of(list.begin(), list.end(), [](ProcBind b) {
        return b == ProcBind::False || b == ProcBind::True;
      }))
    return fail();
  s.proc_bind = std::move(list);
}

void parse_schedule(const Reader& r, Settings& s) {
  auto v = r.get("OMP_SCHEDULE");
  if (!v) return;
  Cursor c{v->value};
  Schedule sch;
  auto fail = [&] {
    v->warn("expected [monotonic:|nonmonotonic:]static|dynamic|guided|auto[,chunk] with a chunk from 0 to " +
            std::to_string(kIntMax));
  };
  if (c.eat_word("monotonic")) sch.monotonic = true;
  else if (c.eat_word("nonmonotonic")) sch.nonmonotonic = true;
  if ((sch.monotonic || sch.nonmonotonic) && !c.eat(':')) return fail();
  if (c.eat_word("static")) sch.kind = ScheduleKind::Static;
  else if (c.eat_word("dynamic")) sch.kind = ScheduleKind::Dynamic;
  else if (c.eat_word("guided")) sch.kind = ScheduleKind::Guided;
  else if (c.eat_word("auto")) sch.kind = ScheduleKind::Auto;
  else return fail();
  if (c.eat(',')) {
    auto n = c.number(kIntMax);
    if (!n) return fail();
    // libgomp: a zero chunk means 1 for the kinds that take chunks one by one.
    sch.chunk = (*n == 0 && sch.kind != ScheduleKind::Static) ? 1 : static_cast<int>(*n);
  }
  if (!c.done()) return fail();
  s.run_sched = sch;
  s.run_sched_set = true;
}

// OMP_STACKSIZE / GOMP_STACKSIZE: a size with an optional B, K, M or G
// suffix (K when none).
bool parse_stacksize(const Reader& r, const char* name, Settings& s) {
  auto v = r.get(name);
  if (!v) return false;
  Cursor c{v->value};
  auto n = c.number(~std::uint64_t{0});
  int shift = 10;
  bool ok = n.has_value();
  if (ok && !c.done()) {
    switch (text::lower(c.peek())) {
      case 'b': shift = 0; break;
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: ok = false;
    }
    ++c.pos;
    ok = ok && c.done();
  }
  const std::uint64_t limit = std::numeric_limits<std::size_t>::max();
  if (ok && *n > (limit >> shift)) ok = false;
  if (!ok) {
    v->warn("expected a size such as 512K, 8M or 1G (suffix B, K, M or G; K when none) that fits in " +
            std::to_string(sizeof(std::size_t) * 8) + " bits");
    return false;
  }
  s.stacksize = static_cast<std::size_t>(*n << shift);
  return true;
}

void parse_spincount(const Reader& r, Settings& s) {
  auto v = r.get("GOMP_SPINCOUNT");
  if (!v) return;
  Cursor c{v->value};
  auto fail = [&] { v->warn("expected a count with an optional k, M, G or T suffix, or infinite"); };
  if (c.eat_word("infinite") || c.eat_word("infinity")) {
    if (!c.done()) return fail();
    s.spin_count = ~std::uint64_t{0};
    return;
  }
  auto n = c.number(~std::uint64_t{0});
  if (!n) return fail();
  std::uint64_t mult = 1;
  if (!c.done()) {
    switch (text::lower(c.peek())) {
      case 'k': mult = 1000ULL; break;
      case 'm': mult = 1000ULL * 1000; break;
      case 'g': mult = 1000ULL * 1000 * 1000; break;
      case 't': mult = 1000ULL * 1000 * 1000 * 1000; break;
      default: return fail();
    }
    ++c.pos;
    if (!c.done()) return fail();
  }
  // libgomp saturates instead of rejecting: a huge count means "spin forever".
  s.spin_count = *n > ~std::uint64_t{0} / mult ? ~std::uint64_t{0} : *n * mult;
}

void parse_places(const Reader& r, const Topology& machine, Settings& s) {
  bool bind_off = s.proc_bind.size() == 1 && s.proc_bind[0] == ProcBind::False;
  bool have = false;
  std::string error;
  if (auto v = r.get("OMP_PLACES")) {
    if (auto got = detail::parse_omp_places(v->value, machine, error)) {
      if (!got->note.empty()) v->warn(got->note, false);
      if (!bind_off) {
        s.places = std::move(got->places);
        s.places_source = std::string(text::trim(v->value));
      }
      have = true;
    } else {
      v->warn(error);
    }
  }
  // GOMP_CPU_AFFINITY is read (and checked) even when OMP_PLACES wins, as libgomp does.
  if (auto v = r.get("GOMP_CPU_AFFINITY")) {
    if (auto got = detail::parse_gomp_cpu_affinity(v->value, machine, error)) {
      if (!have) {
        if (!got->note.empty()) v->warn(got->note, false);
        if (!bind_off) {
          s.places = std::move(got->places);
          s.gomp_cpu_affinity = std::string(text::trim(v->value));
          s.places_source = "GOMP_CPU_AFFINITY=" + s.gomp_cpu_affinity;
        }
        have = true;
      }
    } else {
      v->warn(error);
    }
  }
  if (!s.places.empty() && s.proc_bind.empty()) {
    s.proc_bind = {ProcBind::True};
    s.proc_bind_implied = true;
  }
  // Binding without places: libgomp binds to one place per hardware thread.
  if (s.places.empty() && !s.proc_bind.empty() && s.proc_bind[0] != ProcBind::False) {
    std::string unused;
    if (auto threads = detail::parse_omp_places("threads", machine, unused)) {
      s.places = std::move(threads->places);
      s.places_source = "threads";
      s.places_implied = true;
    }
  }
}

}  // namespace

Getenv process_getenv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Settings parse_settings(const Getenv& getenv, const Topology& machine, std::ostream& warnings) {
  Reader r(getenv, warnings);
  Settings s;
  s.default_num_threads = std::max(1, machine.num_cores());

  parse_schedule(r, s);
  if (auto b = r.boolean("OMP_DYNAMIC")) s.dynamic = *b;
  if (auto b = r.boolean("OMP_CANCELLATION")) s.cancellation = *b;
  if (auto b = r.boolean("OMP_DISPLAY_AFFINITY")) s.display_affinity = *b;
  if (auto n = r.integer("OMP_DEFAULT_DEVICE", 0, kIntMax, "expected a non-negative integer"))
    s.default_device = static_cast<int>(*n);
  if (auto k = r.keyword("OMP_TARGET_OFFLOAD", {"default", "mandatory", "disabled"},
                         "expected default, mandatory or disabled"))
    s.target_offload = static_cast<TargetOffload>(*k);
  if (auto n = r.integer("OMP_MAX_TASK_PRIORITY", 0, kIntMax, "expected a non-negative integer"))
    s.max_task_priority = static_cast<int>(*n);
  static const char* allocators[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc", "omp_const_mem_alloc",
                                     "omp_high_bw_mem_alloc", "omp_low_lat_mem_alloc",   "omp_cgroup_mem_alloc",
                                     "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
  if (auto k = r.keyword("OMP_ALLOCATOR",
                         {allocators[0], allocators[1], allocators[2], allocators[3], allocators[4], allocators[5],
                          allocators[6], allocators[7]},
                         "expected a predefined allocator: omp_default_mem_alloc, omp_large_cap_mem_alloc, "
                         "omp_const_mem_alloc, omp_high_bw_mem_alloc, omp_low_lat_mem_alloc, "
                         "omp_cgroup_mem_alloc, omp_pteam_mem_alloc or omp_thread_mem_alloc"))
    s.allocator = allocators[*k];
  // libgomp keeps thread limits above INT_MAX as "unlimited"; so does canopy (0).
  if (auto n = r.integer("OMP_THREAD_LIMIT", 1, ~std::uint64_t{0}, "expected a positive integer"))
    s.thread_limit = *n > kIntMax ? 0 : static_cast<int>(*n);
  parse_num_threads(r, s);
  if (auto n = r.integer("OMP_NUM_TEAMS", 1, kIntMax, "expected a positive integer"))
    s.num_teams = static_cast<int>(*n);
  if (auto n = r.integer("OMP_TEAMS_THREAD_LIMIT", 1, kIntMax, "expected a positive integer"))
    s.teams_thread_limit = static_cast<int>(*n);
  parse_proc_bind(r, s);

  if (auto n = r.integer("OMP_MAX_ACTIVE_LEVELS", 0, ~std::uint64_t{0}, "expected a non-negative integer")) {
    s.max_active_levels = static_cast<int>(std::min<std::uint64_t>(*n, kSupportedActiveLevels));
    s.nested = r.boolean("OMP_NESTED");  // still checked; OMP_MAX_ACTIVE_LEVELS wins
  } else if ((s.nested = r.boolean("OMP_NESTED"))) {
    s.max_active_levels = *s.nested ? kSupportedActiveLevels : 1;
  } else if (s.num_threads.size() > 1 || s.proc_bind.size() > 1) {
    s.max_active_levels = kSupportedActiveLevels;
  }

  parse_places(r, machine, s);

  if (auto v = r.get("OMP_AFFINITY_FORMAT")) {
    if (auto why = affinity_format_error(v->value)) v->warn("expected a valid affinity format (" + *why + ")");
    else s.affinity_format = v->value;
  }
  if (auto k = r.keyword("OMP_WAIT_POLICY", {"active", "passive"}, "expected active or passive"))
    s.wait_policy = *k == 0 ? WaitPolicy::Active : WaitPolicy::Passive;
  parse_spincount(r, s);
  if (!parse_stacksize(r, "OMP_STACKSIZE", s)) parse_stacksize(r, "GOMP_STACKSIZE", s);
  if (auto k = r.keyword("OMP_DISPLAY_ENV", {"false", "true", "verbose"}, "expected true, false or verbose")) {
    s.display_env = *k != 0;
    s.display_env_verbose = *k == 2;
  }
  return s;
}

std::uint64_t effective_spin_count(const Settings& s) {
  if (s.spin_count) return *s.spin_count;
  switch (s.wait_policy) {
    case WaitPolicy::Active: return 30000000000ULL;
    case WaitPolicy::Passive: return 0;
    case WaitPolicy::Unset: break;
  }
  return 300000;
}

int effective_max_active_levels(const Settings& s) { return s.max_active_levels.value_or(1); }

}  // namespace canopy::omp
