// Parsing OMP_DISPLAY_AFFINITY lines and comparing them with the placement
// (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "canopy/error.hpp"

namespace canopy::run {

namespace {

// Parses a non-negative decimal at the start of s; advances s.
std::optional<long> take_number(std::string_view& s) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data() || v < 0) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(p - s.data()));
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "key=value" fields separated by spaces; `cpus` is last and may hold anything.
std::optional<std::string_view> field(std::string_view rest, std::string_view key) {
  std::string k = fmt::format(" {}=", key);
  size_t at = rest.find(k);
  if (at == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(at + k.size());
  if (key != "cpus") rest = rest.substr(0, rest.find(' '));
  return rest;
}

}  // namespace

std::string affinity_marker(long nonce) { return fmt::format("canopy-affinity-{}:", nonce); }

std::string affinity_format(const std::string& marker) { return marker + " pid=%P level=%L thread=%n cpus=%A"; }

std::vector<int> parse_cpu_list(std::string_view text) {
  std::string_view s = trim(text);
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  std::vector<int> cpus;
  auto bad = [&] { return Error(fmt::format("CPU list '{}': expected numbers and ranges such as '0-3,5'", text)); };
  if (trim(s).empty()) throw bad();
  while (true) {
    s = trim(s);
    auto a = take_number(s);
    if (!a) throw bad();
    long b = *a;
    if (!s.empty() && s.front() == '-') {
      s.remove_prefix(1);
      auto e = take_number(s);
      if (!e || *e < *a) throw bad();
      b = *e;
    }
    if (b > (1 << 22)) throw bad();
    for (long c = *a; c <= b; ++c) cpus.push_back(static_cast<int>(c));
    s = trim(s);
    if (s.empty()) break;
    if (s.front() != ',') throw bad();
    s.remove_prefix(1);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string cpu_list_string(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

std::optional<AffinityLine> parse_affinity_line(std::string_view line, std::string_view marker) {
  if (!line.starts_with(marker)) return std::nullopt;
  std::string_view rest = line.substr(marker.size());
  auto bad = [&](std::string_view what) {
    return Error(fmt::format("OpenMP affinity line '{}': {}", line, what), ErrorKind::System);
  };
  AffinityLine a;
  auto number = [&](std::string_view key) {
    auto f = field(rest, key);
    if (!f) throw bad(fmt::format("no {}= field", key));
    std::string_view v = *f;
    auto n = take_number(v);
    if (!n || !v.empty()) throw bad(fmt::format("{}= is not a number", key));
    return *n;
  };
  a.pid = number("pid");
  a.level = static_cast<int>(number("level"));
  a.thread = static_cast<int>(number("thread"));
  auto cpus = field(rest, "cpus");
  if (!cpus) throw bad("no cpus= field");
  try {
    a.cpus = parse_cpu_list(*cpus);
  } catch (const Error& e) {
    throw bad(e.what());
  }
  return a;
}

Report compare(const std::vector<std::vector<int>>& expected, const std::vector<AffinityLine>& lines) {
  Report r;
  // pid -> thread -> row, keeping pids in order of appearance.
  std::vector<long> pids;
  std::map<long, std::map<int, ThreadRow>> by_pid;
  for (const AffinityLine& a : lines) {
    if (a.level != 1) continue;
    if (!by_pid.count(a.pid)) pids.push_back(a.pid);
    ThreadRow& row = by_pid[a.pid][a.thread];
    row.pid = a.pid;
    row.thread = a.thread;
    if (a.thread < 0 || a.thread >= static_cast<int>(expected.size())) {
      row.status = ThreadStatus::Unplaced;
      row.bound = a.cpus;
      continue;
    }
    row.expected = expected[a.thread];
    // A thread that was once bound elsewhere stays a mismatch, showing where.
    if (row.status == ThreadStatus::Mismatch) continue;
    row.bound = a.cpus;
    row.status = a.cpus == row.expected ? ThreadStatus::Ok : ThreadStatus::Mismatch;
  }
  r.processes = static_cast<int>(pids.size());
  if (pids.empty()) pids.push_back(0);  // nothing printed: every thread is unseen
  for (long pid : pids) {
    auto& threads = by_pid[pid];
    for (int t = 0; t < static_cast<int>(expected.size()); ++t)
      if (!threads.count(t)) threads[t] = ThreadRow{pid, t, expected[t], {}, ThreadStatus::NotSeen};
    for (auto& [t, row] : threads) {
      if (row.status == ThreadStatus::Mismatch) ++r.mismatches;
      if (row.status == ThreadStatus::NotSeen) ++r.not_seen;
      r.rows.push_back(row);
    }
  }
  return r;
}

std::string format_report(const Report& r) {
  const bool show_pid = r.processes > 1;
  std::string out = "canopy: where each OpenMP thread was bound (as its runtime reports it):\n";
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head;
  if (show_pid) head.push_back("pid");
  for (const char* h : {"thread", "expected", "bound", "status"}) head.push_back(h);
  cells.push_back(head);
  for (const ThreadRow& row : r.rows) {
    std::vector<std::string> c;
    if (show_pid) c.push_back(fmt::format("{}", row.pid));
    c.push_back(fmt::format("{}", row.thread));
    c.push_back(row.status == ThreadStatus::Unplaced ? "-" : cpu_list_string(row.expected));
    c.push_back(row.status == ThreadStatus::NotSeen ? "-" : cpu_list_string(row.bound));
    switch (row.status) {
      case ThreadStatus::Ok: c.push_back("ok"); break;
      case ThreadStatus::Mismatch: c.push_back("MISMATCH"); break;
      case ThreadStatus::NotSeen: c.push_back("not seen"); break;
      case ThreadStatus::Unplaced: c.push_back("beyond -n (not placed)"); break;
    }
    cells.push_back(c);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& c : cells)
    for (size_t k = 0; k < c.size(); ++k) width[k] = std::max(width[k], c[k].size());
  for (const auto& c : cells) {
    std::string line = " ";
    for (size_t k = 0; k < c.size(); ++k)
      line += k + 1 < c.size() ? fmt::format(" {:<{}}", c[k], width[k]) : " " + c[k];
    out += line + "\n";
  }
  if (r.processes == 0)
    out += "canopy: the OpenMP runtime printed no affinity, so nothing could be checked: the program ran no "
           "parallel region, or only teams of one thread (libgomp prints nothing for those), or its runtime does "
           "not support OMP_DISPLAY_AFFINITY (OpenMP 5.0)\n";
  else if (r.mismatches)
    out += fmt::format("canopy: MISMATCH: {} thread(s) bound elsewhere than placed\n", r.mismatches);
  else
    out += "canopy: every thread seen was bound where placed\n";
  return out;
}

}  // namespace canopy::run
