// parse_placement_list(): reads the list format back (what `canopy map --of
// list` writes and `canopy eval --placement` reads): one OS CPU number per
// task, whitespace separated, over any number of lines, '#' starting a
// comment. Every error names the input, the line and the token.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <istream>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/topology.hpp"

namespace canopy {

Placement parse_placement_list(const Topology& topo, std::istream& in, const std::string& name, int expected_tasks) {
  Placement p;
  p.policy = name;
  std::string line;
  long long lineno = 0;
  std::vector<int> os_of_all;
  for (const PUInfo& pu : topo.pus()) os_of_all.push_back(pu.os_index);
  while (std::getline(in, line)) {
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      if (j == i) break;
      std::string tok = line.substr(i, j - i);
      int os = -1;
      auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), os);
      if (ec != std::errc() || end != tok.data() + tok.size() || os < 0) {
        std::string shown = tok.size() > 40 ? tok.substr(0, 40) + "..." : tok;
        throw Error(fmt::format("{}:{}: '{}' is not an OS CPU number (expected non-negative integers separated "
                                "by spaces, one per task, as `canopy map --of list` writes)",
                                name, lineno, shown));
      }
      int pu = topo.pu_by_os_index(os);
      if (pu < 0)
        throw Error(fmt::format("{}:{}: CPU {} is not in topology '{}' (its OS CPU numbers are {})", name, lineno, os,
                                topo.source(), Topology::cpuset_list_string(os_of_all)));
      if (static_cast<std::int64_t>(p.task_pu.size()) >= kMaxTasks)
        throw Error(fmt::format("{}:{}: more than {} tasks", name, lineno, kMaxTasks));
      p.task_pu.push_back(pu);
      i = j;
    }
  }
  if (in.bad()) throw Error(fmt::format("{}: read error", name), ErrorKind::System);
  if (p.task_pu.empty()) throw Error(fmt::format("{}: no CPU number found (expected one OS CPU number per task)", name));
  if (expected_tasks >= 0 && p.num_tasks() != expected_tasks)
    throw Error(fmt::format("{}: {} CPU number{} for {} tasks (expected one OS CPU number per task of the matrix)",
                            name, p.num_tasks(), p.num_tasks() == 1 ? "" : "s", expected_tasks));
  return p;
}

}  // namespace canopy
