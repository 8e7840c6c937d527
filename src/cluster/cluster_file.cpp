// Reading a cluster: cluster description files and the Open MPI / Slurm
// hostfiles they extend (one syntax: "HOSTS [slots=N] [TOPOLOGY]"), and the
// short forms of --cluster ("N*TOPOLOGY", "localhost"). Every error names the
// file, the line and the value.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "canopy/cluster.hpp"
#include "canopy/error.hpp"

namespace canopy {

namespace {

constexpr int kMaxHosts = 65536;

bool host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'; }

// Parses a non-negative decimal; false on anything else or overflow.
bool parse_count(const std::string& s, long& out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  out = std::stol(s);
  return true;
}

// "node[01-04,7]" -> node01 node02 node03 node04 node7 (Slurm's host list
// form, zero padding kept); a plain name stands for itself.
std::vector<std::string> expand_hosts(const std::string& spec, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(fmt::format("{}: host '{}': {}", where, spec, why)); };
  const size_t open = spec.find('[');
  if (open == std::string::npos) {
    for (char c : spec)
      if (!host_char(c)) throw bad(fmt::format("unexpected character '{}' (a host name has letters, digits, '-', '.', '_')", c));
    return {spec};
  }
  const size_t close = spec.find(']', open);
  if (close == std::string::npos) throw bad("'[' without ']'");
  const std::string prefix = spec.substr(0, open), suffix = spec.substr(close + 1);
  if (suffix.find('[') != std::string::npos) throw bad("only one [range] per host name");
  for (char c : prefix + suffix)
    if (!host_char(c)) throw bad(fmt::format("unexpected character '{}'", c));
  std::vector<std::string> out;
  std::stringstream items(spec.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(items, item, ',')) {
    const size_t dash = item.find('-');
    const std::string a = item.substr(0, dash), b = dash == std::string::npos ? a : item.substr(dash + 1);
    long lo = 0, hi = 0;
    if (!parse_count(a, lo) || !parse_count(b, hi) || hi < lo)
      throw bad(fmt::format("range '{}': expected N or N-M with N <= M", item));
    if (static_cast<long>(out.size()) + hi - lo + 1 > kMaxHosts) throw bad(fmt::format("more than {} hosts", kMaxHosts));
    const size_t width = a.size() > 1 && a[0] == '0' ? a.size() : 0;
    for (long k = lo; k <= hi; ++k) out.push_back(fmt::format("{}{:0{}}{}", prefix, k, width, suffix));
  }
  if (out.empty()) throw bad("empty [range]");
  return out;
}

// Topologies are loaded once per distinct description.
class TopologyCache {
 public:
  const Topology& get(const std::string& input, const std::string& where) {
    auto it = cache_.find(input);
    if (it != cache_.end()) return it->second;
    try {
      return cache_.emplace(input, Topology::load(input)).first->second;
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", where, e.what()), e.kind());
    }
  }

 private:
  std::map<std::string, Topology> cache_;
};

struct HostLine {
  int line = 0;
  std::string topology;
  long slots = 0;  // summed over the host's lines when it repeats
  int lines = 0;
  bool explicit_slots = false;
};

}  // namespace

