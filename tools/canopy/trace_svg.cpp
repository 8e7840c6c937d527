// The SVG timeline of `canopy trace --svg`: one row per worker, time to the
// right; tasks as boxes (nested tasks as thinner boxes inside their
// parent), coloured by label or by the worker's NUMA node; searching as a
// thin light bar, parked as a thin grey bar; steals as arrows from the
// victim's row to the thief's. A legend names the colours. Plain SVG 1.1
// that any browser shows, no script.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "trace_read.hpp"

namespace canopy::cli {

namespace {

// Colours that stay apart from each other and from the greys of idle time.
const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#ad494a"};
constexpr int kPaletteSize = sizeof kPalette / sizeof kPalette[0];

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The label without the noise of long types: "main()::<lambda()>" stays,
// "ns::Foo<...>" keeps its template arguments short.
std::string short_label(const std::string& s) {
  if (s.size() <= 48) return s;
  return s.substr(0, 45) + "...";
}

}  // namespace

std::string timeline_svg(const TraceFile& t, const SvgOptions& o) {
  const int left = 150, right = 20, top = 40, row_h = 28, gap = 6;
  const int width = std::max(o.width, left + right + 100);
  const int plot_w = width - left - right;
  const double dur = t.duration_us > 0 ? t.duration_us : 1;
  auto x_of = [&](double us) { return left + plot_w * std::clamp(us / dur, 0.0, 1.0); };
  auto y_of = [&](int row) { return top + row * (row_h + gap); };

  // Colours: labels by total time (the biggest get the first colours), or NUMA nodes.
  std::map<std::string, double> time_of;
  for (const TraceRow& r : t.rows)
    for (const TraceSpan& s : r.spans)
      if (s.is_task()) time_of[s.label] += s.t1 - s.t0;
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [label, us] : time_of) order.emplace_back(-us, label);
  std::sort(order.begin(), order.end());
  std::map<std::string, std::string> color_of;
  for (std::size_t i = 0; i < order.size(); ++i) color_of[order[i].second] = kPalette[i % kPaletteSize];
  auto color = [&](const TraceRow& r, const TraceSpan& s) -> std::string {
    if (o.color_by_numa) return kPalette[(r.numa < 0 ? 0 : r.numa) % kPaletteSize];
    return color_of[s.label];
  };

  std::vector<std::pair<std::string, std::string>> legend;  // colour, text
  if (o.color_by_numa) {
    std::map<int, bool> nodes;
    for (const TraceRow& r : t.rows) nodes[r.numa] = true;
    for (const auto& [n, _] : nodes)
      legend.emplace_back(kPalette[(n < 0 ? 0 : n) % kPaletteSize],
                          n < 0 ? std::string("no NUMA node") : fmt::format("tasks on NUMA node {}", n));
  } else {
    for (std::size_t i = 0; i < order.size() && i < 12; ++i)
      legend.emplace_back(color_of[order[i].second], short_label(order[i].second));
  }
  const int rows_bottom = y_of(static_cast<int>(t.rows.size()));
  const int legend_top = rows_bottom + 30;
  const int legend_rows = static_cast<int>(legend.size() + 3 + 1) / 2;
  const int height = legend_top + legend_rows * 20 + 10;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\" shape-rendering=\"crispEdges\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n"
      "<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\">"
      "<path d=\"M0,0 L8,4 L0,8 z\" fill=\"#000000\"/></marker></defs>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\">canopy trace: {} rows, {:.3f} ms{}</text>\n",
      width, height, width, height, width, height, left, t.rows.size(), dur / 1000.0,
      t.lost ? fmt::format(" ({} events lost)", t.lost) : std::string());
  // Time axis: 5 ticks.
  for (int i = 0; i <= 5; ++i) {
    const double us = dur * i / 5;
    const double x = x_of(us);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#dddddd\"/>\n", x, top - 4, x,
                       rows_bottom);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555555\">{:.3g} ms</text>\n", x,
                       rows_bottom + 16, us / 1000.0);
  }
  for (std::size_t ri = 0; ri < t.rows.size(); ++ri) {
    const TraceRow& r = t.rows[ri];
    const int y = y_of(static_cast<int>(ri));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8, y + row_h / 2 + 4,
                       escape(r.pid == 0 ? std::string("outside")
                                         : fmt::format("{}worker {}", r.pid > 1 ? fmt::format("rt {} ", r.pid) : "",
                                                       r.tid)));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\"/>\n", left, y, plot_w,
                       row_h);
    // Outer spans full height, nested ones thinner (depth by an end stack).
    std::vector<double> open;
    for (const TraceSpan& s : r.spans) {
      const double x0 = x_of(s.t0), x1 = x_of(s.t1);
      const double w = std::max(x1 - x0, 1.0);  // at least a pixel: every task shows
      if (s.category == "park") {
        svg += fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"4\" fill=\"#999999\"/>\n", x0,
                           y + row_h - 4, w);
        continue;
      }
      if (s.category == "search") {
        svg += fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"4\" fill=\"#cccccc\"/>\n", x0,
                           y + row_h - 4, w);
        continue;
      }
      if (!s.is_task()) continue;
      while (!open.empty() && open.back() <= s.t0) open.pop_back();
      const int depth = std::min(static_cast<int>(open.size()), 3);
      open.push_back(s.t1);
      const int inset = depth * 4;
      svg += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" "
          "><title>{} ({:.3f} ms)</title></rect>\n",
          x0, y + inset, w, row_h - 6 - 2 * inset, color(r, s), escape(s.label), (s.t1 - s.t0) / 1000.0);
    }
  }
  // Steal arrows over the boxes.
  for (std::size_t ri = 0; ri < t.rows.size(); ++ri)
    for (const TraceSteal& s : t.rows[ri].steals) {
      if (s.victim < 0 || s.victim == static_cast<int>(ri)) continue;
      const double x = x_of(s.t);
      const int y0 = y_of(s.victim) + row_h / 2, y1 = y_of(static_cast<int>(ri)) + row_h / 2;
      svg += fmt::format(
          "<line x1=\"{:.2f}\" y1=\"{}\" x2=\"{:.2f}\" y2=\"{}\" stroke=\"#000000\" stroke-width=\"1\" "
          "marker-end=\"url(#arrow)\"><title>steal: worker {} took from worker {} ({})</title></line>\n",
          x, y0, x, y1 + (y1 > y0 ? -6 : 6), t.rows[ri].tid, t.rows[s.victim].tid, escape(s.distance));
    }
  // Legend: two columns.
  legend.emplace_back("#cccccc", "searching (stealing)");
  legend.emplace_back("#999999", "parked");
  legend.emplace_back("#000000", "steal: arrow from the victim to the thief");
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const int col = static_cast<int>(i % 2), row = static_cast<int>(i / 2);
    const int x = left + col * (plot_w / 2), y = legend_top + row * 20;
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{}\"/>\n", x, y, legend[i].first);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", x + 20, y + 11, escape(legend[i].second));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace canopy::cli
