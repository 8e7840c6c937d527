// topology_svg(): the machine as an lstopo-like picture of nested boxes
// (layout in picture.cpp), PUs drawn white with their logical and OS
// indexes as far as the machine's size leaves room for them.
#include <fmt/format.h>

#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "formats/labels.hpp"
#include "formats/picture.hpp"

namespace canopy {

namespace {

constexpr int kMargin = 10;
constexpr int kHeaderFont = 13;
constexpr int kHeaderLine = 18;

}  // namespace

std::string topology_svg(const Topology& t) {
  formats::TopologyPicture pic(t);
  std::string body;
  body += formats::svg_text(kMargin, kMargin + kHeaderFont, kHeaderFont, fmt::format("canopy topology: {}", t.source()),
                            "font-weight=\"bold\"");
  body += formats::svg_text(kMargin, kMargin + kHeaderLine + kHeaderFont, kHeaderFont,
                            fmt::format("{} PUs, {} cores, {} NUMA node{}, {} levels", t.num_pus(), t.num_cores(),
                                        t.num_numa_nodes(), t.num_numa_nodes() == 1 ? "" : "s", t.num_levels()));
  const int top = kMargin + 2 * kHeaderLine + 4;
  pic.draw(body, kMargin, top, [&t](std::string& svg, int pu, const formats::Rect& r, const formats::Style& s) {
    const PUInfo& p = t.pu(pu);
    svg += fmt::format(
        "<g><title>PU L#{} (P#{})</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" "
        "stroke=\"#000000\"/>\n",
        p.logical, p.os_index, r.x, r.y, r.w, r.h);
    if (s.density == formats::Density::Detail) {
      svg += formats::svg_text(r.x + 4, r.y + 4 + s.pu_font, s.pu_font, fmt::format("PU L#{}", p.logical));
      svg += formats::svg_text(r.x + 4, r.y + 8 + 2 * s.pu_font, s.pu_font, fmt::format("P#{}", p.os_index));
    } else if (s.pu_font > 0) {
      svg += formats::svg_text(r.x + 2, r.y + r.h - (r.h - s.pu_font) / 2 - 1, s.pu_font,
                               formats::fit_text(fmt::format("{}", p.os_index), r.w - 2, s.pu_font));
    }
    svg += "</g>\n";
  });
  int width = std::max(pic.width(), 420) + 2 * kMargin;
  int height = top + pic.height() + kMargin;
  return formats::svg_document(width, height, body);
}

}  // namespace canopy
