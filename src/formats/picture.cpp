// Layout and drawing of the topology picture (see picture.hpp). Sizes are
// computed bottom-up (children have larger node ids than their parent), in
// whole pixels so that the SVG text is stable and diffs well.
#include "formats/picture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "formats/labels.hpp"

namespace canopy::formats {

namespace {

// Colours in the spirit of lstopo's: grey packages and cores, green memory,
// white caches and PUs, so that a reader of lstopo pictures feels at home.
const char* fill_of(const std::vector<const TopoObject*>& titles) {
  // A node that merges several objects takes the colour of the most telling.
  static const std::pair<const char*, const char*> kFills[] = {
      {"Core", "#bebebe"}, {"Package", "#dedede"}, {"Die", "#e6e6e6"}};
  for (const auto& [type, fill] : kFills)
    for (const TopoObject* o : titles)
      if (o->type == type) return fill;
  for (const TopoObject* o : titles)
    if (o->type.rfind("Group", 0) == 0) return "#efefef";
  return "#ffffff";
}

constexpr const char* kNumaFill = "#d2e7a4";

int text_width(const std::string& s, int font) {
  // A rough average advance for sans-serif digits and letters: 0.6 em.
  return static_cast<int>(std::ceil(static_cast<double>(s.size()) * font * 0.6));
}

std::string join_labels(const std::vector<const TopoObject*>& objs) {
  std::string r;
  for (const TopoObject* o : objs) r += (r.empty() ? "" : " + ") + object_label(*o);
  return r;
}

}  // namespace

std::string fit_text(const std::string& text, int width, int font) {
  if (text_width(text, font) <= width) return text;
  int chars = static_cast<int>(width / (font * 0.6)) - 1;
  if (chars <= 0) return {};
  return text.substr(0, static_cast<size_t>(chars)) + "\u2026";
}

std::string svg_text(int x, int y, int font, const std::string& text, const std::string& extra) {
  return fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\"{}{}>{}</text>\n", x, y, font, extra.empty() ? "" : " ",
                     extra, xml_escape(text));
}

std::string svg_document(int width, int height, const std::string& body) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "{2}</svg>\n",
      width, height, body);
}

TopologyPicture::TopologyPicture(const Topology& t) : t_(t) {
  const int P = t.num_pus();
  if (P <= 64)
    style_ = {Density::Detail, 60, 34, 5, 5, 11, 10, 14};
  else if (P <= 512)
    style_ = {Density::Compact, 28, 16, 3, 3, 9, 8, 12};
  else
    style_ = {Density::Tiny, 8, 8, 2, 2, 8, 0, 10};
  size_.resize(t.nodes().size());
  for (int id = static_cast<int>(t.nodes().size()) - 1; id >= 0; --id) measure(id);
}

std::vector<std::string> TopologyPicture::titles(int id) const {
  const TopoNode& n = t_.node(id);
  auto objs = title_objects(n);
  std::vector<std::string> r;
  if (objs.empty()) return r;
  if (style_.density == Density::Detail) {
    for (const TopoObject* o : objs) r.push_back(object_label(*o));
  } else if (style_.density == Density::Compact || t_.level(n.level).num_nodes <= 64) {
    // One line, cut to the box's width: the most telling object first, so
    // that "Core L#3 + L2 ..." survives the cut rather than the cache.
    // Titles of the many small boxes of a big machine would be unreadable
    // anyway; their tooltips still name them.
    for (const char* type : {"Package", "Die", "Core"}) {
      auto it = std::find_if(objs.begin(), objs.end(), [type](const TopoObject* o) { return o->type == type; });
      if (it != objs.end()) {
        std::rotate(objs.begin(), it, it + 1);
        break;
      }
    }
    r.push_back(join_labels(objs));
  }
  return r;
}

void TopologyPicture::grid_size(const std::vector<int>& children, int cols, int& w, int& h) const {
  // Rows of `cols` boxes, each row as tall as its tallest box, boxes packed
  // left to right at their own widths: unbalanced trees (hybrid machines)
  // then leave no big holes.
  w = h = 0;
  for (size_t i = 0; i < children.size(); i += static_cast<size_t>(cols)) {
    int row_w = 0, row_h = 0;
    for (size_t j = i; j < children.size() && j < i + static_cast<size_t>(cols); ++j) {
      row_w += size_[children[j]].w + (j > i ? style_.gap : 0);
      row_h = std::max(row_h, size_[children[j]].h);
    }
    w = std::max(w, row_w);
    h += row_h + (i > 0 ? style_.gap : 0);
  }
}

