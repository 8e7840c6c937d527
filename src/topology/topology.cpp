// Loading a Topology through hwloc and copying hwloc's tree into canopy's own
// (see topology.hpp for the merging rule). hwloc stays inside this directory.
#include "canopy/topology.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "canopy/error.hpp"
#include "topology/hwloc_handle.hpp"
#include "topology/plain_tree.hpp"

namespace canopy {

namespace {

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

std::string type_name(hwloc_obj_t o) {
  char buf[64];
  hwloc_obj_type_snprintf(buf, sizeof buf, o, 0);
  return buf;
}

// Synthetic strings are checked before hwloc sees them so that
// "pack:100000 core:100000" (or the bare-number form "100000 100000") is an
// error, not an attempt to build 10^10 PUs. Each level token is "type:N",
// "N", or a type alone (arity 1); "[...]" attached memory and "(...)"
// attributes carry no arity.
void check_synthetic_size(const std::string& desc) {
  double total = 1;
  std::string token;
  int depth_paren = 0, depth_bracket = 0;
  auto level_done = [&] {
    if (token.empty()) return;
    size_t colon = token.rfind(':');
    std::string num = colon == std::string::npos ? token : token.substr(colon + 1);
    bool digits = !num.empty() && std::all_of(num.begin(), num.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (digits) total *= std::strtod(num.c_str(), nullptr);
    token.clear();
  };
  for (char c : desc) {
    if (c == '(') ++depth_paren;
    else if (c == ')') depth_paren = std::max(0, depth_paren - 1);
    else if (c == '[') ++depth_bracket;
    else if (c == ']') depth_bracket = std::max(0, depth_bracket - 1);
    else if (depth_paren == 0 && depth_bracket == 0) {
      if (std::isspace(static_cast<unsigned char>(c))) level_done();
      else token += c;
    }
  }
  level_done();
  if (total > kMaxPUs)
    throw Error(fmt::format("synthetic topology '{}': {:.0f} PUs is more than the limit of {}", desc, total,
                            kMaxPUs));
}

// hwloc 2.9 aborts the whole process (a failed assert in
// hwloc_synthetic_process_indexes) on some interleaved index attributes,
// e.g. "(indexes=numa:core)core:3 pu:1" (found by fuzz_synthetic). That
// form ("indexes=<type>:<type>...") is refused before hwloc sees it;
// explicit index lists ("indexes=0,2,1,3") are passed on.
void check_synthetic_attributes(const std::string& desc) {
  static constexpr std::string_view kIndexes = "indexes=";
  for (size_t at = desc.find(kIndexes); at != std::string::npos; at = desc.find(kIndexes, at + 1)) {
    const size_t v = at + kIndexes.size();
    if (v < desc.size() && std::isalpha(static_cast<unsigned char>(desc[v])))
      throw Error(fmt::format(
          "synthetic topology '{}': interleaved indexes ('indexes=<type>:<type>') are not supported; "
          "expected an explicit list of OS indexes such as 'indexes=0,2,1,3'",
          desc));
  }
}

}  // namespace

// Builds canopy's tree from a loaded hwloc topology.
struct TopologyBuilder {
  hwloc_topology_t t;
  Topology& out;

  static Topology make(hwloc_topology_t t, std::string source, bool this_machine);
  static Topology from_fields(TopologyFields f);  // a tree canopy built itself (plain_tree.hpp)

  // hwloc depths kept as canopy levels: the root, the PUs, and every depth
  // where some object has more than one normal child.
  std::vector<int> kept_depths() {
    int depth_pu = hwloc_get_type_depth(t, HWLOC_OBJ_PU);
    std::vector<int> kept{0};
    for (int d = 1; d < depth_pu; ++d) {
      unsigned n = hwloc_get_nbobjs_by_depth(t, d);
      bool branches = false;
      for (unsigned i = 0; i < n && !branches; ++i)
        branches = hwloc_get_obj_by_depth(t, d, i)->arity > 1;
      if (branches) kept.push_back(d);
    }
    if (depth_pu > 0) kept.push_back(depth_pu);
    return kept;
  }

