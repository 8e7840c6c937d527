// Reading a canopy trace (Chrome trace-event JSON) back, the per-worker
// times and the critical path of the data-flow tasks (trace_read.hpp).
#include "trace_read.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "canopy/error.hpp"

namespace canopy::cli {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error(fmt::format("{}: {}", path, what), ErrorKind::BadInput);
}

}  // namespace

TraceFile read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open the trace", path), ErrorKind::BadInput);
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".otf2") == 0)
    bad(path, "canopy trace reads the JSON format (record with CANOPY_TRACE=FILE.json); open OTF2 archives with "
              "Vampir or otf2-print");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    bad(path, fmt::format("not JSON: {}", e.what()));
  }
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    bad(path, "no \"traceEvents\" array: not a Chrome trace-event file");
  if (!doc.contains("otherData") || doc["otherData"].value("producer", "") != "canopy")
    bad(path, "not written by canopy (no otherData.producer \"canopy\")");
  TraceFile t;
  const json& other = doc["otherData"];
  t.lost = other.value("lost_events", std::uint64_t{0});
  t.duration_us = other.value("duration_ns", std::uint64_t{0}) / 1000.0;
  std::map<std::pair<int, int>, int> row_of;
  auto row = [&](int pid, int tid) {
    auto [it, added] = row_of.emplace(std::pair{pid, tid}, static_cast<int>(t.rows.size()));
    if (added) {
      TraceRow r;
      r.pid = pid;
      r.tid = tid;
      r.name = fmt::format("worker {}", tid);
      t.rows.push_back(r);
    }
    return it->second;
  };
  if (other.contains("workers"))
    for (const json& w : other["workers"]) {
      TraceRow& r = t.rows[row(w.value("pid", 0), w.value("tid", 0))];
      r.numa = w.value("numa", -1);
      r.bytes_local = w.value("bytes_local", std::uint64_t{0});
      r.bytes_remote = w.value("bytes_remote", std::uint64_t{0});
      if (w.contains("counters") && w["counters"].is_object())
        for (const auto& [name, v] : w["counters"].items())
          if (v.is_number_unsigned()) r.counters[name] = v.get<std::uint64_t>();
    }
  if (other.contains("counters_unavailable") && other["counters_unavailable"].is_array())
    for (const json& m : other["counters_unavailable"])
      t.counters_missing.emplace_back(m.value("counters", ""), m.value("why", ""));
  if (other.contains("counters_notes") && other["counters_notes"].is_array())
    for (const json& n : other["counters_notes"])
      if (n.is_string()) t.counters_notes.push_back(n.get<std::string>());
  if (other.contains("energy") && other["energy"].is_object())
    for (const auto& [domain, j] : other["energy"].items())
      if (j.is_number()) t.energy.emplace_back(domain, j.get<double>());
  t.energy_source = other.value("energy_source", "");
  t.energy_missing = other.value("energy_unavailable", "");
  std::size_t index = 0;
  for (const json& e : doc["traceEvents"]) {
    ++index;
    if (!e.is_object() || !e.contains("ph") || !e.contains("pid") || !e.contains("tid"))
      bad(path, fmt::format("event {}: no ph, pid or tid", index));
    const std::string ph = e["ph"];
    const int r = row(e["pid"].get<int>(), e["tid"].get<int>());
    const std::string name = e.value("name", "");
    if (ph == "M") {
      if (name == "thread_name") t.rows[r].name = e["args"].value("name", t.rows[r].name);
      continue;
    }
    ++t.events;
    const double ts = e.value("ts", 0.0);
    if (ph == "X") {
      TraceSpan s;
      s.t0 = ts;
      s.t1 = ts + e.value("dur", 0.0);
      s.label = name;
      s.category = e.value("cat", "");
      if (e.contains("args") && e["args"].contains("id")) s.id = e["args"]["id"];
      t.rows[r].spans.push_back(s);
      t.duration_us = std::max(t.duration_us, s.t1);
    } else if (ph == "i" && name == "steal") {
      TraceSteal s;
      s.t = ts;
      const int victim = e["args"].value("victim", -1);
      auto it = row_of.find({e["pid"].get<int>(), victim});
      s.victim = it == row_of.end() ? row(e["pid"].get<int>(), victim) : it->second;
      s.distance = e["args"].value("distance", "?");
      t.rows[r].steals.push_back(s);
    } else if (ph == "i" && name == "release") {
      t.releases.push_back(TraceRelease{ts, r, e["args"].value("from", ""), e["args"].value("to", "")});
    }
  }
  for (TraceRow& r : t.rows)
    std::stable_sort(r.spans.begin(), r.spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
      return a.t0 < b.t0 || (a.t0 == b.t0 && a.t1 > b.t1);
    });
  std::sort(t.rows.begin(), t.rows.end(), [](const TraceRow& a, const TraceRow& b) {
    // Runtimes in order, the rows outside them (pid 0) last.
    const int pa = a.pid == 0 ? 1 << 30 : a.pid, pb = b.pid == 0 ? 1 << 30 : b.pid;
    return std::pair{pa, a.tid} < std::pair{pb, b.tid};
  });
  // Steal victims were row indexes before the sort: map them again.
  std::map<std::pair<int, int>, int> sorted;
  for (std::size_t i = 0; i < t.rows.size(); ++i) sorted[{t.rows[i].pid, t.rows[i].tid}] = static_cast<int>(i);
  std::vector<int> old_to_new(t.rows.size());
  for (const auto& [key, old] : row_of) old_to_new[old] = sorted[key];
  for (TraceRow& r : t.rows)
    for (TraceSteal& s : r.steals) s.victim = old_to_new[s.victim];
  for (TraceRelease& rel : t.releases) rel.row = old_to_new[rel.row];
  return t;
}