void TopologyPicture::measure(int id) {
  const TopoNode& n = t_.node(id);
  const Style& s = style_;
  Layout L;
  int content_w = s.pu_w, content_h = s.pu_h;
  if (!n.children.empty()) {
    const int k = static_cast<int>(n.children.size());
    bool pu_children = t_.node(n.children.front()).children.empty();
    if (pu_children && k <= 4) {
      L.cols = k;  // a core's hardware threads side by side, as lstopo draws them
      grid_size(n.children, k, content_w, content_h);
    } else {
      // The grid whose shape is closest to a landscape 16:10, without
      // leaving many cells of the last row empty.
      double best = 1e300;
      for (int c = 1; c <= k; ++c) {
        int W = 0, H = 0;
        grid_size(n.children, c, W, H);
        int r = (k + c - 1) / c;
        double cost = std::fabs(std::log(static_cast<double>(W) / H) - std::log(1.6)) +
                      static_cast<double>(r * c - k) / k;
        if (cost < best - 1e-9) {
          best = cost;
          L.cols = c;
          content_w = W;
          content_h = H;
        }
      }
    }
  }
  auto tl = titles(id);
  auto numa = numa_objects(n);
  L.title_lines = static_cast<int>(tl.size());
  // A box is drawn for every real object, titled or not (a big machine's
  // cores stay visible as thin frames); padding nodes draw no box.
  if (title_objects(n).empty() && numa.empty()) {
    L.framed = false;
    L.w = content_w;
    L.h = content_h;
  } else {
    int inner = content_w;
    if (s.density == Density::Detail) {
      for (const auto& line : tl) inner = std::max(inner, text_width(line, s.font));
      for (const TopoObject* o : numa) inner = std::max(inner, text_width(object_label(*o), s.font) + 2 * s.pad);
    }
    L.w = inner + 2 * s.pad;
    L.h = s.pad + L.title_lines * s.line + static_cast<int>(numa.size()) * (s.line + 4 + s.gap) + content_h + s.pad;
  }
  size_[id] = L;
}

void TopologyPicture::draw(std::string& svg, int x, int y, const PUPainter& paint) const {
  draw_node(svg, 0, x, y, paint);
}

void TopologyPicture::draw_node(std::string& svg, int id, int x, int y, const PUPainter& paint) const {
  const TopoNode& n = t_.node(id);
  const Layout& L = size_[id];
  const Style& s = style_;
  int cx = x, cy = y;
  auto objs = title_objects(n);
  if (L.framed) {
    std::vector<int> logical, os;
    for (int p = n.first_pu; p < n.first_pu + n.num_pus; ++p) {
      logical.push_back(p);
      os.push_back(t_.pu(p).os_index);
    }
    std::string all;
    for (const TopoObject& o : n.objects)
      if (!is_padding(o)) all += (all.empty() ? "" : " + ") + object_label(o);
    svg += fmt::format("<g>\n<title>{} (PUs L#{}, P#{})</title>\n", xml_escape(all),
                       ranges(logical), ranges(os));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#000000\"/>\n", x, y,
                       L.w, L.h, fill_of(objs));
    cx = x + s.pad;
    cy = y + s.pad;
    for (const auto& line : titles(id)) {
      svg += svg_text(cx, cy + s.font, s.font, fit_text(line, L.w - 2 * s.pad, s.font));
      cy += s.line;
    }
    for (const TopoObject* o : numa_objects(n)) {
      int sw = L.w - 2 * s.pad, sh = s.line + 4;
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#000000\"/>\n", cx,
                         cy, sw, sh, kNumaFill);
      svg += svg_text(cx + s.pad, cy + sh - (sh - s.font) / 2 - 1, s.font,
                      fit_text(object_label(*o), sw - 2 * s.pad, s.font));
      cy += sh + s.gap;
    }
  }
  if (n.children.empty()) {
    paint(svg, n.first_pu, Rect{cx, cy, s.pu_w, s.pu_h}, s);
  } else {
    int x0 = cx, row_h = 0;
    for (size_t i = 0; i < n.children.size(); ++i) {
      if (i > 0 && i % static_cast<size_t>(L.cols) == 0) {
        cx = x0;
        cy += row_h + s.gap;
        row_h = 0;
      }
      const Layout& c = size_[n.children[i]];
      draw_node(svg, n.children[i], cx, cy, paint);
      cx += c.w + s.gap;
      row_h = std::max(row_h, c.h);
    }
  }
  if (L.framed) svg += "</g>\n";
}

}  // namespace canopy::formats