  void build() {
    std::vector<int> kept = kept_depths();
    std::map<int, int> level_of_depth;
    for (size_t i = 0; i < kept.size(); ++i) level_of_depth[kept[i]] = static_cast<int>(i);
    out.levels_.assign(kept.size(), {});
    out.level_nodes_.assign(kept.size(), {});

    // NUMA nodes, in hwloc logical order.
    int nnuma = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < nnuma; ++i) {
      hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
      NumaInfo info;
      info.logical = i;
      info.os_index = static_cast<int>(n->os_index);
      info.bytes = n->attr ? n->attr->numanode.local_memory : 0;
      out.numa_.push_back(info);
    }

    // Walk the tree; `pending` collects the objects of dropped levels until
    // the next kept object (they are merged into it).
    std::vector<TopoObject> pending;
    std::vector<int> pending_numa;
    walk(hwloc_get_root_obj(t), -1, level_of_depth, pending, pending_numa);

    // Levels.
    for (size_t l = 0; l < kept.size(); ++l) {
      LevelInfo& L = out.levels_[l];
      L.num_nodes = static_cast<int>(out.level_nodes_[l].size());
      L.min_arity = 1 << 30;
      L.max_arity = 0;
      bool all_numa = !out.level_nodes_[l].empty();
      std::vector<std::string> names;
      for (int id : out.level_nodes_[l]) {
        const TopoNode& n = out.nodes_[id];
        L.min_arity = std::min<int>(L.min_arity, static_cast<int>(n.children.size()));
        L.max_arity = std::max<int>(L.max_arity, static_cast<int>(n.children.size()));
        if (n.numa_nodes.empty()) all_numa = false;
        for (const TopoObject& o : n.objects)
          if (std::find(names.begin(), names.end(), o.type) == names.end()) names.push_back(o.type);
      }
      if (out.level_nodes_[l].empty()) L.min_arity = 0;
      L.numa = all_numa;
      std::string name;
      for (const std::string& s : names) name += (name.empty() ? "" : "+") + s;
      if (all_numa && name.find("NUMANode") == std::string::npos) name += "+NUMANode";
      L.name = name;
    }

