// Rank lines and the comparison behind `canopy mpirun --report` (see
// mpi_report.hpp).
#include "mpi_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "canopy/error.hpp"

namespace canopy::mpi {

std::string rank_line(const std::string& marker, int rank, const std::string& host, long pid,
                      const std::vector<int>& cpus) {
  return fmt::format("{} rank={} host={} pid={} cpus={}", marker, rank, host, pid, run::cpu_list_string(cpus));
}

std::optional<RankLine> parse_rank_line(std::string_view line, std::string_view marker) {
  if (!line.starts_with(marker) || line.find(" rank=") == std::string_view::npos) return std::nullopt;
  auto bad = [&](std::string_view what) {
    return Error(fmt::format("rank line '{}': {}", line, what), ErrorKind::System);
  };
  auto field = [&](std::string_view key) -> std::string_view {
    const std::string k = fmt::format(" {}=", key);
    const size_t at = line.find(k);
    if (at == std::string_view::npos) throw bad(fmt::format("no {}= field", key));
    std::string_view v = line.substr(at + k.size());
    return v.substr(0, v.find(' '));
  };
  auto number = [&](std::string_view key) {
    std::string_view v = field(key);
    long n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < 0) throw bad(fmt::format("{}= is not a number", key));
    return n;
  };
  RankLine r;
  r.rank = static_cast<int>(number("rank"));
  r.pid = number("pid");
  r.host = std::string(field("host"));
  try {
    r.cpus = run::parse_cpu_list(field("cpus"));
  } catch (const Error& e) {
    throw bad(e.what());
  }
  return r;
}

RankReport compare_ranks(const std::vector<ExpectedRank>& expected, const std::vector<RankLine>& ranks,
                         const std::vector<run::AffinityLine>& threads) {
  RankReport out;
  std::map<int, const RankLine*> by_rank;
  std::map<long, int> rank_of_pid;
  for (const RankLine& r : ranks) {
    by_rank[r.rank] = &r;
    rank_of_pid[r.pid] = r.rank;
  }
  // Outermost-team threads per rank (the last line of each thread wins).
  std::map<int, std::map<int, std::vector<int>>> seen_threads;
  for (const run::AffinityLine& a : threads)
    if (a.level == 1 && rank_of_pid.count(a.pid)) seen_threads[rank_of_pid[a.pid]][a.thread] = a.cpus;

  std::vector<std::vector<std::string>> rows{{"rank", "thread", "host", "expected", "bound", "status"}};
  for (int rank = 0; rank < static_cast<int>(expected.size()); ++rank) {
    const ExpectedRank& e = expected[rank];
    auto it = by_rank.find(rank);
    if (it == by_rank.end()) {
      rows.push_back({std::to_string(rank), "-", e.host, run::cpu_list_string(e.cpus), "-", "not seen"});
      ++out.mismatches;
      continue;
    }
    const RankLine& r = *it->second;
    const bool host_ok = e.host == "localhost" || e.host == r.host;
    const bool ok = host_ok && r.cpus == e.cpus;
    if (!ok) ++out.mismatches;
    rows.push_back({std::to_string(rank), "-", r.host, run::cpu_list_string(e.cpus), run::cpu_list_string(r.cpus),
                    ok ? "ok" : (host_ok ? "MISMATCH" : "MISMATCH (host " + e.host + ")")});
    for (int t = 0; t < static_cast<int>(e.threads.size()); ++t) {
      const auto& st = seen_threads[rank];
      auto th = st.find(t);
      if (th == st.end()) {
        rows.push_back({std::to_string(rank), std::to_string(t), r.host, run::cpu_list_string(e.threads[t]), "-",
                        "not seen"});
        ++out.mismatches;
        continue;
      }
      const bool tok = th->second == e.threads[t];
      if (!tok) ++out.mismatches;
      rows.push_back({std::to_string(rank), std::to_string(t), r.host, run::cpu_list_string(e.threads[t]),
                      run::cpu_list_string(th->second), tok ? "ok" : "MISMATCH"});
    }
  }
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t k = 0; k < row.size(); ++k) w[k] = std::max(w[k], row[k].size());
  out.text = "canopy: where each rank (and OpenMP thread) ran, as it reports it:\n";
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t k = 0; k < row.size(); ++k) line += fmt::format(" {:<{}}", row[k], k + 1 < row.size() ? w[k] : 0);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.text += line + "\n";
  }
  out.text += out.mismatches
                  ? fmt::format("canopy: MISMATCH: {} rank(s) or thread(s) not seen or bound elsewhere than placed\n",
                                out.mismatches)
                  : "canopy: every rank (and thread) ran where placed\n";
  return out;
}

}  // namespace canopy::mpi
