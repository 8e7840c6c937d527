// topology_text(): the machine as readable text, in the manner of
// `lstopo --of console` (same object labels and size units), preceded by a
// summary and the table of canopy's levels, followed by the NUMA distance
// matrix when the machine has one.
//
// Big machines must still fit a screen: when the full tree is longer than
// kFullTreeLines, runs of identical sibling subtrees are collapsed into the
// first one plus a line "x 11 more like the above: Package L#1-11 ...", and
// whatever is still beyond kMaxTreeLines is elided with a count.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "formats/labels.hpp"

namespace canopy {

namespace {

constexpr size_t kFullTreeLines = 64;
constexpr size_t kMaxTreeLines = 80;
// A node with at most this many PU children lists them on its own line.
constexpr size_t kInlinePUs = 4;
constexpr int kMaxDistanceMatrix = 32;

bool pure_pu(const TopoNode& n) {
  return n.children.empty() && n.objects.size() == 1 && n.objects.front().type == "PU";
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string r;
  for (const auto& p : parts) r += (r.empty() ? "" : sep) + p;
  return r;
}

class TextTree {
 public:
  explicit TextTree(const Topology& t) : t_(t), shape_(t.nodes().size(), 0) {
    // Shapes bottom-up: children always have larger ids than their parent.
    std::map<std::string, int> ids;
    for (int id = static_cast<int>(t.nodes().size()) - 1; id >= 0; --id) {
      const TopoNode& n = t.node(id);
      std::string key;
      for (const TopoObject& o : n.objects) key += fmt::format("{}:{};", o.type, o.bytes);
      key += '|';
      for (int c : n.children) key += fmt::format("{},", shape_[c]);
      shape_[id] = ids.emplace(key, static_cast<int>(ids.size())).first->second;
    }
  }

  std::vector<std::string> render(bool collapse) {
    collapse_ = collapse;
    lines_.clear();
    emit(0, 0);
    return lines_;
  }

 private:
  // Prints the node's subtree; returns how many lines it took (to decide
  // whether collapsing a run of its copies saves anything).
  size_t emit(int id, int indent) {
    const size_t before = lines_.size();
    const TopoNode& n = t_.node(id);
    std::vector<std::string> title;
    for (const TopoObject* o : formats::title_objects(n)) title.push_back(formats::object_label(*o));
    bool padding_only = title.empty() && formats::numa_objects(n).empty() && !n.children.empty();
    for (const TopoObject& o : n.objects)
      if (o.type == "PU") title.push_back(formats::object_label(o));

    // Padding nodes have no line: their children sit at the padding's indent,
    // which is where hwloc's own tree has them.
    int child_indent = padding_only ? indent : indent + 2;
    bool leaf_children = !n.children.empty();
    for (int c : n.children) leaf_children = leaf_children && pure_pu(t_.node(c));

    std::string line = join(title, " + ");
    if (leaf_children && n.children.size() <= kInlinePUs) {
      std::vector<std::string> pus;
      for (int c : n.children) pus.push_back(formats::object_label(t_.node(c).objects.front()));
      line += (line.empty() ? "" : ": ") + join(pus, ", ");
    } else if (leaf_children) {
      line += (line.empty() ? "" : ": ") + pu_range(n.children);
    }
    if (!padding_only) lines_.push_back(std::string(indent, ' ') + line);
    for (const TopoObject* o : formats::numa_objects(n))
      lines_.push_back(std::string(child_indent, ' ') + formats::object_label(*o));

    if (!leaf_children) {
      const auto& ch = n.children;
      for (size_t i = 0; i < ch.size();) {
        size_t j = i + 1;
        while (j < ch.size() && shape_[ch[j]] == shape_[ch[i]]) ++j;
        size_t run = j - i;
        size_t first_lines = emit(ch[i], child_indent);
        if (collapse_ && run >= 2 && run * first_lines > first_lines + 1) {
          lines_.push_back(std::string(child_indent, ' ') +
                           more_like(std::vector<int>(ch.begin() + static_cast<long>(i) + 1,
                                                      ch.begin() + static_cast<long>(j))));
        } else {
          for (size_t k = i + 1; k < j; ++k) emit(ch[k], child_indent);
        }
        i = j;
      }
    }
    return lines_.size() - before;
  }

  // "8 PUs L#0-7 (P#0-3,8-11)"
  std::string pu_range(const std::vector<int>& nodes) const {
    std::vector<int> logical, os;
    for (int id : nodes) {
      const TopoNode& n = t_.node(id);
      for (int p = n.first_pu; p < n.first_pu + n.num_pus; ++p) {
        logical.push_back(p);
        os.push_back(t_.pu(p).os_index);
      }
    }
    return fmt::format("{} PUs L#{} (P#{})", logical.size(), formats::ranges(logical), formats::ranges(os));
  }

