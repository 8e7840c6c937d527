// topology_json(): the whole topology for programs: source, levels (names,
// node counts, arities), the tree of nodes with their merged hwloc objects,
// PUs (logical, OS, core, NUMA node), cores, NUMA nodes with memory and
// cpusets, and hwloc's NUMA distance matrix (null when the machine has none).
// Keys keep a fixed order so that the output diffs well.
#include <nlohmann/json.hpp>

#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "formats/labels.hpp"

namespace canopy {

namespace {

using Json = nlohmann::ordered_json;

Json object_json(const TopoObject& o) {
  Json j;
  j["type"] = o.type;
  j["logical_index"] = o.logical_index;
  j["os_index"] = o.os_index < 0 ? Json(nullptr) : Json(o.os_index);
  if (o.bytes) j["bytes"] = o.bytes;
  return j;
}

Json node_json(const Topology& t, int id) {
  const TopoNode& n = t.node(id);
  Json j;
  j["id"] = n.id;
  j["level"] = n.level;
  j["padding"] = n.objects.size() == 1 && formats::is_padding(n.objects.front());
  Json objs = Json::array();
  for (const TopoObject& o : n.objects)
    if (!formats::is_padding(o)) objs.push_back(object_json(o));
  j["objects"] = objs;
  j["numa_nodes"] = n.numa_nodes;
  j["first_pu"] = n.first_pu;
  j["num_pus"] = n.num_pus;
  if (!n.children.empty()) {
    Json ch = Json::array();
    for (int c : n.children) ch.push_back(node_json(t, c));
    j["children"] = ch;
  }
  return j;
}

}  // namespace

std::string topology_json(const Topology& t) {
  Json j;
  j["source"] = t.source();
  j["this_machine"] = t.is_this_machine();
  j["num_pus"] = t.num_pus();
  j["num_cores"] = t.num_cores();
  j["num_numa_nodes"] = t.num_numa_nodes();

  Json levels = Json::array();
  for (int l = 0; l < t.num_levels(); ++l) {
    const LevelInfo& L = t.level(l);
    Json x;
    x["depth"] = l;
    x["name"] = L.name;
    x["num_nodes"] = L.num_nodes;
    x["min_arity"] = L.min_arity;
    x["max_arity"] = L.max_arity;
    x["numa"] = L.numa;
    levels.push_back(x);
  }
  j["levels"] = levels;

  Json pus = Json::array();
  for (const PUInfo& p : t.pus()) {
    Json x;
    x["logical"] = p.logical;
    x["os_index"] = p.os_index;
    x["core"] = p.core;
    x["numa"] = t.num_numa_nodes() > 0 ? Json(p.numa) : Json(nullptr);
    pus.push_back(x);
  }
  j["pus"] = pus;

  Json cores = Json::array();
  for (const CoreInfo& c : t.cores()) {
    Json x;
    x["logical"] = c.logical;
    x["os_index"] = c.os_index < 0 ? Json(nullptr) : Json(c.os_index);
    x["pus"] = c.pus;
    cores.push_back(x);
  }
  j["cores"] = cores;

  Json numa = Json::array();
  for (const NumaInfo& n : t.numa_nodes()) {
    Json x;
    x["logical"] = n.logical;
    x["os_index"] = n.os_index;
    x["bytes"] = n.bytes;
    x["pus"] = n.pus;
    std::vector<int> os;
    for (int p : n.pus) os.push_back(t.pu(p).os_index);
    x["cpuset"] = os.empty() ? std::string() : Topology::cpuset_list_string(os);
    numa.push_back(x);
  }
  j["numa_nodes"] = numa;
  j["numa_distances"] = t.numa_distances().empty() ? Json(nullptr) : Json(t.numa_distances());
  j["tree"] = node_json(t, 0);
  return j.dump(2) + "\n";
}

}  // namespace canopy
