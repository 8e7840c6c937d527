// The placement for people (an aligned table) and for programs (JSON): per
// task its PU (logical and OS index), core, NUMA node, the cpuset it is
// bound to, its helper PU, and its communication volume when the matrix is
// given.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "canopy/formats.hpp"
#include "formats/placement_detail.hpp"

namespace canopy::formats {

std::vector<double> task_volumes(const Placement& p, const CommMatrix* m) {
  std::vector<double> v;
  if (!m || m->size() != p.num_tasks()) return v;
  v.assign(static_cast<size_t>(p.num_tasks()), 0.0);
  for (int t = 0; t < p.num_tasks(); ++t)
    for (std::int64_t k = m->row_begin(t); k < m->row_end(t); ++k) v[t] += m->weights()[static_cast<size_t>(k)];
  return v;
}

std::string placement_table(const Topology& topo, const Placement& p, const CommMatrix* m) {
  const bool helpers = !p.helper_pu.empty();
  const bool numa = topo.num_numa_nodes() > 0;
  std::vector<double> vol = task_volumes(p, m);

  std::vector<std::string> head{"task", "PU L#", "PU P#", "core", "NUMA", "binding (P#)"};
  if (helpers) head.push_back("helper P#");
  if (!vol.empty()) head.push_back("volume");
  std::vector<std::vector<std::string>> rows;
  for (int t = 0; t < p.num_tasks(); ++t) {
    int pu = p.task_pu.at(t);
    const PUInfo& info = topo.pu(pu);
    std::vector<std::string> r{std::to_string(t),         std::to_string(pu),
                               std::to_string(info.os_index), std::to_string(info.core),
                               numa ? std::to_string(info.numa) : "-",
                               Topology::cpuset_list_string(binding_os(topo, p, t))};
    if (helpers) {
      int h = p.helper_pu.at(t);
      r.push_back(h >= 0 ? std::to_string(topo.pu(h).os_index) : "-");
    }
    if (!vol.empty()) r.push_back(fmt::format("{:g}", vol[t]));
    rows.push_back(std::move(r));
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  // The binding column is text (left-aligned); the others are numbers.
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) s += "  ";
      if (head[c] == "binding (P#)" && c + 1 < cells.size())
        s += fmt::format("{:<{}}", cells[c], width[c]);
      else if (head[c] == "binding (P#)")
        s += cells[c];
      else
        s += fmt::format("{:>{}}", cells[c], width[c]);
    }
    return s + "\n";
  };
  std::string out = fmt::format("# policy {}: {} tasks on {} ({} PUs), granularity {}{}\n", p.policy,
                                p.num_tasks(), topo.source(), topo.num_pus(), to_string(p.granularity),
                                helpers ? ", helpers smt" : "");
  out += line(head);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string placement_json(const Topology& topo, const Placement& p, const CommMatrix* m) {
  using Json = nlohmann::ordered_json;
  std::vector<double> vol = task_volumes(p, m);
  Json j;
  j["policy"] = p.policy;
  j["topology"] = topo.source();
  j["num_pus"] = topo.num_pus();
  j["num_tasks"] = p.num_tasks();
  j["granularity"] = to_string(p.granularity);
  j["helpers"] = p.helper_pu.empty() ? "none" : "smt";
  Json tasks = Json::array();
  for (int t = 0; t < p.num_tasks(); ++t) {
    int pu = p.task_pu.at(t);
    const PUInfo& info = topo.pu(pu);
    std::vector<int> os = binding_os(topo, p, t);
    Json x;
    x["task"] = t;
    x["pu"] = pu;
    x["pu_os"] = info.os_index;
    x["core"] = info.core;
    x["numa"] = topo.num_numa_nodes() > 0 ? Json(info.numa) : Json(nullptr);
    x["binding_os"] = os;
    x["cpuset"] = Topology::cpuset_mask_string(os);
    if (!p.helper_pu.empty()) {
      int h = p.helper_pu.at(t);
      x["helper_pu"] = h >= 0 ? Json(h) : Json(nullptr);
      x["helper_pu_os"] = h >= 0 ? Json(topo.pu(h).os_index) : Json(nullptr);
    }
    if (!vol.empty()) x["volume"] = vol[t];
    tasks.push_back(x);
  }
  j["tasks"] = tasks;
  return j.dump(2) + "\n";
}

}  // namespace canopy::formats
