// The topology as nested boxes, like lstopo's picture: each tree node a box
// titled with its merged hwloc objects, NUMA nodes as green strips, PUs as
// the innermost boxes. Shared by topology_svg() and placement_svg(), which
// differ only in what they draw inside a PU box. Internal to src/formats.
//
// The drawing adapts to the machine's size (Density): small machines get
// every label; medium ones one-line titles and OS indexes in the PUs; big
// ones (thousands of PUs) small unlabelled PU squares, titles only on the
// upper levels, and every box keeps a tooltip (<title>) with its full name.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "canopy/topology.hpp"

namespace canopy::formats {

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

enum class Density { Detail, Compact, Tiny };

// Metrics of one density.
struct Style {
  Density density;
  int pu_w, pu_h;     // PU box
  int pad, gap;       // inside a box / between siblings
  int font;           // title font size (px)
  int pu_font;        // font inside PU boxes (0 = no text)
  int line;           // title line height
};

// Draws the inside of one PU box (fill and text); `svg` gets the elements.
using PUPainter = std::function<void(std::string& svg, int pu, const Rect& box, const Style& style)>;

class TopologyPicture {
 public:
  explicit TopologyPicture(const Topology& t);
  const Style& style() const { return style_; }
  int width() const { return size_.front().w; }
  int height() const { return size_.front().h; }
  // Appends the tree, its top-left corner at (x, y).
  void draw(std::string& svg, int x, int y, const PUPainter& paint) const;

 private:
  struct Layout {
    int w = 0, h = 0;
    int cols = 1;         // children per row
    int title_lines = 0;  // lines of title drawn
    bool framed = true;   // false: padding node drawn as its children only
  };
  void measure(int id);
  void grid_size(const std::vector<int>& children, int cols, int& w, int& h) const;
  void draw_node(std::string& svg, int id, int x, int y, const PUPainter& paint) const;
  std::vector<std::string> titles(int id) const;

  const Topology& t_;
  Style style_;
  std::vector<Layout> size_;
};

// Fits `text` into `width` px at `font` px (estimated), cutting with "…".
std::string fit_text(const std::string& text, int width, int font);
// <text> element (escaped), left-aligned at baseline (x, y).
std::string svg_text(int x, int y, int font, const std::string& text, const std::string& extra = "");
// The SVG document around `body`.
std::string svg_document(int width, int height, const std::string& body);

}  // namespace canopy::formats