  // The line that stands for a run of subtrees identical to the one printed
  // just above: which objects they are and which PUs they hold.
  std::string more_like(const std::vector<int>& nodes) const {
    const TopoNode& first = t_.node(nodes.front());
    std::string what;
    // Name the run by its most telling object: a package, die or core rather
    // than the cache merged above it.
    auto titles = formats::title_objects(first);
    const TopoObject* named = nullptr;
    for (const char* type : {"Package", "Die", "Core"})
      for (const TopoObject* o : titles)
        if (!named && o->type == type) named = o;
    if (!named && !titles.empty()) named = titles.front();
    if (!named)
      for (const TopoObject& o : first.objects)
        if (!formats::is_padding(o)) {
          named = &o;
          break;
        }
    if (named) {
      std::vector<int> idx;
      for (int id : nodes)
        for (const TopoObject& o : t_.node(id).objects)
          if (o.type == named->type) {
            idx.push_back(o.logical_index);
            break;
          }
      what = fmt::format("{} L#{}, ", named->type, formats::ranges(idx));
    }
    // The NUMA nodes inside the run are not printed otherwise.
    std::vector<int> numa, stack(nodes.begin(), nodes.end());
    while (!stack.empty()) {
      const TopoNode& n = t_.node(stack.back());
      stack.pop_back();
      numa.insert(numa.end(), n.numa_nodes.begin(), n.numa_nodes.end());
      stack.insert(stack.end(), n.children.begin(), n.children.end());
    }
    if (!numa.empty())
      what += fmt::format("{} NUMA node{} L#{}, ", numa.size(), numa.size() == 1 ? "" : "s", formats::ranges(numa));
    return fmt::format("x {} more like the above: {}{}", nodes.size(), what, pu_range(nodes));
  }

  const Topology& t_;
  std::vector<int> shape_;
  std::vector<std::string> lines_;
  bool collapse_ = false;
};

std::string arity_text(const LevelInfo& L) {
  if (L.max_arity == 0) return "-";
  if (L.min_arity == L.max_arity) return fmt::format("{}", L.max_arity);
  return fmt::format("{}-{}", L.min_arity, L.max_arity);
}

}  // namespace

std::string topology_text(const Topology& t) {
  std::string out;
  out += fmt::format("Topology: {}\n", t.source());
  out += fmt::format("{} PUs, {} cores, {} NUMA node{}, {} levels\n", t.num_pus(), t.num_cores(),
                     t.num_numa_nodes(), t.num_numa_nodes() == 1 ? "" : "s", t.num_levels());

  out += "\nLevels (root first; hwloc levels that never branch are merged with '+'):\n";
  out += fmt::format("  {:>5}  {:>6}  {:>8}  {}\n", "depth", "nodes", "children", "name");
  for (int l = 0; l < t.num_levels(); ++l) {
    const LevelInfo& L = t.level(l);
    out += fmt::format("  {:>5}  {:>6}  {:>8}  {}{}\n", l, L.num_nodes, arity_text(L), L.name,
                       L.numa ? "  (NUMA)" : "");
  }

  out += "\nTree:\n";
  TextTree tree(t);
  std::vector<std::string> lines = tree.render(false);
  bool collapsed = false;
  if (lines.size() > kFullTreeLines) {
    lines = tree.render(true);
    collapsed = true;
  }
  size_t shown = lines.size() > kMaxTreeLines ? kMaxTreeLines - 1 : lines.size();
  for (size_t i = 0; i < shown; ++i) out += lines[i] + "\n";
  if (shown < lines.size())
    out += fmt::format("... {} more lines not shown (--of json lists every object)\n", lines.size() - shown);
  else if (collapsed)
    out += "(identical sibling subtrees collapsed; --of json lists every object)\n";

  const auto& d = t.numa_distances();
  if (!d.empty()) {
    out += "\nNUMA distances (relative latency, hwloc):\n";
    if (static_cast<int>(d.size()) > kMaxDistanceMatrix) {
      out += fmt::format("  {}x{} matrix, too big to print (see --of json)\n", d.size(), d.size());
    } else {
      size_t width = 3;
      for (const auto& row : d)
        for (auto v : row) width = std::max(width, fmt::format("{}", v).size() + 1);
      out += fmt::format("  {:>{}}", "", 5);
      for (size_t j = 0; j < d.size(); ++j) out += fmt::format("{:>{}}", fmt::format("#{}", j), width + 1);
      out += "\n";
      for (size_t i = 0; i < d.size(); ++i) {
        out += fmt::format("  {:>5}", fmt::format("#{}", i));
        for (auto v : d[i]) out += fmt::format("{:>{}}", v, width + 1);
        out += "\n";
      }
    }
  }
  return out;
}

}  // namespace canopy
