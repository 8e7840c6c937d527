// A placement of ranks on a cluster in the formats launchers read: Open MPI
// rankfiles (the 4.x and 5.x command lines), Slurm --cpu-bind lists and
// SLURM_HOSTFILE, a per-rank OMP_PLACES file, a table and JSON.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "canopy/cluster.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "formats/labels.hpp"

namespace canopy {

namespace {

using formats::ranges;  // "0-3,6": Open MPI's slot lists and the CPU lists people read

const ClusterFormat kFormats[] = {ClusterFormat::Table,        ClusterFormat::Json,          ClusterFormat::Rankfile4,
                                  ClusterFormat::Rankfile5,    ClusterFormat::SlurmMapCpu,   ClusterFormat::SlurmMaskCpu,
                                  ClusterFormat::SlurmHostfile, ClusterFormat::OmpPlaces};

// The rankfile slot list: hwloc logical indexes of cores (granularity core)
// or of hardware threads (granularity pu).
std::vector<int> slot_indexes(const Cluster& c, int leaf) {
  const ClusterUnit& u = c.unit(leaf);
  const Topology& t = c.nodes().at(u.node).topology;
  std::vector<int> out;
  for (const auto& thread : u.threads)
    for (int pu : thread) out.push_back(c.unit_options().granularity == Granularity::Core ? t.pu(pu).core : pu);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string places(const Cluster& c, int leaf) {
  std::string s;
  for (size_t k = 0; k < c.unit(leaf).threads.size(); ++k) {
    std::string place;
    for (int os : c.thread_binding_os(leaf, static_cast<int>(k))) place += fmt::format("{}{}", place.empty() ? "" : ",", os);
    s += fmt::format("{}{{{}}}", k ? "," : "", place);
  }
  return s;
}

std::string header(const Cluster& c, const Placement& p, const char* what) {
  const auto& u = c.unit_options();
  return fmt::format("# {} by canopy: policy {}, {} ranks on cluster {} ({} nodes), granularity {}{}\n", what,
                     p.policy.empty() ? "?" : p.policy, p.num_tasks(), c.source(), c.nodes().size(),
                     to_string(u.granularity),
                     u.threads_per_rank > 1 ? fmt::format(", {} threads per rank", u.threads_per_rank) : "");
}

std::string rankfile(const Cluster& c, const Placement& p, int version) {
  const bool core = c.unit_options().granularity == Granularity::Core;
  std::string r = header(c, p, fmt::format("Open MPI {} rankfile", version).c_str());
  if (core) {
    r += "# slot = hwloc logical core indexes (each rank is bound to those whole cores). Run with:\n";
    r += version == 4 ? "#   mpirun --rankfile FILE ...\n" : "#   mpirun --map-by rankfile:file=FILE ...\n";
  } else {
    r += "# slot = hwloc logical PU (hardware thread) indexes. Run with hardware threads as CPUs:\n";
    r += version == 4 ? "#   mpirun --use-hwthread-cpus --rankfile FILE ...\n"
                      : "#   mpirun --map-by rankfile:file=FILE:hwtcpus ...\n";
  }
  for (int rank = 0; rank < p.num_tasks(); ++rank) {
    const int leaf = p.task_pu.at(rank);
    r += fmt::format("rank {}={} slot={}\n", rank, c.nodes().at(c.unit(leaf).node).host, ranges(slot_indexes(c, leaf)));
  }
  return r;
}

// Slurm applies one --cpu-bind list to every node, entry k to the node's
// k-th task (tasks numbered in rank order with --distribution=arbitrary), so
// the nodes' lists must agree (a node with fewer tasks uses a prefix).
std::string slurm(const Cluster& c, const Placement& p, bool mask) {
  std::map<int, std::vector<std::string>> per_node;
  for (int rank = 0; rank < p.num_tasks(); ++rank) {
    const int leaf = p.task_pu.at(rank);
    const std::vector<int> os = c.binding_os(leaf);
    std::string entry;
    if (mask) {
      // Hexadecimal CPU mask, highest CPU first.
      const int top = os.back();
      std::string hex;
      for (int base = top / 4 * 4; base >= 0; base -= 4) {
        int nib = 0;
        for (int b = 0; b < 4; ++b)
          if (std::binary_search(os.begin(), os.end(), base + b)) nib |= 1 << b;
        hex += "0123456789abcdef"[nib];
      }
      entry = "0x" + hex;
    } else {
      if (os.size() != 1)
        throw Error(fmt::format("--of slurm-map-cpu binds each rank to one CPU, but rank {} is bound to {} CPUs ({}); "
                                "use --of slurm-mask-cpu",
                                rank, os.size(), ranges(os)));
      entry = std::to_string(os.front());
    }
    per_node[c.unit(leaf).node].push_back(entry);
  }
  std::vector<std::string> list;
  int longest = -1;
  for (const auto& [node, entries] : per_node)
    if (entries.size() > list.size()) {
      list = entries;
      longest = node;
    }
  for (const auto& [node, entries] : per_node)
    for (size_t k = 0; k < entries.size(); ++k)
      if (entries[k] != list[k])
        throw Error(fmt::format(
            "Slurm applies one --cpu-bind list to every node, but this placement binds local task {} to {} on {} and "
            "to {} on {}; use --of rankfile (Open MPI), or nodes with identical topologies",
            k, entries[k], c.nodes().at(node).host, list[k], c.nodes().at(longest).host));
  std::string joined;
  for (const auto& e : list) joined += (joined.empty() ? "" : ",") + e;
  std::string r = header(c, p, "Slurm CPU binding");
  r += "# Run: SLURM_HOSTFILE=<the --of slurm-hostfile output> srun --distribution=arbitrary -n " +
       std::to_string(p.num_tasks()) + " --cpu-bind=<the line below> ...\n";
  r += fmt::format("{}:{}\n", mask ? "mask_cpu" : "map_cpu", joined);
  return r;
}

nlohmann::ordered_json json(const Cluster& c, const Placement& p, const CommMatrix* m) {
  nlohmann::ordered_json j;
  j["cluster"] = c.source();
  j["policy"] = p.policy;
  j["granularity"] = to_string(c.unit_options().granularity);
  j["threads_per_rank"] = c.unit_options().threads_per_rank;
  j["ranks"] = nlohmann::ordered_json::array();
  for (int rank = 0; rank < p.num_tasks(); ++rank) {
    const int leaf = p.task_pu.at(rank);
    nlohmann::ordered_json r;
    r["rank"] = rank;
    r["host"] = c.nodes().at(c.unit(leaf).node).host;
    r["node"] = c.unit(leaf).node;
    r["slot"] = slot_indexes(c, leaf);
    r["cpus"] = c.binding_os(leaf);
    auto threads = nlohmann::ordered_json::array();
    for (size_t k = 0; k < c.unit(leaf).threads.size(); ++k) threads.push_back(c.thread_binding_os(leaf, static_cast<int>(k)));
    r["threads"] = threads;
    if (m && m->size() == p.num_tasks()) r["volume"] = m->row_sum(rank);
    j["ranks"].push_back(r);
  }
  return j;
}

std::string table(const Cluster& c, const Placement& p, const CommMatrix* m) {
  const bool core = c.unit_options().granularity == Granularity::Core;
  std::vector<std::vector<std::string>> rows{
      {"rank", "host", core ? "cores (L#)" : "PUs (L#)", "binding (P#)", "volume"}};
  for (int rank = 0; rank < p.num_tasks(); ++rank) {
    const int leaf = p.task_pu.at(rank);
    const double v = m && m->size() == p.num_tasks() ? m->row_sum(rank) : 0;
    rows.push_back({std::to_string(rank), c.nodes().at(c.unit(leaf).node).host, ranges(slot_indexes(c, leaf)),
                    ranges(c.binding_os(leaf)), m ? fmt::format("{}", v) : "-"});
  }
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t k = 0; k < r.size(); ++k) w[k] = std::max(w[k], r[k].size());
  std::string out = header(c, p, "placement");
  for (const auto& r : rows) {
    std::string line;
    for (size_t k = 0; k < r.size(); ++k) {
      const bool right = k == 0 || k + 1 == r.size();
      line += (k ? "  " : "") + (right ? fmt::format("{:>{}}", r[k], w[k]) : fmt::format("{:<{}}", r[k], w[k]));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& cluster_format_names() {
  static const std::vector<std::string> names{"table",          "json",           "rankfile",       "rankfile5",
                                              "slurm-map-cpu",  "slurm-mask-cpu", "slurm-hostfile", "omp-places"};
  return names;
}

ClusterFormat parse_cluster_format(const std::string& name) {
  const auto& names = cluster_format_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return kFormats[i];
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error(fmt::format("unknown cluster placement format '{}': expected one of {}", name, list));
}

std::string format_cluster_placement(const Cluster& c, const Placement& p, ClusterFormat format, const CommMatrix* m) {
  switch (format) {
    case ClusterFormat::Table: return table(c, p, m);
    case ClusterFormat::Json: return json(c, p, m).dump(2) + "\n";
    case ClusterFormat::Rankfile4: return rankfile(c, p, 4);
    case ClusterFormat::Rankfile5: return rankfile(c, p, 5);
    case ClusterFormat::SlurmMapCpu: return slurm(c, p, false);
    case ClusterFormat::SlurmMaskCpu: return slurm(c, p, true);
    case ClusterFormat::SlurmHostfile: {
      std::string r;
      for (int rank = 0; rank < p.num_tasks(); ++rank)
        r += c.nodes().at(c.unit(p.task_pu.at(rank)).node).host + "\n";
      return r;
    }
    case ClusterFormat::OmpPlaces: {
      std::string r = header(c, p, "OMP_PLACES per rank");
      r += "# one line per rank: RANK OMP_PLACES (use with OMP_PROC_BIND=close; canopy mpirun sets both)\n";
      for (int rank = 0; rank < p.num_tasks(); ++rank) r += fmt::format("{} {}\n", rank, places(c, p.task_pu.at(rank)));
      return r;
    }
  }
  throw Error("format_cluster_placement: unknown format", ErrorKind::System);
}

}  // namespace canopy
