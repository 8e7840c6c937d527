// placement_svg(): the topology picture with each task drawn in its PU, in
// the manner of Figure 2 of the ORWL paper. A PU's colour says which group
// of tasks it runs: tasks are cut into at most 12 groups of consecutive ids
// (one colour each, ColorBrewer's Set3 palette, legible under black text),
// so that a good mapping of a structured problem shows as solid patches and
// a scattered one as confetti. PUs holding several tasks are striped; helper
// PUs are drawn pale and dashed in their task's colour.
#include <fmt/format.h>

#include <algorithm>

#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "formats/labels.hpp"
#include "formats/picture.hpp"

namespace canopy {

namespace {

constexpr int kMargin = 10;
constexpr int kHeaderFont = 13;
constexpr int kHeaderLine = 18;
constexpr int kLegendFont = 11;
constexpr int kLegendLine = 18;

const char* const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
constexpr int kColours = 12;

struct Groups {
  int count = 0;
  int tasks = 0;
  int of(int task) const { return static_cast<int>(static_cast<long long>(task) * count / tasks); }
  // First and last task of group g.
  std::pair<int, int> range(int g) const {
    int lo = static_cast<int>((static_cast<long long>(g) * tasks + count - 1) / count);
    int hi = static_cast<int>((static_cast<long long>(g + 1) * tasks + count - 1) / count) - 1;
    return {lo, hi};
  }
};

std::string task_names(const std::vector<int>& tasks, const char* prefix) {
  std::string s;
  for (int t : tasks) s += fmt::format("{}{}{}", s.empty() ? "" : ",", prefix, t);
  return s;
}

}  // namespace

std::string placement_svg(const Topology& topo, const Placement& p) {
  formats::TopologyPicture pic(topo);
  const int T = p.num_tasks();
  Groups groups{std::min(T, kColours), T};
  std::vector<std::vector<int>> on_pu(static_cast<size_t>(topo.num_pus()));
  std::vector<int> helper_of(static_cast<size_t>(topo.num_pus()), -1);
  for (int t = 0; t < T; ++t) on_pu.at(static_cast<size_t>(p.task_pu.at(t))).push_back(t);
  for (int t = 0; t < static_cast<int>(p.helper_pu.size()); ++t)
    if (p.helper_pu[t] >= 0) helper_of.at(static_cast<size_t>(p.helper_pu[t])) = t;

  std::string body;
  body += formats::svg_text(
      kMargin, kMargin + kHeaderFont, kHeaderFont,
      fmt::format("canopy placement: policy {}, {} tasks on {}", p.policy, T, topo.source()), "font-weight=\"bold\"");
  std::string sub = fmt::format("{} PUs, granularity {}{}", topo.num_pus(), to_string(p.granularity),
                                p.granularity == Granularity::Core ? " (each task is bound to its whole core)" : "");
  if (!p.helper_pu.empty()) sub += "; helper PUs dashed";
  body += formats::svg_text(kMargin, kMargin + kHeaderLine + kHeaderFont, kHeaderFont, sub);
  const int top = kMargin + 2 * kHeaderLine + 4;

  pic.draw(body, kMargin, top, [&](std::string& svg, int pu, const formats::Rect& r, const formats::Style& s) {
    const PUInfo& info = topo.pu(pu);
    const auto& tasks = on_pu[static_cast<size_t>(pu)];
    int helper = helper_of[static_cast<size_t>(pu)];
    std::string tip = fmt::format("PU L#{} (P#{})", info.logical, info.os_index);
    if (!tasks.empty()) tip += ": " + task_names(tasks, "task ");
    if (helper >= 0) tip += fmt::format(": helper PU of task {}", helper);
    svg += fmt::format("<g><title>{}</title>\n", formats::xml_escape(tip));
    std::string label;
    if (!tasks.empty()) {
      // One horizontal stripe per task sharing this PU.
      int k = static_cast<int>(tasks.size());
      for (int i = 0; i < k; ++i) {
        int y0 = r.y + r.h * i / k, y1 = r.y + r.h * (i + 1) / k;
        svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", r.x, y0, r.w, y1 - y0,
                           kPalette[groups.of(tasks[static_cast<size_t>(i)])]);
      }
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\"/>\n",
                         r.x, r.y, r.w, r.h);
      label = s.density == formats::Density::Detail ? task_names(tasks, "T") : task_names(tasks, "");
    } else if (helper >= 0) {
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"0.35\" stroke=\"#000000\" "
          "stroke-dasharray=\"3,2\"/>\n",
          r.x, r.y, r.w, r.h, kPalette[groups.of(helper)]);
      label = fmt::format("h{}", helper);
    } else {
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" stroke=\"#999999\"/>\n",
                         r.x, r.y, r.w, r.h);
    }
    if (s.density == formats::Density::Detail) {
      if (!label.empty())
        svg += formats::svg_text(r.x + 4, r.y + 4 + s.pu_font, s.pu_font, formats::fit_text(label, r.w - 6, s.pu_font),
                                 "font-weight=\"bold\"");
      svg += formats::svg_text(r.x + 4, r.y + 8 + 2 * s.pu_font, s.pu_font, fmt::format("P#{}", info.os_index),
                               tasks.empty() && helper < 0 ? "fill=\"#999999\"" : "");
    } else if (s.pu_font > 0 && !label.empty()) {
      svg += formats::svg_text(r.x + 2, r.y + r.h - (r.h - s.pu_font) / 2 - 1, s.pu_font,
                               formats::fit_text(label, r.w - 2, s.pu_font));
    }
    svg += "</g>\n";
  });

  // Legend: one swatch per group, then helper and free PUs; wrapped to the
  // picture's width.
  const int width = std::max(pic.width(), 420) + 2 * kMargin;
  int lx = kMargin, ly = top + pic.height() + 12;
  body += formats::svg_text(lx, ly + kLegendFont, kLegendFont, "colour = task group (consecutive task ids):");
  ly += kLegendLine;
  auto item = [&](const std::string& swatch, const std::string& text) {
    int w = 16 + static_cast<int>(text.size()) * kLegendFont * 6 / 10 + 14;
    if (lx + w > width - kMargin && lx > kMargin) {
      lx = kMargin;
      ly += kLegendLine;
    }
    body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" {}/>\n", lx, ly + 1, swatch);
    body += formats::svg_text(lx + 16, ly + kLegendFont, kLegendFont, text);
    lx += w;
  };
  for (int g = 0; g < groups.count; ++g) {
    auto [lo, hi] = groups.range(g);
    item(fmt::format("fill=\"{}\" stroke=\"#000000\"", kPalette[g]),
         lo == hi ? fmt::format("task {}", lo) : fmt::format("tasks {}-{}", lo, hi));
  }
  if (!p.helper_pu.empty())
    item("fill=\"#d9d9d9\" fill-opacity=\"0.35\" stroke=\"#000000\" stroke-dasharray=\"3,2\"", "helper PU (hN)");
  item("fill=\"#ffffff\" stroke=\"#999999\"", "free PU");
  int height = ly + kLegendLine + kMargin;
  return formats::svg_document(width, height, body);
}

}  // namespace canopy