    // PUs (leaves are numbered in tree order = hwloc logical order), cores, NUMA membership.
    int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    out.pus_.resize(npu);
    std::map<int, int> core_of_hwloc_core;  // hwloc core logical index -> canopy core
    for (int i = 0; i < npu; ++i) {
      hwloc_obj_t p = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, i);
      PUInfo& info = out.pus_[i];
      info.logical = i;
      info.os_index = static_cast<int>(p->os_index);
      hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, p);
      int key = core ? static_cast<int>(core->logical_index) : -1 - i;
      auto [it, fresh] = core_of_hwloc_core.emplace(key, static_cast<int>(out.cores_.size()));
      if (fresh) {
        CoreInfo c;
        c.logical = it->second;
        c.os_index = core ? static_cast<int>(core->os_index) : -1;
        out.cores_.push_back(c);
      }
      info.core = it->second;
      out.cores_[info.core].pus.push_back(i);
      info.numa = 0;
      for (int n = 0; n < nnuma; ++n) {
        hwloc_obj_t numa = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, n);
        if (hwloc_bitmap_isset(numa->cpuset, p->os_index)) {
          info.numa = n;
          break;
        }
      }
      if (nnuma > 0) out.numa_[info.numa].pus.push_back(i);
    }
    int max_os = 0;
    for (const PUInfo& p : out.pus_) max_os = std::max(max_os, p.os_index);
    out.pu_of_os_.assign(max_os + 1, -1);
    for (const PUInfo& p : out.pus_) out.pu_of_os_[p.os_index] = p.logical;
    const auto& leaves = out.level_nodes_.back();
    for (int i = 0; i < npu && i < static_cast<int>(leaves.size()); ++i) out.pus_[i].node = leaves[i];

    // Ancestors per PU, for O(levels) common-ancestor queries.
    out.ancestors_.assign(npu, std::vector<int>(kept.size()));
    for (int i = 0; i < npu; ++i) {
      int id = out.pus_[i].node;
      for (int l = static_cast<int>(kept.size()) - 1; l >= 0; --l) {
        out.ancestors_[i][l] = id;
        id = out.nodes_[id].parent;
      }
    }

    // NUMA distances (only when the machine or file has them).
    unsigned nr = 1;
    hwloc_distances_s* dist = nullptr;
    if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) ==
            0 &&
        nr >= 1 && dist) {
      unsigned n = dist->nbobjs;
      if (static_cast<int>(n) == nnuma) {
        out.numa_distances_.assign(n, std::vector<std::uint64_t>(n));
        for (unsigned a = 0; a < n; ++a)
          for (unsigned b = 0; b < n; ++b) {
            int la = static_cast<int>(dist->objs[a]->logical_index);
            int lb = static_cast<int>(dist->objs[b]->logical_index);
            out.numa_distances_[la][lb] = dist->values[a * n + b];
          }
      }
      hwloc_distances_release(t, dist);
    }
  }

  // Visit `o`; `parent` is the canopy node of the nearest kept ancestor.
  void walk(hwloc_obj_t o, int parent, const std::map<int, int>& level_of_depth, std::vector<TopoObject>& pending,
            std::vector<int>& pending_numa) {
    TopoObject obj;
    obj.type = type_name(o);
    obj.logical_index = static_cast<int>(o->logical_index);
    obj.os_index = o->os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<int>(o->os_index);
    if (hwloc_obj_type_is_cache(o->type) && o->attr) obj.bytes = o->attr->cache.size;
    if (o->type == HWLOC_OBJ_MACHINE) obj.bytes = o->total_memory;
    pending.push_back(obj);
    for (hwloc_obj_t m = o->memory_first_child; m; m = m->next_sibling)
      if (m->type == HWLOC_OBJ_NUMANODE) {
        pending_numa.push_back(static_cast<int>(m->logical_index));
        TopoObject numa;
        numa.type = "NUMANode";
        numa.logical_index = static_cast<int>(m->logical_index);
        numa.os_index = static_cast<int>(m->os_index);
        numa.bytes = m->attr ? m->attr->numanode.local_memory : 0;
        pending.push_back(numa);
      }

    auto it = level_of_depth.find(o->depth);
    int self = parent;
    if (it != level_of_depth.end()) {
      int level = it->second;
      // A branch that skips kept depths gets padding nodes so that all PUs
      // are leaves at the same depth.
      int parent_level = parent < 0 ? -1 : out.nodes_[parent].level;
      for (int l = parent_level + 1; l < level; ++l) parent = add_node(l, parent, {{"Pad", -1, -1, 0}}, {});
      self = add_node(level, parent, std::move(pending), std::move(pending_numa));
      pending.clear();
      pending_numa.clear();
    }
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling) {
      // Objects of a dropped level have one child, so `pending` passes down intact.
      std::vector<TopoObject> carry = pending;
      std::vector<int> carry_numa = pending_numa;
      walk(c, self, level_of_depth, carry, carry_numa);
    }
  }

  int add_node(int level, int parent, std::vector<TopoObject> objects, std::vector<int> numa) {
    TopoNode n;
    n.id = static_cast<int>(out.nodes_.size());
    n.level = level;
    n.parent = parent;
    n.objects = std::move(objects);
    n.numa_nodes = std::move(numa);
    n.index_in_level = static_cast<int>(out.level_nodes_[level].size());
    out.level_nodes_[level].push_back(n.id);
    out.nodes_.push_back(std::move(n));
    if (parent >= 0) out.nodes_[parent].children.push_back(out.nodes_.back().id);
    return out.nodes_.back().id;
  }

  // first_pu / num_pus, bottom-up (children come after parents in nodes_).
  void count_pus() {
    int next = 0;
    for (int id : out.level_nodes_.back()) {
      out.nodes_[id].first_pu = next++;
      out.nodes_[id].num_pus = 1;
    }
    for (int l = static_cast<int>(out.level_nodes_.size()) - 2; l >= 0; --l)
      for (int id : out.level_nodes_[l]) {
        TopoNode& n = out.nodes_[id];
        n.num_pus = 0;
        n.first_pu = n.children.empty() ? 0 : out.nodes_[n.children.front()].first_pu;
        for (int c : n.children) n.num_pus += out.nodes_[c].num_pus;
      }
  }
};