RowTimes row_times(const TraceRow& row, double duration_us) {
  RowTimes rt;
  double task_end = -1;  // end of the outermost task span open
  for (const TraceSpan& s : row.spans) {
    if (s.is_task()) {
      ++rt.tasks;
      if (s.t0 >= task_end) {
        rt.busy += s.t1 - s.t0;
        task_end = s.t1;
      } else if (s.t1 > task_end) {
        rt.busy += s.t1 - task_end;
        task_end = s.t1;
      }
    } else if (s.category == "park") {
      rt.parked += s.t1 - s.t0;
    } else if (s.category == "search") {
      rt.search += s.t1 - s.t0;
    }
  }
  rt.idle = std::max(0.0, duration_us - rt.busy - rt.search - rt.parked);
  for (const TraceSteal& s : row.steals) ++rt.steals[s.distance];
  return rt;
}

std::vector<std::pair<int, int>> critical_path(const TraceFile& t) {
  // Data-flow task spans by id, in time order (an id is a task's address:
  // reused by later tasks, so a release names the first span of that id
  // that starts after it, and the last that ended before it).
  struct Ref {
    int row, span;
  };
  std::map<std::string, std::vector<Ref>> by_id;
  const TraceSpan* last = nullptr;
  Ref last_ref{-1, -1};
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    for (std::size_t i = 0; i < t.rows[r].spans.size(); ++i) {
      const TraceSpan& s = t.rows[r].spans[i];
      if (s.category != "task,dataflow" || s.id.empty()) continue;
      by_id[s.id].push_back({static_cast<int>(r), static_cast<int>(i)});
      if (!last || s.t1 > last->t1) {
        last = &s;
        last_ref = {static_cast<int>(r), static_cast<int>(i)};
      }
    }
  if (!last) return {};
  auto span = [&](Ref x) -> const TraceSpan& { return t.rows[x.row].spans[x.span]; };
  for (auto& [id, refs] : by_id)
    std::sort(refs.begin(), refs.end(), [&](Ref a, Ref b) { return span(a).t0 < span(b).t0; });
  constexpr double kSlack = 0.002;  // µs: the writer rounds to ns
  std::map<std::pair<int, int>, Ref> pred;
  for (const TraceRelease& rel : t.releases) {
    auto to = by_id.find(rel.to), from = by_id.find(rel.from);
    if (to == by_id.end() || from == by_id.end()) continue;
    const Ref* target = nullptr;
    for (const Ref& x : to->second)
      if (span(x).t0 + kSlack >= rel.t) {
        target = &x;
        break;
      }
    const Ref* source = nullptr;
    for (const Ref& x : from->second)
      if (span(x).t1 <= rel.t + kSlack) source = &x;
    if (target && source) pred[{target->row, target->span}] = *source;
  }
  std::vector<std::pair<int, int>> path;
  Ref cur = last_ref;
  std::set<std::pair<int, int>> seen;
  for (;;) {
    const std::pair<int, int> key{cur.row, cur.span};
    if (!seen.insert(key).second) break;
    path.push_back(key);
    auto it = pred.find(key);
    if (it == pred.end()) break;
    cur = it->second;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

namespace {

std::string ms(double us) { return fmt::format("{:.3f} ms", us / 1000.0); }
std::string pct(double part, double whole) { return whole > 0 ? fmt::format("{:.0f}%", 100.0 * part / whole) : "-"; }

}  // namespace

// The counters of the rows as a table (perf's order), the counters without
// a count and the energy.
static std::string counters_text(const TraceFile& t) {
  static const char* const kOrder[] = {"context-switches", "cpu-migrations", "page-faults", "cycles", "instructions",
                                       "cache-misses", "stalled-cycles-frontend", "stalled-cycles-backend"};
  auto rank = [](const std::string& name) {
    const std::string base = name.size() > 2 && name.compare(name.size() - 2, 2, ":u") == 0
                                 ? name.substr(0, name.size() - 2)
                                 : name;
    for (std::size_t i = 0; i < std::size(kOrder); ++i)
      if (base == kOrder[i]) return static_cast<int>(i);
    return 100;
  };
  std::vector<std::string> names;
  for (const TraceRow& r : t.rows)
    for (const auto& [n, v] : r.counters)
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  std::string out;
  if (!names.empty()) {
    out += "counters over the session (worker 0: the thread that made the runtime):\n";
    out += fmt::format("{:<8} {:>4}", "runtime", "row");
    for (const std::string& n : names) out += fmt::format(" {:>16}", n);
    out += "\n";
    std::vector<std::uint64_t> total(names.size(), 0);
    for (const TraceRow& r : t.rows) {
      if (r.counters.empty()) continue;
      out += fmt::format("{:<8} {:>4}", r.pid, r.tid);
      for (std::size_t i = 0; i < names.size(); ++i) {
        auto it = r.counters.find(names[i]);
        out += it == r.counters.end() ? fmt::format(" {:>16}", "-") : fmt::format(" {:>16}", it->second);
        if (it != r.counters.end()) total[i] += it->second;
      }
      out += "\n";
    }
    out += fmt::format("{:<8} {:>4}", "total", "");
    for (std::uint64_t v : total) out += fmt::format(" {:>16}", v);
    out += "\n";
  }
  for (const std::string& n : t.counters_notes) out += fmt::format("counters {}\n", n);
  for (const auto& [n, why] : t.counters_missing) out += fmt::format("counters {} unavailable: {}\n", n, why);
  if (!t.energy.empty()) {
    std::string parts;
    for (const auto& [domain, j] : t.energy) parts += fmt::format("{}{} {:.3f} J", parts.empty() ? "" : ", ", domain, j);
    out += fmt::format("energy: {} over the session ({}; the whole machine, not only this program)\n", parts,
                       t.energy_source.empty() ? "?" : t.energy_source);
  } else if (!t.energy_missing.empty()) {
    out += fmt::format("energy unavailable: {}\n", t.energy_missing);
  }
  return out;
}

std::string summary_text(const std::string& path, const TraceFile& t) {
  std::string out;
  std::size_t workers = 0;
  for (const TraceRow& r : t.rows) workers += r.pid != 0;
  out += fmt::format("trace {}: {} rows ({} worker slots), {}, {} events, {} lost\n", path, t.rows.size(), workers,
                     ms(t.duration_us), t.events, t.lost);
  if (t.lost > 0)
    out += "note: events were lost (a worker's buffer was full): times below undercount; raise CANOPY_TRACE_BUFFER\n";
  out += fmt::format("{:<8} {:>4} {:>5} {:>14} {:>14} {:>14} {:>14} {:>7} {:>20}\n", "runtime", "row", "numa",
                     "busy", "searching", "parked", "idle", "tasks", "steals core/numa/far");
  std::map<std::string, std::size_t> steals;
  std::uint64_t local = 0, remote = 0;
  std::size_t tasks = 0;
  for (const TraceRow& r : t.rows) {
    const RowTimes rt = row_times(r, t.duration_us);
    for (const auto& [d, n] : rt.steals) steals[d] += n;
    tasks += rt.tasks;
    local += r.bytes_local;
    remote += r.bytes_remote;
    auto get = [&](const char* d) {
      auto it = rt.steals.find(d);
      return it == rt.steals.end() ? std::size_t{0} : it->second;
    };
    out += fmt::format("{:<8} {:>4} {:>5} {:>14} {:>14} {:>14} {:>14} {:>7} {:>20}\n",
                       r.pid == 0 ? std::string("outside") : std::to_string(r.pid), r.tid,
                       r.numa < 0 ? std::string("-") : std::to_string(r.numa),
                       fmt::format("{} {:>4}", ms(rt.busy), pct(rt.busy, t.duration_us)),
                       fmt::format("{} {:>4}", ms(rt.search), pct(rt.search, t.duration_us)),
                       fmt::format("{} {:>4}", ms(rt.parked), pct(rt.parked, t.duration_us)),
                       fmt::format("{} {:>4}", ms(rt.idle), pct(rt.idle, t.duration_us)), rt.tasks,
                       fmt::format("{}/{}/{}", get("same core"), get("same NUMA node"), get("remote")));
  }
  std::size_t nsteals = 0;
  for (const auto& [d, n] : steals) nsteals += n;
  out += fmt::format("tasks: {}; steals: {}", tasks, nsteals);
  for (const auto& [d, n] : steals) out += fmt::format(", {} {}", n, d);
  out += "\n";
  if (local + remote > 0)
    out += fmt::format("data-flow bytes: {:.1f} MB on the worker's own NUMA node, {:.1f} MB on others ({} local)\n",
                       local / 1e6, remote / 1e6, pct(static_cast<double>(local), static_cast<double>(local + remote)));
  else
    out += "data-flow bytes: none recorded (no data-flow task accessed placed data)\n";
  out += counters_text(t);
  const std::vector<std::pair<int, int>> cp = critical_path(t);
  if (cp.empty()) {
    out += "critical path: no data-flow tasks in the trace\n";
  } else {
    double work = 0;
    for (auto [r, s] : cp) work += t.rows[r].spans[s].t1 - t.rows[r].spans[s].t0;
    const TraceSpan& first = t.rows[cp.front().first].spans[cp.front().second];
    const TraceSpan& last = t.rows[cp.back().first].spans[cp.back().second];
    out += fmt::format("critical path (data-flow, as observed): {} tasks, {} of work over {} ({} to {})\n",
                       cp.size(), ms(work), ms(last.t1 - first.t0), ms(first.t0), ms(last.t1));
    std::size_t shown = 0;
    for (auto [r, s] : cp) {
      if (++shown > 12) {
        out += fmt::format("  ... {} more\n", cp.size() - 12);
        break;
      }
      const TraceSpan& sp = t.rows[r].spans[s];
      out += fmt::format("  {:>12} {:>12}  worker {:<3} {}\n", ms(sp.t0), ms(sp.t1 - sp.t0), t.rows[r].tid, sp.label);
    }
  }
  return out;
}

}  // namespace canopy::cli