Cluster Cluster::from_file(const std::string& path, const std::string& default_topology, const UnitOptions& units) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open the cluster file", path));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<std::string> order;
  std::map<std::string, HostLine> hosts;
  std::string text;
  int lineno = 0;
  while (std::getline(in, text)) {
    ++lineno;
    const std::string where = fmt::format("{}:{}", path, lineno);
    if (const size_t hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::stringstream ss(text);
    std::vector<std::string> tokens;
    for (std::string t; ss >> t;) tokens.push_back(t);
    if (tokens.empty()) continue;
    long slots = 0;
    bool explicit_slots = false;
    size_t k = 1;
    for (; k < tokens.size(); ++k) {
      const std::string& t = tokens[k];
      const size_t eq = t.find('=');
      if (eq == std::string::npos || eq == 0 || !std::islower(static_cast<unsigned char>(t[0]))) break;
      const std::string key = t.substr(0, eq), value = t.substr(eq + 1);
      if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos) break;  // a topology
      long n = 0;
      if (key == "slots" || key == "max_slots") {
        if (!parse_count(value, n) || n < 1)
          throw Error(fmt::format("{}: {}='{}': expected a positive number of ranks", where, key, value));
        if (key == "slots") {
          slots = n;
          explicit_slots = true;
        }
        continue;
      }
      throw Error(fmt::format("{}: unknown option '{}' (expected slots=N, max_slots=N, then the node's topology)",
                              where, key));
    }
    std::string topology;
    for (; k < tokens.size(); ++k) topology += (topology.empty() ? "" : " ") + tokens[k];
    if (topology == "-") topology.clear();
    if (topology.empty()) {
      topology = default_topology;
    } else if (!std::filesystem::path(topology).is_absolute() &&
               (topology.ends_with(".xml") || topology.find('/') != std::string::npos)) {
      topology = (dir / topology).string();  // XML files are named relative to the cluster file
    }
    for (const std::string& host : expand_hosts(tokens[0], where)) {
      auto [it, fresh] = hosts.try_emplace(host);
      HostLine& h = it->second;
      if (fresh) {
        order.push_back(host);
        if (order.size() > static_cast<size_t>(kMaxHosts))
          throw Error(fmt::format("{}: more than {} hosts", where, kMaxHosts));
        h.line = lineno;
        h.topology = topology;
      } else if (h.topology != topology) {
        throw Error(fmt::format("{}: host {} has topology '{}' here but '{}' on line {}", where, host,
                                topology.empty() ? "this machine" : topology,
                                h.topology.empty() ? "this machine" : h.topology, h.line));
      }
      // Like Open MPI and Slurm hostfiles: each line of a host adds its
      // slots (one when it gives none).
      h.slots += explicit_slots ? slots : 1;
      h.explicit_slots = h.explicit_slots || explicit_slots;
      ++h.lines;
    }
  }
  if (order.empty()) throw Error(fmt::format("{}: no host in the cluster file", path));
  TopologyCache cache;
  std::vector<ClusterNode> nodes;
  for (const std::string& host : order) {
    const HostLine& h = hosts[host];
    ClusterNode n;
    n.host = host;
    n.where = fmt::format("{}:{}", path, h.line);
    n.topology = cache.get(h.topology, n.where);
    // One line without slots=: every unit of the node.
    n.slots = h.explicit_slots || h.lines > 1 ? static_cast<int>(h.slots) : 0;
    nodes.push_back(std::move(n));
  }
  return Cluster(std::move(nodes), units, path);
}

Cluster Cluster::load(const std::string& spec, const std::string& default_topology, const UnitOptions& units) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(spec, ec)) return from_file(spec, default_topology, units);
  if (spec == "localhost") {
    ClusterNode n{"localhost", Topology::load(default_topology), 0, {}};
    return Cluster({std::move(n)}, units, default_topology.empty() ? "localhost" : "localhost: " + default_topology);
  }
  const size_t star = spec.find('*');
  long count = 0;
  if (star != std::string::npos && parse_count(spec.substr(0, star), count)) {
    if (count < 1 || count > kMaxHosts)
      throw Error(fmt::format("--cluster '{}': {} nodes, expected 1 to {}", spec, count, kMaxHosts));
    std::string topology = spec.substr(star + 1);
    topology.erase(0, topology.find_first_not_of(" \t"));
    if (topology.empty()) topology = default_topology;
    Topology t;
    try {
      t = Topology::load(topology);
    } catch (const Error& e) {
      throw Error(fmt::format("--cluster '{}': {}", spec, e.what()), e.kind());
    }
    std::vector<ClusterNode> nodes;
    for (long i = 0; i < count; ++i) nodes.push_back({fmt::format("node{}", i), t, 0, {}});
    return Cluster(std::move(nodes), units, spec);
  }
  throw Error(fmt::format("--cluster '{}': no such cluster file, and not of the form N*TOPOLOGY (N identical nodes, "
                          "e.g. '4*pack:2 core:8 pu:2') or 'localhost'",
                          spec));
}

}  // namespace canopy