namespace {

hwloc_topology_t new_topology() {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) throw Error("hwloc: cannot initialise a topology", ErrorKind::System);
  // I/O devices are of no use for placement.
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
  return t;
}

void load_or_throw(hwloc_topology_t t, const std::string& what) {
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    throw Error(fmt::format("{}: hwloc could not load it", what));
  }
}

}  // namespace

Topology TopologyBuilder::make(hwloc_topology_t t, std::string source, bool this_machine) {
  // Own `t` from here on, whatever happens.
  auto handle = std::make_shared<const Topology::Hwloc>(t);
  if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) <= 0)
    throw Error(fmt::format("topology '{}' has no processing unit", source));
  if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU) > kMaxPUs)
    throw Error(fmt::format("topology '{}' has more than {} PUs", source, kMaxPUs));
  Topology topo;
  topo.hwloc_ = handle;
  topo.source_ = std::move(source);
  topo.this_machine_ = this_machine;
  TopologyBuilder b{t, topo};
  b.build();
  b.count_pus();
  return topo;
}

Topology TopologyBuilder::from_fields(TopologyFields f) {
  Topology topo;
  topo.source_ = std::move(f.source);
  topo.this_machine_ = false;
  topo.levels_ = std::move(f.levels);
  topo.nodes_ = std::move(f.nodes);
  topo.level_nodes_ = std::move(f.level_nodes);
  topo.pus_ = std::move(f.pus);
  topo.cores_ = std::move(f.cores);
  topo.numa_ = std::move(f.numa);
  topo.ancestors_ = std::move(f.ancestors);
  topo.pu_of_os_ = std::move(f.pu_of_os);
  return topo;
}

Topology topology_from_fields(TopologyFields fields) { return TopologyBuilder::from_fields(std::move(fields)); }

Topology::Topology() = default;
Topology::~Topology() = default;
Topology::Topology(const Topology&) = default;
Topology& Topology::operator=(const Topology&) = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

Topology Topology::this_machine() {
  hwloc_topology_t t = new_topology();
  load_or_throw(t, "this machine");
  // hwloc already hides PUs outside the cgroup cpuset; the process binding
  // (taskset, numactl, a batch system) narrows it further.
  Bitmap bound(hwloc_bitmap_alloc());
  if (hwloc_get_cpubind(t, bound.get(), HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound.get())) {
    hwloc_bitmap_and(bound.get(), bound.get(), hwloc_topology_get_topology_cpuset(t));
    if (!hwloc_bitmap_iszero(bound.get()) && !hwloc_bitmap_isequal(bound.get(), hwloc_topology_get_topology_cpuset(t)))
      hwloc_topology_restrict(t, bound.get(), 0);
  }
  return TopologyBuilder::make(t, "this machine", true);
}

Topology Topology::from_xml_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(fmt::format("{}: no such topology file", path));
  hwloc_topology_t t = new_topology();
  if (hwloc_topology_set_xml(t, path.c_str()) != 0) {
    hwloc_topology_destroy(t);
    throw Error(fmt::format("{}: not a valid hwloc XML topology", path));
  }
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    throw Error(fmt::format("{}: not a valid hwloc XML topology (hwloc could not load it)", path));
  }
  return TopologyBuilder::make(t, path, false);
}

