// Text helpers of the output formats (see labels.hpp).
#include "formats/labels.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace canopy::formats {

std::string human_size(std::uint64_t size) {
  // Same thresholds and rounding as lstopo's hwloc_memory_size_printf_value.
  if (size < (10ULL << 20)) return fmt::format("{}KB", (size + (1ULL << 9)) >> 10);
  if (size < (10ULL << 30)) return fmt::format("{}MB", (size + (1ULL << 19)) >> 20);
  if (size < (10ULL << 40)) return fmt::format("{}GB", (size + (1ULL << 29)) >> 30);
  return fmt::format("{}TB", (size + (1ULL << 39)) >> 40);
}

bool is_padding(const TopoObject& o) { return o.type == "Pad"; }

std::string object_label(const TopoObject& o) {
  if (is_padding(o)) return {};
  if (o.type == "Machine") return o.bytes ? fmt::format("Machine ({} total)", human_size(o.bytes)) : "Machine";
  std::string s = fmt::format("{} L#{}", o.type, o.logical_index);
  if (o.type == "PU") return s + fmt::format(" (P#{})", o.os_index);
  if (o.type == "NUMANode") {
    if (o.bytes) return s + fmt::format(" (P#{} {})", o.os_index, human_size(o.bytes));
    return s + fmt::format(" (P#{})", o.os_index);
  }
  if (o.bytes) s += fmt::format(" ({})", human_size(o.bytes));
  return s;
}

std::vector<const TopoObject*> title_objects(const TopoNode& n) {
  std::vector<const TopoObject*> r;
  for (const TopoObject& o : n.objects)
    if (o.type != "PU" && o.type != "NUMANode" && !is_padding(o)) r.push_back(&o);
  return r;
}

std::vector<const TopoObject*> numa_objects(const TopoNode& n) {
  std::vector<const TopoObject*> r;
  for (const TopoObject& o : n.objects)
    if (o.type == "NUMANode") r.push_back(&o);
  return r;
}

std::string ranges(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string r;
  r.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      case '\'': r += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') r += '?';
        else r += c;
    }
  }
  return r;
}

}  // namespace canopy::formats