Topology Topology::from_synthetic(const std::string& description) {
  std::string trimmed = description;
  trimmed.erase(0, trimmed.find_first_not_of(" \t\n"));
  if (trimmed.empty()) throw Error("synthetic topology: the description is empty");
  check_synthetic_size(description);
  check_synthetic_attributes(description);
  hwloc_topology_t t = new_topology();
  if (hwloc_topology_set_synthetic(t, description.c_str()) != 0) {
    hwloc_topology_destroy(t);
    throw Error(fmt::format(
        "synthetic topology '{}': not a valid hwloc synthetic description (expected e.g. 'pack:2 numa:2 core:8 pu:2')",
        description));
  }
  load_or_throw(t, fmt::format("synthetic topology '{}'", description));
  return TopologyBuilder::make(t, description, false);
}

Topology Topology::load(const std::string& input) {
  if (input.empty()) return this_machine();
  std::error_code ec;
  bool looks_like_file = std::filesystem::exists(input, ec) || input.ends_with(".xml") ||
                         input.find('/') != std::string::npos;
  if (looks_like_file) return from_xml_file(input);
  return from_synthetic(input);
}

Topology Topology::restricted(const std::vector<int>& pu_os_indexes) const {
  if (!hwloc_) throw Error("restricted(): empty topology", ErrorKind::System);
  Bitmap set(hwloc_bitmap_alloc());
  for (int os : pu_os_indexes) {
    if (pu_by_os_index(os) < 0)
      throw Error(fmt::format("topology '{}' has no PU with OS index {}", source_, os));
    hwloc_bitmap_set(set.get(), static_cast<unsigned>(os));
  }
  if (hwloc_bitmap_iszero(set.get())) throw Error("cannot restrict a topology to no PU");
  hwloc_topology_t copy;
  if (hwloc_topology_dup(&copy, hwloc_->topo) != 0) throw Error("hwloc: cannot copy a topology", ErrorKind::System);
  if (hwloc_topology_restrict(copy, set.get(), 0) != 0) {
    hwloc_topology_destroy(copy);
    throw Error("hwloc: cannot restrict the topology", ErrorKind::System);
  }
  return TopologyBuilder::make(copy, source_, this_machine_);
}

int Topology::pu_by_os_index(int os_index) const {
  if (os_index < 0 || os_index >= static_cast<int>(pu_of_os_.size())) return -1;
  return pu_of_os_[os_index];
}

int Topology::common_level(int a, int b) const {
  const auto& pa = ancestors_.at(a);
  const auto& pb = ancestors_.at(b);
  int l = 0;
  while (l + 1 < static_cast<int>(pa.size()) && pa[l + 1] == pb[l + 1]) ++l;
  return l;
}

std::string Topology::cpuset_mask_string(const std::vector<int>& os_indexes) {
  Bitmap set(hwloc_bitmap_alloc());
  for (int os : os_indexes) hwloc_bitmap_set(set.get(), static_cast<unsigned>(os));
  char* s = nullptr;
  hwloc_bitmap_asprintf(&s, set.get());
  std::string r = s ? s : "";
  std::free(s);
  return r;
}

std::string Topology::cpuset_list_string(const std::vector<int>& os_indexes) {
  Bitmap set(hwloc_bitmap_alloc());
  for (int os : os_indexes) hwloc_bitmap_set(set.get(), static_cast<unsigned>(os));
  char* s = nullptr;
  hwloc_bitmap_list_asprintf(&s, set.get());
  std::string r = s ? s : "";
  std::free(s);
  return r;
}

std::string Topology::to_xml() const {
  if (!hwloc_) return {};
  char* buf = nullptr;
  int len = 0;
  if (hwloc_topology_export_xmlbuffer(hwloc_->topo, &buf, &len, 0) != 0)
    throw Error("hwloc: cannot export the topology as XML", ErrorKind::System);
  std::string r(buf, len > 0 ? static_cast<size_t>(len - 1) : 0);
  hwloc_free_xmlbuffer(hwloc_->topo, buf);
  return r;
}

}  // namespace canopy
